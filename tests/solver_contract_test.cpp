// The contract every registered backend keeps, checked over Registry::list()
// in the manner of manif's one-suite-for-every-group property tests: on
// reachable, unreachable, singular, NaN and zero-DOF inputs each backend
// returns a status; a finite configuration within the limits whenever it ran;
// `converged` exactly when forward kinematics of the returned q meets the
// tolerances; `unsupported` (with a message) where it does not apply; and the
// same answer for the same seed. A backend added to the registry is covered
// without writing a test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::fixed;
using test::revolute;

std::vector<std::string> backendNames() {
  std::vector<std::string> names;
  for (const SolverInfo& info : Registry::global().list()) names.push_back(info.name);
  return names;
}

struct Case {
  std::string name;
  Problem problem;
  enum Kind { kReachable, kUnreachable, kSingular, kInvalid } kind = kReachable;
  double best_error = 0.0;  // unreachable: no answer can be closer than this [m]
};

Problem makeProblem(std::shared_ptr<const Model> model, std::vector<Goal> goals, Eigen::VectorXd q0,
                    const std::string& name) {
  Problem p;
  p.model = std::move(model);
  p.goals = std::move(goals);
  p.q0 = std::move(q0);
  p.name = name;
  return p;
}

Goal positionGoal(int body, const Eigen::Vector3d& target) {
  Goal g;
  g.body = body;
  g.kind = GoalKind::kPosition;
  g.target_position = target;
  return g;
}

// Models that, between them, every backend applies to: a planar two-link arm
// (the two-link closed forms), 7 random-axis hinges with pose goals, a ball
// chain (FABRIK's domain), a two-branch tree, and the shipped UR5 and iiwa14
// arms (the 6R and 7R closed forms).
std::vector<Case> cases() {
  std::vector<Case> out;
  Rng rng(20261123);
  auto add = [&](std::string name, Problem p, Case::Kind kind, double best = 0.0) {
    out.push_back({std::move(name), std::move(p), kind, best});
  };
  // Two parallel hinges, unit links, limits +-2.5 rad.
  {
    std::vector<JointSpec> j = {revolute("a", -1, {0, 0, 0}, {0, 0, 1}), revolute("b", 0, {1, 0, 0}, {0, 0, 1}),
                                fixed("tip", 1, {1, 0, 0})};
    for (int k = 0; k < 2; ++k) j[k].lower = Eigen::VectorXd::Constant(1, -2.5), j[k].upper = Eigen::VectorXd::Constant(1, 2.5);
    auto m = std::make_shared<const Model>(std::move(j), "planar2");
    add("planar2-reachable", makeProblem(m, {positionGoal(2, {0.6, 1.1, 0})}, Eigen::Vector2d(0.2, 0.3), "r"),
        Case::kReachable);
    add("planar2-unreachable", makeProblem(m, {positionGoal(2, {3, 0.5, 0})}, Eigen::Vector2d(0.2, 0.3), "u"),
        Case::kUnreachable, std::hypot(3.0, 0.5) - 2.0);
    // Straight start, target on the line beyond reach: J^T e = 0, J J^T singular.
    add("planar2-stretched", makeProblem(m, {positionGoal(2, {2.001, 0, 0})}, Eigen::Vector2d::Zero(), "s"),
        Case::kSingular, 1e-3);
    // Target at the origin: the effector folded back onto the base.
    add("planar2-origin", makeProblem(m, {positionGoal(2, {0, 0, 0})}, Eigen::Vector2d(0.1, 0.1), "o"),
        Case::kReachable);
    add("planar2-nan-target",
        makeProblem(m, {positionGoal(2, {std::nan(""), 0, 0})}, Eigen::Vector2d(0.2, 0.3), "nan"), Case::kInvalid);
    add("planar2-nan-start",
        makeProblem(m, {positionGoal(2, {0.6, 1.1, 0})}, Eigen::Vector2d(std::nan(""), 0.3), "nanq"),
        Case::kInvalid);
  }
  // 7 random-axis hinges with limits, pose goals.
  {
    ChainSpec cs;
    cs.joints = 7;
    cs.limit = 2.5;
    auto m = randomChain(cs, 7);
    GoalSetSpec gs;
    gs.count = 2;
    gs.kind = GoalKind::kPose;
    for (Problem& p : reachableGoals(m, gs, 11, "chain7-")) add("chain7-pose-" + p.name, p, Case::kReachable);
    GoalSetSpec far = gs;
    far.type = GoalSetType::kUnreachable;
    far.count = 1;
    for (Problem& p : makeGoals(m, far, 12, "chain7-far-")) add("chain7-unreachable", p, Case::kUnreachable);
  }
  // 4 ball joints, pose goal.
  {
    ChainSpec cs;
    cs.joints = 4;
    cs.revolute = 0;
    cs.ball = 1;
    auto m = randomChain(cs, 4);
    GoalSetSpec gs;
    gs.count = 1;
    gs.kind = GoalKind::kPose;
    for (Problem& p : reachableGoals(m, gs, 13, "ball4-")) add("ball4-pose", p, Case::kReachable);
  }
  // A tree with two effectors, position goals.
  {
    TreeSpec ts;
    ts.trunk = 1;
    ts.branches = 2;
    ts.branch_joints = 2;
    ts.joint.limit = 2.5;
    auto m = randomTree(ts, 5);
    GoalSetSpec gs;
    gs.count = 1;
    for (Problem& p : reachableGoals(m, gs, 14, "tree-")) add("tree-position", p, Case::kReachable);
  }
  // The shipped arms: reachable pose targets, and a pose far out of reach.
  for (const char* robot : {"ur5", "iiwa14"}) {
    const UrdfModel arm = loadUrdf(dataDirectory() + "/robots/" + robot + ".urdf", {"base_link", "tool0", false});
    GoalSetSpec gs;
    gs.count = 2;
    gs.kind = GoalKind::kPose;
    for (Problem& p : reachableGoals(arm.model, gs, 15, std::string(robot) + "-"))
      add(std::string(robot) + "-pose", p, Case::kReachable);
    GoalSetSpec far = gs;
    far.type = GoalSetType::kUnreachable;
    far.count = 1;
    for (Problem& p : makeGoals(arm.model, far, 16, std::string(robot) + "-far-"))
      add(std::string(robot) + "-unreachable", p, Case::kUnreachable);
  }
  (void)rng;
  return out;
}

