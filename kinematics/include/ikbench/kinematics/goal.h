// Goals and problems, with their residuals and Jacobians.
//
// Residual convention: for each goal, rows are (target - current), scaled by
// the goal's weight: position rows [m] first, then orientation rows, whose
// error is the rotation vector log(R_target R_current^T) [rad] expressed in
// the world frame and additionally scaled by `orientation_scale` [m/rad] so
// that both row kinds have units of metres. The Jacobian J = d(current)/d(dq)
// is scaled the same way, so a Gauss-Newton step is dq = J^+ residual.
// Success is always judged on unweighted errors: the Euclidean position error
// of each goal [m] and the rotation angle of each orientation error [rad].
//
// Whole-body goals (docs/wholebody.md):
// * kCentreOfMass: the mass-weighted centre of mass of the subtree rooted at
//   `body` (the root body: the whole model), sum m_i c_i / M; 3 position rows
//   like kPosition, Jacobian sum m_i J_i(c_i) / M. `point` is unused.
// * `priority`: 0 is the highest level. Weighted solvers ignore it (they
//   minimise the weighted sum of all goals); hierarchical solvers satisfy
//   level k as well as they can without disturbing levels < k
//   (Siciliano & Slotine 1991; Kanoun, Lamiraux & Wieber 2011).
// * `bound`: an inequality on a position-type goal (kPosition, kCentreOfMass)
//   instead of a target: half-spaces n_i . p <= d_i, or p inside / outside a
//   ball. Its residual has one row per half-space (one for a ball),
//   r_i = min(0, d_i - n_i . p): zero, with a zero Jacobian row, while the
//   bound holds, so every least-squares backend treats it as a soft
//   constraint. Its unweighted error is the largest violation [m].
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <memory>
#include <string>
#include <vector>

#include "ikbench/core/enum_table.h"
#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/model.h"

