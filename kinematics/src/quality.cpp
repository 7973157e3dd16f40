#include "ikbench/kinematics/quality.h"

#include <Eigen/SVD>
#include <cmath>
#include <limits>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"

namespace ikbench {

double manipulability(const Model& model, const std::vector<Goal>& goals, const Eigen::VectorXd& q, Data& data) {
  std::vector<Goal> unit = goals;
  for (Goal& g : unit) {
    g.weight = 1.0;
    g.orientation_scale = 1.0;
  }
  forwardKinematics(model, q, data);
  evaluateGoals(model, unit, data);
  goalJacobian(model, unit, data);
  if (data.J.size() == 0) return 0.0;
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(data.J).singularValues();
  return sv.prod();
}

double limitMargin(const Model& model, const Eigen::VectorXd& q) {
  Eigen::VectorXd x;
  tangentCoordinates(model, q, x);
  double margin = std::numeric_limits<double>::quiet_NaN();
  for (int d = 0; d < model.nv(); ++d) {
    const double lo = model.lowerLimits()[d], hi = model.upperLimits()[d];
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo)) continue;
    const double m = std::min(x[d] - lo, hi - x[d]) / (hi - lo);
    if (!(m >= margin)) margin = m;  // also replaces the initial NaN
  }
  return margin;
}

FrameMotion frameMotion(const Model& model, const std::vector<const Eigen::VectorXd*>& history, double rate) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  FrameMotion m{kNaN, kNaN, kNaN, kNaN};
  if (history.size() < 2) return m;
  std::vector<Eigen::VectorXd> d;  // d[0] = q_k (-) q_{k-1}, d[1] = q_{k-1} (-) q_{k-2}, ...
  for (size_t i = 0; i + 1 < history.size() && i < 3; ++i)
    d.push_back(difference(model, *history[i], *history[i + 1]));
  m.jump = d[0].size() ? d[0].cwiseAbs().maxCoeff() : 0.0;
  if (!(rate > 0.0)) return m;
  m.velocity = d[0].norm() * rate;
  if (d.size() >= 2) m.acceleration = (d[0] - d[1]).norm() * rate * rate;
  if (d.size() >= 3) m.jerk = (d[0] - 2.0 * d[1] + d[2]).norm() * rate * rate * rate;
  return m;
}

}  // namespace ikbench
