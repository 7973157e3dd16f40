// The Jacobian family of IK backends: the shared iteration loop, the common
// parameters and the registration of every backend. The methods themselves
// live in jacobian_gradient.cpp (jt, gd-momentum), jacobian_svd.cpp (pinv,
// gn, sdls) and jacobian_dls.cpp (dls, dls-adaptive, dls-marquardt, lm); the
// notation (e, J, W, S, Jw, dqw) is explained in jacobian_common.h.
//
// Units: residual rows are metres (orientation rows via
// Goal::orientation_scale [m/rad]), so a damping lambda is in metres, a
// Jacobian entry in m/rad (hinge) or m/m (slider), joint steps in rad or m.
#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/config.h"
#include "attempt_driver.h"
#include "jacobian_common.h"

namespace ikbench {
namespace jacobian {

void clampMaxAbs(Eigen::VectorXd& v, double d) {
  if (d <= 0.0 || v.size() == 0) return;
  const double a = v.cwiseAbs().maxCoeff();
  if (a > d) v *= d / a;
}

void JacobianSolver::setup(const Problem& problem) {
  const Model& model = *problem.model;
  const int m = problem.rows(), nv = model.nv();
  // Everything below depends only on the model and m: repeated solves (and
  // restarts) of one model skip it. setup_model_ holds the model alive so
  // that its address cannot be reused by another.
  if (problem.model.get() == setup_model_.get() && m == m_) {
    resize(m, nv);
    return;
  }
  setup_model_ = problem.model;
  freeze_ = freezesAtLimits(jopt_.limits, m, nv);
  // resize() is a no-op when the size is unchanged, so repeated solves of the
  // same problem shape do not allocate here either.
  m_ = m;
  nv_ = nv;
  s_.resize(nv);
  s_ = model.dofWeights().cwiseSqrt().cwiseInverse();
  unit_weights_ = (model.dofWeights().array() == 1.0).all();
  jw_.resize(m, nv);
  r_act_.resize(m);
  tmp_m_.resize(m);
  for (Eigen::VectorXd* v : {&dqw_, &dq_, &fixed_, &zw_, &tmp_nv_, &coords_, &null_target_}) v->resize(nv);
  q_next_.resize(model.nq());
  frozen_.assign(nv, 0);
  blocked_.assign(nv, 0);
  scalar_q_.assign(nv, -1);
  const Eigen::VectorXd& lo = model.lowerLimits();
  const Eigen::VectorXd& hi = model.upperLimits();
  for (int j = 0; j < model.numJoints(); ++j) {
    const int iq = model.idxQ(j), iv = model.idxV(j);
    switch (model.type(j)) {
      case JointType::kRevolute:
      case JointType::kPrismatic: scalar_q_[iv] = iq; break;
      case JointType::kFree:
        for (int k = 0; k < 3; ++k) scalar_q_[iv + k] = iq + k;
        break;
      default: break;
    }
  }
  for (int v = 0; v < nv; ++v) {
    const bool finite = std::isfinite(lo[v]) && std::isfinite(hi[v]);
    null_target_[v] = null_.null_target == NullTarget::kRest ? std::clamp(0.0, lo[v], hi[v]) : (finite ? 0.5 * (lo[v] + hi[v]) : 0.0);
  }
  if (null_.null_gain > 0.0) {
    const bool small_m = m <= nv;
    const int n = small_m ? m : nv;
    Eigen::MatrixXd& A = small_m ? null_Am_ : null_An_;
    Eigen::LLT<Eigen::MatrixXd>& llt = small_m ? null_llt_m_ : null_llt_n_;
    if (A.rows() != n) {
      A.resize(n, n);
      rebuild(llt, n);
    }
  }
  resize(m, nv);
}

void JacobianSolver::solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) {
  setup(problem);
  avoid_ = commonOptions().collision == CollisionMode::kAvoid ? problem.collision.get() : nullptr;
  resetAttempt();
  GoalErrors e = ctx.evaluate(q);
  if (ctx.begin(q, e)) return;
  while (!iterate(ctx, q, e)) {
  }
}

void JacobianSolver::weightJacobian(const Eigen::MatrixXd& J) {
  // With unit weights Jw = J: read J in place unless the freeze loop will
  // zero columns of Jw (saves a copy of J per iteration).
  if (unit_weights_ && !freeze_) {
    jw_used_ = &J;
    return;
  }
  if (unit_weights_) {
    jw_ = J;
  } else {
    jw_.noalias() = J * s_.asDiagonal();
  }
  jw_used_ = &jw_;
}

bool JacobianSolver::computeStep(const Model& model, const Eigen::VectorXd& q, const Eigen::MatrixXd& J,
                                 const Eigen::VectorXd& r, std::string* why) {
  const bool freeze = freeze_;
  const bool null_space = null_.null_gain > 0.0 && supportsNullSpace();
  if (freeze) {
    std::fill(frozen_.begin(), frozen_.end(), 0);
    fixed_.setZero();
    r_act_ = r;
  }
  const Eigen::VectorXd& rhs = freeze ? r_act_ : r;
  if (null_space) tangentCoordinates(model, q, coords_);
  const Eigen::VectorXd& lo = model.lowerLimits();
  const Eigen::VectorXd& hi = model.upperLimits();
  const double scale = stepScale();
  for (int pass = 0;; ++pass) {
    if (!factor(jw(), rhs, why)) return false;
    apply(jw(), rhs, dqw_);
    if (null_space) {
      // Gradient projection (Liegeois 1977): dqw += (I - Jw^# Jw) zw, where
      // zw = S * gain * (c_target - c) is the scaled descent direction of
      // H = 1/2 |c - c_target|^2 (W^-1 weighted in dq, as the main step).
      zw_ = null_.null_gain * s_.cwiseProduct(null_target_ - coords_);
      if (freeze)
        for (int v = 0; v < nv_; ++v)
          if (frozen_[v]) zw_[v] = 0.0;
      projectNull();
      dqw_ += tmp_nv_;
    }
    dq_ = scale * s_.cwiseProduct(dqw_);
    if (!freeze) break;
    for (int v = 0; v < nv_; ++v)
      if (frozen_[v]) dq_[v] = fixed_[v];
    if (pass >= nv_) break;
    bool any = false;
    for (int v = 0; v < nv_; ++v) {
      const int iq = scalar_q_[v];
      if (iq < 0 || frozen_[v]) continue;
      const double x = q[iq] + dq_[v];
      double d;
      if (x > hi[v]) {
        d = hi[v] - q[iq];
      } else if (x < lo[v]) {
        d = lo[v] - q[iq];
      } else {
        continue;
      }
      // Saturate DOF v: it moves exactly onto its limit, the rest of the
      // chain solves for what remains (e - J_v d).
      frozen_[v] = 1;
      fixed_[v] = d;
      dq_[v] = d;
      r_act_.noalias() -= J.col(v) * d;
      jw_.col(v).setZero();
      any = true;
    }
    if (!any) break;
  }
  if (avoid_ != nullptr) damper_.constrain(*avoid_, q, dq_);
  if (!dq_.allFinite()) {
    *why = stepFailureText(batch::kNonFiniteStep);
    return false;
  }
  return true;
}

void JacobianSolver::projectNull() {
  // tmp_nv_ = (I - Jw^T (Jw Jw^T + eps I)^-1 Jw) zw, or the equivalent nv x nv
  // form: the projector onto the null space of the (active) Jacobian,
  // regularised by eps = 1e-10 * mean eigenvalue so that it stays bounded
  // (norm <= 1) at singularities. It is deliberately not the damped inverse
  // of the main step: with lambda > 0, I - J^# J leaks lambda-sized motion
  // into the task space and the task would never reach 1e-5.
  const bool small_m = m_ <= nv_;
  Eigen::MatrixXd& A = small_m ? null_Am_ : null_An_;
  if (small_m) {
    A.noalias() = jw() * jw().transpose();
  } else {
    A.noalias() = jw().transpose() * jw();
  }
  const double eps = 1e-10 * std::max(A.trace() / A.rows(), kTinyDivisor);
  A.diagonal().array() += eps;
  Eigen::LLT<Eigen::MatrixXd>& llt = small_m ? null_llt_m_ : null_llt_n_;
  llt.compute(A);
  tmp_m_.noalias() = jw() * zw_;
  if (small_m) {
    llt.solveInPlace(tmp_m_);
    tmp_nv_.noalias() = jw().transpose() * tmp_m_;
  } else {
    tmp_nv_.noalias() = jw().transpose() * tmp_m_;
    llt.solveInPlace(tmp_nv_);
  }
  tmp_nv_ = zw_ - tmp_nv_;
}

double JacobianSolver::takeStep(const Model& model, const Eigen::VectorXd& q) {
  if (model.hasOnlyScalarJoints()) {
    // Revolute/prismatic/fixed only: q and dq share indices, so the clamp on
    // |dq|_inf, q + dq, the box clamp and the blocked flags are one pass over
    // the DOFs. The same step and q as the general path below; only |dq| is
    // summed in another order (it feeds the trace and the stall rule).
    double* dq = dq_.data();
    const double* qv = q.data();
    double* qn = q_next_.data();
    const double* lo = model.lowerLimits().data();
    const double* hi = model.upperLimits().data();
    double before2 = 0.0, amax = 0.0;
    for (int v = 0; v < nv_; ++v) {
      before2 += dq[v] * dq[v];
      amax = std::max(amax, std::abs(dq[v]));
    }
    const double d = jopt_.max_step;
    const bool scale = d > 0.0 && amax > d;
    const double f = scale ? d / amax : 1.0;
    double step2 = 0.0;
    for (int v = 0; v < nv_; ++v) {
      if (scale) dq[v] *= f;
      step2 += dq[v] * dq[v];
      const double x = qv[v] + dq[v];
      const double c = std::clamp(x, lo[v], hi[v]);
      qn[v] = c;
      blocked_[v] = c != x;
    }
    if (!scale) {  // step2 == before2: the same squares summed in the same order
      clamp_factor_ = 1.0;
      return std::sqrt(step2);
    }
    const double before = std::sqrt(before2), step = std::sqrt(step2);
    clamp_factor_ = before > 0.0 ? step / before : 1.0;
    return step;
  }
  const double before = dq_.norm();
  clampMaxAbs(dq_, jopt_.max_step);
  const double step = dq_.norm();
  clamp_factor_ = before > 0.0 ? step / before : 1.0;
  integrate(model, q, dq_, q_next_);
  clampToLimits(model, q_next_);
  for (int v = 0; v < nv_; ++v) {
    const int iq = scalar_q_[v];
    blocked_[v] = iq >= 0 && q_next_[iq] != q[iq] + dq_[v];
  }
  return step;
}

bool JacobianSolver::iterate(SolveContext& ctx, Eigen::VectorXd& q, GoalErrors& e) {
  const Model& model = ctx.model();
  const Eigen::MatrixXd& J = ctx.jacobian(jopt_.jacobian);
  weightJacobian(J);
  std::string why;  // empty: no allocation unless a failure is reported
  if (!computeStep(model, q, J, ctx.data().residual, &why)) {
    ctx.stop(Status::kNumericalFailure, fmt::format("{}: {}", name_, why));
    return true;
  }
  const double step = takeStep(model, q);
  if (!q_next_.allFinite()) {
    ctx.stop(stopStatus(batch::kNonFiniteConfig), stopMessage(batch::kNonFiniteConfig, ctx.options(), ctx.iteration(), name_));
    return true;
  }
  stepTaken(dq_, blocked_);
  q.swap(q_next_);  // same sizes: swaps buffers, no allocation
  const double old_norm = e.weighted_norm;
  e = ctx.evaluate(q);
  evaluated(old_norm, e.weighted_norm);
  return ctx.endIteration(q, e, step, damping());
}

}  // namespace jacobian

