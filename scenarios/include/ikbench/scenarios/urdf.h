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
// <collision> primitives are kept (UrdfModel::collision); meshes,
// inertias, transmissions and Gazebo blocks are ignored.
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
#include "ikbench/scenarios/suite.h"

namespace ikbench {

struct UrdfOptions {
  std::string base;            // root link of the model; empty = the URDF's root link
  std::string tip;             // keep only the chain base -> tip; empty = whole tree below base
  bool floating_base = false;  // free root joint (humanoids, quadrupeds)
};

struct UrdfModel {
  std::shared_ptr<const Model> model;
  std::string robot_name;
  std::vector<std::string> warnings;  // approximations (mimic joints, ...)
  int mimic_joints = 0;               // mimic joints fixed at their offset
  // The <collision> boxes, spheres and cylinders of the model's links (in
  // their body frames); meshes are not read.
  std::vector<LinkShape> collision;
};

// Parses a file / an XML string (`source` names it in messages).
UrdfModel loadUrdf(const std::string& path, const UrdfOptions& options = {});
UrdfModel parseUrdf(const std::string& xml, const std::string& source, const UrdfOptions& options = {});

}  // namespace ikbench
