// The one interface every backend implements.
//
// A backend derives from Solver and implements solveImpl(), which runs one
// attempt from a start configuration, using the SolveContext for forward
// kinematics, Jacobians, evaluation counting, stopping rules and the trace.
// The public, non-virtual solve() (after Ceres' TypedLinearSolver wrapping
// SolveImpl in a timer) does everything common:
//   1. validates the options, the problem and the start configuration
//      (-> kInvalidInput with a message), asks supports() (-> kUnsupported);
//      A model without degrees of freedom is answered without the backend.
//   2. runs attempts: the first from q, then, while `restarts` remain and the
//      time budget lasts, from seeded random configurations within limits
//      (TRAC-IK-style random restarts), keeping the best attempt;
//   3. keeps the distinct converged solutions a backend offered (closed-form
//      backends, `solutions=all`);
//   4. clamps the result into the joint limits, recomputes every goal error by
//      forward kinematics and decides "converged" from those errors alone;
//   5. in a scene (Problem::collision), checks the result exactly (FCL)
//      after the solve's time is taken: Summary::collision_free. With
//      collision=reject|avoid an attempt whose answer collides counts as a
//      failed attempt (attempt_policy.h).
//
// Thread safety: a Solver instance keeps its workspace between calls (so that
// repeated solves do not allocate); use one instance per thread.
#pragma once

#include <Eigen/Core>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/core/solver_options.h"
#include "ikbench/solvers/solver_spec.h"
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
  // For a backend that finds several solutions at once (closed-form IK):
  // offers one candidate configuration (nq). After the attempt, Solver::solve
  // keeps the candidates that converge by FK within the limits (revolute
  // angles wrapped by 2 pi into the limits first), drops duplicates, returns
  // the one closest to the start as q and all of them in Summary::solutions.
  void addSolution(const Eigen::VectorXd& q);
  // For a backend that checks its candidates itself (analytic-6r, with the
  // compiled kernel's forward kinematics, lane_fk.h): declares that the
  // candidates offered in this attempt are within the limits, hold by forward
  // kinematics within the tolerances, are distinct (kDistinctSolutionDistance,
  // modulo 2 pi) and come closest to the start first. Solver::solve then keeps
  // them as offered instead of checking each again.
  void candidatesChecked() { *candidates_checked_ = true; }
  // For a backend that evaluated q by forward kinematics itself (the compiled
  // kernel's lanes, lane_fk.h): e are q's goal errors. Solver::solve's
  // verification of the configuration it returns (the verdict) takes them
  // when that configuration is q, instead of a second FK of it.
  void evaluatedElsewhere(const Eigen::VectorXd& q, const GoalErrors& e);
  // For a backend whose solve runs elsewhere (an external process): the
  // time it reports for the solve [us], kept as Summary::reported_time_us.
  void reportTime(double us) { summary_->reported_time_us = us; }
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
  // Appends a trace record (bounded by Summary::kMaxTraceRecords).
  void record(IterationRecord r);
  // The configuration of the last evaluate()/verify()/evaluatedElsewhere()
  // (the Solver's buffer, reused between solves) and its errors; has_last_
  // once there is one in this solve.
  Eigen::VectorXd* last_q_ = nullptr;
  GoalErrors last_e_;
  bool has_last_ = false;
  const Problem* problem_ = nullptr;
  const SolverOptions* options_ = nullptr;
  Data* data_ = nullptr;
  Summary* summary_ = nullptr;
  Rng* rng_ = nullptr;
  // addSolution(): the first *candidate_count_ entries are this solve's (the
  // vectors are reused between solves, so offering a solution does not allocate).
  std::vector<Eigen::VectorXd>* candidates_ = nullptr;
  size_t* candidate_count_ = nullptr;
  bool* candidates_checked_ = nullptr;
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

class KernelSolve;
class SeedLibrary;
class ClosedFormStage;

class Solver {
 public:
  Solver();
  virtual ~Solver();

  // Solves problem starting from q (nq), writing the result into q.
  // Never throws for bad input; see the class comment for what it does.
  Summary solve(const Problem& problem, Eigen::VectorXd& q, const SolverOptions& options);
  // Same, starting from problem.q0.
  Summary solve(const Problem& problem, const SolverOptions& options, Eigen::VectorXd* q_out = nullptr);

  // The spec string this solver was created from, e.g. "dls:lambda=0.05".
  const std::string& spec() const { return spec_; }
  const CommonSpecOptions& commonOptions() const { return common_; }
  // `base` with the common spec keys applied (withSpecOptions).
  SolverOptions effectiveOptions(const SolverOptions& base) const;

