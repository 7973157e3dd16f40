// The batch path (ikbench/solvers/batch.h): results do not depend on threads,
// lanes or the order of the problems, large batches are sorted into chains,
// per-problem seeds are the scalar seeds, a slow problem does not hold the
// others, a budget stops restarts, and unsupported problems are answered by
// the scalar path. The agreement of the batch's answers with the generic
// scalar code and across instruction sets is tests/differential_test.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::chainProblems;

// The restarted recipe without a time budget: results that cannot depend on the machine.
constexpr const char* kAutoNoBudget =
    "dls-adaptive:restarts=200:mode=error:err_gain=0.03:limits=freeze:max_step=1:max_iterations=20";


// The same backend on the generic model code: dls and dls-adaptive run the
// compiled chain kernel inside Solver::solve too, unless kernel=generic.
std::string genericSpec(const std::string& spec) {
  const SolverSpec s = Registry::global().parse(spec);
  return s.name == "dls" || s.name == "dls-adaptive" ? spec + ":kernel=generic" : spec;
}

// The problems through Solver::solve on the generic model code.
test::Solved solveScalar(const std::vector<Problem>& problems, const std::string& spec, const SolverOptions& o) {
  return test::solveEach(problems, genericSpec(spec), o);
}

// Results depend only on the problem: identical at any thread count, lane
// count, and with the problems in another order.
TEST(BatchSolver, DeterministicAcrossThreadsLanesAndOrder) {
  std::vector<Problem> problems = chainProblems(5, 30);
  BatchOptions bo;
  const std::vector<BatchResult> ref = solveBatch(problems, kAutoNoBudget, bo);
  auto same = [&](const std::vector<BatchResult>& r, const std::vector<size_t>& order, const std::string& what) {
    ASSERT_EQ(r.size(), order.size());
    for (size_t k = 0; k < r.size(); ++k) {
      const BatchResult& a = ref[order[k]];
      const BatchResult& b = r[k];
      EXPECT_EQ(a.summary.status, b.summary.status) << what << " problem " << order[k];
      EXPECT_EQ(a.summary.iterations, b.summary.iterations) << what << " problem " << order[k];
      EXPECT_EQ(a.summary.restarts, b.summary.restarts) << what << " problem " << order[k];
      EXPECT_TRUE(a.q == b.q) << what << " problem " << order[k] << ": answers differ (bitwise)";
      EXPECT_EQ(a.summary.position_error, b.summary.position_error) << what;
      EXPECT_EQ(a.summary.orientation_error, b.summary.orientation_error) << what;
    }
  };
  std::vector<size_t> identity(problems.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = i;
  for (int threads : {2, 3}) {
    BatchOptions o = bo;
    o.threads = threads;
    same(solveBatch(problems, kAutoNoBudget, o), identity, "threads=" + std::to_string(threads));
  }
  for (int lanes : {4, 8, 12, 64}) {
    BatchOptions o = bo;
    o.lanes = lanes;
    same(solveBatch(problems, kAutoNoBudget, o), identity, "lanes=" + std::to_string(lanes));
  }
  // Reversed, and interleaved across models: each problem keeps its answer.
  std::vector<size_t> reversed(identity.rbegin(), identity.rend());
  std::vector<Problem> shuffled;
  for (size_t i : reversed) shuffled.push_back(problems[i]);
  same(solveBatch(shuffled, kAutoNoBudget, bo), reversed, "reversed");
  // One problem alone.
  same(solveBatch({problems[7]}, kAutoNoBudget, bo), {7}, "alone");
}

// A batch large enough for its problems to be checked and sorted into chains
// on the batch's threads (16 384 problems or more), with the chains
// interleaved problem by problem in one part and in long runs in another,
// and problems the kernel does not take scattered through both: every
// problem gets the answer it gets alone, and the counts of batched problems
// agree, on one thread and on two.
TEST(BatchSolver, LargeBatchesAreSortedIntoChainsOnTheirThreads) {
  const std::vector<Problem> base = chainProblems(3, 10);
  constexpr const char* kSpec = "dls:restarts=0";
  BatchOptions bo;
  bo.solve.max_iterations = 4;
  const std::vector<BatchResult> alone = solveBatch(base, kSpec, bo);
  std::vector<Problem> big;
  std::vector<int> from;  // base index, -1 invalid, -2 two goals
  for (int i = 0; i < 20000; ++i) {
    // Problems 5000..8999 all of the first chain; elsewhere a new chain at
    // every problem.
    const int b = i >= 5000 && i < 9000 ? (i % 10) : (i * 7 + i / 1000) % 30;
    big.push_back(base[b]);
    from.push_back(b);
    if (i % 997 == 3) {
      big.back().q0[0] = std::nan("");
      from.back() = -1;
    } else if (i % 1499 == 5) {
      big.back().goals.push_back(big.back().goals.front());
      from.back() = -2;
    }
  }
  std::vector<BatchResult> by_threads[2];
  long batched[2] = {0, 0};
  for (int threads : {1, 2}) {
    BatchOptions o = bo;
    o.threads = threads;
    BatchStats stats;
    by_threads[threads - 1] = solveBatch(big, kSpec, o, &stats);
    batched[threads - 1] = stats.batched;
  }
  EXPECT_EQ(batched[0], batched[1]);
  long expect_batched = 0;
  for (size_t i = 0; i < big.size(); ++i) {
    const BatchResult& a = by_threads[0][i];
    const BatchResult& b = by_threads[1][i];
    ASSERT_EQ(a.summary.status, b.summary.status) << i;
    ASSERT_EQ(a.batched, b.batched) << i;
    // (an invalid problem's answer is its start, which holds a NaN)
    if (from[i] != -1) ASSERT_TRUE(a.q == b.q) << i;
    if (from[i] == -1) {
      EXPECT_FALSE(a.batched) << i;
      EXPECT_EQ(a.summary.status, Status::kInvalidInput) << i;
    } else if (from[i] == -2) {
      EXPECT_FALSE(a.batched) << i;
    } else {
      ++expect_batched;
      ASSERT_TRUE(a.batched) << i;
      ASSERT_EQ(a.summary.status, alone[from[i]].summary.status) << i;
      ASSERT_EQ(a.summary.iterations, alone[from[i]].summary.iterations) << i;
      ASSERT_TRUE(a.q == alone[from[i]].q) << i;
    }
  }
  EXPECT_EQ(batched[0], expect_batched);
}

// Per-problem seeds are the scalar path's SolverOptions::seed: a restarted
// solve draws the same restart configurations.
TEST(BatchSolver, SeedsPerProblemMatchTheScalarSeeds) {
  const std::vector<Problem> problems = chainProblems(3, 20);
  const std::string spec = "dls-adaptive:restarts=50:mode=error:err_gain=0.03:limits=freeze:max_step=1:max_iterations=8";
  BatchOptions bo;
  for (size_t i = 0; i < problems.size(); ++i) bo.seeds.push_back(1000 + 7 * i);
  const std::vector<BatchResult> r = solveBatch(problems, spec, bo);
  auto solver = Registry::global().create(genericSpec(spec));
  int same_restarts = 0, restarted = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    SolverOptions o;
    o.seed = bo.seeds[i];
    Eigen::VectorXd q = problems[i].q0;
    const Summary s = solver->solve(problems[i], q, o);
    restarted += s.restarts > 0;
    same_restarts += s.restarts == r[i].summary.restarts && s.status == r[i].summary.status;
  }
  EXPECT_GT(restarted, 3);  // the test exercises restarts
  EXPECT_GE(same_restarts, static_cast<int>(problems.size()) - 1);
  // Another seed gives other restarts for some problem.
  BatchOptions other = bo;
  for (auto& s : other.seeds) s += 1;
  const std::vector<BatchResult> r2 = solveBatch(problems, spec, other);
  int differ = 0;
  for (size_t i = 0; i < problems.size(); ++i) differ += r2[i].summary.restarts != r[i].summary.restarts || !(r2[i].q == r[i].q);
  EXPECT_GT(differ, 0);
}

