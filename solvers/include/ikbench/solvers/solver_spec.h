// Solver specs: `name[:key=value]...`, e.g. "dls", "dls:lambda=0.05:max_step=0.5",
// "dls-adaptive:restarts=50:time_budget_us=5000". Parameters are separated by
// colons so that lists of specs can be separated by commas (`--solvers dls,ccd`).
//
// A spec is parsed and checked once, by Registry::parse, into a SolverSpec
// value that the harness passes along: the backend, the value of every
// parameter (defaults filled in) and the keys every solver accepts.
//
// Sweeps: a value may be a list or a range in braces, and a spec with such
// values is a grid that expands into one spec per combination (expandSpecGrid):
//   dls:lambda={0.01,0.02,0.05}:max_step={0.5,1}   6 specs
//   dls:lambda={0.001..0.1:log:7}                  7 values, geometric
//   dls:max_iterations={10..50:lin:5}                   10, 20, 30, 40, 50
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ikbench/core/enum_table.h"
#include "ikbench/core/solver_options.h"
#include "ikbench/solvers/options_binding.h"

namespace ikbench {

// What a solve returns when several configurations reach the goals.
enum class SolutionsMode {
  kFirst,  // stop at the first converged attempt (restarts end there)
  kAll,    // keep every distinct converged attempt until the restarts or the budget run out
};
inline constexpr EnumTable<SolutionsMode, 2> kSolutionsModeNames{
    {{{SolutionsMode::kFirst, "first"}, {SolutionsMode::kAll, "all"}}}, "solutions mode"};

// Where a solve's first attempt starts.
enum class StartMode {
  kGiven,    // the problem's start configuration
  kLibrary,  // the seed library's entry nearest the target (SeedLibrary)
};
inline constexpr EnumTable<StartMode, 2> kStartModeNames{
    {{{StartMode::kGiven, "given"}, {StartMode::kLibrary, "library"}}}, "start mode"};

// Whether a solve first tries the closed form of analytic-6r
// (closed_form_stage.h): off, or auto (a chain that qualifies is answered in
// closed form; one that almost qualifies starts from the closed-form answer
// of its idealised chain).
enum class ClosedFormMode { kOff, kAuto };
inline constexpr EnumTable<ClosedFormMode, 2> kClosedFormModeNames{
    {{{ClosedFormMode::kOff, "off"}, {ClosedFormMode::kAuto, "auto"}}}, "closed-form mode"};
// What a solve does with the scene of a problem (Problem::collision); without
// a scene every mode solves as `off` does.
enum class CollisionMode {
  kOff,     // the scene is not the solver's concern (the result still reports it)
  kReject,  // an attempt whose answer collides is a failed attempt: restart within the budget
  kAvoid,   // reject, and the Jacobian family keeps clear of collisions at every step
};
inline constexpr EnumTable<CollisionMode, 3> kCollisionModeNames{
    {{{CollisionMode::kOff, "off"}, {CollisionMode::kReject, "reject"}, {CollisionMode::kAvoid, "avoid"}}},
    "collision mode"};

// The keys every solver accepts, beside its own.
struct CommonSpecOptions {
  // Random restarts from seeded random configurations within the limits
  // after an attempt fails (stall, cap or numerical failure), until the
  // budget ends. At most kMaxRestarts.
  int restarts = 0;
  static constexpr int kMaxRestarts = 1'000'000;
  // Wall-clock budget of the whole solve [us], restarts included; 0 = none;
  // not set = the run's SolverOptions::time_budget_us.
  std::optional<double> time_budget_us;
  // Iteration cap per attempt; not set = the run's SolverOptions::max_iterations.
  std::optional<int> max_iterations;
  // The stall rule of every attempt (SolverOptions::stall_iterations and
  // stall_relative_improvement): an attempt whose weighted residual norm has
  // not dropped below (1 - stall_relative_improvement) * its best within stall_iterations
  // iterations ends; not set = the run's setting. A short window with a large
  // improvement abandons attempts that are not converging, so that restarts
  // come sooner.
  std::optional<int> stall_iterations;
  std::optional<double> stall_relative_improvement;
  SolutionsMode solutions = SolutionsMode::kFirst;
  // A seed library of this many entries (0 = none; ikbench/solvers/
  // seed_library.h): restarts start from its entries nearest the target,
  // nearest first (up to SeedLibrary::kStarts), before any uniform draw.
  int library = 0;
  // start=library: the first attempt starts from the nearest entry too
  // (needs library > 0); the problem's start is then not used.
  StartMode start = StartMode::kGiven;
  // closed_form=auto: the closed-form stage runs before the backend's
  // attempts (Solver::solve; docs/solvers.md states the rule).
  ClosedFormMode closed_form = ClosedFormMode::kOff;
  // How far from a chain analytic-6r solves a chain may be for the stage's
  // near case: the sine of the angle between axes taken as parallel, and the
  // distance between axes taken as meeting relative to the arm's size.
  double closed_form_near = 0.02;
  // collision=reject|avoid (docs/collision.md); avoid is the Jacobian family's.
  CollisionMode collision = CollisionMode::kOff;

