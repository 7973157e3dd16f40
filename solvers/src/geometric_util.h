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
#include <string>
#include <vector>

#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/pose.h"
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
  if (std::abs(c) < 1e-300 && std::abs(s) < 1e-300) return 0.0;
  return std::atan2(s, c);
}

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

// Registration records of each backend (defined in their own files).
SolverInfo ccdInfo();
SolverInfo fabrikInfo();
SolverInfo twoBoneInfo();
SolverInfo planarAnalyticInfo();

}  // namespace ikbench::geometric
