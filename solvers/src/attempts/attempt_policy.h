// The attempt policy of a solve: where each attempt starts, which attempt's
// answer is kept, when the attempts end, and what status the answer gets.
//
// Every path that runs a solve holds this one type through its attempt
// driver (attempt_driver.h, which adds the time budget and the stop
// reasons): Solver::solve's generic loop (solver.cpp), the compiled kernel's
// one-problem solve (kernel_solve.cpp) and the batch lanes
// (lane_scheduler.cpp). The paths differ in how they run an attempt (the
// backend's solveImpl, the kernel's one-problem or lane steps), not in what
// an attempt means, so they agree by construction.
//
// The policy (docs/solvers.md, "Attempts and restarts"):
// * Attempt 0 starts from the problem's start clamped into the limits, or with
//   start=library from the seed library's entry nearest the target; attempts
//   1 .. restarts start from the library's next entries while it has them,
//   then from seeded uniform draws within the limits (the restart stream,
//   Rng::mix(seed, kRestartStreamSalt)).
// * Attempts are taken in attempt order. An attempt whose configuration is
//   not finite is not scored. The score of the others is
//   max(position error / tolerance, orientation error / tolerance) (infinite
//   when an error is not finite): an attempt converged when it is <= 1. The
//   answer so far is attempt 0's, replaced by any later attempt that scores
//   lower (an unscored attempt 0 leaves a finite configuration of its own:
//   the start for the generic loop, the attempt's best iterate for the
//   kernel, which keeps no other).
// * In a scene with collision=reject|avoid, an attempt whose configuration
//   collides (CollisionWorld::collides) has not converged, whatever its
//   errors, and scores kCollidingScore: worse than any collision-free answer
//   (TRAC-IK's and MoveIt's re-seed on a rejected answer).
// * The attempts end at the first converged attempt (unless every solution is
//   wanted), when the time budget is spent, or after the last restart.
// * The answer's status comes from forward kinematics of its configuration:
//   within the tolerances it is converged, whatever the attempt said;
//   otherwise the attempt's own end; a backend's claim of convergence that FK
//   contradicts is `false-convergence`.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ikbench/core/solver_options.h"
#include "ikbench/solvers/seed_library.h"
#include "ikbench/solvers/solver_spec.h"
#include "ikbench/solvers/summary.h"

namespace ikbench {

// Where an attempt starts.
struct AttemptStart {
  enum Kind { kStart, kLibraryEntry, kRestart } kind = kStart;
  const double* entry = nullptr;  // kLibraryEntry: nq values within the limits
};

// How an attempt ended, as the policy needs it.
struct AttemptOutcome {
  bool q_finite = false;   // the attempt's configuration is finite
  double position_error = 0.0, orientation_error = 0.0;  // of that configuration
  bool colliding = false;  // collision=reject|avoid: the configuration collides in the scene
};

// The score of a colliding attempt (finite: a colliding answer is still kept
// over one that is not finite).
inline constexpr double kCollidingScore = 1e300;

// The score of a configuration's errors: <= 1 within both tolerances.
inline double attemptScore(double position_error, double orientation_error, const SolverOptions& options) {
  if (!std::isfinite(position_error) || !std::isfinite(orientation_error))
    return std::numeric_limits<double>::infinity();
  return std::max(position_error / options.position_tolerance, orientation_error / options.orientation_tolerance);
}

class AttemptSequence {
 public:
  // restarts: the spec's restarts (0 for a backend that is not restartable);
  // library: the seed library of the problem's model and goal, or null.
  AttemptSequence(long restarts, const SeedLibrary* library, const Goal* goal, StartMode start,
                  SolutionsMode solutions)
      : last_(restarts), library_(library, goal, start), all_(solutions == SolutionsMode::kAll) {}

  // Attempts run 0 .. lastAttempt().
  long lastAttempt() const { return last_; }

  // Where attempt `attempt` starts; asked for once per attempt, in attempt
  // order (the library hands out its entries in that order).
  AttemptStart start(long attempt) {
    if (const double* entry = library_.forAttempt(attempt); entry != nullptr)
      return {AttemptStart::kLibraryEntry, entry};
    return {attempt == 0 ? AttemptStart::kStart : AttemptStart::kRestart, nullptr};
  }

  // What the caller does with an attempt it hands over.
  struct Taken {
    bool best = false;       // its configuration is the answer so far (keep it)
    bool converged = false;  // it converged (solutions=all: a solution to keep)
    bool scored = false;     // it was scored (its configuration is finite)
  };

  // Takes the next attempt's outcome, in attempt order.
  Taken take(const AttemptOutcome& o, const SolverOptions& options) {
    const bool first = taken_++ == 0;
    Taken t;
    if (!o.q_finite) return t;
    t.scored = true;
    const double score =
        o.colliding ? kCollidingScore : attemptScore(o.position_error, o.orientation_error, options);
    t.best = score < best_score_ || first;
    if (t.best) best_score_ = score;
    t.converged = score <= 1.0;
    answered_ = answered_ || (t.converged && !all_);
    return t;
  }

  // Whether the attempts end after those taken so far: an answer converged
  // (solutions=first), the budget is spent, or the last attempt is taken.
  bool ended(bool time_up) const { return answered_ || time_up || taken_ > last_; }

  long taken() const { return taken_; }

 private:
  long last_ = 0;
  LibraryStarts library_;
  bool all_ = false;
  long taken_ = 0;
  double best_score_ = std::numeric_limits<double>::infinity();
  bool answered_ = false;
};

// The status of a solve's answer (Solver::verdict, and the batch lanes'
// summary): from the errors of its configuration by forward kinematics and
// the end of the attempt that gave it.
inline Status verdictStatus(bool errors_finite, bool within_tolerance, Status attempt_status) {
  if (!errors_finite) return Status::kNumericalFailure;
  if (within_tolerance) return Status::kConverged;
  return attempt_status == Status::kConverged ? Status::kFalseConvergence : attempt_status;
}

// The status and its message.
inline void answerVerdict(bool errors_finite, bool within_tolerance, double position_error, double orientation_error,
                          Status attempt_status, const std::string& attempt_message, Status* status,
                          std::string* message) {
  *status = verdictStatus(errors_finite, within_tolerance, attempt_status);
  if (!errors_finite) {
    *message = attempt_message.empty() ? "non-finite forward kinematics at the result" : attempt_message;
  } else if (within_tolerance) {
    // A backend may qualify its answer (e.g. a singular pose: a continuum).
    *message = attempt_status == Status::kConverged ? attempt_message : std::string();
  } else if (attempt_status == Status::kConverged) {
    *message = fmt::format("backend reported convergence, but FK gives position error {:.3g} m, orientation "
                           "error {:.3g} rad",
                           position_error, orientation_error);
  } else {
    *message = attempt_message;
  }
}

}  // namespace ikbench
