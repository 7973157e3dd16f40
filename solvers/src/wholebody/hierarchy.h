// One step dq of a strict task hierarchy: the levels of a whole-body problem
// (goals grouped by priority, kinematics/goal.h goalRows) linearised about the
// current configuration, solved so that no lower level can change what a
// higher one achieves.
//
// Notation: n unknowns (the tangent step dq, nv), level k has equality rows
// A_k dq = b_k (least squares) and inequality rows C_k dq <= upper_k. The
// joint-limit box dq_lower <= dq <= dq_upper sits above every level. The
// residual of level k at dq is
//   rho_k = sqrt(|A_k dq - b_k|^2 + |max(0, C_k dq - upper_k)|^2),
// the quantity the level minimises (its equality error and the slacks of its
// inequalities).
//
// Two methods:
//  * projectHierarchy: the recursive null-space projection of Siciliano &
//    Slotine 1991, "A general framework for managing multiple tasks in highly
//    redundant robotic systems", ICAR; cost per pass O(L n^3) for L levels
//    (one SVD of A_k P_{k-1} per level).
//  * solveHierarchy: hierarchical least squares with inequalities (Kanoun,
//    Lamiraux & Wieber 2011, "Kinematic control of redundant manipulators:
//    generalizing the task-priority framework to inequality task", IEEE T-RO
//    27(4); Escande, Mansard & Wieber 2014, "Hierarchical quadratic
//    programming", IJRR 33(7)), one primal active-set QP per level.
#pragma once

#include <Eigen/Core>
#include <vector>

namespace ikbench::wholebody {

// One priority level of a step dq. A level without rows of a kind leaves that
// pair empty (0 rows; the columns may be 0 or n).
struct TaskLevel {
  Eigen::MatrixXd A;  // equalities: A dq = b, in the least-squares sense
  Eigen::VectorXd b;
  Eigen::MatrixXd C;  // inequalities: C dq <= upper
  Eigen::VectorXd upper;
};

struct HierarchyOptions {
  // Damping lambda of each level's least squares (same units as the rows):
  // the level minimises |A_k dq - b_k|^2 + lambda^2 |motion in its free
  // subspace|^2, which bounds the step near a singularity of A_k P_{k-1}
  // (Nakamura & Hanafusa 1986). It never lets a lower level disturb a higher
  // one: priority is kept on what each level achieved.
  double damping = 1e-3;
  // Bound on active-set changes: passes of projectHierarchy, QP iterations
  // per level of solveHierarchy.
  int max_active_set_iterations = 100;
};

struct HierarchyStep {
  Eigen::VectorXd dq;                  // n
  std::vector<double> level_residual;  // rho_k at dq, one per level
  int iterations = 0;                  // active-set passes / QP iterations, all levels
  // What each level added to dq (they sum to dq; level 0's includes the
  // box's share). Level k's part changes no equality row of a level above,
  // so a caller may shorten the lower levels' parts first (a step clamp that
  // keeps the priorities).
  std::vector<Eigen::VectorXd> level_dq;
};

// The recursive null-space projection (Siciliano & Slotine 1991, eq. 19-20):
//   dq_k = dq_{k-1} + (A_k P_{k-1})^# (b_k - A_k dq_{k-1}),
//   P_k  = P_{k-1} - (A_k P_{k-1})^+ (A_k P_{k-1}),
// with the damped inverse M^# = M^T (M M^T + lambda^2 I)^-1 for the step and
// the exact (rank-revealing SVD) pseudo-inverse M^+ for the projector, so
// that P_k is an orthogonal projector and a lower level's motion leaves every
// higher level's rows unchanged (a damped projector would leak).
// Inequality rows: a row is taken as an equality C_i dq = upper_i at its own
// level while it is violated, first at dq = 0 and then by the step of each
// pass; once active it stays active for the step (rows are never released, so
// the number of passes is bounded by the number of rows).
// Joint limits: the box is the top level by saturation (the clamping loop of
// Baerlocher & Boulic 2004): a DOF whose step leaves the box is fixed on the
// bound it crossed, removed from P_{-1}, and the hierarchy re-solved.
// Throws std::invalid_argument for sizes that do not agree, non-finite input,
// dq_lower > dq_upper or bad options.
HierarchyStep projectHierarchy(const std::vector<TaskLevel>& levels, const Eigen::VectorXd& dq_lower,
                               const Eigen::VectorXd& dq_upper, const HierarchyOptions& options);

// The hierarchical QP. The box is level -1 (always feasible: dq = clamp(0)
// satisfies it). Level k solves
//   min_{z, w} 1/2 |A_k (x_{k-1} + Z_{k-1} z) - b_k|^2 + 1/2 lambda^2 |z|^2 + 1/2 |w|^2
//   s.t. C_k (x_{k-1} + Z_{k-1} z) - w <= upper_k,
//        G (x_{k-1} + Z_{k-1} z) <= h            (box and levels above),
// where Z_{k-1} is an orthonormal basis of the null space of A_0..A_{k-1}
// (so every level above keeps its equality rows' values) and G, h are the
// box and the inequality rows of the levels above with their optimal slacks,
// C_j dq <= upper_j + w_j* (Kanoun et al. 2011, eq. 14: a lower level may
// reduce a higher level's violation but never increase it). Each level is a
// strictly convex QP solved by the primal active-set method (Nocedal &
// Wright 2006, Algorithm 16.3) from the feasible point (0, max(0, C x - u));
// each iteration solves the KKT system of the working set by LU, O((n_z +
// p_k + |W|)^3) with n_z = dim Z_{k-1}, p_k the level's inequality rows and
// |W| the working set; the null-space basis costs one SVD, O(m n^2), per level.
// Throws std::invalid_argument like projectHierarchy.
HierarchyStep solveHierarchy(const std::vector<TaskLevel>& levels, const Eigen::VectorXd& dq_lower,
                             const Eigen::VectorXd& dq_upper, const HierarchyOptions& options);

// rho_k of one level at dq (see the head of this file).
double levelResidual(const TaskLevel& level, const Eigen::VectorXd& dq);

}  // namespace ikbench::wholebody
