#include "ikbench/kinematics/pose.h"

#include <algorithm>
#include <cmath>

#include "ikbench/core/numeric.h"

namespace ikbench::so3 {

double angle(const Eigen::Matrix3d& R) {
  // atan2(|sin|, cos) is accurate at both ends, unlike acos((tr - 1) / 2).
  const double c = 0.5 * (R.trace() - 1.0);
  const Eigen::Vector3d v(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));
  const double s = 0.5 * v.norm();
  return std::atan2(s, c);
}

Eigen::Vector3d log(const Eigen::Matrix3d& R, double* angle) {
  const Eigen::Vector3d v(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));
  const double c = std::clamp(0.5 * (R.trace() - 1.0), -1.0, 1.0);
  const double s = 0.5 * v.norm();  // sin(theta) >= 0
  const double theta = std::atan2(s, c);
  if (angle != nullptr) *angle = theta;
  if (theta < 1e-5) {
    // theta / (2 sin theta) = 1/2 + theta^2 / 12 + O(theta^4)
    return (0.5 + theta * theta / 12.0) * v;
  }
  if (c > -0.99) return (theta / (2.0 * s)) * v;
  // Near pi: sin(theta) is tiny and v carries no reliable axis. Use
  // R + R^T = 2 c I + 2 (1 - c) a a^T, take the column with the largest
  // diagonal for accuracy, and fix the sign with v.
  const Eigen::Matrix3d B = (0.5 * (R + R.transpose()) - c * Eigen::Matrix3d::Identity()) / (1.0 - c);
  int k = 0;
  B.diagonal().maxCoeff(&k);
  Eigen::Vector3d a = B.col(k) / std::sqrt(std::max(B(k, k), kTinyDivisor));
  a.normalize();
  if (a.dot(v) < 0.0) a = -a;
  return theta * a;
}

Eigen::Matrix3d rightJacobianInverse(const Eigen::Vector3d& e) {
  const double theta2 = e.squaredNorm();
  const Eigen::Matrix3d K = hat<double>(e);
  double coeff;
  if (theta2 < 1e-10) {
    coeff = 1.0 / 12.0 + theta2 / 720.0;
  } else {
    const double theta = std::sqrt(theta2);
    coeff = 1.0 / theta2 - (1.0 + std::cos(theta)) / (2.0 * theta * std::sin(theta));
  }
  return Eigen::Matrix3d::Identity() + 0.5 * K + coeff * (K * K);
}

Eigen::Quaterniond expQuat(const Eigen::Vector3d& w) {
  const double theta = w.norm();
  const double half = 0.5 * theta;
  // sin(theta/2)/theta = 1/2 - theta^2/48 + ...
  const double k = theta < 1e-8 ? 0.5 - theta * theta / 48.0 : std::sin(half) / theta;
  return Eigen::Quaterniond(std::cos(half), k * w.x(), k * w.y(), k * w.z());
}

Eigen::Vector3d logQuat(const Eigen::Quaterniond& q_in) {
  Eigen::Quaterniond q = q_in.normalized();
  if (q.w() < 0.0) q.coeffs() = -q.coeffs();  // shortest rotation, angle <= pi
  const Eigen::Vector3d v = q.vec();
  const double s = v.norm();
  if (s < 1e-8) return (2.0 / q.w()) * v;  // 2 atan2(s, w) / s -> 2 / w
  return (2.0 * std::atan2(s, q.w()) / s) * v;
}

}  // namespace ikbench::so3
