// Forward kinematics, Jacobians, configuration helpers and model validation.
#include <ceres/jet.h>
#include <Eigen/Geometry>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "ikbench/kinematics/atan2.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/kinematics/sincos.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::fixed;
using test::planarChain;
using test::revolute;
constexpr double kPi = std::numbers::pi;

Eigen::Vector3d tipPosition(const Model& model, const Eigen::VectorXd& q) {
  Data d(model);
  forwardKinematics(model, q, d);
  return d.world_T_body.back().p;
}

TEST(ForwardKinematics, PlanarChainsMatchClosedForm) {
  for (const std::vector<double>& lengths : {std::vector<double>{0.7, 0.4}, std::vector<double>{0.5, 0.3, 0.2}}) {
    const auto model = planarChain(lengths);
    Rng rng(42);
    for (int trial = 0; trial < 20; ++trial) {
      Eigen::VectorXd q(lengths.size());
      for (int i = 0; i < q.size(); ++i) q[i] = rng.uniform(-kPi, kPi);
      // x = sum_i l_i cos(theta_1 + ... + theta_i), y likewise with sin.
      double x = 0, y = 0, angle = 0;
      for (size_t i = 0; i < lengths.size(); ++i) {
        angle += q[i];
        x += lengths[i] * std::cos(angle);
        y += lengths[i] * std::sin(angle);
      }
      const Eigen::Vector3d p = tipPosition(*model, q);
      EXPECT_NEAR(p.x(), x, 1e-14);
      EXPECT_NEAR(p.y(), y, 1e-14);
      EXPECT_NEAR(p.z(), 0.0, 1e-14);
    }
  }
}

TEST(ForwardKinematics, BallJointRotatesTheLink) {
  JointSpec ball;
  ball.name = "ball";
  ball.type = JointType::kBall;
  ball.parent_T_joint.p = Eigen::Vector3d(0, 0, 1);
  std::vector<JointSpec> joints{ball, fixed("tip", 0, {0.5, 0, 0})};
  const Model model(joints, "ball");
  EXPECT_EQ(model.nq(), 4);
  EXPECT_EQ(model.nv(), 3);
  const Eigen::Quaterniond r(Eigen::AngleAxisd(kPi / 2, Eigen::Vector3d::UnitZ()));
  Eigen::VectorXd q(4);
  q << r.x(), r.y(), r.z(), r.w();
  // Rotating (0.5, 0, 0) by 90 degrees about z gives (0, 0.5, 0), above the joint at z = 1.
  EXPECT_TRUE(tipPosition(model, q).isApprox(Eigen::Vector3d(0, 0.5, 1), 1e-14));
}

