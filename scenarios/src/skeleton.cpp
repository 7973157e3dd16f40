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

// Winter, Table 4.1: mass fraction and centre-of-mass location from the
// proximal end. Limbs point away from the trunk, as BVH bones do. The trunk
// chain of a BVH skeleton runs upward from the hips, against Winter's
// proximal-to-distal direction (top to bottom), so the trunk fractions are
// 1 - Winter's: pelvis 0.105 -> 0.895, abdomen 0.44 -> 0.56, thorax 0.82 -> 0.18.
enum class Seg { kNone, kHand, kForearm, kUpperArm, kThigh, kShank, kFoot, kHeadNeck, kHead, kPelvis, kAbdomen, kThorax };

struct Segment {
  double mass_fraction;  // of the total body mass
  double com_fraction;   // along the bone, from the joint toward its child
  bool trunk;            // follows the trunk child at a branching joint
};

Segment segmentData(Seg s) {
  switch (s) {
    case Seg::kHand: return {0.006, 0.506, false};
    case Seg::kForearm: return {0.016, 0.430, false};
    case Seg::kUpperArm: return {0.028, 0.436, false};
    case Seg::kThigh: return {0.100, 0.433, false};
    case Seg::kShank: return {0.0465, 0.433, false};
    case Seg::kFoot: return {0.0145, 0.50, false};
    case Seg::kHeadNeck: return {0.081, 1.0, true};
    case Seg::kHead: return {0.081, 0.5, false};
    case Seg::kPelvis: return {0.142, 0.895, true};
    case Seg::kAbdomen: return {0.139, 0.56, true};
    case Seg::kThorax: return {0.216, 0.18, true};
    case Seg::kNone: break;
  }
  return {0.0, 0.0, false};
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// The joint's segment by name: the bone that starts at the joint. A
// shoulder joint starts the upper arm unless the skeleton names an arm
// joint on that side (then the shoulder is the clavicle).
Seg segmentOf(const std::string& name, bool has_neck, bool side_has_arm) {
  const std::string n = lower(name);
  if (has(n, "hand") || has(n, "wrist")) return Seg::kHand;
  if (has(n, "forearm") || has(n, "lowerarm") || has(n, "elbow")) return Seg::kForearm;
  if (has(n, "clavicle") || has(n, "collar")) return Seg::kNone;
  if (has(n, "shoulder")) return side_has_arm ? Seg::kNone : Seg::kUpperArm;
  if (has(n, "arm")) return Seg::kUpperArm;
  if (n == "hips" || has(n, "pelvis")) return Seg::kPelvis;
  if (has(n, "hipjoint")) return Seg::kNone;  // CMU's bone from the pelvis centre to the hip
  if (has(n, "upleg") || has(n, "thigh") || has(n, "upperleg") || has(n, "hip")) return Seg::kThigh;
  if (has(n, "leg") || has(n, "shin") || has(n, "calf") || has(n, "knee")) return Seg::kShank;
  if (has(n, "toe")) return Seg::kNone;
  if (has(n, "foot") || has(n, "ankle")) return Seg::kFoot;
  if (has(n, "neck")) return Seg::kHeadNeck;
  if (has(n, "head")) return has_neck ? Seg::kNone : Seg::kHead;
  if (has(n, "spine") || has(n, "abdomen") || has(n, "lowerback")) return Seg::kAbdomen;
  if (has(n, "chest") || has(n, "thorax")) return Seg::kThorax;
  return Seg::kNone;
}

// 'L', 'R' or 'C' (centre) from the usual spellings: Left*, *_L, LThumb, lhand.
char sideOf(const std::string& name) {
  const std::string n = lower(name);
  if (has(n, "left")) return 'L';
  if (has(n, "right")) return 'R';
  const size_t m = n.size();
  if (m >= 2 && n[m - 2] == '_' && (n[m - 1] == 'l' || n[m - 1] == 'r')) return n[m - 1] == 'l' ? 'L' : 'R';
  if (m >= 2 && (name[0] == 'L' || name[0] == 'R') && std::isupper(static_cast<unsigned char>(name[1])))
    return name[0];
  // CMU's lhand / rhand: a side letter before a limb segment's name (not
  // lowerneck, whose rest names no limb).
  if (m >= 2 && (n[0] == 'l' || n[0] == 'r')) {
    const Seg rest = segmentOf(n.substr(1), false, true);
    if (rest == Seg::kHand || rest == Seg::kForearm || rest == Seg::kUpperArm || rest == Seg::kThigh ||
        rest == Seg::kShank || rest == Seg::kFoot)
      return n[0] == 'l' ? 'L' : 'R';
  }
  return 'C';
}

bool isTrunkName(const std::string& name) {
  const std::string n = lower(name);
  return has(n, "spine") || has(n, "chest") || has(n, "neck") || has(n, "head") || has(n, "thorax") ||
         has(n, "abdomen") || has(n, "lowerback");
}

}  // namespace

double assignAnthropometricMasses(std::vector<JointSpec>& joints, double body_mass) {
  if (!(body_mass > 0.0) || !std::isfinite(body_mass))
    throw std::invalid_argument(fmt::format("skeleton body mass {} kg: expected a finite mass > 0", body_mass));
  bool neck = false, chest = false, arm_l = false, arm_r = false, arm_c = false;
  for (const JointSpec& j : joints) {
    const std::string n = lower(j.name);
    neck = neck || has(n, "neck");
    chest = chest || has(n, "chest") || has(n, "thorax");
    if (has(n, "arm") && !has(n, "forearm") && !has(n, "lowerarm")) {
      const char side = sideOf(j.name);
      (side == 'L' ? arm_l : side == 'R' ? arm_r : arm_c) = true;
    }
  }
  // Each segment once per side, the first joint in file order (parents
  // first) taking it: CMU's lhand after LeftWrist, or Neck after lowerneck,
  // get nothing. A second spine joint is the thorax of a skeleton without a chest.
  std::vector<std::pair<Seg, char>> taken;
  double assigned = 0.0;
  const int n = static_cast<int>(joints.size());
  for (int i = 0; i < n; ++i) {
    const char side = sideOf(joints[i].name);
    const bool side_has_arm = side == 'L' ? arm_l : side == 'R' ? arm_r : (arm_l || arm_r || arm_c);
    Seg seg = segmentOf(joints[i].name, neck, side_has_arm);
    auto used = [&](Seg s) { return std::find(taken.begin(), taken.end(), std::make_pair(s, side)) != taken.end(); };
    if (seg == Seg::kAbdomen && used(Seg::kAbdomen) && !chest) seg = Seg::kThorax;
    if (seg == Seg::kNone || used(seg)) continue;
    const Segment data = segmentData(seg);
    // The bone: the rest offset of the child (the trunk child at a branch;
    // the mean of the children's offsets when none continues the trunk).
    Eigen::Vector3d bone = Eigen::Vector3d::Zero();
    int children = 0;
    for (int c = i + 1; c < n; ++c) {
      if (joints[c].parent != i) continue;
      if (data.trunk && isTrunkName(joints[c].name)) {
        bone = joints[c].parent_T_joint.p;
        children = 1;
        break;
      }
      bone += joints[c].parent_T_joint.p;
      ++children;
    }
    if (children == 0) continue;  // a leaf (BVH End Site "<joint>_end") has no bone
    if (children > 1) bone /= children;
    taken.emplace_back(seg, side);
    joints[i].body_mass = data.mass_fraction * body_mass;
    joints[i].body_com = data.com_fraction * bone;
    assigned += data.mass_fraction;
  }
  return assigned;
}

}  // namespace ikbench
