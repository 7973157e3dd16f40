// Closed-form IK timings: analytic-6r and analytic-7r on real arms.
//
//   ./bench_analytic --benchmark_out=analytic.json --benchmark_out_format=json
//
//   SolveRobot/analytic-6r/<arm>   one whole Solver::solve (validation, the
//                                  closed form, FK verification of every
//                                  candidate, dedup, ordering): the shipped
//                                  UR5, and the corpus ABB IRB 2400 and KUKA
//                                  KR 210 when their files exist
//                                  (and the shipped Puma 560 and IRB 2400)
//   SolveRobot/analytic-7r/<arm>   the same for the shipped iiwa14 and Panda
//                                  and the synthetic 7R arm with an offset
//                                  wrist (64 samples, every solution up to 64)
//   SolveRobot/<auto spec>/<arm>   `auto` (closed form first) and
//                                  auto:closed_form=off (the numerical recipe
//                                  alone) on the 6R arms, and on perturbed
//                                  copies <arm>~<angle> (perturbedModel: every
//                                  axis tilted by <angle> rad, every joint
//                                  origin moved by <angle> x 0.1 m, seed 1 for
//                                  the shipped UR5 and IRB 2400, seed 2 for
//                                  the others), with closed_form_near at its
//                                  default and at 0.1
//   PureSolve/analytic-6r/<arm>    analytic::solve6 alone: every solution of
//                                  one pose, no verification
//   Overhead/<arm>/<part>          the parts of Solver::solve around the closed
//                                  form, each alone: validate (problem, start
//                                  configuration), fk (one FK + goal error,
//                                  done once per candidate), wrap (wrap into
//                                  limits + limit check, per candidate),
//                                  distance (configurationDistance modulo 2 pi,
//                                  per pair of kept candidates)
// Every case cycles through 64 fixed random reachable pose targets within
// limits (urdfFamily, seed 1, start at the middle of the limits). Counters:
// solutions (mean per solve), success_rate (converged and within limits).
// The corpus directory is $IKBENCH_CORPUS_DIR, else ../shared/data beside the
// source tree.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "analytic_ik.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/solvers/registry.h"
#include "bench_main.h"

