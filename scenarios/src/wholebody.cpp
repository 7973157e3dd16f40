// Whole-body problems from task lists (wholebody.h).
#include "ikbench/scenarios/wholebody.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench {

GoalBound supportPolygon(const std::vector<Eigen::Vector3d>& points, const Eigen::Vector3d& up, double margin) {
  if (!(up.norm() > 0.0) || !up.allFinite()) throw std::invalid_argument("support polygon: 'up' must be a non-zero vector");
  if (points.size() < 3)
    throw std::invalid_argument(fmt::format("support polygon: {} points (need 3 not on one line)", points.size()));
  const Eigen::Vector3d u = up.normalized();
  const Eigen::Vector3d e1 = (std::abs(u.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY()).cross(u).normalized();
  const Eigen::Vector3d e2 = u.cross(e1);
  std::vector<Eigen::Vector2d> p;
  for (const Eigen::Vector3d& x : points) p.emplace_back(e1.dot(x), e2.dot(x));
  std::sort(p.begin(), p.end(), [](const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
    return a.x() < b.x() || (a.x() == b.x() && a.y() < b.y());
  });
  // Andrew's monotone chain: the hull counter-clockwise, collinear points dropped.
  auto cross = [](const Eigen::Vector2d& o, const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
    return (a - o).x() * (b - o).y() - (a - o).y() * (b - o).x();
  };
  std::vector<Eigen::Vector2d> hull(2 * p.size());
  size_t k = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], p[i]) <= 1e-12) --k;
    hull[k++] = p[i];
  }
  for (size_t i = p.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross(hull[k - 2], hull[k - 1], p[i]) <= 1e-12) --k;
    hull[k++] = p[i];
  }
  if (k < 4)  // k counts the first point twice
    throw std::invalid_argument(fmt::format(
        "support polygon: the {} points span no area seen along 'up' (need 3 not on one line)", points.size()));
  hull.resize(k - 1);
  GoalBound b;
  b.kind = BoundKind::kHalfSpaces;
  const Eigen::Index m = static_cast<Eigen::Index>(hull.size());
  b.normals.resize(m, 3);
  b.offsets.resize(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    const Eigen::Vector2d a = hull[static_cast<size_t>(i)], c = hull[static_cast<size_t>((i + 1) % m)];
    const Eigen::Vector2d n2 = Eigen::Vector2d(c.y() - a.y(), a.x() - c.x()).normalized();  // outward (CCW hull)
    const Eigen::Vector3d n = n2.x() * e1 + n2.y() * e2;
    b.normals.row(i) = n.transpose();
    b.offsets[i] = n2.dot(a) - margin;
  }
  return b;
}

std::vector<Problem> makeWholeBodyProblems(std::shared_ptr<const Model> model, const WholeBodySpec& spec,
                                           std::uint64_t seed) {
  const Model& m = *model;
  if (spec.tasks.empty()) throw std::invalid_argument("whole-body tasks: the list is empty");
  Eigen::VectorXd ref = m.neutralConfiguration();
  clampToLimits(m, ref);
  Data d(m);
  forwardKinematics(m, ref, d);
  auto bodyOf = [&](size_t k, const std::string& name) {
    const int b = m.bodyIndex(name);
    if (b < 0) throw std::invalid_argument(fmt::format("whole-body task {}: no body '{}' in model '{}'", k, name, m.name()));
    return b;
  };
  // The goals that do not depend on the problem (everything but random targets).
  std::vector<Goal> base;
  for (size_t k = 0; k < spec.tasks.size(); ++k) {
    const WholeBodyTask& t = spec.tasks[k];
    Goal g;
    g.kind = t.kind;
    g.priority = t.priority;
    g.weight = t.weight;
    g.point = t.point;
    g.body = t.body.empty() ? 0 : bodyOf(k, t.body);
    if (t.kind == GoalKind::kCentreOfMass && !(m.subtreeMass(g.body) > 0.0))
      throw std::invalid_argument(fmt::format("whole-body task {}: a com task on body '{}' of total mass {} kg "
                                              "(the model has no inertial data there)",
                                              k, m.bodyName(g.body), m.subtreeMass(g.body)));
    const Eigen::Vector3d at = goalPosition(m, g, d);
    g.target_position = at;
    g.target_orientation = d.world_T_body[g.body].R;
    if (t.target == TaskTarget::kSupport) {
      std::vector<Eigen::Vector3d> pts;
      for (const std::string& s : t.support) pts.push_back(d.world_T_body[bodyOf(k, s)].p);
      try {
        g.bound = supportPolygon(pts, spec.up, t.margin);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("whole-body task {}: {}", k, e.what()));
      }
    } else if (t.target == TaskTarget::kBound) {
      g.bound = t.bound;
    }
    base.push_back(g);
  }
  Rng rng(seed);
  const double a = spec.start_perturbation;
  std::vector<Problem> out;
  for (int i = 0; i < spec.count; ++i) {
    Problem p;
    p.model = model;
    p.goals = base;
    for (size_t k = 0; k < spec.tasks.size(); ++k) {
      const WholeBodyTask& t = spec.tasks[k];
      if (t.target != TaskTarget::kRandom) continue;
      const double r = rng.uniform(t.distance_lo, t.distance_hi);
      p.goals[k].target_position += r * rng.unitVector();
    }
    Eigen::VectorXd dq(m.nv());
    for (int j = 0; j < m.nv(); ++j) dq[j] = a > 0.0 ? rng.uniform(-a, a) : 0.0;
    p.q0 = integrate(m, ref, dq);
    clampToLimits(m, p.q0);
    std::string why;
    if (!p.isValid(&why)) throw std::invalid_argument(fmt::format("whole-body problem {}: {}", i, why));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace ikbench
