// Collision geometry: primitive shapes with a pose, and the closest-point
// distances between them that the inner loop of a solver uses.
//
// Units are metres. A shape's pose is frame_T_shape: for an obstacle the
// frame is the world (the robot model's root frame), for a link shape the
// link's body frame. Capsules and cylinders run along the shape's z axis,
// centred on its origin (FCL's convention); a box is centred on its origin
// with full side lengths `size`.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ikbench/core/enum_table.h"
#include "ikbench/kinematics/pose.h"

namespace ikbench {

enum class ShapeKind { kBox, kSphere, kCapsule, kCylinder, kMesh };
inline constexpr EnumTable<ShapeKind, 5> kShapeKindNames{{{
                                                             {ShapeKind::kBox, "box"},
                                                             {ShapeKind::kSphere, "sphere"},
                                                             {ShapeKind::kCapsule, "capsule"},
                                                             {ShapeKind::kCylinder, "cylinder"},
                                                             {ShapeKind::kMesh, "mesh"},
                                                         }},
                                                         "shape type"};
inline std::string_view toString(ShapeKind k) { return kShapeKindNames.name(k); }

// A triangle mesh: vertices and triangles (three vertex indices each).
struct TriangleMesh {
  std::vector<Eigen::Vector3d> vertices;
  std::vector<Eigen::Vector3i> triangles;
};

struct Shape {
  ShapeKind kind = ShapeKind::kSphere;
  std::string name;
  Eigen::Vector3d size = Eigen::Vector3d::Zero();  // box: side lengths x, y, z [m]
  double radius = 0.0;                             // sphere, capsule, cylinder [m]
  double length = 0.0;                             // capsule, cylinder: along z, caps excluded [m]
  Pose3d pose;                                     // frame_T_shape
  std::shared_ptr<const TriangleMesh> mesh;        // kMesh (vertices in the shape frame)
  std::string file;                                // kMesh: the file it came from (for results)
  // kMesh: the mesh is a convex polytope (a hull), checked as a solid
  // (fcl::Convex) rather than as a surface of triangles (FCL's BVH).
  bool convex = false;

  static Shape box(std::string name, const Eigen::Vector3d& size, const Pose3d& pose);
  static Shape sphere(std::string name, double radius, const Pose3d& pose);
  static Shape capsule(std::string name, double radius, double length, const Pose3d& pose);
  static Shape cylinder(std::string name, double radius, double length, const Pose3d& pose);
  // A capsule whose axis runs from a to b (in the frame), radius r.
  static Shape capsuleBetween(std::string name, const Eigen::Vector3d& a, const Eigen::Vector3d& b, double r);
};

// ---- the inner-loop approximation ---------------------------------------------
// Every shape is approximated, for the solvers' inner loop, by a primitive
// whose distance to a segment has a closed form or a convex one-dimensional
// search: a link by a swept sphere (capsule: segment + radius; a sphere is a
// capsule of length 0), an obstacle by a box (boxes; meshes by their bounding
// box or, when it is smaller, their capsule along the principal axis), or a capsule (capsules, spheres; cylinders by the capsule that
// encloses them). Every approximation encloses the exact shape, so the
// approximate distance never exceeds the exact one (up to kFastDistanceSlack):
// "clear by the approximation" implies "clear by FCL".

// A capsule in some frame: segment a-b and radius.
struct Capsule {
  Eigen::Vector3d a = Eigen::Vector3d::Zero(), b = Eigen::Vector3d::Zero();
  double radius = 0.0;
};
// A box in some frame: centre pose and half extents.
struct Box {
  Pose3d pose;
  Eigen::Vector3d half = Eigen::Vector3d::Zero();
};
// The inner-loop form of a shape: a capsule or a box.
struct ApproxShape {
  bool is_box = false;
  Capsule capsule;  // !is_box
  Box box;          // is_box
};
// The capsule along the points' principal axis (through their centroid)
// that encloses them all, with the shortest segment for the smallest such
// radius; nullopt for no points.
std::optional<Capsule> enclosingCapsule(const std::vector<Eigen::Vector3d>& points);
// The enclosing approximation of `s` (in s's frame, i.e. with s.pose applied).
ApproxShape approximate(const Shape& s);
// The same moved by frame_T (world_T_frame * shape).
ApproxShape transformed(const ApproxShape& s, const Pose3d& world_T_frame);

// How much the one-dimensional search of a segment-box distance may
// overestimate it [m].
inline constexpr double kFastDistanceSlack = 1e-7;

// Closest points between two inner-loop shapes (at least one a capsule):
// distance between the surfaces (negative when they overlap, by the overlap
// of the swept spheres along the line of the closest points; -radius sum
// when the segments touch) and the witness points on each surface.
struct ClosestPoints {
  double distance = 0.0;
  Eigen::Vector3d on_a = Eigen::Vector3d::Zero(), on_b = Eigen::Vector3d::Zero();
  // Unit vector from b towards a (the direction that increases the distance
  // when a moves along it); any unit vector when the cores touch.
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
};
ClosestPoints closestPoints(const Capsule& a, const Capsule& b);
ClosestPoints closestPoints(const Capsule& a, const Box& b);
ClosestPoints closestPoints(const Capsule& a, const ApproxShape& b);
// Signed distance of a point (world) to a box: negative inside.
double boxSignedDistance(const Box& b, const Eigen::Vector3d& x);

// The minimiser over [0, 1] of a convex function f: a golden-section search
// (Kiefer 1953) narrowing the interval `iterations` times (to 0.618^iterations
// of its length; none for a constant f), then the two ends, which the search
// never evaluates.
template <class F>
double convexArgminOnUnit(F&& f, int iterations) {
  double lo = 0.0, hi = 1.0;
  if (iterations > 0) {
    constexpr double kG = 0.6180339887498949;
    double x1 = hi - kG * (hi - lo), x2 = lo + kG * (hi - lo);
    double f1 = f(x1), f2 = f(x2);
    for (int it = 0; it < iterations; ++it) {
      if (f1 <= f2) {
        hi = x2;
        x2 = x1;
        f2 = f1;
        x1 = hi - kG * (hi - lo);
        f1 = f(x1);
      } else {
        lo = x1;
        x1 = x2;
        f1 = f2;
        x2 = lo + kG * (hi - lo);
        f2 = f(x2);
      }
    }
  }
  double t = 0.5 * (lo + hi);
  if (f(0.0) <= f(t)) t = 0.0;
  if (f(1.0) < f(t)) t = 1.0;
  return t;
}

// Closest points of two segments: parameters s, t in [0, 1] (Ericson,
// "Real-Time Collision Detection", 2005, sec. 5.1.9).
void segmentSegment(const Eigen::Vector3d& p1, const Eigen::Vector3d& q1, const Eigen::Vector3d& p2,
                    const Eigen::Vector3d& q2, double* s, double* t);

}  // namespace ikbench
