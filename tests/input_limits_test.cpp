// Hostile and corrupted input: every loader bounds what it accepts before it
// recurses or allocates (ikbench/scenarios/input_limits.h) and answers with
// an error naming the file, the line and the limit. Each test is built from
// the smallest input that showed the defect: deep nesting, huge frame
// counts, a stray UTF-8 lead byte, numbers out of range, duplicate keys, a
// mimic of a missing joint, axes and limits that overflow.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/scenarios/bvh.h"
#include "ikbench/scenarios/input_limits.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/scenarios/urdf.h"
#include "test_util.h"

namespace ikbench {
namespace {
namespace fs = std::filesystem;

std::string writeTemp(const std::string& name, const std::string& text) {
  return test::writeTempFile("input_limits", name, text);
}

template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const SuiteError& e) {
    return e.what();
  }
  return "(no SuiteError)";
}

void expectFragments(const std::string& what, const std::vector<std::string>& fragments) {
  for (const auto& f : fragments) EXPECT_NE(what.find(f), std::string::npos) << "missing '" << f << "' in: " << what;
}

// ---- suite JSON -----------------------------------------------------------

TEST(SuiteInput, DeepNestingIsRefusedBeforeParsing) {
  // A few thousand levels crashed the error path (recursive dump()).
  std::string text = "{\"name\": \"deep\",\n\"families\": ";
  for (int k = 0; k < 5000; ++k) text += "[";
  for (int k = 0; k < 5000; ++k) text += "]";
  text += "}";
  const std::string path = writeTemp("deep.json", text);
  expectFragments(errorOf([&] { loadSuite(path); }), {path + ":2:", "nested more than 64 levels"});
}

TEST(SuiteInput, NestingAtTheLimitIsOnlyATypeError) {
  // 64 levels are accepted by the structure check; the field check then says what it expected.
  std::string text = "{\"name\": \"ok\", \"families\": ";
  for (int k = 0; k < 62; ++k) text += "[";
  for (int k = 0; k < 62; ++k) text += "]";
  text += "}";
  const std::string what = errorOf([&] { loadSuite(writeTemp("limit.json", text)); });
  EXPECT_EQ(what.find("nested"), std::string::npos) << what;
  expectFragments(what, {"families"});
}

TEST(SuiteInput, NumberOutOfRangeNamesTheLine) {
  const std::string path = writeTemp("huge.json", "{\"name\": \"x\",\n\"seed\": 1,\n\"options\": {\"max_iterations\": 1e400}}");
  expectFragments(errorOf([&] { loadSuite(path); }), {path + ":3:", "1e400", "out of the range of a double"});
}

TEST(SuiteInput, DuplicateKeysAreRefused) {
  const std::string path =
      writeTemp("dup.json", "{\"name\": \"x\",\n \"seed\": 1,\n \"families\": [],\n \"seed\": 2}");
  expectFragments(errorOf([&] { loadSuite(path); }), {path + ":4:", "key \"seed\" appears twice", "first on line 2"});
  // The same key in two different objects is fine.
  const std::string ok = writeTemp(
      "nodup.json",
      "{\"name\": \"x\", \"seed\": 1, \"families\": [{\"name\": \"a\", \"type\": \"random_chain\", \"count\": 1, "
      "\"chain\": {\"joints\": 3}}, {\"name\": \"b\", \"type\": \"random_chain\", \"count\": 1, \"chain\": "
      "{\"joints\": 3}}]}");
  EXPECT_EQ(loadSuite(ok).families.size(), 2u);
}

TEST(SuiteInput, AFamilyOfTooManyJointsIsRefusedBeforeItIsBuilt) {
  // 1000 distinct models of 10,000 joints each: 1e7 joints, refused at the first model.
  const std::string path = writeTemp(
      "big_family.json",
      "{\"name\": \"x\", \"seed\": 1, \"families\": [\n {\"name\": \"a\", \"type\": \"random_chain\", "
      "\"count\": 1000, \"models\": 1000, \"chain\": {\"joints\": 10000}}]}");
  expectFragments(errorOf([&] { loadSuite(path); }),
                  {path + ":2:", "families[0].models", "more than 1000000 joints in one family"});
}

TEST(SuiteInput, DirectoryAndMissingFilesAreClearErrors) {
  const fs::path dir = test::processTempDir("input_limits_dir") / "a_dir.json";
  fs::create_directories(dir);
  expectFragments(errorOf([&] { loadSuite(dir.string()); }), {"not a regular file"});
  expectFragments(errorOf([&] { loadSuite("/nonexistent/suite.json"); }), {"/nonexistent/suite.json", "no such file"});
}

