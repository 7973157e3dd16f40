// The benchmark harness (benchmarks/harness): the results format and its
// columns, determinism across thread counts and shards, sequential (tracking)
// families, unsupported pairs, a run's ownership of its directory,
// interruption and --resume, verify, merge, and clear errors with a non-zero
// exit status from the `ikbench` binary.
//
// Linked against ikbench_harness by benchmarks/CMakeLists.txt (which defines
// IKBENCH_HAVE_HARNESS and IKBENCH_CLI); without the benchmarks (option
// IKBENCH_BUILD_BENCHMARKS=OFF) there is nothing to test.
#include <fmt/format.h>
#include <gtest/gtest.h>

#ifdef IKBENCH_HAVE_HARNESS

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "harness/answer_quality.h"
#include "harness/chain_suite.h"
#include "harness/gzip_stream.h"
#include "harness/machine_load.h"
#include "harness/memory_budget.h"
#include "harness/merge.h"
#include "harness/results_format.h"
#include "harness/results_reader.h"
#include "harness/run_directory.h"
#include "harness/run_engine.h"
#include "harness/verify.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "run_files_util.h"
#include "test_util.h"

namespace ikbench {
namespace {

namespace fs = std::filesystem;
using harness::HarnessError;
using harness::RunConfig;
using harness::OutputMode;
using harness::RunOutcome;
using test::decompressRun;
using test::readCsv;
using test::readFile;
using test::remanifest;
using test::runCli;

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
  // A path of this process's own, not yet there (the run makes the directory).
  const fs::path p = test::processTempDir("harness_" + name);
  fs::remove(p);
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


// Column index by name in a CSV read with readCsv.
std::map<std::string, size_t> columns(const std::vector<std::vector<std::string>>& rows) {
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < rows.at(0).size(); ++i) col[rows[0][i]] = i;
  return col;
}

// Every file of a run but the time columns, for comparing two runs.
void expectSameResults(const std::string& a, const std::string& b) {
  const auto sa = withoutColumns(readCsv(a + "/solves.csv"), harness::kTimeColumns);
  const auto sb = withoutColumns(readCsv(b + "/solves.csv"), harness::kTimeColumns);
  ASSERT_EQ(sa.size(), sb.size());
  for (size_t i = 0; i < sa.size(); ++i) EXPECT_EQ(sa[i], sb[i]) << "solves.csv row " << i;
  EXPECT_EQ(withoutColumns(readCsv(a + "/traces.csv"), {"elapsed_us", "time_us"}),
            withoutColumns(readCsv(b + "/traces.csv"), {"elapsed_us", "time_us"}));
  for (const char* f : {"solutions.csv", "models.json", "problems.jsonl"})
    EXPECT_EQ(readFile(a + "/" + f), readFile(b + "/" + f)) << f;
}

TEST(Harness, WritesEveryFileWithTheDocumentedColumns) {
  const Suite suite = tinySuite();
  const std::string dir = tempDir("files");
  const RunOutcome result = harness::runSuite(suite, quietConfig(dir, 2));
  EXPECT_EQ(result.out_dir, dir);
  EXPECT_TRUE(result.complete);
  EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / "run.json"));
  for (const std::string& f : harness::kManifestFiles) {  // compressed: NAME.gz, and no plain NAME beside it
    EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / (f + ".gz"))) << f;
    EXPECT_FALSE(fs::exists(fs::path(dir) / f)) << f;
  }
  // No temporary or partial files left behind.
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
    EXPECT_EQ(e.path().filename().string().find("partial"), std::string::npos) << e.path();
  }

  // The documented columns, spelled out here so that renaming one fails.
  const std::vector<std::string> documented = {
      "suite",          "family",   "problem",        "dof",           "effectors",         "goal",
      "solver",         "status",   "converged",      "iterations",    "restarts",          "position_error",
      "orientation_error", "time_us", "fk_evals",     "jacobian_evals", "within_limits", "time_per_iteration_us",
      "seed", "problem_name", "message", "q", "seed_distance", "solutions"};
  const auto solves = readCsv((fs::path(dir) / "solves.csv").string());
  ASSERT_GE(solves.size(), 1u);
  EXPECT_EQ(solves[0], documented);
  ASSERT_EQ(solves.size(), 1u + (12 + 8) * 2);  // header + problems x solvers

  auto col = columns(solves);
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
    EXPECT_EQ(row[col["solutions"]], "1");
    EXPECT_EQ(harness::parseConfigText(row[col["q"]], "q").size(), 5);
    EXPECT_GE(std::stod(row[col["seed_distance"]]), 0.0);
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

  const std::vector<std::string> trace_cols = {"family",         "problem",           "solver",    "iteration",
                                               "position_error", "orientation_error", "step_norm", "damping",
                                               "elapsed_us",     "time_us",           "q"};
  const auto traces = readCsv((fs::path(dir) / "traces.csv").string());
  ASSERT_GE(traces.size(), 2u);
  EXPECT_EQ(traces[0], trace_cols);
  // A seeded sample of 3 problems of each family is traced, the one run.json
  // lists; each solve's trace starts at iteration 0 from the problem's start
  // configuration (the tracking family's problem 0 included).
  const auto run_json = nlohmann::json::parse(readFile((fs::path(dir) / "run.json").string()));
  std::map<std::string, std::vector<int>> sample;
  for (const Family& fam : suite.families) {
    sample[fam.name] = harness::traceSample(suite.seed, fam.name, static_cast<int>(fam.problems.size()), 3);
    EXPECT_EQ(run_json["trace"]["problems"][fam.name].get<std::vector<int>>(), sample[fam.name]) << fam.name;
  }
  std::set<std::string> traced_solves;
  for (size_t r = 1; r < traces.size(); ++r) {
    const auto& in = sample[traces[r][0]];
    EXPECT_NE(std::find(in.begin(), in.end(), std::stoi(traces[r][1])), in.end()) << traces[r][0] << " " << traces[r][1];
    traced_solves.insert(traces[r][0] + "/" + traces[r][1] + "/" + traces[r][2]);
  }
  EXPECT_EQ(traced_solves.size(), 2u * 3u * 2u);  // families x sample x solvers
  EXPECT_EQ(traces[1][0], "chain5-position");
  EXPECT_EQ(traces[1][3], "0");
  const int p0 = std::stoi(traces[1][1]);
  EXPECT_EQ(harness::parseConfigText(traces[1][10], "q"), suite.families[0].problems[p0].q0);
  size_t row = 1;  // that solve's solves.csv row
  while (row < solves.size() && !(solves[row][col["problem"]] == traces[1][1] && solves[row][col["solver"]] == traces[1][2] &&
                                  solves[row][col["family"]] == traces[1][0]))
    ++row;
  ASSERT_LT(row, solves.size());
  // The honest time axis ends at the timed solve's duration.
  const double timed = std::stod(solves[row][col["time_us"]]);
  size_t last = 1;
  while (last + 1 < traces.size() && traces[last + 1][1] == traces[1][1] && traces[last + 1][2] == traces[1][2]) ++last;
  EXPECT_LE(std::stod(traces[last][9]), timed * (1 + 1e-9) + 1e-3);
  // ... and the last traced configuration is the answer, exactly (an
  // attempt's last record keeps q exact); the ones before it have 6 digits.
  EXPECT_EQ(traces[last][10], solves[row][col["q"]]);
  if (last > 1)
    for (const std::string& x : [&] {
           std::vector<std::string> t;
           std::istringstream in(traces[last - 1][10]);
           for (std::string w; in >> w;) t.push_back(w);
           return t;
         }())
      EXPECT_LE(x.size(), std::string("-1.23456e-05").size()) << x;

  const auto run = nlohmann::json::parse(readFile((fs::path(dir) / "run.json").string()));
  EXPECT_EQ(run["format_version"], harness::kFormatVersion);
  EXPECT_EQ(run["complete"], true);
  EXPECT_EQ(run["suite"]["name"], "tiny");
  EXPECT_EQ(run["suite"]["seed"], 42);
  EXPECT_EQ(run["threads"], 2);
  ASSERT_EQ(run["solvers"].size(), 2u);
  EXPECT_EQ(run["solvers"][1]["spec"], "dls:lambda=0.2:restarts=2");
  EXPECT_EQ(run["solvers"][1]["parameters"]["lambda"], 0.2);  // typed, from the option binding
  EXPECT_EQ(run["solvers"][1]["parameters"]["restarts"], 2);
  EXPECT_EQ(run["solvers"][0]["parameters"]["lambda"], 0.05);  // the default, filled in
  EXPECT_EQ(run["solvers"][0]["parameters"]["limits"], "clamp");
  for (const char* key : {"git_revision", "start_time", "end_time"}) EXPECT_TRUE(run[key].is_string()) << key;
  EXPECT_FALSE(run["build"]["compiler"].get<std::string>().empty());
  EXPECT_TRUE(run["build"]["flags"].is_string());
  EXPECT_FALSE(run["machine"]["cpu"].get<std::string>().empty());
  EXPECT_EQ(run["machine"]["batch_kernel"], batchIsaName());
  // The CPU's identity, read here independently from /proc/cpuinfo's first
  // processor (where the system has one).
  {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::map<std::string, std::string> first;
    for (std::string line; std::getline(cpuinfo, line) && line.find_first_not_of(" \t") != std::string::npos;) {
      const size_t c = line.find(':');
      if (c == std::string::npos) continue;
      std::string key = line.substr(0, c);
      key.erase(key.find_last_not_of(" \t") + 1);
      first[key] = line.substr(std::min(line.size(), c + 2));
    }
    if (first.count("cpu family")) EXPECT_EQ(run["machine"]["family"], std::stoi(first["cpu family"]));
    if (first.count("model")) EXPECT_EQ(run["machine"]["model"], std::stoi(first["model"]));
    if (first.count("vendor_id")) EXPECT_EQ(run["machine"]["vendor"], first["vendor_id"]);
    if (first.count("flags")) {
      const std::string flags = " " + first["flags"] + " ";
      std::vector<std::string> isa;
      for (const char* x : {"avx2", "fma", "avx512f"})
        if (flags.find(std::string(" ") + x + " ") != std::string::npos) isa.push_back(x);
      EXPECT_EQ(run["machine"]["isa"], isa);
    }
  }
  EXPECT_EQ(run["throughput"]["solves"], 40);
  EXPECT_GT(run["throughput"]["solves_per_s"].get<double>(), 0.0);
  // The manifest names every file with its rows, and a reader accepts it.
  EXPECT_EQ(run["files"]["solves.csv.gz"]["rows"], 40);
  EXPECT_EQ(run["files"]["problems.jsonl.gz"]["rows"], 20);
  EXPECT_NO_THROW(harness::readResults(dir, true, true));
}

