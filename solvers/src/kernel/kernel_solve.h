// One Solver::solve through the compiled chain kernel of the batch path
// (batch_kernel_*.cpp): the same iteration, attempts and restarts as the
// generic code of `dls` / `dls-adaptive:mode=error` (jacobian_dls.cpp,
// Solver::runAttempts), run by the kernel that solveBatch uses. The kernel
// works in the chain's own frames with fixed joints folded into the pivots,
// two column rotations per hinge and AVX2 + FMA when the CPU has them; it
// agrees with the generic code to rounding (docs/performance.md).
//
// A kernel step advances four lanes at the cost of one, so the attempts of
// the solve run up to four at once: attempt a + 1 starts (from the same
// seeded restart configuration) without waiting for attempt a to fail. The
// attempts are then taken in attempt order, as if run one after another:
// the answer is the first attempt in that order that converged, the
// summary's counts and trace are those of the attempts up to it, and
// attempts that ran ahead of it are dropped (their cost is in the time
// only). A trace record's time is when it can be taken in that order. The
// answer is therefore bitwise solveBatch's for the problem (a binding time
// budget aside), at the rounds of the slowest attempt up to the answer
// instead of the sum of their rounds.
//
// While only one attempt runs (a solve without restarts; attempt 0 until
// restarts start beside it), the kernel's one-problem step runs instead of
// the lane step: packed within the problem, bitwise the lane step's values
// for that lane, in less time (kernel=packed / kernel=lanes force one or
// the other throughout).
#pragma once

#include <Eigen/Core>
#include <chrono>
#include <memory>
#include <string>

#include "ikbench/core/solver_options.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/solvers/jacobian_options.h"
#include "ikbench/solvers/solver_spec.h"
#include "ikbench/solvers/summary.h"

namespace ikbench {

class SeedLibrary;
namespace batch_detail {
struct SpecPlan;
}

class KernelSolve {
 public:
  // The strategy the dls family's factories choose (jacobian_dls.cpp): null
  // when the options are not ones the kernel runs (another damping mode, a
  // null-space term, solutions=all, kernel=generic).
  static std::unique_ptr<KernelSolve> forDls(const DlsOptions& o, const CommonSpecOptions& common);
  static std::unique_ptr<KernelSolve> forDlsAdaptive(const DlsAdaptiveOptions& o, const CommonSpecOptions& common);
  ~KernelSolve();

  // Solves problem from start (nq; clamped into the limits) with the
  // effective options; restarts (and with start=library the first attempt)
  // start from the seed library's nearest entries first when library is
  // not null. False when the problem is not for the kernel (several
  // goals, a ball or free joint, a DOF off the goal's path, weighted DOF,
  // ...): nothing is written and the caller runs the generic path. True: the
  // summary has iterations, restarts, evaluation counts and the trace (when
  // options.record_trace); *q, *status and *message are the best attempt's
  // configuration, end status and message, for Solver::verdict.
  bool solve(const Problem& problem, const Eigen::VectorXd& start, const SeedLibrary* library,
             const SolverOptions& options, std::chrono::steady_clock::time_point t0, Summary* summary, Eigen::VectorXd* q, Status* status,
             std::string* message);

 private:
  KernelSolve();
  struct Impl;
  static std::unique_ptr<KernelSolve> fromPlan(batch_detail::SpecPlan&& plan);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ikbench
