#include "harness/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

#include "harness/answer_quality.h"
#include "harness/levels.h"
#include "harness/results_reader.h"
#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"

namespace ikbench::harness {
namespace {

// Two quality cells agree when both are empty, or both numbers within a
// relative 1e-9 (the same code on the same q), or the same text.
bool sameCell(const std::string& a, const std::string& b) {
  if (a == b) return true;
  double x = 0.0, y = 0.0;
  if (!parseResultNumber(a, &x) || !parseResultNumber(b, &y)) return false;
  return std::abs(x - y) <= 1e-9 * std::max({1.0, std::abs(x), std::abs(y)});
}

// The quality columns (answer_quality.h), when the run has them: each row's
// recomputed from its q, the previous rows' q of a sequential family, and
// the family's targets, frame rate and branch threshold in run.json.
void verifyQuality(const ResultsDirectory& r, const std::map<std::pair<int, int>, Problem>& problems, std::ostream& out,
                   int max_listed, VerifyReport& rep) {
  const auto has = [&](const std::string& c) {
    return std::find(r.solve_header.begin(), r.solve_header.end(), c) != r.solve_header.end();
  };
  for (const std::string& c : kQualityColumns)
    if (!has(c)) return;
  const size_t c_conv = r.column("converged"), c_lim = r.column("within_limits"), c_q = r.column("q"),
               c_status = r.column("status");
  std::map<RowKey, std::vector<std::string>> cells;
  for (const auto& [key, line] : r.solves) cells[key] = parseCsvLine(line, r.file("solves.csv"));
  std::map<RowKey, Eigen::VectorXd> qs;
  const auto qOf = [&](const RowKey& key) -> const Eigen::VectorXd& {
    auto it = qs.find(key);
    if (it == qs.end()) it = qs.emplace(key, parseConfigText(cells.at(key)[c_q], r.file("solves.csv"))).first;
    return it->second;
  };
  for (const auto& [key, row] : cells) {
    const auto [f, p, s] = key;
    const nlohmann::json& fam = r.run["families"][static_cast<size_t>(f)];
    const bool sequential = fam.value("sequential", false);
    const auto number = [&](const char* k) { return fam.contains(k) && fam[k].is_number() ? fam[k].get<double>() : 0.0; };
    Status st;
    if (!parseStatus(row[c_status], &st)) continue;  // checkRows refused it already
    const bool attempted = st != Status::kUnsupported && st != Status::kInvalidInput;
    std::vector<const Eigen::VectorXd*> history;
    if (attempted) {
      history.push_back(&qOf(key));
      for (int k = p - 1; sequential && k >= 0 && k >= p - 3 && cells.count({f, k, s}); --k)
        history.push_back(&qOf({f, k, s}));
    }
    const Problem& prob = problems.at({f, p});
    Data data(*prob.model);
    const std::string want = qualityCells(*prob.model, prob.goals, data, st, row[c_conv] == "1", row[c_lim] == "1",
                                          fam.value("targets", std::string("reachable")) == "unreachable", sequential,
                                          history, number("frame_rate"), number("branch_jump"));
    const std::vector<std::string> expected = parseCsvLine(std::string_view(want).substr(1), "recomputed");
    ++rep.quality_rows;
    for (size_t k = 0; k < kQualityColumns.size(); ++k) {
      const std::string& got = row[r.column(kQualityColumns[k])];
      if (sameCell(got, expected[k])) continue;
      ++rep.quality_disagreements;
      ++rep.disagreements;
      if (rep.disagreements <= max_listed)
        out << fmt::format("solves.csv {} problem {} {}: column '{}' is '{}', recomputed '{}'\n", r.families[f], p,
                           r.solvers[s], kQualityColumns[k], got, expected[k]);
      break;
    }
  }
}

}  // namespace

VerifyReport verifyRun(const std::string& dir, std::ostream& out, int max_listed, std::ostream* verdicts) {
  // The traces are not verify's (the report reads them): not read.
  const ResultsDirectory r = readResults(dir, /*require_complete=*/true, /*rows=*/true, /*traces=*/false);
  SceneWorlds scenes;
  const auto models = readModels(r, &scenes);
  auto problems = readProblems(r, models);
  attachScenes(scenes, models, problems);
  checkRows(r, problems, /*traces=*/false);  // the traces are not verify's (the report reads them)
  // Every solve of the run is in solves.csv exactly once, and every problem
  // in problems.jsonl (the reader refused duplicates and indices out of range).
  long expected_problems = 0;
  for (const nlohmann::json& fam : r.run["families"]) expected_problems += fam["problems"].get<long>();
  if (static_cast<long>(problems.size()) != expected_problems)
    throw ResultsError(fmt::format("{}: {} problems, run.json's families have {}", r.file("problems.jsonl"),
                                   problems.size(), expected_problems));
  const long expected_solves = expected_problems * static_cast<long>(r.solvers.size());
  const bool shard = r.run.contains("shard") && !r.run["shard"].is_null();  // a shard holds its share of the solves
  if (!shard && static_cast<long>(r.solves.size()) != expected_solves)
    throw ResultsError(fmt::format("{}: {} solves, run.json's families x solvers make {}", r.file("solves.csv"),
                                   r.solves.size(), expected_solves));
  const nlohmann::json& opts = r.run.at("suite").at("options");
  const double tol_p = opts.at("position_tolerance_m").get<double>();
  const double tol_o = opts.at("orientation_tolerance_rad").get<double>();
  // The recomputation may differ from the solver's own in the last bits: an
  // error within a relative 1e-9 of its tolerance agrees either way.
  constexpr double kEdge = 1e-9;
  const size_t c_conv = r.column("converged"), c_lim = r.column("within_limits"), c_q = r.column("q"),
               c_status = r.column("status");
  const auto free_it = std::find(r.solve_header.begin(), r.solve_header.end(), "collision_free");
  const long c_free = free_it == r.solve_header.end() ? -1 : static_cast<long>(free_it - r.solve_header.begin());

  VerifyReport rep;
  if (verdicts) *verdicts << kVerdictColumns << '\n';
  // solution: empty for a row of solves.csv, else the extra solution's number.
  auto check = [&](const RowKey& key, const std::string& where, const Eigen::VectorXd& q, int claimed_converged,
                   int claimed_limits, int claimed_free, const std::string& solution) {
    auto pit = problems.find({std::get<0>(key), std::get<1>(key)});
    if (pit == problems.end()) throw ResultsError(fmt::format("{}: no such problem in problems.jsonl", where));
    const Problem& p = pit->second;
    std::string why;
    if (!isValidConfiguration(*p.model, q, &why)) throw ResultsError(fmt::format("{}: q: {}", where, why));
    Data data(*p.model);
    forwardKinematics(*p.model, q, data);
    const GoalErrors e = evaluateGoals(*p.model, p.goals, data);
    const bool within_p = e.position <= tol_p, within_o = e.orientation <= tol_o;
    const bool edge = std::abs(e.position - tol_p) <= kEdge * tol_p || std::abs(e.orientation - tol_o) <= kEdge * tol_o;
    const int converged = e.finite() && within_p && within_o;
    const int limits = withinLimits(*p.model, q, kLimitSlack);
    const bool conv_bad = claimed_converged >= 0 && claimed_converged != converged && !edge;
    const bool lim_bad = claimed_limits >= 0 && claimed_limits != limits;
    // In a scene: the exact check of q, against the row's collision_free (a
    // row of a scene family must have one).
    int collision_free = -1;
    std::string collision;
    if (p.collision) {
      const CollisionReport cr = p.collision->check(data);
      collision_free = cr.collision_free ? 1 : 0;
      collision = fmt::format(", collision-free {} (clearance {:.3g} m at {})", collision_free, cr.min_clearance, cr.pair);
      ++rep.collision_checks;
    }
    const bool free_bad = claimed_free != -2 && (p.collision ? claimed_free != collision_free : claimed_free >= 0);
    if (verdicts)
      *verdicts << fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", solution.empty() ? "solves.csv" : "solutions.csv",
                               csvField(r.families[std::get<0>(key)]), std::get<1>(key),
                               csvField(r.solvers[std::get<2>(key)]), solution, numText(e.position),
                               numText(e.orientation), edge ? int{claimed_converged == 1} : converged, limits,
                               collision_free < 0 || claimed_free == -2 ? std::string() : std::to_string(collision_free),
                               edge ? 1 : 0);
    if (!conv_bad && !lim_bad && !free_bad) return;
    ++rep.disagreements;
    // A false success: the row claims a success (converged, within limits
    // and, in a scene, collision-free: the figures' success) that the
    // recomputation does not confirm; an error at the tolerance's edge
    // agrees with its claim.
    const bool claimed_success = claimed_converged == 1 && claimed_limits == 1 && claimed_free != 0;
    const bool recomputed_success =
        (edge ? claimed_converged == 1 : converged == 1) && limits == 1 && (!p.collision || collision_free == 1);
    if (claimed_success && !recomputed_success) ++rep.false_successes;
    if (rep.disagreements <= max_listed)
      out << fmt::format("{}: {}{}{}recomputed position error {:.3g} m (tolerance {:g}), orientation error {:.3g} rad "
                         "(tolerance {:g}), within limits {}{}\n",
                         where, conv_bad ? fmt::format("converged={} disagrees; ", claimed_converged) : "",
                         lim_bad ? fmt::format("within_limits={} disagrees; ", claimed_limits) : "",
                         free_bad ? fmt::format("collision_free={} disagrees; ",
                                                claimed_free < 0 ? std::string("(none)") : std::to_string(claimed_free))
                                  : "",
                         e.position, tol_p, e.orientation, tol_o, limits, collision);
  };

