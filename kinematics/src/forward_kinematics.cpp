// The double-precision FK every solver iteration runs. Same frames and same
// result as the templated forwardKinematics<double> (checked to 1e-15 by
// kinematics_test), written for speed:
//  * a revolute joint about a principal axis +-e_k (URDF arms, DH chains)
//    turns two columns of the frame instead of multiplying by a full 3x3
//    rotation: R Rot(e_k, t) has columns (c r_i + s r_j, c r_j - s r_i, r_k)
//    for (i, j, k) cyclic, 12 flops instead of 45 plus building Rot;
//  * a general axis multiplies by Rodrigues' Rot(a, t) built in place;
//  * products are Eigen fixed-size lazy products (no temporaries), sin and cos
//    come from one sincos.
#include <cmath>

#include "ikbench/kinematics/forward_kinematics.h"

namespace ikbench {

namespace {

// out = R * Rot(+-e_k, theta) for principal = +-(k + 1).
inline void rotatePrincipal(const Eigen::Matrix3d& R, int principal, double theta, Eigen::Matrix3d& out) {
  const int k = (principal > 0 ? principal : -principal) - 1;
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  double s = std::sin(theta);
  const double c = std::cos(theta);
  if (principal < 0) s = -s;  // Rot(-e_k, t) = Rot(e_k, -t)
  out.col(i) = c * R.col(i) + s * R.col(j);
  out.col(j) = c * R.col(j) - s * R.col(i);
  out.col(k) = R.col(k);
}

}  // namespace

void forwardKinematicsFast(const Model& model, const double* q, Pose3d* world_T_body, Eigen::Matrix3d* world_R_dof) {
  const int n = model.numJoints();
  for (int i = 0; i < n; ++i) {
    const int parent = model.parent(i);
    const Pose3d& rest = model.parentTJoint(i);
    // R, p: world_T_joint = world_T_parent * parent_T_joint.
    Eigen::Matrix3d R;
    Eigen::Vector3d p;
    if (parent < 0) {
      R = rest.R;
      p = rest.p;
    } else {
      const Pose3d& wp = world_T_body[parent];
      if (model.restRotationIsIdentity(i)) {
        R = wp.R;
      } else {
        R.noalias() = wp.R.lazyProduct(rest.R);
      }
      p.noalias() = wp.R * rest.p;
      p += wp.p;
    }
    if (world_R_dof != nullptr) world_R_dof[i] = R;
    const double* qi = q + model.idxQ(i);
    Pose3d& out = world_T_body[i];
    switch (model.type(i)) {
      case JointType::kRevolute:
        if (const int principal = model.principalAxis(i); principal != 0) {
          rotatePrincipal(R, principal, qi[0], out.R);
        } else {
          out.R.noalias() = R.lazyProduct(axisRotation<double>(model.axis(i), qi[0]));
        }
        out.p = p;
        break;
      case JointType::kPrismatic:
        out.R = R;
        out.p.noalias() = R * model.axis(i) * qi[0];
        out.p += p;
        break;
      case JointType::kBall:
        out.R.noalias() = R.lazyProduct(quaternionToRotation<double>(qi));
        out.p = p;
        break;
      case JointType::kFree: {
        const Eigen::Vector3d t(qi[0], qi[1], qi[2]);
        out.R.noalias() = R.lazyProduct(quaternionToRotation<double>(qi + 3));
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

}  // namespace ikbench
