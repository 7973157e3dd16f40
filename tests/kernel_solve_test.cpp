// Solver::solve of dls / dls-adaptive:mode=error through the compiled chain
// kernel (solvers/src/kernel/kernel_solve.h): the kernel's evaluation agrees with the
// model's FK, errors and Jacobian, traces are recorded without changing the
// answer, a solver moves between models, problems the kernel does not take get
// exactly the generic answer, restarts and the budget end a solve. The
// agreement of the kernel's answers with the generic code and with the batch
// is tests/differential_test.cpp's.
#include <gtest/gtest.h>

#include <cmath>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::prismaticProblems;

// The auto preset without its time budget: results that cannot depend on the machine.
constexpr const char* kAutoNoBudget = "auto:time_budget_us=0";


std::vector<Problem> armProblems(const char* arm, int count) {
  const UrdfModel um = loadUrdf(std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/robots/" + arm + ".urdf");
  GoalSetSpec gs;
  gs.count = count;
  gs.kind = GoalKind::kPose;
  return reachableGoals(um.model, gs, 17, arm);
}

// KernelEvaluator: the kernel's FK, goal errors, residual and Jacobian of
// one problem (what bench_kinematics' KernelFkErrorsJacobian times) agree
// with the model's own forwardKinematics, evaluateGoals and goalJacobian to
// rounding, in both steps, which give bitwise the same values; a problem
// the kernel does not take is refused with the reason.
TEST(KernelSolve, EvaluatorAgreesWithTheModelsFkErrorsAndJacobian) {
  std::vector<Problem> problems = test::poseProblems(7, 3, 5);
  for (Problem& p : test::poseProblems(6, 2, 5, GoalKind::kPosition)) problems.push_back(std::move(p));
  for (Problem& p : prismaticProblems(9, ChainSpec().axes, 23, 5)) problems.push_back(std::move(p));
  for (Problem& p : armProblems("panda", 5)) problems.push_back(std::move(p));
  problems[2].goals.front().weight = 3.0;
  problems[3].goals.front().orientation_scale = 0.25;
  int compared = 0;
  for (const Problem& p : problems) {
    KernelEvaluator packed(p, true), lanes(p, false);
    Data d(*p.model);
    Rng rng(Rng::mix(7, static_cast<std::uint64_t>(compared)));
    for (int trial = 0; trial < 4; ++trial) {
      const Eigen::VectorXd q = trial == 0 ? p.q0 : randomConfiguration(*p.model, rng);
      packed.evaluate(q);
      lanes.evaluate(q);
      forwardKinematics(*p.model, q, d);
      const GoalErrors e = evaluateGoals(*p.model, p.goals, d);
      goalJacobian(*p.model, p.goals, d);
      EXPECT_NEAR(packed.positionError(), e.position, 1e-12);
      EXPECT_NEAR(packed.orientationError(), e.orientation, 1e-12);
      const Eigen::VectorXd r = packed.residual();
      const Eigen::MatrixXd J = packed.jacobian();
      ASSERT_EQ(r.size(), d.residual.size());
      ASSERT_EQ(J.rows(), d.J.rows());
      ASSERT_EQ(J.cols(), d.J.cols());
      EXPECT_LT((r - d.residual).cwiseAbs().maxCoeff(), 1e-12);
      EXPECT_LT((J - d.J).cwiseAbs().maxCoeff(), 1e-12) << "kernel\n" << J << "\nmodel\n" << d.J;
      EXPECT_TRUE(r == lanes.residual());
      EXPECT_TRUE(J == lanes.jacobian());
      EXPECT_EQ(packed.positionError(), lanes.positionError());
      EXPECT_EQ(packed.orientationError(), lanes.orientationError());
      ++compared;
    }
  }
  EXPECT_EQ(compared, static_cast<int>(problems.size()) * 4);
  Problem two = problems.front();
  two.goals.push_back(two.goals.front());
  EXPECT_THROW(KernelEvaluator{two}, std::invalid_argument);
}

// With record_trace the kernel records SolveContext's trace (the start of
// every attempt, then every iterate, attempts in order) and the answer does
// not change.
TEST(KernelSolve, TraceRecordsEveryIterateWithoutChangingTheAnswer) {
  std::vector<Problem> problems = test::poseProblems(7, 2, 25);
  for (Problem& p : armProblems("panda", 25)) problems.push_back(std::move(p));
  const std::string spec = "dls-adaptive:restarts=20:mode=error:err_gain=0.05:limits=auto:max_step=2:max_iterations=12";
  SolverOptions plain, traced;
  traced.record_trace = true;
  const test::Solved a = test::solveEach(problems, spec, plain);
  const test::Solved b = test::solveEach(problems, spec, traced);
  const test::Solved g = test::solveEach(problems, spec + ":kernel=generic", traced);
  int restarted = 0, compared = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    const Summary& s = b.summaries[i];
    EXPECT_TRUE(a.q[i] == b.q[i]) << i;
    EXPECT_EQ(a.summaries[i].iterations, s.iterations) << i;
    EXPECT_EQ(a.summaries[i].status, s.status) << i;
    EXPECT_TRUE(a.summaries[i].trace.empty());
    restarted += s.restarts > 0;
    ASSERT_EQ(s.trace.size(), static_cast<size_t>(s.iterations + s.restarts + 1)) << i;
    EXPECT_EQ(s.trace.front().iteration, 0);
    EXPECT_EQ(s.trace.back().iteration, s.iterations);
    int starts = 0;
    for (size_t t = 0; t < s.trace.size(); ++t) {
      const IterationRecord& rec = s.trace[t];
      const bool attempt_start = rec.step_norm == 0.0 && rec.damping == 0.0;
      if (t > 0) EXPECT_GE(rec.iteration, s.trace[t - 1].iteration);
      // Attempts may run at once in the kernel's lanes; a record's time is
      // when it can be taken in attempt order, so time grows along the trace.
      if (t > 0) EXPECT_GE(rec.elapsed_us, s.trace[t - 1].elapsed_us);
      EXPECT_LE(rec.elapsed_us, s.time_us);
      starts += attempt_start;
      // Each record's errors are those of its q by the model's FK.
      const GoalErrors e = test::goalErrorsAt(problems[i], rec.q);
      EXPECT_NEAR(rec.position_error, e.position, 1e-12) << i << " record " << t;
      EXPECT_NEAR(rec.orientation_error, e.orientation, 1e-12) << i << " record " << t;
      EXPECT_TRUE(withinLimits(*problems[i].model, rec.q, 1e-12)) << i << " record " << t;
    }
    EXPECT_GE(starts, s.restarts + 1) << i;
    // Against the generic code's trace where both took the same path.
    if (g.summaries[i].iterations == s.iterations && g.summaries[i].restarts == s.restarts) {
      ASSERT_EQ(g.summaries[i].trace.size(), s.trace.size()) << i;
      for (size_t t = 0; t < s.trace.size(); ++t) {
        EXPECT_EQ(g.summaries[i].trace[t].iteration, s.trace[t].iteration) << i;
        EXPECT_NEAR(g.summaries[i].trace[t].position_error, s.trace[t].position_error, 1e-8) << i << " record " << t;
        EXPECT_NEAR(g.summaries[i].trace[t].damping, s.trace[t].damping, 1e-8) << i << " record " << t;
        EXPECT_NEAR(g.summaries[i].trace[t].step_norm, s.trace[t].step_norm, 1e-7) << i << " record " << t;
      }
      ++compared;
    }
  }
  EXPECT_GT(restarted, 2);  // restarts are exercised
  EXPECT_GE(compared, static_cast<int>(problems.size()) * 9 / 10);
}

