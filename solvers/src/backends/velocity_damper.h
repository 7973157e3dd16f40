// Collision avoidance inside a Jacobian step: the velocity damper of Faverjon
// & Tournassoud 1987 ("A local based approach for path planning of
// manipulators with a high number of degrees of freedom", ICRA), in the form
// of Kanoun, Lamiraux & Wieber 2011 (IEEE T-RO 27(4), eq. 8): for every pair
// (link, obstacle or link) closer than the influence distance d_i, the step
// dq must satisfy
//     n^T (J_a(p_a) - J_b(p_b)) dq  >=  -xi (d - d_s) / (d_i - d_s)
// where d is the pair's distance, p_a and p_b its closest points, n the unit
// vector from b to a, J_x(p) the point Jacobian of p on its body (0 for an
// obstacle), d_s the security distance and xi the damper gain (a step of the
// solver is one unit of time). The pair may approach by at most that much,
// so it slows down as it nears d_s and never crosses it to first order.
//
// The distances are the inner-loop ones (collision/world.h: capsules and
// boxes that enclose the exact shapes). The constrained step is the one
// closest to the solver's own step dq0 that satisfies every row:
//     min |dq - dq0|^2  s.t.  A dq >= b,
// by Hildreth's dual coordinate ascent (Hildreth 1957, "A quadratic
// programming procedure", Naval Res. Logist. Q. 4), which needs no
// factorisation and converges for any number of rows.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <vector>

#include "ikbench/collision/world.h"
#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/model.h"

namespace ikbench {

class VelocityDamper {
 public:
  // Constrains dq (nv) at configuration q of world's model; returns the
  // number of active rows (pairs within the influence distance).
  int constrain(const CollisionWorld& world, const Eigen::VectorXd& q, Eigen::VectorXd& dq);

 private:
  // row = n^T J_p(body, point) over the tangent DOFs (added with `sign`).
  void addPointRow(const Model& model, int body, const Eigen::Vector3d& point, const Eigen::Vector3d& n, double sign,
                   double* row) const;
  const Model* model_ = nullptr;
  std::unique_ptr<Data> data_;
  std::vector<ClosestPoints> cp_;
  Eigen::MatrixXd A_;  // rows x nv, column-major with rows of capacity
  Eigen::VectorXd b_, mu_, row_norm2_;
};

}  // namespace ikbench