TEST(Harness, ModelsAndProblemsRoundTripThroughTheirJson) {
  const Suite suite = tinySuite();
  const std::string dir = tempDir("roundtrip");
  harness::runSuite(suite, quietConfig(dir, 1));
  const auto r = harness::readResults(dir, true, false);
  const auto models = harness::readModels(r);
  const auto problems = harness::readProblems(r, models);
  ASSERT_EQ(problems.size(), 20u);
  for (int f = 0; f < 2; ++f)
    for (int p = 0; p < static_cast<int>(suite.families[f].problems.size()); ++p) {
      const Problem& a = suite.families[f].problems[p];
      const Problem& b = problems.at({f, p});
      ASSERT_EQ(a.goals.size(), b.goals.size());
      EXPECT_EQ(a.q0, b.q0);
      // FK of the same q through both models agrees to rounding.
      Data da(*a.model), db(*b.model);
      const Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(a.model->nq(), -0.7, 0.9);
      forwardKinematics(*a.model, q, da);
      forwardKinematics(*b.model, q, db);
      for (int i = 0; i < a.model->numJoints(); ++i) {
        EXPECT_LT((da.world_T_body[i].p - db.world_T_body[i].p).norm(), 1e-12);
        EXPECT_LT((da.world_T_body[i].R - db.world_T_body[i].R).norm(), 1e-12);
      }
      EXPECT_LT((a.goals[0].target_position - b.goals[0].target_position).norm(), 1e-15);
      EXPECT_LT((a.goals[0].target_orientation - b.goals[0].target_orientation).norm(), 1e-12);
    }
  // The entries of models.json as written, from the reader's own parse (the
  // playground's --run takes them): one per model, each the file's.
  std::map<std::string, nlohmann::json> entries;
  const auto again = harness::readModels(r, nullptr, &entries);
  ASSERT_EQ(entries.size(), models.size());
  const nlohmann::json file = nlohmann::json::parse(r.read("models.json", std::size_t{1} << 30));
  for (const nlohmann::json& m : file["models"]) {
    const std::string id = m["id"].get<std::string>();
    ASSERT_TRUE(entries.count(id)) << id;
    EXPECT_EQ(entries.at(id), m) << id;
    EXPECT_EQ(again.at(id)->nq(), models.at(id)->nq()) << id;
  }
}

TEST(Harness, SolvesAreIdenticalApartFromTimesAtOneAndTwoThreads) {
  const Suite suite = tinySuite();
  const std::string d1 = tempDir("t1"), d2 = tempDir("t2");
  harness::runSuite(suite, quietConfig(d1, 1));
  harness::runSuite(suite, quietConfig(d2, 2));
  expectSameResults(d1, d2);
}

TEST(Harness, SequentialFamilyStartsEachSolveFromThePreviousAnswer) {
  const Suite suite = tinySuite();
  RunConfig c = quietConfig(tempDir("seq"), 2);
  c.solvers = {"dls"};
  c.trace = false;
  harness::runSuite(suite, c);
  const auto rows = readCsv(c.out_dir + "/solves.csv");
  auto col = columns(rows);
  // Replay the tracking family by hand, chaining the answers.
  const Family& fam = suite.families[1];
  auto solver = Registry::global().create("dls");
  Eigen::VectorXd q = fam.problems[0].q0;
  for (int p = 0; p < static_cast<int>(fam.problems.size()); ++p) {
    SolverOptions o = suite.options;
    o.seed = harness::solveSeed(suite.seed, fam.name, p, "dls");
    const Eigen::VectorXd start = q;
    const Summary s = solver->solve(fam.problems[p], q, o);
    const auto& row = rows[1 + 12 + p];
    ASSERT_EQ(row[col["family"]], fam.name);
    ASSERT_EQ(row[col["problem"]], std::to_string(p));
    EXPECT_EQ(row[col["status"]], toString(s.status)) << "problem " << p;
    EXPECT_EQ(row[col["iterations"]], std::to_string(s.iterations)) << "problem " << p;
    EXPECT_EQ(harness::parseConfigText(row[col["q"]], "q"), q) << "problem " << p;  // exact text
    // The continuity figure: distance from the previous answer.
    EXPECT_DOUBLE_EQ(std::stod(row[col["seed_distance"]]), (q - start).norm()) << "problem " << p;
  }
}

// Registers a test backend (no options) under `name`, once per process.
template <typename SolverType, typename Options>
void registerTestSolver(const char* name, const char* description) {
  if (!Registry::global().contains(name))
    Registry::global().add(solverInfo(name, description, OptionsBinding<Options>{},
                                      [](const Options&) { return std::make_unique<SolverType>(); }));
}

// A backend that supports nothing, to check unsupported pairs are rows, not errors.
struct NoOptions {};
class NothingSolver final : public Solver {
 public:
  bool supports(const Problem&, std::string* why) const override {
    if (why) *why = "test-nothing supports no problem";
    return false;
  }

 protected:
  void solveImpl(const Problem&, Eigen::VectorXd&, SolveContext& ctx) override { ctx.stop(Status::kStalled); }
};

TEST(Harness, ChainTrackingStartsOnItsPathSoMoreSamplesDoNotHurt) {
  // Problem 0 starts where the path starts; each later problem from the
  // previous answer. Finer sampling (smaller steps) must not lower success.
  auto dls = Registry::global().create("dls");
  SolverOptions o;
  double rate[2] = {0, 0};
  const int samples[2] = {100, 800};
  for (int k = 0; k < 2; ++k) {
    const Suite suite = harness::chainSuite(7, samples[k], 5);
    const Family& track = suite.families.back();
    ASSERT_TRUE(track.sequential);
    ASSERT_EQ(static_cast<int>(track.problems.size()), samples[k]);
    Eigen::VectorXd q = track.problems[0].q0;
    int converged = 0;
    for (const Problem& p : track.problems) {
      const Summary s = dls->solve(p, q, o);
      converged += s.converged();
      Data d(*p.model);
      forwardKinematics(*p.model, q, d);
      if (s.converged()) EXPECT_LE(evaluateGoals(*p.model, p.goals, d).position, o.position_tolerance);
    }
    rate[k] = static_cast<double>(converged) / samples[k];
  }
  EXPECT_GE(rate[0], 0.7) << rate[0];
  EXPECT_GE(rate[1], rate[0] - 0.01) << rate[0] << " at " << samples[0] << " samples, " << rate[1] << " at " << samples[1];
}

TEST(Harness, UnsupportedPairsAreRecordedNotErrors) {
  registerTestSolver<NothingSolver, NoOptions>("test-nothing", "supports nothing (test)");
  const Suite suite = tinySuite();
  RunConfig c = quietConfig(tempDir("unsupported"), 2);
  c.solvers = {"dls", "test-nothing"};
  harness::runSuite(suite, c);
  const auto rows = readCsv(c.out_dir + "/solves.csv");
  auto col = columns(rows);
  int unsupported = 0;
  for (size_t r = 1; r < rows.size(); ++r)
    if (rows[r][col["solver"]] == "test-nothing") {
      EXPECT_EQ(rows[r][col["status"]], "unsupported");
      EXPECT_NE(rows[r][col["message"]].find("supports no problem"), std::string::npos);
      EXPECT_EQ(rows[r][col["solutions"]], "0");
      ++unsupported;
    }
  EXPECT_EQ(unsupported, 20);
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
  c.solvers = {"dls:lambda={0.1,}"};  // an empty grid value
  EXPECT_THROW(harness::runSuite(suite, c), HarnessError);
  c.solvers = {"dls"};
  c.threads = 5000;
  EXPECT_THROW(harness::runSuite(suite, c), HarnessError);
  c.threads = 1;

  // A directory below a regular file cannot be created, even by root.
  const std::string file = tempDir("plainfile");
  std::ofstream(file) << "x";
  c.out_dir = file + "/results";
  try {
    harness::runSuite(suite, c);
    FAIL() << "expected HarnessError";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find(c.out_dir), std::string::npos) << e.what();
  }
  Suite empty;
  empty.name = "empty";
  EXPECT_THROW(harness::runSuite(empty, quietConfig(tempDir("empty"), 1)), HarnessError);
}

TEST(Harness, ARunOwnsItsDirectory) {
  const Suite suite = tinySuite();
  RunConfig c = quietConfig(tempDir("own"), 1);
  c.trace = false;
  harness::runSuite(suite, c);
  // A second run into a non-empty directory needs --force or --resume.
  try {
    harness::runSuite(suite, c);
    FAIL() << "expected HarnessError";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  // --resume of a complete run: nothing to resume.
  c.output = OutputMode::kResume;
  EXPECT_THROW(harness::runSuite(suite, c), HarnessError);
  c.output = OutputMode::kForce;
  EXPECT_TRUE(harness::runSuite(suite, c).complete);
  // A run in progress (the directory locked by a RunDirectory here) keeps out
  // every other run, --force included, and says who holds it.
  {
    harness::RunDirectory holder(c.out_dir, OutputMode::kForce);
    try {
      harness::runSuite(suite, c);
      FAIL() << "expected HarnessError";
    } catch (const HarnessError& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(getpid())), std::string::npos) << e.what();
    }
    // run.json was removed first by the holder: the directory reads as incomplete.
    EXPECT_THROW(harness::readResults(c.out_dir, true, false), harness::ResultsError);
  }
  EXPECT_TRUE(harness::runSuite(suite, c).complete);  // free again
}

