// The one interface every backend implements.
//
// A backend derives from Solver and implements solveImpl(), which runs one
// attempt from a start configuration, using the SolveContext for forward
// kinematics, Jacobians, evaluation counting, stopping rules and the trace.
// The public, non-virtual solve() (after Ceres' TypedLinearSolver wrapping
// SolveImpl in a timer) does everything common:
//   1. validates the options, the problem and the start configuration
//      (-> kInvalidInput with a message), asks supports() (-> kUnsupported);
//   2. runs attempts: the first from q, then, while `restarts` remain and the
//      time budget lasts, from seeded random configurations within limits
//      (TRAC-IK-style random restarts), keeping the best attempt;
//   3. clamps the result into the joint limits, recomputes every goal error by
//      forward kinematics and decides "converged" from those errors alone.
//
// Thread safety: a Solver instance keeps its workspace between calls (so that
// repeated solves do not allocate); use one instance per thread.
#pragma once

#include <Eigen/Core>
#include <chrono>
#include <memory>
#include <string>

#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/solvers/options.h"
#include "ikbench/solvers/params.h"
#include "ikbench/solvers/summary.h"

namespace ikbench {

// Per-attempt services for a backend. Counts every FK and Jacobian it does,
// applies the common stopping rules and records the trace.
class SolveContext {
 public:
  using Clock = std::chrono::steady_clock;

  const Problem& problem() const { return *problem_; }
  const Model& model() const { return *problem_->model; }
  const SolverOptions& options() const { return *options_; }
  Data& data() { return *data_; }

  // FK of q and all goal errors into data() (residual and per-goal errors).
  GoalErrors evaluate(const Eigen::VectorXd& q);
  // Jacobian of all goals at the configuration last evaluated, into data().J.
  const Eigen::MatrixXd& jacobian(JacobianMode mode = JacobianMode::kGeometric);
  // For backends that do their own kinematics (KDL) and only report counts.
  void countEvaluations(long fk, long jac) {
    summary_->fk_evals += fk;
    summary_->jacobian_evals += jac;
  }

  bool withinTolerance(const GoalErrors& e) const;
  double elapsedUs() const;
  bool timeUp() const;

  // Call with the start configuration and its errors. Records iteration 0 and
  // returns true (status converged) if nothing is left to do.
  bool begin(const Eigen::VectorXd& q, const GoalErrors& e);
  // Call after each iteration's step with the new configuration and its
  // errors. Records the trace and remembers the best configuration of the
  // attempt (lowest weighted residual), then returns true and sets the status
  // when a stopping rule fires: converged, non-finite error (numerical
  // failure), stalled, max iterations, time limit.
  bool endIteration(const Eigen::VectorXd& q, const GoalErrors& e, double step_norm, double damping = 0.0);
  // For a backend that stops for its own reason (e.g. a singular system).
  void stop(Status status, std::string message = "");
  // For a backend whose iterations run inside a library that reports only
  // their number (KDL's LMA): counts n iterations without trace records; the
  // next endIteration() records the state they reached as one more iteration.
  void addIterations(int n) {
    if (n > 0) iteration_ += n;
  }

  int iteration() const { return iteration_; }
  Status status() const { return status_; }
  const std::string& message() const { return message_; }
  // Random numbers for this attempt, derived from SolverOptions::seed.
  Rng& rng() { return *rng_; }

 private:
  friend class Solver;
  // FK + goal errors without counting (the final verification by Solver);
  // answered from the last evaluate()/verify() when q is the same.
  GoalErrors verify(const Eigen::VectorXd& q);
  // FK + goal errors of q into data(), remembered as the last evaluation.
  GoalErrors computeErrors(const Eigen::VectorXd& q);
  Eigen::VectorXd last_q_;  // configuration of the last evaluate()/verify()
  GoalErrors last_e_;
  const Problem* problem_ = nullptr;
  const SolverOptions* options_ = nullptr;
  Data* data_ = nullptr;
  Summary* summary_ = nullptr;
  Rng* rng_ = nullptr;
  Clock::time_point start_;
  double deadline_us_ = 0.0;  // 0 = none
  int iteration_ = 0;
  int iteration_offset_ = 0;  // iterations of earlier attempts (trace numbering)
  double best_norm_ = 0.0;      // lowest weighted residual of the attempt
  int best_iteration_ = 0;      // iteration of the last significant improvement
  double lowest_norm_ = 0.0;    // lowest weighted residual so far
  Eigen::VectorXd best_q_;      // configuration with lowest_norm_
  Status status_ = Status::kMaxIterations;
  std::string message_;
};

class Solver {
 public:
  virtual ~Solver() = default;

  // Solves problem starting from q (nq), writing the result into q.
  // Never throws for bad input; see the class comment for what it does.
  Summary solve(const Problem& problem, Eigen::VectorXd& q, const SolverOptions& options);
  // Same, starting from problem.q0.
  Summary solve(const Problem& problem, const SolverOptions& options, Eigen::VectorXd* q_out = nullptr);

  // The spec string this solver was created from, e.g. "dls:lambda=0.05".
  const std::string& spec() const { return spec_; }
  // The options after applying the common spec keys (restarts, budget_us,
  // max_iters) on top of `base`.
  SolverOptions effectiveOptions(const SolverOptions& base) const;

  // Whether this backend can solve the problem at all; *why says why not.
  virtual bool supports(const Problem& problem, std::string* why) const;
  // Restarts only make sense for iterative, seed-dependent backends.
  virtual bool restartable() const { return true; }

  // Called by the registry after construction with the spec and the parsed
  // common keys. User solvers built without the registry may call it too.
  void configure(std::string spec, const Params& common);

 protected:
  // One attempt from q. On return q holds the attempt's best configuration and
  // ctx.status() its status.
  virtual void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) = 0;

 private:
  std::string spec_ = "unnamed";
  int restarts_ = 0;
  double budget_us_ = -1.0;  // < 0: keep SolverOptions::time_budget_us
  int max_iters_ = -1;       // < 0: keep SolverOptions::max_iterations
  // Workspace kept between solves of the same model.
  const Model* data_model_ = nullptr;
  std::shared_ptr<const Model> data_model_owner_;
  std::unique_ptr<Data> data_;
};

}  // namespace ikbench
