// Builds solvers from spec strings: `name[:key=value]...`, e.g. "dls",
// "dls:lambda=0.05:max_step=0.5", "dls-adaptive:restarts=50:budget_us=5000".
// Parameters are separated by colons so lists of specs can be separated by
// commas (`--solvers dls,ccd`).
//
// Every solver accepts the common keys below in addition to its own:
//   restarts=N     random restarts after a failed attempt (default 0)
//   budget_us=T    wall-clock budget for the whole solve [us] (default: the
//                  SolverOptions' time_budget_us)
//   max_iters=N    iteration cap per attempt (default: SolverOptions')
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ikbench/solvers/params.h"
#include "ikbench/solvers/solver.h"

namespace ikbench {

struct SolverInfo {
  std::string name;
  std::string description;  // one line, with the method's citation
  std::vector<ParamSpec> params;  // backend-specific parameters
  std::function<std::unique_ptr<Solver>(const Params&)> factory;
};

class Registry {
 public:
  // The process-wide registry, with every built-in backend registered.
  static Registry& global();

  // Registers a backend (user solvers too). Throws SpecError if the name is
  // taken or clashes with a common key.
  void add(SolverInfo info);
  // Creates a solver from a spec; throws SpecError naming the unknown solver
  // (with the known names) or the unknown parameter (with the known keys).
  std::unique_ptr<Solver> create(std::string_view spec) const;
  bool contains(std::string_view name) const;
  // All backends, sorted by name.
  std::vector<SolverInfo> list() const;
  // The keys every solver accepts (restarts, budget_us, max_iters).
  static const std::vector<ParamSpec>& commonParams();

 private:
  mutable std::mutex mutex_;
  std::vector<SolverInfo> infos_;
};

// Registration functions of the built-in families (one per source file
// family), called once by Registry::global().
void registerJacobianSolvers(Registry& registry);
void registerGeometricSolvers(Registry& registry);
void registerCeresSolvers(Registry& registry);
void registerKdlSolvers(Registry& registry);

}  // namespace ikbench
