// URDF loader: the shipped robots reproduce their published kinematics, every
// public URDF in ../shared/data loads with the joint counts of its README, and
// malformed files give clear errors (file, line, what was expected).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <numbers>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

constexpr double kPi = std::numbers::pi;
const std::string kShipped = std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/robots/";
const std::string kShared = test::corpusFile("robots/");

Eigen::Matrix4d rotX(double a) {
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  T.block<3, 3>(0, 0) = Eigen::AngleAxisd(a, Eigen::Vector3d::UnitX()).toRotationMatrix();
  return T;
}
Eigen::Matrix4d rotZ(double a) {
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  T.block<3, 3>(0, 0) = Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  return T;
}
Eigen::Matrix4d trans(double x, double y, double z) {
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  T.block<3, 1>(0, 3) = Eigen::Vector3d(x, y, z);
  return T;
}

// Standard DH (UR's convention): T = prod Rz(theta) Tz(d) Tx(a) Rx(alpha).
Eigen::Matrix4d ur5Dh(const Eigen::VectorXd& q) {
  const double d[6] = {0.089159, 0, 0, 0.10915, 0.09465, 0.0823};
  const double a[6] = {0, -0.425, -0.39225, 0, 0, 0};
  const double alpha[6] = {kPi / 2, 0, 0, kPi / 2, -kPi / 2, 0};
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  for (int i = 0; i < 6; ++i) T = T * rotZ(q[i]) * trans(0, 0, d[i]) * trans(a[i], 0, 0) * rotX(alpha[i]);
  return T;
}

// Modified DH (Franka's convention): T = prod Rx(alpha) Tx(a) Tz(d) Rz(theta), then the flange.
Eigen::Matrix4d pandaDh(const Eigen::VectorXd& q) {
  const double a[7] = {0, 0, 0, 0.0825, -0.0825, 0, 0.088};
  const double d[7] = {0.333, 0, 0.316, 0, 0.384, 0, 0};
  const double alpha[7] = {0, -kPi / 2, kPi / 2, kPi / 2, -kPi / 2, kPi / 2, kPi / 2};
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  for (int i = 0; i < 7; ++i) T = T * rotX(alpha[i]) * trans(a[i], 0, 0) * trans(0, 0, d[i]) * rotZ(q[i]);
  return T * trans(0, 0, 0.107);
}

Pose3d bodyPose(const Model& m, const Eigen::VectorXd& q, const std::string& body) {
  Data d(m);
  forwardKinematics(m, q, d);
  const int b = m.bodyIndex(body);
  EXPECT_GE(b, 0) << body;
  return d.world_T_body[std::max(b, 0)];
}

// q (nq) of `m` with the named revolute/prismatic joints set to `values`.
Eigen::VectorXd byName(const Model& m, const std::vector<std::string>& names, const Eigen::VectorXd& values) {
  Eigen::VectorXd q = m.neutralConfiguration();
  for (size_t k = 0; k < names.size(); ++k) {
    int j = -1;
    for (int i = 0; i < m.numJoints(); ++i)
      if (m.joint(i).name == names[k]) j = i;
    EXPECT_GE(j, 0) << names[k];
    if (j >= 0) q[m.idxQ(j)] = values[k];
  }
  return q;
}

TEST(UrdfShipped, Ur5MatchesPublishedDh) {
  const UrdfModel u = loadUrdf(kShipped + "ur5.urdf");
  const Model& m = *u.model;
  EXPECT_EQ(m.nv(), 6);
  EXPECT_TRUE(u.warnings.empty());
  // Published FK at q = 0: (a2 + a3, -(d4 + d6), d1 - d5).
  const Pose3d p0 = bodyPose(m, Eigen::VectorXd::Zero(6), "tool0");
  EXPECT_NEAR(p0.p.x(), -0.81725, 1e-12);
  EXPECT_NEAR(p0.p.y(), -0.19145, 1e-12);
  EXPECT_NEAR(p0.p.z(), -0.005491, 1e-12);
  Rng rng(11);
  for (int k = 0; k < 20; ++k) {
    const Eigen::VectorXd q = randomConfiguration(m, rng);
    const Eigen::Matrix4d T = ur5Dh(q);
    const Pose3d p = bodyPose(m, q, "tool0");
    EXPECT_LT((p.p - T.block<3, 1>(0, 3)).norm(), 1e-12);
    EXPECT_LT((p.R - T.block<3, 3>(0, 0)).norm(), 1e-12);
  }
}

