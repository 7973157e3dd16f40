// The run engine: units of work on core's thread pool (runOnThreads), each thread with its
// own Solver instance per spec; finished solves go to their slot and, every
// 200 ms, to solves.partial.csv.
#include "harness/run_engine.h"

#include "harness/memory_budget.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <limits>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "harness/answer_quality.h"
#include "harness/batching_solver.h"
#include "harness/build_info.h"
#include "harness/levels.h"
#include "harness/machine_load.h"
#include "harness/results_format.h"
#include "harness/run_directory.h"
#include "ikbench/core/threads.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"

namespace ikbench::harness {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A duration for a person: "42 s", "3 min 05 s", "2 h 07 min".
std::string humanDuration(double s) {
  if (!(s >= 0.0) || s > 1e8) return "?";
  const long t = static_cast<long>(s + 0.5);
  if (t < 60) return fmt::format("{} s", t);
  if (t < 3600) return fmt::format("{} min {:02} s", t / 60, t % 60);
  return fmt::format("{} h {:02} min", t / 3600, (t % 3600) / 60);
}

// Progress: a bar redrawn in place on a terminal, a plain line every 10 % (at
// most one per 2 s) otherwise; both with the time so far and an estimate of
// the time left (the elapsed time per finished solve times the solves left).
class Progress {
 public:
  Progress(std::ostream& out, bool bar, bool enabled, std::string label, long total)
      : out_(out), bar_(bar), enabled_(enabled && total > 0), label_(std::move(label)), total_(total) {}

  void update(long done, bool final = false) {
    if (!enabled_) return;
    const double t = secondsSince(start_);
    const double frac = static_cast<double>(done) / static_cast<double>(total_);
    const std::string eta =
        final || done >= total_ ? std::string("done") : done > 0 ? "ETA " + humanDuration(t * (1.0 - frac) / frac)
                                                                 : std::string("ETA ?");
    if (bar_) {
      constexpr int kWidth = 30;
      const int filled = static_cast<int>(frac * kWidth);
      out_ << fmt::format("\r{:<7} [{}{}] {:5.1f}%  {}/{} solves  {}  {}   ", label_, std::string(filled, '#'),
                          std::string(kWidth - filled, '-'), 100.0 * frac, done, total_, humanDuration(t), eta);
      if (final) out_ << '\n';
      out_.flush();
    } else {
      const int decile = static_cast<int>(frac * 10.0);
      if ((final && done != last_done_) || (decile > last_decile_ && t - last_print_ >= 2.0)) {
        out_ << fmt::format("{}: {}/{} solves ({:.0f}%), {:.1f} s, {}\n", label_, done, total_, 100.0 * frac, t, eta);
        out_.flush();
        last_decile_ = decile;
        last_print_ = t;
        last_done_ = done;
      }
    }
  }

 private:
  std::ostream& out_;
  bool bar_, enabled_;
  std::string label_;
  long total_;
  Clock::time_point start_ = Clock::now();
  int last_decile_ = 0;
  long last_done_ = -1;
  double last_print_ = -1e9;
};

// A unit of work: problems [begin, end) of one family with one solver.
struct Unit {
  int family = 0, solver = 0;
  int begin = 0, end = 0;
  bool chained = false;  // sequential: each problem starts from the previous answer
};

// What a finished solve leaves in its slot.
struct Slot {
  bool done = false;
  std::string row;        // its solves.csv line (with '\n')
  std::string solutions;  // its solutions.csv lines (several solutions only)
  std::string traces;     // its traces.csv lines (traced solves only)
  Status status = Status::kInvalidInput;
  int iterations = 0;
  int restarts = 0;
  double time_us = 0.0;
  Eigen::VectorXd q;  // the configuration the solve left (for a chained successor)
};

// Significant digits of traces.csv's step_norm and damping, and of the q of
// records other than an attempt's last (docs/results-format.md "traces.csv").
constexpr int kTraceDetailDigits = 6;
constexpr int kTraceQDigits = 4;

Summary solveOne(Solver& solver, const Problem& problem, Eigen::VectorXd& q, const SolverOptions& options) {
  try {
    return solver.solve(problem, q, options);
  } catch (const std::exception& e) {
    // Solver::solve promises not to throw; if a backend does anyway, the run
    // goes on and the row says what happened.
    Summary s;
    s.status = Status::kNumericalFailure;
    s.message = std::string("exception: ") + e.what();
    return s;
  }
}

json optionsJson(const SolverOptions& o) {
  return {{"position_tolerance_m", o.position_tolerance},
          {"orientation_tolerance_rad", o.orientation_tolerance},
          {"max_iterations", o.max_iterations},
          {"time_budget_us", o.time_budget_us},
          {"stall_iterations", o.stall_iterations},
          {"stall_relative_improvement", o.stall_relative_improvement}};
}

// Every parameter value of a spec, typed as its binding says.
json specJson(const SolverSpec& spec) {
  std::string description;
  std::vector<ParamInfo> infos = Registry::commonParams();
  for (const SolverInfo& info : Registry::global().list())
    if (info.name == spec.name) {
      description = info.description;
      infos.insert(infos.end(), info.params.begin(), info.params.end());
    }
  auto typed = [&](const std::string& key, const std::string& text) -> json {
    if (text.empty()) return nullptr;  // an optional key not set: the run's setting
    for (const ParamInfo& p : infos) {
      if (p.name != key) continue;
      double d;
      long long i;
      bool b;
      switch (p.type) {
        case ParamType::kReal: return parseRealText(text, &d) ? json(d) : json(text);
        case ParamType::kInteger: return parseIntegerText(text, &i) ? json(i) : json(text);
        case ParamType::kBool: return parseBoolText(text, &b) ? json(b) : json(text);
        case ParamType::kChoice:
        case ParamType::kText: return text;
      }
    }
    return text;
  };
  json params = json::object();
  for (const auto& [k, v] : spec.parameters) params[k] = typed(k, v);
  for (const auto& [k, v] : commonSpecBinding().textValues(spec.common)) params[k] = typed(k, v);
  json given = json::array();
  for (const auto& [k, v] : spec.given) given.push_back(k);
  for (const auto& [k, v] : spec.given_common) given.push_back(k);
  std::sort(given.begin(), given.end());
  json j = {{"spec", spec.text}, {"name", spec.name}, {"description", description}, {"parameters", params},
            {"given", given}};
  if (!spec.preset.empty()) j["preset"] = spec.preset;
  return j;
}

json gridJson(const std::vector<SpecGrid>& grids) {
  if (grids.empty()) return nullptr;
  json out = json::array();
  for (const SpecGrid& g : grids) {
    json axes = json::array();
    for (const GridAxis& a : g.axes) axes.push_back({{"key", a.key}, {"values", a.values}});
    out.push_back({{"spec", g.text}, {"axes", axes}, {"specs", g.specs}});
  }
  return out;
}

class Engine {
 public:
  Engine(const Suite& suite, const RunConfig& config) : suite_(suite), config_(config) {}
  RunOutcome run();

