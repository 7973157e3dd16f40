// `ikbench throughput`: solves per second of one solver on random chains,
// at several thread counts, with the speedup of the last over the first.
//
// Fixed work (config.solves solves, cycling over config.problems distinct
// problems) rather than a fixed time, so every thread count does exactly the
// same solves; each thread keeps its own Solver instance and takes problems
// in chunks from an atomic counter.
#include <fmt/format.h>

#include <atomic>
#include <ctime>
#include <fstream>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness/harness.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/registry.h"

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
  if (config.dof < 1 || config.problems < 1 || config.solves < 1 || config.threads.empty())
    throw HarnessError("throughput: dof, problems, solves and thread counts must be positive");
  for (int t : config.threads)
    if (t < 1) throw HarnessError(fmt::format("throughput: bad thread count {}", t));
  try {
    Registry::global().create(config.solver);
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
  auto measure = [&](int threads, long solves) {
    std::atomic<long> next{0}, converged{0};
    constexpr long kChunk = 64;
    auto worker = [&] {
      auto solver = Registry::global().create(config.solver);
      Eigen::VectorXd q;
      long ok = 0;
      for (long b; (b = next.fetch_add(kChunk)) < solves;) {
        for (long i = b; i < std::min(solves, b + kChunk); ++i) {
          const Problem& p = problems[static_cast<size_t>(i) % problems.size()];
          q = p.q0;
          ok += solver->solve(p, q, options).converged();
        }
      }
      converged += ok;
    };
    const double cpu0 = processCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    ThroughputPoint pt;
    pt.threads = threads;
    pt.solves = solves;
    pt.converged = converged;
    pt.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    pt.solves_per_s = static_cast<double>(solves) / pt.wall_s;
    pt.cpu_s = processCpuSeconds() - cpu0;
    return pt;
  };
  measure(1, std::min<long>(config.solves, 2000));  // warm-up: page in code and data
  for (int threads : config.threads) {
    ThroughputPoint pt = measure(threads, config.solves);
    log << fmt::format("throughput: {} x {} ({}-DOF pose): {} threads, {} solves in {:.2f} s = {:.0f} solves/s, "
                       "{:.1f}% converged, {:.2f} cores busy\n",
                       config.solver, problems.size(), config.dof, threads, pt.solves, pt.wall_s, pt.solves_per_s,
                       100.0 * static_cast<double>(pt.converged) / static_cast<double>(pt.solves), pt.cpu_s / pt.wall_s);
    out.points.push_back(pt);
  }
  out.speedup = out.points.back().solves_per_s / out.points.front().solves_per_s;
  out.end_time = isoTimeUtc();
  return out;
}

std::string throughputJson(const ThroughputResult& r) {
  nlohmann::json j;
  j["solver"] = r.config.solver;
  j["problem"] = fmt::format("{}-DOF random chains (limits +-2.5 rad), reachable pose goals, nominal start",
                             r.config.dof);
  j["distinct_problems"] = r.config.problems;
  j["seed"] = r.config.seed;
  j["cpu"] = r.cpu;
  j["hardware_threads"] = std::thread::hardware_concurrency();
  j["start_time"] = r.start_time;
  j["end_time"] = r.end_time;
  nlohmann::json pts = nlohmann::json::array();
  for (const ThroughputPoint& p : r.points)
    pts.push_back({{"threads", p.threads},
                   {"solves", p.solves},
                   {"converged", p.converged},
                   {"wall_s", p.wall_s},
                   {"solves_per_s", p.solves_per_s},
                   {"cpu_s", p.cpu_s},
                   {"cores_busy", p.cpu_s / p.wall_s},
                   {"solves_in_60_s", p.solves_per_s * 60.0}});
  j["points"] = pts;
  j["load_average_1min_at_start"] = r.load_average;
  j["speedup"] = r.speedup;
  j["target"] = "at least 100000 solves in 60 s on 2 threads, and a 2-thread speedup of at least 1.8";
  j["meets_target"] = r.points.back().solves_per_s * 60.0 >= 100000.0 && r.speedup >= 1.8;
  j["speedup_of"] = fmt::format("{} threads over {} thread(s)", r.points.back().threads, r.points.front().threads);
  return j.dump(2);
}

}  // namespace ikbench::harness