TEST(UrdfShipped, PandaMatchesPublishedDh) {
  const UrdfModel u = loadUrdf(kShipped + "panda.urdf");
  const Model& m = *u.model;
  EXPECT_EQ(m.nv(), 7);
  const Pose3d p0 = bodyPose(m, Eigen::VectorXd::Zero(7), "panda_link8");
  EXPECT_LT((p0.p - Eigen::Vector3d(0.088, 0, 0.926)).norm(), 1e-12);
  // At q = 0 the flange's z axis points down.
  EXPECT_LT((p0.R.col(2) - Eigen::Vector3d(0, 0, -1)).norm(), 1e-12);
  const Pose3d tcp0 = bodyPose(m, Eigen::VectorXd::Zero(7), "panda_hand_tcp");
  EXPECT_LT((tcp0.p - Eigen::Vector3d(0.088, 0, 0.926 - 0.1034)).norm(), 1e-12);
  Rng rng(12);
  for (int k = 0; k < 20; ++k) {
    const Eigen::VectorXd q = randomConfiguration(m, rng);
    EXPECT_TRUE(withinLimits(m, q));
    const Eigen::Matrix4d T = pandaDh(q);
    const Pose3d p = bodyPose(m, q, "panda_link8");
    EXPECT_LT((p.p - T.block<3, 1>(0, 3)).norm(), 1e-12);
    EXPECT_LT((p.R - T.block<3, 3>(0, 0)).norm(), 1e-12);
  }
  // Datasheet limits: joint 4 never reaches 0.
  EXPECT_NEAR(m.upperLimits()[3], -0.0698, 1e-12);
}

TEST(UrdfShipped, Iiwa14PublishedDimensions) {
  const UrdfModel u = loadUrdf(kShipped + "iiwa14.urdf");
  const Model& m = *u.model;
  EXPECT_EQ(m.nv(), 7);
  EXPECT_LT((bodyPose(m, Eigen::VectorXd::Zero(7), "tool0").p - Eigen::Vector3d(0, 0, 1.306)).norm(), 1e-12);
  // Shoulder (A2) at +90 deg about +y: the arm points along +x from z = 0.36.
  Eigen::VectorXd q = Eigen::VectorXd::Zero(7);
  q[1] = kPi / 2;
  EXPECT_LT((bodyPose(m, q, "tool0").p - Eigen::Vector3d(0.946, 0, 0.36)).norm(), 1e-12);
  // Elbow (A4, about -y) at +90 deg: the forearm points along -x from z = 0.78.
  q.setZero();
  q[3] = kPi / 2;
  EXPECT_LT((bodyPose(m, q, "tool0").p - Eigen::Vector3d(-0.526, 0, 0.78)).norm(), 1e-12);
  EXPECT_NEAR(m.upperLimits()[6], 175.0 * kPi / 180.0, 1e-12);
}

