#include "velocity_damper.h"

#include <algorithm>
#include <cmath>

#include "ikbench/kinematics/forward_kinematics.h"

namespace ikbench {

void VelocityDamper::addPointRow(const Model& model, int body, const Eigen::Vector3d& x, const Eigen::Vector3d& n,
                                 double sign, double* row) const {
  const Data& d = *data_;
  for (int j = body; j >= 0; j = model.parent(j)) {
    const int iv = model.idxV(j);
    const Eigen::Matrix3d& R = d.world_R_dof[static_cast<size_t>(j)];
    const Eigen::Vector3d& pivot = d.world_T_body[static_cast<size_t>(j)].p;
    // n . (a x (x - pivot)) = a . ((x - pivot) x n)
    const Eigen::Vector3d m = (x - pivot).cross(n);
    switch (model.type(j)) {
      case JointType::kRevolute: row[iv] += sign * (R * model.axis(j)).dot(m); break;
      case JointType::kPrismatic: row[iv] += sign * (R * model.axis(j)).dot(n); break;
      case JointType::kBall:
        for (int k = 0; k < 3; ++k) row[iv + k] += sign * R.col(k).dot(m);
        break;
      case JointType::kFree:
        for (int k = 0; k < 3; ++k) row[iv + k] += sign * R.col(k).dot(n);
        for (int k = 0; k < 3; ++k) row[iv + 3 + k] += sign * R.col(k).dot(m);
        break;
      case JointType::kFixed: break;
    }
  }
}

int VelocityDamper::constrain(const CollisionWorld& world, const Eigen::VectorXd& q, Eigen::VectorXd& dq) {
  const Model& model = world.model();
  if (model_ != &model || !data_) {
    data_ = std::make_unique<Data>(model);
    model_ = &model;
  }
  forwardKinematics(model, q, *data_);
  const AvoidanceParameters& p = world.avoidance();
  world.approximateDistances(*data_, p.influence_distance, &cp_);
  const int nv = model.nv();
  const int pairs = static_cast<int>(cp_.size());
  if (A_.cols() != pairs || A_.rows() != nv) {
    A_.resize(nv, pairs);  // column k is row k of the constraint matrix
    b_.resize(pairs);
    mu_.resize(pairs);
    row_norm2_.resize(pairs);
  }
  int rows = 0;
  for (int i = 0; i < pairs; ++i) {
    const ClosestPoints& c = cp_[static_cast<size_t>(i)];
    if (!(c.distance < p.influence_distance)) continue;
    const CollisionPair& pair = world.pairs()[static_cast<size_t>(i)];
    double* row = A_.col(rows).data();
    std::fill(row, row + nv, 0.0);
    addPointRow(model, world.links()[static_cast<size_t>(pair.a)].body, c.on_a, c.normal, 1.0, row);
    if (!pair.obstacle) addPointRow(model, world.links()[static_cast<size_t>(pair.b)].body, c.on_b, c.normal, -1.0, row);
    const double norm2 = A_.col(rows).squaredNorm();
    if (!(norm2 > 1e-20)) continue;  // no DOF moves the pair apart or together
    b_[rows] = -p.damper_gain * (c.distance - p.security_distance) / (p.influence_distance - p.security_distance);
    row_norm2_[rows] = norm2;
    ++rows;
  }
  if (rows == 0) return 0;
  // Hildreth: dual coordinate ascent on mu >= 0 for min 1/2 |dq - dq0|^2,
  // A dq >= b; dq = dq0 + A^T mu throughout.
  mu_.head(rows).setZero();
  for (int sweep = 0; sweep < 100; ++sweep) {
    double change = 0.0;
    for (int k = 0; k < rows; ++k) {
      const double slack = b_[k] - A_.col(k).dot(dq);
      const double next = std::max(0.0, mu_[k] + slack / row_norm2_[k]);
      const double delta = next - mu_[k];
      if (delta != 0.0) {
        dq.noalias() += delta * A_.col(k);
        mu_[k] = next;
        change = std::max(change, std::abs(delta) * std::sqrt(row_norm2_[k]));
      }
    }
    if (change < 1e-9) break;
  }
  return rows;
}

}  // namespace ikbench
