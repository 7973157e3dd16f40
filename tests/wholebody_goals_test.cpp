// Whole-body goals: centre of mass, inequality bounds, priority levels and the
// per-goal rows a hierarchical solver takes (goalRows), each checked against
// hand computation or central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/rng.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::fixed;
using test::revolute;

double maxAbsDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.size() == 0 && b.size() == 0 ? 0.0 : (a - b).cwiseAbs().maxCoeff();
}

// Planar two-link arm about +z: link 1 (length 1, mass 2) with its centre of
// mass at its middle, link 2 (length 0.8, mass 1) likewise.
std::shared_ptr<const Model> twoLink() {
  JointSpec a = revolute("shoulder", -1, {0, 0, 0}, {0, 0, 1});
  a.body_mass = 2.0;
  a.body_com = Eigen::Vector3d(0.5, 0, 0);
  JointSpec b = revolute("elbow", 0, {1.0, 0, 0}, {0, 0, 1});
  b.body_mass = 1.0;
  b.body_com = Eigen::Vector3d(0.4, 0, 0);
  return std::make_shared<const Model>(std::vector<JointSpec>{a, b}, "two-link");
}

// Every joint type in a tree with masses on most bodies (one massless).
std::shared_ptr<const Model> massTree() {
  std::vector<JointSpec> j;
  JointSpec root;
  root.name = "root";
  root.type = JointType::kFree;
  root.parent_T_joint.p = Eigen::Vector3d(0.1, -0.2, 0.3);
  root.body_mass = 10.0;
  root.body_com = Eigen::Vector3d(0.0, 0.02, 0.1);
  j.push_back(root);
  JointSpec ball;
  ball.name = "ball";
  ball.parent = 0;
  ball.type = JointType::kBall;
  ball.parent_T_joint.p = Eigen::Vector3d(0, 0, 0.4);
  ball.parent_T_joint.R = Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  ball.body_mass = 3.0;
  ball.body_com = Eigen::Vector3d(0.15, 0.0, 0.01);
  j.push_back(ball);
  JointSpec elbow = revolute("elbow", 1, {0.3, 0.05, 0}, Eigen::Vector3d(0.2, 1, -0.4));
  elbow.body_mass = 1.5;
  elbow.body_com = Eigen::Vector3d(0.12, 0.01, 0);
  j.push_back(elbow);
  JointSpec slide;
  slide.name = "slide";
  slide.parent = 2;
  slide.type = JointType::kPrismatic;
  slide.axis = Eigen::Vector3d(1, 0.5, 0.1);
  slide.parent_T_joint.p = Eigen::Vector3d(0.25, 0, 0.02);
  slide.body_mass = 0.5;
  slide.body_com = Eigen::Vector3d(0.05, 0, 0);
  j.push_back(slide);
  j.push_back(fixed("hand", 3, {0.1, 0.02, -0.03}));  // massless
  JointSpec other = revolute("other", 0, {-0.2, 0.1, 0}, Eigen::Vector3d(1, 0, 0));
  other.body_mass = 4.0;
  other.body_com = Eigen::Vector3d(0, 0, -0.25);
  j.push_back(other);
  JointSpec foot = fixed("foot", 5, {0, 0, -0.5});
  foot.body_mass = 1.0;
  j.push_back(foot);
  return std::make_shared<const Model>(std::move(j), "mass-tree");
}

std::vector<Eigen::VectorXd> configurations(const Model& model) {
  std::vector<Eigen::VectorXd> out{model.neutralConfiguration()};
  Rng rng(11);
  for (int i = 0; i < 4; ++i) out.push_back(randomConfiguration(model, rng));
  return out;
}

Eigen::Vector3d comAt(const Model& model, const Eigen::VectorXd& q, int body) {
  Data d(model);
  forwardKinematics(model, q, d);
  return centreOfMass(model, d, body);
}

