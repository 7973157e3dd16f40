// Damped members of the Jacobian family: damped least squares with fixed and
// adaptive damping, Marquardt-scaled DLS, and a full Levenberg-Marquardt with
// accept/reject. Notation: jacobian_common.h.
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>

#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/config.h"
#include "attempt_driver.h"
#include "jacobian_common.h"
#include "kernel_solve.h"

namespace ikbench::jacobian {
namespace {

// Damped least squares (Wampler 1986; Nakamura & Hanafusa 1986; Buss 2004,
// "Introduction to Inverse Kinematics with Jacobian Transpose, Pseudoinverse
// and Damped Least Squares methods", eq. 11):
//   dq = J^T (J J^T + lambda^2 I)^-1 e  =  (J^T J + lambda^2 I)^-1 J^T e,
// the minimiser of |J dq - e|^2 + lambda^2 |dq|^2 (in dqw; lambda^2 dq^T W dq
// in dq). Computed in whichever form has the smaller system:
//   m <= nv:  y = (Jw Jw^T + lambda^2 I_m)^-1 e,  dqw = Jw^T y
//   m >  nv:  dqw = (Jw^T Jw + lambda^2 I_nv)^-1 Jw^T e
// Subclasses choose lambda^2 per iteration (chooseLambda2).
class DlsSolver : public JacobianSolver {
 public:
  DlsSolver(std::string name, const JacobianOptions& options, const NullSpaceOptions& null_space, double lambda,
            std::unique_ptr<KernelSolve> kernel = nullptr)
      : JacobianSolver(std::move(name), options, null_space), lambda_(lambda) {
    useKernel(std::move(kernel));
  }

 protected:
  void resize(int m, int nv) override {
    const int n = std::min(m, nv);
    sys_.resize(n);
    y_.resize(n);
    resizeExtra(n);
  }
  virtual void resizeExtra(int) {}
  // lambda^2 for this iteration, given the undamped normal matrix (the
  // smaller of Jw Jw^T and Jw^T Jw, in sys_) and the residual.
  virtual double chooseLambda2(NormalSystem&, const Eigen::VectorXd&) { return lambda_ * lambda_; }

  bool factor(const Eigen::MatrixXd& Jw, const Eigen::VectorXd& r, std::string* why) override {
    sys_.setNormalMatrix(Jw);
    lambda2_ = chooseLambda2(sys_, r);
    sys_.addDiagonal(lambda2_);
    if (!sys_.factor()) {
      *why = stepFailureText(batch::kNotPositiveDefinite);  // the kernel's words for it (attempt_driver.h)
      return false;
    }
    return true;
  }
  void apply(const Eigen::MatrixXd& Jw, const Eigen::VectorXd& rhs, Eigen::VectorXd& dqw) override {
    if (Jw.rows() <= Jw.cols()) {
      sys_.solve(rhs, y_);
      multiplyTransposed(Jw, y_, dqw);
    } else {
      dqw.noalias() = Jw.transpose() * rhs;
      sys_.solve(dqw, dqw);
    }
  }
  double damping() const override { return std::sqrt(lambda2_); }

  double lambda_, lambda2_ = 0.0;
  NormalSystem sys_;
  Eigen::VectorXd y_;

 private:
  bool supportsNullSpace() const override { return true; }
};

// DLS with the damping adapted every iteration:
//  * near singularities, from the smallest singular value s_min of Jw
//    (Nakamura & Hanafusa 1986, "Inverse kinematic solutions with singularity
//    robustness for robot manipulator control", J. Dyn. Sys. Meas. Control
//    108; in the squared form of Chiaverini, Siciliano & Egeland 1994,
//    "Review of the damped least-squares inverse kinematics with experiments
//    on an industrial robot manipulator", IEEE TCST 2(2)):
//      lambda_sv^2 = lambda_max^2 (1 - (s_min / epsilon)^2) if s_min < epsilon, else 0;
//  * from the error (Sugihara 2011, "Solvability-unconcerned inverse
//    kinematics by the Levenberg-Marquardt method", IEEE T-RO 27(5), eq. 26:
//    W_N = E + w_bar with E = 1/2 |e|^2): lambda_err^2 = err_gain |e|^2,
//    large far from the target (robust), vanishing near it (fast);
//  * lambda^2 = lambda_sv^2 + lambda_err^2 + lambda_min^2 (mode selects the
//    terms). s_min^2 is the smallest eigenvalue of the m x m (or nv x nv)
//    normal matrix, computed without eigenvectors (no allocation).
class DlsAdaptiveSolver final : public DlsSolver {
 public:
  DlsAdaptiveSolver(const DlsAdaptiveOptions& o, std::unique_ptr<KernelSolve> kernel)
      : DlsSolver("dls-adaptive", o, o, 0.0, std::move(kernel)),
        lambda_max_(o.lambda_max),
        epsilon_(o.epsilon),
        err_gain_(o.err_gain),
        lambda_min_(o.lambda_min),
        use_sv_(o.mode != AdaptiveDamping::kError),
        use_err_(o.mode != AdaptiveDamping::kSingularValue) {}


