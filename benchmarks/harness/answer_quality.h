// What an answer is and how good it is (docs/protocols.md): the outcome of
// every solve and the quality columns of solves.csv, written by the run
// engine for a run that records them (a protocol's run, or --quality) and
// recomputed from the files by `ikbench verify`. The Python library
// (python/ikbench/analysis/outcomes.py) defines the same outcome and figures.
#pragma once

#include <Eigen/Core>
#include <string>
#include <string_view>
#include <vector>

#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/solvers/summary.h"

namespace ikbench::harness {

// The quality columns (results_format.h kQualityColumns), appended to
// solves.csv in order: outcome, manipulability, limit_margin (converged
// answers), joint_jump, branch_switch (sequential families), joint_velocity,
// joint_acceleration, joint_jerk (sequential families with a frame rate).

// The outcome of a solve, in order of precedence:
//   not-attempted  unsupported or invalid input (n/a, as in every figure)
//   converged      every goal met by FK of q, within the joint limits
//   wrong          the backend claimed convergence and FK disagrees, or q
//                  meets the goals outside the joint limits
//   timed-out      the time budget ended the solve
//   refused        a target known unreachable answered without a claim
//   not-found      a target known reachable answered without a solution
std::string_view outcomeName(Status status, bool converged, bool within_limits, bool target_unreachable);

// The text of the quality cells of one row (kQualityColumns, each preceded
// by a comma). `history` is the solve's q first, then, in a sequential
// family, the answers to the previous problems (most recent first, up to
// three); `frame_rate` and `branch_jump` are the family's (0: none). A figure
// that does not apply is empty.
std::string qualityCells(const Model& model, const std::vector<Goal>& goals, Data& data, Status status,
                         bool converged, bool within_limits, bool target_unreachable, bool sequential,
                         const std::vector<const Eigen::VectorXd*>& history, double frame_rate, double branch_jump);

}  // namespace ikbench::harness