TEST(CentreOfMass, TwoLinkMatchesHandComputation) {
  const auto model = twoLink();
  EXPECT_DOUBLE_EQ(model->totalMass(), 3.0);
  EXPECT_DOUBLE_EQ(model->subtreeMass(1), 1.0);
  const double a = 0.7, b = -1.1;
  Eigen::VectorXd q(2);
  q << a, b;
  // c = (2 * 0.5 (cos a, sin a) + 1 * ((cos a, sin a) + 0.4 (cos(a+b), sin(a+b)))) / 3
  const Eigen::Vector3d expected((2 * 0.5 * std::cos(a) + std::cos(a) + 0.4 * std::cos(a + b)) / 3.0,
                                 (2 * 0.5 * std::sin(a) + std::sin(a) + 0.4 * std::sin(a + b)) / 3.0, 0.0);
  EXPECT_LT((comAt(*model, q, 0) - expected).norm(), 1e-14);
  // The subtree of the elbow holds link 2 only.
  const Eigen::Vector3d link2(std::cos(a) + 0.4 * std::cos(a + b), std::sin(a) + 0.4 * std::sin(a + b), 0);
  EXPECT_LT((comAt(*model, q, 1) - link2).norm(), 1e-14);
  // A goal on it reports the distance as its error.
  Goal g;
  g.kind = GoalKind::kCentreOfMass;
  g.body = 0;
  g.target_position = expected + Eigen::Vector3d(0.03, -0.04, 0);
  Data d(*model);
  forwardKinematics(*model, q, d);
  EXPECT_NEAR(evaluateGoals(*model, {g}, d).position, 0.05, 1e-12);
}

TEST(CentreOfMass, JacobianMatchesFiniteDifferencesInBothModes) {
  const auto model = massTree();
  std::vector<Goal> goals;
  for (int body : {0, 1, 2, 5}) {
    Goal g;
    g.kind = GoalKind::kCentreOfMass;
    g.body = body;
    g.target_position = Eigen::Vector3d(0.3, 0.1, -0.2);
    g.weight = 0.5 + body;
    goals.push_back(g);
  }
  Goal point;  // a point goal mixed in keeps the row bookkeeping honest
  point.kind = GoalKind::kPose;
  point.body = 4;
  point.point = Eigen::Vector3d(0.01, 0, 0);
  goals.push_back(point);
  Data d(*model);
  for (const Eigen::VectorXd& q : configurations(*model)) {
    forwardKinematics(*model, q, d);
    evaluateGoals(*model, goals, d);
    goalJacobian(*model, goals, d, JacobianMode::kExactResidual);
    const Eigen::MatrixXd numeric = test::numericResidualJacobian(*model, goals, q);
    EXPECT_LT(maxAbsDiff(d.J, numeric), 1e-7) << q.transpose();
    goalJacobian(*model, goals, d, JacobianMode::kGeometric);
    // COM rows are position rows: the same in both modes.
    EXPECT_LT(maxAbsDiff(d.J.topRows(12), numeric.topRows(12)), 1e-7);
  }
}

TEST(CentreOfMass, WrongJacobianIsCaught) {
  // The check above fails for a Jacobian that ignores the descendants'
  // share (what J_i(c_b) of the subtree root alone would give).
  const auto model = massTree();
  Goal g;
  g.kind = GoalKind::kCentreOfMass;
  g.body = 0;
  Goal naive = g;
  naive.kind = GoalKind::kPosition;
  Data d(*model);
  const Eigen::VectorXd q = configurations(*model)[2];
  forwardKinematics(*model, q, d);
  naive.point = d.world_T_body[0].inverse().act(centreOfMass(*model, d, 0));
  evaluateGoals(*model, {naive}, d);
  goalJacobian(*model, {naive}, d);
  EXPECT_GT(maxAbsDiff(d.J, test::numericResidualJacobian(*model, {g}, q)), 1e-2);
}

TEST(Problem, RefusesCentreOfMassWithoutMass) {
  Problem p;
  p.model = test::planarChain({0.5, 0.4});  // no masses
  p.q0 = p.model->neutralConfiguration();
  Goal g;
  g.kind = GoalKind::kCentreOfMass;
  g.body = 0;
  p.goals = {g};
  std::string why;
  EXPECT_FALSE(p.isValid(&why));
  EXPECT_NE(why.find("total mass 0"), std::string::npos) << why;
  // And on a massless subtree of a massive model.
  p.model = massTree();
  p.q0 = p.model->neutralConfiguration();
  p.goals[0].body = p.model->bodyIndex("hand");
  EXPECT_FALSE(p.isValid(&why));
  p.goals[0].body = p.model->bodyIndex("slide");
  EXPECT_TRUE(p.isValid(&why)) << why;
}

