// The run engine of the harness: a std::thread pool over (family, solver,
// chunk of problems) tasks, each thread with its own Solver instance per spec.
#include "harness/harness.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "ikbench/kinematics/rng.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"

namespace ikbench::harness {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Progress: a bar redrawn in place on a terminal, a plain line every 10 % (at
// most one per 2 s) otherwise.
class Progress {
 public:
  Progress(std::ostream& out, bool bar, bool enabled, std::string label, long total)
      : out_(out), bar_(bar), enabled_(enabled && total > 0), label_(std::move(label)), total_(total) {}

  void update(long done, bool final = false) {
    if (!enabled_) return;
    const double t = secondsSince(start_);
    const double frac = static_cast<double>(done) / static_cast<double>(total_);
    if (bar_) {
      constexpr int kWidth = 30;
      const int filled = static_cast<int>(frac * kWidth);
      const double eta = done > 0 ? t * (1.0 - frac) / frac : 0.0;
      out_ << fmt::format("\r{:<7} [{}{}] {:5.1f}%  {}/{} solves  {:.1f} s  ETA {:.0f} s   ", label_,
                          std::string(filled, '#'), std::string(kWidth - filled, '-'), 100.0 * frac, done,
                          total_, t, eta);
      if (final) out_ << '\n';
      out_.flush();
    } else {
      const int decile = static_cast<int>(frac * 10.0);
      if ((final && done != last_done_) || (decile > last_decile_ && t - last_print_ >= 2.0)) {
        out_ << fmt::format("{}: {}/{} solves ({:.0f}%), {:.1f} s\n", label_, done, total_, 100.0 * frac, t);
        out_.flush();
        last_decile_ = decile;
        last_print_ = t;
        last_done_ = done;
      }
    }
  }

 private:
  std::ostream& out_;
  bool bar_, enabled_;
  std::string label_;
  long total_;
  Clock::time_point start_ = Clock::now();
  int last_decile_ = 0;
  long last_done_ = -1;
  double last_print_ = -1e9;
};

struct Task {
  int family = 0, solver = 0;
  int begin = 0, end = 0;  // problem range
  bool chained = false;    // sequential: start from the previous answer
};

// Runs tasks on `threads` threads; `work(task, solver)` solves one task with
// this thread's instance of the task's solver; returns after all are done.
template <typename Work>
void runPool(const std::vector<Task>& tasks, const std::vector<std::string>& specs, int threads,
             std::atomic<long>& done, Progress& progress, Work work) {
  std::atomic<size_t> next{0};
  std::atomic<int> finished{0};
  std::mutex m;
  std::condition_variable cv;
  std::exception_ptr failure;
  auto worker = [&] {
    try {
      std::vector<std::unique_ptr<Solver>> mine(specs.size());
      for (size_t i; (i = next.fetch_add(1)) < tasks.size();) {
        const Task& t = tasks[i];
        if (!mine[t.solver]) mine[t.solver] = Registry::global().create(specs[t.solver]);
        work(t, *mine[t.solver]);
      }
    } catch (...) {
      std::lock_guard lock(m);
      if (!failure) failure = std::current_exception();
      next = tasks.size();  // stop the others early
    }
    {
      std::lock_guard lock(m);
      ++finished;
    }
    cv.notify_all();
  };
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int i = 0; i < threads; ++i) pool.emplace_back(worker);
  {
    std::unique_lock lock(m);
    while (finished < threads) {
      cv.wait_for(lock, std::chrono::milliseconds(200));
      lock.unlock();
      progress.update(done.load());
      lock.lock();
    }
  }
  for (auto& t : pool) t.join();
  progress.update(done.load(), /*final=*/true);
  if (failure) std::rethrow_exception(failure);
}

// Tasks of one pass over problems [0, limit) of every family: one per
// (family, solver) for sequential families (they run in order on one thread;
// placed first since they are the longest), chunks of problems otherwise.
std::vector<Task> makeTasks(const Suite& suite, int nsolvers, int threads, int limit) {
  std::vector<Task> chained, chunks;
  for (int f = 0; f < static_cast<int>(suite.families.size()); ++f) {
    const Family& fam = suite.families[f];
    const int n = std::min(limit, static_cast<int>(fam.problems.size()));
    if (n == 0) continue;
    for (int s = 0; s < nsolvers; ++s) {
      if (fam.sequential) {
        chained.push_back({f, s, 0, n, true});
        continue;
      }
      // Small chunks balance the load; 32 problems keep the per-task overhead negligible.
      const int chunk = std::clamp(n / (8 * threads), 1, 32);
      for (int b = 0; b < n; b += chunk) chunks.push_back({f, s, b, std::min(n, b + chunk), false});
    }
  }
  chained.insert(chained.end(), chunks.begin(), chunks.end());
  return chained;
}

Summary solveOne(Solver& solver, const Problem& problem, Eigen::VectorXd& q, const SolverOptions& options) {
  try {
    return solver.solve(problem, q, options);
  } catch (const std::exception& e) {
    // Solver::solve promises not to throw; if a backend does anyway, the run
    // goes on and the row says what happened.
    Summary s;
    s.status = Status::kNumericalFailure;
    s.message = std::string("exception: ") + e.what();
    return s;
  }
}

}  // namespace

