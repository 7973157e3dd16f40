#include "ikbench/collision/shapes.h"

#include <algorithm>
#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>

namespace ikbench {

Shape Shape::box(std::string name, const Eigen::Vector3d& size, const Pose3d& pose) {
  Shape s;
  s.kind = ShapeKind::kBox;
  s.name = std::move(name);
  s.size = size;
  s.pose = pose;
  return s;
}

Shape Shape::sphere(std::string name, double radius, const Pose3d& pose) {
  Shape s;
  s.kind = ShapeKind::kSphere;
  s.name = std::move(name);
  s.radius = radius;
  s.pose = pose;
  return s;
}

Shape Shape::capsule(std::string name, double radius, double length, const Pose3d& pose) {
  Shape s = sphere(std::move(name), radius, pose);
  s.kind = ShapeKind::kCapsule;
  s.length = length;
  return s;
}

Shape Shape::cylinder(std::string name, double radius, double length, const Pose3d& pose) {
  Shape s = capsule(std::move(name), radius, length, pose);
  s.kind = ShapeKind::kCylinder;
  return s;
}

Shape Shape::capsuleBetween(std::string name, const Eigen::Vector3d& a, const Eigen::Vector3d& b, double r) {
  Pose3d pose;
  pose.p = 0.5 * (a + b);
  const Eigen::Vector3d d = b - a;
  const double len = d.norm();
  if (len > 0.0) pose.R = Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), d / len).toRotationMatrix();
  return capsule(std::move(name), r, len, pose);
}

std::optional<Capsule> enclosingCapsule(const std::vector<Eigen::Vector3d>& points) {
  if (points.empty()) return std::nullopt;
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  for (const auto& p : points) c += p;
  c /= static_cast<double>(points.size());
  Eigen::Matrix3d cov = Eigen::Matrix3d::Zero();
  for (const auto& p : points) cov += (p - c) * (p - c).transpose();
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(cov);
  if (eig.info() != Eigen::Success) return std::nullopt;
  const Eigen::Vector3d u = eig.eigenvectors().col(2).normalized();  // the largest eigenvalue's
  double radius = 0.0;
  for (const auto& p : points) radius = std::max(radius, ((p - c) - (p - c).dot(u) * u).norm());
  // Every point within `radius` of the segment [t0, t1] along u: a point at
  // axial t and distance rho from the axis is covered when t lies within
  // sqrt(radius^2 - rho^2) of the segment.
  double t0 = std::numeric_limits<double>::infinity(), t1 = -t0;
  for (const auto& p : points) {
    const double t = (p - c).dot(u), rho = ((p - c) - t * u).norm();
    const double reach = std::sqrt(std::max(radius * radius - rho * rho, 0.0));
    t0 = std::min(t0, t + reach);
    t1 = std::max(t1, t - reach);
  }
  if (t0 > t1) t0 = t1 = 0.5 * (t0 + t1);
  // A hair more than the rounding of the sums above, so the capsule encloses.
  return Capsule{c + t0 * u, c + t1 * u, radius * (1.0 + 1e-12) + 1e-12};
}

ApproxShape approximate(const Shape& s) {
  ApproxShape out;
  const Eigen::Vector3d z = s.pose.R.col(2);
  switch (s.kind) {
    case ShapeKind::kBox:
      out.is_box = true;
      out.box.pose = s.pose;
      out.box.half = 0.5 * s.size;
      break;
    case ShapeKind::kSphere:
      out.capsule = {s.pose.p, s.pose.p, s.radius};
      break;
    case ShapeKind::kCapsule:
      out.capsule = {s.pose.p - 0.5 * s.length * z, s.pose.p + 0.5 * s.length * z, s.radius};
      break;
    case ShapeKind::kCylinder: {
      // The enclosing capsule: the segment shortened so that its hemispherical
      // caps just reach the rims, r' = sqrt(r^2 + (L/2 - h)^2) with the
      // segment's half length h = max(L/2 - r, 0).
      const double half = 0.5 * s.length, h = std::max(half - s.radius, 0.0);
      out.capsule = {s.pose.p - h * z, s.pose.p + h * z, std::hypot(s.radius, half - h)};
      break;
    }
    case ShapeKind::kMesh: {
      // The smaller (by volume) of two enclosing shapes: the bounding box in
      // the mesh's frame, and the capsule along the vertices' principal axis
      // (a link's mesh is often long and round; a box link would be taken as
      // the box's own, fatter, enclosing capsule).
      Eigen::Vector3d lo = Eigen::Vector3d::Constant(0.0), hi = lo;
      if (s.mesh && !s.mesh->vertices.empty()) {
        lo = hi = s.mesh->vertices.front();
        for (const auto& v : s.mesh->vertices) {
          lo = lo.cwiseMin(v);
          hi = hi.cwiseMax(v);
        }
      }
      out.is_box = true;
      out.box.pose = s.pose;
      out.box.pose.p = s.pose.act(0.5 * (lo + hi));
      out.box.half = 0.5 * (hi - lo);
      if (const std::optional<Capsule> c = enclosingCapsule(s.mesh ? s.mesh->vertices : std::vector<Eigen::Vector3d>{})) {
        const double box_volume = 8.0 * out.box.half.prod();
        const double len = (c->b - c->a).norm();
        const double capsule_volume = std::numbers::pi * c->radius * c->radius * (len + 4.0 / 3.0 * c->radius);
        if (capsule_volume < box_volume) {
          out.is_box = false;
          out.capsule = {s.pose.act(c->a), s.pose.act(c->b), c->radius};
        }
      }
      break;
    }
  }
  return out;
}

