// Seeded generators: determinism (same seed -> bit-identical, any thread),
// model structure, limits and axes, and the properties each goal set claims
// (reachable targets are solvable, unreachable ones are beyond reach,
// near-singular ones are near full stretch and start straight).
#include <gtest/gtest.h>

#include <Eigen/SVD>
#include <cstring>
#include <thread>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/registry.h"

namespace ikbench {
namespace {

// FNV-1a over the bytes of every number of a problem set: equal hashes mean
// bit-identical problems.
struct Hasher {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  void add(double x) {
    unsigned char b[8];
    std::memcpy(b, &x, 8);
    for (unsigned char c : b) h = (h ^ c) * 0x100000001b3ULL;
  }
  void add(const Eigen::MatrixXd& m) {
    for (Eigen::Index i = 0; i < m.size(); ++i) add(m.data()[i]);
  }
};
std::uint64_t hashProblems(const std::vector<Problem>& ps) {
  Hasher h;
  for (const Problem& p : ps) {
    const Model& m = *p.model;
    for (int j = 0; j < m.numJoints(); ++j) {
      h.add(m.parentTJoint(j).p);
      h.add(m.parentTJoint(j).R);
      h.add(m.axis(j));
      h.add(static_cast<double>(m.type(j)));
    }
    h.add(m.lowerLimits());
    h.add(m.upperLimits());
    h.add(p.q0);
    for (const Goal& g : p.goals) {
      h.add(g.target_position);
      h.add(g.target_orientation);
      h.add(static_cast<double>(g.body));
    }
  }
  return h.h;
}

std::vector<Problem> sampleSet(std::uint64_t seed) {
  ChainSpec cs;
  cs.joints = 6;
  cs.ball = 0.3;
  cs.prismatic = 0.2;
  cs.limit_style = LimitStyle::kRealistic;
  GoalSetSpec gs;
  gs.count = 20;
  gs.kind = GoalKind::kPose;
  gs.start = StartPolicy::kRandom;
  auto out = makeGoals(randomChain(cs, seed), gs, seed + 1, "a");
  TreeSpec ts;
  ts.levels = 2;
  ts.branches = 2;
  gs.type = GoalSetType::kTrajectory;
  for (auto& p : makeGoals(randomTree(ts, seed), gs, seed + 2, "b")) out.push_back(p);
  return out;
}

TEST(Generators, SameSeedBitIdenticalAnyThread) {
  const std::uint64_t serial = hashProblems(sampleSet(5));
  EXPECT_EQ(serial, hashProblems(sampleSet(5)));
  EXPECT_NE(serial, hashProblems(sampleSet(6)));
  std::uint64_t threaded[3] = {0, 0, 0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back([&threaded, t] { threaded[t] = hashProblems(sampleSet(5)); });
  for (auto& th : threads) th.join();
  for (std::uint64_t h : threaded) EXPECT_EQ(h, serial);
}

TEST(Generators, LinkLengthsFollowTheSeededStream) {
  // Uniform draws use only integer arithmetic and one multiplication, so these
  // values are the same on every machine and compiler (a golden check of the
  // whole Rng -> generator path; planar axes draw nothing else).
  ChainSpec cs;
  cs.joints = 3;
  cs.axes = AxisStyle::kPlanar;
  const auto m = randomChain(cs, 42);
  Rng rng(42);
  for (int i = 1; i <= 3; ++i) {
    rng.uniform();                                                 // joint type
    const double len = rng.uniform(cs.min_length, cs.max_length);  // the link after joint i-1
    EXPECT_EQ(m->parentTJoint(i).p.z(), len) << i;
  }
  EXPECT_EQ(m->bodyName(3), "tip");
}

TEST(Generators, ChainStructureTypesAxesAndLimits) {
  ChainSpec cs;
  cs.joints = 40;
  cs.revolute = 0.5;
  cs.ball = 0.3;
  cs.prismatic = 0.2;
  cs.limit = 2.0;
  const auto m = randomChain(cs, 3);
  EXPECT_EQ(m->numJoints(), 41);
  EXPECT_TRUE(m->isChain());
  EXPECT_EQ(m->leaves(), std::vector<int>{40});
  int counts[5] = {0, 0, 0, 0, 0};
  for (int j = 0; j < 40; ++j) ++counts[static_cast<int>(m->type(j))];
  EXPECT_GT(counts[static_cast<int>(JointType::kRevolute)], 10);
  EXPECT_GT(counts[static_cast<int>(JointType::kBall)], 4);
  EXPECT_GT(counts[static_cast<int>(JointType::kPrismatic)], 2);
  for (int d = 0; d < m->nv(); ++d) {
    if (m->type(m->dofJoint(d)) == JointType::kPrismatic) {
      EXPECT_EQ(m->lowerLimits()[d], 0.0);
      EXPECT_EQ(m->upperLimits()[d], cs.prismatic_range);
    } else {
      EXPECT_EQ(m->lowerLimits()[d], -2.0);
      EXPECT_EQ(m->upperLimits()[d], 2.0);
    }
  }
  cs = ChainSpec{};
  cs.axes = AxisStyle::kAlternating;
  cs.limit_style = LimitStyle::kNone;
  cs.limit = 1.0;
  const auto alt = randomChain(cs, 4);
  for (int j = 0; j < cs.joints; ++j) {
    EXPECT_EQ(alt->axis(j), j % 2 == 0 ? Eigen::Vector3d::UnitZ() : Eigen::Vector3d::UnitY());
    EXPECT_FALSE(alt->hasFiniteLimits(j));
  }
  cs.axes = AxisStyle::kPlanar;
  cs.limit_style = LimitStyle::kRealistic;
  cs.limit = 3.0;
  const auto real = randomChain(cs, 5);
  for (int d = 0; d < real->nv(); ++d) {
    EXPECT_EQ(real->axis(d), Eigen::Vector3d::UnitY());
    EXPECT_LE(real->lowerLimits()[d], -0.9);
    EXPECT_GE(real->lowerLimits()[d], -3.0);
    EXPECT_GE(real->upperLimits()[d], 0.9);
    EXPECT_LE(real->upperLimits()[d], 3.0);
  }
  EXPECT_NE(real->lowerLimits()[0], -real->upperLimits()[0]);  // asymmetric
}

TEST(Generators, TreeStructure) {
  TreeSpec ts;
  ts.trunk = 2;
  ts.branches = 3;
  ts.branch_joints = 2;
  ts.levels = 2;
  const auto m = randomTree(ts, 9);
  EXPECT_EQ(m->nv(), 2 + 3 * 2 + 9 * 2);
  const std::vector<int> eff = effectorBodies(*m, {});
  ASSERT_EQ(eff.size(), 9u);
  for (int b : eff) {
    EXPECT_EQ(m->type(b), JointType::kFixed);
    EXPECT_EQ(m->supportingJoints(b).size(), 6u);
    EXPECT_EQ(m->bodyName(b).rfind("tip", 0), 0u);
  }
  EXPECT_FALSE(m->isChain());
  // Leaves of one fork point in different directions at the straight pose.
  Data d(*m);
  forwardKinematics(*m, m->neutralConfiguration(), d);
  for (size_t a = 0; a < eff.size(); ++a)
    for (size_t b = a + 1; b < eff.size(); ++b)
      EXPECT_GT((d.world_T_body[eff[a]].p - d.world_T_body[eff[b]].p).norm(), 1e-3);
  ts.levels = 0;
  EXPECT_EQ(randomTree(ts, 1)->nv(), 2);
}

TEST(Generators, BadSpecsThrow) {
  ChainSpec cs;
  cs.joints = 0;
  EXPECT_THROW(randomChain(cs, 1), std::invalid_argument);
  cs.joints = 3;
  cs.revolute = -1;
  EXPECT_THROW(randomChain(cs, 1), std::invalid_argument);
  cs.revolute = 1;
  cs.min_length = 0.5;
  cs.max_length = 0.1;
  EXPECT_THROW(randomChain(cs, 1), std::invalid_argument);
  TreeSpec ts;
  ts.trunk = 0;
  EXPECT_THROW(randomTree(ts, 1), std::invalid_argument);
  ts.trunk = 1;
  ts.levels = 9;
  ts.branches = 10;
  EXPECT_THROW(randomTree(ts, 1), std::invalid_argument);
  const auto m = randomChain(ChainSpec{}, 1);
  GoalSetSpec gs;
  gs.type = GoalSetType::kUnreachable;
  gs.kind = GoalKind::kOrientation;
  EXPECT_THROW(makeGoals(m, gs, 1, "x"), std::invalid_argument);
  gs.kind = GoalKind::kPosition;
  gs.unreachable_factor = 1.0;
  EXPECT_THROW(makeGoals(m, gs, 1, "x"), std::invalid_argument);
  gs = GoalSetSpec{};
  gs.effectors = {"hand"};
  EXPECT_THROW(makeGoals(m, gs, 1, "x"), std::invalid_argument);
  gs.count = -1;
  gs.effectors = {};
  EXPECT_THROW(makeGoals(m, gs, 1, "x"), std::invalid_argument);
}

TEST(Generators, StartPolicies) {
  ChainSpec cs;
  cs.limit_style = LimitStyle::kRealistic;
  const auto m = randomChain(cs, 2);
  Rng rng(1);
  EXPECT_EQ(startConfiguration(*m, StartPolicy::kNominal, rng), m->middleConfiguration());
  EXPECT_EQ(startConfiguration(*m, StartPolicy::kZero, rng), m->neutralConfiguration());
  EXPECT_EQ(startConfiguration(*m, StartPolicy::kPrevious, rng), m->middleConfiguration());
  const Eigen::VectorXd r = startConfiguration(*m, StartPolicy::kRandom, rng);
  EXPECT_TRUE(withinLimits(*m, r));
  EXPECT_NE(r, m->middleConfiguration());
  EXPECT_NE(m->middleConfiguration(), m->neutralConfiguration());  // asymmetric limits
}

TEST(GoalSets, ReachableTargetsAreFkOfConfigurationsWithinLimitsAndSolvable) {
  ChainSpec cs;
  cs.limit = 2.5;
  TreeSpec ts;
  ts.joint.limit = 2.5;
  auto dls = Registry::global().create("dls:restarts=20");
  SolverOptions o;
  for (const auto& model : {randomChain(cs, 8), randomTree(ts, 8)}) {
    GoalSetSpec gs;
    gs.count = 10;
    gs.kind = model->isChain() ? GoalKind::kPose : GoalKind::kPosition;
    const auto problems = makeGoals(model, gs, 3, "r");
    int converged = 0;
    for (const Problem& p : problems) {
      EXPECT_EQ(p.q0, model->middleConfiguration());
      EXPECT_EQ(p.goals.size(), model->isChain() ? 1u : 3u);
      Eigen::VectorXd q = p.q0;
      if (!dls->solve(p, q, o).converged()) continue;
      ++converged;
      Data d(*model);
      forwardKinematics(*model, q, d);
      const GoalErrors e = evaluateGoals(*model, p.goals, d);
      EXPECT_LE(e.position, o.position_tolerance);
      EXPECT_LE(e.orientation, o.orientation_tolerance);
      EXPECT_TRUE(withinLimits(*model, q));
    }
    EXPECT_GE(converged, 9) << model->name();
  }
}

TEST(GoalSets, UnreachableTargetsAreBeyondReachAndNeverConverge) {
  ChainSpec cs;
  cs.prismatic = 0.3;
  const auto m = randomChain(cs, 4);
  const double reach = reachBound(*m, m->bodyIndex("tip"));
  double links = 0.0;
  for (int j = 1; j < m->numJoints(); ++j) links += m->parentTJoint(j).p.norm();
  EXPECT_GE(reach, links);
  GoalSetSpec gs;
  gs.count = 10;
  gs.type = GoalSetType::kUnreachable;
  gs.unreachable_factor = 1.2;
  auto dls = Registry::global().create("dls:restarts=3");
  SolverOptions o;
  Data d(*m);
  for (const Problem& p : makeGoals(m, gs, 2, "u")) {
    // The first joint sits at the origin of the chain.
    EXPECT_NEAR(p.goals[0].target_position.norm(), 1.2 * reach, 1e-9);
    Eigen::VectorXd q = p.q0;
    EXPECT_FALSE(dls->solve(p, q, o).converged());
    forwardKinematics(*m, q, d);
    EXPECT_LE(d.world_T_body.back().p.norm(), reach + 1e-9);
  }
}

TEST(GoalSets, NearSingularTargetsAreNearFullStretchAndStartStraight) {
  ChainSpec cs;
  cs.joints = 6;
  const auto m = randomChain(cs, 6);
  const double reach = reachBound(*m, m->bodyIndex("tip"));
  GoalSetSpec gs;
  gs.count = 10;
  gs.type = GoalSetType::kNearSingular;
  gs.perturbation = 0.05;
  Data d(*m);
  for (const Problem& p : makeGoals(m, gs, 5, "s")) {
    EXPECT_EQ(p.q0, m->neutralConfiguration());
    const double dist = p.goals[0].target_position.norm();
    EXPECT_LE(dist, reach + 1e-12);
    EXPECT_GE(dist, 0.97 * reach);
    // The straight start is singular: the tip cannot move along the chain.
    forwardKinematics(*m, p.q0, d);
    goalJacobian(*m, p.goals, d);
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(d.J.topRows(3));
    EXPECT_LT(svd.singularValues()[2], 1e-12);
  }
}

TEST(GoalSets, TrajectoryTargetsMoveSmoothly) {
  ChainSpec cs;
  cs.limit = 2.0;
  const auto m = randomChain(cs, 7);
  GoalSetSpec gs;
  gs.count = 30;
  gs.type = GoalSetType::kTrajectory;
  gs.kind = GoalKind::kPose;
  gs.trajectory_step = 0.02;
  const auto ps = makeGoals(m, gs, 1, "t");
  ASSERT_EQ(ps.size(), 30u);
  const double reach = reachBound(*m, m->bodyIndex("tip"));
  Data d(*m);
  for (size_t k = 1; k < ps.size(); ++k) {
    // Each DOF moves by at most 0.02 rad: the tip by at most 7 * 0.02 * reach.
    const double step = (ps[k].goals[0].target_position - ps[k - 1].goals[0].target_position).norm();
    EXPECT_LE(step, 7 * 0.02 * reach);
    // q0 of problem k is the configuration behind target k - 1.
    EXPECT_TRUE(withinLimits(*m, ps[k].q0));
    forwardKinematics(*m, ps[k].q0, d);
    EXPECT_LT((d.world_T_body.back().p - ps[k - 1].goals[0].target_position).norm(), 1e-12);
  }
}

TEST(GoalSets, NamedEffectorsAndOrientationScale) {
  TreeSpec ts;
  const auto m = randomTree(ts, 3);
  GoalSetSpec gs;
  gs.count = 2;
  gs.kind = GoalKind::kPose;
  gs.effectors = {"tip2", "tip0"};
  gs.orientation_scale = 0.3;
  const auto ps = makeGoals(m, gs, 1, "e");
  ASSERT_EQ(ps[0].goals.size(), 2u);
  EXPECT_EQ(ps[0].goals[0].body, m->bodyIndex("tip2"));
  EXPECT_EQ(ps[0].goals[1].body, m->bodyIndex("tip0"));
  EXPECT_EQ(ps[0].goals[0].orientation_scale, 0.3);
  EXPECT_EQ(ps[1].name, "e1");
}

TEST(GoalSets, EnumNamesRoundTrip) {
  for (auto s : {StartPolicy::kNominal, StartPolicy::kZero, StartPolicy::kRandom, StartPolicy::kPrevious})
    EXPECT_EQ(kStartPolicyNames.parse(toString(s)), s);
  for (auto t :
       {GoalSetType::kReachable, GoalSetType::kUnreachable, GoalSetType::kNearSingular, GoalSetType::kTrajectory})
    EXPECT_EQ(kGoalSetTypeNames.parse(toString(t)), t);
  for (auto a : {AxisStyle::kRandom, AxisStyle::kAlternating, AxisStyle::kPlanar})
    EXPECT_EQ(kAxisStyleNames.parse(toString(a)), a);
  for (auto l : {LimitStyle::kNone, LimitStyle::kSymmetric, LimitStyle::kRealistic})
    EXPECT_EQ(kLimitStyleNames.parse(toString(l)), l);
  EXPECT_EQ(kGoalKindNames.parse("pose"), GoalKind::kPose);
  try {
    kGoalKindNames.parse("posture");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("position, orientation, pose"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ikbench
