// The batch path (solveBatch, SIMD across problems) against the scalar path
// on the same problems, in the same run.
//
//   ./bench_batch --benchmark_out=batch.json --benchmark_out_format=json
//   ./bench_batch --benchmark_filter='auto'
//
//   Scalar/<spec>                  one Solver, the problems one after another
//                                  (Solver::solve: the same kernel, one problem
//                                  in one lane)
//   ScalarGeneric/<spec>           the same with kernel=generic: the generic
//                                  model code (forward_kinematics.h, goal.h,
//                                  jacobian_dls.cpp)
//   Batch/<spec>/lanes:L/isa:I     solveBatch over the same problems, one thread,
//                                  L lanes, isa 0 = auto (AVX2 + FMA when the CPU
//                                  has them), 1 = portable (SSE2)
//   Batch2T/<spec>                 solveBatch on 2 threads (16 lanes each)
//   ScalarPerIteration/<spec>, ScalarGenericPerIteration/<spec>,
//   BatchPerIteration/<spec>
//                                  200 iterations per solve towards targets out
//                                  of reach, stall test off (bench_solvers'
//                                  PerIteration protocol; for auto its
//                                  iteration, dls-adaptive:mode=error:
//                                  err_gain=0.03:limits=freeze:max_step=1,
//                                  without restarts): the cost of one
//                                  iteration of one problem
// The problems are those of `ikbench throughput`: 2000 reachable pose
// targets, 100 on each of 20 random 7-DOF chains with +-2.5 rad limits,
// nominal start (PerIteration: 16 unreachable targets per chain, so that
// every lane group is full). Counters: per_solve
// (seconds per solve), converged_per_s, success_rate, iterations (mean per
// solve), lanes_filled (fraction of lane-iterations that held a problem),
// time_per_iteration (PerIteration).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <tuple>

#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "bench_main.h"