TEST(ForwardKinematics, PrismaticJointTranslatesAlongItsAxis) {
  JointSpec slide;
  slide.name = "slide";
  slide.type = JointType::kPrismatic;
  slide.axis = Eigen::Vector3d(0, 2, 0);  // normalised by the model
  slide.parent_T_joint.p = Eigen::Vector3d(1, 0, 0);
  slide.parent_T_joint.R = Eigen::AngleAxisd(kPi / 2, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  const Model model({slide, fixed("tip", 0, {0, 0, 0.1})}, "slider");
  Eigen::VectorXd q(1);
  q << 0.3;
  // The joint frame is rotated 90 degrees about z, so its y axis is world -x.
  EXPECT_TRUE(tipPosition(model, q).isApprox(Eigen::Vector3d(1 - 0.3, 0, 0.1), 1e-14));
}

TEST(ForwardKinematics, TreeBranchesAreIndependent) {
  // Root hinge about z; two branches of length 1 along +x and -x with their own hinges.
  std::vector<JointSpec> joints{revolute("root", -1, {0, 0, 0}, {0, 0, 1}),
                                revolute("left", 0, {1, 0, 0}, {0, 0, 1}),
                                revolute("right", 0, {-1, 0, 0}, {0, 0, 1}),
                                fixed("left_tip", 1, {1, 0, 0}), fixed("right_tip", 2, {-1, 0, 0})};
  const Model model(joints, "tree");
  EXPECT_FALSE(model.isChain());
  EXPECT_EQ(model.leaves(), (std::vector<int>{3, 4}));
  Eigen::VectorXd q(3);
  q << kPi / 2, kPi / 2, 0.0;
  Data d(model);
  forwardKinematics(model, q, d);
  // Root turns both branches by 90 degrees; the left hinge turns its tip by 90 more.
  EXPECT_TRUE(d.world_T_body[3].p.isApprox(Eigen::Vector3d(-1, 1, 0), 1e-14));
  EXPECT_TRUE(d.world_T_body[4].p.isApprox(Eigen::Vector3d(0, -2, 0), 1e-14));
}

// A tree with every joint type: free root, ball, revolute, prismatic, fixed.
std::shared_ptr<const Model> everyJointModel() {
  std::vector<JointSpec> joints;
  JointSpec root;
  root.name = "root";
  root.type = JointType::kFree;
  root.parent_T_joint.p = Eigen::Vector3d(0.1, -0.2, 0.3);
  joints.push_back(root);
  JointSpec ball;
  ball.name = "ball";
  ball.parent = 0;
  ball.type = JointType::kBall;
  ball.parent_T_joint.p = Eigen::Vector3d(0, 0, 0.4);
  ball.parent_T_joint.R = Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  joints.push_back(ball);
  joints.push_back(revolute("elbow", 1, {0.3, 0.05, 0}, Eigen::Vector3d(0.2, 1, -0.4)));
  JointSpec slide;
  slide.name = "slide";
  slide.parent = 2;
  slide.type = JointType::kPrismatic;
  slide.axis = Eigen::Vector3d(1, 0.5, 0.1);
  slide.parent_T_joint.p = Eigen::Vector3d(0.25, 0, 0.02);
  joints.push_back(slide);
  joints.push_back(fixed("hand", 3, {0.1, 0.02, -0.03}));
  joints.push_back(revolute("other", 0, {-0.2, 0.1, 0}, Eigen::Vector3d(1, 0, 0)));
  joints.push_back(fixed("foot", 5, {0, 0, -0.5}));
  // Principal axes with negative signs and a rotated rest frame: the FK and
  // Jacobian shortcuts for axes +-e_k (Model::principalAxis).
  JointSpec neg = revolute("neg-z", 5, {0, 0.2, 0.1}, Eigen::Vector3d(0, 0, -1));
  neg.parent_T_joint.R = Eigen::AngleAxisd(-0.7, Eigen::Vector3d(0.3, -1, 0.2).normalized()).toRotationMatrix();
  joints.push_back(neg);
  JointSpec push;
  push.name = "push";
  push.parent = 7;
  push.type = JointType::kPrismatic;
  push.axis = Eigen::Vector3d(0, -2, 0);
  push.parent_T_joint.p = Eigen::Vector3d(0.1, 0, 0.05);
  joints.push_back(push);
  joints.push_back(revolute("pos-y", 8, {0.05, 0.1, 0}, Eigen::Vector3d(0, 1, 0)));
  joints.push_back(fixed("toe", 9, {0.1, 0, 0.02}));
  return std::make_shared<const Model>(std::move(joints), "every-joint");
}

std::vector<Goal> everyGoalKind(const Model& model) {
  std::vector<Goal> goals(4);
  goals[0].body = model.bodyIndex("hand");
  goals[0].kind = GoalKind::kPose;
  goals[0].point = Eigen::Vector3d(0.05, -0.02, 0.01);
  goals[0].weight = 2.0;
  goals[0].orientation_scale = 0.5;
  goals[1].body = model.bodyIndex("foot");
  goals[1].kind = GoalKind::kPosition;
  goals[1].point = Eigen::Vector3d(0.01, 0.02, 0.03);
  goals[2].body = model.bodyIndex("elbow");
  goals[2].kind = GoalKind::kOrientation;
  // Targets away from the current pose so the exact-residual check has a
  // non-trivial Jr^-1(e).
  goals[0].target_position = Eigen::Vector3d(0.3, 0.2, 0.5);
  goals[0].target_orientation = Eigen::AngleAxisd(1.0, Eigen::Vector3d(0, 1, 1).normalized()).toRotationMatrix();
  goals[2].target_orientation = Eigen::AngleAxisd(-2.0, Eigen::Vector3d(1, 0, 1).normalized()).toRotationMatrix();
  goals[3].body = model.bodyIndex("toe");
  goals[3].kind = GoalKind::kPose;
  goals[3].point = Eigen::Vector3d(0.02, 0.01, 0);
  goals[3].target_position = Eigen::Vector3d(-0.1, 0.4, 0.2);
  goals[3].target_orientation = Eigen::AngleAxisd(0.8, Eigen::Vector3d(1, 1, 0).normalized()).toRotationMatrix();
  return goals;
}

double maxAbsDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) { return (a - b).cwiseAbs().maxCoeff(); }

