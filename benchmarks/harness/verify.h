// `ikbench verify RUN_DIR`: recomputes, from models.json and problems.jsonl
// alone, the forward kinematics of every configuration a run returned and
// reports each row whose `converged` or `within_limits` disagrees with the
// recomputed errors and limits (a "false success", or a false failure), and,
// in a run with the quality columns, each row whose outcome, manipulability,
// limit margin or motion figures differ from their recomputation.
#pragma once

#include <iosfwd>
#include <string>

namespace ikbench::harness {

struct VerifyReport {
  long rows = 0;             // solves checked
  long solutions = 0;        // extra solutions checked (solutions.csv)
  long disagreements = 0;    // rows and solutions that disagree
  long false_successes = 0;  // rows claiming a success (converged, within limits and, in a scene,
                             // collision-free) that the recomputation does not confirm
  long collision_checks = 0;  // rows and solutions checked for collisions in their scene
  long quality_rows = 0;           // rows whose quality columns were recomputed (runs that have them)
  long quality_disagreements = 0;  // of those, rows whose outcome or a quality figure differs
  long level_rows = 0;           // rows whose per-level verdict (level_errors, levels_met) was recomputed
  long level_disagreements = 0;  // of those, rows whose levels_met or a level's error differs
};

// The verdict on every checked answer, as CSV (kVerdictColumns): its file
// (solves.csv or solutions.csv), family, problem, solver spec and solution
// number (empty for a solve), the recomputed position and orientation
// errors, and the verdicts converged, within_limits, collision_free (empty
// off a scene, and for an extra solution) and borderline (an error within a
// relative 1e-9 of its tolerance: the converged verdict is then the row's
// own claim). The Python library takes these as the verdict and holds its
// own numpy recomputation to them (ikbench.analysis.verify).
inline constexpr const char* kVerdictColumns =
    "file,family,problem,solver,solution,position_error,orientation_error,converged,within_limits,collision_free,"
    "borderline";

// Checks the run; prints each disagreement (at most `max_listed`) and a
// summary to `out`, and, when `verdicts` is given, every answer's verdict
// (kVerdictColumns, a header line first). ResultsError for an unreadable,
// incomplete or mixed directory.
VerifyReport verifyRun(const std::string& dir, std::ostream& out, int max_listed = 50,
                       std::ostream* verdicts = nullptr);

}  // namespace ikbench::harness
