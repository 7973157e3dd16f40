// Seeded problem generators. Every function takes an explicit seed and uses
// only ikbench::Rng, so the same seed gives bit-identical models and problems
// on any machine and thread count.
//
// Models: random serial chains (randomChain) and trees (randomTree). Links run
// along the local +z axis, so the neutral configuration q = 0 (identity ball
// rotations) is the fully stretched ("straight") pose of every chain and of
// every branch of a tree.
//
// Goal sets (makeGoals): reachable (the TRAC-IK protocol: FK of a random
// configuration within limits), unreachable (beyond an upper bound of the
// reach by a factor), near-singular (near full stretch, seeded straight),
// trajectory (FK along a seeded random walk in joint space, solved in order
// from the previous answer). Every goal set puts one target on every effector
// (by default every leaf body moved by at least one joint), so trees give
// multi-effector problems.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ikbench/core/enum_table.h"
#include "ikbench/collision/world.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench {

enum class AxisStyle { kRandom, kAlternating, kPlanar };
// kNone: no limits. kSymmetric: [-limit, limit] on every rotational DOF.
// kRealistic: per joint an asymmetric range [-a, b] with a, b drawn uniformly
// from [0.3 limit, limit] (limit = pi when `limit` <= 0), like real arms whose
// joints rarely reach +-pi and are seldom centred; 0 always stays inside.
enum class LimitStyle { kNone, kSymmetric, kRealistic };

struct ChainSpec {
  int joints = 7;
  // Fractions of revolute / ball / prismatic joints (normalised).
  double revolute = 1.0, ball = 0.0, prismatic = 0.0;
  double min_length = 0.1, max_length = 0.3;  // link length [m], uniform
  AxisStyle axes = AxisStyle::kRandom;
  // Symmetric limit [rad] on revolute joints (and ball rotation-vector
  // components); <= 0 means no limits (with the default limit_style).
  // Prismatic joints always get [0, prismatic_range].
  double limit = 0.0;
  double prismatic_range = 0.2;
  LimitStyle limit_style = LimitStyle::kSymmetric;
};

// A serial chain along +z with a fixed "tip" body at the end of the last link.
std::shared_ptr<const Model> randomChain(const ChainSpec& spec, std::uint64_t seed);

// A tree: a trunk of `trunk` joints, then `levels` times a branching into
// `branches` sub-chains of `branch_joints` joints each; every final branch
// ends in a fixed tip body "tipK" (the effectors). Joint types, lengths, axes
// and limits follow `joint` (its `joints` field is ignored). Each branch
// leaves its parent's direction at the angle `spread` [rad], the branches of
// one fork spaced evenly (plus a seeded jitter) around the parent's axis.
struct TreeSpec {
  ChainSpec joint;
  int trunk = 2;
  int branches = 3;
  int branch_joints = 3;
  int levels = 1;
  double spread = 0.8;
};
std::shared_ptr<const Model> randomTree(const TreeSpec& spec, std::uint64_t seed);

// The model as a calibration might leave it: each revolute or prismatic
// joint's axis tilted by exactly `angle` [rad] about a seeded random
// direction normal to it, and each such joint's rest origin moved by
// `offset` [m] in a seeded random direction (joint i draws from
// Rng(Rng::mix(seed, i))). An arm whose axes meet or are parallel by design
// then misses by about that much. Names and limits are kept. Throws
// std::invalid_argument for a negative or non-finite angle or offset.
std::shared_ptr<const Model> perturbedModel(const Model& model, double angle, double offset, std::uint64_t seed);

// The seed regimes of a family (docs/protocols.md). kNominal: middle of the
// limits (neutral where unlimited). kZero: neutral (zero angles, identity
// rotations). kRandom: uniform within limits. kPrevious: the family is
// sequential: problem i starts from the solver's answer to problem i - 1;
// problem 0 starts at the nominal configuration. kNear: a known solution of
// the target (the configuration whose FK made it) moved by the joint-space
// distance GoalSetSpec::near_distance in a seeded random direction of the
// tangent space, then clamped into the limits (so at most that far from it);
// spelled "near:D" (D in rad or m) in suite files.
enum class StartPolicy { kNominal, kZero, kRandom, kPrevious, kNear };

// kIkfast: OpenRAVE's IKFast test (ikfast.py's test of a generated solver):
// each DOF of the target configuration is, with probability 1/2, one of the
// degenerate values {0, pi/2, -pi/2, pi} inside its limits (uniform among
// them; a random value within limits when none is inside), else uniform
// within limits; the target is its FK. kPath: a smooth joint-space path
// within limits (per DOF the middle of the limits plus a sum of three
// sinusoids of seeded phases, periods the path's duration / 1, 2 and 3),
// sampled at `frame_rate` and mapped to the workspace by FK; solved in order
// from the previous answer.
enum class GoalSetType { kReachable, kUnreachable, kNearSingular, kTrajectory, kIkfast, kPath };

