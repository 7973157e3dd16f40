// The common solver interface, the registry and the DLS backend.
#include <gtest/gtest.h>

#include <cmath>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::expectReached;

TEST(Registry, BuildsFromSpecAndRejectsUnknownNamesAndKeys) {
  Registry& r = Registry::global();
  auto s = r.create("dls:lambda=0.05:max_step=0.5");
  EXPECT_EQ(s->spec(), "dls:lambda=0.05:max_step=0.5");
  EXPECT_THROW(r.create("nope"), SpecError);
  try {
    r.create("dls:lamda=1");
    FAIL();
  } catch (const SpecError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("lamda"), std::string::npos) << msg;
    EXPECT_NE(msg.find("lambda"), std::string::npos) << msg;  // lists the known keys
  }
  EXPECT_THROW(r.create("dls:lambda=abc"), SpecError);
  EXPECT_THROW(r.create("dls:lambda"), SpecError);
  EXPECT_THROW(r.create("dls:restarts=-2"), SpecError);
  EXPECT_EQ(splitSpecList(" dls, dls:lambda=0.1 ,,ccd"), (std::vector<std::string>{"dls", "dls:lambda=0.1", "ccd"}));
  // Common keys go into the effective options.
  auto t = r.create("dls:max_iters=7:budget_us=100");
  const SolverOptions eff = t->effectiveOptions(SolverOptions{});
  EXPECT_EQ(eff.max_iterations, 7);
  EXPECT_EQ(eff.time_budget_us, 100.0);
}

TEST(Dls, ConvergesOnReachableRandomChainsCheckedByFk) {
  SolverOptions o;
  auto dls = Registry::global().create("dls");
  int converged = 0, total = 0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    ChainSpec cs;
    cs.joints = 7;
    cs.limit = 2.5;
    const auto model = randomChain(cs, seed);
    GoalSetSpec gs;
    gs.count = 10;
    gs.kind = GoalKind::kPosition;
    for (const Problem& p : reachableGoals(model, gs, seed, "p")) {
      Eigen::VectorXd q = p.q0;
      const Summary s = dls->solve(p, q, o);
      ++total;
      if (s.converged()) {
        ++converged;
        expectReached(p, q, o);
        EXPECT_LE(s.position_error, o.position_tolerance);
        EXPECT_GT(s.iterations, 0);
        EXPECT_GE(s.fk_evals, s.iterations);
        EXPECT_GE(s.jacobian_evals, s.iterations);
      }
      EXPECT_TRUE(q.allFinite());
    }
  }
  // Position goals on a redundant 7-DOF chain, one attempt: most converge.
  EXPECT_GE(converged, total * 8 / 10) << converged << " of " << total;
}

TEST(Dls, PoseGoalsConvergeWithRestarts) {
  SolverOptions o;
  auto dls = Registry::global().create("dls:restarts=20");
  ChainSpec cs;
  cs.joints = 7;
  const auto model = randomChain(cs, 99);
  GoalSetSpec gs;
  gs.count = 20;
  gs.kind = GoalKind::kPose;
  const int converged = test::solveAllChecked(*dls, reachableGoals(model, gs, 5, "pose"), o, "dls:restarts=20");
  EXPECT_GE(converged, 19);
}

TEST(Dls, UnreachableTargetGivesFiniteBestEffortAndNoConvergence) {
  const auto model = test::planarChain({0.5, 0.5, 0.5});
  Problem p;
  p.model = model;
  p.name = "far";
  p.q0 = Eigen::VectorXd::Constant(3, 0.1);
  p.goals.resize(1);
  p.goals[0].body = 3;
  p.goals[0].target_position = Eigen::Vector3d(3.0, 0.0, 0.0);  // reach is 1.5
  SolverOptions o;
  o.record_trace = true;
  Eigen::VectorXd q = p.q0;
  const Summary s = Registry::global().create("dls")->solve(p, q, o);
  EXPECT_FALSE(s.converged());
  EXPECT_TRUE(s.status == Status::kStalled || s.status == Status::kMaxIterations) << toString(s.status);
  EXPECT_TRUE(q.allFinite());
  // Best effort: the chain points at the target, 1.5 m short of it.
  EXPECT_NEAR(s.position_error, 1.5, 1e-2);
  ASSERT_FALSE(s.trace.empty());
  EXPECT_EQ(s.trace.front().iteration, 0);
  EXPECT_EQ(static_cast<int>(s.trace.size()), s.iterations + 1);
}

