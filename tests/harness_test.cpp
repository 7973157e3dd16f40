// The benchmark harness (benchmarks/harness): results files and their
// columns, determinism across thread counts, sequential (tracking) families,
// unsupported pairs, the summary statistics, and clear errors with a
// non-zero exit status from the `ikbench` binary.
//
// Linked against ikbench_harness by benchmarks/CMakeLists.txt (which defines
// IKBENCH_HAVE_HARNESS and IKBENCH_CLI); without the benchmarks (option
// IKBENCH_BUILD_BENCHMARKS=OFF) there is nothing to test.
#include <gtest/gtest.h>

#ifdef IKBENCH_HAVE_HARNESS

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/harness.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/registry.h"

namespace ikbench {
namespace {

namespace fs = std::filesystem;
using harness::HarnessError;
using harness::RunConfig;
using harness::RunResult;

// A tiny suite: 5-DOF random chains, position goals (independent problems)
// and pose goals solved in sequence from the previous answer.
Suite tinySuite() {
  Suite suite;
  suite.name = "tiny";
  suite.seed = 42;
  ChainSpec cs;
  cs.joints = 5;
  cs.limit = 2.5;
  Family a;
  a.name = "chain5-position";
  a.goal = "position";
  a.dof = 5;
  a.effectors = 1;
  GoalSetSpec gs;
  gs.count = 12;
  a.problems = reachableGoals(randomChain(cs, 1), gs, 2, "a");
  Family b;
  b.name = "chain5-track";
  b.goal = "pose";
  b.dof = 5;
  b.effectors = 1;
  b.sequential = true;
  gs.count = 8;
  gs.kind = GoalKind::kPose;
  b.problems = reachableGoals(randomChain(cs, 3), gs, 4, "b");
  suite.families = {a, b};
  suite.solvers = {"dls", "dls:lambda=0.2:restarts=2"};
  return suite;
}

std::string tempDir(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / ("ikbench_harness_test_" + name);
  fs::remove_all(p);
  return p.string();
}

RunConfig quietConfig(const std::string& out, int threads) {
  RunConfig c;
  c.out_dir = out;
  c.threads = threads;
  c.trace_problems = 3;
  c.progress = harness::ProgressMode::kNone;
  return c;
}

std::vector<std::vector<std::string>> readCsv(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(f, line);) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted) {
        if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          cell += '"';
          ++i;
        } else if (c == '"') {
          quoted = false;
        } else {
          cell += c;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        cells.push_back(cell);
        cell.clear();
      } else {
        cell += c;
      }
    }
    cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Rows of a CSV without the named columns, as lines.
std::vector<std::string> withoutColumns(const std::vector<std::vector<std::string>>& rows,
                                        const std::vector<std::string>& drop) {
  std::vector<bool> keep;
  for (const std::string& h : rows.at(0)) keep.push_back(std::find(drop.begin(), drop.end(), h) == drop.end());
  std::vector<std::string> out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i)
      if (i < keep.size() && keep[i]) line += r[i] + "|";
    out.push_back(line);
  }
  return out;
}