 private:
  std::ostream& log() const { return config_.log ? *config_.log : std::cerr; }
  size_t slot(int f, int p, int s) const { return static_cast<size_t>(offset_[f] + p) * S_ + s; }
  void plan();
  // What the planned run will hold (harness/memory_budget.h); with `traces`,
  // the trace pass's rows too, counted from the timed pass.
  MemoryNeed memoryNeed(bool traces) const;
  json runJson(bool complete) const;
  void assignModelIds();
  void writeModelsAndProblems();
  void loadResumed();
  // Runs `units` on the pool; work(unit, solver) solves it with this thread's
  // instance of its spec; `tick` runs on the calling thread every 200 ms.
  template <typename Work, typename Tick>
  void runPool(const std::vector<Unit>& units, Work work, Tick tick);
  void timedPass();
  void tracePass();
  void formatRow(int f, int p, int s, const Summary& sm, const Eigen::VectorXd& q, const Eigen::VectorXd& start,
                 Slot& out) const;
  bool stopping() const { return config_.stop && config_.stop->load(); }
  // Whether this run writes the quality columns, and its solves.csv header.
  bool quality() const { return config_.quality || !suite_.protocol.empty(); }
  std::vector<std::string> header() const {
    std::vector<std::string> h = solveHeader();
    if (quality()) h.insert(h.end(), kQualityColumns.begin(), kQualityColumns.end());
    if (collision_) h.insert(h.end(), kCollisionColumns.begin(), kCollisionColumns.end());
    if (external()) h.insert(h.end(), kExternalColumns.begin(), kExternalColumns.end());
    if (levels_) h.insert(h.end(), kLevelColumns.begin(), kLevelColumns.end());
    return h;
  }
  // Problems per exchange of spec s: an external solver's `batch` key
  // (batching_solver.h), 1 for every other spec.
  int batchOf(int s) const {
    const SolverSpec& spec = list_.specs[static_cast<size_t>(s)];
    if (spec.name != "ext") return 1;
    for (const auto& [key, value] : spec.parameters) {
      long long b = 1;
      if (key == "batch" && parseIntegerText(value, &b) && b > 1) return static_cast<int>(b);
    }
    return 1;
  }
  // A solver of the run is an external process (ext): solves.csv gets the
  // time it reports (kExternalColumns).
  bool external() const {
    return std::any_of(list_.specs.begin(), list_.specs.end(), [](const SolverSpec& s) { return s.name == "ext"; });
  }
  // A progress display of one pass: a bar on a terminal, lines otherwise.
  Progress progress(const char* label, long total) const;
  // The options of solve (f, p, s): the suite's, with the solve's seed.
  SolverOptions solveOptions(int f, int p, int s, bool record_trace) const;
  void finish();

