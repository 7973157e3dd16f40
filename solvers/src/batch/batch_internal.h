// The batch path's internals (solveBatch, KernelSolve, the lane scheduler):
// what the files around the SIMD kernels share. The public API is
// ikbench/solvers/batch.h; the kernels are batch_kernel_*.cpp behind
// batch_layout.h. The pieces, each in its own file:
//   batch_dispatch.cpp   which compiled kernel this CPU runs (ISA dispatch)
//   chain_plan.cpp       a spec and a chain in the kernel's terms (SpecPlan, ChainPlan)
//   lane_attempts.cpp    one attempt in a lane: its start and its end, read for
//                        the attempt driver (attempt_driver.h) and the verdict
//   lane_scheduler.cpp   many problems in lanes: refill, budgets, compaction
//   kernel_solve.cpp     one problem's Solver::solve through the kernel
//   batch_solver.cpp     the public solveBatch, KernelEvaluator
#pragma once

#include <Eigen/Core>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "attempt_driver.h"
#include "ikbench/core/numeric.h"
#include "ikbench/core/threads.h"
#include "batch_layout.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/jacobian_options.h"
#include "ikbench/solvers/seed_library.h"
#include "ikbench/solvers/solver.h"
#include "ikbench/solvers/solver_spec.h"

namespace ikbench::batch_detail {

using batch::Chain;
using batch::ChainJoint;
using batch::KernelParams;
using batch::kMaxDof;
using batch::kWidth;
using batch::LaneGroup;
using Clock = std::chrono::steady_clock;

// ---- ISA dispatch (batch_dispatch.cpp) ----

// The kernel an ISA request gets on this machine: its lane step, its
// one-problem step, its lane evaluation and its name.
struct KernelIsa {
  batch::StepFn step;
  batch::StepFn one_step;
  batch::ErrorsFn errors;
  const char* name;
};
KernelIsa selectKernel(BatchIsa isa);

// ---- plans (chain_plan.cpp) ----

// What the spec asks of the kernel; why is non-empty when it cannot.
struct SpecPlan {
  std::string why;
  std::string backend;  // "dls" or "dls-adaptive": prefixes failure messages as the scalar backend does
  KernelParams params;  // the spec's part (damping, step)
  LimitMode limits = LimitMode::kClamp;  // freeze per chain: freezesAtLimits (jacobian_options.h)
  CommonSpecOptions common;  // restarts, budget, iteration cap and stall rule
  KernelChoice one_problem = KernelChoice::kAuto;  // kernel=auto|lanes|packed: how Solver::solve runs the kernel
};
// From the backend's typed options (dls, dls-adaptive), or from a spec of
// any backend (the others: not for the kernel, why says so).
SpecPlan planDls(const DlsOptions& o, const CommonSpecOptions& common);
SpecPlan planDlsAdaptive(const DlsAdaptiveOptions& o, const CommonSpecOptions& common);
SpecPlan planSpec(const SolverSpec& spec);

// A model and a goal structure in the kernel's frames.
struct ChainPlan {
  std::string why;               // non-empty: not for the kernel
  Chain chain;
  Eigen::Matrix3d C = Eigen::Matrix3d::Identity();  // R_body = R_{n-1} C
  std::vector<int> q_index;      // path DOF k -> model q index
  std::vector<double> draw_lo, draw_hi;  // restart draw ranges (randomConfiguration), path order
  bool pose = true;
  double w_pos = 1.0, w_ori = 1.0;
  std::shared_ptr<const SeedLibrary> library;  // the spec's seed library (library=N), else null
};
ChainPlan planChain(const Problem& problem);

// Problems of one model with the same goal structure share a plan.
struct PlanKey {
  const Model* model;
  int body;
  double px, py, pz;
  GoalKind kind;
  double weight, orientation_scale;
  auto tie() const { return std::tie(model, body, px, py, pz, kind, weight, orientation_scale); }
  bool operator<(const PlanKey& o) const { return tie() < o.tie(); }
  bool operator==(const PlanKey& o) const { return tie() == o.tie(); }
};
// The key of a problem with one goal.
inline PlanKey planKey(const Problem& problem) {
  const Goal& g = problem.goals.front();
  return {problem.model.get(), g.body, g.point.x(), g.point.y(), g.point.z(), g.kind, g.weight, g.orientation_scale};
}

// What the kernel runs for one plan: the spec's part, the chain's, and the
// stopping rules of the (effective) solve options.
KernelParams kernelParams(const SpecPlan& spec_plan, const ChainPlan& plan, const SolverOptions& solve);

// ---- attempts in lanes (lane_attempts.cpp) ----

// How one attempt in a lane ended, read from the lane after its last
// kernel step (Solver::runAttempts after solveImpl).
struct AttemptEnd {
  std::int32_t reason = batch::kRunning;
  long iterations = 0;
  bool step_failed = false;  // the last step failed (its Jacobian was evaluated)
  bool q_finite = false;     // the attempt's answer is finite (else runAttempts skips it)
  bool finite = false;       // and its errors are
  double score = 0.0;        // max(pe / tol_p, oe / tol_o); <= 1: converged
  double q[kMaxDof];         // the answer (the attempt's best iterate when not finite)
  double pe = 0.0, oe = 0.0;
};
// Whether an attempt ended because its last step failed (the step's Jacobian
// was evaluated, and SolveContext records no iterate for it).
inline bool stepFailed(std::int64_t reason) {
  return reason == batch::kNotPositiveDefinite || reason == batch::kNonFiniteStep || reason == batch::kNonFiniteConfig;
}

AttemptEnd readAttemptEnd(const LaneGroup& G, int l, int n, std::int32_t reason, const SolverOptions& solve);

// The kernel's attempts of one solve: the driver's decisions (AttemptDriver,
// the same as Solver::solve's) and what the kernel keeps of them, the counts
// and the answer's configuration, end and errors.
struct AttemptTally {
  explicit AttemptTally(AttemptDriver d) : driver(std::move(d)) {}
  // The tally of a new solve (the best configuration is written before it
  // is read: attempt 0 is always taken first).
  void restart(AttemptDriver d) {
    driver = std::move(d);
    iterations = fk_evals = jacobian_evals = 0;
    best_reason = batch::kMaxIterations;
    best_reason_iteration = 0;
    best_pe = best_oe = 0.0;
    best_finite = false;
  }
  AttemptDriver driver;
  long iterations = 0, fk_evals = 0, jacobian_evals = 0;
  std::int32_t best_reason = batch::kMaxIterations;
  long best_reason_iteration = 0;
  double best_q[kMaxDof];
  double best_pe = 0.0, best_oe = 0.0;
  bool best_finite = false;