// The shipped files were written from published parameters; the public
// URDFs in ../shared/data come from the vendors' ROS packages. They must
// agree on the tool positions at any configuration.
TEST(UrdfShipped, AgreeWithPublicVendorUrdfs) {
  IKBENCH_REQUIRE_CORPUS("robots");
  Rng rng(13);
  {
    // ROS-Industrial's base_link is the DH base turned by pi about z.
    const auto mine = loadUrdf(kShipped + "ur5.urdf").model;
    const auto ros = loadUrdf(kShared + "ur5.urdf", {"base_link", "tool0", false}).model;
    ASSERT_EQ(ros->nv(), 6);
    const Eigen::Matrix3d Rz = Eigen::AngleAxisd(kPi, Eigen::Vector3d::UnitZ()).toRotationMatrix();
    for (int k = 0; k < 10; ++k) {
      const Eigen::VectorXd q = randomConfiguration(*mine, rng);
      const Pose3d a = bodyPose(*mine, q, "tool0"), b = bodyPose(*ros, q, "tool0");
      EXPECT_LT((a.p - Rz * b.p).norm(), 1e-6) << k;
      EXPECT_LT((a.R - Rz * b.R).norm(), 1e-6) << k;
    }
  }
  {
    const auto mine = loadUrdf(kShipped + "panda.urdf").model;
    const auto franka = loadUrdf(kShared + "panda.urdf").model;
    const std::vector<std::string> names = {"panda_joint1", "panda_joint2", "panda_joint3", "panda_joint4",
                                            "panda_joint5", "panda_joint6", "panda_joint7"};
    for (int k = 0; k < 10; ++k) {
      const Eigen::VectorXd q = randomConfiguration(*mine, rng);
      for (const char* body : {"panda_link8", "panda_hand_tcp"}) {
        const Pose3d a = bodyPose(*mine, q, body), b = bodyPose(*franka, byName(*franka, names, q), body);
        EXPECT_LT((a.p - b.p).norm(), 1e-3) << body << " " << k;
        EXPECT_LT((a.R - b.R).norm(), 1e-3) << body << " " << k;
      }
    }
  }
  {
    // The ROS-I iiwa has a 0.44 mm lateral CAD offset at A2 and A4.
    const auto mine = loadUrdf(kShipped + "iiwa14.urdf").model;
    const auto rosi = loadUrdf(kShared + "kuka_lbr_iiwa_14_r820.urdf").model;
    const std::vector<std::string> names = {"joint_a1", "joint_a2", "joint_a3", "joint_a4",
                                            "joint_a5", "joint_a6", "joint_a7"};
    for (int k = 0; k < 10; ++k) {
      const Eigen::VectorXd q = randomConfiguration(*mine, rng);
      const Pose3d a = bodyPose(*mine, q, "tool0"), b = bodyPose(*rosi, byName(*rosi, names, q), "tool0");
      EXPECT_LT((a.p - b.p).norm(), 1.5e-3) << k;
      EXPECT_LT((a.R - b.R).norm(), 1e-6) << k;
    }
  }
}

struct SharedRobot {
  const char* file;
  int joints, dof, mimic;
  std::vector<std::tuple<const char*, const char*, int>> chains;  // base, tip, actuated
};

// The joint / DOF / mimic counts and example chains of ../shared/data/README.md.
const std::vector<SharedRobot> kSharedRobots = {
    {"ur5.urdf", 10, 6, 0, {{"base_link", "tool0", 6}}},
    {"abb_irb2400.urdf", 8, 6, 0, {{"base_link", "tool0", 6}}},
    {"kuka_kr210l150.urdf", 8, 6, 0, {{"base_link", "tool0", 6}}},
    {"kuka_lbr_iiwa_14_r820.urdf", 9, 7, 0, {{"base_link", "tool0", 7}}},
    {"panda.urdf", 12, 8, 1, {{"panda_link0", "panda_hand_tcp", 7}}},
    {"kinova_gen3_7dof.urdf", 8, 7, 0, {{"base_link", "end_effector_link", 7}}},
    {"sawyer.urdf", 23, 8, 0, {{"base", "right_hand", 7}}},
    {"baxter.urdf", 56, 17, 2, {{"base", "left_gripper", 7}, {"base", "right_gripper", 7}}},
    {"pr2.urdf", 81, 20, 10, {{"base_footprint", "l_gripper_tool_frame", 8}}},
    {"romeo_small.urdf", 57, 31, 0, {{"base_link", "l_gripper", 8}, {"base_link", "l_sole", 6}}},
    {"solo12.urdf", 16, 12, 0, {{"base_link", "FL_FOOT", 3}, {"base_link", "HR_FOOT", 3}}},
};

