// core's runOnThreads: the one pool of the run engine, the throughput
// measurement, solveBatch and the bindings' batch. What they rely on: every
// worker index runs once, the calling thread does its own job meanwhile, and
// the first exception comes back on the calling thread after every thread is
// joined, the others told to stop. (A thread that cannot start is covered by
// HarnessCli.ThreadsThatCannotStartLeaveTheRunToTheOthers, under an
// address-space limit.)
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ikbench/core/threads.h"

namespace ikbench {
namespace {

TEST(RunOnThreads, EveryWorkerRunsOnceOnItsOwnThread) {
  for (int n : {1, 2, 7}) {
    std::mutex m;
    std::vector<int> ran(static_cast<size_t>(n), 0);
    std::set<std::thread::id> ids;
    EXPECT_EQ(runOnThreads(n, [&](int t) {
      std::lock_guard lock(m);
      ++ran[static_cast<size_t>(t)];
      ids.insert(std::this_thread::get_id());
    }), n);
    EXPECT_EQ(ran, std::vector<int>(static_cast<size_t>(n), 1));
    EXPECT_EQ(ids.size(), static_cast<size_t>(n));
    // One worker without a poll runs on the calling thread.
    EXPECT_EQ(ids.count(std::this_thread::get_id()), n == 1 ? 1u : 0u);
  }
  EXPECT_THROW(runOnThreads(0, [](int) {}), std::invalid_argument);
}

TEST(RunOnThreads, TheCallingThreadPollsWhileTheWorkersRunAndOnceAfter) {
  const auto caller = std::this_thread::get_id();
  std::atomic<bool> release{false};
  std::atomic<int> polls{0}, polls_while_running{0};
  std::atomic<int> done{0};
  ThreadsOptions o;
  o.poll_period = std::chrono::milliseconds(1);
  o.meanwhile = [&] { EXPECT_EQ(std::this_thread::get_id(), caller); };
  o.poll = [&] {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    ++polls;
    if (done.load() < 2) ++polls_while_running;
    if (polls.load() >= 3) release = true;  // the workers wait for the third poll
  };
  // With a poll, one worker too runs on a thread of its own.
  for (int n : {1, 2}) {
    polls = 0;
    polls_while_running = 0;
    release = false;
    done = 2 - n;
    runOnThreads(n, [&](int) {
      EXPECT_NE(std::this_thread::get_id(), caller);
      while (!release.load()) std::this_thread::yield();
      ++done;
    }, o);
    EXPECT_GE(polls_while_running.load(), 3) << n;
    EXPECT_GE(polls.load(), polls_while_running.load() + 1) << n;  // at least the one after the join
  }
}

TEST(RunOnThreads, TheFirstExceptionIsRethrownAfterTheOthersStop) {
  std::atomic<long> next{0}, solved{0};
  constexpr long kUnits = 1'000'000;
  std::atomic<int> told{0};
  ThreadsOptions o;
  o.on_failure = [&] {
    ++told;
    next = kUnits;
  };
  auto work = [&](int) {
    for (long i; (i = next.fetch_add(1)) < kUnits;) {
      if (i == 1000) throw std::runtime_error("unit 1000 failed");
      ++solved;
    }
  };
  try {
    runOnThreads(4, work, o);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "unit 1000 failed");
  }
  EXPECT_EQ(told.load(), 1);
  EXPECT_LT(solved.load(), kUnits - 1);  // the others stopped at the moved cursor
  // An exception of the calling thread's poll stops the workers the same way.
  next = 0;
  told = 0;
  o.poll = [] { throw std::runtime_error("disk full"); };
  auto endless = [&](int) {
    while (next.load() < kUnits) std::this_thread::yield();
  };
  EXPECT_THROW(runOnThreads(2, endless, o), std::runtime_error);
  EXPECT_EQ(told.load(), 1);
}

}  // namespace
}  // namespace ikbench