  // Takes the next attempt in attempt order (the driver decides whether its
  // configuration is the answer so far); the caller then asks
  // driver.ended().
  void take(const AttemptEnd& e, int n, const SolverOptions& solve) {
    iterations += e.iterations;
    fk_evals += 1 + e.iterations;
    jacobian_evals += e.iterations + (e.step_failed ? 1 : 0);
    const double inf = std::numeric_limits<double>::infinity();
    const AttemptSequence::Taken t =
        driver.take({e.q_finite, e.finite ? e.pe : inf, e.finite ? e.oe : inf}, solve);
    if (t.best || (!t.scored && driver.taken() == 1)) {
      // An unscored attempt 0 leaves its configuration (the clamped start,
      // as in Solver::solve) as the answer until an attempt is scored.
      std::memcpy(best_q, e.q, sizeof(double) * n);
      best_reason = e.reason;
      best_reason_iteration = e.iterations;
      best_pe = e.pe;
      best_oe = e.oe;
      best_finite = t.scored && e.finite;
    }
  }
};

// The Summary of a finished solve from its tally (all but time_us).
Summary tallySummary(const AttemptTally& t, const ChainPlan& plan, const std::string& backend,
                     const SolverOptions& solve);
// The answer of a finished solve as the model's configuration (nq values at
// q): the tally's on the path, the start's elsewhere.
void writeAnswer(double* q, const Eigen::VectorXd& start, const AttemptTally& t, const ChainPlan& plan);
// The status of a finished solve from its tally (tallySummary's, without
// the message).
Status tallyStatus(const AttemptTally& t, const SolverOptions& solve);
// Whether the answer of a finished solve is within the limits.
bool tallyWithinLimits(const AttemptTally& t, const ChainPlan& plan);
void fillTarget(LaneGroup& G, int l, const ChainPlan& plan, const Goal& goal);
void clearGroups(LaneGroup* groups, size_t count);
void startAttempt(LaneGroup& G, int l);
// A solve's restart stream (Solver::solve's Rng(Rng::mix(seed,
// kRestartStreamSalt))), seeded on its first draw: a solve that starts from
// a seed library rarely draws at all.
class RestartStream {
 public:
  explicit RestartStream(std::uint64_t seed = 0) : seed_(seed) {}
  void reset(std::uint64_t seed) {
    seed_ = seed;
    seeded_ = false;
  }
  Rng& rng() {
    if (!seeded_) {
      rng_ = Rng(Rng::mix(seed_, kRestartStreamSalt));
      seeded_ = true;
    }
    return rng_;
  }

