// Forward kinematics of several configurations of one chain at once: the
// compiled kernel's evaluation (batch_kernel.h) with one configuration per
// lane, four per kernel call. The closed-form solvers check their candidate
// solutions with it (analytic_6r_solver.cpp): up to eight candidates of a 6R
// pose cost two kernel evaluations instead of eight scalar FK passes. The
// kernel agrees with the model's own forward kinematics to rounding
// (docs/performance.md); the answer a solve reports is still checked by the
// model's forward kinematics in Solver::verdict.
#pragma once

#include <memory>

#include "ikbench/kinematics/goal.h"

namespace ikbench {

class LaneFk {
 public:
  // Null when the kernel does not take the problem's chain and goal (see
  // batch_detail::planChain: one goal, every DOF on its path, ...).
  static std::unique_ptr<LaneFk> forProblem(const Problem& problem);
  ~LaneFk();

  // DOF of the chain; configurations are given in the model's q order
  // (every DOF is on the path).
  int dof() const;
  // Position [m] and orientation [rad] error of `goal` at each of `count`
  // configurations q[k * dof() .. (k + 1) * dof()), k < count <= kMaxCount.
  static constexpr int kMaxCount = 8;
  void errors(const Goal& goal, const double* q, int count, double* position_error, double* orientation_error);

 private:
  LaneFk();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ikbench