TEST(Harness, SuiteNamesCannotLeaveTheResultsRoot) {
  Suite suite = tinySuite();
  suite.name = "x/../../escaped";
  RunConfig c = quietConfig("", 1);
  c.results_root = tempDir("root");
  const std::string dir = harness::outputDirectory(suite, c);
  EXPECT_EQ(fs::path(dir).parent_path(), fs::path(c.results_root));
  EXPECT_NE(fs::path(dir).filename().string(), "..");
  EXPECT_EQ(fs::weakly_canonical(dir).parent_path(), fs::weakly_canonical(c.results_root)) << dir;
  suite.name = "..";
  EXPECT_THROW(harness::outputDirectory(suite, c), HarnessError);
}

// A backend that stops the run (as a SIGINT would) at its n-th solve, once.
std::atomic<bool> g_stop_flag{false};
std::atomic<int> g_stop_countdown{-1};
struct StopperOptions {};
class StopperSolver final : public Solver {
 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    if (g_stop_countdown.fetch_sub(1) == 1) g_stop_flag = true;
    if (ctx.begin(q, ctx.evaluate(q))) return;
    (void)problem;
    ctx.stop(Status::kStalled, "test-stopper does not move");
  }
};

TEST(Harness, AnInterruptedRunKeepsItsSolvesAndResumesToTheSameFiles) {
  registerTestSolver<StopperSolver, StopperOptions>("test-stopper", "stops the run at its n-th solve (test)");
  const Suite suite = tinySuite();
  RunConfig c = quietConfig(tempDir("interrupted"), 2);
  c.solvers = {"dls", "test-stopper", "dls:lambda=0.2:restarts=2"};
  c.stop = &g_stop_flag;
  g_stop_flag = false;
  g_stop_countdown = 9;
  const RunOutcome first = harness::runSuite(suite, c);
  EXPECT_FALSE(first.complete);
  EXPECT_TRUE(first.interrupted);
  EXPECT_LT(first.solves_done, first.solves_total);
  EXPECT_GT(first.solves_done, 0);
  auto run = nlohmann::json::parse(readFile(c.out_dir + "/run.json"));
  EXPECT_EQ(run["complete"], false);
  EXPECT_EQ(run["interrupted"], true);
  EXPECT_EQ(run["progress"]["done"], first.solves_done);
  // Every finished solve is in the partial file; no final file yet.
  EXPECT_EQ(readCsv(c.out_dir + "/solves.partial.csv").size(), 1u + first.solves_done);
  EXPECT_FALSE(fs::exists(c.out_dir + "/solves.csv.gz"));
  EXPECT_THROW(harness::readResults(c.out_dir, true, false), harness::ResultsError);

  g_stop_flag = false;
  c.output = OutputMode::kResume;
  const RunOutcome second = harness::runSuite(suite, c);
  EXPECT_TRUE(second.complete);
  EXPECT_EQ(second.solves_resumed, first.solves_done);
  EXPECT_FALSE(fs::exists(c.out_dir + "/solves.partial.csv"));

  RunConfig u = c;
  u.out_dir = tempDir("uninterrupted");
  u.output = OutputMode::kFresh;
  EXPECT_TRUE(harness::runSuite(suite, u).complete);
  expectSameResults(c.out_dir, u.out_dir);

  // --resume with other solvers is refused, naming what differs.
  RunConfig other = quietConfig(tempDir("interrupted2"), 1);
  other.solvers = {"dls", "test-stopper"};
  other.stop = &g_stop_flag;
  g_stop_countdown = 3;
  EXPECT_FALSE(harness::runSuite(suite, other).complete);
  g_stop_flag = false;
  other.output = OutputMode::kResume;
  other.solvers = {"dls"};
  try {
    harness::runSuite(suite, other);
    FAIL() << "expected HarnessError";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("solvers"), std::string::npos) << e.what();
  }
}

// A backend whose traced solves end otherwise than its timed ones, as a
// solve does when a wall-clock budget binds in one pass and not the other.
struct TraceShyOptions {};
class TraceShySolver final : public Solver {
 protected:
  void solveImpl(const Problem&, Eigen::VectorXd& q, SolveContext& ctx) override {
    if (ctx.begin(q, ctx.evaluate(q))) return;
    ctx.stop(ctx.options().record_trace ? Status::kStalled : Status::kMaxIterations);
  }
};

TEST(Harness, TracedSolvesThatEndDifferentlyAreCountedAndNamed) {
  registerTestSolver<TraceShySolver, TraceShyOptions>("test-trace-shy", "ends otherwise when traced (test)");
  const Suite suite = tinySuite();
  RunConfig c = quietConfig(tempDir("trace_shy"), 2);
  c.solvers = {"dls", "test-trace-shy"};
  std::ostringstream log;
  c.log = &log;
  ASSERT_TRUE(harness::runSuite(suite, c).complete);
  // Three traced problems in each of the two families; dls ends alike.
  const auto run = nlohmann::json::parse(readFile(c.out_dir + "/run.json"));
  EXPECT_EQ(run["trace"]["mismatches"], 6);
  const std::string text = log.str();
  EXPECT_NE(text.find("note: 6 traced solves ended differently from the timed pass"), std::string::npos) << text;
  // The first three in the run's order, whichever thread traced them.
  std::vector<int> sample = harness::traceSample(suite.seed, "chain5-position", 12, 3);
  std::sort(sample.begin(), sample.end());
  EXPECT_NE(text.find(fmt::format("\n  chain5-position problem {} test-trace-shy: timed max-iterations after 0 "
                                  "iterations, traced stalled after 0\n  chain5-position problem {} test-trace-shy",
                                  sample[0], sample[1])),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  and 3 more"), std::string::npos) << text;
  EXPECT_EQ(text.find("problem 0 dls"), std::string::npos) << text;
}

TEST(Harness, ShardsMergeIntoTheUnshardedRun) {
  const Suite suite = tinySuite();
  RunConfig whole = quietConfig(tempDir("whole"), 2);
  harness::runSuite(suite, whole);
  std::vector<std::string> dirs;
  long total = 0;
  for (int k = 1; k <= 3; ++k) {
    RunConfig c = quietConfig(tempDir("shard" + std::to_string(k)), 1);
    c.shard = harness::Shard{k, 3};
    const RunOutcome o = harness::runSuite(suite, c);
    EXPECT_TRUE(o.complete);
    EXPECT_GT(o.solves_total, 0);
    total += o.solves_total;
    dirs.push_back(c.out_dir);
  }
  EXPECT_EQ(total, 40);
  // A missing or duplicated shard is refused.
  EXPECT_THROW(harness::mergeShards({dirs[0], dirs[2]}, tempDir("merged_bad"), OutputMode::kFresh), HarnessError);
  EXPECT_THROW(harness::mergeShards({dirs[0], dirs[1], dirs[1]}, tempDir("merged_bad2"), OutputMode::kFresh),
               HarnessError);
  const std::string merged = tempDir("merged");
  const auto rep = harness::mergeShards(dirs, merged, OutputMode::kFresh);
  EXPECT_EQ(rep.solves, 40);
  expectSameResults(whole.out_dir, merged);
  EXPECT_NO_THROW(harness::readResults(merged, true, true));
  // Shards of another seed are not merged.
  Suite other = suite;
  other.seed = 43;
  RunConfig c = quietConfig(tempDir("shard_other"), 1);
  c.shard = harness::Shard{2, 3};
  harness::runSuite(other, c);
  EXPECT_THROW(harness::mergeShards({dirs[0], c.out_dir, dirs[2]}, tempDir("merged_bad3"), OutputMode::kFresh),
               HarnessError);
}

// run.json's `load`: the 1-min load average at the start, at the end and
// sampled in between (min <= mean <= max, start and end among the samples),
// the runnable processes (this run's own thread at least), the usable cores,
// and `noisy` = the max above the cores.
TEST(Harness, RunJsonRecordsTheMachinesLoad) {
  const Suite suite = tinySuite();
  const RunConfig c = quietConfig(tempDir("load"), 2);
  ASSERT_TRUE(harness::runSuite(suite, c).complete);
  const auto run = nlohmann::json::parse(readFile(c.out_dir + "/run.json"));
  ASSERT_TRUE(run.contains("load")) << run.dump(2);
  const auto& load = run["load"];
  ASSERT_TRUE(load.is_object()) << load;  // /proc/loadavg exists on Linux
  const auto& s = load["samples"];
  EXPECT_GE(s["count"].get<long>(), 2) << load;  // the start and the end at least
  const double mn = s["min"], mean = s["mean"], mx = s["max"], start = load["start"], end = load["end"];
  EXPECT_GE(mn, 0.0) << load;
  EXPECT_LE(mn, mean + 1e-12) << load;
  EXPECT_LE(mean, mx + 1e-12) << load;
  for (double v : {start, end}) {
    EXPECT_GE(v, mn) << load;
    EXPECT_LE(v, mx) << load;
  }
  EXPECT_GE(load["runnable_max"].get<long>(), 1) << load;
  const int cores = load["cores"];
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_EQ(load["noisy"].get<bool>(), mx > cores) << load;
  if (load.contains("cpu_mhz")) {
    EXPECT_GT(load["cpu_mhz"].get<double>(), 0.0) << load;
  }
}

TEST(MachineLoad, ParsesProcFilesAndSaysWhatItCannotRead) {
  const harness::LoadReading r = harness::parseLoadavg("1.25 0.80 0.40 3/102 8386\n");
  ASSERT_TRUE(r.load_1min.has_value());
  EXPECT_DOUBLE_EQ(*r.load_1min, 1.25);
  ASSERT_TRUE(r.runnable.has_value());
  EXPECT_EQ(*r.runnable, 3);
  const harness::LoadReading bad = harness::parseLoadavg("");
  EXPECT_FALSE(bad.load_1min.has_value());
  EXPECT_FALSE(bad.runnable.has_value());
  EXPECT_FALSE(harness::parseLoadavg("nan 1 1 1/2 3").load_1min.has_value());
  const auto mhz = harness::parseCpuinfoMhz("processor\t: 0\ncpu MHz\t\t: 2000.0\nprocessor\t: 1\ncpu MHz\t\t: 3000.5\n");
  ASSERT_TRUE(mhz.has_value());
  EXPECT_DOUBLE_EQ(*mhz, 2500.25);
  EXPECT_FALSE(harness::parseCpuinfoMhz("processor\t: 0\nmodel name\t: x\n").has_value());
  // A recorder that has begun has at least one sample; noisy follows the rule.
  harness::LoadRecorder rec(std::chrono::milliseconds(0));
  rec.begin();
  rec.sample();
  rec.end();
  const auto j = rec.json();
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["samples"]["count"].get<long>(), 3);
  EXPECT_EQ(j["noisy"].get<bool>(), j["samples"]["max"].get<double>() > j["cores"].get<int>());
}

