// External solvers (docs/external-solvers.md): the `ext` backend and its
// protocol client against well-behaved and hostile solver processes, and an
// `ikbench run` with an external solver beside a built-in one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "ikbench/external/external_solver.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "run_files_util.h"
#include "test_util.h"

namespace ikbench {
namespace {

using external::ExternalClient;
using external::ExternalOptions;

const std::string kSource = IKBENCH_SOURCE_DIR;

// The Debian interpreter (numpy for the examples); the hostile solver needs only the standard library.
const char* kPython = "/usr/bin/python3";

bool havePython() { return std::filesystem::exists(kPython); }
bool haveNumpy() {
  static const bool yes = havePython() && std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return yes;
}

std::string hostile(const std::string& mode, int good = 0) {
  return fmt::format("{} {}/tests/external/hostile_solver.py {} {}", kPython, kSource, mode, good);
}

// The index of column `name` of a CSV header (a failure when it is absent).
size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << name;
  return static_cast<size_t>(it - header.begin());
}

// The seeds protocol on the shipped UR5 (2 targets per regime, 100 iterations, one thread) with
// `solvers` into `out`: the CLI's exit status, its output in *output.
int runSeedsOnUr5(const std::string& solvers, const std::string& out, const std::string& flags, std::string* output) {
  return test::runCli(fmt::format("run --protocol seeds --urdf '{}/scenarios/data/robots/ur5.urdf' --samples 2 "
                                  "--max-iterations 100 --threads 1 --progress none {} --solvers \"{}\" --out '{}'",
                                  kSource, flags, solvers, out),
                      output);
}

std::string extSpec(const std::string& cmd, const std::string& keys = "") {
  return fmt::format("ext:cmd='{}':timeout_ms=2000:respawns=1{}", cmd, keys);
}

std::unique_ptr<Solver> make(const std::string& spec) {
  external::registerExternalSolver(Registry::global());
  return Registry::global().create(spec);
}

// Reachable position goals on a seeded random 4-joint chain.
std::vector<Problem> problems(int n, std::uint64_t seed = 7) {
  ChainSpec cs;
  cs.joints = 4;
  cs.limit = 2.5;
  GoalSetSpec gs;
  gs.count = n;
  gs.kind = GoalKind::kPosition;
  return reachableGoals(randomChain(cs, seed), gs, seed, "p");
}

// Whether process `pid` is gone (or a zombie that is not ours to reap).
bool notRunning(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && (text[paren + 2] == 'Z' || text[paren + 2] == 'X');
}

#define SKIP_WITHOUT_PYTHON() \
  if (!havePython()) GTEST_SKIP() << kPython << " is not installed: the test solvers are Python scripts"

TEST(ExternalSolver, AnswersAreCheckedAndTheReportedTimeKept) {
  SKIP_WITHOUT_PYTHON();
  auto s = make(extSpec(hostile("crash", 1000)));
  SolverOptions o;
  for (const Problem& p : problems(3)) {
    Eigen::VectorXd q = p.q0;
    const Summary sm = s->solve(p, q, o);
    // The process answers the start and says max-iterations: the verdict is by FK of that answer.
    EXPECT_EQ(sm.status, Status::kMaxIterations) << sm.message;
    EXPECT_TRUE(q.isApprox(p.q0));
    EXPECT_DOUBLE_EQ(sm.reported_time_us, 1.5);
    EXPECT_GT(sm.position_error, o.position_tolerance);
    EXPECT_TRUE(sm.within_limits);
  }
}

TEST(ExternalSolver, ACrashIsAFailureAndTheProcessRestartsWithinItsLimit) {
  SKIP_WITHOUT_PYTHON();
  // Answers one problem per process, then aborts; one restart allowed.
  auto s = make(extSpec(hostile("crash", 1)));
  const std::vector<Problem> ps = problems(5);
  SolverOptions o;
  std::vector<Summary> sm;
  for (const Problem& p : ps) {
    Eigen::VectorXd q = p.q0;
    sm.push_back(s->solve(p, q, o));
    EXPECT_TRUE(q.allFinite());
  }
  EXPECT_EQ(sm[0].status, Status::kMaxIterations);
  EXPECT_EQ(sm[1].status, Status::kNumericalFailure);
  // Killed by SIGABRT: said by the process's status, or by the shell that ran it (128 + 6).
  EXPECT_TRUE(sm[1].message.find("killed by signal 6") != std::string::npos ||
              sm[1].message.find("status 134 (the shell's report of signal 6") != std::string::npos)
      << sm[1].message;
  EXPECT_EQ(sm[2].status, Status::kMaxIterations) << sm[2].message;  // the restarted process
  EXPECT_EQ(sm[3].status, Status::kNumericalFailure);
  EXPECT_NE(sm[4].message.find("no more restarts"), std::string::npos) << sm[4].message;
  EXPECT_LT(sm[4].reported_time_us, 0);
}

TEST(ExternalSolver, AHangIsATimeLimitFailureAndTheRunGoesOn) {
  SKIP_WITHOUT_PYTHON();
  auto s = make(fmt::format("ext:cmd='{}':timeout_ms=300:respawns=2", hostile("hang", 1)));
  const std::vector<Problem> ps = problems(3);
  SolverOptions o;
  std::vector<Status> st;
  for (const Problem& p : ps) {
    Eigen::VectorXd q = p.q0;
    const Summary sm = s->solve(p, q, o);
    st.push_back(sm.status);
    if (sm.status == Status::kTimeLimit) EXPECT_NE(sm.message.find("timeout_ms = 300"), std::string::npos);
  }
  EXPECT_EQ(st, (std::vector<Status>{Status::kMaxIterations, Status::kTimeLimit, Status::kMaxIterations}));
}

TEST(ExternalSolver, MalformedAnswersAreRecordedFailures) {
  SKIP_WITHOUT_PYTHON();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"garbage", "not a JSON object"},
      {"nan_token", "not a JSON object"},
      {"nan_null", "q[0] is not a finite number"},
      {"short", "q has 3 numbers, the model has nq = 4"},
      {"wrong_id", "where 1 was expected"},
      {"status", "status \"solved-it\" is not one of"},
  };
  const std::vector<Problem> ps = problems(3);
  SolverOptions o;
  for (const auto& [mode, why] : cases) {
    auto s = make(extSpec(hostile(mode, 1)));
    Eigen::VectorXd q = ps[0].q0;
    EXPECT_EQ(s->solve(ps[0], q, o).status, Status::kMaxIterations) << mode;
    q = ps[1].q0;
    const Summary bad = s->solve(ps[1], q, o);
    EXPECT_EQ(bad.status, Status::kNumericalFailure) << mode;
    EXPECT_NE(bad.message.find(why), std::string::npos) << mode << ": " << bad.message;
    EXPECT_TRUE(q.allFinite()) << mode;
    // The next problem is answered (by the same process, or a restarted one after a protocol break).
    q = ps[2].q0;
    EXPECT_EQ(s->solve(ps[2], q, o).status, Status::kMaxIterations) << mode;
  }
}

