// The batch path (solveBatch, SIMD across problems) against the scalar path
// on the same problems, in the same run.
//
//   ./bench_batch --benchmark_out=batch.json --benchmark_out_format=json
//   ./bench_batch --benchmark_filter='auto'
//
//   Scalar/<spec>                  one Solver, the problems one after another
//                                  (Solver::solve: the same kernel, one problem
//                                  in one lane)
//   ScalarPacked/<spec>, ScalarLanes/<spec>
//                                  the same with kernel=packed (one attempt at
//                                  a time in the one-problem step) and
//                                  kernel=lanes (up to four attempts at once,
//                                  one per lane); Scalar's kernel=auto takes
//                                  packed when the spec has no restarts
//   ScalarGeneric/<spec>           the same with kernel=generic: the generic
//                                  model code (forward_kinematics.h, goal.h,
//                                  jacobian_dls.cpp)
//   Batch/<spec>/lanes:L/isa:I     solveBatch over the same problems, one thread,
//                                  L lanes, isa 0 = auto (AVX2 + FMA when the CPU
//                                  has them), 1 = portable (SSE2)
//   Batch2T/<spec>                 solveBatch on 2 threads (16 lanes each)
//   Batch/auto:library=131072[:start=library]/lanes:16/isa:0, Batch2T/...
//                                  auto with a seed library: restarts from
//                                  its entries nearest the target (and the
//                                  first attempt with start=library); the
//                                  libraries are built before the timing
//                                  (LibraryNearest below times a search)
//   LibraryNearest/entries:N/k:K   SeedLibrary::nearest, the K nearest of N
//                                  entries to one target
//   LibraryStarts/entries:131072/starts:S
//                                  a solve's first S library starts
//                                  (LibraryStarts, start=library), the
//                                  searches of its stages included
//   ScalarPerIteration/<spec> (the one-problem step),
//   ScalarLanesPerIteration/<spec> (the lane step, one lane busy),
//   ScalarGenericPerIteration/<spec>, BatchPerIteration/<spec>
//                                  200 iterations per solve towards targets out
//                                  of reach, stall test off (bench_solvers'
//                                  PerIteration protocol; for auto its
//                                  iteration, dls-adaptive:mode=error:
//                                  err_gain=0.05:limits=freeze:max_step=2
//                                  (limits=auto freezes on a 7-DOF pose
//                                  goal), without restarts, stall window
//                                  and cap): the cost of one
//                                  iteration of one problem
//   Peak/fma/lanes:<4|8>           the core's multiply-add peak on AVX2 (4
//                                  lanes) or AVX-512 (8 lanes) registers,
//                                  counter lane_fma_per_s (skipped where the
//                                  CPU lacks the instructions)
// The problems are those of `ikbench throughput`: 2000 reachable pose
// targets, 100 on each of 20 random 7-DOF chains with +-2.5 rad limits,
// nominal start (PerIteration: 16 unreachable targets per chain, so that
// every lane group is full). Counters: per_solve
// (seconds per solve), converged_per_s, success_rate, iterations (mean per
// solve), lane_steps (Batch: iterations plus one start evaluation per
// attempt, per solve), lanes_filled (fraction of lane-iterations that held a problem),
// time_per_iteration (PerIteration).
#include <benchmark/benchmark.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <fmt/format.h>

#include <tuple>

#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/seed_library.h"
#include "bench_main.h"

