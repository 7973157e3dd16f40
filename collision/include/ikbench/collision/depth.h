// Exact penetration depth of two overlapping convex shapes: the length of the
// shortest translation that separates them (the distance from the origin to
// the boundary of the Minkowski difference A - B; Cameron & Culley 1986,
// "Determining the minimum translational distance between two convex
// polyhedra", ICRA). This is what `min_clearance` reports, negated, for a
// colliding pair.
//
// Closed forms, for every pair of spheres, capsules and boxes:
// * sphere/capsule with sphere/capsule: A - B is the parallelogram of the two
//   segments swept by a ball of radius r_a + r_b, so depth = r_a + r_b - the
//   distance of the segments (Ericson 2005, sec. 4.5.1);
// * the other pairs: each shape is a zonotope core (a box's three half-axes,
//   a capsule's half-segment, none for a sphere) swept by a ball (its radius),
//   so A - B is the zonotope of both cores' generators swept by a ball of the
//   radii's sum. With the origin inside that zonotope (the cores overlap),
//   depth = the radii + min over the zonotope's facet normals n of its support
//   h(n) = sum |n.g_i| - |n.c|, and a zonotope's facet normals are the cross
//   products of pairs of its generators: the separating-axis test (Gottschalk,
//   Lin & Manocha 1996, "OBBTree", SIGGRAPH) read as an exact depth. With the
//   cores apart, depth = the radius less the segment's distance to the box.
// A cylinder enters as its circumscribed prism, a regular 64-gon (the zonogon
// of 32 segments) along its axis: its depth is at most r (1 / cos(pi / 64) - 1),
// 0.12 % of its radius, above the cylinder's. Meshes: nullopt.
#pragma once

#include <optional>

#include "ikbench/collision/shapes.h"

namespace ikbench {

// The penetration depth [m] of shapes a and b, each placed by its world pose
// (world_T_shape; the shapes' own `pose` is ignored): >= 0, and 0 when they do
// not overlap. nullopt when either is a mesh.
std::optional<double> penetrationDepth(const Shape& a, const Pose3d& world_T_a, const Shape& b,
                                       const Pose3d& world_T_b);

}  // namespace ikbench
