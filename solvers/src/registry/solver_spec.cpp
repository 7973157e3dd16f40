// Spec strings: parsing, lists, grids, and the typed values of parameters.
#include "ikbench/solvers/solver_spec.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "ikbench/core/solver_options.h"
#include "ikbench/solvers/seed_library.h"

namespace ikbench {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits at `sep` outside braces and quotes. Throws SpecError for unbalanced
// braces or an unterminated quote.
std::vector<std::string_view> splitTopLevel(std::string_view text, char sep, std::string_view whole) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\'' || c == '"') {
      // A quoted value is taken whole: separators, braces and '=' inside it are text.
      const size_t close = text.find(c, i + 1);
      if (close == std::string_view::npos)
        throw SpecError(fmt::format("solver spec '{}': {} without its closing {}", whole, c, c));
      i = close;
    } else if (c == '{') {
      if (++depth > 1) throw SpecError(fmt::format("solver spec '{}': nested braces", whole));
    } else if (c == '}') {
      if (--depth < 0) throw SpecError(fmt::format("solver spec '{}': '}}' without '{{'", whole));
    } else if (c == sep && depth == 0) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) throw SpecError(fmt::format("solver spec '{}': '{{' without '}}'", whole));
  out.push_back(text.substr(start));
  return out;
}

std::string fmtRange(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return realText(x);
}

// A value in single or double quotes is the text between them (no escapes:
// a value holding one kind of quote is written in the other); a value without
// quotes is itself. Quotes elsewhere in a value are an error.
std::string unquoteSpecValue(std::string_view value, std::string_view whole) {
  if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front() &&
      value.find(value.front(), 1) == value.size() - 1)
    return std::string(value.substr(1, value.size() - 2));
  if (value.find_first_of("'\"") != std::string_view::npos)
    throw SpecError(fmt::format("solver spec '{}': value '{}' is not one quoted text ('...' or \"...\")", whole, value));
  return std::string(value);
}

}  // namespace

// ---- typed values -----------------------------------------------------------

bool Range::contains(double x) const {
  if (std::isnan(x)) return false;
  if (lower_open ? !(x > lower) : !(x >= lower)) return false;
  if (upper_open ? !(x < upper) : !(x <= upper)) return false;
  return true;
}

std::string Range::text() const {
  return fmt::format("{}{}, {}{}", lower_open || std::isinf(lower) ? '(' : '[', fmtRange(lower), fmtRange(upper),
                     upper_open || std::isinf(upper) ? ')' : ']');
}

std::string ParamInfo::rangeText() const {
  switch (type) {
    case ParamType::kReal:
    case ParamType::kInteger: return range.text();
    case ParamType::kBool: return "{false, true}";
    case ParamType::kChoice: {
      std::string out;
      for (const auto& c : choices) out += (out.empty() ? "" : ", ") + c;
      return "{" + out + "}";
    }
    case ParamType::kText: return "text";
  }
  return "?";
}

bool parseRealText(std::string_view text, double* out) {
  text = trim(text);
  if (text.empty()) return false;
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  // ERANGE is also set for subnormal results (1e-320), which are finite and
  // exact enough: refuse only overflow and non-finite values.
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool parseIntegerText(std::string_view text, long long* out) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return false;
  *out = v;
  return true;
}

bool parseBoolText(std::string_view text, bool* out) {
  text = trim(text);
  if (text == "1" || text == "true" || text == "on" || text == "yes") return *out = true, true;
  if (text == "0" || text == "false" || text == "off" || text == "no") return *out = false, true;
  return false;
}

std::string realText(double x) { return fmt::format("{}", x); }

// ---- common keys ------------------------------------------------------------