  bool isValid(std::string* why) const;
};
// The binding of the common keys (restarts, time_budget_us, max_iterations, stall_iterations,
// stall_relative_improvement, solutions, library, start, closed_form, closed_form_near, collision).
const OptionsBinding<CommonSpecOptions>& commonSpecBinding();
// `base` with the keys the spec gives (time_budget_us, max_iterations, stall_iterations,
// stall_relative_improvement) in place of the run's settings: the options a solve of
// the spec runs under.
SolverOptions withSpecOptions(const CommonSpecOptions& common, SolverOptions base);

struct SolverSpec {
  std::string text;  // the spec as written (trimmed): what results and plots show
  std::string name;  // the backend
  std::string preset;  // the named preset it came from ("auto"), else empty
  // Every parameter of the backend as canonical text, defaults filled in, in
  // the binding's order.
  std::vector<std::pair<std::string, std::string>> parameters;
  // The backend's own keys given in the spec (or by the preset), as written.
  std::map<std::string, std::string> given;
  // The common keys given in the spec (or by the preset), under their
  // canonical names, as written: what the spec sets itself, as against the
  // defaults and the run's settings that `common` holds beside them.
  std::map<std::string, std::string> given_common;
  // The keys the text itself writes, canonical names in the order written
  // (a preset's own keys are not among them): Registry::with writes a
  // derived spec's text from them.
  std::vector<std::string> written;
  CommonSpecOptions common;

  // Whether the spec (or its preset) gives `key`, an own or a common key.
  bool gives(const std::string& key) const { return given.count(key) != 0 || given_common.count(key) != 0; }
  // Deprecated key names the text used, each with its name now
  // ("budget_us is now time_budget_us"); the harness prints them.
  std::vector<std::string> deprecated;
};

// The common keys' former names: budget_us, max_iters, stall_iters and
// stall_improvement read as time_budget_us, max_iterations, stall_iterations
// and stall_relative_improvement, SolverOptions' names of the same knobs.
inline constexpr std::pair<const char*, const char*> kDeprecatedSpecKeys[] = {
    {"budget_us", "time_budget_us"},
    {"max_iters", "max_iterations"},
    {"stall_iters", "stall_iterations"},
    {"stall_improvement", "stall_relative_improvement"}};

// Splits "name:k=v:k2=v2" into name and key/value pairs (SpecError if
// malformed: empty, no name, an item without '=', a key given twice); *order,
// if given, receives the keys in the order written.
void parseSpecText(std::string_view spec, std::string* name, std::map<std::string, std::string>* params,
                   std::vector<std::string>* order = nullptr);
// Splits a comma-separated list of specs, trimming blanks; commas inside
// braces (grid values) do not split. SpecError for an empty item or list.
std::vector<std::string> splitSpecList(std::string_view list);

// One swept key of a grid spec and its values (as text).
struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};
struct SpecGrid {
  std::string text;               // the grid spec as written
  std::vector<GridAxis> axes;     // in the order of the spec's keys
  std::vector<std::string> specs;  // one per combination, the last axis fastest
};
// Expands a spec with list / range values ({a,b,c}, {a..b:lin:n},
// {a..b:log:n}); a spec without braces gives itself. SpecError names the bad
// item (unbalanced braces, an empty list, n < 2 or > kMaxGridValues, log of a
// non-positive bound, a grid of more than kMaxGridSpecs specs).
SpecGrid expandSpecGrid(std::string_view spec);
inline constexpr int kMaxGridValues = 10'000;
inline constexpr int kMaxGridSpecs = 100'000;

}  // namespace ikbench
