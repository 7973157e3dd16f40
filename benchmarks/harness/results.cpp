// Results files (solves.csv, traces.csv, summary.csv, run.json), the summary
// table, and facts about the build and the machine.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "harness/harness.h"
#include "ikbench/solvers/registry.h"

#ifndef IKBENCH_SOURCE_DIR
#define IKBENCH_SOURCE_DIR ""
#endif
#ifndef IKBENCH_CXX_COMPILER_ID
#define IKBENCH_CXX_COMPILER_ID "unknown"
#endif
#ifndef IKBENCH_CXX_COMPILER_VERSION
#define IKBENCH_CXX_COMPILER_VERSION "unknown"
#endif
#ifndef IKBENCH_CXX_FLAGS_EFFECTIVE
#define IKBENCH_CXX_FLAGS_EFFECTIVE "unknown"
#endif
#ifndef IKBENCH_BUILD_TYPE
#define IKBENCH_BUILD_TYPE "unknown"
#endif

namespace ikbench::harness {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// RFC 4180: quote a field containing a comma, quote or line break.
std::string csvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// Shortest text that reads back as the same double (fmt's default): files
// are exact, and identical for identical results.
std::string num(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{}", x);
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  return s;
}

std::string runCommand(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    if (pclose(p) != 0) return "";
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// Linear interpolation between order statistics (numpy.percentile's default).
double percentile(std::vector<double> v, double pct) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double pos = pct / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

bool supported(const Summary& s) { return s.status != Status::kUnsupported && s.status != Status::kInvalidInput; }

// Every parameter value of a spec (its own and the common keys), defaults
// filled in from the registry.
json specJson(const std::string& spec) {
  std::string name;
  std::map<std::string, std::string> given;
  parseSpec(spec, &name, &given);
  json params = json::object();
  std::string description;
  for (const SolverInfo& info : Registry::global().list())
    if (info.name == name) {
      description = info.description;
      for (const ParamSpec& p : info.params) params[p.name] = p.default_value;
    }
  for (const ParamSpec& p : Registry::commonParams()) params[p.name] = p.default_value;
  for (const auto& [k, v] : given) params[k] = v;
  return {{"spec", spec}, {"name", name}, {"description", description}, {"parameters", params}};
}

json optionsJson(const SolverOptions& o) {
  return {{"position_tolerance_m", o.position_tolerance},
          {"orientation_tolerance_rad", o.orientation_tolerance},
          {"max_iterations", o.max_iterations},
          {"time_budget_us", o.time_budget_us},
          {"stall_iterations", o.stall_iterations},
          {"stall_relative_improvement", o.stall_relative_improvement}};
}

}  // namespace

void writeFileAtomically(const std::string& path, const std::string& content) {
  const std::string tmp = fmt::format("{}.tmp-{}", path, static_cast<long>(getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw HarnessError(fmt::format("cannot write '{}': {}", tmp, std::strerror(errno)));
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    f.flush();
    if (!f) {
      const std::string why = std::strerror(errno);
      std::error_code ec;
      fs::remove(tmp, ec);
      throw HarnessError(fmt::format("cannot write '{}': {}", tmp, why));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw HarnessError(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, ec.message()));
  }
}

std::string gitRevision() {
  const std::string src = IKBENCH_SOURCE_DIR;
  if (src.empty()) return "unknown";
  const std::string rev = runCommand(fmt::format("git -C '{}' rev-parse HEAD 2>/dev/null", src));
  if (rev.empty()) return "unknown";
  // Local changes make the revision alone insufficient to reproduce a run.
  const std::string dirty =
      runCommand(fmt::format("git -C '{}' status --porcelain --untracked-files=no 2>/dev/null", src));
  return dirty.empty() ? rev : rev + "-dirty";
}

std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t c = line.find(':');
      if (c != std::string::npos) {
        std::string v = line.substr(c + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
      }
    }
  }
  return "unknown";
}

std::string isoTimeUtc() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<SummaryRow> summarize(const Suite& suite, const RunResult& result) {
  const size_t S = result.solvers.size();
  std::vector<SummaryRow> out;
  // Rows are in (family, problem, solver) order: gather per (family, solver).
  std::map<std::pair<int, int>, std::vector<const Summary*>> groups;
  for (const SolveRow& r : result.rows) groups[{r.family, r.solver}].push_back(&r.summary);
  for (const auto& [key, sums] : groups) {
    SummaryRow row;
    row.family = suite.families[key.first].name;
    row.solver = result.solvers[key.second];
    std::vector<double> it, pe, oe, t;
    double fk = 0, jac = 0;
    for (const Summary* s : sums) {
      ++row.solves;
      if (!supported(*s)) continue;
      ++row.supported;
      row.converged += s->converged();
      it.push_back(s->iterations);
      pe.push_back(s->position_error);
      oe.push_back(s->orientation_error);
      t.push_back(s->time_us);
      fk += static_cast<double>(s->fk_evals);
      jac += static_cast<double>(s->jacobian_evals);
    }
    if (row.supported > 0) {
      row.success_rate = static_cast<double>(row.converged) / row.supported;
      row.iterations_median = percentile(it, 50);
      row.iterations_p90 = percentile(it, 90);
      row.position_error_median = percentile(pe, 50);
      row.orientation_error_median = percentile(oe, 50);
      row.time_us_median = percentile(t, 50);
      row.time_us_p90 = percentile(t, 90);
      // The mean is what TRAC-IK-style comparisons quote: with restarts the
      // slow tail (hard targets) decides it, not the typical solve.
      double sum_t = 0.0;
      for (double x : t) sum_t += x;
      row.time_us_mean = sum_t / static_cast<double>(t.size());
      row.fk_evals_mean = fk / row.supported;
      row.jacobian_evals_mean = jac / row.supported;
    }
    out.push_back(row);
  }
  (void)S;
  return out;
}