  const Suite& suite_;
  // A family has a scene: solves.csv gets the collision columns.
  const bool collision_ = std::any_of(suite_.families.begin(), suite_.families.end(),
                                      [](const Family& f) { return !f.problems.empty() && f.problems.front().collision; });
  // A family has whole-body problems (several levels, com or bounded goals):
  // solves.csv gets the per-level verdict columns.
  const bool levels_ = std::any_of(suite_.families.begin(), suite_.families.end(), [](const Family& f) {
    return std::any_of(f.problems.begin(), f.problems.end(), [](const Problem& p) { return p.isWholeBody(); });
  });
  const RunConfig& config_;
  SolverList list_;
  std::unique_ptr<RunDirectory> dir_;
  int S_ = 0;
  std::vector<int> offset_;
  std::vector<Unit> units_;  // this run's (shard's) units, in canonical order
  std::vector<Slot> slots_;
  std::vector<char> mine_;   // slots of this run's units
  long total_ = 0, resumed_ = 0;
  std::atomic<long> done_{0};
  std::mutex finished_mutex_;
  std::vector<size_t> finished_;  // slots finished since the last flush
  RunOutcome out_;
  std::string start_time_, end_time_;
  double solve_time_s_ = 0.0;
  long trace_rows_ = 0, trace_mismatches_ = 0;
  // The traced problems of each family, in the sample's order (traceSample),
  // and whether problem p of family f is one of them.
  std::vector<std::vector<int>> trace_sample_;
  std::vector<std::vector<char>> traced_;
  bool isTraced(int f, int p) const { return !traced_.empty() && traced_[f][p]; }
  std::string trace_skipped_;  // why the trace pass did not run (memory), or empty
  std::map<const Model*, std::string> model_ids_;
  LoadRecorder load_;  // sampled from the progress ticks (at most once a second)
};

MemoryNeed Engine::memoryNeed(bool traces) const {
  MemoryNeed need;
  for (int f = 0; f < static_cast<int>(suite_.families.size()); ++f) {
    const Family& fam = suite_.families[f];
    for (int p = 0; p < static_cast<int>(fam.problems.size()); ++p) {
      const double nq = fam.problems[p].q0.size();
      need.problems += 1;
      need.q_entries += nq;
      for (int s = 0; s < S_; ++s) {
        const size_t i = slot(f, p, s);
        if (!mine_[i]) continue;
        need.solves += 1;
        need.solve_q_entries += nq;
        // A traced solve records one row per iteration and one per attempt's
        // start: its timed pass's counts (the trace pass repeats the solve).
        if (traces && isTraced(f, p) && slots_[i].done)
          need.traced_q_entries += nq * (slots_[i].iterations + slots_[i].restarts + 1);
      }
    }
  }
  return need;
}

void Engine::plan() {
  S_ = static_cast<int>(list_.specs.size());
  offset_.assign(suite_.families.size() + 1, 0);
  for (size_t f = 0; f < suite_.families.size(); ++f)
    offset_[f + 1] = offset_[f] + static_cast<int>(suite_.families[f].problems.size());
  const long slots = static_cast<long>(offset_.back()) * S_;
  if (slots == 0) throw HarnessError(fmt::format("suite '{}' has no problems", suite_.name));
  slots_.assign(static_cast<size_t>(slots), Slot{});
  mine_.assign(static_cast<size_t>(slots), 0);
  long index = 0;
  const Shard shard = config_.shard.value_or(Shard{});
  trace_sample_.assign(suite_.families.size(), {});
  traced_.assign(config_.trace ? suite_.families.size() : 0, {});
  std::vector<int> batch(static_cast<size_t>(S_));
  for (int s = 0; s < S_; ++s) batch[s] = batchOf(s);
  for (int f = 0; f < static_cast<int>(suite_.families.size()); ++f) {
    const Family& fam = suite_.families[f];
    const int n = static_cast<int>(fam.problems.size());
    if (n == 0) continue;
    auto take = [&](const Unit& u) {
      if (index++ % shard.count != shard.index - 1) return;
      units_.push_back(u);
      for (int p = u.begin; p < u.end; ++p) mine_[slot(u.family, p, u.solver)] = 1;
      total_ += u.end - u.begin;
    };
    if (config_.trace) {
      trace_sample_[f] = traceSample(suite_.seed, fam.name, n, config_.trace_problems);
      traced_[f].assign(static_cast<size_t>(n), 0);
      for (int p : trace_sample_[f]) traced_[f][static_cast<size_t>(p)] = 1;
    }
    if (fam.sequential) {
      for (int s = 0; s < S_; ++s) take({f, s, 0, n, true});
    } else {
      for (int p = 0; p < n; ++p)
        for (int s = 0; s < S_; ++s)
          if (batch[s] == 1) take({f, s, p, p + 1, false});
      // A solver that answers batches (ext:batch=N): a unit of N problems, one exchange.
      for (int s = 0; s < S_; ++s)
        for (int p = 0, b = batch[s]; b > 1 && p < n; p += b) take({f, s, p, std::min(n, p + b), false});
    }
  }
}

json Engine::runJson(bool complete) const {
  json j;
  j["format"] = fmt::format("{}/{}", results_schema::kFormat, results_schema::kFormatVersion);
  j["format_version"] = kFormatVersion;
  j["complete"] = complete;
  j["interrupted"] = out_.interrupted;
  j["suite"] = {{"name", suite_.name}, {"source", suite_.source}, {"seed", suite_.seed},
                {"options", optionsJson(suite_.options)}};
  j["protocol"] = suite_.protocol.empty() ? json(nullptr) : json(suite_.protocol);
  j["quality"] = quality();
  json fams = json::array();
  for (const Family& f : suite_.families) {
    std::vector<std::string> ids;
    for (const Problem& p : f.problems) {
      auto it = model_ids_.find(p.model.get());
      if (it != model_ids_.end() && std::find(ids.begin(), ids.end(), it->second) == ids.end())
        ids.push_back(it->second);
    }
    fams.push_back({{"name", f.name},
                    {"description", f.description},
                    {"problems", f.problems.size()},
                    {"dof", f.dof},
                    {"effectors", f.effectors},
                    {"goal", f.goal},
                    {"sequential", f.sequential},
                    {"type", f.type},
                    {"source", f.source.empty() ? json(nullptr) : json(f.source)},
                    {"robot", f.robot.empty() ? json(nullptr) : json(f.robot)},
                    {"models", ids},
                    {"targets", f.targets},
                    {"start", f.start},
                    {"starts_per_target", f.starts_per_target},
                    {"frame_rate", f.frame_rate > 0 ? json(f.frame_rate) : json(nullptr)},
                    {"branch_jump", f.branch_jump > 0 ? json(f.branch_jump) : json(nullptr)}});
  }
  j["families"] = fams;
  j["seeds"] = {{"suite", suite_.seed},
                {"per_solve", "solves.csv column 'seed' = Rng::mix(Rng::mix(suite seed, Rng::hash(family)), "
                              "Rng::mix(problem, Rng::hash(solver spec)))"}};
  json solvers = json::array();
  for (const SolverSpec& s : list_.specs) solvers.push_back(specJson(s));
  j["solvers"] = solvers;
  j["skipped_solvers"] = list_.skipped;
  j["grid"] = gridJson(list_.grids);
  j["shard"] = config_.shard ? json{{"index", config_.shard->index}, {"count", config_.shard->count}} : json(nullptr);
  j["git_revision"] = gitRevision();
  j["build"] = buildJson();
  j["machine"] = machineJson();
  j["threads"] = out_.threads;
  j["load"] = load_.json();
  j["start_time"] = start_time_;
  j["end_time"] = end_time_;
  j["command_line"] = config_.command_line;
  j["progress"] = {{"solves", total_}, {"done", done_.load()}, {"resumed", resumed_}};
  const double n = static_cast<double>(done_.load() - resumed_);
  j["throughput"] = {{"solves", done_.load()},
                     {"wall_s", out_.wall_s},
                     {"solves_per_s", out_.wall_s > 0 ? n / out_.wall_s : 0.0},
                     {"sum_solve_time_s", solve_time_s_},
                     {"parallel_efficiency",
                      out_.wall_s > 0 && out_.threads > 0 ? solve_time_s_ / (out_.wall_s * out_.threads) : 0.0}};
  json sample = json::object();
  for (size_t f = 0; f < trace_sample_.size(); ++f)
    if (config_.trace) sample[suite_.families[f].name] = trace_sample_[f];
  j["trace"] = {{"enabled", config_.trace},
                {"problems_per_family", !config_.trace                                   ? json(0)
                                        : config_.trace_problems == RunConfig::kTraceAll ? json("all")
                                                                                         : json(config_.trace_problems)},
                {"selection", "seeded"},
                {"problems", sample},
                {"rows", trace_rows_},
                {"wall_s", out_.trace_wall_s},
                {"mismatches", trace_mismatches_},
                {"skipped", trace_skipped_.empty() ? json(nullptr) : json(trace_skipped_)},
                {"note", "recorded in a second pass (record_trace=true) of problems_per_family problems of every "
                         "family (problems: the seeded sample, in its order), same seeds and starts; elapsed_us "
                         "includes the cost of recording, time_us is it rescaled to the timed pass's time_us of the "
                         "same solve"}};
  return j;
}

void Engine::assignModelIds() {
  for (const Family& f : suite_.families)
    for (const Problem& p : f.problems) model_ids_.emplace(p.model.get(), fmt::format("m{}", model_ids_.size()));
}

void Engine::writeModelsAndProblems() {
  json models = json::array();
  std::string problems;
  std::set<const Model*> written;
  for (const Family& f : suite_.families) {
    for (size_t k = 0; k < f.problems.size(); ++k) {
      const Problem& p = f.problems[k];
      const auto it = model_ids_.find(p.model.get());
      if (written.insert(p.model.get()).second)
        models.push_back(modelToJson(*p.model, it->second, f.source, p.collision.get()));
      problems += problemToJson(f.name, static_cast<int>(k), it->second, p, f.sequential)
                      .dump(-1, ' ', false, json::error_handler_t::replace);
      problems += '\n';
    }
  }
  dir_->writeAtomically(compressedName("models.json"),
                        json({{"format_version", kFormatVersion}, {"models", models}})
                                .dump(2, ' ', false, json::error_handler_t::replace) +
                            "\n");
  dir_->writeAtomically(compressedName("problems.jsonl"), problems);
}

// Takes over the finished solves of an interrupted run: the same suite, seed,
// solvers, shard, trace settings and build, or an error naming what differs.
void Engine::loadResumed() {
  const json old = dir_->readJson("run.json");
  const json now = runJson(false);
  if (!old.is_object() || !old.contains("format_version") || !old["format_version"].is_number_integer())
    throw HarnessError(fmt::format("--resume: '{}' is not a run.json of ikbench (no format_version)",
                                   dir_->file("run.json")));
  if (old.value("format_version", 0) != kFormatVersion)
    throw HarnessError(fmt::format("--resume: '{}' was written in another results format", dir_->path()));
  if (old.contains("complete") && old["complete"] == true)
    throw HarnessError(fmt::format("--resume: the run in '{}' is complete; nothing to resume", dir_->path()));
  for (const char* key : {"suite", "families", "solvers", "grid", "shard", "git_revision", "build"})
    if (const std::string diff = jsonDifference(old.contains(key) ? old[key] : json(), now[key], key); !diff.empty())
      throw HarnessError(fmt::format("--resume: the run in '{}' differs from this command in {} (the run's value "
                                     "first; resume with the same suite, seed, solvers and build)",
                                     dir_->path(), diff));
  const json old_trace = old.contains("trace") && old["trace"].is_object() ? old["trace"] : json::object();
  if (old_trace.value("enabled", true) != config_.trace ||
      (old_trace.contains("problems") ? old_trace["problems"] : json()) != now["trace"]["problems"])
    throw HarnessError(fmt::format("--resume: the run in '{}' used other trace settings", dir_->path()));

  std::map<std::string, int> family_index, solver_index;
  for (size_t f = 0; f < suite_.families.size(); ++f) family_index[suite_.families[f].name] = static_cast<int>(f);
  for (size_t s = 0; s < list_.specs.size(); ++s) solver_index[list_.specs[s].text] = static_cast<int>(s);
  const std::vector<std::string> header = this->header();
  const auto col = [&](const char* name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t c_family = col("family"), c_problem = col("problem"), c_solver = col("solver"), c_status = col("status"),
               c_iter = col("iterations"), c_time = col("time_us"), c_q = col("q");
  const std::vector<std::string> lines = dir_->readPartial(fmt::format("{}", fmt::join(header, ",")));
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = fmt::format("{}:{}", dir_->file(RunDirectory::kPartialFile), i + 2);
    const std::vector<std::string> cells = parseCsvLine(lines[i], where);
    if (cells.size() != header.size()) throw HarnessError(fmt::format("{}: expected {} columns", where, header.size()));
    auto f = family_index.find(cells[c_family]);
    auto s = solver_index.find(cells[c_solver]);
    if (f == family_index.end() || s == solver_index.end())
      throw HarnessError(fmt::format("{}: family or solver not in this run", where));
    const int p = std::stoi(cells[c_problem]);
    if (p < 0 || p >= static_cast<int>(suite_.families[f->second].problems.size()))
      throw HarnessError(fmt::format("{}: problem {} out of range", where, p));
    Slot& sl = slots_[slot(f->second, p, s->second)];
    if (sl.done) continue;  // written twice (a flush repeated after a crash): the first one stands
    // The extra solutions of a multi-solution solve are not in the partial
    // file: such a solve (closed-form, cheap, deterministic) is solved again.
    if (std::stoi(cells[col("solutions")]) > 1) continue;
    sl.done = true;
    sl.row = lines[i] + "\n";
    Status st;
    if (!parseStatus(cells[c_status], &st)) throw HarnessError(fmt::format("{}: bad status", where));
    sl.status = st;
    sl.iterations = std::stoi(cells[c_iter]);
    sl.restarts = std::stoi(cells[col("restarts")]);
    sl.time_us = std::stod(cells[c_time]);
    sl.q = parseConfigText(cells[c_q], where);
    ++resumed_;
  }
  done_ = resumed_;
}

template <typename Work, typename Tick>
void Engine::runPool(const std::vector<Unit>& units, Work work, Tick tick) {
  std::atomic<size_t> next{0};
  auto worker = [&](int) {
    std::vector<std::unique_ptr<Solver>> mine(list_.specs.size());
    for (size_t i; (i = next.fetch_add(1)) < units.size() && !stopping();) {
      const Unit& u = units[i];
      if (!mine[u.solver]) mine[u.solver] = Registry::global().create(list_.specs[u.solver]);
      work(u, *mine[u.solver]);
    }
  };
  // A thread that cannot start (a memory or process limit) leaves the run to
  // the ones that did (half of them: the others' stacks are freed for the
  // solves); none at all is an error. tick() (progress, the partial file)
  // runs on the calling thread meanwhile and may fail, e.g. on a full disk:
  // the workers then stop at their next unit and are joined before the error
  // goes up. No more threads than units of work.
  ThreadsOptions pool;
  pool.who = "run";
  pool.allow_fewer = true;
  pool.note = [&](const std::string& why) { log() << why << "\n"; };
  pool.poll = tick;
  pool.on_failure = [&] { next = units.size(); };
  const int wanted = static_cast<int>(std::min<size_t>(static_cast<size_t>(out_.threads), std::max<size_t>(units.size(), 1)));
  try {
    const int ran = runOnThreads(wanted, worker, pool);
    if (ran < wanted) out_.threads = ran;
  } catch (const ThreadStartError& e) {
    throw HarnessError(fmt::format("cannot start any worker thread ({})", e.code().message()));
  }
}

void Engine::formatRow(int f, int p, int s, const Summary& sm, const Eigen::VectorXd& q, const Eigen::VectorXd& start,
                       Slot& out) const {
  const Family& fam = suite_.families[f];
  const Problem& prob = fam.problems[p];
  const std::string& spec = list_.specs[s].text;
  const int dof = prob.model ? prob.model->nv() : fam.dof;
  const bool ran = sm.status != Status::kUnsupported && sm.status != Status::kInvalidInput;
  const double seed_distance =
      ran && q.size() == start.size() && prob.model ? configurationDistance(*prob.model, q, start) : 0.0;
  out.row = fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{},{},{},{},{},{},{},{},{},{}", csvField(suite_.name),
      csvField(fam.name), p, dof, prob.goals.size(), csvField(fam.goal), csvField(spec), toString(sm.status),
      sm.converged() ? 1 : 0, sm.iterations, sm.restarts, numText(sm.position_error), numText(sm.orientation_error),
      sm.time_us, sm.fk_evals, sm.jacobian_evals, sm.within_limits ? 1 : 0,
      sm.iterations > 0 ? fmt::format("{:.4f}", sm.time_us / sm.iterations) : std::string(),
      solveSeed(suite_.seed, fam.name, p, spec), csvField(prob.name), csvField(sm.message), configText(q),
      numText(seed_distance), sm.numSolutions());
  if (quality() && prob.model) {
    // The answers to the previous problems of a sequential family (done: its
    // unit runs in order) for the motion between frames.
    std::vector<const Eigen::VectorXd*> history{&q};
    for (int k = p - 1; fam.sequential && k >= 0 && k >= p - 3; --k) history.push_back(&slots_[slot(f, k, s)].q);
    Data data(*prob.model);
    out.row += qualityCells(*prob.model, prob.goals, data, sm.status, sm.converged(), sm.within_limits,
                            fam.targets == "unreachable", fam.sequential, history, fam.frame_rate, fam.branch_jump);
  }
  if (collision_)
    out.row += sm.collision_free < 0 ? std::string(",,,")
                                     : fmt::format(",{},{},{}", sm.collision_free, numText(sm.min_clearance),
                                                   csvField(sm.collision_pair));
  if (external())
    out.row += sm.reported_time_us < 0 ? std::string(",") : fmt::format(",{:.3f}", sm.reported_time_us);
  if (levels_)
    out.row += "," + (ran && prob.isWholeBody() ? levelCells(levelVerdict(prob, q, suite_.options.position_tolerance,
                                                                           suite_.options.orientation_tolerance))
                                                : std::string(","));
  out.row += '\n';
  out.solutions.clear();
  for (size_t k = 0; k < sm.solutions.size(); ++k)
    out.solutions += fmt::format("{},{},{},{},{}\n", csvField(fam.name), p, csvField(spec), k,
                                 configText(sm.solutions[k]));
  out.status = sm.status;
  out.iterations = sm.iterations;
  out.restarts = sm.restarts;
  out.time_us = sm.time_us;
  out.q = q;
}

