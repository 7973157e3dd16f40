// Anatomical joint limits written into a skeleton's Model (skeleton.h).
#include "ikbench/scenarios/skeleton.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace ikbench {

int skeletonTwistAxis(const std::vector<JointSpec>& joints, int j) {
  Eigen::Vector3d bone = Eigen::Vector3d::Zero();
  for (const JointSpec& c : joints)
    if (c.parent == j && c.parent_T_joint.p.norm() > 0.0) bone += c.parent_T_joint.p.normalized();
  int k = 1;
  if (bone.squaredNorm() > 0.0) bone.cwiseAbs().maxCoeff(&k);
  return k;
}

std::shared_ptr<const Model> constrainSkeleton(const Model& model, const std::vector<JointLimitSpec>& limits,
                                               std::string name) {
  std::vector<JointSpec> joints;
  for (int i = 0; i < model.numJoints(); ++i) joints.push_back(model.joint(i));
  for (const JointLimitSpec& l : limits) {
    int j = -1;
    for (int i = 0; i < model.numJoints(); ++i)
      if (joints[i].name == l.joint) j = i;
    if (j < 0) throw std::invalid_argument(fmt::format("joint limits: no joint '{}' in model '{}'", l.joint, model.name()));
    JointSpec& s = joints[j];
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(fmt::format("joint limits of '{}' ({} joint): {}", l.joint, toString(s.type), what));
    };
    const bool rotation = std::isfinite(l.cone) || std::isfinite(l.twist_lo) || std::isfinite(l.twist_hi);
    if (l.hinge && s.type != JointType::kBall) fail("'hinge' replaces a ball joint");
    if (l.hinge && rotation) fail("a hinge takes a range, not 'cone' or 'twist'");
    if (rotation && s.type != JointType::kBall && s.type != JointType::kFree) fail("'cone' and 'twist' need a ball or free joint");
    if (std::isfinite(l.translation) && s.type != JointType::kFree) fail("'translation' needs a free joint");
    if (!(l.cone >= 0.0)) fail(fmt::format("cone = {} must be >= 0", l.cone));
    if (!(l.twist_lo <= l.twist_hi)) fail(fmt::format("twist range [{}, {}] is empty", l.twist_lo, l.twist_hi));
    if (!(l.translation >= 0.0)) fail(fmt::format("translation = {} must be >= 0", l.translation));
    if (l.hinge) {
      if (!(l.axis.norm() > 0.0) || !l.axis.allFinite()) fail("the hinge axis must be a non-zero vector");
      if (!(l.lo <= l.hi)) fail(fmt::format("hinge range [{}, {}] is empty", l.lo, l.hi));
      s.type = JointType::kRevolute;
      s.axis = l.axis.normalized();
      s.lower = Eigen::VectorXd::Constant(1, l.lo);
      s.upper = Eigen::VectorXd::Constant(1, l.hi);
      s.weight.resize(0);
      continue;
    }
    const int nv = tangentSize(s.type);
    if (s.lower.size() != nv) s.lower = Eigen::VectorXd::Constant(nv, -JointLimitSpec::kInf);
    if (s.upper.size() != nv) s.upper = Eigen::VectorXd::Constant(nv, JointLimitSpec::kInf);
    const int r = s.type == JointType::kFree ? 3 : 0;  // first rotational DOF
    if (s.type == JointType::kFree && std::isfinite(l.translation)) {
      for (int k = 0; k < 3; ++k) {
        s.lower[k] = -l.translation;
        s.upper[k] = l.translation;
      }
    }
    if (rotation) {
      const int tw = skeletonTwistAxis(joints, j);
      for (int k = 0; k < 3; ++k) {
        s.lower[r + k] = k == tw ? l.twist_lo : -l.cone;
        s.upper[r + k] = k == tw ? l.twist_hi : l.cone;
      }
    }
  }
  return std::make_shared<const Model>(std::move(joints), name.empty() ? model.name() + "-limited" : std::move(name));
}

}  // namespace ikbench
