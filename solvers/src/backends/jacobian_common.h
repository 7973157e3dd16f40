// Private to the Jacobian family of backends (jacobian_*.cpp): the iteration
// loop they share, the parameters every one of them accepts, and the
// per-backend hooks.
//
// Notation used in every jacobian_*.cpp file:
//   e   stacked residual (target - current), goal weights already applied;
//       orientation rows are rotation vectors times Goal::orientation_scale
//       [m/rad], so every row is in metres (goal.h).
//   J   the weighted geometric Jacobian d(current)/d(dq) [m per rad or m/m].
//   W   diag(Model::dofWeights()), a motion cost: the methods minimise
//       |J dq - e|^2 + (damping) dq^T W dq, i.e. a weighted pseudoinverse.
//       With S = W^-1/2, Jw = J S and dq = S dqw each method runs unchanged
//       in the scaled coordinates dqw ("weighted" = "in dqw").
//   m   rows, nv tangent DOFs.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/solvers/jacobian_options.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"
#include "velocity_damper.h"

namespace ikbench::jacobian {

// The options every backend here shares (max_step, limits, jacobian) and the
// null-space keys live in ikbench/solvers/jacobian_options.h.

// Re-constructs an Eigen decomposition in place with a new size (what Eigen
// does internally): assigning a freshly constructed LLT / SVD / eigensolver
// would copy its not-yet-initialised `info` member, which UBSan rejects.
template <typename T, typename... Args>
void rebuild(T& obj, Args&&... args) {
  obj.~T();
  ::new (&obj) T(std::forward<Args>(args)...);
}

// The damped normal equations (A + lambda^2 I) x = b with A = Jw Jw^T (m <= nv)
// or Jw^T Jw (m > nv), the system every DLS-type step solves. n = min(m, nv)
// is 3 or 6 for one position or one pose goal, by far the common case, and at
// that size Eigen's dynamic-size product and LLT spend more time on size
// bookkeeping than on arithmetic, and even Eigen's fixed-size 6x6 LLT pays a
// square root per pivot (bench_solvers PerIteration, 7-DOF pose DLS,
// measures the step). For n <= 6 the product
// (lower triangle only, one rank-1 update per column) and a square-root-free
// Cholesky L D L^T with its solves (Golub & Van Loan, alg. 4.1.2) are written
// out with a compile-time size; larger n use Eigen's dynamic LLT. The same
// solution to rounding either way; no allocation after resize().
class NormalSystem {
 public:
  static constexpr int kSmall = 6;
  void resize(int n);
  int size() const { return n_; }
  // A = the smaller of Jw Jw^T and Jw^T Jw (Jw is m x nv, min(m, nv) == size()).
  void setNormalMatrix(const Eigen::MatrixXd& Jw);
  // Smallest eigenvalue of A (after setNormalMatrix, before addDiagonal;
  // eigenvalues only). Returns false if the eigensolver failed.
  bool smallestEigenvalue(double* out);
  // True when A - t I is positive definite, i.e. every eigenvalue of A is
  // > t: a Cholesky attempt, far cheaper than the eigenvalues (n <= kSmall;
  // larger n answer false, meaning "unknown, compute the eigenvalues").
  bool eigenvaluesAbove(double t) const;
  void addDiagonal(double d);
  // Cholesky of A; false if A is not (numerically) positive definite.
  bool factor();
  // x = A^-1 b (after factor(); x may be b, both of size()).
  void solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) const;

 private:
  int n_ = -1;
  double a_[kSmall * kSmall];  // n <= kSmall: column-major n x n, lower triangle used
  Eigen::MatrixXd ad_;         // n > kSmall
  Eigen::LLT<Eigen::MatrixXd> lltd_;
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig3_;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigd_;
  Eigen::MatrixXd eig_in_;  // n <= kSmall, n != 3: full symmetric copy for eigd_
};

// y = A^T x. For one pose (m = 6) or position (m = 3) goal as n dot products
// of a compile-time length: Eigen's dynamic-size gemv spends more on dispatch
// than on the arithmetic there (bench_solvers PerIteration measures the step).
template <int M>
void multiplyTransposedFixed(const double* a, const double* x, double* y, Eigen::Index n) {
  double xv[M];
  for (int i = 0; i < M; ++i) xv[i] = x[i];
  for (Eigen::Index j = 0; j < n; ++j, a += M) {
    double s = 0.0;
    for (int i = 0; i < M; ++i) s += a[i] * xv[i];
    y[j] = s;
  }
}
inline void multiplyTransposed(const Eigen::MatrixXd& A, const Eigen::VectorXd& x, Eigen::VectorXd& y) {
  switch (A.rows()) {
    case 6: multiplyTransposedFixed<6>(A.data(), x.data(), y.data(), A.cols()); break;
    case 3: multiplyTransposedFixed<3>(A.data(), x.data(), y.data(), A.cols()); break;
    default: y.noalias() = A.transpose() * x;
  }
}

// Scales v so that max|v_i| <= d (Buss & Kim 2005, "ClampMaxAbs"); d <= 0 disables.
void clampMaxAbs(Eigen::VectorXd& v, double d);

// The shared loop. A backend implements factor() and apply(); the default
// iterate() then does: J, Jw = J S; [freeze loop: factor, apply, null space,
// saturate]; dq = S dqw; ClampMaxAbs(dq, max_step); q <- clamp(q (+) dq);
// evaluate; endIteration. Backends with their own step logic (lm) override
// iterate(), reusing the helpers.
class JacobianSolver : public Solver {
 public:
  JacobianSolver(std::string name, const JacobianOptions& options, const NullSpaceOptions& null_space = {})
      : name_(std::move(name)), jopt_(options), null_(null_space) {}

