// Robot descriptions as they ship: an SRDF's disabled pairs and named states,
// and MJCF models, checked against the same robot written as URDF (forward
// kinematics equal to 1e-12 over seeded random configurations) and against
// MuJoCo's conventions (angles in degrees, euler sequences, default classes,
// joint anchors). Every file is written by the test.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <array>
#include <map>
#include <fstream>
#include <numbers>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/collision/world.h"
#include "ikbench/scenarios/mesh_file.h"
#include "ikbench/scenarios/mjcf.h"
#include "ikbench/scenarios/scene.h"
#include "ikbench/scenarios/srdf.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

constexpr double kPi = std::numbers::pi;
double deg(double d) { return d * kPi / 180.0; }

// A 4-DOF arm in MJCF: degrees, eulerseq zyx (intrinsic: R = Rz Ry Rx, so
// euler="a b c" is URDF's rpy="c b a"), a quaternion, an axis-angle, a joint
// with an anchor off the body's origin followed by a slide in the same body,
// default classes (nested, childclass-free, a visual-only class), a world
// floor that is not the robot's.
const char* kArmMjcf = R"(<mujoco model="arm">
  <compiler angle="degree" eulerseq="zyx"/>
  <default>
    <joint axis="0 0 1" range="-170 170"/>
    <default class="visual"><geom contype="0" conaffinity="0"/></default>
    <default class="wrist"><joint axis="0 1 0" range="-120 120"/></default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="base" pos="0 0 0.1">
      <geom type="cylinder" size="0.06 0.05"/>
      <body name="link1" pos="0 0 0.1" euler="45 20 30">
        <joint name="j1"/>
        <inertial pos="0 0 0.1" mass="1"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.04"/>
        <geom class="visual" type="box" size="0.1 0.1 0.1"/>
        <body name="link2" pos="0 0 0.3" quat="0.7071067811865476 0.7071067811865476 0 0">
          <joint name="j2" pos="0 0 0.05" axis="1 0 0" range="-90 90"/>
          <joint name="j3" type="slide" axis="0 0 1" range="0 0.2"/>
          <geom type="box" size="0.03 0.03 0.1" pos="0 0 0.1"/>
          <body name="link3" pos="0.25 0 0" axisangle="0 0 1 90">
            <joint name="j4" class="wrist"/>
            <geom type="sphere" size="0.05"/>
            <body name="tool" pos="0 0 0.1"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
)";

// The same robot in URDF: MuJoCo's joint anchor as a fixed frame, the
// revolute joint at the anchor and the slide back at the body's origin.
std::string armUrdf() {
  return fmt::format(R"(<robot name="arm">
  <link name="world"/><link name="base"/><link name="link1"/><link name="link2_body"/>
  <link name="link2_anchor"/><link name="link2"/><link name="link3"/><link name="tool"/>
  <joint name="base_fixed" type="fixed"><parent link="world"/><child link="base"/>
    <origin xyz="0 0 0.1"/></joint>
  <joint name="j1" type="revolute"><parent link="base"/><child link="link1"/>
    <origin xyz="0 0 0.1" rpy="{:.17g} {:.17g} {:.17g}"/><axis xyz="0 0 1"/>
    <limit lower="{:.17g}" upper="{:.17g}" effort="1" velocity="1"/></joint>
  <joint name="link2_frame" type="fixed"><parent link="link1"/><child link="link2_body"/>
    <origin xyz="0 0 0.3" rpy="{:.17g} 0 0"/></joint>
  <joint name="j2" type="revolute"><parent link="link2_body"/><child link="link2_anchor"/>
    <origin xyz="0 0 0.05"/><axis xyz="1 0 0"/>
    <limit lower="{:.17g}" upper="{:.17g}" effort="1" velocity="1"/></joint>
  <joint name="j3" type="prismatic"><parent link="link2_anchor"/><child link="link2"/>
    <origin xyz="0 0 -0.05"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0.2" effort="1" velocity="1"/></joint>
  <joint name="j4" type="revolute"><parent link="link2"/><child link="link3"/>
    <origin xyz="0.25 0 0" rpy="0 0 {:.17g}"/><axis xyz="0 1 0"/>
    <limit lower="{:.17g}" upper="{:.17g}" effort="1" velocity="1"/></joint>
  <joint name="tool_fixed" type="fixed"><parent link="link3"/><child link="tool"/>
    <origin xyz="0 0 0.1"/></joint>
</robot>
)",
                     deg(30), deg(20), deg(45), deg(-170), deg(170), kPi / 2, deg(-90), deg(90), kPi / 2, deg(-120),
                     deg(120));
}

// The configuration of `to` with the joint values of `q` on `from`, by name.
Eigen::VectorXd byName(const Model& from, const Eigen::VectorXd& q, const Model& to) {
  Eigen::VectorXd out = to.neutralConfiguration();
  int mapped = 0;
  for (int j = 0; j < from.numJoints(); ++j) {
    if (from.jointNq(j) == 0) continue;
    for (int k = 0; k < to.numJoints(); ++k)
      if (to.joint(k).name == from.joint(j).name) {
        out[to.idxQ(k)] = q[from.idxQ(j)];
        ++mapped;
      }
  }
  EXPECT_EQ(mapped, from.nq());
  return out;
}

