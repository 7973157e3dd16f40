// Forward kinematics, templated on the scalar type so that Ceres can run the
// very same code with ceres::Jet for automatic differentiation.
#pragma once

#include <cmath>
#include <vector>

#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/pose.h"
#include "ikbench/kinematics/sincos.h"

namespace ikbench {

// Rotation about a unit axis by theta (Rodrigues):
// R = cos(t) I + sin(t) [a]x + (1 - cos(t)) a a^T.
template <typename S>
Mat3<S> axisRotation(const Eigen::Vector3d& a, const S& c, const S& s) {
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
template <typename S>
Mat3<S> axisRotation(const Eigen::Vector3d& a, const S& theta) {
  using std::cos;
  using std::sin;
  return axisRotation<S>(a, S(cos(theta)), S(sin(theta)));
}

// out = R * Rot(+-e_k, theta) for principal = +-(k + 1) (Model::principalAxis):
// a hinge about a principal axis turns two columns of the frame,
// (c r_i + s r_j, c r_j - s r_i, r_k) for (i, j, k) cyclic - 12 flops instead
// of building Rot and a 45-flop product. Every URDF arm and DH chain has such
// axes.
template <typename S>
void rotatePrincipal(const Mat3<S>& R, int principal, const S& c, const S& sin_theta, Mat3<S>& out) {
  const int k = (principal > 0 ? principal : -principal) - 1;
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  const S s = principal > 0 ? sin_theta : S(-sin_theta);  // Rot(-e_k, t) = Rot(e_k, -t)
  out.col(i) = c * R.col(i) + s * R.col(j);
  out.col(j) = c * R.col(j) - s * R.col(i);
  out.col(k) = R.col(k);
}

// Computes world_T_body for every body from q (nq values, any scalar).
// world_R_dof (optional, may be null) receives the rotation of the frame in
// which each joint's tangent DOFs act (the joint frame before its motion).
template <typename S>
void forwardKinematics(const Model& model, const S* q, Pose<S>* world_T_body,
                       Mat3<S>* world_R_dof = nullptr) {
  const int n = model.numJoints();
  for (int i = 0; i < n; ++i) {
    const S* qi = q + model.idxQ(i);
    // A hinge's sin and cos first, before its frame arithmetic: no frame
    // value is live across the sin/cos evaluation, so none is spilled around
    // it (which an out-of-line libm call would force). For double they are
    // inline (sincos.h, no call at all). bench_kinematics
    // ForwardKinematics/dof:7/joint:revolute and bench_solvers PerIteration
    // measure it.
    S c(1), s(0);
    if (model.type(i) == JointType::kRevolute) sinCos(qi[0], s, c);
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
    Pose<S>& out = world_T_body[i];
    switch (model.type(i)) {
      case JointType::kRevolute:
        if (const int principal = model.principalAxis(i); principal != 0) {
          rotatePrincipal<S>(R, principal, c, s, out.R);
        } else {
          out.R.noalias() = R * axisRotation<S>(model.axis(i), c, s);
        }
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

// The double hot path: fills data.world_T_body and data.world_R_dof.
inline void forwardKinematics(const Model& model, const Eigen::VectorXd& q, Data& data) {
  forwardKinematics<double>(model, q.data(), data.world_T_body.data(), data.world_R_dof.data());
}

}  // namespace ikbench
