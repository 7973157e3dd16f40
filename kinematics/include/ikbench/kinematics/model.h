// The kinematic model shared by every solver: an immutable tree of joints.
//
// Conventions (said once, used everywhere):
// * Joints are stored in topological order: parent[i] < i, -1 for a root.
//   Every joint carries the body that it moves, so "body i" is the frame
//   after joint i's motion. Goals name bodies by index (Model::bodyIndex).
// * world_T_body[i] = world_T_body[parent] * parent_T_joint[i] * motion_i(q),
//   where motion_i is a rotation about `axis` (revolute), a translation along
//   `axis` (prismatic), a free rotation (ball), a translation plus rotation
//   (free root) or the identity (fixed), all expressed in the joint frame.
// * Configuration q has nq entries, the tangent (velocity) space nv entries.
//     type       nq  nv   q layout                     tangent layout
//     revolute    1   1   angle [rad]                  d angle
//     prismatic   1   1   displacement [m]             d displacement
//     ball        4   3   unit quaternion (x,y,z,w)    rotation vector w
//     free        7   6   position (3) + quat (x,y,z,w) linear v (3), rotation w (3)
//     fixed       0   0
//   Rotational tangents are applied on the left in the joint frame:
//   R <- exp(w) R (see config.h integrate()); free-root translations add in the
//   joint frame. Functions say whether they take an nq- or an nv-sized vector.
// * Limits and weights are per tangent DOF (nv-sized). For a ball joint (and
//   the rotation of a free root) the limits bound the components of the
//   rotation vector log(R) of the joint rotation, and must contain 0 (the rest
//   orientation). Infinite limits are allowed; finite ones must have a finite span.
// * The DOF weight is a motion cost ("stiffness"): weighted solvers minimise
//   dv^T W dv, so a DOF with weight 4 moves half as far as one with weight 1.
// * Each body may carry a mass [kg] and the position of its centre of mass in
//   the body frame (for centre-of-mass goals). Masses default to 0: a model
//   (or subtree) of total mass 0 has no centre of mass.
#pragma once

#include <Eigen/Core>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ikbench/core/enum_table.h"
#include "ikbench/kinematics/pose.h"

namespace ikbench {

enum class JointType { kRevolute, kPrismatic, kBall, kFixed, kFree };

inline constexpr EnumTable<JointType, 5> kJointTypeNames{{{
                                                             {JointType::kRevolute, "revolute"},
                                                             {JointType::kPrismatic, "prismatic"},
                                                             {JointType::kBall, "ball"},
                                                             {JointType::kFixed, "fixed"},
                                                             {JointType::kFree, "free"},
                                                         }},
                                                         "joint type"};
inline std::string_view toString(JointType t) { return kJointTypeNames.name(t); }
// Configuration / tangent sizes of one joint of this type.
int configSize(JointType t);
int tangentSize(JointType t);

// The description of one joint, as given to the Model constructor.
struct JointSpec {
  std::string name;
  // Optional name of the body the joint moves (for URDF: the child link).
  // Defaults to the joint name.
  std::string body_name;
  int parent = -1;
  JointType type = JointType::kFixed;
  Pose3d parent_T_joint;  // rest transform relative to the parent body
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();  // revolute / prismatic
  // Per tangent DOF; empty means (-inf, +inf) and weight 1.
  Eigen::VectorXd lower, upper, weight;
  // Inertial data of the body the joint moves: mass [kg] (finite, >= 0) and
  // its centre of mass in the body frame [m] (URDF <inertial><origin xyz>).
  double body_mass = 0.0;
  Eigen::Vector3d body_com = Eigen::Vector3d::Zero();
};

// Thrown by the Model constructor; what() names the joint and the field.
class ModelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Model {
 public:
  // Validates and builds; throws ModelError with a message naming the joint
  // and the field for: parent out of order, zero/NaN axis, lower > upper, NaN
  // anywhere, non-positive weight, wrong limit size, duplicate names,
  // negative or non-finite body mass, non-finite centre of mass.
  explicit Model(std::vector<JointSpec> joints, std::string name = "");