// The default solvers: a robot gets `auto`, its reference peer kdl-lma and,
// where the chain has a closed form, analytic-6r; --chain and --bvh runs (no
// list in the suite) get `auto` beside every backend.
TEST(Harness, DefaultSolversFitTheQuestion) {
  const Family ur5 = urdfFamily(dataDirectory() + "/robots/ur5.urdf", "", "", 3, 1);
  const Family panda = urdfFamily(dataDirectory() + "/robots/panda.urdf", "", "", 3, 1);
  const auto a = harness::robotDefaultSolvers(ur5);
  const auto b = harness::robotDefaultSolvers(panda);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.front(), "auto");
  EXPECT_EQ(b.front(), "auto");
  auto has = [](const std::vector<std::string>& v, const char* s) { return std::find(v.begin(), v.end(), s) != v.end(); };
  EXPECT_EQ(has(a, "kdl-lma"), Registry::global().contains("kdl-lma"));
  EXPECT_TRUE(has(a, "analytic-6r"));   // UR5: three parallel axes
  EXPECT_FALSE(has(b, "analytic-6r"));  // Panda: 7 joints
  const Suite chain = harness::chainSuite(3, 4, 1);
  ASSERT_TRUE(chain.solvers.empty());
  const harness::SolverList list = harness::resolveSolvers(chain, RunConfig{});
  ASSERT_FALSE(list.specs.empty());
  EXPECT_EQ(list.specs.front().text, "auto");
  EXPECT_EQ(list.specs.size(), Registry::global().list().size() + 1);
}

// A URDF family's name names the chain: the default tip given or not gives
// <robot>-pose, another tip <robot>-<tip>-pose.
TEST(Harness, UrdfFamilyNameDoesNotDependOnGivingTheDefaultTip) {
  const std::string ur5 = dataDirectory() + "/robots/ur5.urdf";
  const Family without = urdfFamily(ur5, "", "", 2, 1);
  const Family with = urdfFamily(ur5, "", "tool0", 2, 1);
  EXPECT_EQ(without.name, "ur5-pose");
  EXPECT_EQ(with.name, "ur5-pose");
  const Family other = urdfFamily(ur5, "", "wrist_2_link", 2, 1);
  EXPECT_EQ(other.name, "ur5-wrist_2_link-pose");
}

// Rewrites a run's manifest entry of one file after the test changed it.

TEST(Harness, VerifyRecomputesEverySuccessAndFindsAFalseOne) {
  const Suite suite = tinySuite();
  RunConfig c = quietConfig(tempDir("verify"), 2);
  harness::runSuite(suite, c);
  std::ostringstream log;
  auto rep = harness::verifyRun(c.out_dir, log);
  EXPECT_EQ(rep.rows, 40);
  EXPECT_EQ(rep.disagreements, 0) << log.str();

  // A row that claims convergence with another q: a false success.
  decompressRun(c.out_dir);
  auto rows = readCsv(c.out_dir + "/solves.csv");
  auto col = columns(rows);
  size_t victim = 0;
  for (size_t r = 1; r < rows.size() && !victim; ++r)
    if (rows[r][col["converged"]] == "1") victim = r;
  ASSERT_GT(victim, 0u);
  std::string text = readFile(c.out_dir + "/solves.csv");
  const std::string q = rows[victim][col["q"]];
  text.replace(text.find(q), q.size(), "0 0 0 0 0");
  std::ofstream(c.out_dir + "/solves.csv") << text;
  // Changed behind the manifest's back: refused as a mixed directory.
  EXPECT_THROW(harness::verifyRun(c.out_dir, log), harness::ResultsError);
  remanifest(c.out_dir);
  log.str("");
  rep = harness::verifyRun(c.out_dir, log);
  EXPECT_EQ(rep.disagreements, 1);
  EXPECT_EQ(rep.false_successes, 1);
  EXPECT_NE(log.str().find("converged=1 disagrees"), std::string::npos) << log.str();
}

TEST(Harness, VerifyCountsAFalseWithinLimitsClaimAsAFalseSuccess) {
  const Suite suite = tinySuite();
  RunConfig c = quietConfig(tempDir("verify_limits"), 2);
  harness::runSuite(suite, c);
  decompressRun(c.out_dir);
  // Every model's first limited DOF narrowed to [10, 11] rad, where no answer
  // of the run lies (the chains' limits are +-2.5): every row that claims to
  // be within its limits now claims it falsely.
  auto models = nlohmann::json::parse(readFile(c.out_dir + "/models.json"));
  for (auto& m : models["models"])
    for (auto& j : m["joints"])
      if (j.contains("lower") && j["lower"].is_array() && !j["lower"].empty()) {
        j["lower"][0] = 10.0;
        j["upper"][0] = 11.0;
        break;
      }
  std::ofstream(c.out_dir + "/models.json") << models.dump();
  remanifest(c.out_dir);
  const auto rows = readCsv(c.out_dir + "/solves.csv");
  auto col = columns(rows);
  long claimed_success = 0, claimed_within = 0;
  for (size_t r = 1; r < rows.size(); ++r) {
    claimed_within += rows[r][col["within_limits"]] == "1";
    claimed_success += rows[r][col["converged"]] == "1" && rows[r][col["within_limits"]] == "1";
  }
  ASSERT_GT(claimed_success, 0);
  std::ostringstream log;
  const auto rep = harness::verifyRun(c.out_dir, log);
  EXPECT_EQ(rep.disagreements, claimed_within) << log.str();
  // Converged rows still reach their targets: their false success is the limits claim alone.
  EXPECT_EQ(rep.false_successes, claimed_success) << log.str();
  EXPECT_NE(log.str().find("within_limits=1 disagrees"), std::string::npos) << log.str();
}

TEST(HarnessCli, BadCommandsExitNonZeroWithAClearMessage) {
  std::string out;
  EXPECT_EQ(runCli("run --suite no_such_suite_xyz --progress none", &out), 2);
  EXPECT_NE(out.find("no_such_suite_xyz"), std::string::npos) << out;

  const std::string dir = tempDir("cli_bad");
  EXPECT_EQ(runCli("run --chain 3 --samples 2 --solvers dls,nope --progress none --out " + dir, &out), 2);
  EXPECT_NE(out.find("unknown solver 'nope'"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(fs::path(dir) / "solves.csv.gz"));

  const std::string file = tempDir("cli_file");
  std::ofstream(file) << "x";
  EXPECT_EQ(runCli("run --chain 3 --samples 2 --solvers dls --progress none --out " + file + "/sub", &out), 2);
  EXPECT_NE(out.find(file + "/sub"), std::string::npos) << out;

  EXPECT_EQ(runCli("run --progress none", &out), 2);  // nothing to run
  EXPECT_NE(out.find("--suite"), std::string::npos) << out;
  EXPECT_EQ(runCli("frobnicate", &out), 2);
  // Values that used to be taken silently.
  EXPECT_EQ(runCli("run --chain 3 --seed -1 --progress none --out " + tempDir("cli_seed"), &out), 2);
  EXPECT_NE(out.find("--seed"), std::string::npos) << out;
  EXPECT_EQ(runCli("run --chain 3 --solvers '' --progress none --out " + tempDir("cli_empty"), &out), 2);
  EXPECT_NE(out.find("empty"), std::string::npos) << out;
  EXPECT_EQ(runCli("run --chain 2000000000 --progress none --out " + tempDir("cli_chain"), &out), 2);
  EXPECT_NE(out.find("--chain"), std::string::npos) << out;
  EXPECT_EQ(runCli("run --chain 3 --solvers dls:lambda=1e-320 --samples 2 --no-summary --progress none --out " +
                       tempDir("cli_subnormal"),
                   &out),
            0)
      << out;  // a subnormal number is finite, and accepted
  EXPECT_EQ(runCli("run --chain 3 --solvers dls:restarts=2147483647 --progress none --out " + tempDir("cli_r"), &out),
            2);
  EXPECT_NE(out.find("restarts"), std::string::npos) << out;
  EXPECT_EQ(runCli("throughput --solver two-bone --solves 100 --threads 1", &out), 2);  // converges on nothing
  EXPECT_NE(out.find("converged on none"), std::string::npos) << out;
}

// A spec with a seed library: the libraries are built before the timed runs,
// one per chain, and the build is reported beside the rates. (No time
// budget: the counts cannot depend on the machine's speed.)
TEST(HarnessCli, ThroughputBuildsSeedLibrariesBeforeTiming) {
  std::string out;
  const std::string dir = tempDir("cli_throughput_library");
  ASSERT_EQ(runCli("throughput --solver auto:time_budget_us=0:library=512:start=library --solves 400 --problems 100 "
                   "--threads 1,2 --batch --out " + dir,
                   &out),
            0)
      << out;
  EXPECT_NE(out.find("20 seed libraries of 512 entries built in"), std::string::npos) << out;
  const auto j = nlohmann::json::parse(readFile(dir + "/throughput.json"));
  EXPECT_EQ(j["seed_libraries"], 20);
  EXPECT_GT(j["seed_library_build_s"].get<double>(), 0.0);
  for (const auto& p : j["points"]) EXPECT_EQ(p["converged"], p["solves"]) << p;
  // Without a library nothing is built.
  ASSERT_EQ(runCli("throughput --solver auto --solves 100 --problems 20 --threads 1 --out " + dir, &out), 0) << out;
  EXPECT_EQ(out.find("seed libraries"), std::string::npos) << out;
  EXPECT_EQ(nlohmann::json::parse(readFile(dir + "/throughput.json"))["seed_libraries"], 0);
}

TEST(HarnessCli, ThroughputPointsCarryTheirSlicesRatesAndANoisyRule) {
  std::string out;
  const std::string dir = tempDir("cli_throughput_slices");
  ASSERT_EQ(runCli("throughput --solver dls --solves 2000 --problems 100 --threads 1 --batch --out " + dir, &out), 0)
      << out;
  const auto j = nlohmann::json::parse(readFile(dir + "/throughput.json"));
  int scalar = 0;
  for (const auto& p : j["points"]) {
    ASSERT_TRUE(p.contains("noisy")) << p;
    if (p["path"] == "batch") {
      EXPECT_FALSE(p.contains("slice_rates")) << p;  // one call: no slices
      continue;
    }
    ++scalar;
    ASSERT_EQ(p["slice_rates"].size(), 5u) << p;
    double lo = 1e300, hi = 0.0;
    for (const auto& r : p["slice_rates"]) {
      lo = std::min(lo, r.get<double>());
      hi = std::max(hi, r.get<double>());
    }
    EXPECT_GT(lo, 0.0);
    EXPECT_NEAR(p["spread"].get<double>(), hi / lo, 1e-9 * hi / lo);
    // The rule: noisy under load or when the slices' rates spread beyond 1.25x.
    const bool loaded = p["load"].is_object() && p["load"]["noisy"].get<bool>();
    EXPECT_EQ(p["noisy"].get<bool>(), loaded || p["spread"].get<double>() > 1.25) << p;
  }
  EXPECT_EQ(scalar, 2);  // the spec's Solver::solve and its generic code (kernel=generic)
}

TEST(HarnessCli, ChainRunWritesResultsAndListsSolvers) {
  std::string out;
  const std::string dir = tempDir("cli_ok");
  ASSERT_EQ(runCli("run --chain 4 --samples 6 --solvers dls --threads 2 --trace-problems 2 --progress none --out " +
                       dir,
                   &out),
            0)
      << out;
  EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / "solves.csv.gz"));
  EXPECT_EQ(readCsv(dir + "/solves.csv").size(), 1u + 3 * 6);
  EXPECT_EQ(runCli("verify " + dir, &out), 0) << out;
  ASSERT_EQ(runCli("list solvers", &out), 0);
  EXPECT_NE(out.find("lambda=0.05"), std::string::npos) << out;  // parameters with defaults
  EXPECT_NE(out.find("restarts=0"), std::string::npos) << out;
  ASSERT_EQ(runCli("list solvers --format json", &out), 0);
  const auto j = nlohmann::json::parse(out);
  bool found = false;
  for (const auto& s : j["solvers"])
    if (s["name"] == "dls")
      for (const auto& p : s["parameters"]) found |= p["name"] == "lambda" && p["default"] == "0.05" && p["unit"] == "m";
  EXPECT_TRUE(found) << out;
  EXPECT_FALSE(j["presets"].empty());
}

