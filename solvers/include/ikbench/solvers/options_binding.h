// Typed backend options bound to spec keys.
//
// Every backend keeps its parameters in a plain Options struct (documented
// fields with units and defaults, in the style of ceres::Solver::Options) and
// binds each field once to its spec key, with a range, a unit and one line of
// help:
//
//   struct DlsOptions { double lambda = 0.05; ... };
//   OptionsBinding<DlsOptions> b;
//   b.real("lambda", &DlsOptions::lambda, Range::atLeast(0), "m", "damping factor lambda");
//
// That one binding is the source of everything said about the parameters:
// parsing and checking spec values (`dls:lambda=0.1`), the parameter record of
// run.json, `ikbench list solvers`, the docs' parameter tables and the Python
// bindings. Defaults are read from a default-constructed Options, so they are
// written once, in the struct.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ikbench/core/enum_table.h"

namespace ikbench {

// A malformed spec, an unknown solver or parameter, or a value out of range;
// what() names the solver, the key, the value and what was expected.
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class ParamType { kReal, kInteger, kBool, kChoice, kText };
inline constexpr EnumTable<ParamType, 5> kParamTypeNames{
    {{{ParamType::kReal, "real"}, {ParamType::kInteger, "integer"}, {ParamType::kBool, "bool"},
      {ParamType::kChoice, "choice"}, {ParamType::kText, "text"}}},
    "parameter type"};

// The accepted interval of a numeric parameter.
struct Range {
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  bool lower_open = false, upper_open = false;

  static Range any() { return {}; }
  static Range atLeast(double a) { return {a, std::numeric_limits<double>::infinity(), false, false}; }
  static Range above(double a) { return {a, std::numeric_limits<double>::infinity(), true, false}; }
  static Range closed(double a, double b) { return {a, b, false, false}; }
  static Range halfOpen(double a, double b) { return {a, b, false, true}; }  // [a, b)
  static Range open(double a, double b) { return {a, b, true, true}; }
  bool contains(double x) const;
  std::string text() const;  // "[0, inf)", "(0, 2)"
};

// One spec key of a backend, as documented everywhere.
struct ParamInfo {
  std::string name;
  ParamType type = ParamType::kReal;
  std::string default_value;  // canonical text; empty = "the run's setting" (optional keys)
  Range range;                       // kReal, kInteger
  std::vector<std::string> choices;  // kChoice
  std::string unit;                  // "m", "rad", "m^2", "1", "us"; empty for flags and choices
  std::string help;                  // meaning and the formula it controls, with its source
  // "[0, inf)", "{clamp, freeze}", "{0, 1}"
  std::string rangeText() const;
};

// Spec values as text -> typed values; false for anything else (including
// out-of-range and non-finite numbers; subnormal numbers such as 1e-320 are
// finite and accepted).
bool parseRealText(std::string_view text, double* out);
bool parseIntegerText(std::string_view text, long long* out);
bool parseBoolText(std::string_view text, bool* out);
// The canonical text of a value: the shortest text that reads back exactly.
std::string realText(double x);
inline std::string boolText(bool b) { return b ? "true" : "false"; }

template <typename Options>
class OptionsBinding {
 public:
  // A real or integer key, plain or optional (std::optional: empty text, the
  // default, means "not set").
  OptionsBinding& real(std::string name, double Options::*member, Range range, std::string unit, std::string help) {
    return number<double>(std::move(name), member, range, std::move(unit), std::move(help));
  }
  OptionsBinding& real(std::string name, std::optional<double> Options::*member, Range range, std::string unit,
                       std::string help) {
    return number<double>(std::move(name), member, range, std::move(unit), std::move(help));
  }
  OptionsBinding& integer(std::string name, int Options::*member, Range range, std::string unit, std::string help) {
    return number<int>(std::move(name), member, range, std::move(unit), std::move(help));
  }
  OptionsBinding& integer(std::string name, std::optional<int> Options::*member, Range range, std::string unit,
                          std::string help) {
    return number<int>(std::move(name), member, range, std::move(unit), std::move(help));
  }
  OptionsBinding& flag(std::string name, bool Options::*member, std::string help) {
    ParamInfo info{std::move(name), ParamType::kBool, "", {}, {}, "", std::move(help)};
    add(std::move(info),
        [member](Options& o, std::string_view t) {
          bool v;
          if (!parseBoolText(t, &v)) return false;
          o.*member = v;
          return true;
        },
        [member](const Options& o) { return boolText(o.*member); }, [](const Options&) { return true; });
    return *this;
  }
  template <typename E, std::size_t N>
  OptionsBinding& choice(std::string name, E Options::*member, const EnumTable<E, N>& names, std::string help) {
    ParamInfo info{std::move(name), ParamType::kChoice, "", {}, {}, "", std::move(help)};
    for (const auto& [v, n] : names.entries) info.choices.emplace_back(n);
    add(std::move(info),
        [member, names](Options& o, std::string_view t) {
          const auto v = names.find(t);
          if (!v) return false;
          o.*member = *v;
          return true;
        },
        [member, names](const Options& o) { return std::string(names.name(o.*member)); },
        [member, names](const Options& o) { return names.name(o.*member) != "?"; });
    return *this;
  }

  // A free text key (a command line, a name): any text, quoted in the spec
  // when it holds ':', ',', '=', braces or blanks (`ext:cmd='python3 s.py'`).
  OptionsBinding& text(std::string name, std::string Options::*member, std::string help) {
    ParamInfo info{std::move(name), ParamType::kText, "", {}, {}, "", std::move(help)};
    add(std::move(info),
        [member](Options& o, std::string_view t) {
          o.*member = std::string(t);
          return true;
        },
        [member](const Options& o) { return o.*member; }, [](const Options&) { return true; });
    return *this;
  }

