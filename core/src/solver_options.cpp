#include "ikbench/core/solver_options.h"

#include <fmt/format.h>

#include <cmath>

namespace ikbench {

bool SolverOptions::isValid(std::string* why) const {
  auto fail = [&](std::string msg) {
    if (why) *why = "solver options: " + msg;
    return false;
  };
  if (!(position_tolerance > 0.0) || !std::isfinite(position_tolerance))
    return fail(fmt::format("position_tolerance = {} must be finite and > 0 [m]", position_tolerance));
  if (!(orientation_tolerance > 0.0) || !std::isfinite(orientation_tolerance))
    return fail(fmt::format("orientation_tolerance = {} must be finite and > 0 [rad]", orientation_tolerance));
  if (max_iterations < 1 || max_iterations > kMaxIterationsLimit)
    return fail(fmt::format("max_iterations = {} must be in [1, {}]", max_iterations, kMaxIterationsLimit));
  if (!(time_budget_us >= 0.0 && time_budget_us <= kMaxTimeBudgetUs))
    return fail(fmt::format("time_budget_us = {} must be in [0, {:g}] (0 = no budget)", time_budget_us,
                            kMaxTimeBudgetUs));
  if (stall_iterations < 0 || stall_iterations > kMaxIterationsLimit)
    return fail(fmt::format("stall_iterations = {} must be in [0, {}]", stall_iterations, kMaxIterationsLimit));
  if (!(stall_relative_improvement >= 0.0 && stall_relative_improvement < 1.0))
    return fail(fmt::format("stall_relative_improvement = {} must be in [0, 1)", stall_relative_improvement));
  return true;
}

}  // namespace ikbench
