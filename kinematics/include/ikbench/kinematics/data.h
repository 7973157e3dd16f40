// Preallocated workspace for one Model (Pinocchio's Model/Data split).
// Everything a solve touches lives here, sized once, so nothing allocates
// inside a solver's iteration loop. Not thread-safe: one Data per thread.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/pose.h"

namespace ikbench {

struct Data {
  explicit Data(const Model& model);

  // Filled by forwardKinematics():
  std::vector<Pose3d> world_T_body;          // per body, after the joint motion
  std::vector<Eigen::Matrix3d> world_R_dof;  // rotation of the frame the joint's
                                             // tangent DOFs are expressed in

  // Filled by evaluateGoals() / goalJacobian() for a goal set with m rows:
  Eigen::VectorXd residual;  // m, weighted: target minus current
  Eigen::MatrixXd J;         // m x nv, weighted: d(current)/d(dq)
  // Per goal, unweighted: position error [m] and orientation error [rad]
  // (0 where the goal kind has none).
  std::vector<double> goal_position_error, goal_orientation_error;
  // Scratch for centre-of-mass goals: per body, the first mass moment of its
  // subtree, sum of m_i * world centre of mass_i [kg m].
  std::vector<Eigen::Vector3d> subtree_moment;

  // Resizes the goal buffers (allocates only when the row count changes).
  void resizeGoals(int num_goals, int rows);
};

}  // namespace ikbench
