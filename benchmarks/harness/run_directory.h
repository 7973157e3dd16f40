// A results directory owned by one run.
//
// * A run owns its directory: it holds an exclusive lock (flock on
//   `.ikbench.lock`, released by the kernel when the process ends, even on
//   SIGKILL); a second run into the same directory fails at once naming the
//   first one's pid.
// * A fresh run needs an empty (or absent) directory; --force removes the
//   results of an earlier run first (run.json first, so that a run killed
//   while replacing them leaves a visibly incomplete directory), --resume
//   keeps them to complete an interrupted run.
// * Every file is written to a temporary name in the directory, synced and
//   renamed into place; finished solves are appended to solves.partial.csv as
//   they finish.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "harness/run_config.h"

namespace ikbench::harness {

class RunDirectory {
 public:
  RunDirectory(const std::string& dir, OutputMode mode);
  ~RunDirectory();
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::string& path() const { return dir_; }
  std::string file(const std::string& name) const;
  bool exists(const std::string& name) const;

  // Writes a file atomically (temp + fsync + rename); HarnessError naming the
  // file and the reason (a full disk, permissions).
  void writeAtomically(const std::string& name, const std::string& content) const;
  // The same for content in parts, written in order (a large file is never
  // gathered into one string first).
  void writeAtomically(const std::string& name, const std::vector<std::string_view>& parts) const;
  void remove(const std::string& name) const;
  // run.json as JSON (bytes that are not UTF-8, e.g. from a path, are replaced).
  void writeJson(const std::string& name, const nlohmann::json& j) const;
  nlohmann::json readJson(const std::string& name) const;

  // solves.partial.csv: opened for appending (created with `header` if new).
  void openPartial(const std::string& header);
  void appendPartial(const std::string& lines);  // written and flushed
  void closePartial();
  // The data lines of solves.partial.csv (empty if absent); the header is
  // checked against `header`.
  std::vector<std::string> readPartial(const std::string& header) const;

  static constexpr const char* kPartialFile = "solves.partial.csv";
  static constexpr const char* kLockFile = ".ikbench.lock";
  // The files a run writes, removed by --force (run.json first).
  static const std::vector<std::string>& runFiles();

 private:
  // Checks or clears the directory for `mode` (after the lock is held).
  void prepare(OutputMode mode);
  std::string dir_;
  int lock_fd_ = -1;
  std::FILE* partial_ = nullptr;
};

// Writes a file the user named (an --out path) by the rule every command
// follows (docs/results-format.md, "Outputs"): a symbolic link is followed to
// its final target, which must be absent or a regular file (a device, FIFO,
// socket or directory is refused and left untouched); the target is replaced
// atomically (a temporary file beside it, fsync, rename), so the link stays a
// link. HarnessError naming the path and the reason; nothing is left behind.
void writeOutputFile(const std::string& path, const std::string& content);
// Checks an --out path by the same rule before a command spends time on its
// work: HarnessError if it could not be written.
void checkOutputFile(const std::string& path);

// Keeps a results-directory name inside its parent: characters other than
// letters, digits, '.', '-' and '_' become '_', and names made only of dots
// are refused (HarnessError).
std::string safeDirectoryName(const std::string& name);

}  // namespace ikbench::harness