namespace {

// The keys every Jacobian backend accepts, and the null-space keys.
const OptionsBinding<JacobianOptions>& jacobianBinding() {
  static const OptionsBinding<JacobianOptions> b = [] {
    OptionsBinding<JacobianOptions> x;
    x.real("max_step", &JacobianOptions::max_step, Range::atLeast(0), "rad or m",
           "clamp on the largest joint change per iteration, dq <- dq * min(1, max_step / max|dq_i|) (Buss 2004, "
           "'clamping the maximum angle change'); 0 = no clamp");
    x.choice("limits", &JacobianOptions::limits, kLimitModeNames,
             "joint limits inside the loop: 'clamp' (take the step, clamp q into the box), 'freeze' (Baerlocher & "
             "Boulic 2004 clamping loop: DOFs whose step would cross a limit are put on the limit, removed, and the "
             "step re-solved without them), or 'auto' (this key's value, not the preset: freeze when the goals have "
             "fewer rows than the model has DOFs, clamp otherwise)");
    x.choice("jacobian", &JacobianOptions::jacobian, kJacobianModeNames,
             "orientation rows of J: 'geometric' (angular velocity, Buss 2004) or 'exact' (derivative of the "
             "log(R_target R^T) residual, Jr^-1(e) times the geometric rows)");
    return x;
  }();
  return b;
}

const OptionsBinding<NullSpaceOptions>& nullSpaceBinding() {
  static const OptionsBinding<NullSpaceOptions> b = [] {
    OptionsBinding<NullSpaceOptions> x;
    x.real("null_gain", &NullSpaceOptions::null_gain, Range::closed(0, 1), "1",
           "null-space secondary objective (Liegeois 1977 gradient projection): dq += (I - J^+ J) z with z = "
           "null_gain * W^-1 (c_target - c), c = joint coordinates; a fraction of the distance per iteration; 0 = off");
    x.choice("null_target", &NullSpaceOptions::null_target, kNullTargetNames,
             "target of the null-space pull: 'mid' (middle of finite limits, 0 elsewhere) or 'rest' (the zero pose, "
             "clamped into the limits)");
    return x;
  }();
  return b;
}

// A backend's own keys first, then the shared ones.
template <typename O>
OptionsBinding<O> withJacobianKeys(OptionsBinding<O> own) {
  own.inherit(jacobianBinding());
  if constexpr (std::is_base_of_v<NullSpaceOptions, O>) own.inherit(nullSpaceBinding());
  return own;
}

// The help of the `kernel` key of dls and dls-adaptive (`when`: the
// backend's own condition, or empty).
std::string kernelHelp(const std::string& when) {
  return "'auto' (this key's value, not the preset): the compiled chain kernel (the batch path's SIMD kernel, one "
         "problem per solve)" + when +
         " for a single pose or position goal on a chain of hinges and sliders with every DOF on its path and unit "
         "DOF weights, the generic model code otherwise; 'generic': the generic code always (the two agree to "
         "rounding); 'lanes' / 'packed': the kernel with up to four attempts at once in its lanes / one attempt at "
         "a time packed within the problem ('auto' takes packed while one attempt runs; the answers are bitwise equal)";
}

}  // namespace