namespace ikbench {

enum class GoalKind { kPosition, kOrientation, kPose, kCentreOfMass };
inline constexpr EnumTable<GoalKind, 4> kGoalKindNames{{{
                                                           {GoalKind::kPosition, "position"},
                                                           {GoalKind::kOrientation, "orientation"},
                                                           {GoalKind::kPose, "pose"},
                                                           {GoalKind::kCentreOfMass, "com"},
                                                       }},
                                                       "goal kind"};
inline std::string_view toString(GoalKind k) { return kGoalKindNames.name(k); }
// Rows of an unbounded goal of this kind (see residualRows(Goal) for any goal).
inline int goalRows(GoalKind k) { return k == GoalKind::kPose ? 6 : 3; }
inline bool hasPosition(GoalKind k) { return k != GoalKind::kOrientation; }
inline bool hasOrientation(GoalKind k) { return k == GoalKind::kOrientation || k == GoalKind::kPose; }

// An inequality on the position p of a position-type goal.
enum class BoundKind { kNone, kHalfSpaces, kInsideBall, kOutsideBall };
inline constexpr EnumTable<BoundKind, 4> kBoundKindNames{{{
                                                             {BoundKind::kNone, "none"},
                                                             {BoundKind::kHalfSpaces, "half_spaces"},
                                                             {BoundKind::kInsideBall, "inside_ball"},
                                                             {BoundKind::kOutsideBall, "outside_ball"},
                                                         }},
                                                         "bound kind"};
inline std::string_view toString(BoundKind k) { return kBoundKindNames.name(k); }

struct GoalBound {
  BoundKind kind = BoundKind::kNone;
  // kHalfSpaces: rows n_i . p <= d_i, unit normals n_i [world]. A plane is one
  // row, a box six, a support polygon its edges with horizontal normals.
  Eigen::Matrix<double, Eigen::Dynamic, 3> normals;
  Eigen::VectorXd offsets;  // d_i [m]
  // kInsideBall: |p - centre| <= radius; kOutsideBall: |p - centre| >= radius.
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  double radius = 0.0;  // [m]
  // Residual rows of the bound: one per half-space, one for a ball.
  int rows() const;
};

struct Goal {
  int body = -1;                                  // body index in the model
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // effector point, body frame
  GoalKind kind = GoalKind::kPosition;
  Eigen::Vector3d target_position = Eigen::Vector3d::Zero();            // world
  Eigen::Matrix3d target_orientation = Eigen::Matrix3d::Identity();     // world_R_target
  double weight = 1.0;             // multiplies the goal's residual rows (> 0)
  double orientation_scale = 1.0;  // [m/rad], multiplies orientation rows (> 0)
  int priority = 0;                // level; 0 is the highest (>= 0)
  GoalBound bound;                 // kNone: reach target_position
  bool bounded() const { return bound.kind != BoundKind::kNone; }
};

// Residual rows of one goal (its kind's rows, or its bound's rows).
inline int residualRows(const Goal& g) { return g.bounded() ? g.bound.rows() : goalRows(g.kind); }
// True for the goals every backend understands: an effector point reaching a
// target position/orientation/pose (no centre of mass, no bound).
inline bool isPointTarget(const Goal& g) { return g.kind != GoalKind::kCentreOfMass && !g.bounded(); }

class CollisionWorld;  // ikbench/collision/world.h

struct Problem {
  std::shared_ptr<const Model> model;
  std::vector<Goal> goals;
  Eigen::VectorXd q0;  // start configuration (nq)
  std::string name;    // for results files and messages
  // The scene the problem is posed in (obstacles and the robot's collision
  // geometry, for `model`), or null: no collision checking.
  std::shared_ptr<const CollisionWorld> collision;
  // Checks everything a solver relies on; writes the reason into *why.
  bool isValid(std::string* why) const;
  int rows() const;
  // The distinct goal priorities in ascending order (the levels, highest first).
  std::vector<int> levels() const;
  // True when some goal is not a point target or the goals span several levels:
  // the problem needs the generic (weighted or hierarchical) solvers, not the
  // chain kernel, batch path, closed forms or single-target geometric methods.
  bool isWholeBody() const;
  // Goal indices at one priority level, in order.
  std::vector<int> goalsAtLevel(int priority) const;
};

// Largest unweighted errors over all goals.
struct GoalErrors {
  double position = 0.0;     // max over goals of |target - current| [m]
  double orientation = 0.0;  // max over goals of the rotation angle [rad]
  double weighted_norm = 0.0;  // |residual| (weighted), the quantity solvers minimise
  bool finite() const;
};

// Rows of all goals stacked, in order.
int totalRows(const std::vector<Goal>& goals);

// Errors of each level of problem.levels(), in that order: the maxima over
// the level's goals (weighted_norm: the norm of the level's residual rows).
// Requires forwardKinematics(model, q, data); overwrites data's goal buffers.
std::vector<GoalErrors> levelErrors(const Model& model, const Problem& problem, Data& data);

// Requires forwardKinematics(model, q, data). Fills data.residual and the
// per-goal errors; returns the maxima. Resizes data's goal buffers if needed.
GoalErrors evaluateGoals(const Model& model, const std::vector<Goal>& goals, Data& data);

enum class JacobianMode {
  // The geometric Jacobian: hinge column = (axis x (effector - pivot); axis),
  // slider = (axis; 0), ball/free rotation = three hinge columns about the
  // joint frame's axes. The orientation rows are angular velocity, the
  // classic choice of the Jacobian-family IK methods (Buss 2004).
  kGeometric,
  // The exact derivative of the stacked residual: orientation rows multiplied
  // by Jr^-1(e) (the right-Jacobian inverse of SO(3) at the current error e),
  // because d/dt log(exp(e) exp(-w dt)) = -Jr^-1(e) w. Equal to kGeometric at
  // zero error; what a finite-difference check of the residual (or Ceres'
  // gradient checker) sees. Requires evaluateGoals() first.
  kExactResidual,
};

// Requires forwardKinematics(); fills data.J (m x nv, weighted like the residual).
void goalJacobian(const Model& model, const std::vector<Goal>& goals, Data& data,
                  JacobianMode mode = JacobianMode::kGeometric);

// World position of a goal's effector point under data's FK (the body point;
// see goalPosition for any goal kind).
Eigen::Vector3d effectorPosition(const Goal& goal, const Data& data);
// The position a goal's position rows or bound act on: the effector point, or
// for kCentreOfMass the subtree's centre of mass. Requires forwardKinematics().
Eigen::Vector3d goalPosition(const Model& model, const Goal& goal, const Data& data);
// The centre of mass [world] of the subtree rooted at `body` under data's FK;
// NaN when the subtree has no mass. Requires forwardKinematics().
Eigen::Vector3d centreOfMass(const Model& model, const Data& data, int body = 0);

// Rows of one goal for a hierarchy: equality rows (J dq = r) or inequality rows (C dq <= u).
// Equality goals fill J (geometric Jacobian) and r (target - current) like
// goalJacobian/evaluateGoals' rows for the goal, without `weight` (orientation
// rows keep orientation_scale); C and upper are empty (0 rows, nv columns).
// Bounded goals fill C = n_i^T J_p and upper = d_i - n_i . p for half-spaces;
// for balls the linearisation of |p - c| about the current point
// (inside: u^T J_p dq <= r - |p - c|; outside: -u^T J_p dq <= |p - c| - r,
// u = (p - c)/|p - c|); J and r are empty. Requires forwardKinematics().
struct GoalRows { Eigen::MatrixXd J; Eigen::VectorXd r; Eigen::MatrixXd C; Eigen::VectorXd upper; };
GoalRows goalRows(const Model&, const Goal&, const Data&);

}  // namespace ikbench
