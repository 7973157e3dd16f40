#include "ikbench/scenarios/generators.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench {
namespace {

void checkChainSpec(const ChainSpec& spec, const char* what) {
  const double total = spec.revolute + spec.ball + spec.prismatic;
  if (!(spec.revolute >= 0 && spec.ball >= 0 && spec.prismatic >= 0) || !(total > 0.0) || !std::isfinite(total))
    throw std::invalid_argument(
        fmt::format("{}: joint-type fractions revolute/ball/prismatic must be >= 0 and sum to > 0", what));
  if (!(spec.min_length >= 0.0) || !(spec.max_length >= spec.min_length) || !std::isfinite(spec.max_length))
    throw std::invalid_argument(fmt::format("{}: link lengths need 0 <= min_length ({}) <= max_length ({})", what,
                                            spec.min_length, spec.max_length));
  if (!std::isfinite(spec.limit)) throw std::invalid_argument(fmt::format("{}: limit must be finite", what));
  if (!(spec.prismatic_range > 0.0) || !std::isfinite(spec.prismatic_range))
    throw std::invalid_argument(fmt::format("{}: prismatic_range must be > 0", what));
}

// One random joint: type, axis and limits drawn in this order (the order
// randomChain has always used, so that old seeds give the same chains).
JointSpec randomJoint(const ChainSpec& spec, Rng& rng, int depth) {
  JointSpec j;
  const double total = spec.revolute + spec.ball + spec.prismatic;
  const double u = rng.uniform() * total;
  j.type = u < spec.revolute               ? JointType::kRevolute
           : u < spec.revolute + spec.ball ? JointType::kBall
                                           : JointType::kPrismatic;
  switch (spec.axes) {
    case AxisStyle::kRandom:
      j.axis = rng.unitVector();
      break;
    case AxisStyle::kAlternating:
      j.axis = (depth % 2 == 0) ? Eigen::Vector3d::UnitZ() : Eigen::Vector3d::UnitY();
      break;
    case AxisStyle::kPlanar:
      j.axis = Eigen::Vector3d::UnitY();
      break;
  }
  const int nv = tangentSize(j.type);
  if (j.type == JointType::kPrismatic) {
    j.lower = Eigen::VectorXd::Constant(1, 0.0);
    j.upper = Eigen::VectorXd::Constant(1, spec.prismatic_range);
  } else if (spec.limit_style == LimitStyle::kSymmetric && spec.limit > 0.0) {
    j.lower = Eigen::VectorXd::Constant(nv, -spec.limit);
    j.upper = Eigen::VectorXd::Constant(nv, spec.limit);
  } else if (spec.limit_style == LimitStyle::kRealistic) {
    const double range = spec.limit > 0.0 ? spec.limit : std::numbers::pi;
    j.lower.resize(nv);
    j.upper.resize(nv);
    for (int k = 0; k < nv; ++k) {
      j.lower[k] = -range * rng.uniform(0.3, 1.0);
      j.upper[k] = range * rng.uniform(0.3, 1.0);
    }
  }
  return j;
}

Pose3d translationZ(double z) {
  Pose3d p;
  p.p = Eigen::Vector3d(0, 0, z);
  return p;
}

// Rotation that turns +z away by `spread` towards the direction at azimuth
// `phi` about +z: Rz(phi) Ry(spread).
Pose3d branchRotation(double phi, double spread) {
  Pose3d p;
  p.R = (Eigen::AngleAxisd(phi, Eigen::Vector3d::UnitZ()) * Eigen::AngleAxisd(spread, Eigen::Vector3d::UnitY()))
            .toRotationMatrix();
  return p;
}

struct TreeBuilder {
  const TreeSpec& spec;
  Rng& rng;
  std::vector<JointSpec> joints;
  int tips = 0;

