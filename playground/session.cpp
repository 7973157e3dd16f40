#include "session.h"

#include <fmt/format.h>

#include <Eigen/Geometry>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/results_format.h"
#include "harness/solver_catalog.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
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

const std::shared_ptr<const Model>& find(const std::map<std::string, std::shared_ptr<const Model>>& models,
                                         const std::string& id, const char* what) {
  const auto it = models.find(id);
  if (it == models.end()) throw RequestError(fmt::format("{}: no model '{}' (addModel it first)", what, id));
  return it->second;
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
    models_[id] = harness::modelFromJson(j, fmt::format("model '{}'", id));
    const Model& m = *models_[id];
    json leaves = json::array();
    for (int b : m.leaves()) leaves.push_back(m.bodyName(b));
    return json{{"id", id}, {"nq", m.nq()}, {"nv", m.nv()}, {"leaves", leaves},
                {"neutral", numbers(m.neutralConfiguration())}, {"middle", numbers(m.middleConfiguration())}}
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
    const std::vector<Problem> ps =
        reachableGoals(model, spec, static_cast<std::uint64_t>(seed), stringField(j, "name", "problems", id) + "-");
    json out = json::array();
    for (size_t k = 0; k < ps.size(); ++k)
      out.push_back(harness::problemToJson("playground", static_cast<int>(k), id, ps[k], false));
    return out.dump();
  });
}

std::string Session::frames(const std::string& request) const {
  return guarded([&] {
    const json j = parse(request, "frames");
    const Model& m = *find(models_, stringField(j, "model", "frames", ""), "frames");
    const json& qj = field(j, "q", "frames");
    if (!qj.is_array() || static_cast<int>(qj.size()) != m.nq())
      throw RequestError(fmt::format("frames: 'q' must be an array of nq = {} numbers", m.nq()));
    Eigen::VectorXd q(m.nq());
    for (int k = 0; k < m.nq(); ++k) q[k] = qj[k].get<double>();
    return json{{"frames", framesJson(m, q)}, {"at_limit", atLimits(m, q)}}.dump();
  });
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
    const Problem problem = harness::problemFromJson(field(j, "problem", "solve"), models_, "solve: problem");
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
      ps.push_back(harness::problemFromJson(lines[k], models_, fmt::format("bench: problems[{}]", k)));
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
  if (method == "frames") return frames(argument);
  if (method == "solve") return solve(argument);
  if (method == "bench") return bench(argument);
  return errorJson(fmt::format("unknown method '{}' (expected catalog, addModel, randomChain, problems, frames, "
                               "solve or bench)",
                               method));
}

}  // namespace ikbench::playground
