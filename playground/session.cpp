#include "session.h"

#include <fmt/format.h>

#include <Eigen/Geometry>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/results_format.h"
#include "harness/solver_catalog.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/scene.h"
#include "ikbench/solvers/registry.h"

namespace ikbench::playground {

namespace {

using nlohmann::json;

// Largest problem set and repeat count one bench() call takes: a page must
// stay responsive, a test bounded.
constexpr std::int64_t kMaxBenchSolves = 1'000'000;
// Seeds are exact in JavaScript's numbers up to 2^53.
constexpr std::int64_t kMaxSeed = std::int64_t{1} << 53;
// A DOF within this of a finite limit is drawn as "at its limit" [rad or m].
constexpr double kAtLimit = 1e-6;

class RequestError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

json parse(const std::string& text, const char* what) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw RequestError(fmt::format("{}: expected a JSON object", what));
  return j;
}

const json& field(const json& j, const char* key, const char* what) {
  const auto it = j.find(key);
  if (it == j.end()) throw RequestError(fmt::format("{}: '{}' is missing", what, key));
  return *it;
}

// 64-bit on every target (long is 32-bit in WebAssembly).
std::int64_t integerField(const json& j, const char* key, const char* what, std::int64_t lo, std::int64_t hi,
                          std::int64_t fallback) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_number_integer() || it->get<std::int64_t>() < lo || it->get<std::int64_t>() > hi)
    throw RequestError(fmt::format("{}: '{}' must be an integer in [{}, {}], got {}", what, key, lo, hi, it->dump()));
  return it->get<std::int64_t>();
}

std::string stringField(const json& j, const char* key, const char* what, const std::string& fallback) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_string()) throw RequestError(fmt::format("{}: '{}' must be a string, got {}", what, key, it->dump()));
  return it->get<std::string>();
}

json numbers(const Eigen::VectorXd& v) {
  json a = json::array();
  for (Eigen::Index k = 0; k < v.size(); ++k) a.push_back(v[k]);
  return a;
}

// World pose of every body: [x, y, z, qx, qy, qz, qw] (three.js' order).
json framesJson(const Model& model, const Eigen::VectorXd& q) {
  const std::vector<Pose3d> poses = forwardKinematics<double>(model, q.data());
  json out = json::array();
  for (const Pose3d& p : poses) {
    Eigen::Quaterniond r(p.R);
    r.normalize();
    out.push_back({p.p.x(), p.p.y(), p.p.z(), r.x(), r.y(), r.z(), r.w()});
  }
  return out;
}

// Tangent DOFs (nv indices) within kAtLimit of a finite limit.
json atLimits(const Model& model, const Eigen::VectorXd& q) {
  Eigen::VectorXd c(model.nv());
  tangentCoordinates(model, q, c);
  json out = json::array();
  for (int d = 0; d < model.nv(); ++d) {
    const double lo = model.lowerLimits()[d], hi = model.upperLimits()[d];
    if ((std::isfinite(lo) && c[d] - lo < kAtLimit) || (std::isfinite(hi) && hi - c[d] < kAtLimit)) out.push_back(d);
  }
  return out;
}

// A configuration of `m` from a JSON array of nq finite numbers.
Eigen::VectorXd configuration(const Model& m, const json& qj, const char* what) {
  if (!qj.is_array() || static_cast<int>(qj.size()) != m.nq())
    throw RequestError(fmt::format("{}: 'q' must be an array of nq = {} numbers", what, m.nq()));
  Eigen::VectorXd q(m.nq());
  for (int k = 0; k < m.nq(); ++k) {
    if (!qj[k].is_number() || !std::isfinite(qj[k].get<double>()))
      throw RequestError(fmt::format("{}: q[{}] must be a finite number, got {}", what, k, qj[k].dump()));
    q[k] = qj[k].get<double>();
  }
  return q;
}

const std::shared_ptr<const Model>& find(const std::map<std::string, std::shared_ptr<const Model>>& models,
                                         const std::string& id, const char* what) {
  const auto it = models.find(id);
  if (it == models.end()) throw RequestError(fmt::format("{}: no model '{}' (addModel it first)", what, id));
  return it->second;
}