// ---- URDF -----------------------------------------------------------------

const std::string kArm = R"(<robot name="arm">
  <link name="a"/><link name="b"/><link name="c"/>
  <joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0.5 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
)";

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(UrdfInput, DeepElementNestingIsRefusedBeforeParsing) {
  // ~200k nested elements overflowed TinyXML's recursive parser.
  std::string xml = "<robot name=\"deep\">\n";
  for (int k = 0; k < 200000; ++k) xml += "<a>";
  for (int k = 0; k < 200000; ++k) xml += "</a>";
  xml += "</robot>\n";
  expectFragments(errorOf([&] { parseUrdf(xml, "deep.urdf"); }), {"deep.urdf:2:", "nested more than 64 levels"});
  // Comments, self-closing elements and quoted '>' do not count as nesting.
  std::string ok = kArm;
  ok = replaced(ok, "<link name=\"a\"/>", "<!-- <<<<<<< --><link name=\"a\"><visual name=\">>\"/></link>");
  EXPECT_EQ(parseUrdf(ok, "ok.urdf").model->nv(), 2);
}

TEST(UrdfInput, StrayUtf8LeadByteAtTheEndIsAnErrorNotAnOverRead) {
  // TinyXML steps over a 4-byte sequence from its lead byte: the loader pads the text.
  for (const char lead : {'\xF0', '\xE0', '\xC3'}) {
    const std::string xml = std::string("<robot name=\"x\"><link name=\"a\"/></robot>") + lead;
    const std::string what = errorOf([&] { parseUrdf(xml, "utf8.urdf"); });
    // Either TinyXML accepts the trailing byte as text after the root, or it reports it: never a crash.
    if (what != "(no SuiteError)") expectFragments(what, {"utf8.urdf"});
    const std::string inside = std::string("<robot name=\"x\"><link name=\"a") + lead;
    expectFragments(errorOf([&] { parseUrdf(inside, "utf8.urdf"); }), {"utf8.urdf:1:", "malformed XML"});
  }
}

TEST(UrdfInput, LongChainsLoadInLinearTime) {
  // The cycle check walked every link to the root (quadratic): a 20,000-joint
  // chain loads now; the check is the number of joints, not a timing.
  const int n = 20000;
  std::string xml = "<robot name=\"long\">\n";
  for (int k = 0; k <= n; ++k) xml += "<link name=\"l" + std::to_string(k) + "\"/>\n";
  for (int k = 0; k < n; ++k)
    xml += "<joint name=\"j" + std::to_string(k) + "\" type=\"continuous\"><parent link=\"l" + std::to_string(k) +
           "\"/><child link=\"l" + std::to_string(k + 1) + "\"/><origin xyz=\"0.01 0 0\"/><axis xyz=\"0 0 1\"/></joint>\n";
  xml += "</robot>\n";
  const UrdfModel u = parseUrdf(xml, "long.urdf");
  EXPECT_EQ(u.model->nv(), n);
  // A cycle in a long chain is still found, with the joint's line.
  std::string cyc = replaced(xml, "<parent link=\"l0\"/>", "<parent link=\"l" + std::to_string(n) + "\"/>");
  expectFragments(errorOf([&] { parseUrdf(cyc, "cycle.urdf"); }), {"cycle.urdf:", "links form a cycle"});
}

TEST(UrdfInput, MimicOfAMissingJointIsRefused) {
  const std::string xml = replaced(kArm, "<axis xyz=\"0 1 0\"/>", "<axis xyz=\"0 1 0\"/>\n    <mimic joint=\"nope\"/>");
  expectFragments(errorOf([&] { parseUrdf(xml, "mimic.urdf"); }),
                  {"mimic.urdf:6:", "joint 'j2' <mimic>: joint 'nope' is not defined"});
}

TEST(UrdfInput, HugeAxisIsADirectionAndHugeLimitsAreRefused) {
  // The norm of (1e308, 0, 0) overflows: the axis is still +x, not "zero".
  const std::string big = replaced(kArm, "<axis xyz=\"0 0 1\"/>", "<axis xyz=\"1e308 0 0\"/>");
  const UrdfModel u = parseUrdf(big, "big.urdf");
  EXPECT_NEAR((u.model->axis(1) - Eigen::Vector3d::UnitX()).norm(), 0.0, 1e-15);
  expectFragments(errorOf([&] { parseUrdf(replaced(kArm, "<axis xyz=\"0 0 1\"/>", "<axis xyz=\"0 0 0\"/>"), "z.urdf"); }),
                  {"z.urdf:3:", "the axis is zero"});
  // +-1e308 limits: upper - lower overflows, so no configuration could be sampled between them.
  const std::string wide = replaced(kArm, "lower=\"-1\" upper=\"1\"", "lower=\"-1e308\" upper=\"1e308\"");
  expectFragments(errorOf([&] { parseUrdf(wide, "wide.urdf"); }), {"wide.urdf", "too far apart"});
}

