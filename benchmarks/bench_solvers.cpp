// Whole solves and single iterations of every registered backend, per DOF and
// goal kind on random chains, and on the shipped robot arms (URDF).
//
//   ./bench_solvers --benchmark_out=solvers.json --benchmark_out_format=json
//   ./bench_solvers --benchmark_filter='Solve/dls/'   # one backend
//
// Benchmarks are registered at start-up from Registry::global().list(), so a
// new backend appears here without editing this file:
//   Solve/<spec>/<dof>/<kind>       one full solve (kind 0 = position, 1 = pose)
//   Iteration/<spec>/<dof>/<kind>   the same with max_iters=1: one iteration
//                                   plus the solve's fixed costs (validation,
//                                   first FK, final check)
//   PerIteration/<spec>/<dof>/<kind>  the steady-state cost of one iteration
//                                   (FK + goal errors + Jacobian + solve +
//                                   update + the context's bookkeeping):
//                                   solves of exactly 200 iterations towards
//                                   targets out of reach (stall test off), so
//                                   the fixed per-solve costs are amortised;
//                                   counter time_per_iteration [s]; every
//                                   backend at 7 and 30 DOF, those without an
//                                   nv x nv system over the whole DOF sweep
//   SolveRobot/<spec>/<robot>       full pose solves on a shipped URDF arm (every backend,
//                                   plus arm-recipe and kdl-lma-restarts: the README's
//                                   TRAC-IK-protocol specs)
//   BallChain/<spec>/<joints>, BallChainIteration/<spec>/<joints>
//                                   ccd, fabrik (and dls for scale) on
//                                   unconstrained ball-joint chains of 10 to
//                                   1000 joints with position goals, the
//                                   FABRIK paper's setting (random-axis hinge
//                                   chains are outside FABRIK's domain)
// Every state iteration solves the next of 64 fixed problems (reachable
// targets within limits, nominal start; seeds fixed). Counters: dof,
// iterations (mean per solve), success_rate (fraction converged).
// Pairs a backend does not support (e.g. two-bone on 30 DOF) are skipped with
// the message "unsupported: ...". IKBENCH_BENCH_MAX_DOF (default 1000) caps
// the DOF sweep.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <tuple>

#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/solvers/registry.h"