  // Adds `n` joints below `parent`, the first at rest transform `first`, and
  // then either the forks of the next level or a tip.
  void segment(int parent, const Pose3d& first, int n, int level, int depth) {
    double length = 0.0;
    for (int k = 0; k < n; ++k) {
      JointSpec j = randomJoint(spec.joint, rng, depth + k);
      j.name = fmt::format("j{}", joints.size());
      j.parent = parent;
      j.parent_T_joint = k == 0 ? first : translationZ(length);
      joints.push_back(std::move(j));
      parent = static_cast<int>(joints.size()) - 1;
      length = rng.uniform(spec.joint.min_length, spec.joint.max_length);
    }
    if (level == spec.levels) {
      JointSpec tip;
      tip.name = fmt::format("tip{}", tips++);
      tip.parent = parent;
      tip.type = JointType::kFixed;
      tip.parent_T_joint = translationZ(length);
      joints.push_back(std::move(tip));
      return;
    }
    const double jitter = rng.uniform(0.0, 2.0 * std::numbers::pi);
    for (int b = 0; b < spec.branches; ++b) {
      const double phi = jitter + 2.0 * std::numbers::pi * b / spec.branches;
      segment(parent, translationZ(length) * branchRotation(phi, spec.spread), spec.branch_joints, level + 1,
              depth + n);
    }
  }
};

void makeGoalsFor(const Model& model, const Data& data, const std::vector<int>& effectors, const GoalSetSpec& spec,
                  std::vector<Goal>& goals) {
  goals.clear();
  for (int body : effectors) {
    Goal g;
    g.body = body;
    g.kind = spec.kind;
    g.orientation_scale = spec.orientation_scale;
    g.target_position = data.world_T_body[body].p;
    g.target_orientation = data.world_T_body[body].R;
    goals.push_back(g);
  }
  (void)model;
}

// GoalSetType::kIkfast's target configuration (generators.h).
Eigen::VectorXd ikfastConfiguration(const Model& model, Rng& rng) {
  Eigen::VectorXd q = randomConfiguration(model, rng);
  constexpr double kSpecial[] = {0.0, 0.5 * M_PI, -0.5 * M_PI, M_PI};
  for (int j = 0; j < model.numJoints(); ++j) {
    if (model.type(j) != JointType::kRevolute) continue;
    const int d = model.idxV(j);
    if (!(rng.uniform() < 0.5)) continue;
    double inside[4];
    int n = 0;
    for (double v : kSpecial)
      if (v >= model.lowerLimits()[d] && v <= model.upperLimits()[d]) inside[n++] = v;
    if (n > 0) q[model.idxQ(j)] = inside[rng.uniformInt(0, n - 1)];
  }
  return q;
}

// GoalSetType::kPath: per tangent DOF a centre and a radius (half-width) of
// the path within the limits, and three phases.
struct SmoothPath {
  Eigen::VectorXd centre, radius;
  Eigen::MatrixXd phase;  // nv x 3
  double omega = 0.0;     // 2 pi / duration [rad/s]

  SmoothPath(const Model& model, Rng& rng, double duration_s) {
    const int nv = model.nv();
    centre.resize(nv);
    radius.resize(nv);
    phase.resize(nv, 3);
    for (int d = 0; d < nv; ++d) {
      const double lo = model.lowerLimits()[d], hi = model.upperLimits()[d];
      if (std::isfinite(lo) && std::isfinite(hi)) {
        centre[d] = 0.5 * (lo + hi);
        radius[d] = std::min(0.45 * (hi - lo), M_PI);
      } else {
        centre[d] = 0.0;
        radius[d] = 0.5 * M_PI;
      }
      for (int k = 0; k < 3; ++k) phase(d, k) = rng.uniform(0.0, 2.0 * M_PI);
    }
    omega = 2.0 * M_PI / duration_s;
  }
  // The configuration at time t [s]: tangent coordinates centre + radius * s(t)
  // with s a sum of three harmonics normalised to [-1, 1], clamped into the
  // limits (a no-op but for rotation-vector boxes).
  Eigen::VectorXd at(const Model& model, double t) const {
    Eigen::VectorXd v(centre.size());
    for (int d = 0; d < v.size(); ++d) {
      double s = 0.0;
      for (int k = 0; k < 3; ++k) s += std::sin((k + 1) * omega * t + phase(d, k)) / (k + 1);
      v[d] = centre[d] + radius[d] * s / (1.0 + 1.0 / 2 + 1.0 / 3);
    }
    Eigen::VectorXd q = integrate(model, model.neutralConfiguration(), v);
    clampToLimits(model, q);
    return q;
  }
};

// The first (root-most) joint with DOFs supporting `body`.
int firstMovingJoint(const Model& model, int body) {
  const std::vector<int> s = model.supportingJoints(body);
  return s.empty() ? -1 : s.front();
}

}  // namespace