// The clearances of the configuration `data` holds (FK done) in world `w`:
// every pair's inner-loop distance, the smallest per link shape and overall.
json clearanceJson(const CollisionWorld& w, const Data& data, std::vector<ClosestPoints>* distances) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  w.approximateDistances(data, kInf, distances);
  const size_t n = w.links().size();
  std::vector<double> best(n, kInf);
  std::vector<int> best_pair(n, -1);
  double min_clearance = kInf;
  int min_pair = -1;
  for (size_t i = 0; i < w.pairs().size(); ++i) {
    const CollisionPair& p = w.pairs()[i];
    const double d = (*distances)[i].distance;
    for (const int link : {p.a, p.obstacle ? -1 : p.b}) {
      if (link >= 0 && d < best[static_cast<size_t>(link)]) {
        best[static_cast<size_t>(link)] = d;
        best_pair[static_cast<size_t>(link)] = static_cast<int>(i);
      }
    }
    if (d < min_clearance) min_clearance = d, min_pair = static_cast<int>(i);
  }
  // A link shape in no checked pair (the base, adjacent-only links) has no clearance: null.
  json links = json::array(), link_pairs = json::array();
  for (size_t k = 0; k < n; ++k) {
    links.push_back(best_pair[k] >= 0 ? json(best[k]) : json(nullptr));
    link_pairs.push_back(best_pair[k] >= 0 ? json(w.pairName(best_pair[k])) : json(nullptr));
  }
  // A pair counts as colliding when its surfaces touch or overlap (d <= 0), as in the exact check.
  return {{"collision_free", !(min_clearance <= 0.0)},
          {"min_clearance", min_pair >= 0 ? json(min_clearance) : json(nullptr)},
          {"pair", min_pair >= 0 ? json(w.pairName(min_pair)) : json(nullptr)},
          {"links", links},
          {"link_pairs", link_pairs}};
}

json exactJson(bool collision_free, double min_clearance, const std::string& pair) {
  return {{"collision_free", collision_free},
          {"min_clearance", std::isfinite(min_clearance) ? json(min_clearance) : json(nullptr)},
          {"pair", pair},
          {"method", CollisionWorld::exactCheckIsFcl() ? "fcl" : "inner-loop"}};
}

std::string errorJson(const std::string& what) { return json{{"error", what}}.dump(); }

template <typename F>
std::string guarded(F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return errorJson(e.what());
  }
}

}  // namespace

Session::Session() = default;
Session::~Session() = default;

std::string Session::catalog() const {
  return guarded([&] { return harness::solversJson().dump(); });
}

std::string Session::addModel(const std::string& model_json) {
  return guarded([&] {
    const json j = parse(model_json, "model");
    const std::string id = stringField(j, "id", "model", "");
    if (id.empty()) throw RequestError("model: 'id' must be a non-empty string");
    const std::string where = fmt::format("model '{}'", id);
    std::shared_ptr<const Model> model = harness::modelFromJson(j, where);
    // A run's model carries the scene it was checked in (its links' own
    // geometry, meshes included), read back as recorded.
    std::shared_ptr<const CollisionWorld> recorded = harness::sceneFromJson(j, model, where);
    models_[id] = model;
    scenes_.erase(id);  // a scene is built on one model: a new model under the id has none yet
    scene_data_.erase(id);
    if (recorded)
      recorded_[id] = std::move(recorded);
    else
      recorded_.erase(id);
    const Model& m = *model;
    json leaves = json::array();
    for (int b : m.leaves()) leaves.push_back(m.bodyName(b));
    return json{{"id", id},
                {"nq", m.nq()},
                {"nv", m.nv()},
                {"leaves", leaves},
                {"neutral", numbers(m.neutralConfiguration())},
                {"middle", numbers(m.middleConfiguration())},
                {"recorded_scene", recorded_.count(id) ? json(recorded_[id]->sceneName()) : json(nullptr)}}
        .dump();
  });
}

std::string Session::randomChain(const std::string& request) const {
  return guarded([&] {
    const json j = parse(request, "randomChain");
    ChainSpec spec;
    spec.joints = static_cast<int>(integerField(j, "dof", "randomChain", 1, 200, 7));
    const std::int64_t seed = integerField(j, "seed", "randomChain", 0, kMaxSeed, 1);
    spec.axes = kAxisStyleNames.parse(stringField(j, "axes", "randomChain", "random"));
    if (j.contains("limit")) {
      if (!j["limit"].is_number()) throw RequestError("randomChain: 'limit' must be a number [rad] (<= 0: none)");
      spec.limit = j["limit"].get<double>();
    }
    const std::string id = stringField(j, "id", "randomChain", fmt::format("chain{}-seed{}", spec.joints, seed));
    const auto model = ikbench::randomChain(spec, static_cast<std::uint64_t>(seed));
    return harness::modelToJson(*model, id, "").dump();
  });
}