namespace jacobian {

const OptionsBinding<DlsOptions>& dlsBinding() {
  static const OptionsBinding<DlsOptions> binding = [] {
    OptionsBinding<DlsOptions> b;
    b.real("lambda", &DlsOptions::lambda, Range::atLeast(0), "m", "damping factor lambda");
    b.choice("kernel", &DlsOptions::kernel, kKernelChoiceNames, kernelHelp(""));
    return withJacobianKeys(b);
  }();
  return binding;
}

const OptionsBinding<DlsAdaptiveOptions>& dlsAdaptiveBinding() {
  static const OptionsBinding<DlsAdaptiveOptions> binding = [] {
    OptionsBinding<DlsAdaptiveOptions> b;
    b.choice("mode", &DlsAdaptiveOptions::mode, kAdaptiveDampingNames,
             "'sv' (singular-value term), 'error' (error term) or 'both'");
    b.real("lambda_max", &DlsAdaptiveOptions::lambda_max, Range::atLeast(0), "m", "largest singular-value damping lambda_max");
    b.real("epsilon", &DlsAdaptiveOptions::epsilon, Range::above(0), "m",
           "singular region: damping applies while the smallest singular value s_min < epsilon");
    b.real("err_gain", &DlsAdaptiveOptions::err_gain, Range::atLeast(0), "1",
           "error term err_gain * |e|^2 (Sugihara's E = 1/2 |e|^2)");
    b.real("lambda_min", &DlsAdaptiveOptions::lambda_min, Range::atLeast(0), "m", "damping floor lambda_min (Sugihara's w_bar)");
    b.choice("kernel", &DlsAdaptiveOptions::kernel, kKernelChoiceNames, kernelHelp(" with mode=error,"));
    return withJacobianKeys(b);
  }();
  return binding;
}

}  // namespace jacobian

