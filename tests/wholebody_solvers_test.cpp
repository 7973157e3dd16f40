// The whole-body backends `nullspace` and `hqp` (solvers/src/wholebody/) on a
// small tree: a base that slides in the plane with two 3-link planar limbs,
// a "leg" ending in a foot and an "arm" ending in a hand. Every figure is
// checked by forward kinematics of the returned configuration.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::fixed;
using test::revolute;

constexpr int kFoot = 5, kHand = 9;

JointSpec slider(const std::string& name, int parent, const Eigen::Vector3d& axis) {
  JointSpec j;
  j.name = name;
  j.parent = parent;
  j.type = JointType::kPrismatic;
  j.axis = axis;
  j.lower = Eigen::VectorXd::Constant(1, -5.0);
  j.upper = Eigen::VectorXd::Constant(1, 5.0);
  return j;
}

// Base sliding in x and y; leg a1-a3 and arm b1-b3 (hinges about z, links of
// 0.5 m, limits +-3 rad) in the x-y plane; foot (5) and hand (9) at their tips.
std::shared_ptr<const Model> twoLimbs() {
  std::vector<JointSpec> j = {slider("base_x", -1, Eigen::Vector3d::UnitX()),
                              slider("base_y", 0, Eigen::Vector3d::UnitY())};
  for (const char* limb : {"a", "b"}) {
    const int first = static_cast<int>(j.size());
    const Eigen::Vector3d start = limb[0] == 'a' ? Eigen::Vector3d(0, -0.2, 0) : Eigen::Vector3d(0, 0.2, 0);
    for (int k = 0; k < 3; ++k) {
      j.push_back(revolute(std::string(limb) + std::to_string(k + 1), k == 0 ? 1 : first + k - 1,
                           k == 0 ? start : Eigen::Vector3d(0.5, 0, 0), Eigen::Vector3d::UnitZ()));
      j.back().lower = Eigen::VectorXd::Constant(1, -3.0);
      j.back().upper = Eigen::VectorXd::Constant(1, 3.0);
    }
    j.push_back(fixed(limb[0] == 'a' ? "foot" : "hand", first + 2, {0.5, 0, 0}));
  }
  return std::make_shared<const Model>(std::move(j), "two-limbs");
}

Eigen::Vector3d pointOf(const Model& model, const Eigen::VectorXd& q, int body) {
  Data d(model);
  forwardKinematics(model, q, d);
  return d.world_T_body[body].p;
}

Goal positionGoal(int body, const Eigen::Vector3d& target, int priority) {
  Goal g;
  g.body = body;
  g.kind = GoalKind::kPosition;
  g.target_position = target;
  g.priority = priority;
  return g;
}

Problem problemOf(std::shared_ptr<const Model> model, std::vector<Goal> goals, Eigen::VectorXd q0) {
  Problem p;
  p.model = std::move(model);
  p.goals = std::move(goals);
  p.q0 = std::move(q0);
  p.name = "two-limbs";
  return p;
}

Eigen::VectorXd bentStart() {
  Eigen::VectorXd q(8);
  q << 0.0, 0.0, -0.6, 0.5, 0.4, 1.2, -0.3, -0.2;
  return q;
}

// Level 0: the foot stays where it is. Level 1: the hand reaches for a point
// 4 m beyond the foot, further than leg and arm together can stretch (3 m
// plus the 0.4 m between the hips), so the levels conflict. Strict priority
// keeps the foot planted; the weighted sum (dls) lets it slide toward the
// hand's target.
TEST(WholebodySolvers, PriorityKeepsThePlantedFootWeightingLetsItSlide) {
  const auto model = twoLimbs();
  const Eigen::VectorXd q0 = bentStart();
  const Eigen::Vector3d foot = pointOf(*model, q0, kFoot);
  const Eigen::Vector3d target = foot + Eigen::Vector3d(4.0, 0.5, 0.0);
  const Problem p = problemOf(model, {positionGoal(kFoot, foot, 0), positionGoal(kHand, target, 1)}, q0);
  SolverOptions o;
  o.max_iterations = 300;
  for (const char* spec : {"hqp", "nullspace"}) {
    SCOPED_TRACE(spec);
    Eigen::VectorXd q = q0;
    const Summary s = Registry::global().create(spec)->solve(p, q, o);
    EXPECT_FALSE(s.converged());  // level 1 is out of reach
    EXPECT_LE((pointOf(*model, q, kFoot) - foot).norm(), o.position_tolerance) << s.message;
    const double hand_error = (pointOf(*model, q, kHand) - target).norm();
    EXPECT_LT(hand_error, (pointOf(*model, q0, kHand) - target).norm() - 1.0) << "level 1 made progress";
    // No closer than the limbs allow with the foot in place: 3 m of links and
    // 0.4 m between the hips.
    EXPECT_GE(hand_error, (target - foot).norm() - 3.4 - 1e-4);
  }
  Eigen::VectorXd q = q0;
  const Summary s = Registry::global().create("dls")->solve(p, q, o);
  EXPECT_FALSE(s.converged());
  EXPECT_GT((pointOf(*model, q, kFoot) - foot).norm(), 0.1) << "the weighted sum keeps the foot: no conflict tested";
  // Without the restoration steps the arm's second-order motion at the
  // stretched leg drags the foot off and the iteration settles there.
  q = q0;
  Registry::global().create("hqp:restore_steps=0")->solve(p, q, o);
  EXPECT_GT((pointOf(*model, q, kFoot) - foot).norm(), 1e-3);
}

