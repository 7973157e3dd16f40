#include "harness/levels.h"

#include <fmt/format.h>

#include <sstream>
#include <stdexcept>

#include "harness/results_format.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"

namespace ikbench::harness {

LevelVerdict levelVerdict(const Problem& problem, const Eigen::VectorXd& q, double position_tolerance,
                          double orientation_tolerance) {
  LevelVerdict v;
  if (!problem.model || q.size() != problem.model->nq() || !q.allFinite()) return v;
  const Model& model = *problem.model;
  Data data(model);
  forwardKinematics(model, q, data);
  v.errors = levelErrors(model, problem, data);
  for (const GoalErrors& e : v.errors) {
    if (!(e.position <= position_tolerance && e.orientation <= orientation_tolerance)) break;
    ++v.met;
  }
  return v;
}

std::string levelCells(const LevelVerdict& v) {
  if (v.errors.empty()) return ",";
  std::string cell;
  for (size_t k = 0; k < v.errors.size(); ++k)
    cell += fmt::format("{}{}:{}", k ? " " : "", numText(v.errors[k].position), numText(v.errors[k].orientation));
  return fmt::format("{},{}", cell, v.met);
}

std::vector<GoalErrors> parseLevelErrors(const std::string& cell) {
  std::vector<GoalErrors> out;
  std::istringstream in(cell);
  std::string token;
  while (in >> token) {
    const size_t colon = token.find(':');
    GoalErrors e;
    try {
      if (colon == std::string::npos) throw ResultsError("no ':'");
      const Eigen::VectorXd p = parseConfigText(token.substr(0, colon), "level_errors");
      const Eigen::VectorXd o = parseConfigText(token.substr(colon + 1), "level_errors");
      if (p.size() != 1 || o.size() != 1) throw ResultsError("not two numbers");
      e.position = p[0];
      e.orientation = o[0];
    } catch (const std::exception&) {
      throw std::invalid_argument(
          fmt::format("level_errors token '{}': expected position:orientation (two numbers)", token));
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace ikbench::harness
