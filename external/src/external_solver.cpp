// The `ext` backend and its protocol client (docs/external-solvers.md).
#include "ikbench/external/external_solver.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/batching_solver.h"
#include "harness/results_format.h"
#include "ikbench/kinematics/config.h"

namespace ikbench::external {
using nlohmann::json;
using std::chrono::milliseconds;

const OptionsBinding<ExternalOptions>& externalBinding() {
  static const OptionsBinding<ExternalOptions> binding = [] {
    OptionsBinding<ExternalOptions> b;
    b.text("cmd", &ExternalOptions::cmd,
           "the solver's command line, run by /bin/sh -c in the harness's directory; quote it in the spec "
           "(ext:cmd='python3 my_solver.py')");
    b.text("name", &ExternalOptions::name, "instead of cmd: the command of this name in the --solvers-file");
    b.integer("timeout_ms", &ExternalOptions::timeout_ms, Range::closed(1, 86'400'000), "ms",
              "longest wait for the answer to one problem; past it the process is killed and restarted and the "
              "problem is a time-limit failure");
    b.integer("startup_timeout_ms", &ExternalOptions::startup_timeout_ms, Range::closed(1, 86'400'000), "ms",
              "longest wait for the process's hello after it starts");
    b.integer("respawns", &ExternalOptions::respawns, Range::closed(0, 1000), "",
              "how often a process that crashed, hung or broke the protocol is started again; past that every "
              "further problem of the solver fails at once");
    b.integer("max_line_bytes", &ExternalOptions::max_line_bytes, Range::closed(1024, 1 << 30), "bytes",
              "longest line the process may write; a longer one is an output flood (the process is restarted)");
    b.integer("batch", &ExternalOptions::batch, Range::closed(1, 100'000), "",
              "problems per message in ikbench run (not in chained families): the answers of a batch come in one "
              "exchange, whose wall time its problems share equally in time_us");
    return b;
  }();
  return binding;
}

namespace {

std::string clip(std::string_view s, size_t n = 80) {
  std::string out(s.substr(0, n));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return s.size() > n ? out + "..." : out;
}

// The form of one answer object; the caller checked its id.
ExternalAnswer parseAnswer(const json& a, int nq) {
  ExternalAnswer out;
  auto fail = [&](std::string why) {
    out.ok = false;
    out.message = "external solver answer: " + std::move(why);
    return out;
  };
  const auto q = a.find("q");
  if (q == a.end() || !q->is_array()) return fail("no \"q\" array");
  if (static_cast<int>(q->size()) != nq)
    return fail(fmt::format("q has {} numbers, the model has nq = {}", q->size(), nq));
  out.q.resize(nq);
  for (int k = 0; k < nq; ++k) {
    const json& v = (*q)[static_cast<size_t>(k)];
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      return fail(fmt::format("q[{}] is not a finite number ({})", k, clip(v.dump())));
    out.q[k] = v.get<double>();
  }
  if (const auto s = a.find("status"); s != a.end() && !s->is_null()) {
    Status st;
    if (!s->is_string() || !parseStatus(s->get<std::string>(), &st) || st == Status::kInvalidInput ||
        st == Status::kFalseConvergence)
      return fail(fmt::format("status {} is not one of converged, max-iterations, time-limit, stalled, "
                              "numerical-failure, unsupported",
                              clip(s->dump())));
    out.status = st;
  }
  if (const auto it = a.find("iterations"); it != a.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > SolverOptions::kMaxIterationsLimit)
      return fail(fmt::format("iterations {} is not an integer in [0, {}]", clip(it->dump()),
                              SolverOptions::kMaxIterationsLimit));
    out.iterations = static_cast<int>(it->get<long long>());
  }
  if (const auto t = a.find("time_us"); t != a.end() && !t->is_null()) {
    if (!t->is_number() || !std::isfinite(t->get<double>()) || t->get<double>() < 0)
      return fail(fmt::format("time_us {} is not a finite number >= 0", clip(t->dump())));
    out.time_us = t->get<double>();
  }
  if (const auto m = a.find("message"); m != a.end() && m->is_string()) out.message = clip(m->get<std::string>(), 300);
  out.ok = true;
  return out;
}

json vectorJson(const Eigen::VectorXd& v) {
  json out = json::array();
  for (Eigen::Index k = 0; k < v.size(); ++k) out.push_back(v[k]);
  return out;
}

}  // namespace

ExternalClient::ExternalClient(std::string spec, std::string command, const ExternalOptions& options)
    : spec_(std::move(spec)), command_(std::move(command)), options_(options) {}

ExternalClient::~ExternalClient() {
  if (child_) {
    child_->write(json{{"type", "bye"}}.dump() + "\n", ChildProcess::Clock::now() + milliseconds(100));
    kill(milliseconds(500));
  }
}

void ExternalClient::kill(milliseconds grace) {
  if (!child_) return;
  child_->stop(grace);
  child_.reset();
  sent_model_.reset();
}

std::string ExternalClient::endText() {
  if (!child_) return "not running";
  child_->stop(milliseconds(500));
  return child_->exitText();
}

bool ExternalClient::startProcess(std::string* why) {
  ++starts_;
  child_ = ChildProcess::start(command_, why);
  if (!child_) return false;
  const auto deadline = ChildProcess::Clock::now() + milliseconds(options_.startup_timeout_ms);
  const json hello = {{"type", "hello"}, {"protocol", kProtocolName}, {"version", kProtocolVersion}, {"spec", spec_}};
  ChildProcess::Io io = child_->write(hello.dump() + "\n", deadline);
  std::string line;
  if (io == ChildProcess::Io::kOk) io = child_->readLine(&line, static_cast<size_t>(options_.max_line_bytes), deadline);
  switch (io) {
    case ChildProcess::Io::kOk: break;
    case ChildProcess::Io::kTimeout:
      *why = fmt::format("no hello within startup_timeout_ms = {}", options_.startup_timeout_ms);
      break;
    case ChildProcess::Io::kClosed: *why = "the process ended before its hello: " + endText(); break;
    case ChildProcess::Io::kTooLong: *why = "its hello is longer than max_line_bytes"; break;
    case ChildProcess::Io::kError: *why = child_->errorText(); break;
  }
  if (io != ChildProcess::Io::kOk) {
    kill(milliseconds(0));
    return false;
  }
  const json reply = json::parse(line, nullptr, false);
  if (reply.is_discarded() || !reply.is_object() || reply.value("type", "") != "hello" ||
      reply.value("protocol", "") != kProtocolName) {
    *why = fmt::format("its first line is not a hello of protocol '{}' (got '{}')", kProtocolName, clip(line));
  } else if (!reply.contains("version") || !reply["version"].is_number_integer() ||
             reply["version"].get<long long>() != kProtocolVersion) {
    *why = fmt::format("it speaks protocol version {}, the harness speaks {}",
                       clip(reply.contains("version") ? reply["version"].dump() : "none"), kProtocolVersion);
  } else {
    return true;
  }
  kill(milliseconds(0));
  return false;
}

void ExternalClient::startOrThrow() {
  std::string why;
  if (!startProcess(&why))
    throw SpecError(fmt::format("solver '{}': the command '{}' did not start as an external solver: {}", spec_,
                                command_, why));
}

bool ExternalClient::ensureProcess(const Model*, std::string* why) {
  if (child_) return true;
  const int allowed = 1 + options_.respawns;
  if (starts_ >= allowed) {
    *why = fmt::format("external solver: the process was started {} times (respawns = {}); no more restarts", starts_,
                       options_.respawns);
    return false;
  }
  if (!startProcess(why)) {
    *why = "external solver: restart failed: " + *why;
    return false;
  }
  return true;
}

std::vector<ExternalAnswer> ExternalClient::solve(const std::vector<const Problem*>& problems,
                                                  const std::vector<Eigen::VectorXd>& starts,
                                                  const std::vector<SolverOptions>& all_options) {
  std::vector<ExternalAnswer> answers(problems.size());
  auto failAll = [&](const std::string& why, bool timed_out) {
    for (ExternalAnswer& a : answers) {
      a.ok = false;
      a.message = why;
      a.timed_out = timed_out;
    }
    return answers;
  };
  if (problems.empty()) return answers;
  std::string why;
  if (!ensureProcess(problems.front()->model.get(), &why)) return failAll(why, false);
  const auto deadline =
      ChildProcess::Clock::now() + milliseconds(static_cast<long long>(options_.timeout_ms) * static_cast<long long>(problems.size()));
  // The models the problems need, each sent once before its first problem.
  std::string message;
  json batch = json::array();
  const long first_id = next_id_;
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem& p = *problems[i];
    const SolverOptions& options = all_options.size() == problems.size() ? all_options[i] : all_options.front();
    if (sent_model_ != p.model) {
      model_id_ = fmt::format("m{}", model_counter_++);
      if (!batch.empty()) {
        message += json{{"type", "solve"}, {"problems", batch}}.dump() + "\n";
        batch = json::array();
      }
      const auto source = modelSource(p.model.get());
      json model_message = {
          {"type", "model"},
          {"model_id", model_id_},
          {"model", harness::modelToJson(*p.model, model_id_, source ? source->first : "", p.collision.get())}};
      if (source) model_message["urdf"] = source->second;
      message += model_message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
      sent_model_ = p.model;
    }
    json j = harness::problemToJson("", 0, model_id_, p, false);
    json item = {{"id", next_id_++},
                 {"model_id", model_id_},
                 {"name", p.name},
                 {"q0", vectorJson(starts[i])},
                 {"goals", j["goals"]},
                 {"position_tolerance", options.position_tolerance},
                 {"orientation_tolerance", options.orientation_tolerance},
                 {"max_iterations", options.max_iterations},
                 {"time_budget_us", options.time_budget_us},
                 {"seed", options.seed}};
    if (p.collision) item["scene"] = j["scene"];
    batch.push_back(std::move(item));
  }
  // Problems of several models go as several messages, each answered by one line.
  std::vector<size_t> message_sizes;
  {
    // Recount: one "solve" line per run of problems of one model.
    size_t count = 0;
    const Model* m = nullptr;
    for (const Problem* p : problems) {
      if (count > 0 && p->model.get() != m) {
        message_sizes.push_back(count);
        count = 0;
      }
      m = p->model.get();
      ++count;
    }
    message_sizes.push_back(count);
  }
  message += json{{"type", "solve"}, {"problems", batch}}.dump() + "\n";
  ChildProcess::Io io = child_->write(message, deadline);
  if (io != ChildProcess::Io::kOk) {
    const std::string text = io == ChildProcess::Io::kTimeout ? "it does not read its input (timeout_ms)"
                             : io == ChildProcess::Io::kError ? child_->errorText()
                                                              : "the process ended: " + endText();
    const bool timed_out = io == ChildProcess::Io::kTimeout;
    kill(milliseconds(0));
    return failAll("external solver: " + text, timed_out);
  }
  size_t done = 0;
  for (const size_t n : message_sizes) {
    std::string line;
    io = child_->readLine(&line, static_cast<size_t>(options_.max_line_bytes), deadline);
    std::string fault;
    bool timed_out = false;
    switch (io) {
      case ChildProcess::Io::kOk: break;
      case ChildProcess::Io::kTimeout:
        fault = fmt::format("no answer within timeout_ms = {} per problem; the process was killed", options_.timeout_ms);
        timed_out = true;
        break;
      case ChildProcess::Io::kClosed: fault = "the process ended before answering: " + endText(); break;
      case ChildProcess::Io::kTooLong:
        fault = fmt::format("a line longer than max_line_bytes = {} (output flood); the process was killed",
                            options_.max_line_bytes);
        break;
      case ChildProcess::Io::kError: fault = child_->errorText(); break;
    }
    json reply;
    if (fault.empty()) {
      reply = json::parse(line, nullptr, false);
      if (reply.is_discarded() || !reply.is_object())
        fault = fmt::format("not a JSON object: '{}'; the process was restarted", clip(line));
      else if (reply.value("type", "") != "answers" || !reply.contains("answers") || !reply["answers"].is_array())
        fault = fmt::format("expected {{\"type\": \"answers\", \"answers\": [...]}}, got '{}'; the process was restarted",
                            clip(line));
      else if (reply["answers"].size() != n)
        fault = fmt::format("{} answers to {} problems; the process was restarted", reply["answers"].size(), n);
    }
    if (fault.empty()) {
      for (size_t k = 0; k < n && fault.empty(); ++k) {
        const json& a = reply["answers"][k];
        const long want = first_id + static_cast<long>(done + k);
        if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || a["id"].get<long long>() != want)
          fault = fmt::format("answer {} has id {} where {} was expected; the process was restarted", k,
                              a.is_object() && a.contains("id") ? clip(a["id"].dump()) : "none", want);
      }
    }
    if (!fault.empty()) {
      kill(milliseconds(0));
      for (size_t k = done; k < answers.size(); ++k) {
        answers[k].ok = false;
        answers[k].message = "external solver: " + fault;
        answers[k].timed_out = timed_out;
      }
      return answers;
    }
    for (size_t k = 0; k < n; ++k)
      answers[done + k] = parseAnswer(reply["answers"][k], problems[done + k]->model->nq());
    done += n;
  }
  return answers;
}