TEST(UrdfShared, EveryFileLoadsWithReadmeCounts) {
  IKBENCH_REQUIRE_CORPUS("robots");
  for (const SharedRobot& r : kSharedRobots) {
    SCOPED_TRACE(r.file);
    const UrdfModel u = loadUrdf(kShared + r.file);
    // One Model joint per URDF joint, plus the fixed root body (base link).
    EXPECT_EQ(u.model->numJoints(), r.joints + 1);
    EXPECT_EQ(u.model->nv(), r.dof);
    EXPECT_EQ(u.mimic_joints, r.mimic);
    EXPECT_EQ(static_cast<int>(u.warnings.size()), r.mimic);
    for (const std::string& w : u.warnings) EXPECT_NE(w.find("mimics"), std::string::npos) << w;
    for (const auto& [base, tip, n] : r.chains) {
      const UrdfModel c = loadUrdf(kShared + r.file, {base, tip, false});
      EXPECT_EQ(c.model->nv(), n) << base << " -> " << tip;
      EXPECT_GE(c.model->bodyIndex(tip), 0);
      EXPECT_GE(c.model->bodyIndex(base), 0);
      EXPECT_TRUE(c.model->isChain());
    }
  }
}

TEST(UrdfShared, ContinuousJointsAreUnlimitedAndFloatingBaseAddsSixDof) {
  IKBENCH_REQUIRE_CORPUS("robots");
  const UrdfModel k = loadUrdf(kShared + std::string("kinova_gen3_7dof.urdf"));
  int unlimited = 0;
  for (int d = 0; d < k.model->nv(); ++d) unlimited += k.model->hasFiniteLimits(d) ? 0 : 1;
  EXPECT_EQ(unlimited, 4);  // joints 1, 3, 5, 7 are continuous
  const UrdfModel r = loadUrdf(kShared + std::string("romeo_small.urdf"), {"", "", true});
  EXPECT_EQ(r.model->nv(), 31 + 6);
  EXPECT_EQ(r.model->type(0), JointType::kFree);
}

TEST(UrdfShared, PosesOnSharedArmsSolveWithDls) {
  IKBENCH_REQUIRE_CORPUS("robots");
  // The loaded chains are solvable by a backend: pose targets from FK of
  // random configurations within limits, DLS with restarts, checked by FK.
  auto dls = Registry::global().create("dls:restarts=20");
  SolverOptions o;
  int converged = 0, total = 0;
  for (const char* f : {"abb_irb2400.urdf", "kinova_gen3_7dof.urdf", "sawyer.urdf"}) {
    const Family fam = urdfFamily(kShared + f, f == std::string("sawyer.urdf") ? "base" : "",
                                  f == std::string("sawyer.urdf")        ? "right_hand"
                                  : f == std::string("abb_irb2400.urdf") ? "tool0"
                                                                         : "end_effector_link",
                                  5, 21);
    for (const Problem& p : fam.problems) {
      Eigen::VectorXd q = p.q0;
      const Summary s = dls->solve(p, q, o);
      ++total;
      if (!s.converged()) continue;
      ++converged;
      Data d(*p.model);
      forwardKinematics(*p.model, q, d);
      const GoalErrors e = evaluateGoals(*p.model, p.goals, d);
      EXPECT_LE(e.position, o.position_tolerance);
      EXPECT_LE(e.orientation, o.orientation_tolerance);
      EXPECT_TRUE(withinLimits(*p.model, q));
    }
  }
  EXPECT_GE(converged, total - 2) << converged << " of " << total;
}

// ---- malformed files: one test per case ------------------------------------

std::string expectUrdfError(const std::string& xml, const std::vector<std::string>& fragments,
                            const UrdfOptions& o = {}) {
  try {
    parseUrdf(xml, "bad.urdf", o);
  } catch (const SuiteError& e) {
    const std::string what = e.what();
    for (const auto& f : fragments) EXPECT_NE(what.find(f), std::string::npos) << "missing '" << f << "' in: " << what;
    return what;
  }
  ADD_FAILURE() << "no SuiteError";
  return "";
}