void registerJacobianSolvers(Registry& registry) {
  using namespace jacobian;
  {
    OptionsBinding<JtOptions> b;
    b.real("alpha", &JtOptions::alpha, Range::atLeast(0), "rad/m^2",
           "step size; 0 = Buss's optimal step for the linearised residual");
    registry.add(solverInfo("jt",
                            "Jacobian transpose (gradient descent), dq = alpha J^T e with Buss's step "
                            "alpha = <e, J J^T e> / |J J^T e|^2 or a fixed alpha (Buss 2004, sec. 4)",
                            withJacobianKeys(b), makeJt));
  }
  {
    OptionsBinding<GdMomentumOptions> b;
    b.real("step", &GdMomentumOptions::step, Range::atLeast(0), "rad/m^2",
           "gradient step; 0 = 1/|J|_F^2 every iteration (1/L, L bounds the curvature)");
    b.real("beta", &GdMomentumOptions::beta, Range::halfOpen(0, 1), "1", "momentum coefficient");
    b.flag("restart", &GdMomentumOptions::restart, "zero the momentum when the residual grows (O'Donoghue & Candes 2015)");
    registry.add(solverInfo("gd-momentum",
                            "gradient descent with Nesterov momentum, v <- beta v + step J^T e, dq = beta v + step J^T e "
                            "(Nesterov 1983; Sutskever et al. 2013 form; adaptive restart O'Donoghue & Candes 2015)",
                            withJacobianKeys(b), makeGdMomentum));
  }
  {
    OptionsBinding<PinvOptions> b;
    b.real("rcond", &PinvOptions::rcond, Range::halfOpen(0, 1), "1",
           "relative singular-value cutoff: s_i <= rcond * s_max are treated as 0");
    registry.add(solverInfo("pinv",
                            "pseudoinverse by SVD, dq = sum_{s_i > rcond s_max} v_i u_i^T e / s_i (Buss 2004, sec. 5)",
                            withJacobianKeys(b), makePinv));
  }
  {
    OptionsBinding<GnOptions> b;
    b.real("rcond_min", &GnOptions::rcond_min, Range::halfOpen(0, 1), "1",
           "reciprocal condition number of the normal matrix below which the step is refused (status "
           "numerical-failure)");
    registry.add(solverInfo("gn",
                            "Gauss-Newton on the normal equations: (J^T J) dq = J^T e (m >= nv) or the minimum-norm "
                            "dq = J^T (J J^T)^-1 e (m < nv); numerical-failure when singular (Nocedal & Wright 2006, "
                            "sec. 10.3)",
                            withJacobianKeys(b), makeGn));
  }
  registry.add(solverInfo(
      "dls", "damped least squares, fixed damping: dq = J^T (J J^T + lambda^2 I)^-1 e (Buss 2004, eq. 11)",
      dlsBinding(), makeDls));
  {
    registry.add(solverInfo(
        "dls-adaptive",
        "damped least squares with adaptive damping lambda^2 = lambda_max^2 (1 - (s_min/epsilon)^2) near "
        "singularities (Nakamura & Hanafusa 1986; Chiaverini et al. 1994) + err_gain |e|^2 (Sugihara 2011)",
        dlsAdaptiveBinding(), makeDlsAdaptive));
  }
  {
    OptionsBinding<DlsMarquardtOptions> b;
    b.real("lambda", &DlsMarquardtOptions::lambda, Range::above(0), "1", "relative damping lambda");
    b.real("relax", &DlsMarquardtOptions::relax, Range::open(0, 2), "1", "relaxation factor on the step");
    registry.add(solverInfo("dls-marquardt",
                            "damped least squares with Marquardt scaling, (J^T J + lambda diag(J^T J)) d = J^T e, "
                            "q += relax d (Marquardt 1963)",
                            withJacobianKeys(b), makeDlsMarquardt));
  }
  {
    OptionsBinding<LmOptions> b;
    b.real("tau", &LmOptions::tau, Range::above(0), "1", "initial mu = tau * max diag(J^T J)");
    b.real("mu_min", &LmOptions::mu_min, Range::atLeast(0), "m^2", "floor on mu");
    b.real("gtol", &LmOptions::gtol, Range::atLeast(0), "m^2",
           "stop (stalled, local minimum) when |J^T e|_inf <= gtol (Madsen et al. eps_1)");
    registry.add(solverInfo("lm",
                            "Levenberg-Marquardt with accept/reject by gain ratio and mu up/down (Levenberg 1944; "
                            "Marquardt 1963; Madsen, Nielsen & Tingleff 2004, Algorithm 3.16)",
                            withJacobianKeys(b), makeLm));
  }
  {
    OptionsBinding<SdlsOptions> b;
    b.real("gamma_max", &SdlsOptions::gamma_max, Range::above(0), "rad",
           "largest joint change per iteration gamma_max (pi/4 in Buss & Kim)");
    registry.add(solverInfo("sdls",
                            "selectively damped least squares: per singular value clamp gamma_i = min(1, N_i/M_i) "
                            "gamma_max (Buss & Kim 2005)",
                            withJacobianKeys(b), makeSdls));
  }
}

}  // namespace ikbench