TEST(ExternalSolver, AnOutputFloodIsCutAtTheLineLimit) {
  SKIP_WITHOUT_PYTHON();
  auto s = make(extSpec(hostile("flood"), ":max_line_bytes=65536"));
  const Problem p = problems(1).front();
  Eigen::VectorXd q = p.q0;
  const Summary sm = s->solve(p, q, SolverOptions{});
  EXPECT_EQ(sm.status, Status::kNumericalFailure);
  EXPECT_NE(sm.message.find("output flood"), std::string::npos) << sm.message;
}

TEST(ExternalSolver, ACommandThatCannotStartIsAnErrorNamingTheSpec) {
  SKIP_WITHOUT_PYTHON();
  external::registerExternalSolver(Registry::global());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {extSpec(hostile("exit_at_start")), "exited with status 3"},
      {extSpec("/nonexistent/solver --x"), "exited with status 127"},
      {extSpec(hostile("no_hello")), "not a hello"},
      {extSpec(hostile("old_version")), "protocol version 0"},
      {extSpec(hostile("silent"), ":startup_timeout_ms=300"), "no hello within startup_timeout_ms = 300"},
  };
  for (const auto& [spec, why] : cases) {
    try {
      Registry::global().create(spec);
      ADD_FAILURE() << spec << " started";
    } catch (const SpecError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(spec), std::string::npos) << what;
      EXPECT_NE(what.find(why), std::string::npos) << what;
    }
  }
  EXPECT_THROW(Registry::global().create("ext"), SpecError);                      // no command
  EXPECT_THROW(Registry::global().create("ext:cmd='true':name=x"), SpecError);   // both
}

