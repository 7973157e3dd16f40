// How good an answer is, beyond whether it converged (docs/protocols.md):
// the measures a reviewer of an IK method asks for, each a pure function of
// the model, the goals and the returned configurations, so that the results
// files alone recompute them (ikbench verify, python/ikbench/analysis/verify.py).
#pragma once

#include <Eigen/Core>
#include <vector>

#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"

namespace ikbench {

// Yoshikawa's manipulability (Yoshikawa 1985, "Manipulability of robotic
// mechanisms", IJRR 4(2)) on the goals' rows: w = sqrt(det(J J^T)) of the
// goals' geometric Jacobian at q, unweighted (weight 1, orientation rows in
// rad), which is the product of its singular values; for more rows than DOF
// (m > nv) the product of the nv singular values, sqrt(det(J^T J)). Zero at
// a singularity. `data` is a workspace of the model (overwritten).
double manipulability(const Model& model, const std::vector<Goal>& goals, const Eigen::VectorXd& q, Data& data);

// The smallest normalised distance to a joint limit: over the tangent
// coordinates (tangentCoordinates: angles, displacements, rotation vectors)
// whose two limits are finite, min(x - lower, upper - x) / (upper - lower).
// 0.5 at the middle of every range, 0 on a limit, negative outside; NaN when
// no coordinate has two finite limits.
double limitMargin(const Model& model, const Eigen::VectorXd& q);

// Motion between consecutive answers of a tracked path, by backward finite
// differences of the tangent difference d_k = q_k (-) q_{k-1} (difference():
// angles subtract as they are, no wrapping: the motion a joint would make).
// `history` holds q_k, q_{k-1}, ... (most recent first; at least two), `rate`
// the frames per second. jump: largest |d_k| component [rad or m];
// velocity = |d_k| rate; acceleration = |d_k - d_{k-1}| rate^2 (three
// answers); jerk = |d_k - 2 d_{k-1} + d_{k-2}| rate^3 (four). A figure that
// needs more answers than given, or a rate (<= 0), is NaN.
struct FrameMotion {
  double jump = 0.0, velocity = 0.0, acceleration = 0.0, jerk = 0.0;
};
FrameMotion frameMotion(const Model& model, const std::vector<const Eigen::VectorXd*>& history, double rate);

}  // namespace ikbench