TEST(Model, RejectsBadMasses) {
  JointSpec a = revolute("a", -1, {0, 0, 0}, {0, 0, 1});
  a.body_mass = -1.0;
  EXPECT_THROW(Model({a}), ModelError);
  a.body_mass = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(Model({a}), ModelError);
  a.body_mass = 1.0;
  a.body_com.x() = std::numeric_limits<double>::infinity();
  try {
    Model m({a});
    FAIL() << "accepted an infinite centre of mass";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("centre of mass"), std::string::npos) << e.what();
  }
}

// A bounded goal per bound kind on a point and on the COM.
std::vector<Goal> boundedGoals(const Model& model, const Data& d) {
  std::vector<Goal> goals;
  const Eigen::Vector3d hand = d.world_T_body[model.bodyIndex("hand")].p;
  const Eigen::Vector3d com = centreOfMass(model, d, 0);
  Goal box;  // a box around the COM, shifted so that two faces are violated
  box.kind = GoalKind::kCentreOfMass;
  box.body = 0;
  box.bound.kind = BoundKind::kHalfSpaces;
  box.bound.normals.resize(6, 3);
  box.bound.offsets.resize(6);
  const Eigen::Vector3d lo = com + Eigen::Vector3d(0.02, -0.1, -0.1), hi = com + Eigen::Vector3d(0.1, 0.1, -0.03);
  for (int k = 0; k < 3; ++k) {
    box.bound.normals.row(2 * k) = Eigen::Vector3d::Unit(k).transpose();
    box.bound.offsets[2 * k] = hi[k];
    box.bound.normals.row(2 * k + 1) = -Eigen::Vector3d::Unit(k).transpose();
    box.bound.offsets[2 * k + 1] = -lo[k];
  }
  box.weight = 2.0;
  goals.push_back(box);
  Goal inside;  // violated: the hand is 0.3 from the centre, radius 0.2
  inside.kind = GoalKind::kPosition;
  inside.body = model.bodyIndex("hand");
  inside.bound.kind = BoundKind::kInsideBall;
  inside.bound.centre = hand + Eigen::Vector3d(0.3, 0, 0);
  inside.bound.radius = 0.2;
  goals.push_back(inside);
  Goal outside = inside;  // violated: 0.25 from the centre, radius 0.4
  outside.bound.kind = BoundKind::kOutsideBall;
  outside.bound.centre = hand + Eigen::Vector3d(0, 0.15, -0.2);
  outside.bound.radius = 0.4;
  goals.push_back(outside);
  return goals;
}

TEST(Bounds, ResidualErrorsAndJacobianMatchFiniteDifferences) {
  const auto model = massTree();
  Data d(*model);
  const Eigen::VectorXd q = configurations(*model)[1];
  forwardKinematics(*model, q, d);
  const std::vector<Goal> goals = boundedGoals(*model, d);
  EXPECT_EQ(totalRows(goals), 8);
  const GoalErrors e = evaluateGoals(*model, goals, d);
  EXPECT_NEAR(d.goal_position_error[0], 0.03, 1e-12);  // below the box by 0.02, above by 0.03
  EXPECT_NEAR(d.goal_position_error[1], 0.1, 1e-12);
  EXPECT_NEAR(d.goal_position_error[2], 0.4 - 0.25, 1e-12);
  EXPECT_NEAR(e.position, 0.15, 1e-12);
  // Box rows: x >= lo.x violated by 0.02 (row 1), z <= hi.z by 0.03 (row 4); weight 2.
  EXPECT_NEAR(d.residual[1], -2 * 0.02, 1e-12);
  EXPECT_NEAR(d.residual[4], -2 * 0.03, 1e-12);
  for (int k : {0, 2, 3, 5}) EXPECT_EQ(d.residual[k], 0.0) << k;
  EXPECT_NEAR(d.residual[6], -0.1, 1e-12);
  EXPECT_NEAR(d.residual[7], -0.15, 1e-12);
  for (JacobianMode mode : {JacobianMode::kGeometric, JacobianMode::kExactResidual}) {
    goalJacobian(*model, goals, d, mode);
    EXPECT_LT(maxAbsDiff(d.J, test::numericResidualJacobian(*model, goals, q)), 1e-7);
    for (int k : {0, 2, 3, 5}) EXPECT_EQ(d.J.row(k).cwiseAbs().maxCoeff(), 0.0) << k;
  }
}

