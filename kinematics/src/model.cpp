#include "ikbench/kinematics/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace ikbench {

int configSize(JointType t) {
  switch (t) {
    case JointType::kRevolute:
    case JointType::kPrismatic: return 1;
    case JointType::kBall: return 4;
    case JointType::kFree: return 7;
    case JointType::kFixed: return 0;
  }
  return 0;
}

int tangentSize(JointType t) {
  switch (t) {
    case JointType::kRevolute:
    case JointType::kPrismatic: return 1;
    case JointType::kBall: return 3;
    case JointType::kFree: return 6;
    case JointType::kFixed: return 0;
  }
  return 0;
}

namespace {
bool allFinite(const Eigen::MatrixXd& m) { return m.allFinite(); }
}  // namespace

Model::Model(std::vector<JointSpec> joints, std::string name)
    : name_(std::move(name)), joints_(std::move(joints)) {
  const int n = static_cast<int>(joints_.size());
  idx_q_.resize(n);
  idx_v_.resize(n);
  rest_identity_.resize(n);
  principal_axis_.assign(n, 0);
  children_.assign(n, {});
  std::unordered_set<std::string> joint_names, body_names;
  for (int i = 0; i < n; ++i) {
    JointSpec& j = joints_[i];
    const std::string who = fmt::format("model '{}': joint {} '{}'", name_, i, j.name);
    if (j.name.empty()) throw ModelError(fmt::format("model '{}': joint {} has an empty name", name_, i));
    if (!joint_names.insert(j.name).second) throw ModelError(who + ": duplicate joint name");
    if (j.body_name.empty()) j.body_name = j.name;
    if (!body_names.insert(j.body_name).second)
      throw ModelError(fmt::format("{}: duplicate body name '{}'", who, j.body_name));
    if (j.parent < -1 || j.parent >= i)
      throw ModelError(fmt::format("{}: parent {} must be -1 or a joint before it (topological order, parent < index)",
                                   who, j.parent));
    if (!allFinite(j.parent_T_joint.R) || !allFinite(j.parent_T_joint.p))
      throw ModelError(who + ": parent_T_joint contains NaN or infinity");
    const Eigen::Matrix3d RtR = j.parent_T_joint.R.transpose() * j.parent_T_joint.R;
    if (!RtR.isApprox(Eigen::Matrix3d::Identity(), 1e-6) || j.parent_T_joint.R.determinant() < 0)
      throw ModelError(who + ": parent_T_joint rotation is not a proper rotation matrix");
    rest_identity_[i] = j.parent_T_joint.R == Eigen::Matrix3d::Identity();
    if (j.type == JointType::kRevolute || j.type == JointType::kPrismatic) {
      if (!j.axis.allFinite()) throw ModelError(who + ": axis contains NaN or infinity");
      // Scale by the largest component first: the norm of (1e200, 0, 0) overflows.
      const double scale = j.axis.cwiseAbs().maxCoeff();
      if (scale < 1e-12) throw ModelError(who + ": axis is zero (expected a non-zero direction)");
      j.axis = (j.axis / scale).normalized();
      for (int k = 0; k < 3; ++k)
        if (std::abs(j.axis[k]) == 1.0 && j.axis[(k + 1) % 3] == 0.0 && j.axis[(k + 2) % 3] == 0.0)
          principal_axis_[i] = static_cast<signed char>(j.axis[k] > 0.0 ? k + 1 : -(k + 1));
    }
    if (j.type == JointType::kBall || j.type == JointType::kFree) only_scalar_ = false;
    const int nv = tangentSize(j.type);
    auto check_size = [&](Eigen::VectorXd& v, const char* field, double fill) {
      if (v.size() == 0) {
        v = Eigen::VectorXd::Constant(nv, fill);
      } else if (v.size() != nv) {
        throw ModelError(fmt::format("{}: {} has {} entries, expected {} (one per DOF of a {} joint)", who, field,
                                     v.size(), nv, toString(j.type)));
      }
    };
    const double inf = std::numeric_limits<double>::infinity();
    check_size(j.lower, "lower limit", -inf);
    check_size(j.upper, "upper limit", inf);
    check_size(j.weight, "weight", 1.0);
    for (int k = 0; k < nv; ++k) {
      if (std::isnan(j.lower[k]) || std::isnan(j.upper[k]))
        throw ModelError(fmt::format("{}: limit of DOF {} is NaN", who, k));
      if (j.lower[k] > j.upper[k])
        throw ModelError(fmt::format("{}: lower limit {} > upper limit {} for DOF {}", who, j.lower[k], j.upper[k], k));
      // A rotation's limits bound the components of its rotation vector relative to the rest
      // orientation: the box must hold the rest orientation (0), so that the neutral
      // configuration is within the limits and clamping a rotation vector into the box never
      // lengthens it past pi (where the exponential map would wrap it out of the box again).
      const bool rotation = j.type == JointType::kBall || (j.type == JointType::kFree && k >= 3);
      if (rotation && !(j.lower[k] <= 0.0 && 0.0 <= j.upper[k]))
        throw ModelError(fmt::format("{}: rotation limits [{}, {}] of DOF {} do not contain 0 (the rest orientation; "
                                     "a ball or free joint's limits bound its rotation vector around it)",
                                     who, j.lower[k], j.upper[k], k));
      if (std::isfinite(j.lower[k]) && std::isfinite(j.upper[k]) && !std::isfinite(j.upper[k] - j.lower[k]))
        throw ModelError(fmt::format("{}: limits [{}, {}] of DOF {} are too far apart (upper - lower overflows; use "
                                     "infinite limits for an unlimited DOF)",
                                     who, j.lower[k], j.upper[k], k));
      if (!(j.weight[k] > 0.0) || !std::isfinite(j.weight[k]))
        throw ModelError(fmt::format("{}: weight of DOF {} is {}, expected a finite value > 0", who, k, j.weight[k]));
    }
    if (!std::isfinite(j.body_mass) || j.body_mass < 0.0)
      throw ModelError(fmt::format("{}: body mass {} must be finite and >= 0 [kg]", who, j.body_mass));
    if (!j.body_com.allFinite()) throw ModelError(who + ": body centre of mass contains NaN or infinity");
    idx_q_[i] = nq_;
    idx_v_[i] = nv_;
    nq_ += configSize(j.type);
    nv_ += nv;
    if (j.parent >= 0) children_[j.parent].push_back(i);
  }
  subtree_mass_.resize(n);
  for (int i = 0; i < n; ++i) subtree_mass_[i] = joints_[i].body_mass;
  for (int i = n - 1; i >= 0; --i) {
    if (joints_[i].parent >= 0) subtree_mass_[joints_[i].parent] += subtree_mass_[i];
    else total_mass_ += subtree_mass_[i];
  }
  lower_.resize(nv_);
  upper_.resize(nv_);
  weight_.resize(nv_);
  dof_joint_.resize(nv_);
  for (int i = 0; i < n; ++i) {
    const int nv = tangentSize(joints_[i].type);
    lower_.segment(idx_v_[i], nv) = joints_[i].lower;
    upper_.segment(idx_v_[i], nv) = joints_[i].upper;
    weight_.segment(idx_v_[i], nv) = joints_[i].weight;
    for (int k = 0; k < nv; ++k) dof_joint_[idx_v_[i] + k] = i;
  }
}

