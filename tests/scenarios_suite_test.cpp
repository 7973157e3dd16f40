// Suite files: the shipped suites load deterministically, family seeds are
// independent of the other families, and bad files give errors naming the
// file, the line and the field.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "ikbench/scenarios/suite.h"
#include "test_util.h"

namespace ikbench {
namespace {
namespace fs = std::filesystem;

std::string writeTemp(const std::string& name, const std::string& text) {
  return test::writeTempFile("scenarios_suite", name, text);
}

// Expects loadSuite(path) to throw a SuiteError whose message contains every
// fragment; returns the message.
std::string expectSuiteError(const std::string& path, const std::vector<std::string>& fragments) {
  try {
    loadSuite(path);
  } catch (const SuiteError& e) {
    const std::string what = e.what();
    for (const auto& f : fragments) EXPECT_NE(what.find(f), std::string::npos) << "missing '" << f << "' in: " << what;
    return what;
  }
  ADD_FAILURE() << "no SuiteError for " << path;
  return "";
}

bool sameProblem(const Problem& a, const Problem& b) {
  if (a.name != b.name || a.goals.size() != b.goals.size() || a.q0 != b.q0) return false;
  if (a.model->nq() != b.model->nq() || a.model->numJoints() != b.model->numJoints()) return false;
  for (int j = 0; j < a.model->numJoints(); ++j) {
    if (a.model->parentTJoint(j).p != b.model->parentTJoint(j).p || a.model->axis(j) != b.model->axis(j)) return false;
  }
  for (size_t k = 0; k < a.goals.size(); ++k) {
    const Goal &x = a.goals[k], &y = b.goals[k];
    if (x.body != y.body || x.kind != y.kind || x.target_position != y.target_position ||
        x.target_orientation != y.target_orientation)
      return false;
  }
  return true;
}

const char* kMiniSuite = R"({
  "name": "mini",
  "seed": 7,
  "families": [
    {"name": "a", "type": "random_chain", "count": 6, "models": 2, "chain": {"joints": 4}},
    {"name": "b", "type": "random_tree", "count": 3,
     "tree": {"trunk": 1, "branches": 2, "branch_joints": 2}, "goals": {"kind": "pose"}}
  ]
})";

TEST(Suite, DataDirectoryAndBuiltinNames) {
  EXPECT_TRUE(fs::is_directory(dataDirectory())) << dataDirectory();
  const std::vector<std::string> names = builtinSuiteNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "quick"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "default"), names.end());
}

TEST(Suite, DataDirectoryHonoursEnvironment) {
  ::setenv("IKBENCH_DATA_DIR", "/nonexistent/ikbench-data", 1);
  EXPECT_EQ(dataDirectory(), "/nonexistent/ikbench-data");
  EXPECT_THROW(loadSuite("quick"), SuiteError);
  ::unsetenv("IKBENCH_DATA_DIR");
  EXPECT_NE(dataDirectory(), "/nonexistent/ikbench-data");
}

TEST(Suite, QuickSuiteContents) {
  const Suite s = loadSuite("quick");
  EXPECT_EQ(s.name, "quick");
  EXPECT_FALSE(s.solvers.empty());
  EXPECT_EQ(s.options.max_iterations, 300);
  std::set<std::string> names;
  size_t total = 0;
  for (const Family& f : s.families) {
    names.insert(f.name);
    EXPECT_FALSE(f.problems.empty()) << f.name;
    total += f.problems.size();
    for (const Problem& p : f.problems) {
      std::string why;
      ASSERT_TRUE(p.isValid(&why)) << p.name << ": " << why;
      EXPECT_EQ(static_cast<int>(p.goals.size()), f.effectors) << p.name;
      EXPECT_EQ(p.name.rfind(f.name + "/", 0), 0u) << p.name;
    }
  }
  EXPECT_GE(total, 250u);
  EXPECT_LE(total, 700u);
  EXPECT_TRUE(names.count("ur5-pose"));
  EXPECT_TRUE(names.count("humanoid-tracking"));
  for (const Family& f : s.families) {
    if (f.name == "humanoid-tracking") {
      EXPECT_TRUE(f.sequential);
      EXPECT_EQ(f.goal, "position");
      EXPECT_EQ(f.effectors, 5);
    }
    if (f.name == "ur5-pose") {
      EXPECT_EQ(f.dof, 6);
      EXPECT_EQ(f.goal, "pose");
      EXPECT_FALSE(f.sequential);
    }
    if (f.name == "tree3-position") EXPECT_EQ(f.effectors, 3);
  }
}