// Configurations the Jacobian check runs at: identity, tiny (1e-8) and random.
std::vector<Eigen::VectorXd> checkConfigurations(const Model& model) {
  std::vector<Eigen::VectorXd> out;
  out.push_back(model.neutralConfiguration());
  out.push_back(integrate(model, model.neutralConfiguration(), Eigen::VectorXd::Constant(model.nv(), 1e-8)));
  Rng rng(7);
  for (int i = 0; i < 5; ++i) out.push_back(randomConfiguration(model, rng));
  return out;
}

// FK against an independent oracle built from Eigen's own geometry types
// (Isometry3d, AngleAxisd, Quaterniond), on every joint type and axis kind,
// including the principal-axis shortcut (negative axes, rotated rest frames).
TEST(ForwardKinematics, MatchesAnEigenGeometryOracle) {
  const auto model = everyJointModel();
  EXPECT_EQ(model->principalAxis(model->bodyIndex("neg-z")), -3);
  EXPECT_EQ(model->principalAxis(model->bodyIndex("push")), -2);
  EXPECT_EQ(model->principalAxis(model->bodyIndex("pos-y")), 2);
  EXPECT_EQ(model->principalAxis(model->bodyIndex("elbow")), 0);
  EXPECT_FALSE(model->hasOnlyScalarJoints());
  const int n = model->numJoints();
  Data d(*model);
  for (const Eigen::VectorXd& q : checkConfigurations(*model)) {
    forwardKinematics(*model, q, d);
    std::vector<Eigen::Isometry3d> T(n);
    for (int i = 0; i < n; ++i) {
      Eigen::Isometry3d rest = Eigen::Isometry3d::Identity();
      rest.linear() = model->parentTJoint(i).R;
      rest.translation() = model->parentTJoint(i).p;
      const Eigen::Isometry3d base = model->parent(i) < 0 ? rest : T[model->parent(i)] * rest;
      const double* qi = q.data() + model->idxQ(i);
      Eigen::Isometry3d motion = Eigen::Isometry3d::Identity();
      switch (model->type(i)) {
        case JointType::kRevolute: motion.linear() = Eigen::AngleAxisd(qi[0], model->axis(i)).toRotationMatrix(); break;
        case JointType::kPrismatic: motion.translation() = qi[0] * model->axis(i); break;
        case JointType::kBall:
          motion.linear() = Eigen::Quaterniond(qi[3], qi[0], qi[1], qi[2]).normalized().toRotationMatrix();
          break;
        case JointType::kFree:
          motion.translation() = Eigen::Vector3d(qi[0], qi[1], qi[2]);
          motion.linear() = Eigen::Quaterniond(qi[6], qi[3], qi[4], qi[5]).normalized().toRotationMatrix();
          break;
        case JointType::kFixed: break;
      }
      T[i] = base * motion;
      EXPECT_LT(maxAbsDiff(T[i].linear(), d.world_T_body[i].R), 1e-14) << model->bodyName(i);
      EXPECT_LT((T[i].translation() - d.world_T_body[i].p).cwiseAbs().maxCoeff(), 1e-14) << model->bodyName(i);
      EXPECT_LT(maxAbsDiff(base.linear(), d.world_R_dof[i]), 1e-14) << model->bodyName(i);
    }
  }
}

TEST(Jacobian, GeometricMatchesCentralDifferencesOnTangentSpace) {
  const auto model = everyJointModel();
  const std::vector<Goal> goals = everyGoalKind(*model);
  Data d(*model);
  const double tol = std::sqrt(std::numeric_limits<double>::epsilon());
  for (const Eigen::VectorXd& q : checkConfigurations(*model)) {
    forwardKinematics(*model, q, d);
    evaluateGoals(*model, goals, d);
    goalJacobian(*model, goals, d);
    const Eigen::MatrixXd numeric = test::numericGeometricJacobian(*model, goals, q);
    EXPECT_LT(maxAbsDiff(d.J, numeric), tol) << "q = " << q.transpose();
  }
}

