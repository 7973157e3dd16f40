// Whole solves and single iterations of every registered backend, per DOF and
// goal kind on random chains, and on the robot arms shipped in
// scenarios/data/robots (URDF).
//
//   ./bench_solvers --benchmark_out=solvers.json --benchmark_out_format=json
//   ./bench_solvers --benchmark_filter='^Solve/dls/'   # one backend
//
// Benchmarks are registered at start-up from Registry::global().list(), so a
// new backend appears here without editing this file. Every argument is named:
//   Solve/<spec>/dof:<n>/goal:<position|pose>        one full solve
//   Iteration/<spec>/dof:<n>/goal:<position|pose>    the same with max_iterations=1:
//                        one iteration plus the solve's fixed costs
//                        (validation, first FK, final check)
//   PerIteration/<spec>/dof:<n>/goal:<position|pose> the steady-state cost of one
//                        iteration (FK + goal errors + Jacobian + step + update +
//                        the context's bookkeeping): solves of exactly 200
//                        iterations towards targets out of reach (stall test
//                        off), so the fixed per-solve costs are amortised;
//                        counter time_per_iteration [s]; every backend at 7 and
//                        30 DOF, those without an nv x nv system over the whole
//                        DOF sweep; dls and dls-adaptive at up to 16 DOF run the
//                        compiled chain kernel (kernel=auto: the one-problem
//                        step), PerIteration/dls:kernel=generic/dof:7 is their
//                        generic code and dls:kernel=lanes the kernel's lane
//                        step with one lane busy
//   SolveRobot/spec:<spec>/robot:<arm>   full pose solves on a shipped arm, for
//                        every backend and the named recipes (presets) such as
//                        auto, and KDL LMA with restarts
//   BallChain/<spec>/joints:<n>, BallChainIteration/<spec>/joints:<n>
//                        ccd, fabrik (and dls for scale) on unconstrained
//                        ball-joint chains of 10 to 1000 joints with position
//                        goals, the FABRIK paper's setting
// Every benchmark iteration solves the next of 64 fixed problems (reachable
// targets within limits, nominal start; seeds fixed). Counters: dof,
// solver_iterations (mean iterations per solve; not Google Benchmark's own
// "Iterations" column, which counts solves), success_rate (fraction converged,
// also shown in the label beside the time, so that a fast case that never
// converges cannot read as a winner). A backend x case pair the backend does
// not support (e.g. two-bone on 30 DOF) is not registered.
// IKBENCH_BENCH_MAX_DOF (default 1000) caps the DOF sweep.
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
#include "bench_main.h"

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

bool supportsAll(const std::string& spec, const std::vector<Problem>& problems) {
  auto solver = Registry::global().create(spec);
  std::string why;
  return !problems.empty() && solver->supports(problems.front(), &why);
}