 protected:
  double chooseLambda2(NormalSystem& A, const Eigen::VectorXd& r) override {
    double l2 = lambda_min_ * lambda_min_;
    if (use_err_) l2 += err_gain_ * r.squaredNorm();
    // Away from singularities (s_min >= epsilon, the common case) one
    // Cholesky of A - epsilon^2 I proves it and the eigenvalues are skipped.
    if (use_sv_ && !A.eigenvaluesAbove(epsilon_ * epsilon_)) {
      double ev = 0.0;
      const double smin2 = A.smallestEigenvalue(&ev) ? std::max(ev, 0.0) : 0.0;
      const double x2 = smin2 / (epsilon_ * epsilon_);
      if (x2 < 1.0) l2 += lambda_max_ * lambda_max_ * (1.0 - x2);
    }
    return l2;
  }

 private:
  double lambda_max_, epsilon_, err_gain_, lambda_min_;
  bool use_sv_ = true, use_err_ = true;
};

// DLS with Marquardt's scaling (Marquardt 1963, "An algorithm for
// least-squares estimation of nonlinear parameters", SIAM J. Appl. Math.
// 11(2), eq. 30 with the scaled damping of sec. 3):
//   (J^T J + lambda diag(J^T J)) d = J^T e,  q <- q + relax * d
// With DOF weights the damping becomes lambda W diag(J^T J) (see factor()).
// (with e = target - current the step is added; the "q -= relax d" of
// formulations with e = current - target is the same step). The damping is
// relative to each DOF's own curvature, which makes it invariant to the
// scaling of individual joints. A DOF no goal depends on (zero column) gets
// d = 0. Always solves the nv x nv system.
class DlsMarquardtSolver final : public JacobianSolver {
 public:
  explicit DlsMarquardtSolver(const DlsMarquardtOptions& o)
      : JacobianSolver("dls-marquardt", o, o), lambda_(o.lambda), relax_(o.relax) {}


 protected:
  void resize(int, int nv) override {
    A_.resize(nv, nv);
    if (llt_.cols() != nv) rebuild(llt_, nv);
  }
  bool factor(const Eigen::MatrixXd& Jw, const Eigen::VectorXd&, std::string* why) override {
    A_.noalias() = Jw.transpose() * Jw;
    // Marquardt's damping is invariant to scaling a DOF, so the DOF weights
    // would cancel out of it; they enter as a motion cost on the damping
    // instead: (J^T J + lambda W diag(J^T J)) d = J^T e, which in dqw reads
    // A_kk = (1 + lambda w_k) (Jw^T Jw)_kk with w_k = 1 / s_k^2.
    const double floor = 1e-12 * std::max(A_.diagonal().maxCoeff(), kTinyDivisor);
    for (int k = 0; k < A_.rows(); ++k) {
      const double d = A_(k, k);
      const double w = unit_weights_ ? 1.0 : 1.0 / (s_[k] * s_[k]);
      A_(k, k) = d > floor ? (1.0 + lambda_ * w) * d : 1.0;
    }
    llt_.compute(A_);
    if (llt_.info() != Eigen::Success) {
      *why = "J^T J + lambda diag(J^T J) is not positive definite";
      return false;
    }
    return true;
  }
  void apply(const Eigen::MatrixXd& Jw, const Eigen::VectorXd& rhs, Eigen::VectorXd& dqw) override {
    dqw.noalias() = Jw.transpose() * rhs;
    llt_.solveInPlace(dqw);
  }
  double stepScale() const override { return relax_; }
  double damping() const override { return lambda_; }

 private:
  bool supportsNullSpace() const override { return true; }
  double lambda_, relax_;
  Eigen::MatrixXd A_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
};

// Levenberg-Marquardt (Levenberg 1944; Marquardt 1963) with the damping
// strategy of Madsen, Nielsen & Tingleff 2004, "Methods for non-linear least
// squares problems", Algorithm 3.16 (after Nielsen 1999):
//   mu_0 = tau * max_i (J^T J)_ii,  nu = 2
//   h    = (J^T J + mu I)^-1 J^T e   (in dqw; computed in the smaller form)
//   rho  = (F(q) - F(q (+) h)) / (L(0) - L(h)),  F = 1/2 |e|^2,
//          L(0) - L(h) = 1/2 |e|^2 - 1/2 |e - J h|^2 (the linear model)
//   rho > 0: accept, mu *= max(1/3, 1 - (2 rho - 1)^3), nu = 2
//   else:    reject (q unchanged, J reused), mu *= nu, nu *= 2.
// With joint limits the step actually taken (after clamping or freezing) is
// the h in L(h): a projected LM (Kanzow, Yamashita & Fukushima 2004). Every
// trial, accepted or not, is one iteration (one FK).
class LmSolver final : public DlsSolver {
 public:
  explicit LmSolver(const LmOptions& o)
      : DlsSolver("lm", o, {}, 0.0), tau_(o.tau), mu_min_(o.mu_min), gtol_(o.gtol) {}


