#include "ikbench/solvers/params.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace ikbench {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool parseDouble(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool parseInt(const std::string& text, long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (end != text.c_str() + text.size() || errno == ERANGE || v < -2147483647L || v > 2147483647L) return false;
  *out = v;
  return true;
}

bool parseBool(const std::string& text, bool* out) {
  if (text == "1" || text == "true" || text == "on" || text == "yes") return *out = true, true;
  if (text == "0" || text == "false" || text == "off" || text == "no") return *out = false, true;
  return false;
}

std::string_view typeName(ParamType t) {
  switch (t) {
    case ParamType::kDouble: return "a finite number";
    case ParamType::kInt: return "an integer";
    case ParamType::kBool: return "a boolean (0/1, true/false)";
    case ParamType::kString: return "a string";
  }
  return "?";
}

}  // namespace

void parseSpec(std::string_view spec, std::string* name, std::map<std::string, std::string>* params) {
  spec = trim(spec);
  if (spec.empty()) throw SpecError("empty solver spec (expected name[:key=value]...)");
  params->clear();
  size_t pos = spec.find(':');
  *name = std::string(trim(spec.substr(0, pos)));
  if (name->empty()) throw SpecError(fmt::format("solver spec '{}' has no name before ':'", spec));
  while (pos != std::string_view::npos) {
    const size_t next = spec.find(':', pos + 1);
    const std::string_view item = trim(spec.substr(pos + 1, next == std::string_view::npos ? next : next - pos - 1));
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw SpecError(fmt::format("solver spec '{}': parameter '{}' is not of the form key=value", spec, item));
    const std::string key(trim(item.substr(0, eq)));
    const std::string value(trim(item.substr(eq + 1)));
    if (!params->emplace(key, value).second)
      throw SpecError(fmt::format("solver spec '{}': parameter '{}' given twice", spec, key));
    pos = next;
  }
}

std::vector<std::string> splitSpecList(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string_view item = trim(list.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Params::Params(std::string_view solver, const std::vector<ParamSpec>& specs,
               const std::map<std::string, std::string>& given)
    : solver_(solver) {
  for (const ParamSpec& s : specs) values_[s.name] = s.default_value;
  for (const auto& [key, value] : given) {
    const ParamSpec* spec = nullptr;
    for (const ParamSpec& s : specs)
      if (s.name == key) spec = &s;
    if (spec == nullptr) {
      std::string known;
      for (const ParamSpec& s : specs) known += (known.empty() ? "" : ", ") + s.name;
      throw SpecError(fmt::format("solver '{}' has no parameter '{}' (known: {})", solver, key, known));
    }
    bool ok = true;
    double d;
    long l;
    bool b;
    switch (spec->type) {
      case ParamType::kDouble: ok = parseDouble(value, &d); break;
      case ParamType::kInt: ok = parseInt(value, &l); break;
      case ParamType::kBool: ok = parseBool(value, &b); break;
      case ParamType::kString: ok = !value.empty(); break;
    }
    if (!ok)
      throw SpecError(fmt::format("solver '{}': parameter '{}={}' is not {}", solver, key, value, typeName(spec->type)));
    values_[key] = value;
  }
}

const std::string& Params::raw(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw SpecError(fmt::format("solver '{}': parameter '{}' was never declared", solver_, key));
  return it->second;
}

double Params::getDouble(const std::string& key) const {
  double v = 0;
  if (!parseDouble(raw(key), &v)) throw SpecError(fmt::format("solver '{}': '{}' is not a number", solver_, key));
  return v;
}
int Params::getInt(const std::string& key) const {
  long v = 0;
  if (!parseInt(raw(key), &v)) throw SpecError(fmt::format("solver '{}': '{}' is not an integer", solver_, key));
  return static_cast<int>(v);
}
bool Params::getBool(const std::string& key) const {
  bool v = false;
  if (!parseBool(raw(key), &v)) throw SpecError(fmt::format("solver '{}': '{}' is not a boolean", solver_, key));
  return v;
}
const std::string& Params::getString(const std::string& key) const { return raw(key); }

}  // namespace ikbench
