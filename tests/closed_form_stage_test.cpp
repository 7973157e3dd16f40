// The closed form through the solver: analytic-6r's candidates checked in
// the compiled kernel's lanes give what the model's own FK check gives, and
// `auto`'s closed-form stage (closed_form=auto) answers a 6R arm analytic-6r
// solves with analytic-6r's nearest solution (all of them with
// solutions=all) on every path (Solver::solve with and without the kernel,
// solveBatch), and starts a perturbed arm (axes off by up to
// closed_form_near) from the idealised chain's closed form. Every answer is
// checked by the model's forward kinematics, and the lanes' FK (lane_fk.h),
// whose errors are the answer's verdict, against it.
#include "../solvers/src/kernel/lane_fk.h"

#include <gtest/gtest.h>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

std::shared_ptr<const Model> shippedArm(const std::string& arm) {
  return loadUrdf(std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/robots/" + arm + ".urdf").model;
}

std::vector<Problem> poseTargets(const std::shared_ptr<const Model>& model, int count, std::uint64_t seed) {
  GoalSetSpec gs;
  gs.count = count;
  gs.kind = GoalKind::kPose;
  return reachableGoals(model, gs, seed, model->name());
}

// The answer holds by the model's own FK within the default tolerances and
// within the limits.
void expectStrictSuccess(const Problem& p, const Eigen::VectorXd& q, const Summary& s, const std::string& where) {
  Data d(*p.model);
  forwardKinematics(*p.model, q, d);
  const GoalErrors e = evaluateGoals(*p.model, p.goals, d);
  const SolverOptions o;
  EXPECT_TRUE(s.converged()) << where << ": " << toString(s.status) << " " << s.message;
  EXPECT_LE(e.position, o.position_tolerance) << where;
  EXPECT_LE(e.orientation, o.orientation_tolerance) << where;
  EXPECT_TRUE(withinLimits(*p.model, q)) << where;
}

// The lanes' evaluation (no Jacobian, no step) gives the model's own goal
// errors at every configuration, for any number of configurations up to
// kMaxCount (a partly filled group of lanes included), on arms of both
// classes and a 7-DOF arm.
TEST(ClosedFormThroughTheSolver, LaneFkGivesTheModelsGoalErrors) {
  for (const char* arm : {"ur5", "puma560", "iiwa14"}) {
    const auto model = shippedArm(arm);
    const std::vector<Problem> problems = poseTargets(model, 8, 5);
    const auto fk = LaneFk::forProblem(problems[0]);
    ASSERT_TRUE(fk) << arm;
    ASSERT_EQ(fk->dof(), model->nq()) << arm;
    Rng rng(9);
    Data d(*model);
    for (const Problem& p : problems)
      for (int count = 1; count <= LaneFk::kMaxCount; ++count) {
        std::vector<double> q(static_cast<size_t>(count) * model->nq());
        std::vector<Eigen::VectorXd> qs;
        for (int k = 0; k < count; ++k) {
          qs.push_back(randomConfiguration(*model, rng));
          std::copy(qs.back().data(), qs.back().data() + model->nq(), q.begin() + k * model->nq());
        }
        GoalErrors e[LaneFk::kMaxCount];
        fk->errors(p.goals[0], q.data(), count, e);
        for (int k = 0; k < count; ++k) {
          forwardKinematics(*model, qs[k], d);
          const GoalErrors m = evaluateGoals(*model, p.goals, d);
          EXPECT_NEAR(e[k].position, m.position, 1e-12) << arm << " lane " << k << " of " << count;
          EXPECT_NEAR(e[k].orientation, m.orientation, 1e-12) << arm << " lane " << k << " of " << count;
          EXPECT_NEAR(e[k].weighted_norm, m.weighted_norm, 1e-12) << arm << " lane " << k << " of " << count;
        }
      }
  }
  // A model the kernel does not take (DOF weights) gets no lane FK.
  EXPECT_FALSE(LaneFk::forProblem(poseTargets(test::withRevoluteWeights(*shippedArm("ur5"), 2.0), 1, 5)[0]));
}

TEST(ClosedFormThroughTheSolver, LaneCheckKeepsWhatTheModelsFkKeeps) {
  SolverOptions o;
  int solutions = 0;
  for (const char* arm : {"ur5", "irb2400", "puma560"}) {
    const auto model = shippedArm(arm), generic = test::withRevoluteWeights(*model, 2.0);
    auto fast = Registry::global().create("analytic-6r:solutions=all");
    auto slow = Registry::global().create("analytic-6r:solutions=all");
    for (const Problem& p : poseTargets(model, 100, 3)) {
      Problem g = p;
      g.model = generic;
      Eigen::VectorXd qf = p.q0, qg = g.q0;
      const Summary sf = fast->solve(p, qf, o), sg = slow->solve(g, qg, o);
      ASSERT_EQ(sf.status, sg.status) << arm << " " << p.name;
      ASSERT_EQ(sf.solutions.size(), sg.solutions.size()) << arm << " " << p.name;
      EXPECT_TRUE(qf == qg) << arm << " " << p.name;
      for (size_t k = 0; k < sf.solutions.size(); ++k) EXPECT_TRUE(sf.solutions[k] == sg.solutions[k]) << p.name;
      expectStrictSuccess(p, qf, sf, arm);
      // The verdict's errors (the kernel's FK of the answer) are the model's
      // FK errors of it, to rounding.
      EXPECT_NEAR(sf.position_error, sg.position_error, 1e-13) << arm << " " << p.name;
      EXPECT_NEAR(sf.orientation_error, sg.orientation_error, 1e-13) << arm << " " << p.name;
      solutions += static_cast<int>(std::max<size_t>(1, sf.solutions.size()));
    }
  }
  EXPECT_GT(solutions, 3 * 100 * 2);  // several solutions per target on average
}

TEST(ClosedFormStage, AutoAnswersWithTheNearestClosedFormSolutionOnEveryPath) {
  SolverOptions o;
  for (const char* arm : {"ur5", "irb2400", "puma560"}) {
    const std::vector<Problem> problems = poseTargets(shippedArm(arm), 40, 5);
    const test::Solved analytic = test::solveEach(problems, "analytic-6r", o);
    const test::Solved all = test::solveEach(problems, "analytic-6r:solutions=all", o);
    const test::Solved kernel = test::solveEach(problems, "auto", o);
    const test::Solved generic = test::solveEach(problems, "auto:kernel=generic", o);
    const test::Solved auto_all = test::solveEach(problems, "auto:solutions=all", o);
    BatchOptions bo;
    bo.threads = 2;
    const std::vector<BatchResult> batch = solveBatch(problems, "auto", bo);
    EXPECT_FALSE(batchFallbackReason(problems[0], Registry::global().parse("auto"), o).empty());
    for (size_t i = 0; i < problems.size(); ++i) {
      const std::string where = std::string(arm) + " " + problems[i].name;
      expectStrictSuccess(problems[i], kernel.q[i], kernel.summaries[i], where);
      EXPECT_TRUE(kernel.q[i] == analytic.q[i]) << where;
      EXPECT_TRUE(generic.q[i] == analytic.q[i]) << where;
      EXPECT_TRUE(batch[i].q == analytic.q[i]) << where;
      EXPECT_EQ(kernel.summaries[i].iterations, 1) << where;
      EXPECT_EQ(kernel.summaries[i].restarts, 0) << where;
      ASSERT_EQ(auto_all.summaries[i].solutions.size(), all.summaries[i].solutions.size()) << where;
      for (size_t k = 0; k < all.summaries[i].solutions.size(); ++k)
        EXPECT_TRUE(auto_all.summaries[i].solutions[k] == all.summaries[i].solutions[k]) << where;
    }
  }
}

// A target the closed form cannot reach within the limits goes on to the
// numerical attempts, exactly as closed_form=off runs them.
TEST(ClosedFormStage, UnreachableTargetsRunTheNumericalRecipe) {
  SolverOptions o;
  std::vector<Problem> problems = poseTargets(shippedArm("ur5"), 4, 9);
  for (Problem& p : problems) p.goals[0].target_position *= 5.0;
  const test::Solved with = test::solveEach(problems, "auto:time_budget_us=0:restarts=3", o);
  const test::Solved without = test::solveEach(problems, "auto:time_budget_us=0:restarts=3:closed_form=off", o);
  for (size_t i = 0; i < problems.size(); ++i) {
    EXPECT_FALSE(with.summaries[i].converged()) << i;
    EXPECT_TRUE(with.q[i] == without.q[i]) << i;
    EXPECT_EQ(with.summaries[i].restarts, 3) << i;
    EXPECT_EQ(with.summaries[i].iterations, without.summaries[i].iterations) << i;
  }
}

// Perturbed arms (every axis tilted by 1 mrad, origins moved by 0.1 mm) are
// not closed-form arms, but within closed_form_near of one: auto starts
// from the idealised chain's nearest answer, converges on every target, in
// fewer iterations than the recipe alone from the given start; the batch
// path returns the same answers; closed_form_near=0 turns the near case off.
TEST(ClosedFormStage, NearArmsStartFromTheIdealisedClosedForm) {
  SolverOptions o;
  for (const char* arm : {"ur5", "irb2400"}) {
    const auto model = perturbedModel(*shippedArm(arm), 1e-3, 1e-4, 7);
    const std::vector<Problem> problems = poseTargets(model, 40, 11);
    std::string why;
    EXPECT_FALSE(Registry::global().create("analytic-6r")->supports(problems[0], &why)) << arm;
    const std::string spec = "auto:time_budget_us=0";
    const test::Solved near = test::solveEach(problems, spec, o);
    const test::Solved off = test::solveEach(problems, spec + ":closed_form=off", o);
    const test::Solved zero = test::solveEach(problems, spec + ":closed_form_near=0", o);
    BatchOptions bo;
    bo.threads = 2;
    const std::vector<BatchResult> batch = solveBatch(problems, spec, bo);
    long it_near = 0, it_off = 0;
    for (size_t i = 0; i < problems.size(); ++i) {
      const std::string where = std::string(arm) + " " + problems[i].name;
      expectStrictSuccess(problems[i], near.q[i], near.summaries[i], where);
      EXPECT_TRUE(batch[i].q == near.q[i]) << where;
      EXPECT_TRUE(zero.q[i] == off.q[i]) << where;
      it_near += near.summaries[i].iterations;
      it_off += off.summaries[i].iterations;
    }
    EXPECT_LT(2 * it_near, it_off) << arm;
    std::printf("%s perturbed by 1 mrad: %ld iterations from the idealised closed form, %ld without\n", arm, it_near,
                it_off);
  }
}

TEST(PerturbedModel, TiltsEveryAxisByTheAngleAndRejectsBadInput) {
  const auto model = shippedArm("irb2400");
  const auto p = perturbedModel(*model, 0.01, 0.001, 3);
  ASSERT_EQ(p->numJoints(), model->numJoints());
  for (int i = 0; i < model->numJoints(); ++i) {
    if (model->type(i) != JointType::kRevolute) continue;
    const double angle = std::acos(std::clamp(p->axis(i).normalized().dot(model->axis(i).normalized()), -1.0, 1.0));
    EXPECT_NEAR(angle, 0.01, 1e-9) << i;
    EXPECT_NEAR((p->parentTJoint(i).p - model->parentTJoint(i).p).norm(), 0.001, 1e-12) << i;
  }
  EXPECT_THROW(perturbedModel(*model, -1.0, 0.0, 1), std::invalid_argument);
  EXPECT_THROW(perturbedModel(*model, 0.0, std::nan(""), 1), std::invalid_argument);
}

}  // namespace
}  // namespace ikbench