class Contract : public ::testing::TestWithParam<std::string> {};

TEST_P(Contract, EveryInputGetsAStatusAndEveryAnswerIsFiniteWithinLimitsAndHonest) {
  auto solver = Registry::global().create(GetParam());
  SolverOptions o;
  o.max_iterations = 300;
  o.record_trace = true;
  int applied = 0, converged_reachable = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Problem& p = c.problem;
    Eigen::VectorXd q = p.q0;
    const Summary s = solver->solve(p, q, o);
    Status parsed;
    ASSERT_TRUE(parseStatus(toString(s.status), &parsed));
    if (c.kind == Case::kInvalid) {
      EXPECT_EQ(s.status, Status::kInvalidInput);
      EXPECT_FALSE(s.message.empty());
      continue;
    }
    ASSERT_NE(s.status, Status::kInvalidInput) << s.message;
    if (s.status == Status::kUnsupported) {
      EXPECT_FALSE(s.message.empty()) << "unsupported needs the reason";
      EXPECT_EQ(s.numSolutions(), 0);
      continue;
    }
    ++applied;
    ASSERT_EQ(q.size(), p.model->nq());
    EXPECT_TRUE(q.allFinite());
    EXPECT_TRUE(withinLimits(*p.model, q, 1e-9));
    EXPECT_TRUE(s.within_limits);
    EXPECT_TRUE(std::isfinite(s.position_error) && std::isfinite(s.orientation_error));
    for (const IterationRecord& r : s.trace) {
      EXPECT_TRUE(std::isfinite(r.position_error) && std::isfinite(r.orientation_error)) << "iteration " << r.iteration;
      EXPECT_TRUE(r.q.allFinite()) << "iteration " << r.iteration;
    }
    // converged <=> FK of q meets the tolerances (recomputed here). The
    // reported errors are FK's of q: the model's, or the compiled kernel's
    // (lane_fk.h, for a closed-form answer), equal to rounding.
    Data d(*p.model);
    forwardKinematics(*p.model, q, d);
    const GoalErrors e = evaluateGoals(*p.model, p.goals, d);
    EXPECT_NEAR(e.position, s.position_error, 1e-12 * (1.0 + e.position));
    EXPECT_NEAR(e.orientation, s.orientation_error, 1e-12 * (1.0 + e.orientation));
    EXPECT_EQ(s.converged(), e.position <= o.position_tolerance && e.orientation <= o.orientation_tolerance);
    EXPECT_GE(s.numSolutions(), 1);
    for (const Eigen::VectorXd& sol : s.solutions) {  // every extra solution converges too
      forwardKinematics(*p.model, sol, d);
      const GoalErrors es = evaluateGoals(*p.model, p.goals, d);
      EXPECT_LE(es.position, o.position_tolerance);
      EXPECT_LE(es.orientation, o.orientation_tolerance);
      EXPECT_TRUE(withinLimits(*p.model, sol, 1e-9));
    }
    if (c.kind == Case::kReachable) converged_reachable += s.converged();
    if (c.kind == Case::kUnreachable || c.kind == Case::kSingular) {
      EXPECT_FALSE(s.converged());
      EXPECT_GE(s.position_error, c.best_error - 1e-9) << "closer than the geometry allows";
    }
  }
  // Not vacuous: every backend runs on some input and solves some.
  EXPECT_GT(applied, 0) << GetParam() << " applies to none of the contract's models";
  EXPECT_GT(converged_reachable, 0) << GetParam() << " converges on none of the reachable inputs";
}

