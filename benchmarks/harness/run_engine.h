// The run engine behind `ikbench run`: every solver spec on every problem of
// a suite, across a pool of threads, deterministic for a seed whatever the
// thread count, written to a results directory in the format of
// docs/results-format.md.
//
// Determinism: solve (family f, problem p, solver s) gets
//   options.seed = solveSeed(suite.seed, family name, p, spec)
// whatever thread runs it, and its row goes to a fixed slot; rows are written
// in (family, problem, solver) order. Sequential families (tracking: problem i
// starts from the answer to problem i-1) run as one unit per (family, solver)
// on one thread, in order. Results are then identical across thread counts,
// shards and resumed runs except the time columns, as long as no time budget
// binds.
//
// Units of work, in canonical order: one per (family, solver) for a
// sequential family, one per (family, problem, solver) otherwise. Shard k of n
// runs the units whose canonical index i has i % n == k - 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/run_config.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/solvers/solver_spec.h"

namespace ikbench::harness {

struct SolverList {
  std::vector<SolverSpec> specs;     // parsed once, in column order
  std::vector<std::string> skipped;  // the suite's specs whose backend is not in this build
  std::vector<SpecGrid> grids;       // the given grids (each expanded into specs)
};

// The specs a run will use: config's (grids expanded), else the suite's
// (those whose backend is not registered in this build are left out and
// listed in `skipped`), else the `auto` preset and every registered backend.
// Each is parsed once; a bad spec, a repeated spec or an empty list is a
// HarnessError.
SolverList resolveSolvers(const Suite& suite, const RunConfig& config);

// The default solvers of `ikbench run --urdf`: `auto` (the general-purpose
// recipe), its reference peer `kdl-lma`, and `analytic-6r` where the
// family's chain qualifies for the closed form (six revolute joints with a
// spherical wrist or three parallel axes: the backend's own supports()
// check on the family's first problem); backends missing from this build
// are left out.
std::vector<std::string> robotDefaultSolvers(const Family& family);

// The seed of one solve: Rng::mix of the suite seed and FNV-1a hashes of the
// family name, problem index and solver spec (independent of the thread).
std::uint64_t solveSeed(std::uint64_t suite_seed, const std::string& family, int problem,
                        const std::string& solver_spec);

// The problems of a family of `n` traced by `--trace-problems k`
// (RunConfig::kTraceAll: all of them): the k problems whose keys
// Rng::mix(Rng::mix(suite_seed, Rng::hash("trace:" + family)), p) are the
// smallest, in that order (ties by index). A deterministic, seeded sample
// spread over the family, the same for any thread count or shard; the sample
// of k is the first k of any larger one's.
std::vector<int> traceSample(std::uint64_t suite_seed, const std::string& family, int n, int k);

struct RunOutcome {
  std::string out_dir;
  bool complete = false;     // every solve of the run (or shard) and every file in place
  bool interrupted = false;  // stopped by config.stop
  long solves_total = 0;     // of this run (or shard)
  long solves_done = 0;      // finished, kept in the results
  long solves_resumed = 0;   // taken over from the interrupted run (--resume)
  int threads = 0;
  double wall_s = 0.0;        // timed pass
  double trace_wall_s = 0.0;  // trace pass
  std::vector<std::string> solvers;  // the spec texts, in column order
};

// Runs the suite into the results directory (checking everything first: a
// bad spec, an unusable or busy output directory is a HarnessError before
// any solve).
RunOutcome runSuite(const Suite& suite, const RunConfig& config);

// The directory a run writes to: config.out_dir, else
// <results_root>/<YYYYmmdd-HHMMSS>-<suite name, made safe for a path>.
std::string outputDirectory(const Suite& suite, const RunConfig& config);

}  // namespace ikbench::harness
