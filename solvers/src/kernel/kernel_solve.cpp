// One solve in the kernel's lanes, up to four attempts at once, taken in
// attempt order (kernel_solve.h says why the answer is the sequential one).
#include "kernel_solve.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "batch_internal.h"
#include "ikbench/core/numeric.h"

namespace ikbench {
using namespace batch_detail;

struct KernelSolve::Impl {
  SpecPlan spec_plan;
  batch::StepFn step = nullptr;      // the lane step
  batch::StepFn one_step = nullptr;  // the one-problem step
  // The plan of the last problem's model and goal structure (the model kept
  // alive, so that its address cannot be reused by another).
  std::shared_ptr<const Model> model;
  PlanKey key{};
  bool have_key = false;
  ChainPlan plan;
  bool plan_ok = false;
  std::unique_ptr<LaneGroup> group;
  // Attempts that ended but are not yet taken, by attempt - next_taken
  // (a window: no attempt starts kWindow or more ahead of the next one to
  // take), with their trace records.
  static constexpr int kWindow = 16;
  // Steps of attempt 0 before other attempts start beside it. It changes no
  // answer, only the time: started at once, the other lanes slow the solves
  // that need no restart (the freeze loop takes the passes of its busiest
  // lane), which sets the median; started after attempt 0 ends, restarts run
  // one at a time, which sets the mean. Tuned (0, 4, 8 steps, or after attempt
  // 0 ends) on the arms of docs/tuning.md's per-arm section, which has the
  // command and the figures.
  static constexpr long kAttemptsAfter = 4;
  AttemptEnd ended[kWindow];
  bool has_ended[kWindow] = {};
  std::vector<IterationRecord> records[kWindow];
};

KernelSolve::KernelSolve() : impl_(std::make_unique<Impl>()) {}
KernelSolve::~KernelSolve() = default;

std::unique_ptr<KernelSolve> KernelSolve::forDls(const DlsOptions& o, const CommonSpecOptions& common) {
  return fromPlan(planDls(o, common));
}

std::unique_ptr<KernelSolve> KernelSolve::forDlsAdaptive(const DlsAdaptiveOptions& o, const CommonSpecOptions& common) {
  return fromPlan(planDlsAdaptive(o, common));
}

std::unique_ptr<KernelSolve> KernelSolve::fromPlan(SpecPlan&& plan) {
  if (!plan.why.empty()) return nullptr;
  std::unique_ptr<KernelSolve> k(new KernelSolve());
  Impl& m = *k->impl_;
  m.spec_plan = std::move(plan);
  const KernelIsa isa = selectKernel(BatchIsa::kAuto);
  m.step = isa.step;
  m.one_step = isa.one_step;
  m.group = std::make_unique<LaneGroup>();
  clearGroups(m.group.get(), 1);
  return k;
}

bool KernelSolve::solve(const Problem& problem, const Eigen::VectorXd& start, const SeedLibrary* library,
                        const SolverOptions& options,
                        std::chrono::steady_clock::time_point t0, Summary* summary, Eigen::VectorXd* q,
                        Status* status, std::string* message) {
  Impl& m = *impl_;
  if (problem.goals.size() != 1) return false;
  const Goal& goal = problem.goals.front();
  const PlanKey key = planKey(problem);
  if (!m.have_key || key < m.key || m.key < key) {
    m.plan = planChain(problem);
    m.plan_ok = m.plan.why.empty();
    m.model = problem.model;
    m.key = key;
    m.have_key = true;
  }
  if (!m.plan_ok) return false;
  const ChainPlan& plan = m.plan;
  const int n = plan.chain.n;
  const KernelParams params = kernelParams(m.spec_plan, plan, options);
  LaneGroup& G = *m.group;
  const bool trace = options.record_trace;
  const long last_attempt = m.spec_plan.common.restarts;  // attempts 0 .. restarts
  // The one-problem step runs while only lane 0 is busy: always with
  // kernel=packed (one attempt at a time), and with kernel=auto until
  // restarts start beside attempt 0 (never, without restarts); then lane 0's
  // Jacobian moves to the lanes' layout and the lane step runs up to four
  // attempts at once. The answer is the same, bitwise, either way.
  const KernelChoice choice = m.spec_plan.one_problem;
  const bool packed = choice == KernelChoice::kPacked;
  bool one = choice != KernelChoice::kLanes;  // the one-problem step runs now
  auto elapsed = [&] { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); };