TEST(Suite, DefaultSuiteLoadsAndIsDeterministic) {
  const Suite a = loadSuite("default");
  const Suite b = loadSuite("default");
  ASSERT_EQ(a.families.size(), b.families.size());
  size_t total = 0;
  for (size_t f = 0; f < a.families.size(); ++f) {
    ASSERT_EQ(a.families[f].problems.size(), b.families[f].problems.size());
    total += a.families[f].problems.size();
    for (size_t k = 0; k < a.families[f].problems.size(); ++k)
      ASSERT_TRUE(sameProblem(a.families[f].problems[k], b.families[f].problems[k])) << a.families[f].name << " " << k;
  }
  EXPECT_GE(total, 2000u);
  std::set<std::string> names;
  for (const Family& f : a.families) names.insert(f.name);
  for (const char* n : {"chain3-position", "chain7-position", "chain15-position", "chain30-position", "tree3-position",
                        "chain7-unreachable", "chain7-near-singular", "ur5-pose", "panda-pose", "iiwa14-pose",
                        "humanoid-tracking", "fabrik-paper-reachable", "fabrik-paper-unreachable"})
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(Suite, SeedOverrideChangesRandomFamiliesOnly) {
  const std::string path = writeTemp("mini.json", kMiniSuite);
  const Suite a = loadSuite(path);
  const Suite b = loadSuite(path, 8);
  EXPECT_EQ(a.seed, 7u);
  EXPECT_EQ(b.seed, 8u);
  EXPECT_EQ(a.name, "mini");
  ASSERT_EQ(a.families[0].problems.size(), 6u);
  ASSERT_EQ(a.families[1].problems.size(), 3u);
  EXPECT_EQ(a.families[1].effectors, 2);
  EXPECT_EQ(a.families[1].goal, "pose");
  EXPECT_FALSE(sameProblem(a.families[0].problems[0], b.families[0].problems[0]));
}

TEST(Suite, AddingAFamilyLeavesTheOthersUnchanged) {
  const Suite a = loadSuite(writeTemp("mini.json", kMiniSuite));
  std::string bigger = kMiniSuite;
  bigger.replace(bigger.find("\"families\": ["), 13,
                 R"("families": [ {"name": "new", "type": "random_chain", "count": 2, "chain": {"joints": 3}},)");
  const Suite b = loadSuite(writeTemp("mini2.json", bigger));
  ASSERT_EQ(b.families.size(), 3u);
  for (size_t k = 0; k < a.families[0].problems.size(); ++k)
    EXPECT_TRUE(sameProblem(a.families[0].problems[k], b.families[1].problems[k]));
  for (size_t k = 0; k < a.families[1].problems.size(); ++k)
    EXPECT_TRUE(sameProblem(a.families[1].problems[k], b.families[2].problems[k]));
}

TEST(Suite, UnknownSuiteNameListsShippedOnes) {
  try {
    loadSuite("no-such-suite");
    FAIL();
  } catch (const SuiteError& e) {
    EXPECT_NE(std::string(e.what()).find("quick"), std::string::npos) << e.what();
  }
}

TEST(SuiteErrors, InvalidJsonNamesFileAndLine) {
  const std::string path =
      writeTemp("broken.json", "{\n  \"seed\": 1,\n  \"families\": [\n    {\"name\": \"a\",,}\n  ]\n}\n");
  expectSuiteError(path, {"broken.json:4:", "invalid JSON"});
}

TEST(SuiteErrors, TruncatedJson) {
  const std::string path = writeTemp("truncated.json", std::string(kMiniSuite).substr(0, 90));
  expectSuiteError(path, {"truncated.json", "invalid JSON"});
}

TEST(SuiteErrors, UnknownFamilyTypeNamesLineAndField) {
  const std::string path = writeTemp("badtype.json", R"({
  "seed": 1,
  "families": [
    {"name": "ok", "type": "random_chain", "count": 1, "chain": {"joints": 2}},
    {"name": "bad",
     "type": "spiral", "count": 1}
  ]
})");
  expectSuiteError(path, {"badtype.json:6:", "families[1].type", "unknown family type 'spiral'", "random_tree"});
}