std::string formatSummary(const Suite& suite, const RunResult& result) {
  const std::vector<SummaryRow> rows = summarize(suite, result);
  size_t wf = 6, ws = 6;
  for (const auto& r : rows) {
    wf = std::max(wf, r.family.size());
    ws = std::max(ws, r.solver.size());
  }
  std::string out = fmt::format("{:<{}}  {:<{}}  {:>6}  {:>8}  {:>6} {:>6}  {:>9} {:>9}  {:>9} {:>9} {:>9}  {:>8} {:>8}\n",
                                "family", wf, "solver", ws, "solves", "success", "it.med", "it.p90", "pos.err",
                                "ori.err", "t.med us", "t.p90 us", "t.mean us", "fk/solve", "J/solve");
  std::string last;
  for (const SummaryRow& r : rows) {
    if (!last.empty() && r.family != last) out += '\n';
    last = r.family;
    if (r.supported == 0) {
      out += fmt::format("{:<{}}  {:<{}}  {:>6}  {:>8}\n", r.family, wf, r.solver, ws, r.solves, "unsupp.");
      continue;
    }
    out += fmt::format(
        "{:<{}}  {:<{}}  {:>6}  {:>7.1f}%  {:>6.0f} {:>6.0f}  {:>9.2e} {:>9.2e}  {:>9.1f} {:>9.1f} {:>9.1f}  {:>8.1f} {:>8.1f}\n",
        r.family, wf, r.solver, ws, r.solves, 100.0 * r.success_rate, r.iterations_median, r.iterations_p90,
        r.position_error_median, r.orientation_error_median, r.time_us_median, r.time_us_p90, r.time_us_mean,
        r.fk_evals_mean, r.jacobian_evals_mean);
  }
  const double n = static_cast<double>(result.rows.size());
  out += fmt::format("\n{} solves in {:.2f} s on {} threads: {:.0f} solves/s (sum of solve times {:.2f} s)\n",
                     result.rows.size(), result.wall_s, result.threads, result.wall_s > 0 ? n / result.wall_s : 0.0,
                     result.solve_time_s);
  return out;
}

