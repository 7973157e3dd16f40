// MJCF robots (MuJoCo's XML model format) as ikbench Models, with their
// collision geoms, the way MuJoCo compiles them (MuJoCo XML reference,
// https://mujoco.readthedocs.io/en/stable/XMLreference.html):
//
// * <compiler angle="degree|radian" eulerseq="xyz" autolimits meshdir>:
//   angles (euler, axisangle, hinge ranges) in degrees unless angle="radian";
//   euler angles composed in eulerseq's order, a lowercase axis rotating with
//   the frame (R <- R * R_axis), an uppercase one fixed (R <- R_axis * R).
// * <default> classes (nested, inherited) for <joint> and <geom>: an
//   element's own attribute, else its class's (its `class`, else the nearest
//   enclosing body's `childclass`, else "main"), else its ancestors'.
// * <worldbody> is the fixed root body "world" (its own geoms, a floor, are
//   not the robot's). Each <body> is placed by pos and one of quat (w x y z),
//   axisangle, euler, xyaxes, zaxis relative to its parent; its joints
//   (hinge -> revolute, slide -> prismatic; axis and pos in the body frame,
//   applied in order as MuJoCo's forward kinematics does) become Model joints,
//   a body without one a fixed joint; the body's Model name is its name (its
//   joints' intermediate frames are named after the joints). A joint's range
//   is a limit when limited="true", or limited="auto" (the default) with
//   autolimits (the default) and a range given.
// * <geom>s with contype or conaffinity non-zero (MuJoCo's collision
//   geometry; visual-only geoms have both 0) become LinkShapes: box (half
//   sizes), sphere, capsule and cylinder (radius and half length, or fromto),
//   placed by pos/orientation or fromto; and mesh, naming an <asset><mesh>:
//   a file (assimp: STL, OBJ, ...; found under <compiler meshdir> or
//   assetdir, relative to the model's file, its path stripped with
//   strippath="true"), scaled per axis by its scale, or vertices given inline
//   (their convex hull, as MuJoCo makes it, unless faces are given). The
//   geom's pos and orientation place the mesh's own coordinates in the body,
//   as in the XML (MuJoCo's re-centring on the mesh's inertia frame moves the
//   geom frame, not the surface). UrdfOptions::meshes chooses the triangles,
//   their hull (what MuJoCo's own collision uses) or no mesh (fitted
//   capsules), as for a URDF.
//
// Errors (SuiteError) name the file, the line and the element: ball and free
// joints, a joint's non-zero ref, <include>, <frame>, <attach>, <replicate>,
// <composite>, <flexcomp>, geoms of other types (plane, ellipsoid, hfield,
// sdf) on a body, a primitive fitted to a mesh, a mesh's refpos/refquat, a
// mesh geom naming no asset or a missing file, malformed numbers.
#pragma once

#include <string>

#include "ikbench/scenarios/urdf.h"

namespace ikbench {

// options.base / tip select a chain as for a URDF (bodies by name);
// floating_base is refused (free joints are not read).
UrdfModel loadMjcf(const std::string& path, const UrdfOptions& options = {});
UrdfModel parseMjcf(const std::string& xml, const std::string& source, const UrdfOptions& options = {});

// loadMjcf when `mjcf`, else loadUrdf.
UrdfModel loadRobot(const std::string& path, const UrdfOptions& options, bool mjcf);

}  // namespace ikbench