Progress Engine::progress(const char* label, long total) const {
  const bool tty = (config_.log == nullptr || config_.log == &std::cerr) && isatty(fileno(stderr));
  const bool bar = config_.progress == ProgressMode::kBar || (config_.progress == ProgressMode::kAuto && tty);
  const std::string name =
      config_.shard ? fmt::format("shard {}/{} {}", config_.shard->index, config_.shard->count, label) : label;
  return Progress(log(), bar, config_.progress != ProgressMode::kNone, name, total);
}

SolverOptions Engine::solveOptions(int f, int p, int s, bool record_trace) const {
  SolverOptions opts = suite_.options;
  opts.seed = solveSeed(suite_.seed, suite_.families[f].name, p, list_.specs[s].text);
  opts.record_trace = record_trace;
  return opts;
}

void Engine::timedPass() {
  std::vector<Unit> todo;
  for (const Unit& u : units_)
    for (int p = u.begin; p < u.end; ++p)
      if (!slots_[slot(u.family, p, u.solver)].done) {
        todo.push_back(u);
        break;
      }
  // Chained units are the longest: start them first.
  std::stable_partition(todo.begin(), todo.end(), [](const Unit& u) { return u.chained; });

  Progress progress = this->progress("solving", total_);
  auto flush = [&] {
    std::vector<size_t> batch;
    {
      std::lock_guard lock(finished_mutex_);
      batch.swap(finished_);
    }
    std::sort(batch.begin(), batch.end());
    std::string text;
    for (size_t i : batch) text += slots_[i].row;
    dir_->appendPartial(text);
    progress.update(done_.load());
    load_.sample();
  };
  const auto t0 = Clock::now();
  runPool(
      todo,
      [&](const Unit& u, Solver& solver) {
        const Family& fam = suite_.families[u.family];
        Eigen::VectorXd q, start;
        // A backend that answers batches (batching_solver.h), outside a chained
        // unit: the problems up to batch_end were answered in one exchange, whose
        // wall time each of them shares equally.
        auto* batching = u.chained ? nullptr : dynamic_cast<BatchingSolver*>(&solver);
        int batch_end = u.begin;
        double batch_share_us = 0.0;
        for (int p = u.begin; p < u.end; ++p) {
          Slot& sl = slots_[slot(u.family, p, u.solver)];
          const Problem& problem = fam.problems[p];
          if (sl.done) {  // resumed: the chain goes on from the kept answer
            q = sl.q;
            continue;
          }
          if (stopping()) return;
          const SolverOptions opts = solveOptions(u.family, p, u.solver, false);
          if (batching && batching->batchSize() > 1 && p >= batch_end) {
            std::vector<const Problem*> problems;
            std::vector<Eigen::VectorXd> starts;
            std::vector<SolverOptions> options;
            for (int k = p; k < u.end && static_cast<int>(problems.size()) < batching->batchSize(); ++k) {
              if (slots_[slot(u.family, k, u.solver)].done) continue;
              problems.push_back(&fam.problems[k]);
              starts.push_back(fam.problems[k].q0);
              options.push_back(solveOptions(u.family, k, u.solver, false));
              batch_end = k + 1;
            }
            const auto b0 = Clock::now();
            batching->prefetch(problems, starts, options);
            batch_share_us = secondsSince(b0) * 1e6 / static_cast<double>(problems.size());
          }
          // Tracking: start from the previous answer (same model, so same nq).
          if (!(u.chained && p > u.begin && q.size() == problem.q0.size())) q = problem.q0;
          start = q;
          Summary s = solveOne(solver, problem, q, opts);
          if (batching && batching->batchSize() > 1) s.time_us += batch_share_us;
          formatRow(u.family, p, u.solver, s, q, start, sl);
          sl.done = true;
          {
            std::lock_guard lock(finished_mutex_);
            finished_.push_back(slot(u.family, p, u.solver));
          }
          done_.fetch_add(1, std::memory_order_relaxed);
        }
      },
      flush);
  out_.wall_s = secondsSince(t0);
  progress.update(done_.load(), /*final=*/true);
}

