#include "ikbench/kinematics/goal.h"

#include <fmt/format.h>

#include <cmath>

#include "ikbench/kinematics/config.h"

namespace ikbench {

bool GoalErrors::finite() const {
  return std::isfinite(position) && std::isfinite(orientation) && std::isfinite(weighted_norm);
}

int totalRows(const std::vector<Goal>& goals) {
  int m = 0;
  for (const Goal& g : goals) m += goalRows(g.kind);
  return m;
}

int Problem::rows() const { return totalRows(goals); }

bool Problem::isValid(std::string* why) const {
  auto fail = [&](std::string msg) {
    if (why) *why = fmt::format("problem '{}': {}", name, msg);
    return false;
  };
  if (!model) return fail("has no model");
  if (goals.empty()) return fail("has no goals");
  for (size_t i = 0; i < goals.size(); ++i) {
    const Goal& g = goals[i];
    if (g.body < 0 || g.body >= model->numJoints())
      return fail(fmt::format("goal {} names body {}, but the model has bodies 0..{}", i, g.body,
                              model->numJoints() - 1));
    if (!g.point.allFinite()) return fail(fmt::format("goal {}: effector point is not finite", i));
    if (hasPosition(g.kind) && !g.target_position.allFinite())
      return fail(fmt::format("goal {}: target position is not finite", i));
    if (hasOrientation(g.kind)) {
      const Eigen::Matrix3d& R = g.target_orientation;
      if (!R.allFinite()) return fail(fmt::format("goal {}: target orientation is not finite", i));
      if (!(R.transpose() * R).isApprox(Eigen::Matrix3d::Identity(), 1e-6) || R.determinant() < 0)
        return fail(fmt::format("goal {}: target orientation is not a rotation matrix", i));
    }
    if (!(g.weight > 0.0) || !std::isfinite(g.weight))
      return fail(fmt::format("goal {}: weight {} must be finite and > 0", i, g.weight));
    if (!(g.orientation_scale > 0.0) || !std::isfinite(g.orientation_scale))
      return fail(fmt::format("goal {}: orientation_scale {} must be finite and > 0", i, g.orientation_scale));
  }
  std::string qwhy;
  if (!isValidConfiguration(*model, q0, &qwhy)) return fail("start configuration q0: " + qwhy);
  return true;
}

Eigen::Vector3d effectorPosition(const Goal& goal, const Data& data) {
  return data.world_T_body[goal.body].act(goal.point);
}

GoalErrors evaluateGoals(const Model& model, const std::vector<Goal>& goals, Data& data) {
  (void)model;
  const int m = totalRows(goals);
  data.resizeGoals(static_cast<int>(goals.size()), m);
  GoalErrors out;
  int row = 0;
  for (size_t i = 0; i < goals.size(); ++i) {
    const Goal& g = goals[i];
    const Pose3d& T = data.world_T_body[g.body];
    double pe = 0.0, oe = 0.0;
    if (hasPosition(g.kind)) {
      const Eigen::Vector3d e = g.target_position - T.act(g.point);
      pe = e.norm();
      data.residual.segment<3>(row) = g.weight * e;
      row += 3;
    }
    if (hasOrientation(g.kind)) {
      const Eigen::Vector3d e = so3::log(g.target_orientation * T.R.transpose(), &oe);  // oe = |e|
      data.residual.segment<3>(row) = (g.weight * g.orientation_scale) * e;
      row += 3;
    }
    data.goal_position_error[i] = pe;
    data.goal_orientation_error[i] = oe;
    out.position = std::max(out.position, pe);
    out.orientation = std::max(out.orientation, oe);
    if (std::isnan(pe)) out.position = pe;
    if (std::isnan(oe)) out.orientation = oe;
  }
  out.weighted_norm = data.residual.norm();
  return out;
}

void goalJacobian(const Model& model, const std::vector<Goal>& goals, Data& data, JacobianMode mode) {
  const int m = totalRows(goals);
  const int nv = model.nv();
  if (data.J.rows() != m || data.J.cols() != nv) data.J.resize(m, nv);
  data.J.setZero();
  if (data.residual.size() != m) data.resizeGoals(static_cast<int>(goals.size()), m);
  // Written on raw column pointers (J is column-major, m rows): this runs
  // once per solver iteration and Eigen's dynamic-size block views cost more
  // than the arithmetic at m = 6.
  double* const Jd = data.J.data();
  int row = 0;
  for (const Goal& g : goals) {
    const bool pos = hasPosition(g.kind), ori = hasOrientation(g.kind);
    const int rp = row, ro = pos ? row + 3 : row;
    const double wp = g.weight, wo = g.weight * g.orientation_scale;
    const Eigen::Vector3d x = data.world_T_body[g.body].act(g.point);
    // One column: angular part a about pivot (or pure translation t).
    auto hinge = [&](int col, const Eigen::Vector3d& a, const Eigen::Vector3d& pivot) {
      double* c = Jd + static_cast<Eigen::Index>(col) * m;
      if (pos) {
        const Eigen::Vector3d r = x - pivot;
        c[rp] = wp * (a.y() * r.z() - a.z() * r.y());
        c[rp + 1] = wp * (a.z() * r.x() - a.x() * r.z());
        c[rp + 2] = wp * (a.x() * r.y() - a.y() * r.x());
      }
      if (ori) {
        c[ro] = wo * a.x();
        c[ro + 1] = wo * a.y();
        c[ro + 2] = wo * a.z();
      }
    };
    auto slider = [&](int col, const Eigen::Vector3d& t) {
      if (!pos) return;
      double* c = Jd + static_cast<Eigen::Index>(col) * m;
      c[rp] = wp * t.x();
      c[rp + 1] = wp * t.y();
      c[rp + 2] = wp * t.z();
    };
    for (int j = g.body; j >= 0; j = model.parent(j)) {
      const int iv = model.idxV(j);
      const Eigen::Matrix3d& R = data.world_R_dof[j];
      const Eigen::Vector3d& pivot = data.world_T_body[j].p;
      switch (model.type(j)) {
        case JointType::kRevolute:
        case JointType::kPrismatic: {
          // World axis R_dof * axis; for a principal axis +-e_k it is
          // +-column k of the body frame (a rotation about e_k leaves e_k
          // fixed, and a slider does not rotate), no product needed.
          const int pa = model.principalAxis(j);
          const Eigen::Vector3d a = pa == 0  ? Eigen::Vector3d(R * model.axis(j))
                                    : pa > 0 ? Eigen::Vector3d(data.world_T_body[j].R.col(pa - 1))
                                             : Eigen::Vector3d(-data.world_T_body[j].R.col(-pa - 1));
          if (model.type(j) == JointType::kRevolute) {
            hinge(iv, a, pivot);
          } else {
            slider(iv, a);
          }
          break;
        }
        case JointType::kBall:
          for (int k = 0; k < 3; ++k) hinge(iv + k, R.col(k), pivot);
          break;
        case JointType::kFree:
          for (int k = 0; k < 3; ++k) slider(iv + k, R.col(k));
          for (int k = 0; k < 3; ++k) hinge(iv + 3 + k, R.col(k), pivot);
          break;
        case JointType::kFixed: break;
      }
    }
    if (ori && mode == JacobianMode::kExactResidual) {
      const Eigen::Vector3d e = data.residual.segment<3>(ro) / wo;
      const Eigen::Matrix3d Jinv = so3::rightJacobianInverse(e);
      // Column by column through a stack Vector3d: the aliased block product
      // J.middleRows<3>(ro) = Jinv * J.middleRows<3>(ro) would evaluate into
      // a heap temporary (3 x nv) on every call, inside solvers' loops.
      for (int c = 0; c < nv; ++c) {
        const Eigen::Vector3d col = data.J.col(c).segment<3>(ro);
        data.J.col(c).segment<3>(ro).noalias() = Jinv * col;
      }
    }
    row += goalRows(g.kind);
  }
}

}  // namespace ikbench
