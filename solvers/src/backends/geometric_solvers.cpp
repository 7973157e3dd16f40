// Registration of the geometric backends and their shared helpers
// (geometric_util.h). The backends live in ccd_solver.cpp, fabrik_solver.cpp
// and analytic_solvers.cpp.
#include <algorithm>
#include <numbers>

#include "ikbench/core/numeric.h"
#include "geometric_util.h"
#include "ikbench/kinematics/config.h"
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

double bestHingeAngleWithin(const Eigen::Vector3d& a, const Eigen::Matrix3d& H, double lo, double hi) {
  const double best = bestHingeAngle(a, H);
  if (!std::isfinite(lo) && !std::isfinite(hi)) return best;
  const double inside = wrapAngleIntoLimits(best, lo, hi);  // best itself if inside
  if (inside >= lo && inside <= hi) return inside;
  // Distance modulo 2 pi from theta* to each bound: cos decreases with it.
  auto gap = [&](double x) { return std::abs(std::remainder(x - best, 2.0 * std::numbers::pi)); };
  return gap(lo) <= gap(hi) ? lo : hi;
}

Eigen::Matrix3d bestRotation(const Eigen::Matrix3d& H_in) {
  const double scale = H_in.norm();
  if (!(scale > kTinyDivisor)) return Eigen::Matrix3d::Identity();
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
  if (!(nu > kTinyDivisor) || !(nv > kTinyDivisor)) return Eigen::Matrix3d::Identity();
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

RotationLimits rotationLimits(const Model& model, int j, const Eigen::Vector3d& bone) {
  RotationLimits lim;
  const int iv = model.idxV(j) + (model.type(j) == JointType::kFree ? 3 : 0);
  for (int k = 0; k < 3; ++k) {
    lim.lo[k] = model.lowerLimits()[iv + k];
    lim.hi[k] = model.upperLimits()[iv + k];
    lim.bounded |= std::isfinite(lim.lo[k]) || std::isfinite(lim.hi[k]);
  }
  if (bone.squaredNorm() > 0.0) bone.cwiseAbs().maxCoeff(&lim.twist_axis);
  return lim;
}

Eigen::Quaterniond projectRotation(const Eigen::Quaterniond& L_in, const RotationLimits& lim) {
  if (!lim.bounded) return L_in;
  Eigen::Quaterniond L = L_in.normalized();
  if (L.w() < 0.0) L.coeffs() = -L.coeffs();
  const int k = lim.twist_axis;
  // Twist about e_k: the quaternion (w, L_k e_k) normalised, angle in [-pi, pi].
  const double twist = 2.0 * std::atan2(L.vec()[k], L.w());
  const Eigen::Quaterniond T(Eigen::AngleAxisd(twist, Eigen::Vector3d::Unit(k)));
  Eigen::Vector3d s = so3::logQuat(L * T.conjugate());  // swing: s_k = 0 up to rounding
  s[k] = 0.0;
  bool changed = false;
  for (int i = 0; i < 3; ++i) {
    if (i == k) continue;
    const double c = std::clamp(s[i], lim.lo[i], lim.hi[i]);
    changed |= c != s[i];
    s[i] = c;
  }
  const double t = std::clamp(twist, lim.lo[k], lim.hi[k]);
  changed |= t != twist;
  Eigen::Quaterniond out = changed ? so3::expQuat(s) * Eigen::Quaterniond(Eigen::AngleAxisd(t, Eigen::Vector3d::Unit(k))) : L;
  // The model's box on log(R) is the final authority.
  Eigen::Vector3d w = so3::logQuat(out);
  bool clamped = false;
  for (int i = 0; i < 3; ++i) {
    const double c = std::clamp(w[i], lim.lo[i], lim.hi[i]);
    clamped |= c != w[i];
    w[i] = c;
  }
  return clamped ? so3::expQuat(w) : out;
}

}  // namespace geometric

void registerGeometricSolvers(Registry& registry) {
  registry.add(geometric::ccdInfo());
  registry.add(geometric::fabrikInfo());
  registry.add(geometric::twoBoneInfo());
  registry.add(geometric::planarAnalyticInfo());
}

}  // namespace ikbench
