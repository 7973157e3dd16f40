// Backend parameters from spec strings "name:key=value:key=value".
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ikbench {

// Thrown for a malformed spec, unknown solver or parameter, or a bad value.
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class ParamType { kDouble, kInt, kBool, kString };

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kDouble;
  std::string default_value;
  std::string help;  // meaning, unit, and the formula it controls
};

// Parameter values of one solver instance: every declared parameter has a
// value (the default unless the spec set it).
class Params {
 public:
  Params() = default;
  // Validates `given` (key -> text) against `specs`; throws SpecError naming
  // the solver, the key and what was expected.
  Params(std::string_view solver, const std::vector<ParamSpec>& specs,
         const std::map<std::string, std::string>& given);

  double getDouble(const std::string& key) const;
  int getInt(const std::string& key) const;
  bool getBool(const std::string& key) const;
  const std::string& getString(const std::string& key) const;
  bool has(const std::string& key) const { return values_.count(key) > 0; }
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  const std::string& raw(const std::string& key) const;
  std::string solver_;
  std::map<std::string, std::string> values_;
};

// Splits "name:k=v:k2=v2" into name and key/value pairs (SpecError if malformed).
void parseSpec(std::string_view spec, std::string* name, std::map<std::string, std::string>* params);
// Splits a comma-separated list of specs, trimming blanks.
std::vector<std::string> splitSpecList(std::string_view list);

}  // namespace ikbench
