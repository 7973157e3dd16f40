#include "ikbench/core/threads.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ikbench {

int runOnThreads(int n, const std::function<void(int)>& work, const ThreadsOptions& options) {
  if (n < 1) throw std::invalid_argument(fmt::format("{}: {} threads asked for (expected at least 1)", options.who, n));
  std::mutex m;
  std::condition_variable cv;
  std::exception_ptr failure;
  auto fail = [&](std::exception_ptr e) {
    bool first = false;
    {
      std::lock_guard lock(m);
      first = !failure;
      if (first) failure = e;
    }
    if (first && options.on_failure) options.on_failure();
  };
  auto guarded = [&](const std::function<void()>& f) {
    if (!f) return;
    try {
      f();
    } catch (...) {
      fail(std::current_exception());
    }
  };
  if (n == 1 && !options.poll) {
    guarded(options.meanwhile);
    try {
      work(0);
    } catch (...) {
      fail(std::current_exception());
    }
    if (failure) std::rethrow_exception(failure);
    return 1;
  }

  // Workers wait until the pool is settled (every thread started, or the
  // start failed and `allowed` says which run).
  bool go = false;
  int allowed = n;
  int finished = 0;
  auto worker = [&](int index) {
    {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return go; });
    }
    if (index < allowed) {
      try {
        work(index);
      } catch (...) {
        fail(std::current_exception());
      }
    }
    {
      std::lock_guard lock(m);
      ++finished;
    }
    cv.notify_all();
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(n));
  std::optional<ThreadStartError> start_error;
  try {
    for (int i = 0; i < n; ++i) pool.emplace_back(worker, i);
  } catch (const std::system_error& e) {
    const int started = static_cast<int>(pool.size());
    if (options.allow_fewer && started > 0) {
      const int keep = std::max(1, started / 2);
      if (options.note)
        options.note(fmt::format("note: only {} of {} worker threads could start ({}); running on {}", started, n,
                                 e.what(), keep));
      std::lock_guard lock(m);
      allowed = keep;
    } else {
      start_error.emplace(e.code(), fmt::format("{}: only {} of {} threads could start", options.who, started, n));
      std::lock_guard lock(m);
      allowed = 0;
    }
  }
  const int started = static_cast<int>(pool.size());
  {
    std::lock_guard lock(m);
    go = true;
  }
  cv.notify_all();
  // The retired threads end at once; joining them releases their stacks
  // before the others allocate.
  for (int i = allowed; i < started; ++i) pool[static_cast<size_t>(i)].join();
  if (!start_error) {
    guarded(options.meanwhile);
    if (options.poll) {
      std::unique_lock lock(m);
      while (!cv.wait_for(lock, options.poll_period, [&] { return finished == started; })) {
        lock.unlock();
        guarded(options.poll);
        lock.lock();
      }
    }
  }
  for (auto& t : pool)
    if (t.joinable()) t.join();
  if (start_error) throw *start_error;
  guarded(options.poll);
  if (failure) std::rethrow_exception(failure);
  return std::min(started, allowed);
}

}  // namespace ikbench
