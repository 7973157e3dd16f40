// Options common to every backend (backend parameters live in the spec string,
// see registry.h).
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
  // Iteration cap per attempt (a restart starts a new attempt).
  int max_iterations = 500;
  // Wall-clock budget for the whole solve, restarts included [us]; 0 = none.
  // A binding time budget makes results depend on the machine: the harness's
  // determinism guarantee holds only while iterations and restarts bind first.
  double time_budget_us = 0.0;
  // Stall: the weighted residual norm has not dropped below
  // (1 - stall_relative_improvement) * best within stall_iterations
  // iterations, or a step was smaller than 1e-14. 0 disables the check.
  int stall_iterations = 20;
  double stall_relative_improvement = 1e-4;
  // Record one IterationRecord per iteration in Summary::trace. Off for timing.
  bool record_trace = false;
  // Seed of every random choice a backend makes (restarts, random orders).
  std::uint64_t seed = 0;

  bool isValid(std::string* why) const;
};

}  // namespace ikbench
