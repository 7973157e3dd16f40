// The registry of backends and named presets. Builds solvers from specs
// (solver_spec.h): `Registry::global().create("dls:lambda=0.05")`.
//
// A backend registers its name, a one-line description with the method's
// source, the binding of its typed Options to spec keys (options_binding.h)
// and a factory. A preset is a named spec (`auto`), listed beside the
// backends; a spec may name a preset and override its keys
// (`auto:time_budget_us=1000`).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <string_view>
#include <utility>
#include <vector>

#include "ikbench/solvers/options_binding.h"
#include "ikbench/solvers/solver.h"
#include "ikbench/solvers/solver_spec.h"

namespace ikbench {

struct SolverInfo {
  std::string name;
  std::string description;        // one line, with the method's citation
  std::vector<ParamInfo> params;  // the backend's own keys
  // The canonical text of every own key, defaults filled in, for the given
  // values; throws SpecError for an unknown key or a bad value.
  std::function<std::vector<std::pair<std::string, std::string>>(const std::map<std::string, std::string>&)>
      resolve;
  // Creates the backend from spec.given; throws SpecError.
  std::function<std::unique_ptr<Solver>(const SolverSpec&)> factory;
};

// A SolverInfo from an Options binding and a factory `make(const Options&)`.
// Options may have `bool isValid(std::string* why) const` for rules across
// fields; it is checked after the binding's per-key ranges.
template <typename Options, typename Make>
SolverInfo solverInfo(std::string name, std::string description, OptionsBinding<Options> binding, Make make) {
  auto parse = [name, binding](const std::map<std::string, std::string>& given) {
    Options o = binding.parse(name, given);
    if constexpr (requires(const Options& x, std::string* w) { x.isValid(w); }) {
      std::string why;
      if (!o.isValid(&why)) throw SpecError(fmt::format("solver '{}': {}", name, why));
    }
    return o;
  };
  SolverInfo info;
  info.name = name;
  info.description = std::move(description);
  info.params = binding.params();
  info.resolve = [parse, binding](const std::map<std::string, std::string>& given) {
    return binding.textValues(parse(given));
  };
  info.factory = [parse, make](const SolverSpec& spec) -> std::unique_ptr<Solver> {
    // A backend whose strategy depends on the spec's common keys takes the spec too.
    if constexpr (std::is_invocable_v<Make, const Options&, const SolverSpec&>) return make(parse(spec.given), spec);
    else return make(parse(spec.given));
  };
  return info;
}

// A named spec, e.g. {"auto", "dls-adaptive:restarts=200:...", "the best general-purpose recipe"}.
struct PresetInfo {
  std::string name;
  std::string spec;  // names a backend, not a preset
  std::string description;
};

class Registry {
 public:
  // The process-wide registry, with every built-in backend and preset.
  static Registry& global();

  // Registers a backend (user solvers too). Throws SpecError if the name is
  // taken (by a backend or a preset), malformed, or a key clashes with a
  // common key.
  void add(SolverInfo info);
  // Registers a preset; its spec must parse. Throws SpecError likewise.
  void addPreset(PresetInfo preset);

  // Parses and checks a spec once: the backend (or preset) exists, every key
  // is known and every value in range. Throws SpecError naming what is wrong
  // (an unknown solver: the known names; an unknown key: the known keys).
  SolverSpec parse(std::string_view spec) const;
  // `spec` with `keys` given in addition (replacing a key it gives): resolved
  // from the spec's values, not from its text. The text shows the added keys
  // after the spec's own ("dls:restarts=4" with library=64 reads
  // "dls:restarts=4:library=64"), so results and logs name what ran.
  SolverSpec with(const SolverSpec& spec, const std::map<std::string, std::string>& keys) const;
  std::unique_ptr<Solver> create(const SolverSpec& spec) const;
  std::unique_ptr<Solver> create(std::string_view spec) const { return create(parse(spec)); }

  bool contains(std::string_view name) const;  // a backend or a preset
  // All backends, sorted by name.
  std::vector<SolverInfo> list() const;
  std::vector<PresetInfo> presets() const;
  // The keys every solver accepts (restarts, time_budget_us, max_iterations, stall_iterations,
  // stall_relative_improvement, solutions).
  static std::vector<ParamInfo> commonParams();

 private:
  // Checks `given` (own and common keys, canonical names) against the
  // backend spec->name and fills spec's given maps, common and parameters.
  void resolve(SolverSpec* spec, const std::map<std::string, std::string>& given) const;
  const SolverInfo* findLocked(std::string_view name) const;
  const PresetInfo* findPresetLocked(std::string_view name) const;
  mutable std::mutex mutex_;
  std::vector<SolverInfo> infos_;
  std::vector<PresetInfo> presets_;
};

// Registration functions of the built-in families (one per source file
// family), called once by Registry::global().
void registerJacobianSolvers(Registry& registry);
void registerGeometricSolvers(Registry& registry);
void registerAnalyticIkSolvers(Registry& registry);
void registerWholeBodySolvers(Registry& registry);
void registerPresets(Registry& registry);

// A backend library outside this one: the backends that wrap Ceres Solver
// (ikbench_solvers_ceres) and Orocos KDL (ikbench_solvers_kdl) live in
// libraries of their own, so that this library is the same wherever it is
// built (the WebAssembly playground has neither). Each declares one static
// BackendLibrary; Registry::global() registers the libraries linked into the
// program, in the order of `rank`, after the Jacobian and geometric families
// (a library linked after the registry was built is registered then). A
// static library's unreferenced objects are dropped by the linker, so a
// program links them whole: the `ikbench_backends` target (solvers/CMakeLists.txt).
struct BackendLibrary {
  BackendLibrary(const char* name, int rank, void (*add)(Registry&));
};
// The backend libraries linked into this program, in rank order (`ceres`, `kdl`).
std::vector<std::string> backendLibraries();

}  // namespace ikbench