  // The keys with their defaults (read from a default-constructed Options).
  std::vector<ParamInfo> params() const {
    const Options defaults{};
    std::vector<ParamInfo> out;
    for (const Entry& e : entries_) {
      ParamInfo p = e.info;
      p.default_value = e.get(defaults);
      out.push_back(std::move(p));
    }
    return out;
  }

  // Options{} with the given spec values set; throws SpecError naming the
  // solver, the key, the value and what was expected (unknown keys: the list
  // of known ones). Cross-field rules are the Options' own isValid().
  Options parse(std::string_view solver, const std::map<std::string, std::string>& values) const {
    Options o{};
    for (const auto& [key, text] : values) {
      const Entry* e = find(key);
      if (!e) throw SpecError(fmt::format("solver '{}' has no parameter '{}' (known: {})", solver, key, keyList()));
      if (!e->set(o, text))
        throw SpecError(fmt::format("solver '{}': parameter '{}={}' is not {}", solver, key, text, expected(e->info)));
    }
    return o;
  }

  // Checks every bound field of o against its range; *why names the first
  // field out of range, its value and the range.
  bool check(const Options& o, std::string* why) const {
    for (const Entry& e : entries_) {
      if (!e.valid(o)) {
        if (why) *why = fmt::format("{} = {} is not {}", e.info.name, e.get(o), expected(e.info));
        return false;
      }
    }
    return true;
  }

  // Every key's value in o as canonical text (empty: an optional key not set).
  std::vector<std::pair<std::string, std::string>> textValues(const Options& o) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Entry& e : entries_) out.emplace_back(e.info.name, e.get(o));
    return out;
  }

  // Appends the keys of another binding whose Options is a base of this one
  // (e.g. the keys every Jacobian backend shares).
  template <typename Base>
  OptionsBinding& inherit(const OptionsBinding<Base>& base) {
    for (const auto& e : base.entries_)
      add(e.info, [set = e.set](Options& o, std::string_view t) { return set(static_cast<Base&>(o), t); },
          [get = e.get](const Options& o) { return get(static_cast<const Base&>(o)); },
          [valid = e.valid](const Options& o) { return valid(static_cast<const Base&>(o)); });
    return *this;
  }

 private:
  template <typename>
  friend class OptionsBinding;

  // T is double or int; M is T or std::optional<T>.
  template <typename T, typename M>
  OptionsBinding& number(std::string name, M Options::*member, Range range, std::string unit, std::string help) {
    constexpr bool kOptional = !std::is_same_v<M, T>;
    ParamInfo info{std::move(name), std::is_same_v<T, double> ? ParamType::kReal : ParamType::kInteger, "",
                   range, {}, std::move(unit), std::move(help)};
    auto parse = [range](std::string_view t, T* out) {
      if constexpr (std::is_same_v<T, double>) {
        double v;
        if (!parseRealText(t, &v) || !range.contains(v)) return false;
        *out = v;
      } else {
        long long v;
        if (!parseIntegerText(t, &v) || !range.contains(static_cast<double>(v))) return false;
        *out = static_cast<T>(v);
      }
      return true;
    };
    auto text = [](T v) { return std::is_same_v<T, double> ? realText(static_cast<double>(v)) : fmt::format("{}", v); };
    add(std::move(info),
        [member, parse](Options& o, std::string_view t) {
          T v{};
          if (!parse(t, &v)) return false;
          o.*member = v;
          return true;
        },
        [member, text](const Options& o) -> std::string {
          if constexpr (kOptional) {
            return (o.*member) ? text(*(o.*member)) : std::string();
          } else {
            return text(o.*member);
          }
        },
        [member, range](const Options& o) {
          if constexpr (kOptional) {
            return !(o.*member) || range.contains(static_cast<double>(*(o.*member)));
          } else {
            return range.contains(static_cast<double>(o.*member));
          }
        });
    return *this;
  }
  struct Entry {
    ParamInfo info;
    std::function<bool(Options&, std::string_view)> set;
    std::function<std::string(const Options&)> get;
    std::function<bool(const Options&)> valid;
  };
  void add(ParamInfo info, std::function<bool(Options&, std::string_view)> set,
           std::function<std::string(const Options&)> get, std::function<bool(const Options&)> valid) {
    if (find(info.name)) throw SpecError(fmt::format("parameter '{}' is bound twice", info.name));
    entries_.push_back({std::move(info), std::move(set), std::move(get), std::move(valid)});
  }
  const Entry* find(std::string_view key) const {
    for (const Entry& e : entries_)
      if (e.info.name == key) return &e;
    return nullptr;
  }
  std::string keyList() const {
    std::string out;
    for (const Entry& e : entries_) out += (out.empty() ? "" : ", ") + e.info.name;
    return out.empty() ? "none" : out;
  }
  static std::string expected(const ParamInfo& p) {
    switch (p.type) {
      case ParamType::kReal: return fmt::format("a finite number in {}", p.range.text());
      case ParamType::kInteger: return fmt::format("an integer in {}", p.range.text());
      case ParamType::kBool: return "a boolean (0/1, true/false, on/off, yes/no)";
      case ParamType::kChoice: return fmt::format("one of {}", p.rangeText());
      case ParamType::kText: return "a text";
    }
    return "?";
  }
  std::vector<Entry> entries_;
};

}  // namespace ikbench