  const std::string& name() const { return name_; }
  int numJoints() const { return static_cast<int>(joints_.size()); }
  int nq() const { return nq_; }
  int nv() const { return nv_; }

  const JointSpec& joint(int i) const { return joints_[i]; }
  JointType type(int i) const { return joints_[i].type; }
  int parent(int i) const { return joints_[i].parent; }
  const Pose3d& parentTJoint(int i) const { return joints_[i].parent_T_joint; }
  const Eigen::Vector3d& axis(int i) const { return joints_[i].axis; }
  // True when parent_T_joint has an identity rotation (lets FK skip a product).
  bool restRotationIsIdentity(int i) const { return rest_identity_[i] != 0; }
  // For a revolute or prismatic joint whose axis is exactly +-e_k (the usual
  // URDF/DH case): k + 1 with the axis' sign, e.g. -3 for (0, 0, -1); else 0.
  // Lets FK rotate two columns instead of multiplying by a full rotation.
  int principalAxis(int i) const { return principal_axis_[i]; }
  // True when every joint is revolute, prismatic or fixed: then q and the
  // tangent space coincide (nq == nv, idxQ == idxV), and integrating or
  // clamping a configuration is a plain vector operation.
  bool hasOnlyScalarJoints() const { return only_scalar_; }
  int idxQ(int i) const { return idx_q_[i]; }
  int idxV(int i) const { return idx_v_[i]; }
  int jointNq(int i) const { return configSize(joints_[i].type); }
  int jointNv(int i) const { return tangentSize(joints_[i].type); }

  // Mass [kg] and centre of mass (body frame) of body i; total mass of the
  // model, and of the subtree rooted at body i (body i and its descendants).
  double bodyMass(int i) const { return joints_[i].body_mass; }
  const Eigen::Vector3d& bodyCom(int i) const { return joints_[i].body_com; }
  double totalMass() const { return total_mass_; }
  double subtreeMass(int i) const { return subtree_mass_[i]; }

  // nv-sized limits and weights over all DOFs.
  const Eigen::VectorXd& lowerLimits() const { return lower_; }
  const Eigen::VectorXd& upperLimits() const { return upper_; }
  const Eigen::VectorXd& dofWeights() const { return weight_; }
  bool hasFiniteLimits(int dof) const;
  // The joint owning tangent DOF `dof`.
  int dofJoint(int dof) const { return dof_joint_[dof]; }

  // Body index by body name, then joint name; -1 if absent.
  int bodyIndex(std::string_view name) const;
  const std::string& bodyName(int i) const { return joints_[i].body_name; }
  // Children lists and leaves (bodies without children).
  const std::vector<int>& children(int i) const { return children_[i]; }
  std::vector<int> leaves() const;
  // True when every joint has at most one child (a chain, possibly with
  // fixed side branches it counts as a tree).
  bool isChain() const;
  // Joints with DOFs between the world and body `b` (root first).
  std::vector<int> supportingJoints(int b) const;
  bool hasJointType(JointType t) const;

  // Neutral configuration (nq): zero angles/displacements, identity rotations,
  // clamped into the limits.
  Eigen::VectorXd neutralConfiguration() const;
  // Middle of the limits (nq) where finite, neutral otherwise ("nominal" seed).
  Eigen::VectorXd middleConfiguration() const;

 private:
  std::string name_;
  std::vector<JointSpec> joints_;
  std::vector<int> idx_q_, idx_v_, dof_joint_;
  std::vector<char> rest_identity_;
  std::vector<signed char> principal_axis_;
  bool only_scalar_ = true;
  std::vector<std::vector<int>> children_;
  Eigen::VectorXd lower_, upper_, weight_;
  std::vector<double> subtree_mass_;
  double total_mass_ = 0.0;
  int nq_ = 0, nv_ = 0;
};

}  // namespace ikbench