 protected:
  void resizeExtra(int) override {
    J_.resize(m_, nv_);
    r_.resize(m_);
    d_.resize(nv_);
  }
  void resetAttempt() override {
    have_jacobian_ = false;
    mu_ = -1.0;
    nu_ = 2.0;
  }
  double chooseLambda2(NormalSystem&, const Eigen::VectorXd&) override { return mu_; }

  bool iterate(SolveContext& ctx, Eigen::VectorXd& q, GoalErrors& e) override {
    const Model& model = ctx.model();
    if (!have_jacobian_) {
      J_ = ctx.jacobian(jopt_.jacobian);
      r_ = ctx.data().residual;
      have_jacobian_ = true;
    }
    weightJacobian(J_);  // computeStep may zero columns of jw_ (freeze)
    if (mu_ < 0.0) mu_ = std::max(tau_ * jw().colwise().squaredNorm().maxCoeff(), mu_min_);
    // Madsen et al.'s first stopping rule, |g|_inf <= eps_1 with g = J^T e:
    // a stationary point of F that is not a solution (local minimum,
    // unreachable target) ends the attempt, so a restart can start sooner.
    multiplyTransposed(jw(), r_, tmp_nv_);
    if (tmp_nv_.lpNorm<Eigen::Infinity>() <= gtol_) {
      ctx.stop(Status::kStalled, "lm: local minimum (|J^T e|_inf <= gtol)");
      return true;
    }
    std::string why;
    if (!computeStep(model, q, J_, r_, &why)) {
      ctx.stop(Status::kNumericalFailure, "lm: " + why);
      return true;
    }
    const double step = takeStep(model, q);
    if (!q_next_.allFinite()) {
      ctx.stop(Status::kNumericalFailure, "lm: non-finite configuration after the step");
      return true;
    }
    // The displacement actually taken (limits included) for the linear model.
    for (int v = 0; v < nv_; ++v) {
      const int iq = scalar_q_[v];
      d_[v] = iq >= 0 ? q_next_[iq] - q[iq] : dq_[v];
    }
    tmp_m_.noalias() = J_ * d_;
    const double predicted = r_.dot(tmp_m_) - 0.5 * tmp_m_.squaredNorm();
    const double f0 = 0.5 * r_.squaredNorm();
    const GoalErrors trial = ctx.evaluate(q_next_);
    const double f1 = 0.5 * trial.weighted_norm * trial.weighted_norm;
    const double rho = predicted > 0.0 && trial.finite() ? (f0 - f1) / predicted : -1.0;
    if (rho > 0.0) {
      q.swap(q_next_);
      e = trial;
      have_jacobian_ = false;
      const double t = 2.0 * rho - 1.0;
      mu_ *= std::max(1.0 / 3.0, 1.0 - t * t * t);
      nu_ = 2.0;
    } else {
      mu_ *= nu_;
      nu_ *= 2.0;
    }
    // mu stays in [mu_min, 1e30]: a run of rejections (no step reduces F)
    // then gives vanishing steps, which the stall rule reports.
    mu_ = std::clamp(mu_, mu_min_, 1e30);
    nu_ = std::min(nu_, 1e10);
    return ctx.endIteration(q, e, step, std::sqrt(mu_));
  }

 private:
  double tau_, mu_min_, gtol_;
  double mu_ = -1.0, nu_ = 2.0;
  bool have_jacobian_ = false;
  Eigen::MatrixXd J_;
  Eigen::VectorXd r_, d_;
};

}  // namespace

std::unique_ptr<Solver> makeDls(const DlsOptions& o, const SolverSpec& spec) {
  return std::make_unique<DlsSolver>("dls", o, o, o.lambda, KernelSolve::forDls(o, spec.common));
}
std::unique_ptr<Solver> makeDlsAdaptive(const DlsAdaptiveOptions& o, const SolverSpec& spec) {
  return std::make_unique<DlsAdaptiveSolver>(o, KernelSolve::forDlsAdaptive(o, spec.common));
}
std::unique_ptr<Solver> makeDlsMarquardt(const DlsMarquardtOptions& o) {
  return std::make_unique<DlsMarquardtSolver>(o);
}
std::unique_ptr<Solver> makeLm(const LmOptions& o) { return std::make_unique<LmSolver>(o); }

}  // namespace ikbench::jacobian