// A problem that never converges (target out of reach, many restarts) does
// not hold its lane group: the others finish in about the kernel steps they
// need, and a lane is refilled as soon as its problem is answered.
TEST(BatchSolver, LaneRefillSlowProblemDoesNotHoldTheOthers) {
  std::vector<Problem> problems = chainProblems(1, 64);
  Problem slow = problems[0];
  slow.goals[0].target_position = Eigen::Vector3d(10, 10, 10);  // out of reach
  slow.name = "slow";
  problems.insert(problems.begin(), slow);
  const std::string spec = "dls-adaptive:restarts=100:mode=error:err_gain=0.03:limits=freeze:max_step=1:max_iterations=20";
  BatchOptions bo;
  bo.lanes = 4;
  BatchStats stats;
  const std::vector<BatchResult> r = solveBatch(problems, spec, bo, &stats);
  EXPECT_FALSE(r[0].summary.converged());
  EXPECT_EQ(r[0].summary.restarts, 100);
  EXPECT_EQ(r[0].summary.iterations, 101 * 20);
  long others = 0;
  int converged = 0;
  for (size_t i = 1; i < r.size(); ++i) {
    others += r[i].summary.iterations + r[i].summary.restarts + 1;  // each attempt's start is one kernel step too
    converged += r[i].summary.converged();
  }
  EXPECT_GE(converged, 60);
  // The slow problem runs 101 * 21 steps in one lane; the other three lanes
  // share the rest. Without refill the group would wait for the slowest of
  // every four problems.
  const long slow_steps = 101 * 21;
  EXPECT_LE(stats.kernel_steps, slow_steps + 5) << "the other problems ran alongside the slow one";
  EXPECT_GE(stats.kernel_steps, slow_steps);
  EXPECT_GE(stats.busy_lane_steps, slow_steps + others);
  std::printf("slow problem: %ld kernel steps, others %ld lane-steps, fill %.3f\n", stats.kernel_steps, others,
              stats.fill());
}