void Engine::tracePass() {
  std::vector<Unit> todo;
  long count = 0;
  for (const Unit& u : units_) {
    long n = 0;
    for (int p = u.begin; p < u.end; ++p) n += isTraced(u.family, p);
    if (n == 0) continue;
    todo.push_back(u);
    count += n;
  }
  std::stable_partition(todo.begin(), todo.end(), [](const Unit& u) { return u.chained; });
  Progress progress = this->progress("tracing", count);
  std::atomic<long> traced{0}, rows{0};
  std::mutex mismatch_mutex;
  std::vector<std::pair<size_t, std::string>> mismatched;  // (slot, what differed)
  const auto t0 = Clock::now();
  runPool(
      todo,
      [&](const Unit& u, Solver& solver) {
        const Family& fam = suite_.families[u.family];
        const std::string& spec = list_.specs[u.solver].text;
        Eigen::VectorXd q;
        for (int p = u.begin; p < u.end; ++p) {
          if (!isTraced(u.family, p)) continue;
          if (stopping()) return;
          const Problem& problem = fam.problems[p];
          Slot& sl = slots_[slot(u.family, p, u.solver)];
          const SolverOptions opts = solveOptions(u.family, p, u.solver, true);
          // A tracking problem starts, as in the timed pass, from the timed
          // pass's answer to the previous problem.
          q = problem.q0;
          if (u.chained && p > u.begin) {
            const Eigen::VectorXd& previous = slots_[slot(u.family, p - 1, u.solver)].q;
            if (previous.size() == problem.q0.size()) q = previous;
          }
          Summary s = solveOne(solver, problem, q, opts);
          // A binding time budget can end a traced solve differently.
          if (s.status != sl.status || s.iterations != sl.iterations) {
            std::lock_guard lock(mismatch_mutex);
            mismatched.emplace_back(slot(u.family, p, u.solver),
                                    fmt::format("{} problem {} {}: timed {} after {} iterations, traced {} after {}",
                                                fam.name, p, spec, toString(sl.status), sl.iterations,
                                                toString(s.status), s.iterations));
          }
          // The honest time axis: the recording pass rescaled to the timed solve.
          const double scale = s.time_us > 0 ? sl.time_us / s.time_us : 1.0;
          std::string text;
          for (size_t k = 0; k < s.trace.size(); ++k) {
            const IterationRecord& r = s.trace[k];
            // An attempt's last record (the next one opens another attempt,
            // or there is none) keeps q exact: its verdict is decided by FK
            // against the tolerance. The records between only draw the solve.
            const bool attempt_end = k + 1 == s.trace.size() || s.trace[k + 1].iteration <= r.iteration;
            text += fmt::format("{},{},{},{},{},{},{},{},{:.3f},{:.3f},{}\n", csvField(fam.name), p, csvField(spec),
                                r.iteration, numText(r.position_error), numText(r.orientation_error),
                                fmt::format("{:.{}g}", r.step_norm, kTraceDetailDigits),
                                fmt::format("{:.{}g}", r.damping, kTraceDetailDigits), r.elapsed_us,
                                r.elapsed_us * scale, attempt_end ? configText(r.q) : configText(r.q, kTraceQDigits));
          }
          rows.fetch_add(static_cast<long>(s.trace.size()));
          sl.traces = std::move(text);
          traced.fetch_add(1);
        }
      },
      [&] {
        progress.update(traced.load());
        load_.sample();
      });
  out_.trace_wall_s = secondsSince(t0);
  progress.update(traced.load(), /*final=*/true);
  trace_rows_ = rows.load();
  trace_mismatches_ = static_cast<long>(mismatched.size());
  if (trace_mismatches_ > 0) {
    // Named in the run's canonical order, whatever thread traced them.
    std::sort(mismatched.begin(), mismatched.end());
    constexpr size_t kNamed = 3;
    std::string named;
    for (size_t i = 0; i < std::min(kNamed, mismatched.size()); ++i) named += "\n  " + mismatched[i].second;
    if (mismatched.size() > kNamed) named += fmt::format("\n  and {} more", mismatched.size() - kNamed);
    log() << fmt::format(
        "note: {} traced {} ended differently from the timed pass; a wall-clock budget (the suite's "
        "time_budget_us or a spec's time_budget_us, such as auto's 5 ms) binds when a solve is slowed down, and "
        "time_budget_us=0 in the specs removes it:{}\n",
        trace_mismatches_, trace_mismatches_ == 1 ? "solve" : "solves", named);
  }
}