// The suite's solve options set on the command line are the ones in force:
// recorded in run.json and deciding convergence (a looser tolerance converges
// in fewer iterations); a bad value is refused naming the option.
TEST(HarnessCli, SolveOptionsFromTheCommandLineAreTheOnesInForce) {
  std::string out;
  const std::string tight = tempDir("cli_tight"), loose = tempDir("cli_loose");
  const std::string args = "run --chain 5 --samples 8 --solvers dls --no-trace --no-summary --progress none --out ";
  ASSERT_EQ(runCli(args + tight, &out), 0) << out;
  ASSERT_EQ(runCli(args + loose + " --position-tolerance 1e-3 --orientation-tolerance 2e-3 --max-iterations 77 "
                   "--time-budget-us 90000",
                   &out),
            0)
      << out;
  const auto options = nlohmann::json::parse(readFile(loose + "/run.json"))["suite"]["options"];
  EXPECT_EQ(options["position_tolerance_m"], 1e-3);
  EXPECT_EQ(options["orientation_tolerance_rad"], 2e-3);
  EXPECT_EQ(options["max_iterations"], 77);
  EXPECT_EQ(options["time_budget_us"], 90000.0);
  EXPECT_EQ(runCli("verify " + loose, &out), 0) << out;  // verify judges by the recorded tolerances
  auto iterations = [](const std::string& dir) {
    const auto rows = readCsv(dir + "/solves.csv");
    auto col = columns(rows);
    long sum = 0;
    for (size_t r = 1; r < rows.size(); ++r) sum += std::stol(rows[r][col["iterations"]]);
    return sum;
  };
  EXPECT_LT(iterations(loose), iterations(tight));
  EXPECT_EQ(runCli(args + tempDir("cli_badtol") + " --position-tolerance nan", &out), 2) << out;
  EXPECT_NE(out.find("--position-tolerance"), std::string::npos) << out;
  EXPECT_EQ(runCli(args + tempDir("cli_badit") + " --max-iterations 0", &out), 2) << out;
}

TEST(HarnessCli, SigintKeepsFinishedSolvesAndResumeCompletesTheRun) {
  const std::string dir = tempDir("cli_sigint");
#if defined(__SANITIZE_ADDRESS__)
  const int samples = 100;  // the sanitizers make every solve about 10x slower
#else
  const int samples = 3000;
#endif
  const std::string args = fmt::format(
      "run --chain 12 --samples {} --solvers ccd,sdls,dls --threads 2 --no-trace --no-summary --progress none --out {}",
      samples, dir);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cmd = std::string("exec '") + IKBENCH_CLI + "' " + args + " >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Interrupt once some solves are in the partial file.
  const std::string partial = dir + "/solves.partial.csv";
  for (int i = 0; i < 600; ++i) {
    if (fs::exists(partial) && fs::file_size(partial) > 5000) break;
    usleep(10000);
  }
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 0) GTEST_SKIP() << "the run ended before the interrupt arrived (a very fast machine)";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const auto run = nlohmann::json::parse(readFile(dir + "/run.json"));
  EXPECT_EQ(run["complete"], false);
  EXPECT_EQ(run["interrupted"], true);
  const long kept = run["progress"]["done"].get<long>();
  EXPECT_GT(kept, 0);
  EXPECT_EQ(static_cast<long>(readCsv(partial).size()) - 1, kept);
  std::string out;
  ASSERT_EQ(runCli(args + " --resume", &out), 0) << out;
  const auto done = nlohmann::json::parse(readFile(dir + "/run.json"));
  EXPECT_EQ(done["complete"], true);
  EXPECT_EQ(done["progress"]["resumed"], kept);
  EXPECT_EQ(readCsv(dir + "/solves.csv").size(), 1u + 3u * samples * 3u);
}

TEST(HarnessCli, ThreadsThatCannotStartLeaveTheRunToTheOthers) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit this test sets";
#else
  // 1 GB of address space holds about a hundred 8 MB thread stacks: most of
  // the 1000 threads asked for cannot start. glibc gives threads malloc
  // arenas of their own, each reserving 64 MB of address space (128 MB while
  // it aligns one): whether a thread's arena fits depends on how many stacks
  // are mapped at that moment, so the test keeps every thread on the main
  // arena (MALLOC_ARENA_MAX=1) and the limit measures the stacks alone.
  const std::string dir = tempDir("cli_threads");
  const std::string cmd = std::string("ulimit -v 1000000; MALLOC_ARENA_MAX=1 '") + IKBENCH_CLI +
                          "' run --chain 4 --samples 400 --solvers dls --threads 1000 --no-trace --no-summary "
                          "--progress none --out " + dir + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_NE(out.find("worker threads could start"), std::string::npos) << out;
  const auto run = nlohmann::json::parse(readFile(dir + "/run.json"));
  EXPECT_EQ(run["complete"], true);
  EXPECT_LT(run["threads"].get<int>(), 1000);
  EXPECT_EQ(readCsv(dir + "/solves.csv").size(), 1u + 3 * 400);
#endif
}

