#include "harness/results_reader.h"

#include "harness/gzip_stream.h"
#include "ikbench/kinematics/config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

namespace ikbench::harness {
namespace fs = std::filesystem;
using nlohmann::json;

std::string ResultsDirectory::file(const std::string& name) const {
  const auto it = paths.find(name);
  return it != paths.end() ? it->second : (fs::path(dir) / name).string();
}

size_t ResultsDirectory::column(const std::string& name) const {
  auto it = std::find(solve_header.begin(), solve_header.end(), name);
  if (it == solve_header.end()) throw ResultsError(fmt::format("{}: no column '{}'", file("solves.csv"), name));
  return static_cast<size_t>(it - solve_header.begin());
}

std::string ResultsDirectory::read(const std::string& name, std::size_t max_bytes) const {
  const std::string path = file(name);
  std::string text = readRunFile(path, max_bytes);
  if (const auto it = rows_to_check.find(name); it != rows_to_check.end()) {
    const long found = manifestRows(path, text);
    if (found != it->second)
      throw ResultsError(fmt::format("{}: {} does not match the run's manifest in run.json (a file of another run, "
                                     "or changed since): {} rows, the manifest says {}",
                                     dir, fs::path(path).filename().string(), found, it->second));
  }
  return text;
}

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& field, const std::string& what) {
  throw ResultsError(fmt::format("{}: field '{}': {}", where, field, what));
}

const json& field(const json& j, const std::string& key, const std::string& where, const std::string& path) {
  if (!j.is_object()) bad(where, path, "expected an object");
  auto it = j.find(key);
  if (it == j.end()) bad(where, path.empty() ? key : path + "." + key, "missing");
  return *it;
}

long integer(const json& j, const std::string& where, const std::string& path, long lo, long hi) {
  if (!j.is_number_integer()) bad(where, path, fmt::format("expected an integer, got {}", j.type_name()));
  const long v = j.is_number_unsigned() && j.get<unsigned long>() > static_cast<unsigned long>(hi) ? hi + 1 : j.get<long>();
  if (v < lo || v > hi) bad(where, path, fmt::format("{} is outside [{}, {}]", j.dump(), lo, hi));
  return v;
}

// The parts of run.json the readers use, each checked for its type and range,
// so that a damaged run.json is an error naming the field.
void checkRunJson(const json& run, const std::string& where, bool require_complete) {
  if (!run.is_object()) bad(where, "(top level)", "expected an object");
  if (const auto it = run.find("complete"); it != run.end() && !it->is_boolean()) bad(where, "complete", "expected true or false");
  const json& families = field(run, "families", where, "");
  if (!families.is_array()) bad(where, "families", "expected an array");
  std::set<std::string> names;
  for (size_t i = 0; i < families.size(); ++i) {
    const std::string path = fmt::format("families[{}]", i);
    const json& name = field(families[i], "name", where, path);
    if (!name.is_string()) bad(where, path + ".name", "expected a string");
    if (!names.insert(name.get<std::string>()).second) bad(where, path + ".name", "a second family of this name");
    integer(field(families[i], "problems", where, path), where, path + ".problems", 0, results_schema::kMaxFamilyProblems);
  }
  const json& solvers = field(run, "solvers", where, "");
  if (!solvers.is_array()) bad(where, "solvers", "expected an array");
  std::set<std::string> specs;
  for (size_t i = 0; i < solvers.size(); ++i) {
    const std::string path = fmt::format("solvers[{}]", i);
    const json& spec = field(solvers[i], "spec", where, path);
    if (!spec.is_string()) bad(where, path + ".spec", "expected a string");
    if (!specs.insert(spec.get<std::string>()).second) bad(where, path + ".spec", "a second solver of this spec");
  }
  const json& options = field(field(run, "suite", where, ""), "options", where, "suite");
  for (const char* tol : {"position_tolerance_m", "orientation_tolerance_rad"}) {
    const json& t = field(options, tol, where, "suite.options");
    if (!t.is_number() || !(t.get<double>() > 0) || !std::isfinite(t.get<double>()))
      bad(where, std::string("suite.options.") + tol, fmt::format("{} is not a finite positive number", t.dump()));
  }
  if (const auto it = run.find("shard"); it != run.end() && !it->is_null()) {
    const long n = integer(field(*it, "count", where, "shard"), where, "shard.count", 1, results_schema::kMaxShardCount);
    integer(field(*it, "index", where, "shard"), where, "shard.index", 1, n);
  }
  if (const auto it = run.find("trace"); it != run.end() && !it->is_object()) bad(where, "trace", "expected an object");
  if (!require_complete) return;
  // A complete run's manifest lists exactly the run's files, by their plain
  // names: a reader never opens a path the manifest makes up.
  const json& files = field(run, "files", where, "");
  if (!files.is_object()) bad(where, "files", "expected an object");
  std::set<std::string> listed;
  for (const auto& [name, entry] : files.items()) {
    const std::string plain = manifestFileOf(name);
    if (plain.empty())
      bad(where, "files", fmt::format("names '{}', which is not a file of a run (expected exactly: {}; each may "
                                      "be compressed, NAME.gz)",
                                      name, fmt::join(kManifestFiles, ", ")));
    if (!listed.insert(plain).second)
      bad(where, "files", fmt::format("lists {} twice (plain and compressed)", plain));
    const std::string path = "files." + name;
    integer(field(entry, "rows", where, path), where, path + ".rows", 0, std::numeric_limits<long>::max() - 1);
    integer(field(entry, "bytes", where, path), where, path + ".bytes", 0, std::numeric_limits<long>::max() - 1);
    if (!field(entry, "fnv1a64", where, path).is_string()) bad(where, path + ".fnv1a64", "expected a string");
  }
  for (const std::string& name : kManifestFiles)
    if (!listed.count(name)) bad(where, "files", fmt::format("does not list {}", name));
}