// ---- the model API --------------------------------------------------------

TEST(ModelInput, HugeApiAxisIsNormalisedNotZeroed) {
  JointSpec j;
  j.name = "j";
  j.type = JointType::kRevolute;
  j.axis = Eigen::Vector3d(1e200, 0, 0);
  const Model m({j}, "big");
  EXPECT_EQ(m.axis(0), Eigen::Vector3d::UnitX());
  j.axis = Eigen::Vector3d(3e-300, 4e-300, 0);
  EXPECT_THROW(Model({j}, "tiny"), ModelError);  // below 1e-12: zero
  j.axis = Eigen::Vector3d::UnitZ();
  j.lower = Eigen::VectorXd::Constant(1, -1e308);
  j.upper = Eigen::VectorXd::Constant(1, 1e308);
  EXPECT_THROW(Model({j}, "wide"), ModelError);
  j.lower[0] = -1e300;  // wide but representable: accepted
  j.upper[0] = 1e300;
  EXPECT_NO_THROW(Model({j}, "wide but finite"));
}

TEST(ModelInput, RotationLimitsMustHoldTheRestOrientation) {
  // A ball joint limited to rotation-vector x in [3.67, 3.81] has no orientation
  // within its limits (|log R| <= pi): solvers clamped into the box and returned
  // configurations outside it. Such limits are refused; limits around 0 are kept.
  JointSpec j;
  j.name = "ball";
  j.type = JointType::kBall;
  j.lower = Eigen::Vector3d(3.67, -1.0, -1.0);
  j.upper = Eigen::Vector3d(3.81, 1.0, 1.0);
  try {
    Model({j}, "ball");
    ADD_FAILURE() << "no ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("do not contain 0"), std::string::npos) << e.what();
  }
  j.lower = Eigen::Vector3d(0.0, -1.0, -0.5);
  j.upper = Eigen::Vector3d(1.5, 1.0, 0.0);
  const Model m({j}, "ball");
  EXPECT_TRUE(withinLimits(m, m.neutralConfiguration(), 0.0));
}

// ---- BVH ------------------------------------------------------------------

std::string bvhHeader(const std::string& frames, bool channels) {
  return std::string("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n") + (channels ? "  CHANNELS 1 Zrotation\n" : "") +
         "  End Site\n  {\n    OFFSET 0 1 0\n  }\n}\nMOTION\nFrames: " + frames + "\nFrame Time: 0.1\n";
}

TEST(BvhInput, DeepJointNestingIsRefused) {
  // 5,000 nested joints overflowed the recursive parser under ASan.
  std::string text = "HIERARCHY\nROOT j0\n{\n OFFSET 0 0 1\n";
  const int depth = 5000;
  for (int k = 1; k < depth; ++k) text += "JOINT j" + std::to_string(k) + "\n{\n OFFSET 0 0 1\n";
  for (int k = 0; k < depth; ++k) text += "}\n";
  text += "MOTION\nFrames: 0\nFrame Time: 0.1\n";
  // The first joint past the limit is on line 3 * 256 + 2 (three lines per joint, ROOT on line 2).
  expectFragments(errorOf([&] { parseBvh(text, "deep.bvh"); }),
                  {"deep.bvh:" + std::to_string(3 * kMaxBvhNesting + 2) + ":", "joint 'j256'", "nested 257 levels",
                   "limit is 256"});
}

TEST(BvhInput, FrameCountsAreBoundedWithOrWithoutChannels) {
  // Without CHANNELS the frame count escaped the cap (3 GB for a 127-byte file).
  expectFragments(errorOf([&] { parseBvh(bvhHeader("200000000", false), "noch.bvh"); }),
                  {"noch.bvh:11:", "200000000 frames is too many", "limit is 10000000"});
  // 3,000,000,000 no longer wraps around an int.
  expectFragments(errorOf([&] { parseBvh(bvhHeader("3000000000", true), "big.bvh"); }),
                  {"big.bvh:12:", "3000000000 frames is too many"});
  // The value cap (frames x channels) is still applied with channels.
  EXPECT_NO_THROW(parseBvh(bvhHeader("2", true) + "0\n1\n", "ok.bvh"));
}

}  // namespace
}  // namespace ikbench
