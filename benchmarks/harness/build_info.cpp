#include "harness/build_info.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

namespace ikbench::harness {
namespace {

std::string runCommand(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    if (pclose(p) != 0) return "";
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  return s;
}

}  // namespace

std::string gitRevision() {
  const std::string src = IKBENCH_SOURCE_DIR;
  if (src.empty()) return "unknown";
  const std::string rev = runCommand(fmt::format("git -C '{}' rev-parse HEAD 2>/dev/null", src));
  if (rev.empty()) return "unknown";
  // Local changes make the revision alone insufficient to reproduce a run.
  const std::string dirty =
      runCommand(fmt::format("git -C '{}' status --porcelain --untracked-files=no 2>/dev/null", src));
  return dirty.empty() ? rev : rev + "-dirty";
}

std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t c = line.find(':');
      if (c != std::string::npos) return trim(line.substr(c + 1));
    }
  }
  return "unknown";
}

std::string isoTimeUtc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json buildJson() {
  return {{"compiler", std::string(IKBENCH_CXX_COMPILER_ID) + " " + IKBENCH_CXX_COMPILER_VERSION},
          {"build_type", IKBENCH_BUILD_TYPE},
          {"flags", trim(IKBENCH_CXX_FLAGS_EFFECTIVE)}};
}

nlohmann::json machineJson() {
  return {{"cpu", cpuModel()}, {"hardware_threads", std::thread::hardware_concurrency()}};
}

}  // namespace ikbench::harness