const OptionsBinding<CommonSpecOptions>& commonSpecBinding() {
  static const OptionsBinding<CommonSpecOptions> binding = [] {
    OptionsBinding<CommonSpecOptions> b;
    b.integer("restarts", &CommonSpecOptions::restarts, Range::closed(0, CommonSpecOptions::kMaxRestarts), "",
              "random restarts from seeded random configurations within limits after an attempt fails (stall, "
              "cap or numerical failure), until the budget ends (TRAC-IK's random restarts)");
    b.real("time_budget_us", &CommonSpecOptions::time_budget_us, Range::closed(0, SolverOptions::kMaxTimeBudgetUs), "us",
           "wall-clock budget of the whole solve, restarts included; 0 = none; not given: the run's setting");
    b.integer("max_iterations", &CommonSpecOptions::max_iterations, Range::closed(1, SolverOptions::kMaxIterationsLimit), "",
              "iteration cap per attempt; not given: the run's setting");
    b.integer("stall_iterations", &CommonSpecOptions::stall_iterations, Range::closed(0, SolverOptions::kMaxIterationsLimit), "",
              "stall window: an attempt ends (stalled) when its weighted residual norm has not dropped below "
              "(1 - stall_relative_improvement) times its best within this many iterations; 0 = no such check; not given: "
              "the run's setting (20)");
    b.real("stall_relative_improvement", &CommonSpecOptions::stall_relative_improvement, Range::halfOpen(0, 1), "",
           "relative improvement the stall window asks for; not given: the run's setting (1e-4)");
    b.choice("solutions", &CommonSpecOptions::solutions, kSolutionsModeNames,
             "'first': stop at the first converged attempt; 'all': keep restarting and return every distinct "
             "converged answer (solution coverage), until the restarts or the budget run out");
    b.integer("library", &CommonSpecOptions::library, Range::closed(0, SeedLibrary::kMaxEntries), "",
              fmt::format("seed library of this many configurations drawn within the limits from a fixed seed, "
                          "filed under the pose they reach: restarts start from the {} entries nearest the target, "
                          "nearest first, before uniform draws; 0 = none (one pose or position goal; built once per "
                          "model and goal point, outside the solve's time, and cached)",
                          SeedLibrary::kStarts));
    b.choice("start", &CommonSpecOptions::start, kStartModeNames,
             "'given': the first attempt starts from the problem's start; 'library': from the seed library's "
             "entry nearest the target (needs library > 0)");
    b.choice("closed_form", &CommonSpecOptions::closed_form, kClosedFormModeNames,
             "'auto': a 6R chain that analytic-6r solves is answered in closed form (the solution nearest the "
             "start; every one with solutions=all), and one within closed_form_near of such a chain starts from "
             "the nearest closed-form answer of the chain made ideal; 'off': the backend alone (docs/solvers.md)");
    b.real("closed_form_near", &CommonSpecOptions::closed_form_near, Range::closed(0, 0.5), "",
           "closed_form=auto's near case: axes count as parallel up to this sine of their angle and as meeting "
           "up to this share of the arm's size apart (0 = the exact case only)");
    b.choice("collision", &CommonSpecOptions::collision, kCollisionModeNames,
             "in a family with a scene: 'off': the answer is only checked; 'reject': an answer that collides is a "
             "failed attempt and the solve restarts within its budget; 'avoid' (Jacobian family): distance "
             "constraints keep each step clear of collisions (velocity damper), colliding answers are rejected too");
    return b;
  }();
  return binding;
}

bool CommonSpecOptions::isValid(std::string* why) const {
  if (!commonSpecBinding().check(*this, why)) return false;
  if (start == StartMode::kLibrary && library == 0) {
    if (why != nullptr) *why = "start=library needs a seed library: library = 0 (expected library > 0, e.g. 65536)";
    return false;
  }
  return true;
}

SolverOptions withSpecOptions(const CommonSpecOptions& common, SolverOptions base) {
  if (common.time_budget_us) base.time_budget_us = *common.time_budget_us;
  if (common.max_iterations) base.max_iterations = *common.max_iterations;
  if (common.stall_iterations) base.stall_iterations = *common.stall_iterations;
  if (common.stall_relative_improvement) base.stall_relative_improvement = *common.stall_relative_improvement;
  return base;
}

// ---- spec text ----------------------------------------------------------------

void parseSpecText(std::string_view spec, std::string* name, std::map<std::string, std::string>* params,
                   std::vector<std::string>* order) {
  spec = trim(spec);
  if (spec.empty()) throw SpecError("empty solver spec (expected name[:key=value]...)");
  params->clear();
  if (order) order->clear();
  const std::vector<std::string_view> items = splitTopLevel(spec, ':', spec);
  *name = std::string(trim(items.front()));
  if (name->empty()) throw SpecError(fmt::format("solver spec '{}' has no name before ':'", spec));
  if (name->find_first_of("{}=,") != std::string::npos)
    throw SpecError(fmt::format("solver spec '{}': '{}' is not a solver name", spec, *name));
  for (size_t i = 1; i < items.size(); ++i) {
    const std::string_view item = trim(items[i]);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw SpecError(fmt::format("solver spec '{}': parameter '{}' is not of the form key=value", spec, item));
    const std::string key(trim(item.substr(0, eq)));
    if (key.find_first_of("'\"") != std::string::npos)
      throw SpecError(fmt::format("solver spec '{}': key '{}' may not be quoted", spec, key));
    const std::string value = unquoteSpecValue(trim(item.substr(eq + 1)), spec);
    if (!params->emplace(key, value).second)
      throw SpecError(fmt::format("solver spec '{}': parameter '{}' given twice", spec, key));
    if (order) order->push_back(key);
  }
}

std::vector<std::string> splitSpecList(std::string_view list) {
  std::vector<std::string> out;
  if (trim(list).empty()) throw SpecError("empty list of solver specs");
  for (std::string_view item : splitTopLevel(list, ',', list)) {
    item = trim(item);
    if (item.empty()) throw SpecError(fmt::format("solver list '{}' has an empty item", list));
    out.emplace_back(item);
  }
  return out;
}

