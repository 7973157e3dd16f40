// Helpers for tests that read and doctor a results directory: its files by
// plain name (compressed or not), CSV rows, and a manifest rewritten after a
// deliberate change so that the change reaches the checks behind it.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness/gzip_stream.h"
#include "harness/results_format.h"
#include "harness/results_reader.h"

namespace ikbench::test {

// A file of a run by its plain name: dir/NAME, or its compressed dir/NAME.gz
// (what a run writes) decompressed.
inline std::string readFile(const std::string& path) {
  if (!std::filesystem::exists(path) && std::filesystem::exists(path + ".gz")) return harness::readRunFile(path + ".gz", SIZE_MAX);
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline std::vector<std::vector<std::string>> readCsv(const std::string& path) {
  EXPECT_TRUE(std::filesystem::exists(path) || std::filesystem::exists(path + ".gz")) << path;
  std::istringstream f(readFile(path));
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

// Rewrites the manifest of `dir` for its files as they are now (plain or
// compressed), so that a damaged file reaches the checks behind the manifest's.
inline void remanifest(const std::string& dir) {
  nlohmann::json run = nlohmann::json::parse(readFile(dir + "/run.json"));
  run["files"] = nlohmann::json::object();
  for (const std::string& name : harness::kManifestFiles) {
    const std::string path = harness::runFilePath(dir, name);
    run["files"][std::filesystem::path(path).filename().string()] = harness::manifestEntry(path);
  }
  std::ofstream(dir + "/run.json") << run.dump(1);
}

// Turns a run's compressed files into plain ones, as older versions of
// ikbench (and gunzip) leave them, manifest included.
inline void decompressRun(const std::string& dir) {
  for (const std::string& name : harness::kManifestFiles) {
    const std::string gz = dir + "/" + name + ".gz";
    if (!std::filesystem::exists(gz)) continue;
    std::ofstream(dir + "/" + name, std::ios::binary) << harness::readRunFile(gz, SIZE_MAX);
    std::filesystem::remove(gz);
  }
  remanifest(dir);
}

#ifdef IKBENCH_CLI
// Runs the built `ikbench` binary with `args` (shell words) under a hang
// guard of 10 minutes; returns its exit status and its output (stdout and
// stderr) in `output`.
inline int runCli(const std::string& args, std::string* output) {
  const std::string cmd = std::string("timeout 600 '") + IKBENCH_CLI + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[512];
  output->clear();
  while (fgets(buf, sizeof buf, p)) *output += buf;
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
#endif

}  // namespace ikbench::test
