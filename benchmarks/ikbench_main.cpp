// `ikbench`: the command-line harness.
//
//   ikbench run --suite quick|default|FILE [--solvers SPEC,SPEC...] [--threads N]
//               [--seed S] [--out DIR] [--force | --resume] [--shard K/N]
//               [--no-trace] [--trace-problems K|all] [--no-summary]
//   ikbench run --urdf FILE [--base LINK --tip LINK] [--scene FILE] [--samples N] [...]
//   ikbench run --protocol trac-ik|ikfast-test|seeds|tracking --urdf FILE [--base LINK --tip LINK] [...]
//   ikbench run --bvh FILE [...]
//   ikbench run --chain DOF [--samples N] [...]
//   ikbench list solvers|suites|protocols|scenarios|collision [--format text|json]
//   ikbench throughput [--solver SPEC] [--dof N] [--solves N] [--threads 1,2] [--out DIR]
//                      [--batch [--lanes N] [--isa auto|portable|avx2]]
//   ikbench verify RUN_DIR
//   ikbench merge SHARD_DIR... --out DIR [--force]
//   ikbench compare RUN_A [RUN_B] [--specs SPEC1 SPEC2] [--out FILE.md|FILE.html]
//   ikbench report RUN_DIR [--out FILE]
//   ikbench playground [--out FILE] [--module FILE] [--run DIR ...]
//   ikbench tune --solvers GRID --tune-on SET --evaluate-on SET [--criterion C] [--out DIR]
//
// Exit status: 0 on success, 1 when `verify` finds disagreements (and for
// unexpected failures), 2 for a bad command (unknown solver, bad suite,
// unusable output directory, bad option, unreadable results), 130 when a run
// was interrupted (its finished solves are kept; --resume completes it).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <nlohmann/json.hpp>

#include "harness/analysis.h"
#include "harness/chain_suite.h"
#include "harness/memory_budget.h"
#include "harness/merge.h"
#include "playground_page.h"
#include "harness/results_format.h"
#include "harness/run_directory.h"
#include "harness/run_engine.h"
#include "harness/solver_catalog.h"
#include "harness/throughput.h"
#include "harness/verify.h"
#include "ikbench/collision/world.h"
#include "ikbench/core/redact.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#ifdef IKBENCH_HAVE_EXTERNAL
#include "ikbench/external/external_solver.h"
#endif

