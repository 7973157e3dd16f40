// Reading JSON input files (suites, scenes) with errors that name the file,
// the line (recovered by walking the JSON text along the offending field's
// path, since nlohmann::json keeps no positions), the field and what was
// expected. Private to the scenarios library.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ikbench/core/enum_table.h"
#include "ikbench/scenarios/input_limits.h"
#include "ikbench/scenarios/suite.h"

namespace ikbench::json_input {
namespace fs = std::filesystem;
using nlohmann::json;

// ---- locating a field in the JSON text ------------------------------------

using PathPart = std::variant<std::string, size_t>;
struct Path {
  std::vector<PathPart> parts;
  Path operator/(const std::string& key) const {
    Path p = *this;
    p.parts.emplace_back(key);
    return p;
  }
  Path operator/(size_t index) const {
    Path p = *this;
    p.parts.emplace_back(index);
    return p;
  }
  std::string str() const {
    std::string out;
    for (const PathPart& part : parts) {
      if (const auto* k = std::get_if<std::string>(&part)) {
        out += (out.empty() ? "" : ".") + *k;
      } else {
        out += fmt::format("[{}]", std::get<size_t>(part));
      }
    }
    return out.empty() ? "(top level)" : out;
  }
};

struct Scanner {
  const std::string& s;
  size_t i = 0;
  bool ok() const { return i < s.size(); }
  void ws() {
    while (ok() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  std::string string() {  // at '"'; returns the (simply unescaped) content
    std::string out;
    ++i;
    while (ok() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      out += s[i++];
    }
    ++i;
    return out;
  }
  void value() {
    ws();
    if (!ok()) return;
    if (s[i] == '"') {
      string();
    } else if (s[i] == '{' || s[i] == '[') {
      int depth = 0;
      while (ok()) {
        const char c = s[i];
        if (c == '"') {
          string();
          continue;
        }
        ++i;
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') {
          if (--depth == 0) return;
        }
      }
    } else {
      while (ok() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' && s[i] != '\r' &&
             s[i] != '\t')
        ++i;
    }
  }
};

// Byte offset of the value at `path`, or of the deepest enclosing value that
// exists (for a missing field: the object that should hold it).
inline size_t locate(const std::string& text, const Path& path) {
  Scanner sc{text};
  sc.ws();
  size_t best = sc.i;
  for (const PathPart& part : path.parts) {
    if (!sc.ok()) return best;
    best = sc.i;
    bool found = false;
    if (const auto* key = std::get_if<std::string>(&part); key && text[sc.i] == '{') {
      ++sc.i;
      while (sc.ok()) {
        sc.ws();
        if (!sc.ok() || text[sc.i] != '"') break;
        const std::string k = sc.string();
        sc.ws();
        if (sc.ok() && text[sc.i] == ':') ++sc.i;
        sc.ws();
        if (k == *key) {
          found = true;
          break;
        }
        sc.value();
        sc.ws();
        if (sc.ok() && text[sc.i] == ',') ++sc.i;
      }
    } else if (const auto* idx = std::get_if<size_t>(&part); idx && text[sc.i] == '[') {
      ++sc.i;
      for (size_t k = 0; sc.ok(); ++k) {
        sc.ws();
        if (!sc.ok() || text[sc.i] == ']') break;
        if (k == *idx) {
          found = true;
          break;
        }
        sc.value();
        sc.ws();
        if (sc.ok() && text[sc.i] == ',') ++sc.i;
      }
    }
    if (!found) return best;
  }
  return sc.i;
}

inline int lineAt(const std::string& text, size_t pos) {
  pos = std::min(pos, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

// Checks what nlohmann's parser accepts but a suite must not contain, on the
// raw text and without recursion, before the JSON is parsed: nesting deeper
// than kMaxJsonNesting (the parsed value is later walked recursively), a
// duplicate key in one object (nlohmann keeps the last one silently), and a
// number outside the range of a double (e.g. 1e400). Syntax errors are left
// to the parser, which reports them with their line.
inline void checkJsonText(const std::string& text, const std::string& file) {
  struct Level {
    bool object = false;
    bool expect_key = false;
    std::map<std::string, int> keys;  // key -> line
  };
  std::vector<Level> stack;
  int line = 1;
  auto fail = [&](int at, const std::string& msg) { throw SuiteError(fmt::format("{}:{}: {}", file, at, msg)); };
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '{' || c == '[') {
      if (stack.size() >= static_cast<size_t>(kMaxJsonNesting))
        fail(line, fmt::format("objects and arrays are nested more than {} levels deep (the limit)", kMaxJsonNesting));
      stack.push_back(Level{c == '{', c == '{', {}});
      ++i;
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
      ++i;
    } else if (c == ',') {
      if (!stack.empty() && stack.back().object) stack.back().expect_key = true;
      ++i;
    } else if (c == '"') {
      size_t k = i + 1;
      while (k < n && text[k] != '"') {
        if (text[k] == '\n') ++line;
        k += text[k] == '\\' ? 2 : 1;
      }
      if (!stack.empty() && stack.back().expect_key) {
        Level& level = stack.back();
        level.expect_key = false;
        const std::string key = text.substr(i + 1, std::min(k, n) - i - 1);
        if (const auto [it, fresh] = level.keys.emplace(key, line); !fresh)
          fail(line, fmt::format("key \"{}\" appears twice in one object (first on line {})", key, it->second));
      }
      i = k + 1;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t k = i + 1;
      while (k < n && (std::isdigit(static_cast<unsigned char>(text[k])) || text[k] == '.' || text[k] == 'e' ||
                       text[k] == 'E' || text[k] == '+' || text[k] == '-'))
        ++k;
      const std::string token = text.substr(i, k - i);
      char* end = nullptr;
      const double v = std::strtod(token.c_str(), &end);
      if (end != token.c_str() && std::isinf(v))
        fail(line, fmt::format("number {} is out of the range of a double (largest magnitude about 1.8e308)", token));
      i = k;
    } else {
      ++i;
    }
  }
}

inline std::string describe(const json& v) {
  std::string dump = v.dump();
  if (dump.size() > 40) dump = dump.substr(0, 37) + "...";
  return fmt::format("{} {}", v.type_name(), dump);
}

// ---- typed field access with errors naming file:line: field ----------------

struct Ctx {
  std::string file, text;
  fs::path dir;  // directory of the suite file