std::shared_ptr<const Model> perturbedModel(const Model& model, double angle, double offset, std::uint64_t seed) {
  if (!(angle >= 0.0) || !std::isfinite(angle) || !(offset >= 0.0) || !std::isfinite(offset))
    throw std::invalid_argument(
        fmt::format("perturbedModel: angle ({}) and offset ({}) must be finite and >= 0", angle, offset));
  std::vector<JointSpec> joints;
  for (int i = 0; i < model.numJoints(); ++i) {
    JointSpec j = model.joint(i);
    if (j.type == JointType::kRevolute || j.type == JointType::kPrismatic) {
      Rng rng(Rng::mix(seed, static_cast<std::uint64_t>(i)));
      const Eigen::Vector3d a = j.axis.normalized();
      Eigen::Vector3d n = rng.unitVector();
      n = (n - n.dot(a) * a).normalized();  // a random direction normal to the axis
      j.axis = Eigen::AngleAxisd(angle, n) * a;
      j.parent_T_joint.p += offset * rng.unitVector();
    }
    joints.push_back(std::move(j));
  }
  return std::make_shared<const Model>(std::move(joints), model.name());
}

std::shared_ptr<const Model> randomChain(const ChainSpec& spec, std::uint64_t seed) {
  if (spec.joints < 1) throw std::invalid_argument(fmt::format("random chain: joints = {} must be >= 1", spec.joints));
  checkChainSpec(spec, "random chain");
  Rng rng(seed);
  std::vector<JointSpec> joints;
  double length = 0.0;  // length of the link leading to the next joint
  for (int i = 0; i < spec.joints; ++i) {
    JointSpec j = randomJoint(spec, rng, i);
    j.name = fmt::format("j{}", i);
    j.parent = i - 1;
    j.parent_T_joint.p = Eigen::Vector3d(0, 0, length);
    joints.push_back(std::move(j));
    length = rng.uniform(spec.min_length, spec.max_length);
  }
  JointSpec tip;
  tip.name = "tip";
  tip.parent = spec.joints - 1;
  tip.type = JointType::kFixed;
  tip.parent_T_joint.p = Eigen::Vector3d(0, 0, length);
  joints.push_back(std::move(tip));
  return std::make_shared<const Model>(std::move(joints), fmt::format("chain{}-s{}", spec.joints, seed));
}

std::shared_ptr<const Model> randomTree(const TreeSpec& spec, std::uint64_t seed) {
  checkChainSpec(spec.joint, "random tree");
  if (spec.trunk < 1) throw std::invalid_argument(fmt::format("random tree: trunk = {} must be >= 1", spec.trunk));
  if (spec.levels < 0 || spec.branches < 1 || spec.branch_joints < 1)
    throw std::invalid_argument("random tree: need levels >= 0, branches >= 1, branch_joints >= 1");
  if (!std::isfinite(spec.spread)) throw std::invalid_argument("random tree: spread must be finite");
  double total = spec.trunk, per_level = 1;
  for (int l = 0; l < spec.levels; ++l) {
    per_level *= spec.branches;
    total += per_level * spec.branch_joints;
  }
  if (total > 10000)
    throw std::invalid_argument(fmt::format("random tree: {} joints is too many (at most 10000)", total));
  Rng rng(seed);
  TreeBuilder b{spec, rng, {}, 0};
  b.segment(-1, Pose3d::Identity(), spec.trunk, 0, 0);
  return std::make_shared<const Model>(std::move(b.joints),
                                       fmt::format("tree{}x{}-s{}", b.tips, static_cast<int>(total), seed));
}

Eigen::VectorXd startConfiguration(const Model& model, StartPolicy policy, Rng& rng, const Eigen::VectorXd* known,
                                   double near_distance) {
  switch (policy) {
    case StartPolicy::kNominal:
      return model.middleConfiguration();
    case StartPolicy::kZero:
      return model.neutralConfiguration();
    case StartPolicy::kRandom:
      return randomConfiguration(model, rng);
    case StartPolicy::kPrevious:
      return model.middleConfiguration();
    case StartPolicy::kNear: {
      if (known == nullptr || known->size() != model.nq())
        throw std::invalid_argument(
            "start 'near:D' needs targets with a known solution (goal sets reachable, ikfast, near_singular)");
      if (!(near_distance >= 0.0) || !std::isfinite(near_distance))
        throw std::invalid_argument(fmt::format("start 'near:D': D = {} must be finite and >= 0", near_distance));
      Eigen::VectorXd dir(model.nv());
      for (int k = 0; k < model.nv(); ++k) dir[k] = rng.normal();
      const double n = dir.norm();
      if (!(n > 0.0)) return *known;
      Eigen::VectorXd q = integrate(model, *known, (near_distance / n) * dir);
      clampToLimits(model, q);
      return q;
    }
  }
  return model.neutralConfiguration();
}

