// `ikbench throughput`: converged solves per second of one solver spec on
// random N-DOF chains with reachable pose goals, at several thread counts;
// with `batch`, through solveBatch (ikbench/solvers/batch.h) on the same
// problems, and then also the scalar path in the same run for the ratio.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ikbench::harness {

struct ThroughputConfig {
  std::string solver = "dls";
  int dof = 7;
  int problems = 2000;   // distinct reachable pose problems, cycled
  long solves = 100000;  // solves per measurement
  std::vector<int> threads = {1, 2};
  std::uint64_t seed = 1;
  std::ostream* log = nullptr;
  // Solve through solveBatch (SIMD across problems) instead of one Solver
  // per thread; the scalar path is measured too, in the same run.
  bool batch = false;
  int lanes = 16;          // problems in flight per thread (batch)
  std::string isa = "auto";  // auto | portable | avx2 (batch)
  // Bounds on the arguments.
  static constexpr int kMaxDof = 10'000;
  static constexpr int kMaxProblems = 1'000'000;
  static constexpr long kMaxSolves = 1'000'000'000L;
};
struct ThroughputPoint {
  int threads = 0;
  long solves = 0;
  long converged = 0;
  double wall_s = 0.0;
  double converged_per_s = 0.0;  // the figure: a solve that fails is not throughput
  double solves_per_s = 0.0;     // every solve, converged or not
  double cpu_s = 0.0;            // process CPU time; cpu_s / wall_s = cores actually busy
  std::string path = "scalar";   // "scalar" (Solver::solve), "batch" or "generic" (kernel=generic)
  double lane_fill = 0.0;        // batch: fraction of lane-iterations that held a problem
  long batched = 0;              // batch: problems through the SIMD kernel
  long busy_lane_steps = 0;      // batch: kernel iterations of a problem (BatchStats::busy_lane_steps)
  // The machine's load during this point's measurement (machine_load.h's
  // LoadRecorder::json(); null where /proc/loadavg cannot be read).
  nlohmann::json load;
  // The rates of the point's kSlices equal slices of solves, in the order they
  // were handed out (scalar paths; empty for the batch path, one call), and
  // their spread: the highest over the lowest.
  static constexpr int kSlices = 5;
  std::vector<double> slice_rates;
  double spread = 0.0;
  // Noisy: the 1-min load average exceeded the usable cores during the point,
  // or its slices' rates spread beyond kNoisySpread (the machine's speed
  // changed while it was measured: another process, frequency, migration).
  static constexpr double kNoisySpread = 1.25;
  bool noisy = false;
};
struct ThroughputResult {
  ThroughputConfig config;
  // The spec every path ran: config.solver, or with the batch's default
  // library (ikbench::batchSpec) when --batch holds enough problems of a model.
  std::string solver;
  std::vector<ThroughputPoint> points;
  double speedup = 0.0;  // last point's converged solves/s over the first's (same path)
  // batch: converged solves/s of the batch path over the scalar path, per
  // thread count (same run), and the batch kernel's instruction set.
  std::vector<double> batch_over_scalar;
  // batch, for a spec with the compiled chain kernel (dls, dls-adaptive):
  // over the generic model code (the spec with kernel=generic), per thread
  // count; its points have path "generic".
  std::vector<double> batch_over_generic;
  std::string isa;
  // A spec with a seed library (library=N): the wall time [s] that building
  // the libraries of the problems' models took, once per model before any
  // timed run (the rates exclude it); 0 without a library.
  double library_build_s = 0.0;
  int libraries = 0;
  std::string cpu;
  std::string load_average;  // /proc/loadavg, 1 min, at the start
  std::string start_time, end_time;
};
// Measures; HarnessError for bad arguments and for a spec that converges on
// none of the problems (its throughput would be meaningless).
ThroughputResult measureThroughput(const ThroughputConfig& config);
// throughput.json (written by `ikbench throughput --out DIR`).
nlohmann::json throughputJson(const ThroughputResult& result);
// The console table of a result: one row per point (path, threads,
// converged solves/s, solves/s, converged %, cores busy, load) and the
// ratios (speedup, batch / scalar, batch / generic), in plain text.
std::string throughputTable(const ThroughputResult& result);

}  // namespace ikbench::harness
