#include "ikbench/kinematics/goal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ikbench/kinematics/config.h"

namespace ikbench {

bool GoalErrors::finite() const {
  return std::isfinite(position) && std::isfinite(orientation) && std::isfinite(weighted_norm);
}

int totalRows(const std::vector<Goal>& goals) {
  int m = 0;
  for (const Goal& g : goals) m += residualRows(g);
  return m;
}

int GoalBound::rows() const {
  switch (kind) {
    case BoundKind::kNone: return 0;
    case BoundKind::kHalfSpaces: return static_cast<int>(offsets.size());
    case BoundKind::kInsideBall:
    case BoundKind::kOutsideBall: return 1;
  }
  return 0;
}

int Problem::rows() const { return totalRows(goals); }

std::vector<int> Problem::levels() const {
  std::vector<int> out;
  for (const Goal& g : goals) out.push_back(g.priority);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int> Problem::goalsAtLevel(int priority) const {
  std::vector<int> out;
  for (size_t i = 0; i < goals.size(); ++i)
    if (goals[i].priority == priority) out.push_back(static_cast<int>(i));
  return out;
}

bool Problem::isWholeBody() const {
  for (const Goal& g : goals)
    if (!isPointTarget(g) || g.priority != goals.front().priority) return true;
  return false;
}

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
    if (g.priority < 0) return fail(fmt::format("goal {}: priority {} must be >= 0 (0 is the highest level)", i, g.priority));
    if (g.kind == GoalKind::kCentreOfMass && !(model->subtreeMass(g.body) > 0.0))
      return fail(fmt::format("goal {}: centre-of-mass goal on body '{}', whose subtree has total mass {} kg "
                              "(the model needs body masses, e.g. URDF <inertial>)",
                              i, model->bodyName(g.body), model->subtreeMass(g.body)));
    if (g.bounded()) {
      const GoalBound& b = g.bound;
      if (g.kind != GoalKind::kPosition && g.kind != GoalKind::kCentreOfMass)
        return fail(fmt::format("goal {}: a {} bound needs a position or com goal, not {}", i, toString(b.kind),
                                toString(g.kind)));
      if (b.kind == BoundKind::kHalfSpaces) {
        if (b.offsets.size() == 0 || b.normals.rows() != b.offsets.size())
          return fail(fmt::format("goal {}: half_spaces bound has {} normals and {} offsets (expected the same "
                                  "number, at least one)",
                                  i, b.normals.rows(), b.offsets.size()));
        for (Eigen::Index k = 0; k < b.offsets.size(); ++k) {
          if (!b.normals.row(k).allFinite() || !std::isfinite(b.offsets[k]))
            return fail(fmt::format("goal {}: half-space {} is not finite", i, k));
          if (std::abs(b.normals.row(k).norm() - 1.0) > 1e-6)
            return fail(fmt::format("goal {}: half-space {} normal has length {} (expected a unit vector)", i, k,
                                    b.normals.row(k).norm()));
        }
      } else {
        if (!b.centre.allFinite()) return fail(fmt::format("goal {}: ball centre is not finite", i));
        if (!std::isfinite(b.radius) || b.radius < 0.0)
          return fail(fmt::format("goal {}: ball radius {} must be finite and >= 0 [m]", i, b.radius));
      }
    } else if (hasPosition(g.kind) && !g.target_position.allFinite())
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

namespace {

// mom[i] = sum over the subtree of body i of m_k * (world centre of mass)_k.
void subtreeMoments(const Model& model, const Data& data, std::vector<Eigen::Vector3d>& mom) {
  const int n = model.numJoints();
  if (static_cast<int>(mom.size()) != n) mom.resize(n);
  for (int i = 0; i < n; ++i) mom[i] = model.bodyMass(i) * data.world_T_body[i].act(model.bodyCom(i));
  for (int i = n - 1; i > 0; --i)
    if (model.parent(i) >= 0) mom[model.parent(i)] += mom[i];
}

Eigen::Vector3d positionOf(const Model& model, const Goal& g, const Data& data,
                           const std::vector<Eigen::Vector3d>& mom) {
  if (g.kind == GoalKind::kCentreOfMass) return mom[g.body] / model.subtreeMass(g.body);
  return data.world_T_body[g.body].act(g.point);
}

// One row of a bound, written as the constraint value(p) <= limit with
// d value / d p = grad^T.
struct BoundRow {
  double value, limit;
  Eigen::Vector3d grad;
};

BoundRow boundRow(const GoalBound& b, int k, const Eigen::Vector3d& p) {
  if (b.kind == BoundKind::kHalfSpaces) {
    const Eigen::Vector3d n = b.normals.row(k).transpose();
    return {n.dot(p), b.offsets[k], n};
  }
  const Eigen::Vector3d d = p - b.centre;
  const double len = d.norm();
  // At the centre the direction is undefined; +z is a fixed, documented choice.
  const Eigen::Vector3d u = len > 0.0 ? Eigen::Vector3d(d / len) : Eigen::Vector3d::UnitZ();
  if (b.kind == BoundKind::kInsideBall) return {len, b.radius, u};
  return {-len, -b.radius, -u};
}

// Calls emit(col, lin, ang) for every tangent DOF moving the goal's position:
// lin = d position / d dq_col, ang = the DOF's world angular velocity (zero
// for sliders and for the centre-of-mass columns of descendant joints).
template <class Emit>
void forEachColumn(const Model& model, const Goal& g, const Data& data, const std::vector<Eigen::Vector3d>& mom,
                   Emit&& emit) {
  const Eigen::Vector3d x = positionOf(model, g, data, mom);
  auto joint = [&](int j, const Eigen::Vector3d& point, double scale, bool angular) {
    const int iv = model.idxV(j);
    const Eigen::Matrix3d& R = data.world_R_dof[j];
    const Eigen::Vector3d& pivot = data.world_T_body[j].p;
    const Eigen::Vector3d zero = Eigen::Vector3d::Zero();
    auto hinge = [&](int col, const Eigen::Vector3d& a) {
      emit(col, Eigen::Vector3d(scale * a.cross(point - pivot)), angular ? a : zero);
    };
    switch (model.type(j)) {
      case JointType::kRevolute: hinge(iv, R * model.axis(j)); break;
      case JointType::kPrismatic: emit(iv, Eigen::Vector3d(scale * (R * model.axis(j))), zero); break;
      case JointType::kBall:
        for (int k = 0; k < 3; ++k) hinge(iv + k, R.col(k));
        break;
      case JointType::kFree:
        for (int k = 0; k < 3; ++k) emit(iv + k, Eigen::Vector3d(scale * R.col(k)), zero);
        for (int k = 0; k < 3; ++k) hinge(iv + 3 + k, R.col(k));
        break;
      case JointType::kFixed: break;
    }
  };
  // Joints from the goal's body to the root move the whole point (or subtree).
  for (int j = g.body; j >= 0; j = model.parent(j)) joint(j, x, 1.0, true);
  if (g.kind != GoalKind::kCentreOfMass) return;
  // A joint inside the subtree moves only its own subtree: its column is
  // (M_j / M) times the column of that subtree's centre of mass.
  const double M = model.subtreeMass(g.body);
  for (int j = g.body + 1; j < model.numJoints(); ++j) {
    int k = j;
    while (k > g.body) k = model.parent(k);
    if (k != g.body || model.subtreeMass(j) <= 0.0) continue;
    joint(j, Eigen::Vector3d(mom[j] / model.subtreeMass(j)), model.subtreeMass(j) / M, false);
  }
}

bool anyCentreOfMass(const std::vector<Goal>& goals) {
  for (const Goal& g : goals)
    if (g.kind == GoalKind::kCentreOfMass) return true;
  return false;
}

}  // namespace

Eigen::Vector3d centreOfMass(const Model& model, const Data& data, int body) {
  std::vector<Eigen::Vector3d> mom;
  subtreeMoments(model, data, mom);
  return mom[body] / model.subtreeMass(body);
}

Eigen::Vector3d goalPosition(const Model& model, const Goal& goal, const Data& data) {
  if (goal.kind != GoalKind::kCentreOfMass) return effectorPosition(goal, data);
  return centreOfMass(model, data, goal.body);
}

GoalRows goalRows(const Model& model, const Goal& g, const Data& data) {
  const int nv = model.nv();
  std::vector<Eigen::Vector3d> mom;
  if (g.kind == GoalKind::kCentreOfMass) subtreeMoments(model, data, mom);
  const Eigen::Vector3d p = positionOf(model, g, data, mom);
  GoalRows out;
  if (g.bounded()) {
    const int m = g.bound.rows();
    out.J.setZero(0, nv);
    out.r.resize(0);
    out.C.setZero(m, nv);
    out.upper.resize(m);
    std::vector<BoundRow> rows;
    for (int k = 0; k < m; ++k) {
      rows.push_back(boundRow(g.bound, k, p));
      out.upper[k] = rows[k].limit - rows[k].value;
    }
    forEachColumn(model, g, data, mom, [&](int col, const Eigen::Vector3d& lin, const Eigen::Vector3d&) {
      for (int k = 0; k < m; ++k) out.C(k, col) += rows[k].grad.dot(lin);
    });
    return out;
  }
  const bool pos = hasPosition(g.kind), ori = hasOrientation(g.kind);
  const int m = goalRows(g.kind), ro = pos ? 3 : 0;
  out.J.setZero(m, nv);
  out.r.resize(m);
  out.C.setZero(0, nv);
  out.upper.resize(0);
  if (pos) out.r.head<3>() = g.target_position - p;
  if (ori) {
    const Pose3d& T = data.world_T_body[g.body];
    out.r.segment<3>(ro) = g.orientation_scale * so3::log(g.target_orientation * T.R.transpose());
  }
  forEachColumn(model, g, data, mom, [&](int col, const Eigen::Vector3d& lin, const Eigen::Vector3d& ang) {
    if (pos) out.J.block<3, 1>(0, col) += lin;
    if (ori) out.J.block<3, 1>(ro, col) += g.orientation_scale * ang;
  });
  return out;
}

std::vector<GoalErrors> levelErrors(const Model& model, const Problem& problem, Data& data) {
  evaluateGoals(model, problem.goals, data);
  const std::vector<int> levels = problem.levels();
  std::vector<GoalErrors> out(levels.size());
  std::vector<double> sq(levels.size(), 0.0);
  int row = 0;
  for (size_t i = 0; i < problem.goals.size(); ++i) {
    const Goal& g = problem.goals[i];
    const size_t l = std::lower_bound(levels.begin(), levels.end(), g.priority) - levels.begin();
    const double pe = data.goal_position_error[i], oe = data.goal_orientation_error[i];
    out[l].position = std::isnan(pe) || std::isnan(out[l].position) ? std::nan("") : std::max(out[l].position, pe);
    out[l].orientation =
        std::isnan(oe) || std::isnan(out[l].orientation) ? std::nan("") : std::max(out[l].orientation, oe);
    const int m = residualRows(g);
    sq[l] += data.residual.segment(row, m).squaredNorm();
    row += m;
  }
  for (size_t l = 0; l < levels.size(); ++l) out[l].weighted_norm = std::sqrt(sq[l]);
  return out;
}

GoalErrors evaluateGoals(const Model& model, const std::vector<Goal>& goals, Data& data) {
  const int m = totalRows(goals);
  data.resizeGoals(static_cast<int>(goals.size()), m);
  GoalErrors out;
  if (anyCentreOfMass(goals)) subtreeMoments(model, data, data.subtree_moment);
  int row = 0;
  for (size_t i = 0; i < goals.size(); ++i) {
    const Goal& g = goals[i];
    const Pose3d& T = data.world_T_body[g.body];
    double pe = 0.0, oe = 0.0;
    if (g.bounded()) {
      const Eigen::Vector3d p = positionOf(model, g, data, data.subtree_moment);
      const int m = g.bound.rows();
      for (int k = 0; k < m; ++k) {
        const BoundRow b = boundRow(g.bound, k, p);
        const double slack = b.limit - b.value;
        data.residual[row + k] = g.weight * std::min(0.0, slack);
        pe = std::max(pe, -slack);
        if (std::isnan(slack)) pe = slack;
      }
      row += m;
    } else if (g.kind == GoalKind::kCentreOfMass) {
      const Eigen::Vector3d e = g.target_position - positionOf(model, g, data, data.subtree_moment);
      pe = e.norm();
      data.residual.segment<3>(row) = g.weight * e;
      row += 3;
    } else if (hasPosition(g.kind)) {
      const Eigen::Vector3d e = g.target_position - T.act(g.point);
      pe = e.norm();
      data.residual.segment<3>(row) = g.weight * e;
      row += 3;
    }
    if (!g.bounded() && hasOrientation(g.kind)) {
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
  if (anyCentreOfMass(goals)) subtreeMoments(model, data, data.subtree_moment);
  int row = 0;
  for (const Goal& g : goals) {
    if (!isPointTarget(g)) {
      // Centre-of-mass and bounded goals: position rows, or one row per
      // violated bound (zero while the bound holds, matching the residual).
      if (g.bounded()) {
        const Eigen::Vector3d p = positionOf(model, g, data, data.subtree_moment);
        const int nb = g.bound.rows();
        for (int k = 0; k < nb; ++k) {
          const BoundRow b = boundRow(g.bound, k, p);
          if (!(b.value > b.limit)) continue;
          const Eigen::Vector3d a = g.weight * b.grad;
          forEachColumn(model, g, data, data.subtree_moment,
                        [&](int col, const Eigen::Vector3d& lin, const Eigen::Vector3d&) {
                          Jd[static_cast<Eigen::Index>(col) * m + row + k] += a.dot(lin);
                        });
        }
      } else {
        forEachColumn(model, g, data, data.subtree_moment,
                      [&](int col, const Eigen::Vector3d& lin, const Eigen::Vector3d&) {
                        double* c = Jd + static_cast<Eigen::Index>(col) * m + row;
                        c[0] += g.weight * lin.x();
                        c[1] += g.weight * lin.y();
                        c[2] += g.weight * lin.z();
                      });
      }
      row += residualRows(g);
      continue;
    }
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