const char* kGood = R"(<?xml version="1.0"?>
<robot name="two">
  <link name="base"/>
  <link name="l1"/>
  <link name="l2"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="j2" type="prismatic">
    <parent link="l1"/><child link="l2"/>
    <origin xyz="0.2 0 0" rpy="0 1.5707963267948966 0"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.3" effort="1" velocity="1"/>
  </joint>
</robot>
)";

TEST(UrdfMalformed, GoodBaselineParses) {
  const UrdfModel u = parseUrdf(kGood, "good.urdf");
  EXPECT_EQ(u.model->nv(), 2);
  EXPECT_EQ(u.model->type(2), JointType::kPrismatic);
  EXPECT_EQ(u.robot_name, "two");
  // rpy pitch pi/2 turns the prismatic x axis into world -z.
  Eigen::VectorXd q(2);
  q << 0, 0.3;
  EXPECT_LT((bodyPose(*u.model, q, "l2").p - Eigen::Vector3d(0.2, 0, 0.1 - 0.3)).norm(), 1e-12);
}

TEST(UrdfMalformed, TruncatedFile) {
  const std::string xml(kGood);
  expectUrdfError(xml.substr(0, xml.find("<joint name=\"j2\"") + 20), {"bad.urdf:", "malformed XML"});
}

TEST(UrdfMalformed, EmptyFileAndWrongRoot) {
  expectUrdfError("", {"bad.urdf"});
  expectUrdfError("<?xml version=\"1.0\"?>\n<world name=\"w\"/>\n",
                  {"bad.urdf:2:", "expected the root element <robot>"});
}

TEST(UrdfMalformed, MissingParentLink) {
  std::string xml(kGood);
  xml.replace(xml.find("<parent link=\"l1\"/>"), 19, "<parent link=\"l9\"/>");
  expectUrdfError(xml, {"bad.urdf:12:", "joint 'j2'", "parent link 'l9' is not defined"});
}

TEST(UrdfMalformed, CycleInLinks) {
  std::string xml(kGood);
  xml.replace(xml.find("</robot>"), 8,
              R"(  <joint name="j3" type="fixed"><parent link="l2"/><child link="base"/></joint>
</robot>)");
  expectUrdfError(xml, {"bad.urdf:", "links form a cycle", "base -> l2 -> l1 -> base"});
}

TEST(UrdfMalformed, TwoParentsForOneLink) {
  std::string xml(kGood);
  xml.replace(xml.find("</robot>"), 8,
              R"(  <joint name="j3" type="fixed"><parent link="base"/><child link="l2"/></joint>
</robot>)");
  expectUrdfError(xml, {"bad.urdf:16:", "joint 'j3'", "link 'l2' already has a parent joint 'j2'"});
}

TEST(UrdfMalformed, NanInOrigin) {
  std::string xml(kGood);
  xml.replace(xml.find("xyz=\"0.2 0 0\""), 13, "xyz=\"0.2 nan 0\"");
  expectUrdfError(xml, {"bad.urdf:13:", "joint 'j2' <origin>", "xyz=\"0.2 nan 0\"", "finite"});
}

TEST(UrdfMalformed, NonNumericAndShortVectors) {
  std::string xml(kGood);
  xml.replace(xml.find("rpy=\"0 0 0\""), 11, "rpy=\"0 0\"");
  expectUrdfError(xml, {"bad.urdf:8:", "joint 'j1' <origin>", "expected 3 finite numbers, found 2"});
  std::string xml2(kGood);
  xml2.replace(xml2.find("upper=\"1\""), 9, "upper=\"one\"");
  expectUrdfError(xml2, {"bad.urdf:9:", "<limit>", "upper=\"one\""});
}

