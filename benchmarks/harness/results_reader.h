// Reading a results directory back (ikbench verify, ikbench merge, the
// tests): run.json, the manifest check, and the rows of solves.csv,
// solutions.csv and traces.csv keyed by (family, problem, solver).
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "harness/results_format.h"
#include "ikbench/kinematics/goal.h"

namespace ikbench::harness {

// (family index, problem, solver index) in run.json's order.
using RowKey = std::tuple<int, int, int>;

struct ResultsDirectory {
  std::string dir;
  nlohmann::json run;                 // run.json
  std::vector<std::string> families;  // names, in run.json's order
  std::vector<std::string> solvers;   // spec texts, in run.json's order
  std::vector<std::string> solve_header;
  // Lines (without '\n') of each file, by key; traces keep their order.
  std::map<RowKey, std::string> solves;
  std::map<RowKey, std::string> solutions;
  std::map<RowKey, std::string> traces;
  // Where each file of kManifestFiles is: NAME or NAME.gz (the manifest's
  // name for a complete run; else the one that exists).
  std::map<std::string, std::string> paths;
  // The manifest's rows of its compressed files, checked when their content
  // is read (the manifest check reads only their bytes).
  std::map<std::string, long> rows_to_check;

  // The path of a file of the run; a name of kManifestFiles is looked up in
  // `paths` (so "solves.csv" may be dir/solves.csv.gz).
  std::string file(const std::string& name) const;
  // Column index of solves.csv by name (ResultsError if absent).
  size_t column(const std::string& name) const;
  // The content of file `name` (of kManifestFiles): read, decompressed and,
  // for a compressed file, its rows checked against the manifest.
  std::string read(const std::string& name, std::size_t max_bytes) const;
};

// Reads run.json and checks the format version; with `require_complete`,
// refuses (ResultsError) an incomplete run and files that do not match the
// run's manifest (a directory holding files of two runs). Reads the rows of
// the CSV files only when `rows` is set (traces.csv's only with `traces`
// too).
ResultsDirectory readResults(const std::string& dir, bool require_complete, bool rows, bool traces = true);

// The collision worlds of models.json's scenes (docs/collision.md), by model id.
using SceneWorlds = std::map<std::string, std::shared_ptr<const CollisionWorld>>;

// The models of models.json by id (and, from the same one parse: with
// `scenes`, the collision worlds of their scenes; with `entries`, each
// model's entry as written, by id), and the problems of problems.jsonl by
// (family index, problem).
std::map<std::string, std::shared_ptr<const Model>> readModels(const ResultsDirectory& r,
                                                               SceneWorlds* scenes = nullptr,
                                                               std::map<std::string, nlohmann::json>* entries = nullptr);
std::map<std::pair<int, int>, Problem> readProblems(const ResultsDirectory& r,
                                                    const std::map<std::string, std::shared_ptr<const Model>>& models);
// The scenes' collision worlds set as Problem::collision of their models' problems.
void attachScenes(const SceneWorlds& scenes, const std::map<std::string, std::shared_ptr<const Model>>& models,
                  std::map<std::pair<int, int>, Problem>& problems);

// Every row of solves.csv and solutions.csv (and traces.csv with `traces`)
// checked column by column as the Python reader checks them: UTF-8 text,
// known statuses, counts that are non-negative integers, numbers (or nan,
// inf) where the format has numbers, 0 or 1 for flags, the suite's name, and
// a configuration of the problem's model's nq numbers wherever the solve
// returns one. ResultsError naming the file, row and column.
void checkRows(const ResultsDirectory& r, const std::map<std::pair<int, int>, Problem>& problems, bool traces);

}  // namespace ikbench::harness
