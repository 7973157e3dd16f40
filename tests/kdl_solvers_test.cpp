// The Orocos KDL backends: chain conversion (FK agreement with ikbench on
// random chains and real URDF arms), convergence checked by FK and limits,
// unsupported problems, restarts, iteration counts and the trace.
#include <gtest/gtest.h>

#include <kdl/chainfksolverpos_recursive.hpp>

#include <cmath>
#include <filesystem>

#include "../solvers/src/kdl/kdl_chain.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::expectReached;
using test::poseProblems;

// Max difference between ikbench's and KDL's FK of the effector frame of
// `body` (+ point) over random configurations; returns the number compared.
int compareFk(const Model& model, int body, const Eigen::Vector3d& point, std::uint64_t seed, double* max_err) {
  kdl::KdlChain chain;
  std::string why;
  EXPECT_TRUE(kdl::buildKdlChain(model, body, point, &chain, &why)) << model.name() << ": " << why;
  if (!why.empty()) return 0;
  KDL::ChainFkSolverPos_recursive fk(chain.chain);
  Data d(model);
  Rng rng(seed);
  KDL::JntArray kq(chain.chain.getNrOfJoints());
  int n = 0;
  for (int t = 0; t < 50; ++t) {
    const Eigen::VectorXd q = randomConfiguration(model, rng);
    for (size_t k = 0; k < chain.q_index.size(); ++k) kq(k) = q[chain.q_index[k]];
    KDL::Frame f;
    EXPECT_GE(fk.JntToCart(kq, f), 0);
    forwardKinematics(model, q, d);
    const Pose3d k = kdl::fromKdl(f);
    const Eigen::Vector3d p = d.world_T_body[body].act(point);
    *max_err = std::max(*max_err, (k.p - p).cwiseAbs().maxCoeff());
    *max_err = std::max(*max_err, (k.R - d.world_T_body[body].R).cwiseAbs().maxCoeff());
    ++n;
  }
  return n;
}

TEST(KdlChain, FkAgreesWithIkbenchOnRandomChains) {
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    ChainSpec cs;
    cs.joints = 5 + static_cast<int>(seed);
    cs.prismatic = 0.3;  // some prismatic joints
    cs.limit = 2.5;
    const auto model = randomChain(cs, seed);
    double err = 0.0;
    EXPECT_EQ(compareFk(*model, model->numJoints() - 1, Eigen::Vector3d(0.01, 0.02, -0.03), seed, &err), 50);
    EXPECT_LE(err, 1e-12) << model->name();
  }
  // Rest rotations and fixed joints in the middle of the path fold into the tips.
  std::vector<JointSpec> js;
  Rng rng(5);
  for (int i = 0; i < 6; ++i) {
    JointSpec j;
    j.name = "j" + std::to_string(i);
    j.parent = i - 1;
    j.type = i == 2 ? JointType::kFixed : (i == 4 ? JointType::kPrismatic : JointType::kRevolute);
    j.parent_T_joint.R = Eigen::Matrix3d(rng.rotation());
    j.parent_T_joint.p = Eigen::Vector3d(rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), 0.1);
    j.axis = rng.unitVector();
    js.push_back(j);
  }
  const Model model(js, "rotated");
  double err = 0.0;
  compareFk(model, 5, Eigen::Vector3d::Zero(), 9, &err);
  EXPECT_LE(err, 1e-12);
}

