// The stop messages of every path (attempt_driver.h).
#include "attempt_driver.h"

#include <fmt/format.h>

#include "ikbench/core/numeric.h"

namespace ikbench {

std::string stopMessage(std::int32_t reason, const SolverOptions& options, long iteration, std::string_view backend) {
  switch (reason) {
    case batch::kStallNoImprovement:
      return fmt::format("no relative improvement of {} in {} iterations", options.stall_relative_improvement,
                         options.stall_iterations);
    case batch::kStallVanishingStep: return fmt::format("step vanished (|dq| < {:g})", kVanishingStep);
    case batch::kNonFiniteError: return fmt::format("non-finite error or step at iteration {}", iteration);
    case batch::kNonFiniteStart: return "non-finite error at the start configuration";
    case batch::kNotPositiveDefinite:
    case batch::kNonFiniteStep:
    case batch::kNonFiniteConfig: return fmt::format("{}: {}", backend, stepFailureText(reason));
    default: return {};
  }
}

}  // namespace ikbench
