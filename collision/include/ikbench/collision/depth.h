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
// * box with sphere/capsule, box with box: A - B is a zonotope (the box's
//   three half-axes and the segment's half-vector, or both boxes' six
//   half-axes, as generators) swept by a ball of the radii's sum. With the
//   origin outside the zonotope, depth = r - its distance to the zonotope;
//   inside, depth = r + min over the zonotope's facet normals n of its support
//   h(n) = n.c + sum |n.g_i|, and a zonotope's facet normals are the cross
//   products of pairs of its generators (with the generators' own directions
//   where a box face is one): the separating-axis test (Gottschalk, Lin &
//   Manocha 1996, "OBBTree", SIGGRAPH) read as an exact depth.
// Cylinders and meshes have no closed form here (nullopt).
#pragma once

#include <optional>

#include "ikbench/collision/shapes.h"

namespace ikbench {

// The penetration depth [m] of shapes a and b, each placed by its world pose
// (world_T_shape; the shapes' own `pose` is ignored): >= 0, and 0 when they do
// not overlap. nullopt when either is a cylinder or a mesh.
std::optional<double> penetrationDepth(const Shape& a, const Pose3d& world_T_a, const Shape& b,
                                       const Pose3d& world_T_b);

}  // namespace ikbench