std::string startRegimeName(StartPolicy policy, double near_distance) {
  if (policy == StartPolicy::kNear) return fmt::format("near:{}", near_distance);
  return std::string(toString(policy));
}

void parseStartRegime(std::string_view text, StartPolicy* policy, double* near_distance) {
  constexpr std::string_view kNearPrefix = "near:";
  if (text.substr(0, kNearPrefix.size()) == kNearPrefix) {
    const std::string d(text.substr(kNearPrefix.size()));
    char* end = nullptr;
    const double v = d.empty() ? std::nan("") : std::strtod(d.c_str(), &end);
    if (d.empty() || end != d.c_str() + d.size() || !std::isfinite(v) || v < 0.0 || v > 100.0)
      throw std::invalid_argument(fmt::format(
          "start '{}': expected near:D with D a number in [0, 100] (rad or m, the distance from a known solution)",
          text));
    *policy = StartPolicy::kNear;
    *near_distance = v;
    return;
  }
  const std::optional<StartPolicy> p = kStartPolicyNames.find(text);
  if (!p || *p == StartPolicy::kNear)
    throw std::invalid_argument(
        fmt::format("unknown start '{}' (expected one of: nominal, zero, random, previous, near:D)", text));
  *policy = *p;
}

std::vector<int> effectorBodies(const Model& model, const std::vector<std::string>& names) {
  std::vector<int> out;
  if (names.empty()) {
    for (int leaf : model.leaves())
      if (!model.supportingJoints(leaf).empty()) out.push_back(leaf);
    if (out.empty())
      throw std::invalid_argument(fmt::format("model '{}': no leaf body is moved by any joint", model.name()));
    return out;
  }
  for (const std::string& n : names) {
    const int b = model.bodyIndex(n);
    if (b < 0) {
      std::string known;
      for (int leaf : model.leaves()) known += (known.empty() ? "" : ", ") + model.bodyName(leaf);
      throw std::invalid_argument(
          fmt::format("model '{}': unknown effector body '{}' (leaf bodies: {})", model.name(), n, known));
    }
    out.push_back(b);
  }
  return out;
}

double reachBound(const Model& model, int body) {
  const int first = firstMovingJoint(model, body);
  if (first < 0) return 0.0;
  double reach = 0.0;
  for (int j = body; j != first; j = model.parent(j)) reach += model.parentTJoint(j).p.norm();
  for (int j = body;; j = model.parent(j)) {
    if (model.type(j) == JointType::kPrismatic) {
      const int d = model.idxV(j);
      reach += std::max(std::abs(model.lowerLimits()[d]), std::abs(model.upperLimits()[d]));
    } else if (model.type(j) == JointType::kFree) {
      return std::numeric_limits<double>::infinity();
    }
    if (j == first) break;
  }
  return reach;
}

std::vector<Problem> reachableGoals(const std::shared_ptr<const Model>& model, const GoalSetSpec& spec,
                                    std::uint64_t seed, const std::string& name_prefix) {
  GoalSetSpec s = spec;
  s.type = GoalSetType::kReachable;
  return makeGoals(model, s, seed, name_prefix);
}

