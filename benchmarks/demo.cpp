// A small demo: every registered solver on a few random 7-DOF chains.
#include <fmt/format.h>

#include <algorithm>

#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/registry.h"

int main() {
  using namespace ikbench;
  ChainSpec cs;
  cs.joints = 7;
  cs.limit = 2.5;
  SolverOptions options;
  fmt::print("{:<12} {:>6} {:>9} {:>10} {:>12}\n", "solver", "goal", "success", "med. iter", "med. time us");
  for (const SolverInfo& info : Registry::global().list()) {
    for (GoalKind kind : {GoalKind::kPosition, GoalKind::kPose}) {
      auto solver = Registry::global().create(info.name);
      int ok = 0, n = 0;
      std::vector<double> iters, times;
      for (std::uint64_t seed = 0; seed < 5; ++seed) {
        GoalSetSpec gs;
        gs.count = 40;
        gs.kind = kind;
        for (const Problem& p : reachableGoals(randomChain(cs, seed), gs, seed, "demo")) {
          const Summary s = solver->solve(p, options);
          ok += s.converged();
          ++n;
          iters.push_back(s.iterations);
          times.push_back(s.time_us);
        }
      }
      std::nth_element(iters.begin(), iters.begin() + n / 2, iters.end());
      std::nth_element(times.begin(), times.begin() + n / 2, times.end());
      fmt::print("{:<12} {:>6} {:>8.1f}% {:>10.0f} {:>12.1f}\n", info.name, toString(kind), 100.0 * ok / n,
                 iters[n / 2], times[n / 2]);
    }
  }
  return 0;
}
