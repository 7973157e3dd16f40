#include "closed_form_stage.h"

namespace ikbench {

ClosedFormStage::Fit ClosedFormStage::fit(const Problem& problem) {
  if (problem.goals.size() != 1 || problem.goals[0].kind != GoalKind::kPose) return Fit::kNone;
  if (!cache_.matches(problem)) {
    cache_.key(problem);
    Prepared& p = cache_.value;
    if (analytic::prepareArm6(problem, analytic::Tolerances{}, &p.arm, nullptr)) {
      p.fit = p.arm.fk ? Fit::kExact : Fit::kNone;  // the stage checks candidates with the kernel's FK only
    } else if (near_ > 0.0 && analytic::prepareArm6(problem, analytic::Tolerances{near_, near_}, &p.arm, nullptr)) {
      p.fit = Fit::kNear;
    } else {
      p.fit = Fit::kNone;
    }
  }
  return cache_.value.fit;
}

namespace {
std::array<double, 6> chainAngles(const analytic::Arm6& arm, const Eigen::VectorXd& q) {
  std::array<double, 6> a;
  for (int i = 0; i < 6; ++i) a[i] = q[arm.limits.iq[i]];
  return a;
}
}  // namespace

bool ClosedFormStage::solve(const Problem& problem, const Eigen::VectorXd& start, const SolverOptions& options) {
  const analytic::Arm6& arm = cache_.value.arm;
  analytic::candidates6(arm, problem.goals[0], chainAngles(arm, start), &sols_, &kept_);
  checked_ = static_cast<int>(kept_.size());
  return analytic::checkCandidates6(arm, problem.goals[0], options, &kept_) > 0;
}

bool ClosedFormStage::nearStart(const Problem& problem, Eigen::VectorXd* start) {
  const analytic::Arm6& arm = cache_.value.arm;
  analytic::candidates6(arm, problem.goals[0], chainAngles(arm, *start), &sols_, &kept_);
  if (kept_.empty()) return false;
  for (int i = 0; i < 6; ++i) (*start)[arm.limits.iq[i]] = kept_.front().q[i];
  return true;
}

}  // namespace ikbench