 private:
  std::uint64_t seed_ = 0;
  bool seeded_ = false;
  Rng rng_{0};
};
void startAttemptAt(LaneGroup& G, int l, const ChainPlan& plan, long attempt, AttemptDriver& driver,
                    const Eigen::VectorXd& start, RestartStream& restarts);
void packedToLanes(LaneGroup& G, int n, int rows);

// ---- many problems (lane_scheduler.cpp) ----

struct Shared {
  const Problem* problems = nullptr;  // [0, number of problems)
  const BatchOptions* options = nullptr;
  SolverOptions solve;  // effective options (withSpecOptions: the spec's budget, cap and stall rule)
  const SolverSpec* spec = nullptr;
  SpecPlan spec_plan;
  batch::StepFn step = nullptr;
  std::vector<ChainPlan> plans;
  std::vector<KernelParams> params;         // per plan
  std::vector<std::vector<int>> plan_problems;  // per plan, problem indices in order
  std::vector<std::atomic<size_t>> cursor;  // per plan: next problem to take
  std::vector<int> fallback;                // problems for the scalar path
  std::atomic<size_t> fallback_cursor{0};
  // Set when BatchOptions::keep_going returns false or a worker throws: the
  // workers stop after their current solve or lane round.
  std::atomic<bool> stop{false};
  // Where the answers go: one BatchResult per problem, or the rows of
  // arrays.
  std::vector<BatchResult>* results = nullptr;
  const BatchArrays* arrays = nullptr;
  explicit Shared(size_t plans) : cursor(plans) {}
};

// Runs the lanes of one thread over the shared plans until none has a
// problem left (or Shared::stop); the per-thread counts go into stats.
void runLanes(Shared& shared, int lanes, BatchStats& stats);
// Solves the problems the kernel does not take with the scalar Solver (until
// Shared::stop); stats.solved counts them.
void runScalar(Shared& s, std::unique_ptr<Solver>& solver, BatchStats& stats);
// Row i of the arrays from a Summary and its answer.
void writeRow(const BatchArrays& out, size_t i, const Eigen::VectorXd& q, const Summary& sum, bool batched);
// Row i of the arrays from a finished solve's tally (tallySummary's values);
// start is the problem's start (the DOF off the path keep its values).
void writeRow(const BatchArrays& out, size_t i, const Eigen::VectorXd& start, const AttemptTally& t,
              const ChainPlan& plan, const SolverOptions& solve, double time_us);

// ---- threads ----

// Runs f(0), ..., f(n - 1), each on its own thread when n > 1, and
// meanwhile() on the calling thread (core's runOnThreads: every thread joined
// before an exception is rethrown; a thread that cannot start is a
// ThreadStartError naming the counts).
template <class F, class G>
void onThreads(int n, const F& f, const G& meanwhile, ThreadsOptions options = {}) {
  options.who = "solveBatch";
  options.meanwhile = meanwhile;
  runOnThreads(n, f, options);
}
template <class F>
void onThreads(int n, const F& f) {
  onThreads(n, f, [] {});
}

}  // namespace ikbench::batch_detail
