// The engine behind ikbench.solve_batch (see batch.h).
#include "batch.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "ikbench/core/threads.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"

namespace ikbench::python {

std::uint8_t statusCode(Status s) {
  for (size_t k = 0; k < kStatusNames.entries.size(); ++k)
    if (kStatusNames.entries[k].first == s) return static_cast<std::uint8_t>(k);
  return static_cast<std::uint8_t>(kStatusNames.entries.size());
}

namespace {

// One worker's state: its own solver (a solver keeps a workspace), problem
// and configuration buffers, reused for every row it solves.
struct Worker {
  std::unique_ptr<Solver> solver;
  Problem problem;
  Eigen::VectorXd q;
  SolverOptions options;
};

void writeRow(const BatchOutput& out, long i, int nq, const Eigen::VectorXd& q, const Summary& s) {
  std::copy(q.data(), q.data() + nq, out.q + i * nq);
  out.converged[i] = s.converged() ? 1 : 0;
  out.status[i] = statusCode(s.status);
  out.iterations[i] = s.iterations;
  out.restarts[i] = s.restarts;
  out.position_error[i] = s.position_error;
  out.orientation_error[i] = s.orientation_error;
  out.time_us[i] = s.time_us;
  out.fk_evals[i] = s.fk_evals;
  out.jacobian_evals[i] = s.jacobian_evals;
  out.within_limits[i] = s.within_limits ? 1 : 0;
}

Pose3d targetPose(const BatchInput& in, long i) {
  const double* t = in.targets + i * in.target_cols;
  Pose3d pose;
  pose.p = Eigen::Map<const Eigen::Vector3d>(t);
  if (in.target_cols == 7) pose.R = Eigen::Quaterniond(t[6], t[3], t[4], t[5]).normalized().toRotationMatrix();
  return pose;
}

// Rows [begin, end) with one solver, one at a time (the path for problems
// the SIMD kernel does not take, and for simd=False).
void solveRange(Worker& w, const BatchInput& in, const BatchOutput& out, long begin, long end) {
  const int nq = in.model->nq();
  Goal& goal = w.problem.goals.front();
  for (long i = begin; i < end; ++i) {
    const Pose3d target = targetPose(in, i);
    goal.target_position = target.p;
    if (in.target_cols == 7) goal.target_orientation = target.R;
    const double* q0 = in.q0_per_row ? in.q0 + i * nq : in.q0;
    w.q = Eigen::Map<const Eigen::VectorXd>(q0, nq);
    w.problem.q0 = w.q;
    w.options.seed = in.seeds[i];
    const Summary s = w.solver->solve(w.problem, w.q, w.options);
    writeRow(out, i, nq, w.q, s);
  }
}

// Whether the SIMD kernel takes these problems (one model, one goal, one
// spec: row 0 stands for every row).
bool simdTakes(const BatchInput& in) {
  if (!in.simd || in.n <= 0) return false;
  Problem p;
  p.model = in.model;
  p.goals = {in.goal};
  const Pose3d t0 = targetPose(in, 0);
  p.goals[0].target_position = t0.p;
  p.goals[0].target_orientation = t0.R;
  p.q0 = Eigen::Map<const Eigen::VectorXd>(in.q0, in.model->nq());
  return batchFallbackReason(p, in.spec, in.options).empty();
}

// Rows through ikbench::solveBatch in chunks, so that keep_going() is polled
// between them; each row's result depends only on its target, start and
// seed, so chunking changes nothing. The chunk's problems are rewritten in
// place (their buffers reused) and the answers go straight into the output
// rows.
long solveSimd(const BatchInput& in, const BatchOutput& out, const std::function<bool()>& keep_going) {
  const int nq = in.model->nq();
  const long chunk = 4096L * std::max(1, in.threads);
  std::vector<Problem> problems(static_cast<size_t>(std::min(chunk, in.n)));
  for (size_t k = 0; k < problems.size(); ++k) {
    problems[k].model = in.model;
    problems[k].goals = {in.goal};
    problems[k].q0.resize(nq);
  }
  BatchOptions opts;
  opts.solve = in.options;
  opts.threads = in.threads;
  long solved = 0;
  for (long b = 0; b < in.n; b += chunk) {
    if (keep_going && b > 0 && !keep_going()) break;
    const long e = std::min(in.n, b + chunk);
    problems.resize(static_cast<size_t>(e - b));
    for (long i = b; i < e; ++i) {
      Problem& p = problems[static_cast<size_t>(i - b)];
      const Pose3d t = targetPose(in, i);
      p.goals[0].target_position = t.p;
      p.goals[0].target_orientation = t.R;
      p.q0 = Eigen::Map<const Eigen::VectorXd>(in.q0_per_row ? in.q0 + i * nq : in.q0, nq);
      p.name = fmt::format("solve_batch row {}", i);
    }
    opts.seeds.assign(in.seeds + b, in.seeds + e);
    ikbench::solveBatch(problems, in.spec, opts, out.from(static_cast<size_t>(b)));
    const auto converged = static_cast<std::uint8_t>(Status::kConverged);
    for (long i = b; i < e; ++i) out.converged[i] = out.status[i] == converged ? 1 : 0;
    solved = e;
  }
  return solved;
}

}  // namespace

long solveBatch(const BatchInput& in, const BatchOutput& out, const std::function<bool()>& keep_going,
                long* batched) {
  const long n = in.n;
  if (batched) *batched = 0;
  if (n <= 0) return 0;
  if (simdTakes(in)) {
    const long solved = solveSimd(in, out, keep_going);
    if (batched) *batched = solved;
    return solved;
  }
  const int threads = static_cast<int>(std::clamp<long>(in.threads, 1, n));
  // Every solver is created before any thread starts, so a failure to create
  // one leaves nothing running.
  std::vector<Worker> workers(threads);
  for (Worker& w : workers) {
    w.solver = Registry::global().create(in.spec);
    w.problem.model = in.model;
    w.problem.goals = {in.goal};
    w.problem.name = "batch";
    w.options = in.options;
  }
  // Chunks small enough to balance the threads, large enough that the
  // shared counter is touched rarely.
  const long chunk = std::clamp<long>(n / (16L * threads), 1, 64);
  std::atomic<long> next{0}, solved{0};
  std::atomic<bool> stop{false};
  auto run = [&](int t) {
    Worker& w = workers[static_cast<size_t>(t)];
    for (long b; !stop.load(std::memory_order_relaxed) && (b = next.fetch_add(chunk)) < n;) {
      const long e = std::min(n, b + chunk);
      for (long i = b; i < e && !stop.load(std::memory_order_relaxed); ++i) {
        solveRange(w, in, out, i, i + 1);
        solved.fetch_add(1, std::memory_order_relaxed);
      }
    }
  };
  // The calling thread polls keep_going() while the workers solve.
  ThreadsOptions pool;
  pool.who = "solve_batch";
  pool.poll_period = std::chrono::milliseconds(100);
  if (keep_going)
    pool.poll = [&] {
      if (!stop.load() && !keep_going()) stop = true;
    };
  pool.on_failure = [&] { stop = true; };
  runOnThreads(threads, run, pool);
  return solved.load();
}

}  // namespace ikbench::python