  for (const auto& [key, line] : r.solves) {
    const std::string where =
        fmt::format("solves.csv {} problem {} {}", r.families[std::get<0>(key)], std::get<1>(key), r.solvers[std::get<2>(key)]);
    const std::vector<std::string> cells = parseCsvLine(line, where);
    Status st;
    if (!parseStatus(cells[c_status], &st)) throw ResultsError(fmt::format("{}: bad status '{}'", where, cells[c_status]));
    if (st == Status::kUnsupported || st == Status::kInvalidInput) continue;
    ++rep.rows;
    const std::string free_cell = c_free >= 0 ? cells[static_cast<size_t>(c_free)] : std::string();
    check(key, where, parseConfigText(cells[c_q], where), cells[c_conv] == "1", cells[c_lim] == "1",
          free_cell.empty() ? -1 : free_cell == "1", "");
  }
  // Every extra solution is claimed to converge within the limits.
  for (const auto& [key, lines] : r.solutions) {
    size_t start = 0;
    while (start < lines.size()) {
      size_t nl = lines.find('\n', start);
      if (nl == std::string::npos) nl = lines.size();
      const std::string line = lines.substr(start, nl - start);
      start = nl + 1;
      const std::string where = fmt::format("solutions.csv {} problem {} {}", r.families[std::get<0>(key)],
                                            std::get<1>(key), r.solvers[std::get<2>(key)]);
      const std::vector<std::string> cells = parseCsvLine(line, where);
      ++rep.solutions;
      // An extra solution's collisions are not claimed (solutions.csv has no such column): -2.
      check(key, where + " solution " + cells.at(3), parseConfigText(cells.at(4), where), 1, 1, -2, cells.at(3));
    }
  }
  // The per-level verdict of whole-body solves (kLevelColumns), recomputed by FK.
  const auto met_it = std::find(r.solve_header.begin(), r.solve_header.end(), "levels_met");
  const auto lerr_it = std::find(r.solve_header.begin(), r.solve_header.end(), "level_errors");
  if (met_it != r.solve_header.end() && lerr_it != r.solve_header.end()) {
    const size_t c_met = static_cast<size_t>(met_it - r.solve_header.begin());
    const size_t c_lerr = static_cast<size_t>(lerr_it - r.solve_header.begin());
    for (const auto& [key, line] : r.solves) {
      const std::string where = fmt::format("solves.csv {} problem {} {}", r.families[std::get<0>(key)],
                                            std::get<1>(key), r.solvers[std::get<2>(key)]);
      const std::vector<std::string> cells = parseCsvLine(line, where);
      if (cells[c_met].empty()) continue;
      const auto pit = problems.find({std::get<0>(key), std::get<1>(key)});
      if (pit == problems.end()) continue;
      const LevelVerdict v = levelVerdict(pit->second, parseConfigText(cells[c_q], where), tol_p, tol_o);
      std::vector<GoalErrors> claimed;
      try {
        claimed = parseLevelErrors(cells[c_lerr]);
      } catch (const std::invalid_argument& e) {
        throw ResultsError(fmt::format("{}: column level_errors: {}", where, e.what()));
      }
      ++rep.level_rows;
      auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}); };
      bool same = claimed.size() == v.errors.size() && cells[c_met] == std::to_string(v.met);
      // A level whose recomputed error sits at the tolerance's edge may be judged either way.
      bool edge = false;
      for (size_t k = 0; k < v.errors.size(); ++k) {
        edge = edge || std::abs(v.errors[k].position - tol_p) <= kEdge * tol_p ||
               std::abs(v.errors[k].orientation - tol_o) <= kEdge * tol_o;
        if (k < claimed.size())
          same = same && near(claimed[k].position, v.errors[k].position) &&
                 near(claimed[k].orientation, v.errors[k].orientation);
      }
      if (same || (edge && claimed.size() == v.errors.size())) continue;
      ++rep.level_disagreements;
      ++rep.disagreements;
      if (rep.disagreements <= max_listed)
        out << fmt::format("{}: levels_met={} level_errors='{}' disagree; recomputed levels_met {} level_errors '{}'\n",
                           where, cells[c_met], cells[c_lerr], v.met, levelCells(v));
    }
  }
  verifyQuality(r, problems, out, max_listed, rep);
  if (rep.disagreements > max_listed) out << fmt::format("... and {} more\n", rep.disagreements - max_listed);
  out << fmt::format("verify {}: {} solves and {} extra solutions recomputed by forward kinematics from models.json "
                     "and problems.jsonl{}: {} disagree ({} false successes)\n",
                     dir, rep.rows, rep.solutions,
                     rep.collision_checks > 0
                         ? fmt::format(", {} of them checked for collisions in their scene", rep.collision_checks)
                         : "",
                     rep.disagreements, rep.false_successes);
  if (rep.level_rows > 0)
    out << fmt::format("verify {}: per-level verdicts of {} whole-body solves recomputed: {} disagree\n", dir,
                       rep.level_rows, rep.level_disagreements);
  if (rep.quality_rows > 0)
    out << fmt::format("verify {}: outcome and quality columns of {} solves recomputed: {} disagree\n", dir,
                       rep.quality_rows, rep.quality_disagreements);
  return rep;
}

}  // namespace ikbench::harness
