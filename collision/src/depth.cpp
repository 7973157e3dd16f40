#include "ikbench/collision/depth.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace ikbench {
namespace {

// Half-generators of a cylinder's circumscribed prism: a regular 2k-gon with
// apothem r is the zonogon of k segments r tan(pi / 2k) (cos, sin) of the
// angles j pi / k; with the axis's half-length, the prism is a zonotope.
constexpr int kCylinderGenerators = 32;

// A convex shape as a zonotope core (centre and half-generators) swept by a
// ball: a sphere (no generator), a capsule (its half-segment), a box (its
// half-axes), a cylinder (its circumscribed prism).
struct Core {
  ShapeKind kind = ShapeKind::kSphere;
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  std::vector<Eigen::Vector3d> gens;
  double radius = 0.0;
  Capsule segment;  // sphere, capsule
  Pose3d pose;      // box, cylinder
  Eigen::Vector3d half = Eigen::Vector3d::Zero();  // box half-extents; cylinder: (r, r, L/2)
};

bool coreOf(const Shape& s, const Pose3d& world_T, Core* c) {
  c->kind = s.kind;
  c->centre = world_T.p;
  c->pose = world_T;
  switch (s.kind) {
    case ShapeKind::kSphere:
      c->radius = s.radius;
      c->segment = {world_T.p, world_T.p, s.radius};
      return true;
    case ShapeKind::kCapsule: {
      const Eigen::Vector3d half = 0.5 * s.length * world_T.R.col(2);
      c->radius = s.radius;
      c->segment = {world_T.p - half, world_T.p + half, s.radius};
      if (s.length > 0.0) c->gens.push_back(half);
      return true;
    }
    case ShapeKind::kBox:
      c->half = 0.5 * s.size;
      for (int i = 0; i < 3; ++i) c->gens.push_back(c->half[i] * world_T.R.col(i));
      return true;
    case ShapeKind::kCylinder: {
      c->half = Eigen::Vector3d(s.radius, s.radius, 0.5 * s.length);
      const double a = s.radius * std::tan(M_PI / (2.0 * kCylinderGenerators));
      for (int j = 0; j < kCylinderGenerators; ++j) {
        const double t = M_PI * j / kCylinderGenerators;
        c->gens.push_back(a * (std::cos(t) * world_T.R.col(0) + std::sin(t) * world_T.R.col(1)));
      }
      c->gens.push_back(c->half.z() * world_T.R.col(2));
      return true;
    }
    case ShapeKind::kMesh: return false;
  }
  return false;
}

// The zonotope with centre c and half-generators g: min over its candidate
// facet normals n (the generators' pairwise cross products, and their own
// directions, which only add upper bounds) of sum_i |n.g_i| - |n.c|: the
// distance from the origin to the zonotope's boundary when the origin is
// inside (>= 0), negative when a normal separates them. Cross products of
// (nearly) parallel generators are skipped: their facets are degenerate.
double zonotopeDepth(const Eigen::Vector3d& c, const std::vector<Eigen::Vector3d>& g) {
  std::vector<Eigen::Vector3d> dirs;
  for (const Eigen::Vector3d& gi : g)
    if (gi.norm() > 0.0) dirs.push_back(gi.normalized());
  double best = std::numeric_limits<double>::infinity();
  auto consider = [&](Eigen::Vector3d n) {
    const double len = n.norm();
    if (!(len > 1e-12)) return;
    n /= len;
    double h = -std::abs(n.dot(c));
    for (const Eigen::Vector3d& gi : g) h += std::abs(n.dot(gi));
    best = std::min(best, h);
  };
  for (size_t i = 0; i < dirs.size(); ++i) {
    consider(dirs[i]);
    for (size_t j = i + 1; j < dirs.size(); ++j) consider(dirs[i].cross(dirs[j]));
  }
  if (dirs.empty()) best = -c.norm();  // two points: inside only when they coincide
  return best;
}

// Signed distance of a point (world) to a cylinder core (negative inside).
double cylinderSignedDistance(const Core& cyl, const Eigen::Vector3d& x) {
  const Eigen::Vector3d p = cyl.pose.R.transpose() * (x - cyl.pose.p);
  const double dr = std::hypot(p.x(), p.y()) - cyl.half.x(), dz = std::abs(p.z()) - cyl.half.z();
  if (dr > 0.0 && dz > 0.0) return std::hypot(dr, dz);
  return std::max(dr, dz);
}

// Distance from a segment to a cylinder: the signed distance is convex along
// the segment, so convexArgminOnUnit finds its minimum (as the inner loop's
// segment-box distance does).
double segmentCylinderDistance(const Capsule& s, const Core& cyl) {
  auto f = [&](double t) { return cylinderSignedDistance(cyl, s.a + t * (s.b - s.a)); };
  return f(convexArgminOnUnit(f, 60));
}

}  // namespace

std::optional<double> penetrationDepth(const Shape& a, const Pose3d& world_T_a, const Shape& b,
                                       const Pose3d& world_T_b) {
  Core ca, cb;
  if (!coreOf(a, world_T_a, &ca) || !coreOf(b, world_T_b, &cb)) return std::nullopt;
  const bool swept_a = ca.kind == ShapeKind::kSphere || ca.kind == ShapeKind::kCapsule;
  const bool swept_b = cb.kind == ShapeKind::kSphere || cb.kind == ShapeKind::kCapsule;
  if (swept_a && swept_b) {
    double s = 0.0, t = 0.0;
    segmentSegment(ca.segment.a, ca.segment.b, cb.segment.a, cb.segment.b, &s, &t);
    const Eigen::Vector3d pa = ca.segment.a + s * (ca.segment.b - ca.segment.a);
    const Eigen::Vector3d pb = cb.segment.a + t * (cb.segment.b - cb.segment.a);
    return std::max(0.0, ca.radius + cb.radius - (pa - pb).norm());
  }
  // A - B: the cores' Minkowski difference swept by a ball of the radii's sum.
  std::vector<Eigen::Vector3d> gens = ca.gens;
  gens.insert(gens.end(), cb.gens.begin(), cb.gens.end());
  const double radius = ca.radius + cb.radius;
  const double inside = zonotopeDepth(ca.centre - cb.centre, gens);
  if (inside >= 0.0) return radius + inside;
  if (!(radius > 0.0)) return 0.0;
  // The cores apart (a segment outside a box or a cylinder): the swept
  // sphere's overlap, radius less the segment's distance to the other core.
  const Core& sw = swept_a ? ca : cb;
  const Core& other = swept_a ? cb : ca;
  if (other.kind == ShapeKind::kBox)
    return std::max(0.0, -closestPoints(sw.segment, Box{other.pose, other.half}).distance);
  return std::max(0.0, sw.radius - segmentCylinderDistance(sw.segment, other));
}

}  // namespace ikbench
