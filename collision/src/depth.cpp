#include "ikbench/collision/depth.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace ikbench {
namespace {

// A sphere or capsule as a segment and a radius, in the world.
bool sweptSphere(const Shape& s, const Pose3d& world_T, Capsule* out) {
  if (s.kind == ShapeKind::kSphere) {
    *out = {world_T.p, world_T.p, s.radius};
    return true;
  }
  if (s.kind == ShapeKind::kCapsule) {
    const Eigen::Vector3d half = 0.5 * s.length * world_T.R.col(2);
    *out = {world_T.p - half, world_T.p + half, s.radius};
    return true;
  }
  return false;
}

// Over the candidate facet normals of the zonotope with centre c and
// generators g: min over unit axes n of sum_i |n.g_i| - |n.c|, the distance
// from the origin to the zonotope's boundary when the origin is inside
// (>= 0), negative when an axis separates. Axes shorter than a relative 1e-12
// (parallel generators) are skipped: their facets are degenerate.
double zonotopeDepth(const Eigen::Vector3d& c, const std::vector<Eigen::Vector3d>& g,
                     const std::vector<Eigen::Vector3d>& dirs) {
  std::vector<Eigen::Vector3d> axes;
  for (size_t i = 0; i < dirs.size(); ++i) {
    axes.push_back(dirs[i]);
    for (size_t j = i + 1; j < dirs.size(); ++j) {
      const Eigen::Vector3d n = dirs[i].cross(dirs[j]);
      if (n.norm() > 1e-12) axes.push_back(n);
    }
  }
  double best = std::numeric_limits<double>::infinity();
  for (Eigen::Vector3d n : axes) {
    const double len = n.norm();
    if (!(len > 1e-12)) continue;
    n /= len;
    double h = -std::abs(n.dot(c));
    for (const Eigen::Vector3d& gi : g) h += std::abs(n.dot(gi));
    best = std::min(best, h);
  }
  return best;
}

// Unit directions of a box's axes and half-axes as generators.
void boxGenerators(const Shape& box, const Pose3d& world_T, std::vector<Eigen::Vector3d>* g,
                   std::vector<Eigen::Vector3d>* dirs) {
  for (int i = 0; i < 3; ++i) {
    dirs->push_back(world_T.R.col(i));
    g->push_back(0.5 * box.size[i] * world_T.R.col(i));
  }
}

double capsuleBox(const Capsule& cap, const Shape& box, const Pose3d& world_T_box) {
  std::vector<Eigen::Vector3d> g, dirs;
  boxGenerators(box, world_T_box, &g, &dirs);
  const Eigen::Vector3d half_seg = 0.5 * (cap.b - cap.a);
  if (half_seg.norm() > 0.0) {
    g.push_back(half_seg);
    dirs.push_back(half_seg.normalized());
  }
  // Z = box - segment: centre box centre - segment midpoint.
  const double inside = zonotopeDepth(world_T_box.p - 0.5 * (cap.a + cap.b), g, dirs);
  if (inside >= 0.0) return cap.radius + inside;
  // The segment is outside the box: the swept sphere's overlap with it.
  const Box b{world_T_box, 0.5 * box.size};
  return std::max(0.0, -closestPoints(cap, b).distance);
}

}  // namespace

std::optional<double> penetrationDepth(const Shape& a, const Pose3d& world_T_a, const Shape& b,
                                       const Pose3d& world_T_b) {
  Capsule ca, cb;
  const bool sa = sweptSphere(a, world_T_a, &ca), sb = sweptSphere(b, world_T_b, &cb);
  const bool box_a = a.kind == ShapeKind::kBox, box_b = b.kind == ShapeKind::kBox;
  if (sa && sb) {
    double s = 0.0, t = 0.0;
    segmentSegment(ca.a, ca.b, cb.a, cb.b, &s, &t);
    const double d = ((ca.a + s * (ca.b - ca.a)) - (cb.a + t * (cb.b - cb.a))).norm();
    return std::max(0.0, ca.radius + cb.radius - d);
  }
  if (sa && box_b) return capsuleBox(ca, b, world_T_b);
  if (box_a && sb) return capsuleBox(cb, a, world_T_a);
  if (box_a && box_b) {
    std::vector<Eigen::Vector3d> g, dirs;
    boxGenerators(a, world_T_a, &g, &dirs);
    boxGenerators(b, world_T_b, &g, &dirs);
    return std::max(0.0, zonotopeDepth(world_T_a.p - world_T_b.p, g, dirs));
  }
  return std::nullopt;
}

}  // namespace ikbench
