// Forward kinematics, templated on the scalar type so that Ceres can run the
// very same code with ceres::Jet for automatic differentiation.
#pragma once

#include <cmath>
#include <vector>

#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/pose.h"

namespace ikbench {

// Rotation about a unit axis by theta (Rodrigues):
// R = cos(t) I + sin(t) [a]x + (1 - cos(t)) a a^T.
template <typename S>
Mat3<S> axisRotation(const Eigen::Vector3d& a, const S& theta) {
  using std::cos;
  using std::sin;
  const S c = cos(theta), s = sin(theta);
  const S t = S(1) - c;
  Mat3<S> R;
  const double x = a.x(), y = a.y(), z = a.z();
  R(0, 0) = c + t * (x * x);
  R(0, 1) = t * (x * y) - s * z;
  R(0, 2) = t * (x * z) + s * y;
  R(1, 0) = t * (x * y) + s * z;
  R(1, 1) = c + t * (y * y);
  R(1, 2) = t * (y * z) - s * x;
  R(2, 0) = t * (x * z) - s * y;
  R(2, 1) = t * (y * z) + s * x;
  R(2, 2) = c + t * (z * z);
  return R;
}

// Computes world_T_body for every body from q (nq values, any scalar).
// world_R_dof (optional, may be null) receives the rotation of the frame in
// which each joint's tangent DOFs act (the joint frame before its motion).
template <typename S>
void forwardKinematics(const Model& model, const S* q, Pose<S>* world_T_body,
                       Mat3<S>* world_R_dof = nullptr) {
  const int n = model.numJoints();
  for (int i = 0; i < n; ++i) {
    const int parent = model.parent(i);
    const Pose3d& rest = model.parentTJoint(i);
    // world_T_joint = world_T_parent * parent_T_joint (rest transform).
    Mat3<S> R;
    Vec3<S> p;
    if (parent < 0) {
      R = rest.R.template cast<S>();
      p = rest.p.template cast<S>();
    } else {
      const Pose<S>& wp = world_T_body[parent];
      if (model.restRotationIsIdentity(i)) {
        R = wp.R;
      } else {
        R.noalias() = wp.R * rest.R.template cast<S>();
      }
      p.noalias() = wp.R * rest.p.template cast<S>();
      p += wp.p;
    }
    if (world_R_dof != nullptr) world_R_dof[i] = R;
    const S* qi = q + model.idxQ(i);
    Pose<S>& out = world_T_body[i];
    switch (model.type(i)) {
      case JointType::kRevolute:
        out.R.noalias() = R * axisRotation<S>(model.axis(i), qi[0]);
        out.p = p;
        break;
      case JointType::kPrismatic:
        out.R = R;
        out.p.noalias() = R * (model.axis(i).template cast<S>() * qi[0]);
        out.p += p;
        break;
      case JointType::kBall:
        out.R.noalias() = R * quaternionToRotation<S>(qi);
        out.p = p;
        break;
      case JointType::kFree: {
        const Vec3<S> t(qi[0], qi[1], qi[2]);
        out.R.noalias() = R * quaternionToRotation<S>(qi + 3);
        out.p.noalias() = R * t;
        out.p += p;
        break;
      }
      case JointType::kFixed:
        out.R = R;
        out.p = p;
        break;
    }
  }
}

template <typename S>
std::vector<Pose<S>> forwardKinematics(const Model& model, const S* q) {
  std::vector<Pose<S>> out(model.numJoints());
  forwardKinematics<S>(model, q, out.data());
  return out;
}

// forwardKinematics<double> written for speed (forward_kinematics.cpp): the
// same frames to rounding, what every solver iteration runs.
void forwardKinematicsFast(const Model& model, const double* q, Pose3d* world_T_body,
                           Eigen::Matrix3d* world_R_dof = nullptr);

// The double hot path: fills data.world_T_body and data.world_R_dof.
inline void forwardKinematics(const Model& model, const Eigen::VectorXd& q, Data& data) {
  forwardKinematicsFast(model, q.data(), data.world_T_body.data(), data.world_R_dof.data());
}

}  // namespace ikbench