// ---- solvers file ---------------------------------------------------------------

namespace {
std::mutex g_files_mutex;
std::map<std::string, std::string> g_named;
std::string g_file;
}  // namespace

std::map<std::string, std::string> readSolversFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SpecError(fmt::format("solvers file '{}': cannot be read", path));
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().size() > (1u << 20)) throw SpecError(fmt::format("solvers file '{}': larger than 1 MiB", path));
  const json j = json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw SpecError(fmt::format("solvers file '{}': expected a JSON object {{\"name\": \"command line\", ...}}", path));
  std::map<std::string, std::string> out;
  for (const auto& [name, cmd] : j.items()) {
    if (name.empty() || name.find_first_of(":,'\"{}= \t") != std::string::npos)
      throw SpecError(fmt::format("solvers file '{}': name '{}' must be non-empty without blanks or any of :,'\"{{}}=",
                                  path, name));
    if (!cmd.is_string() || cmd.get<std::string>().empty())
      throw SpecError(fmt::format("solvers file '{}': entry '{}' must be a non-empty command line (a string)", path, name));
    out[name] = cmd.get<std::string>();
  }
  return out;
}

void setSolversFile(const std::string& path) {
  auto named = readSolversFile(path);
  std::lock_guard lock(g_files_mutex);
  g_named = std::move(named);
  g_file = path;
}

