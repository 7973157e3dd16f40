// Joint limits for character skeletons (e.g. one loaded from BVH, whose ball
// joints have none): anatomical swing cones and twist ranges on ball joints,
// hinges for knees and elbows, bounds on the free root.
//
// Limits in the Model are boxes on the rotation-vector components of a ball
// joint (model.h); a limit given here is written into that box:
// * a ball joint's twist axis is the coordinate axis e_k of its joint frame
//   nearest to its bone (the sum of the unit rest offsets of its children;
//   e_y if it has none), the same rule the geometric solvers use
//   (solvers/src/backends/geometric_util.h, rotationLimits), so the two agree on which
//   component is twist;
// * `cone` bounds the two swing components to [-cone, cone], `twist` the
//   twist component to [twist_lo, twist_hi] (each may be left infinite);
// * `hinge` replaces the ball joint by a revolute joint about `axis` (joint
//   frame) with range [lo, hi] (knees, elbows): its configuration shrinks
//   from 4 to 1 entry, so BVH motion frames no longer fit the model;
// * `translation` bounds each component of a free root's translation to
//   [-translation, translation] m about its rest position (so random
//   configurations stay near it); `cone` and `twist` bound its rotation.
#pragma once

#include <Eigen/Core>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ikbench/kinematics/model.h"

namespace ikbench {

struct JointLimitSpec {
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  std::string joint;  // Model joint name
  double cone = kInf;                          // swing half-width [rad]
  double twist_lo = -kInf, twist_hi = kInf;    // [rad]
  bool hinge = false;
  Eigen::Vector3d axis = Eigen::Vector3d::UnitX();  // hinge axis, joint frame
  double lo = -kInf, hi = kInf;                     // hinge range [rad]
  double translation = kInf;                        // free root [m]
};

// Index k of the twist axis e_k of joint j of `joints` (see above).
int skeletonTwistAxis(const std::vector<JointSpec>& joints, int j);

// A copy of `model` with the given limits (every other joint unchanged),
// named `name` (default: the model's name + "-limited"). Throws
// std::invalid_argument naming the joint for an unknown joint, a limit that
// does not fit the joint type (cone or hinge on a joint that is not a ball,
// translation on a joint that is not free), a zero axis, or lo > hi.
std::shared_ptr<const Model> constrainSkeleton(const Model& model, const std::vector<JointLimitSpec>& limits,
                                               std::string name = "");

// Anthropometric masses for a character skeleton without inertial data
// (BVH): segment mass fractions of a total body mass `body_mass` [kg] and the
// centre of mass along each segment, from Winter, "Biomechanics and Motor
// Control of Human Movement", Table 4.1 (docs/scenarios.md, "Skeleton
// masses"). A joint's segment is its bone: from the joint to its child (the
// trunk-continuing child where it has several). Segments are recognised by
// joint name (case-insensitive): hand/wrist, forearm/lowerarm, arm/upperarm,
// upleg/thigh, leg/shin/calf, foot/ankle, neck (head and neck), head (only
// when there is no neck), hips/pelvis, spine/abdomen, chest/thorax. Others
// (clavicles, toes, fingers) and leaves (end sites) get no mass. Writes body_mass and
// body_com of `joints`; returns the fraction of body_mass assigned (1 for a
// full humanoid with one of each trunk segment).
double assignAnthropometricMasses(std::vector<JointSpec>& joints, double body_mass);

}  // namespace ikbench
