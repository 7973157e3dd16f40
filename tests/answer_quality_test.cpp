// The quality of an answer (kinematics/quality.h) and the seed regimes and
// goal sets of the protocols (generators.h), on constructed cases whose
// answers are known in closed form.
#include <gtest/gtest.h>

#include <cmath>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/quality.h"
#include "ikbench/scenarios/generators.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::planarChain;

Goal tipGoal(const Model& m, GoalKind kind) {
  Goal g;
  g.body = m.bodyIndex("tip");
  g.kind = kind;
  g.weight = 3.0;             // ignored: manipulability is on the unweighted rows
  g.orientation_scale = 0.2;  // ignored too
  return g;
}

// A planar two-link arm (lengths a, b) has |det J| = a b |sin q2| on its x-y
// position rows (Yoshikawa 1985, the two-link example); the z row is zero,
// and the product of the two singular values of the 3 x 2 Jacobian is that.
TEST(AnswerQuality, ManipulabilityOfTheTwoLinkArmIsABSinQ2) {
  const auto m = planarChain({0.5, 0.3});
  Data data(*m);
  const std::vector<Goal> goals{tipGoal(*m, GoalKind::kPosition)};
  for (double q2 : {0.7, -1.9, 2.5}) {
    Eigen::VectorXd q(2);
    q << 0.3, q2;
    EXPECT_NEAR(manipulability(*m, goals, q, data), 0.5 * 0.3 * std::abs(std::sin(q2)), 1e-12) << q2;
  }
  Eigen::VectorXd stretched(2);
  stretched << 1.1, 0.0;  // singular: the arm straight
  EXPECT_NEAR(manipulability(*m, goals, stretched, data), 0.0, 1e-15);
}

// A planar three-link arm with a pose goal: 6 rows, 3 DOF, so the product of
// the 3 singular values, sqrt(det(J^T J)). Its orientation rows have a 1 in
// the z row per joint; x-y rows are the 2-D position Jacobian. Checked
// against the determinant of J^T J computed directly.
TEST(AnswerQuality, ManipulabilityWithMoreRowsThanDofIsSqrtDetJtJ) {
  const auto m = planarChain({0.4, 0.3, 0.2});
  Data data(*m);
  Eigen::VectorXd q(3);
  q << 0.2, 0.9, -0.6;
  const double a = 0.4, b = 0.3, c = 0.2;
  const double t1 = q[0], t12 = q[0] + q[1], t123 = q[0] + q[1] + q[2];
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(6, 3);
  J.row(0) << -a * std::sin(t1) - b * std::sin(t12) - c * std::sin(t123), -b * std::sin(t12) - c * std::sin(t123),
      -c * std::sin(t123);
  J.row(1) << a * std::cos(t1) + b * std::cos(t12) + c * std::cos(t123), b * std::cos(t12) + c * std::cos(t123),
      c * std::cos(t123);
  J.row(5) << 1, 1, 1;
  const double expected = std::sqrt((J.transpose() * J).determinant());
  EXPECT_NEAR(manipulability(*m, {tipGoal(*m, GoalKind::kPose)}, q, data), expected, 1e-12);
}

TEST(AnswerQuality, LimitMarginIsTheSmallestNormalisedDistanceToALimit) {
  auto joints = std::vector<JointSpec>{test::revolute("j0", -1, {0, 0, 0}, {0, 0, 1}),
                                       test::revolute("j1", 0, {0.3, 0, 0}, {0, 0, 1}),
                                       test::fixed("tip", 1, {0.2, 0, 0})};
  joints[0].lower = Eigen::VectorXd::Constant(1, -1.0);
  joints[0].upper = Eigen::VectorXd::Constant(1, 3.0);  // range 4
  const Model unlimited_second(joints, "one-limited");
  Eigen::VectorXd q(2);
  q << 2.5, 100.0;  // 0.5 from the upper limit of a range of 4; the second joint has no limits
  EXPECT_DOUBLE_EQ(limitMargin(unlimited_second, q), 0.125);
  q[0] = 1.0;  // the middle
  EXPECT_DOUBLE_EQ(limitMargin(unlimited_second, q), 0.5);
  q[0] = 3.0;  // on the limit
  EXPECT_DOUBLE_EQ(limitMargin(unlimited_second, q), 0.0);
  q[0] = 3.4;  // outside: negative
  EXPECT_DOUBLE_EQ(limitMargin(unlimited_second, q), -0.1);
  joints[1].lower = Eigen::VectorXd::Constant(1, 0.0);
  joints[1].upper = Eigen::VectorXd::Constant(1, 1.0);
  const Model both(joints, "both-limited");
  q << 1.0, 0.95;  // the second joint is the nearer: 0.05 of its range
  EXPECT_NEAR(limitMargin(both, q), 0.05, 1e-15);
  EXPECT_TRUE(std::isnan(limitMargin(*planarChain({0.5}), Eigen::VectorXd::Zero(1))));  // no limits at all
}

