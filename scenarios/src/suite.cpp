// Suite files: JSON (nlohmann-json) naming seeded families of problems.
// The format is documented in README.md (section "Scenarios") and by the
// shipped suites in scenarios/data/suites/. Every error names the file, the
// line (recovered by walking the JSON text along the offending field's path,
// since nlohmann::json keeps no positions), the field and what was expected.
#include "ikbench/scenarios/suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <variant>

#include "ikbench/kinematics/rng.h"
#include "ikbench/scenarios/bvh.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/input_limits.h"
#include "ikbench/scenarios/mjcf.h"
#include "ikbench/scenarios/scene.h"
#include "json_input.h"
#include "ikbench/scenarios/skeleton.h"
#include "ikbench/scenarios/wholebody.h"
#include "ikbench/scenarios/urdf.h"

namespace ikbench {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using namespace json_input;  // Path, Ctx: the typed field access of every JSON input

const std::vector<std::string> kJointKeys = {"revolute", "ball",   "prismatic", "min_length",     "max_length",
                                             "axes",     "limits", "limit",     "prismatic_range"};

ChainSpec parseJointParams(const Ctx& c, const json& o, const Path& p) {
  ChainSpec s;
  s.revolute = c.number(o, p, "revolute", 1.0, 0.0);
  s.ball = c.number(o, p, "ball", 0.0, 0.0);
  s.prismatic = c.number(o, p, "prismatic", 0.0, 0.0);
  if (!(s.revolute + s.ball + s.prismatic > 0.0)) c.fail(p, "revolute + ball + prismatic must be > 0");
  s.min_length = c.number(o, p, "min_length", 0.1, 0.0, 100.0);
  s.max_length = c.number(o, p, "max_length", std::max(0.3, s.min_length), 0.0, 100.0);
  if (s.max_length < s.min_length)
    c.fail(p / "max_length", fmt::format("expected max_length >= min_length ({}), got {}", s.min_length, s.max_length));
  s.axes = c.parseEnumField(o, p, "axes", "random", kAxisStyleNames);
  s.limit_style = c.parseEnumField(o, p, "limits", "none", kLimitStyleNames);
  s.limit = c.number(o, p, "limit", 0.0, 0.0, 100.0);
  if (s.limit_style == LimitStyle::kSymmetric && !(s.limit > 0.0))
    c.fail(p / "limits", "'symmetric' limits need a field 'limit' > 0 [rad]");
  s.prismatic_range = c.number(o, p, "prismatic_range", 0.2, 1e-9, 100.0);
  return s;
}

GoalSetSpec parseGoals(const Ctx& c, const json& f, const Path& fp, int count) {
  GoalSetSpec g;
  g.count = count;
  const json* gj = c.find(f, "goals");
  if (!gj) return g;
  const Path p = fp / "goals";
  c.checkObject(*gj, p);
  c.allowKeys(*gj, p,
              {"set", "kind", "start", "factor", "perturbation", "step", "orientation_scale", "effectors", "starts",
               "frame_rate", "branch_jump", "targets_seed", "near_obstacle"});
  g.type = c.parseEnumField(*gj, p, "set", "reachable", kGoalSetTypeNames);
  g.kind = c.parseEnumField(*gj, p, "kind", "position", kGoalKindNames);
  const bool in_order = g.type == GoalSetType::kTrajectory || g.type == GoalSetType::kPath;
  try {
    parseStartRegime(c.string(*gj, p, "start", in_order ? "previous" : "nominal"), &g.start, &g.near_distance);
  } catch (const std::invalid_argument& e) {
    c.fail(p / "start", e.what());
  }
  g.starts = static_cast<int>(c.integer(*gj, p, "starts", 1, 1, 1000000));
  if (in_order && g.starts != 1) c.fail(p / "starts", "a path or trajectory is solved in order from one start");
  g.frame_rate = c.number(*gj, p, "frame_rate", 100.0, 1e-6, 1e6);
  g.unreachable_factor = c.number(*gj, p, "factor", 1.5, 1.0 + 1e-9, 1e6);
  g.perturbation = c.number(*gj, p, "perturbation", 0.05, 0.0, 10.0);
  g.trajectory_step = c.number(*gj, p, "step", 0.05, 1e-9, 10.0);
  g.orientation_scale = c.number(*gj, p, "orientation_scale", 1.0, 1e-9, 1e6);
  g.effectors = c.strings(*gj, p, "effectors");
  g.obstacle_distance = c.number(*gj, p, "near_obstacle", 0.0, 0.0, 10.0);
  if (g.type == GoalSetType::kUnreachable && !hasPosition(g.kind))
    c.fail(p / "kind", "an 'unreachable' goal set needs kind 'position' or 'pose'");
  return g;
}

// A family's branch_jump from its goals (0.5 rad unless given): a jump
// between consecutive answers far above the path's own per-frame motion.
double parseBranchJump(const Ctx& c, const json& f, const Path& fp) {
  const json* gj = c.find(f, "goals");
  return gj ? c.number(*gj, fp / "goals", "branch_jump", 0.5, 1e-9, 100.0) : 0.5;
}

void finishFamily(Family& fam, const GoalSetSpec& g) {
  fam.goal = std::string(toString(g.kind));
  fam.sequential = g.type == GoalSetType::kTrajectory || g.type == GoalSetType::kPath || g.start == StartPolicy::kPrevious;
  fam.targets = g.type == GoalSetType::kUnreachable ? "unreachable" : "reachable";
  fam.start = startRegimeName(fam.sequential ? StartPolicy::kPrevious : g.start, g.near_distance);
  fam.starts_per_target = g.starts;
  fam.frame_rate = g.type == GoalSetType::kPath ? g.frame_rate : 0.0;
  if (!fam.problems.empty()) {
    fam.dof = fam.problems.front().model->nv();
    fam.effectors = static_cast<int>(fam.problems.front().goals.size());
  }
  for (size_t k = 0; k < fam.problems.size(); ++k) fam.problems[k].name = fmt::format("{}/{}", fam.name, k);
}

// Random models: `models` distinct models from seeds mix(family_seed, m),
// `count` problems spread over them (the first count % models get one more).
template <typename MakeModel>
void randomModelFamily(const Ctx& c, const json& f, const Path& fp, Family& fam, std::uint64_t family_seed,
                       MakeModel make) {
  const int count = static_cast<int>(c.integer(f, fp, "count", std::nullopt, 0, 1000000));
  const int models = static_cast<int>(c.integer(f, fp, "models", 1, 1, 100000));
  const GoalSetSpec g = parseGoals(c, f, fp, count);
  try {
    for (int m = 0; m < models; ++m) {
      const std::uint64_t model_seed = Rng::mix(family_seed, static_cast<std::uint64_t>(m));
      GoalSetSpec gm = g;
      gm.count = count / models + (m < count % models ? 1 : 0);
      if (gm.count == 0) continue;
      auto model = make(model_seed);
      if (static_cast<long>(model->numJoints()) * std::min(models, count) > kMaxFamilyJoints)
        c.fail(fp / "models",
               fmt::format("{} models of {} joints is more than {} joints in one family (the limit)",
                           std::min(models, count), model->numJoints(), kMaxFamilyJoints));
      auto problems = makeGoals(std::move(model), gm, Rng::mix(model_seed, 1), "");
      for (auto& p : problems) fam.problems.push_back(std::move(p));
    }
  } catch (const std::invalid_argument& e) {  // also ModelError
    c.fail(fp, e.what());
  }
  finishFamily(fam, g);
}

// A family's "wholebody" object (docs/wholebody.md), if it has one: its
// problems replace the goal set's. {"start_perturbation": rad, "up": [x, y, z],
// "tasks": [{"kind": "pose"|"position"|"orientation"|"com", "body": name,
// "point": [x, y, z], "priority": int, "weight": w, "target": "start" |
// "random" | "support" | "bound", "distance": [lo, hi] (random), "support":
// [bodies], "margin": m (support), "half_spaces": [[nx, ny, nz, d], ...] |
// "inside_ball" | "outside_ball": {"centre": [x, y, z], "radius": r} (bound)}]}.
bool wholeBodyFamily(const Ctx& c, const json& f, const Path& fp, const std::shared_ptr<const Model>& model,
                     int count, std::uint64_t seed, Family& fam) {
  const json* wj = c.find(f, "wholebody");
  if (!wj) return false;
  if (c.find(f, "goals")) c.fail(fp / "goals", "a family with 'wholebody' tasks takes no goal set");
  const Path wp = fp / "wholebody";
  c.checkObject(*wj, wp);
  c.allowKeys(*wj, wp, {"start_perturbation", "up", "tasks"});
  WholeBodySpec spec;
  spec.count = count;
  spec.start_perturbation = c.number(*wj, wp, "start_perturbation", 0.0, 0.0, 3.15);
  auto vec3 = [&](const json& o, const Path& p, const std::string& key) {
    const json& v = c.require(o, p, key, "an array [x, y, z]");
    if (!v.is_array() || v.size() != 3) c.fail(p / key, fmt::format("expected [x, y, z], got {}", describe(v)));
    Eigen::Vector3d x;
    for (size_t k = 0; k < 3; ++k) {
      if (!v[k].is_number() || !std::isfinite(v[k].get<double>()))
        c.fail(p / key / k, fmt::format("expected a finite number, got {}", describe(v[k])));
      x[static_cast<int>(k)] = v[k].get<double>();
    }
    return x;
  };
  if (c.find(*wj, "up")) spec.up = vec3(*wj, wp, "up");
  if (!(spec.up.norm() > 0.0)) c.fail(wp / "up", "expected a non-zero vector");
  const json& tasks = c.require(*wj, wp, "tasks", "an array of task objects");
  if (!tasks.is_array() || tasks.empty())
    c.fail(wp / "tasks", fmt::format("expected a non-empty array of task objects, got {}", describe(tasks)));
  for (size_t k = 0; k < tasks.size(); ++k) {
    const Path tp = wp / "tasks" / k;
    const json& t = tasks[k];
    c.checkObject(t, tp);
    c.allowKeys(t, tp, {"kind", "body", "point", "priority", "weight", "target", "distance", "support", "margin",
                        "half_spaces", "inside_ball", "outside_ball"});
    WholeBodyTask task;
    task.kind = c.parseEnumField(t, tp, "kind", "position", kGoalKindNames);
    task.body = c.string(t, tp, "body", task.kind == GoalKind::kCentreOfMass ? "" : std::optional<std::string>());
    if (c.find(t, "point")) task.point = vec3(t, tp, "point");
    task.priority = static_cast<int>(c.integer(t, tp, "priority", 0, 0, 1000));
    task.weight = c.number(t, tp, "weight", 1.0, 1e-9, 1e9);
    const std::string target = c.string(t, tp, "target", "start");
    if (target == "start") {
      task.target = TaskTarget::kStart;
    } else if (target == "random") {
      task.target = TaskTarget::kRandom;
      const json& dj = c.require(t, tp, "distance", "an array [lo, hi] [m]");
      if (!dj.is_array() || dj.size() != 2 || !dj[0].is_number() || !dj[1].is_number() ||
          !(0.0 <= dj[0].get<double>() && dj[0].get<double>() <= dj[1].get<double>() && dj[1].get<double>() < 1e6))
        c.fail(tp / "distance", fmt::format("expected [lo, hi] with 0 <= lo <= hi [m], got {}", describe(dj)));
      task.distance_lo = dj[0].get<double>();
      task.distance_hi = dj[1].get<double>();
    } else if (target == "support") {
      task.target = TaskTarget::kSupport;
      task.support = c.strings(t, tp, "support");
      task.margin = c.number(t, tp, "margin", 0.0, -10.0, 10.0);
    } else if (target == "bound") {
      task.target = TaskTarget::kBound;
      if (const json* hs = c.find(t, "half_spaces")) {
        if (!hs->is_array() || hs->empty())
          c.fail(tp / "half_spaces", fmt::format("expected an array of [nx, ny, nz, d], got {}", describe(*hs)));
        task.bound.kind = BoundKind::kHalfSpaces;
        task.bound.normals.resize(static_cast<Eigen::Index>(hs->size()), 3);
        task.bound.offsets.resize(static_cast<Eigen::Index>(hs->size()));
        for (size_t r = 0; r < hs->size(); ++r) {
          const json& row = (*hs)[r];
          bool ok = row.is_array() && row.size() == 4;
          for (size_t i = 0; ok && i < 4; ++i) ok = row[i].is_number() && std::isfinite(row[i].get<double>());
          if (!ok) c.fail(tp / "half_spaces" / r, fmt::format("expected [nx, ny, nz, d], got {}", describe(row)));
          const Eigen::Vector3d n(row[0].get<double>(), row[1].get<double>(), row[2].get<double>());
          if (!(n.norm() > 0.0)) c.fail(tp / "half_spaces" / r, "the normal is zero");
          // Normalised, with d scaled alike: the same half-space n . p <= d.
          task.bound.normals.row(static_cast<Eigen::Index>(r)) = n.normalized().transpose();
          task.bound.offsets[static_cast<Eigen::Index>(r)] = row[3].get<double>() / n.norm();
        }
      } else {
        const bool inside = c.find(t, "inside_ball") != nullptr;
        const std::string key = inside ? "inside_ball" : "outside_ball";
        const json& bj = c.require(t, tp, key, "a bound: half_spaces, inside_ball or outside_ball");
        c.checkObject(bj, tp / key);
        c.allowKeys(bj, tp / key, {"centre", "radius"});
        task.bound.kind = inside ? BoundKind::kInsideBall : BoundKind::kOutsideBall;
        task.bound.centre = vec3(bj, tp / key, "centre");
        task.bound.radius = c.number(bj, tp / key, "radius", std::nullopt, 0.0, 1e6);
      }
    } else {
      c.fail(tp / "target", fmt::format("'{}': expected start, random, support or bound", target));
    }
    if ((task.target == TaskTarget::kSupport || task.target == TaskTarget::kBound) &&
        task.kind != GoalKind::kPosition && task.kind != GoalKind::kCentreOfMass)
      c.fail(tp / "kind", "a bounded task needs kind 'position' or 'com'");
    if (task.target == TaskTarget::kRandom && !hasPosition(task.kind))
      c.fail(tp / "kind", "a random target needs a position-type kind");
    spec.tasks.push_back(task);
  }
  try {
    fam.problems = makeWholeBodyProblems(model, spec, seed);
  } catch (const std::invalid_argument& e) {
    c.fail(wp, e.what());
  }
  fam.goal = "wholebody";
  fam.targets = "reachable";
  fam.start = spec.start_perturbation > 0.0 ? fmt::format("perturbed:{}", spec.start_perturbation) : "nominal";
  fam.sequential = false;
  if (!fam.problems.empty()) {
    fam.dof = model->nv();
    fam.effectors = static_cast<int>(fam.problems.front().goals.size());
  }
  for (size_t k = 0; k < fam.problems.size(); ++k) fam.problems[k].name = fmt::format("{}/{}", fam.name, k);
  return true;
}

// Family type "skeleton": a BVH skeleton with anatomical joint limits
// (skeleton.h), reachable goals on its End Sites from random configurations
// within those limits: {"type": "skeleton", "file": ..., "scale": 0, "count": N,
// "limits": {"<joint>": {"cone": rad, "twist": [lo, hi]} | {"hinge": [x, y, z],
// "range": [lo, hi]} | {"translation": m, "cone": ..., "twist": ...}}, "goals": {...}}.
void parseSkeletonFamily(const Ctx& c, const json& f, const Path& fp, Family& fam, std::uint64_t family_seed) {
  c.allowKeys(f, fp, {"name", "description", "type", "file", "scale", "count", "limits", "goals", "scene", "wholebody",
                      "body_mass"});
  const std::string file = c.resolve(f, fp, "file");
  BvhOptions bo;
  bo.body_mass = c.number(f, fp, "body_mass", bo.body_mass, 1e-6, 1e6);
  bo.scale = c.number(f, fp, "scale", 0.0, 0.0, 1e6);
  const int count = static_cast<int>(c.integer(f, fp, "count", std::nullopt, 0, 1000000));
  GoalSetSpec g = parseGoals(c, f, fp, count);
  // [a, b] or [x, y, z] of finite numbers.
  auto numbers = [&](const json& o, const Path& p, const std::string& key, size_t n) {
    const json& v = c.require(o, p, key, n == 2 ? "an array [lo, hi]" : "an array [x, y, z]");
    if (!v.is_array() || v.size() != n)
      c.fail(p / key, fmt::format("expected an array of {} numbers, got {}", n, describe(v)));
    std::vector<double> out;
    for (size_t k = 0; k < n; ++k) {
      if (!v[k].is_number() || !std::isfinite(v[k].get<double>()))
        c.fail(p / key / k, fmt::format("expected a finite number, got {}", describe(v[k])));
      out.push_back(v[k].get<double>());
    }
    if (n == 2 && out[0] > out[1]) c.fail(p / key, fmt::format("expected lo <= hi, got [{}, {}]", out[0], out[1]));
    return out;
  };
  std::vector<JointLimitSpec> limits;
  const Path lp = fp / "limits";
  const json& lj = c.require(f, fp, "limits", "an object mapping joint names to limits");
  c.checkObject(lj, lp);
  for (auto it = lj.begin(); it != lj.end(); ++it) {
    const Path jp = lp / it.key();
    c.checkObject(*it, jp);
    c.allowKeys(*it, jp, {"cone", "twist", "hinge", "range", "translation"});
    JointLimitSpec l;
    l.joint = it.key();
    l.cone = c.number(*it, jp, "cone", JointLimitSpec::kInf, 0.0, 3.15);
    l.translation = c.number(*it, jp, "translation", JointLimitSpec::kInf, 0.0, 1e6);
    if (c.find(*it, "twist")) {
      const auto t = numbers(*it, jp, "twist", 2);
      l.twist_lo = t[0];
      l.twist_hi = t[1];
    }
    if (c.find(*it, "hinge")) {
      const auto a = numbers(*it, jp, "hinge", 3);
      const auto r = numbers(*it, jp, "range", 2);
      l.hinge = true;
      l.axis = Eigen::Vector3d(a[0], a[1], a[2]);
      l.lo = r[0];
      l.hi = r[1];
    } else if (c.find(*it, "range")) {
      c.fail(jp / "range", "'range' belongs to a 'hinge'");
    }
    limits.push_back(l);
  }
  if (c.find(f, "wholebody")) {
    std::shared_ptr<const Model> model;
    try {
      model = constrainSkeleton(*loadBvh(file, bo).model, limits);
    } catch (const SuiteError& e) {
      c.fail(fp / "file", e.what());
    } catch (const std::invalid_argument& e) {
      c.fail(lp, e.what());
    }
    if (c.find(f, "scene")) c.fail(fp / "wholebody", "a whole-body family takes no scene");
    wholeBodyFamily(c, f, fp, model, count, family_seed, fam);
    return;
  }
  try {
    const BvhClip clip = loadBvh(file, bo);
    const auto model = constrainSkeleton(*clip.model, limits);
    if (c.find(f, "scene")) {
      fam.scene = c.resolve(f, fp, "scene");
      try {
        const Scene scene = loadScene(fam.scene);
        if (!scene.srdf.empty())
          throw SuiteError(fmt::format("{}: an SRDF names links of a robot description; a skeleton has none", fam.scene));
        g.scene = buildCollisionWorld(scene, model);
      } catch (const SuiteError& e) {
        c.fail(fp / "scene", e.what());
      }
    }
    fam.problems = makeGoals(model, g, family_seed, "");
  } catch (const SuiteError& e) {
    c.fail(fp / "file", e.what());
  } catch (const std::invalid_argument& e) {  // also ModelError
    c.fail(lp, e.what());
  }
  finishFamily(fam, g);
}

// A scene with an SRDF's disabled pairs: the scene given (the SRDF replacing
// its own), or one of no obstacles named "self" (self-collision only).
Scene withSrdf(std::optional<Scene> scene, const std::string& srdf) {
  if (!scene) {
    scene.emplace();
    scene->name = "self";
    scene->source = srdf;
  }
  scene->srdf = srdf;
  return std::move(*scene);
}

// The disabled pairs of a scene's SRDF on the loaded model, its names checked
// against the whole robot description.
std::vector<std::pair<std::string, std::string>> srdfPairs(const Scene& scene, const UrdfModel& um) {
  if (scene.srdf.empty()) return {};
  return loadSrdf(scene.srdf, um.names).pairsIn(*um.model);
}

// Every problem starts at the SRDF's group state `name`.
void startAt(const Srdf& srdf, const std::string& name, std::vector<Problem>* problems) {
  for (Problem& p : *problems) p.q0 = srdf.configuration(name, *p.model);
}

Family parseFamily(const Ctx& c, const json& f, const Path& fp, std::uint64_t suite_seed) {
  c.checkObject(f, fp);
  Family fam;
  fam.name = c.string(f, fp, "name", std::nullopt);
  if (fam.name.empty() || fam.name.find_first_of(",/ \t") != std::string::npos)
    c.fail(fp / "name", fmt::format("expected a non-empty name without ',', '/' or blanks, got '{}'", fam.name));
  fam.description = c.string(f, fp, "description", "");
  const std::string type = c.string(f, fp, "type", std::nullopt);
  // Family seeds depend on the suite seed and the family's name only, so
  // adding or reordering families leaves the others unchanged.
  const std::uint64_t family_seed = Rng::mix(suite_seed, Rng::hash(fam.name));

  if (type == "random_chain") {
    c.allowKeys(f, fp, {"name", "description", "type", "count", "models", "chain", "goals"});
    const Path cp = fp / "chain";
    const json& cj = c.require(f, fp, "chain", "an object with the chain parameters");
    c.checkObject(cj, cp);
    std::vector<std::string> keys = kJointKeys;
    keys.push_back("joints");
    c.allowKeys(cj, cp, keys);
    ChainSpec spec = parseJointParams(c, cj, cp);
    spec.joints = static_cast<int>(c.integer(cj, cp, "joints", std::nullopt, 1, 10000));
    randomModelFamily(c, f, fp, fam, family_seed, [&](std::uint64_t s) { return randomChain(spec, s); });
  } else if (type == "random_tree") {
    c.allowKeys(f, fp, {"name", "description", "type", "count", "models", "tree", "goals"});
    const Path tp = fp / "tree";
    const json& tj = c.require(f, fp, "tree", "an object with the tree parameters");
    c.checkObject(tj, tp);
    std::vector<std::string> keys = kJointKeys;
    for (const char* k : {"trunk", "branches", "branch_joints", "levels", "spread"}) keys.push_back(k);
    c.allowKeys(tj, tp, keys);
    TreeSpec spec;
    spec.joint = parseJointParams(c, tj, tp);
    spec.trunk = static_cast<int>(c.integer(tj, tp, "trunk", 2, 1, 1000));
    spec.branches = static_cast<int>(c.integer(tj, tp, "branches", 3, 1, 100));
    spec.branch_joints = static_cast<int>(c.integer(tj, tp, "branch_joints", 3, 1, 1000));
    spec.levels = static_cast<int>(c.integer(tj, tp, "levels", 1, 0, 10));
    spec.spread = c.number(tj, tp, "spread", 0.8, -10.0, 10.0);
    randomModelFamily(c, f, fp, fam, family_seed, [&](std::uint64_t s) { return randomTree(spec, s); });
  } else if (type == "urdf" || type == "mjcf") {
    c.allowKeys(f, fp,
                {"name", "description", "type", "count", "file", "base", "tip", "floating_base", "goals", "scene",
                 "srdf", "start_state", "package_path", "geometry", "wholebody"});
    const std::string file = c.resolve(f, fp, "file");
    UrdfOptions uo;
    uo.base = c.string(f, fp, "base", "");
    uo.tip = c.string(f, fp, "tip", "");
    uo.floating_base = c.boolean(f, fp, "floating_base", false);
    // Meshes are read for a robot posed in a scene (an SRDF makes one), where they are checked.
    try {
      const MeshGeometry geometry = parseMeshGeometry(c.string(f, fp, "geometry", "mesh"), "geometry");
      if (c.find(f, "scene") || c.find(f, "srdf")) uo.meshes = geometry;
    } catch (const SuiteError& e) {
      c.fail(fp / "geometry", e.what());
    }
    if (c.find(f, "package_path")) uo.package_path.push_back(c.resolve(f, fp, "package_path"));
    const int count = static_cast<int>(c.integer(f, fp, "count", std::nullopt, 0, 1000000));
    GoalSetSpec g = parseGoals(c, f, fp, count);
    // Families naming one targets_seed share their targets whatever their
    // seed regimes: targets from the shared seed, starts from the family's.
    std::uint64_t target_seed = family_seed;
    if (const json* gj = c.find(f, "goals"); gj && c.find(*gj, "targets_seed")) {
      target_seed = Rng::mix(suite_seed, Rng::hash(c.string(*gj, fp / "goals", "targets_seed", std::nullopt)));
      g.start_seed = family_seed;
    }
    UrdfModel um;
    try {
      um = loadRobot(file, uo, type == "mjcf");
    } catch (const SuiteError& e) {
      c.fail(fp / "file", e.what());
    }
    if (wholeBodyFamily(c, f, fp, um.model, count, family_seed, fam)) {
      if (c.find(f, "scene") || c.find(f, "srdf")) c.fail(fp / "wholebody", "a whole-body family takes no scene");
      fam.source = file;
      fam.robot = um.robot_name;
      fam.type = type;
      return fam;
    }
    const std::string srdf = c.find(f, "srdf") ? c.resolve(f, fp, "srdf") : "";
    const std::string start_state = c.string(f, fp, "start_state", "");
    if (!start_state.empty() && srdf.empty())
      c.fail(fp / "start_state", "a start state names a <group_state> of the family's 'srdf', which is missing");
    if (!start_state.empty() && (g.start != StartPolicy::kNominal || g.starts != 1))
      c.fail(fp / "start_state", "a start state is every problem's start: the goal set's start must be nominal");
    std::optional<Scene> scene;
    try {
      if (c.find(f, "scene")) scene = loadScene(c.resolve(f, fp, "scene"));
    } catch (const SuiteError& e) {
      c.fail(fp / "scene", e.what());
    }
    try {
      if (!srdf.empty()) scene = withSrdf(std::move(scene), srdf);
      if (scene) g.scene = buildCollisionWorld(*scene, um.model, um.collision, srdfPairs(*scene, um));
    } catch (const SuiteError& e) {
      c.fail(fp / (c.find(f, "scene") ? "scene" : "srdf"), e.what());
    }
    if (scene) fam.scene = scene->source;
    if (!scene && g.obstacle_distance > 0.0)
      c.fail(fp / "goals" / "near_obstacle", "a goal set near obstacles needs a field 'scene' in its family");
    try {
      fam.problems = makeGoals(um.model, g, target_seed, "");
      if (!start_state.empty()) startAt(loadSrdf(srdf, um.names), start_state, &fam.problems);
    } catch (const SuiteError& e) {
      c.fail(fp / "start_state", e.what());
    } catch (const std::invalid_argument& e) {
      c.fail(fp, e.what());
    }
    finishFamily(fam, g);
    if (!start_state.empty()) fam.start = "state:" + start_state;
    fam.source = file;
    fam.robot = um.robot_name;
  } else if (type == "bvh") {
    c.allowKeys(
        f, fp,
        {"name", "description", "type", "file", "scale", "static_tolerance", "first", "count", "stride", "effectors"});
    const std::string file = c.resolve(f, fp, "file");
    BvhOptions bo;
    bo.scale = c.number(f, fp, "scale", 0.0, 0.0, 1e6);
    bo.static_tolerance = c.number(f, fp, "static_tolerance", 1e-3, 0.0, 1e6);
    BvhTrackingSpec ts;
    ts.first = static_cast<int>(c.integer(f, fp, "first", 0, 0, 100000000));
    ts.count = static_cast<int>(c.integer(f, fp, "count", -1, -1, 100000000));
    ts.stride = static_cast<int>(c.integer(f, fp, "stride", 1, 1, 100000));
    ts.effectors = c.strings(f, fp, "effectors");
    try {
      const std::string desc = fam.description;
      fam = bvhFamily(file, bo, ts);
      fam.description = desc.empty() ? fam.description : desc;
    } catch (const SuiteError& e) {
      c.fail(fp / "file", e.what());
    }
    fam.name = c.string(f, fp, "name", std::nullopt);
    fam.source = file;
    for (size_t k = 0; k < fam.problems.size(); ++k) fam.problems[k].name = fmt::format("{}/{}", fam.name, k);
  } else if (type == "skeleton") {
    parseSkeletonFamily(c, f, fp, fam, family_seed);
  } else {
    c.fail(fp / "type",
           fmt::format("unknown family type '{}' (expected one of: random_chain, random_tree, urdf, mjcf, bvh, skeleton)",
                       type));
  }
  if (const json* gj = c.find(f, "goals"); gj && gj->is_object() && gj->contains("targets_seed") && type != "urdf" &&
      type != "mjcf")
    c.fail(fp / "goals" / "targets_seed", "only a family of type 'urdf' or 'mjcf' takes a targets_seed");
  if (fam.sequential && type != "bvh") fam.branch_jump = parseBranchJump(c, f, fp);
  fam.type = type;
  return fam;
}

}  // namespace

