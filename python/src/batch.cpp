// The engine behind ikbench.solve_batch (see batch.h).
#include "batch.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "ikbench/solvers/batch.h"

namespace ikbench::python {

namespace {

Pose3d targetPose(const BatchInput& in, long i) {
  const double* t = in.targets + i * in.target_cols;
  Pose3d pose;
  pose.p = Eigen::Map<const Eigen::Vector3d>(t);
  if (in.target_cols == 7) pose.R = Eigen::Quaterniond(t[6], t[3], t[4], t[5]).normalized().toRotationMatrix();
  return pose;
}

}  // namespace

// Rows through ikbench::solveBatch in chunks (its threads, its kernel or
// scalar path per problem, its attempt driver), so that a chunk's problems
// are built once and rewritten in place (their buffers reused) and the
// answers go straight into the output rows. Each row's result depends only
// on its target, start and seed, so chunking changes nothing.
// keep_going() is polled by solveBatch itself while a chunk runs.
long solveBatch(const BatchInput& in, const BatchOutput& out, const std::function<bool()>& keep_going,
                long* batched) {
  if (batched) *batched = 0;
  if (in.n <= 0) return 0;
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
  opts.kernel = in.simd;
  opts.keep_going = keep_going;
  long solved = 0;
  for (long b = 0; b < in.n; b += chunk) {
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
    BatchStats stats;
    try {
      ikbench::solveBatch(problems, in.spec, opts, out.from(static_cast<size_t>(b)), &stats);
    } catch (const BatchStopped& stopped) {
      return solved + stopped.solved;
    }
    const auto converged = static_cast<std::uint8_t>(Status::kConverged);
    for (long i = b; i < e; ++i) out.converged[i] = out.status[i] == converged ? 1 : 0;
    if (batched) *batched += stats.batched;
    solved = e;
  }
  return solved;
}

}  // namespace ikbench::python
