// The benchmark harness behind `ikbench run`: every solver spec on every
// problem of a suite, across a pool of threads, deterministic for a seed
// whatever the thread count, written to a results directory:
//
//   solves.csv   one row per solve (columns: kSolveColumns, then extras)
//   traces.csv   per-iteration records of a deterministic subset of solves,
//                recorded in a second, untimed pass (columns: kTraceColumns)
//   summary.csv  the summary table (family x solver) printed at the end
//   run.json     suite, seeds, solver specs with all parameter values, git
//                revision, compiler and flags, CPU, threads, start/end time,
//                throughput (solves/s)
//
// Every file is written to a temporary name in the same directory and renamed
// into place, so an interrupted run never leaves half a file.
//
// Determinism: solve (family f, problem p, solver s) gets
//   options.seed = solveSeed(suite.seed, family name, p, spec)
// whatever thread runs it, and its result goes to a fixed slot; rows are
// written in (family, problem, solver) order. Sequential families (tracking:
// problem i starts from the answer to problem i-1) run as one task per
// (family, solver) on one thread, in order. Results are then identical across
// thread counts except the time columns, as long as no time budget binds.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "ikbench/scenarios/suite.h"
#include "ikbench/solvers/summary.h"

namespace ikbench::harness {

// A bad command (unknown solver spec, unusable output directory, empty
// suite, ...); what() says what and where. `ikbench` exits with status 2.
class HarnessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The documented leading columns of solves.csv, in order. Users' scripts rely
// on these names; extra columns may only ever be appended after them.
extern const std::vector<std::string> kSolveColumns;
// Extra columns appended after kSolveColumns.
extern const std::vector<std::string> kSolveExtraColumns;
// Columns of traces.csv, in order.
extern const std::vector<std::string> kTraceColumns;
// Columns of solves.csv whose values depend on the machine's speed (excluded
// when comparing two runs for determinism).
extern const std::vector<std::string> kTimeColumns;

enum class ProgressMode { kAuto, kBar, kLines, kNone };

struct RunConfig {
  // Solver specs; empty = the suite's own list, or every registered backend
  // (with default parameters) if the suite names none.
  std::vector<std::string> solvers;
  int threads = 0;  // 0 = std::thread::hardware_concurrency()
  // Second, untimed pass with SolverOptions::record_trace on the first
  // trace_problems problems of every family, for every solver.
  bool trace = true;
  int trace_problems = 20;
  // Results directory; empty = <results_root>/<YYYYmmdd-HHMMSS>-<suite>.
  std::string out_dir;
  std::string results_root = "results";
  ProgressMode progress = ProgressMode::kAuto;
  std::ostream* log = nullptr;  // progress and notes; nullptr = std::cerr
  // Free-form command line, recorded in run.json.
  std::string command_line;
};

// One solve's result; indices refer to the suite's families, the family's
// problems and RunResult::solvers.
struct SolveRow {
  int family = 0, problem = 0, solver = 0;
  Summary summary;  // trace cleared
};

struct TraceRow {
  int family = 0, problem = 0, solver = 0;
  IterationRecord record;
};

struct RunResult {
  std::string out_dir;
  std::vector<std::string> solvers;  // resolved specs, in column order
  std::vector<std::string> skipped_solvers;  // the suite's specs not in this build
  std::vector<SolveRow> rows;        // (family, problem, solver) order
  std::vector<TraceRow> traces;      // (family, problem, solver, iteration) order
  int threads = 0;
  std::string start_time, end_time;  // ISO 8601, UTC
  double wall_s = 0.0;               // timing pass, wall clock
  double trace_wall_s = 0.0;         // trace pass, wall clock
  double solve_time_s = 0.0;         // sum of the solves' own time_us
};

// The seed of one solve: Rng::mix of the suite seed and FNV-1a hashes of the
// family name, problem index and solver spec (independent of the thread).
std::uint64_t solveSeed(std::uint64_t suite_seed, const std::string& family, int problem,
                        const std::string& solver_spec);

// The specs a run will use: config's, else the suite's (those whose backend
// is not registered in this build are left out and listed in *skipped), else
// every registered backend. Each is checked by creating it; an unknown or
// malformed spec given in config is a HarnessError.
std::vector<std::string> resolveSolvers(const Suite& suite, const RunConfig& config,
                                        std::vector<std::string>* skipped = nullptr);

// The directory a run writes to; created and checked writable (HarnessError
// naming the directory and the reason otherwise).
std::string prepareOutputDirectory(const Suite& suite, const RunConfig& config);

// Runs the suite (validating first: HarnessError before any solve if the
// specs or the output directory are bad) and writes every results file.
RunResult runSuite(const Suite& suite, const RunConfig& config);

// Runs without writing anything (out_dir stays empty). Used by runSuite.
RunResult runSuiteInMemory(const Suite& suite, const RunConfig& config);

// Writes solves.csv, traces.csv, summary.csv and run.json into result.out_dir.
void writeResults(const Suite& suite, const RunConfig& config, const RunResult& result);

// One row of the summary table. Percentiles interpolate linearly between
// order statistics (numpy's default); iteration/error/time figures are over
// supported solves (status not unsupported / invalid-input).
struct SummaryRow {
  std::string family, solver;
  int solves = 0, supported = 0, converged = 0;
  double success_rate = 0.0;  // converged / supported (0 if none supported)
  double iterations_median = 0.0, iterations_p90 = 0.0;
  double position_error_median = 0.0, orientation_error_median = 0.0;
  double time_us_median = 0.0, time_us_p90 = 0.0, time_us_mean = 0.0;
  double fk_evals_mean = 0.0, jacobian_evals_mean = 0.0;
};
std::vector<SummaryRow> summarize(const Suite& suite, const RunResult& result);
// The table printed at the end of a run.
std::string formatSummary(const Suite& suite, const RunResult& result);

// Writes `content` to path atomically (temp file in the same directory +
// rename). Throws HarnessError naming the file on failure.
void writeFileAtomically(const std::string& path, const std::string& content);

// Facts about the build and machine for run.json.
std::string gitRevision();
std::string cpuModel();
std::string isoTimeUtc();

// A suite built in code for `ikbench run --chain DOF`: families
// chain<DOF>-position and chain<DOF>-pose (`samples` reachable goals over 4
// random revolute chains, limits +-2.5 rad) and chain<DOF>-track (sequential:
// pose targets along a smooth joint-space path on one chain).
Suite chainSuite(int dof, int samples, std::uint64_t seed);

// ---- throughput (`ikbench throughput`) ----
struct ThroughputConfig {
  std::string solver = "dls";
  int dof = 7;
  int problems = 2000;      // distinct reachable pose problems, cycled
  long solves = 100000;     // solves per measurement
  std::vector<int> threads = {1, 2};
  std::uint64_t seed = 1;
  std::ostream* log = nullptr;
};
struct ThroughputPoint {
  int threads = 0;
  long solves = 0;
  long converged = 0;
  double wall_s = 0.0;
  double solves_per_s = 0.0;
  double cpu_s = 0.0;  // process CPU time; cpu_s / wall_s = cores actually busy
};
struct ThroughputResult {
  ThroughputConfig config;
  std::vector<ThroughputPoint> points;
  double speedup = 0.0;  // last point's solves/s over the first's
  std::string cpu;
  std::string load_average;  // /proc/loadavg, 1 min, at the start
  std::string start_time, end_time;
};
ThroughputResult measureThroughput(const ThroughputConfig& config);
// As JSON text (also merged into run.json by `ikbench throughput --out`).
std::string throughputJson(const ThroughputResult& result);

}  // namespace ikbench::harness