// ---- model sources ---------------------------------------------------------------

namespace {
std::mutex g_sources_mutex;
std::map<const Model*, std::shared_ptr<const std::pair<std::string, std::string>>> g_sources;
}  // namespace

void setModelSource(const Model* model, const std::string& urdf_path) {
  std::shared_ptr<const std::pair<std::string, std::string>> entry;
  {
    std::lock_guard lock(g_sources_mutex);
    for (const auto& [m, e] : g_sources)
      if (e->first == urdf_path) entry = e;  // one copy of a file's text for all its models
  }
  if (!entry) {
    std::ifstream in(urdf_path, std::ios::binary);
    if (!in) throw SpecError(fmt::format("URDF file '{}' (the model's source): cannot be read", urdf_path));
    std::stringstream text;
    text << in.rdbuf();
    entry = std::make_shared<const std::pair<std::string, std::string>>(urdf_path, text.str());
  }
  std::lock_guard lock(g_sources_mutex);
  g_sources[model] = std::move(entry);
}

std::shared_ptr<const std::pair<std::string, std::string>> modelSource(const Model* model) {
  std::lock_guard lock(g_sources_mutex);
  const auto it = g_sources.find(model);
  return it == g_sources.end() ? nullptr : it->second;
}

void clearModelSources() {
  std::lock_guard lock(g_sources_mutex);
  g_sources.clear();
}

