#include "ikbench/solvers/summary.h"

#include <fmt/format.h>

#include <cmath>

#include "ikbench/solvers/options.h"

namespace ikbench {

std::string_view toString(Status s) {
  switch (s) {
    case Status::kConverged: return "converged";
    case Status::kMaxIterations: return "max-iterations";
    case Status::kTimeLimit: return "time-limit";
    case Status::kStalled: return "stalled";
    case Status::kNumericalFailure: return "numerical-failure";
    case Status::kUnsupported: return "unsupported";
    case Status::kInvalidInput: return "invalid-input";
  }
  return "?";
}

bool parseStatus(std::string_view text, Status* out) {
  for (Status s : {Status::kConverged, Status::kMaxIterations, Status::kTimeLimit, Status::kStalled,
                   Status::kNumericalFailure, Status::kUnsupported, Status::kInvalidInput}) {
    if (toString(s) == text) {
      *out = s;
      return true;
    }
  }
  return false;
}

bool SolverOptions::isValid(std::string* why) const {
  auto fail = [&](std::string msg) {
    if (why) *why = "solver options: " + msg;
    return false;
  };
  if (!(position_tolerance > 0.0) || !std::isfinite(position_tolerance))
    return fail(fmt::format("position_tolerance = {} must be finite and > 0 [m]", position_tolerance));
  if (!(orientation_tolerance > 0.0) || !std::isfinite(orientation_tolerance))
    return fail(fmt::format("orientation_tolerance = {} must be finite and > 0 [rad]", orientation_tolerance));
  if (max_iterations < 1) return fail(fmt::format("max_iterations = {} must be >= 1", max_iterations));
  if (!(time_budget_us >= 0.0) || !std::isfinite(time_budget_us))
    return fail(fmt::format("time_budget_us = {} must be finite and >= 0 (0 = no budget)", time_budget_us));
  if (stall_iterations < 0) return fail(fmt::format("stall_iterations = {} must be >= 0", stall_iterations));
  if (!(stall_relative_improvement >= 0.0 && stall_relative_improvement < 1.0))
    return fail(fmt::format("stall_relative_improvement = {} must be in [0, 1)", stall_relative_improvement));
  return true;
}

}  // namespace ikbench
