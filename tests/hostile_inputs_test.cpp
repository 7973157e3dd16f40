// Hostile inputs to the libraries and the `ikbench` binary: scenes that would
// make every answer look collision-free, shapes that would overflow the exact
// check, secrets on a command line, options given empty and files that are
// devices, FIFOs or directories. Each gets a clear error (exit status 2 and a
// line naming the input) or an honest result, never a crash, a hang or a
// silently wrong verdict.
//
// Linked against ikbench_harness by benchmarks/CMakeLists.txt (which defines
// IKBENCH_HAVE_HARNESS and IKBENCH_CLI).
#include <gtest/gtest.h>

#ifdef IKBENCH_HAVE_HARNESS

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "harness/results_format.h"
#include "harness/verify.h"
#include "ikbench/collision/world.h"
#include "ikbench/core/redact.h"
#include "ikbench/scenarios/scene.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/scenarios/urdf.h"
#include "run_files_util.h"
#include "test_util.h"

namespace ikbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::runCli;

std::string tempDir(const std::string& name) {
  return test::processTempDir("hostile_" + name).string();
}

std::string ur5() { return dataDirectory() + "/robots/ur5.urdf"; }

// The UR5 with `scene_text` as its scene: the world, or the SuiteError's text.
std::string ur5SceneError(const std::string& scene_text) {
  const std::string dir = tempDir("scene");
  const std::string path = dir + "/s.json";
  std::ofstream(path) << scene_text;
  const UrdfModel robot = loadUrdf(ur5(), {.base = "base_link", .tip = "tool0"});
  try {
    buildCollisionWorld(loadScene(path), robot.model, robot.collision);
  } catch (const SuiteError& e) {
    return e.what();
  }
  return "";
}

// ---- secrets -----------------------------------------------------------------

TEST(Redact, PasswordsOfUrlsKeywordsAndQueryParametersAreReplaced) {
  EXPECT_EQ(redactSecrets("ikbench run --history postgresql://alice:s3cr%40t@db.example:5432/ikb --out x"),
            "ikbench run --history postgresql://alice:***@db.example:5432/ikb --out x");
  // A password holding '@' and ':': the user info ends at its last '@'.
  EXPECT_EQ(redactSecrets("postgres://bob:p@ss:w@host/db"), "postgres://bob:***@host/db");
  EXPECT_EQ(redactSecrets("--db 'host=db port=5432 password=hunter2 dbname=ikb'"),
            "--db 'host=db port=5432 password=*** dbname=ikb'");
  EXPECT_EQ(redactSecrets("host=db PASSWORD = 'two words\\' here' user=x"), "host=db PASSWORD =*** user=x");
  EXPECT_EQ(redactSecrets("postgresql:///ikb?host=/tmp&password=hunter2&sslmode=off"),
            "postgresql:///ikb?host=/tmp&password=***&sslmode=off");
  EXPECT_EQ(redactSecrets("host=db sslpassword=keypass sslkey=/k"), "host=db sslpassword=*** sslkey=/k");
  // Without a secret the text is unchanged: a user without a password, a
  // path, a spec with '=' and ':'.
  for (const std::string plain : {"postgresql://alice@db/ikb", "results/history.sqlite", "dls:lambda=0.05:max_step=0.5",
                                  "passwords.txt", "my_password_file=x", "https://example.org/a:b@c"})
    EXPECT_EQ(redactSecrets(plain), plain) << plain;
  // No secret survives anywhere in the redacted text.
  for (const std::string s : {"postgresql://u:hunter2@h/d", "password=hunter2", "x?password=hunter2",
                              "password='hunter2'", "a postgresql://u:hunter2@h/d password=hunter2 b"})
    EXPECT_EQ(redactSecrets(s).find("hunter2"), std::string::npos) << s;
}

TEST(HostileCli, AHistoryUrlsPasswordNeverReachesRunJson) {
  const std::string dir = tempDir("secret");
  std::string out;
  // Port 1 on the loopback: the store cannot be reached, the run is written.
  runCli("run --chain 3 --samples 2 --solvers dls --no-trace --no-summary --progress none --force --out " + dir +
             "/run --history 'postgresql://alice:hunter2@127.0.0.1:1/ikb'",
         &out);
  ASSERT_TRUE(fs::exists(dir + "/run/run.json")) << out;
  const std::string run_json = test::readFile(dir + "/run/run.json");
  EXPECT_EQ(run_json.find("hunter2"), std::string::npos);
  EXPECT_NE(run_json.find("postgresql://alice:***@127.0.0.1:1/ikb"), std::string::npos) << run_json;
  EXPECT_EQ(out.find("hunter2"), std::string::npos) << out;
}

