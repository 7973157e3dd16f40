// The closed-form stage of Solver::solve (the common key closed_form=auto,
// set by the `auto` preset): before a backend's attempts, a problem whose
// chain is one analytic-6r solves is answered by the closed form, and one
// whose chain almost is starts from the closed-form answer of the chain
// made ideal.
//
//   exact  one pose goal on a 6R chain of a class analytic-6r solves at its
//          own tolerances (analytic_ik.h): every solution, wrapped into the
//          limits and checked by forward kinematics (checkCandidates6); the
//          answer is the one closest to the start (all of them with
//          solutions=all). A target with no verified solution (out of reach,
//          outside the limits, or lost to rounding at a singularity) goes on
//          to the backend's attempts as without the stage.
//   near   the chain qualifies only with its axes up to `near` (the sine of
//          the angle; closed_form_near) from parallel and its meeting axes up
//          to `near` times the arm's size apart (arms as calibration
//          leaves them): the closed form of the idealised chain gives the
//          solution closest to the start, and the backend's attempts start
//          from it on the real chain (it is within about the deviation of a
//          solution, where Newton-like iterations converge in a few steps).
//          With start=library the library's entry stays the first start.
// The thresholds were chosen on perturbed UR5 and IRB 2400 models and
// evaluated on others (docs/solvers.md: the rule and its figures).
#pragma once

#include <Eigen/Core>
#include <memory>
#include <vector>

#include "analytic_6r.h"

namespace ikbench {

class ClosedFormStage {
 public:
  explicit ClosedFormStage(double near) : near_(near) {}

  enum class Fit { kNone, kExact, kNear };
  // How the problem's chain fits the closed form (cached per model, goal
  // body and point).
  Fit fit(const Problem& problem);
  // kExact: the verified distinct solutions within the limits, closest to
  // `start` first (chain angles; the rest of q is start's); false when none.
  bool solve(const Problem& problem, const Eigen::VectorXd& start, const SolverOptions& options);
  const std::vector<analytic::Candidate6>& solutions() const { return kept_; }
  const analytic::Arm6& arm() const { return cache_.value.arm; }
  unsigned singular() const { return sols_.singular; }
  int checked() const { return checked_; }  // candidates checked by FK in the last solve()
  // kNear: start's chain angles replaced by the idealised chain's closed-form
  // solution closest to them (within the limits); false (start unchanged)
  // when it has none.
  bool nearStart(const Problem& problem, Eigen::VectorXd* start);

 private:
  struct Prepared {
    analytic::Arm6 arm;
    Fit fit = Fit::kNone;
  };
  double near_;
  analytic::PlanCache<Prepared> cache_;
  analytic::Solutions6 sols_;
  std::vector<analytic::Candidate6> kept_;
  int checked_ = 0;
};

}  // namespace ikbench