// Rows of one CSV file by key; the key columns are family, problem, solver.
// Traces keep several lines per key (joined by '\n'); a solve has one row, a
// solution one row per (key, solution).
enum class Rows { kOnePerKey, kOnePerSolution, kSequence };

void readRows(const ResultsDirectory& r, const std::string& name, const std::vector<std::string>& expected_header,
              Rows kind, std::map<RowKey, std::string>* out, std::vector<std::string>* header_out,
              bool optional_columns = false) {
  const std::string path = r.file(name);
  const std::string text = r.read(name, std::numeric_limits<std::size_t>::max());
  size_t pos = 0;
  long n = 0;
  std::string_view line;
  auto next = [&]() {
    if (pos >= text.size()) return false;
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    ++n;
    if (nl - pos > kMaxLineBytes)
      throw ResultsError(fmt::format("{}:{}: a line of {} bytes, more than a reader takes ({})", path, n, nl - pos,
                                     kMaxLineBytes));
    line = std::string_view(text).substr(pos, nl - pos);
    pos = nl + 1;
    return true;
  };
  if (!next()) throw ResultsError(fmt::format("{}:1: no header", path));
  const std::vector<std::string> header = parseCsvLine(line, path + ":1");
  // solves.csv may go on with optional columns (kOptionalSolveColumns), each once.
  std::vector<std::string> leading = header;
  if (optional_columns && header.size() > expected_header.size()) {
    leading.resize(expected_header.size());
    std::set<std::string> seen;
    for (size_t c = expected_header.size(); c < header.size(); ++c)
      if (std::find(kOptionalSolveColumns.begin(), kOptionalSolveColumns.end(), header[c]) ==
              kOptionalSolveColumns.end() ||
          !seen.insert(header[c]).second)
        throw ResultsError(fmt::format("{}:1: column '{}' after the format's columns is not one of the optional "
                                       "columns ({}) or is given twice",
                                       path, header[c], fmt::join(kOptionalSolveColumns, ",")));
  }
  if (!expected_header.empty() && leading != expected_header)
    throw ResultsError(fmt::format("{}:1: header '{}' differs from the format's '{}'", path, line,
                                   fmt::join(expected_header, ",")));
  if (header_out) *header_out = header;
  const auto col = [&](const char* c) -> size_t {
    auto it = std::find(header.begin(), header.end(), c);
    if (it == header.end()) throw ResultsError(fmt::format("{}:1: no column '{}'", path, c));
    return static_cast<size_t>(it - header.begin());
  };
  const size_t cf = col("family"), cp = col("problem"), cs = col("solver");
  const size_t csol = kind == Rows::kOnePerSolution ? col("solution") : 0;
  std::map<std::string, int> fam, sol;
  for (size_t i = 0; i < r.families.size(); ++i) fam[r.families[i]] = static_cast<int>(i);
  for (size_t i = 0; i < r.solvers.size(); ++i) sol[r.solvers[i]] = static_cast<int>(i);
  std::map<RowKey, long> first_line;
  std::set<std::pair<RowKey, long>> solutions;
  auto index = [&](const std::string& cell, const std::string& where, const char* what, long hi) {
    long v = -1;
    const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
    if (cell.empty() || ec != std::errc() || end != cell.data() + cell.size() || v < 0 || v >= hi)
      throw ResultsError(fmt::format("{}: column '{}': '{}' is not an integer in [0, {})", where, what, cell, hi));
    return v;
  };
  while (next()) {
    const std::string where = fmt::format("{}:{}", path, n);
    const std::vector<std::string> cells = parseCsvLine(line, where);
    if (cells.size() != header.size())
      throw ResultsError(fmt::format("{}: {} fields, expected {}", where, cells.size(), header.size()));
    auto fi = fam.find(cells[cf]);
    auto si = sol.find(cells[cs]);
    if (fi == fam.end()) throw ResultsError(fmt::format("{}: family '{}' is not in run.json", where, cells[cf]));
    if (si == sol.end()) throw ResultsError(fmt::format("{}: solver '{}' is not in run.json", where, cells[cs]));
    const long problems = r.run["families"][static_cast<size_t>(fi->second)]["problems"].get<long>();
    const int p = static_cast<int>(index(cells[cp], where, "problem", problems));
    const RowKey key{fi->second, p, si->second};
    if (kind == Rows::kOnePerKey) {
      if (const auto [it, fresh] = first_line.emplace(key, n); !fresh)
        throw ResultsError(fmt::format("{}: a second row for family {} problem {} solver {} (the first is line {})",
                                       where, cells[cf], p, cells[cs], it->second));
    }
    if (kind == Rows::kOnePerSolution) {
      const long k = index(cells[csol], where, "solution", std::numeric_limits<int>::max());
      if (!solutions.emplace(key, k).second)
        throw ResultsError(fmt::format("{}: solution {} of family {} problem {} solver {} is given twice", where, k,
                                       cells[cf], p, cells[cs]));
    }
    std::string& slot = (*out)[key];
    slot += (slot.empty() ? "" : "\n");
    slot += line;
  }
}

}  // namespace

