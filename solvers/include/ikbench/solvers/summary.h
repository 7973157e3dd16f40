// What a solve reports (after ceres::Solver::Summary / IterationSummary).
#pragma once

#include <Eigen/Core>
#include <string>
#include <string_view>
#include <vector>

#include "ikbench/core/enum_table.h"

namespace ikbench {

enum class Status {
  kConverged,         // every goal within tolerance, checked by FK of q
  kMaxIterations,     // iteration cap reached
  kTimeLimit,         // time budget spent
  kStalled,           // no progress (local minimum, singularity, unreachable)
  kNumericalFailure,  // a singular system or a non-finite value; q is the last finite one
  kUnsupported,       // the backend cannot handle this problem; message says why
  kInvalidInput,      // bad problem, options or start configuration; message says why
  kFalseConvergence,  // the backend claimed convergence, FK of its answer contradicts it
};
inline constexpr EnumTable<Status, 8> kStatusNames{{{
                                                      {Status::kConverged, "converged"},
                                                      {Status::kMaxIterations, "max-iterations"},
                                                      {Status::kTimeLimit, "time-limit"},
                                                      {Status::kStalled, "stalled"},
                                                      {Status::kNumericalFailure, "numerical-failure"},
                                                      {Status::kUnsupported, "unsupported"},
                                                      {Status::kInvalidInput, "invalid-input"},
                                                      {Status::kFalseConvergence, "false-convergence"},
                                                  }},
                                                  "status"};
inline std::string_view toString(Status s) { return kStatusNames.name(s); }
// Parses the strings of toString; returns false for anything else.
inline bool parseStatus(std::string_view text, Status* out) {
  const auto v = kStatusNames.find(text);
  if (v) *out = *v;
  return v.has_value();
}

struct IterationRecord {
  int iteration = 0;             // 0 = the start configuration
  double position_error = 0.0;     // max over goals [m]
  double orientation_error = 0.0;  // max over goals [rad]
  double step_norm = 0.0;        // |dq| of the step that led here (tangent space)
  double damping = 0.0;          // backend-specific (lambda for DLS), 0 if none
  double elapsed_us = 0.0;       // since the solve started
  Eigen::VectorXd q;             // configuration after the iteration (nq)
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
  // The solver's own time of the solve [us], as a backend that runs outside
  // the process reports it (the external-solver protocol); negative: not reported.
  double reported_time_us = -1.0;
  bool within_limits = false;
  // In a scene (Problem::collision): the exact check (FCL) of the returned q,
  // made after the solve's time is taken. collision_free is -1 without a
  // scene; min_clearance is the smallest signed distance [m] (negative: the
  // penetration depth) and collision_pair the pair that has it.
  int collision_free = -1;
  double min_clearance = 0.0;
  std::string collision_pair;
  // Only with SolverOptions::record_trace; at most kMaxTraceRecords records
  // (past that, the last record is overwritten, so the trace still ends at the
  // solve's last iteration).
  std::vector<IterationRecord> trace;
  static constexpr size_t kMaxTraceRecords = 100'000;
  // Every distinct solution, when the backend returned several (closed-form
  // backends, or `solutions=all` with restarts): each converged by FK and
  // within limits, the first being q (the one closest to the start
  // configuration). Empty when the backend returned a single answer, q.
  std::vector<Eigen::VectorXd> solutions;
  // Distinct answers returned: solutions.size(), else 1 (0 when the solve did
  // not run: unsupported or invalid input).
  int numSolutions() const {
    if (!solutions.empty()) return static_cast<int>(solutions.size());
    return status == Status::kUnsupported || status == Status::kInvalidInput ? 0 : 1;
  }

  bool converged() const { return status == Status::kConverged; }
};

}  // namespace ikbench
