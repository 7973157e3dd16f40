// C++ reference values for the Python binding tests and the overhead figure,
// computed with the libraries directly (no Python involved).
//
//   ikbench_py_reference fk URDF BASE TIP BODY SEED COUNT
//     For k = 0..COUNT-1: q = randomConfiguration(model, Rng(SEED + k)) and the
//     world pose of BODY under q. One line per k: the nq entries of q, the
//     position (3) and the rotation matrix (9, row-major), "%.17g". BASE and
//     TIP may be "-" (whole tree).
//   ikbench_py_reference solve URDF SPEC COUNT SEED REPEATS
//     COUNT reachable pose targets of the URDF's single effector
//     (makeGoals, reachable, seed SEED; orientations passed through the
//     quaternion that ikbench.reachable_targets returns), each solved from the middle of the
//     limits with seed Rng::mix(SEED, i) by one solver on this thread, REPEATS
//     times. Prints one JSON object per repeat: wall and thread CPU seconds of
//     the loop, the sum of Summary::time_us, converged count and total
//     iterations.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/registry.h"

namespace {

using namespace ikbench;

std::uint64_t parseU64(const char* s) { return std::strtoull(s, nullptr, 10); }

// CPU time of this thread [s]: unlike the wall clock, it does not count the
// time the thread waited for a core on a shared machine.
double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int fk(int argc, char** argv) {
  if (argc != 8) {
    std::cerr << "usage: ikbench_py_reference fk URDF BASE TIP BODY SEED COUNT\n";
    return 2;
  }
  UrdfOptions o;
  if (std::string(argv[3]) != "-") o.base = argv[3];
  if (std::string(argv[4]) != "-") o.tip = argv[4];
  const UrdfModel um = loadUrdf(argv[2], o);
  const Model& model = *um.model;
  const int body = model.bodyIndex(argv[5]);
  if (body < 0) {
    std::cerr << "unknown body " << argv[5] << "\n";
    return 2;
  }
  const std::uint64_t seed = parseU64(argv[6]);
  const int count = std::atoi(argv[7]);
  for (int k = 0; k < count; ++k) {
    Rng rng(seed + static_cast<std::uint64_t>(k));
    const Eigen::VectorXd q = randomConfiguration(model, rng);
    const auto poses = forwardKinematics<double>(model, q.data());
    const Pose3d& T = poses[body];
    std::string line;
    for (int i = 0; i < q.size(); ++i) line += fmt::format("{:.17g} ", q[i]);
    for (int i = 0; i < 3; ++i) line += fmt::format("{:.17g} ", T.p[i]);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) line += fmt::format("{:.17g} ", T.R(r, c));
    line.pop_back();
    std::cout << line << "\n";
  }
  return 0;
}

int solve(int argc, char** argv) {
  if (argc != 7) {
    std::cerr << "usage: ikbench_py_reference solve URDF SPEC COUNT SEED REPEATS\n";
    return 2;
  }
  const UrdfModel um = loadUrdf(argv[2]);
  const SolverSpec spec = Registry::global().parse(argv[3]);
  const int count = std::atoi(argv[4]);
  const std::uint64_t seed = parseU64(argv[5]);
  const int repeats = std::atoi(argv[6]);
  GoalSetSpec gs;
  gs.count = count;
  gs.kind = GoalKind::kPose;
  gs.start = StartPolicy::kNominal;
  std::vector<Problem> problems = makeGoals(um.model, gs, seed, "");
  // The orientations as Python receives them (ikbench.reachable_targets: a
  // unit quaternion with w >= 0) and solve_batch reads them back, so that
  // both sides solve bit-identical targets.
  for (Problem& p : problems) {
    for (Goal& g : p.goals) {
      Eigen::Quaterniond q(g.target_orientation);
      q.normalize();
      if (q.w() < 0) q.coeffs() = -q.coeffs();
      g.target_orientation = Eigen::Quaterniond(q.w(), q.x(), q.y(), q.z()).normalized().toRotationMatrix();
    }
  }
  auto solver = Registry::global().create(spec);
  SolverOptions options;
  Eigen::VectorXd q;
  for (int r = 0; r < repeats; ++r) {
    long converged = 0, iterations = 0;
    double solve_us = 0.0;
    const double cpu0 = threadCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i) {
      q = problems[i].q0;
      options.seed = Rng::mix(seed, static_cast<std::uint64_t>(i));
      const Summary s = solver->solve(problems[i], q, options);
      converged += s.converged();
      iterations += s.iterations;
      solve_us += s.time_us;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = threadCpuSeconds() - cpu0;
    std::cout << fmt::format(
        "{{\"solves\": {}, \"wall_s\": {:.9g}, \"cpu_s\": {:.9g}, \"sum_time_us\": {:.9g}, \"converged\": {}, "
        "\"iterations\": {}}}\n",
        count, wall, cpu, solve_us, converged, iterations);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::string(argv[1]) == "fk") return fk(argc, argv);
    if (argc >= 2 && std::string(argv[1]) == "solve") return solve(argc, argv);
    std::cerr << "usage: ikbench_py_reference fk|solve ...\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ikbench_py_reference: " << e.what() << "\n";
    return 1;
  }
}