bool Model::hasFiniteLimits(int dof) const { return std::isfinite(lower_[dof]) && std::isfinite(upper_[dof]); }

int Model::bodyIndex(std::string_view name) const {
  for (int i = 0; i < numJoints(); ++i)
    if (joints_[i].body_name == name) return i;
  for (int i = 0; i < numJoints(); ++i)
    if (joints_[i].name == name) return i;
  return -1;
}

std::vector<int> Model::leaves() const {
  std::vector<int> out;
  for (int i = 0; i < numJoints(); ++i)
    if (children_[i].empty()) out.push_back(i);
  return out;
}

bool Model::isChain() const {
  int roots = 0;
  for (int i = 0; i < numJoints(); ++i) {
    if (joints_[i].parent < 0) ++roots;
    if (children_[i].size() > 1) return false;
  }
  return roots <= 1;
}

std::vector<int> Model::supportingJoints(int b) const {
  std::vector<int> out;
  for (int j = b; j >= 0; j = joints_[j].parent)
    if (tangentSize(joints_[j].type) > 0) out.push_back(j);
  return {out.rbegin(), out.rend()};
}

bool Model::hasJointType(JointType t) const {
  for (const auto& j : joints_)
    if (j.type == t) return true;
  return false;
}

Eigen::VectorXd Model::neutralConfiguration() const {
  Eigen::VectorXd q = Eigen::VectorXd::Zero(nq_);
  for (int i = 0; i < numJoints(); ++i) {
    const int iq = idx_q_[i], iv = idx_v_[i];
    switch (joints_[i].type) {
      case JointType::kRevolute:
      case JointType::kPrismatic:
        q[iq] = std::clamp(0.0, lower_[iv], upper_[iv]);
        break;
      case JointType::kBall:
        q[iq + 3] = 1.0;
        break;
      case JointType::kFree:
        for (int k = 0; k < 3; ++k) q[iq + k] = std::clamp(0.0, lower_[iv + k], upper_[iv + k]);
        q[iq + 6] = 1.0;
        break;
      case JointType::kFixed: break;
    }
  }
  return q;
}

Eigen::VectorXd Model::middleConfiguration() const {
  Eigen::VectorXd q = neutralConfiguration();
  for (int i = 0; i < numJoints(); ++i) {
    const JointType t = joints_[i].type;
    if (t != JointType::kRevolute && t != JointType::kPrismatic) continue;
    const int iv = idx_v_[i];
    if (hasFiniteLimits(iv)) q[idx_q_[i]] = 0.5 * (lower_[iv] + upper_[iv]);
  }
  return q;
}

}  // namespace ikbench