// Answers along q_k = c k^3 (one joint) at rate r: d_k = c (k^3 - (k-1)^3),
// so the backward differences are known exactly: velocity |d_k| r,
// acceleration |d_k - d_{k-1}| r^2 = 6 c (k - 1) r^2, jerk 6 c r^3.
TEST(AnswerQuality, FrameMotionIsTheBackwardDifferencesOfTheAnswers) {
  const auto m = planarChain({0.5});
  const double c = 1e-3, r = 50.0;
  std::vector<Eigen::VectorXd> q;
  for (int k = 0; k <= 5; ++k) q.push_back(Eigen::VectorXd::Constant(1, c * k * k * k));
  const int k = 5;
  const FrameMotion fm = frameMotion(*m, {&q[5], &q[4], &q[3], &q[2]}, r);
  const double d = c * (125 - 64);
  EXPECT_NEAR(fm.jump, d, 1e-15);
  EXPECT_NEAR(fm.velocity, d * r, 1e-12);
  EXPECT_NEAR(fm.acceleration, 6 * c * (k - 1) * r * r, 1e-9);
  EXPECT_NEAR(fm.jerk, 6 * c * r * r * r, 1e-7);
  // Too few answers or no rate: what cannot be computed is NaN, never 0.
  const FrameMotion two = frameMotion(*m, {&q[1], &q[0]}, r);
  EXPECT_NEAR(two.velocity, c * r, 1e-15);
  EXPECT_TRUE(std::isnan(two.acceleration) && std::isnan(two.jerk));
  const FrameMotion norate = frameMotion(*m, {&q[3], &q[2], &q[1], &q[0]}, 0.0);
  EXPECT_NEAR(norate.jump, c * 19, 1e-15);
  EXPECT_TRUE(std::isnan(norate.velocity));
  EXPECT_TRUE(std::isnan(frameMotion(*m, {&q[0]}, r).jump));
}

// The jump is the largest single joint's change, not the norm: a branch
// switch of one joint by pi stands out beside small motions of the others.
TEST(AnswerQuality, JumpIsTheLargestJointChange) {
  const auto m = planarChain({0.3, 0.3, 0.3});
  Eigen::VectorXd a(3), b(3);
  a << 0.1, 0.2, 0.3;
  b << 0.11, 0.2 - M_PI, 0.29;
  const FrameMotion fm = frameMotion(*m, {&b, &a}, 100.0);
  EXPECT_NEAR(fm.jump, M_PI, 1e-12);
  EXPECT_NEAR(fm.velocity, 100.0 * std::sqrt(0.01 * 0.01 + M_PI * M_PI + 0.01 * 0.01), 1e-9);
}

std::shared_ptr<const Model> limitedChain() {
  ChainSpec cs;
  cs.joints = 6;
  cs.limit_style = LimitStyle::kRealistic;
  cs.limit = 2.5;
  return randomChain(cs, 11);
}

// near:D starts a known distance from the configuration whose FK made the
// target (at most D after clamping into the limits; exactly D when inside).
TEST(AnswerQuality, NearStartIsTheGivenDistanceFromAKnownSolution) {
  const auto m = limitedChain();
  Rng rng(3);
  int exact = 0;
  for (int i = 0; i < 200; ++i) {
    const Eigen::VectorXd known = randomConfiguration(*m, rng);
    const Eigen::VectorXd s = startConfiguration(*m, StartPolicy::kNear, rng, &known, 0.1);
    const double d = configurationDistance(*m, s, known);
    EXPECT_LE(d, 0.1 + 1e-12);
    EXPECT_TRUE(withinLimits(*m, s));
    exact += std::abs(d - 0.1) < 1e-12;
  }
  EXPECT_GT(exact, 100);  // most starts need no clamping
  EXPECT_THROW(startConfiguration(*m, StartPolicy::kNear, rng, nullptr, 0.1), std::invalid_argument);
  StartPolicy p{};
  double d = 0.0;
  parseStartRegime("near:0.25", &p, &d);
  EXPECT_EQ(p, StartPolicy::kNear);
  EXPECT_EQ(d, 0.25);
  EXPECT_EQ(startRegimeName(p, d), "near:0.25");
  parseStartRegime("random", &p, &d);
  EXPECT_EQ(p, StartPolicy::kRandom);
  for (const char* bad : {"near:", "near:-1", "near:x", "near", "sideways"})
    EXPECT_THROW(parseStartRegime(bad, &p, &d), std::invalid_argument) << bad;
}

