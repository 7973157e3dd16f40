// Seeded problem generators. Every function takes an explicit seed and uses
// only ikbench::Rng, so the same seed gives bit-identical models and problems
// on any machine and thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench {

enum class AxisStyle { kRandom, kAlternating, kPlanar };

struct ChainSpec {
  int joints = 7;
  // Fractions of revolute / ball / prismatic joints (normalised).
  double revolute = 1.0, ball = 0.0, prismatic = 0.0;
  double min_length = 0.1, max_length = 0.3;  // link length [m], uniform
  AxisStyle axes = AxisStyle::kRandom;
  // Symmetric limit [rad] on revolute joints (and ball rotation-vector
  // components); <= 0 means no limits. Prismatic joints get [0, prismatic_range].
  double limit = 0.0;
  double prismatic_range = 0.2;
};

// A serial chain along +z with a fixed "tip" body at the end of the last link.
std::shared_ptr<const Model> randomChain(const ChainSpec& spec, std::uint64_t seed);

enum class StartPolicy { kNominal, kZero, kRandom };

struct GoalSetSpec {
  int count = 100;
  GoalKind kind = GoalKind::kPosition;
  StartPolicy start = StartPolicy::kNominal;
};

// Reachable goals (the TRAC-IK protocol): for each problem, a random
// configuration within limits, and as target the FK of every leaf body.
std::vector<Problem> reachableGoals(const std::shared_ptr<const Model>& model, const GoalSetSpec& spec,
                                    std::uint64_t seed, const std::string& name_prefix);

// Start configuration for a problem under a policy.
Eigen::VectorXd startConfiguration(const Model& model, StartPolicy policy, Rng& rng);

}  // namespace ikbench