std::string Session::problems(const std::string& request) const {
  return guarded([&] {
    const json j = parse(request, "problems");
    const std::string id = stringField(j, "model", "problems", "");
    const std::shared_ptr<const Model>& model = find(models_, id, "problems");
    GoalSetSpec spec;
    spec.count = static_cast<int>(integerField(j, "count", "problems", 1, 100000, 100));
    spec.kind = kGoalKindNames.parse(stringField(j, "kind", "problems", "position"));
    if (j.contains("effectors")) spec.effectors = j["effectors"].get<std::vector<std::string>>();
    const std::int64_t seed = integerField(j, "seed", "problems", 0, kMaxSeed, 1);
    if (const auto it = scenes_.find(id); it != scenes_.end()) spec.scene = it->second;  // collision-free targets
    const std::vector<Problem> ps =
        reachableGoals(model, spec, static_cast<std::uint64_t>(seed), stringField(j, "name", "problems", id) + "-");
    json out = json::array();
    for (size_t k = 0; k < ps.size(); ++k)
      out.push_back(harness::problemToJson("playground", static_cast<int>(k), id, ps[k], false));
    return out.dump();
  });
}

std::string Session::configurations(const std::string& request) const {
  return guarded([&] {
    const json j = parse(request, "configurations");
    const Model& m = *find(models_, stringField(j, "model", "configurations", ""), "configurations");
    const std::int64_t count = integerField(j, "count", "configurations", 1, 100000, 1);
    Rng rng(static_cast<std::uint64_t>(integerField(j, "seed", "configurations", 0, kMaxSeed, 1)));
    json out = json::array();
    for (std::int64_t k = 0; k < count; ++k) out.push_back(numbers(randomConfiguration(m, rng)));
    return out.dump();
  });
}

std::string Session::frames(const std::string& request) {
  return guarded([&] {
    const json j = parse(request, "frames");
    const std::string id = stringField(j, "model", "frames", "");
    const Model& m = *find(models_, id, "frames");
    const Eigen::VectorXd q = configuration(m, field(j, "q", "frames"), "frames");
    json out = {{"frames", framesJson(m, q)}, {"at_limit", atLimits(m, q)}, {"collision", nullptr}};
    if (scenes_.count(id)) {
      const Data* data = nullptr;
      const CollisionWorld& w = sceneAt(id, q, &data);
      out["collision"] = clearanceJson(w, *data, &distances_);
    }
    return out.dump();
  });
}

std::string Session::setScene(const std::string& request) {
  return guarded([&] {
    const json j = parse(request, "setScene");
    const std::string id = stringField(j, "model", "setScene", "");
    const std::shared_ptr<const Model>& model = find(models_, id, "setScene");
    const json& sc = field(j, "scene", "setScene");
    scenes_.erase(id);  // replaced, or none when the new one is refused
    scene_data_.erase(id);
    if (sc.is_null()) {
      return json{{"model", id}, {"scene", nullptr}}.dump();
    }
    if (sc.is_string() && sc.get<std::string>() == "recorded") {
      const auto it = recorded_.find(id);
      if (it == recorded_.end())
        throw RequestError(fmt::format("setScene: model '{}' came with no scene (only a run's models do)", id));
      const json entry = harness::modelToJson(*model, id, "", it->second.get());
      scenes_[id] = it->second;
      return json{{"model", id},
                  {"reach", modelReach(*model)},
                  {"description", fmt::format("The scene '{}' the run checked this model in.", it->second->sceneName())},
                  {"scene", entry["scene"]}}
          .dump();
    }
    if (!sc.is_object())
      throw RequestError("setScene: 'scene' must be a scene file's JSON object, \"recorded\" or null");
    // The scene file's reader (its checks and messages); lines as in an indented file.
    const Scene scene = parseScene(sc.dump(1), stringField(j, "source", "setScene", "scene.json"));
    std::shared_ptr<const CollisionWorld> world = buildCollisionWorld(scene, model);
    const json entry = harness::modelToJson(*model, id, "", world.get());
    scenes_[id] = std::move(world);
    return json{{"model", id},
                {"reach", modelReach(*model)},
                {"description", scene.description},
                {"scene", entry["scene"]}}
        .dump();
  });
}

const CollisionWorld& Session::sceneAt(const std::string& id, const Eigen::VectorXd& q, const Data** data) {
  const auto it = scenes_.find(id);
  if (it == scenes_.end()) throw RequestError(fmt::format("clearance: model '{}' has no scene (setScene it first)", id));
  std::unique_ptr<Data>& d = scene_data_[id];
  if (!d) d = std::make_unique<Data>(it->second->model());
  forwardKinematics(it->second->model(), q, *d);
  *data = d.get();
  return *it->second;
}

std::string Session::clearance(const std::string& request) {
  return guarded([&] {
    const json j = parse(request, "clearance");
    const std::string id = stringField(j, "model", "clearance", "");
    const Eigen::VectorXd q = configuration(*find(models_, id, "clearance"), field(j, "q", "clearance"), "clearance");
    const Data* data = nullptr;
    const CollisionWorld& w = sceneAt(id, q, &data);
    json out = clearanceJson(w, *data, &distances_);
    json each = json::array();
    for (const ClosestPoints& c : distances_) each.push_back(c.distance);
    out["distances"] = each;
    const CollisionReport r = w.check(*data);
    out["exact"] = exactJson(r.collision_free, r.min_clearance, r.pair);
    return out.dump();
  });
}

