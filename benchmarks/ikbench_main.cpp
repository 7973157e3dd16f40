// `ikbench`: the command-line harness.
//
//   ikbench run --suite quick|default|FILE [--solvers SPEC,SPEC...] [--threads N]
//               [--seed S] [--out DIR] [--no-trace] [--trace-problems K]
//   ikbench run --urdf FILE [--base LINK --tip LINK] [--samples N] [...]
//   ikbench run --bvh FILE [...]
//   ikbench run --chain DOF [--samples N] [...]
//   ikbench list solvers|suites|scenarios
//   ikbench throughput [--solver SPEC] [--dof N] [--solves N] [--threads 1,2] [--out DIR]
//
// Exit status: 0 on success, 2 for a bad command (unknown solver, bad suite,
// unusable output directory, bad option), 1 for anything else.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/harness.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/solvers/registry.h"

namespace {

using namespace ikbench;
using namespace ikbench::harness;
namespace fs = std::filesystem;

std::string typeName(ParamType t) {
  switch (t) {
    case ParamType::kDouble: return "real";
    case ParamType::kInt: return "int";
    case ParamType::kBool: return "bool";
    case ParamType::kString: return "text";
  }
  return "?";
}

void listSolvers() {
  for (const SolverInfo& info : Registry::global().list()) {
    fmt::print("{}\n    {}\n", info.name, info.description);
    for (const ParamSpec& p : info.params)
      fmt::print("    {}={} ({}): {}\n", p.name, p.default_value, typeName(p.type), p.help);
  }
  fmt::print("\nkeys every solver accepts:\n");
  for (const ParamSpec& p : Registry::commonParams())
    fmt::print("    {}={} ({}): {}\n", p.name, p.default_value, typeName(p.type), p.help);
  fmt::print("\nspec syntax: name[:key=value]...  e.g. dls:lambda=0.1:restarts=5; lists separated by commas\n");
}

void listSuites() {
  const std::string dir = dataDirectory();
  for (const std::string& name : builtinSuiteNames()) {
    const fs::path file = fs::path(dir) / "suites" / (name + ".json");
    std::string description;
    try {
      std::ifstream f(file);
      const auto j = nlohmann::json::parse(f);
      if (j.contains("description") && j["description"].is_string()) description = j["description"];
    } catch (const std::exception&) {
    }
    fmt::print("{:<12} {}\n{:<12} {}\n", name, description, "", file.string());
  }
  fmt::print("\nor any suite file: ikbench run --suite path/to/suite.json\n");
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

std::string commandLine(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

int realMain(int argc, char** argv) {
  CLI::App app{"ikbench: benchmark inverse-kinematics solvers"};
  app.require_subcommand(1);

  // ---- run ----
  CLI::App* run = app.add_subcommand("run", "run solvers on a suite and write results/<run>/");
  std::string suite_arg, urdf, base, tip, bvh, solvers, out, progress = "auto";
  int chain = 0, samples = 200, threads = 0, trace_problems = 20;
  std::uint64_t seed = 0;
  bool no_trace = false;
  auto* o_suite = run->add_option("--suite", suite_arg, "shipped suite name (quick, default, ...) or suite file");
  auto* o_urdf = run->add_option("--urdf", urdf, "benchmark a URDF robot: random reachable pose targets");
  run->add_option("--base", base, "URDF base link (with --tip; default: the whole model)");
  run->add_option("--tip", tip, "URDF tip link");
  auto* o_samples = run->add_option("--samples", samples, "targets for --urdf / --chain (default 200)");
  auto* o_bvh = run->add_option("--bvh", bvh, "benchmark a BVH skeleton on its own motion frames");
  auto* o_chain = run->add_option("--chain", chain, "benchmark random revolute chains of this many DOF");
  o_suite->excludes(o_urdf)->excludes(o_bvh)->excludes(o_chain);
  o_urdf->excludes(o_bvh)->excludes(o_chain);
  o_bvh->excludes(o_chain);
  (void)o_samples;
  run->add_option("--solvers", solvers, "comma-separated solver specs (default: the suite's list, else all)");
  run->add_option("--threads", threads, "worker threads (default: all cores)");
  auto* o_seed = run->add_option("--seed", seed, "master seed (replaces the suite's)");
  run->add_option("--out", out, "results directory (default results/<timestamp>-<suite>)");
  run->add_flag("--no-trace", no_trace, "skip the untimed trace pass (traces.csv has only its header)");
  run->add_option("--trace-problems", trace_problems, "problems per family in the trace pass (default 20)");
  run->add_option("--progress", progress, "auto|bar|lines|none (default auto: a bar on a terminal)")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));

  // ---- list ----
  CLI::App* list = app.add_subcommand("list", "list solvers (with parameters), suites or scenarios");
  std::string what, list_suite;
  list->add_option("what", what, "solvers | suites | scenarios")
      ->required()
      ->check(CLI::IsMember({"solvers", "suites", "scenarios"}));
  list->add_option("--suite", list_suite, "with 'scenarios': only this suite");

  // ---- throughput ----
  CLI::App* tp = app.add_subcommand("throughput", "solves/s of one solver on N-DOF pose problems, 1 vs 2 threads");
  ThroughputConfig tc;
  std::string tp_out;
  tp->add_option("--solver", tc.solver, "solver spec (default dls)");
  tp->add_option("--dof", tc.dof, "chain DOF (default 7)");
  tp->add_option("--solves", tc.solves, "solves per measurement (default 100000)");
  tp->add_option("--problems", tc.problems, "distinct problems, cycled (default 2000)");
  tp->add_option("--threads", tc.threads, "thread counts to measure, comma-separated (default 1,2)")->delimiter(',');
  tp->add_option("--seed", tc.seed, "seed of the problems (default 1)");
  tp->add_option("--out", tp_out, "write DIR/throughput.json and merge it into DIR/run.json");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (list->parsed()) {
    if (what == "solvers") listSolvers();
    if (what == "suites") listSuites();
    if (what == "scenarios") listScenarios(list_suite);
    return 0;
  }

  if (tp->parsed()) {
    const ThroughputResult r = measureThroughput(tc);
    const std::string text = throughputJson(r);
    fmt::print("{}\n", text);
    if (!tp_out.empty()) {
      std::error_code ec;
      fs::create_directories(tp_out, ec);
      if (ec) throw HarnessError(fmt::format("cannot create output directory '{}': {}", tp_out, ec.message()));
      writeFileAtomically((fs::path(tp_out) / "throughput.json").string(), text + "\n");
      const fs::path run_json = fs::path(tp_out) / "run.json";
      if (fs::exists(run_json)) {
        std::ifstream f(run_json);
        nlohmann::json j = nlohmann::json::parse(f);
        j["throughput_benchmark"] = nlohmann::json::parse(text);
        writeFileAtomically(run_json.string(), j.dump(2) + "\n");
      }
    }
    return 0;
  }

  // run
  const std::optional<std::uint64_t> seed_override =
      o_seed->count() ? std::optional<std::uint64_t>(seed) : std::nullopt;
  Suite suite;
  if (!suite_arg.empty()) {
    suite = loadSuite(suite_arg, seed_override);
  } else if (!urdf.empty()) {
    if (base.empty() != tip.empty()) throw HarnessError("--base and --tip go together");
    suite.name = fs::path(urdf).stem().string();
    suite.source = urdf;
    suite.seed = seed_override.value_or(1);
    suite.families.push_back(urdfFamily(urdf, base, tip, samples, suite.seed));
  } else if (!bvh.empty()) {
    suite.name = fs::path(bvh).stem().string();
    suite.source = bvh;
    suite.seed = seed_override.value_or(1);
    suite.families.push_back(bvhFamily(bvh, suite.seed));
  } else if (o_chain->count()) {
    suite = chainSuite(chain, samples, seed_override.value_or(1));
  } else {
    throw HarnessError("ikbench run: give one of --suite NAME|FILE, --urdf FILE, --bvh FILE or --chain DOF");
  }

  RunConfig rc;
  if (!solvers.empty()) {
    try {
      rc.solvers = splitSpecList(solvers);
    } catch (const std::exception& e) {
      throw HarnessError(fmt::format("--solvers '{}': {}", solvers, e.what()));
    }
    if (rc.solvers.empty()) throw HarnessError("--solvers: empty list");
  }
  if (threads < 0) throw HarnessError(fmt::format("--threads must be >= 0, got {}", threads));
  rc.threads = threads;
  rc.trace = !no_trace;
  rc.trace_problems = trace_problems;
  rc.out_dir = out;
  rc.command_line = commandLine(argc, argv);
  rc.progress = progress == "bar"     ? ProgressMode::kBar
                : progress == "lines" ? ProgressMode::kLines
                : progress == "none"  ? ProgressMode::kNone
                                      : ProgressMode::kAuto;
  long problems = 0;
  for (const Family& f : suite.families) problems += static_cast<long>(f.problems.size());
  const std::vector<std::string> specs = resolveSolvers(suite, rc);
  std::cerr << fmt::format("ikbench: suite '{}' ({} families, {} problems, seed {}) x {} solvers: {}\n", suite.name,
                           suite.families.size(), problems, suite.seed, specs.size(), fmt::join(specs, ","));
  const RunResult result = runSuite(suite, rc);
  fmt::print("\nsuite {} (seed {})\n{}", suite.name, suite.seed, formatSummary(suite, result));
  fmt::print("results: {}\n", fs::absolute(result.out_dir).string());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return realMain(argc, argv);
  } catch (const HarnessError& e) {
    std::cerr << "ikbench: error: " << e.what() << '\n';
    return 2;
  } catch (const SuiteError& e) {
    std::cerr << "ikbench: error: " << e.what() << '\n';
    return 2;
  } catch (const SpecError& e) {
    std::cerr << "ikbench: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ikbench: error: " << e.what() << '\n';
    return 1;
  }
}
