// The attempt driver: one solve's attempts between their steps. It owns what
// every way of running an attempt shares, stated once:
// * the time budget rule (TimeBudget): when a solve's budget counts as spent,
//   and that it ends a running attempt only once that attempt has taken a
//   step (a fresh attempt still evaluates its start);
// * why an attempt stopped (StopReason: the compiled kernel's end codes,
//   batch_layout.h), its status and its message (stopStatus, stopMessage):
//   SolveContext, the Jacobian family's backends and the kernel's lanes all
//   word a stop from this one table;
// * the attempts and restarts: where attempt k starts, which attempt's answer
//   is kept and when the attempts end (AttemptSequence, attempt_policy.h,
//   with the budget), and the restart count of the summary.
//
// The driver asks a runner for attempts. The shape is Ceres' minimizer: one
// loop (Minimizer::Minimize) deciding between iterations, the iteration
// itself a pluggable strategy. Three runners:
// * Solver::runAttempts (solver.cpp), the generic loop: one backend
//   solveImpl per attempt, run one after another by AttemptDriver::run;
// * KernelSolve (kernel_solve.cpp): up to four attempts of one problem at
//   once in the kernel's lanes, taken in attempt order;
// * the lane scheduler of solveBatch (lane_scheduler.cpp): one driver per
//   problem in a lane, its budget counting the problem's charged time.
// The lane runners do not run their rounds through AttemptDriver::run: a
// round steps four lanes (or a thread's lane groups) at once, each at its
// own attempt, so the loop over rounds is theirs. Between rounds they call
// the same driver object (start, take, ended, endsAttempt), all inline and
// non-virtual; nothing of the driver runs inside a lane step, which stays
// the SIMD kernel's (batch_kernel_*.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "attempt_policy.h"
#include "batch_layout.h"

namespace ikbench {

// ---------------------------------------------------------------- budget --

// A solve's wall-clock budget (SolverOptions::time_budget_us; 0 = none),
// restarts included. Elapsed time is the solve's own: from its start for
// Solver::solve and KernelSolve, the problem's charged share of the lane
// rounds for solveBatch (batch.h).
struct TimeBudget {
  double us = 0.0;

  // Spent once the elapsed time reaches the budget; the attempts then end at
  // the next attempt taken. `elapsed_us` is a callable returning the elapsed
  // time: the clock is read only when there is a budget (the generic loop
  // asks after every iteration).
  template <class Elapsed>
  bool spent(const Elapsed& elapsed_us) const {
    return us > 0.0 && elapsed_us() >= us;
  }
  // Whether a spent budget ends a running attempt now (time-limit): only one
  // that has taken a step. A fresh attempt (its start not yet evaluated)
  // always evaluates its start, so every attempt taken has a configuration
  // and errors of its own (SolveContext::endIteration checks the budget
  // after a step, never in begin()).
  template <class Elapsed>
  bool endsAttempt(const Elapsed& elapsed_us, bool fresh) const {
    return !fresh && spent(elapsed_us);
  }
};

// ----------------------------------------------------------- stop reasons --

// Why an attempt stopped. The kernel's lanes write these codes (they are
// plain data in batch_layout.h, which the SIMD kernels see); SolveContext's
// own stopping rules and the Jacobian family's failures are the same
// reasons.
using StopReason = batch::EndReason;

// The status of an attempt that stopped for `reason`.
inline Status stopStatus(std::int32_t reason) {
  switch (reason) {
    case batch::kConverged: return Status::kConverged;
    case batch::kTimeLimit: return Status::kTimeLimit;
    case batch::kStallNoImprovement:
    case batch::kStallVanishingStep: return Status::kStalled;
    case batch::kNonFiniteError:
    case batch::kNonFiniteStart:
    case batch::kNotPositiveDefinite:
    case batch::kNonFiniteStep:
    case batch::kNonFiniteConfig: return Status::kNumericalFailure;
    default: return Status::kMaxIterations;
  }
}

// The text of a step's own failure (kNotPositiveDefinite, kNonFiniteStep,
// kNonFiniteConfig), without the backend's name; null for another reason.
inline const char* stepFailureText(std::int32_t reason) {
  switch (reason) {
    case batch::kNotPositiveDefinite: return "J J^T + lambda^2 I is not positive definite (lambda = 0 at a singularity?)";
    case batch::kNonFiniteStep: return "non-finite step";
    case batch::kNonFiniteConfig: return "non-finite configuration after the step";
    default: return nullptr;
  }
}

// The message of an attempt that stopped for `reason` after `iteration`
// iterations (empty for convergence, the iteration cap and the budget,
// whose status says it all); a step's failure is prefixed by the backend's
// name ("dls: non-finite step"), as the backend words it.
std::string stopMessage(std::int32_t reason, const SolverOptions& options, long iteration, std::string_view backend);

// ---------------------------------------------------------------- driver --

class AttemptDriver {
 public:
  // restarts: the spec's restarts (0 for a backend that is not restartable);
  // library, goal, start, solutions: as for AttemptSequence; budget_us: the
  // effective SolverOptions::time_budget_us.
  AttemptDriver(long restarts, const SeedLibrary* library, const Goal* goal, StartMode start, SolutionsMode solutions,
                double budget_us)
      : policy_(restarts, library, goal, start, solutions), budget_{budget_us} {}

  // Attempts run 0 .. lastAttempt().
  long lastAttempt() const { return policy_.lastAttempt(); }
  // Where attempt `attempt` starts; asked for once per attempt, in attempt
  // order.
  AttemptStart start(long attempt) { return policy_.start(attempt); }
  // Takes the next attempt's outcome, in attempt order.
  AttemptSequence::Taken take(const AttemptOutcome& outcome, const SolverOptions& options) {
    return policy_.take(outcome, options);
  }
  // Whether the attempts end after those taken so far (elapsed_us(): the
  // solve's elapsed time, read only with a budget): an answer converged
  // (solutions=first), the budget is spent, or the last attempt is taken.
  template <class Elapsed>
  bool ended(const Elapsed& elapsed_us) const {
    return policy_.ended(budget_.spent(elapsed_us));
  }
  // The budget rule for a running attempt (TimeBudget::endsAttempt).
  template <class Elapsed>
  bool endsAttempt(const Elapsed& elapsed_us, bool fresh) const {
    return budget_.endsAttempt(elapsed_us, fresh);
  }
  const TimeBudget& budget() const { return budget_; }

  long taken() const { return policy_.taken(); }
  // The summary's restarts: the attempts taken after the first.
  long restarts() const { return std::max(0L, policy_.taken() - 1); }

  // The attempts one after another (the generic loop). The runner provides
  //   bool attempt(long k, const AttemptStart& from, AttemptOutcome* out):
  //     runs attempt k from `from`; false ends the solve without a verdict
  //     (the backend found the problem unsupported or invalid);
  //   void taken(long k, const AttemptSequence::Taken& t, const AttemptOutcome&):
  //     keeps what the policy decided of attempt k;
  //   double elapsedUs() const: the solve's elapsed time.
  // Returns false when the runner ended the solve.
  template <class Runner>
  bool run(Runner& runner, const SolverOptions& options) {
    for (long k = 0;; ++k) {
      const AttemptStart from = start(k);
      AttemptOutcome outcome;
      if (!runner.attempt(k, from, &outcome)) return false;
      runner.taken(k, take(outcome, options), outcome);
      if (ended([&runner] { return runner.elapsedUs(); })) return true;
    }
  }

 private:
  AttemptSequence policy_;
  TimeBudget budget_;
};

}  // namespace ikbench