void Engine::finish() {
  // Each file is written from the slots' rows in place: a run's rows are
  // never copied into one more string.
  const std::string headers[3] = {fmt::format("{}\n", fmt::join(header(), ",")),
                                  fmt::format("{}\n", fmt::join(kSolutionColumns, ",")),
                                  fmt::format("{}\n", fmt::join(kTraceColumns, ","))};
  std::vector<std::string_view> solves{headers[0]}, solutions{headers[1]}, traces{headers[2]};
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!mine_[i]) continue;
    solves.push_back(slots_[i].row);
    if (!slots_[i].solutions.empty()) solutions.push_back(slots_[i].solutions);
    if (!slots_[i].traces.empty()) traces.push_back(slots_[i].traces);
  }
  dir_->writeAtomically(compressedName("solves.csv"), solves);
  dir_->writeAtomically(compressedName("solutions.csv"), solutions);
  dir_->writeAtomically(compressedName("traces.csv"), traces);
  dir_->closePartial();
  dir_->remove(RunDirectory::kPartialFile);
  end_time_ = isoTimeUtc();
  json j = runJson(true);
  json files = json::object();
  for (const std::string& name : kManifestFiles) files[compressedName(name)] = manifestEntry(dir_->file(compressedName(name)));
  j["files"] = files;
  dir_->writeJson("run.json", j);
}