// A budget stops a problem's restarts once its share of the rounds reaches
// time_budget_us (time_us reports that share), as the scalar path stops on its
// wall time; the answer then has the status of its best attempt
// (max-iterations here, or time-limit if the budget ended that attempt). The reachable
// problems beside them still converge.
TEST(BatchSolver, BudgetStopsRestarts) {
  std::vector<Problem> problems = chainProblems(1, 8);
  for (int i = 0; i < 3; ++i) problems[i].goals[0].target_position = Eigen::Vector3d(10, 10, 10);  // out of reach
  const std::vector<BatchResult> r = solveBatch(problems, "dls:restarts=1000000:time_budget_us=20000:max_iterations=20", BatchOptions());
  for (int i = 0; i < 3; ++i) {
    const Status st = r[i].summary.status;
    EXPECT_TRUE(st == Status::kMaxIterations || st == Status::kStalled || st == Status::kTimeLimit)
        << i << ": " << toString(st);
    EXPECT_GE(r[i].summary.time_us, 20000.0) << i;
    EXPECT_GT(r[i].summary.restarts, 0) << i;
    EXPECT_LT(r[i].summary.restarts, 1000000) << i;
  }
  int converged = 0;
  for (size_t i = 3; i < problems.size(); ++i) converged += r[i].summary.converged();
  EXPECT_GE(converged, 3);
}

// The canonical frames reproduce the model's forward kinematics: a solve
// that starts at its target's configuration converges at once, with errors
// at rounding level, on chains with nearly parallel axes too.
TEST(BatchSolver, StartAtTheTargetConvergesWithoutIterating) {
  ChainSpec cs;
  cs.joints = 7;
  cs.limit = 2.5;
  auto model = randomChain(cs, 33);
  GoalSetSpec gs;
  gs.count = 20;
  gs.kind = GoalKind::kPose;
  std::vector<Problem> problems = reachableGoals(model, gs, 34, "at");
  Rng rng(5);
  for (Problem& p : problems) {
    p.q0 = randomConfiguration(*model, rng);
    Data d(*model);
    forwardKinematics(*model, p.q0, d);
    p.goals[0].target_position = effectorPosition(p.goals[0], d);
    p.goals[0].target_orientation = d.world_T_body[p.goals[0].body].R;
  }
  const std::vector<BatchResult> r = solveBatch(problems, "dls", BatchOptions());
  for (size_t i = 0; i < problems.size(); ++i) {
    EXPECT_EQ(r[i].summary.status, Status::kConverged);
    EXPECT_EQ(r[i].summary.iterations, 0);
    EXPECT_LT(r[i].summary.position_error, 1e-14);
    EXPECT_LT(r[i].summary.orientation_error, 1e-14);
    EXPECT_TRUE(r[i].q == problems[i].q0);
  }
}

// A reachable pose problem on a 5-DOF random chain (limits +-2.5).
Problem shortChainProblem() {
  ChainSpec short_chain;
  short_chain.joints = 5;
  short_chain.limit = 2.5;
  GoalSetSpec gs;
  gs.count = 1;
  gs.kind = GoalKind::kPose;
  return reachableGoals(randomChain(short_chain, 9), gs, 10, "short")[0];
}