namespace {
// The stems of the .json files in <data>/<sub>, sorted.
std::vector<std::string> shippedNames(const char* sub) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(dataDirectory()) / sub, ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}
}  // namespace

std::vector<std::string> builtinSuiteNames() { return shippedNames("suites"); }

Suite loadSuite(const std::string& name_or_path, std::optional<std::uint64_t> seed_override) {
  std::string path = name_or_path;
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               fs::path(name_or_path).extension() == ".json" || fs::exists(name_or_path);
  if (!looks_like_path) {
    path = (fs::path(dataDirectory()) / "suites" / (name_or_path + ".json")).string();
    if (!fs::exists(path)) {
      std::string known;
      for (const auto& n : builtinSuiteNames()) known += (known.empty() ? "" : ", ") + n;
      throw SuiteError(
          fmt::format("unknown suite '{}' (shipped suites in '{}/suites': {}; or give a path to a .json file)",
                      name_or_path, dataDirectory(), known.empty() ? "none" : known));
    }
  }
  return parseSuite(readInputFile(path, "suite file"), path, seed_override);
}

Suite parseSuite(const std::string& text, const std::string& path, std::optional<std::uint64_t> seed_override) {
  const Ctx c = inputContext(text, path);
  const json root = parseJsonInput(c);
  const Path top;
  c.checkObject(root, top);
  c.allowKeys(root, top, {"name", "description", "seed", "options", "solvers", "families", "protocol"});

  Suite suite;
  suite.source = path;
  suite.name = c.string(root, top, "name", fs::path(path).stem().string());
  suite.protocol = c.string(root, top, "protocol", "");
  if (const json* s = c.find(root, "seed")) {
    if (!s->is_number_unsigned() && !(s->is_number_integer() && s->get<std::int64_t>() >= 0))
      c.fail(top / "seed", fmt::format("expected a non-negative integer, got {}", describe(*s)));
    suite.seed = s->get<std::uint64_t>();
  }
  if (seed_override) suite.seed = *seed_override;

  if (const json* o = c.find(root, "options")) {
    const Path op = top / "options";
    c.checkObject(*o, op);
    c.allowKeys(*o, op,
                {"position_tolerance", "orientation_tolerance", "max_iterations", "time_budget_us", "stall_iterations",
                 "stall_relative_improvement", "record_trace"});
    SolverOptions& so = suite.options;
    so.position_tolerance = c.number(*o, op, "position_tolerance", so.position_tolerance, 0.0, 1e6);
    so.orientation_tolerance = c.number(*o, op, "orientation_tolerance", so.orientation_tolerance, 0.0, 1e6);
    so.max_iterations = static_cast<int>(c.integer(*o, op, "max_iterations", so.max_iterations, 1));
    so.time_budget_us = c.number(*o, op, "time_budget_us", so.time_budget_us, 0.0);
    so.stall_iterations = static_cast<int>(c.integer(*o, op, "stall_iterations", so.stall_iterations, 0));
    so.stall_relative_improvement =
        c.number(*o, op, "stall_relative_improvement", so.stall_relative_improvement, 0.0, 1.0);
    so.record_trace = c.boolean(*o, op, "record_trace", so.record_trace);
    std::string why;
    if (!so.isValid(&why)) c.fail(op, why);
  }
  suite.options.seed = suite.seed;
  suite.solvers = c.strings(root, top, "solvers");

  const json& fams = c.require(root, top, "families", "an array of family objects");
  if (!fams.is_array())
    c.fail(top / "families", fmt::format("expected an array of family objects, got {}", describe(fams)));
  std::set<std::string> names;
  for (size_t k = 0; k < fams.size(); ++k) {
    Family fam = parseFamily(c, fams[k], top / "families" / k, suite.seed);
    if (!names.insert(fam.name).second)
      c.fail(top / "families" / k / "name", fmt::format("duplicate family name '{}'", fam.name));
    suite.families.push_back(std::move(fam));
  }
  return suite;
}

