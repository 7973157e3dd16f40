#include "harness/answer_quality.h"

#include <fmt/format.h>

#include <cmath>

#include "harness/results_format.h"
#include "ikbench/kinematics/quality.h"

namespace ikbench::harness {

std::string_view outcomeName(Status status, bool converged, bool within_limits, bool target_unreachable) {
  if (status == Status::kUnsupported || status == Status::kInvalidInput) return "not-attempted";
  if (converged && within_limits) return "converged";
  if (converged || status == Status::kConverged || status == Status::kFalseConvergence) return "wrong";
  if (status == Status::kTimeLimit) return "timed-out";
  return target_unreachable ? "refused" : "not-found";
}

namespace {
std::string cell(double v) { return std::isnan(v) ? std::string() : numText(v); }
}  // namespace

std::string qualityCells(const Model& model, const std::vector<Goal>& goals, Data& data, Status status,
                         bool converged, bool within_limits, bool target_unreachable, bool sequential,
                         const std::vector<const Eigen::VectorXd*>& history, double frame_rate, double branch_jump) {
  const std::string_view outcome = outcomeName(status, converged, within_limits, target_unreachable);
  std::string out = fmt::format(",{}", outcome);
  const Eigen::VectorXd* q = history.empty() ? nullptr : history.front();
  const bool good = outcome == "converged" && q != nullptr && q->size() == model.nq();
  out += "," + (good ? cell(manipulability(model, goals, *q, data)) : std::string());
  out += "," + (good ? cell(limitMargin(model, *q)) : std::string());
  FrameMotion m{NAN, NAN, NAN, NAN};
  bool sized = outcome != "not-attempted" && sequential && history.size() >= 2;
  for (const Eigen::VectorXd* h : history) sized = sized && h->size() == model.nq();
  if (sized) m = frameMotion(model, history, frame_rate);
  out += "," + cell(m.jump);
  out += "," + (std::isnan(m.jump) || !(branch_jump > 0.0) ? std::string() : std::string(m.jump > branch_jump ? "1" : "0"));
  out += "," + cell(m.velocity) + "," + cell(m.acceleration) + "," + cell(m.jerk);
  return out;
}

}  // namespace ikbench::harness
