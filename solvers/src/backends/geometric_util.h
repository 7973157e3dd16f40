// Private helpers shared by the geometric backends (ccd, fabrik, two-bone,
// planar-analytic): per-joint updates in world terms, single-joint limit
// clamping and the closed-form "best rotation" formulas they all use.
//
// Notation: a joint j has a world frame world_R_dof (the joint frame before
// its own motion, Data::world_R_dof) and a pivot (the body origin). A world
// rotation dR applied "at joint j" rotates everything downstream of j about
// the pivot; for a ball joint this is R_local <- R_dof^T dR R_dof R_local
// (because world_R_body = R_dof R_local).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/pose.h"
#include "ikbench/solvers/geometric_options.h"
#include "ikbench/solvers/registry.h"

namespace ikbench::geometric {

inline Eigen::Quaterniond quatAt(const Eigen::VectorXd& q, int i) {
  return Eigen::Quaterniond(q[i + 3], q[i], q[i + 1], q[i + 2]);  // (w, x, y, z)
}
inline void setQuat(Eigen::VectorXd& q, int i, const Eigen::Quaterniond& r) { q.segment<4>(i) = r.coeffs(); }

// Clamps the DOFs of joint j alone into its limits, with the semantics of
// clampToLimits (config.h): ball rotation vectors componentwise. No allocation.
void clampJoint(const Model& model, int j, Eigen::VectorXd& q);

// Motion of joint j at configuration q: joint_T_body.
Pose3d jointMotion(const Model& model, int j, const Eigen::VectorXd& q);

// vee of the antisymmetric part: h with tr([a]x H) = a . h.
inline Eigen::Vector3d antisymVee(const Eigen::Matrix3d& H) {
  return Eigen::Vector3d(H(1, 2) - H(2, 1), H(2, 0) - H(0, 2), H(0, 1) - H(1, 0));
}

// The hinge angle theta maximising tr(R(a, theta) H) (R = rotation about the
// unit world axis a). With R = cos I + sin [a]x + (1 - cos) a a^T:
//   tr(R H) = cos(theta) (tr H - a^T H a) + sin(theta) a.vee(H) + a^T H a,
// maximised at theta = atan2(a.vee(H), tr H - a^T H a). For H = u v^T this is
// the classic CCD hinge step: the angle between u and v projected onto the
// plane normal to a (Wang & Chen 1991).
inline double bestHingeAngle(const Eigen::Vector3d& a, const Eigen::Matrix3d& H) {
  const double c = H.trace() - a.dot(H * a);
  const double s = a.dot(antisymVee(H));
  if (std::abs(c) < kTinyDivisor && std::abs(s) < kTinyDivisor) return 0.0;
  return std::atan2(s, c);
}

// The hinge angle within [lo, hi] maximising the same objective, which is
// A cos(theta - theta*) + const with theta* = bestHingeAngle(a, H): theta* +
// 2 pi k if one such angle lies in [lo, hi], else the bound nearer to theta*
// modulo 2 pi (clamping theta* itself would pick the wrong bound when the
// short way round leaves the range). Infinite bounds are allowed.
double bestHingeAngleWithin(const Eigen::Vector3d& a, const Eigen::Matrix3d& H, double lo, double hi);

// The rotation R maximising tr(R H) over SO(3) (Wahba's problem; Markley
// 1988): H = U S V^T, R = V diag(1, 1, det(V U^T)) U^T. A tiny multiple of
// the identity is added to H so that rank-deficient cases (all vectors
// collinear) resolve toward the smallest rotation. Fixed-size SVD: no heap.
Eigen::Matrix3d bestRotation(const Eigen::Matrix3d& H);

// Minimal rotation taking direction u to direction v (identity if either is
// ~zero; a half-turn about an axis normal to u if they are opposite).
Eigen::Matrix3d minimalRotation(const Eigen::Vector3d& u, const Eigen::Vector3d& v);

// Scales the rotation dR down to at most max_angle [rad] (<= 0: no limit).
Eigen::Matrix3d limitAngle(const Eigen::Matrix3d& dR, double max_angle);

// Applies the world rotation dR at ball joint j (frame R_dof), clamps the
// joint into its limits and returns the world rotation actually applied.
// *step2 accumulates the squared tangent step.
Eigen::Matrix3d rotateBall(const Model& model, int j, const Eigen::Matrix3d& R_dof, const Eigen::Matrix3d& dR,
                           Eigen::VectorXd& q, double* step2, int quat_offset = 0);

// Adds delta to revolute/prismatic joint j, clamps, returns the change applied.
double addScalar(const Model& model, int j, double delta, Eigen::VectorXd& q, double* step2);

// Rotation limits of a ball joint (or of a free root's rotation) read as a
// swing-twist limit (Aristidou, Chrysanthou & Lasenby 2016, "Extending
// FABRIK with model constraints", CAVW 27(1): a joint's rotation is a twist
// about its bone followed by a swing of the bone). The model bounds the
// components of the rotation vector log(R); the twist axis is the
// coordinate axis e_k of the joint frame nearest to the joint's bone (the
// direction of its child link(s) at rest), so that [lo_k, hi_k] bounds the
// twist and the two other components bound the swing: Aristidou & Lasenby
// 2011 (Sec. 4.1) bound a swing by four angles (two per swing direction);
// here those are the box's bounds, and the allowed region between them is
// the rectangle they span in swing-vector coordinates (what the model
// checks), not the paper's ellipse, so nothing the model allows is excluded.
struct RotationLimits {
  Eigen::Vector3d lo = Eigen::Vector3d::Constant(-kInf), hi = Eigen::Vector3d::Constant(kInf);
  int twist_axis = 2;    // k: index of the twist axis e_k in the joint frame
  bool bounded = false;  // any finite bound
  static constexpr double kInf = std::numeric_limits<double>::infinity();
};
// The limits of the rotational DOFs of joint j (ball, or the rotation of a
// free root) whose bone is `bone` (joint frame; zero: twist axis e_z).
RotationLimits rotationLimits(const Model& model, int j, const Eigen::Vector3d& bone);
// Projects a local joint rotation L into the limits: L = S T with T the twist
// about e_k (angle 2 atan2(L_k, L_w)) and S the swing (rotation vector normal
// to e_k); the twist angle is clamped into [lo_k, hi_k], each swing
// component into its bounds, and the result S' T' is then clamped
// componentwise in rotation-vector coordinates (the model's box is the final
// authority; S' T' leaves it only through the cross term of the composition).
// No allocation.
Eigen::Quaterniond projectRotation(const Eigen::Quaterniond& L, const RotationLimits& lim);

// Registration records of each backend (defined in their own files).
SolverInfo ccdInfo();
SolverInfo fabrikInfo();
SolverInfo twoBoneInfo();
SolverInfo planarAnalyticInfo();

}  // namespace ikbench::geometric