namespace {

// The default tip of a URDF chain from `base`: the only leaf link moved by a
// joint (empty when there are several and `tip` is given). Without a tip the
// chain must be unambiguous; otherwise (cameras, grippers, two arms) the
// user chooses.
std::string defaultUrdfTip(const std::string& path, const UrdfOptions& uo, const std::string& base,
                           const std::string& tip, bool mjcf = false) {
  std::string default_tip;
  try {
    const UrdfModel whole = loadRobot(path, uo, mjcf);
    std::vector<std::string> tips;
    for (int leaf : whole.model->leaves())
      if (!whole.model->supportingJoints(leaf).empty()) tips.push_back(whole.model->bodyName(leaf));
    if (tips.size() == 1) default_tip = tips.front();
    if (tip.empty() && tips.empty())
      throw SuiteError(fmt::format("{}: no link below '{}' is moved by a joint (nothing to solve)", path,
                                   base.empty() ? whole.model->bodyName(0) : base));
    if (tip.empty() && tips.size() > 1) {
      std::string list;
      for (const auto& t : tips) list += (list.empty() ? "" : ", ") + t;
      throw SuiteError(fmt::format("{}: {} leaf links could be the tip; choose the chain with --tip LINK (and "
                                   "--base LINK if not the root): {}",
                                   path, tips.size(), list));
    }
  } catch (const SuiteError&) {
    // With a tip given, the chain base -> tip is what is solved: a part of
    // the model outside it that cannot be loaded does not matter (the name
    // then carries the tip).
    if (tip.empty()) throw;
  }
  return default_tip;
}

}  // namespace