TEST(KdlChain, FkAgreesWithIkbenchOnRealArms) {
  // (file, base, tip) of serial arms; the shipped robots too when present.
  struct UrdfArm {
    std::string file, base, tip;
  };
  const std::string shared = test::corpusFile("robots/");
  std::vector<UrdfArm> arms = {{shared + "ur5.urdf", "base_link", "tool0"},
                           {shared + "abb_irb2400.urdf", "base_link", "tool0"},
                           {shared + "kuka_kr210l150.urdf", "base_link", "tool0"},
                           {shared + "kuka_lbr_iiwa_14_r820.urdf", "base_link", "tool0"},
                           {shared + "panda.urdf", "panda_link0", "panda_hand_tcp"},
                           {shared + "kinova_gen3_7dof.urdf", "base_link", "end_effector_link"},
                           {shared + "sawyer.urdf", "base", "right_hand"},
                           {shared + "baxter.urdf", "base", "left_gripper"},
                           {shared + "pr2.urdf", "base_footprint", "l_gripper_tool_frame"}};
  // Without the external corpus (a fresh clone) only the shipped robots are compared.
  const bool corpus = std::filesystem::is_directory(shared);
  if (!corpus) {
    std::cout << "the external corpus " << shared << " is absent (set IKBENCH_CORPUS_DIR): shipped robots only\n";
    arms.clear();
  }
  const std::filesystem::path shipped = std::filesystem::path(IKBENCH_SOURCE_DIR) / "scenarios/data/robots";
  int shipped_count = 0;
  if (std::filesystem::is_directory(shipped))
    for (const auto& e : std::filesystem::directory_iterator(shipped))
      if (e.path().extension() == ".urdf") {
        arms.push_back({e.path().string(), "", ""});
        ++shipped_count;
      }
  int compared = 0;
  for (const UrdfArm& arm : arms) {
    UrdfOptions uo;
    uo.base = arm.base;
    uo.tip = arm.tip;
    const UrdfModel um = loadUrdf(arm.file, uo);
    const Model& model = *um.model;
    // Every leaf body moved by a joint (for a base->tip chain: the tip).
    for (int leaf : model.leaves()) {
      if (model.supportingJoints(leaf).empty()) continue;
      double err = 0.0;
      compared += compareFk(model, leaf, Eigen::Vector3d(0.0, 0.0, 0.05), 17, &err);
      EXPECT_LE(err, 1e-12) << arm.file << " leaf " << model.bodyName(leaf);
    }
  }
  EXPECT_GE(compared, 50 * (corpus ? 9 : shipped_count));
  EXPECT_GE(shipped_count, 3);
  std::cout << "compared " << compared << " configurations on " << arms.size() << " arms (" << shipped_count
            << " shipped)\n";
}

TEST(KdlChain, BallJointsAndBodiesWithoutJointsAreRejected) {
  ChainSpec cs;
  cs.joints = 4;
  cs.ball = 1.0;
  cs.revolute = 0.0;
  const auto model = randomChain(cs, 1);
  kdl::KdlChain chain;
  std::string why;
  EXPECT_FALSE(kdl::buildKdlChain(*model, model->numJoints() - 1, Eigen::Vector3d::Zero(), &chain, &why));
  EXPECT_NE(why.find("ball"), std::string::npos) << why;
  std::vector<JointSpec> js = {test::fixed("base", -1, {0, 0, 1})};
  const Model rigid(js);
  EXPECT_FALSE(kdl::buildKdlChain(rigid, 0, Eigen::Vector3d::Zero(), &chain, &why));
  EXPECT_NE(why.find("no revolute or prismatic"), std::string::npos) << why;
}

TEST(KdlSolvers, ConvergeOnReachableRandomChainsCheckedByFk) {
  SolverOptions o;
  for (const char* spec : {"kdl-lma:restarts=20", "kdl-nr-jl:restarts=20"}) {
    auto solver = Registry::global().create(spec);
    int converged = 0, total = 0;
    for (int joints : {6, 7}) {
      const std::vector<Problem> problems = poseProblems(joints, 3, 4);
      total += static_cast<int>(problems.size());
      converged += test::solveAllChecked(
          *solver, problems, o, spec,
          [](const Summary& s) {
            EXPECT_GT(s.fk_evals, s.iterations);
            EXPECT_GT(s.jacobian_evals, 0);
          },
          test::expectMessage);
    }
    // Measured: kdl-lma 24/24, kdl-nr-jl 14/24 (undamped Newton steps
    // clamped at the limits often cycle; 1/24 without restarts).
    EXPECT_GE(converged, std::string(spec).starts_with("kdl-lma") ? 22 : 12) << spec << ": " << converged << "/"
                                                                              << total;
  }
}

TEST(KdlSolvers, LmaSolvesPositionAndOrientationOnlyGoalsWithZeroWeights) {
  SolverOptions o;
  auto lma = Registry::global().create("kdl-lma:restarts=5");
  for (GoalKind kind : {GoalKind::kPosition, GoalKind::kOrientation}) {
    const int converged = test::solveAllChecked(*lma, poseProblems(7, 2, 4, kind), o, "kdl-lma");
    EXPECT_GE(converged, 7) << toString(kind);
  }
}