TEST(Jacobian, ExactResidualModeMatchesResidualDifferences) {
  const auto model = everyJointModel();
  const std::vector<Goal> goals = everyGoalKind(*model);
  Data d(*model);
  const double tol = std::sqrt(std::numeric_limits<double>::epsilon());
  for (const Eigen::VectorXd& q : checkConfigurations(*model)) {
    forwardKinematics(*model, q, d);
    evaluateGoals(*model, goals, d);
    goalJacobian(*model, goals, d, JacobianMode::kExactResidual);
    EXPECT_LT(maxAbsDiff(d.J, test::numericResidualJacobian(*model, goals, q)), tol);
    // And the geometric Jacobian is NOT the residual derivative away from zero error.
    goalJacobian(*model, goals, d, JacobianMode::kGeometric);
    EXPECT_GT(maxAbsDiff(d.J, test::numericResidualJacobian(*model, goals, q)), 1e-3);
  }
}

TEST(Jacobian, CheckCatchesADeliberatelyWrongJacobian) {
  const auto model = everyJointModel();
  const std::vector<Goal> goals = everyGoalKind(*model);
  Data d(*model);
  Rng rng(3);
  const Eigen::VectorXd q = randomConfiguration(*model, rng);
  forwardKinematics(*model, q, d);
  evaluateGoals(*model, goals, d);
  goalJacobian(*model, goals, d);
  const Eigen::MatrixXd numeric = test::numericGeometricJacobian(*model, goals, q);
  const double tol = std::sqrt(std::numeric_limits<double>::epsilon());
  // A classic bug: the hinge column's lever arm taken from the parent origin
  // instead of the joint's pivot.
  Eigen::MatrixXd wrong = d.J;
  const int elbow = model->idxV(model->bodyIndex("elbow"));
  const Eigen::Vector3d axis = d.world_R_dof[2] * model->axis(2);
  const Eigen::Vector3d x = d.world_T_body[model->bodyIndex("hand")].act(goals[0].point);
  wrong.col(elbow).segment<3>(0) = goals[0].weight * axis.cross(x - d.world_T_body[1].p);
  EXPECT_GT(maxAbsDiff(wrong, numeric), tol);
  // Another: a sign flip on one ball column.
  wrong = d.J;
  wrong.col(model->idxV(1) + 1) *= -1.0;
  EXPECT_GT(maxAbsDiff(wrong, numeric), tol);
}

TEST(Jacobian, AgreesWithCeresAutodiffOfTheTemplatedFk) {
  // Revolute/prismatic only, so that q and the tangent coincide and the Jet
  // derivative d(tip)/dq is exactly the position Jacobian.
  std::vector<JointSpec> joints{revolute("a", -1, {0, 0, 0.1}, {0, 0, 1}), revolute("b", 0, {0, 0, 0.3}, {0, 1, 0}),
                                revolute("c", 1, {0.2, 0, 0.1}, {1, 1, 0})};
  JointSpec slide;
  slide.name = "d";
  slide.parent = 2;
  slide.type = JointType::kPrismatic;
  slide.axis = Eigen::Vector3d(0, 0.3, 1);
  slide.parent_T_joint.p = Eigen::Vector3d(0.1, 0, 0.2);
  joints.push_back(slide);
  joints.push_back(fixed("tip", 3, {0.05, 0.05, 0.1}));
  const Model model(joints, "jet");
  using Jet = ceres::Jet<double, 4>;
  Rng rng(11);
  const Eigen::VectorXd q = randomConfiguration(model, rng);
  std::vector<Jet> qj(4);
  for (int i = 0; i < 4; ++i) qj[i] = Jet(q[i], i);
  const std::vector<Pose<Jet>> fk = forwardKinematics<Jet>(model, qj.data());
  std::vector<Goal> goals(1);
  goals[0].body = 4;
  goals[0].kind = GoalKind::kPose;
  Data d(model);
  forwardKinematics(model, q, d);
  evaluateGoals(model, goals, d);
  goalJacobian(model, goals, d);
  for (int r = 0; r < 3; ++r) {
    EXPECT_NEAR(fk[4].p[r].a, d.world_T_body[4].p[r], 1e-15);
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(fk[4].p[r].v[k], d.J(r, k), 1e-12);
  }
  // Angular rows: [w]x = dR/dq_k R^T.
  for (int k = 0; k < 4; ++k) {
    Eigen::Matrix3d dR, R;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) dR(a, b) = fk[4].R(a, b).v[k], R(a, b) = fk[4].R(a, b).a;
    const Eigen::Matrix3d W = dR * R.transpose();
    EXPECT_NEAR(W(2, 1), d.J(3, k), 1e-12);
    EXPECT_NEAR(W(0, 2), d.J(4, k), 1e-12);
    EXPECT_NEAR(W(1, 0), d.J(5, k), 1e-12);
  }
}

