// Plain data shared by the batch driver (batch_solver.cpp) and the SIMD
// kernels (batch_kernel_*.cpp): no Eigen type crosses this boundary, so the
// kernels can be compiled for another instruction set than the rest of the
// program without sharing any inline code with it.
#pragma once

#include <cstdint>

namespace ikbench::batch {

inline constexpr int kWidth = 4;     // lanes per group (doubles per AVX2 register)
inline constexpr int kMaxDof = 16;   // longest chain the kernel takes

// A serial chain in the kernel's frames. Frame F_i is attached to the body
// that joint i moves, with z along joint i's axis and origin on it; F_-1 is
// fixed (the base). With the axis of joint i + 1 perpendicular to the x axis
// of F_i (x_i = z_i x z_{i+1}, any normal when they are parallel), the
// rotation between consecutive frames is Rx(alpha) Rz(phi + q): two column
// rotations of the frame, the hinge angle and a constant offset in one
// sin/cos (Denavit & Hartenberg's observation; Craig's modified convention
// for the order). The origins are not moved onto common normals: the pivot
// of joint i is a general vector t_i in F_{i-1}, which stays well
// conditioned for nearly parallel axes.
//   R_i = R_{i-1} Rx(alpha_i) Rz(phi_i + q_i)        (revolute)
//   R_i = R_{i-1} Rx(alpha_i) Rz(phi_i)              (prismatic)
//   p_i = p_{i-1} + R_{i-1} t_i  (+ q_i R_i e_z for a prismatic joint)
// The effector point is p_{n-1} + R_{n-1} tool_p; the goal body's rotation is
// R_{n-1} C, and C is folded into each problem's target rotation.
struct ChainJoint {
  double t[3];             // pivot in F_{i-1}
  double ca, sa;           // cos, sin of alpha_i
  double cphi, sphi;       // cos, sin of phi_i (prismatic)
  bool has_alpha;          // alpha_i != 0
  bool prismatic;
};

struct Chain {
  int n = 0;                   // DOF (joints on the path)
  double base_R[9], base_p[3]; // world_T_F-1, R row-major
  ChainJoint joint[kMaxDof];
  double tool_p[3];            // effector point in F_{n-1}
  // Per joint, contiguous so that the one-problem step loads four at once
  // (0 from n on): the limits of q_i, and phi_i for a hinge (0 for a slider,
  // whose constant rotation is joint[i].cphi, .sphi).
  alignas(32) double lo[kMaxDof] = {}, hi[kMaxDof] = {};
  alignas(32) double phi[kMaxDof] = {};
};

// What the kernel does per step (from the spec and SolverOptions).
struct KernelParams {
  const Chain* chain = nullptr;
  bool pose = true;            // 6 rows (position + orientation), else 3
  double w_pos = 1.0;          // goal weight on position rows
  double w_ori = 1.0;          // goal weight * orientation_scale on orientation rows
  bool adaptive = false;       // lambda^2 = lambda_min^2 + err_gain |e_act|^2, else lambda2
  double lambda2 = 0.0;
  double lambda_min2 = 0.0, err_gain = 0.0;
  double max_step = 0.0;       // 0 = no clamp
  bool freeze = false;         // limits=freeze (Baerlocher & Boulic), else clamp
  double tol_p = 1e-5, tol_o = 1e-5;
  int max_iterations = 500;
  int stall_iterations = 20;
  double stall_relative_improvement = 1e-4;
  double vanishing_step = 1e-14;
};

// Why a lane's attempt ended (LaneGroup::reason); 0 while it runs.
enum EndReason : std::int32_t {
  kRunning = 0,
  kConverged,            // within tolerance (at the start or after a step)
  kMaxIterations,
  kStallNoImprovement,   // stall_iterations without relative improvement
  kStallVanishingStep,   // |dq| < vanishing_step
  kNonFiniteError,       // errors or step not finite after a step
  kNonFiniteStart,       // errors not finite at the start configuration
  kNotPositiveDefinite,  // the damped normal matrix failed to factor
  kNonFiniteStep,        // dq not finite
  kNonFiniteConfig,      // q + dq not finite
  kTimeLimit,            // set by the driver
};

// Four problems (lanes), structure of arrays: x[k][l] is quantity k of lane l.
// The driver writes q (and the bookkeeping of a fresh attempt) and reads the
// results; the kernel advances every active lane by one iteration.
struct alignas(64) LaneGroup {
  // Lane flags (all bits set = true, as SIMD compare masks).
  std::int64_t active[kWidth];  // holds a problem
  std::int64_t fresh[kWidth];   // attempt just (re)started: evaluate, take no step
  // Problem data.
  double target_p[3][kWidth];   // world target position
  double target_R[9][kWidth];   // world_R_target C^T, row-major
  // Current iterate and its evaluation.
  double q[kMaxDof][kWidth];
  double r[6][kWidth];          // weighted residual (target - current)
  union {
    double J[kMaxDof][6][kWidth];  // weighted geometric Jacobian, column by column
    // The one-problem step (oneStep) keeps lane 0's Jacobian here instead:
    // column v's rows 0..3 in Jp[v][0..3], rows 4, 5 in Jp[v][4..5] and
    // zeros in Jp[v][6..7] (two 4-wide loads per column).
    double Jp[kMaxDof][8];
  };
  double pe[kWidth], oe[kWidth], wn[kWidth];  // position / orientation error, |r|
  double step[kWidth];          // |dq| of the last step
  double lambda2[kWidth];       // lambda^2 of the last step (its last freeze pass)
  // Solve-context bookkeeping (SolveContext::begin / endIteration).
  double iteration[kWidth];
  double best_norm[kWidth], best_iteration[kWidth];
  double lowest_norm[kWidth];   // lowest |r| of the attempt, at best_q
  double best_q[kMaxDof][kWidth];
  double best_pe[kWidth], best_oe[kWidth];
  std::int64_t reason[kWidth];  // EndReason of the lane's attempt
};
// Every member is an array of rows of kWidth 8-byte values, so a lane can be
// moved to another group row by row (the driver's lane compaction).
static_assert(sizeof(LaneGroup) % (8 * kWidth) == 0);
inline constexpr int kLaneGroupRows = static_cast<int>(sizeof(LaneGroup) / (8 * kWidth));

// One kernel step over num_groups groups: every active lane takes one
// iteration (a fresh lane only evaluates its start). Returns, per group, a
// 4-bit mask of the lanes whose attempt ended (reason set) in ended[g].
using StepFn = void (*)(const KernelParams& params, LaneGroup* groups, int num_groups, std::uint8_t* ended);

// The kernels: portable (SSE2, always there) and AVX2 + FMA (nullptr when the
// build cannot make it). Only call avx2Step() on a CPU with AVX2 and FMA.
StepFn portableStep();
StepFn avx2Step();

// The one-problem step: one problem in lane 0 of one group (the other lanes
// idle), packed within the problem instead of across problems: the frame's
// columns, the Jacobian's columns and the normal matrix's columns are
// vectors, four hinges share one sin/cos. Every lane-0 value it computes is
// bitwise what step() computes for that lane (same operations in the same
// order, element by element); it keeps lane 0's Jacobian in LaneGroup::Jp,
// so a group is stepped by one of the two kinds of step only.
StepFn portableOneStep();
StepFn avx2OneStep();

// The goal errors of every lane of num_groups groups at their q (g.pe, g.oe,
// g.r, g.wn; the lanes' other fields untouched): the step's evaluation
// without the Jacobian, the step or the bookkeeping. For checking given
// configurations (LaneFk).
using ErrorsFn = void (*)(const KernelParams& params, LaneGroup* groups, int num_groups);
ErrorsFn portableErrors();
ErrorsFn avx2Errors();

}  // namespace ikbench::batch