// ---- scenes ----------------------------------------------------------------------

TEST(HostileScene, AnObstacleThatSwallowsTheRobotIsRefusedNotDropped) {
  // A 5 m sphere around the UR5: every link collides in every configuration.
  const std::string e = ur5SceneError(
      R"({"name": "swallow", "obstacles": [{"name": "ball", "type": "sphere", "radius": 5}]})");
  EXPECT_NE(e.find("s.json"), std::string::npos) << e;
  EXPECT_NE(e.find("encloses or pins the robot"), std::string::npos) << e;
  EXPECT_NE(e.find("upper_arm_link~ball"), std::string::npos) << e;
  // A slab through the whole workspace at the elbow's height does the same.
  EXPECT_NE(ur5SceneError(R"({"obstacles": [{"name": "slab", "type": "box", "size": [20, 20, 0.2],
                              "position": [0, 0, 0.2]}]})")
                .find("encloses or pins the robot"),
            std::string::npos);
}

TEST(HostileScene, TheFirstLinkOnItsTableStaysAnAlwaysPairAndIsRecorded) {
  const UrdfModel robot = loadUrdf(ur5(), {.base = "base_link", .tip = "tool0"});
  const auto world = buildCollisionWorld(loadScene(dataDirectory() + "/scenes/workcell.json"), robot.model,
                                         robot.collision);
  bool table = false;
  for (const auto& [a, b] : world->disabledPairs()) table |= a == "shoulder_link" && b == "table";
  EXPECT_TRUE(table);
  // ... and every other link is still checked against the table.
  int table_pairs = 0;
  for (int i = 0; i < static_cast<int>(world->pairs().size()); ++i)
    table_pairs += world->pairName(i).ends_with("~table");
  EXPECT_GE(table_pairs, 4);
}

TEST(HostileScene, AnUnknownLinkInRobotLinksIsAnErrorNamingIt) {
  const std::string e = ur5SceneError(R"({"robot": {"links": {"forearm_lnk": {"radius": 0.05}}}})");
  EXPECT_NE(e.find("s.json"), std::string::npos) << e;
  EXPECT_NE(e.find("robot.links.forearm_lnk"), std::string::npos) << e;
  EXPECT_TRUE(ur5SceneError(R"({"robot": {"links": {"forearm_link": {"radius": 0.05}}}})").empty());
}

TEST(HostileScene, ExtremeShapesAreRefusedBeforeTheExactCheck) {
  auto model = loadUrdf(ur5(), {.base = "base_link", .tip = "tool0"}).model;
  Pose3d far;
  far.p = Eigen::Vector3d(1e308, 0, 0);
  for (const Shape& s : {Shape::sphere("far", 0.1, far), Shape::box("huge", Eigen::Vector3d(1e300, 1, 1), Pose3d{}),
                         Shape::sphere("nan", std::numeric_limits<double>::quiet_NaN(), Pose3d{})}) {
    try {
      CollisionWorld w(model, fitLinkCapsules(*model, {}), {s}, {}, "x");
      ADD_FAILURE() << s.name << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + s.name + "'"), std::string::npos) << e.what();
    }
  }
}

// ---- a scene run, doctored ----------------------------------------------------

// A small collision-checked run of the UR5 in the workcell (no time budget:
// the same answers in a sanitizer build as in the release build).
std::string sceneRun(const std::string& name) {
  const std::string dir = tempDir(name) + "/run";
  std::string out;
  EXPECT_EQ(runCli("run --urdf '" + ur5() + "' --scene '" + dataDirectory() +
                       "/scenes/workcell.json' --samples 8 --solvers auto:time_budget_us=0 --no-trace --no-summary --progress none "
                       "--out " + dir,
                   &out),
            0)
      << out;
  test::decompressRun(dir);
  return dir;
}

// Applies `edit` to the scene of the run's first model, then rewrites the manifest.
template <class Edit>
void doctorScene(const std::string& dir, Edit edit) {
  json models = json::parse(test::readFile(dir + "/models.json"));
  edit(models["models"][0]["scene"]);
  std::ofstream(dir + "/models.json") << models.dump();
  test::remanifest(dir);
}

