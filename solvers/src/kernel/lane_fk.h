// Forward kinematics of several configurations of one chain at once: the
// compiled kernel's evaluation (batch_kernel.h, errorsAll: the frames and the
// goal errors, no Jacobian and no step) with one configuration per lane, four
// per kernel call. The closed-form solvers check their candidate solutions
// with it (analytic_6r.cpp): up to eight candidates of a 6R pose cost two
// kernel evaluations instead of eight scalar FK passes. The kernel agrees
// with the model's own forward kinematics to rounding (batch_kernel_test
// holds them together), so the errors it gives for the configuration a solve
// returns are that answer's verdict (SolveContext::evaluatedElsewhere): the
// answer is evaluated by forward kinematics once, not twice.
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
  // The errors of `goal` (position [m], orientation [rad], weighted norm, as
  // evaluateGoals) at each of `count` configurations
  // q[k * dof() .. (k + 1) * dof()), k < count <= kMaxCount.
  static constexpr int kMaxCount = 8;
  void errors(const Goal& goal, const double* q, int count, GoalErrors* out);

 private:
  LaneFk();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ikbench