TEST(Bounds, SatisfiedBoundsHaveZeroErrorAndRows) {
  const auto model = massTree();
  Data d(*model);
  const Eigen::VectorXd q = configurations(*model)[3];
  forwardKinematics(*model, q, d);
  std::vector<Goal> goals = boundedGoals(*model, d);
  const Eigen::Vector3d com = centreOfMass(*model, d, 0);
  goals[0].bound.offsets << com.x() + 0.1, -(com.x() - 0.1), com.y() + 0.1, -(com.y() - 0.1), com.z() + 0.1,
      -(com.z() - 0.1);
  goals[1].bound.radius = 0.35;
  goals[2].bound.radius = 0.2;
  const GoalErrors e = evaluateGoals(*model, goals, d);
  EXPECT_EQ(e.position, 0.0);
  EXPECT_EQ(d.residual.cwiseAbs().maxCoeff(), 0.0);
  goalJacobian(*model, goals, d);
  EXPECT_EQ(d.J.cwiseAbs().maxCoeff(), 0.0);
  // A satisfied target goal has zero error too.
  Goal at;
  at.kind = GoalKind::kCentreOfMass;
  at.body = 0;
  at.target_position = com;
  EXPECT_LT(evaluateGoals(*model, {at}, d).position, 1e-15);
}

TEST(Bounds, ProblemValidationNamesTheField) {
  Problem p;
  p.model = massTree();
  p.q0 = p.model->neutralConfiguration();
  Data d(*p.model);
  forwardKinematics(*p.model, p.q0, d);
  p.goals = boundedGoals(*p.model, d);
  std::string why;
  EXPECT_TRUE(p.isValid(&why)) << why;
  auto expectRefused = [&](const std::string& needle) {
    EXPECT_FALSE(p.isValid(&why));
    EXPECT_NE(why.find(needle), std::string::npos) << why;
  };
  Problem saved = p;
  p.goals[0].bound.normals(2, 0) = 0.5;
  expectRefused("unit vector");
  p = saved;
  p.goals[0].bound.offsets.resize(5);
  expectRefused("6 normals and 5 offsets");
  p = saved;
  p.goals[1].bound.radius = -0.1;
  expectRefused("radius");
  p = saved;
  p.goals[1].kind = GoalKind::kPose;
  expectRefused("needs a position or com goal");
  p = saved;
  p.goals[2].priority = -1;
  expectRefused("priority");
}

TEST(GoalRows, EqualityRowsMatchTheUnweightedGoalJacobian) {
  const auto model = massTree();
  Data d(*model);
  const Eigen::VectorXd q = configurations(*model)[2];
  forwardKinematics(*model, q, d);
  Goal pose;
  pose.kind = GoalKind::kPose;
  pose.body = model->bodyIndex("hand");
  pose.point = Eigen::Vector3d(0.02, 0.01, 0);
  pose.target_position = Eigen::Vector3d(0.2, 0.3, 0.4);
  pose.target_orientation = Eigen::AngleAxisd(0.4, Eigen::Vector3d::UnitY()).toRotationMatrix();
  pose.orientation_scale = 0.3;
  pose.weight = 5.0;
  Goal com;
  com.kind = GoalKind::kCentreOfMass;
  com.body = 1;
  com.target_position = Eigen::Vector3d(0.1, 0.0, 0.6);
  com.weight = 3.0;
  for (const Goal& g : {pose, com}) {
    Goal unit = g;
    unit.weight = 1.0;
    evaluateGoals(*model, {unit}, d);
    goalJacobian(*model, {unit}, d);
    const GoalRows rows = goalRows(*model, g, d);
    EXPECT_LT(maxAbsDiff(rows.J, d.J), 1e-14) << toString(g.kind);
    EXPECT_LT(maxAbsDiff(rows.r, d.residual), 1e-14) << toString(g.kind);
    EXPECT_EQ(rows.C.rows(), 0);
    EXPECT_EQ(rows.C.cols(), model->nv());
    EXPECT_EQ(rows.upper.size(), 0);
  }
}