struct GoalSetSpec {
  int count = 100;
  GoalKind kind = GoalKind::kPosition;
  StartPolicy start = StartPolicy::kNominal;
  GoalSetType type = GoalSetType::kReachable;
  // kUnreachable: target = pivot + factor * reach * direction, where reach is
  // an upper bound of the distance from the effector's first moving joint
  // (sum of link offsets and prismatic travel) and the direction is that of
  // the effector under a random configuration. Must be > 1.
  double unreachable_factor = 1.5;
  // kNearSingular: every DOF after each effector's first moving joint is
  // drawn uniformly from [-perturbation, perturbation] around the straight
  // pose (the first one is random within limits); the start is straight.
  double perturbation = 0.05;
  // kTrajectory: per problem, every DOF moves by a uniform step in
  // [-step, step] [rad or m] from the previous target configuration.
  double trajectory_step = 0.05;
  // Effector body names; empty = every leaf body moved by some joint.
  std::vector<std::string> effectors;
  double orientation_scale = 1.0;  // Goal::orientation_scale [m/rad]
  // StartPolicy::kNear: joint-space distance [rad or m] of the start from the
  // target's known solution (Euclidean norm of the tangent difference).
  double near_distance = 0.1;
  // Each target is solved from `starts` start configurations: problem
  // t * starts + k is target t from its k-th start (CoIKS's many starts per
  // target). Targets do not depend on `starts`.
  int starts = 1;
  // When set, the start configurations draw from this seed (problem i from
  // Rng::mix(*start_seed, i)) and the targets alone from the goal set's seed,
  // so families that share a target seed share their targets whatever their
  // seed regimes.
  std::optional<std::uint64_t> start_seed;
  // kPath: frames per second of the path (its duration is count / frame_rate).
  double frame_rate = 100.0;
  // A scene (collision/world.h, built on the same model), or null. With a
  // scene every problem carries it, and kReachable targets are the FK of
  // collision-free configurations (by the exact check; REACH's protocol):
  // random draws are repeated, from the problem's own stream, until one is
  // clear, at most kMaxSceneDraws times.
  std::shared_ptr<const CollisionWorld> scene;
  // With a scene and > 0: the target configurations are also within this
  // distance [m] of a collision (their smallest clearance is below it), so
  // that the solutions near them pass close to an obstacle.
  double obstacle_distance = 0.0;
  static constexpr int kMaxSceneDraws = 100000;
};

// Reachable goals (the TRAC-IK protocol): for each problem, a random
// configuration within limits, and as target the FK of every effector.
// (Equivalent to makeGoals with type kReachable.)
std::vector<Problem> reachableGoals(const std::shared_ptr<const Model>& model, const GoalSetSpec& spec,
                                    std::uint64_t seed, const std::string& name_prefix);

// Any goal set type; problem i draws from Rng(Rng::mix(seed, i)) except for
// trajectories, which draw from one stream in order. Problems are named
// name_prefix + index. Throws std::invalid_argument for a bad spec.
std::vector<Problem> makeGoals(const std::shared_ptr<const Model>& model, const GoalSetSpec& spec, std::uint64_t seed,
                               const std::string& name_prefix);

// Effector bodies of a goal set: the named bodies, or every leaf moved by at
// least one joint. Throws std::invalid_argument naming an unknown body.
std::vector<int> effectorBodies(const Model& model, const std::vector<std::string>& names);

// An upper bound of the distance between the origin of the first moving joint
// supporting `body` and the body's origin: the sum of the rest offsets along
// the path plus the largest prismatic travel.
double reachBound(const Model& model, int body);

// Start configuration for a problem under a policy (kPrevious gives the
// nominal configuration: the start of a sequence). kNear needs the target's
// known solution `known` (nq) and the distance; the others ignore them.
Eigen::VectorXd startConfiguration(const Model& model, StartPolicy policy, Rng& rng,
                                   const Eigen::VectorXd* known = nullptr, double near_distance = 0.0);

// A seed regime as suite files and results spell it: "nominal", "zero",
// "random", "previous", or "near:D" with D the distance (shortest text).
std::string startRegimeName(StartPolicy policy, double near_distance);
// Parses one: sets *policy and, for "near:D", *near_distance (D finite and in
// [0, 100]). Throws std::invalid_argument listing the spellings.
void parseStartRegime(std::string_view text, StartPolicy* policy, double* near_distance);

// The spellings of the enums in suite files and command lines: one table per
// enum (enum_table.h); parse() throws std::invalid_argument listing them.
inline constexpr EnumTable<AxisStyle, 3> kAxisStyleNames{
    {{{AxisStyle::kRandom, "random"}, {AxisStyle::kAlternating, "alternating"}, {AxisStyle::kPlanar, "planar"}}},
    "axis style"};
inline constexpr EnumTable<LimitStyle, 3> kLimitStyleNames{
    {{{LimitStyle::kNone, "none"}, {LimitStyle::kSymmetric, "symmetric"}, {LimitStyle::kRealistic, "realistic"}}},
    "limit style"};
inline constexpr EnumTable<StartPolicy, 5> kStartPolicyNames{{{{StartPolicy::kNominal, "nominal"},
                                                               {StartPolicy::kZero, "zero"},
                                                               {StartPolicy::kRandom, "random"},
                                                               {StartPolicy::kPrevious, "previous"},
                                                               {StartPolicy::kNear, "near"}}},
                                                             "start policy"};
inline constexpr EnumTable<GoalSetType, 6> kGoalSetTypeNames{{{{GoalSetType::kReachable, "reachable"},
                                                               {GoalSetType::kUnreachable, "unreachable"},
                                                               {GoalSetType::kNearSingular, "near_singular"},
                                                               {GoalSetType::kTrajectory, "trajectory"},
                                                               {GoalSetType::kIkfast, "ikfast"},
                                                               {GoalSetType::kPath, "path"}}},
                                                             "goal set"};
inline std::string_view toString(AxisStyle a) { return kAxisStyleNames.name(a); }
inline std::string_view toString(LimitStyle l) { return kLimitStyleNames.name(l); }
inline std::string_view toString(StartPolicy s) { return kStartPolicyNames.name(s); }
inline std::string_view toString(GoalSetType t) { return kGoalSetTypeNames.name(t); }

}  // namespace ikbench