// A full disk: a small tmpfs (mounting needs root; skipped otherwise).
TEST(HarnessCli, AFullDiskLeavesTheRunVisiblyIncomplete) {
  const std::string mnt = tempDir("cli_full");
  fs::create_directories(mnt);
  if (std::system(("mount -t tmpfs -o size=256k tmpfs '" + mnt + "' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "cannot mount a 256 KB tmpfs at " << mnt << " (needs root): the full-disk case is not exercised";
  struct Unmount {
    std::string dir;
    ~Unmount() { (void)std::system(("umount '" + dir + "'").c_str()); }
  } unmount{mnt};
  std::string out;
  // Its finished solves, appended to solves.partial.csv as they finish, outgrow the 256 KB long
  // before the 10 000 solves are done (the compressed files are written only at the end).
  const int rc = runCli("run --chain 6 --samples 5000 --solvers dls,ccd --threads 2 --no-summary --progress none --out " +
                            mnt + "/run",
                        &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("No space left on device"), std::string::npos) << out;
  ASSERT_TRUE(fs::exists(mnt + "/run/run.json")) << out;
  const auto run = nlohmann::json::parse(readFile(mnt + "/run/run.json"));
  EXPECT_EQ(run["complete"], false);
  EXPECT_THROW(harness::readResults(mnt + "/run", true, false), harness::ResultsError);
}

// A shard says which it is and prints its counts, not a table of part of the
// data; throughput prints a table and writes its JSON only to --out, with
// the load of every point.
TEST(HarnessCli, ShardAndThroughputOutputIsCompact) {
  std::string out;
  const std::string dir = tempDir("cli_shard");
  ASSERT_EQ(runCli("run --chain 3 --samples 4 --solvers dls,ccd --shard 1/2 --trace-problems 1 --progress lines "
                   "--out " + dir,
                   &out),
            0)
      << out;
  EXPECT_NE(out.find("shard 1/2: "), std::string::npos) << out;
  EXPECT_NE(out.find("ikbench merge"), std::string::npos) << out;
  EXPECT_EQ(out.find("success"), std::string::npos) << out;  // no summary table
  EXPECT_FALSE(fs::exists(fs::path(dir) / "summary.csv"));
  EXPECT_NE(out.find("shard 1/2 solving: "), std::string::npos) << out;  // progress lines name the shard

  const std::string tdir = tempDir("cli_throughput_table");
  ASSERT_EQ(runCli("throughput --solver dls --solves 300 --problems 40 --threads 1,2 --out " + tdir, &out), 0) << out;
  EXPECT_EQ(out.find("{"), std::string::npos) << out;  // no JSON on the console
  EXPECT_NE(out.find("converged/s"), std::string::npos) << out;
  EXPECT_NE(out.find("scalar         2"), std::string::npos) << out;
  const auto j = nlohmann::json::parse(readFile(tdir + "/throughput.json"));
  ASSERT_EQ(j["points"].size(), 2u);
  for (const auto& p : j["points"]) {
    ASSERT_TRUE(p["load"].is_object()) << p;
    EXPECT_GE(p["load"]["samples"]["count"].get<long>(), 2) << p;
    EXPECT_EQ(p["load"]["noisy"].get<bool>(),
              p["load"]["samples"]["max"].get<double>() > p["load"]["cores"].get<int>())
        << p;
  }
}

TEST(HarnessCli, NonUtf8OutputPathsKeepRunJson) {
  const std::string dir = tempDir("cli_\xff\xfe_bytes");
  std::string out;
  ASSERT_EQ(runCli("run --chain 3 --samples 2 --solvers dls --no-summary --progress none --out '" + dir + "'", &out), 0)
      << out;
  const auto run = nlohmann::json::parse(readFile(dir + "/run.json"));
  EXPECT_EQ(run["complete"], true);
}

// ---- readers and writers around a finished run --------------------------------

// A small complete run to damage: 2-DOF chains, two solvers.
std::string smallRun(const std::string& name) {
  const std::string dir = tempDir(name);
  RunConfig c = quietConfig(dir, 1);
  c.solvers = splitSpecList("dls,ccd");
  harness::runSuite(harness::chainSuite(2, 3, 7), c);
  decompressRun(dir);  // plain files, as older runs have them: damaged in place by the tests
  return dir;
}

std::string verifyError(const std::string& dir) {
  std::ostringstream out;
  try {
    harness::verifyRun(dir, out);
  } catch (const harness::ResultsError& e) {
    return e.what();
  }
  return "";
}

TEST(ResultsReaders, RefuseFifosAndDevicesWithoutWaiting) {
  const std::string dir = smallRun("fifo");
  ASSERT_EQ(verifyError(dir), "");
  fs::remove(dir + "/solves.csv");
  ASSERT_EQ(::mkfifo((dir + "/solves.csv").c_str(), 0644), 0);
  EXPECT_NE(verifyError(dir).find("solves.csv: a FIFO, not a regular file"), std::string::npos) << verifyError(dir);
  EXPECT_THROW(harness::readRegularFile("/dev/zero", 1 << 20), harness::ResultsError);
  EXPECT_THROW(harness::readRegularFile(dir, 1 << 20), harness::ResultsError);
}

TEST(ResultsReaders, ManifestNamesOnlyTheRunsFiles) {
  const std::string dir = smallRun("manifest");
  std::ifstream in(dir + "/run.json");
  nlohmann::json run = nlohmann::json::parse(in);
  in.close();
  nlohmann::json bad = run;
  bad["files"]["/dev/zero"] = run["files"]["solves.csv"];
  std::ofstream(dir + "/run.json") << bad.dump();
  EXPECT_NE(verifyError(dir).find("'/dev/zero', which is not a file of a run"), std::string::npos) << verifyError(dir);
  bad = run;
  bad["files"] = nlohmann::json::object();
  std::ofstream(dir + "/run.json") << bad.dump();
  EXPECT_NE(verifyError(dir).find("does not list models.json"), std::string::npos) << verifyError(dir);
  bad = run;
  bad["suite"]["options"]["position_tolerance_m"] = -1.0;
  std::ofstream(dir + "/run.json") << bad.dump();
  EXPECT_NE(verifyError(dir).find("suite.options.position_tolerance_m"), std::string::npos) << verifyError(dir);
  bad = run;
  bad.erase("families");
  std::ofstream(dir + "/run.json") << bad.dump();
  EXPECT_NE(verifyError(dir).find("field 'families': missing"), std::string::npos) << verifyError(dir);
  std::ofstream(dir + "/run.json") << std::string(100000, '[');
  EXPECT_NE(verifyError(dir).find("nested deeper than 64"), std::string::npos) << verifyError(dir);
  std::ofstream(dir + "/run.json") << run.dump();
  EXPECT_EQ(verifyError(dir), "");
}

TEST(ResultsReaders, DamagedRowsAndModelsAreNamed) {
  const std::string dir = smallRun("rows");
  // A second row for a solve.
  std::string solves;
  {
    std::ifstream in(dir + "/solves.csv");
    std::stringstream ss;
    ss << in.rdbuf();
    solves = ss.str();
  }
  const size_t second = solves.find('\n') + 1;
  const std::string row = solves.substr(second, solves.find('\n', second) + 1 - second);
  std::ofstream(dir + "/solves.csv") << solves << row;
  remanifest(dir);
  EXPECT_NE(verifyError(dir).find("a second row for family"), std::string::npos) << verifyError(dir);
  std::ofstream(dir + "/solves.csv") << solves;
  remanifest(dir);
  ASSERT_EQ(verifyError(dir), "");
  // A model whose stored sizes are not its joints'.
  std::ifstream in(dir + "/models.json");
  const nlohmann::json models = nlohmann::json::parse(in);
  in.close();
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{{"nq", 2000000000}, {"nv", -1}}) {
    nlohmann::json bad = models;
    bad["models"][0][field] = value;
    std::ofstream(dir + "/models.json") << bad.dump();
    remanifest(dir);
    EXPECT_NE(verifyError(dir).find(field + ": "), std::string::npos) << field << ": " << verifyError(dir);
  }
  nlohmann::json bad = models;
  bad["models"][0]["joints"][1]["idx_q"] = 99;
  std::ofstream(dir + "/models.json") << bad.dump();
  remanifest(dir);
  EXPECT_NE(verifyError(dir).find("idx_q: 99 does not match"), std::string::npos) << verifyError(dir);
}

TEST(ResultsReaders, JsonDifferenceNamesTheField) {
  const nlohmann::json a = {{"name", "quick"}, {"seed", 1}, {"options", {{"max_iterations", 300}}}};
  nlohmann::json b = a;
  EXPECT_EQ(harness::jsonDifference(a, b, "suite"), "");
  b["seed"] = 2;
  EXPECT_EQ(harness::jsonDifference(a, b, "suite"), "suite.seed: 1 vs 2");
  b = a;
  b["options"]["max_iterations"] = 100;
  EXPECT_EQ(harness::jsonDifference(a, b, "suite"), "suite.options.max_iterations: 300 vs 100");
  b = a;
  b.erase("seed");
  EXPECT_EQ(harness::jsonDifference(a, b, "suite"), "suite.seed: 1 vs (absent)");
}

// Shards 1/2 and 2/2 of a small run (2-DOF chains, dls) as base/s1 and base/s2.
std::vector<std::string> twoShards(const std::string& base) {
  std::vector<std::string> shards;
  for (int k = 1; k <= 2; ++k) {
    RunConfig c = quietConfig(fmt::format("{}/s{}", base, k), 1);
    c.solvers = splitSpecList("dls");
    c.shard = harness::Shard{k, 2};
    harness::runSuite(harness::chainSuite(2, 3, 7), c);
    shards.push_back(c.out_dir);
  }
  return shards;
}

TEST(ResultsReaders, MergeNeverWritesOverOneOfItsShards) {
  const std::string base = tempDir("merge_into_shard");
  const std::vector<std::string> shards = twoShards(base);
  const std::string before = harness::manifestEntry(shards[0] + "/models.json.gz").dump();
  fs::create_directory_symlink(shards[0], base + "/link");
  for (const std::string& out : {shards[0], base + "/link"})
    EXPECT_THROW(harness::mergeShards(shards, out, OutputMode::kForce), HarnessError) << out;
  EXPECT_EQ(harness::manifestEntry(shards[0] + "/models.json.gz").dump(), before);
  std::ostringstream log;
  EXPECT_NO_THROW(harness::verifyRun(shards[0], log));
  const harness::MergeReport merged = harness::mergeShards(shards, base + "/merged", OutputMode::kFresh);
  EXPECT_EQ(merged.shards, 2);
  EXPECT_NO_THROW(harness::verifyRun(base + "/merged", log));
}

TEST(ResultsReaders, AMergedRunIsNoisyWhenAnyShardWas) {
  const std::string base = tempDir("merge_load");
  const std::vector<std::string> shards = twoShards(base);
  // Shard 2 says it ran on a loaded machine (run.json is not in its own manifest).
  nlohmann::json run2 = nlohmann::json::parse(readFile(shards[1] + "/run.json"));
  ASSERT_TRUE(run2["load"].is_object()) << run2["load"];
  run2["load"]["samples"]["max"] = 97.0;
  run2["load"]["noisy"] = true;
  std::ofstream(shards[1] + "/run.json") << run2.dump(1);
  harness::mergeShards(shards, base + "/merged", OutputMode::kFresh);
  const nlohmann::json merged = nlohmann::json::parse(readFile(base + "/merged/run.json"));
  EXPECT_EQ(merged["load"]["noisy"], true) << merged["load"];
  EXPECT_EQ(merged["load"]["samples"]["max"], 97.0);
  ASSERT_EQ(merged["merged_from"].size(), 2u);
  EXPECT_EQ(merged["merged_from"][1]["load"]["noisy"], true);
  EXPECT_TRUE(merged["merged_from"][0]["load"].is_object());
}

TEST(ResultsReaders, ForceAndResumeRemoveAKilledWritersTemporaryFiles) {
  const std::string dir = smallRun("stale_tmp");
  const std::string stale = dir + "/.traces.csv.tmp-99999";
  std::ofstream(stale) << "half a file";
  RunConfig c = quietConfig(dir, 1);
  c.solvers = splitSpecList("dls,ccd");
  c.output = OutputMode::kForce;
  harness::runSuite(harness::chainSuite(2, 3, 7), c);
  EXPECT_FALSE(fs::exists(stale));
}

TEST(ResultsReaders, OutputFilesFollowLinksAndNeverReplaceDevices) {
  const std::string dir = tempDir("outputs");
  fs::create_directories(dir);
  const std::string target = dir + "/target.json", link = dir + "/link.json";
  std::ofstream(target) << "old";
  fs::create_symlink("target.json", link);
  harness::writeOutputFile(link, "new\n");
  EXPECT_TRUE(fs::is_symlink(link));
  std::ifstream in(target);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "new");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_THROW(harness::writeOutputFile(fifo, "x"), HarnessError);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_THROW(harness::writeOutputFile("/dev/null", "x"), HarnessError);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_THROW(harness::writeOutputFile(dir, "x"), HarnessError);
  size_t temporaries = 0;
  for (const auto& e : fs::directory_iterator(dir)) temporaries += e.path().filename().string().find(".tmp-") != std::string::npos;
  EXPECT_EQ(temporaries, 0u);
}

TEST(ResultsReaders, RunsThatCannotFitInMemoryAreRefusedWithTheEstimate) {
  ::setenv("IKBENCH_MEMORY_LIMIT_MB", "1", 1);
  harness::MemoryNeed small{.problems = 10, .q_entries = 100};
  EXPECT_NO_THROW(harness::checkMemory(small, "small"));
  harness::MemoryNeed large{.problems = 1000, .q_entries = 1e5, .solves = 1000, .solve_q_entries = 1e5};
  try {
    harness::checkMemory(large, "large");
    ADD_FAILURE() << "an 8 MiB estimate passed a 1 MiB cap";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("--shard K/N"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("about 8 MiB in memory"), std::string::npos) << e.what();
  }
  RunConfig c = quietConfig(tempDir("memory"), 1);
  c.solvers = splitSpecList("dls");
  EXPECT_THROW(harness::runSuite(harness::chainSuite(200, 2000, 7), c), HarnessError);
  ::setenv("IKBENCH_MEMORY_LIMIT_MB", "lots", 1);
  EXPECT_THROW(harness::checkMemory(small, "small"), HarnessError);
  ::unsetenv("IKBENCH_MEMORY_LIMIT_MB");
}

TEST(ResultsReaders, ATracePassThatWouldNotFitIsSkippedAndTheRunCompletes) {
  // 900 solves of 20 DOF fit in 5 MiB; their traces (every problem traced) do not.
  ::setenv("IKBENCH_MEMORY_LIMIT_MB", "5", 1);
  const std::string dir = tempDir("trace_skipped");
  RunConfig c = quietConfig(dir, 2);
  c.solvers = splitSpecList("dls");
  c.trace_problems = 300;
  std::ostringstream log;
  c.log = &log;
  const RunOutcome out = harness::runSuite(harness::chainSuite(20, 300, 7), c);
  ::unsetenv("IKBENCH_MEMORY_LIMIT_MB");
  EXPECT_TRUE(out.complete);
  EXPECT_NE(log.str().find("the trace pass is skipped"), std::string::npos) << log.str();
  std::ifstream in(dir + "/run.json");
  const nlohmann::json run = nlohmann::json::parse(in);
  EXPECT_TRUE(run["trace"]["skipped"].is_string());
  EXPECT_EQ(run["trace"]["rows"], 0);
  EXPECT_EQ(readCsv(dir + "/traces.csv").size(), 1u);  // the header alone
  std::ostringstream verify_log;
  EXPECT_EQ(harness::verifyRun(dir, verify_log).disagreements, 0);
}

// ---- protocols, outcomes and answer quality (docs/protocols.md) ----

// Every outcome on a constructed solve whose answer is known.
TEST(Outcome, EveryClassOnConstructedSolves) {
  using harness::outcomeName;
  EXPECT_EQ(outcomeName(Status::kConverged, true, true, false), "converged");
  EXPECT_EQ(outcomeName(Status::kMaxIterations, true, true, false), "converged");  // FK decides
  EXPECT_EQ(outcomeName(Status::kFalseConvergence, false, true, false), "wrong");  // claimed, FK disagrees
  EXPECT_EQ(outcomeName(Status::kConverged, true, false, false), "wrong");         // met outside the limits
  EXPECT_EQ(outcomeName(Status::kStalled, true, false, true), "wrong");
  EXPECT_EQ(outcomeName(Status::kMaxIterations, false, true, false), "not-found");
  EXPECT_EQ(outcomeName(Status::kStalled, false, true, false), "not-found");
  EXPECT_EQ(outcomeName(Status::kStalled, false, true, true), "refused");
  EXPECT_EQ(outcomeName(Status::kNumericalFailure, false, true, true), "refused");
  EXPECT_EQ(outcomeName(Status::kTimeLimit, false, true, false), "timed-out");
  EXPECT_EQ(outcomeName(Status::kTimeLimit, false, true, true), "timed-out");
  EXPECT_EQ(outcomeName(Status::kFalseConvergence, false, true, true), "wrong");  // a claim on an unreachable target
  EXPECT_EQ(outcomeName(Status::kUnsupported, false, true, false), "not-attempted");
  EXPECT_EQ(outcomeName(Status::kInvalidInput, false, false, true), "not-attempted");
}

// The motion cells of a tracked frame on a planar 2R chain:
// joint_jump is the largest single joint's change from the previous answer,
// branch_switch 1 when it exceeds the family's branch_jump, 0 when not, empty
// without a threshold; the first frame of a path has neither.
TEST(Outcome, BranchSwitchIsAJumpAboveTheFamilysThreshold) {
  const auto m = test::planarChain({0.5, 0.5});
  Data data(*m);
  Goal g;
  g.body = m->bodyIndex("tip");
  g.kind = GoalKind::kPosition;
  Eigen::VectorXd prev(2), near(2), flipped(2);
  prev << 0.2, 0.6;
  near << 0.25, 0.55;      // jump 0.05
  flipped << 0.8, -0.6;    // the other elbow branch: jump 1.2
  auto cells = [&](const Eigen::VectorXd& q, const std::vector<const Eigen::VectorXd*>& hist, double branch_jump) {
    forwardKinematics(*m, q, data);
    g.target_position = data.world_T_body[g.body].act(g.point);
    const std::string text =
        harness::qualityCells(*m, {g}, data, Status::kConverged, true, true, false, true, hist, 30.0, branch_jump);
    std::vector<std::string> out;
    std::stringstream ss(text.substr(1));
    for (std::string c; std::getline(ss, c, ',');) out.push_back(c);
    out.resize(8);
    return out;  // outcome, manipulability, limit_margin, joint_jump, branch_switch, velocity, acceleration, jerk
  };
  auto small = cells(near, {&near, &prev}, 0.5);
  EXPECT_EQ(small[0], "converged");
  EXPECT_NEAR(std::stod(small[3]), 0.05, 1e-12);
  EXPECT_EQ(small[4], "0");
  auto flip = cells(flipped, {&flipped, &prev}, 0.5);
  EXPECT_NEAR(std::stod(flip[3]), 1.2, 1e-12);
  EXPECT_EQ(flip[4], "1");
  EXPECT_NEAR(std::stod(flip[5]), 30.0 * std::hypot(0.6, 1.2), 1e-9);  // velocity: the joint-space step x rate
  EXPECT_EQ(cells(flipped, {&flipped, &prev}, 0.0)[4], "");  // no threshold: not classified
  const auto first = cells(prev, {&prev}, 0.5);  // the path's first frame
  EXPECT_EQ(first[3], "");
  EXPECT_EQ(first[4], "");
}

// A run of each protocol on the shipped UR5 (few targets): the quality
// columns are written and recomputed by ikbench verify without a
// disagreement; the outcomes are those the targets allow.
TEST(Protocol, EachProtocolRunsOnAShippedArmAndVerifies) {
  const std::string urdf = std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/robots/ur5.urdf";
  const std::vector<std::string> names = builtinProtocolNames();
  for (const char* want : {"trac-ik", "ikfast-test", "seeds", "tracking"})
    ASSERT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const Suite suite = loadProtocol(name, urdf, "", "", std::nullopt, 12);
    EXPECT_EQ(suite.protocol, name);
    RunConfig c = quietConfig(tempDir("protocol_" + name), 2);
    c.solvers = {"auto", "dls:max_iterations=200"};
    const RunOutcome out = harness::runSuite(suite, c);
    ASSERT_TRUE(out.complete);
    const auto rows = readCsv(c.out_dir + "/solves.csv");
    auto col = columns(rows);
    for (const std::string& q : harness::kQualityColumns) ASSERT_TRUE(col.count(q)) << q;
    const nlohmann::json run = nlohmann::json::parse(readFile(c.out_dir + "/run.json"));
    EXPECT_EQ(run["protocol"], name);
    std::map<std::string, std::string> targets;
    for (const auto& f : run["families"]) targets[f["name"]] = f["targets"];
    for (size_t r = 1; r < rows.size(); ++r) {
      const auto& row = rows[r];
      const std::string& outcome = row[col["outcome"]];
      if (targets[row[col["family"]]] == "unreachable")
        EXPECT_TRUE(outcome == "refused" || outcome == "timed-out") << outcome;  // FK can never meet it
      else
        EXPECT_NE(outcome, "refused");
      EXPECT_EQ(!row[col["manipulability"]].empty(), outcome == "converged");
    }
    std::ostringstream log;
    const auto rep = harness::verifyRun(c.out_dir, log);
    EXPECT_EQ(rep.disagreements, 0) << log.str();
    EXPECT_EQ(rep.quality_rows, static_cast<long>(rows.size()) - 1) << log.str();
  }
}