  // collision=avoid: computeStep keeps every step clear of the scene
  // (velocity_damper.h).
  bool avoidsCollisions() const override { return true; }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) final;

  // Sizes the backend's own buffers (called once per attempt, before the loop;
  // allocates only when m or nv changed since the last call).
  virtual void resize(int m, int nv) = 0;
  // Called at the start of every attempt (reset momentum, lambda, ...).
  virtual void resetAttempt() {}
  // Prepares the generalised inverse of Jw (m x nv; frozen columns are zero)
  // for the residual r. Returns false on a singular / non-finite system, with
  // the reason in *why (reported as numerical-failure).
  virtual bool factor(const Eigen::MatrixXd& Jw, const Eigen::VectorXd& r, std::string* why) = 0;
  // dqw = Jw^# rhs, the backend's step for residual rhs (after factor()).
  virtual void apply(const Eigen::MatrixXd& Jw, const Eigen::VectorXd& rhs, Eigen::VectorXd& dqw) = 0;
  // Multiplies the free part of the step (dls-marquardt's relaxation).
  virtual double stepScale() const { return 1.0; }
  // Damping reported in the trace (lambda, mu, alpha); 0 if none.
  virtual double damping() const { return 0.0; }
  // Called after a step is taken with the final dq (nv) and a mask of the DOFs
  // that ended on a limit (momentum bookkeeping); and after its evaluation.
  virtual void stepTaken(const Eigen::VectorXd& /*dq*/, const std::vector<char>& /*blocked*/) {}
  virtual void evaluated(double /*old_norm*/, double /*new_norm*/) {}
  // One iteration from (q, e); returns true when the attempt is over.
  virtual bool iterate(SolveContext& ctx, Eigen::VectorXd& q, GoalErrors& e);

  // ---- helpers for iterate() implementations ----
  // Jw = J S, read through jw() until the next call (J itself when the
  // weights are 1 and the freeze loop is off: J must then outlive the
  // iteration; otherwise a copy in jw_, whose columns the freeze loop zeroes).
  void weightJacobian(const Eigen::MatrixXd& J);
  const Eigen::MatrixXd& jw() const { return *jw_used_; }
  // The step for the current jw_ / residual r into dq_ (tangent, unscaled by
  // max_step), with the limit mode and the null-space term applied. Returns
  // false on numerical failure (message in *why).
  bool computeStep(const Model& model, const Eigen::VectorXd& q, const Eigen::MatrixXd& J,
                   const Eigen::VectorXd& r, std::string* why);
  // q_next_ = clamp(q (+) dq_) after ClampMaxAbs(dq_, max_step); fills
  // blocked_ and returns |dq_| (the step actually taken, before clamping).
  double takeStep(const Model& model, const Eigen::VectorXd& q);
  // tmp_nv_ = null-space projection of zw_ for the current jw_ (see the .cpp).
  void projectNull();

  const std::string name_;
  const JacobianOptions jopt_;
  const NullSpaceOptions null_;
  bool freeze_ = false;  // the freeze loop is on for this problem (limits=freeze, or auto on a redundant one)
  bool unit_weights_ = true;
  Eigen::VectorXd s_;        // W^-1/2 (nv)
  Eigen::MatrixXd jw_;       // Jw (m x nv), frozen columns zeroed
  const Eigen::MatrixXd* jw_used_ = &jw_;  // what jw() returns
  Eigen::VectorXd r_act_;    // residual minus frozen DOFs' contribution (m)
  Eigen::VectorXd dqw_, dq_, fixed_, zw_, tmp_nv_, coords_, null_target_;
  Eigen::VectorXd tmp_m_;
  Eigen::VectorXd q_next_;   // nq
  std::vector<char> frozen_, blocked_;
  std::vector<int> scalar_q_;  // q index of scalar DOF v (-1 for rotation DOFs)
  int m_ = 0, nv_ = 0;
  double clamp_factor_ = 1.0;
  Eigen::MatrixXd null_Am_, null_An_;
  Eigen::LLT<Eigen::MatrixXd> null_llt_m_, null_llt_n_;
  const CollisionWorld* avoid_ = nullptr;  // the scene to keep clear of (collision=avoid), else null
  VelocityDamper damper_;  // |dq| after / before the max_step clamp of the last step

 private:
  virtual bool supportsNullSpace() const { return false; }
  void setup(const Problem& problem);
  std::shared_ptr<const Model> setup_model_;  // model setup() last ran for
};

// Factories, one per backend (jacobian_*.cpp).
std::unique_ptr<Solver> makeJt(const JtOptions& o);
std::unique_ptr<Solver> makeGdMomentum(const GdMomentumOptions& o);
std::unique_ptr<Solver> makePinv(const PinvOptions& o);
std::unique_ptr<Solver> makeGn(const GnOptions& o);
std::unique_ptr<Solver> makeSdls(const SdlsOptions& o);
// dls and dls-adaptive choose their strategy from their options and the
// spec's common keys: the compiled chain kernel (kernel_solve.h) where it
// runs them, the generic code otherwise.
std::unique_ptr<Solver> makeDls(const DlsOptions& o, const SolverSpec& spec);
std::unique_ptr<Solver> makeDlsAdaptive(const DlsAdaptiveOptions& o, const SolverSpec& spec);
std::unique_ptr<Solver> makeDlsMarquardt(const DlsMarquardtOptions& o);
std::unique_ptr<Solver> makeLm(const LmOptions& o);

// The typed option bindings of dls and dls-adaptive: the registry parses
// their specs with them, and so does the batch path (batch_internal.h).
const OptionsBinding<DlsOptions>& dlsBinding();
const OptionsBinding<DlsAdaptiveOptions>& dlsAdaptiveBinding();

}  // namespace ikbench::jacobian