// What the kernel does not take goes to the scalar Solver, whose answer is
// then exactly the scalar one; invalid problems get invalid-input.
TEST(BatchSolver, UnsupportedProblemsAndSpecsFallBackToTheScalarPath) {
  std::vector<Problem> problems = chainProblems(1, 6);
  // A ball-joint chain, two goals, an orientation-only goal, too few DOF.
  ChainSpec ball;
  ball.joints = 4;
  ball.revolute = 0.0;
  ball.ball = 1.0;
  GoalSetSpec gs;
  gs.count = 1;
  gs.kind = GoalKind::kPose;
  problems.push_back(reachableGoals(randomChain(ball, 3), gs, 4, "ball")[0]);
  Problem two = problems[0];
  two.goals.push_back(two.goals[0]);
  problems.push_back(two);
  Problem ori = problems[1];
  ori.goals[0].kind = GoalKind::kOrientation;
  problems.push_back(ori);
  problems.push_back(shortChainProblem());
  Problem bad = problems[2];
  bad.q0[0] = std::nan("");
  problems.push_back(bad);
  const size_t first_fallback = 6;

  SolverOptions o;
  BatchStats stats;
  const std::vector<BatchResult> r = solveBatch(problems, kAutoNoBudget, BatchOptions(), &stats);
  EXPECT_EQ(stats.batched, static_cast<long>(first_fallback));
  auto solver = Registry::global().create(kAutoNoBudget);
  for (size_t i = first_fallback; i < problems.size(); ++i) {
    EXPECT_FALSE(r[i].batched) << i;
    EXPECT_FALSE(batchFallbackReason(problems[i], Registry::global().parse(kAutoNoBudget), o).empty()) << i;
    Eigen::VectorXd q = problems[i].q0;
    const Summary s = solver->solve(problems[i], q, o);
    EXPECT_EQ(s.status, r[i].summary.status) << i;
    EXPECT_EQ(s.iterations, r[i].summary.iterations) << i;
    EXPECT_EQ(s.message, r[i].summary.message) << i;
    if (s.status != Status::kInvalidInput) {
      EXPECT_TRUE(q == r[i].q) << i;
    }
  }
  EXPECT_EQ(r.back().summary.status, Status::kInvalidInput);
  // Specs the kernel does not run: every problem goes to the scalar path.
  for (const char* spec : {"lm", "dls-adaptive", "dls:null_gain=0.1", "dls:jacobian=exact", "sdls"}) {
    const std::vector<Problem> few(problems.begin(), problems.begin() + 3);
    BatchStats s;
    const std::vector<BatchResult> rr = solveBatch(few, spec, BatchOptions(), &s);
    EXPECT_EQ(s.batched, 0) << spec;
    const test::Solved sc = solveScalar(few, spec, o);
    for (size_t i = 0; i < few.size(); ++i) {
      EXPECT_EQ(rr[i].summary.status, sc.summaries[i].status) << spec;
      EXPECT_TRUE(rr[i].q == sc.q[i]) << spec;
    }
  }
  // Options the batch refuses.
  BatchOptions wrong;
  wrong.lanes = 6;
  EXPECT_THROW(solveBatch(problems, "dls", wrong), std::invalid_argument);
  wrong = BatchOptions();
  wrong.seeds = {1, 2};
  EXPECT_THROW(solveBatch(problems, "dls", wrong), std::invalid_argument);
  EXPECT_THROW(solveBatch(problems, "no-such-solver", BatchOptions()), SpecError);
}

// kernel=false (the bindings' simd=False): every problem is one
// Solver::solve of the spec on the batch's threads, the scalar answer bit
// for bit, and the stats say so.
TEST(BatchSolver, KernelOffSendsEveryProblemToTheScalarSolver) {
  const std::vector<Problem> problems = chainProblems(2, 12);
  BatchOptions bo;
  bo.kernel = false;
  bo.threads = 2;
  for (size_t i = 0; i < problems.size(); ++i) bo.seeds.push_back(300 + i);
  BatchStats stats;
  const std::vector<BatchResult> r = solveBatch(problems, kAutoNoBudget, bo, &stats);
  EXPECT_EQ(stats.batched, 0);
  EXPECT_EQ(stats.solved, static_cast<long>(problems.size()));
  auto solver = Registry::global().create(kAutoNoBudget);
  int converged = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    EXPECT_FALSE(r[i].batched) << i;
    SolverOptions o;
    o.seed = bo.seeds[i];
    Eigen::VectorXd q = problems[i].q0;
    const Summary s = solver->solve(problems[i], q, o);
    EXPECT_TRUE(q == r[i].q) << i;
    EXPECT_EQ(s.status, r[i].summary.status) << i;
    EXPECT_EQ(s.iterations, r[i].summary.iterations) << i;
    EXPECT_EQ(s.restarts, r[i].summary.restarts) << i;
    if (r[i].summary.converged()) {
      ++converged;
      test::expectReached(problems[i], r[i].q, o, "kernel=false");
    }
  }
  EXPECT_GE(converged, 20);
}

