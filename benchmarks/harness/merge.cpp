#include "harness/merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/build_info.h"
#include "harness/results_reader.h"
#include "harness/run_directory.h"

#include <filesystem>
#include <limits>

namespace ikbench::harness {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A member of a const object, or null when it is absent.
const json& at(const json& j, const char* key) {
  static const json null;
  const auto it = j.find(key);
  return it == j.end() ? null : *it;
}

}  // namespace

MergeReport mergeShards(const std::vector<std::string>& shard_dirs, const std::string& out_dir, OutputMode mode) {
  if (shard_dirs.empty()) throw HarnessError("merge: no shard directories given");
  // The output is never one of the shards (after links are resolved): --force
  // would remove the files the merge reads.
  std::error_code ec;
  for (const std::string& d : shard_dirs)
    if (fs::equivalent(d, out_dir, ec))
      throw HarnessError(fmt::format("merge: --out '{}' is the shard directory '{}': the merge would replace one "
                                     "of its own inputs; choose another --out",
                                     out_dir, d));
  std::vector<ResultsDirectory> shards;
  for (const std::string& d : shard_dirs) {
    // Every file of every shard is read and checked as verify checks it (and
    // the traces too): a merged run holds only rows a reader accepts.
    // The scenes too: a damaged one (or pairs that are no record of a run) is refused, as verify refuses it.
    shards.push_back(readResults(d, /*require_complete=*/true, /*rows=*/true));
    SceneWorlds scenes;
    checkRows(shards.back(), readProblems(shards.back(), readModels(shards.back(), &scenes)), /*traces=*/true);
  }

  // models.json and problems.jsonl are identical in every shard (checked
  // below); both are read before the output directory is touched.
  std::map<std::string, std::string> shared_files;
  shared_files["models.json"] = shards.front().read("models.json", kMaxModelsJsonBytes);
  shared_files["problems.jsonl"] = shards.front().read("problems.jsonl", std::numeric_limits<std::size_t>::max());

  // One run, cut into N complete shards, each exactly once.
  const json& first = shards.front().run;
  if (at(first, "shard").is_null())
    throw HarnessError(fmt::format("merge: '{}' is not a shard (run without --shard)", shard_dirs.front()));
  const int count = first["shard"].at("count").get<int>();
  std::vector<int> seen(static_cast<size_t>(count) + 1, 0);
  for (size_t i = 0; i < shards.size(); ++i) {
    const json& run = shards[i].run;
    if (at(run, "shard").is_null())
      throw HarnessError(fmt::format("merge: '{}' is not a shard (run without --shard)", shard_dirs[i]));
    for (const char* key : {"suite", "families", "solvers", "grid", "git_revision", "build"})
      if (const std::string diff = jsonDifference(at(first, key), at(run, key), key); !diff.empty())
        throw HarnessError(fmt::format("merge: '{}' and '{}' differ in {}: shards of different runs", shard_dirs[0],
                                       shard_dirs[i], diff));
    if (at(run, "trace").value("problems_per_family", -1) != at(first, "trace").value("problems_per_family", -1))
      throw HarnessError(fmt::format("merge: '{}' and '{}' traced different problems", shard_dirs[0], shard_dirs[i]));
    // Compared by content: a shard's files may be compressed or not.
    for (const auto& [file, content] : shared_files)
      if (i > 0 && shards[i].read(file, file == "models.json" ? kMaxModelsJsonBytes
                                                               : std::numeric_limits<std::size_t>::max()) != content)
        throw HarnessError(fmt::format("merge: '{}' and '{}' differ in {}", shard_dirs[0], shard_dirs[i], file));
    const int n = run["shard"].at("count").get<int>(), k = run["shard"].at("index").get<int>();
    if (n != count)
      throw HarnessError(fmt::format("merge: '{}' is a shard of {}, '{}' of {}", shard_dirs[i], n, shard_dirs[0], count));
    if (k < 1 || k > count || seen[k]++)
      throw HarnessError(fmt::format("merge: shard {}/{} is given twice ('{}')", k, count, shard_dirs[i]));
  }
  std::vector<int> missing;
  for (int k = 1; k <= count; ++k)
    if (!seen[k]) missing.push_back(k);
  if (!missing.empty())
    throw HarnessError(fmt::format("merge: shards {} of {} are missing", fmt::join(missing, ", "), count));

  // Rows by key, each from exactly one shard, covering every solve.
  std::map<RowKey, std::string> solves, solutions, traces;
  for (size_t i = 0; i < shards.size(); ++i) {
    if (shards[i].solve_header != shards.front().solve_header)
      throw HarnessError(fmt::format("merge: '{}' and '{}' have different solves.csv columns", shard_dirs[0],
                                     shard_dirs[i]));
    for (const auto& [key, line] : shards[i].solves)
      if (!solves.emplace(key, line).second)
        throw HarnessError(fmt::format("merge: a solve is in two shards ('{}' and another)", shard_dirs[i]));
    solutions.insert(shards[i].solutions.begin(), shards[i].solutions.end());
    traces.insert(shards[i].traces.begin(), shards[i].traces.end());
  }
  long expected = 0;
  for (const json& fam : first["families"]) expected += fam.at("problems").get<long>();
  expected *= static_cast<long>(shards.front().solvers.size());
  if (static_cast<long>(solves.size()) != expected)
    throw HarnessError(fmt::format("merge: the shards hold {} solves, the run has {}", solves.size(), expected));

  RunDirectory out(out_dir, mode);
  auto join = [](const std::vector<std::string>& header, const std::map<RowKey, std::string>& rows) {
    std::string text = fmt::format("{}\n", fmt::join(header, ","));
    for (const auto& [key, line] : rows) text += line + "\n";
    return text;
  };
  for (const auto& [file, content] : shared_files) out.writeAtomically(compressedName(file), content);
  out.writeAtomically(compressedName("solves.csv"), join(shards.front().solve_header, solves));
  out.writeAtomically(compressedName("solutions.csv"), join(kSolutionColumns, solutions));
  out.writeAtomically(compressedName("traces.csv"), join(kTraceColumns, traces));

  json run = first;
  run["shard"] = nullptr;
  json from = json::array();
  double wall = 0.0, solve_time = 0.0, trace_wall = 0.0;
  long trace_rows = 0, mismatches = 0;
  json merged_load;  // null until a shard has a load
  for (size_t i = 0; i < shards.size(); ++i) {
    const json& sr = shards[i].run;
    from.push_back({{"dir", shard_dirs[i]}, {"shard", at(sr, "shard")}, {"machine", at(sr, "machine")},
                    {"threads", at(sr, "threads")}, {"start_time", at(sr, "start_time")},
                    {"end_time", at(sr, "end_time")}, {"load", at(sr, "load")}});
    // The merged run's load is its most loaded shard's (the highest sampled
    // load average), noisy when any shard was: its times mix all of them.
    const json& load = at(sr, "load");
    auto highest = [](const json& l) {
      return l.is_object() && l.contains("samples") && l["samples"].is_object() && l["samples"].contains("max") &&
                     l["samples"]["max"].is_number()
                 ? l["samples"]["max"].get<double>()
                 : -1.0;
    };
    if (load.is_object()) {
      const bool noisy = load.value("noisy", false) || (merged_load.is_object() && merged_load.value("noisy", false));
      if (!merged_load.is_object() || highest(load) > highest(merged_load)) merged_load = load;
      merged_load["noisy"] = noisy;
    }
    const json& tp = at(shards[i].run, "throughput");
    const json& tr = at(shards[i].run, "trace");
    auto num = [](const json& j, const char* key) {
      return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
    };
    wall = std::max(wall, num(tp, "wall_s"));
    solve_time += num(tp, "sum_solve_time_s");
    trace_wall = std::max(trace_wall, num(tr, "wall_s"));
    trace_rows += static_cast<long>(num(tr, "rows"));
    mismatches += static_cast<long>(num(tr, "mismatches"));
  }
  run["merged_from"] = from;
  run["load"] = merged_load;
  run["progress"] = {{"solves", expected}, {"done", expected}, {"resumed", 0}};
  run["throughput"] = {{"solves", expected},
                       {"wall_s", wall},
                       {"solves_per_s", wall > 0 ? static_cast<double>(expected) / wall : 0.0},
                       {"sum_solve_time_s", solve_time},
                       {"note", "merged shards: wall_s is the longest shard's"}};
  run["trace"]["rows"] = trace_rows;
  run["trace"]["wall_s"] = trace_wall;
  run["trace"]["mismatches"] = mismatches;
  run["complete"] = true;
  json files = json::object();
  for (const std::string& name : kManifestFiles) files[compressedName(name)] = manifestEntry(out.file(compressedName(name)));
  run["files"] = files;
  out.writeJson("run.json", run);
  return {count, expected, out_dir};
}

}  // namespace ikbench::harness