// Tracking: frame k has a jump and a velocity from frame 1, an acceleration
// from frame 2 and a jerk from frame 3; frame 0 has none.
TEST(Protocol, TrackingRowsCarryTheMotionOfTheirFrames) {
  const std::string urdf = std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/robots/ur5.urdf";
  const Suite suite = loadProtocol("tracking", urdf, "", "", std::nullopt, 10);
  RunConfig c = quietConfig(tempDir("protocol_tracking_frames"), 1);
  c.solvers = {"auto"};
  ASSERT_TRUE(harness::runSuite(suite, c).complete);
  const auto rows = readCsv(c.out_dir + "/solves.csv");
  auto col = columns(rows);
  for (size_t r = 1; r < rows.size(); ++r) {
    const int k = std::stoi(rows[r][col["problem"]]);
    EXPECT_EQ(rows[r][col["joint_jump"]].empty(), k < 1);
    EXPECT_EQ(rows[r][col["joint_velocity"]].empty(), k < 1);
    EXPECT_EQ(rows[r][col["joint_acceleration"]].empty(), k < 2);
    EXPECT_EQ(rows[r][col["joint_jerk"]].empty(), k < 3);
    EXPECT_EQ(rows[r][col["branch_switch"]].empty(), k < 1);
  }
}

// A run without a protocol or --quality keeps the format's columns exactly.
TEST(Protocol, ARunWithoutAProtocolHasNoQualityColumns) {
  RunConfig c = quietConfig(tempDir("no_protocol"), 1);
  c.trace = false;
  ASSERT_TRUE(harness::runSuite(tinySuite(), c).complete);
  EXPECT_EQ(readCsv(c.out_dir + "/solves.csv").at(0), harness::solveHeader());
  c = quietConfig(tempDir("quality_flag"), 1);
  c.trace = false;
  c.quality = true;
  ASSERT_TRUE(harness::runSuite(tinySuite(), c).complete);
  std::vector<std::string> with = harness::solveHeader();
  with.insert(with.end(), harness::kQualityColumns.begin(), harness::kQualityColumns.end());
  EXPECT_EQ(readCsv(c.out_dir + "/solves.csv").at(0), with);
  std::ostringstream log;
  EXPECT_EQ(harness::verifyRun(c.out_dir, log).disagreements, 0) << log.str();
}