Problem Session::problem(const json& line, const std::string& where) const {
  Problem p = harness::problemFromJson(line, models_, where);
  if (const auto it = scenes_.find(line["model"].get<std::string>()); it != scenes_.end()) p.collision = it->second;
  return p;
}

Solver& Session::solver(const std::string& spec) {
  auto it = solvers_.find(spec);
  if (it == solvers_.end()) {
    const Registry& r = Registry::global();
    it = solvers_.emplace(spec, r.create(r.parse(spec))).first;
  }
  return *it->second;
}

std::string Session::solve(const std::string& request) {
  return guarded([&] {
    const json j = parse(request, "solve");
    const Problem problem = this->problem(field(j, "problem", "solve"), "solve: problem");
    Solver& s = solver(stringField(j, "spec", "solve", "dls"));
    SolverOptions options;
    options.record_trace = j.value("trace", false);
    options.seed = static_cast<std::uint64_t>(integerField(j, "seed", "solve", 0, kMaxSeed, 0));
    Eigen::VectorXd q = problem.q0;
    const Summary sum = s.solve(problem, q, s.effectiveOptions(options));
    json trace = json::array();
    for (const IterationRecord& r : sum.trace)
      trace.push_back({r.iteration, r.position_error, r.orientation_error, r.step_norm, r.damping});
    const Model& m = *problem.model;
    json collision = nullptr;
    if (problem.collision) {
      const Data* data = nullptr;
      const CollisionWorld& w = sceneAt(field(j, "problem", "solve")["model"].get<std::string>(), q, &data);
      collision = clearanceJson(w, *data, &distances_);
      collision["exact"] = exactJson(sum.collision_free == 1, sum.min_clearance, sum.collision_pair);
    }
    return json{{"status", toString(sum.status)},
                {"message", sum.message},
                {"q", numbers(q)},
                {"iterations", sum.iterations},
                {"restarts", sum.restarts},
                {"position_error", sum.position_error},
                {"orientation_error", sum.orientation_error},
                {"fk_evals", sum.fk_evals},
                {"jacobian_evals", sum.jacobian_evals},
                {"time_us", sum.time_us},
                {"within_limits", sum.within_limits},
                {"solutions", static_cast<int>(sum.solutions.size())},
                {"frames", framesJson(m, q)},
                {"at_limit", atLimits(m, q)},
                {"collision", collision},
                {"trace", trace}}
        .dump();
  });
}

std::string Session::bench(const std::string& request) {
  return guarded([&] {
    const json j = parse(request, "bench");
    const json& lines = field(j, "problems", "bench");
    if (!lines.is_array() || lines.empty()) throw RequestError("bench: 'problems' must be a non-empty array");
    std::vector<Problem> ps;
    for (size_t k = 0; k < lines.size(); ++k)
      ps.push_back(problem(lines[k], fmt::format("bench: problems[{}]", k)));
    const std::int64_t repeats = integerField(j, "repeats", "bench", 1, kMaxBenchSolves, 1);
    if (repeats * static_cast<std::int64_t>(ps.size()) > kMaxBenchSolves)
      throw RequestError(fmt::format("bench: problems x repeats must be at most {}", kMaxBenchSolves));
    Solver& s = solver(stringField(j, "spec", "bench", "dls"));
    const SolverOptions options = s.effectiveOptions(SolverOptions{});
    Eigen::VectorXd q;
    std::int64_t converged = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t r = 0; r < repeats; ++r)
      for (const Problem& p : ps) {
        q = p.q0;
        converged += s.solve(p, q, options).converged() ? 1 : 0;
      }
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    const std::int64_t n = repeats * static_cast<std::int64_t>(ps.size());
    return json{{"solves", n}, {"converged", converged}, {"total_us", us}, {"us_per_solve", us / static_cast<double>(n)}}.dump();
  });
}

std::string Session::call(const std::string& method, const std::string& argument) {
  if (method == "catalog") return catalog();
  if (method == "addModel") return addModel(argument);
  if (method == "randomChain") return randomChain(argument);
  if (method == "problems") return problems(argument);
  if (method == "configurations") return configurations(argument);
  if (method == "frames") return frames(argument);
  if (method == "setScene") return setScene(argument);
  if (method == "clearance") return clearance(argument);
  if (method == "solve") return solve(argument);
  if (method == "bench") return bench(argument);
  return errorJson(fmt::format("unknown method '{}' (expected catalog, addModel, randomChain, problems, "
                               "configurations, frames, setScene, clearance, solve or bench)",
                               method));
}

}  // namespace ikbench::playground