TEST(SuiteErrors, MissingFieldNamesTheObject) {
  const std::string path = writeTemp("missing.json", R"({
  "seed": 1,
  "families": [
    {"name": "nocount", "type": "random_chain",
     "chain": {"joints": 2}}
  ]
})");
  expectSuiteError(path, {"missing.json:4:", "families[0]", "missing field 'count'", "integer"});
}

TEST(SuiteErrors, WrongTypeNamesFieldAndExpectation) {
  const std::string path = writeTemp("wrongtype.json", R"({
  "seed": 1,
  "families": [
    {"name": "a", "type": "random_chain", "count": 3,
     "chain": {
       "joints": "seven"
     }}
  ]
})");
  expectSuiteError(path, {"wrongtype.json:6:", "families[0].chain.joints", "expected an integer", "string"});
}

TEST(SuiteErrors, OutOfRangeAndUnknownKeysAndEnums) {
  expectSuiteError(
      writeTemp("neg.json",
                R"({"families": [{"name": "a", "type": "random_chain", "count": -4, "chain": {"joints": 2}}]})"),
      {"neg.json:1:", "families[0].count", "-4"});
  expectSuiteError(
      writeTemp(
          "typo.json",
          "{\"families\": [{\"name\": \"a\", \"type\": \"random_chain\",\n \"cout\": 4, \"chain\": {\"joints\": 2}}]}"),
      {"typo.json:2:", "unknown field 'cout'", "count"});
  expectSuiteError(
      writeTemp(
          "enum.json",
          R"({"families": [{"name": "a", "type": "random_chain", "count": 1, "chain": {"joints": 2}, "goals": {"kind": "posture"}}]})"),
      {"families[0].goals.kind", "unknown goal kind 'posture'", "pose"});
  expectSuiteError(
      writeTemp("dup.json", R"({"families": [{"name": "a", "type": "random_chain", "count": 1, "chain": {"joints": 2}},
{"name": "a", "type": "random_chain", "count": 1, "chain": {"joints": 2}}]})"),
      {"dup.json:2:", "duplicate family name 'a'"});
  expectSuiteError(writeTemp("nofam.json", R"({"seed": 3})"), {"nofam.json:1:", "missing field 'families'"});
  expectSuiteError(writeTemp("badseed.json", R"({"seed": -3, "families": []})"), {"seed", "non-negative integer"});
  expectSuiteError(writeTemp("opt.json", "{\"options\": {\n\"max_iterations\": 0}, \"families\": []}"),
                   {"opt.json:2:", "options.max_iterations"});
  expectSuiteError(
      writeTemp("nofile.json",
                R"({"families": [{"name": "r", "type": "urdf", "file": "robots/none.urdf", "count": 1}]})"),
      {"families[0].file", "not found"});
  expectSuiteError(
      writeTemp(
          "noeff.json",
          R"({"families": [{"name": "r", "type": "urdf", "file": "robots/ur5.urdf", "count": 1, "goals": {"effectors": ["hand"]}}]})"),
      {"families[0]", "unknown effector body 'hand'", "tool0"});
}

