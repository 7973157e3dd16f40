// First-order members of the Jacobian family: the Jacobian transpose and
// gradient descent with Nesterov momentum. Both follow the descent direction
// of F(q) = 1/2 |e(q)|^2, whose gradient is -J^T e (e = target - current);
// with DOF weights the direction is the W^-1-weighted gradient S Jw^T e.
// Notation: jacobian_common.h.
#include <fmt/format.h>

#include "ikbench/core/numeric.h"
#include "jacobian_common.h"

namespace ikbench::jacobian {
namespace {

// Jacobian transpose (Wolovich & Elliott 1984; Buss 2004, "Introduction to
// Inverse Kinematics with Jacobian Transpose, Pseudoinverse and Damped Least
// Squares methods", sec. 4): dq = alpha J^T e. Buss's step size minimises the
// linearised error |e - alpha J J^T e| over alpha:
//   alpha = <e, J J^T e> / <J J^T e, J J^T e>.
// With alpha > 0 given, a fixed step [rad/m^2] is used instead.
class JtSolver final : public JacobianSolver {
 public:
  explicit JtSolver(const JtOptions& o) : JacobianSolver("jt", o), alpha_(o.alpha) {
  }

 protected:
  void resize(int m, int nv) override {
    g_.resize(nv);
    jg_.resize(m);
  }
  bool factor(const Eigen::MatrixXd&, const Eigen::VectorXd&, std::string*) override { return true; }
  void apply(const Eigen::MatrixXd& Jw, const Eigen::VectorXd& rhs, Eigen::VectorXd& dqw) override {
    g_.noalias() = Jw.transpose() * rhs;
    double alpha = alpha_;
    if (alpha == 0.0) {
      jg_.noalias() = Jw * g_;
      const double den = jg_.squaredNorm();
      // J J^T e = 0 means e is orthogonal to every column (a stationary
      // point of F): no step, which the stall rule then reports.
      alpha = den > kTinyDivisor ? rhs.dot(jg_) / den : 0.0;
    }
    last_alpha_ = alpha;
    dqw = alpha * g_;
  }
  double damping() const override { return last_alpha_; }

 private:
  double alpha_;
  double last_alpha_ = 0.0;
  Eigen::VectorXd g_, jg_;
};

// Gradient descent with Nesterov's accelerated momentum (Nesterov 1983, "A
// method for solving the convex programming problem with convergence rate
// O(1/k^2)"), in the form of Sutskever, Martens, Dahl & Hinton 2013 ("On the
// importance of initialization and momentum in deep learning", eq. 3-4) as
// rewritten by Bengio, Boulanger-Lewandowski & Pascanu 2013 ("Advances in
// optimizing recurrent networks", eq. 7) so that the gradient is taken at the
// current iterate (one FK and Jacobian per iteration):
//   g = step * J^T e(q),  v <- beta v + g,  q <- q + beta v + g,
// with a fixed step or step = 1 / |J|_F^2 recomputed every iteration.
// With restart, v is zeroed whenever F grows (adaptive restart, O'Donoghue &
// Candes 2015, "Adaptive restart for accelerated gradient schemes", sec. 3.2,
// function scheme). Velocity components of DOFs stopped by a limit are zeroed.
class GdMomentumSolver final : public JacobianSolver {
 public:
  explicit GdMomentumSolver(const GdMomentumOptions& o)
      : JacobianSolver("gd-momentum", o), step_(o.step), beta_(o.beta), restart_(o.restart) {}

 protected:
  void resize(int, int nv) override {
    g_.resize(nv);
    v_.resize(nv);
  }
  void resetAttempt() override { v_.setZero(); }
  bool factor(const Eigen::MatrixXd&, const Eigen::VectorXd&, std::string*) override { return true; }
  void apply(const Eigen::MatrixXd& Jw, const Eigen::VectorXd& rhs, Eigen::VectorXd& dqw) override {
    // step = 0: 1/L with L = |Jw|_F^2 >= lambda_max(Jw^T Jw), the Lipschitz
    // constant of grad F for the linearised residual (Nesterov 2004,
    // Introductory Lectures on Convex Optimization, sec. 2.2).
    double step = step_;
    if (step == 0.0) {
      const double L = Jw.squaredNorm();
      step = L > kTinyDivisor ? 1.0 / L : 0.0;
    }
    last_step_ = step;
    g_.noalias() = step * (Jw.transpose() * rhs);
    // beta v_new + g with v_new = beta v + g.
    dqw = (beta_ * beta_) * v_ + (1.0 + beta_) * g_;
  }
  void stepTaken(const Eigen::VectorXd&, const std::vector<char>& blocked) override {
    // The velocity follows the step actually taken (scaled by the max_step clamp).
    v_ = clamp_factor_ * (beta_ * v_ + g_);
    for (int k = 0; k < nv_; ++k)
      if (blocked[k] || frozen_[k]) v_[k] = 0.0;
  }
  void evaluated(double old_norm, double new_norm) override {
    if (restart_ && new_norm > old_norm) v_.setZero();
  }
  double damping() const override { return last_step_; }

 private:
  double step_, beta_, last_step_ = 0.0;
  bool restart_;
  Eigen::VectorXd g_, v_;
};

}  // namespace

std::unique_ptr<Solver> makeJt(const JtOptions& o) { return std::make_unique<JtSolver>(o); }
std::unique_ptr<Solver> makeGdMomentum(const GdMomentumOptions& o) { return std::make_unique<GdMomentumSolver>(o); }

}  // namespace ikbench::jacobian
