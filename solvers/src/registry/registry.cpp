#include "ikbench/solvers/registry.h"

#include <fmt/format.h>

#include <algorithm>

namespace ikbench {
namespace {

bool isCommonKey(std::string_view key) {
  for (const ParamInfo& p : commonSpecBinding().params())
    if (p.name == key) return true;
  return false;
}

void checkName(std::string_view name, const char* what) {
  if (name.empty() || name.find_first_of(":,={} \t") != std::string_view::npos)
    throw SpecError(fmt::format("{} name '{}' must be non-empty without ':', ',', '=', braces or blanks", what, name));
}

}  // namespace

std::vector<ParamInfo> Registry::commonParams() { return commonSpecBinding().params(); }

namespace {

struct LinkedLibrary {
  std::string name;
  int rank;
  void (*add)(Registry&);
};

// The backend libraries linked into the program, filled by their static
// BackendLibrary objects before main (or later, by a library loaded after the
// registry was built), and whether Registry::global() has been built.
struct LinkedLibraries {
  std::mutex mutex;
  std::vector<LinkedLibrary> libraries;
  Registry* registry = nullptr;
};

LinkedLibraries& linkedLibraries() {
  static LinkedLibraries* l = new LinkedLibraries();
  return *l;
}

}  // namespace

BackendLibrary::BackendLibrary(const char* name, int rank, void (*add)(Registry&)) {
  LinkedLibraries& l = linkedLibraries();
  Registry* built = nullptr;
  {
    std::lock_guard lock(l.mutex);
    l.libraries.push_back({name, rank, add});
    built = l.registry;
  }
  if (built) add(*built);
}

std::vector<std::string> backendLibraries() {
  LinkedLibraries& l = linkedLibraries();
  std::lock_guard lock(l.mutex);
  std::vector<LinkedLibrary> sorted = l.libraries;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  std::vector<std::string> names;
  for (const LinkedLibrary& lib : sorted) names.push_back(lib.name);
  return names;
}

Registry& Registry::global() {
  static Registry* registry = [] {
    auto* r = new Registry();
    registerJacobianSolvers(*r);
    registerGeometricSolvers(*r);
    LinkedLibraries& l = linkedLibraries();
    std::vector<LinkedLibrary> linked;
    {
      std::lock_guard lock(l.mutex);
      linked = l.libraries;
      l.registry = r;
    }
    std::stable_sort(linked.begin(), linked.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    for (const LinkedLibrary& lib : linked) lib.add(*r);
    registerAnalyticIkSolvers(*r);
    registerWholeBodySolvers(*r);
    registerPresets(*r);
    return r;
  }();
  return *registry;
}

const SolverInfo* Registry::findLocked(std::string_view name) const {
  for (const SolverInfo& i : infos_)
    if (i.name == name) return &i;
  return nullptr;
}

const PresetInfo* Registry::findPresetLocked(std::string_view name) const {
  for (const PresetInfo& p : presets_)
    if (p.name == name) return &p;
  return nullptr;
}

void Registry::add(SolverInfo info) {
  checkName(info.name, "solver");
  if (!info.factory || !info.resolve)
    throw SpecError(fmt::format("solver '{}' has no factory (use solverInfo())", info.name));
  for (const ParamInfo& p : info.params)
    if (isCommonKey(p.name))
      throw SpecError(fmt::format("solver '{}': parameter '{}' clashes with a common key", info.name, p.name));
  std::lock_guard lock(mutex_);
  if (findLocked(info.name) || findPresetLocked(info.name))
    throw SpecError(fmt::format("solver '{}' is already registered", info.name));
  infos_.push_back(std::move(info));
}

void Registry::addPreset(PresetInfo preset) {
  checkName(preset.name, "preset");
  {
    std::lock_guard lock(mutex_);
    if (findLocked(preset.name) || findPresetLocked(preset.name))
      throw SpecError(fmt::format("preset '{}': the name is already registered", preset.name));
  }
  const SolverSpec spec = parse(preset.spec);  // must name a backend and parse
  if (!spec.preset.empty())
    throw SpecError(fmt::format("preset '{}': its spec '{}' names another preset", preset.name, preset.spec));
  std::lock_guard lock(mutex_);
  presets_.push_back(std::move(preset));
}

bool Registry::contains(std::string_view name) const {
  std::lock_guard lock(mutex_);
  return findLocked(name) != nullptr || findPresetLocked(name) != nullptr;
}

std::vector<SolverInfo> Registry::list() const {
  std::lock_guard lock(mutex_);
  std::vector<SolverInfo> out = infos_;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::vector<PresetInfo> Registry::presets() const {
  std::lock_guard lock(mutex_);
  std::vector<PresetInfo> out = presets_;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

namespace {

// Renames the deprecated spellings of common keys in `keys` (SpecError when a
// key is given under both names); the renames are noted in *notes.
void canonicalKeys(std::map<std::string, std::string>* keys, const std::string& text, std::vector<std::string>* notes) {
  for (const auto& [old_name, name] : kDeprecatedSpecKeys) {
    const auto it = keys->find(old_name);
    if (it == keys->end()) continue;
    if (keys->count(name))
      throw SpecError(fmt::format("spec '{}' gives '{}' twice: as '{}' and as '{}' (its former name)", text, name,
                                  name, old_name));
    (*keys)[name] = it->second;
    keys->erase(it);
    if (notes) notes->push_back(fmt::format("spec '{}': key '{}' is now '{}'", text, old_name, name));
  }
}

}  // namespace

SolverSpec Registry::parse(std::string_view text) const {
  SolverSpec spec;
  std::map<std::string, std::string> given;
  std::vector<std::string> order;
  parseSpecText(text, &spec.name, &given, &order);
  canonicalKeys(&given, std::string(text), &spec.deprecated);
  for (std::string& key : order)
    for (const auto& [old_name, name] : kDeprecatedSpecKeys)
      if (key == old_name) key = name;
  spec.written = std::move(order);
  spec.text = std::string(text);
  spec.text.erase(0, spec.text.find_first_not_of(" \t"));
  spec.text.erase(spec.text.find_last_not_of(" \t") + 1);
  if (spec.text.find_first_of("{}") != std::string::npos)
    throw SpecError(fmt::format("solver spec '{}' is a grid: expand it first (ikbench run expands grids)", spec.text));
  {
    std::lock_guard lock(mutex_);
    if (const PresetInfo* preset = findPresetLocked(spec.name)) {
      // A preset's keys first, the spec's own keys override them.
      std::map<std::string, std::string> base;
      parseSpecText(preset->spec, &spec.name, &base);
      canonicalKeys(&base, preset->spec, nullptr);
      for (auto& [k, v] : given) base[k] = v;
      given = std::move(base);
      spec.preset = preset->name;
    }
  }
  resolve(&spec, given);
  return spec;
}

SolverSpec Registry::with(const SolverSpec& spec, const std::map<std::string, std::string>& keys) const {
  SolverSpec out;
  out.name = spec.name;
  out.preset = spec.preset;
  out.written = spec.written;
  out.deprecated = spec.deprecated;
  std::map<std::string, std::string> given = spec.given;
  given.insert(spec.given_common.begin(), spec.given_common.end());
  std::map<std::string, std::string> added = keys;
  canonicalKeys(&added, spec.text, nullptr);
  for (const auto& [k, v] : added) {
    given[k] = v;
    if (std::find(out.written.begin(), out.written.end(), k) == out.written.end()) out.written.push_back(k);
  }
  out.text = spec.preset.empty() ? spec.name : spec.preset;
  for (const std::string& k : out.written) out.text += fmt::format(":{}={}", k, given.at(k));
  resolve(&out, given);
  return out;
}

void Registry::resolve(SolverSpec* spec, const std::map<std::string, std::string>& given) const {
  SolverInfo info;
  {
    std::lock_guard lock(mutex_);
    const SolverInfo* found = findLocked(spec->name);
    if (!found) {
      std::string known;
      for (const auto& i : infos_) known += (known.empty() ? "" : ", ") + i.name;
      for (const auto& p : presets_) known += (known.empty() ? "" : ", ") + p.name;
      throw SpecError(fmt::format("unknown solver '{}' in spec '{}' (known: {})", spec->name, spec->text, known));
    }
    info = *found;
  }
  spec->given.clear();
  spec->given_common.clear();
  for (const auto& [k, v] : given) {
    const std::string& key = k;  // a structured binding cannot be captured by a lambda before C++20 in clang 14
    const bool own =
        std::any_of(info.params.begin(), info.params.end(), [&key](const ParamInfo& p) { return p.name == key; });
    if (!own && !isCommonKey(k)) {
      std::string keys;
      for (const ParamInfo& p : info.params) keys += (keys.empty() ? "" : ", ") + p.name;
      for (const ParamInfo& p : commonParams()) keys += (keys.empty() ? "" : ", ") + p.name;
      throw SpecError(
          fmt::format("solver '{}' in spec '{}' has no parameter '{}' (known: {})", spec->name, spec->text, k, keys));
    }
    (own ? spec->given : spec->given_common)[k] = v;
  }
  try {
    spec->common = commonSpecBinding().parse(spec->name, spec->given_common);
    if (std::string why; !spec->common.isValid(&why)) throw SpecError(why);
    spec->parameters = info.resolve(spec->given);
  } catch (const SpecError& e) {
    throw SpecError(fmt::format("spec '{}': {}", spec->text, e.what()));
  }
}

std::unique_ptr<Solver> Registry::create(const SolverSpec& spec) const {
  SolverInfo info;
  {
    std::lock_guard lock(mutex_);
    const SolverInfo* found = findLocked(spec.name);
    if (!found) throw SpecError(fmt::format("unknown solver '{}' in spec '{}'", spec.name, spec.text));
    info = *found;
  }
  std::unique_ptr<Solver> solver = info.factory(spec);
  if (spec.common.collision == CollisionMode::kAvoid && !solver->avoidsCollisions())
    throw SpecError(fmt::format("spec '{}': collision=avoid is for the Jacobian family (dls, dls-adaptive, sdls, ...); "
                                "'{}' accepts collision=off|reject",
                                spec.text, spec.name));
  solver->configure(spec.text, spec.common);
  return solver;
}

}  // namespace ikbench
