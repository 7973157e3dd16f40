#include "harness/results_reader.h"

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

std::string ResultsDirectory::file(const std::string& name) const { return (fs::path(dir) / name).string(); }

size_t ResultsDirectory::column(const std::string& name) const {
  auto it = std::find(solve_header.begin(), solve_header.end(), name);
  if (it == solve_header.end()) throw ResultsError(fmt::format("{}: no column '{}'", file("solves.csv"), name));
  return static_cast<size_t>(it - solve_header.begin());
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
    integer(field(families[i], "problems", where, path), where, path + ".problems", 0, 1'000'000'000);
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
    const long n = integer(field(*it, "count", where, "shard"), where, "shard.count", 1, 100000);
    integer(field(*it, "index", where, "shard"), where, "shard.index", 1, n);
  }
  if (const auto it = run.find("trace"); it != run.end() && !it->is_object()) bad(where, "trace", "expected an object");
  if (!require_complete) return;
  // A complete run's manifest lists exactly the run's files, by their plain
  // names: a reader never opens a path the manifest makes up.
  const json& files = field(run, "files", where, "");
  if (!files.is_object()) bad(where, "files", "expected an object");
  for (const auto& [name, entry] : files.items()) {
    if (std::find(kManifestFiles.begin(), kManifestFiles.end(), name) == kManifestFiles.end())
      bad(where, "files", fmt::format("names '{}', which is not a file of a run (expected exactly: {})", name,
                                      fmt::join(kManifestFiles, ", ")));
    const std::string path = "files." + name;
    integer(field(entry, "rows", where, path), where, path + ".rows", 0, std::numeric_limits<long>::max() - 1);
    integer(field(entry, "bytes", where, path), where, path + ".bytes", 0, std::numeric_limits<long>::max() - 1);
    if (!field(entry, "fnv1a64", where, path).is_string()) bad(where, path + ".fnv1a64", "expected a string");
  }
  for (const std::string& name : kManifestFiles)
    if (!files.contains(name)) bad(where, "files", fmt::format("does not list {}", name));
}

// Rows of one CSV file by key; the key columns are family, problem, solver.
// Traces keep several lines per key (joined by '\n'); a solve has one row, a
// solution one row per (key, solution).
enum class Rows { kOnePerKey, kOnePerSolution, kSequence };

void readRows(const ResultsDirectory& r, const std::string& name, const std::vector<std::string>& expected_header,
              Rows kind, std::map<RowKey, std::string>* out, std::vector<std::string>* header_out) {
  const std::string path = r.file(name);
  const std::string text = readRegularFile(path, std::numeric_limits<std::size_t>::max());
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
  if (!expected_header.empty() && header != expected_header)
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

ResultsDirectory readResults(const std::string& dir, bool require_complete, bool rows) {
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
    if (!r.run.value("complete", false))
      throw ResultsError(fmt::format("{}: the run is incomplete (interrupted or still running; run.json says "
                                     "\"complete\": false): resume it with ikbench run ... --resume --out {}",
                                     dir, dir));
    for (const auto& [name, expected] : r.run["files"].items()) {
      if (!fs::exists(r.file(name), ec)) throw ResultsError(fmt::format("{}: {} is missing", dir, name));
      const json actual = manifestEntry(r.file(name));
      if (actual != expected)
        throw ResultsError(fmt::format("{}: {} does not match the run's manifest in run.json (a file of another "
                                       "run, or changed since): expected {}, found {}",
                                       dir, name, expected.dump(), actual.dump()));
    }
  }
  if (rows) {
    readRows(r, "solves.csv", solveHeader(), Rows::kOnePerKey, &r.solves, &r.solve_header);
    readRows(r, "solutions.csv", kSolutionColumns, Rows::kOnePerSolution, &r.solutions, nullptr);
    readRows(r, "traces.csv", kTraceColumns, Rows::kSequence, &r.traces, nullptr);
  }
  return r;
}

std::map<std::string, std::shared_ptr<const Model>> readModels(const ResultsDirectory& r) {
  const json j = parseJsonText(readRegularFile(r.file("models.json"), kMaxModelsJsonBytes), r.file("models.json"));
  std::map<std::string, std::shared_ptr<const Model>> out;
  if (!j.contains("models") || !j["models"].is_array())
    throw ResultsError(fmt::format("{}: no array 'models'", r.file("models.json")));
  for (size_t i = 0; i < j["models"].size(); ++i) {
    const json& m = j["models"][i];
    const std::string where = fmt::format("{}: models[{}]", r.file("models.json"), i);
    if (!m.contains("id") || !m["id"].is_string()) throw ResultsError(where + ": no id");
    if (out.count(m["id"].get<std::string>())) throw ResultsError(where + ": id: a second model of this id");
    out[m["id"].get<std::string>()] = modelFromJson(m, where);
  }
  return out;
}

std::map<std::pair<int, int>, Problem> readProblems(const ResultsDirectory& r,
                                                    const std::map<std::string, std::shared_ptr<const Model>>& models) {
  const std::string path = r.file("problems.jsonl");
  const std::string text = readRegularFile(path, std::numeric_limits<std::size_t>::max());
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

}  // namespace ikbench::harness
