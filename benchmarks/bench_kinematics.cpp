// Hot-path timings: forward kinematics and the geometric Jacobian.
//   ./bench_kinematics --benchmark_out=kin.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/scenarios/generators.h"

namespace ikbench {
namespace {

struct Fixture {
  std::shared_ptr<const Model> model;
  std::vector<Goal> goals;
  Eigen::VectorXd q;
};

Fixture makeFixture(int dof, JointType type, GoalKind kind) {
  ChainSpec cs;
  cs.joints = dof;
  cs.revolute = type == JointType::kRevolute;
  cs.ball = type == JointType::kBall;
  cs.prismatic = type == JointType::kPrismatic;
  Fixture f;
  f.model = randomChain(cs, 1);
  GoalSetSpec gs;
  gs.count = 1;
  gs.kind = kind;
  gs.start = StartPolicy::kRandom;
  const Problem p = reachableGoals(f.model, gs, 2, "b").front();
  f.goals = p.goals;
  f.q = p.q0;
  return f;
}

JointType typeArg(int64_t t) { return t == 0 ? JointType::kRevolute : t == 1 ? JointType::kBall : JointType::kPrismatic; }
const char* typeName(int64_t t) { return t == 0 ? "revolute" : t == 1 ? "ball" : "prismatic"; }

void BM_ForwardKinematics(benchmark::State& state) {
  const Fixture f = makeFixture(static_cast<int>(state.range(0)), typeArg(state.range(1)), GoalKind::kPose);
  Data d(*f.model);
  for (auto _ : state) {
    forwardKinematics(*f.model, f.q, d);
    benchmark::DoNotOptimize(d.world_T_body.back().p.data());
  }
  state.counters["dof"] = f.model->nv();
  state.SetLabel(typeName(state.range(1)));
}
BENCHMARK(BM_ForwardKinematics)->ArgsProduct({{7, 30, 100, 1000}, {0, 1, 2}});

// FK + goal errors + pose Jacobian: the per-iteration kinematics of every
// Jacobian-family solver. Target: a few hundred ns at 7 DOF.
void BM_FkAndPoseJacobian(benchmark::State& state) {
  const GoalKind kind = state.range(2) == 0 ? GoalKind::kPosition : GoalKind::kPose;
  const Fixture f = makeFixture(static_cast<int>(state.range(0)), typeArg(state.range(1)), kind);
  Data d(*f.model);
  for (auto _ : state) {
    forwardKinematics(*f.model, f.q, d);
    evaluateGoals(*f.model, f.goals, d);
    goalJacobian(*f.model, f.goals, d);
    benchmark::DoNotOptimize(d.J.data());
  }
  state.counters["dof"] = f.model->nv();
  state.SetLabel(std::string(typeName(state.range(1))) + (kind == GoalKind::kPose ? "/pose" : "/position"));
}
BENCHMARK(BM_FkAndPoseJacobian)->ArgsProduct({{7, 30, 100, 1000}, {0, 1}, {0, 1}});

}  // namespace
}  // namespace ikbench

BENCHMARK_MAIN();