namespace ikbench {
namespace {

constexpr const char* kAuto =
    "dls-adaptive:restarts=200:budget_us=5000:mode=error:err_gain=0.03:limits=freeze:max_step=1:max_iters=20";

const std::vector<Problem>& throughputProblems(bool unreachable) {
  static std::vector<Problem> reach, out_of_reach;
  std::vector<Problem>& v = unreachable ? out_of_reach : reach;
  if (v.empty()) {
    const int chains = 20, total = unreachable ? 320 : 2000;
    for (int c = 0; c < chains; ++c) {
      ChainSpec cs;
      cs.joints = 7;
      cs.limit = 2.5;
      const std::uint64_t seed = Rng::mix(1, static_cast<std::uint64_t>(c));
      GoalSetSpec gs;
      gs.count = total / chains + (c < total % chains ? 1 : 0);
      gs.kind = GoalKind::kPose;
      if (unreachable) {
        gs.type = GoalSetType::kUnreachable;
        gs.unreachable_factor = 1.5;
      }
      for (Problem& p : makeGoals(randomChain(cs, seed), gs, seed, fmt::format("tp{}", c))) v.push_back(std::move(p));
    }
  }
  return v;
}

SolverOptions perIterationOptions() {
  SolverOptions o;
  o.max_iterations = 200;
  o.stall_iterations = 0;
  return o;
}

void setCounters(benchmark::State& state, double solves, double converged, double iterations) {
  state.counters["per_solve"] = benchmark::Counter(solves, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["converged_per_s"] = benchmark::Counter(converged, benchmark::Counter::kIsRate);
  state.counters["success_rate"] = converged / solves;
  state.counters["iterations"] = iterations / solves;
}

void scalarSolves(benchmark::State& state, const std::string& spec, bool per_iteration) {
  const std::vector<Problem>& problems = throughputProblems(per_iteration);
  const SolverOptions o = per_iteration ? perIterationOptions() : SolverOptions();
  auto solver = Registry::global().create(spec);
  Eigen::VectorXd q;
  double solves = 0, converged = 0, iterations = 0;
  for (auto _ : state) {
    for (const Problem& p : problems) {
      q = p.q0;
      const Summary s = solver->solve(p, q, o);
      converged += s.converged();
      iterations += s.iterations;
    }
    solves += static_cast<double>(problems.size());
    benchmark::DoNotOptimize(q.data());
  }
  setCounters(state, solves, converged, iterations);
  if (per_iteration)
    state.counters["time_per_iteration"] =
        benchmark::Counter(iterations, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void batchSolves(benchmark::State& state, const std::string& spec, int lanes, BatchIsa isa, int threads,
                 bool per_iteration) {
  const std::vector<Problem>& problems = throughputProblems(per_iteration);
  BatchOptions bo;
  bo.solve = per_iteration ? perIterationOptions() : SolverOptions();
  bo.lanes = lanes;
  bo.isa = isa;
  bo.threads = threads;
  double solves = 0, converged = 0, iterations = 0, fill = 0, rounds = 0;
  BatchStats stats;
  for (auto _ : state) {
    const std::vector<BatchResult> r = solveBatch(problems, spec, bo, &stats);
    for (const BatchResult& x : r) {
      converged += x.summary.converged();
      iterations += x.summary.iterations;
    }
    solves += static_cast<double>(problems.size());
    fill += stats.fill();
    rounds += 1;
    benchmark::DoNotOptimize(r.data());
  }
  setCounters(state, solves, converged, iterations);
  state.counters["lanes_filled"] = fill / std::max(1.0, rounds);
  state.counters["batched"] = static_cast<double>(stats.batched) / static_cast<double>(stats.problems);
  if (per_iteration)
    state.counters["time_per_iteration"] =
        benchmark::Counter(iterations, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(stats.isa);
}

void registerAll() {
  // The auto preset's iteration without its restarts, budget and cap, for
  // the PerIteration protocol.
  const std::string auto_iteration = "dls-adaptive:mode=error:err_gain=0.03:limits=freeze:max_step=1";
  const std::vector<std::tuple<std::string, std::string, std::string>> specs = {{"auto", kAuto, auto_iteration},
                                                                               {"dls", "dls", "dls"}};
  for (const auto& [name, spec, iteration_spec] : specs) {
    benchmark::RegisterBenchmark(fmt::format("Scalar/{}", name).c_str(),
                                 [spec = spec](benchmark::State& st) { scalarSolves(st, spec, false); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(fmt::format("ScalarGeneric/{}", name).c_str(),
                                 [spec = spec + ":kernel=generic"](benchmark::State& st) { scalarSolves(st, spec, false); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(fmt::format("Batch/{}", name).c_str(),
                                 [spec = spec](benchmark::State& st) {
                                   batchSolves(st, spec, static_cast<int>(st.range(0)),
                                               st.range(1) == 0 ? BatchIsa::kAuto : BatchIsa::kPortable, 1, false);
                                 })
        ->ArgsProduct({{4, 8, 16, 32}, {0, 1}})
        ->ArgNames({"lanes", "isa"})
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(fmt::format("Batch2T/{}", name).c_str(),
                                 [spec = spec](benchmark::State& st) {
                                   batchSolves(st, spec, 16, BatchIsa::kAuto, 2, false);
                                 })
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(fmt::format("ScalarPerIteration/{}", name).c_str(),
                                 [spec = iteration_spec](benchmark::State& st) { scalarSolves(st, spec, true); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(fmt::format("ScalarGenericPerIteration/{}", name).c_str(),
                                 [spec = iteration_spec + ":kernel=generic"](benchmark::State& st) {
                                   scalarSolves(st, spec, true);
                                 })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(fmt::format("BatchPerIteration/{}", name).c_str(),
                                 [spec = iteration_spec](benchmark::State& st) {
                                   batchSolves(st, spec, static_cast<int>(st.range(0)),
                                               st.range(1) == 0 ? BatchIsa::kAuto : BatchIsa::kPortable, 1, true);
                                 })
        ->ArgsProduct({{16}, {0, 1}})
        ->ArgNames({"lanes", "isa"})
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace ikbench

IKBENCH_BENCHMARK_MAIN()
