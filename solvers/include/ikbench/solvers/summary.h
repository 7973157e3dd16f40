// What a solve reports (after ceres::Solver::Summary / IterationSummary).
#pragma once

#include <Eigen/Core>
#include <string>
#include <string_view>
#include <vector>

namespace ikbench {

enum class Status {
  kConverged,         // every goal within tolerance, checked by FK of q
  kMaxIterations,     // iteration cap reached
  kTimeLimit,         // time budget spent
  kStalled,           // no progress (local minimum, singularity, unreachable)
  kNumericalFailure,  // a singular system or a non-finite value; q is the last finite one
  kUnsupported,       // the backend cannot handle this problem; message says why
  kInvalidInput,      // bad problem, options or start configuration; message says why
};
std::string_view toString(Status s);
// Parses the strings of toString; returns false for anything else.
bool parseStatus(std::string_view text, Status* out);

struct IterationRecord {
  int iteration = 0;             // 0 = the start configuration
  double position_error = 0.0;     // max over goals [m]
  double orientation_error = 0.0;  // max over goals [rad]
  double step_norm = 0.0;        // |dq| of the step that led here (tangent space)
  double damping = 0.0;          // backend-specific (lambda for DLS), 0 if none
  double elapsed_us = 0.0;       // since the solve started
};

struct Summary {
  Status status = Status::kInvalidInput;
  std::string message;
  int iterations = 0;  // total over all attempts
  int restarts = 0;    // attempts after the first
  double position_error = 0.0;     // final, by FK, max over goals [m]
  double orientation_error = 0.0;  // final, by FK, max over goals [rad]
  long fk_evals = 0;
  long jacobian_evals = 0;
  double time_us = 0.0;  // wall time of the whole solve call
  bool within_limits = false;
  std::vector<IterationRecord> trace;  // only with SolverOptions::record_trace

  bool converged() const { return status == Status::kConverged; }
};

}  // namespace ikbench