TEST(ExternalSolver, NoProcessOutlivesTheClient) {
  SKIP_WITHOUT_PYTHON();
  const auto dir = test::processTempDir("external_child");
  const std::string pid_file = (dir / "child.pid").string();
  ::setenv("HOSTILE_CHILD_PID_FILE", pid_file.c_str(), 1);
  ExternalOptions o;
  o.timeout_ms = 2000;
  pid_t pid = -1;
  {
    ExternalClient client("ext-test", hostile("child"), o);
    client.startOrThrow();
    pid = client.pid();
    ASSERT_GT(pid, 0);
    const std::vector<Problem> ps = problems(1);
    const auto answers = client.solve({&ps[0]}, {ps[0].q0}, {SolverOptions{}});
    EXPECT_FALSE(answers[0].ok);
    EXPECT_TRUE(answers[0].timed_out);
    EXPECT_EQ(client.pid(), -1);  // killed after the timeout
  }
  // The solver process is reaped (no zombie of ours) and its own child, in its group, killed.
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  EXPECT_TRUE(notRunning(pid));
  std::ifstream in(pid_file);
  pid_t grandchild = 0;
  ASSERT_TRUE(in >> grandchild) << "the hostile solver wrote no child pid";
  for (int i = 0; i < 200 && !notRunning(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(notRunning(grandchild)) << grandchild;
  ::unsetenv("HOSTILE_CHILD_PID_FILE");
}

TEST(ExternalSolver, BatchesOfSeveralModelsAreAnsweredInOrder) {
  SKIP_WITHOUT_PYTHON();
  ExternalClient client("ext-test", hostile("crash", 1000), ExternalOptions{});
  client.startOrThrow();
  std::vector<Problem> a = problems(3, 1), b = problems(2, 2);
  std::vector<const Problem*> batch = {&a[0], &a[1], &b[0], &b[1], &a[2]};
  std::vector<Eigen::VectorXd> starts;
  for (const Problem* p : batch) starts.push_back(p->q0);
  const auto answers = client.solve(batch, starts, {SolverOptions{}});
  ASSERT_EQ(answers.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_TRUE(answers[i].ok) << answers[i].message;
    EXPECT_TRUE(answers[i].q.isApprox(starts[i])) << i;
  }
  EXPECT_EQ(client.processStarts(), 1);
}

TEST(ExternalSolver, TheNumpyExampleSolvesVerifiedByForwardKinematics) {
  if (!haveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is needed by examples/external/dls_solver.py";
  auto s = make(fmt::format("ext:cmd='{} {}/examples/external/dls_solver.py'", kPython, kSource));
  SolverOptions o;
  int converged = 0;
  const std::vector<Problem> ps = problems(6, 11);
  for (const Problem& p : ps) {
    Eigen::VectorXd q = p.q0;
    const Summary sm = s->solve(p, q, o);
    EXPECT_NE(sm.status, Status::kFalseConvergence) << sm.message;
    if (sm.converged()) {
      ++converged;
      test::expectReached(p, q, o);
      EXPECT_GT(sm.iterations, 0);
      EXPECT_GE(sm.reported_time_us, 0);
    }
  }
  // Reachable position goals on a 4-joint chain, damped least squares from a random start.
  EXPECT_GE(converged, 4) << converged << " of " << ps.size();
}

TEST(ExternalSolver, SolversFileNamesCommands) {
  SKIP_WITHOUT_PYTHON();
  external::registerExternalSolver(Registry::global());
  const auto dir = test::processTempDir("external_file");
  const std::string good = test::writeTempFile(dir.string(), "solvers.json",
                                               nlohmann::json{{"null", hostile("crash", 1000)}}.dump());
  external::setSolversFile(good);
  auto s = Registry::global().create("ext:name=null");
  const Problem p = problems(1).front();
  Eigen::VectorXd q = p.q0;
  EXPECT_EQ(s->solve(p, q, SolverOptions{}).status, Status::kMaxIterations);
  try {
    Registry::global().create("ext:name=other");
    ADD_FAILURE();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("has no entry 'other' (it has: null)"), std::string::npos) << e.what();
  }
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"[1]", "expected a JSON object"}, {R"({"a:b": "x"})", "name 'a:b'"}, {R"({"a": 3})", "entry 'a'"}}) {
    const std::string path = test::writeTempFile(dir.string(), "bad.json", text);
    try {
      external::readSolversFile(path);
      ADD_FAILURE() << text;
    } catch (const SpecError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(ExternalSolver, CliRunRecordsTheSolversOwnTimeAndVerifies) {
  SKIP_WITHOUT_PYTHON();
  const auto dir = test::processTempDir("external_cli");
  const std::string out = (dir / "run").string();
  const std::string file = test::writeTempFile(dir.string(), "solvers.json",
                                               nlohmann::json{{"null", hostile("crash", 1000)}}.dump());
  std::string output;
  const std::string args = fmt::format(
      "run --chain 4 --samples 4 --threads 2 --no-trace --progress none --solvers-file '{}' "
      "--solvers \"dls,ext:name=null,ext:cmd='{}':timeout_ms=300\" --out '{}'",
      file, hostile("hang", 1), out);
  ASSERT_EQ(test::runCli(args, &output), 0) << output;
  const auto rows = test::readCsv(out + "/solves.csv");
  ASSERT_GE(rows.size(), 2u);
  const auto& h = rows[0];
  const size_t c_solver = column(h, "solver"), c_status = column(h, "status"), c_own = column(h, "solver_time_us");
  int dls_rows = 0, null_rows = 0, hang_failures = 0;
  const size_t c_message = column(h, "message");
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row[c_solver] == "dls") {
      ++dls_rows;
      EXPECT_EQ(row[c_own], "");
    }
    if (row[c_solver] == "ext:name=null") {
      ++null_rows;
      EXPECT_EQ(row[c_own], "1.500");
    }
    if (row[c_solver].find("hang") != std::string::npos && row[c_status] == "time-limit") ++hang_failures;
  }
  EXPECT_GE(dls_rows, 4);
  EXPECT_EQ(null_rows, dls_rows);
  EXPECT_GE(hang_failures, 1);  // each of the two worker processes hangs after its first answer
  ASSERT_EQ(test::runCli(fmt::format("verify '{}'", out), &output), 0) << output;
  // batch=3 on one robot (one model): units of 3 problems, each answered in one message and
  // verified on its own (the random chains above have a model per problem: a message each).
  const std::string batched = (dir / "batched").string();
  ASSERT_EQ(test::runCli(fmt::format("run --urdf '{}/scenarios/data/robots/ur5.urdf' --samples 7 --threads 2 "
                                     "--no-trace --progress none --solvers-file '{}' --solvers ext:name=null:batch=3 "
                                     "--out '{}'",
                                     kSource, file, batched),
                         &output),
            0)
      << output;
  const auto brows = test::readCsv(batched + "/solves.csv");
  std::map<std::string, int> batches;
  for (size_t r = 1; r < brows.size(); ++r) {
    EXPECT_EQ(brows[r][c_status], "max-iterations");
    ++batches[brows[r][c_message]];
  }
  EXPECT_EQ(batches, (std::map<std::string, int>{{"batch of 3", 6}, {"batch of 1", 1}}));
  ASSERT_EQ(test::runCli(fmt::format("verify '{}'", batched), &output), 0) << output;
  // A command that cannot start: the run stops with an error naming the spec.
  EXPECT_EQ(test::runCli(fmt::format("run --chain 3 --samples 2 --progress none --solvers \"ext:cmd='/nonexistent/x'\" "
                                     "--out '{}/bad'",
                                     dir.string()),
                         &output),
            2)
      << output;
  EXPECT_NE(output.find("ext:cmd='/nonexistent/x'"), std::string::npos) << output;
  EXPECT_NE(output.find("exited with status 127"), std::string::npos) << output;
}