TEST(Configuration, IntegrateAndDifferenceAreInverse) {
  const auto model = everyJointModel();
  Rng rng(5);
  for (int i = 0; i < 20; ++i) {
    const Eigen::VectorXd q0 = randomConfiguration(*model, rng);
    Eigen::VectorXd dq(model->nv());
    for (int k = 0; k < dq.size(); ++k) dq[k] = rng.uniform(-1, 1);
    const Eigen::VectorXd q1 = integrate(*model, q0, dq);
    EXPECT_LT((difference(*model, q1, q0) - dq).cwiseAbs().maxCoeff(), 1e-12);
    std::string why;
    EXPECT_TRUE(isValidConfiguration(*model, q1, &why)) << why;
  }
}

// Revolute/prismatic/fixed-only models: q and the tangent space share
// indices (what JacobianSolver::takeStep's one-pass step relies on), so
// integrate() and clampToLimits() act per coordinate.
TEST(Configuration, ScalarJointModelsIntegrateAndClampPerCoordinate) {
  std::vector<JointSpec> joints{revolute("a", -1, {0, 0, 0}, {0, 0, 1}), fixed("f", 0, {0.3, 0, 0}),
                                revolute("b", 1, {0.2, 0, 0}, {0, 1, 0})};
  JointSpec slide;
  slide.name = "s";
  slide.parent = 2;
  slide.type = JointType::kPrismatic;
  slide.lower = Eigen::VectorXd::Constant(1, 0.0);
  slide.upper = Eigen::VectorXd::Constant(1, 0.1);
  joints.push_back(slide);
  joints[0].lower = Eigen::VectorXd::Constant(1, -0.5);
  joints[0].upper = Eigen::VectorXd::Constant(1, 0.5);
  const Model model(joints, "scalar");
  ASSERT_TRUE(model.hasOnlyScalarJoints());
  ASSERT_EQ(model.nq(), 3);
  const Eigen::VectorXd q0 = Eigen::Vector3d(0.4, -2.0, 0.05);
  const Eigen::VectorXd dq = Eigen::Vector3d(0.3, 1.0, -0.2);
  Eigen::VectorXd q1 = integrate(model, q0, dq);
  EXPECT_EQ(q1, Eigen::VectorXd(Eigen::Vector3d(0.4 + 0.3, -2.0 + 1.0, 0.05 - 0.2)));
  Eigen::VectorXd q_inplace = q0;
  integrate(model, q_inplace, dq, q_inplace);
  EXPECT_EQ(q_inplace, q1);
  EXPECT_TRUE(clampToLimits(model, q1));
  EXPECT_EQ(q1, Eigen::VectorXd(Eigen::Vector3d(0.5, -1.0, 0.0)));  // "b" has no limits
  EXPECT_FALSE(clampToLimits(model, q1));
}

TEST(Configuration, ClampAndRandomRespectLimits) {
  std::vector<JointSpec> joints{revolute("a", -1, {0, 0, 0}, {0, 0, 1})};
  joints[0].lower = Eigen::VectorXd::Constant(1, -0.5);
  joints[0].upper = Eigen::VectorXd::Constant(1, 0.5);
  JointSpec ball;
  ball.name = "b";
  ball.parent = 0;
  ball.type = JointType::kBall;
  ball.lower = Eigen::VectorXd::Constant(3, -0.3);
  ball.upper = Eigen::VectorXd::Constant(3, 0.3);
  joints.push_back(ball);
  const Model model(joints, "limited");
  Rng rng(1);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(withinLimits(model, randomConfiguration(model, rng)));
  Eigen::VectorXd q = model.neutralConfiguration();
  q[0] = 2.0;
  q.segment<4>(1) = so3::expQuat(Eigen::Vector3d(1.0, -0.1, 0.0)).coeffs();
  EXPECT_FALSE(withinLimits(model, q));
  EXPECT_TRUE(clampToLimits(model, q));
  EXPECT_TRUE(withinLimits(model, q));
  EXPECT_DOUBLE_EQ(q[0], 0.5);
  // A joint exactly at its limit is within limits and is not changed by a clamp.
  EXPECT_FALSE(clampToLimits(model, q));
}