TEST(Harness, WritesEveryFileWithTheDocumentedColumns) {
  const Suite suite = tinySuite();
  const std::string dir = tempDir("files");
  const RunResult result = harness::runSuite(suite, quietConfig(dir, 2));
  EXPECT_EQ(result.out_dir, dir);
  for (const char* f : {"solves.csv", "traces.csv", "summary.csv", "run.json"})
    EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / f)) << f;
  // No temporary files left behind.
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();

  // The documented columns, spelled out here so that renaming one fails.
  const std::vector<std::string> documented = {
      "suite",          "family",   "problem",        "dof",           "effectors",         "goal",
      "solver",         "status",   "converged",      "iterations",    "restarts",          "position_error",
      "orientation_error", "time_us", "fk_evals",     "jacobian_evals", "within_limits"};
  const auto solves = readCsv((fs::path(dir) / "solves.csv").string());
  ASSERT_GE(solves.size(), 1u);
  ASSERT_GE(solves[0].size(), documented.size());
  EXPECT_EQ(std::vector<std::string>(solves[0].begin(), solves[0].begin() + documented.size()), documented);
  ASSERT_EQ(solves.size(), 1u + (12 + 8) * 2);  // header + problems x solvers

  std::map<std::string, int> col;
  for (size_t i = 0; i < solves[0].size(); ++i) col[solves[0][i]] = static_cast<int>(i);
  int converged = 0;
  for (size_t r = 1; r < solves.size(); ++r) {
    const auto& row = solves[r];
    ASSERT_EQ(row.size(), solves[0].size()) << "row " << r;
    EXPECT_EQ(row[col["suite"]], "tiny");
    Status st;
    ASSERT_TRUE(parseStatus(row[col["status"]], &st)) << row[col["status"]];
    EXPECT_EQ(row[col["converged"]], st == Status::kConverged ? "1" : "0");
    EXPECT_TRUE(row[col["within_limits"]] == "0" || row[col["within_limits"]] == "1");
    EXPECT_EQ(row[col["dof"]], "5");
    EXPECT_EQ(row[col["effectors"]], "1");
    if (st == Status::kConverged) {
      ++converged;
      EXPECT_LE(std::stod(row[col["position_error"]]), suite.options.position_tolerance);
      EXPECT_LE(std::stod(row[col["orientation_error"]]), suite.options.orientation_tolerance);
    }
    EXPECT_GE(std::stol(row[col["fk_evals"]]), std::stol(row[col["iterations"]]));
  }
  EXPECT_GT(converged, 20);  // DLS solves most 5-DOF reachable position goals

  // Rows in (family, problem, solver) order.
  EXPECT_EQ(solves[1][col["family"]], "chain5-position");
  EXPECT_EQ(solves[1][col["problem"]], "0");
  EXPECT_EQ(solves[1][col["solver"]], "dls");
  EXPECT_EQ(solves[2][col["solver"]], "dls:lambda=0.2:restarts=2");
  EXPECT_EQ(solves[3][col["problem"]], "1");

  const std::vector<std::string> trace_cols = {"family",    "problem",        "solver",
                                               "iteration", "position_error", "orientation_error",
                                               "step_norm", "damping",        "elapsed_us"};
  const auto traces = readCsv((fs::path(dir) / "traces.csv").string());
  ASSERT_GE(traces.size(), 2u);
  EXPECT_EQ(traces[0], trace_cols);
  // Only the first 3 problems of each family are traced; iteration 0 first.
  for (size_t r = 1; r < traces.size(); ++r) EXPECT_LT(std::stoi(traces[r][1]), 3);
  EXPECT_EQ(traces[1][3], "0");

  const auto run = nlohmann::json::parse(readFile((fs::path(dir) / "run.json").string()));
  EXPECT_EQ(run["suite"]["name"], "tiny");
  EXPECT_EQ(run["suite"]["seed"], 42);
  EXPECT_EQ(run["threads"], 2);
  ASSERT_EQ(run["solvers"].size(), 2u);
  EXPECT_EQ(run["solvers"][1]["spec"], "dls:lambda=0.2:restarts=2");
  EXPECT_EQ(run["solvers"][1]["parameters"]["lambda"], "0.2");
  EXPECT_EQ(run["solvers"][0]["parameters"]["lambda"], "0.05");  // the default, filled in
  for (const char* key : {"git_revision", "start_time", "end_time"}) EXPECT_TRUE(run[key].is_string()) << key;
  EXPECT_FALSE(run["build"]["compiler"].get<std::string>().empty());
  EXPECT_TRUE(run["build"]["flags"].is_string());
  EXPECT_FALSE(run["machine"]["cpu"].get<std::string>().empty());
  EXPECT_EQ(run["throughput"]["solves"], 40);
  EXPECT_GT(run["throughput"]["solves_per_s"].get<double>(), 0.0);
}