// A model loaded from a URDF reaches the process with the file's text and path (the model
// message's `urdf` and the model's `source`); a generated chain with neither.
TEST(ExternalSolver, AModelFromAUrdfArrivesWithTheFilesText) {
  SKIP_WITHOUT_PYTHON();
  const auto dir = test::processTempDir("external_urdf");
  const std::string urdf = kSource + "/scenarios/data/robots/ur5.urdf";
  const std::string spec = fmt::format("ext:cmd='{}'", hostile("describe_model"));
  std::string output;
  const auto messages = [&](const std::string& out) {
    const auto rows = test::readCsv(out + "/solves.csv");
    const size_t c_message = std::find(rows.at(0).begin(), rows.at(0).end(), "message") - rows.at(0).begin();
    std::map<std::string, int> out_messages;
    for (size_t r = 1; r < rows.size(); ++r) ++out_messages[rows[r].at(c_message)];
    return out_messages;
  };
  ASSERT_EQ(test::runCli(fmt::format("run --urdf '{}' --samples 3 --threads 1 --no-trace --progress none "
                                     "--solvers \"{}\" --out '{}/ur5'",
                                     urdf, spec, dir.string()),
                         &output),
            0)
      << output;
  const auto size = std::filesystem::file_size(urdf);
  EXPECT_EQ(messages(dir.string() + "/ur5"),
            (std::map<std::string, int>{{fmt::format("urdf {} bytes from ur5.urdf", size), 3}}));
  ASSERT_EQ(test::runCli(fmt::format("run --chain 3 --samples 1 --threads 1 --no-trace --progress none "
                                     "--solvers \"{}\" --out '{}/chain'",
                                     spec, dir.string()),
                         &output),
            0)
      << output;
  // The tracking family's first problem starts on its solution: that answer converges and keeps no message.
  auto chain = messages(dir.string() + "/chain");
  EXPECT_GE(chain["no urdf"], 2);
  for (const auto& [message, count] : chain) EXPECT_TRUE(message == "no urdf" || message.empty()) << message;
}