Family urdfFamily(const std::string& path, const std::string& base, const std::string& tip, int samples,
                  std::uint64_t seed, const std::string& scene) {
  return robotFamily(path, base, tip, samples, seed, scene, RobotFiles{});
}

Family robotFamily(const std::string& path, const std::string& base, const std::string& tip, int samples,
                   std::uint64_t seed, const std::string& scene_file, const RobotFiles& files) {
  if (samples < 0) throw SuiteError(fmt::format("{}: samples = {} must be >= 0", path, samples));
  if (!files.start_state.empty() && files.srdf.empty())
    throw SuiteError(fmt::format("start state '{}': names a <group_state> of an SRDF, and none is given",
                                 files.start_state));
  UrdfOptions uo;
  uo.base = base;
  uo.package_path = files.package_path;
  const std::string default_tip = defaultUrdfTip(path, uo, base, tip, files.mjcf);
  // Meshes are read for a robot posed in a scene (an SRDF makes one), where they are checked.
  const MeshGeometry geometry = parseMeshGeometry(files.geometry, "geometry");
  if (!scene_file.empty() || !files.srdf.empty()) uo.meshes = geometry;
  uo.tip = tip.empty() ? default_tip : tip;
  const UrdfModel um = loadRobot(path, uo, files.mjcf);
  GoalSetSpec g;
  g.count = samples;
  g.kind = GoalKind::kPose;
  g.start = StartPolicy::kNominal;
  std::optional<Scene> scene;
  if (!scene_file.empty()) scene = loadScene(scene_file);
  if (!files.srdf.empty()) scene = withSrdf(std::move(scene), files.srdf);
  if (scene) g.scene = buildCollisionWorld(*scene, um.model, um.collision, srdfPairs(*scene, um));
  Family fam;
  // <robot>-pose for the default tip, given or not; <robot>-<tip>-pose for
  // another tip: one chain, one name (and so the same solve seeds).
  fam.name = fs::path(path).stem().string() + (uo.tip == default_tip ? "" : "-" + uo.tip) +
             (scene ? "-" + g.scene->sceneName() : "") + "-pose";
  fam.description = fmt::format("{}: {} random reachable pose targets within limits on '{}' (chain {} -> {}, "
                                "{} DOF{})",
                                path, samples, uo.tip, um.model->bodyName(0), uo.tip, um.model->nv(),
                                uo.tip == default_tip ? "; the only leaf moved by a joint" : "");
  try {
    fam.problems = makeGoals(um.model, g, seed, "");
  } catch (const std::invalid_argument& e) {
    throw SuiteError(fmt::format("{}: {}", path, e.what()));
  }
  if (!files.start_state.empty()) {
    startAt(loadSrdf(files.srdf, um.names), files.start_state, &fam.problems);
    fam.description += fmt::format("; every start at the SRDF's state '{}'", files.start_state);
  }
  finishFamily(fam, g);
  if (!files.start_state.empty()) fam.start = "state:" + files.start_state;
  fam.type = files.mjcf ? "mjcf" : "urdf";
  fam.source = path;
  fam.robot = um.robot_name;
  fam.scene = scene ? scene->source : "";
  if (scene)
    fam.description += fmt::format("; targets from collision-free configurations in scene '{}' ({}); links "
                                   "checked as: {}",
                                   g.scene->sceneName(), scene->source, g.scene->geometrySummary());
  return fam;
}