// ---- the backend -------------------------------------------------------------------

namespace {

class ExternalSolver final : public Solver, public harness::BatchingSolver {
 public:
  ExternalSolver(std::unique_ptr<ExternalClient> client, int batch) : client_(std::move(client)), batch_(batch) {}
  // The process decides its own restarts.
  bool restartable() const override { return false; }

  int batchSize() const override { return batch_; }
  void prefetch(const std::vector<const Problem*>& problems, const std::vector<Eigen::VectorXd>& starts,
                const std::vector<SolverOptions>& options) override {
    // The starts as Solver::solve gives them to solveImpl: clamped into the limits.
    std::vector<Eigen::VectorXd> clamped = starts;
    for (size_t i = 0; i < problems.size(); ++i) clampToLimits(*problems[i]->model, clamped[i]);
    std::vector<SolverOptions> effective;
    for (const SolverOptions& o : options) effective.push_back(effectiveOptions(o));
    std::vector<ExternalAnswer> answers = client_->solve(problems, clamped, effective);
    kept_.clear();
    for (size_t i = 0; i < problems.size(); ++i) kept_.push_back({problems[i], clamped[i], std::move(answers[i])});
  }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    ExternalAnswer a;
    const auto kept = std::find_if(kept_.begin(), kept_.end(),
                                   [&](const Kept& k) { return k.problem == &problem && k.start == q; });
    if (kept != kept_.end()) {
      a = std::move(kept->answer);
      kept_.erase(kept);
    } else {
      starts_.assign(1, q);
      a = client_->solve({&problem}, starts_, {ctx.options()}).front();
    }
    if (!a.ok) {
      ctx.stop(a.timed_out ? Status::kTimeLimit : Status::kNumericalFailure, a.message);
      return;
    }
    q = a.q;
    ctx.addIterations(a.iterations);
    if (a.time_us >= 0) ctx.reportTime(a.time_us);
    ctx.stop(a.status, a.message);
  }