TEST(UrdfMalformed, UnknownJointTypeAndPlanar) {
  std::string xml(kGood);
  xml.replace(xml.find("type=\"revolute\""), 15, "type=\"hinge\"");
  expectUrdfError(xml, {"bad.urdf:6:", "unknown type 'hinge'", "continuous"});
  std::string xml2(kGood);
  xml2.replace(xml2.find("type=\"revolute\""), 15, "type=\"planar\"");
  expectUrdfError(xml2, {"bad.urdf:6:", "planar joints are not supported"});
}

TEST(UrdfMalformed, MissingLimitZeroAxisAndInvertedLimits) {
  std::string xml(kGood);
  xml.replace(xml.find("<limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/>"), 51, "");
  expectUrdfError(xml, {"bad.urdf:6:", "needs a <limit"});
  std::string xml2(kGood);
  xml2.replace(xml2.find("<axis xyz=\"0 0 1\"/>"), 19, "<axis xyz=\"0 0 0\"/>");
  expectUrdfError(xml2, {"bad.urdf:8:", "axis is zero"});
  std::string xml3(kGood);
  xml3.replace(xml3.find("lower=\"-1\" upper=\"1\""), 20, "lower=\"1\" upper=\"-1\"");
  expectUrdfError(xml3, {"bad.urdf:9:", "lower 1 > upper -1"});
}

TEST(UrdfMalformed, DisconnectedLinkAndDuplicateNames) {
  std::string xml(kGood);
  xml.replace(xml.find("<link name=\"l2\"/>"), 17, "<link name=\"l2\"/><link name=\"island\"/>");
  expectUrdfError(xml, {"bad.urdf:", "both have no parent joint", "island"});
  std::string xml2(kGood);
  xml2.replace(xml2.find("<link name=\"l2\"/>"), 17, "<link name=\"l1\"/>");
  expectUrdfError(xml2, {"bad.urdf:5:", "link 'l1' is defined twice"});
}

TEST(UrdfMalformed, BadChainSelection) {
  expectUrdfError(kGood, {"tip link 'nope' is not defined"}, {"", "nope", false});
  expectUrdfError(kGood, {"base link 'nope' is not defined"}, {"nope", "", false});
  expectUrdfError(kGood, {"tip link 'l1' is not below base link 'l2'"}, {"l2", "l1", false});
}

TEST(UrdfMalformed, MissingFile) { EXPECT_THROW(loadUrdf("/nonexistent/robot.urdf"), SuiteError); }

TEST(UrdfMimic, FollowerIsFixedAtItsOffsetWithAWarning) {
  std::string xml(kGood);
  xml.replace(xml.find("</robot>"), 8, R"(  <link name="l3"/>
  <joint name="j3" type="revolute">
    <parent link="l1"/><child link="l3"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="j1" multiplier="2" offset="0.5"/>
  </joint>
</robot>)");
  const UrdfModel u = parseUrdf(xml, "mimic.urdf");
  EXPECT_EQ(u.model->nv(), 2);
  EXPECT_EQ(u.mimic_joints, 1);
  ASSERT_EQ(u.warnings.size(), 1u);
  EXPECT_NE(u.warnings[0].find("'j3' mimics 'j1'"), std::string::npos);
  const Pose3d p = bodyPose(*u.model, Eigen::VectorXd::Zero(2), "l3");
  EXPECT_NEAR(so3::angle(p.R), 0.5, 1e-12);
}

}  // namespace
}  // namespace ikbench

namespace ikbench {
namespace {

// Every prefix of a valid file (a truncation sweep) either parses or throws
// SuiteError: never a crash or another exception type (run under ASan too).
TEST(UrdfMalformed, TruncationSweepNeverCrashes) {
  std::ifstream in(kShipped + "panda.urdf");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(text.size(), 1000u);
  int errors = 0, parsed = 0;
  for (size_t k = 0; k < text.size(); k += 29) {
    try {
      parseUrdf(text.substr(0, k), "cut.urdf");
      ++parsed;
    } catch (const SuiteError& e) {
      ++errors;
      EXPECT_EQ(std::string(e.what()).rfind("cut.urdf", 0), 0u) << e.what();
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace ikbench