const std::vector<std::string> kSolveColumns = {
    "suite",    "family",         "problem",           "dof",     "effectors", "goal",
    "solver",   "status",         "converged",         "iterations", "restarts", "position_error",
    "orientation_error", "time_us", "fk_evals",        "jacobian_evals", "within_limits"};
const std::vector<std::string> kSolveExtraColumns = {"time_per_iteration_us", "seed", "problem_name", "message"};
const std::vector<std::string> kTraceColumns = {"family",    "problem",           "solver",
                                                "iteration", "position_error",    "orientation_error",
                                                "step_norm", "damping",           "elapsed_us"};
const std::vector<std::string> kTimeColumns = {"time_us", "time_per_iteration_us"};

std::uint64_t solveSeed(std::uint64_t suite_seed, const std::string& family, int problem,
                        const std::string& solver_spec) {
  return Rng::mix(Rng::mix(suite_seed, Rng::hash(family)),
                  Rng::mix(static_cast<std::uint64_t>(problem), Rng::hash(solver_spec)));
}

std::vector<std::string> resolveSolvers(const Suite& suite, const RunConfig& config,
                                        std::vector<std::string>* skipped) {
  std::vector<std::string> specs = config.solvers;
  if (specs.empty()) {
    // A suite file lists the backends it was written for; a build may lack
    // some (an optional dependency, a user's fork): run the ones it has.
    for (const std::string& spec : suite.solvers) {
      std::string name;
      std::map<std::string, std::string> given;
      try {
        parseSpec(spec, &name, &given);
      } catch (const std::exception& e) {
        throw HarnessError(fmt::format("suite '{}': bad solver spec '{}': {}", suite.name, spec, e.what()));
      }
      if (Registry::global().contains(name)) {
        specs.push_back(spec);
      } else if (skipped) {
        skipped->push_back(spec);
      }
    }
    if (specs.empty() && !suite.solvers.empty())
      throw HarnessError(fmt::format("suite '{}': none of its solvers ({}) is registered", suite.name,
                                     fmt::join(suite.solvers, ",")));
  }
  if (specs.empty())
    for (const SolverInfo& info : Registry::global().list()) specs.push_back(info.name);
  if (specs.empty()) throw HarnessError("no solvers to run (none given, none in the suite, none registered)");
  for (size_t i = 0; i < specs.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (specs[i] == specs[j]) throw HarnessError(fmt::format("solver spec '{}' is listed twice", specs[i]));
    try {
      Registry::global().create(specs[i]);
    } catch (const std::exception& e) {
      throw HarnessError(fmt::format("bad solver spec '{}': {}", specs[i], e.what()));
    }
  }
  return specs;
}

std::string prepareOutputDirectory(const Suite& suite, const RunConfig& config) {
  std::string dir = config.out_dir;
  if (dir.empty()) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    dir = (fs::path(config.results_root) / (std::string(stamp) + "-" + suite.name)).string();
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw HarnessError(fmt::format("cannot create output directory '{}': {}", dir, ec.message()));
  if (!fs::is_directory(dir, ec)) throw HarnessError(fmt::format("output path '{}' is not a directory", dir));
  // Creating the directory can succeed where writing fails (read-only mount,
  // permissions): probe with a real file before spending minutes on solves.
  const fs::path probe = fs::path(dir) / ".ikbench-write-test";
  {
    std::ofstream f(probe);
    if (!(f << "ok") || !(f.flush())) {
      throw HarnessError(fmt::format("output directory '{}' is not writable: {}", dir, std::strerror(errno)));
    }
  }
  fs::remove(probe, ec);
  return dir;
}