ResultsDirectory readResults(const std::string& dir, bool require_complete, bool rows, bool traces) {
  ResultsDirectory r;
  r.dir = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw ResultsError(fmt::format("{}: not a results directory (not a directory)", dir));
  if (!fs::exists(r.file("run.json"), ec))
    throw ResultsError(fmt::format("{}: no run.json (not a results directory?)", dir));
  r.run = parseJsonText(readRegularFile(r.file("run.json"), kMaxRunJsonBytes), r.file("run.json"));
  if (!r.run.is_object() || !r.run.contains("format_version") || !r.run["format_version"].is_number_integer() ||
      r.run["format_version"].get<long>() != kFormatVersion)
    throw ResultsError(fmt::format("{}: field 'format_version': {} (this ikbench reads {})", r.file("run.json"),
                                   r.run.is_object() && r.run.contains("format_version") ? r.run["format_version"].dump()
                                                                                         : "missing",
                                   kFormatVersion));
  checkRunJson(r.run, r.file("run.json"), require_complete);
  for (const json& fam : r.run.at("families")) r.families.push_back(fam.at("name").get<std::string>());
  for (const json& s : r.run.at("solvers")) r.solvers.push_back(s.at("spec").get<std::string>());
  if (require_complete) {
    for (const auto& [name, entry] : r.run["files"].items()) {
      runFilePath(dir, manifestFileOf(name));  // refuses a plain and a compressed copy side by side
      r.paths[manifestFileOf(name)] = (fs::path(dir) / name).string();
    }
  } else {
    for (const std::string& name : kManifestFiles) r.paths[name] = runFilePath(dir, name);
  }
  if (require_complete) {
    if (!r.run.value("complete", false))
      throw ResultsError(fmt::format("{}: the run is incomplete (interrupted or still running; run.json says "
                                     "\"complete\": false): resume it with ikbench run ... --resume --out {}",
                                     dir, dir));
    for (const auto& [name, expected_entry] : r.run["files"].items()) {
      const std::string path = (fs::path(dir) / name).string();
      if (!fs::exists(path, ec)) throw ResultsError(fmt::format("{}: {} is missing", dir, name));
      // A compressed file's bytes and hash here, its rows when it is read.
      const bool gzip = hasGzipSuffix(name);
      const json actual = manifestEntry(path, /*rows=*/!gzip);
      json expected = expected_entry;
      if (gzip) {
        r.rows_to_check[manifestFileOf(name)] = expected["rows"].get<long>();
        expected.erase("rows");
      }
      if (actual != expected)
        throw ResultsError(fmt::format("{}: {} does not match the run's manifest in run.json (a file of another "
                                       "run, or changed since): expected {}, found {}",
                                       dir, name, expected.dump(), actual.dump()));
    }
  }
  if (rows) {
    readRows(r, "solves.csv", solveHeader(), Rows::kOnePerKey, &r.solves, &r.solve_header, true);
    readRows(r, "solutions.csv", kSolutionColumns, Rows::kOnePerSolution, &r.solutions, nullptr);
    if (traces) readRows(r, "traces.csv", kTraceColumns, Rows::kSequence, &r.traces, nullptr);
  }
  return r;
}