TEST(Harness, SolvesAreIdenticalApartFromTimesAtOneAndTwoThreads) {
  const Suite suite = tinySuite();
  const std::string d1 = tempDir("t1"), d2 = tempDir("t2");
  harness::runSuite(suite, quietConfig(d1, 1));
  harness::runSuite(suite, quietConfig(d2, 2));
  const auto a = withoutColumns(readCsv(d1 + "/solves.csv"), harness::kTimeColumns);
  const auto b = withoutColumns(readCsv(d2 + "/solves.csv"), harness::kTimeColumns);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "row " << i;
  const auto ta = withoutColumns(readCsv(d1 + "/traces.csv"), {"elapsed_us"});
  const auto tb = withoutColumns(readCsv(d2 + "/traces.csv"), {"elapsed_us"});
  EXPECT_EQ(ta, tb);
}

TEST(Harness, SequentialFamilyStartsEachSolveFromThePreviousAnswer) {
  const Suite suite = tinySuite();
  RunConfig c = quietConfig("", 2);
  c.solvers = {"dls"};
  c.trace = false;
  const RunResult r = harness::runSuiteInMemory(suite, c);
  // Replay the tracking family by hand, chaining the answers.
  const Family& fam = suite.families[1];
  auto solver = Registry::global().create("dls");
  Eigen::VectorXd q = fam.problems[0].q0;
  for (int p = 0; p < static_cast<int>(fam.problems.size()); ++p) {
    SolverOptions o = suite.options;
    o.seed = harness::solveSeed(suite.seed, fam.name, p, "dls");
    const Summary s = solver->solve(fam.problems[p], q, o);
    const Summary& h = r.rows[12 + p].summary;
    ASSERT_EQ(r.rows[12 + p].family, 1);
    ASSERT_EQ(r.rows[12 + p].problem, p);
    EXPECT_EQ(h.status, s.status) << "problem " << p;
    EXPECT_EQ(h.iterations, s.iterations) << "problem " << p;
    EXPECT_EQ(h.position_error, s.position_error) << "problem " << p;
  }
}

// A backend that supports nothing, to check unsupported pairs are rows, not errors.
class NothingSolver final : public Solver {
 public:
  bool supports(const Problem&, std::string* why) const override {
    if (why) *why = "test-nothing supports no problem";
    return false;
  }

 protected:
  void solveImpl(const Problem&, Eigen::VectorXd&, SolveContext& ctx) override { ctx.stop(Status::kStalled); }
};

TEST(Harness, UnsupportedPairsAreRecordedNotErrors) {
  if (!Registry::global().contains("test-nothing"))
    Registry::global().add({"test-nothing", "supports nothing (test)", {},
                            [](const Params&) { return std::make_unique<NothingSolver>(); }});
  const Suite suite = tinySuite();
  RunConfig c = quietConfig("", 2);
  c.solvers = {"dls", "test-nothing"};
  const RunResult r = harness::runSuiteInMemory(suite, c);
  int unsupported = 0;
  for (const auto& row : r.rows)
    if (row.solver == 1) {
      EXPECT_EQ(row.summary.status, Status::kUnsupported);
      EXPECT_NE(row.summary.message.find("supports no problem"), std::string::npos);
      ++unsupported;
    }
  EXPECT_EQ(unsupported, 20);
  const auto summary = harness::summarize(suite, r);
  ASSERT_EQ(summary.size(), 4u);
  EXPECT_EQ(summary[1].solver, "test-nothing");
  EXPECT_EQ(summary[1].supported, 0);
  EXPECT_NE(harness::formatSummary(suite, r).find("unsupp."), std::string::npos);
}

TEST(Harness, SummaryPercentilesInterpolateLikeNumpy) {
  Suite suite;
  suite.name = "s";
  suite.families.resize(1);
  suite.families[0].name = "f";
  RunResult r;
  r.solvers = {"x"};
  for (int i = 1; i <= 10; ++i) {
    harness::SolveRow row;
    row.problem = i - 1;
    row.summary.status = i <= 7 ? Status::kConverged : Status::kStalled;
    row.summary.iterations = i;
    row.summary.time_us = 10.0 * i;
    row.summary.fk_evals = 2 * i;
    r.rows.push_back(row);
  }
  const auto s = harness::summarize(suite, r);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].success_rate, 0.7);
  EXPECT_DOUBLE_EQ(s[0].iterations_median, 5.5);  // numpy.percentile(1..10, 50)
  EXPECT_DOUBLE_EQ(s[0].iterations_p90, 9.1);     // numpy.percentile(1..10, 90)
  EXPECT_DOUBLE_EQ(s[0].time_us_p90, 91.0);
  EXPECT_DOUBLE_EQ(s[0].time_us_mean, 55.0);
  EXPECT_DOUBLE_EQ(s[0].fk_evals_mean, 11.0);
}