// A tracking run interrupted and resumed writes the same quality columns as
// one that ran through: the motion of a resumed frame comes from the kept
// answers of the frames before it.
TEST(Protocol, AnInterruptedTrackingRunResumesToTheSameQualityColumns) {
  registerTestSolver<StopperSolver, StopperOptions>("test-stopper", "stops the run at its n-th solve (test)");
  const std::string urdf = std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/robots/ur5.urdf";
  const Suite suite = loadProtocol("tracking", urdf, "", "", std::nullopt, 15);
  RunConfig c = quietConfig(tempDir("protocol_interrupted"), 1);
  c.trace = false;
  c.solvers = {"dls", "test-stopper"};
  c.stop = &g_stop_flag;
  g_stop_flag = false;
  g_stop_countdown = 20;  // in the second family's stopper unit
  EXPECT_FALSE(harness::runSuite(suite, c).complete);
  g_stop_flag = false;
  c.output = OutputMode::kResume;
  ASSERT_TRUE(harness::runSuite(suite, c).complete);
  RunConfig u = c;
  u.out_dir = tempDir("protocol_uninterrupted");
  u.output = OutputMode::kFresh;
  ASSERT_TRUE(harness::runSuite(suite, u).complete);
  expectSameResults(c.out_dir, u.out_dir);
  std::ostringstream log;
  EXPECT_EQ(harness::verifyRun(c.out_dir, log).disagreements, 0) << log.str();
}

TEST(Protocol, UnknownProtocolAndMissingRobotAreErrors) {
  const std::string urdf = std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/robots/ur5.urdf";
  try {
    loadProtocol("trac_ik", urdf, "", "");
    FAIL() << "no error";
  } catch (const SuiteError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown protocol 'trac_ik'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("trac-ik"), std::string::npos) << e.what();
  }
  EXPECT_THROW(loadProtocol("trac-ik", "", "", ""), SuiteError);
}

// ---- compressed files ---------------------------------------------------------------

std::string writeTemp(const std::string& name, const std::string& bytes) {
  static const std::string dir = [] {
    const std::string d = tempDir("gzip");
    fs::create_directories(d);
    return d;
  }();
  const std::string path = (fs::path(dir) / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string readError(const std::string& path) {
  try {
    harness::readRunFile(path, SIZE_MAX);
  } catch (const harness::ResultsError& e) {
    return e.what();
  }
  return "";
}

TEST(CompressedFiles, ReadBackWhatWasWrittenAlsoAsConcatenatedMembers) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += fmt::format("row,{},{}\n", i, i * 0.125);
  const std::string one = harness::gzipCompress(text);
  EXPECT_LT(one.size(), text.size() / 3);
  EXPECT_EQ(harness::readRunFile(writeTemp("one.csv.gz", one), SIZE_MAX), text);
  // `cat a.gz b.gz` is one file of both contents.
  EXPECT_EQ(harness::readRunFile(writeTemp("two.csv.gz", one + harness::gzipCompress("tail\n")), SIZE_MAX),
            text + "tail\n");
  // The manifest of a compressed file: its own bytes and hash, its content's rows.
  const nlohmann::json entry = harness::manifestEntry(writeTemp("m.csv.gz", one));
  EXPECT_EQ(entry["bytes"], one.size());
  EXPECT_EQ(entry["rows"], 20000 - 1);
  // A plain file is read as it is, a .gz file never is.
  EXPECT_EQ(harness::readRunFile(writeTemp("plain.csv", text), SIZE_MAX), text);
  EXPECT_NE(readError(writeTemp("plain.csv.gz", text)).find("not a valid gzip stream"), std::string::npos);
}

TEST(CompressedFiles, TruncatedCorruptAndBombStreamsAreErrorsNamingTheFile) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += fmt::format("{} {} {}\n", i, i * 3, i * 7);
  const std::string gz = harness::gzipCompress(text);
  // Cut short (a kill or a full disk while it was written, were it not atomic).
  const std::string cut = writeTemp("cut.csv.gz", gz.substr(0, gz.size() / 2));
  EXPECT_NE(readError(cut).find("cut.csv.gz: the gzip stream is truncated"), std::string::npos) << readError(cut);
  EXPECT_NE(readError(writeTemp("header.csv.gz", gz.substr(0, 5))).find("truncated"), std::string::npos);
  EXPECT_NE(readError(writeTemp("empty.csv.gz", "")).find("empty.csv.gz: empty, not a gzip stream"), std::string::npos);
  // A flipped byte in the compressed data, and trailing bytes that are no member.
  std::string bad = gz;
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x5a);
  EXPECT_NE(readError(writeTemp("flip.csv.gz", bad)).find("flip.csv.gz:"), std::string::npos);
  EXPECT_NE(readError(writeTemp("trail.csv.gz", gz + "garbage")).find("not a valid gzip stream"), std::string::npos);
  // A bomb: 200 MiB of zeros in a few hundred KiB stops at the floor of the
  // expansion limit (64 MiB), not at its claimed size.
  std::string bomb;
  {
    harness::GzipWriter w([&](const char* p, size_t n) { bomb.append(p, n); });
    const std::string zeros(1 << 20, '\0');
    for (int i = 0; i < 200; ++i) w.write(zeros);
    w.finish();
  }
  ASSERT_LT(bomb.size() * harness::kMaxGzipRatio, harness::kGzipFloorBytes);
  const std::string bomb_path = writeTemp("bomb.csv.gz", bomb);
  EXPECT_NE(readError(bomb_path).find("bomb.csv.gz: decompresses to more than 67108864 bytes"), std::string::npos)
      << readError(bomb_path);
  EXPECT_THROW(harness::manifestEntry(bomb_path), harness::ResultsError);
  // A reader's own limit applies to the content.
  EXPECT_THROW(harness::readRunFile(writeTemp("small.csv.gz", gz), 1000), harness::ResultsError);
}

TEST(CompressedFiles, APlainAndACompressedCopyOfOneFileAreRefused) {
  const std::string dir = smallRun("both");  // plain files
  std::ofstream(dir + "/traces.csv.gz", std::ios::binary) << harness::gzipCompress(readFile(dir + "/traces.csv"));
  EXPECT_NE(verifyError(dir).find("both traces.csv and traces.csv.gz"), std::string::npos) << verifyError(dir);
  fs::remove(dir + "/traces.csv");
  remanifest(dir);  // a run may mix plain and compressed files (one gunzipped by hand)
  EXPECT_EQ(verifyError(dir), "");
}

TEST(TraceSample, IsSeededNestedAndCoversAll) {
  const std::vector<int> five = harness::traceSample(7, "chain7-pose", 300, 5);
  ASSERT_EQ(five.size(), 5u);
  EXPECT_EQ(harness::traceSample(7, "chain7-pose", 300, 5), five);  // deterministic
  const std::vector<int> twenty = harness::traceSample(7, "chain7-pose", 300, 20);
  EXPECT_TRUE(std::equal(five.begin(), five.end(), twenty.begin()));  // the sample of 5 is the first 5 of 20
  EXPECT_NE(harness::traceSample(8, "chain7-pose", 300, 5), five);     // another seed, another sample
  EXPECT_NE(harness::traceSample(7, "chain8-pose", 300, 5), five);     // another family too
  EXPECT_NE(five, (std::vector<int>{0, 1, 2, 3, 4}));
  std::vector<int> all = harness::traceSample(7, "chain7-pose", 300, RunConfig::kTraceAll);
  ASSERT_EQ(all.size(), 300u);
  std::sort(all.begin(), all.end());
  for (int p = 0; p < 300; ++p) EXPECT_EQ(all[static_cast<size_t>(p)], p);
  EXPECT_EQ(harness::traceSample(7, "x", 2, 5).size(), 2u);
  EXPECT_TRUE(harness::traceSample(7, "x", 10, 0).empty());
}

}  // namespace
}  // namespace ikbench

#else

TEST(Harness, NotBuilt) { GTEST_SKIP() << "ikbench_harness not built (IKBENCH_BUILD_BENCHMARKS=OFF)"; }

#endif