std::map<std::string, std::shared_ptr<const Model>> readModels(const ResultsDirectory& r, SceneWorlds* scenes) {
  const json j = parseJsonText(r.read("models.json", kMaxModelsJsonBytes), r.file("models.json"));
  std::map<std::string, std::shared_ptr<const Model>> out;
  if (!j.contains("models") || !j["models"].is_array())
    throw ResultsError(fmt::format("{}: no array 'models'", r.file("models.json")));
  for (size_t i = 0; i < j["models"].size(); ++i) {
    const json& m = j["models"][i];
    const std::string where = fmt::format("{}: models[{}]", r.file("models.json"), i);
    if (!m.contains("id") || !m["id"].is_string()) throw ResultsError(where + ": no id");
    const std::string id = m["id"].get<std::string>();
    if (out.count(id)) throw ResultsError(where + ": id: a second model of this id");
    auto model = modelFromJson(m, where);
    if (scenes)
      if (auto w = sceneFromJson(m, model, where)) (*scenes)[id] = std::move(w);
    out[id] = std::move(model);
  }
  return out;
}

void attachScenes(const SceneWorlds& scenes, const std::map<std::string, std::shared_ptr<const Model>>& models,
                  std::map<std::pair<int, int>, Problem>& problems) {
  std::map<const Model*, std::shared_ptr<const CollisionWorld>> by_model;
  for (const auto& [id, w] : scenes)
    if (const auto m = models.find(id); m != models.end()) by_model[m->second.get()] = w;
  for (auto& [key, p] : problems)
    if (const auto w = by_model.find(p.model.get()); w != by_model.end()) p.collision = w->second;
}

std::map<std::pair<int, int>, Problem> readProblems(const ResultsDirectory& r,
                                                    const std::map<std::string, std::shared_ptr<const Model>>& models) {
  const std::string path = r.file("problems.jsonl");
  const std::string text = r.read("problems.jsonl", std::numeric_limits<std::size_t>::max());
  std::map<std::string, int> fam;
  for (size_t i = 0; i < r.families.size(); ++i) fam[r.families[i]] = static_cast<int>(i);
  std::map<std::pair<int, int>, Problem> out;
  size_t pos = 0;
  for (long n = 1; pos < text.size(); ++n) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string where = fmt::format("{}:{}", path, n);
    if (nl - pos > kMaxLineBytes)
      throw ResultsError(fmt::format("{}: a line of {} bytes, more than a reader takes ({})", where, nl - pos, kMaxLineBytes));
    const json j = parseJsonText(std::string_view(text).substr(pos, nl - pos), where);
    pos = nl + 1;
    if (!j.is_object() || !j.contains("family") || !j["family"].is_string() || !j.contains("problem") ||
        !j["problem"].is_number_integer())
      throw ResultsError(where + ": fields 'family' (a string) and 'problem' (an integer) expected");
    auto fi = fam.find(j["family"].get<std::string>());
    if (fi == fam.end()) throw ResultsError(fmt::format("{}: family '{}' is not in run.json", where, j["family"].dump()));
    const long problems = r.run["families"][static_cast<size_t>(fi->second)]["problems"].get<long>();
    const long k = j["problem"].get<long>();
    if (k < 0 || k >= problems)
      throw ResultsError(fmt::format("{}: field 'problem': {} is outside [0, {}) (run.json's count for family {})", where,
                                     k, problems, j["family"].dump()));
    if (!out.emplace(std::pair<int, int>{fi->second, static_cast<int>(k)}, problemFromJson(j, models, where)).second)
      throw ResultsError(fmt::format("{}: problem {} of family {} is given twice", where, k, j["family"].dump()));
  }
  return out;
}

