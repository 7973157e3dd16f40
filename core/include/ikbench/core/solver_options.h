// Options common to every solve, whatever the backend (backend parameters
// live in each backend's typed Options, bound to spec keys: see registry.h).
#pragma once

#include <cstdint>
#include <string>

namespace ikbench {

struct SolverOptions {
  // A solve has converged when, for every goal, the Euclidean position error
  // |target - FK(q) point| <= position_tolerance [m] and the rotation angle of
  // R_target R(q)^T <= orientation_tolerance [rad], recomputed by forward
  // kinematics from the returned q. 1e-5 per goal norm is at least as strict
  // as TRAC-IK's 1e-5 per Cartesian component.
  double position_tolerance = 1e-5;
  double orientation_tolerance = 1e-5;
  // Iteration cap per attempt (a restart starts a new attempt), in
  // [1, kMaxIterationsLimit].
  int max_iterations = 500;
  static constexpr int kMaxIterationsLimit = 100'000'000;
  // Wall-clock budget for the whole solve, restarts included [us]; 0 = none;
  // at most kMaxTimeBudgetUs (one day).
  // A binding time budget makes results depend on the machine: the harness's
  // determinism guarantee holds only while iterations and restarts bind first.
  double time_budget_us = 0.0;
  static constexpr double kMaxTimeBudgetUs = 86400e6;
  // Stall: the weighted residual norm has not dropped below
  // (1 - stall_relative_improvement) * best within stall_iterations
  // iterations, or a step was smaller than kVanishingStep (numeric.h).
  // 0 disables the check; at most kMaxIterationsLimit.
  int stall_iterations = 20;
  double stall_relative_improvement = 1e-4;
  // Record one IterationRecord per iteration in Summary::trace. Off for timing.
  bool record_trace = false;
  // Seed of every random choice a backend makes (restarts, random orders).
  std::uint64_t seed = 0;

  // Checks every field against its documented range; *why names the field,
  // its value and the range.
  bool isValid(std::string* why) const;
};

}  // namespace ikbench
