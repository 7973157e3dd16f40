// External solvers: a solver in any language, run as a process that speaks
// the ikbench external-solver protocol (docs/external-solvers.md): JSON
// lines on its stdin and stdout. The harness sends a hello with the model,
// then problems (one or a batch per message); the process answers each with
// a configuration and optionally its status, iterations and own time.
//
// `ext` is a backend like any other: `ext:cmd='python3 my_solver.py'` or
// `ext:name=NAME` (a command from a solvers file). Solver::solve checks its
// answer by forward kinematics, limits and scene as for every backend; the
// wall time of the solve (the process's work and the pipes) is time_us, the
// time the process reports is Summary::reported_time_us.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "ikbench/core/solver_options.h"
#include "ikbench/external/child_process.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/summary.h"

namespace ikbench::external {

inline constexpr const char* kProtocolName = "ikbench-external";
inline constexpr int kProtocolVersion = 1;

// The `ext` backend's keys.
struct ExternalOptions {
  std::string cmd;   // the command line, run by /bin/sh -c
  std::string name;  // or a name from the solvers file (setSolversFile)
  // Longest wait for the answers to one message [ms] (per problem: a batch
  // of n problems waits n times as long); past it the process is killed and
  // restarted, and the problem is a time-limit failure.
  int timeout_ms = 10'000;
  // Longest wait for the process's hello after it starts [ms].
  int startup_timeout_ms = 20'000;
  // How often a process that crashed, hung or broke the protocol is started
  // again; past that, every further problem fails without a process.
  int respawns = 5;
  // Longest line the process may write [bytes]; a longer one is a flood.
  int max_line_bytes = 16 << 20;
  // Problems per `solve` message in `ikbench run` (harness/batching_solver.h);
  // 1: one round trip per problem.
  int batch = 1;
};
const OptionsBinding<ExternalOptions>& externalBinding();

// One answer of the process, checked for form (not yet by FK).
struct ExternalAnswer {
  bool ok = false;          // q holds nq finite numbers
  Eigen::VectorXd q;
  Status status = Status::kConverged;  // the process's claim (no status: converged)
  int iterations = 0;
  double time_us = -1.0;    // the process's own time; negative: not reported
  std::string message;      // why not ok, or the process's message
  bool timed_out = false;   // no answer within the timeout
};

// A protocol session with one process, restarted within its limits.
class ExternalClient {
 public:
  // spec: the spec text (for messages); command: the command line.
  ExternalClient(std::string spec, std::string command, const ExternalOptions& options);
  ~ExternalClient();

  // Starts the process and exchanges hellos; throws SpecError naming the spec
  // and what went wrong when it does not start or answers no valid hello.
  void startOrThrow();
  // Answers for the problems, in order, each starting from starts[i] under
  // options[i] (or options[0] for all when there is one); never throws: a
  // problem the process does not answer validly gets ok = false.
  std::vector<ExternalAnswer> solve(const std::vector<const Problem*>& problems,
                                    const std::vector<Eigen::VectorXd>& starts,
                                    const std::vector<SolverOptions>& options);

  int processStarts() const { return starts_; }
  // The running process's id (tests), or -1.
  pid_t pid() const { return child_ ? child_->pid() : -1; }

 private:
  bool ensureProcess(const Model* first_model, std::string* why);
  bool startProcess(std::string* why);
  void kill(std::chrono::milliseconds grace);
  // The process's end, for messages ("exited with status 1").
  std::string endText();

  std::string spec_, command_;
  ExternalOptions options_;
  std::unique_ptr<ChildProcess> child_;
  int starts_ = 0;
  long next_id_ = 0;
  std::shared_ptr<const Model> sent_model_;  // the model the process holds
  int model_counter_ = 0;
  std::string model_id_;
};

// The command of each name of a solvers file: a JSON object {"NAME":
// "command line", ...}. Throws SpecError naming the file and entry.
std::map<std::string, std::string> readSolversFile(const std::string& path);
// The solvers file whose names `ext:name=NAME` resolves (process-wide).
void setSolversFile(const std::string& path);

// The URDF file a model was built from (process-wide, keyed by the model's
// address): the model message then carries the file's path (`source`, as in
// models.json) and its text (`urdf`), for a solver that parses URDF itself.
// Reads the file now; throws SpecError naming it when it cannot be read.
// Models without a source get neither field.
void setModelSource(const Model* model, const std::string& urdf_path);
// The file and text set for `model`, or null.
std::shared_ptr<const std::pair<std::string, std::string>> modelSource(const Model* model);
void clearModelSources();

// Registers the `ext` backend (once; later calls do nothing).
void registerExternalSolver(Registry& registry);

}  // namespace ikbench::external
