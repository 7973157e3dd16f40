// Registration of the geometric backends and their shared helpers
// (geometric_util.h). The backends live in ccd_solver.cpp, fabrik_solver.cpp
// and analytic_solvers.cpp.
#include <algorithm>

#include "geometric_util.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/solvers/registry.h"

namespace ikbench {
namespace geometric {

void clampJoint(const Model& model, int j, Eigen::VectorXd& q) {
  const Eigen::VectorXd& lo = model.lowerLimits();
  const Eigen::VectorXd& hi = model.upperLimits();
  const int iq = model.idxQ(j), iv = model.idxV(j);
  auto clampRot = [&](int qi, int vi) {
    bool bounded = false;
    for (int k = 0; k < 3; ++k) bounded |= std::isfinite(lo[vi + k]) || std::isfinite(hi[vi + k]);
    if (!bounded) return;
    Eigen::Vector3d w = so3::logQuat(quatAt(q, qi));
    bool changed = false;
    for (int k = 0; k < 3; ++k) {
      const double c = std::clamp(w[k], lo[vi + k], hi[vi + k]);
      changed |= c != w[k];
      w[k] = c;
    }
    if (changed) setQuat(q, qi, so3::expQuat(w));
  };
  switch (model.type(j)) {
    case JointType::kRevolute:
    case JointType::kPrismatic: q[iq] = std::clamp(q[iq], lo[iv], hi[iv]); break;
    case JointType::kBall: clampRot(iq, iv); break;
    case JointType::kFree:
      for (int k = 0; k < 3; ++k) q[iq + k] = std::clamp(q[iq + k], lo[iv + k], hi[iv + k]);
      clampRot(iq + 3, iv + 3);
      break;
    case JointType::kFixed: break;
  }
}

Pose3d jointMotion(const Model& model, int j, const Eigen::VectorXd& q) {
  Pose3d m;
  const int iq = model.idxQ(j);
  switch (model.type(j)) {
    case JointType::kRevolute: m.R = axisRotation<double>(model.axis(j), q[iq]); break;
    case JointType::kPrismatic: m.p = model.axis(j) * q[iq]; break;
    case JointType::kBall: m.R = quaternionToRotation<double>(q.data() + iq); break;
    case JointType::kFree:
      m.p = q.segment<3>(iq);
      m.R = quaternionToRotation<double>(q.data() + iq + 3);
      break;
    case JointType::kFixed: break;
  }
  return m;
}

Eigen::Matrix3d bestRotation(const Eigen::Matrix3d& H_in) {
  const double scale = H_in.norm();
  if (!(scale > 1e-300)) return Eigen::Matrix3d::Identity();
  const Eigen::Matrix3d H = H_in + (1e-9 * scale) * Eigen::Matrix3d::Identity();
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(H, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Eigen::Matrix3d& U = svd.matrixU();
  const Eigen::Matrix3d& V = svd.matrixV();
  Eigen::Matrix3d D = Eigen::Matrix3d::Identity();
  D(2, 2) = (V * U.transpose()).determinant() < 0 ? -1.0 : 1.0;
  return V * D * U.transpose();
}

Eigen::Matrix3d minimalRotation(const Eigen::Vector3d& u, const Eigen::Vector3d& v) {
  const double nu = u.norm(), nv = v.norm();
  if (!(nu > 1e-300) || !(nv > 1e-300)) return Eigen::Matrix3d::Identity();
  // Eigen's FromTwoVectors handles the antiparallel case with an SVD of a
  // fixed 2x3 matrix (no heap).
  return Eigen::Quaterniond::FromTwoVectors(u / nu, v / nv).toRotationMatrix();
}

Eigen::Matrix3d limitAngle(const Eigen::Matrix3d& dR, double max_angle) {
  if (max_angle <= 0.0) return dR;
  const Eigen::Vector3d w = so3::log(dR);
  const double a = w.norm();
  if (a <= max_angle) return dR;
  return so3::exp<double>(w * (max_angle / a));
}

Eigen::Matrix3d rotateBall(const Model& model, int j, const Eigen::Matrix3d& R_dof, const Eigen::Matrix3d& dR,
                           Eigen::VectorXd& q, double* step2, int quat_offset) {
  const int iq = model.idxQ(j) + quat_offset;
  const Eigen::Quaterniond old_local = quatAt(q, iq).normalized();
  const Eigen::Matrix3d local_dR = R_dof.transpose() * dR * R_dof;
  Eigen::Quaterniond next = Eigen::Quaterniond(local_dR) * old_local;
  next.normalize();
  setQuat(q, iq, next);
  clampJoint(model, j, q);
  const Eigen::Quaterniond applied_local = quatAt(q, iq) * old_local.conjugate();
  const Eigen::Vector3d w = so3::logQuat(applied_local);
  if (step2) *step2 += w.squaredNorm();
  return R_dof * applied_local.toRotationMatrix() * R_dof.transpose();
}

double addScalar(const Model& model, int j, double delta, Eigen::VectorXd& q, double* step2) {
  const int iq = model.idxQ(j);
  const double old = q[iq];
  q[iq] = old + delta;
  clampJoint(model, j, q);
  const double applied = q[iq] - old;
  if (step2) *step2 += applied * applied;
  return applied;
}

}  // namespace geometric

void registerGeometricSolvers(Registry& registry) {
  registry.add(geometric::ccdInfo());
  registry.add(geometric::fabrikInfo());
  registry.add(geometric::twoBoneInfo());
  registry.add(geometric::planarAnalyticInfo());
}

}  // namespace ikbench
