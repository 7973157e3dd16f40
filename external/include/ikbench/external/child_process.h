// A child process that speaks over pipes: `/bin/sh -c COMMAND` started with
// posix_spawn in its own process group, its stdin and stdout connected to
// non-blocking pipes (stderr is the harness's own, so that a solver's
// diagnostics reach the user), every read and write bounded by a deadline
// (poll(2)). Destroying it kills the whole process group and reaps the child,
// so no process or zombie outlives it.
//
// Writing to a child that has exited gives kClosed, never SIGPIPE: the signal
// is blocked in the writing thread for the write and a pending one consumed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace ikbench::external {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  enum class Io {
    kOk,
    kTimeout,  // the deadline passed
    kClosed,   // the child closed its end (exited, crashed, closed stdout/stdin)
    kTooLong,  // a line longer than the limit (an output flood)
    kError,    // a system error; errorText() says which
  };

  // Starts `/bin/sh -c command`. Null with *why set when the process cannot
  // be created (pipes, posix_spawn); a command the shell cannot find starts
  // and exits with status 127, which the first read reports.
  static std::unique_ptr<ChildProcess> start(const std::string& command, std::string* why);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Writes all of data before the deadline.
  Io write(std::string_view data, Clock::time_point deadline);
  // Reads one line (without its '\n') before the deadline; a line longer than
  // max_bytes gives kTooLong. Bytes after the line stay buffered.
  Io readLine(std::string* line, size_t max_bytes, Clock::time_point deadline);

  // Ends the child: closes its stdin, waits up to `grace` for it to exit,
  // then kills its process group (SIGKILL) and reaps it. Idempotent.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(0));
  // How the child ended ("exited with status 127", "killed by signal 11
  // (Segmentation fault)"), or "still running"; reaps it if it has exited.
  std::string exitText();

  pid_t pid() const { return pid_; }
  const std::string& errorText() const { return error_; }

 private:
  ChildProcess() = default;
  bool reap(bool wait);  // waitpid; true once reaped

  pid_t pid_ = -1;
  int in_ = -1;   // the child's stdin (we write)
  int out_ = -1;  // the child's stdout (we read)
  bool reaped_ = false;
  int wait_status_ = 0;
  std::string buffer_;  // read but not yet returned
  std::string error_;
};

}  // namespace ikbench::external