// keep_going: polled while the workers solve; false stops them after their
// current solve or lane round (BatchStopped names how many were answered),
// on the kernel's lanes and on the scalar path alike. A keep_going that
// never says stop changes no answer.
TEST(BatchSolver, KeepGoingStopsTheWorkers) {
  // Targets out of reach with a huge restart count and no budget: the batch
  // would run for minutes, so only the stop can end it.
  std::vector<Problem> problems = chainProblems(1, 64);
  for (Problem& p : problems) p.goals[0].target_position = Eigen::Vector3d(10, 10, 10);
  for (const bool kernel : {true, false}) {
    BatchOptions bo;
    bo.threads = 2;
    bo.kernel = kernel;
    int polls = 0;
    bo.keep_going = [&polls] { return ++polls < 2; };
    const char* spec = kernel ? "dls:restarts=1000000:max_iterations=20" : "dls:restarts=5000:max_iterations=20";
    try {
      solveBatch(problems, spec, bo);
      ADD_FAILURE() << "kernel=" << kernel << ": the batch was not stopped";
    } catch (const BatchStopped& stopped) {
      EXPECT_LT(stopped.solved, static_cast<long>(problems.size())) << kernel;
      EXPECT_GE(stopped.solved, 0) << kernel;
      EXPECT_NE(std::string(stopped.what()).find("stopped after"), std::string::npos) << stopped.what();
    }
    EXPECT_EQ(polls, 2) << "kernel=" << kernel << ": polled until it said stop, then no more";
  }
  const std::vector<Problem> reachable = chainProblems(1, 24);
  BatchOptions bo;
  bo.threads = 2;
  const std::vector<BatchResult> plain = solveBatch(reachable, kAutoNoBudget, bo);
  bo.keep_going = [] { return true; };
  BatchStats stats;
  const std::vector<BatchResult> polled = solveBatch(reachable, kAutoNoBudget, bo, &stats);
  EXPECT_EQ(stats.solved, static_cast<long>(reachable.size()));
  for (size_t i = 0; i < reachable.size(); ++i) {
    EXPECT_TRUE(plain[i].q == polled[i].q) << i;
    EXPECT_EQ(plain[i].summary.status, polled[i].summary.status) << i;
    EXPECT_EQ(plain[i].summary.iterations, polled[i].summary.iterations) << i;
  }
}

// The arrays overload writes, row by row, the values of the BatchResult
// overload: the kernel's rows and the scalar path's (two goals, an invalid
// start), a shorter model's row padded by the stride, with and without a
// seed library.
TEST(BatchSolver, ArraysHoldTheResultsValues) {
  std::vector<Problem> problems = chainProblems(2, 10);
  Problem two = problems[0];
  two.goals.push_back(two.goals[0]);
  problems.push_back(two);
  Problem bad = problems[3];
  bad.q0[0] = std::nan("");
  problems.push_back(bad);
  problems.push_back(shortChainProblem());
  const size_t n = problems.size();
  for (const std::string spec : {std::string(kAutoNoBudget), std::string(kAutoNoBudget) + ":library=512:start=library"}) {
    BatchOptions bo;
    bo.threads = 2;
    const std::vector<BatchResult> r = solveBatch(problems, spec, bo);
    const int stride = 9;
    std::vector<double> q(n * stride, -7.0), pe(n), oe(n), t(n);
    std::vector<std::uint8_t> status(n), within(n), batched(n);
    std::vector<std::int32_t> iterations(n), restarts(n);
    std::vector<std::int64_t> fk(n), jac(n);
    BatchArrays a;
    a.q = q.data();
    a.q_stride = stride;
    a.status = status.data();
    a.iterations = iterations.data();
    a.restarts = restarts.data();
    a.position_error = pe.data();
    a.orientation_error = oe.data();
    a.time_us = t.data();
    a.fk_evals = fk.data();
    a.jacobian_evals = jac.data();
    a.within_limits = within.data();
    a.batched = batched.data();
    solveBatch(problems, Registry::global().parse(spec), bo, a);
    for (size_t i = 0; i < n; ++i) {
      const Summary& s = r[i].summary;
      EXPECT_EQ(status[i], static_cast<std::uint8_t>(s.status)) << spec << " " << i;
      EXPECT_EQ(kStatusNames.entries[status[i]].first, s.status) << i;
      EXPECT_EQ(iterations[i], s.iterations) << i;
      EXPECT_EQ(restarts[i], s.restarts) << i;
      EXPECT_EQ(pe[i], s.position_error) << i;
      EXPECT_EQ(oe[i], s.orientation_error) << i;
      EXPECT_EQ(fk[i], s.fk_evals) << i;
      EXPECT_EQ(jac[i], s.jacobian_evals) << i;
      EXPECT_EQ(within[i] != 0, s.within_limits) << i;
      EXPECT_EQ(batched[i] != 0, r[i].batched) << i;
      EXPECT_GE(t[i], 0.0) << i;
      const long nq = r[i].q.size();
      // Bitwise (the invalid start's NaN included).
      EXPECT_EQ(std::memcmp(q.data() + i * stride, r[i].q.data(), sizeof(double) * nq), 0) << spec << " " << i;
      for (long k = nq; k < stride; ++k) EXPECT_EQ(q[i * stride + k], -7.0) << "padding of row " << i;
    }
    EXPECT_EQ(kStatusNames.entries[status[n - 2]].first, Status::kInvalidInput);
    EXPECT_EQ(batched[n - 3], 0);
    // Only the fields asked for are written.
    std::vector<std::uint8_t> only(n, 255);
    BatchArrays just;
    just.status = only.data();
    solveBatch(problems, Registry::global().parse(spec), bo, just);
    EXPECT_TRUE(only == status);
    // A row too short for a model's configuration.
    BatchArrays narrow = a;
    narrow.q_stride = 6;
    EXPECT_THROW(solveBatch(problems, Registry::global().parse(spec), bo, narrow), std::invalid_argument);
  }
}