TEST(So3, LogIsAccurateAtZeroAndAtPi) {
  for (const Eigen::Vector3d& axis : {Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(1, 2, -3).normalized()}) {
    for (double angle : {0.0, 1e-12, 1e-6, 0.5, kPi - 1e-9, kPi}) {
      const Eigen::Matrix3d R = Eigen::AngleAxisd(angle, axis).toRotationMatrix();
      double theta = -1.0;
      const Eigen::Vector3d w = so3::log(R, &theta);
      EXPECT_NEAR(w.norm(), angle, 1e-9) << angle;
      EXPECT_NEAR(theta, w.norm(), 1e-15 * (1.0 + angle)) << angle;  // the angle the solvers report
      EXPECT_TRUE(so3::exp<double>(w).isApprox(R, 1e-9)) << angle;
      EXPECT_NEAR(so3::angle(R), angle, 1e-9);
    }
  }
}

// The FK's inline sin / cos (sincos.h) against long-double libm: within
// 1.6 ulp of the true value and 1.3e-16 absolute on |x| <= 1e5 (its fast
// range), exact quadrant signs, and libm's own results outside that range.
TEST(SinCos, MatchesLibm) {
  auto ulp = [](long double v) {
    const double a = static_cast<double>(std::fabs(v));
    return std::nextafter(a, 10.0) - a;
  };
  Rng rng(7);
  double worst_ulp = 0.0, worst_abs = 0.0;
  for (double range : {0.8, 4.0, 100.0, 1e5}) {
    for (int i = 0; i < 500000; ++i) {
      const double x = rng.uniform(-range, range);
      double s = 0.0, c = 0.0;
      sinCos(x, s, c);
      const long double ls = std::sin(static_cast<long double>(x)), lc = std::cos(static_cast<long double>(x));
      const double es = static_cast<double>(std::fabs(s - ls)), ec = static_cast<double>(std::fabs(c - lc));
      worst_ulp = std::max({worst_ulp, es / ulp(ls), ec / ulp(lc)});
      worst_abs = std::max({worst_abs, es, ec});
    }
  }
  EXPECT_LT(worst_ulp, 1.6);
  EXPECT_LT(worst_abs, 1.3e-16);
  // Multiples of pi/2 and their neighbours: the reduction and the quadrant.
  for (int k = -8; k <= 8; ++k)
    for (double dx : {-1e-9, 0.0, 1e-9}) {
      const double x = k * (kPi / 2) + dx;
      double s = 0.0, c = 0.0;
      sinCos(x, s, c);
      EXPECT_NEAR(s, std::sin(x), 2e-16) << x;
      EXPECT_NEAR(c, std::cos(x), 2e-16) << x;
    }
  // Outside the fast range: libm, bit for bit; NaN and inf give NaN.
  for (double x : {1e5 + 0.5, -3e7, 1e300}) {
    double s = 0.0, c = 0.0;
    sinCos(x, s, c);
    EXPECT_EQ(s, std::sin(x)) << x;
    EXPECT_EQ(c, std::cos(x)) << x;
  }
  for (double x : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    double s = 0.0, c = 0.0;
    sinCos(x, s, c);
    EXPECT_TRUE(std::isnan(s) && std::isnan(c)) << x;
  }
}

