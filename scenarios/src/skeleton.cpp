// Anatomical joint limits written into a skeleton's Model (skeleton.h).
#include "ikbench/scenarios/skeleton.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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

namespace {

struct Segment {
  double mass_fraction;  // of the total body mass
  double com_fraction;   // along the bone, from the joint toward its child
  bool trunk;            // follows the trunk child at a branching joint
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Winter, Table 4.1: mass fraction and centre-of-mass location from the
// proximal end. Limbs point away from the trunk, as BVH bones do. The trunk
// chain of a BVH skeleton runs upward from the hips, against Winter's
// proximal-to-distal direction (top to bottom), so the trunk fractions are
// 1 - Winter's: pelvis 0.105 -> 0.895, abdomen 0.44 -> 0.56, thorax 0.82 -> 0.18.
const Segment* segmentOf(const std::string& name, bool skeleton_has_neck) {
  static const Segment kHand{0.006, 0.506, false}, kForearm{0.016, 0.430, false}, kUpperArm{0.028, 0.436, false},
      kThigh{0.100, 0.433, false}, kShank{0.0465, 0.433, false}, kFoot{0.0145, 0.50, false},
      kHeadNeck{0.081, 1.0, true}, kHead{0.081, 0.5, false}, kPelvis{0.142, 0.895, true},
      kAbdomen{0.139, 0.56, true}, kThorax{0.216, 0.18, true};
  const std::string n = lower(name);
  if (has(n, "hand") || has(n, "wrist")) return &kHand;
  if (has(n, "forearm") || has(n, "lowerarm")) return &kForearm;
  if (has(n, "shoulder") || has(n, "clavicle") || has(n, "collar")) return nullptr;
  if (has(n, "arm")) return &kUpperArm;
  if (has(n, "upleg") || has(n, "thigh") || has(n, "upperleg")) return &kThigh;
  if (has(n, "leg") || has(n, "shin") || has(n, "calf")) return &kShank;
  if (has(n, "toe")) return nullptr;
  if (has(n, "foot") || has(n, "ankle")) return &kFoot;
  if (has(n, "neck")) return &kHeadNeck;
  if (has(n, "head")) return skeleton_has_neck ? nullptr : &kHead;
  if (has(n, "hip") || has(n, "pelvis")) return &kPelvis;
  if (has(n, "spine") || has(n, "abdomen")) return &kAbdomen;
  if (has(n, "chest") || has(n, "thorax")) return &kThorax;
  return nullptr;
}

bool isTrunkName(const std::string& name) {
  const std::string n = lower(name);
  return has(n, "spine") || has(n, "chest") || has(n, "neck") || has(n, "head") || has(n, "thorax") ||
         has(n, "abdomen");
}

}  // namespace

double assignAnthropometricMasses(std::vector<JointSpec>& joints, double body_mass) {
  if (!(body_mass > 0.0) || !std::isfinite(body_mass))
    throw std::invalid_argument(fmt::format("skeleton body mass {} kg: expected a finite mass > 0", body_mass));
  bool neck = false;
  for (const JointSpec& j : joints) neck = neck || has(lower(j.name), "neck");
  double assigned = 0.0;
  const int n = static_cast<int>(joints.size());
  for (int i = 0; i < n; ++i) {
    const Segment* seg = segmentOf(joints[i].name, neck);
    if (!seg) continue;
    // The bone: the rest offset of the child (the trunk child at a branch;
    // the mean of the children's offsets when none continues the trunk).
    Eigen::Vector3d bone = Eigen::Vector3d::Zero();
    int children = 0;
    for (int c = i + 1; c < n; ++c) {
      if (joints[c].parent != i) continue;
      if (seg->trunk && isTrunkName(joints[c].name)) {
        bone = joints[c].parent_T_joint.p;
        children = 1;
        break;
      }
      bone += joints[c].parent_T_joint.p;
      ++children;
    }
    if (children == 0) continue;  // a leaf (BVH End Site "<joint>_end") has no bone
    if (children > 1) bone /= children;
    joints[i].body_mass = seg->mass_fraction * body_mass;
    joints[i].body_com = seg->com_fraction * bone;
    assigned += seg->mass_fraction;
  }
  return assigned;
}

}  // namespace ikbench
