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
};

// Checks the run; prints each disagreement (at most `max_listed`) and a
// summary to `out`. ResultsError for an unreadable, incomplete or mixed
// directory.
VerifyReport verifyRun(const std::string& dir, std::ostream& out, int max_listed = 50);

}  // namespace ikbench::harness
