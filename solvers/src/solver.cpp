#include "ikbench/solvers/solver.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"

namespace ikbench {

// ---------------------------------------------------------------- context --

GoalErrors SolveContext::evaluate(const Eigen::VectorXd& q) {
  ++summary_->fk_evals;
  return computeErrors(q);
}

GoalErrors SolveContext::verify(const Eigen::VectorXd& q) {
  // The errors are a function of q alone (the model and goals are fixed for
  // the solve), so the configuration evaluated last - usually the attempt's
  // final iterate - needs no second FK. Data is not refilled: verify()'s
  // callers use only the returned errors.
  if (last_q_.size() == q.size() && last_q_ == q) return last_e_;
  return computeErrors(q);
}

GoalErrors SolveContext::computeErrors(const Eigen::VectorXd& q) {
  forwardKinematics(model(), q, *data_);
  last_e_ = evaluateGoals(model(), problem_->goals, *data_);
  last_q_ = q;  // same size every time after the first: no allocation
  return last_e_;
}

const Eigen::MatrixXd& SolveContext::jacobian(JacobianMode mode) {
  goalJacobian(model(), problem_->goals, *data_, mode);
  ++summary_->jacobian_evals;
  return data_->J;
}

bool SolveContext::withinTolerance(const GoalErrors& e) const {
  return e.position <= options_->position_tolerance && e.orientation <= options_->orientation_tolerance;
}

double SolveContext::elapsedUs() const {
  return std::chrono::duration<double, std::micro>(Clock::now() - start_).count();
}

bool SolveContext::timeUp() const { return deadline_us_ > 0.0 && elapsedUs() >= deadline_us_; }

bool SolveContext::begin(const Eigen::VectorXd& q, const GoalErrors& e) {
  iteration_ = 0;
  best_norm_ = e.weighted_norm;
  best_iteration_ = 0;
  lowest_norm_ = e.finite() ? e.weighted_norm : std::numeric_limits<double>::infinity();
  best_q_ = q;
  if (options_->record_trace)
    summary_->trace.push_back({iteration_offset_, e.position, e.orientation, 0.0, 0.0, elapsedUs()});
  if (!e.finite()) {
    stop(Status::kNumericalFailure, "non-finite error at the start configuration");
    return true;
  }
  if (withinTolerance(e)) {
    stop(Status::kConverged);
    return true;
  }
  return false;
}

bool SolveContext::endIteration(const Eigen::VectorXd& q, const GoalErrors& e, double step_norm, double damping) {
  ++iteration_;
  if (e.finite() && e.weighted_norm < lowest_norm_) {
    lowest_norm_ = e.weighted_norm;
    best_q_ = q;  // same size as before: no allocation
  }
  if (options_->record_trace)
    summary_->trace.push_back(
        {iteration_offset_ + iteration_, e.position, e.orientation, step_norm, damping, elapsedUs()});
  if (!e.finite() || !std::isfinite(step_norm)) {
    stop(Status::kNumericalFailure, fmt::format("non-finite error or step at iteration {}", iteration_));
    return true;
  }
  if (withinTolerance(e)) {
    stop(Status::kConverged);
    return true;
  }
  const int k = options_->stall_iterations;
  if (e.weighted_norm < (1.0 - options_->stall_relative_improvement) * best_norm_) {
    best_norm_ = e.weighted_norm;
    best_iteration_ = iteration_;
  } else if (k > 0 && iteration_ - best_iteration_ >= k) {
    stop(Status::kStalled, fmt::format("no relative improvement of {} in {} iterations",
                                       options_->stall_relative_improvement, k));
    return true;
  }
  if (k > 0 && step_norm < 1e-14) {
    stop(Status::kStalled, "step vanished (|dq| < 1e-14)");
    return true;
  }
  if (iteration_ >= options_->max_iterations) {
    stop(Status::kMaxIterations);
    return true;
  }
  if (timeUp()) {
    stop(Status::kTimeLimit);
    return true;
  }
  return false;
}

void SolveContext::stop(Status status, std::string message) {
  status_ = status;
  message_ = std::move(message);
}

// ----------------------------------------------------------------- solver --

void Solver::configure(std::string spec, const Params& common) {
  spec_ = std::move(spec);
  if (common.has("restarts")) restarts_ = common.getInt("restarts");
  if (common.has("budget_us")) budget_us_ = common.getDouble("budget_us");
  if (common.has("max_iters")) max_iters_ = common.getInt("max_iters");
  if (restarts_ < 0) throw SpecError(fmt::format("solver '{}': restarts must be >= 0", spec_));
  if (budget_us_ < 0.0 && common.has("budget_us") && budget_us_ != -1.0)
    throw SpecError(fmt::format("solver '{}': budget_us must be >= 0", spec_));
  if (common.has("max_iters") && max_iters_ < 1 && max_iters_ != -1)
    throw SpecError(fmt::format("solver '{}': max_iters must be >= 1", spec_));
}

SolverOptions Solver::effectiveOptions(const SolverOptions& base) const {
  SolverOptions o = base;
  if (budget_us_ >= 0.0) o.time_budget_us = budget_us_;
  if (max_iters_ >= 1) o.max_iterations = max_iters_;
  return o;
}

bool Solver::supports(const Problem&, std::string*) const { return true; }

Summary Solver::solve(const Problem& problem, const SolverOptions& options, Eigen::VectorXd* q_out) {
  Eigen::VectorXd q = problem.q0;
  Summary s = solve(problem, q, options);
  if (q_out) *q_out = std::move(q);
  return s;
}

Summary Solver::solve(const Problem& problem, Eigen::VectorXd& q, const SolverOptions& base_options) {
  const auto t0 = SolveContext::Clock::now();
  Summary summary;
  const SolverOptions options = effectiveOptions(base_options);
  std::string why;
  if (!options.isValid(&why) || !problem.isValid(&why)) {
    summary.status = Status::kInvalidInput;
    summary.message = why;
    return summary;
  }
  if (!isValidConfiguration(*problem.model, q, &why)) {
    summary.status = Status::kInvalidInput;
    summary.message = "start configuration: " + why;
    return summary;
  }
  if (!supports(problem, &why)) {
    summary.status = Status::kUnsupported;
    summary.message = fmt::format("{}: {}", spec_, why);
    return summary;
  }
  const Model& model = *problem.model;
  if (data_model_ != &model || !data_) {
    data_ = std::make_unique<Data>(model);
    data_model_ = &model;
    data_model_owner_ = problem.model;  // keeps the pointer's identity valid
  }
  if (options.record_trace) summary.trace.reserve(static_cast<size_t>(options.max_iterations) + 1);

  Rng rng(Rng::mix(options.seed, 0x1CB5EEDULL));
  SolveContext ctx;
  ctx.problem_ = &problem;
  ctx.options_ = &options;
  ctx.data_ = data_.get();
  ctx.summary_ = &summary;
  ctx.rng_ = &rng;
  ctx.start_ = t0;
  ctx.deadline_us_ = options.time_budget_us;

  // The start q clamped into the limits: backends start inside them.
  Eigen::VectorXd start = q;
  clampToLimits(model, start);
  Eigen::VectorXd attempt_q, best_q = start;
  double best_score = std::numeric_limits<double>::infinity();
  Status best_status = Status::kMaxIterations;
  std::string best_message;
  const int max_attempts = 1 + (restartable() ? restarts_ : 0);
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    attempt_q = attempt == 0 ? start : randomConfiguration(model, rng);
    ctx.iteration_offset_ = summary.iterations;
    ctx.status_ = Status::kMaxIterations;
    ctx.message_.clear();
    if (options.record_trace && attempt > 0) summary.trace.reserve(summary.trace.size() + options.max_iterations + 1);
    ctx.best_q_.resize(0);
    solveImpl(problem, attempt_q, ctx);
    summary.iterations += ctx.iteration_;
    // A backend's last iterate may be worse than one it passed through
    // (overshoot, non-monotone methods): the attempt's result is the best
    // configuration the context saw, unless the backend's own q is better.
    if (ctx.best_q_.size() == attempt_q.size()) {
      const double last = normalizeConfiguration(model, attempt_q) ? ctx.verify(attempt_q).weighted_norm
                                                                  : std::numeric_limits<double>::infinity();
      if (!(last <= ctx.lowest_norm_)) attempt_q = ctx.best_q_;
    }
    if (attempt > 0) ++summary.restarts;
    if (ctx.status_ == Status::kUnsupported || ctx.status_ == Status::kInvalidInput) {
      summary.status = ctx.status_;
      summary.message = ctx.message_;
      summary.time_us = std::chrono::duration<double, std::micro>(SolveContext::Clock::now() - t0).count();
      return summary;
    }
    // Score each attempt by its FK error (finite q only).
    if (!normalizeConfiguration(model, attempt_q)) continue;
    clampToLimits(model, attempt_q);
    const GoalErrors e = ctx.verify(attempt_q);
    const double score = e.finite() ? std::max(e.position / options.position_tolerance,
                                               e.orientation / options.orientation_tolerance)
                                    : std::numeric_limits<double>::infinity();
    if (score < best_score || attempt == 0) {
      best_score = score;
      best_q = attempt_q;
      best_status = ctx.status_;
      best_message = ctx.message_;
    }
    if (score <= 1.0 || ctx.timeUp()) break;
  }

  // Final verdict by forward kinematics of the returned configuration.
  q = best_q;
  const GoalErrors e = ctx.verify(q);
  summary.position_error = e.position;
  summary.orientation_error = e.orientation;
  summary.within_limits = withinLimits(model, q, 1e-9);
  if (!e.finite()) {
    summary.status = Status::kNumericalFailure;
    summary.message = best_message.empty() ? "non-finite forward kinematics at the result" : best_message;
  } else if (ctx.withinTolerance(e)) {
    summary.status = Status::kConverged;
  } else {
    summary.status = best_status == Status::kConverged ? Status::kStalled : best_status;
    summary.message = best_status == Status::kConverged
                          ? fmt::format("backend reported convergence, but FK gives position error {:.3g} m, "
                                        "orientation error {:.3g} rad", e.position, e.orientation)
                          : best_message;
  }
  summary.time_us = std::chrono::duration<double, std::micro>(SolveContext::Clock::now() - t0).count();
  return summary;
}

}  // namespace ikbench
