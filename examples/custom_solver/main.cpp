// A user-defined backend, registered with ikbench's registry so that it is
// created from a spec string like every built-in one ("hill-climb:sigma=0.1")
// and judged by the same FK-based convergence check.
#include <ikbench/kinematics/config.h>
#include <ikbench/scenarios/generators.h>
#include <ikbench/solvers/registry.h>

#include <cstdio>
#include <memory>

namespace {

// The solver's options, bound to its spec keys below: the default is written
// once, here.
struct HillClimbOptions {
  double sigma = 0.2;  // initial perturbation size [rad]
};

// Stochastic hill climbing: perturb q with Gaussian noise of size sigma and
// keep the change if the residual drops; sigma shrinks on failure. Slow but
// derivative-free, which makes it a clear contrast to the Jacobian family.
class HillClimb final : public ikbench::Solver {
 public:
  explicit HillClimb(const HillClimbOptions& o) : sigma0_(o.sigma) {}

 protected:
  void solveImpl(const ikbench::Problem& problem, Eigen::VectorXd& q, ikbench::SolveContext& ctx) override {
    const ikbench::Model& model = *problem.model;
    Eigen::VectorXd dq(model.nv()), trial(q.size());
    double sigma = sigma0_;
    ikbench::GoalErrors best = ctx.evaluate(q);
    if (ctx.begin(q, best)) return;
    for (;;) {
      for (int k = 0; k < dq.size(); ++k) dq[k] = sigma * ctx.rng().normal();
      ikbench::integrate(model, q, dq, trial);
      ikbench::clampToLimits(model, trial);
      const ikbench::GoalErrors e = ctx.evaluate(trial);
      if (e.weighted_norm < best.weighted_norm) {
        q = trial;
        best = e;
        sigma *= 1.5;
      } else {
        sigma *= 0.7;
      }
      if (ctx.endIteration(q, best, dq.norm(), sigma)) return;
    }
  }

 private:
  double sigma0_;
};

}  // namespace

int main() {
  using namespace ikbench;
  OptionsBinding<HillClimbOptions> binding;
  binding.real("sigma", &HillClimbOptions::sigma, Range::above(0), "rad", "initial perturbation size");
  Registry::global().add(solverInfo("hill-climb", "stochastic hill climbing (a user's example solver)", binding,
                                    [](const HillClimbOptions& o) { return std::make_unique<HillClimb>(o); }));

  ChainSpec chain;
  chain.joints = 3;
  GoalSetSpec goals;
  goals.count = 20;
  const auto problems = reachableGoals(randomChain(chain, 1), goals, 2, "example");
  SolverOptions options;
  options.position_tolerance = 1e-3;
  options.max_iterations = 5000;
  options.stall_iterations = 0;
  for (const char* spec : {"hill-climb:sigma=0.3", "dls"}) {
    auto solver = Registry::global().create(spec);
    int converged = 0;
    for (const Problem& p : problems) converged += solver->solve(p, options).converged();
    std::printf("%-22s %2d / %zu converged\n", solver->spec().c_str(), converged, problems.size());
    if (converged == 0) return 1;  // the example must actually solve something
  }
  return 0;
}