RunOutcome Engine::run() {
  if (suite_.families.empty()) throw HarnessError(fmt::format("suite '{}' has no families", suite_.name));
  std::string why;
  if (!suite_.options.isValid(&why)) throw HarnessError(fmt::format("suite '{}': bad options: {}", suite_.name, why));
  if (config_.threads < 0 || config_.threads > RunConfig::kMaxThreads)
    throw HarnessError(fmt::format("--threads must be in [0, {}] (0 = all cores), got {}", RunConfig::kMaxThreads,
                                   config_.threads));
  if (config_.trace && config_.trace_problems != RunConfig::kTraceAll &&
      (config_.trace_problems < 0 || config_.trace_problems > RunConfig::kMaxTraceProblems))
    throw HarnessError(fmt::format("--trace-problems must be 'all' or in [0, {}], got {}", RunConfig::kMaxTraceProblems,
                                   config_.trace_problems));
  list_ = resolveSolvers(suite_, config_);
  if (!list_.skipped.empty())
    log() << fmt::format("note: solvers of suite '{}' not in this build, skipped: {}\n", suite_.name,
                         fmt::join(list_.skipped, ","));
  for (const SolverSpec& s : list_.specs) out_.solvers.push_back(s.text);
  {
    std::set<std::string> said;  // a grid repeats its specs' notes
    for (const SolverSpec& s : list_.specs)
      for (const std::string& note : s.deprecated)
        if (said.insert(note.substr(note.find(": key"))).second)
          log() << fmt::format("note: {} (the former name still works)\n", note);
  }
  {
    // A scene whose collision geometry leaves a moving link uncovered, or
    // leaves a pair out because it collides at rest, can call a colliding
    // answer collision-free: said here, and recorded in models.json (the
    // scene's "coverage"; docs/collision.md, "Coverage").
    std::set<const CollisionWorld*> seen;
    for (const Family& f : suite_.families)
      for (const Problem& p : f.problems)
        if (p.collision && seen.insert(p.collision.get()).second)
          if (const std::string why = p.collision->coverageWarning(); !why.empty())
            log() << fmt::format("warning: scene '{}' on '{}' (family {}): {}\n", p.collision->sceneName(),
                                 p.model->name(), f.name, why);
  }
  out_.threads = config_.threads > 0 ? config_.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  plan();
  checkMemory(memoryNeed(/*traces=*/false), fmt::format("suite '{}'", suite_.name));

  out_.out_dir = outputDirectory(suite_, config_);
  dir_ = std::make_unique<RunDirectory>(out_.out_dir, config_.output);
  start_time_ = isoTimeUtc();
  load_.begin();
  // run.json first, saying "incomplete" until the end: whatever fails after
  // this (a full disk, a kill) leaves a visibly incomplete directory. Then
  // the models and problems (deterministic from the suite).
  assignModelIds();
  if (config_.output == OutputMode::kResume) loadResumed();
  dir_->writeJson("run.json", runJson(false));
  writeModelsAndProblems();
  dir_->openPartial(fmt::format("{}", fmt::join(header(), ",")));

  out_.solves_total = total_;
  out_.solves_resumed = resumed_;
  timedPass();
  for (const Slot& s : slots_)
    if (s.done) solve_time_s_ += s.time_us * 1e-6;
  if (!stopping() && config_.trace && config_.trace_problems != 0) {
    // The traces are known in size only now: a trace pass that would not fit
    // is skipped (the run completes, with a note) rather than ending it.
    std::string why;
    if (fitsInMemory(memoryNeed(/*traces=*/true), fmt::format("suite '{}' with its traces", suite_.name), &why)) {
      tracePass();
    } else {
      trace_skipped_ = why;
      log() << fmt::format("note: the trace pass is skipped (traces.csv has only its header): {}\n", why);
    }
  }

  out_.solves_done = done_.load();
  load_.end();
  if (load_.noisy())
    log() << fmt::format("note: the machine was busy during the run (1-min load average up to {:.2f} on {} usable "
                         "cores; run.json \"load\"): its times may be slower than on a quiet machine\n",
                         load_.maxLoad(), load_.cores());
  if (stopping() || out_.solves_done < total_) {
    out_.interrupted = true;
    end_time_ = isoTimeUtc();
    dir_->writeJson("run.json", runJson(false));
    return out_;
  }
  finish();
  out_.complete = true;
  return out_;
}

}  // namespace

