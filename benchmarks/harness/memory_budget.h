// The memory a run will hold, estimated before it starts, so that a run that
// cannot fit is refused at once with the estimate instead of ending in
// std::bad_alloc after minutes (or hours) of solving.
//
// A run keeps, until its files are written: every problem (start and goals),
// every finished solve's row of solves.csv (its q as text) and the
// configuration it returned, and the traced solves' rows of traces.csv
// (docs/harness.md, "Memory").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ikbench::harness {

struct MemoryNeed {
  double problems = 0;  // problems held (all families)
  double q_entries = 0;  // sum over the problems of their nq
  double solves = 0;     // solves this process runs (its shard's)
  double solve_q_entries = 0;  // sum over those solves of nq
  double traced_q_entries = 0;  // sum over the traced solves of nq x trace records
  double bytes() const;
};

// The memory this process may use: IKBENCH_MEMORY_LIMIT_MB when set (a cap
// the user chooses), else MemAvailable of /proc/meminfo; nullopt when
// neither is known.
std::optional<double> usableMemoryBytes();

// HarnessError naming the estimate, what it is made of and what to change,
// when `need` does not fit in usableMemoryBytes(); `what` names the run.
void checkMemory(const MemoryNeed& need, const std::string& what);
// The same check without throwing: false, with checkMemory's message in
// *why, when `need` does not fit.
bool fitsInMemory(const MemoryNeed& need, const std::string& what, std::string* why);

}  // namespace ikbench::harness