// Level 0: the foot planted. Level 1: the hand stays above the line y >= 0.6
// (a half-space bound, -y <= -0.6). Level 2: the hand reaches for a point
// below it. hqp and nullspace hold the bound and get the hand as close as the
// bound allows; the weighted sum pulls the hand below the line.
TEST(WholebodySolvers, AnInequalityAtAHigherLevelHoldsAgainstALowerGoal) {
  const auto model = twoLimbs();
  const Eigen::VectorXd q0 = bentStart();
  const Eigen::Vector3d foot = pointOf(*model, q0, kFoot);
  ASSERT_GT(pointOf(*model, q0, kHand).y(), 0.6) << "the start satisfies the bound";
  Goal above;
  above.body = kHand;
  above.kind = GoalKind::kPosition;
  above.priority = 1;
  above.bound.kind = BoundKind::kHalfSpaces;
  above.bound.normals.resize(1, 3);
  above.bound.normals << 0, -1, 0;
  above.bound.offsets = Eigen::VectorXd::Constant(1, -0.6);
  const Eigen::Vector3d target(1.0, -0.2, 0.0);
  const Problem p = problemOf(model, {positionGoal(kFoot, foot, 0), above, positionGoal(kHand, target, 2)}, q0);
  SolverOptions o;
  o.max_iterations = 300;
  for (const char* spec : {"hqp", "nullspace"}) {
    SCOPED_TRACE(spec);
    Eigen::VectorXd q = q0;
    const Summary s = Registry::global().create(spec)->solve(p, q, o);
    EXPECT_LE((pointOf(*model, q, kFoot) - foot).norm(), o.position_tolerance) << s.message;
    const Eigen::Vector3d hand = pointOf(*model, q, kHand);
    EXPECT_GE(hand.y(), 0.6 - o.position_tolerance) << "the bound holds";
    // The hand ends on the line, over the target: the closest point the bound allows.
    EXPECT_NEAR(hand.y(), 0.6, 1e-4);
    EXPECT_NEAR(hand.x(), target.x(), 1e-3);
  }
  Eigen::VectorXd q = q0;
  Registry::global().create("dls")->solve(p, q, o);
  EXPECT_LT(pointOf(*model, q, kHand).y(), 0.6 - 1e-2) << "the weighted sum leaves the bound soft";
}

// One level: both backends take the dls step with the same lambda (one
// iteration from the same start agrees to rounding) and converge on a
// reachable target.
TEST(WholebodySolvers, OneLevelIsDampedLeastSquares) {
  const auto model = twoLimbs();
  const Eigen::VectorXd q0 = bentStart();
  const Eigen::Vector3d target = pointOf(*model, q0, kHand) + Eigen::Vector3d(0.3, -0.2, 0);
  const Problem p = problemOf(model, {positionGoal(kHand, target, 0)}, q0);
  SolverOptions one;
  one.max_iterations = 1;
  Eigen::VectorXd q_dls = q0;
  Registry::global().create("dls:kernel=generic")->solve(p, q_dls, one);
  ASSERT_GT((q_dls - q0).norm(), 1e-3);
  for (const char* spec : {"hqp", "nullspace"}) {
    SCOPED_TRACE(spec);
    Eigen::VectorXd q = q0;
    Registry::global().create(spec)->solve(p, q, one);
    EXPECT_LT((q - q_dls).norm(), 1e-9);
    q = q0;
    SolverOptions o;
    const Summary s = Registry::global().create(spec)->solve(p, q, o);
    EXPECT_TRUE(s.converged()) << s.message;
    EXPECT_LE((pointOf(*model, q, kHand) - target).norm(), o.position_tolerance);
  }
}

// The joint limits hold inside the loop: with a hinge's limits narrowed, the
// answer stays within them and the level is met as far as they allow.
TEST(WholebodySolvers, JointLimitsHold) {
  std::vector<JointSpec> joints;
  const auto base = twoLimbs();
  for (int i = 0; i < base->numJoints(); ++i) joints.push_back(base->joint(i));
  joints[6].lower = Eigen::VectorXd::Constant(1, 1.0);  // b1 (q[5]) in [1.0, 1.3]
  joints[6].upper = Eigen::VectorXd::Constant(1, 1.3);
  const auto model = std::make_shared<const Model>(std::move(joints), "narrow");
  const Eigen::VectorXd q0 = bentStart();
  const Eigen::Vector3d foot = pointOf(*model, q0, kFoot);
  const Problem p = problemOf(
      model,
      {positionGoal(kFoot, foot, 0), positionGoal(kHand, pointOf(*model, q0, kHand) + Eigen::Vector3d(0, -1.2, 0), 1)},
      q0);
  for (const char* spec : {"hqp", "nullspace"}) {
    SCOPED_TRACE(spec);
    Eigen::VectorXd q = q0;
    SolverOptions o;
    const Summary s = Registry::global().create(spec)->solve(p, q, o);
    EXPECT_TRUE(withinLimits(*model, q, 1e-12));
    EXPECT_LE((pointOf(*model, q, kFoot) - foot).norm(), o.position_tolerance) << s.message;
  }
}

}  // namespace
}  // namespace ikbench