// Solves problems round-robin with one solver of `spec`. per_iteration: the
// PerIteration protocol (exactly 200 iterations per solve, stall test off;
// counter time_per_iteration instead of success_rate).
void runSolves(benchmark::State& state, const std::string& spec, const std::vector<Problem>& problems,
               bool per_iteration = false) {
  auto solver = Registry::global().create(spec);
  SolverOptions options;
  if (per_iteration) {
    options.max_iterations = 200;
    options.stall_iterations = 0;  // run every iteration, even when stuck
  }
  Eigen::VectorXd q;
  size_t i = 0;
  double iterations = 0, converged = 0, solves = 0;
  for (auto _ : state) {
    const Problem& p = problems[i++ % problems.size()];
    q = p.q0;
    const Summary s = solver->solve(p, q, options);
    iterations += s.iterations;
    converged += s.converged();
    solves += 1;
    benchmark::DoNotOptimize(q.data());
  }
  if (per_iteration && iterations == 0) {  // e.g. gn refuses the singular start: nothing to time
    state.SkipWithError("no iteration ran (every solve stopped at its start)");
    return;
  }
  state.counters["dof"] = problems.front().model->nv();
  state.counters["solver_iterations"] = benchmark::Counter(iterations, benchmark::Counter::kAvgIterations);
  if (per_iteration) {
    // seconds per iteration (printed with an SI prefix: 911.0n = 0.911 us)
    state.counters["time_per_iteration"] =
        benchmark::Counter(iterations, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.SetLabel("targets out of reach: 200 iterations per solve");
  } else {
    state.counters["success_rate"] = benchmark::Counter(converged, benchmark::Counter::kAvgIterations);
    state.SetLabel(solves > 0 ? fmt::format("success {:.0f}%", 100.0 * converged / solves) : "");
  }
}

const char* goalName(int kind) { return kind == 0 ? "position" : "pose"; }

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
      const std::string spec = one_iteration ? info.name + ":max_iterations=1" : info.name;
      for (std::int64_t dof : dofs)
        for (int kind : {0, 1}) {
          if (!supportsAll(spec, chainProblems(static_cast<int>(dof), kind))) continue;
          benchmark::RegisterBenchmark(
              fmt::format("{}/{}/dof:{}/goal:{}", one_iteration ? "Iteration" : "Solve", info.name, dof,
                          goalName(kind))
                  .c_str(),
              [spec, dof, kind](benchmark::State& state) {
                runSolves(state, spec, chainProblems(static_cast<int>(dof), kind));
              })
              ->Unit(benchmark::kMicrosecond);
        }
    }
  }
  // PerIteration: every backend at 7 and 30 DOF. The backends whose
  // iteration needs no nv x nv system (J J^T stays m x m, an SVD of the wide
  // J, or none) also run the whole DOF sweep, where their cost per iteration
  // must grow linearly with the DOF; dls-marquardt, Ceres and KDL factor
  // nv x nv matrices and would take seconds per 200-iteration solve at 1000
  // DOF (their one-iteration cost is in Iteration/).
  const std::vector<std::string> linear = {"jt", "gd-momentum", "pinv", "gn", "sdls",
                                           "dls", "dls-adaptive", "lm", "ccd"};
  for (const SolverInfo& info : Registry::global().list()) {
    const bool sweep = std::find(linear.begin(), linear.end(), info.name) != linear.end();
    for (std::int64_t dof : dofs) {
      if (!sweep && dof > 30) continue;
      for (int kind : {0, 1}) {
        if (!supportsAll(info.name, chainProblems(static_cast<int>(dof), kind, true))) continue;
        benchmark::RegisterBenchmark(fmt::format("PerIteration/{}/dof:{}/goal:{}", info.name, dof, goalName(kind)).c_str(),
                                     [spec = info.name, dof, kind](benchmark::State& state) {
                                       runSolves(state, spec, chainProblems(static_cast<int>(dof), kind, true), true);
                                     })
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  // The generic model code of dls where the compiled chain kernel would run,
  // and the kernel's lane step on one problem (kernel=auto runs the
  // one-problem step for dls, which has no restarts).
  for (const char* kernel : {"generic", "lanes"})
    for (int kind : {0, 1})
      benchmark::RegisterBenchmark(fmt::format("PerIteration/dls:kernel={}/dof:7/goal:{}", kernel, goalName(kind)).c_str(),
                                   [kind, spec = std::string("dls:kernel=") + kernel](benchmark::State& state) {
                                     runSolves(state, spec, chainProblems(7, kind, true), true);
                                   })
          ->Unit(benchmark::kMicrosecond);
  for (const char* name : {"ccd", "fabrik", "dls"}) {
    if (!Registry::global().contains(name)) continue;
    for (const bool one_iteration : {false, true}) {
      const std::string spec = one_iteration ? std::string(name) + ":max_iterations=1" : std::string(name);
      for (std::int64_t n : {10, 30, 100, 300, 1000}) {
        if (n > dofs.back() && n != 10) continue;
        benchmark::RegisterBenchmark(
            fmt::format("{}/{}/joints:{}", one_iteration ? "BallChainIteration" : "BallChain", name, n).c_str(),
            [spec, n](benchmark::State& state) { runSolves(state, spec, ballChainProblems(static_cast<int>(n))); })
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  // The shipped robot arms (scenarios/data/robots): every backend that
  // supports the arm, the presets, and KDL LMA with restarts (the peer of the
  // TRAC-IK protocol).
  std::vector<std::pair<std::string, std::vector<Problem>>> robots;
  try {
    const std::filesystem::path dir = std::filesystem::path(dataDirectory()) / "robots";
    if (std::filesystem::is_directory(dir))
      for (const auto& e : std::filesystem::directory_iterator(dir))
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
  std::sort(robots.begin(), robots.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> specs;
  for (const SolverInfo& info : Registry::global().list()) specs.push_back(info.name);
  for (const PresetInfo& preset : Registry::global().presets()) specs.push_back(preset.name);
  specs.push_back("kdl-lma:restarts=100:time_budget_us=5000");
  for (auto& [name, problems] : robots) {
    if (problems.empty()) continue;
    auto shared = std::make_shared<std::vector<Problem>>(std::move(problems));
    for (const std::string& spec : specs) {
      if (!supportsAll(spec, *shared)) continue;
      benchmark::RegisterBenchmark(fmt::format("SolveRobot/spec:{}/robot:{}", spec, name).c_str(),
                                   [spec, shared](benchmark::State& state) { runSolves(state, spec, *shared); })
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace
}  // namespace ikbench

IKBENCH_BENCHMARK_MAIN()
