// Proves that the Jacobian backends allocate nothing inside their iteration
// loops: a solve capped at 5 iterations and one capped at 50 iterations of
// the same problem must make exactly the same number of heap allocations.
// The same for the batch path (solveBatch) over a whole batch.
//
// Counting: this executable replaces the global operator new / new[] (every
// variant) and, on glibc without sanitizers, also interposes malloc / calloc
// / realloc, because Eigen allocates its dynamic matrices with std::malloc,
// not with operator new. Under AddressSanitizer (which owns malloc) only
// operator new is counted.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"

#if defined(__SANITIZE_ADDRESS__)
#define IKBENCH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IKBENCH_SANITIZED 1
#endif
#endif
#if !defined(IKBENCH_SANITIZED) && defined(__GLIBC__)
#define IKBENCH_COUNT_MALLOC 1
#endif

namespace {
std::atomic<long> g_allocations{0};
std::atomic<bool> g_counting{false};
inline void countOne() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

#ifdef IKBENCH_COUNT_MALLOC
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* malloc(std::size_t n) {
  countOne();
  return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t size) {
  countOne();
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t n) {
  countOne();
  return __libc_realloc(p, n);
}
}
#endif

namespace {
void* allocate(std::size_t n) {
  countOne();
  if (n == 0) n = 1;
  // Straight to glibc, so a malloc interposed above does not count twice.
#ifdef IKBENCH_COUNT_MALLOC
  void* p = __libc_malloc(n);
#else
  void* p = std::malloc(n);
#endif
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* allocateAligned(std::size_t n, std::align_val_t al) {
  countOne();
  const std::size_t a = static_cast<std::size_t>(al);
  void* p = std::aligned_alloc(a, (n + a - 1) / a * a);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t a) { return allocateAligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocateAligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace ikbench {
namespace {

struct Counted {
  long allocations;
  Summary summary;
};

Counted countedSolve(Solver& solver, const Problem& p, const SolverOptions& o) {
  Eigen::VectorXd q = p.q0;
  g_allocations = 0;
  g_counting = true;
  Summary s = solver.solve(p, q, o);
  g_counting = false;
  return {g_allocations.load(), std::move(s)};
}

TEST(Allocation, CounterSeesEigenAndNewAllocations) {
  // The counter itself must work, or the tests below prove nothing.
  g_allocations = 0;
  g_counting = true;
  auto* v = new std::vector<int>(100);
  Eigen::VectorXd x(1000);
  g_counting = false;
  delete v;
  x.setZero();
#ifdef IKBENCH_COUNT_MALLOC
  EXPECT_GE(g_allocations.load(), 3);  // the vector object, its buffer, Eigen's buffer
#else
  EXPECT_GE(g_allocations.load(), 2);
#endif
}

// Warms the solver up on p (first-use allocations: the context's workspace,
// the backend's buffers), then requires a 5-iteration and a 50-iteration
// solve of p to allocate equally. o must make both solves run to their caps.
void expectNoAllocationPerIteration(Solver& solver, const Problem& p, SolverOptions o, const std::string& who) {
  SolverOptions warm = o;
  warm.max_iterations = 60;
  Eigen::VectorXd q = p.q0;
  solver.solve(p, q, warm);
  o.max_iterations = 5;
  const Counted few = countedSolve(solver, p, o);
  o.max_iterations = 50;
  const Counted many = countedSolve(solver, p, o);
  ASSERT_EQ(few.summary.status, Status::kMaxIterations) << who << " " << few.summary.message;
  ASSERT_EQ(many.summary.status, Status::kMaxIterations) << who << " " << many.summary.message;
  EXPECT_EQ(few.summary.iterations, 5) << who;
  EXPECT_EQ(many.summary.iterations, 50) << who;
  EXPECT_EQ(few.allocations, many.allocations)
      << who << ": 45 more iterations made " << (many.allocations - few.allocations) << " more heap allocations";
}

class NoAllocationInLoop : public ::testing::TestWithParam<std::string> {};

TEST_P(NoAllocationInLoop, FiveAndFiftyIterationsAllocateTheSame) {
  // A reachable pose goal (and, for the multi-goal case, a tree-like
  // problem with two goals) with an unattainable tolerance and stall
  // detection off, so both solves run exactly to their iteration caps and
  // end with the same status.
  ChainSpec cs;
  cs.joints = 7;
  cs.limit = 2.5;
  const auto model = randomChain(cs, 11);
  GoalSetSpec gs;
  gs.count = 2;
  gs.kind = GoalKind::kPose;
  gs.start = StartPolicy::kRandom;
  std::vector<Problem> problems = reachableGoals(model, gs, 5, "alloc");
  // Second problem: add a position goal on an inner body (two goals, 9 rows).
  Goal extra;
  extra.body = 3;
  extra.kind = GoalKind::kPosition;
  extra.target_position = Eigen::Vector3d(0.1, 0.1, 0.3);
  problems[1].goals.push_back(extra);

  SolverOptions o;
  o.position_tolerance = 1e-300;
  o.orientation_tolerance = 1e-300;
  o.stall_iterations = 0;
  for (const std::string& limits : {"clamp", "freeze"}) {
    const std::string spec = GetParam() + ":limits=" + limits;
    auto solver = Registry::global().create(spec);
    for (const Problem& p : problems) expectNoAllocationPerIteration(*solver, p, o, spec + " on " + p.name);
  }
}

// The geometric backends on a ball chain (FABRIK's domain), with a position
// goal and with a pose goal (FABRIK's orientation points): whatever they
// allocate per solve (FABRIK rebuilds its node plan), nothing inside the
// iteration loop allocates.
TEST(NoAllocationInLoop, GeometricBackendsOnABallChain) {
  ChainSpec cs;
  cs.joints = 6;
  cs.revolute = 0.0;
  cs.ball = 1.0;
  const auto model = randomChain(cs, 12);
  SolverOptions o;
  o.position_tolerance = 1e-300;
  o.orientation_tolerance = 1e-300;
  o.stall_iterations = 0;
  for (const GoalKind kind : {GoalKind::kPosition, GoalKind::kPose}) {
    GoalSetSpec gs;
    gs.count = 1;
    gs.kind = kind;
    gs.start = StartPolicy::kRandom;
    const Problem p = reachableGoals(model, gs, 6, "alloc")[0];
    for (const char* spec : {"ccd", "fabrik"}) {
      auto solver = Registry::global().create(spec);
      expectNoAllocationPerIteration(*solver, p, o, std::string(spec) + " (" + std::string(toString(kind)) + " goal)");
    }
  }
}

// The batch path: a batch whose problems run 5 iterations per attempt and
// one whose problems run 50 (with restarts, so lanes restart and refill)
// allocate equally: nothing inside its iteration loop allocates, restarts
// included. One thread (starting threads allocates).
TEST(NoAllocationInLoop, BatchPath) {
  ChainSpec cs;
  cs.joints = 7;
  cs.limit = 2.5;
  GoalSetSpec gs;
  gs.count = 24;
  gs.kind = GoalKind::kPose;
  const std::vector<Problem> problems = reachableGoals(randomChain(cs, 21), gs, 22, "alloc");
  for (const std::string spec : {"dls-adaptive:mode=error:limits=freeze:restarts=3", "dls:restarts=2"}) {
    BatchOptions bo;
    bo.lanes = 8;
    bo.solve.position_tolerance = 1e-300;
    bo.solve.orientation_tolerance = 1e-300;
    bo.solve.stall_iterations = 0;
    auto counted = [&](int iterations, BatchStats* stats) {
      bo.solve.max_iterations = iterations;
      g_allocations = 0;
      g_counting = true;
      std::vector<BatchResult> r = solveBatch(problems, spec, bo, stats);
      g_counting = false;
      for (const BatchResult& x : r) EXPECT_EQ(x.summary.status, Status::kMaxIterations) << spec;
      return g_allocations.load();
    };
    BatchStats few_stats, many_stats;
    counted(60, nullptr);  // warm-up
    const long few = counted(5, &few_stats);
    const long many = counted(50, &many_stats);
    EXPECT_EQ(few_stats.batched, static_cast<long>(problems.size())) << spec;
    EXPECT_GT(many_stats.kernel_steps, 5 * few_stats.kernel_steps) << spec;
    EXPECT_EQ(few, many) << spec << ": 45 more iterations per attempt made " << (many - few)
                         << " more heap allocations";
  }
}

INSTANTIATE_TEST_SUITE_P(Specs, NoAllocationInLoop,
                         ::testing::Values("jt", "gd-momentum", "pinv", "gn", "dls", "dls-adaptive",
                                           "dls-marquardt", "lm:gtol=0", "sdls", "dls:null_gain=0.1",
                                           "pinv:null_gain=0.1", "dls-adaptive:mode=sv"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace ikbench