  for (int l = 0; l < kWidth; ++l) fillTarget(G, l, plan, goal);
  RestartStream rng(options.seed);
  const CommonSpecOptions& common = m.spec_plan.common;
  // The attempt driver (attempt_driver.h): this solve runs its attempts in
  // lanes, up to four at once, and hands them over in attempt order.
  AttemptTally tally(
      AttemptDriver(common.restarts, library, &goal, common.start, common.solutions, options.time_budget_us));
  long lane_attempt[kWidth];  // the attempt each lane runs, -1: idle
  std::fill_n(lane_attempt, kWidth, -1L);
  long next_start = 0;  // the next attempt to start
  long next_taken = 0;  // the next attempt to take, in order
  for (int w = 0; w < Impl::kWindow; ++w) {
    m.has_ended[w] = false;
    m.records[w].clear();
  }
  double taken_us = 0.0;  // elapsed time of the last trace record taken
  bool done = false, time_up = false;
  while (!done) {
    // Idle lanes start the next attempts: the first from the start clamped
    // into the limits, the others from the restart stream, drawn in
    // attempt order (randomConfiguration's draws, in model order).
    // The other lanes wait until attempt 0 has taken Impl::kAttemptsAfter
    // steps without converging: most targets converge in their first
    // attempt within a few more, and lanes stepping beside it would only
    // add freeze-loop passes (the kernel's passes are those of its busiest
    // lane).
    bool hold = false;
    for (int l = 0; l < (one ? 1 : kWidth); ++l)
      if (lane_attempt[l] == 0 && (G.fresh[l] != 0 || static_cast<long>(G.iteration[l]) < Impl::kAttemptsAfter))
        hold = true;
    if (one && !packed && !hold && !time_up && next_start > 0 && next_start <= last_attempt) {
      packedToLanes(G, n, plan.pose ? 6 : 3);
      one = false;
    }
    const int lanes = one ? 1 : kWidth;
    for (int l = 0; l < lanes; ++l) {
      if (lane_attempt[l] >= 0 || time_up || next_start > last_attempt || next_start >= next_taken + Impl::kWindow)
        continue;
      if (next_start > 0 && hold) continue;
      startAttemptAt(G, l, plan, next_start, tally.driver, start, rng);
      if (next_start == 0) hold = true;  // attempt 0 is fresh
      lane_attempt[l] = next_start++;
    }
    std::uint8_t busy = 0, fresh = 0;
    for (int l = 0; l < lanes; ++l) {
      busy |= static_cast<std::uint8_t>((lane_attempt[l] >= 0) << l);
      fresh |= static_cast<std::uint8_t>((lane_attempt[l] >= 0 && G.fresh[l] != 0) << l);
    }
    if (busy == 0) break;
    // A spent budget ends the attempts that have taken a step (time-limit);
    // a fresh one still evaluates its start (TimeBudget::endsAttempt, for the
    // four lanes at once: the clock is read once per round).
    std::uint8_t expired = 0;
    if (tally.driver.budget().spent(elapsed)) {
      time_up = true;
      expired = busy & static_cast<std::uint8_t>(~fresh);
      for (unsigned e = expired; e != 0; e &= e - 1) G.active[__builtin_ctz(e)] = 0;
    }
    std::uint8_t ended = 0;
    if ((busy & ~expired) != 0) (one ? m.one_step : m.step)(params, &G, 1, &ended);
    if (trace) {
      // SolveContext::begin / endIteration's records (a step that failed
      // records nothing), kept per attempt until it is taken.
      const double now = elapsed();
      for (unsigned b = busy & static_cast<std::uint8_t>(~expired); b != 0; b &= b - 1) {
        const int l = __builtin_ctz(b);
        const bool first = (fresh >> l) & 1u;
        if (!first && stepFailed(G.reason[l])) continue;
        IterationRecord r;
        r.iteration = first ? 0 : static_cast<int>(G.iteration[l]);  // within the attempt; offset when taken
        r.position_error = G.pe[l];
        r.orientation_error = G.oe[l];
        r.step_norm = first ? 0.0 : G.step[l];
        r.damping = first ? 0.0 : std::sqrt(G.lambda2[l]);
        r.elapsed_us = now;
        r.q = start;
        for (int k = 0; k < n; ++k) r.q[plan.q_index[k]] = G.q[k][l];
        m.records[lane_attempt[l] % Impl::kWindow].push_back(std::move(r));
      }
    }
    for (unsigned e = ended | expired; e != 0; e &= e - 1) {
      const int l = __builtin_ctz(e);
      if ((expired >> l) & 1u) G.reason[l] = batch::kTimeLimit;
      const long a = lane_attempt[l];
      const int w = static_cast<int>(a % Impl::kWindow);
      m.ended[w] = readAttemptEnd(G, l, n, static_cast<std::int32_t>(G.reason[l]), options);
      m.has_ended[w] = true;
      lane_attempt[l] = -1;
      G.active[l] = 0;
      G.fresh[l] = 0;
    }
    // Take the ended attempts in attempt order (Solver::runAttempts): stop
    // at the first that converged, or when the budget is spent.
    while (!done) {
      const int w = static_cast<int>(next_taken % Impl::kWindow);
      if (!m.has_ended[w]) break;
      m.has_ended[w] = false;
      if (trace) {
        for (IterationRecord& r : m.records[w]) {
          r.iteration += static_cast<int>(tally.iterations);
          // The time a record can be taken in attempt order: not before the
          // records of the attempts before it (so the trace's time grows,
          // as in one attempt after another).
          r.elapsed_us = std::max(r.elapsed_us, taken_us);
          taken_us = r.elapsed_us;
          if (summary->trace.size() < Summary::kMaxTraceRecords) {
            summary->trace.push_back(std::move(r));
          } else {
            summary->trace.back() = std::move(r);  // the trace ends where the solve ended (SolveContext::record)
          }
        }
        m.records[w].clear();
      }
      ++next_taken;
      tally.take(m.ended[w], n, options);
      done = tally.driver.ended(elapsed);
    }
  }
  // Attempts run ahead of the answer are dropped; the lanes are free.
  for (int l = 0; l < kWidth; ++l) {
    G.active[l] = 0;
    G.fresh[l] = 0;
  }
  summary->iterations = static_cast<int>(tally.iterations);
  summary->restarts = static_cast<int>(tally.driver.restarts());
  summary->fk_evals = tally.fk_evals;
  summary->jacobian_evals = tally.jacobian_evals;
  q->resize(start.size());
  *q = start;
  for (int k = 0; k < n; ++k) (*q)[plan.q_index[k]] = tally.best_q[k];
  // The best attempt's own end (Solver::verdict recomputes the errors by
  // the model's FK and decides the status from them).
  *status = stopStatus(tally.best_reason);
  *message = stopMessage(tally.best_reason, options, tally.best_reason_iteration, m.spec_plan.backend);
  return true;
}

}  // namespace ikbench