  // Whether this backend can solve the problem at all; *why says why not.
  virtual bool supports(const Problem& problem, std::string* why) const;
  // Restarts only make sense for iterative, seed-dependent backends.
  virtual bool restartable() const { return true; }
  // Whether the backend can keep its steps clear of a scene (collision=avoid).
  virtual bool avoidsCollisions() const { return false; }
  // Whether an attempt's answer is the configuration of lowest weighted
  // residual it passed through when that is lower than the backend's last
  // iterate (step 2). A priority hierarchy (nullspace, hqp) says no: a lower
  // weighted sum bought with a higher level's error is not a better answer.
  virtual bool keepsLowestResidual() const { return true; }

  // Called by the registry after construction with the spec and its common
  // keys. User solvers built without the registry may call it too.
  void configure(std::string spec, const CommonSpecOptions& common);

 protected:
  // A backend that has a compiled strategy (the `dls` family's factories
  // choose the chain kernel, solvers/src/kernel/kernel_solve.h) hands it over here:
  // problems it takes are solved by it, the others by solveImpl, both under
  // the same attempt policy. Null: solveImpl always.
  void useKernel(std::unique_ptr<KernelSolve> kernel);

  // One attempt from q. On return q holds the attempt's best configuration and
  // ctx.status() its status.
  virtual void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) = 0;

 private:
  // The steps of solve(), in order.
  // 1. Options, problem, start configuration, support; a model without DOF
  //    is answered here. False when the summary is final.
  bool validate(const Problem& problem, const Eigen::VectorXd& q, const SolverOptions& options, Summary* summary);
  // 2. The attempts: the first from the start (clamped into the limits), then
  //    random restarts while they remain and the budget lasts; stops at the
  //    first converged attempt unless every solution is wanted. With a seed
  //    library (library=N; null otherwise) restarts, and with start=library
  //    the first attempt too, start from its entries nearest the target
  //    first. Returns the best attempt's configuration; false when the
  //    backend refused the problem (unsupported / invalid input, summary
  //    final).
  struct AttemptResult {
    Eigen::VectorXd q;
    Status status = Status::kMaxIterations;
    std::string message;
  };
  bool runAttempts(const Problem& problem, const Eigen::VectorXd& start, const SeedLibrary* library,
                   const SolverOptions& options, SolveContext& ctx, Summary* summary, AttemptResult* best);
  // 1b. closed_form=auto (closed_form_stage.h): true when the closed form
  //    answered (best and the summary's counts and solutions filled);
  //    otherwise *start may have moved to the idealised chain's closed-form
  //    answer, and the attempts run.
  bool closedForm(const Problem& problem, Eigen::VectorXd* start, const SolverOptions& options, SolveContext& ctx,
                  Summary* summary, AttemptResult* best);
  // 3. Keeps the distinct converged candidates (closed-form backends,
  //    solutions=all), closest to the start first.
  void collectSolutions(const Model& model, const Eigen::VectorXd& start, SolveContext& ctx, Summary* summary);
  // 4. The verdict by forward kinematics of the returned configuration.
  void verdict(const Model& model, const AttemptResult& best, SolveContext& ctx, Summary* summary);
  // The timed part of solve(): steps 1 to 4.
  Summary solveTimed(const Problem& problem, Eigen::VectorXd& q, const SolverOptions& base_options);
  // Whether q collides in the problem's scene (collision=reject|avoid).
  bool collides(const Problem& problem, const Eigen::VectorXd& q);

  std::string spec_ = "unnamed";
  CommonSpecOptions common_;
  // Workspace kept between solves of the same model.
  const Model* data_model_ = nullptr;
  std::shared_ptr<const Model> data_model_owner_;
  std::unique_ptr<Data> data_;
  std::vector<Eigen::VectorXd> candidates_;  // SolveContext::addSolution, reused between solves
  size_t candidate_count_ = 0;
  bool candidates_checked_ = false;  // SolveContext::candidatesChecked
  std::vector<std::pair<double, size_t>> kept_;  // collectSolutions: distance to the start, candidate
  std::unique_ptr<KernelSolve> kernel_;
  std::unique_ptr<ClosedFormStage> closed_form_;  // made on the first solve with closed_form=auto
  // solve()'s clamped start, runAttempts()' attempt configuration and the
  // answer, kept between solves so that a solve of the same model does not
  // allocate them.
  Eigen::VectorXd start_, attempt_q_;
  Eigen::VectorXd evaluated_q_;  // SolveContext::last_q_
  AttemptResult best_;
  std::unique_ptr<Data> collision_data_;  // FK for the collision checks, kept between solves
  std::shared_ptr<const CollisionWorld> collision_owner_;
};

// For a backend's supports(): true when every goal of `problem` is an
// effector point reaching a target (isPointTarget: no centre of mass, no
// bound); otherwise writes why `solver` (its name in the message) takes
// none of the others into *why.
bool pointTargetsOnly(const Problem& problem, std::string_view solver, std::string* why);

}  // namespace ikbench
