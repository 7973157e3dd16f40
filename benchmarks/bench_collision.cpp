// The cost of collision queries (docs/collision.md): one exact FCL query of a
// capsule pair and of a capsule-box pair against the inner-loop closed forms
// of the same pairs, and, on the UR5 in the shipped workcell, a whole exact
// check (every pair, FCL), the solvers' check (inner loop first, FCL for the
// pairs it cannot clear) and the inner-loop distances one collision=avoid
// step computes. Interleave repetitions when the machine is shared:
//   bench_collision --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
#include <fcl/geometry/shape/box.h>
#include <fcl/geometry/shape/capsule.h>
#include <fcl/narrowphase/distance.h>
#include <fmt/format.h>

#include "bench_main.h"
#include "ikbench/collision/world.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/scenarios/scene.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/scenarios/urdf.h"

namespace ikbench {
namespace {

// Capsule a (radius 0.05, length 0.3) and, 0.2 m away, capsule or box b.
struct PairFixture {
  Pose3d ta, tb;
  PairFixture() {
    ta.R = Eigen::AngleAxisd(0.4, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
    tb.p = Eigen::Vector3d(0.35, 0.1, 0.05);
    tb.R = Eigen::AngleAxisd(-0.7, Eigen::Vector3d(3, -1, 2).normalized()).toRotationMatrix();
  }
};

void fclPair(benchmark::State& state, bool box) {
  const PairFixture f;
  const fcl::Capsuled a(0.05, 0.3);
  const fcl::Capsuled c(0.05, 0.3);
  const fcl::Boxd b(0.2, 0.3, 0.1);
  const fcl::CollisionGeometryd* other = box ? static_cast<const fcl::CollisionGeometryd*>(&b) : &c;
  const Eigen::Isometry3d ta = f.ta.toIsometry(), tb = f.tb.toIsometry();
  for (auto _ : state) {
    fcl::DistanceRequestd req;
    fcl::DistanceResultd res;
    benchmark::DoNotOptimize(fcl::distance(&a, ta, other, tb, req, res));
  }
}

void innerLoopPair(benchmark::State& state, bool box) {
  const PairFixture f;
  const ApproxShape a = transformed(approximate(Shape::capsule("a", 0.05, 0.3, Pose3d())), f.ta);
  const ApproxShape b = transformed(
      approximate(box ? Shape::box("b", Eigen::Vector3d(0.2, 0.3, 0.1), Pose3d()) : Shape::capsule("b", 0.05, 0.3, Pose3d())),
      f.tb);
  for (auto _ : state) benchmark::DoNotOptimize(closestPoints(a.capsule, b).distance);
}

struct Workcell {
  std::shared_ptr<const CollisionWorld> world;
  std::vector<Eigen::VectorXd> qs;  // collision-free configurations
};

const Workcell& workcell() {
  static const Workcell w = [] {
    Workcell out;
    UrdfOptions o;
    o.tip = "tool0";
    const UrdfModel um = loadUrdf(dataDirectory() + "/robots/ur5.urdf", o);
    out.world = buildCollisionWorld(loadScene(dataDirectory() + "/scenes/workcell.json"), um.model, um.collision);
    Rng rng(1);
    Data d(*um.model);
    while (out.qs.size() < 64) {
      const Eigen::VectorXd q = randomConfiguration(*um.model, rng);
      forwardKinematics(*um.model, q, d);
      if (out.world->check(d).collision_free) out.qs.push_back(q);
    }
    return out;
  }();
  return w;
}

enum class Query { kExact, kSolverCheck, kAvoidDistances };

void workcellCase(benchmark::State& state, Query query) {
  const Workcell& w = workcell();
  Data d(w.world->model());
  std::vector<ClosestPoints> cp;
  size_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    forwardKinematics(w.world->model(), w.qs[i++ % w.qs.size()], d);
    state.ResumeTiming();
    switch (query) {
      case Query::kExact: benchmark::DoNotOptimize(w.world->check(d).min_clearance); break;
      case Query::kSolverCheck: benchmark::DoNotOptimize(w.world->collides(d)); break;
      case Query::kAvoidDistances:
        w.world->approximateDistances(d, w.world->avoidance().influence_distance, &cp);
        benchmark::DoNotOptimize(cp.data());
        break;
    }
  }
  state.counters["pairs"] = static_cast<double>(w.world->pairs().size());
}

void registerAll() {
  for (bool box : {false, true}) {
    const char* other = box ? "box" : "capsule";
    benchmark::RegisterBenchmark(fmt::format("PairDistance/fcl/capsule-{}", other).c_str(),
                                 [box](benchmark::State& s) { fclPair(s, box); });
    benchmark::RegisterBenchmark(fmt::format("PairDistance/inner-loop/capsule-{}", other).c_str(),
                                 [box](benchmark::State& s) { innerLoopPair(s, box); });
  }
  benchmark::RegisterBenchmark("Ur5Workcell/exact-check", [](benchmark::State& s) { workcellCase(s, Query::kExact); });
  benchmark::RegisterBenchmark("Ur5Workcell/solver-check",
                               [](benchmark::State& s) { workcellCase(s, Query::kSolverCheck); });
  benchmark::RegisterBenchmark("Ur5Workcell/avoid-distances",
                               [](benchmark::State& s) { workcellCase(s, Query::kAvoidDistances); });
}

}  // namespace
}  // namespace ikbench

IKBENCH_BENCHMARK_MAIN()
