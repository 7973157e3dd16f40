// Options of the Jacobian family of backends (jt, gd-momentum, pinv, gn, dls,
// dls-adaptive, dls-marquardt, lm, sdls). Each backend's spec keys are bound
// to these fields once (solvers/src/backends/jacobian_solvers.cpp); the defaults here
// are the defaults everywhere.
//
// Units: residual rows are metres (orientation rows via
// Goal::orientation_scale [m/rad]), so a damping lambda is in metres, a
// Jacobian entry in m/rad (hinge) or m/m (slider), joint steps in rad or m.
#pragma once

#include <string>

#include "ikbench/core/enum_table.h"
#include "ikbench/kinematics/goal.h"

namespace ikbench {

// How joint limits act inside the iteration (the final q is clamped anyway).
enum class LimitMode {
  // q <- clamp(q + dq): the step is taken, then projected onto the box.
  kClamp,
  // The clamping loop of Baerlocher & Boulic 2004 ("An inverse kinematics
  // architecture enforcing an arbitrary number of strict priority levels",
  // The Visual Computer 20(6), sec. 4.2): every scalar DOF whose step would
  // cross a limit is put on the limit and frozen, its motion removed from the
  // residual, and the step re-solved with the others.
  kFreeze,
  // Chosen per problem from its redundancy: freeze when the goals have fewer
  // rows than the model has DOFs (a redundant chain keeps moving the other
  // joints toward the target), clamp otherwise (a 6-DOF arm with a pose
  // goal has no other joint to move: freezing one leaves a rank-deficient
  // system that the restarts must escape).
  kAuto,
};
// Whether a solve with `mode` runs the freeze loop on a problem of goal_rows
// goal rows over dofs DOFs (kAuto's rule: fewer rows than DOFs). The
// generic Jacobian family (JacobianSolver::setup) and the compiled kernel
// (kernelParams, chain_plan.cpp) both ask here.
inline constexpr bool freezesAtLimits(LimitMode mode, int goal_rows, int dofs) {
  return mode == LimitMode::kFreeze || (mode == LimitMode::kAuto && goal_rows < dofs);
}

inline constexpr EnumTable<LimitMode, 3> kLimitModeNames{
    {{{LimitMode::kClamp, "clamp"}, {LimitMode::kFreeze, "freeze"}, {LimitMode::kAuto, "auto"}}}, "limit mode"};

inline constexpr EnumTable<JacobianMode, 2> kJacobianModeNames{
    {{{JacobianMode::kGeometric, "geometric"}, {JacobianMode::kExactResidual, "exact"}}}, "Jacobian mode"};

// Target of the null-space pull: the middle of finite limits (0 elsewhere),
// or the rest (zero) pose clamped into the limits.
enum class NullTarget { kMid, kRest };
inline constexpr EnumTable<NullTarget, 2> kNullTargetNames{
    {{{NullTarget::kMid, "mid"}, {NullTarget::kRest, "rest"}}}, "null-space target"};

// Which code runs the iteration of dls and dls-adaptive:mode=error.
enum class KernelChoice {
  // The compiled chain kernel (solvers/src/kernel/kernel_solve.h: the batch path's
  // SIMD kernel, one problem per solve) for the problems it takes: one
  // pose or position goal on a chain of hinges and sliders, every DOF on the
  // goal's path, unit DOF weights, at most 16 DOF; the generic model code
  // for the others.
  kAuto,
  // The generic model code always (forward_kinematics.h, goal.h,
  // jacobian_dls.cpp).
  kGeneric,
  // The kernel's two ways of running one problem, which kAuto combines (the
  // one-problem step while one attempt runs: a solve without restarts, and
  // attempt 0 until restarts start beside it; the lanes after that):
  // kLanes runs up to four attempts of the solve at once, one per lane;
  // kPacked runs one attempt at a time in the one-problem step
  // (batch_layout.h oneStep), packed within the problem. Same answers,
  // bitwise; only the time differs.
  kLanes,
  kPacked,
};
inline constexpr EnumTable<KernelChoice, 4> kKernelChoiceNames{{{{KernelChoice::kAuto, "auto"},
                                                                 {KernelChoice::kGeneric, "generic"},
                                                                 {KernelChoice::kLanes, "lanes"},
                                                                 {KernelChoice::kPacked, "packed"}}},
                                                               "kernel"};

// Keys every Jacobian backend accepts.
struct JacobianOptions {
  // Largest joint change per iteration, dq <- dq * min(1, max_step / max|dq_i|)
  // [rad or m] (Buss 2004, "clamping the maximum angle change"); 0 = none.
  double max_step = 0.5;
  LimitMode limits = LimitMode::kClamp;
  // Orientation rows of J: angular velocity (geometric, Buss 2004) or the
  // exact derivative of the log(R_target R^T) residual (Jr^-1(e) times it),
  // which Newton-type methods need for an accurate linear model.
  JacobianMode jacobian = JacobianMode::kGeometric;
};

// The null-space secondary objective of the least-squares steps (dls,
// dls-adaptive, dls-marquardt, pinv): Liegeois 1977 gradient projection,
// dq += (I - J^+ J) z with z = null_gain * W^-1 (c_target - c).
struct NullSpaceOptions {
  double null_gain = 0.0;  // fraction of the distance per iteration, [0, 1]; 0 = off
  NullTarget null_target = NullTarget::kMid;
};

// jt: dq = alpha J^T e (Buss 2004, sec. 4).
struct JtOptions : JacobianOptions {
  double alpha = 0.0;  // [rad/m^2]; 0 = Buss's step <e, J J^T e> / |J J^T e|^2
};

// gd-momentum: Nesterov momentum (Nesterov 1983; Sutskever et al. 2013),
// adaptive restart (O'Donoghue & Candes 2015).
struct GdMomentumOptions : JacobianOptions {
  double step = 0.0;  // gradient step [rad/m^2]; 0 = 1/|J|_F^2 every iteration
  double beta = 0.9;  // momentum coefficient, [0, 1)
  bool restart = true;  // zero the momentum when the residual grows
};

// pinv: SVD pseudoinverse (Buss 2004, sec. 5).
struct PinvOptions : JacobianOptions, NullSpaceOptions {
  double rcond = 1e-3;  // singular values <= rcond * s_max are dropped, [0, 1)
};

// gn: Gauss-Newton on the normal equations (Nocedal & Wright 2006, sec. 10.3).
struct GnOptions : JacobianOptions {
  GnOptions() { jacobian = JacobianMode::kExactResidual; }
  double rcond_min = 1e-12;  // pivot ratio below which the step is refused (numerical-failure)
};

// dls: damped least squares, dq = J^T (J J^T + lambda^2 I)^-1 e (Buss 2004, eq. 11).
struct DlsOptions : JacobianOptions, NullSpaceOptions {
  double lambda = 0.05;  // [m], >= 0
  KernelChoice kernel = KernelChoice::kAuto;
};

// dls-adaptive: lambda^2 = lambda_max^2 (1 - (s_min/epsilon)^2) near
// singularities (Nakamura & Hanafusa 1986; Chiaverini et al. 1994)
// + err_gain |e|^2 (Sugihara 2011) + lambda_min^2.
enum class AdaptiveDamping { kSingularValue, kError, kBoth };
inline constexpr EnumTable<AdaptiveDamping, 3> kAdaptiveDampingNames{
    {{{AdaptiveDamping::kSingularValue, "sv"}, {AdaptiveDamping::kError, "error"}, {AdaptiveDamping::kBoth, "both"}}},
    "damping mode"};
struct DlsAdaptiveOptions : JacobianOptions, NullSpaceOptions {
  AdaptiveDamping mode = AdaptiveDamping::kBoth;
  double lambda_max = 0.1;  // largest singular-value damping [m]
  double epsilon = 0.1;     // singular region: s_min < epsilon [m], > 0
  double err_gain = 0.5;    // error term err_gain |e|^2 [1] (Sugihara's E = 1/2 |e|^2)
  double lambda_min = 1e-3;  // damping floor [m] (Sugihara's w_bar)
  KernelChoice kernel = KernelChoice::kAuto;  // the compiled chain kernel runs mode=error only
};

// dls-marquardt: (J^T J + lambda diag(J^T J)) d = J^T e, q += relax d (Marquardt 1963).
struct DlsMarquardtOptions : JacobianOptions, NullSpaceOptions {
  double lambda = 0.1;  // relative damping [1], > 0
  double relax = 1.0;   // relaxation on the step, (0, 2)
};

// lm: Levenberg-Marquardt with gain-ratio accept/reject (Madsen, Nielsen &
// Tingleff 2004, Algorithm 3.16).
struct LmOptions : JacobianOptions {
  LmOptions() { jacobian = JacobianMode::kExactResidual; }
  double tau = 1e-3;     // initial mu = tau * max diag(J^T J)
  double mu_min = 1e-12;  // floor on mu [m^2]
  double gtol = 1e-10;   // stop (stalled) when |J^T e|_inf <= gtol [m^2]
};

// sdls: selectively damped least squares (Buss & Kim 2005).
struct SdlsOptions : JacobianOptions {
  SdlsOptions() { max_step = 0.0; }  // gamma_max does the clamping
  double gamma_max = 0.785398163397448;  // largest joint change per iteration [rad], pi/4 to 15 digits
};

}  // namespace ikbench