std::vector<Problem> makeGoals(const std::shared_ptr<const Model>& model, const GoalSetSpec& spec, std::uint64_t seed,
                               const std::string& name_prefix) {
  if (!model) throw std::invalid_argument("goal set: null model");
  if (spec.count < 0) throw std::invalid_argument(fmt::format("goal set: count = {} must be >= 0", spec.count));
  if (spec.kind == GoalKind::kCentreOfMass)
    throw std::invalid_argument("goal set: kind 'com' is posed by whole-body tasks (wholebody.h), not a goal set");
  if (!(spec.orientation_scale > 0.0) || !std::isfinite(spec.orientation_scale))
    throw std::invalid_argument("goal set: orientation_scale must be finite and > 0");
  const std::vector<int> effectors = effectorBodies(*model, spec.effectors);
  std::vector<Problem> out;
  Data data(*model);
  if (spec.starts < 1 || spec.starts > 1000000)
    throw std::invalid_argument(fmt::format("goal set: starts = {} must be in [1, 1e6]", spec.starts));
  const bool in_order = spec.type == GoalSetType::kTrajectory || spec.type == GoalSetType::kPath;
  if (in_order && spec.starts != 1)
    throw std::invalid_argument("goal set: a path or trajectory is solved in order and has one start (starts = 1)");
  if (static_cast<long>(spec.count) * spec.starts > 1000000)
    throw std::invalid_argument(
        fmt::format("goal set: count x starts = {} is more than 1e6 problems", static_cast<long>(spec.count) * spec.starts));
  out.reserve(static_cast<size_t>(spec.count) * spec.starts);
  auto push = [&](int i, const Eigen::VectorXd& q0) {
    Problem p;
    p.model = model;
    p.name = fmt::format("{}{}", name_prefix, i);
    makeGoalsFor(*model, data, effectors, spec, p.goals);
    p.q0 = q0;
    p.collision = spec.scene;
    out.push_back(std::move(p));
  };
  if (spec.scene && spec.scene->modelPtr() != model)
    throw std::invalid_argument("goal set: the scene is built on another model");
  if (spec.scene && spec.type != GoalSetType::kReachable)
    throw std::invalid_argument(fmt::format("goal set '{}': a family with a scene takes set 'reachable' (targets from "
                                            "collision-free configurations)",
                                            toString(spec.type)));
  // A reachable target's configuration: in a scene, the first draw that is
  // collision-free (and near an obstacle when asked).
  auto targetConfiguration = [&](Rng& rng, int i) {
    Eigen::VectorXd q = randomConfiguration(*model, rng);
    if (!spec.scene) return q;
    for (int draw = 1;; ++draw) {
      forwardKinematics(*model, q, data);
      const CollisionReport r = spec.scene->check(data);
      if (r.collision_free && (spec.obstacle_distance <= 0.0 || r.min_clearance < spec.obstacle_distance)) return q;
      if (draw >= GoalSetSpec::kMaxSceneDraws)
        throw std::invalid_argument(fmt::format(
            "goal set: target {}: no collision-free configuration{} in {} random draws (is the robot inside an "
            "obstacle everywhere?)",
            i, spec.obstacle_distance > 0.0 ? fmt::format(" with a clearance below {} m", spec.obstacle_distance) : "",
            draw));
      q = randomConfiguration(*model, rng);
    }
  };
  // Target t's problems t * starts + k, k < starts, each from its own start:
  // drawn after the target from its stream, or from spec.start_seed's.
  auto pushStarts = [&](int t, Rng& rng, const Eigen::VectorXd* known) {
    for (int k = 0; k < spec.starts; ++k) {
      const int i = t * spec.starts + k;
      if (spec.start_seed) {
        Rng own(Rng::mix(*spec.start_seed, static_cast<std::uint64_t>(i)));
        push(i, startConfiguration(*model, spec.start, own, known, spec.near_distance));
      } else {
        push(i, startConfiguration(*model, spec.start, rng, known, spec.near_distance));
      }
    }
  };

  switch (spec.type) {
    case GoalSetType::kReachable:
    case GoalSetType::kIkfast:
      for (int i = 0; i < spec.count; ++i) {
        Rng rng(Rng::mix(seed, static_cast<std::uint64_t>(i)));
        const Eigen::VectorXd q_target = spec.type == GoalSetType::kIkfast ? ikfastConfiguration(*model, rng)
                                                                           : targetConfiguration(rng, i);
        forwardKinematics(*model, q_target, data);
        pushStarts(i, rng, &q_target);
      }
      break;

    case GoalSetType::kPath: {
      if (!(spec.frame_rate > 0.0) || !std::isfinite(spec.frame_rate))
        throw std::invalid_argument("goal set 'path': frame_rate must be > 0");
      if (spec.start == StartPolicy::kNear)
        throw std::invalid_argument("goal set 'path': starts from the previous answer (start 'near:D' does not apply)");
      Rng rng(seed);
      const SmoothPath path(*model, rng, std::max(spec.count, 1) / spec.frame_rate);
      Eigen::VectorXd q_prev;
      for (int i = 0; i < spec.count; ++i) {
        const Eigen::VectorXd q = path.at(*model, i / spec.frame_rate);
        forwardKinematics(*model, q, data);
        // Problem 0 starts from the policy; later ones (used only when the
        // family is not run in sequence) from the previous frame's config.
        push(i, i == 0 ? startConfiguration(*model, spec.start, rng) : q_prev);
        q_prev = q;
      }
      break;
    }

    case GoalSetType::kUnreachable: {
      if (!hasPosition(spec.kind))
        throw std::invalid_argument("goal set 'unreachable' needs a position component (kind position or pose)");
      if (!(spec.unreachable_factor > 1.0) || !std::isfinite(spec.unreachable_factor))
        throw std::invalid_argument(
            fmt::format("goal set 'unreachable': factor = {} must be > 1", spec.unreachable_factor));
      std::vector<double> reach;
      for (int b : effectors) {
        reach.push_back(reachBound(*model, b));
        if (!std::isfinite(reach.back()))
          throw std::invalid_argument(fmt::format(
              "goal set 'unreachable': effector '{}' has unbounded reach (free joint or unlimited prismatic)",
              model->bodyName(b)));
      }
      for (int i = 0; i < spec.count; ++i) {
        Rng rng(Rng::mix(seed, static_cast<std::uint64_t>(i)));
        const Eigen::VectorXd q_dir = randomConfiguration(*model, rng);
        forwardKinematics(*model, q_dir, data);
        std::vector<Goal> goals;
        makeGoalsFor(*model, data, effectors, spec, goals);
        for (size_t e = 0; e < effectors.size(); ++e) {
          const int first = firstMovingJoint(*model, effectors[e]);
          const int par = model->parent(first);
          const Eigen::Vector3d pivot =
              par < 0 ? model->parentTJoint(first).p : data.world_T_body[par].act(model->parentTJoint(first).p);
          Eigen::Vector3d dir = data.world_T_body[effectors[e]].p - pivot;
          // A configuration that folds the effector onto its pivot gives no
          // direction: fall back to a seeded random one.
          if (dir.norm() < 1e-9) dir = rng.unitVector();
          goals[e].target_position = pivot + spec.unreachable_factor * std::max(reach[e], 1e-3) * dir.normalized();
        }
        const size_t first = out.size();
        pushStarts(i, rng, nullptr);
        for (size_t k = first; k < out.size(); ++k) out[k].goals = goals;
      }
      break;
    }

    case GoalSetType::kNearSingular: {
      if (!(spec.perturbation >= 0.0) || !std::isfinite(spec.perturbation))
        throw std::invalid_argument("goal set 'near_singular': perturbation must be >= 0");
      const Eigen::VectorXd straight = model->neutralConfiguration();
      // Root-most moving joints (no moving ancestor) turn freely so the
      // stretched targets point in varied directions.
      std::vector<bool> root_most(model->numJoints(), false);
      for (int j = 0; j < model->numJoints(); ++j) {
        if (model->jointNv(j) == 0) continue;
        bool moving_ancestor = false;
        for (int a = model->parent(j); a >= 0; a = model->parent(a))
          if (model->jointNv(a) > 0) moving_ancestor = true;
        root_most[j] = !moving_ancestor;
      }
      for (int i = 0; i < spec.count; ++i) {
        Rng rng(Rng::mix(seed, static_cast<std::uint64_t>(i)));
        const Eigen::VectorXd q_rand = randomConfiguration(*model, rng);
        Eigen::VectorXd dq(model->nv());
        for (int k = 0; k < model->nv(); ++k) dq[k] = rng.uniform(-spec.perturbation, spec.perturbation);
        Eigen::VectorXd q = integrate(*model, straight, dq);
        for (int j = 0; j < model->numJoints(); ++j)
          if (root_most[j])
            q.segment(model->idxQ(j), model->jointNq(j)) = q_rand.segment(model->idxQ(j), model->jointNq(j));
        clampToLimits(*model, q);
        forwardKinematics(*model, q, data);
        if (spec.start == StartPolicy::kNominal && spec.starts == 1 && !spec.start_seed)
          push(i, straight);  // the goal set's own start: full stretch
        else
          pushStarts(i, rng, &q);
      }
      break;
    }

    case GoalSetType::kTrajectory: {
      if (!(spec.trajectory_step > 0.0) || !std::isfinite(spec.trajectory_step))
        throw std::invalid_argument("goal set 'trajectory': step must be > 0");
      Rng rng(seed);
      Eigen::VectorXd q = randomConfiguration(*model, rng);
      Eigen::VectorXd q_prev = q;
      Eigen::VectorXd dq(model->nv());
      for (int i = 0; i < spec.count; ++i) {
        if (i > 0) {
          for (int k = 0; k < model->nv(); ++k) dq[k] = rng.uniform(-spec.trajectory_step, spec.trajectory_step);
          q_prev = q;
          q = integrate(*model, q, dq);
          clampToLimits(*model, q);
        }
        forwardKinematics(*model, q, data);
        // Problem 0 starts from the policy; later ones (used only when the
        // family is not run in sequence) from the previous target's config.
        push(i, i == 0 ? startConfiguration(*model, spec.start, rng) : q_prev);
      }
      break;
    }
  }
  return out;
}

}  // namespace ikbench