namespace ikbench {
namespace {

constexpr int kProblems = 64;

struct BenchArm {
  std::string name, path, base, tip, spec;
};

std::string corpusDirectory() {
  if (const char* env = std::getenv("IKBENCH_CORPUS_DIR"); env != nullptr && *env != '\0') return env;
  return IKBENCH_SHARED_DATA_DIR;
}

void solveRobot(benchmark::State& state, const std::string& spec, const std::vector<Problem>& problems) {
  auto solver = Registry::global().create(spec);
  std::string why;
  if (!solver->supports(problems.front(), &why)) {
    state.SkipWithError(("unsupported: " + why).c_str());
    return;
  }
  SolverOptions options;
  Eigen::VectorXd q;
  size_t i = 0;
  double solutions = 0, success = 0;
  for (auto _ : state) {
    const Problem& p = problems[i++ % problems.size()];
    q = p.q0;
    const Summary s = solver->solve(p, q, options);
    solutions += s.numSolutions();
    success += s.converged() && s.within_limits;
    benchmark::DoNotOptimize(q.data());
  }
  state.counters["solutions"] = benchmark::Counter(solutions, benchmark::Counter::kAvgIterations);
  state.counters["success_rate"] = benchmark::Counter(success, benchmark::Counter::kAvgIterations);
}

// The closed form alone, on the plan analytic-6r builds for the problem.
void pureSolve(benchmark::State& state, const std::vector<Problem>& problems) {
  const Problem& p0 = problems.front();
  const Goal& g0 = p0.goals[0];
  std::vector<int> joints;
  std::string why;
  analytic::Plan6 plan;
  if (!analytic::revoluteChain(*p0.model, g0.body, 6, &joints, &why) ||
      !analytic::classify6(analytic::chainAtZero<6>(*p0.model, joints, g0.body, g0.point), &plan, &why)) {
    state.SkipWithError(("unsupported: " + why).c_str());
    return;
  }
  std::vector<std::array<double, 6>> hints(problems.size());
  for (size_t k = 0; k < problems.size(); ++k)
    for (int i = 0; i < 6; ++i) hints[k][i] = problems[k].q0[p0.model->idxQ(joints[i])];
  analytic::Solutions6 sols;
  size_t k = 0;
  double solutions = 0;
  for (auto _ : state) {
    const size_t j = k++ % problems.size();
    const Goal& g = problems[j].goals[0];
    analytic::solve6(plan, g.target_orientation, g.target_position, hints[j], &sols);
    solutions += sols.count;
    benchmark::DoNotOptimize(sols.q.data());
  }
  state.counters["solutions"] = benchmark::Counter(solutions, benchmark::Counter::kAvgIterations);
}

// The parts of Solver::solve around the closed form, one at a time.
void overhead(benchmark::State& state, const std::string& part, const std::vector<Problem>& problems) {
  const Problem& p = problems.front();
  const Model& model = *p.model;
  Data data(model);
  std::vector<Eigen::VectorXd> qs;
  for (const Problem& x : problems) qs.push_back(x.q0 + Eigen::VectorXd::Constant(model.nq(), 0.1));
  size_t i = 0;
  std::string why;
  for (auto _ : state) {
    const Eigen::VectorXd& q = qs[i++ % qs.size()];
    if (part == "validate") {
      bool ok = p.isValid(&why) && isValidConfiguration(model, q, &why);
      benchmark::DoNotOptimize(ok);
    } else if (part == "fk") {
      forwardKinematics(model, q, data);
      benchmark::DoNotOptimize(evaluateGoals(model, p.goals, data));
    } else if (part == "wrap") {
      Eigen::VectorXd c = q;
      benchmark::DoNotOptimize(wrapIntoLimits(model, c, 1e-9));
    } else {
      benchmark::DoNotOptimize(configurationDistance(model, q, qs[i % qs.size()], true));
    }
  }
}

// Pose targets on a perturbed copy of the family's arm: reachable goals of
// the perturbed model (FK of random configurations within limits), the start
// at the middle of the limits.
std::vector<Problem> perturbedProblems(const std::vector<Problem>& family, double angle, std::uint64_t seed) {
  const auto model = perturbedModel(*family.front().model, angle, 0.1 * angle, seed);
  GoalSetSpec gs;
  gs.count = kProblems;
  gs.kind = GoalKind::kPose;
  gs.effectors = {model->bodyName(family.front().goals[0].body)};
  return reachableGoals(model, gs, seed, "perturbed");
}

void registerSolve(const std::string& spec, const std::string& arm, std::shared_ptr<std::vector<Problem>> problems) {
  benchmark::RegisterBenchmark(fmt::format("SolveRobot/{}/{}", spec, arm).c_str(),
                               [spec, problems](benchmark::State& s) { solveRobot(s, spec, *problems); })
      ->Unit(benchmark::kMicrosecond);
}

void registerAll() {
  const std::filesystem::path shipped = std::filesystem::path(dataDirectory()) / "robots";
  const std::filesystem::path corpus = std::filesystem::path(corpusDirectory()) / "robots";
  const std::filesystem::path synthetic = std::filesystem::path(dataDirectory()) / "synthetic";
  const std::vector<BenchArm> arms = {
      {"ur5", (shipped / "ur5.urdf").string(), "", "", "analytic-6r"},
      {"puma560", (shipped / "puma560.urdf").string(), "", "", "analytic-6r"},
      {"irb2400", (shipped / "irb2400.urdf").string(), "", "", "analytic-6r"},
      {"abb_irb2400", (corpus / "abb_irb2400.urdf").string(), "base_link", "tool0", "analytic-6r"},
      {"kuka_kr210l150", (corpus / "kuka_kr210l150.urdf").string(), "base_link", "tool0", "analytic-6r"},
      {"iiwa14", (shipped / "iiwa14.urdf").string(), "", "", "analytic-7r"},
      {"panda", (shipped / "panda.urdf").string(), "panda_link0", "panda_hand_tcp", "analytic-7r"},
      {"offset_wrist_7r", (synthetic / "offset_wrist_7r.urdf").string(), "", "tool0", "analytic-7r"},
  };
  const std::vector<std::string> auto_specs = {"auto", "auto:closed_form=off", "auto:closed_form_near=0.1"};
  for (const BenchArm& arm : arms) {
    if (!std::filesystem::exists(arm.path)) continue;  // corpus arms only where the files are
    auto problems =
        std::make_shared<std::vector<Problem>>(urdfFamily(arm.path, arm.base, arm.tip, kProblems, /*seed=*/1).problems);
    if (problems->empty()) continue;
    registerSolve(arm.spec, arm.name, problems);
    if (arm.spec != "analytic-6r") continue;
    benchmark::RegisterBenchmark(fmt::format("PureSolve/analytic-6r/{}", arm.name).c_str(), [problems](
                                                                                                benchmark::State& s) {
      pureSolve(s, *problems);
    })->Unit(benchmark::kMicrosecond);
    for (const char* part : {"validate", "fk", "wrap", "distance"})
      benchmark::RegisterBenchmark(fmt::format("Overhead/{}/{}", arm.name, part).c_str(), [part = std::string(part),
                                                                                           problems](
                                                                                              benchmark::State& s) {
        overhead(s, part, *problems);
      })->Unit(benchmark::kMicrosecond);
    if (arm.name == "abb_irb2400") continue;  // the shipped IRB 2400 stands for it below
    for (const std::string& spec : auto_specs) registerSolve(spec, arm.name, problems);
    // Tuning set: the shipped UR5 and IRB 2400 (seed 1); evaluation set: the others (seed 2).
    const std::uint64_t seed = arm.name == "ur5" || arm.name == "irb2400" ? 1 : 2;
    for (double angle : {1e-4, 1e-3, 1e-2, 3e-2}) {
      auto perturbed = std::make_shared<std::vector<Problem>>(perturbedProblems(*problems, angle, seed));
      for (const std::string& spec : auto_specs) registerSolve(spec, fmt::format("{}~{:g}", arm.name, angle), perturbed);
    }
  }
}

}  // namespace
}  // namespace ikbench

IKBENCH_BENCHMARK_MAIN()