// ---- grids --------------------------------------------------------------------

namespace {

// The values of one braced item: {a,b,c}, {a..b:lin:n} or {a..b:log:n}.
std::vector<std::string> gridValues(std::string_view body, std::string_view key, std::string_view whole) {
  auto fail = [&](const std::string& why) -> SpecError {
    return SpecError(fmt::format("solver spec '{}': grid of '{}': {}", whole, key, why));
  };
  std::vector<std::string> values;
  const size_t dots = body.find("..");
  if (dots == std::string_view::npos) {
    for (std::string_view v : splitTopLevel(body, ',', whole)) {
      v = trim(v);
      if (v.empty()) throw fail("an empty value (expected {a,b,...})");
      values.emplace_back(v);
    }
  } else {
    // a..b:kind:n
    const std::string_view a_text = trim(body.substr(0, dots));
    const std::vector<std::string_view> rest = splitTopLevel(body.substr(dots + 2), ':', whole);
    if (rest.size() != 3) throw fail("a range is {a..b:lin:n} or {a..b:log:n}");
    double a, b;
    long long n;
    if (!parseRealText(a_text, &a) || !parseRealText(rest[0], &b))
      throw fail(fmt::format("range bounds '{}' and '{}' must be finite numbers", a_text, trim(rest[0])));
    const std::string_view kind = trim(rest[1]);
    if (kind != "lin" && kind != "log") throw fail(fmt::format("range kind '{}' must be lin or log", kind));
    if (!parseIntegerText(rest[2], &n) || n < 2 || n > kMaxGridValues)
      throw fail(fmt::format("the number of values '{}' must be an integer in [2, {}]", trim(rest[2]), kMaxGridValues));
    if (kind == "log" && !(a > 0.0 && b > 0.0)) throw fail("a log range needs positive bounds");
    for (long long i = 0; i < n; ++i) {
      const double t = static_cast<double>(i) / static_cast<double>(n - 1);
      const double x = kind == "lin" ? a + (b - a) * t : std::exp(std::log(a) + (std::log(b) - std::log(a)) * t);
      // Six significant digits keep the expanded specs readable; the ends
      // are written as given.
      values.push_back(i == 0 ? std::string(a_text) : i == n - 1 ? std::string(trim(rest[0])) : fmt::format("{:.6g}", x));
    }
  }
  if (values.empty()) throw fail("no values");
  if (static_cast<long long>(values.size()) > kMaxGridValues)
    throw fail(fmt::format("more than {} values", kMaxGridValues));
  return values;
}

}  // namespace

SpecGrid expandSpecGrid(std::string_view spec) {
  SpecGrid grid;
  grid.text = std::string(trim(spec));
  if (grid.text.find_first_of("{}") == std::string::npos || grid.text.find_first_of("'\"") != std::string::npos) {
    // No braces, or a quoted value (whose braces are text): one spec, checked by parseSpecText.
    grid.specs.push_back(grid.text);
    return grid;
  }
  const std::vector<std::string_view> items = splitTopLevel(grid.text, ':', grid.text);
  // Each item: fixed text, or key={...} with its values.
  std::vector<std::vector<std::string>> choices;
  long long total = 1;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string_view item = trim(items[i]);
    const size_t brace = item.find('{');
    if (brace == std::string_view::npos) {
      choices.push_back({std::string(item)});
      continue;
    }
    const size_t eq = item.find('=');
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : trim(item.substr(eq + 1));
    if (i == 0 || value.size() < 2 || value.front() != '{' || value.back() != '}')
      throw SpecError(fmt::format("solver spec '{}': '{}' is not of the form key={{values}}", grid.text, item));
    const std::string key(trim(item.substr(0, eq)));
    const std::string_view body = value.substr(1, value.size() - 2);
    GridAxis axis{key, gridValues(body, key, grid.text)};
    total *= static_cast<long long>(axis.values.size());
    if (total > kMaxGridSpecs)
      throw SpecError(fmt::format("solver spec '{}': the grid has more than {} specs", grid.text, kMaxGridSpecs));
    std::vector<std::string> items_for_axis;
    for (const std::string& v : axis.values) items_for_axis.push_back(key + "=" + v);
    choices.push_back(std::move(items_for_axis));
    grid.axes.push_back(std::move(axis));
  }
  // Cartesian product, the last item fastest.
  std::vector<size_t> idx(choices.size(), 0);
  for (;;) {
    std::string out;
    for (size_t i = 0; i < choices.size(); ++i) out += (i ? ":" : "") + choices[i][idx[i]];
    grid.specs.push_back(std::move(out));
    int k = static_cast<int>(choices.size()) - 1;
    while (k >= 0 && ++idx[k] == choices[k].size()) idx[k--] = 0;
    if (k < 0) return grid;
  }
}

}  // namespace ikbench