// SciPy's least_squares (python3-scipy, examples/external/scipy_solver.py) on the shipped UR5: every
// answer verified by the harness's forward kinematics, in the run and again by `ikbench verify`.
TEST(ExternalSolver, TheScipyExampleSolvesAShippedArm) {
  if (!havePython() || std::system("/usr/bin/python3 -c 'import scipy.optimize' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 with scipy is needed by examples/external/scipy_solver.py (python3-scipy)";
  const auto dir = test::processTempDir("external_scipy");
  const std::string out = (dir / "run").string();
  const std::string spec = fmt::format("ext:cmd='{} {}/examples/external/scipy_solver.py'", kPython, kSource);
  std::string output;
  ASSERT_EQ(runSeedsOnUr5(spec, out, "--no-trace", &output), 0) << output;
  const auto rows = test::readCsv(out + "/solves.csv");
  const auto& h = rows.at(0);
  const size_t c_solver = column(h, "solver"), c_conv = column(h, "converged"), c_status = column(h, "status");
  const size_t c_own = column(h, "solver_time_us");
  ASSERT_LT(c_own, h.size());
  int ext_rows = 0, converged = 0, near_converged = 0;
  const size_t c_family = column(h, "family");
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r][c_solver] != spec) continue;
    ++ext_rows;
    EXPECT_NE(rows[r][c_status], "false-convergence");
    EXPECT_NE(rows[r][c_status], "numerical-failure");
    EXPECT_NE(rows[r][c_own], "");
    converged += rows[r][c_conv] == "1";
    if (c_family < h.size() && rows[r][c_family].find("near") != std::string::npos) near_converged += rows[r][c_conv] == "1";
  }
  EXPECT_EQ(ext_rows, 2 + 2 * 10 + 2 + 2);  // nominal, random (10 starts each), near:0.1, near:0.5
  EXPECT_GE(near_converged, 3) << "of 4 starts near a solution";
  EXPECT_GE(converged, 8) << "of " << ext_rows;
  ASSERT_EQ(test::runCli(fmt::format("verify '{}'", out), &output), 0) << output;
}

// closed-chain-ik from npm (scripts/setup.sh installs it into third_party/node) through the Node
// adapter, beside `auto` in one run on the shipped UR5 (the seeds protocol), every answer verified
// by the harness.
TEST(ExternalSolver, ClosedChainIkRunsBesideAutoOnAShippedArm) {
  const std::filesystem::path lib = std::filesystem::path(kSource) / "third_party/node/node_modules/closed-chain-ik";
  if (std::system("node --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "node is not installed";
  if (!std::filesystem::exists(lib / "package.json"))
    GTEST_SKIP() << "closed-chain-ik is not installed in " << lib << ": run scripts/setup.sh main";
  const auto dir = test::processTempDir("external_ccik");
  const std::string out = (dir / "run").string();
  std::string output;
  const std::string spec = fmt::format("ext:cmd='node {}/examples/external/closed_chain_ik_solver.mjs'", kSource);
  // The seeds protocol: its near:D families start close to a solution, where a local method converges.
  ASSERT_EQ(runSeedsOnUr5("auto," + spec, out, "", &output), 0) << output;
  const auto rows = test::readCsv(out + "/solves.csv");
  const auto& h = rows.at(0);
  const size_t c_solver = column(h, "solver"), c_conv = column(h, "converged"), c_own = column(h, "solver_time_us");
  ASSERT_LT(c_own, h.size());
  int ext_rows = 0, ext_converged = 0;
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r][c_solver] != spec) continue;
    ++ext_rows;
    ext_converged += rows[r][c_conv] == "1";
    EXPECT_NE(rows[r][c_own], "");  // the adapter reports the call's time
  }
  EXPECT_EQ(ext_rows, 2 + 2 * 10 + 2 + 2);  // nominal, random (10 starts each), near:0.1, near:0.5
  EXPECT_GE(ext_converged, 1);  // verified below, with every other answer
  ASSERT_EQ(test::runCli(fmt::format("verify '{}'", out), &output), 0) << output;
}

}  // namespace
}  // namespace ikbench
