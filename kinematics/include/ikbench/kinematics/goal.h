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

enum class GoalKind { kPosition, kOrientation, kPose };
inline constexpr EnumTable<GoalKind, 3> kGoalKindNames{{{
                                                           {GoalKind::kPosition, "position"},
                                                           {GoalKind::kOrientation, "orientation"},
                                                           {GoalKind::kPose, "pose"},
                                                       }},
                                                       "goal kind"};
inline std::string_view toString(GoalKind k) { return kGoalKindNames.name(k); }
inline int goalRows(GoalKind k) { return k == GoalKind::kPose ? 6 : 3; }
inline bool hasPosition(GoalKind k) { return k != GoalKind::kOrientation; }
inline bool hasOrientation(GoalKind k) { return k != GoalKind::kPosition; }

struct Goal {
  int body = -1;                                  // body index in the model
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // effector point, body frame
  GoalKind kind = GoalKind::kPosition;
  Eigen::Vector3d target_position = Eigen::Vector3d::Zero();            // world
  Eigen::Matrix3d target_orientation = Eigen::Matrix3d::Identity();     // world_R_target
  double weight = 1.0;             // multiplies the goal's residual rows (> 0)
  double orientation_scale = 1.0;  // [m/rad], multiplies orientation rows (> 0)
};

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

// World position and orientation of a goal's effector point under data's FK.
Eigen::Vector3d effectorPosition(const Goal& goal, const Data& data);

}  // namespace ikbench