TEST(GoalRows, InequalityRowsLineariseTheBound) {
  // C dq <= upper is the first-order model of the bound: for small steps the
  // predicted slack upper - C dq matches the exact slack to O(|dq|^2).
  const auto model = massTree();
  Data d(*model);
  const Eigen::VectorXd q = configurations(*model)[4];
  forwardKinematics(*model, q, d);
  const std::vector<Goal> goals = boundedGoals(*model, d);
  Rng rng(5);
  for (const Goal& g : goals) {
    const GoalRows rows = goalRows(*model, g, d);
    ASSERT_EQ(rows.C.rows(), g.bound.rows());
    EXPECT_EQ(rows.J.rows(), 0);
    // The slack at dq = 0: d_i - n_i . p (negative where violated).
    const Eigen::Vector3d p = goalPosition(*model, g, d);
    if (g.bound.kind == BoundKind::kHalfSpaces) {
      EXPECT_LT(maxAbsDiff(rows.upper, g.bound.offsets - g.bound.normals * p), 1e-14);
    } else {
      const double dist = (p - g.bound.centre).norm();
      const double slack = g.bound.kind == BoundKind::kInsideBall ? g.bound.radius - dist : dist - g.bound.radius;
      EXPECT_NEAR(rows.upper[0], slack, 1e-14);
    }
    Eigen::VectorXd dir(model->nv());
    for (int k = 0; k < dir.size(); ++k) dir[k] = rng.uniform(-1, 1);
    for (double h : {1e-3, 1e-4}) {
      Data dh(*model);
      forwardKinematics(*model, integrate(*model, q, h * dir), dh);
      const GoalRows at = goalRows(*model, g, dh);
      const Eigen::VectorXd predicted = rows.upper - rows.C * (h * dir);
      EXPECT_LT(maxAbsDiff(at.upper, predicted), 50 * h * h) << toString(g.bound.kind) << " h=" << h;
    }
  }
}

TEST(Levels, SortedDistinctPrioritiesAndPerLevelErrors) {
  const auto model = twoLink();
  Problem p;
  p.model = model;
  p.q0 = Eigen::Vector2d(0.3, 0.4);
  Data d(*model);
  forwardKinematics(*model, p.q0, d);
  Goal tip;
  tip.body = 1;
  tip.point = Eigen::Vector3d(0.8, 0, 0);
  tip.priority = 2;
  tip.target_position = effectorPosition(tip, d) + Eigen::Vector3d(0.1, 0, 0);
  Goal com;
  com.kind = GoalKind::kCentreOfMass;
  com.body = 0;
  com.priority = 0;
  com.target_position = centreOfMass(*model, d, 0);
  Goal elbow;
  elbow.body = 1;
  elbow.priority = 2;
  elbow.target_position = d.world_T_body[1].p + Eigen::Vector3d(0, 0.2, 0);
  p.goals = {tip, com, elbow};
  EXPECT_EQ(p.levels(), (std::vector<int>{0, 2}));
  EXPECT_EQ(p.goalsAtLevel(2), (std::vector<int>{0, 2}));
  EXPECT_TRUE(p.isWholeBody());
  const std::vector<GoalErrors> errors = levelErrors(*model, p, d);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_LT(errors[0].position, 1e-15);
  EXPECT_NEAR(errors[1].position, 0.2, 1e-12);
  EXPECT_NEAR(errors[1].weighted_norm, std::hypot(0.1, 0.2), 1e-12);
  // One level of point targets is an ordinary problem.
  p.goals = {tip, elbow};
  EXPECT_FALSE(p.isWholeBody());
  p.goals[1].priority = 3;
  EXPECT_TRUE(p.isWholeBody());
}

}  // namespace
}  // namespace ikbench