TEST(HostileScene, VerifyFindsEveryCollisionOfADoctoredSceneInsteadOfDroppingItsPairs) {
  const std::string dir = sceneRun("doctored");
  std::ostringstream log;
  const harness::VerifyReport before = harness::verifyRun(dir, log);
  ASSERT_EQ(before.disagreements, 0) << log.str();
  ASSERT_GT(before.collision_checks, 0);
  // The barrel grown into a 5 m ball around the robot: every answer the run
  // called collision-free now collides, and verify must say so for each
  // (re-deriving "always colliding" pairs from the doctored scene would drop
  // them and pass every answer).
  doctorScene(dir, [](json& scene) {
    for (json& o : scene["obstacles"])
      if (o["name"] == "barrel") o = {{"name", "barrel"}, {"type", "sphere"}, {"radius", 5.0},
                                      {"xyz", {0, 0, 0}}, {"quat_xyzw", {0, 0, 0, 1}}};
  });
  std::string out;
  EXPECT_EQ(runCli("verify " + dir, &out), 1) << out;
  log.str("");
  const harness::VerifyReport after = harness::verifyRun(dir, log);
  // Every claimed success (converged and collision-free) is now a false one.
  long claimed = 0;
  const auto rows = test::readCsv(dir + "/solves.csv");
  auto column = [&](const std::string& name) {
    size_t c = 0;
    while (c < rows[0].size() && rows[0][c] != name) ++c;
    return c;
  };
  const size_t free_col = column("collision_free"), conv_col = column("converged");
  ASSERT_LT(free_col, rows[0].size());
  ASSERT_LT(conv_col, rows[0].size());
  for (size_t r = 1; r < rows.size(); ++r) claimed += rows[r][free_col] == "1" && rows[r][conv_col] == "1";
  ASSERT_GT(claimed, 0);
  EXPECT_EQ(after.false_successes, claimed) << log.str();
}

TEST(HostileScene, VerifyOfAnObstacleAt1e308IsAnErrorNotAnAbort) {
  const std::string dir = sceneRun("far");
  doctorScene(dir, [](json& scene) { scene["obstacles"][1]["xyz"] = {1e308, 0, 0}; });
  std::string out;
  EXPECT_EQ(runCli("verify " + dir, &out), 2) << out;
  EXPECT_NE(out.find("models.json"), std::string::npos) << out;
  EXPECT_NE(out.find("beyond"), std::string::npos) << out;
}

// ---- options and files ----------------------------------------------------------

TEST(HostileCli, EmptyOptionValuesAreRefusedNotIgnored) {
  std::string out;
  for (const std::string opt : {"--protocol ''", "--scene ''", "--base ''", "--tip ''"}) {
    EXPECT_EQ(runCli("run --urdf '" + ur5() + "' " + opt + " --progress none --out " + tempDir("empty"), &out), 2)
        << opt << "\n" << out;
    EXPECT_NE(out.find(opt.substr(0, opt.find(' '))), std::string::npos) << out;
    EXPECT_NE(out.find("expected a non-empty value"), std::string::npos) << out;
  }
  EXPECT_EQ(runCli("run --suite '' --progress none", &out), 2) << out;
  EXPECT_EQ(runCli("run --chain 3 --out '' --progress none", &out), 2) << out;
}

TEST(HostileCli, PlaygroundModuleMustBeARegularFile) {
  const std::string dir = tempDir("module");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {"/dev/zero", "a character device"}, {fifo, "a FIFO"}, {dir, "a directory"}, {dir + "/absent.js", "no such file"}};
  for (const auto& [module, why] : cases) {
    std::string out;
    EXPECT_EQ(runCli("playground --module '" + module + "' --out " + dir + "/page.html", &out), 2) << module << out;
    EXPECT_NE(out.find(module), std::string::npos) << out;
    EXPECT_NE(out.find(why), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dir + "/page.html"));
  }
}

// A run of generated chains has models without a source file (null in
// models.json): `playground --run` offers them all the same.
TEST(HostileCli, PlaygroundTakesARunOfGeneratedChains) {
  const std::string dir = tempDir("playground_chains");
  std::string out;
  ASSERT_EQ(runCli("run --chain 3 --samples 2 --solvers dls --threads 1 --no-trace --no-summary --progress none --out " +
                       dir + "/run",
                   &out),
            0)
      << out;
  {
    std::ofstream module(dir + "/module.js");
    module << "var createIkbenchPlayground = function () {};\n";
  }
  ASSERT_EQ(runCli("playground --module " + dir + "/module.js --run " + dir + "/run --out " + dir + "/page.html", &out),
            0)
      << out;
  const std::string page = test::readFile(dir + "/page.html");
  EXPECT_NE(page.find("run:run/"), std::string::npos) << "the run's models are not on the page";
}

}  // namespace
}  // namespace ikbench

#endif  // IKBENCH_HAVE_HARNESS
