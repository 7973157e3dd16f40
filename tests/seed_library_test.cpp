// The seed library (ikbench/solvers/seed_library.h): its entries reach the
// poses they are filed under, its search returns the nearest of the entries
// it must see, and solves that start from it (library=N, start=library)
// converge by forward kinematics in fewer iterations than from the nominal
// start, with the same answers in the compiled kernel, the batch and the
// generic code, on any thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/seed_library.h"
#include "test_util.h"

namespace ikbench {
namespace {

std::shared_ptr<const Model> chain7(std::uint64_t seed) {
  ChainSpec cs;
  cs.joints = 7;
  cs.limit = 2.5;
  return randomChain(cs, seed);
}

TEST(SeedLibrary, EntriesReachThePosesTheyAreFiledUnder) {
  const auto model = chain7(3);
  const int body = model->numJoints() - 1;
  const Eigen::Vector3d point(0.05, -0.02, 0.1);
  const SeedLibrary lib(model, body, point, true, 3000);
  EXPECT_EQ(lib.size(), 3000);
  EXPECT_GT(lib.rho(), 0.0);
  EXPECT_GT(lib.cellSize(), 0.0);
  Data d(*model);
  int near_limits = 0;
  for (int i = 0; i < lib.size(); ++i) {
    const Eigen::VectorXd q = Eigen::Map<const Eigen::VectorXd>(lib.configuration(i), model->nq());
    ASSERT_TRUE(withinLimits(*model, q)) << i;
    forwardKinematics(*model, q, d);
    const Eigen::Vector3d p = d.world_T_body[body].act(point);
    // Stored in single precision: a few ulps of a metre-sized workspace.
    ASSERT_LT((lib.position(i) - p).norm(), 1e-5) << i;
    // A goal at the entry's own pose is at the distance of the limit term
    // alone: s^2, s = kLimitWeight rho max(0, kLimitMargin - mu), mu the
    // nearest approach to a limit as a fraction of the joint's span.
    double mu = INFINITY;
    for (int j : model->supportingJoints(body)) {
      const int v = model->idxV(j);
      const double lo = model->lowerLimits()[v], hi = model->upperLimits()[v];
      mu = std::min(mu, std::min(q[model->idxQ(j)] - lo, hi - q[model->idxQ(j)]) / (hi - lo));
    }
    const double s = SeedLibrary::kLimitWeight * lib.rho() * std::max(0.0, SeedLibrary::kLimitMargin - mu);
    near_limits += s > 0.0;
    Goal g;
    g.body = body;
    g.point = point;
    g.kind = GoalKind::kPose;
    g.target_position = p;
    g.target_orientation = d.world_T_body[body].R;
    ASSERT_NEAR(lib.distance(i, g), s * s, 1e-5) << i;  // single precision
  }
  EXPECT_GT(near_limits, lib.size() / 4) << "the limit term is not tested";
  // The same model and count give the same library.
  const SeedLibrary again(model, body, point, true, 3000);
  for (int i = 0; i < lib.size(); ++i)
    ASSERT_TRUE(std::equal(lib.configuration(i), lib.configuration(i) + model->nq(), again.configuration(i))) << i;
}

// Against a brute-force ranking of every entry: the answer is sorted by the
// library's distance, and no entry whose point lies within one cell of the
// target (those the search must see) is nearer than the k-th answer.
TEST(SeedLibrary, NearestIsExactAmongTheEntriesNearTheTarget) {
  for (bool pose : {true, false}) {
    const auto model = chain7(5);
    const int body = model->numJoints() - 1;
    const SeedLibrary lib(model, body, Eigen::Vector3d::Zero(), pose, 20000);
    GoalSetSpec gs;
    gs.count = 200;
    gs.kind = pose ? GoalKind::kPose : GoalKind::kPosition;
    int widened = 0;
    for (const Problem& p : reachableGoals(model, gs, 9, "t")) {
      const Goal& g = p.goals.front();
      // Ranked as scanned (1, kNearStarts) and selected from all seen (kStarts).
      for (int k : {1, SeedLibrary::kNearStarts, SeedLibrary::kStarts}) {
        int out[SeedLibrary::kStarts];
        ASSERT_EQ(lib.nearest(g, k, out), k);
        for (int j = 1; j < k; ++j) {
          ASSERT_LE(lib.distance(out[j - 1], g), lib.distance(out[j], g));
          ASSERT_TRUE(std::find(out, out + j, out[j]) == out + j) << "entry " << out[j] << " returned twice";
        }
        const double kth = lib.distance(out[k - 1], g);
        int within = 0;
        for (int i = 0; i < lib.size(); ++i) {
          if ((lib.position(i) - g.target_position).cwiseAbs().maxCoeff() >= lib.cellSize()) continue;
          ++within;
          if (lib.distance(i, g) < kth) ASSERT_TRUE(std::find(out, out + k, i) != out + k) << p.name << " entry " << i;
        }
        if (k <= SeedLibrary::kNearStarts) widened += within < k;
      }
    }
    // The targets lie in the workspace the entries fill: almost none needs
    // the search to widen beyond the 3 x 3 x 3 block for a solve's nearest
    // starts.
    EXPECT_LT(widened, 20) << pose;
  }
}

// The AVX2 + FMA search and the build's baseline (IKBENCH_BATCH_ISA=portable)
// differ only in rounding (fused multiply-adds): the same entries in the
// same order, except where two entries' distances tie to within rounding.
// A target that is not finite gets none.
TEST(SeedLibrary, PortableAndAvxSearchesAgree) {
  const auto model = chain7(11);
  const int body = model->numJoints() - 1;
  const SeedLibrary fast(model, body, Eigen::Vector3d::Zero(), true, 20000);
  setenv("IKBENCH_BATCH_ISA", "portable", 1);
  const SeedLibrary portable(model, body, Eigen::Vector3d::Zero(), true, 20000);
  unsetenv("IKBENCH_BATCH_ISA");
  GoalSetSpec gs;
  gs.count = 200;
  gs.kind = GoalKind::kPose;
  int same = 0, ranks = 0;
  for (const Problem& p : reachableGoals(model, gs, 13, "t")) {
    const Goal& g = p.goals.front();
    for (int k : {1, SeedLibrary::kNearStarts, SeedLibrary::kStarts}) {
      int a[SeedLibrary::kStarts], b[SeedLibrary::kStarts];
      ASSERT_EQ(fast.nearest(g, k, a), k);
      ASSERT_EQ(portable.nearest(g, k, b), k);
      for (int j = 0; j < k; ++j, ++ranks) {
        same += a[j] == b[j];
        // Another entry only as a tie: both libraries put the two at the
        // same distance to within single-precision rounding.
        if (a[j] != b[j]) EXPECT_NEAR(fast.distance(a[j], g), fast.distance(b[j], g), 1e-5) << p.name << " rank " << j;
      }
    }
  }
  EXPECT_GE(same, ranks * 99 / 100) << same << " of " << ranks << " ranks agree";
  // The scan that takes a solve's further starts: both copies give the
  // first position of the least value, or -1 when every value is +inf.
  Rng rng(17);
  for (int n = 0; n <= 70; ++n) {
    std::vector<float> d(static_cast<size_t>(n));
    for (float& x : d) x = rng.uniform() < 0.2 ? INFINITY : static_cast<float>(std::floor(rng.uniform() * 8.0) - 4.0);
    int expected = -1;
    for (int i = 0; i < n; ++i)
      if (d[static_cast<size_t>(i)] < INFINITY &&
          (expected < 0 || d[static_cast<size_t>(i)] < d[static_cast<size_t>(expected)]))
        expected = i;
    EXPECT_EQ(fast.least(d.data(), n), expected) << n;
    EXPECT_EQ(portable.least(d.data(), n), expected) << n;
    for (float& x : d) x = INFINITY;
    EXPECT_EQ(fast.least(d.data(), n), -1) << n;
  }
  Goal bad = reachableGoals(model, gs, 13, "t").front().goals.front();
  bad.target_position.x() = NAN;
  int out[SeedLibrary::kStarts];
  EXPECT_EQ(fast.nearest(bad, SeedLibrary::kStarts, out), 0);
}

// A target far outside the workspace still gets k entries (the search
// widens until it has them); an unusable goal set gets no library.
TEST(SeedLibrary, FarTargetsAndGoalSetsWithoutALibrary) {
  const auto model = chain7(7);
  const int body = model->numJoints() - 1;
  auto lib = SeedLibrary::forGoals(model, {Goal{body, Eigen::Vector3d::Zero(), GoalKind::kPose}}, 500);
  ASSERT_TRUE(lib);
  EXPECT_EQ(lib, SeedLibrary::forGoals(model, {Goal{body, Eigen::Vector3d::Zero(), GoalKind::kPose}}, 500));
  Goal far{body, Eigen::Vector3d::Zero(), GoalKind::kPose};
  far.target_position = Eigen::Vector3d(50.0, -40.0, 30.0);
  int out[SeedLibrary::kStarts];
  EXPECT_EQ(lib->nearest(far, SeedLibrary::kStarts, out), SeedLibrary::kStarts);
  EXPECT_EQ(lib->nearest(far, 0, out), 0);
  EXPECT_FALSE(SeedLibrary::forGoals(model, {Goal{body, Eigen::Vector3d::Zero(), GoalKind::kOrientation}}, 500));
  EXPECT_FALSE(SeedLibrary::forGoals(model, {Goal{body}, Goal{body - 1}}, 500));
  EXPECT_THROW(SeedLibrary(model, body, Eigen::Vector3d::Zero(), true, 0), std::invalid_argument);
  EXPECT_THROW(SeedLibrary(model, body + 5, Eigen::Vector3d::Zero(), true, 10), std::invalid_argument);
  EXPECT_THROW(SeedLibrary(model, body, Eigen::Vector3d::Zero(), true, SeedLibrary::kMaxEntries + 1),
               std::invalid_argument);
}

// The cache keeps the 64 most recently used libraries: one evicted while a
// caller holds it comes back without a build; one evicted and released is
// built again, and counted.
TEST(SeedLibrary, EvictedLibrariesStillHeldAreNotBuiltAgain) {
  const auto model = chain7(8);
  const int body = model->numJoints() - 1;
  auto goalsAt = [&](double x) { return std::vector<Goal>{Goal{body, Eigen::Vector3d(x, 0, 0), GoalKind::kPose}}; };
  const SeedLibrary::CacheStats before = SeedLibrary::cacheStats();
  std::shared_ptr<const SeedLibrary> held = SeedLibrary::forGoals(model, goalsAt(0.0), 64);
  std::weak_ptr<const SeedLibrary> released = SeedLibrary::forGoals(model, goalsAt(1.0), 64);
  ASSERT_TRUE(held);
  // 64 more libraries (other effector points) push both out of the cache.
  for (int i = 0; i < 64; ++i) ASSERT_TRUE(SeedLibrary::forGoals(model, goalsAt(2.0 + i), 64));
  EXPECT_TRUE(released.expired());
  EXPECT_EQ(SeedLibrary::cacheStats().built - before.built, 66);
  EXPECT_EQ(SeedLibrary::forGoals(model, goalsAt(0.0), 64), held);
  EXPECT_EQ(SeedLibrary::cacheStats().built - before.built, 66);
  EXPECT_EQ(SeedLibrary::cacheStats().rebuilt - before.rebuilt, 0);
  EXPECT_TRUE(SeedLibrary::forGoals(model, goalsAt(1.0), 64));
  EXPECT_EQ(SeedLibrary::cacheStats().built - before.built, 67);
  EXPECT_EQ(SeedLibrary::cacheStats().rebuilt - before.rebuilt, 1);
}

// A solve's library starts, in attempt order: the nearest entry alone (the
// first attempt with start=library), the nearest kNearStarts (it first), then
// the rest of the nearest kStarts; each entry once, then none (uniform draws).
TEST(SeedLibrary, StartsComeInStagesNearestFirst) {
  const auto model = chain7(3);
  const int body = model->numJoints() - 1;
  const SeedLibrary lib(model, body, Eigen::Vector3d::Zero(), true, 20000);
  GoalSetSpec gs;
  gs.count = 20;
  gs.kind = GoalKind::kPose;
  constexpr int kNear = SeedLibrary::kNearStarts;
  for (const Problem& p : reachableGoals(model, gs, 21, "t")) {
    const Goal& g = p.goals.front();
    int first = -1, near[kNear];
    std::vector<int> all(SeedLibrary::kStarts);
    ASSERT_EQ(lib.nearest(g, 1, &first), 1);
    ASSERT_EQ(lib.nearest(g, kNear, near), kNear);
    ASSERT_EQ(lib.nearest(g, SeedLibrary::kStarts, all.data()), SeedLibrary::kStarts);
    std::vector<int> far;
    for (int i : all)
      if (std::find(near, near + kNear, i) == near + kNear) far.push_back(i);
    for (StartMode mode : {StartMode::kLibrary, StartMode::kGiven}) {
      LibraryStarts starts(&lib, &g, mode);
      long attempt = 0;
      if (mode == StartMode::kGiven) EXPECT_EQ(starts.forAttempt(attempt++), nullptr) << "attempt 0 keeps its start";
      std::vector<const double*> got;
      while (const double* q = starts.forAttempt(attempt++)) got.push_back(q);
      ASSERT_EQ(got.size(), kNear + far.size()) << p.name;
      if (mode == StartMode::kLibrary) EXPECT_EQ(got[0], lib.configuration(first)) << p.name;
      for (int j = 0; j < kNear; ++j) {
        const int found = static_cast<int>(
            std::find_if(near, near + kNear, [&](int i) { return lib.configuration(i) == got[j]; }) - near);
        EXPECT_LT(found, kNear) << p.name << " start " << j << " is not among the nearest " << kNear;
        if (mode == StartMode::kGiven) EXPECT_EQ(found, j) << p.name << ": nearest first";
      }
      for (size_t j = 0; j < far.size(); ++j) EXPECT_EQ(got[kNear + j], lib.configuration(far[j])) << p.name << j;
      EXPECT_EQ(starts.forAttempt(attempt), nullptr);
    }
  }
}

TEST(SeedLibrary, SpecKeysAreChecked) {
  EXPECT_NO_THROW(Registry::global().parse("auto:library=4096:start=library"));
  EXPECT_NO_THROW(Registry::global().parse("ccd:restarts=3:library=100"));
  for (const char* bad : {"auto:start=library", "auto:library=-1", "auto:library=2000000", "auto:start=near"}) {
    try {
      Registry::global().parse(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const SpecError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.find("library") != std::string::npos || what.find("start") != std::string::npos)
          << bad << ": " << what;
    }
  }
}

// Solves of random 7-DOF chains' reachable pose targets: from the library
// they converge (by the model's FK, within limits) in far fewer iterations
// than from the middle of the limits, and the kernel's answers are the
// batch's bitwise and the generic code's to rounding.
TEST(SeedLibrary, SolvesFromTheLibraryConvergeInFewerIterations) {
  const std::vector<Problem> problems = test::poseProblems(7, 4, 50);
  SolverOptions o;
  auto iterations = [](const test::Solved& s) {
    long n = 0;
    for (const Summary& x : s.summaries) n += x.iterations + x.restarts + 1;  // + a start evaluation per attempt
    return n;
  };
  const std::string plain = "auto:time_budget_us=0";
  const std::string restarts = "auto:time_budget_us=0:library=4096";
  const std::string seeded = "auto:time_budget_us=0:library=4096:start=library";
  const test::Solved a = test::solveEach(problems, plain, o);
  const test::Solved b = test::solveEach(problems, restarts, o);
  const test::Solved c = test::solveEach(problems, seeded, o);
  for (const test::Solved* s : {&a, &b, &c})
    for (size_t i = 0; i < problems.size(); ++i) {
      ASSERT_TRUE(s->summaries[i].converged()) << i;
      test::expectReached(problems[i], s->q[i], o, "library");
    }
  // Measured: 36.5 -> 14.7 lane-steps per solve with 4096 entries and the
  // library start (docs/tuning.md); the bounds leave room for other chains.
  EXPECT_LT(iterations(b), 0.8 * iterations(a));
  EXPECT_LT(iterations(c), 0.6 * iterations(a));

  BatchOptions bo;
  bo.solve = o;
  for (const std::string& spec : {restarts, seeded}) {
    const test::Solved k = test::solveEach(problems, spec, o);
    const test::Solved g = test::solveEach(problems, spec + ":kernel=generic", o);
    std::vector<std::vector<BatchResult>> runs;
    for (int threads : {1, 2}) {
      bo.threads = threads;
      BatchStats stats;
      runs.push_back(solveBatch(problems, spec, bo, &stats));
      EXPECT_EQ(stats.batched, static_cast<long>(problems.size()));
    }
    int same_count = 0;
    for (size_t i = 0; i < problems.size(); ++i) {
      for (const auto& r : runs) {
        EXPECT_TRUE(k.q[i] == r[i].q) << spec << " " << i;
        EXPECT_EQ(k.summaries[i].iterations, r[i].summary.iterations) << spec << " " << i;
        EXPECT_EQ(k.summaries[i].restarts, r[i].summary.restarts) << spec << " " << i;
      }
      EXPECT_EQ(k.summaries[i].status, g.summaries[i].status) << spec << " " << i;
      EXPECT_LT((k.q[i] - g.q[i]).cwiseAbs().maxCoeff(), 1e-6) << spec << " " << i;
      same_count += k.summaries[i].iterations == g.summaries[i].iterations;
    }
    EXPECT_GE(same_count, static_cast<int>(problems.size()) * 9 / 10) << spec;
  }
}

// Restarts from the library need a restartable backend and a single goal;
// elsewhere the key changes nothing: two goals on a tree, and a backend
// (ccd) whose restarts take the library's entries like any other.
TEST(SeedLibrary, OtherBackendsAndGoalSets) {
  const std::vector<Problem> problems = test::poseProblems(7, 1, 20, GoalKind::kPosition);
  SolverOptions o;
  const test::Solved a = test::solveEach(problems, "ccd:restarts=20", o);
  const test::Solved b = test::solveEach(problems, "ccd:restarts=20:library=2048:start=library", o);
  int conv_a = 0, conv_b = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    conv_a += a.summaries[i].converged();
    conv_b += b.summaries[i].converged();
    if (b.summaries[i].converged()) test::expectReached(problems[i], b.q[i], o, "ccd library");
  }
  EXPECT_GE(conv_b, conv_a);

  TreeSpec ts;
  const auto tree = randomTree(ts, 4);
  GoalSetSpec gs;
  gs.count = 5;
  gs.kind = GoalKind::kPosition;
  for (const Problem& p : reachableGoals(tree, gs, 8, "tree")) {
    ASSERT_GE(p.goals.size(), 2u);
    EXPECT_FALSE(SeedLibrary::forGoals(p.model, p.goals, 1000));
    auto with = Registry::global().create("dls-adaptive:restarts=3:library=1000:start=library");
    auto without = Registry::global().create("dls-adaptive:restarts=3");
    Eigen::VectorXd q1 = p.q0, q2 = p.q0;
    const Summary s1 = with->solve(p, q1, o), s2 = without->solve(p, q2, o);
    EXPECT_EQ(s1.status, s2.status) << p.name;
    EXPECT_TRUE(q1 == q2) << p.name;
  }
}

}  // namespace
}  // namespace ikbench