Family bvhFamily(const std::string& path, std::uint64_t seed) {
  (void)seed;  // the family is the file's own motion: nothing is random
  Family fam = bvhFamily(path, BvhOptions{}, BvhTrackingSpec{});
  fam.type = "bvh";
  fam.source = path;
  return fam;
}

std::vector<std::string> builtinProtocolNames() { return shippedNames("protocols"); }

Suite loadProtocol(const std::string& name, const std::string& urdf, const std::string& base, const std::string& tip,
                   std::optional<std::uint64_t> seed_override, std::optional<int> count) {
  const std::string path = (fs::path(dataDirectory()) / "protocols" / (name + ".json")).string();
  if (name.empty() || name.find('/') != std::string::npos || !fs::exists(path)) {
    std::string known;
    for (const auto& n : builtinProtocolNames()) known += (known.empty() ? "" : ", ") + n;
    throw SuiteError(fmt::format("unknown protocol '{}' (shipped protocols in '{}/protocols': {})", name,
                                 dataDirectory(), known.empty() ? "none" : known));
  }
  if (urdf.empty()) throw SuiteError(fmt::format("protocol '{}': needs a robot (--urdf FILE)", name));
  UrdfOptions uo;
  uo.base = base;
  const std::string default_tip = defaultUrdfTip(urdf, uo, base, tip);
  const std::string chain_tip = tip.empty() ? default_tip : tip;
  const std::string robot = fs::path(urdf).stem().string() + (chain_tip == default_tip ? "" : "-" + chain_tip);
  const std::string text = readInputFile(path, "protocol file");
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw SuiteError(fmt::format("{}: invalid JSON: {}", path, e.what()));
  }
  const auto fill = [&](std::string v) {
    const std::pair<const char*, std::string> keys[] = {
        {"{robot}", robot}, {"{urdf}", fs::absolute(urdf).string()}, {"{base}", base}, {"{tip}", chain_tip}};
    for (const auto& [key, value] : keys)
      for (size_t at = v.find(key); at != std::string::npos; at = v.find(key, at + value.size()))
        v.replace(at, std::string_view(key).size(), value);
    return v;
  };
  if (root.is_object() && root.contains("families") && root["families"].is_array())
    for (json& f : root["families"])
      if (f.is_object()) {
        for (const char* key : {"name", "description", "file", "base", "tip"})
          if (f.contains(key) && f[key].is_string()) f[key] = fill(f[key].get<std::string>());
        if (count) f["count"] = *count;
      }
  Suite suite = parseSuite(root.dump(2), path, seed_override);
  suite.name = fmt::format("{}-{}", suite.name, robot);
  return suite;
}

}  // namespace ikbench