// One solver instance moves between models (the kernel's plan follows the
// problem) and gives the answers of fresh solvers.
TEST(KernelSolve, ASolverMovesBetweenModels) {
  const std::vector<Problem> a = armProblems("ur5", 6), b = armProblems("iiwa14", 6), c = test::poseProblems(7, 1, 6);
  SolverOptions o;
  auto shared = Registry::global().create(kAutoNoBudget);
  for (int round = 0; round < 2; ++round)
    for (const std::vector<Problem>* set : {&a, &b, &c}) {
      const test::Solved fresh = test::solveEach(*set, kAutoNoBudget, o);
      for (size_t i = 0; i < set->size(); ++i) {
        Eigen::VectorXd q = (*set)[i].q0;
        const Summary s = shared->solve((*set)[i], q, o);
        EXPECT_TRUE(q == fresh.q[i]) << i;
        EXPECT_EQ(s.iterations, fresh.summaries[i].iterations) << i;
      }
    }
}

// Problems the kernel does not take (ball joints, two goals) and a spec it
// does not run get exactly the generic code's answer.
TEST(KernelSolve, OtherProblemsGetTheGenericAnswer) {
  std::vector<Problem> problems;
  ChainSpec balls;
  balls.joints = 4;
  balls.revolute = 0.0;
  balls.ball = 1.0;
  GoalSetSpec gs;
  gs.count = 5;
  gs.kind = GoalKind::kPose;
  for (Problem& p : reachableGoals(randomChain(balls, 3), gs, 4, "ball")) problems.push_back(std::move(p));
  const std::vector<Problem> base = test::poseProblems(7, 1, 10);
  for (int i = 0; i < 5; ++i) {
    Problem two = base[i];
    Goal second = two.goals.front();
    second.kind = GoalKind::kPosition;
    second.body = 2;
    two.goals.push_back(second);
    problems.push_back(two);
  }
  SolverOptions o;
  const std::string with_kernel = "auto:time_budget_us=0:restarts=20", generic = with_kernel + ":kernel=generic";
  for (const Problem& p : problems)
    EXPECT_FALSE(batchFallbackReason(p, Registry::global().parse(with_kernel), o).empty()) << p.name;
  const test::Solved k = test::solveEach(problems, with_kernel, o), g = test::solveEach(problems, generic, o);
  for (size_t i = 0; i < problems.size(); ++i) {
    EXPECT_TRUE(k.q[i] == g.q[i]) << problems[i].name;
    EXPECT_EQ(k.summaries[i].iterations, g.summaries[i].iterations) << problems[i].name;
    EXPECT_EQ(k.summaries[i].status, g.summaries[i].status) << problems[i].name;
  }
  // A spec the kernel does not run (singular-value damping): one code path,
  // kernel=auto or not.
  const test::Solved sv = test::solveEach(base, "dls-adaptive:mode=both", o);
  const test::Solved sv_g = test::solveEach(base, "dls-adaptive:mode=both:kernel=generic", o);
  for (size_t i = 0; i < base.size(); ++i) EXPECT_TRUE(sv.q[i] == sv_g.q[i]) << i;
}

// Restarts and the budget behave as in the generic code: restarts end at
// their count, a binding budget ends them.
TEST(KernelSolve, RestartsAndBudget) {
  Problem p = test::poseProblems(7, 1, 1).front();
  p.goals.front().target_position *= 10.0;  // out of reach
  SolverOptions o;
  auto counted = Registry::global().create("auto:time_budget_us=0:restarts=3");
  Eigen::VectorXd q = p.q0;
  Summary s = counted->solve(p, q, o);
  EXPECT_FALSE(s.converged());
  EXPECT_EQ(s.restarts, 3);
  EXPECT_LE(s.iterations, 4 * 12);
  EXPECT_TRUE(withinLimits(*p.model, q));
  auto budgeted = Registry::global().create("auto:time_budget_us=300:restarts=1000000");
  q = p.q0;
  s = budgeted->solve(p, q, o);
  EXPECT_FALSE(s.converged());
  EXPECT_LT(s.restarts, 1000000);
  EXPECT_GE(s.time_us, 300.0);
}

}  // namespace
}  // namespace ikbench