ApproxShape transformed(const ApproxShape& s, const Pose3d& world_T_frame) {
  ApproxShape out = s;
  if (s.is_box) {
    out.box.pose = world_T_frame * s.box.pose;
  } else {
    out.capsule.a = world_T_frame.act(s.capsule.a);
    out.capsule.b = world_T_frame.act(s.capsule.b);
  }
  return out;
}

void segmentSegment(const Eigen::Vector3d& p1, const Eigen::Vector3d& q1, const Eigen::Vector3d& p2,
                    const Eigen::Vector3d& q2, double* s_out, double* t_out) {
  constexpr double kEps = 1e-18;
  const Eigen::Vector3d d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  double s = 0.0, t = 0.0;
  if (a <= kEps && e <= kEps) {
  } else if (a <= kEps) {
    t = std::clamp(f / e, 0.0, 1.0);
  } else {
    const double c = d1.dot(r);
    if (e <= kEps) {
      s = std::clamp(-c / a, 0.0, 1.0);
    } else {
      const double b = d1.dot(d2), denom = a * e - b * b;
      s = denom > kEps * a * e ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
      t = (b * s + f) / e;
      if (t < 0.0) {
        t = 0.0;
        s = std::clamp(-c / a, 0.0, 1.0);
      } else if (t > 1.0) {
        t = 1.0;
        s = std::clamp((b - c) / a, 0.0, 1.0);
      }
    }
  }
  *s_out = s;
  *t_out = t;
}

namespace {

// Two swept spheres: centres x (on a's segment) and y (on b's), radii ra, rb.
ClosestPoints sphereSphere(const Eigen::Vector3d& x, double ra, const Eigen::Vector3d& y, double rb,
                           const Eigen::Vector3d& fallback_normal) {
  ClosestPoints c;
  const Eigen::Vector3d d = x - y;
  const double n = d.norm();
  c.normal = n > 1e-12 ? Eigen::Vector3d(d / n) : fallback_normal;
  c.distance = n - ra - rb;
  c.on_a = x - ra * c.normal;
  c.on_b = y + rb * c.normal;
  return c;
}

// Signed distance of a point (box frame) to the box, its closest surface
// point and the outward direction there.
double boxSignedDistance(const Eigen::Vector3d& x, const Eigen::Vector3d& h, Eigen::Vector3d* closest,
                         Eigen::Vector3d* normal) {
  const Eigen::Vector3d q = x.cwiseAbs() - h;
  if (q.maxCoeff() > 0.0) {
    const Eigen::Vector3d c = x.cwiseMax(-h).cwiseMin(h);
    const Eigen::Vector3d d = x - c;
    const double n = d.norm();
    if (closest) *closest = c;
    if (normal) *normal = d / n;
    return n;
  }
  int k = 0;
  q.maxCoeff(&k);
  Eigen::Vector3d c = x;
  c[k] = x[k] >= 0.0 ? h[k] : -h[k];
  if (closest) *closest = c;
  if (normal) {
    *normal = Eigen::Vector3d::Zero();
    (*normal)[k] = x[k] >= 0.0 ? 1.0 : -1.0;
  }
  return q[k];
}

}  // namespace

ClosestPoints closestPoints(const Capsule& a, const Capsule& b) {
  double s = 0.0, t = 0.0;
  segmentSegment(a.a, a.b, b.a, b.b, &s, &t);
  const Eigen::Vector3d x = a.a + s * (a.b - a.a), y = b.a + t * (b.b - b.a);
  // Cores that touch: any direction across b's axis will do.
  Eigen::Vector3d axis = b.b - b.a;
  Eigen::Vector3d fallback = axis.norm() > 1e-12 ? axis.unitOrthogonal() : Eigen::Vector3d::UnitZ();
  return sphereSphere(x, a.radius, y, b.radius, fallback);
}

ClosestPoints closestPoints(const Capsule& a, const Box& b) {
  // The signed distance to a convex set is convex, and so is its
  // restriction to the segment: a golden-section search on the segment's
  // parameter finds its minimum (Kiefer 1953), to 0.618^45 of the length.
  const Eigen::Vector3d pa = b.pose.R.transpose() * (a.a - b.pose.p);
  const Eigen::Vector3d pb = b.pose.R.transpose() * (a.b - b.pose.p);
  const Eigen::Vector3d d = pb - pa;
  auto f = [&](double t) { return boxSignedDistance(pa + t * d, b.half, nullptr, nullptr); };
  // (The ends of the segment are candidates too: the search stays inside.)
  const double t = convexArgminOnUnit(f, d.squaredNorm() > 0.0 ? 45 : 0);
  const Eigen::Vector3d x = pa + t * d;
  Eigen::Vector3d c, n;
  const double sd = boxSignedDistance(x, b.half, &c, &n);
  ClosestPoints out;
  out.normal = b.pose.R * n;
  out.distance = sd - a.radius;
  out.on_b = b.pose.act(c);
  out.on_a = b.pose.act(x) - a.radius * out.normal;
  return out;
}

double boxSignedDistance(const Box& b, const Eigen::Vector3d& x) {
  return boxSignedDistance(b.pose.R.transpose() * (x - b.pose.p), b.half, nullptr, nullptr);
}

ClosestPoints closestPoints(const Capsule& a, const ApproxShape& b) {
  return b.is_box ? closestPoints(a, b.box) : closestPoints(a, b.capsule);
}

}  // namespace ikbench