  [[noreturn]] void fail(const Path& path, const std::string& msg) const {
    throw SuiteError(fmt::format("{}:{}: {}: {}", file, lineAt(text, locate(text, path)), path.str(), msg));
  }

  void checkObject(const json& obj, const Path& path) const {
    if (!obj.is_object()) fail(path, fmt::format("expected an object {{...}}, got {}", describe(obj)));
  }

  void allowKeys(const json& obj, const Path& path, const std::vector<std::string>& allowed) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(path / it.key(), fmt::format("unknown field '{}' (expected one of: {})", it.key(), list));
      }
    }
  }

  const json* find(const json& obj, const std::string& key) const {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }

  const json& require(const json& obj, const Path& path, const std::string& key, const char* expected) const {
    const json* v = find(obj, key);
    if (!v) fail(path, fmt::format("missing field '{}' (expected {})", key, expected));
    return *v;
  }

  double number(const json& obj, const Path& path, const std::string& key, std::optional<double> dflt,
                double lo = -std::numeric_limits<double>::infinity(),
                double hi = std::numeric_limits<double>::infinity()) const {
    const std::string expected = fmt::format("a number in [{}, {}]", lo, hi);
    const json* v = dflt ? find(obj, key) : &require(obj, path, key, expected.c_str());
    if (!v) return *dflt;
    if (!v->is_number()) fail(path / key, fmt::format("expected {}, got {}", expected, describe(*v)));
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) fail(path / key, fmt::format("expected {}, got {}", expected, x));
    return x;
  }

  std::int64_t integer(const json& obj, const Path& path, const std::string& key, std::optional<std::int64_t> dflt,
                       std::int64_t lo = 0, std::int64_t hi = std::numeric_limits<int>::max()) const {
    const std::string expected = fmt::format("an integer in [{}, {}]", lo, hi);
    const json* v = dflt ? find(obj, key) : &require(obj, path, key, expected.c_str());
    if (!v) return *dflt;
    if (!v->is_number_integer()) fail(path / key, fmt::format("expected {}, got {}", expected, describe(*v)));
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(path / key, fmt::format("expected {}, got {}", expected, v->dump()));
    const std::int64_t x = v->get<std::int64_t>();
    if (x < lo || x > hi) fail(path / key, fmt::format("expected {}, got {}", expected, x));
    return x;
  }

  std::string string(const json& obj, const Path& path, const std::string& key, std::optional<std::string> dflt) const {
    const json* v = dflt ? find(obj, key) : &require(obj, path, key, "a string");
    if (!v) return *dflt;
    if (!v->is_string()) fail(path / key, fmt::format("expected a string, got {}", describe(*v)));
    return v->get<std::string>();
  }

  bool boolean(const json& obj, const Path& path, const std::string& key, bool dflt) const {
    const json* v = find(obj, key);
    if (!v) return dflt;
    if (!v->is_boolean()) fail(path / key, fmt::format("expected true or false, got {}", describe(*v)));
    return v->get<bool>();
  }

  std::vector<std::string> strings(const json& obj, const Path& path, const std::string& key) const {
    std::vector<std::string> out;
    const json* v = find(obj, key);
    if (!v) return out;
    if (!v->is_array()) fail(path / key, fmt::format("expected an array of strings, got {}", describe(*v)));
    for (size_t k = 0; k < v->size(); ++k) {
      if (!(*v)[k].is_string()) fail(path / key / k, fmt::format("expected a string, got {}", describe((*v)[k])));
      out.push_back((*v)[k].get<std::string>());
    }
    return out;
  }

  template <typename E, size_t N>
  E parseEnumField(const json& obj, const Path& path, const std::string& key, const std::string& dflt,
                   const EnumTable<E, N>& table) const {
    const std::string s = string(obj, path, key, dflt);
    try {
      return table.parse(s);
    } catch (const std::invalid_argument& e) {
      fail(path / key, e.what());
    }
  }

  // A data file named in a suite: absolute, relative to the suite file, or
  // relative to the shipped data directory, in that order.
  std::string resolve(const json& obj, const Path& path, const std::string& key) const {
    const std::string name = string(obj, path, key, std::nullopt);
    const fs::path p(name);
    if (p.is_absolute()) return p.string();
    if (fs::exists(dir / p)) return (dir / p).string();
    const fs::path d = fs::path(dataDirectory()) / p;
    if (fs::exists(d)) return d.string();
    fail(path / key, fmt::format("file '{}' not found (looked in '{}' and '{}')", name, dir.string(), dataDirectory()));
  }
};


// The context of a JSON input file's text (relative paths in it resolve
// against its directory).
inline Ctx inputContext(const std::string& text, const std::string& path) {
  Ctx c;
  c.file = path;
  c.text = text;
  c.dir = fs::path(path).parent_path();
  return c;
}

// Parses a JSON input file's text after checkJsonText; errors as SuiteError
// naming the file and line.
inline json parseJsonInput(const Ctx& c) {
  checkJsonText(c.text, c.file);
  try {
    return json::parse(c.text);
  } catch (const json::parse_error& e) {
    // nlohmann's message already says "at line L, column C".
    throw SuiteError(
        fmt::format("{}:{}: invalid JSON: {}", c.file, lineAt(c.text, e.byte > 0 ? e.byte - 1 : 0), e.what()));
  } catch (const json::exception& e) {
    throw SuiteError(fmt::format("{}: invalid JSON: {}", c.file, e.what()));
  }
}

}  // namespace ikbench::json_input
