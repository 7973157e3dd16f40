// URDF robots (via urdfdom) as ikbench Models.
//
// Mapping: the base link becomes a fixed root body (a free root with
// `floating_base`); every URDF joint becomes one Model joint whose body is
// named after its child link (so Model::bodyIndex("tool0") finds the link),
// with parent_T_joint = the joint's <origin> (xyz, then rpy as fixed-axis
// roll-pitch-yaw, R = Rz(yaw) Ry(pitch) Rx(roll)) and its <axis> in the joint
// frame:
//   revolute   -> revolute with the <limit> lower/upper
//   continuous -> revolute without limits
//   prismatic  -> prismatic with the <limit> lower/upper
//   fixed      -> fixed
//   floating   -> free joint (6 DOF, unlimited)
//   planar     -> error (not supported)
// Mimic joints are approximated as FIXED at their offset (the joint's motion
// at q = multiplier * 0 + offset): a mimic follower cannot be expressed as an
// independent DOF; the approximation is listed in UrdfModel::warnings.
// <collision> primitives are kept (UrdfModel::collision), and meshes as
// UrdfOptions::meshes says (mesh_file.h reads and finds them: package://
// through UrdfOptions::package_path and ROS_PACKAGE_PATH, relative paths
// against the URDF's directory; a missing or unreadable mesh is an error
// naming the link and the file); inertias, transmissions and Gazebo blocks
// are ignored.
//
// Errors (SuiteError) name the file, the line where known and what was
// expected: malformed XML, a joint naming an undefined parent or child link,
// two parents for one link, links forming a cycle, NaN / non-numeric values
// in origins, axes or limits, unknown joint types, a tip not below the base.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ikbench/collision/world.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/scenarios/srdf.h"
#include "ikbench/scenarios/suite.h"

namespace ikbench {

// What a link's <collision><mesh> becomes: the triangle mesh itself (FCL's
// BVH of OBBRSS nodes), its convex hull, or nothing (the link gets fitted
// capsules, collision/world.h: the fast approximation).
enum class MeshGeometry { kMesh, kHull, kCapsules };
// "mesh", "hull", "capsules"; SuiteError naming `where` otherwise.
MeshGeometry parseMeshGeometry(const std::string& text, const std::string& where);
std::string toString(MeshGeometry g);

struct UrdfOptions {
  std::string base;            // root link of the model; empty = the URDF's root link
  std::string tip;             // keep only the chain base -> tip; empty = whole tree below base
  bool floating_base = false;  // free root joint (humanoids, quadrupeds)
  // What <collision> meshes become. The default reads none: a model loaded
  // for its kinematics needs no collision geometry (a robot in a scene is
  // loaded with kMesh unless told otherwise: robotFamily, suite.h).
  MeshGeometry meshes = MeshGeometry::kCapsules;
  // Directories searched for package://NAME/... mesh files (NAME/ under each,
  // or the directory itself when its name is NAME), before ROS_PACKAGE_PATH's.
  std::vector<std::string> package_path;
};

struct UrdfModel {
  std::shared_ptr<const Model> model;
  std::string robot_name;
  std::vector<std::string> warnings;  // approximations (mimic joints, ...)
  int mimic_joints = 0;               // mimic joints fixed at their offset
  // The <collision> boxes, spheres, cylinders and meshes of the model's links
  // (in their body frames).
  std::vector<LinkShape> collision;
  // Every link and joint of the file (an SRDF is checked against these, also
  // when only a chain of them was loaded).
  RobotNames names;
};

// Parses a file / an XML string (`source` names it in messages).
UrdfModel loadUrdf(const std::string& path, const UrdfOptions& options = {});
UrdfModel parseUrdf(const std::string& xml, const std::string& source, const UrdfOptions& options = {});

}  // namespace ikbench
