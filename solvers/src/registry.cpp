#include "ikbench/solvers/registry.h"

#include <fmt/format.h>

#include <algorithm>

namespace ikbench {

const std::vector<ParamSpec>& Registry::commonParams() {
  static const std::vector<ParamSpec> common = {
      {"restarts", ParamType::kInt, "0",
       "random restarts from seeded random configurations within limits after an attempt fails "
       "(stall, cap, or numerical failure), until the budget ends"},
      {"budget_us", ParamType::kDouble, "-1",
       "wall-clock budget of the whole solve in microseconds (restarts included); -1 keeps the run's setting, 0 = none"},
      {"max_iters", ParamType::kInt, "-1", "iteration cap per attempt; -1 keeps the run's setting"},
  };
  return common;
}

Registry& Registry::global() {
  static Registry* registry = [] {
    auto* r = new Registry();
    registerJacobianSolvers(*r);
    registerGeometricSolvers(*r);
    registerCeresSolvers(*r);
    registerKdlSolvers(*r);
    return r;
  }();
  return *registry;
}

void Registry::add(SolverInfo info) {
  std::lock_guard lock(mutex_);
  if (info.name.empty() || info.name.find_first_of(":,= \t") != std::string::npos)
    throw SpecError(fmt::format("solver name '{}' must be non-empty without ':', ',', '=' or blanks", info.name));
  if (!info.factory) throw SpecError(fmt::format("solver '{}' has no factory", info.name));
  for (const auto& existing : infos_)
    if (existing.name == info.name) throw SpecError(fmt::format("solver '{}' is already registered", info.name));
  for (const ParamSpec& p : info.params)
    for (const ParamSpec& c : commonParams())
      if (p.name == c.name)
        throw SpecError(fmt::format("solver '{}': parameter '{}' clashes with a common key", info.name, p.name));
  infos_.push_back(std::move(info));
}

bool Registry::contains(std::string_view name) const {
  std::lock_guard lock(mutex_);
  return std::any_of(infos_.begin(), infos_.end(), [&](const SolverInfo& i) { return i.name == name; });
}

std::vector<SolverInfo> Registry::list() const {
  std::lock_guard lock(mutex_);
  std::vector<SolverInfo> out = infos_;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::unique_ptr<Solver> Registry::create(std::string_view spec) const {
  std::string name;
  std::map<std::string, std::string> given;
  parseSpec(spec, &name, &given);
  SolverInfo info;
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(infos_.begin(), infos_.end(), [&](const SolverInfo& i) { return i.name == name; });
    if (it == infos_.end()) {
      std::string known;
      for (const auto& i : infos_) known += (known.empty() ? "" : ", ") + i.name;
      throw SpecError(fmt::format("unknown solver '{}' in spec '{}' (known: {})", name, spec, known));
    }
    info = *it;
  }
  std::map<std::string, std::string> own, common;
  for (const auto& [k, v] : given) {
    const bool is_common = std::any_of(commonParams().begin(), commonParams().end(),
                                       [&](const ParamSpec& c) { return c.name == k; });
    (is_common ? common : own)[k] = v;
  }
  std::vector<ParamSpec> all = info.params;
  all.insert(all.end(), commonParams().begin(), commonParams().end());
  Params checked(name, all, given);  // validates every key and value, with the full list of keys
  Params own_params(name, info.params, own);
  Params common_params(name, commonParams(), common);
  std::unique_ptr<Solver> solver = info.factory(own_params);
  std::string canonical(spec);
  while (!canonical.empty() && (canonical.front() == ' ' || canonical.front() == '\t')) canonical.erase(0, 1);
  while (!canonical.empty() && (canonical.back() == ' ' || canonical.back() == '\t')) canonical.pop_back();
  solver->configure(canonical, common_params);
  return solver;
}

}  // namespace ikbench