RunResult runSuiteInMemory(const Suite& suite, const RunConfig& config) {
  if (suite.families.empty()) throw HarnessError(fmt::format("suite '{}' has no families", suite.name));
  std::string why;
  if (!suite.options.isValid(&why)) throw HarnessError(fmt::format("suite '{}': bad options: {}", suite.name, why));
  std::ostream& log = config.log ? *config.log : std::cerr;
  RunResult result;
  result.solvers = resolveSolvers(suite, config, &result.skipped_solvers);
  if (!result.skipped_solvers.empty())
    log << fmt::format("note: solvers of suite '{}' not in this build, skipped: {}\n", suite.name,
                       fmt::join(result.skipped_solvers, ","));
  const int S = static_cast<int>(result.solvers.size());
  result.threads = config.threads > 0 ? config.threads : std::max(1u, std::thread::hardware_concurrency());
  if (config.trace && config.trace_problems < 0) throw HarnessError("trace_problems must be >= 0");

  // Row slots: row (f, p, s) at (offset[f] + p) * S + s.
  std::vector<int> offset(suite.families.size() + 1, 0);
  for (size_t f = 0; f < suite.families.size(); ++f)
    offset[f + 1] = offset[f] + static_cast<int>(suite.families[f].problems.size());
  const long total = static_cast<long>(offset.back()) * S;
  if (total == 0) throw HarnessError(fmt::format("suite '{}' has no problems", suite.name));
  result.rows.resize(total);
  auto slot = [&](int f, int p, int s) { return static_cast<size_t>(offset[f] + p) * S + s; };

  const bool tty = (config.log == nullptr || config.log == &std::cerr) && isatty(fileno(stderr));
  const bool bar = config.progress == ProgressMode::kBar || (config.progress == ProgressMode::kAuto && tty);
  const bool show = config.progress != ProgressMode::kNone;

  // One pass: solves problems of the tasks with record_trace as given and
  // hands each (row index, summary) to `store`.
  auto pass = [&](const std::vector<Task>& tasks, bool record_trace, long count, const char* label, auto store) {
    std::atomic<long> done{0};
    Progress progress(log, bar, show, label, count);
    runPool(tasks, result.solvers, result.threads, done, progress, [&](const Task& t, Solver& solver) {
      const Family& fam = suite.families[t.family];
      const std::string& spec = result.solvers[t.solver];
      Eigen::VectorXd q;
      for (int p = t.begin; p < t.end; ++p) {
        const Problem& problem = fam.problems[p];
        SolverOptions opts = suite.options;
        opts.seed = solveSeed(suite.seed, fam.name, p, spec);
        opts.record_trace = record_trace;
        // Tracking: start from the previous answer (same model, so same nq).
        if (!(t.chained && p > t.begin && q.size() == problem.q0.size())) q = problem.q0;
        Summary s = solveOne(solver, problem, q, opts);
        store(slot(t.family, p, t.solver), std::move(s));
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  };

  result.start_time = isoTimeUtc();
  const auto t0 = Clock::now();
  pass(makeTasks(suite, S, result.threads, std::numeric_limits<int>::max()), false, total, "solving",
       [&](size_t i, Summary&& s) {
         s.trace.clear();
         s.trace.shrink_to_fit();
         result.rows[i].summary = std::move(s);
       });
  result.wall_s = secondsSince(t0);
  for (int f = 0; f < static_cast<int>(suite.families.size()); ++f)
    for (int p = 0; p < static_cast<int>(suite.families[f].problems.size()); ++p)
      for (int s = 0; s < S; ++s) {
        SolveRow& r = result.rows[slot(f, p, s)];
        r.family = f;
        r.problem = p;
        r.solver = s;
        result.solve_time_s += r.summary.time_us * 1e-6;
      }

  if (config.trace && config.trace_problems > 0) {
    // The untimed trace pass: the same solves (same seeds and start
    // configurations) again with record_trace on, for the first
    // trace_problems problems of each family. A solve whose status or
    // iteration count differs from the timing pass (a binding time budget)
    // is counted and reported.
    std::vector<std::vector<IterationRecord>> traces(total);
    std::atomic<long> mismatches{0};
    long count = 0;
    for (const Family& fam : suite.families)
      count += static_cast<long>(std::min<size_t>(fam.problems.size(), config.trace_problems)) * S;
    const auto t1 = Clock::now();
    pass(makeTasks(suite, S, result.threads, config.trace_problems), true, count, "tracing",
         [&](size_t i, Summary&& s) {
           const Summary& timed = result.rows[i].summary;
           if (timed.status != s.status || timed.iterations != s.iterations) mismatches.fetch_add(1);
           traces[i] = std::move(s.trace);
         });
    result.trace_wall_s = secondsSince(t1);
    if (mismatches > 0)
      log << fmt::format("note: {} traced solves ended differently from the timed pass (a time budget binds?)\n",
                         mismatches.load());
    size_t n = 0;
    for (const auto& t : traces) n += t.size();
    result.traces.reserve(n);
    for (size_t i = 0; i < traces.size(); ++i)
      for (const IterationRecord& rec : traces[i])
        result.traces.push_back({result.rows[i].family, result.rows[i].problem, result.rows[i].solver, rec});
  }
  result.end_time = isoTimeUtc();
  return result;
}

RunResult runSuite(const Suite& suite, const RunConfig& config) {
  // Everything that can be wrong with the command is checked before solving.
  resolveSolvers(suite, config);
  const std::string dir = prepareOutputDirectory(suite, config);
  RunResult result = runSuiteInMemory(suite, config);
  result.out_dir = dir;
  writeResults(suite, config, result);
  return result;
}

}  // namespace ikbench::harness
