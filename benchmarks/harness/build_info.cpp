#include "harness/build_info.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
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

// /proc/cpuinfo as key -> value, the first occurrence of each key (on x86,
// the first processor's).
std::map<std::string, std::string> cpuInfo() {
  std::map<std::string, std::string> info;
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    const size_t c = line.find(':');
    if (c != std::string::npos) info.emplace(trim(line.substr(0, c)), trim(line.substr(c + 1)));
  }
  return info;
}

std::string modelName(const std::map<std::string, std::string>& info) {
  const auto it = info.find("model name");
  return it != info.end() ? it->second : "unknown";
}

// "vendor", "family", "model", "stepping" and "isa" (which of avx2, fma,
// avx512f the CPU has) into m: the fields that tell apart two machines whose
// model names read alike (virtual machines often report a generic one, "AMD
// EPYC"); those /proc/cpuinfo lacks are left out.
void addCpuIdentity(const std::map<std::string, std::string>& info, nlohmann::json& m) {
  if (const auto it = info.find("vendor_id"); it != info.end()) m["vendor"] = it->second;
  for (const auto& [key, name] : {std::pair{"cpu family", "family"}, {"model", "model"}, {"stepping", "stepping"}}) {
    int v = 0;
    if (const auto it = info.find(key); it != info.end() && std::sscanf(it->second.c_str(), "%d", &v) == 1) m[name] = v;
  }
  const auto flags_it = info.find("flags");
  if (flags_it == info.end()) return;
  const std::string flags = " " + flags_it->second + " ";
  nlohmann::json isa = nlohmann::json::array();
  for (const char* x : {"avx2", "fma", "avx512f"})
    if (flags.find(fmt::format(" {} ", x)) != std::string::npos) isa.push_back(x);
  m["isa"] = isa;
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

std::string cpuModel() { return modelName(cpuInfo()); }

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
  const std::map<std::string, std::string> info = cpuInfo();
  nlohmann::json m = {{"cpu", modelName(info)}, {"hardware_threads", std::thread::hardware_concurrency()}};
  addCpuIdentity(info, m);
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
