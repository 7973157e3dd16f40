// Hot-path timings: forward kinematics, and FK + goal errors + Jacobian (the
// kinematics of one Jacobian-family iteration), on random chains.
//
//   ./bench_kinematics --benchmark_out=kin.json --benchmark_out_format=json
//
// Case names say every argument by name:
//   ForwardKinematics/dof:<n>/joint:<revolute|ball|prismatic>
//   FkErrorsJacobian/dof:<n>/joint:<revolute|ball>/goal:<position|pose>
//   KernelFkErrorsJacobian/dof:<n>/step:<packed|lanes>/goal:<position|pose>
//       the same evaluation of the same revolute chain in the compiled chain
//       kernel (KernelEvaluator): the one-problem step packed within the
//       problem, or the lane step (four lanes at the cost of one; one busy)
// Counter: dof (tangent DOFs of the chain).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/batch.h"
#include "bench_main.h"

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

void forwardKinematicsCase(benchmark::State& state, int dof, JointType type) {
  const Fixture f = makeFixture(dof, type, GoalKind::kPose);
  Data d(*f.model);
  for (auto _ : state) {
    forwardKinematics(*f.model, f.q, d);
    benchmark::DoNotOptimize(d.world_T_body.back().p.data());
  }
  state.counters["dof"] = f.model->nv();
}

void fkErrorsJacobianCase(benchmark::State& state, int dof, JointType type, GoalKind kind) {
  const Fixture f = makeFixture(dof, type, kind);
  Data d(*f.model);
  for (auto _ : state) {
    forwardKinematics(*f.model, f.q, d);
    evaluateGoals(*f.model, f.goals, d);
    goalJacobian(*f.model, f.goals, d);
    benchmark::DoNotOptimize(d.J.data());
  }
  state.counters["dof"] = f.model->nv();
}

void kernelFkErrorsJacobianCase(benchmark::State& state, int dof, bool packed, GoalKind kind) {
  const Fixture f = makeFixture(dof, JointType::kRevolute, kind);
  Problem p;
  p.model = f.model;
  p.goals = f.goals;
  p.q0 = f.q;
  KernelEvaluator k(p, packed);
  for (auto _ : state) {
    k.evaluate(f.q);
    benchmark::DoNotOptimize(k.positionError());
  }
  state.counters["dof"] = f.model->nv();
}

void registerAll() {
  for (int dof : {7, 30, 100, 1000})
    for (JointType type : {JointType::kRevolute, JointType::kBall, JointType::kPrismatic})
      benchmark::RegisterBenchmark(
          fmt::format("ForwardKinematics/dof:{}/joint:{}", dof, toString(type)).c_str(),
          [dof, type](benchmark::State& s) { forwardKinematicsCase(s, dof, type); });
  for (int dof : {7, 30, 100, 1000})
    for (JointType type : {JointType::kRevolute, JointType::kBall})
      for (GoalKind kind : {GoalKind::kPosition, GoalKind::kPose})
        benchmark::RegisterBenchmark(
            fmt::format("FkErrorsJacobian/dof:{}/joint:{}/goal:{}", dof, toString(type), toString(kind)).c_str(),
            [dof, type, kind](benchmark::State& s) { fkErrorsJacobianCase(s, dof, type, kind); });
  for (int dof : {6, 7, 16})
    for (bool packed : {true, false})
      for (GoalKind kind : {GoalKind::kPosition, GoalKind::kPose})
        benchmark::RegisterBenchmark(fmt::format("KernelFkErrorsJacobian/dof:{}/step:{}/goal:{}", dof,
                                                 packed ? "packed" : "lanes", toString(kind))
                                         .c_str(),
                                     [dof, packed, kind](benchmark::State& s) {
                                       kernelFkErrorsJacobianCase(s, dof, packed, kind);
                                     });
}

}  // namespace
}  // namespace ikbench

IKBENCH_BENCHMARK_MAIN()