TEST_P(Contract, AModelWithoutDegreesOfFreedomIsAnsweredNotAnError) {
  auto m = std::make_shared<const Model>(std::vector<JointSpec>{fixed("base", -1, {0, 0, 0}), fixed("tip", 0, {1, 0, 0})},
                                         "rigid");
  auto solver = Registry::global().create(GetParam());
  SolverOptions o;
  Summary s = solver->solve(makeProblem(m, {positionGoal(1, {1, 0, 0})}, Eigen::VectorXd(0), "holds"), o);
  EXPECT_EQ(s.status, Status::kConverged) << s.message;
  s = solver->solve(makeProblem(m, {positionGoal(1, {0, 1, 0})}, Eigen::VectorXd(0), "cannot"), o);
  EXPECT_EQ(s.status, Status::kInvalidInput);
  EXPECT_NE(s.message.find("no degrees of freedom"), std::string::npos) << s.message;
}

TEST_P(Contract, TheSameSeedGivesTheSameAnswer) {
  const std::string spec = GetParam() + (Registry::global().create(GetParam())->restartable() ? ":restarts=3" : "");
  auto a = Registry::global().create(spec);
  auto b = Registry::global().create(spec);
  SolverOptions o;
  o.max_iterations = 100;
  o.seed = 99;
  int restarted = 0;
  for (const Case& c : cases()) {
    if (c.kind == Case::kInvalid) continue;
    Eigen::VectorXd qa = c.problem.q0, qb = c.problem.q0;
    const Summary sa = a->solve(c.problem, qa, o);
    const Summary sb = b->solve(c.problem, qb, o);
    EXPECT_EQ(sa.status, sb.status) << c.name;
    EXPECT_EQ(sa.iterations, sb.iterations) << c.name;
    EXPECT_EQ(qa, qb) << c.name;  // bit-identical
    restarted += sa.restarts > 0;
  }
  // The unreachable inputs fail every attempt: restarts were exercised.
  if (a->restartable()) EXPECT_GT(restarted, 0);
}

INSTANTIATE_TEST_SUITE_P(Registered, Contract, ::testing::ValuesIn(backendNames()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

}  // namespace
}  // namespace ikbench
