// `ikbench throughput`: converged solves per second of one solver on random
// chains, at several thread counts, with the speedup of the last over the first.
//
// Fixed work (config.solves solves, cycling over config.problems distinct
// problems) rather than a fixed time, so every thread count does exactly the
// same solves; each thread keeps its own Solver instance and takes problems
// in chunks from an atomic counter. With --batch the same solves also go
// through one solveBatch call per thread count (SIMD lanes, refilled as
// problems finish), measured right after the scalar path at that thread
// count, and the ratio of the two is reported.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <fstream>
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "harness/throughput.h"

#include "harness/build_info.h"
#include "harness/machine_load.h"
#include "harness/run_config.h"
#include "ikbench/core/threads.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/seed_library.h"

namespace ikbench::harness {
namespace {

// CPU time of the whole process [s]: with T busy threads on T free cores it
// grows T times as fast as the wall clock; less means the cores were shared.
double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::string loadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string a;
  f >> a;
  return a.empty() ? "unknown" : a;
}

}  // namespace

ThroughputResult measureThroughput(const ThroughputConfig& config) {
  if (config.dof < 1 || config.dof > ThroughputConfig::kMaxDof)
    throw HarnessError(fmt::format("throughput: --dof must be in [1, {}], got {}", ThroughputConfig::kMaxDof, config.dof));
  if (config.problems < 1 || config.problems > ThroughputConfig::kMaxProblems)
    throw HarnessError(fmt::format("throughput: --problems must be in [1, {}], got {}", ThroughputConfig::kMaxProblems,
                                   config.problems));
  if (config.solves < 1 || config.solves > ThroughputConfig::kMaxSolves)
    throw HarnessError(fmt::format("throughput: --solves must be in [1, {}], got {}", ThroughputConfig::kMaxSolves,
                                   config.solves));
  if (config.threads.empty()) throw HarnessError("throughput: no thread counts");
  for (int t : config.threads)
    if (t < 1 || t > RunConfig::kMaxThreads)
      throw HarnessError(fmt::format("throughput: thread count {} is not in [1, {}]", t, RunConfig::kMaxThreads));
  SolverSpec spec;
  try {
    spec = Registry::global().parse(config.solver);
  } catch (const std::exception& e) {
    throw HarnessError(fmt::format("bad solver spec '{}': {}", config.solver, e.what()));
  }
  std::ostream& log = config.log ? *config.log : std::cerr;

  // Reachable pose targets (TRAC-IK protocol) on 20 random chains with
  // joint limits of +-2.5 rad, started at the nominal configuration.
  std::vector<Problem> problems;
  const int chains = std::min(20, config.problems);
  for (int c = 0; c < chains; ++c) {
    ChainSpec cs;
    cs.joints = config.dof;
    cs.limit = 2.5;
    const std::uint64_t seed = Rng::mix(config.seed, static_cast<std::uint64_t>(c));
    GoalSetSpec gs;
    gs.count = config.problems / chains + (c < config.problems % chains ? 1 : 0);
    gs.kind = GoalKind::kPose;
    for (Problem& p : reachableGoals(randomChain(cs, seed), gs, seed, fmt::format("tp{}", c)))
      problems.push_back(std::move(p));
  }
  SolverOptions options;

  ThroughputResult out;
  out.config = config;
  out.cpu = cpuModel();
  out.start_time = isoTimeUtc();
  out.load_average = loadAverage();
  // With --batch, a spec whose backend has the compiled chain kernel
  // (dls, dls-adaptive) is also measured on the generic model code
  // (kernel=generic): Solver::solve runs the kernel one problem at a time,
  // so the generic code is the other peer of the batch path.
  // The batch path's default library (batchSpec: a spec with restarts
  // and no library key gets one when the batch holds enough problems of a
  // model for it to pay), taken by every path of the run so that they solve
  // the same problems the same way.
  std::vector<Problem> cycled;
  if (config.batch) {
    cycled.reserve(static_cast<size_t>(config.solves));
    for (long i = 0; i < config.solves; ++i) cycled.push_back(problems[static_cast<size_t>(i) % problems.size()]);
    const long per_model = problemsPerModel(cycled);
    const std::string given = spec.text;
    spec = batchSpec(spec, per_model);
    if (spec.text != given)
      log << fmt::format("throughput: the batch holds {} problems of a model (>= {}): '{}' runs as '{}' (the "
                         "batch's default library; library=0 opts out)\n",
                         per_model, kBatchLibraryMinProblems, config.solver, spec.text);
  }
  out.solver = spec.text;
  std::optional<SolverSpec> generic;
  if (config.batch)
    for (const auto& [key, value] : spec.parameters)
      if (key == "kernel" && value == "auto") generic = Registry::global().with(spec, {{"kernel", "generic"}});
  auto measure = [&](int threads, long solves, const SolverSpec& which) {
    std::atomic<long> next{0}, converged{0};
    constexpr long kChunk = 64;
    constexpr int kSlices = ThroughputPoint::kSlices;
    // When the first chunk of each slice of the solves was handed out (ns
    // since t0): the slices' rates tell a point whose speed changed.
    std::atomic<std::int64_t> slice_start[kSlices + 1];
    for (auto& s : slice_start) s.store(-1);
    std::chrono::steady_clock::time_point t0;
    auto worker = [&] {
      auto solver = Registry::global().create(which);
      Eigen::VectorXd q;
      long ok = 0;
      for (long b; (b = next.fetch_add(kChunk)) < solves;) {
        const int slice = static_cast<int>(b * kSlices / solves);
        std::int64_t unset = -1;
        if (slice_start[slice].load(std::memory_order_relaxed) < 0)
          slice_start[slice].compare_exchange_strong(
              unset, std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
        for (long i = b; i < std::min(solves, b + kChunk); ++i) {
          const Problem& p = problems[static_cast<size_t>(i) % problems.size()];
          q = p.q0;
          ok += solver->solve(p, q, options).converged();
        }
      }
      converged += ok;
    };
    LoadRecorder load;
    BackgroundLoadSampler sampler(load);
    const double cpu0 = processCpuSeconds();
    t0 = std::chrono::steady_clock::now();
    // A point on fewer threads than asked is not measured: a thread that
    // cannot start is an error.
    ThreadsOptions pool;
    pool.who = "throughput";
    pool.on_failure = [&] { next = solves; };
    try {
      runOnThreads(threads, [&](int) { worker(); }, pool);
    } catch (const ThreadStartError& e) {
      throw HarnessError(fmt::format("{} ({}); measure fewer --threads", e.what(), e.code().message()));
    }
    ThroughputPoint pt;
    pt.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    pt.cpu_s = processCpuSeconds() - cpu0;
    sampler.stop();  // outside the timed region
    pt.load = load.json();
    slice_start[kSlices].store(static_cast<std::int64_t>(pt.wall_s * 1e9));
    bool sliced = solves >= kSlices * kChunk;  // each slice at least one chunk
    for (int k = 0; sliced && k < kSlices; ++k) {
      const double dt = static_cast<double>(slice_start[k + 1].load() - slice_start[k].load()) * 1e-9;
      sliced = slice_start[k].load() >= 0 && dt > 0;
      if (sliced) pt.slice_rates.push_back(static_cast<double>(solves) / kSlices / dt);
    }
    if (!sliced) pt.slice_rates.clear();
    if (!pt.slice_rates.empty())
      pt.spread = *std::max_element(pt.slice_rates.begin(), pt.slice_rates.end()) /
                  *std::min_element(pt.slice_rates.begin(), pt.slice_rates.end());
    pt.noisy = load.noisy() || pt.spread > ThroughputPoint::kNoisySpread;
    pt.threads = threads;
    pt.solves = solves;
    pt.converged = converged;
    pt.solves_per_s = static_cast<double>(solves) / pt.wall_s;
    pt.converged_per_s = static_cast<double>(pt.converged) / pt.wall_s;
    if (&which != &spec) pt.path = "generic";
    return pt;
  };
  // The batch path: the same solves (problem i % problems.size() for
  // i < solves), laid out once outside the timed region.
  BatchIsa isa = BatchIsa::kAuto;
  if (config.isa == "portable") isa = BatchIsa::kPortable;
  else if (config.isa == "avx2") isa = BatchIsa::kAvx2;
  else if (config.isa != "auto")
    throw HarnessError(fmt::format("throughput: --isa must be auto, portable or avx2, got '{}'", config.isa));
  if (config.batch) out.isa = batchIsaName(isa);
  auto measureBatch = [&](int threads, const std::vector<Problem>& work) {
    BatchOptions bo;
    bo.solve = options;
    bo.threads = threads;
    bo.lanes = config.lanes;
    bo.isa = isa;
    BatchStats stats;
    LoadRecorder load;
    BackgroundLoadSampler sampler(load);
    const double cpu0 = processCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    // The answers and their statuses, as a caller keeping them would ask
    // for them (solve_batch's arrays; the memory is touched first by the
    // solves, as a fresh numpy.empty's would be).
    const size_t n = work.size();
    const int nq = config.dof;
    auto q = std::make_unique_for_overwrite<double[]>(n * static_cast<size_t>(nq));
    auto status = std::make_unique_for_overwrite<std::uint8_t[]>(n);
    BatchArrays arrays;
    arrays.q = q.get();
    arrays.q_stride = nq;
    arrays.status = status.get();
    solveBatch(work, spec, bo, arrays, &stats);
    ThroughputPoint pt;
    pt.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    pt.cpu_s = processCpuSeconds() - cpu0;
    sampler.stop();  // outside the timed region
    pt.load = load.json();
    pt.noisy = load.noisy();
    pt.path = "batch";
    pt.threads = threads;
    pt.solves = static_cast<long>(work.size());
    for (size_t i = 0; i < n; ++i) pt.converged += status[i] == static_cast<std::uint8_t>(Status::kConverged);
    pt.solves_per_s = static_cast<double>(pt.solves) / pt.wall_s;
    pt.converged_per_s = static_cast<double>(pt.converged) / pt.wall_s;
    pt.lane_fill = stats.fill();
    pt.batched = stats.batched;
    pt.busy_lane_steps = stats.busy_lane_steps;
    return pt;
  };
  // One progress line per measured point (the table comes at the end).
  auto report = [&](const ThroughputPoint& pt) {
    log << fmt::format("throughput: {} at {} thread{}: {:.0f} converged solves/s ({:.2f} s)\n", pt.path, pt.threads,
                       pt.threads == 1 ? "" : "s", pt.converged_per_s, pt.wall_s);
  };
  // Seed libraries (library=N) are built once per model, as a run's first
  // solve of each model would: here, before the timed runs, and timed. They
  // are held until the end, so that the timed runs find them even where
  // they are more than the process-wide cache keeps.
  std::vector<std::shared_ptr<const SeedLibrary>> libraries;
  if (spec.common.library > 0) {
    const auto t0 = std::chrono::steady_clock::now();
    std::set<const Model*> models;
    for (const Problem& p : problems)
      if (models.insert(p.model.get()).second)
        if (auto library = SeedLibrary::forGoals(p.model, p.goals, spec.common.library)) {
          libraries.push_back(std::move(library));
          ++out.libraries;
        }
    out.library_build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log << fmt::format("throughput: {} seed libraries of {} entries built in {:.3f} s (once per model, not timed "
                       "below)\n",
                       out.libraries, spec.common.library, out.library_build_s);
  }
  const long built_after_setup = SeedLibrary::cacheStats().built;
  // Warm-up (pages in code and data) and the check that the spec converges at all.
  const ThroughputPoint warm = measure(1, std::min<long>(config.solves, 2000), spec);
  if (warm.converged == 0)
    throw HarnessError(fmt::format("throughput: '{}' converged on none of {} problems ({}-DOF pose goals): its "
                                   "throughput would count failures",
                                   config.solver, warm.solves, config.dof));
  if (config.batch)
    measureBatch(1, std::vector<Problem>(cycled.begin(), cycled.begin() + std::min<long>(config.solves, 2000)));
  std::vector<ThroughputPoint> batch_points, generic_points;
  for (int threads : config.threads) {
    ThroughputPoint pt = measure(threads, config.solves, spec);
    report(pt);
    out.points.push_back(pt);
    if (config.batch) {
      ThroughputPoint bp = measureBatch(threads, cycled);
      report(bp);
      out.batch_over_scalar.push_back(bp.converged_per_s / pt.converged_per_s);
      batch_points.push_back(bp);
      if (generic) {
        ThroughputPoint gp = measure(threads, config.solves, *generic);
        report(gp);
        out.batch_over_generic.push_back(bp.converged_per_s / gp.converged_per_s);
        generic_points.push_back(gp);
      }
    }
  }
  if (config.batch) {
    out.points.insert(out.points.end(), batch_points.begin(), batch_points.end());
    out.points.insert(out.points.end(), generic_points.begin(), generic_points.end());
    out.speedup = batch_points.back().converged_per_s / batch_points.front().converged_per_s;
  } else {
    out.speedup = out.points.back().converged_per_s / out.points.front().converged_per_s;
  }
  // A library built after the set-up would have been timed: say so.
  const long built_late = SeedLibrary::cacheStats().built - built_after_setup;
  if (built_late > 0)
    log << fmt::format("throughput: warning: {} seed libraries were built during the timed runs; their build time "
                       "is in the rates above\n",
                       built_late);
  // Points measured while other work competed for the cores are slower
  // than the machine is: say which.
  size_t loaded = 0, spread = 0;
  double worst = 0.0, widest = 0.0;
  for (const ThroughputPoint& p : out.points) {
    if (p.load.is_object() && p.load.value("noisy", false)) {
      ++loaded;
      worst = std::max(worst, p.load["samples"]["max"].get<double>());
    }
    if (p.spread > ThroughputPoint::kNoisySpread) {
      ++spread;
      widest = std::max(widest, p.spread);
    }
  }
  if (loaded > 0)
    log << fmt::format("throughput: warning: {} of {} points measured under load (1-min load average up to {:.2f} "
                       "on {} usable cores; '!' in the table): their rates are lower than a quiet machine's\n",
                       loaded, out.points.size(), worst, usableCores());
  if (spread > 0)
    log << fmt::format("throughput: warning: {} of {} points changed speed while measured (the rates of their {} "
                       "slices spread up to {:.2f}x; '!' in the table): measure again on a quieter machine\n",
                       spread, out.points.size(), ThroughputPoint::kSlices, widest);
  out.end_time = isoTimeUtc();
  return out;
}

nlohmann::json throughputJson(const ThroughputResult& r) {
  nlohmann::json j;
  j["solver"] = r.config.solver;
  // The spec every path ran: the given one, or with the batch's default
  // library (batchSpec).
  j["effective_solver"] = r.solver.empty() ? r.config.solver : r.solver;
  j["problem"] = fmt::format("{}-DOF random chains (limits +-2.5 rad), reachable pose goals, nominal start",
                             r.config.dof);
  j["distinct_problems"] = r.config.problems;
  j["seed"] = r.config.seed;
  j["git_revision"] = gitRevision();
  j["build"] = buildJson();
  j["machine"] = machineJson();
  j["start_time"] = r.start_time;
  j["end_time"] = r.end_time;
  nlohmann::json pts = nlohmann::json::array();
  for (const ThroughputPoint& p : r.points)
    pts.push_back({{"threads", p.threads},
                   {"solves", p.solves},
                   {"converged", p.converged},
                   {"wall_s", p.wall_s},
                   {"converged_per_s", p.converged_per_s},
                   {"solves_per_s", p.solves_per_s},
                   {"cpu_s", p.cpu_s},
                   {"cores_busy", p.cpu_s / p.wall_s},
                   {"path", p.path}});
  if (r.config.batch) {
    for (size_t i = 0; i < r.points.size(); ++i)
      if (r.points[i].path == "batch") {
        pts[i]["lane_fill"] = r.points[i].lane_fill;
        pts[i]["batched"] = r.points[i].batched;
        pts[i]["lane_steps_per_solve"] =
            static_cast<double>(r.points[i].busy_lane_steps) / static_cast<double>(std::max(1L, r.points[i].solves));
      }
    j["batch"] = {{"isa", r.isa}, {"lanes_per_thread", r.config.lanes}, {"batch_over_scalar", r.batch_over_scalar}};
    if (!r.batch_over_generic.empty()) j["batch"]["batch_over_generic"] = r.batch_over_generic;
  }
  for (size_t i = 0; i < r.points.size(); ++i) {
    pts[i]["load"] = r.points[i].load;
    pts[i]["noisy"] = r.points[i].noisy;
    if (!r.points[i].slice_rates.empty()) {
      pts[i]["slice_rates"] = r.points[i].slice_rates;
      pts[i]["spread"] = r.points[i].spread;
    }
  }
  j["points"] = pts;
  j["load_average_1min_at_start"] = r.load_average;
  j["seed_libraries"] = r.libraries;
  j["seed_library_build_s"] = r.library_build_s;
  j["speedup"] = r.speedup;
  j["speedup_of"] = fmt::format("converged solves/s{}, {} threads over {} thread(s)",
                                r.config.batch ? " of the batch path" : "", r.config.threads.back(),
                                r.config.threads.front());
  return j;
}

std::string throughputTable(const ThroughputResult& r) {
  // Thousands separated by spaces: 1234567 -> "1 234 567".
  auto grouped = [](double v) {
    std::string digits = fmt::format("{:.0f}", v);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ' ';
      out += digits[i];
    }
    return out;
  };
  std::string text = fmt::format("{}: {}-DOF reachable pose problems ({} distinct, cycled), seed {}\n",
                                 r.solver.empty() ? r.config.solver : r.solver, r.config.dof, r.config.problems,
                                 r.config.seed);
  text += fmt::format("{:<8} {:>7} {:>13} {:>13} {:>9} {:>8} {:>6} {:>6}\n", "path", "threads", "converged/s",
                      "solves/s", "converged", "x first", "cores", "load");
  for (const ThroughputPoint& p : r.points) {
    // The ratio to the first thread count of the same path (the speedup).
    double first = 0.0;
    for (const ThroughputPoint& q : r.points)
      if (q.path == p.path) {
        first = q.converged_per_s;
        break;
      }
    const std::string load =
        p.load.is_object() ? fmt::format("{:.2f}{}", p.load["samples"]["max"].get<double>(), p.noisy ? "!" : "")
                           : std::string("-");
    text += fmt::format("{:<8} {:>7} {:>13} {:>13} {:>8.1f}% {:>7.2f}x {:>6.2f} {:>6}\n", p.path, p.threads,
                        grouped(p.converged_per_s), grouped(p.solves_per_s),
                        100.0 * static_cast<double>(p.converged) / static_cast<double>(std::max(1L, p.solves)),
                        first > 0 ? p.converged_per_s / first : 0.0, p.wall_s > 0 ? p.cpu_s / p.wall_s : 0.0, load);
  }
  auto ratios = [&](const char* what, const std::vector<double>& v) {
    if (v.empty()) return;
    std::vector<std::string> parts;
    for (size_t i = 0; i < v.size() && i < r.config.threads.size(); ++i)
      parts.push_back(fmt::format("{:.2f}x at {}", v[i], r.config.threads[i]));
    text += fmt::format("{} (converged solves/s, same run): {}\n", what, fmt::join(parts, ", "));
  };
  ratios("batch / scalar", r.batch_over_scalar);
  ratios("batch / generic code", r.batch_over_generic);
  if (r.libraries > 0)
    text += fmt::format("{} seed libraries built in {:.3f} s before the timed runs (not in the rates)\n", r.libraries,
                        r.library_build_s);
  text += "x first = converged solves/s over the path's first thread count; cores = process CPU time / wall time; "
          "load = max 1-min load average during the point ('!': noisy, the load above the usable cores or the rates of "
          "its slices more than 1.25x apart)\n";
  return text;
}

}  // namespace ikbench::harness
