#include "harness/results_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

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

// Rows of one CSV file by key; the key columns are family, problem, solver.
// `ordered` files (traces) keep several lines per key, joined by '\n'.
void readRows(const ResultsDirectory& r, const std::string& name, const std::vector<std::string>& expected_header,
              std::map<RowKey, std::string>* out, std::vector<std::string>* header_out) {
  std::ifstream f(r.file(name));
  if (!f) throw ResultsError(fmt::format("{}: cannot read", r.file(name)));
  std::string line;
  if (!std::getline(f, line)) throw ResultsError(fmt::format("{}:1: no header", r.file(name)));
  const std::vector<std::string> header = parseCsvLine(line, r.file(name) + ":1");
  if (!expected_header.empty() && header != expected_header)
    throw ResultsError(fmt::format("{}:1: header '{}' differs from the format's '{}'", r.file(name), line,
                                   fmt::join(expected_header, ",")));
  if (header_out) *header_out = header;
  const auto col = [&](const char* c) -> size_t {
    auto it = std::find(header.begin(), header.end(), c);
    if (it == header.end()) throw ResultsError(fmt::format("{}:1: no column '{}'", r.file(name), c));
    return static_cast<size_t>(it - header.begin());
  };
  const size_t cf = col("family"), cp = col("problem"), cs = col("solver");
  std::map<std::string, int> fam, sol;
  for (size_t i = 0; i < r.families.size(); ++i) fam[r.families[i]] = static_cast<int>(i);
  for (size_t i = 0; i < r.solvers.size(); ++i) sol[r.solvers[i]] = static_cast<int>(i);
  for (long n = 2; std::getline(f, line); ++n) {
    const std::string where = fmt::format("{}:{}", r.file(name), n);
    const std::vector<std::string> cells = parseCsvLine(line, where);
    if (cells.size() != header.size())
      throw ResultsError(fmt::format("{}: {} fields, expected {}", where, cells.size(), header.size()));
    auto fi = fam.find(cells[cf]);
    auto si = sol.find(cells[cs]);
    if (fi == fam.end()) throw ResultsError(fmt::format("{}: family '{}' is not in run.json", where, cells[cf]));
    if (si == sol.end()) throw ResultsError(fmt::format("{}: solver '{}' is not in run.json", where, cells[cs]));
    int p = -1;
    try {
      p = std::stoi(cells[cp]);
    } catch (const std::exception&) {
      throw ResultsError(fmt::format("{}: problem '{}' is not an integer", where, cells[cp]));
    }
    std::string& slot = (*out)[{fi->second, p, si->second}];
    slot += (slot.empty() ? "" : "\n") + line;
  }
}

}  // namespace

ResultsDirectory readResults(const std::string& dir, bool require_complete, bool rows) {
  ResultsDirectory r;
  r.dir = dir;
  std::ifstream f(r.file("run.json"));
  if (!f) throw ResultsError(fmt::format("{}: no run.json (not a results directory?)", dir));
  try {
    r.run = json::parse(f);
  } catch (const json::exception& e) {
    throw ResultsError(fmt::format("{}: not valid JSON: {}", r.file("run.json"), e.what()));
  }
  if (r.run.value("format_version", 0) != kFormatVersion)
    throw ResultsError(fmt::format("{}: format_version {} (this ikbench reads {})", r.file("run.json"),
                                   r.run.value("format_version", 0), kFormatVersion));
  for (const json& fam : r.run.at("families")) r.families.push_back(fam.at("name").get<std::string>());
  for (const json& s : r.run.at("solvers")) r.solvers.push_back(s.at("spec").get<std::string>());
  if (require_complete) {
    if (!r.run.value("complete", false))
      throw ResultsError(fmt::format("{}: the run is incomplete (interrupted or still running; run.json says "
                                     "\"complete\": false): resume it with ikbench run ... --resume --out {}",
                                     dir, dir));
    if (!r.run.contains("files")) throw ResultsError(fmt::format("{}: no manifest 'files'", r.file("run.json")));
    for (const auto& [name, expected] : r.run["files"].items()) {
      json actual;
      try {
        actual = manifestEntry(r.file(name));
      } catch (const ResultsError&) {
        throw ResultsError(fmt::format("{}: {} is missing", dir, name));
      }
      if (actual != expected)
        throw ResultsError(fmt::format("{}: {} does not match the run's manifest in run.json (a file of another "
                                       "run, or changed since): expected {}, found {}",
                                       dir, name, expected.dump(), actual.dump()));
    }
  }
  if (rows) {
    readRows(r, "solves.csv", solveHeader(), &r.solves, &r.solve_header);
    readRows(r, "solutions.csv", kSolutionColumns, &r.solutions, nullptr);
    readRows(r, "traces.csv", kTraceColumns, &r.traces, nullptr);
  }
  return r;
}

std::map<std::string, std::shared_ptr<const Model>> readModels(const ResultsDirectory& r) {
  std::ifstream f(r.file("models.json"));
  if (!f) throw ResultsError(fmt::format("{}: cannot read", r.file("models.json")));
  json j;
  try {
    j = json::parse(f);
  } catch (const json::exception& e) {
    throw ResultsError(fmt::format("{}: not valid JSON: {}", r.file("models.json"), e.what()));
  }
  std::map<std::string, std::shared_ptr<const Model>> out;
  if (!j.contains("models") || !j["models"].is_array())
    throw ResultsError(fmt::format("{}: no array 'models'", r.file("models.json")));
  for (size_t i = 0; i < j["models"].size(); ++i) {
    const json& m = j["models"][i];
    const std::string where = fmt::format("{}: models[{}]", r.file("models.json"), i);
    if (!m.contains("id") || !m["id"].is_string()) throw ResultsError(where + ": no id");
    out[m["id"].get<std::string>()] = modelFromJson(m, where);
  }
  return out;
}

std::map<std::pair<int, int>, Problem> readProblems(const ResultsDirectory& r,
                                                    const std::map<std::string, std::shared_ptr<const Model>>& models) {
  std::ifstream f(r.file("problems.jsonl"));
  if (!f) throw ResultsError(fmt::format("{}: cannot read", r.file("problems.jsonl")));
  std::map<std::string, int> fam;
  for (size_t i = 0; i < r.families.size(); ++i) fam[r.families[i]] = static_cast<int>(i);
  std::map<std::pair<int, int>, Problem> out;
  std::string line;
  for (long n = 1; std::getline(f, line); ++n) {
    const std::string where = fmt::format("{}:{}", r.file("problems.jsonl"), n);
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      throw ResultsError(fmt::format("{}: not valid JSON: {}", where, e.what()));
    }
    if (!j.contains("family") || !j["family"].is_string() || !j.contains("problem") || !j["problem"].is_number_integer())
      throw ResultsError(where + ": no family / problem");
    auto fi = fam.find(j["family"].get<std::string>());
    if (fi == fam.end()) throw ResultsError(fmt::format("{}: family '{}' is not in run.json", where, j["family"].dump()));
    out[{fi->second, j["problem"].get<int>()}] = problemFromJson(j, models, where);
  }
  return out;
}

}  // namespace ikbench::harness
