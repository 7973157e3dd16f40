// The results format, version 2 (docs/results-format.md): column lists, row
// formatting and parsing, and the JSON of models and problems. Everything that
// writes or reads a results directory in C++ goes through here; the Python
// analysis library (python/ikbench/io/results.py) reads the same files, and a
// test checks that both agree on the columns.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sys/types.h>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ikbench/collision/world.h"
#include "ikbench/core/safe_read.h"
#include "ikbench/format/schema.h"

#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/solvers/summary.h"

namespace ikbench::harness {

// The format's facts come from python/ikbench/data/results_format.json through
// the generated ikbench/format/schema.h (cmake/results_schema.cmake).
inline constexpr int kFormatVersion = results_schema::kFormatVersion;

// A results file that cannot be read: what() names the file, the line and
// the field or column, and what was expected.
class ResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The documented leading columns of solves.csv, in order. Users' scripts rely
// on these names; new columns are only ever appended (kSolveExtraColumns).
extern const std::vector<std::string> kSolveColumns;
extern const std::vector<std::string> kSolveExtraColumns;
// All columns of solves.csv, in order.
std::vector<std::string> solveHeader();
// The quality columns (harness/answer_quality.h), appended after
// solveHeader() by a run that records them.
extern const std::vector<std::string> kQualityColumns;
// Columns a solves.csv may have after solveHeader(), each at most once and
// in any order; a reader finds them by name. A run without them is complete.
extern const std::vector<std::string> kOptionalSolveColumns;
// The values of the column `outcome`.
extern const std::vector<std::string> kOutcomeNames;
// The columns a run with a scene appends (docs/collision.md), after the
// quality columns: the exact check of the returned q (collision_free 0/1,
// min_clearance [m], the pair); empty in the rows of families without a scene.
extern const std::vector<std::string> kCollisionColumns;
// After those, in a run with an external solver (ext): the time the solver
// process reported for the solve [us], empty where it reported none (and in
// the rows of other solvers).
extern const std::vector<std::string> kExternalColumns;
// Last, in a run with whole-body problems (docs/wholebody.md): level_errors,
// "position:orientation" of each priority level from the top separated by
// spaces, and levels_met, the number of levels met from the top (a level is
// met when its goals are within tolerance and every level above is met);
// empty in the rows of other families and of solves not attempted.
extern const std::vector<std::string> kLevelColumns;
extern const std::vector<std::string> kTraceColumns;
extern const std::vector<std::string> kSolutionColumns;
// Columns whose values depend on the machine's speed.
extern const std::vector<std::string> kTimeColumns;

// Shortest text that reads back as the same double; nan, inf, -inf.
std::string numText(double x);
// A CSV field, quoted when it holds a comma, a quote or a line break.
std::string csvField(std::string_view s);
// Splits one CSV line (RFC 4180 quoting). Throws ResultsError naming `where`.
std::vector<std::string> parseCsvLine(std::string_view line, const std::string& where);
// A configuration as numbers separated by spaces: exact (shortest round
// trip) or with `digits` significant digits.
std::string configText(const Eigen::VectorXd& q, int digits = 0);
// Parses configText; throws ResultsError naming `where` for a token that is
// not a decimal number, nan or inf (hexadecimal, '1_0', 'nan(...)' included).
Eigen::VectorXd parseConfigText(std::string_view text, const std::string& where);
// One number as the results files write it: a decimal number ([+-]d[.d][e[+-]d]),
// or nan / inf with an optional sign, in any case; nothing else.
bool parseResultNumber(std::string_view text, double* out);

// One model of models.json (joints in order, rest transforms as xyz + quaternion
// xyzw, axes, limits with null for infinite, weights, q/v indices).
nlohmann::json modelToJson(const Model& model, const std::string& id, const std::string& source,
                           const CollisionWorld* scene = nullptr);
// A model's scene ("scene" of its models.json entry) back as a collision
// world on `model`; null when the entry has none. Throws ResultsError.
std::shared_ptr<const CollisionWorld> sceneFromJson(const nlohmann::json& model_entry,
                                                    const std::shared_ptr<const Model>& model, const std::string& where);
// The Model back from its JSON; throws ResultsError naming `where` and the field.
std::shared_ptr<const Model> modelFromJson(const nlohmann::json& j, const std::string& where);

// One line of problems.jsonl.
nlohmann::json problemToJson(const std::string& family, int index, const std::string& model_id,
                             const Problem& problem, bool sequential);
// The Problem back from its line; models by id. Throws ResultsError.
Problem problemFromJson(const nlohmann::json& j, const std::map<std::string, std::shared_ptr<const Model>>& models,
                        const std::string& where);

// FNV-1a, 64 bits, of a file's bytes, as 16 lowercase hex digits; and the
// manifest entry {"rows", "bytes", "fnv1a64"} of a file (rows: lines after
// the header for .csv, lines for .jsonl, 0 otherwise), both read in one pass.
// Of a NAME.gz file, `bytes` and `fnv1a64` are the compressed file's and
// `rows` the content's (NAME's rule).
// ResultsError if the file cannot be read or is not a regular file.
// With `rows` false, a compressed file is not decompressed: "rows" is left
// out (readers check it when they read the content).
std::string fnv1a64File(const std::string& path);
nlohmann::json manifestEntry(const std::string& path, bool rows = true);
// The manifest's rows of a file's content: lines after the header for a
// .csv, lines for a .jsonl, 0 otherwise (`name` plain or NAME.gz).
long manifestRows(const std::string& name, std::string_view content);

// ---- reading the files of a run --------------------------------------------------
// What the readers of a results directory accept (docs/results-format.md,
// "Limits of the readers"); each limit is checked before the data it bounds
// is parsed, so a damaged or hostile directory gets an error naming the file,
// never a hang, a stack overflow or an allocation sized by the file.

// The files a complete run's manifest (run.json "files") lists: exactly these,
// each under this name or, compressed, this name + ".gz".
extern const std::vector<std::string> kManifestFiles;
// The kManifestFiles name a manifest key stands for ("solves.csv.gz" and
// "solves.csv": "solves.csv"), or "" for any other name.
std::string manifestFileOf(const std::string& key);
// The name a run writes the file `name` of kManifestFiles under: gzip-
// compressed, NAME.gz (readers take NAME as well: older runs, gunzipped files).
std::string compressedName(const std::string& name);
// Largest run.json and models.json read (bytes).
inline constexpr std::size_t kMaxRunJsonBytes = results_schema::kMaxRunJsonBytes;
inline constexpr std::size_t kMaxModelsJsonBytes = results_schema::kMaxModelsJsonBytes;
// Longest line of a CSV or JSON Lines file of a run: a q of 100 000 free
// joints (700 000 numbers of at most 24 characters) fits.
inline constexpr std::size_t kMaxLineBytes = results_schema::kMaxLineBytes;
// Deepest nesting of arrays and objects in run.json, models.json and a line
// of problems.jsonl (the harness writes at most 4).
inline constexpr int kMaxResultsJsonNesting = results_schema::kMaxJsonNesting;

// Opens a file of a results directory for reading. Only a regular file is
// opened (a symbolic link is followed to one); a FIFO, device, socket or
// directory is refused without blocking on it. Returns the descriptor;
// ResultsError naming the path and what it is.
int openRegularFile(const std::string& path);
// What a file of this st_mode is, for messages: "a FIFO", "a directory", ...
using ::ikbench::fileKind;
// The whole of a regular file of at most `max_bytes` bytes (ResultsError
// naming the path and the limit otherwise).
std::string readRegularFile(const std::string& path, std::size_t max_bytes);
// The content of a file of a run: a NAME.gz file decompressed (at most
// `max_bytes` of content, and within gzip_stream.h's expansion limit), any
// other file as readRegularFile reads it.
std::string readRunFile(const std::string& path, std::size_t max_bytes);
// Where the file `name` (a name of kManifestFiles) of the run in `dir` is:
// dir/name.gz or dir/name, whichever exists (dir/name when neither does).
// ResultsError when both exist: a reader never guesses which one is the run's.
std::string runFilePath(const std::string& dir, const std::string& name);
// Parses JSON text with the nesting limit above; ResultsError naming `where`
// (a file, or a file and line) and the parser's position.
nlohmann::json parseJsonText(std::string_view text, const std::string& where);
// Where two JSON values first differ, as "path: a vs b" (for example
// "suite.seed: 1 vs 2"), or "" when they are equal; `path` names the values.
std::string jsonDifference(const nlohmann::json& a, const nlohmann::json& b, const std::string& path);

}  // namespace ikbench::harness
