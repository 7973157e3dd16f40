#include "ikbench/kinematics/data.h"

namespace ikbench {

Data::Data(const Model& model)
    : world_T_body(model.numJoints()), world_R_dof(model.numJoints(), Eigen::Matrix3d::Identity()),
      subtree_moment(model.numJoints(), Eigen::Vector3d::Zero()) {}

void Data::resizeGoals(int num_goals, int rows) {
  if (residual.size() != rows) residual.resize(rows);
  if (J.rows() != rows) J.resize(rows, J.cols());
  if (static_cast<int>(goal_position_error.size()) != num_goals) {
    goal_position_error.assign(num_goals, 0.0);
    goal_orientation_error.assign(num_goals, 0.0);
  }
}

}  // namespace ikbench