TEST(Dls, TargetAtTheOriginAndStretchedChainStayFinite) {
  const auto model = test::planarChain({0.5, 0.5});
  SolverOptions o;
  auto dls = Registry::global().create("dls");
  for (const Eigen::Vector3d& target : {Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(1.0, 0, 0)}) {
    Problem p;
    p.model = model;
    p.name = "edge";
    p.q0 = Eigen::VectorXd::Zero(2);  // fully stretched: singular Jacobian
    p.goals.resize(1);
    p.goals[0].body = 2;
    p.goals[0].target_position = target;
    Eigen::VectorXd q = p.q0;
    const Summary s = dls->solve(p, q, o);
    EXPECT_TRUE(q.allFinite());
    EXPECT_TRUE(std::isfinite(s.position_error));
    // The stretched target is reached exactly at the start.
    if (target.x() == 1.0) EXPECT_TRUE(s.converged()) << toString(s.status);
  }
}

TEST(SolverInterface, BadProblemsGiveInvalidInputWithAMessage) {
  const auto model = test::planarChain({0.5, 0.5});
  auto dls = Registry::global().create("dls");
  Problem p;
  p.model = model;
  p.name = "bad";
  p.q0 = Eigen::VectorXd::Zero(2);
  p.goals.resize(1);
  p.goals[0].body = 2;
  p.goals[0].target_position = Eigen::Vector3d(std::nan(""), 0, 0);
  SolverOptions o;
  Summary s = dls->solve(p, o);
  EXPECT_EQ(s.status, Status::kInvalidInput);
  EXPECT_NE(s.message.find("not finite"), std::string::npos) << s.message;

  p.goals[0].target_position = Eigen::Vector3d(0.5, 0.5, 0);
  p.goals[0].body = 17;
  s = dls->solve(p, o);
  EXPECT_EQ(s.status, Status::kInvalidInput);
  EXPECT_NE(s.message.find("body 17"), std::string::npos) << s.message;

  p.goals[0].body = 2;
  Eigen::VectorXd wrong_size = Eigen::VectorXd::Zero(3);
  s = dls->solve(p, wrong_size, o);
  EXPECT_EQ(s.status, Status::kInvalidInput);
  EXPECT_NE(s.message.find("nq = 2"), std::string::npos) << s.message;

  o.position_tolerance = -1;
  s = dls->solve(p, o);
  EXPECT_EQ(s.status, Status::kInvalidInput);
  EXPECT_NE(s.message.find("position_tolerance"), std::string::npos) << s.message;
}

TEST(SolverInterface, RestartsAreDeterministicForASeed) {
  ChainSpec cs;
  cs.joints = 6;
  cs.limit = 1.0;  // tight limits: first attempts often fail, restarts matter
  const auto model = randomChain(cs, 3);
  GoalSetSpec gs;
  gs.count = 10;
  gs.kind = GoalKind::kPose;
  auto a = Registry::global().create("dls:restarts=10");
  auto b = Registry::global().create("dls:restarts=10");
  SolverOptions o;
  o.seed = 1234;
  int restarted = 0;
  for (const Problem& p : reachableGoals(model, gs, 8, "r")) {
    Eigen::VectorXd qa = p.q0, qb = p.q0;
    const Summary sa = a->solve(p, qa, o);
    const Summary sb = b->solve(p, qb, o);
    EXPECT_EQ(sa.status, sb.status);
    EXPECT_EQ(sa.iterations, sb.iterations);
    EXPECT_EQ(sa.restarts, sb.restarts);
    EXPECT_EQ(qa, qb);  // bit-identical
    restarted += sa.restarts > 0;
  }
  EXPECT_GT(restarted, 0);  // the test exercised restarts at all
}

TEST(SolverInterface, TimeBudgetStopsTheSolve) {
  ChainSpec cs;
  cs.joints = 50;
  const auto model = randomChain(cs, 1);
  Problem p;
  p.model = model;
  p.name = "budget";
  p.q0 = model->neutralConfiguration();
  p.goals.resize(1);
  p.goals[0].body = model->numJoints() - 1;
  p.goals[0].target_position = Eigen::Vector3d(100, 0, 0);  // unreachable: never converges
  SolverOptions o;
  o.max_iterations = 1000000;
  o.stall_iterations = 0;
  auto dls = Registry::global().create("dls:budget_us=2000");
  const Summary s = dls->solve(p, o);
  EXPECT_EQ(s.status, Status::kTimeLimit) << toString(s.status);
  EXPECT_LT(s.iterations, 1000000);
}

}  // namespace
}  // namespace ikbench
