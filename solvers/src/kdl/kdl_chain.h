// Conversion of an ikbench Model path into an Orocos KDL chain (private to
// ikbench_solvers and its tests).
#pragma once

#include <kdl/chain.hpp>
#include <kdl/frames.hpp>

#include <Eigen/Core>
#include <string>
#include <vector>

#include "ikbench/kinematics/model.h"

namespace ikbench::kdl {

struct KdlChain {
  KDL::Chain chain;
  // KDL joint k (in chain order) <-> ikbench joint, q index and tangent index.
  std::vector<int> joints, q_index, v_index;
};

KDL::Frame toKdl(const Pose3d& pose);
KDL::Rotation toKdl(const Eigen::Matrix3d& R);
Pose3d fromKdl(const KDL::Frame& frame);

// Builds the serial chain from the world to `body`, ending at the effector
// point `point` (body frame). ikbench's world_T_body[i] = world_T_body[parent]
// * parent_T_joint[i] * motion_i(q) becomes one KDL segment per moving joint,
// Segment(Joint(origin 0, axis, RotAxis | TransAxis), tip), whose tip is the
// product of the rest transforms up to the next moving joint (fixed joints
// fold into it), plus a leading fixed segment for the rest transforms before
// the first moving joint. Side branches off the path are irrelevant to the
// body and are left out. Returns false, with *why naming the joint, for ball
// or free joints on the path (KDL joints have one DOF) or a path without any
// moving joint.
bool buildKdlChain(const Model& model, int body, const Eigen::Vector3d& point, KdlChain* out, std::string* why);

}  // namespace ikbench::kdl
