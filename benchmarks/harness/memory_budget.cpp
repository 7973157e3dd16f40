#include "harness/memory_budget.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "harness/run_config.h"

namespace ikbench::harness {

namespace {
// Bytes per configuration entry held: a problem's start (8) and its line of
// problems.jsonl while it is written (about 24); a solve's q (8) and its q
// text in the solves.csv row (about 24, the shortest round trip of a double
// and a space); a trace row's q text (about 24). Per row, the other columns.
constexpr double kProblemPerQ = 32, kProblemFixed = 1024;
constexpr double kSolvePerQ = 32, kSolveFixed = 512;
constexpr double kTracePerQ = 24;
}  // namespace

double MemoryNeed::bytes() const {
  return problems * kProblemFixed + q_entries * kProblemPerQ + solves * kSolveFixed + solve_q_entries * kSolvePerQ +
         traced_q_entries * kTracePerQ;
}

std::optional<double> usableMemoryBytes() {
  if (const char* cap = std::getenv("IKBENCH_MEMORY_LIMIT_MB"); cap && *cap) {
    char* end = nullptr;
    const double mb = std::strtod(cap, &end);
    if (end == cap || *end != '\0' || !(mb > 0))
      throw HarnessError(fmt::format("IKBENCH_MEMORY_LIMIT_MB='{}': expected a positive number of MiB", cap));
    return mb * 1024 * 1024;
  }
  std::ifstream f("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

namespace {
std::string sizeText(double bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  return bytes >= 1024 * kMiB ? fmt::format("{:.1f} GiB", bytes / (1024 * kMiB)) : fmt::format("{:.0f} MiB", bytes / kMiB);
}
}  // namespace

void checkMemory(const MemoryNeed& need, const std::string& what) {
  const std::optional<double> usable = usableMemoryBytes();
  const double bytes = need.bytes();
  if (!usable || bytes <= *usable) return;
  throw HarnessError(fmt::format(
      "{} would hold about {} in memory ({:.0f} problems with {:.3g} configuration entries, {:.0f} solves with "
      "{:.3g}, traces {:.3g}), more than the {} {}; run fewer --samples or solvers, fewer --trace-problems, or "
      "split it with --shard K/N (each shard holds 1/N of the solves)",
      what, sizeText(bytes), need.problems, need.q_entries, need.solves, need.solve_q_entries, need.traced_q_entries,
      sizeText(*usable),
      std::getenv("IKBENCH_MEMORY_LIMIT_MB") ? "of IKBENCH_MEMORY_LIMIT_MB" : "this machine has available"));
}

bool fitsInMemory(const MemoryNeed& need, const std::string& what, std::string* why) {
  try {
    checkMemory(need, what);
    return true;
  } catch (const HarnessError& e) {
    if (why) *why = e.what();
    return false;
  }
}

}  // namespace ikbench::harness