namespace ikbench {
namespace {

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
                 bool per_iteration, int library = 0) {
  const std::vector<Problem>& problems = throughputProblems(per_iteration);
  // A spec's seed libraries are built before the clock starts (once per
  // model and process), as `ikbench throughput` does.
  if (library > 0)
    for (const Problem& p : problems) SeedLibrary::forGoals(p.model, p.goals, library);
  BatchOptions bo;
  bo.solve = per_iteration ? perIterationOptions() : SolverOptions();
  bo.lanes = lanes;
  bo.isa = isa;
  bo.threads = threads;
  double solves = 0, converged = 0, iterations = 0, attempts = 0, fill = 0, rounds = 0;
  BatchStats stats;
  for (auto _ : state) {
    const std::vector<BatchResult> r = solveBatch(problems, spec, bo, &stats);
    for (const BatchResult& x : r) {
      converged += x.summary.converged();
      iterations += x.summary.iterations;
      attempts += 1 + x.summary.restarts;
    }
    solves += static_cast<double>(problems.size());
    fill += stats.fill();
    rounds += 1;
    benchmark::DoNotOptimize(r.data());
  }
  setCounters(state, solves, converged, iterations);
  // Lane-steps per solve: the iterations plus each attempt's start evaluation.
  state.counters["lane_steps"] = (iterations + attempts) / std::max(1.0, solves);
  state.counters["lanes_filled"] = fill / std::max(1.0, rounds);
  state.counters["batched"] = static_cast<double>(stats.batched) / static_cast<double>(stats.problems);
  if (per_iteration)
    state.counters["time_per_iteration"] =
        benchmark::Counter(iterations, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(stats.isa);
}

// The machine's fused multiply-add peak per core, for the floor the kernel is
// measured against: twelve independent FMA chains (more than latency x ports,
// so issue bound) on 4-lane AVX2 or 8-lane AVX-512 registers. Counter
// lane_fma_per_s: double-precision multiply-adds per second (lanes x
// instructions). Whether 8 lanes per register buy anything depends on how
// many 512-bit FMA ports the core has.
#if defined(__x86_64__) && defined(__GNUC__)
#define IKBENCH_HAVE_PEAK_CASES 1
__attribute__((target("avx2,fma"))) double fmaPeakAvx2(long rounds) {
  __m256d a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_pd(1.0 + 1e-9 * i);
  const __m256d b = _mm256_set1_pd(0.9999999), c = _mm256_set1_pd(1e-9);
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_pd(a[i], b, c);
    __asm__ volatile("" : "+x"(a[0]), "+x"(a[6]));  // keep the loop
  }
  double sum = 0.0;
  for (int i = 0; i < 12; ++i) sum += _mm256_cvtsd_f64(a[i]);
  return sum;
}

__attribute__((target("avx512f"))) double fmaPeakAvx512(long rounds) {
  __m512d a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_pd(1.0 + 1e-9 * i);
  const __m512d b = _mm512_set1_pd(0.9999999), c = _mm512_set1_pd(1e-9);
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_pd(a[i], b, c);
    __asm__ volatile("" : "+v"(a[0]), "+v"(a[6]));
  }
  double sum = 0.0;
  for (int i = 0; i < 12; ++i) sum += _mm512_cvtsd_f64(a[i]);
  return sum;
}

void fmaPeak(benchmark::State& state, int lanes) {
  const bool ok = lanes == 4 ? (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
                             : __builtin_cpu_supports("avx512f");
  if (!ok) {
    state.SkipWithError(lanes == 4 ? "the CPU lacks AVX2 + FMA" : "the CPU lacks AVX-512F");
    return;
  }
  constexpr long kRounds = 1 << 20;
  double fmas = 0.0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(lanes == 4 ? fmaPeakAvx2(kRounds) : fmaPeakAvx512(kRounds));
    fmas += 12.0 * static_cast<double>(kRounds) * lanes;
  }
  state.counters["lane_fma_per_s"] = benchmark::Counter(fmas, benchmark::Counter::kIsRate);
}
#endif

// Each problem's seed library of `entries` (built once per chain, cached).
std::vector<std::shared_ptr<const SeedLibrary>> librariesOf(const std::vector<Problem>& problems, int entries) {
  std::vector<std::shared_ptr<const SeedLibrary>> libraries;
  for (const Problem& p : problems) libraries.push_back(SeedLibrary::forGoals(p.model, p.goals, entries));
  return libraries;
}

// SeedLibrary::nearest: the k entries nearest each target of the
// throughput problems (their own chain's library), one query per iteration:
// k = 1 is a solve's first start, k = kNearStarts its first restarts.
void libraryNearest(benchmark::State& state, int entries, int k) {
  const std::vector<Problem>& problems = throughputProblems(false);
  const std::vector<std::shared_ptr<const SeedLibrary>> libraries = librariesOf(problems, entries);
  int out[SeedLibrary::kNearStarts];
  size_t i = 0;
  long found = 0;
  for (auto _ : state) {
    found += libraries[i]->nearest(problems[i].goals.front(), k, out);
    benchmark::DoNotOptimize(out);
    if (++i == problems.size()) i = 0;
  }
  state.counters["found"] = static_cast<double>(found) / static_cast<double>(state.iterations());
}