// The batch's default library: a spec with restarts and no library key
// gets one from kBatchLibraryMinProblems problems of a model on, never
// otherwise.
TEST(BatchSolver, DefaultLibraryRule) {
  const Registry& reg = Registry::global();
  const long many = kBatchLibraryMinProblems;
  const SolverSpec with = batchSpec(reg.parse("auto"), many);
  EXPECT_EQ(with.common.library, kBatchLibraryEntries);
  EXPECT_EQ(with.common.start, StartMode::kLibrary);
  EXPECT_EQ(with.text, "auto:library=131072:start=library");
  EXPECT_EQ(batchSpec(reg.parse("auto"), many - 1).text, "auto");
  // Opted out, already given, no restarts, not for the kernel.
  for (const char* spec : {"auto:library=0", "auto:start=given", "auto:library=4096", "dls", "ccd:restarts=10",
                           "dls:restarts=5:jacobian=exact"})
    EXPECT_EQ(batchSpec(reg.parse(spec), many).text, spec) << spec;
  EXPECT_EQ(batchSpec(reg.parse("dls:restarts=5"), many).text, "dls:restarts=5:library=131072:start=library");
  // Problems per model and goal: runs of one model, counted over the batch.
  std::vector<Problem> problems = chainProblems(2, 3);
  problems.push_back(problems[0]);
  Problem other_point = problems[1];
  other_point.goals[0].point.x() += 0.1;
  problems.push_back(other_point);
  EXPECT_EQ(problemsPerModel(problems), 4);
  EXPECT_EQ(problemsPerModel({}), 0);
}

// The model + targets overload builds the same problems.
TEST(BatchSolver, TargetsOverloadMatchesProblems) {
  const std::vector<Problem> problems = chainProblems(1, 12);
  std::vector<Pose3d> targets;
  for (const Problem& p : problems) {
    Pose3d t;
    t.p = p.goals[0].target_position;
    t.R = p.goals[0].target_orientation;
    targets.push_back(t);
  }
  const std::vector<BatchResult> a = solveBatch(problems, "dls", BatchOptions());
  const std::vector<BatchResult> b =
      solveBatch(problems[0].model, problems[0].goals[0], targets, {problems[0].q0}, "dls", BatchOptions());
  for (size_t i = 0; i < problems.size(); ++i) {
    EXPECT_EQ(a[i].summary.status, b[i].summary.status);
    EXPECT_TRUE(a[i].q == b[i].q);
  }
  EXPECT_THROW(solveBatch(problems[0].model, problems[0].goals[0], targets, {problems[0].q0, problems[0].q0}, "dls"),
               std::invalid_argument);
}

}  // namespace
}  // namespace ikbench
