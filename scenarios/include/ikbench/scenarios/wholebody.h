// Whole-body problems (docs/wholebody.md): goals at priority levels on one
// model, from a list of tasks, e.g. for a humanoid: feet planted (level 0),
// centre of mass over the support polygon of the feet (level 1), hands
// reaching seeded targets, some out of reach so that levels conflict
// (level 2), the head held (level 3).
//
// Each problem starts from the reference configuration (neutral, clamped
// into the limits) perturbed by a seeded random tangent step of up to
// `start_perturbation` per DOF; targets are taken at the reference
// configuration, so the reference pose meets every "start" task.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ikbench/kinematics/goal.h"

namespace ikbench {

enum class TaskTarget {
  kStart,    // the body's pose / position (or the COM) at the reference configuration
  kRandom,   // the reference position plus a seeded random offset of length in [distance_lo, distance_hi]
  kSupport,  // com/position bounded to the support polygon of `support` bodies (half-spaces)
  kBound,    // the explicit `bound`
};

struct WholeBodyTask {
  GoalKind kind = GoalKind::kPosition;
  std::string body;  // body name; for kCentreOfMass empty = the whole model (its first root)
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  int priority = 0;
  double weight = 1.0;
  TaskTarget target = TaskTarget::kStart;
  double distance_lo = 0.0, distance_hi = 0.0;  // kRandom [m]
  std::vector<std::string> support;             // kSupport: bodies spanning the polygon
  double margin = 0.0;                          // kSupport: polygon shrunk by this [m]
  GoalBound bound;                              // kBound
};

struct WholeBodySpec {
  std::vector<WholeBodyTask> tasks;
  int count = 0;
  double start_perturbation = 0.0;  // [rad or m] per tangent DOF
  Eigen::Vector3d up = Eigen::Vector3d::UnitZ();  // the vertical, for support polygons
};

// `count` problems (seeded by `seed`). Throws std::invalid_argument naming
// the task and field for an unknown body, a com task on a massless model, a
// support polygon of fewer than 3 distinct points, or an invalid problem.
std::vector<Problem> makeWholeBodyProblems(std::shared_ptr<const Model> model, const WholeBodySpec& spec,
                                           std::uint64_t seed);

// Half-spaces n_i . p <= d_i (unit normals orthogonal to `up`) of the convex
// hull of `points` projected along `up`, shrunk by `margin`: the support
// polygon as a bound. Throws std::invalid_argument for fewer than 3 points
// not on one line.
GoalBound supportPolygon(const std::vector<Eigen::Vector3d>& points, const Eigen::Vector3d& up, double margin);

}  // namespace ikbench