// Starts per target: problem t * starts + k is target t; its targets are
// those of a one-start family; with a start seed, the targets do not depend
// on the regime.
TEST(AnswerQuality, StartsPerTargetShareTheTargetAndRegimesShareTargets) {
  const auto m = limitedChain();
  GoalSetSpec one;
  one.count = 5;
  one.kind = GoalKind::kPose;
  GoalSetSpec many = one;
  many.starts = 4;
  many.start = StartPolicy::kRandom;
  many.start_seed = 99;
  GoalSetSpec nominal = one;
  nominal.start_seed = 7;
  const auto a = makeGoals(m, nominal, 42, "");
  const auto b = makeGoals(m, many, 42, "");
  ASSERT_EQ(b.size(), 20u);
  for (int t = 0; t < 5; ++t)
    for (int k = 0; k < 4; ++k) {
      EXPECT_TRUE(b[t * 4 + k].goals[0].target_position.isApprox(a[t].goals[0].target_position, 0.0));
      if (k > 0) EXPECT_FALSE(b[t * 4 + k].q0.isApprox(b[t * 4].q0));
    }
  EXPECT_EQ(a[0].q0, m->middleConfiguration());
}

// IKFast's targets: about half the joints sit on 0, +-pi/2 or pi (those in
// their limits), every configuration within the limits.
TEST(AnswerQuality, IkfastTargetsHitDegenerateJointValues) {
  const auto m = planarChain({0.3, 0.3, 0.3, 0.3});  // no limits: all four values allowed
  GoalSetSpec g;
  g.count = 400;
  g.type = GoalSetType::kIkfast;
  g.start = StartPolicy::kNear;
  g.near_distance = 0.0;  // the start is the target's own configuration
  const auto problems = makeGoals(m, g, 5, "");
  int special = 0, total = 0;
  for (const Problem& p : problems)
    for (int i = 0; i < 4; ++i, ++total)
      for (double v : {0.0, M_PI / 2, -M_PI / 2, M_PI}) special += p.q0[i] == v;
  EXPECT_GT(special, total * 0.4);
  EXPECT_LT(special, total * 0.6);
}

// A path is smooth: consecutive targets' configurations differ little, and
// its joint acceleration is bounded by the sum of its harmonics.
TEST(AnswerQuality, PathTargetsAreSmoothAndWithinLimits) {
  const auto m = limitedChain();
  GoalSetSpec g;
  g.count = 400;
  g.type = GoalSetType::kPath;
  g.kind = GoalKind::kPose;
  g.start = StartPolicy::kPrevious;
  g.frame_rate = 100;
  const auto problems = makeGoals(m, g, 8, "");
  ASSERT_EQ(problems.size(), 400u);
  // Problem k > 0 starts from the target configuration of k - 1: the path.
  double largest = 0.0;
  for (size_t k = 2; k < problems.size(); ++k) {
    EXPECT_TRUE(withinLimits(*m, problems[k].q0));
    largest = std::max(largest, (problems[k].q0 - problems[k - 1].q0).cwiseAbs().maxCoeff());
  }
  // |dq/dt| <= radius * omega * (1 + 1 + 1) / (11/6) with radius <= pi, omega = 2 pi / 4 s.
  EXPECT_LT(largest, M_PI * (2 * M_PI / 4.0) * 3.0 / (11.0 / 6.0) / 100.0);
  EXPECT_GT(largest, 0.0);
  g.starts = 2;
  EXPECT_THROW(makeGoals(m, g, 8, ""), std::invalid_argument);
}

}  // namespace
}  // namespace ikbench