// LibraryStarts: a solve's first `starts` library starts (start=library), as
// a solve with that many attempts takes them: 1 (the nearest alone), 9 (and
// the near restarts), 25 (and 16 of the rest, searched when the near ones
// are used up).
void libraryStarts(benchmark::State& state, int entries, int starts) {
  const std::vector<Problem>& problems = throughputProblems(false);
  const std::vector<std::shared_ptr<const SeedLibrary>> libraries = librariesOf(problems, entries);
  size_t i = 0;
  long found = 0;
  for (auto _ : state) {
    LibraryStarts taken(libraries[i].get(), &problems[i].goals.front(), StartMode::kLibrary);
    for (int a = 0; a < starts; ++a) {
      const double* q = taken.forAttempt(a);
      benchmark::DoNotOptimize(q);
      found += q != nullptr;
    }
    if (++i == problems.size()) i = 0;
  }
  state.counters["found"] = static_cast<double>(found) / static_cast<double>(state.iterations());
}

void registerAll() {
  for (int entries : {4096, 65536, 131072})
    for (int k : {1, SeedLibrary::kNearStarts})
      benchmark::RegisterBenchmark(fmt::format("LibraryNearest/entries:{}/k:{}", entries, k).c_str(),
                                   [entries, k](benchmark::State& st) { libraryNearest(st, entries, k); })
          ->Unit(benchmark::kMicrosecond);
  for (int starts : {1, 1 + SeedLibrary::kNearStarts, 1 + SeedLibrary::kNearStarts + 16})
    benchmark::RegisterBenchmark(fmt::format("LibraryStarts/entries:131072/starts:{}", starts).c_str(),
                                 [starts](benchmark::State& st) { libraryStarts(st, 131072, starts); })
        ->Unit(benchmark::kMicrosecond);
  // The auto preset's iteration without its restarts, budget, stall window
  // and cap, for the PerIteration protocol.
  const std::string auto_iteration = "dls-adaptive:mode=error:err_gain=0.05:limits=freeze:max_step=2";
  const std::vector<std::tuple<std::string, std::string, std::string>> specs = {{"auto", "auto", auto_iteration},
                                                                               {"dls", "dls", "dls"}};
  for (const auto& [name, spec, iteration_spec] : specs) {
    benchmark::RegisterBenchmark(fmt::format("Scalar/{}", name).c_str(),
                                 [spec = spec](benchmark::State& st) { scalarSolves(st, spec, false); })
        ->Unit(benchmark::kMicrosecond);
    for (const char* kernel : {"packed", "lanes"})
      benchmark::RegisterBenchmark(fmt::format("Scalar{}/{}", kernel[0] == 'p' ? "Packed" : "Lanes", name).c_str(),
                                   [spec = spec + ":kernel=" + kernel](benchmark::State& st) {
                                     scalarSolves(st, spec, false);
                                   })
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
    benchmark::RegisterBenchmark(fmt::format("ScalarLanesPerIteration/{}", name).c_str(),
                                 [spec = iteration_spec + ":kernel=lanes"](benchmark::State& st) {
                                   scalarSolves(st, spec, true);
                                 })
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
  // auto with a seed library (131072 entries): restarts from it (the start
  // is still the problem's), and the first attempt from it too.
  for (const char* spec : {"auto:library=131072", "auto:library=131072:start=library"}) {
    benchmark::RegisterBenchmark(fmt::format("Batch/{}/lanes:16/isa:0", spec).c_str(),
                                 [spec](benchmark::State& st) { batchSolves(st, spec, 16, BatchIsa::kAuto, 1, false, 131072); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(fmt::format("Batch2T/{}", spec).c_str(),
                                 [spec](benchmark::State& st) { batchSolves(st, spec, 16, BatchIsa::kAuto, 2, false, 131072); })
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
#ifdef IKBENCH_HAVE_PEAK_CASES
  for (int lanes : {4, 8})
    benchmark::RegisterBenchmark(fmt::format("Peak/fma/lanes:{}", lanes).c_str(),
                                 [lanes](benchmark::State& st) { fmaPeak(st, lanes); })
        ->Unit(benchmark::kMillisecond);
#endif
}

}  // namespace
}  // namespace ikbench

IKBENCH_BENCHMARK_MAIN()