 private:
  struct Kept {
    const Problem* problem;
    Eigen::VectorXd start;
    ExternalAnswer answer;
  };
  std::unique_ptr<ExternalClient> client_;
  int batch_ = 1;
  std::vector<Eigen::VectorXd> starts_;
  std::vector<Kept> kept_;  // prefetched answers, taken by the solves of their problems
};

}  // namespace

void registerExternalSolver(Registry& registry) {
  if (registry.contains("ext")) return;
  registry.add(solverInfo(
      "ext",
      "an external solver process in any language, over the ikbench-external protocol (JSON lines on stdin/stdout, "
      "docs/external-solvers.md); its answers are verified like every backend's",
      externalBinding(), [](const ExternalOptions& o, const SolverSpec& spec) -> std::unique_ptr<Solver> {
        std::string command = o.cmd;
        if (o.cmd.empty() == o.name.empty())
          throw SpecError(fmt::format("solver '{}': give exactly one of cmd='COMMAND' and name=NAME", spec.text));
        if (!o.name.empty()) {
          std::lock_guard lock(g_files_mutex);
          if (g_file.empty())
            throw SpecError(fmt::format("solver '{}': name={} needs a solvers file (--solvers-file FILE)", spec.text,
                                        o.name));
          const auto it = g_named.find(o.name);
          if (it == g_named.end()) {
            std::string known;
            for (const auto& [n, c] : g_named) known += (known.empty() ? "" : ", ") + n;
            throw SpecError(fmt::format("solver '{}': solvers file '{}' has no entry '{}' (it has: {})", spec.text,
                                        g_file, o.name, known.empty() ? "none" : known));
          }
          command = it->second;
        }
        auto client = std::make_unique<ExternalClient>(spec.text, command, o);
        client->startOrThrow();
        return std::make_unique<ExternalSolver>(std::move(client), o.batch);
      }));
}

}  // namespace ikbench::external
