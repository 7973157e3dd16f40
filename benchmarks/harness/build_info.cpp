#include "harness/build_info.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

#include "ikbench/solvers/batch.h"

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

nlohmann::json cpuIdentity() {
  nlohmann::json id = nlohmann::json::object();
  std::ifstream f("/proc/cpuinfo");
  std::string flags;
  for (std::string line; std::getline(f, line);) {
    if (trim(line).empty()) break;  // the first processor's block
    const size_t c = line.find(':');
    if (c == std::string::npos) continue;
    const std::string key = trim(line.substr(0, c)), value = trim(line.substr(c + 1));
    if (key == "vendor_id") {
      id["vendor"] = value;
    } else if (key == "cpu family" || key == "model" || key == "stepping") {
      int v = 0;
      if (std::sscanf(value.c_str(), "%d", &v) == 1) id[key == "cpu family" ? "family" : key] = v;
    } else if (key == "flags") {
      flags = " " + value + " ";
    }
  }
  nlohmann::json isa = nlohmann::json::array();
  for (const char* x : {"avx2", "fma", "avx512f"})
    if (flags.find(fmt::format(" {} ", x)) != std::string::npos) isa.push_back(x);
  if (!flags.empty()) id["isa"] = isa;
  return id;
}

nlohmann::json machineJson() {
  nlohmann::json m = {{"cpu", cpuModel()}, {"hardware_threads", std::thread::hardware_concurrency()}};
  const nlohmann::json id = cpuIdentity();
  for (const auto& [key, value] : id.items()) m[key] = value;
  // The unified L2 and L3 caches of CPU 0 as the kernel lists them (sysfs:
  // the slice a core shares, where the C library's sysconf may report a
  // whole package's L3).
  for (int index = 0; index < 16; ++index) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) continue;
    int kib = 0;
    char unit = 0;
    if (type != "Unified" || (level != 2 && level != 3) || std::sscanf(size.c_str(), "%d%c", &kib, &unit) != 2 ||
        unit != 'K')
      continue;
    m[fmt::format("l{}_cache_kib", level)] = kib;
  }
  m["batch_kernel"] = batchIsaName();
  return m;
}

}  // namespace ikbench::harness