TEST(KdlSolvers, UnsupportedProblemsSayWhy) {
  SolverOptions o;
  auto lma = Registry::global().create("kdl-lma");
  auto nr = Registry::global().create("kdl-nr-jl");
  // Ball joints.
  ChainSpec cs;
  cs.joints = 4;
  cs.ball = 1.0;
  cs.revolute = 1.0;
  cs.limit = 1.0;
  std::shared_ptr<const Model> ball_model;
  for (std::uint64_t seed = 0; !ball_model; ++seed) {
    auto m = randomChain(cs, seed);
    if (m->hasJointType(JointType::kBall)) ball_model = m;
  }
  GoalSetSpec gs;
  gs.count = 1;
  gs.kind = GoalKind::kPose;
  const Problem ball = reachableGoals(ball_model, gs, 1, "ball")[0];
  Eigen::VectorXd q = ball.q0;
  Summary s = lma->solve(ball, q, o);
  EXPECT_EQ(s.status, Status::kUnsupported);
  EXPECT_NE(s.message.find("ball"), std::string::npos) << s.message;
  EXPECT_EQ(q, ball.q0);
  // Two goals (a tree with two effectors).
  Problem two = poseProblems(6, 1, 1)[0];
  two.goals.push_back(two.goals[0]);
  two.goals[1].body = two.goals[0].body - 2;
  s = nr->solve(two, q = two.q0, o);
  EXPECT_EQ(s.status, Status::kUnsupported);
  EXPECT_NE(s.message.find("2 goals"), std::string::npos) << s.message;
  // NR_JL has no task weights: a position-only goal is not its problem.
  const Problem pos = poseProblems(6, 1, 1, GoalKind::kPosition)[0];
  s = nr->solve(pos, q = pos.q0, o);
  EXPECT_EQ(s.status, Status::kUnsupported);
  EXPECT_NE(s.message.find("6-D frame"), std::string::npos) << s.message;
  EXPECT_THROW(Registry::global().create("kdl-lma:rot_weight=0"), SpecError);
}

TEST(KdlSolvers, RestartsApplyAndIterationsTraceAndCapAreReported) {
  SolverOptions o;
  const auto problems = poseProblems(7, 3, 4);
  // Restarts: every problem the single attempt solves is still solved, and
  // some problem needs (and gets) restarts.
  for (const char* base : {"kdl-lma", "kdl-nr-jl"}) {
    auto single = Registry::global().create(base);
    auto multi = Registry::global().create(std::string(base) + ":restarts=20");
    int ok1 = 0, ok2 = 0, restarted = 0;
    for (const Problem& p : problems) {
      Eigen::VectorXd q1 = p.q0, q2 = p.q0;
      const Summary a = single->solve(p, q1, o);
      const Summary b = multi->solve(p, q2, o);
      ok1 += a.converged();
      ok2 += b.converged();
      if (b.restarts > 0) ++restarted;
      if (a.converged()) {
        EXPECT_TRUE(b.converged());
        EXPECT_EQ(b.restarts, 0);
      }
      EXPECT_EQ(a.restarts, 0);
    }
    EXPECT_GT(ok2, ok1) << base;
    EXPECT_GT(restarted, 0) << base;
  }
  // NR_JL: one trace record per iteration, the cap honoured exactly.
  o.record_trace = true;
  auto nr = Registry::global().create("kdl-nr-jl");
  int checked = 0;
  for (const Problem& p : problems) {
    Eigen::VectorXd q = p.q0;
    const Summary s = nr->solve(p, q, o);
    ASSERT_EQ(static_cast<int>(s.trace.size()), s.iterations + 1);
    if (s.converged()) {
      EXPECT_LE(s.trace.back().position_error, o.position_tolerance);
      EXPECT_EQ(s.jacobian_evals, s.iterations);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  auto capped = Registry::global().create("kdl-nr-jl:max_iterations=3");
  Eigen::VectorXd q = problems[0].q0;
  Summary s = capped->solve(problems[0], q, o);
  EXPECT_EQ(s.status, Status::kMaxIterations);
  EXPECT_EQ(s.iterations, 3);
  // LMA: KDL's iteration count, start and end in the trace.
  auto lma = Registry::global().create("kdl-lma");
  q = problems[0].q0;
  s = lma->solve(problems[0], q, o);
  EXPECT_GT(s.iterations, 1);
  ASSERT_EQ(s.trace.size(), 2u);
  EXPECT_EQ(s.trace.back().iteration, s.iterations);
  EXPECT_GE(s.fk_evals, s.iterations);
}

}  // namespace
}  // namespace ikbench
