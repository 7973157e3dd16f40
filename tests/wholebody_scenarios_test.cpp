// Masses and centres of mass from robot and skeleton files: URDF <inertial>,
// MJCF <inertial>, and Winter's anthropometric table for BVH skeletons.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/scenarios/bvh.h"
#include "ikbench/scenarios/mjcf.h"
#include "ikbench/scenarios/skeleton.h"
#include "ikbench/scenarios/urdf.h"
#include "test_util.h"

namespace ikbench {
namespace {

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Sum of every <mass value="..."> in the text, read by a regular expression
// (independently of urdfdom).
double sumOfMassTags(const std::string& xml) {
  const std::regex re("<mass\\s+value\\s*=\\s*\"([^\"]+)\"");
  double sum = 0.0;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), re); it != std::sregex_iterator(); ++it)
    sum += std::stod((*it)[1].str());
  return sum;
}

TEST(UrdfMasses, InertialMassAndOriginBecomeBodyMassAndCom) {
  const std::string xml = R"(<robot name="r">
  <link name="base"><inertial><origin xyz="0 0 0.05"/><mass value="4"/>
    <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.2 0 0" rpy="0 0.3 0"/><mass value="1.5"/>
    <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="fixed"><parent link="arm"/><child link="tool"/><origin xyz="0.4 0 0"/></joint>
</robot>)";
  const UrdfModel m = parseUrdf(xml, "r.urdf");
  const Model& model = *m.model;
  EXPECT_DOUBLE_EQ(model.totalMass(), 5.5);
  EXPECT_DOUBLE_EQ(model.bodyMass(model.bodyIndex("arm")), 1.5);
  EXPECT_EQ(model.bodyCom(model.bodyIndex("arm")), Eigen::Vector3d(0.2, 0, 0));
  EXPECT_EQ(model.bodyMass(model.bodyIndex("tool")), 0.0);
  Data d(model);
  Eigen::VectorXd q = model.neutralConfiguration();
  q[0] = 0.5;
  forwardKinematics(model, q, d);
  // (4 * (0, 0, 0.05) + 1.5 * ((0, 0, 0.1) + 0.2 (cos 0.5, sin 0.5, 0))) / 5.5
  const Eigen::Vector3d expected =
      (4.0 * Eigen::Vector3d(0, 0, 0.05) + 1.5 * Eigen::Vector3d(0.2 * std::cos(0.5), 0.2 * std::sin(0.5), 0.1)) / 5.5;
  EXPECT_LT((centreOfMass(model, d, 0) - expected).norm(), 1e-14);
}

TEST(UrdfMasses, SharedRobotsTotalMassIsTheSumOfInertials) {
  const std::string dir = std::string(IKBENCH_SHARED_DATA_DIR) + "/robots";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "shared robot data " << dir << " is absent";
  int checked = 0;
  for (const char* name : {"ur5.urdf", "romeo_small.urdf", "solo12.urdf"}) {
    const std::string path = dir + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    const UrdfModel m = loadUrdf(path);
    const double expected = sumOfMassTags(readText(path));
    EXPECT_GT(expected, 0.0) << name;
    EXPECT_NEAR(m.model->totalMass(), expected, 1e-9 * expected) << name;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "none of the checked URDFs is in " << dir;
}

TEST(MjcfMasses, InertialElementGivesBodyMass) {
  const std::string xml = R"(<mujoco model="m"><worldbody>
    <body name="base"><inertial pos="0 0 0.02" mass="3"/>
      <body name="link" pos="0 0 0.1"><joint name="j" axis="0 0 1"/><inertial pos="0.1 0 0" mass="2"/>
        <geom type="sphere" size="0.05"/></body></body></worldbody></mujoco>)";
  const UrdfModel m = parseMjcf(xml, "m.xml");
  EXPECT_DOUBLE_EQ(m.model->totalMass(), 5.0);
  const int link = m.model->bodyIndex("link");
  ASSERT_GE(link, 0);
  EXPECT_DOUBLE_EQ(m.model->bodyMass(link), 2.0);
  EXPECT_EQ(m.model->bodyCom(link), Eigen::Vector3d(0.1, 0, 0));
  try {
    parseMjcf(R"(<mujoco><worldbody><body name="b"><inertial mass="-1"/></body></worldbody></mujoco>)", "bad.xml");
    FAIL() << "accepted a negative mass";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("bad.xml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("mass"), std::string::npos) << e.what();
  }
}

TEST(SkeletonMasses, ShippedHumanoidCarriesWintersFractions) {
  const BvhClip clip = loadBvh(std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/skeletons/humanoid_walk_wave.bvh");
  const Model& m = *clip.model;
  // One of every segment of Winter's Table 4.1: the fractions sum to 1.
  EXPECT_NEAR(m.totalMass(), 70.0, 1e-9);
  EXPECT_NEAR(m.bodyMass(m.bodyIndex("LeftUpLeg")), 7.0, 1e-12);
  EXPECT_NEAR(m.bodyMass(m.bodyIndex("RightHand")), 0.42, 1e-12);
  EXPECT_EQ(m.bodyMass(m.bodyIndex("LeftShoulder")), 0.0);
  EXPECT_EQ(m.bodyMass(m.bodyIndex("LeftHand_end")), 0.0);
  // The thigh's centre of mass is 0.433 of the way from hip to knee.
  const int thigh = m.bodyIndex("LeftUpLeg"), knee = m.bodyIndex("LeftLeg");
  EXPECT_LT((m.bodyCom(thigh) - 0.433 * m.parentTJoint(knee).p).norm(), 1e-12);
  // Standing in the first frame: the centre of mass lies between the feet and
  // the neck, above the hips' height band and over the feet horizontally.
  Data d(m);
  forwardKinematics(m, clip.frames.front(), d);
  const Eigen::Vector3d com = centreOfMass(m, d, 0);
  const Eigen::Vector3d lf = d.world_T_body[m.bodyIndex("LeftFoot")].p, rf = d.world_T_body[m.bodyIndex("RightFoot")].p;
  const Eigen::Vector3d neck = d.world_T_body[m.bodyIndex("Neck")].p;
  const int up = (neck - lf).cwiseAbs().maxCoeff() == std::abs((neck - lf).y()) ? 1 : 2;
  EXPECT_GT(com[up], std::max(lf[up], rf[up]));
  EXPECT_LT(com[up], neck[up]);
  const double spread = (lf - rf).norm();
  Eigen::Vector3d mid = 0.5 * (lf + rf);
  mid[up] = com[up];
  EXPECT_LT((com - mid).norm(), spread) << "com " << com.transpose() << " feet " << lf.transpose() << " / "
                                        << rf.transpose();
}

TEST(SkeletonMasses, BadBodyMassIsRefused) {
  std::vector<JointSpec> joints(1);
  joints[0].name = "Hips";
  EXPECT_THROW(assignAnthropometricMasses(joints, 0.0), std::invalid_argument);
  EXPECT_THROW(assignAnthropometricMasses(joints, std::nan("")), std::invalid_argument);
  // A lone joint without a bone gets nothing.
  EXPECT_EQ(assignAnthropometricMasses(joints, 70.0), 0.0);
}

}  // namespace
}  // namespace ikbench
