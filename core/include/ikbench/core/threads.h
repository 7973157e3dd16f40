// The one way ikbench runs work on several threads: the run engine, the
// throughput measurement, solveBatch and the Python bindings' batch all call
// runOnThreads. It owns what each of them needs of a pool and would otherwise
// write again: every started thread joined before anything is thrown, the
// first exception of any worker rethrown on the calling thread (never
// std::terminate), threads that cannot start (a process or address-space
// limit) either an error or a smaller pool, and the calling thread's own job
// while the workers run (polling for progress or an interrupt, or a share of
// the work).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <system_error>

namespace ikbench {

// Fewer threads could start than were asked for (ThreadsOptions::allow_fewer
// false); what() names both counts.
class ThreadStartError : public std::system_error {
 public:
  ThreadStartError(std::error_code code, const std::string& what) : std::system_error(code, what) {}
};

struct ThreadsOptions {
  // Names the pool in messages ("solveBatch", "throughput").
  std::string who = "threads";
  // When a thread cannot start: false = the ones that did are stopped before
  // any work and ThreadStartError is thrown; true = half of those that
  // started are retired before any work (their stacks freed, so that the rest
  // have memory to work in) and the others run, `note` told why. Workers then
  // see indices [0, runOnThreads' result) only.
  bool allow_fewer = false;
  std::function<void(const std::string&)> note;
  // Runs on the calling thread once the workers run (before any poll).
  std::function<void()> meanwhile;
  // Runs on the calling thread every poll_period while the workers run, and
  // once after they end.
  std::function<void()> poll;
  std::chrono::milliseconds poll_period{200};
  // Told once, on the first exception of a worker, `meanwhile` or `poll`, so
  // that the others stop early (e.g. move their shared cursor to the end).
  std::function<void()> on_failure;
};

// Runs work(t) for t in [0, n) (n >= 1), each on its own thread (on the
// calling thread, after `meanwhile`, when n == 1 and there is no `poll`: the
// calling thread keeps polling otherwise); returns the number
// of workers that ran (n, or fewer with allow_fewer). The first exception of
// a worker, `meanwhile` or `poll` is rethrown once every thread is joined.
int runOnThreads(int n, const std::function<void(int)>& work, const ThreadsOptions& options = {});

}  // namespace ikbench