TEST(Mjcf, ForwardKinematicsEqualsTheSameRobotsUrdf) {
  const UrdfModel m = parseMjcf(kArmMjcf, "arm.xml");
  const UrdfModel u = parseUrdf(armUrdf(), "arm.urdf");
  ASSERT_EQ(m.model->nq(), 4);
  ASSERT_EQ(u.model->nq(), 4);
  // Limits in radians (degrees in the file) and metres.
  for (int j = 0; j < m.model->numJoints(); ++j) {
    if (m.model->jointNq(j) == 0) continue;
    const int k = [&] {
      for (int i = 0; i < u.model->numJoints(); ++i)
        if (u.model->joint(i).name == m.model->joint(j).name) return i;
      return -1;
    }();
    ASSERT_GE(k, 0) << m.model->joint(j).name;
    EXPECT_EQ(m.model->type(j), u.model->type(k));
    EXPECT_NEAR(m.model->lowerLimits()[m.model->idxV(j)], u.model->lowerLimits()[u.model->idxV(k)], 1e-15);
    EXPECT_NEAR(m.model->upperLimits()[m.model->idxV(j)], u.model->upperLimits()[u.model->idxV(k)], 1e-15);
  }
  Data dm(*m.model), du(*u.model);
  Rng rng(20261129);
  double worst = 0.0;
  for (int s = 0; s < 200; ++s) {
    const Eigen::VectorXd qm = randomConfiguration(*m.model, rng);
    forwardKinematics(*m.model, qm, dm);
    forwardKinematics(*u.model, byName(*m.model, qm, *u.model), du);
    for (const char* body : {"link1", "link2", "link3", "tool"}) {
      const Pose3d& a = dm.world_T_body[static_cast<size_t>(m.model->bodyIndex(body))];
      const Pose3d& b = du.world_T_body[static_cast<size_t>(u.model->bodyIndex(body))];
      worst = std::max({worst, (a.p - b.p).cwiseAbs().maxCoeff(), (a.R - b.R).cwiseAbs().maxCoeff()});
    }
  }
  EXPECT_LE(worst, 1e-12);
  // Not a comparison of two identities: the tool moves with the joints.
  EXPECT_GT((dm.world_T_body.back().p - Eigen::Vector3d(0, 0, 0.2)).norm(), 0.05);
}

TEST(Mjcf, CollisionGeomsOfTheBodiesOnly) {
  const UrdfModel m = parseMjcf(kArmMjcf, "arm.xml");
  // The floor (world) and the visual-only box are not the robot's collision geometry.
  ASSERT_EQ(m.collision.size(), 4u);
  std::map<std::string, const LinkShape*> by_body;
  for (const LinkShape& l : m.collision) by_body[m.model->bodyName(l.body)] = &l;
  ASSERT_EQ(by_body.size(), 4u);
  const Shape& base = by_body.at("base")->shape;
  EXPECT_EQ(base.kind, ShapeKind::kCylinder);
  EXPECT_DOUBLE_EQ(base.radius, 0.06);
  EXPECT_DOUBLE_EQ(base.length, 0.1);  // MuJoCo's half length 0.05
  const Shape& cap = by_body.at("link1")->shape;
  EXPECT_EQ(cap.kind, ShapeKind::kCapsule);
  EXPECT_DOUBLE_EQ(cap.length, 0.3);
  EXPECT_NEAR((cap.pose.p - Eigen::Vector3d(0, 0, 0.15)).norm(), 0.0, 1e-15);
  const Shape& box = by_body.at("link2")->shape;
  EXPECT_EQ(box.kind, ShapeKind::kBox);
  EXPECT_TRUE(box.size.isApprox(Eigen::Vector3d(0.06, 0.06, 0.2)));
  EXPECT_EQ(by_body.at("link3")->shape.kind, ShapeKind::kSphere);
}

TEST(Mjcf, EulerSequencesAndAngleUnits) {
  // Uppercase axes are fixed (extrinsic): XYZ is URDF's rpy; radians.
  const UrdfModel m = parseMjcf(R"(<mujoco><compiler angle="radian" eulerseq="XYZ"/><worldbody>
    <body name="a" euler="0.3 -0.2 1.1"><joint name="j"/></body></worldbody></mujoco>)",
                                "euler.xml");
  const Eigen::Matrix3d R = (Eigen::AngleAxisd(1.1, Eigen::Vector3d::UnitZ()) *
                             Eigen::AngleAxisd(-0.2, Eigen::Vector3d::UnitY()) *
                             Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitX()))
                                .toRotationMatrix();
  EXPECT_LE((m.model->parentTJoint(1).R - R).cwiseAbs().maxCoeff(), 1e-15);
  // Default: degrees and the intrinsic xyz sequence (R = Rx Ry Rz).
  const UrdfModel d = parseMjcf(R"(<mujoco><worldbody>
    <body name="a" euler="30 -20 110"><joint name="j" range="-45 45"/></body></worldbody></mujoco>)",
                                "euler.xml");
  const Eigen::Matrix3d Rd = (Eigen::AngleAxisd(deg(30), Eigen::Vector3d::UnitX()) *
                              Eigen::AngleAxisd(deg(-20), Eigen::Vector3d::UnitY()) *
                              Eigen::AngleAxisd(deg(110), Eigen::Vector3d::UnitZ()))
                                 .toRotationMatrix();
  EXPECT_LE((d.model->parentTJoint(1).R - Rd).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_NEAR(d.model->upperLimits()[0], deg(45), 1e-15);
  // A range without autolimits and without limited="true" is no limit.
  const UrdfModel n = parseMjcf(R"(<mujoco><compiler autolimits="false"/><worldbody>
    <body name="a"><joint name="j" range="-45 45"/></body></worldbody></mujoco>)",
                                "limits.xml");
  EXPECT_FALSE(n.model->hasFiniteLimits(0));
}

