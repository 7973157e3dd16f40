// FABRIK (and the other backends) on character skeletons: mocap tracking of
// the BVH corpus and of the shipped humanoid with a free-floating root,
// joint limits applied in both FABRIK stages, and whole-body targets that
// conflict.
//
// The corpus files are read from $IKBENCH_CORPUS_DIR/skeletons, by default
// the shared data directory next to the source tree; a test whose file is
// missing is skipped with a message naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/bvh.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/skeleton.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::expectReached;

std::string corpusSkeleton(const std::string& name) { return test::corpusFile("skeletons/" + name); }

std::string humanoidFile() { return std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/skeletons/humanoid_walk_wave.bvh"; }

struct Tracking {
  int converged = 0, total = 0;
  long iterations = 0;  // over all frames
  double root_lag = 0.0;  // largest distance of the solved root from the clip's [m]
};

// Solves a tracking family in sequence (each frame from the previous answer),
// checking every converged answer by FK and limits.
// With `clip`, also the root's lag behind the clip's root translation.
Tracking track(const std::string& spec, const Family& fam, const SolverOptions& o = {}, const BvhClip* clip = nullptr) {
  auto solver = Registry::global().create(spec);
  Tracking t;
  Eigen::VectorXd q = fam.problems.front().q0;
  for (const Problem& p : fam.problems) {
    const Summary s = solver->solve(p, q, o);
    if (clip != nullptr) {
      const Model& m = *clip->model;
      for (int j = 0; j < m.numJoints(); ++j)
        if (m.type(j) == JointType::kFree)
          t.root_lag = std::max(t.root_lag, (q.segment<3>(m.idxQ(j)) -
                                             clip->frames[t.total].segment<3>(m.idxQ(j))).norm());
    }
    EXPECT_NE(s.status, Status::kUnsupported) << spec << ": " << s.message;
    EXPECT_TRUE(q.allFinite()) << spec << " " << p.name;
    ++t.total;
    t.iterations += s.iterations;
    if (s.converged()) {
      ++t.converged;
      expectReached(p, q, o, spec);
    }
  }
  std::printf("[ tracking ] %-26s %-20s %4d / %4d frames, %.1f iterations per frame", fam.name.c_str(), spec.c_str(),
              t.converged, t.total, static_cast<double>(t.iterations) / t.total);
  if (clip != nullptr) std::printf(", root up to %.3f m from the clip's", t.root_lag);
  std::printf("\n");
  return t;
}

// ------------------------------------------------------------------ tracking

// Every End Site tracked at 1e-5 m, frame after frame, on a CMU skeleton
// (free root, zero-length hip and collar bones shared with their parents'
// pivots) and a Bandai Namco one (effectors on joint pivots).
TEST(FabrikSkeleton, TracksCorpusClipsWithAFreeRoot) {
  for (const auto& [file, frames] : std::vector<std::pair<std::string, int>>{{"cmu_131_01_walk.bvh", 150},
                                                                             {"bandai_namco_walk_normal_001.bvh", 100}}) {
    const std::string path = corpusSkeleton(file);
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus file " << path << " not found (set IKBENCH_CORPUS_DIR)";
    BvhTrackingSpec spec;
    spec.count = frames;
    const Family fam = bvhTrackingFamily(loadBvh(path), spec, file);
    const Tracking t = track("fabrik", fam);
    EXPECT_GE(t.converged, static_cast<int>(std::ceil(0.99 * t.total))) << file;
  }
}

// The Jacobian backends and CCD already handle a free root: the same corpus
// frames, a shorter stretch.
TEST(FabrikSkeleton, OtherBackendsTrackTheCorpusToo) {
  const std::string path = corpusSkeleton("cmu_131_03_hop.bvh");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus file " << path << " not found (set IKBENCH_CORPUS_DIR)";
  BvhTrackingSpec spec;
  spec.count = 30;
  const Family fam = bvhTrackingFamily(loadBvh(path), spec, "cmu_131_03_hop");
  for (const char* s : {"ccd", "dls", "lm", "sdls"}) {
    const Tracking t = track(s, fam);
    EXPECT_EQ(t.converged, t.total) << s;
  }
}

// The shipped humanoid: every frame; the root's rigid step (root=free) keeps
// it with the walking targets, where the paper's centroid alone
// (root=centroid) lets it lag and needs several times the iterations.
TEST(FabrikSkeleton, TracksTheShippedHumanoidAndTheRootFollowsTheTargets) {
  const BvhClip clip = loadBvh(humanoidFile());
  const Family fam = bvhTrackingFamily(clip, {}, "humanoid");
  const Tracking free_root = track("fabrik", fam, {}, &clip);
  EXPECT_EQ(free_root.converged, free_root.total);
  const Tracking centroid = track("fabrik:root=centroid", fam, {}, &clip);
  EXPECT_GT(centroid.iterations, 3 * free_root.iterations);
  EXPECT_GT(centroid.root_lag, 2 * free_root.root_lag);
}

// Targets shifted 2 m away from a standing pose: beyond every limb's reach
// from where the root is. A free root translates there (and converges); a
// pinned one cannot.
TEST(FabrikSkeleton, FreeRootReachesTargetsBeyondThePinnedReach) {
  const BvhClip clip = loadBvh(humanoidFile());
  const Model& m = *clip.model;
  Family fam = bvhTrackingFamily(clip, {}, "humanoid");
  Problem p = fam.problems[10];
  const Eigen::Vector3d shift(2.0, 0.0, 0.5);
  for (Goal& g : p.goals) g.target_position += shift;
  p.q0 = clip.frames[10];
  int root = 0;
  while (m.type(root) != JointType::kFree) ++root;
  const Eigen::Vector3d t0 = p.q0.segment<3>(m.idxQ(root));
  SolverOptions o;
  Eigen::VectorXd q_free = p.q0, q_pinned = p.q0;
  const Summary free_root = Registry::global().create("fabrik")->solve(p, q_free, o);
  const Summary pinned = Registry::global().create("fabrik:root=pinned")->solve(p, q_pinned, o);
  ASSERT_TRUE(free_root.converged()) << free_root.message;
  expectReached(p, q_free, o);
  EXPECT_GT((q_free.segment<3>(m.idxQ(root)) - t0).norm(), 1.0);
  EXPECT_FALSE(pinned.converged());
  EXPECT_GT(pinned.position_error, 0.5);
  EXPECT_TRUE(q_pinned.segment<3>(m.idxQ(root)) == t0);  // pinned: translation untouched
  EXPECT_TRUE(q_pinned.allFinite());
}

// ------------------------------------------------------------- joint limits

JointSpec limitedBall(const std::string& name, int parent, const Eigen::Vector3d& offset, double cone, double twist,
                      int twist_axis) {
  JointSpec j;
  j.name = name;
  j.parent = parent;
  j.type = JointType::kBall;
  j.parent_T_joint.p = offset;
  j.lower = Eigen::Vector3d::Constant(-cone);
  j.upper = Eigen::Vector3d::Constant(cone);
  j.lower[twist_axis] = -twist;
  j.upper[twist_axis] = twist;
  return j;
}

// n ball joints along +z, links of 0.2 m, every rotation-vector component
// within +-limit (limited) or free.
std::shared_ptr<const Model> ballChain(int n, double limit, bool limited) {
  std::vector<JointSpec> js;
  for (int i = 0; i < n; ++i) {
    js.push_back(limitedBall("b" + std::to_string(i), i - 1, {0, 0, i == 0 ? 0.0 : 0.2}, limit, limit, 2));
    if (!limited) js.back().lower.resize(0), js.back().upper.resize(0);
  }
  js.push_back(test::fixed("tip", n - 1, {0, 0, 0.2}));
  return std::make_shared<const Model>(std::move(js), limited ? "limited" : "free");
}

// Limits in both stages: what FABRIK returns converges by FK within the
// limits; limits in the backward stage only converge less often; and the
// unconstrained fit clamped afterwards (the limits applied only after the
// fit) violates the limits and misses the targets that FABRIK reaches.
TEST(FabrikSkeleton, LimitsActInBothStages) {
  const auto model = ballChain(6, 0.3, true), free_model = ballChain(6, 0.3, false);
  GoalSetSpec gs;
  gs.count = 50;
  gs.start = StartPolicy::kZero;
  const std::vector<Problem> problems = reachableGoals(model, gs, 3, "chain");
  SolverOptions o;
  auto both = Registry::global().create("fabrik");
  auto backward = Registry::global().create("fabrik:limits=backward");
  int converged_both = 0, converged_backward = 0, solved_only_with_limits = 0;
  for (const Problem& p : problems) {
    Eigen::VectorXd q = p.q0;
    const Summary s = both->solve(p, q, o);
    EXPECT_TRUE(s.within_limits);
    EXPECT_TRUE(withinLimits(*model, q));
    Eigen::VectorXd qb = p.q0;
    if (backward->solve(p, qb, o).converged()) ++converged_backward;
    if (!s.converged()) continue;
    ++converged_both;
    expectReached(p, q, o);
    // The same targets on the unlimited chain, then clamped into the limits.
    Problem pf = p;
    pf.model = free_model;
    Eigen::VectorXd qf = p.q0;
    ASSERT_TRUE(both->solve(pf, qf, o).converged());
    const bool violated = !withinLimits(*model, qf);
    clampToLimits(*model, qf);
    Data d(*model);
    forwardKinematics(*model, qf, d);
    const double miss = (d.world_T_body[6].p - p.goals[0].target_position).norm();
    if (violated && miss > o.position_tolerance) ++solved_only_with_limits;
  }
  std::printf("[ limits   ] 6 balls, +-0.3 rad: fabrik %d / 50, limits=backward %d / 50; the clamped unconstrained "
              "fit misses %d of fabrik's %d\n",
              converged_both, converged_backward, solved_only_with_limits, converged_both);
  // Measured: 50, 39, and the clamped fit misses 14 of the 50 (the others
  // happen to fall within the limits unaided).
  EXPECT_GE(converged_both, 48);
  EXPECT_GE(converged_both, converged_backward + 6);
  EXPECT_GE(solved_only_with_limits, 10);
}

// A leg: hip ball (swing 1.3, twist 0.6 rad), knee hinge [0, 2.4], ankle
// ball (swing 0.6, twist 0.35), a toe off the ankle like the humanoid's foot.
// Tight limits below a hinge are where FABRIK's fixed points stop short of
// the target (stage 1 makes each joint feasible for the bone directions it
// proposes, stage 2 from the fixed hip realises other ones); limits in both
// stages still converge several times as often as limits in stage 2 only.
TEST(FabrikSkeleton, LegWithAHingeKneeAndAnAnkleCone) {
  std::vector<JointSpec> js;
  js.push_back(limitedBall("hip", -1, {0, 0, 0}, 1.3, 0.6, 1));
  js.push_back(test::revolute("knee", 0, {0, -0.42, 0}, {1, 0, 0}));
  js.back().lower = Eigen::VectorXd::Constant(1, 0.0);
  js.back().upper = Eigen::VectorXd::Constant(1, 2.4);
  js.push_back(limitedBall("ankle", 1, {0, -0.42, 0}, 0.6, 0.35, 2));
  js.push_back(test::fixed("toe", 2, {0, -0.06, 0.14}));
  const auto model = std::make_shared<const Model>(std::move(js), "leg");
  GoalSetSpec gs;
  gs.count = 200;
  const std::vector<Problem> problems = reachableGoals(model, gs, 7, "leg");
  SolverOptions o;
  int counts[3] = {0, 0, 0};
  const char* specs[3] = {"fabrik", "fabrik:limits=backward", "ccd"};
  for (int k = 0; k < 3; ++k) {
    counts[k] = test::solveAllChecked(*Registry::global().create(specs[k]), problems, o, specs[k]);
    std::printf("[ limits   ] leg %-24s %3d / 200\n", specs[k], counts[k]);
  }
  // Measured: 25, 5 and 185.
  EXPECT_GE(counts[0], 2 * counts[1]);
  EXPECT_GE(counts[0], 15);
  EXPECT_GE(counts[2], 170);
}

// Anatomical limits for the shipped humanoid (about the ranges of motion of
// an adult): swing cones and twists on the balls, hinges for knees and elbows.
std::vector<JointLimitSpec> anatomicalLimits() {
  auto ball = [](const char* j, double cone, double twist) {
    JointLimitSpec l;
    l.joint = j;
    l.cone = cone;
    l.twist_lo = -twist;
    l.twist_hi = twist;
    return l;
  };
  auto hinge = [](const char* j, const Eigen::Vector3d& axis, double lo, double hi) {
    JointLimitSpec l;
    l.joint = j;
    l.hinge = true;
    l.axis = axis;
    l.lo = lo;
    l.hi = hi;
    return l;
  };
  std::vector<JointLimitSpec> limits = {
      ball("Hips", 0.5, 0.5),          ball("Spine", 0.5, 0.4),         ball("Chest", 0.5, 0.4),
      ball("Neck", 0.6, 0.7),          ball("Head", 0.5, 0.7),          ball("LeftShoulder", 0.4, 0.3),
      ball("RightShoulder", 0.4, 0.3), ball("LeftArm", 1.6, 1.3),       ball("RightArm", 1.6, 1.3),
      ball("LeftHand", 1.0, 0.4),      ball("RightHand", 1.0, 0.4),     ball("LeftUpLeg", 1.3, 0.6),
      ball("RightUpLeg", 1.3, 0.6),    ball("LeftFoot", 0.6, 0.35),     ball("RightFoot", 0.6, 0.35),
      hinge("LeftForeArm", {0, -1, 0}, 0.0, 2.5), hinge("RightForeArm", {0, 1, 0}, 0.0, 2.5),
      hinge("LeftLeg", {1, 0, 0}, 0.0, 2.4),      hinge("RightLeg", {1, 0, 0}, 0.0, 2.4)};
  limits.front().translation = 0.1;
  return limits;
}

// The anatomical humanoid (constrainSkeleton): every answer within the
// limits, converged ones checked by FK; FABRIK with limits in both stages
// converges more often than with backward limits alone (whole-body targets
// under tight limits are hard for FABRIK: ccd converges far more often, see
// docs/geometric-solvers.md).
TEST(FabrikSkeleton, AnatomicalHumanoidStaysWithinItsLimits) {
  const auto model = constrainSkeleton(*loadBvh(humanoidFile()).model, anatomicalLimits());
  EXPECT_EQ(model->type(model->bodyIndex("LeftLeg")), JointType::kRevolute);
  GoalSetSpec gs;
  gs.count = 20;
  const std::vector<Problem> problems = reachableGoals(model, gs, 11, "anatomical");
  ASSERT_EQ(problems.front().goals.size(), 5u);  // head, hands, feet
  SolverOptions o;
  int both = 0, backward = 0;
  for (const char* spec : {"fabrik", "fabrik:limits=backward", "ccd"}) {
    const int c = test::solveAllChecked(*Registry::global().create(spec), problems, o, spec, test::noCheck,
                                        [&](const Summary& s) { EXPECT_TRUE(s.within_limits) << spec; });
    std::printf("[ limits   ] anatomical humanoid %-24s %2d / 20\n", spec, c);
    if (std::string(spec) == "fabrik") both = c;
    if (std::string(spec) == "fabrik:limits=backward") backward = c;
  }
  EXPECT_GT(both, backward);
}

// constrainSkeleton writes the limits into the model's box: swing on the two
// components normal to the bone's nearest axis, twist on that one, hinges as
// revolute joints; bad limits name the joint.
TEST(FabrikSkeleton, ConstrainSkeletonWritesLimitsIntoTheModel) {
  const BvhClip clip = loadBvh(humanoidFile());
  const auto model = constrainSkeleton(*clip.model, anatomicalLimits());
  EXPECT_EQ(model->numJoints(), clip.model->numJoints());
  const int arm = model->bodyIndex("LeftArm"), knee = model->bodyIndex("LeftLeg"), hips = model->bodyIndex("Hips");
  // LeftArm's bone runs along +x: twist on x, swing on y and z.
  const int iv = model->idxV(arm);
  EXPECT_DOUBLE_EQ(model->lowerLimits()[iv], -1.3);
  EXPECT_DOUBLE_EQ(model->upperLimits()[iv + 1], 1.6);
  EXPECT_DOUBLE_EQ(model->upperLimits()[iv + 2], 1.6);
  EXPECT_EQ(model->type(knee), JointType::kRevolute);
  EXPECT_DOUBLE_EQ(model->upperLimits()[model->idxV(knee)], 2.4);
  EXPECT_EQ(model->nv(), clip.model->nv() - 4 * 2);  // four balls became hinges
  const int ih = model->idxV(hips);
  for (int k = 0; k < 3; ++k) EXPECT_DOUBLE_EQ(model->upperLimits()[ih + k], 0.1);  // root translation
  // Random configurations are drawn within these limits.
  Rng rng(4);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(withinLimits(*model, randomConfiguration(*model, rng)));
  auto expectError = [&](JointLimitSpec l, const std::string& words) {
    try {
      constrainSkeleton(*clip.model, {l});
      ADD_FAILURE() << "no error for " << words;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  JointLimitSpec bad;
  bad.joint = "Tail";
  expectError(bad, "no joint 'Tail'");
  bad.joint = "LeftHand_end";  // a fixed End Site
  bad.cone = 0.3;
  expectError(bad, "'LeftHand_end' (fixed joint)");
  bad.joint = "Spine";
  bad.cone = JointLimitSpec::kInf;
  bad.translation = 0.2;
  expectError(bad, "'translation' needs a free joint");
}

// The suite family type "skeleton": a BVH file, per-joint limits, goals.
TEST(FabrikSkeleton, SkeletonFamilyFromASuiteFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ikbench_fabrik_skeleton_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& limits) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << R"({"name": "s", "seed": 3, "families": [
  {"name": "anat", "type": "skeleton", "file": ")" << humanoidFile() << R"(", "count": 7,
   "limits": )" << limits << R"(,
   "goals": {"set": "reachable", "kind": "position", "start": "nominal"}}]})";
    return path;
  };
  const Suite suite = loadSuite(write("ok.json", R"({"LeftLeg": {"hinge": [1, 0, 0], "range": [0, 2.4]},
     "LeftArm": {"cone": 1.5, "twist": [-1, 1]}, "Hips": {"translation": 0.1}})"));
  ASSERT_EQ(suite.families.size(), 1u);
  const Family& f = suite.families[0];
  EXPECT_EQ(f.problems.size(), 7u);
  EXPECT_EQ(f.effectors, 5);
  EXPECT_EQ(f.goal, "position");
  EXPECT_FALSE(f.sequential);
  const Model& m = *f.problems[0].model;
  EXPECT_EQ(m.type(m.bodyIndex("LeftLeg")), JointType::kRevolute);
  for (const Problem& p : f.problems) EXPECT_TRUE(withinLimits(m, p.q0)) << p.name;
  try {
    loadSuite(write("bad.json", R"({"LeftKnee": {"cone": 0.5}})"));
    ADD_FAILURE() << "an unknown joint was accepted";
  } catch (const SuiteError& e) {
    EXPECT_NE(std::string(e.what()).find("families[0].limits"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no joint 'LeftKnee'"), std::string::npos) << e.what();
  }
  try {
    loadSuite(write("bad2.json", R"({"LeftLeg": {"range": [0, 2]}})"));
    ADD_FAILURE() << "a range without a hinge was accepted";
  } catch (const SuiteError& e) {
    EXPECT_NE(std::string(e.what()).find("'range' belongs to a 'hinge'"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

// ------------------------------------------------------- conflicting targets

// Head, hands and feet at once, pulled apart beyond what the body spans: no
// configuration reaches them all. FABRIK must return its best compromise:
// finite, within limits, no worse than where it started, bounded at every
// iteration, and the same answer for the same seed.
TEST(FabrikSkeleton, ConflictingWholeBodyTargetsGiveAStableCompromise) {
  const BvhClip clip = loadBvh(humanoidFile());
  for (const bool limited : {false, true}) {
    const auto model = limited ? constrainSkeleton(*clip.model, anatomicalLimits()) : clip.model;
    const Model& m = *model;
    Problem p;
    p.model = model;
    p.name = limited ? "conflict-limited" : "conflict";
    p.q0 = m.middleConfiguration();
    Data d(m);
    forwardKinematics(m, p.q0, d);
    // Stretch the standing pose: hands 1.5 m further out each, head 1 m up,
    // feet 0.8 m down.
    const std::vector<std::pair<const char*, Eigen::Vector3d>> pulls = {{"Head_end", {0, 1.0, 0}},
                                                                        {"LeftHand_end", {1.5, 0, 0}},
                                                                        {"RightHand_end", {-1.5, 0, 0}},
                                                                        {"LeftFoot_end", {0, -0.8, 0}},
                                                                        {"RightFoot_end", {0, -0.8, 0}}};
    for (const auto& [body, pull] : pulls) {
      Goal g;
      g.body = m.bodyIndex(body);
      ASSERT_GE(g.body, 0) << body;
      g.target_position = d.world_T_body[g.body].p + pull;
      p.goals.push_back(g);
    }
    const double start_residual = [&] {
      evaluateGoals(m, p.goals, d);
      return d.residual.norm();
    }();
    for (const char* spec : {"fabrik", "fabrik:root=pinned"}) {
      SolverOptions o;
      o.record_trace = true;
      o.stall_iterations = 0;  // run the full budget: no blow-up over 300 iterations
      o.max_iterations = 300;
      Eigen::VectorXd q = p.q0, q2 = p.q0;
      const Summary s = Registry::global().create(spec)->solve(p, q, o);
      const Summary s2 = Registry::global().create(spec)->solve(p, q2, o);
      EXPECT_FALSE(s.converged()) << spec;
      EXPECT_TRUE(s.status == Status::kStalled || s.status == Status::kMaxIterations)
          << spec << " " << toString(s.status) << ": " << s.message;
      EXPECT_TRUE(q.allFinite()) << spec;
      EXPECT_TRUE(std::isfinite(s.position_error)) << spec;
      EXPECT_TRUE(withinLimits(m, q)) << spec;
      EXPECT_TRUE(q == q2) << spec << ": not deterministic";
      EXPECT_EQ(s.iterations, s2.iterations) << spec;
      forwardKinematics(m, q, d);
      evaluateGoals(m, p.goals, d);
      EXPECT_LE(d.residual.norm(), start_residual) << spec;
      // Bounded at every iteration: the largest goal error never grows more
      // than 10% beyond its start value, and settles (no oscillation): the
      // last 100 iterations move it by less than 1 mm.
      double worst = 0.0, lo = 1e300, hi = 0.0;
      for (const IterationRecord& r : s.trace) {
        ASSERT_TRUE(std::isfinite(r.position_error)) << spec << " iteration " << r.iteration;
        worst = std::max(worst, r.position_error);
        if (r.iteration + 100 > s.iterations) lo = std::min(lo, r.position_error), hi = std::max(hi, r.position_error);
      }
      EXPECT_LE(worst, 1.1 * s.trace.front().position_error) << spec;
      EXPECT_LT(hi - lo, 1e-3) << spec;
      std::printf("[ conflict ] %-16s %-22s %-14s max error %.3f m (start %.3f, worst %.3f, last 100: %.2e), "
                  "residual %.3f (start %.3f)\n",
                  p.name.c_str(), spec, std::string(toString(s.status)).c_str(), s.position_error,
                  s.trace.front().position_error, worst, hi - lo, d.residual.norm(), start_residual);
    }
  }
}

}  // namespace
}  // namespace ikbench