TEST(Harness, BadSolverSpecsAndOutputDirectoriesAreClearErrors) {
  const Suite suite = tinySuite();
  RunConfig c = quietConfig(tempDir("bad"), 1);
  c.solvers = {"no-such-solver"};
  try {
    harness::runSuite(suite, c);
    FAIL() << "expected HarnessError";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-solver"), std::string::npos) << e.what();
  }
  c.solvers = {"dls:lambda=oops"};
  EXPECT_THROW(harness::runSuite(suite, c), HarnessError);
  c.solvers = {"dls", "dls"};
  EXPECT_THROW(harness::runSuite(suite, c), HarnessError);

  // A directory below a regular file cannot be created, even by root.
  const std::string file = tempDir("plainfile");
  std::ofstream(file) << "x";
  c.solvers = {"dls"};
  c.out_dir = file + "/results";
  try {
    harness::runSuite(suite, c);
    FAIL() << "expected HarnessError";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find(c.out_dir), std::string::npos) << e.what();
  }
  Suite empty;
  empty.name = "empty";
  EXPECT_THROW(harness::runSuiteInMemory(empty, quietConfig("", 1)), HarnessError);
}

// Runs the built `ikbench` binary; returns its exit status and output.
int runCli(const std::string& args, std::string* output) {
  const std::string cmd = std::string("'") + IKBENCH_CLI + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[512];
  output->clear();
  while (fgets(buf, sizeof buf, p)) *output += buf;
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(HarnessCli, BadCommandsExitNonZeroWithAClearMessage) {
  std::string out;
  EXPECT_EQ(runCli("run --suite no_such_suite_xyz --progress none", &out), 2);
  EXPECT_NE(out.find("no_such_suite_xyz"), std::string::npos) << out;

  const std::string dir = tempDir("cli_bad");
  EXPECT_EQ(runCli("run --chain 3 --samples 2 --solvers dls,nope --progress none --out " + dir, &out), 2);
  EXPECT_NE(out.find("unknown solver 'nope'"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(fs::path(dir) / "solves.csv"));

  const std::string file = tempDir("cli_file");
  std::ofstream(file) << "x";
  EXPECT_EQ(runCli("run --chain 3 --samples 2 --solvers dls --progress none --out " + file + "/sub", &out), 2);
  EXPECT_NE(out.find(file + "/sub"), std::string::npos) << out;

  EXPECT_EQ(runCli("run --progress none", &out), 2);  // nothing to run
  EXPECT_NE(out.find("--suite"), std::string::npos) << out;
  EXPECT_EQ(runCli("frobnicate", &out), 2);
}

TEST(HarnessCli, ChainRunWritesResultsAndListsSolvers) {
  std::string out;
  const std::string dir = tempDir("cli_ok");
  ASSERT_EQ(runCli("run --chain 4 --samples 6 --solvers dls --threads 2 --trace-problems 2 --progress none --out " +
                       dir,
                   &out),
            0)
      << out;
  EXPECT_NE(out.find("chain4-track"), std::string::npos) << out;  // the summary table
  EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / "solves.csv"));
  EXPECT_EQ(readCsv(dir + "/solves.csv").size(), 1u + 3 * 6);
  ASSERT_EQ(runCli("list solvers", &out), 0);
  EXPECT_NE(out.find("lambda=0.05"), std::string::npos) << out;  // parameters with defaults
  EXPECT_NE(out.find("restarts=0"), std::string::npos) << out;
}

}  // namespace
}  // namespace ikbench

#else

TEST(Harness, NotBuilt) { GTEST_SKIP() << "ikbench_harness not built (IKBENCH_BUILD_BENCHMARKS=OFF)"; }

#endif