void writeResults(const Suite& suite, const RunConfig& config, const RunResult& result) {
  if (result.out_dir.empty()) throw HarnessError("writeResults: no output directory");
  const fs::path dir = result.out_dir;

  // solves.csv
  {
    fmt::memory_buffer b;
    fmt::format_to(std::back_inserter(b), "{},{}\n", join(kSolveColumns, ","), join(kSolveExtraColumns, ","));
    const std::string suite_name = csvField(suite.name);
    for (const SolveRow& r : result.rows) {
      const Family& fam = suite.families[r.family];
      const Problem& p = fam.problems[r.problem];
      const Summary& s = r.summary;
      const std::string& spec = result.solvers[r.solver];
      const int dof = p.model ? p.model->nv() : fam.dof;
      fmt::format_to(std::back_inserter(b), "{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{},{},{},{},{},{},{}\n",
                     suite_name, csvField(fam.name), r.problem, dof, p.goals.size(), csvField(fam.goal),
                     csvField(spec), toString(s.status), s.converged() ? 1 : 0, s.iterations, s.restarts,
                     num(s.position_error), num(s.orientation_error), s.time_us, s.fk_evals, s.jacobian_evals,
                     s.within_limits ? 1 : 0,
                     s.iterations > 0 ? fmt::format("{:.4f}", s.time_us / s.iterations) : std::string(),
                     solveSeed(suite.seed, fam.name, r.problem, spec), csvField(p.name), csvField(s.message));
    }
    writeFileAtomically((dir / "solves.csv").string(), fmt::to_string(b));
  }

  // traces.csv (header only when tracing was off)
  {
    fmt::memory_buffer b;
    fmt::format_to(std::back_inserter(b), "{}\n", join(kTraceColumns, ","));
    for (const TraceRow& t : result.traces) {
      const IterationRecord& r = t.record;
      fmt::format_to(std::back_inserter(b), "{},{},{},{},{},{},{},{},{:.3f}\n",
                     csvField(suite.families[t.family].name), t.problem, csvField(result.solvers[t.solver]),
                     r.iteration, num(r.position_error), num(r.orientation_error), num(r.step_norm), num(r.damping),
                     r.elapsed_us);
    }
    writeFileAtomically((dir / "traces.csv").string(), fmt::to_string(b));
  }

  // summary.csv
  const std::vector<SummaryRow> summary = summarize(suite, result);
  {
    fmt::memory_buffer b;
    fmt::format_to(std::back_inserter(b),
                   "family,solver,solves,supported,converged,success_rate,iterations_median,iterations_p90,"
                   "position_error_median,orientation_error_median,time_us_median,time_us_p90,fk_evals_mean,"
                   "jacobian_evals_mean,time_us_mean\n");
    for (const SummaryRow& r : summary)
      fmt::format_to(std::back_inserter(b), "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csvField(r.family),
                     csvField(r.solver), r.solves, r.supported, r.converged, num(r.success_rate),
                     num(r.iterations_median), num(r.iterations_p90), num(r.position_error_median),
                     num(r.orientation_error_median), num(r.time_us_median), num(r.time_us_p90),
                     num(r.fk_evals_mean), num(r.jacobian_evals_mean), num(r.time_us_mean));
    writeFileAtomically((dir / "summary.csv").string(), fmt::to_string(b));
  }

  // run.json
  json j;
  j["format"] = "ikbench-run/1";
  j["suite"] = {{"name", suite.name}, {"source", suite.source}, {"seed", suite.seed}, {"options", optionsJson(suite.options)}};
  json fams = json::array();
  for (const Family& f : suite.families)
    fams.push_back({{"name", f.name},
                    {"description", f.description},
                    {"problems", f.problems.size()},
                    {"dof", f.dof},
                    {"effectors", f.effectors},
                    {"goal", f.goal},
                    {"sequential", f.sequential}});
  j["families"] = fams;
  j["seeds"] = {{"suite", suite.seed},
                {"per_solve", "solves.csv column 'seed' = Rng::mix(Rng::mix(suite seed, Rng::hash(family)), "
                              "Rng::mix(problem, Rng::hash(solver spec)))"}};
  json solvers = json::array();
  for (const std::string& s : result.solvers) solvers.push_back(specJson(s));
  j["solvers"] = solvers;
  j["skipped_solvers"] = result.skipped_solvers;
  j["git_revision"] = gitRevision();
  j["build"] = {{"compiler", std::string(IKBENCH_CXX_COMPILER_ID) + " " + IKBENCH_CXX_COMPILER_VERSION},
                {"build_type", IKBENCH_BUILD_TYPE},
                {"flags", trim(IKBENCH_CXX_FLAGS_EFFECTIVE)}};
  j["machine"] = {{"cpu", cpuModel()}, {"hardware_threads", std::thread::hardware_concurrency()}};
  j["threads"] = result.threads;
  j["start_time"] = result.start_time;
  j["end_time"] = result.end_time;
  j["command_line"] = config.command_line;
  const double n = static_cast<double>(result.rows.size());
  j["throughput"] = {{"solves", result.rows.size()},
                     {"wall_s", result.wall_s},
                     {"solves_per_s", result.wall_s > 0 ? n / result.wall_s : 0.0},
                     {"sum_solve_time_s", result.solve_time_s},
                     {"parallel_efficiency",
                      result.wall_s > 0 ? result.solve_time_s / (result.wall_s * result.threads) : 0.0}};
  j["trace"] = {{"enabled", config.trace},
                {"problems_per_family", config.trace ? config.trace_problems : 0},
                {"rows", result.traces.size()},
                {"wall_s", result.trace_wall_s},
                {"note", "recorded in a second, untimed pass (record_trace=true) of the first problems_per_family "
                         "problems of every family, same seeds and starts; the timed pass has record_trace=false"}};
  json sum = json::array();
  for (const SummaryRow& r : summary)
    sum.push_back({{"family", r.family},
                   {"solver", r.solver},
                   {"solves", r.solves},
                   {"supported", r.supported},
                   {"success_rate", r.success_rate},
                   {"iterations_median", r.iterations_median},
                   {"time_us_median", r.time_us_median},
                   {"time_us_mean", r.time_us_mean}});
  j["summary"] = sum;
  // Keep what `ikbench throughput --out DIR` may have merged in before.
  const fs::path run_json = dir / "run.json";
  if (std::ifstream old(run_json); old) {
    try {
      const json prev = json::parse(old);
      if (prev.contains("throughput_benchmark")) j["throughput_benchmark"] = prev["throughput_benchmark"];
    } catch (const std::exception&) {
    }
  }
  writeFileAtomically(run_json.string(), j.dump(2) + "\n");
}

}  // namespace ikbench::harness