namespace {

// Valid UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool validUtf8(std::string_view t) {
  size_t i = 0;
  while (i < t.size()) {
    const unsigned char c = static_cast<unsigned char>(t[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    const int n = (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : 0;
    if (n == 0 || i + static_cast<size_t>(n) >= t.size()) return false;
    std::uint32_t cp = n == 1 ? (c & 0x1Fu) : n == 2 ? (c & 0x0Fu) : (c & 0x07u);
    for (int k = 1; k <= n; ++k) {
      const unsigned char d = static_cast<unsigned char>(t[i + static_cast<size_t>(k)]);
      if ((d >> 6) != 0x2) return false;
      cp = (cp << 6) | (d & 0x3Fu);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += static_cast<size_t>(n) + 1;
  }
  return true;
}

enum class Kind {
  kText, kName, kCount, kIndex, kFlag, kNumber, kNonNegative, kMaybeEmpty, kMaybeNumber, kMaybeFlag, kOutcome,
  kSeed, kStatus, kConfig
};

Kind kindOf(const std::string& column) {
  static const std::map<std::string, Kind> kinds = {
      {"suite", Kind::kName},       {"family", Kind::kName},        {"solver", Kind::kName},
      {"goal", Kind::kName},        {"problem", Kind::kIndex},      {"solution", Kind::kIndex},
      {"dof", Kind::kCount},        {"effectors", Kind::kCount},    {"iterations", Kind::kCount},
      {"restarts", Kind::kCount},   {"fk_evals", Kind::kCount},     {"jacobian_evals", Kind::kCount},
      {"solutions", Kind::kCount},  {"iteration", Kind::kCount},    {"converged", Kind::kFlag},
      {"within_limits", Kind::kFlag}, {"position_error", Kind::kNonNegative},
      {"orientation_error", Kind::kNonNegative}, {"time_us", Kind::kNonNegative},
      {"elapsed_us", Kind::kNonNegative}, {"time_per_iteration_us", Kind::kMaybeEmpty},
      {"seed_distance", Kind::kMaybeEmpty}, {"step_norm", Kind::kNumber}, {"damping", Kind::kNumber},
      {"seed", Kind::kSeed},         {"status", Kind::kStatus},      {"q", Kind::kConfig},
      {"outcome", Kind::kOutcome},   {"manipulability", Kind::kMaybeEmpty}, {"limit_margin", Kind::kMaybeNumber},
      {"joint_jump", Kind::kMaybeEmpty}, {"branch_switch", Kind::kMaybeFlag},
      {"joint_velocity", Kind::kMaybeEmpty}, {"joint_acceleration", Kind::kMaybeEmpty},
      {"joint_jerk", Kind::kMaybeEmpty}, {"collision_free", Kind::kMaybeFlag},
      {"min_clearance", Kind::kMaybeNumber}, {"solver_time_us", Kind::kMaybeEmpty},
      {"levels_met", Kind::kMaybeEmpty}};
  const auto it = kinds.find(column);
  return it == kinds.end() ? Kind::kText : it->second;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// One file's rows (several lines per key for traces and solutions).
void checkFile(const ResultsDirectory& r, const std::string& name, const std::map<RowKey, std::string>& rows,
               const std::vector<std::string>& header, const std::map<std::pair<int, int>, Problem>& problems) {
  const std::string suite = r.run.contains("suite") && r.run["suite"].is_object() && r.run["suite"].contains("name") &&
                                    r.run["suite"]["name"].is_string()
                                ? r.run["suite"]["name"].get<std::string>()
                                : std::string();
  const auto status_col = std::find(header.begin(), header.end(), "status");
  for (const auto& [key, lines] : rows) {
    const std::string row_name = fmt::format("{}: family {} problem {} solver {}", r.file(name),
                                             r.families[std::get<0>(key)], std::get<1>(key), r.solvers[std::get<2>(key)]);
    const auto pit = problems.find({std::get<0>(key), std::get<1>(key)});
    size_t start = 0;
    while (start <= lines.size()) {
      size_t nl = lines.find('\n', start);
      if (nl == std::string::npos) nl = lines.size();
      const std::string_view line = std::string_view(lines).substr(start, nl - start);
      start = nl + 1;
      if (!validUtf8(line)) throw ResultsError(fmt::format("{}: the row is not UTF-8 text", row_name));
      const std::vector<std::string> cells = parseCsvLine(line, row_name);
      bool returns_q = true;
      if (status_col != header.end()) {
        Status st;
        const std::string text = trimmed(cells[static_cast<size_t>(status_col - header.begin())]);
        if (!parseStatus(text, &st))
          throw ResultsError(fmt::format("{}: column 'status': unknown status '{}'", row_name, text));
        returns_q = st != Status::kUnsupported && st != Status::kInvalidInput;
      }
      for (size_t c = 0; c < header.size(); ++c) {
        const std::string cell = trimmed(cells[c]);
        auto bad = [&](const char* expected) {
          return ResultsError(fmt::format("{}: column '{}': '{}' is not {}", row_name, header[c],
                                          cell.size() > 60 ? cell.substr(0, 57) + "..." : cell, expected));
        };
        double x = 0.0;
        switch (kindOf(header[c])) {
          case Kind::kText: break;
          case Kind::kName:
            if (cell.empty()) throw bad("a non-empty name");
            if (header[c] == "suite" && !suite.empty() && cell != suite)
              throw ResultsError(fmt::format("{}: column 'suite' is '{}', but run.json is suite '{}': files of "
                                             "different runs are mixed",
                                             row_name, cell, suite));
            break;
          case Kind::kIndex:
            if (cell.empty() || cell.find_first_not_of("0123456789") != std::string::npos || cell.size() > 10 ||
                std::stoll(cell) > std::numeric_limits<int>::max())
              throw bad("a non-negative integer below 2^31");
            break;
          case Kind::kCount:
            if (!parseResultNumber(cell, &x) || !std::isfinite(x) || x < 0 || x != std::floor(x) || x > 9007199254740992.0)
              throw bad("a non-negative integer");
            break;
          case Kind::kFlag:
            if (cell != "0" && cell != "1") throw bad("0 or 1");
            break;
          case Kind::kNumber:
            if (!parseResultNumber(cell, &x)) throw bad("a number (or nan, inf)");
            break;
          case Kind::kNonNegative:
            if (!parseResultNumber(cell, &x)) throw bad("a number (or nan, inf)");
            if (x < 0) throw bad("a non-negative number");
            break;
          case Kind::kMaybeEmpty:
            if (cell.empty()) break;
            if (!parseResultNumber(cell, &x)) throw bad("a number (or nan, inf) or nothing");
            if (x < 0) throw bad("a non-negative number");
            break;
          case Kind::kMaybeNumber:
            if (!cell.empty() && !parseResultNumber(cell, &x)) throw bad("a number (or nan, inf) or nothing");
            break;
          case Kind::kMaybeFlag:
            if (!cell.empty() && cell != "0" && cell != "1") throw bad("0, 1 or nothing");
            break;
          case Kind::kOutcome:
            if (std::find(kOutcomeNames.begin(), kOutcomeNames.end(), cell) == kOutcomeNames.end())
              throw bad(fmt::format("an outcome ({})", fmt::join(kOutcomeNames, ", ")).c_str());
            break;
          case Kind::kSeed: {
            std::uint64_t v = 0;
            const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
            if (cell.empty() || ec != std::errc() || end != cell.data() + cell.size())
              throw bad("an unsigned 64-bit integer");
            break;
          }
          case Kind::kStatus: break;
          case Kind::kConfig: {
            if (cell.empty()) {
              if (returns_q)
                throw ResultsError(fmt::format("{}: column 'q': empty, but the solve returns a configuration (only "
                                               "unsupported and invalid-input solves have none)",
                                               row_name));
              break;
            }
            const Eigen::VectorXd q = parseConfigText(cell, fmt::format("{}: column 'q'", row_name));
            if (pit != problems.end() && q.size() != pit->second.model->nq())
              throw ResultsError(fmt::format("{}: column 'q': {} numbers, the problem's model has nq {}", row_name,
                                             q.size(), pit->second.model->nq()));
            // An answer (solves.csv, solutions.csv) is a configuration of its
            // model: finite, unit quaternions (verify's rule, for every reader).
            if (std::string why; returns_q && pit != problems.end() && name != "traces.csv" &&
                                 !isValidConfiguration(*pit->second.model, q, &why))
              throw ResultsError(fmt::format("{}: column 'q': {}", row_name, why));
            break;
          }
        }
      }
      if (nl == lines.size()) break;
    }
  }
}

}  // namespace

void checkRows(const ResultsDirectory& r, const std::map<std::pair<int, int>, Problem>& problems, bool traces) {
  checkFile(r, "solves.csv", r.solves, r.solve_header, problems);
  checkFile(r, "solutions.csv", r.solutions, kSolutionColumns, problems);
  if (traces) checkFile(r, "traces.csv", r.traces, kTraceColumns, problems);
}

}  // namespace ikbench::harness