std::vector<int> traceSample(std::uint64_t suite_seed, const std::string& family, int n, int k) {
  std::vector<int> all(static_cast<size_t>(std::max(n, 0)));
  for (int p = 0; p < n; ++p) all[static_cast<size_t>(p)] = p;
  const std::uint64_t base = Rng::mix(suite_seed, Rng::hash("trace:" + family));
  std::vector<std::uint64_t> key(all.size());
  for (int p = 0; p < n; ++p) key[static_cast<size_t>(p)] = Rng::mix(base, static_cast<std::uint64_t>(p));
  std::stable_sort(all.begin(), all.end(), [&](int a, int b) { return key[static_cast<size_t>(a)] < key[static_cast<size_t>(b)]; });
  if (k != RunConfig::kTraceAll && k < n) all.resize(static_cast<size_t>(std::max(k, 0)));
  return all;
}

std::uint64_t solveSeed(std::uint64_t suite_seed, const std::string& family, int problem,
                        const std::string& solver_spec) {
  return Rng::mix(Rng::mix(suite_seed, Rng::hash(family)),
                  Rng::mix(static_cast<std::uint64_t>(problem), Rng::hash(solver_spec)));
}

SolverList resolveSolvers(const Suite& suite, const RunConfig& config) {
  SolverList out;
  std::vector<std::string> texts;
  if (!config.solvers.empty()) {
    for (const std::string& given : config.solvers) {
      SpecGrid grid;
      try {
        grid = expandSpecGrid(given);
      } catch (const SpecError& e) {
        throw HarnessError(fmt::format("bad solver spec '{}': {}", given, e.what()));
      }
      if (!grid.axes.empty()) out.grids.push_back(grid);
      texts.insert(texts.end(), grid.specs.begin(), grid.specs.end());
    }
  } else {
    // A suite file lists the backends it was written for; a build may lack
    // some (an optional dependency, a user's fork): run the ones it has.
    for (const std::string& spec : suite.solvers) {
      std::string name;
      std::map<std::string, std::string> given;
      try {
        parseSpecText(spec, &name, &given);
      } catch (const std::exception& e) {
        throw HarnessError(fmt::format("suite '{}': bad solver spec '{}': {}", suite.name, spec, e.what()));
      }
      (Registry::global().contains(name) ? texts : out.skipped).push_back(spec);
    }
    if (texts.empty() && !suite.solvers.empty())
      throw HarnessError(fmt::format("suite '{}': none of its solvers ({}) is registered", suite.name,
                                     fmt::join(suite.solvers, ",")));
    if (texts.empty()) {
      // Every backend, and the recommended preset beside them as their peer.
      texts.push_back("auto");
      // (An external solver, ext, runs only with the command its spec gives.)
      for (const SolverInfo& info : Registry::global().list())
        if (info.name != "ext") texts.push_back(info.name);
    }
  }
  if (texts.empty()) throw HarnessError("no solvers to run (none given, none in the suite, none registered)");
  for (size_t i = 0; i < texts.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (texts[i] == texts[j]) throw HarnessError(fmt::format("solver spec '{}' is listed twice", texts[i]));
    try {
      out.specs.push_back(Registry::global().parse(texts[i]));
    } catch (const std::exception& e) {
      throw HarnessError(fmt::format("bad solver spec '{}': {}", texts[i], e.what()));
    }
  }
  return out;
}

std::vector<std::string> robotDefaultSolvers(const Family& family) {
  std::vector<std::string> out = {"auto"};
  if (Registry::global().contains("kdl-lma")) out.push_back("kdl-lma");
  if (Registry::global().contains("analytic-6r") && !family.problems.empty()) {
    const auto solver = Registry::global().create(Registry::global().parse("analytic-6r"));
    if (solver->supports(family.problems.front(), nullptr)) out.push_back("analytic-6r");
  }
  // In a scene, `auto` rejects colliding answers (its preset says
  // collision=reject); beside it the recipe that avoids collisions at every
  // step, and the peer re-seeding within a 5 ms budget as TRAC-IK and MoveIt
  // do when an answer collides.
  if (!family.scene.empty()) {
    out.insert(out.begin() + 1, "auto:collision=avoid");
    if (Registry::global().contains("kdl-lma")) out.push_back("kdl-lma:restarts=1000:time_budget_us=5000:collision=reject");
  }
  return out;
}

std::string outputDirectory(const Suite& suite, const RunConfig& config) {
  if (!config.out_dir.empty()) return config.out_dir;
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return (fs::path(config.results_root) / (std::string(stamp) + "-" + safeDirectoryName(suite.name))).string();
}

RunOutcome runSuite(const Suite& suite, const RunConfig& config) { return Engine(suite, config).run(); }

}  // namespace ikbench::harness