TEST(SuiteErrors, BadUrdfInsideSuiteNamesBoth) {
  const std::string urdf =
      writeTemp("bad.urdf", "<robot name=\"x\">\n<link name=\"a\"/>\n<joint name=\"j\" type=\"revolute\">\n");
  const std::string path =
      writeTemp("badurdf.json", R"({"families": [{"name": "r", "type": "urdf", "file": "bad.urdf", "count": 1}]})");
  expectSuiteError(path, {"badurdf.json:1:", "families[0].file", "bad.urdf"});
}

TEST(SuiteFunctions, UrdfFamilyAndBvhFamily) {
  const Family u = urdfFamily(dataDirectory() + "/robots/panda.urdf", "panda_link0", "panda_hand_tcp", 12, 3);
  EXPECT_EQ(u.problems.size(), 12u);
  EXPECT_EQ(u.dof, 7);
  EXPECT_EQ(u.goal, "pose");
  EXPECT_EQ(u.effectors, 1);
  const Family u2 = urdfFamily(dataDirectory() + "/robots/panda.urdf", "panda_link0", "panda_hand_tcp", 12, 3);
  for (size_t k = 0; k < u.problems.size(); ++k) EXPECT_TRUE(sameProblem(u.problems[k], u2.problems[k]));
  EXPECT_THROW(urdfFamily(dataDirectory() + "/robots/panda.urdf", "panda_link0", "no_link", 3, 1), SuiteError);
}

TEST(Suite, UrdfFamilyWithoutATipNeedsOneLeafAndUnknownLinksAreListed) {
  // One leaf moved by a joint: it is the tip, and the description says so.
  const Family ur5 = urdfFamily(dataDirectory() + "/robots/ur5.urdf", "", "", 4, 1);
  EXPECT_NE(ur5.description.find("on 'tool0'"), std::string::npos) << ur5.description;
  EXPECT_EQ(ur5.problems.front().goals.size(), 1u);
  // Two leaves (two fingers): the user must choose; the error lists both.
  const std::string two = writeTemp("two_leaves.urdf", R"(<robot name="two">
  <link name="base"/><link name="left"/><link name="right"/>
  <joint name="a" type="continuous"><parent link="base"/><child link="left"/><origin xyz="0 0.1 0"/><axis xyz="0 0 1"/></joint>
  <joint name="b" type="continuous"><parent link="base"/><child link="right"/><origin xyz="0 -0.1 0"/><axis xyz="0 0 1"/></joint>
</robot>
)");
  try {
    urdfFamily(two, "", "", 3, 1);
    ADD_FAILURE() << "no SuiteError";
  } catch (const SuiteError& e) {
    const std::string what = e.what();
    for (const char* f : {"2 leaf links could be the tip", "--tip LINK", "left", "right"})
      EXPECT_NE(what.find(f), std::string::npos) << f << " in " << what;
  }
  EXPECT_EQ(urdfFamily(two, "", "left", 3, 1).problems.size(), 3u);
  // An unknown link: the error lists the model's links.
  try {
    urdfFamily(two, "", "lefft", 3, 1);
    ADD_FAILURE() << "no SuiteError";
  } catch (const SuiteError& e) {
    EXPECT_NE(std::string(e.what()).find("tip link 'lefft' is not defined (links: base, left, right)"),
              std::string::npos)
        << e.what();
  }

  const Family b = bvhFamily(dataDirectory() + "/skeletons/humanoid_walk_wave.bvh", 0);
  EXPECT_EQ(b.problems.size(), 48u);
  EXPECT_TRUE(b.sequential);
  EXPECT_EQ(b.effectors, 5);
  EXPECT_EQ(b.goal, "position");
}

}  // namespace
}  // namespace ikbench