void expectMjcfError(const std::string& xml, const std::vector<std::string>& fragments) {
  try {
    parseMjcf(xml, "bad.xml");
    ADD_FAILURE() << "no error for " << xml;
  } catch (const SuiteError& e) {
    for (const std::string& f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

TEST(Mjcf, UnsupportedElementsAreErrorsNamingTheLine) {
  expectMjcfError("<mujoco><worldbody>\n<body name=\"a\">\n<joint name=\"b\" type=\"ball\"/></body></worldbody></mujoco>",
                  {"bad.xml:3:", "joint 'b'", "ball"});
  expectMjcfError("<mujoco><worldbody>\n<body name=\"a\"><freejoint/></body></worldbody></mujoco>",
                  {"bad.xml:2:", "free joints"});
  expectMjcfError("<mujoco>\n<include file=\"x.xml\"/><worldbody/></mujoco>", {"bad.xml:2:", "<include>"});
  expectMjcfError("<mujoco><worldbody><body name=\"a\">\n<geom type=\"ellipsoid\" size=\"1 1 1\"/></body></worldbody></mujoco>",
                  {"bad.xml:2:", "ellipsoid"});
  expectMjcfError("<mujoco><worldbody><body name=\"a\" pos=\"0 nan 0\"/></worldbody></mujoco>",
                  {"bad.xml:1:", "pos", "finite"});
  expectMjcfError("<mujoco><worldbody><body name=\"a\"><joint class=\"nope\"/></body></worldbody></mujoco>",
                  {"no such default class"});
  expectMjcfError("<robot/>", {"expected the root element <mujoco>"});
  expectMjcfError("<mujoco><worldbody><body name=\"a\"><joint name=\"j\" range=\"10 -10\"/></body></worldbody></mujoco>",
                  {"joint 'j'", "range"});
}

TEST(Mjcf, FamilyOfAChainSolvesWithVerifiedAnswers) {
  const std::string path = test::writeTempFile("robots_mjcf", "arm.xml", kArmMjcf);
  RobotFiles files;
  files.mjcf = true;
  const Family fam = robotFamily(path, "", "tool", 10, 7, "", files);
  EXPECT_EQ(fam.type, "mjcf");
  EXPECT_EQ(fam.name, "arm-pose");
  ASSERT_EQ(fam.problems.size(), 10u);
  auto dls = Registry::global().create("dls:restarts=20");
  SolverOptions o;
  int converged = 0;
  for (const Problem& p : fam.problems) {
    Eigen::VectorXd q = p.q0;
    if (!dls->solve(p, q, o).converged()) continue;
    ++converged;
    Data d(*p.model);
    forwardKinematics(*p.model, q, d);
    const GoalErrors e = evaluateGoals(*p.model, p.goals, d);
    EXPECT_LE(e.position, o.position_tolerance);
    EXPECT_LE(e.orientation, o.orientation_tolerance);
  }
  // Four DOF against six-dimensional pose targets made by FK of the same chain.
  EXPECT_GE(converged, 8);
}

// ---- SRDF ---------------------------------------------------------------------

// A planar three-link arm with a gripper link beside the chain.
const char* kArmUrdf = R"(<robot name="planar">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/><link name="finger"/>
  <joint name="a1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="a2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.4 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="a3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.4 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="grip" type="prismatic"><parent link="l3"/><child link="finger"/><origin xyz="0.1 0 0"/>
    <axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="1" velocity="1"/></joint>
</robot>
)";

const char* kArmSrdf = R"(<?xml version="1.0"?>
<robot name="planar">
  <group name="arm"><chain base_link="base" tip_link="l3"/></group>
  <group_state name="home" group="arm">
    <joint name="a1" value="0.5"/><joint name="a2" value="-1"/><joint name="a3" value="0.25"/>
    <joint name="grip" value="0.02"/>
  </group_state>
  <group_state name="wide" group="arm"><joint name="a2" value="2.5"/></group_state>
  <disable_collisions link1="l1" link2="l3" reason="Never"/>
  <disable_collisions link1="l3" link2="finger" reason="Adjacent"/>
</robot>
)";

TEST(Srdf, ReadsPairsAndStatesCheckedAgainstTheWholeDescription) {
  const UrdfModel u = parseUrdf(kArmUrdf, "planar.urdf", UrdfOptions{.tip = "l3"});
  const Srdf s = parseSrdf(kArmSrdf, "planar.srdf", u.names);
  ASSERT_EQ(s.disabled.size(), 2u);
  // The finger is outside the loaded chain: its pair is the description's, not the model's.
  const auto in = s.pairsIn(*u.model);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0], std::make_pair(std::string("l1"), std::string("l3")));
  const Eigen::VectorXd home = s.configuration("home", *u.model);
  ASSERT_EQ(home.size(), 3);
  EXPECT_EQ(home, Eigen::Vector3d(0.5, -1.0, 0.25));
  const Eigen::VectorXd wide = s.configuration("wide", *u.model);
  EXPECT_EQ(wide, Eigen::Vector3d(0.0, 2.5, 0.0));  // the others at the neutral configuration
  try {
    s.configuration("away", *u.model);
    ADD_FAILURE();
  } catch (const SuiteError& e) {
    EXPECT_NE(std::string(e.what()).find("\"away\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("home, wide"), std::string::npos) << e.what();
  }
}

void expectSrdfError(const std::string& xml, const std::vector<std::string>& fragments) {
  const UrdfModel u = parseUrdf(kArmUrdf, "planar.urdf");
  try {
    const Srdf s = parseSrdf(xml, "bad.srdf", u.names);
    for (const SrdfGroupState& st : s.states) s.configuration(st.name, *u.model);
    ADD_FAILURE() << "no error for " << xml;
  } catch (const SuiteError& e) {
    for (const std::string& f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

TEST(Srdf, UnknownNamesAndBadValuesAreErrorsNamingFileLineAndName) {
  expectSrdfError("<robot>\n<disable_collisions link1=\"l1\" link2=\"l9\"/></robot>", {"bad.srdf:2:", "'l9'"});
  expectSrdfError("<robot>\n<group_state name=\"s\" group=\"g\">\n<joint name=\"a7\" value=\"0\"/></group_state></robot>",
                  {"bad.srdf:3:", "'a7'"});
  expectSrdfError("<robot><group_state name=\"s\" group=\"g\">\n<joint name=\"a1\" value=\"abc\"/></group_state></robot>",
                  {"bad.srdf:2:", "'a1'", "abc"});
  expectSrdfError("<robot>\n<group_state name=\"s\" group=\"g\"><joint name=\"a1\" value=\"4\"/></group_state></robot>",
                  {"bad.srdf:2:", "'a1'", "outside its limits"});
  expectSrdfError("<robot><disable_collisions link1=\"l1\"/></robot>", {"bad.srdf:1:", "link2"});
  expectSrdfError("<mujoco/>", {"expected the root element <robot>"});
  expectSrdfError("<robot><disable_collisions", {"bad.srdf:1:", "malformed XML"});
}

TEST(Srdf, DisabledPairsLeaveTheCheckAndStatesStartTheFamily) {
  const std::string urdf = test::writeTempFile("robots_srdf", "planar.urdf", kArmUrdf);
  const std::string srdf = test::writeTempFile("robots_srdf", "planar.srdf", kArmSrdf);
  RobotFiles plain;
  const Family without = robotFamily(urdf, "", "finger", 4, 3, "", plain);
  EXPECT_EQ(without.problems.front().collision, nullptr);
  RobotFiles files;
  files.srdf = srdf;
  files.start_state = "home";
  const Family fam = robotFamily(urdf, "", "finger", 4, 3, "", files);
  ASSERT_EQ(fam.problems.size(), 4u);
  EXPECT_EQ(fam.name, "planar-self-pose");
  EXPECT_EQ(fam.start, "state:home");
  const auto& world = fam.problems.front().collision;
  ASSERT_NE(world, nullptr);
  for (const Problem& p : fam.problems) EXPECT_EQ(p.q0, Eigen::Vector4d(0.5, -1.0, 0.25, 0.02));
  // l3 carries a capsule to the finger; l1 and l3 are not adjacent, so only the SRDF leaves their pair out., so only the SRDF leaves their pair out.
  bool l1_l3_checked = false;
  for (int i = 0; i < static_cast<int>(world->pairs().size()); ++i)
    if (world->pairName(i) == "l1~l3" || world->pairName(i) == "l3~l1") l1_l3_checked = true;
  EXPECT_FALSE(l1_l3_checked);
  Scene bare;
  bare.name = "self";
  bare.source = "none";
  const auto world_without = buildCollisionWorld(bare, fam.problems.front().model);
  bool checked_without = false;
  for (int i = 0; i < static_cast<int>(world_without->pairs().size()); ++i)
    if (world_without->pairName(i) == "l1~l3") checked_without = true;
  EXPECT_TRUE(checked_without);
  // The scene key does the same, relative to the scene file.
  const std::string scene = test::writeTempFile("robots_srdf", "self.json", R"({"name": "cell", "srdf": "planar.srdf"})");
  const Family via_scene = robotFamily(urdf, "", "finger", 2, 3, scene, plain);
  for (int i = 0; i < static_cast<int>(via_scene.problems.front().collision->pairs().size()); ++i)
    EXPECT_NE(via_scene.problems.front().collision->pairName(i), "l1~l3");
  // A start state without an SRDF, and an unknown state, are errors.
  RobotFiles no_srdf;
  no_srdf.start_state = "home";
  EXPECT_THROW(robotFamily(urdf, "", "finger", 2, 3, "", no_srdf), SuiteError);
  files.start_state = "nowhere";
  EXPECT_THROW(robotFamily(urdf, "", "finger", 2, 3, "", files), SuiteError);
}


// ---- meshes -------------------------------------------------------------------

// An ASCII STL of the cube [-0.5, 0.5]^3: two triangles per face, normals out.
std::string cubeStl() {
  std::string out = "solid cube\n";
  for (int axis = 0; axis < 3; ++axis)
    for (int sign : {-1, 1}) {
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      auto corner = [&](int a, int b) {
        Eigen::Vector3d p = Eigen::Vector3d::Zero();
        p[axis] = 0.5 * sign;
        p[u] = 0.5 * a;
        p[v] = 0.5 * b;
        return fmt::format("      vertex {} {} {}\n", p.x(), p.y(), p.z());
      };
      const bool flip = sign < 0;
      const std::string c00 = corner(-1, -1), c10 = corner(1, -1), c11 = corner(1, 1), c01 = corner(-1, 1);
      for (const auto& tri : {std::array<std::string, 3>{c00, c10, c11}, std::array<std::string, 3>{c00, c11, c01}}) {
        out += "  facet normal 0 0 0\n    outer loop\n";
        out += flip ? tri[0] + tri[2] + tri[1] : tri[0] + tri[1] + tri[2];
        out += "    endloop\n  endfacet\n";
      }
    }
  return out + "endsolid cube\n";
}

const char* kTetObj = R"(# a tetrahedron
v 0 0 0
v 0.1 0 0
v 0 0.1 0
v 0 0 0.1
f 1 3 2
f 1 2 4
f 1 4 3
f 2 3 4
)";

// Two links with mesh collision geometry: a cube from a package, a
// tetrahedron by a path relative to the URDF.
std::string meshUrdf(const std::string& cube_uri) {
  return fmt::format(R"(<robot name="meshy">
  <link name="base"/>
  <link name="upper"><collision><origin xyz="0.3 0 0"/>
    <geometry><mesh filename="{}" scale="0.1 0.1 0.1"/></geometry></collision></link>
  <link name="fore"><collision><origin xyz="0.1 0 0"/>
    <geometry><mesh filename="meshes/tet.obj"/></geometry></collision></link>
  <link name="tool"/>
  <joint name="q1" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="q2" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0.6 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="q3" type="fixed"><parent link="fore"/><child link="tool"/><origin xyz="0.3 0 0"/></joint>
</robot>
)",
                     cube_uri);
}

struct MeshFiles {
  std::string urdf, package_root;
};
MeshFiles writeMeshRobot(const std::string& dir, const std::string& cube_uri = "package://cube_pkg/meshes/cube.stl") {
  MeshFiles f;
  f.package_root = test::processTempDir(dir + "_pkgs").string();
  std::filesystem::create_directories(f.package_root + "/cube_pkg/meshes");
  std::ofstream(f.package_root + "/cube_pkg/meshes/cube.stl") << cubeStl();
  f.urdf = test::writeTempFile(dir, "meshy.urdf", meshUrdf(cube_uri));
  std::filesystem::create_directories(std::filesystem::path(f.urdf).parent_path() / "meshes");
  std::ofstream(std::filesystem::path(f.urdf).parent_path() / "meshes" / "tet.obj") << kTetObj;
  return f;
}

std::string loadError(const std::string& path, const UrdfOptions& o) {
  try {
    loadUrdf(path, o);
  } catch (const SuiteError& e) {
    return e.what();
  }
  return "";
}

TEST(Meshes, ReadThroughPackagePathsWithScaleAndOrigin) {
  const MeshFiles f = writeMeshRobot("robots_mesh");
  UrdfOptions o;
  o.meshes = MeshGeometry::kMesh;
  o.package_path = {f.package_root};
  const UrdfModel u = loadUrdf(f.urdf, o);
  ASSERT_EQ(u.collision.size(), 2u);
  const Shape& cube = u.collision[0].shape.name == "upper" ? u.collision[0].shape : u.collision[1].shape;
  const Shape& tet = u.collision[0].shape.name == "upper" ? u.collision[1].shape : u.collision[0].shape;
  EXPECT_EQ(cube.kind, ShapeKind::kMesh);
  EXPECT_FALSE(cube.convex);
  EXPECT_EQ(cube.mesh->triangles.size(), 12u);
  double extent = 0.0;
  for (const auto& v : cube.mesh->vertices) extent = std::max(extent, v.cwiseAbs().maxCoeff());
  EXPECT_NEAR(extent, 0.05, 1e-9);  // scale 0.1 of the unit cube
  EXPECT_NEAR((cube.pose.p - Eigen::Vector3d(0.3, 0, 0)).norm(), 0.0, 1e-15);
  EXPECT_EQ(tet.mesh->triangles.size(), 4u);
  EXPECT_NE(cube.file.find("cube_pkg/meshes/cube.stl"), std::string::npos);
  // The same through ROS_PACKAGE_PATH (a workspace holding the package one level down).
  const std::string ws = test::processTempDir("robots_mesh_ws").string();
  std::filesystem::create_directories(ws + "/src");
  std::filesystem::copy(f.package_root + "/cube_pkg", ws + "/src/cube_pkg", std::filesystem::copy_options::recursive);
  ::setenv("ROS_PACKAGE_PATH", ("/nonexistent:" + ws).c_str(), 1);
  const UrdfModel via_env = loadUrdf(f.urdf, UrdfOptions{.meshes = MeshGeometry::kMesh});
  ::unsetenv("ROS_PACKAGE_PATH");
  ASSERT_EQ(via_env.collision.size(), 2u);
  // The capsule switch reads no mesh: the links get fitted capsules later.
  UrdfOptions capsules = o;
  capsules.meshes = MeshGeometry::kCapsules;
  EXPECT_TRUE(loadUrdf(f.urdf, capsules).collision.empty());
  // A model loaded for its kinematics alone reads no mesh (nor needs the package).
  EXPECT_TRUE(loadUrdf(f.urdf).collision.empty());
}

TEST(Meshes, MissingOrUnreadableMeshesNameTheLinkAndTheFile) {
  const MeshFiles f = writeMeshRobot("robots_mesh_bad");
  // No package path: the package is not found.
  const std::string missing = loadError(f.urdf, UrdfOptions{.meshes = MeshGeometry::kMesh});
  EXPECT_NE(missing.find("link 'upper'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("package://cube_pkg/meshes/cube.stl"), std::string::npos) << missing;
  EXPECT_NE(missing.find("--package-path"), std::string::npos) << missing;
  EXPECT_NE(missing.find("meshy.urdf:3:"), std::string::npos) << missing;
  // A relative file that is not there.
  const MeshFiles g = writeMeshRobot("robots_mesh_bad2", "meshes/nothere.stl");
  const std::string rel = loadError(g.urdf, UrdfOptions{.meshes = MeshGeometry::kMesh});
  EXPECT_NE(rel.find("link 'upper'"), std::string::npos) << rel;
  EXPECT_NE(rel.find("nothere.stl"), std::string::npos) << rel;
  // A file that is not a mesh.
  const MeshFiles h = writeMeshRobot("robots_mesh_bad3", "meshes/garbage.stl");
  std::ofstream(std::filesystem::path(h.urdf).parent_path() / "meshes" / "garbage.stl") << "this is not a mesh\n";
  const std::string bad = loadError(h.urdf, UrdfOptions{.meshes = MeshGeometry::kMesh});
  EXPECT_NE(bad.find("link 'upper'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("garbage.stl"), std::string::npos) << bad;
}

TEST(Meshes, ConvexHullOfPointsInsideAndOnTheCube) {
  TriangleMesh m;
  for (int i = 0; i < 8; ++i) m.vertices.emplace_back(i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
  Rng rng(5);
  for (int i = 0; i < 50; ++i) m.vertices.emplace_back(rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4));
  m.triangles.emplace_back(0, 1, 2);
  const TriangleMesh h = convexHull(m, "points");
  EXPECT_EQ(h.vertices.size(), 8u);  // the inner points are not on the hull
  EXPECT_EQ(h.triangles.size(), 12u);
  for (const auto& t : h.triangles) {
    const Eigen::Vector3d a = h.vertices[static_cast<size_t>(t[0])];
    const Eigen::Vector3d n = (h.vertices[static_cast<size_t>(t[1])] - a).cross(h.vertices[static_cast<size_t>(t[2])] - a);
    EXPECT_GT(n.dot(a), 0.0);  // outward
  }
  TriangleMesh flat;
  for (int i = 0; i < 4; ++i) flat.vertices.emplace_back(i & 1, i & 2 ? 1 : 0, 0.0);
  flat.triangles.emplace_back(0, 1, 2);
  EXPECT_THROW(convexHull(flat, "flat"), std::runtime_error);
}

TEST(Meshes, ExactCheckOfTheMeshAndOfItsHull) {
  const MeshFiles f = writeMeshRobot("robots_mesh_check");
  UrdfOptions o;
  o.meshes = MeshGeometry::kMesh;
  o.package_path = {f.package_root};
  const UrdfModel mesh = loadUrdf(f.urdf, o);
  o.meshes = MeshGeometry::kHull;
  const UrdfModel hull = loadUrdf(f.urdf, o);
  // The cube (side 0.1, centred 0.3 m along the upper link's x) against
  // spheres at q = 0: inside it, crossing its face, 0.1 m beyond it.
  auto report = [](const UrdfModel& u, const Eigen::Vector3d& at, double r) {
    Pose3d p;
    p.p = at;
    CollisionWorld w(u.model, u.collision, {Shape::sphere("ball", r, p)}, {}, "t");
    Data d(*u.model);
    forwardKinematics(*u.model, Eigen::VectorXd::Zero(u.model->nq()), d);
    return w.check(d);
  };
  const Eigen::Vector3d centre(0.3, 0, 0);
  // Inside: the BVH checks the surface, which a small ball within does not touch; the hull is solid.
  EXPECT_TRUE(report(mesh, centre, 0.01).collision_free);
  EXPECT_FALSE(report(hull, centre, 0.01).collision_free);
  // Across the face: both collide.
  const CollisionReport across = report(mesh, centre + Eigen::Vector3d(0.06, 0, 0), 0.02);
  EXPECT_FALSE(across.collision_free) << across.pair << " " << across.min_clearance;
  EXPECT_FALSE(report(hull, centre + Eigen::Vector3d(0.06, 0, 0), 0.02).collision_free);
  // Beyond the face by 0.1 m: both clear, at that distance.
  const CollisionReport far_mesh = report(mesh, centre + Eigen::Vector3d(0.0, 0.0, 0.17), 0.02);
  const CollisionReport far_hull = report(hull, centre + Eigen::Vector3d(0.0, 0.0, 0.17), 0.02);
  EXPECT_TRUE(far_mesh.collision_free);
  EXPECT_TRUE(far_hull.collision_free);
  EXPECT_NEAR(far_mesh.min_clearance, 0.1, 1e-6);
  EXPECT_NEAR(far_hull.min_clearance, 0.1, 1e-6);
}

// The mesh robot of writeMeshRobot in MJCF: the same bodies, joints and mesh
// files (meshdir beside the URDF's meshes), the cube scaled as in the URDF.
const char* kMeshMjcf = R"(<mujoco model="meshy">
  <compiler meshdir="meshes"/>
  <asset>
    <mesh file="cube.stl" scale="0.1 0.1 0.1"/>
    <mesh name="tet" file="tet.obj"/>
  </asset>
  <worldbody>
    <body name="upper">
      <joint name="q1" axis="0 0 1" range="-171.887 171.887"/>
      <geom type="mesh" mesh="cube" pos="0.3 0 0"/>
      <body name="fore" pos="0.6 0 0">
        <joint name="q2" axis="0 1 0" range="-114.592 114.592"/>
        <geom type="mesh" mesh="tet" pos="0.1 0 0"/>
        <body name="tool" pos="0.3 0 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
)";

std::string writeMeshMjcf(const MeshFiles& f) {
  const std::filesystem::path dir = std::filesystem::path(f.urdf).parent_path();
  std::filesystem::copy_file(f.package_root + "/cube_pkg/meshes/cube.stl", dir / "meshes" / "cube.stl",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string path = (dir / "meshy.xml").string();
  std::ofstream(path) << kMeshMjcf;
  return path;
}

// World positions of a model's mesh vertices at q, per body name, sorted.
std::map<std::string, std::vector<std::array<double, 3>>> worldVertices(const UrdfModel& u, const Eigen::VectorXd& q) {
  Data d(*u.model);
  forwardKinematics(*u.model, q, d);
  std::map<std::string, std::vector<std::array<double, 3>>> out;
  for (const LinkShape& l : u.collision) {
    EXPECT_EQ(l.shape.kind, ShapeKind::kMesh);
    const Eigen::Isometry3d T = d.world_T_body[static_cast<size_t>(l.body)].toIsometry() * l.shape.pose.toIsometry();
    auto& vs = out[u.model->bodyName(l.body)];
    for (const Eigen::Vector3d& v : l.shape.mesh->vertices) {
      const Eigen::Vector3d w = T * v;
      vs.push_back({w.x(), w.y(), w.z()});
    }
    std::sort(vs.begin(), vs.end());
  }
  return out;
}

TEST(Mjcf, MeshGeomsMatchTheSameRobotsUrdfMeshes) {
  const MeshFiles f = writeMeshRobot("robots_mjcf_mesh");
  const std::string mjcf = writeMeshMjcf(f);
  UrdfOptions o;
  o.meshes = MeshGeometry::kMesh;
  o.package_path = {f.package_root};
  const UrdfModel from_urdf = loadUrdf(f.urdf, o);
  const UrdfModel from_mjcf = loadMjcf(mjcf, o);
  ASSERT_EQ(from_mjcf.collision.size(), 2u);
  for (const LinkShape& l : from_mjcf.collision) {
    EXPECT_FALSE(l.shape.convex);
    EXPECT_NE(l.shape.file.find("meshes"), std::string::npos) << l.shape.file;
  }
  // Every vertex in the world, over random configurations, to 1e-12.
  Rng rng(3);
  for (int k = 0; k < 20; ++k) {
    const Eigen::VectorXd q = randomConfiguration(*from_urdf.model, rng);
    const auto a = worldVertices(from_urdf, q), b = worldVertices(from_mjcf, byName(*from_urdf.model, q, *from_mjcf.model));
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), a.size());
    for (const auto& [body, vs] : a) {
      ASSERT_TRUE(b.count(body)) << body;
      ASSERT_EQ(b.at(body).size(), vs.size()) << body;
      for (size_t i = 0; i < vs.size(); ++i)
        for (int c = 0; c < 3; ++c) EXPECT_NEAR(b.at(body)[i][static_cast<size_t>(c)], vs[i][static_cast<size_t>(c)], 1e-12);
    }
  }
  // The hull switch, as MuJoCo collides meshes; the capsule switch reads none.
  o.meshes = MeshGeometry::kHull;
  for (const LinkShape& l : loadMjcf(mjcf, o).collision) EXPECT_TRUE(l.shape.convex);
  o.meshes = MeshGeometry::kCapsules;
  EXPECT_TRUE(loadMjcf(mjcf, o).collision.empty());
}

TEST(Mjcf, InlineMeshesAreTheirHullUnlessFacesAreGiven) {
  UrdfOptions o;
  o.meshes = MeshGeometry::kMesh;
  // Eight corners of a 0.2 m cube and its centre; a tetrahedron with faces.
  const UrdfModel m = parseMjcf(R"(<mujoco><asset>
      <mesh name="box" scale="2 2 2" vertex="-.05 -.05 -.05  .05 -.05 -.05  -.05 .05 -.05  .05 .05 -.05
                                              -.05 -.05 .05  .05 -.05 .05  -.05 .05 .05  .05 .05 .05  0 0 0"/>
      <mesh name="tet" vertex="0 0 0  .1 0 0  0 .1 0  0 0 .1" face="0 2 1  0 1 3  0 3 2  1 2 3"/>
    </asset><worldbody><body name="a"><joint name="j"/><geom type="mesh" mesh="box"/>
      <geom type="mesh" mesh="tet" pos="0 0 .5"/></body></worldbody></mujoco>)",
                                "inline.xml", o);
  ASSERT_EQ(m.collision.size(), 2u);
  const Shape& box = m.collision[0].shape;
  EXPECT_TRUE(box.convex);
  EXPECT_EQ(box.mesh->vertices.size(), 8u);  // the centre is not on the hull
  EXPECT_EQ(box.mesh->triangles.size(), 12u);
  for (const Eigen::Vector3d& v : box.mesh->vertices) EXPECT_NEAR(v.cwiseAbs().maxCoeff(), 0.1, 1e-15);
  const Shape& tet = m.collision[1].shape;
  EXPECT_FALSE(tet.convex);
  EXPECT_EQ(tet.mesh->triangles.size(), 4u);
  EXPECT_NEAR(tet.pose.p.z(), 0.5, 1e-15);
}

TEST(Mjcf, MeshErrorsNameTheLineTheGeomAndTheFile) {
  UrdfOptions o;
  o.meshes = MeshGeometry::kMesh;
  auto error = [&](const std::string& xml) {
    try {
      parseMjcf(xml, "/nonexistent/bad.xml", o);
    } catch (const SuiteError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // The body's element starts on line 2 of every file below.
  const std::string body = "<worldbody><body name='a'><joint name='j'/>\n";
  auto has = [](const std::string& msg, std::initializer_list<const char*> parts) {
    for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
  };
  has(error("<mujoco>" + body + "<geom name='g' type='mesh' mesh='nope'/></body></worldbody></mujoco>"),
      {"bad.xml:2:", "geom name=\"g\"", "no <asset><mesh name=\"nope\">"});
  has(error("<mujoco><asset><mesh file='gone.stl'/></asset>" + body +
            "<geom type='mesh' mesh='gone'/></body></worldbody></mujoco>"),
      {"bad.xml:2:", "mesh 'gone'", "/nonexistent/gone.stl", "no such file"});
  has(error("<mujoco><asset><mesh file='x.stl' refpos='0 0 1'/></asset>" + body + "</body></worldbody></mujoco>"),
      {"refpos", "not supported"});
  has(error("<mujoco><asset><mesh name='m' vertex='0 0 0 1 0 0 0 1 0 0 0 1'/></asset>" + body +
            "<geom type='box' mesh='m'/></body></worldbody></mujoco>"),
      {"bad.xml:2:", "fitted to a mesh"});
  has(error("<mujoco><asset><mesh name='flat' vertex='0 0 0 1 0 0 0 1 0 1 1 0'/></asset>" + body +
            "<geom type='mesh' mesh='flat'/></body></worldbody></mujoco>"),
      {"bad.xml:2:", "mesh 'flat'", "no convex hull"});
  has(error("<mujoco><asset><mesh name='t' vertex='0 0 0 1 0 0 0 1 0 0 0 1' face='0 1 7'/></asset>" + body +
            "</body></worldbody></mujoco>"),
      {"face", "7 is not the index"});
}

TEST(Meshes, ColladaUnitAndNodeTransformsAreAppliedAndItsUpAxisIgnored) {
  // A tetrahedron in centimetres, its node moved 5 cm along z, in a file
  // that says y is up: a robot description's meshes are z-up (as ROS tools
  // read them) and in the file's unit.
  const std::string dae = test::writeTempFile("robots_mesh_dae", "tet.dae", R"(<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="centimeter" meter="0.01"/><up_axis>Y_UP</up_axis></asset>
  <library_geometries><geometry id="tet"><mesh>
    <source id="p"><float_array id="pa" count="12">0 0 0 10 0 0 0 10 0 0 0 10</float_array>
      <technique_common><accessor source="#pa" count="4" stride="3"><param name="X" type="float"/>
        <param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <triangles count="4"><input semantic="VERTEX" source="#v" offset="0"/><p>0 2 1 0 1 3 0 3 2 1 2 3</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n"><translate>0 0 5</translate>
    <instance_geometry url="#tet"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
)");
  const TriangleMesh m = readMeshFile(dae, Eigen::Vector3d(1, 1, 2), 100);
  ASSERT_EQ(m.triangles.size(), 4u);
  std::vector<std::array<double, 3>> got;
  for (const Eigen::Vector3d& v : m.vertices) got.push_back({v.x(), v.y(), v.z()});
  std::sort(got.begin(), got.end());
  // (cm + 5 cm along z) in metres, then z scaled by 2.
  const std::vector<std::array<double, 3>> want = {{0, 0, 0.1}, {0, 0, 0.3}, {0, 0.1, 0.1}, {0.1, 0, 0.1}};
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    for (size_t c = 0; c < 3; ++c) EXPECT_NEAR(got[i][c], want[i][c], 1e-7) << i;
}

// A collision-aware family of the mesh robot, from its URDF and from its
// MJCF: every converged answer reaches the target and is collision-free by
// the exact check of the meshes.
void expectVerifiedMeshSolves(const std::string& file, bool mjcf, const MeshFiles& f) {
  const std::string scene = test::writeTempFile("robots_mesh_solve", "post.json", R"({"name": "post",
    "obstacles": [{"name": "post", "type": "box", "size": [0.1, 0.1, 1.0], "position": [0.0, 0.7, 0.0]}]})");
  RobotFiles files;
  files.package_path = {f.package_root};
  files.mjcf = mjcf;
  const Family fam = robotFamily(file, "", "tool", 6, 11, scene, files);
  const auto& world = fam.problems.front().collision;
  ASSERT_NE(world, nullptr);
  int meshes = 0;
  for (const LinkShape& l : world->links()) meshes += l.shape.kind == ShapeKind::kMesh;
  EXPECT_EQ(meshes, 2) << file;
  auto solver = Registry::global().create("dls:restarts=20:collision=reject");
  SolverOptions o;
  o.position_tolerance = 1e-6;
  int converged = 0;
  for (const Problem& p : fam.problems) {
    Eigen::VectorXd q = p.q0;
    // A pose target of the two-joint arm is the FK of one configuration: it converges to that one.
    if (!solver->solve(p, q, o).converged()) continue;
    ++converged;
    Data d(*p.model);
    forwardKinematics(*p.model, q, d);
    EXPECT_LE(evaluateGoals(*p.model, p.goals, d).position, o.position_tolerance);
    EXPECT_TRUE(world->check(d).collision_free);
  }
  EXPECT_GE(converged, 4) << file;
}

TEST(Meshes, CollisionAwareSolvesOnAMeshRobotAreVerified) {
  const MeshFiles f = writeMeshRobot("robots_mesh_solve");
  expectVerifiedMeshSolves(f.urdf, false, f);
  expectVerifiedMeshSolves(writeMeshMjcf(f), true, f);
}

TEST(Meshes, EnclosingCapsuleOfALongMesh) {
  // Points on a capsule's surface (radius 0.05 around the segment a-b): the
  // enclosing capsule along their principal axis is that capsule.
  const Eigen::Vector3d a(0.1, -0.2, 0.0), b(0.4, 0.1, 0.05);
  const Eigen::Vector3d z = (b - a).normalized();
  const Eigen::Vector3d x = z.unitOrthogonal(), y = z.cross(x);
  std::vector<Eigen::Vector3d> pts;
  for (int k = 0; k < 32; ++k) {
    const double phi = 2 * kPi * k / 32;
    const Eigen::Vector3d radial = std::cos(phi) * x + std::sin(phi) * y;
    for (int j = 0; j <= 8; ++j) pts.push_back(a + (b - a) * (j / 8.0) + 0.05 * radial);
    for (int j = 1; j <= 4; ++j) {
      const double th = kPi / 2 * j / 4;
      pts.push_back(a + 0.05 * (std::cos(th) * radial - std::sin(th) * z));
      pts.push_back(b + 0.05 * (std::cos(th) * radial + std::sin(th) * z));
    }
  }
  const auto c = enclosingCapsule(pts);
  ASSERT_TRUE(c.has_value());
  EXPECT_NEAR(c->radius, 0.05, 1e-9);
  EXPECT_NEAR(std::min((c->a - a).norm(), (c->a - b).norm()), 0.0, 1e-9);
  EXPECT_NEAR((c->b - c->a).norm(), (b - a).norm(), 1e-9);
  // Enclosing, for any points (here a random cloud).
  Rng rng(8);
  std::vector<Eigen::Vector3d> cloud;
  for (int i = 0; i < 300; ++i) cloud.emplace_back(rng.uniform(-1, 1), rng.uniform(-0.3, 0.3), rng.uniform(-0.1, 0.2));
  const auto e = enclosingCapsule(cloud);
  ASSERT_TRUE(e.has_value());
  for (const auto& p : cloud) {
    double s = 0, t = 0;
    segmentSegment(e->a, e->b, p, p, &s, &t);
    EXPECT_LE((e->a + s * (e->b - e->a) - p).norm(), e->radius);
  }
}

}  // namespace
}  // namespace ikbench
