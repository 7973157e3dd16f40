// What `ikbench run` is asked to do: solvers, threads, output, shard, and the
// errors of a bad command.
#pragma once

#include <atomic>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ikbench::harness {

// A bad command (unknown solver spec, unusable output directory, empty
// suite, ...); what() says what and where. `ikbench` exits with status 2.
class HarnessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ProgressMode { kAuto, kBar, kLines, kNone };

// How a run treats its output directory.
enum class OutputMode {
  kFresh,   // the directory must be empty or absent
  kForce,   // replace the results of an earlier run in it
  kResume,  // complete an interrupted run (same suite, seed, solvers and build)
};

// Shard k of n (1 <= k <= n): a deterministic 1/n of the solves.
struct Shard {
  int index = 1;
  int count = 1;
};
// Parses "K/N"; HarnessError for anything else.
Shard parseShard(const std::string& text);

struct RunConfig {
  // Solver specs or grids (solver_spec.h); empty = the suite's own list, or
  // every registered backend (with default parameters) if the suite names none.
  std::vector<std::string> solvers;
  int threads = 0;  // 0 = std::thread::hardware_concurrency(); at most kMaxThreads
  static constexpr int kMaxThreads = 1024;
  // Second, untimed pass with SolverOptions::record_trace on a seeded sample
  // of trace_problems problems of every family (traceSample), for every
  // solver; kTraceAll traces every problem.
  bool trace = true;
  static constexpr int kDefaultTraceProblems = 3;  // ikbench report's default too
  static constexpr int kTraceAll = -1;
  int trace_problems = kDefaultTraceProblems;
  // Appends the quality columns (harness/answer_quality.h) to solves.csv;
  // always on for a suite that follows a protocol.
  bool quality = false;
  static constexpr int kMaxTraceProblems = 1'000'000;
  // Results directory; empty = <results_root>/<YYYYmmdd-HHMMSS>-<suite>.
  std::string out_dir;
  std::string results_root = "results";
  OutputMode output = OutputMode::kFresh;
  std::optional<Shard> shard;
  ProgressMode progress = ProgressMode::kAuto;
  std::ostream* log = nullptr;  // progress and notes; nullptr = std::cerr
  // Free-form command line, recorded in run.json.
  std::string command_line;
  // Set (by a signal handler) to stop: the workers finish the solve at hand,
  // every finished solve is kept, and the run is marked incomplete.
  const std::atomic<bool>* stop = nullptr;
};

}  // namespace ikbench::harness