namespace {

using namespace ikbench;
using namespace ikbench::harness;
namespace fs = std::filesystem;
using nlohmann::json;

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void onStopSignal(int sig) {
  g_stop.store(true);
  g_signal.store(sig);
  // A second signal ends the process at once (the default action).
  std::signal(sig, SIG_DFL);
}

const char* kSpecSyntax =
    "spec syntax: name[:key=value]...  e.g. dls:lambda=0.1:restarts=5; lists separated by commas.\n"
    "grids (sweeps): a value in braces expands into one spec per value: dls:lambda={0.01,0.02,0.05}:max_step={0.5,1}\n"
    "  (6 specs); ranges {a..b:lin:n} (n values evenly spaced) and {a..b:log:n} (geometric, a, b > 0).\n"
    "presets: a preset's name is a spec (auto), and its keys can be overridden (auto:time_budget_us=1000).\n"
    "quoted values: a value in '...' or \"...\" is text, separators included: ext:cmd='python3 my_solver.py'.";

void listSolvers(const std::string& format) {
  if (format == "json") {
    fmt::print("{}\n", solversJson().dump(2));
    return;
  }
  auto line = [](const ParamInfo& p) {
    fmt::print("    {}={} ({} in {}{}): {}\n", p.name, p.default_value.empty() ? (p.type == ParamType::kText ? "(none)" : "(run's)") : p.default_value,
               kParamTypeNames.name(p.type), p.rangeText(), p.unit.empty() ? "" : ", " + p.unit, p.help);
  };
  for (const SolverInfo& info : Registry::global().list()) {
    fmt::print("{}\n    {}\n", info.name, info.description);
    for (const ParamInfo& p : info.params) line(p);
  }
  fmt::print("\nkeys every solver accepts:\n");
  for (const ParamInfo& p : Registry::commonParams()) line(p);
  fmt::print("\npresets:\n");
  for (const PresetInfo& p : Registry::global().presets()) fmt::print("{}\n    {}\n    = {}\n", p.name, p.description, p.spec);
  fmt::print("\n{}\n", kSpecSyntax);
}

// The shipped suites (or protocols: kind "protocols") with their descriptions.
void listSuites(const char* kind = "suites") {
  const std::string dir = dataDirectory();
  const bool protocols = std::string_view(kind) == "protocols";
  for (const std::string& name : protocols ? builtinProtocolNames() : builtinSuiteNames()) {
    const fs::path file = fs::path(dir) / kind / (name + ".json");
    std::string description;
    try {
      std::ifstream f(file);
      const auto j = json::parse(f);
      if (j.contains("description") && j["description"].is_string()) description = j["description"];
    } catch (const std::exception&) {
    }
    fmt::print("{:<12} {}\n{:<12} {}\n", name, description, "", file.string());
  }
  fmt::print("{}", protocols ? "\nrun one on a robot: ikbench run --protocol NAME --urdf FILE [--base LINK --tip LINK] "
                               "(docs/protocols.md)\n"
                             : "\nor any suite file: ikbench run --suite path/to/suite.json\n");
}

void listScenarios(const std::string& only) {
  std::vector<std::string> names = only.empty() ? builtinSuiteNames() : std::vector<std::string>{only};
  for (const std::string& name : names) {
    const Suite suite = loadSuite(name);
    fmt::print("suite {} (seed {}, {} families, solvers: {})\n", suite.name, suite.seed, suite.families.size(),
               suite.solvers.empty() ? std::string("all") : fmt::format("{}", fmt::join(suite.solvers, ",")));
    for (const Family& f : suite.families)
      fmt::print("  {:<28} {:>5} problems  dof {:>4}  effectors {:>2}  {:<11} {:<10}  {}\n", f.name,
                 f.problems.size(), f.dof, f.effectors, f.goal, f.sequential ? "sequential" : "", f.description);
  }
}

// What the collision world of a robot in a scene checks: each moving link's
// shapes (or what holds it), the pairs left out and why, and the coverage flag.
void printCollisionWorld(const CollisionWorld& w, const std::string& what) {
  fmt::print("{}: scene '{}', links checked as {}\n", what, w.sceneName(), w.geometrySummary());
  for (int b = 0; b < w.model().numJoints(); ++b)
    fmt::print("    link {:<24} {}\n", w.model().bodyName(b), w.describeLink(b));
  std::map<std::string, std::vector<std::string>> by_reason;
  for (size_t k = 0; k < w.disabledPairs().size(); ++k)
    by_reason[w.disabledReasons()[k].empty() ? "unrecorded" : w.disabledReasons()[k]].push_back(
        w.disabledPairs()[k].first + "~" + w.disabledPairs()[k].second);
  fmt::print("    {} pairs checked; never checked:{}\n", w.pairs().size(), by_reason.empty() ? " none" : "");
  for (const auto& [reason, pairs] : by_reason)
    fmt::print("      {:<17} {}\n", reason, fmt::join(pairs, ", "));
  if (!w.excludedPairs().empty()) {
    fmt::print("    shape pairs never checked, the other shapes of their links checked:\n");
    for (const ExcludedShapePair& e : w.excludedPairs()) fmt::print("      {}\n", w.describeExcluded(e));
  }
  const std::string warning = w.coverageWarning();
  fmt::print("    coverage: {}\n", warning.empty() ? "every moving link covered, no pair left out for colliding at rest"
                                                    : "FLAGGED: " + warning);
}

// The collision worlds of the shipped suites' scenes (or one suite's).
void listCollision(const std::string& only) {
  std::vector<std::string> names = only.empty() ? builtinSuiteNames() : std::vector<std::string>{only};
  for (const std::string& name : names) {
    const Suite suite = loadSuite(name);
    std::set<const CollisionWorld*> seen;
    for (const Family& f : suite.families)
      for (const Problem& p : f.problems)
        if (p.collision && seen.insert(p.collision.get()).second)
          printCollisionWorld(*p.collision, fmt::format("suite {}, family {}, robot '{}'", suite.name, f.name,
                                                        p.model->name()));
  }
}

// The command line as run.json records it, with every secret redacted
// (a --history URL's password): run.json travels into stores, exports and
// reports.
std::string commandLine(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return redactSecrets(s);
}

// An option that names a thing (a suite, a file, a protocol) given as "":
// refused, rather than read as if it had not been given.
const CLI::Validator kNonEmpty(
    [](std::string& v) { return v.empty() ? std::string("expected a non-empty value") : std::string(); }, "TEXT");

// A seed: a decimal integer in [0, 2^64 - 1]; "-1" and the like are refused
// (they would wrap around to a huge unsigned value).
std::uint64_t parseSeed(const std::string& text) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw HarnessError(fmt::format("--seed '{}': expected a decimal integer in [0, 18446744073709551615]", text));
  return v;
}