namespace ikbench {
namespace {

constexpr int kProblems = 64;

// Random revolute chains with reachable targets, or (unreachable = true)
// targets 1.5x beyond the reach of the same chains: no backend converges
// there, so every solve runs exactly max_iterations iterations.
const std::vector<Problem>& chainProblems(int dof, int kind, bool unreachable = false) {
  static std::map<std::tuple<int, int, bool>, std::vector<Problem>> cache;
  auto& v = cache[{dof, kind, unreachable}];
  if (v.empty()) {
    ChainSpec cs;
    cs.joints = dof;
    cs.limit = 2.5;
    GoalSetSpec gs;
    gs.count = kProblems;
    gs.kind = kind == 0 ? GoalKind::kPosition : GoalKind::kPose;
    if (unreachable) {
      gs.type = GoalSetType::kUnreachable;
      gs.unreachable_factor = 1.5;
    }
    v = makeGoals(randomChain(cs, 100 + dof), gs, 200 + dof, unreachable ? "u" : "b");
  }
  return v;
}

// Unconstrained ball-joint chains with equal links (position goals).
const std::vector<Problem>& ballChainProblems(int joints) {
  static std::map<int, std::vector<Problem>> cache;
  auto& v = cache[joints];
  if (v.empty()) {
    ChainSpec cs;
    cs.joints = joints;
    cs.revolute = 0.0;
    cs.ball = 1.0;
    cs.min_length = cs.max_length = 1.0;
    GoalSetSpec gs;
    gs.count = kProblems;
    gs.kind = GoalKind::kPosition;
    v = reachableGoals(randomChain(cs, 300 + joints), gs, 400 + joints, "ball");
  }
  return v;
}

// Solves problems round-robin with one solver of `spec`. per_iteration: the
// PerIteration protocol (exactly 200 iterations per solve, stall test off;
// counter time_per_iteration instead of success_rate).
void runSolves(benchmark::State& state, const std::string& spec, const std::vector<Problem>& problems,
               bool per_iteration = false) {
  auto solver = Registry::global().create(spec);
  std::string why;
  if (!solver->supports(problems.front(), &why)) {
    state.SkipWithError(("unsupported: " + why).c_str());
    return;
  }
  SolverOptions options;
  if (per_iteration) {
    options.max_iterations = 200;
    options.stall_iterations = 0;  // run every iteration, even when stuck
  }
  Eigen::VectorXd q;
  size_t i = 0;
  double iterations = 0, converged = 0;
  for (auto _ : state) {
    const Problem& p = problems[i++ % problems.size()];
    q = p.q0;
    const Summary s = solver->solve(p, q, options);
    iterations += s.iterations;
    converged += s.converged();
    benchmark::DoNotOptimize(q.data());
  }
  if (per_iteration && iterations == 0) {  // e.g. gn refuses the singular start: nothing to time
    state.SkipWithError("no iteration ran (every solve stopped at its start)");
    return;
  }
  state.counters["dof"] = problems.front().model->nv();
  state.counters["iterations"] = benchmark::Counter(iterations, benchmark::Counter::kAvgIterations);
  if (per_iteration) {
    // seconds per iteration (printed with an SI prefix: 911.0n = 0.911 us)
    state.counters["time_per_iteration"] =
        benchmark::Counter(iterations, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  } else {
    state.counters["success_rate"] = benchmark::Counter(converged, benchmark::Counter::kAvgIterations);
  }
}

std::vector<std::int64_t> dofSweep() {
  long max_dof = 1000;
  if (const char* env = std::getenv("IKBENCH_BENCH_MAX_DOF")) max_dof = std::strtol(env, nullptr, 10);
  std::vector<std::int64_t> out;
  for (std::int64_t d : {7, 30, 100, 300, 1000})
    if (d <= max_dof) out.push_back(d);
  return out;
}

void registerAll() {
  const std::vector<std::int64_t> dofs = dofSweep();
  for (const SolverInfo& info : Registry::global().list()) {
    for (const bool one_iteration : {false, true}) {
      const std::string spec = one_iteration ? info.name + ":max_iters=1" : info.name;
      benchmark::RegisterBenchmark(
          fmt::format("{}/{}", one_iteration ? "Iteration" : "Solve", info.name).c_str(),
          [spec](benchmark::State& state) {
            runSolves(state, spec, chainProblems(static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
          })
          ->ArgsProduct({dofs, {0, 1}})
          ->ArgNames({"dof", "pose"})
          ->Unit(benchmark::kMicrosecond);
    }
  }
  // PerIteration: every backend at 7 and 30 DOF. The backends whose
  // iteration needs no nv x nv system (J J^T stays m x m, an SVD of the wide
  // J, or none) also run the whole DOF sweep, where their cost per iteration
  // must grow linearly with the DOF (issue 3); dls-marquardt, Ceres and KDL
  // factor nv x nv matrices and would take seconds per 200-iteration solve
  // at 1000 DOF (their one-iteration cost is in Iteration/).
  const std::vector<std::string> linear = {"jt", "gd-momentum", "pinv", "gn", "sdls",
                                           "dls", "dls-adaptive", "lm", "ccd"};
  for (const SolverInfo& info : Registry::global().list()) {
    std::vector<std::int64_t> per_dofs;
    const bool sweep = std::find(linear.begin(), linear.end(), info.name) != linear.end();
    for (std::int64_t d : dofs)
      if (sweep || d <= 30) per_dofs.push_back(d);
    benchmark::RegisterBenchmark(fmt::format("PerIteration/{}", info.name).c_str(),
                                 [spec = info.name](benchmark::State& state) {
                                   runSolves(state, spec,
                                             chainProblems(static_cast<int>(state.range(0)),
                                                           static_cast<int>(state.range(1)), true),
                                             true);
                                 })
        ->ArgsProduct({per_dofs, {0, 1}})
        ->ArgNames({"dof", "pose"})
        ->Unit(benchmark::kMicrosecond);
  }
  for (const char* name : {"ccd", "fabrik", "dls"}) {
    if (!Registry::global().contains(name)) continue;
    for (const bool one_iteration : {false, true}) {
      const std::string spec = one_iteration ? std::string(name) + ":max_iters=1" : std::string(name);
      auto* b = benchmark::RegisterBenchmark(
          fmt::format("{}/{}", one_iteration ? "BallChainIteration" : "BallChain", name).c_str(),
          [spec](benchmark::State& state) {
            runSolves(state, spec, ballChainProblems(static_cast<int>(state.range(0))));
          });
      for (std::int64_t n : {10, 30, 100, 300, 1000})
        if (n <= dofs.back() || n == 10) b->Arg(n);
      b->ArgNames({"joints"})->Unit(benchmark::kMicrosecond);
    }
  }
  // The shipped robot arms, once the URDF loader and data exist.
  std::vector<std::pair<std::string, std::vector<Problem>>> robots;
  try {
    const std::filesystem::path dir = dataDirectory();
    if (!dir.empty() && std::filesystem::is_directory(dir))
      for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.path().extension() == ".urdf") {
          try {
            Family f = urdfFamily(e.path().string(), "", "", kProblems, 1);
            robots.emplace_back(e.path().stem().string(), std::move(f.problems));
          } catch (const std::exception&) {
            // Not a loadable single-chain robot: not benchmarked.
          }
        }
  } catch (const std::exception&) {
  }
  for (auto& [name, problems] : robots) {
    if (problems.empty()) continue;
    auto shared = std::make_shared<std::vector<Problem>>(std::move(problems));
    for (const SolverInfo& info : Registry::global().list())
      benchmark::RegisterBenchmark(fmt::format("SolveRobot/{}/{}", info.name, name).c_str(),
                                   [spec = info.name, shared](benchmark::State& state) {
                                     runSolves(state, spec, *shared);
                                   })
          ->Unit(benchmark::kMicrosecond);
    // The TRAC-IK-protocol rows of the README: ikbench's arm recipe and KDL
    // LMA, both with restarts inside a 5 ms budget.
    for (const auto& [label, spec] : {std::pair<const char*, const char*>{
                                          "arm-recipe",
                                          "dls-adaptive:restarts=200:budget_us=5000:mode=error:err_gain=0.03:"
                                          "limits=freeze:max_step=1:max_iters=20"},
                                      {"kdl-lma-restarts", "kdl-lma:restarts=100:budget_us=5000"}})
      benchmark::RegisterBenchmark(fmt::format("SolveRobot/{}/{}", label, name).c_str(),
                                   [spec = std::string(spec), shared](benchmark::State& state) {
                                     runSolves(state, spec, *shared);
                                   })
          ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace ikbench

int main(int argc, char** argv) {
  ikbench::registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
