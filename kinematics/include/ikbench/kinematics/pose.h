// Rigid transforms and SO(3) helpers used by the whole kinematics library.
//
// Frame convention: `a_T_b` maps coordinates in frame b to frame a, so
// world_T_tool * p_tool = p_world. Pose<S> stores it as a rotation matrix R
// and translation p (x_a = R x_b + p). It is templated on the scalar so the
// same forward kinematics runs on double and on ceres::Jet for autodiff.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>

namespace ikbench {

template <typename S>
using Vec3 = Eigen::Matrix<S, 3, 1>;
template <typename S>
using Mat3 = Eigen::Matrix<S, 3, 3>;

template <typename S>
struct Pose {
  Mat3<S> R = Mat3<S>::Identity();
  Vec3<S> p = Vec3<S>::Zero();

  static Pose Identity() { return Pose(); }
  Pose operator*(const Pose& o) const {
    Pose out;
    out.R.noalias() = R * o.R;
    out.p.noalias() = R * o.p;
    out.p += p;
    return out;
  }
  Vec3<S> act(const Vec3<S>& x) const { return R * x + p; }
  Pose inverse() const {
    Pose out;
    out.R = R.transpose();
    out.p = -(out.R * p);
    return out;
  }
  template <typename T>
  Pose<T> cast() const {
    Pose<T> out;
    out.R = R.template cast<T>();
    out.p = p.template cast<T>();
    return out;
  }
  Eigen::Isometry3d toIsometry() const {
    static_assert(std::is_same_v<S, double>);
    Eigen::Isometry3d iso = Eigen::Isometry3d::Identity();
    iso.linear() = R;
    iso.translation() = p;
    return iso;
  }
  static Pose fromIsometry(const Eigen::Isometry3d& iso) {
    Pose out;
    out.R = iso.linear().template cast<S>();
    out.p = iso.translation().template cast<S>();
    return out;
  }
};

using Pose3d = Pose<double>;

namespace so3 {

// Skew-symmetric matrix [w]x with [w]x v = w x v.
template <typename S>
Mat3<S> hat(const Vec3<S>& w) {
  Mat3<S> m;
  m << S(0), -w.z(), w.y(), w.z(), S(0), -w.x(), -w.y(), w.x(), S(0);
  return m;
}

// Rotation matrix of a rotation vector (Rodrigues' formula), exact near 0.
template <typename S>
Mat3<S> exp(const Vec3<S>& w) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const S theta2 = w.squaredNorm();
  const Mat3<S> K = hat(w);
  S a, b;  // R = I + a K + b K^2
  if (theta2 < S(1e-16)) {
    a = S(1) - theta2 / S(6);
    b = S(0.5) - theta2 / S(24);
  } else {
    const S theta = sqrt(theta2);
    a = sin(theta) / theta;
    b = (S(1) - cos(theta)) / theta2;
  }
  return Mat3<S>::Identity() + a * K + b * (K * K);
}

// Rotation vector of a rotation matrix, the principal log with angle in
// [0, pi]. Robust at angle 0 and at angle pi (where the axis is recovered from
// the symmetric part R + R^T = 2 cos(theta) I + 2 (1 - cos theta) a a^T).
// angle (optional) receives theta, the norm of the result, without a sqrt.
Eigen::Vector3d log(const Eigen::Matrix3d& R, double* angle = nullptr);

// Rotation angle of R in [0, pi], robust near 0 and pi.
double angle(const Eigen::Matrix3d& R);

// Inverse of the right Jacobian of SO(3): log(exp(e) exp(d)) ~= e + Jr^-1(e) d.
// Jr^-1(e) = I + 1/2 [e]x + (1/|e|^2 - (1 + cos|e|) / (2 |e| sin|e|)) [e]x^2
// (Chirikjian 2011, Stochastic Models, Information Theory, and Lie Groups, vol. 2, eq. 10.86).
Eigen::Matrix3d rightJacobianInverse(const Eigen::Vector3d& e);

// Unit quaternion <-> rotation vector, quaternion stored (x, y, z, w) as in
// Eigen::Quaterniond::coeffs(). expQuat(w) is the rotation by |w| about w/|w|.
Eigen::Quaterniond expQuat(const Eigen::Vector3d& w);
Eigen::Vector3d logQuat(const Eigen::Quaterniond& q);

}  // namespace so3

// Rotation matrix of a possibly non-unit quaternion (x, y, z, w); the result
// is the rotation of q / |q|. Templated for ceres::Jet.
template <typename S>
Mat3<S> quaternionToRotation(const S* xyzw) {
  const S x = xyzw[0], y = xyzw[1], z = xyzw[2], w = xyzw[3];
  const S n2 = x * x + y * y + z * z + w * w;
  const S s = S(2) / n2;
  Mat3<S> R;
  R(0, 0) = S(1) - s * (y * y + z * z);
  R(0, 1) = s * (x * y - z * w);
  R(0, 2) = s * (x * z + y * w);
  R(1, 0) = s * (x * y + z * w);
  R(1, 1) = S(1) - s * (x * x + z * z);
  R(1, 2) = s * (y * z - x * w);
  R(2, 0) = s * (x * z - y * w);
  R(2, 1) = s * (y * z + x * w);
  R(2, 2) = S(1) - s * (x * x + y * y);
  return R;
}

}  // namespace ikbench
