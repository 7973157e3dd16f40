// The per-level verdict of a whole-body solve (docs/wholebody.md): the error
// of each priority level of the problem at the returned q, recomputed by FK,
// and how many levels are met from the top. Level k is met when every goal of
// level k is within the tolerances and levels 0..k-1 are met: a hierarchical
// solver owes the lower levels only what the higher ones leave free
// (Siciliano & Slotine 1991; Escande, Mansard & Wieber 2014).
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "ikbench/kinematics/goal.h"

namespace ikbench::harness {

struct LevelVerdict {
  std::vector<GoalErrors> errors;  // per level of problem.levels(), highest first
  int met = 0;                     // levels met from the top
};

// FK of q (nq of the problem's model) and the per-level errors. A q of the
// wrong size or not finite meets no level and has no errors.
LevelVerdict levelVerdict(const Problem& problem, const Eigen::VectorXd& q, double position_tolerance,
                          double orientation_tolerance);

// The solves.csv cells (kLevelColumns, without the leading comma):
// level_errors "p:o p:o ..." (shortest round-trip numbers) and levels_met.
std::string levelCells(const LevelVerdict& v);

// Parses a level_errors cell; throws std::invalid_argument naming the token.
std::vector<GoalErrors> parseLevelErrors(const std::string& cell);

}  // namespace ikbench::harness
