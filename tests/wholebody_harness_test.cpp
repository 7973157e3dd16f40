// Whole-body problems through the harness: the shipped suite's task lists,
// their problems' round trip through problems.jsonl and models.json, the
// per-level verdict columns of solves.csv and their recomputation by
// `ikbench verify`; and which backends take centre-of-mass and bounded goals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "harness/levels.h"
#include "harness/results_format.h"
#include "harness/results_reader.h"
#include "harness/run_engine.h"
#include "harness/verify.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/scenarios/wholebody.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "run_files_util.h"
#include "test_util.h"

namespace ikbench {
namespace {

namespace fs = std::filesystem;

Suite shippedSuite(int per_family) {
  Suite s = loadSuite(std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/suites/wholebody.json");
  for (Family& f : s.families) f.problems.resize(static_cast<size_t>(per_family));
  s.solvers = {"dls"};
  return s;
}

std::string runDir(const std::string& name) {
  const fs::path p = test::processTempDir("wholebody_" + name);
  fs::remove_all(p);
  return p.string();
}

harness::RunConfig quiet(const std::string& dir) {
  harness::RunConfig c;
  c.out_dir = dir;
  c.threads = 1;
  c.trace_problems = 0;
  c.progress = harness::ProgressMode::kNone;
  return c;
}

TEST(WholeBodySuite, ShippedSuiteBuildsLevelledProblems) {
  const Suite s = loadSuite(std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/suites/wholebody.json");
  ASSERT_EQ(s.families.size(), 2u);
  const Problem& h = s.families[0].problems.at(0);
  EXPECT_EQ(h.levels(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(h.isWholeBody());
  EXPECT_NEAR(h.model->totalMass(), 70.0, 1e-9);
  // The support polygon's half-spaces hold the reference pose's centre of mass.
  const Goal& com = h.goals.at(2);
  ASSERT_EQ(com.kind, GoalKind::kCentreOfMass);
  ASSERT_EQ(com.bound.kind, BoundKind::kHalfSpaces);
  Eigen::VectorXd ref = h.model->neutralConfiguration();
  Data d(*h.model);
  forwardKinematics(*h.model, ref, d);
  EXPECT_EQ(evaluateGoals(*h.model, {com}, d).position, 0.0);
  // Targets differ between problems (seeded), the planted feet do not.
  const Problem& h1 = s.families[0].problems.at(1);
  EXPECT_GT((h.goals[3].target_position - h1.goals[3].target_position).norm(), 1e-3);
  EXPECT_EQ(h.goals[0].target_position, h1.goals[0].target_position);
  const Problem& a = s.families[1].problems.at(0);
  EXPECT_NEAR(a.model->totalMass(), 64.0, 1e-9);
  EXPECT_EQ(a.levels(), (std::vector<int>{0, 1}));
}

TEST(WholeBodySuite, TaskErrorsNameTheField) {
  const std::string head = R"({"name": "t", "families": [{"name": "f", "type": "urdf", "file": ")" +
                           std::string(IKBENCH_SOURCE_DIR) + R"(/scenarios/data/robots/dual_arm.urdf", "count": 2, )";
  auto expectError = [&](const std::string& wholebody, const std::string& needle) {
    try {
      parseSuite(head + R"("wholebody": )" + wholebody + "}]}", "t.json");
      ADD_FAILURE() << "accepted " << wholebody;
    } catch (const SuiteError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expectError(R"({"tasks": [{"kind": "position", "body": "nose", "target": "start"}]})", "no body 'nose'");
  expectError(R"({"tasks": [{"kind": "pose", "body": "chest_link", "target": "bound", "half_spaces": [[0,0,1,1]]}]})",
              "needs kind 'position' or 'com'");
  expectError(R"({"tasks": [{"kind": "com", "target": "support", "support": ["base_link", "torso_link"]}]})",
              "support polygon");
  expectError(R"({"tasks": [{"kind": "position", "body": "chest_link", "target": "random", "distance": [2, 1]}]})",
              "distance");
  expectError(R"({"tasks": []})", "tasks");
}

TEST(WholeBodySuite, SupportPolygonIsTheConvexHull) {
  // A square's corners and its centre (an interior point, dropped).
  const std::vector<Eigen::Vector3d> pts = {{0, 0, 0}, {1, 0, 0.3}, {1, 1, 0}, {0, 1, -0.2}, {0.5, 0.5, 0}};
  const GoalBound b = supportPolygon(pts, Eigen::Vector3d::UnitZ(), 0.1);
  ASSERT_EQ(b.offsets.size(), 4);
  // Inside the shrunk square (0.1 .. 0.9) every row holds, outside one fails.
  auto holds = [&](const Eigen::Vector3d& p) { return ((b.normals * p).array() <= b.offsets.array() + 1e-12).all(); };
  EXPECT_TRUE(holds({0.5, 0.5, 3.0}));
  EXPECT_TRUE(holds({0.1, 0.9, -1.0}));
  EXPECT_FALSE(holds({0.05, 0.5, 0.0}));
  EXPECT_FALSE(holds({0.5, 0.95, 0.0}));
  for (Eigen::Index i = 0; i < b.normals.rows(); ++i) EXPECT_NEAR(b.normals(i, 2), 0.0, 1e-15);
  EXPECT_THROW(supportPolygon({{0, 0, 0}, {1, 0, 0}, {2, 0, 5}}, Eigen::Vector3d::UnitZ(), 0.0), std::invalid_argument);
}

TEST(WholeBodyRun, LevelColumnsRoundTripAndAreVerified) {
  const Suite suite = shippedSuite(3);
  const std::string dir = runDir("run");
  harness::runSuite(suite, quiet(dir));
  test::decompressRun(dir);
  const auto rows = test::readCsv(dir + "/solves.csv");
  ASSERT_GE(rows.size(), 2u);
  const auto& header = rows[0];
  const auto c_err = std::find(header.begin(), header.end(), "level_errors") - header.begin();
  const auto c_met = std::find(header.begin(), header.end(), "levels_met") - header.begin();
  ASSERT_LT(c_met, static_cast<long>(header.size()));
  // Every row's cells are the recomputation from the suite's own problems.
  const auto r = harness::readResults(dir, true, false);
  const auto models = harness::readModels(r);
  const auto problems = harness::readProblems(r, models);
  int checked = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const int f = rows[i][1] == suite.families[0].name ? 0 : 1;
    const int p = std::stoi(rows[i][2]);
    const Problem& orig = suite.families[f].problems[p];
    const Problem& back = problems.at({f, p});
    // The round trip keeps priorities, kinds, bounds and masses.
    ASSERT_EQ(orig.goals.size(), back.goals.size());
    for (size_t k = 0; k < orig.goals.size(); ++k) {
      EXPECT_EQ(orig.goals[k].priority, back.goals[k].priority);
      EXPECT_EQ(orig.goals[k].kind, back.goals[k].kind);
      EXPECT_EQ(orig.goals[k].bound.kind, back.goals[k].bound.kind);
      EXPECT_EQ(orig.goals[k].bound.rows(), back.goals[k].bound.rows());
    }
    EXPECT_DOUBLE_EQ(orig.model->totalMass(), back.model->totalMass());
    const auto c_q = std::find(header.begin(), header.end(), "q") - header.begin();
    const Eigen::VectorXd q = harness::parseConfigText(rows[i][static_cast<size_t>(c_q)], "q");
    const harness::LevelVerdict v =
        harness::levelVerdict(orig, q, suite.options.position_tolerance, suite.options.orientation_tolerance);
    EXPECT_EQ(harness::levelCells(v), rows[i][static_cast<size_t>(c_err)] + "," + rows[i][static_cast<size_t>(c_met)]);
    // levels_met counts from the top: level k met needs every level above met.
    const int met = std::stoi(rows[i][static_cast<size_t>(c_met)]);
    for (int k = 0; k < met; ++k) EXPECT_LE(v.errors[k].position, suite.options.position_tolerance);
    if (met < static_cast<int>(v.errors.size()))
      EXPECT_TRUE(v.errors[met].position > suite.options.position_tolerance ||
                  v.errors[met].orientation > suite.options.orientation_tolerance);
    // converged is still "every goal met".
    const bool converged = rows[i][std::find(header.begin(), header.end(), "converged") - header.begin()] == "1";
    EXPECT_EQ(converged, met == static_cast<int>(v.errors.size()));
    ++checked;
  }
  EXPECT_EQ(checked, 6);
  std::ostringstream out;
  harness::VerifyReport rep = harness::verifyRun(dir, out);
  EXPECT_EQ(rep.disagreements, 0) << out.str();
  EXPECT_EQ(rep.level_rows, 6) << out.str();
  // A tampered levels_met is caught.
  std::string text = test::readFile(dir + "/solves.csv");
  std::istringstream in(text);
  std::string line, rebuilt;
  int n = 0;
  while (std::getline(in, line)) {
    if (n == 1) {
      const size_t cut = line.find_last_of(',');
      line = line.substr(0, cut + 1) + (line.substr(cut + 1) == "0" ? "1" : "0");
    }
    rebuilt += line + "\n";
    ++n;
  }
  std::ofstream(dir + "/solves.csv") << rebuilt;
  test::remanifest(dir);
  std::ostringstream out2;
  rep = harness::verifyRun(dir, out2);
  EXPECT_EQ(rep.level_disagreements, 1) << out2.str();
  EXPECT_NE(out2.str().find("levels_met"), std::string::npos) << out2.str();
}

TEST(WholeBodyRun, ParseLevelErrorsRefusesBadTokens) {
  EXPECT_EQ(harness::parseLevelErrors("0.1:0 2e-3:0.5").size(), 2u);
  EXPECT_THROW(harness::parseLevelErrors("0.1"), std::invalid_argument);
  EXPECT_THROW(harness::parseLevelErrors("0.1:x"), std::invalid_argument);
  EXPECT_THROW(harness::parseLevelErrors(":"), std::invalid_argument);
}

// A two-link arm with masses: a centre-of-mass target and a point target.
Problem comProblem() {
  JointSpec a = test::revolute("shoulder", -1, {0, 0, 0}, {0, 0, 1});
  a.body_mass = 2.0;
  a.body_com = Eigen::Vector3d(0.5, 0, 0);
  JointSpec b = test::revolute("elbow", 0, {1.0, 0, 0}, {0, 0, 1});
  b.body_mass = 1.0;
  b.body_com = Eigen::Vector3d(0.4, 0, 0);
  JointSpec c = test::revolute("wrist", 1, {0.8, 0, 0}, {0, 0, 1});
  c.body_mass = 0.5;
  c.body_com = Eigen::Vector3d(0.1, 0, 0);
  Problem p;
  p.model = std::make_shared<const Model>(std::vector<JointSpec>{a, b, c}, "com-arm");
  p.q0 = Eigen::Vector3d(0.1, 0.2, 0.1);
  Data d(*p.model);
  forwardKinematics(*p.model, Eigen::Vector3d(0.6, -0.9, 0.5), d);  // a reachable pair of targets
  Goal com;
  com.kind = GoalKind::kCentreOfMass;
  com.body = 0;
  com.target_position = centreOfMass(*p.model, d, 0);
  Goal bound;  // the wrist stays above y = -5 (a bound that holds throughout)
  bound.body = 2;
  bound.bound.kind = BoundKind::kHalfSpaces;
  bound.bound.normals = Eigen::RowVector3d(0, -1, 0);
  bound.bound.offsets = Eigen::VectorXd::Constant(1, 5.0);
  bound.priority = 1;
  p.goals = {com, bound};
  p.name = "com-arm";
  return p;
}

TEST(WholeBodySolvers, PointTargetBackendsRefuseAndWeightedOnesSolve) {
  const Problem p = comProblem();
  SolverOptions o;
  for (const char* spec : {"ccd", "fabrik", "kdl-lma", "ceres-lm"}) {
    auto solver = Registry::global().create(spec);
    Eigen::VectorXd q = p.q0;
    const Summary s = solver->solve(p, q, o);
    EXPECT_EQ(s.status, Status::kUnsupported) << spec << ": " << s.message;
    EXPECT_FALSE(s.message.empty()) << spec;
  }
  for (const char* spec : {"dls", "lm"}) {
    auto solver = Registry::global().create(spec);
    Eigen::VectorXd q = p.q0;
    const Summary s = solver->solve(p, q, o);
    ASSERT_EQ(s.status, Status::kConverged) << spec << ": " << s.message;
    // Checked by forward kinematics, not by the solver's word.
    Data d(*p.model);
    forwardKinematics(*p.model, q, d);
    EXPECT_LT((centreOfMass(*p.model, d, 0) - p.goals[0].target_position).norm(), 1e-4) << spec;
  }
}

TEST(WholeBodySolvers, FastPathsFallBackForOneComGoalOnAChain) {
  // One centre-of-mass goal on a revolute chain with unit weights: the shape
  // the chain kernel and the batch path take for a point target. They must
  // hand it to the generic loop, whose answer FK confirms.
  Problem p = comProblem();
  p.goals.resize(1);
  EXPECT_FALSE(batchFallbackReason(p, Registry::global().parse("dls"), SolverOptions{}).empty());
  BatchStats stats;
  const std::vector<BatchResult> out = solveBatch({p, p}, "dls", BatchOptions{}, &stats);
  EXPECT_EQ(stats.batched, 0);
  for (const BatchResult& r : out) {
    EXPECT_FALSE(r.batched);
    ASSERT_EQ(r.summary.status, Status::kConverged) << r.summary.message;
    Data d(*p.model);
    forwardKinematics(*p.model, r.q, d);
    EXPECT_LT((centreOfMass(*p.model, d, 0) - p.goals[0].target_position).norm(), 1e-4);
  }
  // A bounded position goal likewise.
  Problem b = comProblem();
  b.goals = {b.goals[1]};
  EXPECT_FALSE(batchFallbackReason(b, Registry::global().parse("dls"), SolverOptions{}).empty());
}

}  // namespace
}  // namespace ikbench
