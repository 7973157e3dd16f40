// The Jacobian family of IK backends.
//
// Notation: e = stacked weighted residual (target - current), J = weighted
// geometric Jacobian d(current)/d(dq) (see goal.h), W = diag(DOF weights)
// (motion cost, model.h). A weighted step minimises |J dq - e|^2 + lambda^2
// dq^T W dq; with Jw = J W^-1/2 and dq = W^-1/2 dqw this is the ordinary
// damped least-squares problem in dqw.
#include <Eigen/Cholesky>
#include <cmath>

#include "ikbench/kinematics/config.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"

namespace ikbench {
namespace {

// Scales dq so that its largest component is at most max_step (Buss 2004,
// "clamping the maximum angle change"); max_step <= 0 disables it.
double clampStep(Eigen::VectorXd& dq, double max_step) {
  if (max_step > 0.0) {
    const double m = dq.cwiseAbs().maxCoeff();
    if (m > max_step) dq *= max_step / m;
  }
  return dq.norm();
}

// Damped least squares with a fixed damping factor (Wampler 1986; Nakamura &
// Hanafusa 1986; Buss 2004, "Introduction to Inverse Kinematics with Jacobian
// Transpose, Pseudoinverse and Damped Least Squares methods", eq. 11):
//   dq = J^T (J J^T + lambda^2 I)^-1 e
// computed in whichever of the two equivalent forms is smaller:
//   m <= nv:  y = (Jw Jw^T + lambda^2 I_m)^-1 e,  dqw = Jw^T y
//   m >  nv:  dqw = (Jw^T Jw + lambda^2 I_nv)^-1 Jw^T e
class DlsSolver final : public Solver {
 public:
  explicit DlsSolver(const Params& p) : lambda_(p.getDouble("lambda")), max_step_(p.getDouble("max_step")) {
    if (!(lambda_ >= 0.0)) throw SpecError("dls: lambda must be >= 0");
  }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    const Model& model = *problem.model;
    const int nv = model.nv(), m = problem.rows();
    const int n = std::min(m, nv);
    // Everything the loop touches is sized here, before the first iteration.
    const Eigen::VectorXd inv_sqrt_w = model.dofWeights().cwiseSqrt().cwiseInverse();
    Eigen::MatrixXd Jw(m, nv), A(n, n);
    Eigen::VectorXd rhs(n), dqw(nv), dq(nv), q_next(q.size());
    Eigen::LLT<Eigen::MatrixXd> llt(n);
    const double lambda2 = lambda_ * lambda_;

    GoalErrors e = ctx.evaluate(q);
    if (ctx.begin(q, e)) return;
    for (;;) {
      const Eigen::MatrixXd& J = ctx.jacobian();
      Jw.noalias() = J * inv_sqrt_w.asDiagonal();
      const Eigen::VectorXd& r = ctx.data().residual;
      if (m <= nv) {
        A.noalias() = Jw * Jw.transpose();
        A.diagonal().array() += lambda2;
        llt.compute(A);
        rhs = r;
        llt.solveInPlace(rhs);
        dqw.noalias() = Jw.transpose() * rhs;
      } else {
        A.noalias() = Jw.transpose() * Jw;
        A.diagonal().array() += lambda2;
        llt.compute(A);
        dqw.noalias() = Jw.transpose() * r;
        llt.solveInPlace(dqw);
      }
      if (llt.info() != Eigen::Success) {
        ctx.stop(Status::kNumericalFailure, "dls: J J^T + lambda^2 I is not positive definite (lambda = 0 at a singularity?)");
        return;
      }
      dq = inv_sqrt_w.asDiagonal() * dqw;
      const double step = clampStep(dq, max_step_);
      integrate(model, q, dq, q_next);
      clampToLimits(model, q_next);
      if (!q_next.allFinite()) {
        ctx.stop(Status::kNumericalFailure, "dls: non-finite step");
        return;
      }
      q.swap(q_next);
      e = ctx.evaluate(q);
      if (ctx.endIteration(q, e, step, lambda_)) return;
    }
  }

 private:
  double lambda_, max_step_;
};

}  // namespace

void registerJacobianSolvers(Registry& registry) {
  registry.add({"dls",
                "damped least squares, fixed damping: dq = J^T (J J^T + lambda^2 I)^-1 e (Buss 2004, eq. 11)",
                {{"lambda", ParamType::kDouble, "0.05", "damping factor lambda [m], >= 0"},
                 {"max_step", ParamType::kDouble, "0.5",
                  "clamp on the largest joint change per iteration [rad or m] (Buss 2004); 0 = no clamp"}},
                [](const Params& p) { return std::make_unique<DlsSolver>(p); }});
}

}  // namespace ikbench