// The closed form's inline atan2 (atan2.h) against long-double libm: within
// 2 ulp over every quadrant and ratios of magnitudes from 1e-13 to 1e13,
// libm's results on the axes and signed zeros, NaN propagated.
TEST(Atan2, MatchesLibm) {
  Rng rng(11);
  double worst_ulp = 0.0;
  for (int i = 0; i < 2000000; ++i) {
    double y = rng.uniform(-1.0, 1.0), x = rng.uniform(-1.0, 1.0);
    if (i % 2) {
      y *= std::exp(rng.uniform(-30.0, 30.0));
      x *= std::exp(rng.uniform(-30.0, 30.0));
    }
    const long double ref = std::atan2(static_cast<long double>(y), static_cast<long double>(x));
    const double a = static_cast<double>(std::fabs(ref));
    const double ulp = std::nextafter(a, 10.0) - a;
    worst_ulp = std::max(worst_ulp, static_cast<double>(std::fabs(atan2Fast(y, x) - ref)) / ulp);
  }
  EXPECT_LT(worst_ulp, 2.0);
  for (double y : {0.0, -0.0, 1.0, -1.0})
    for (double x : {0.0, -0.0, 1.0, -1.0}) EXPECT_NEAR(atan2Fast(y, x), std::atan2(y, x), 4.5e-16) << y << " " << x;
  for (double y : {0.0, -0.0})
    for (double x : {0.0, -0.0, 2.0, -2.0})
      EXPECT_EQ(std::signbit(atan2Fast(y, x)), std::signbit(std::atan2(y, x))) << y << " " << x;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [y, x] : {std::pair{nan, 1.0}, {1.0, nan}, {nan, 0.0}, {0.0, nan}})
    EXPECT_TRUE(std::isnan(atan2Fast(y, x))) << y << " " << x;
}

TEST(Rng, SameSeedSameStreamDifferentSeedDifferentStream) {
  Rng a(123), b(123), c(124);
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
  Rng u(9);
  for (int i = 0; i < 1000; ++i) {
    const double v = u.uniform();
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST(ModelValidation, RejectsBadModelsWithAMessage) {
  auto expect_error = [](std::vector<JointSpec> joints, const std::string& fragment) {
    try {
      Model m(std::move(joints), "bad");
      ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  // Parent after child.
  expect_error({revolute("a", 1, {0, 0, 0}, {0, 0, 1}), revolute("b", -1, {0, 0, 0}, {0, 0, 1})}, "parent 1");
  // Zero axis.
  expect_error({revolute("a", -1, {0, 0, 0}, {0, 0, 0})}, "axis is zero");
  // lower > upper.
  JointSpec j = revolute("a", -1, {0, 0, 0}, {0, 0, 1});
  j.lower = Eigen::VectorXd::Constant(1, 1.0);
  j.upper = Eigen::VectorXd::Constant(1, -1.0);
  expect_error({j}, "lower limit 1 > upper limit -1");
  // NaN in the rest transform, in the axis and in a limit.
  expect_error({revolute("a", -1, {0, std::nan(""), 0}, {0, 0, 1})}, "NaN");
  expect_error({revolute("a", -1, {0, 0, 0}, {0, std::nan(""), 1})}, "NaN");
  j = revolute("a", -1, {0, 0, 0}, {0, 0, 1});
  j.lower = Eigen::VectorXd::Constant(1, std::nan(""));
  expect_error({j}, "NaN");
  // Duplicate names, wrong limit size, bad weight.
  expect_error({revolute("a", -1, {0, 0, 0}, {0, 0, 1}), revolute("a", 0, {0, 0, 0}, {0, 0, 1})}, "duplicate");
  j = revolute("a", -1, {0, 0, 0}, {0, 0, 1});
  j.lower = Eigen::VectorXd::Constant(2, -1.0);
  expect_error({j}, "expected 1");
  j = revolute("a", -1, {0, 0, 0}, {0, 0, 1});
  j.weight = Eigen::VectorXd::Constant(1, 0.0);
  expect_error({j}, "weight");
}

TEST(ProblemValidation, NamesTheBadField) {
  const auto model = planarChain({1.0, 1.0});
  Problem p;
  p.model = model;
  p.name = "p";
  p.q0 = model->neutralConfiguration();
  p.goals.resize(1);
  p.goals[0].body = 2;
  std::string why;
  EXPECT_TRUE(p.isValid(&why)) << why;
  p.goals[0].target_position.x() = std::nan("");
  EXPECT_FALSE(p.isValid(&why));
  EXPECT_NE(why.find("target position is not finite"), std::string::npos) << why;
  p.goals[0].target_position.x() = 0;
  p.goals[0].body = 9;
  EXPECT_FALSE(p.isValid(&why));
  EXPECT_NE(why.find("body 9"), std::string::npos) << why;
  p.goals[0].body = 2;
  p.q0.resize(5);
  EXPECT_FALSE(p.isValid(&why));
  EXPECT_NE(why.find("nq = 2"), std::string::npos) << why;
}

}  // namespace
}  // namespace ikbench
