// Solver::solve of dls / dls-adaptive:mode=error through the compiled chain
// kernel (solvers/src/kernel_solve.h) against the generic model code of the
// same spec (kernel=generic): statuses and answers agree to rounding, every
// converged answer holds by forward kinematics, the answer is bitwise
// solveBatch's, traces are recorded without changing the answer, a solver
// moves between models, and problems the kernel does not take get exactly
// the generic answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

// The auto preset without its time budget: results that cannot depend on the machine.
constexpr const char* kAutoNoBudget = "auto:budget_us=0";

// Reachable pose goals on a random chain (limits +-2.5) with 30 % sliders.
std::vector<Problem> prismaticProblems(int joints, AxisStyle axes, std::uint64_t seed, int count) {
  ChainSpec cs;
  cs.joints = joints;
  cs.prismatic = 0.3;
  cs.axes = axes;
  cs.limit = 2.5;
  GoalSetSpec gs;
  gs.count = count;
  gs.kind = GoalKind::kPose;
  return reachableGoals(randomChain(cs, seed), gs, seed + 1, "pr");
}

std::vector<Problem> armProblems(const char* arm, int count) {
  const UrdfModel um = loadUrdf(std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/robots/" + arm + ".urdf");
  GoalSetSpec gs;
  gs.count = count;
  gs.kind = GoalKind::kPose;
  return reachableGoals(um.model, gs, 17, arm);
}

TEST(KernelSolve, AgreesWithTheGenericCodeAndHoldsByFk) {
  std::vector<Problem> problems = test::poseProblems(7, 4, 40);
  // 6, 8 and 9 DOF: the kernel's compiled sizes and its general loop.
  for (int dof : {6, 8, 9})
    for (Problem& p : test::poseProblems(dof, 1, 20)) problems.push_back(std::move(p));
  for (const char* arm : {"ur5", "panda", "iiwa14"})
    for (Problem& p : armProblems(arm, 40)) problems.push_back(std::move(p));
  const int n = static_cast<int>(problems.size());
  SolverOptions o;
  for (const std::string spec : {std::string(kAutoNoBudget), std::string("dls"),
                                 std::string("dls-adaptive:mode=error:limits=freeze:restarts=5")}) {
    const test::Solved k = test::solveEach(problems, spec, o);
    const test::Solved g = test::solveEach(problems, spec + ":kernel=generic", o);
    int same_status = 0, same_iterations = 0, converged_k = 0, converged_g = 0, bitwise = 0;
    double max_dq = 0.0;
    for (int i = 0; i < n; ++i) {
      same_status += k.summaries[i].status == g.summaries[i].status;
      same_iterations += k.summaries[i].iterations == g.summaries[i].iterations;
      converged_k += k.summaries[i].converged();
      converged_g += g.summaries[i].converged();
      bitwise += k.q[i] == g.q[i];
      if (k.summaries[i].iterations == g.summaries[i].iterations) max_dq = std::max(max_dq, (k.q[i] - g.q[i]).cwiseAbs().maxCoeff());
      // The verdict is the model's own FK of the returned q.
      const GoalErrors e = test::goalErrorsAt(problems[i], k.q[i]);
      EXPECT_EQ(e.position, k.summaries[i].position_error) << spec << " problem " << i;
      EXPECT_EQ(e.orientation, k.summaries[i].orientation_error) << spec << " problem " << i;
      if (k.summaries[i].converged()) {
        EXPECT_LE(e.position, o.position_tolerance) << spec << " problem " << i;
        EXPECT_LE(e.orientation, o.orientation_tolerance) << spec << " problem " << i;
        EXPECT_TRUE(withinLimits(*problems[i].model, k.q[i])) << spec << " problem " << i;
      }
    }
    std::printf("%s: status agree %d/%d, iterations agree %d/%d, converged kernel %d generic %d, max |dq| %.3g, "
                "bitwise equal %d\n",
                spec.c_str(), same_status, n, same_iterations, n, converged_k, converged_g, max_dq, bitwise);
    EXPECT_GE(same_status, n * 95 / 100) << spec;
    EXPECT_GE(same_iterations, n * 90 / 100) << spec;
    EXPECT_LT(max_dq, 1e-6) << spec;
    EXPECT_GE(converged_k, converged_g - n / 50) << spec;
    // The kernel ran: its rounding differs from the generic code's somewhere.
    EXPECT_LT(bitwise, n) << spec;
  }
}

// One problem through Solver::solve is bitwise the same as through
// solveBatch (the same kernel, lanes are independent), although
// Solver::solve runs up to four attempts of the problem at once and
// solveBatch one after another: the attempts are taken in order.
TEST(KernelSolve, BitwiseTheBatchAnswer) {
  std::vector<Problem> problems = test::poseProblems(7, 3, 30);
  for (Problem& p : test::poseProblems(5, 2, 20, GoalKind::kPosition)) problems.push_back(std::move(p));
  // Out of reach: every one of the 5001 attempts fails, the best one is the answer.
  Problem far = problems.front();
  far.goals.front().target_position *= 10.0;
  problems.push_back(far);
  SolverOptions o;
  const test::Solved k = test::solveEach(problems, kAutoNoBudget, o);
  BatchOptions bo;
  bo.solve = o;
  BatchStats stats;
  const std::vector<BatchResult> r = solveBatch(problems, kAutoNoBudget, bo, &stats);
  EXPECT_EQ(stats.batched, static_cast<long>(problems.size()));
  for (size_t i = 0; i < problems.size(); ++i) {
    EXPECT_TRUE(k.q[i] == r[i].q) << i;
    EXPECT_EQ(k.summaries[i].status, r[i].summary.status) << i;
    EXPECT_EQ(k.summaries[i].iterations, r[i].summary.iterations) << i;
    EXPECT_EQ(k.summaries[i].restarts, r[i].summary.restarts) << i;
    EXPECT_EQ(k.summaries[i].fk_evals, r[i].summary.fk_evals) << i;
    EXPECT_EQ(k.summaries[i].jacobian_evals, r[i].summary.jacobian_evals) << i;
    EXPECT_EQ(k.summaries[i].message, r[i].summary.message) << i;
  }
  int several = 0;
  for (const Summary& s : k.summaries) several += s.restarts >= 4;
  EXPECT_GT(several, 2);  // attempts beyond the first four lanes were taken
  EXPECT_EQ(k.summaries.back().restarts, 5000);
  EXPECT_FALSE(k.summaries.back().converged());
}

// The one-problem step (packed within the problem: frame columns, Jacobian
// columns and normal-matrix columns as vectors) computes what the lane step
// computes for lane 0, operation for operation: kernel=packed, kernel=auto
// (which moves from the one step to the other within a solve) and
// kernel=lanes give bitwise the same answers, counts, messages and traces,
// on random chains of 6 to 9 DOF (the unrolled 6/7/8 kernels and the
// general one), position goals, prismatic joints, the shipped arms,
// weighted goals and targets out of reach (the freeze loop at the limits).
TEST(KernelSolve, PackedStepIsBitwiseTheLaneStep) {
  std::vector<Problem> problems;
  for (int dof : {6, 7, 8, 9})
    for (Problem& p : test::poseProblems(dof, 2, 10)) problems.push_back(std::move(p));
  for (Problem& p : test::poseProblems(5, 2, 10, GoalKind::kPosition)) problems.push_back(std::move(p));
  for (Problem& p : prismaticProblems(8, AxisStyle::kAlternating, 17, 15)) problems.push_back(std::move(p));
  for (const char* arm : {"ur5", "panda", "iiwa14"})
    for (Problem& p : armProblems(arm, 10)) problems.push_back(std::move(p));
  const size_t plain = problems.size();
  for (size_t i = 0; i < plain; i += 7) {
    Problem w = problems[i];
    w.goals.front().weight = 2.5;
    w.goals.front().orientation_scale = 0.4;
    problems.push_back(w);
    Problem far = problems[i];
    far.goals.front().target_position *= 3.0;
    problems.push_back(far);
  }
  SolverOptions o;
  o.record_trace = true;
  // The last run: both steps of the portable (SSE2) kernel.
  const std::vector<std::string> specs = {"dls", "dls:limits=freeze:max_step=0.3:max_iters=60", kAutoNoBudget,
                                          "dls-adaptive:mode=error:limits=freeze:restarts=3:max_iters=40",
                                          "dls-adaptive:mode=error:limits=freeze:restarts=3:max_iters=40"};
  for (size_t run = 0; run < specs.size(); ++run) {
    const std::string& spec = specs[run];
    const bool portable = run + 1 == specs.size();
    if (portable) setenv("IKBENCH_BATCH_ISA", "portable", 1);
    const test::Solved packed = test::solveEach(problems, spec + ":kernel=packed", o);
    const test::Solved lanes = test::solveEach(problems, spec + ":kernel=lanes", o);
    // kernel=auto: the one-problem step for attempt 0 until restarts start
    // beside it (for restarts=0, throughout), then the lane step.
    const test::Solved mixed = test::solveEach(problems, spec, o);
    if (portable) unsetenv("IKBENCH_BATCH_ISA");
    if (portable && batchIsaName() == "avx2") {
      // The portable kernel ran: it rounds without fused multiply-adds.
      const test::Solved avx2 = test::solveEach(problems, spec + ":kernel=packed", o);
      int same = 0;
      for (size_t i = 0; i < problems.size(); ++i) same += avx2.q[i] == packed.q[i];
      EXPECT_LT(same, static_cast<int>(problems.size()));
    }
    int converged = 0, frozen_or_failed = 0;
    for (size_t i = 0; i < problems.size(); ++i) {
      for (const test::Solved* x : {&packed, &mixed}) {
        const char* kernel = x == &packed ? "packed" : "auto";
        const Summary& a = x->summaries[i];
        const Summary& b = lanes.summaries[i];
        ASSERT_TRUE(x->q[i] == lanes.q[i]) << spec << " kernel=" << kernel << " problem " << i << "\n"
                                           << x->q[i].transpose() << "\n"
                                           << lanes.q[i].transpose();
        EXPECT_EQ(a.status, b.status) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.iterations, b.iterations) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.restarts, b.restarts) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.fk_evals, b.fk_evals) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.jacobian_evals, b.jacobian_evals) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.message, b.message) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.position_error, b.position_error) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.orientation_error, b.orientation_error) << spec << " kernel=" << kernel << " problem " << i;
        ASSERT_EQ(a.trace.size(), b.trace.size()) << spec << " kernel=" << kernel << " problem " << i;
        for (size_t t = 0; t < a.trace.size(); ++t) {
          EXPECT_EQ(a.trace[t].iteration, b.trace[t].iteration);
          EXPECT_EQ(a.trace[t].position_error, b.trace[t].position_error)
              << spec << " kernel=" << kernel << " problem " << i << " record " << t;
          EXPECT_EQ(a.trace[t].orientation_error, b.trace[t].orientation_error);
          EXPECT_EQ(a.trace[t].step_norm, b.trace[t].step_norm);
          EXPECT_EQ(a.trace[t].damping, b.trace[t].damping);
          EXPECT_TRUE(a.trace[t].q == b.trace[t].q) << spec << " kernel=" << kernel << " problem " << i << " record " << t;
        }
      }
      const Summary& a = packed.summaries[i];
      converged += a.converged();
      frozen_or_failed += !a.converged();
      if (a.converged()) {
        const GoalErrors e = test::goalErrorsAt(problems[i], packed.q[i]);
        EXPECT_LE(e.position, o.position_tolerance) << spec << " problem " << i;
        EXPECT_LE(e.orientation, o.orientation_tolerance) << spec << " problem " << i;
      }
    }
    std::printf("%s (%s): kernel=packed, auto and lanes bitwise equal on %zu problems (%d converged)\n", spec.c_str(),
                portable ? "portable" : batchIsaName().c_str(), problems.size(), converged);
    EXPECT_GT(converged, static_cast<int>(problems.size()) / 3) << spec;
    EXPECT_GT(frozen_or_failed, 0) << spec;  // the far targets
  }
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
  const std::string spec = "dls-adaptive:restarts=20:mode=error:err_gain=0.05:limits=auto:max_step=2:max_iters=12";
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
  const std::string with_kernel = "auto:budget_us=0:restarts=20", generic = with_kernel + ":kernel=generic";
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
  auto counted = Registry::global().create("auto:budget_us=0:restarts=3");
  Eigen::VectorXd q = p.q0;
  Summary s = counted->solve(p, q, o);
  EXPECT_FALSE(s.converged());
  EXPECT_EQ(s.restarts, 3);
  EXPECT_LE(s.iterations, 4 * 12);
  EXPECT_TRUE(withinLimits(*p.model, q));
  auto budgeted = Registry::global().create("auto:budget_us=300:restarts=1000000");
  q = p.q0;
  s = budgeted->solve(p, q, o);
  EXPECT_FALSE(s.converged());
  EXPECT_LT(s.restarts, 1000000);
  EXPECT_GE(s.time_us, 300.0);
}

}  // namespace
}  // namespace ikbench
