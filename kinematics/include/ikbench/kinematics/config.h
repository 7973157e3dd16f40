// Operations on configurations q (nq) and tangent vectors dq (nv); see the
// table in model.h for the layouts.
#pragma once

#include <Eigen/Core>

#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench {

// q_out (nq) = q (nq) "plus" dq (nv): angles and displacements add, rotations
// compose on the left, R <- exp(dq_w) R. q_out may alias q.
void integrate(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& dq,
               Eigen::VectorXd& q_out);
Eigen::VectorXd integrate(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& dq);

// dq (nv) with integrate(q0, dq) == q1: log(R1 R0^T) for rotations.
Eigen::VectorXd difference(const Model& model, const Eigen::VectorXd& q1, const Eigen::VectorXd& q0);

// Tangent-space "coordinates" of q (nv): angles, displacements, and the
// rotation vectors log(R) of ball / free joints. These are what the limits bound.
void tangentCoordinates(const Model& model, const Eigen::VectorXd& q, Eigen::VectorXd& coords);

// Re-normalises quaternions (nq). Returns false if one has (near) zero norm or
// q contains a non-finite value.
bool normalizeConfiguration(const Model& model, Eigen::VectorXd& q);

// Clamps q (nq) into the joint limits (rotation vectors of ball joints are
// clamped componentwise). Returns true if anything changed.
bool clampToLimits(const Model& model, Eigen::VectorXd& q);

// The angle a + 2 pi k inside [lo, hi] closest to a, if there is one;
// otherwise a unchanged (a revolute joint's motion is 2 pi periodic, so the
// shifted angle is the same configuration).
double wrapAngleIntoLimits(double a, double lo, double hi);
// Applies wrapAngleIntoLimits to every revolute joint of q (nq). Returns
// true if q is then within the limits (up to slack).
bool wrapIntoLimits(const Model& model, Eigen::VectorXd& q, double slack = 1e-9);

// Joint-space distance of two configurations: the Euclidean norm of the
// tangent difference q1 - q0 (rad for rotations, m for translations), with
// revolute angles compared modulo 2 pi when `modulo_2pi` is set.
double configurationDistance(const Model& model, const Eigen::VectorXd& q1, const Eigen::VectorXd& q0,
                             bool modulo_2pi = false);

// True when configurationDistance(model, a, b, modulo_2pi = true) <= tol,
// without allocating (and stopping as soon as the distance exceeds tol).
bool configurationsWithin(const Model& model, const Eigen::VectorXd& a, const Eigen::VectorXd& b, double tol);

// True if q (nq) is inside the limits, up to `slack` (absolute, rad or m).
bool withinLimits(const Model& model, const Eigen::VectorXd& q, double slack = 1e-9);

// Uniform random configuration within limits (nq). Infinite revolute limits
// draw from [-pi, pi], infinite prismatic/free translation from [-1, 1] m,
// ball joints with infinite limits a uniform random rotation.
Eigen::VectorXd randomConfiguration(const Model& model, Rng& rng);

// Checks q has size nq and only finite values; quaternions of unit norm within
// 1e-6. Writes a message naming the offending joint into *why.
bool isValidConfiguration(const Model& model, const Eigen::VectorXd& q, std::string* why);

}  // namespace ikbench