// --trace-problems: 'all' or a count in [0, kMaxTraceProblems].
int parseTraceProblems(const std::string& text) {
  if (text == "all") return RunConfig::kTraceAll;
  int v = -1;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 0 ||
      v > RunConfig::kMaxTraceProblems)
    throw HarnessError(fmt::format("--trace-problems '{}': expected 'all' or a count in [0, {}]", text,
                                   RunConfig::kMaxTraceProblems));
  return v;
}

int realMain(int argc, char** argv) {
#ifdef IKBENCH_HAVE_EXTERNAL
  external::registerExternalSolver(Registry::global());
#endif
  CLI::App app{"ikbench: benchmark inverse-kinematics solvers"};
  app.require_subcommand(1);
  app.footer("ikbench SUBCOMMAND --help lists a subcommand's options, defaults and exit statuses.\n"
             "Exit status: 0 success; 1 verify found a disagreement (and unexpected failures); 2 a bad command; "
             "130 an interrupted run.");

  // ---- run ----
  CLI::App* run = app.add_subcommand("run", "run solvers on a suite and write results/<run>/");
  std::string suite_arg, urdf, base, tip, bvh, solvers, out, progress = "auto", seed_text, shard, protocol;
  int chain = 0, samples = 200, threads = 0;
  std::string trace_problems = std::to_string(RunConfig::kDefaultTraceProblems);
  bool no_trace = false, force = false, resume = false, no_summary = false, quality = false;
  std::string history_db, scene_file;
  auto* o_suite = run->add_option("--suite", suite_arg, "shipped suite name (quick, default, ...) or suite file")
                     ->check(kNonEmpty);
  auto* o_urdf = run->add_option("--urdf", urdf, "benchmark a URDF robot: random reachable pose targets")
                    ->check(kNonEmpty);
  run->add_option("--base", base, "URDF base link (default: the root link)")->check(kNonEmpty);
  run->add_option("--tip", tip, "URDF tip link: the pose goal's body (needed when several leaf links move)")
      ->check(kNonEmpty);
  auto* o_protocol = run->add_option(
      "--protocol", protocol,
      "evaluate the --urdf robot under a published protocol: trac-ik, ikfast-test, seeds, tracking "
      "(ikbench list protocols; docs/protocols.md)")
                        ->check(kNonEmpty);
  auto* o_samples = run->add_option("--samples", samples,
                                    "targets for --urdf / --chain (default 200); with --protocol, every family's "
                                    "count (targets, or frames of a path) in place of the protocol's")
                        ->check(CLI::Range(1, 1000000));
  run->add_flag("--quality", quality,
                "append the outcome and answer-quality columns to solves.csv (always on with --protocol)");
  auto* o_scene = run->add_option("--scene", scene_file,
                                  "with --urdf: a scene file (obstacles, collision geometry; docs/collision.md): "
                                  "targets from collision-free configurations, results checked for collisions")
                     ->check(kNonEmpty);
  // A robot description as it ships (docs/collision.md, "Robots as they ship").
  RobotFiles robot_files;
  std::string mjcf;
  auto* o_mjcf = run->add_option("--mjcf", mjcf, "benchmark an MJCF (MuJoCo) robot, as --urdf does a URDF one")
                    ->check(kNonEmpty);
  auto* o_srdf = run->add_option("--srdf", robot_files.srdf,
                                 "with --urdf / --mjcf: an SRDF whose <disable_collisions> pairs are not checked "
                                 "(without --scene: self-collision only)")
                    ->check(kNonEmpty);
  run->add_option("--start-state", robot_files.start_state,
                  "with --srdf: every problem starts at this <group_state>")
      ->needs(o_srdf)
      ->check(kNonEmpty);
  run->add_option("--package-path", robot_files.package_path,
                  "directories where package://NAME/ mesh files are found (before ROS_PACKAGE_PATH's)")
      ->check(kNonEmpty);
  run->add_option("--geometry", robot_files.geometry,
                  "the links' collision geometry where the robot has meshes: mesh (default; FCL's BVH), hull "
                  "(their convex hulls) or capsules (fitted, the fast approximation)")
      ->check(CLI::IsMember({"mesh", "hull", "capsules"}));
  auto* o_bvh = run->add_option("--bvh", bvh, "benchmark a BVH skeleton on its own motion frames")->check(kNonEmpty);
  auto* o_chain = run->add_option("--chain", chain, "benchmark random revolute chains of this many DOF")
                      ->check(CLI::Range(1, 10000));
  o_suite->excludes(o_urdf)->excludes(o_bvh)->excludes(o_chain);
  o_urdf->excludes(o_bvh)->excludes(o_chain);
  o_scene->excludes(o_protocol)->excludes(o_suite)->excludes(o_bvh)->excludes(o_chain);
  o_mjcf->excludes(o_suite)->excludes(o_urdf)->excludes(o_bvh)->excludes(o_chain)->excludes(o_protocol);
  o_srdf->excludes(o_protocol)->excludes(o_suite)->excludes(o_bvh)->excludes(o_chain);
  o_bvh->excludes(o_chain);
  o_protocol->needs(o_urdf);
  run->add_option("--solvers", solvers,
                  "comma-separated solver specs or grids (default: the suite's list, auto for --urdf, else all); "
                  "see ikbench list solvers");
  std::string solvers_file;
  run->add_option("--solvers-file", solvers_file,
                  "a JSON object {\"NAME\": \"command line\", ...} of external solvers, run as ext:name=NAME "
                  "(docs/external-solvers.md)")
      ->check(kNonEmpty);
  run->add_option("--threads", threads, "worker threads (default 0: all cores)")
      ->check(CLI::Range(0, RunConfig::kMaxThreads));
  auto* o_seed = run->add_option("--seed", seed_text, "master seed, 0 to 2^64-1 (replaces the suite's)");
  run->add_option("--out", out, "results directory (default results/<timestamp>-<suite>)")->check(kNonEmpty);
  auto* o_force = run->add_flag("--force", force, "replace the results of an earlier run in --out");
  auto* o_resume = run->add_flag("--resume", resume, "complete the interrupted run in --out");
  o_force->excludes(o_resume);
  run->add_option("--shard", shard, "run shard K of N (a deterministic 1/N of the solves; see ikbench merge)");
  run->add_flag("--no-trace", no_trace, "skip the trace pass (traces.csv has only its header)");
  run->add_option("--trace-problems", trace_problems,
                  fmt::format("problems per family in the trace pass, a seeded sample, or 'all' (default {}; "
                              "ikbench report's --trace-problems, same default, is how many of them its page embeds)",
                              RunConfig::kDefaultTraceProblems));
  run->add_option("--progress", progress, "auto|bar|lines|none (default auto: a bar on a terminal)")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  run->add_flag("--no-summary", no_summary, "do not print the summary table (python3 -m ikbench summary DIR does)");
  // The suite's solve options, set for this run (run.json records the values in force).
  std::optional<double> pos_tol, ori_tol, budget_us;
  std::optional<int> max_iterations;
  run->add_option("--position-tolerance", pos_tol,
                  "convergence tolerance on every goal's position error [m] (default: the suite's, else 1e-5)")
      ->check(CLI::Range(1e-15, 1e6));
  run->add_option("--orientation-tolerance", ori_tol,
                  "convergence tolerance on every goal's rotation angle [rad] (default: the suite's, else 1e-5)")
      ->check(CLI::Range(1e-15, 1e6));
  run->add_option("--max-iterations", max_iterations, "iteration cap of one solve (default: the suite's, else 500)")
      ->check(CLI::Range(1, 100000000));
  run->add_option("--time-budget-us", budget_us,
                  "time budget of one solve in microseconds, 0 for none (default: the suite's, else none)")
      ->check(CLI::Range(0.0, 3.6e9));
  run->add_option("--history", history_db,
                  "add the completed run to this history store: an SQLite file or a postgresql:// URL "
                  "(ikbench history add; docs/history.md); a password belongs in PGPASSWORD or ~/.pgpass, and run.json "
                  "records the URL with its password redacted")
      ->check(kNonEmpty);
  run->footer(
      "Default solvers: the suite's list; --urdf: auto, kdl-lma and analytic-6r where the chain has its closed form; "
      "--chain, --bvh: auto and every backend.\n"
      "Exit status: 0 done; 2 a bad command (unknown solver, bad suite, unusable or busy output directory, bad "
      "option); 130 interrupted (finished solves kept; --resume completes the run).");

  // ---- list ----
  CLI::App* list = app.add_subcommand("list", "list solvers (with parameters), suites or scenarios");
  std::string what, list_suite, list_format = "text";
  list->add_option("what", what,
                   "solvers | suites | protocols | scenarios | collision (each scene's link shapes, the pairs never "
                   "checked and why, the coverage flag; docs/collision.md)")
      ->required()
      ->check(CLI::IsMember({"solvers", "suites", "protocols", "scenarios", "collision"}));
  list->add_option("--suite", list_suite, "with 'scenarios' or 'collision': only this suite");
  list->add_option("--format", list_format,
                   "with 'solvers': text (default) or json (docs/solver-parameters.md is written from the json by "
                   "scripts/solver_parameters.sh)")
      ->check(CLI::IsMember({"text", "json"}));
  list->footer("Exit status: 0 done; 2 a bad command.");

  // ---- throughput ----
  CLI::App* tp = app.add_subcommand("throughput", "converged solves/s of one spec on N-DOF pose problems");
  ThroughputConfig tc;
  std::string tp_out, tp_seed = "1";
  tp->add_option("--solver", tc.solver, "solver spec (default dls)");
  tp->add_option("--dof", tc.dof, "chain DOF (default 7)")->check(CLI::Range(1, ThroughputConfig::kMaxDof));
  tp->add_option("--solves", tc.solves, "solves per measurement (default 100000)")
      ->check(CLI::Range(1L, ThroughputConfig::kMaxSolves));
  tp->add_option("--problems", tc.problems, "distinct problems, cycled (default 2000)")
      ->check(CLI::Range(1, ThroughputConfig::kMaxProblems));
  tp->add_option("--threads", tc.threads, "thread counts to measure, comma-separated (default 1,2)")
      ->delimiter(',')
      ->check(CLI::Range(1, RunConfig::kMaxThreads));
  tp->add_option("--seed", tp_seed, "seed of the problems (default 1)");
  tp->add_option("--out", tp_out, "write DIR/throughput.json");
  tp->add_flag("--batch", tc.batch, "also solve through solveBatch (SIMD across problems) and report batch / scalar");
  tp->add_option("--lanes", tc.lanes, "batch: problems in flight per thread, a multiple of 4 (default 16)")
      ->check(CLI::Range(4, BatchOptions::kMaxLanes));
  tp->add_option("--isa", tc.isa, "batch: kernel instruction set, auto|portable|avx2 (default auto)");
  tp->footer("Prints a table; --out DIR writes DIR/throughput.json (with the machine's load per point).\n"
             "Exit status: 0 done; 2 a bad command (bad option or spec, a spec that converges on none of the "
             "problems, unusable --out).");

  // ---- verify ----
  CLI::App* vf = app.add_subcommand("verify", "recompute FK of every returned q from models.json + problems.jsonl");
  std::string vf_dir;
  vf->add_option("run_dir", vf_dir, "results directory")->required();
  std::string vf_verdicts;
  vf->add_option("--verdicts", vf_verdicts,
                 "also write every answer's verdict (converged, within limits, collision-free, recomputed errors) "
                 "to this CSV file: the verdict the Python library takes (docs/analysis.md)");
  vf->footer("Exit status: 0 every solve agrees; 1 a disagreement; 2 unreadable or incomplete results.");

  // ---- merge ----
  CLI::App* mg = app.add_subcommand("merge", "merge the shards of a run (ikbench run --shard K/N) into one");
  std::vector<std::string> mg_dirs;
  std::string mg_out;
  bool mg_force = false;
  mg->add_option("shard_dirs", mg_dirs, "results directories of the shards")->required();
  mg->add_option("--out", mg_out, "merged results directory")->required();
  mg->add_flag("--force", mg_force, "replace the results in --out");
  mg->footer("Exit status: 0 merged; 2 a missing, duplicated, incomplete or mismatched shard, or an unusable --out.");

  // ---- playground ----
  playground::PlaygroundOptions pg;
  CLI::App* play = app.add_subcommand("playground", "write playground.html: drag a target, watch the solvers follow it");
  play->add_option("--out", pg.out, "the page to write")->capture_default_str();
  play->add_option("--module", pg.module, "the WebAssembly module (ikbench_playground.js; default: this build's)");
  play->add_option("--run", pg.runs,
                   "a results directory whose models the page offers too, in the scenes they were checked in "
                   "(their meshes drawn; repeatable)");
  play->footer("One self-contained page that opens offline in any browser (docs/playground.md).\n"
               "Exit status: 0 written; 2 a missing part (module, three.js) or an unusable --out.");

  // ---- compare / report (the analysis library) ----
  CLI::App* cmp = app.add_subcommand("compare", "compare two runs, or two specs in one run, with uncertainty");
  CLI::App* rep = app.add_subcommand("report", "write the interactive report.html of a run");
  CLI::App* tun = app.add_subcommand("tune", "pick a point of a solver grid on a tuning set, evaluate it on another set");
  CLI::App* plt = app.add_subcommand("plot", "one figure of chosen specs and families of a run: convergence, time, "
                                             "success (docs/report.md)");
  CLI::App* tal = app.add_subcommand("tail", "the slow tail of a run's solve times: p99.9 and max per cell, the slowest "
                                             "solves and their causes (docs/analysis.md)");
  CLI::App* his = app.add_subcommand("history", "the history store of runs across commits: add, list, trend, changes, "
                                                "publish, backfill (docs/history.md)");
  for (CLI::App* sub : {cmp, rep, tun, his, plt, tal}) {
    sub->allow_extras();
    sub->set_help_flag();  // --help goes to the analysis library, which knows the options
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (list->parsed()) {
    if (what == "solvers") listSolvers(list_format);
    if (what == "suites") listSuites();
    if (what == "protocols") listSuites("protocols");
    if (what == "scenarios") listScenarios(list_suite);
    if (what == "collision") listCollision(list_suite);
    return 0;
  }
  if (cmp->parsed() || rep->parsed() || tun->parsed() || his->parsed() || plt->parsed() || tal->parsed()) {
    CLI::App* sub = cmp->parsed()   ? cmp
                    : rep->parsed() ? rep
                    : tun->parsed() ? tun
                    : his->parsed() ? his
                    : tal->parsed() ? tal
                                    : plt;
    std::vector<std::string> args = {sub->get_name()};
    if (tun->parsed()) {
      // `tune` is owned by the analysis library, which runs `ikbench run` (this
      // very binary, passed as --ikbench before the user's options so that an
      // explicit --ikbench still wins): exec, so nothing waits on Python here.
      std::error_code ec;
      const fs::path self = fs::read_symlink("/proc/self/exe", ec);
      args.push_back("--ikbench");
      args.push_back((ec ? fs::absolute(argv[0]) : self).string());
      for (const std::string& a : sub->remaining()) args.push_back(a);
      execAnalysis(args);
      return 2;
    }
    for (const std::string& a : sub->remaining()) args.push_back(a);
    const int rc = runAnalysis(args);
    return rc < 0 ? 2 : rc;
  }
  if (play->parsed()) {
    fmt::print("playground: {}\n", playground::writePlayground(pg));
    return 0;
  }
  if (vf->parsed()) {
    if (!vf_verdicts.empty()) {
      checkOutputFile(vf_verdicts);
      // The run's directory holds verify's inputs: nothing is written into it.
      std::error_code ec;
      const fs::path run = fs::weakly_canonical(vf_dir, ec), target = fs::weakly_canonical(vf_verdicts, ec);
      for (fs::path p = target.parent_path(); !p.empty(); p = p.parent_path()) {
        if (p == run)
          throw HarnessError(fmt::format("verify: --verdicts '{}' is inside the run directory '{}', whose files are "
                                         "verify's inputs; write it elsewhere",
                                         vf_verdicts, vf_dir));
        if (p == p.parent_path()) break;
      }
    }
    std::ostringstream verdicts;
    const VerifyReport r = verifyRun(vf_dir, std::cout, 50, vf_verdicts.empty() ? nullptr : &verdicts);
    if (!vf_verdicts.empty()) writeOutputFile(vf_verdicts, verdicts.str());
    return r.disagreements > 0 ? 1 : 0;
  }
  if (mg->parsed()) {
    const MergeReport r = mergeShards(mg_dirs, mg_out, mg_force ? OutputMode::kForce : OutputMode::kFresh);
    fmt::print("merged {} shards, {} solves: {}\n", r.shards, r.solves, fs::absolute(r.out_dir).string());
    return 0;
  }
  if (tp->parsed()) {
    tc.seed = parseSeed(tp_seed);
    // The directory first: a bad --out is an error before minutes of measuring.
    if (!tp_out.empty()) {
      std::error_code ec;
      fs::create_directories(tp_out, ec);
      if (ec) throw HarnessError(fmt::format("cannot create output directory '{}': {}", tp_out, ec.message()));
      checkOutputFile((fs::path(tp_out) / "throughput.json").string());
    }
    const ThroughputResult r = measureThroughput(tc);
    fmt::print("{}", throughputTable(r));
    if (!tp_out.empty()) {
      const fs::path file = fs::path(tp_out) / "throughput.json";
      writeOutputFile(file.string(), throughputJson(r).dump(2) + "\n");
      fmt::print("throughput.json: {}\n", fs::absolute(file).string());
    }
    return 0;
  }

  // run
  const std::optional<std::uint64_t> seed_override =
      o_seed->count() ? std::optional<std::uint64_t>(parseSeed(seed_text)) : std::nullopt;
  Suite suite;
  if (!suite_arg.empty()) {
    suite = loadSuite(suite_arg, seed_override);
  } else if (!protocol.empty()) {
    suite = loadProtocol(protocol, urdf, base, tip, seed_override,
                         o_samples->count() ? std::optional<int>(samples) : std::nullopt);
    fmt::print("protocol {}: {} families on {}\n", suite.protocol, suite.families.size(), urdf);
  } else if (!urdf.empty() || !mjcf.empty()) {
    robot_files.mjcf = !mjcf.empty();
    const std::string& robot = robot_files.mjcf ? mjcf : urdf;
    suite.name = fs::path(robot).stem().string();
    suite.source = robot;
    suite.seed = seed_override.value_or(1);
    suite.families.push_back(robotFamily(robot, base, tip, samples, suite.seed, scene_file, robot_files));
    fmt::print("{}: {}\n", robot_files.mjcf ? "mjcf" : "urdf", suite.families.back().description);
    // A robot's question: how does the recommended recipe do against a
    // reference peer (and the closed form, where the chain has one)?
    suite.solvers = robotDefaultSolvers(suite.families.back());
  } else if (!bvh.empty()) {
    suite.name = fs::path(bvh).stem().string();
    suite.source = bvh;
    suite.seed = seed_override.value_or(1);
    suite.families.push_back(bvhFamily(bvh, suite.seed));
  } else if (o_chain->count()) {
    // Three families of --samples problems each, held before the run's own check.
    checkMemory({.problems = 3.0 * samples, .q_entries = 3.0 * samples * chain},
                fmt::format("ikbench run --chain {} --samples {}", chain, samples));
    suite = chainSuite(chain, samples, seed_override.value_or(1));
  } else {
    throw HarnessError("ikbench run: give one of --suite NAME|FILE, --urdf FILE, --mjcf FILE, --bvh FILE or --chain DOF");
  }

  for (const auto& [name, value] : {std::pair{"--position-tolerance", pos_tol}, std::pair{"--orientation-tolerance", ori_tol},
                                    std::pair{"--time-budget-us", budget_us}})
    if (value && !std::isfinite(*value)) throw HarnessError(fmt::format("{}: expected a finite number, got {}", name, *value));
  if (pos_tol) suite.options.position_tolerance = *pos_tol;
  if (ori_tol) suite.options.orientation_tolerance = *ori_tol;
  if (max_iterations) suite.options.max_iterations = *max_iterations;
  if (budget_us) suite.options.time_budget_us = *budget_us;
  if (std::string why; !suite.options.isValid(&why)) throw HarnessError(fmt::format("ikbench run: {}", why));

  RunConfig rc;
#ifdef IKBENCH_HAVE_EXTERNAL
  if (!solvers_file.empty()) {
    try {
      external::setSolversFile(solvers_file);
    } catch (const SpecError& e) {
      throw HarnessError(fmt::format("--solvers-file: {}", e.what()));
    }
  }
  // A model built from a URDF reaches an external solver with the file's text (its model message's `urdf`).
  for (const Family& f : suite.families) {
    if (f.source.empty() || (f.type != "urdf" && fs::path(f.source).extension() != ".urdf")) continue;
    try {
      for (const Problem& p : f.problems) external::setModelSource(p.model.get(), f.source);
    } catch (const SpecError& e) {
      throw HarnessError(fmt::format("family '{}': {}", f.name, e.what()));
    }
  }
#else
  if (!solvers_file.empty()) throw HarnessError("--solvers-file: this build has no external solvers (ext)");
#endif
  if (run->count("--solvers")) {
    try {
      rc.solvers = splitSpecList(solvers);
    } catch (const std::exception& e) {
      throw HarnessError(fmt::format("--solvers '{}': {}", solvers, e.what()));
    }
  }
  rc.threads = threads;
  rc.trace = !no_trace;
  rc.trace_problems = parseTraceProblems(trace_problems);
  rc.quality = quality;
  rc.out_dir = out;
  rc.output = force ? OutputMode::kForce : resume ? OutputMode::kResume : OutputMode::kFresh;
  if (resume && out.empty()) throw HarnessError("--resume needs --out DIR (the interrupted run's directory)");
  if (!shard.empty()) rc.shard = parseShard(shard);
  // A shard is a part of a run: the merged run is what the history records.
  if (rc.shard && !history_db.empty())
    throw HarnessError("--history: a shard is a part of a run; add the merged run (ikbench merge, then ikbench "
                       "history add DIR --db DB)");
  rc.command_line = commandLine(argc, argv);
  rc.progress = progress == "bar"     ? ProgressMode::kBar
                : progress == "lines" ? ProgressMode::kLines
                : progress == "none"  ? ProgressMode::kNone
                                      : ProgressMode::kAuto;
  rc.stop = &g_stop;
  long problems = 0;
  for (const Family& f : suite.families) problems += static_cast<long>(f.problems.size());
  const SolverList specs = resolveSolvers(suite, rc);
  std::vector<std::string> texts;
  for (const SolverSpec& s : specs.specs) texts.push_back(s.text);
  std::cerr << fmt::format("ikbench: suite '{}' ({} families, {} problems, seed {}) x {} solvers: {}{}\n", suite.name,
                           suite.families.size(), problems, suite.seed, texts.size(), fmt::join(texts, ","),
                           rc.shard ? fmt::format(" (shard {}/{})", rc.shard->index, rc.shard->count) : "");
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  const RunOutcome outcome = runSuite(suite, rc);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  const std::string dir = fs::absolute(outcome.out_dir).string();
  if (!outcome.complete) {
    std::cerr << fmt::format(
        "\nikbench: interrupted: {} of {} solves finished and kept in {} (run.json says \"complete\": false).\n"
        "Complete the run with the same command and --resume --out {}\n",
        outcome.solves_done, outcome.solves_total, dir, outcome.out_dir);
    return 130;
  }
  if (rc.shard) {
    // A shard is a part of a run: its table would describe 1/N of the data.
    // Its counts, and what completes the run.
    fmt::print("shard {}/{}: {} solves ({} solver specs, {} families; {} resumed) in {:.1f} s\n", rc.shard->index,
               rc.shard->count, outcome.solves_done, outcome.solvers.size(), suite.families.size(),
               outcome.solves_resumed, outcome.wall_s + outcome.trace_wall_s);
    fmt::print("results: {}\n", dir);
    fmt::print("when all {} shards are done: ikbench merge SHARD_DIR... --out DIR (then ikbench report DIR)\n",
               rc.shard->count);
    return 0;
  }
  if (!no_summary) {
    std::cout << '\n';
    std::cout.flush();
    if (runAnalysis({"summary", outcome.out_dir, "--write"}) != 0)
      std::cerr << fmt::format("ikbench: no summary table (the analysis library failed); the results are complete: "
                               "python3 -m ikbench summary {}\n",
                               dir);
  }
  fmt::print("results: {}\n", dir);
  if (!history_db.empty()) {
    std::cout.flush();
    const int hrc = runAnalysis({"history", "add", outcome.out_dir, "--db", history_db});
    if (hrc != 0) {
      std::cerr << fmt::format("ikbench: the run is complete in {} but was not added to the history store; add it "
                               "with: ikbench history add {} --db DB\n", dir, dir);
      return 2;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return realMain(argc, argv);
  } catch (const HarnessError& e) {
    std::cerr << "ikbench: error: " << e.what() << '\n';
    return 2;
  } catch (const ResultsError& e) {
    std::cerr << "ikbench: error: " << e.what() << '\n';
    return 2;
  } catch (const SuiteError& e) {
    std::cerr << "ikbench: error: " << e.what() << '\n';
    return 2;
  } catch (const SpecError& e) {
    std::cerr << "ikbench: error: " << e.what() << '\n';
    return 2;
  } catch (const std::system_error& e) {
    // A resource the system refused (threads that cannot start): the request
    // was too large for this machine, as a bad option is.
    std::cerr << "ikbench: error: " << e.what() << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "ikbench: error: out of memory (the run's estimate did not foresee it; IKBENCH_MEMORY_LIMIT_MB "
                 "sets the cap the estimate is checked against)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ikbench: error: " << e.what() << '\n';
    return 1;
  }
}
