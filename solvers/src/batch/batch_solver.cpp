// solveBatch (ikbench/solvers/batch.h): the public call. It decides which
// problems the kernel can take and which plan (chain) each belongs to, then
// runs the lane scheduler (lane_scheduler.cpp) on its threads and the rest
// through the scalar Solver; batch_internal.h lists the pieces.
#include "ikbench/solvers/batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "batch_internal.h"
#include "closed_form_stage.h"
#include "ikbench/solvers/registry.h"

namespace ikbench {
using namespace batch_detail;

// ---------------------------------------------------- KernelEvaluator --

struct KernelEvaluator::Impl {
  ChainPlan plan;
  KernelParams params;
  std::unique_ptr<LaneGroup> group;
  batch::StepFn step = nullptr;
  bool packed = true;
  int nq = 0, nv = 0;
};

KernelEvaluator::KernelEvaluator(const Problem& problem, bool packed, BatchIsa isa) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  std::string why;
  if (!problem.isValid(&why)) throw std::invalid_argument("KernelEvaluator: " + why);
  if (problem.goals.size() != 1) throw std::invalid_argument("KernelEvaluator: the kernel takes one goal");
  m.plan = planChain(problem);
  if (!m.plan.why.empty()) throw std::invalid_argument("KernelEvaluator: " + m.plan.why);
  m.params = kernelParams(planSpec(Registry::global().parse("dls")), m.plan, SolverOptions());
  const KernelIsa k = selectKernel(isa);
  m.packed = packed;
  m.step = packed ? k.one_step : k.step;
  m.nq = problem.model->nq();
  m.nv = problem.model->nv();
  m.group = std::make_unique<LaneGroup>();
  clearGroups(m.group.get(), 1);
  for (int l = 0; l < kWidth; ++l) fillTarget(*m.group, l, m.plan, problem.goals.front());
}

KernelEvaluator::~KernelEvaluator() = default;

void KernelEvaluator::evaluate(const Eigen::VectorXd& q) {
  Impl& m = *impl_;
  if (q.size() != m.nq)
    throw std::invalid_argument(fmt::format("KernelEvaluator::evaluate: q has {} entries, the model {}", q.size(), m.nq));
  LaneGroup& G = *m.group;
  for (int k = 0; k < m.plan.chain.n; ++k) G.q[k][0] = q[m.plan.q_index[k]];
  startAttempt(G, 0);
  std::uint8_t ended = 0;
  m.step(m.params, &G, 1, &ended);
  G.active[0] = 0;
}

double KernelEvaluator::positionError() const { return impl_->group->pe[0]; }
double KernelEvaluator::orientationError() const { return impl_->group->oe[0]; }

Eigen::VectorXd KernelEvaluator::residual() const {
  const int rows = impl_->plan.pose ? 6 : 3;
  Eigen::VectorXd r(rows);
  for (int i = 0; i < rows; ++i) r[i] = impl_->group->r[i][0];
  return r;
}

Eigen::MatrixXd KernelEvaluator::jacobian() const {
  const Impl& m = *impl_;
  const int rows = m.plan.pose ? 6 : 3;
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(rows, m.nv);
  for (int k = 0; k < m.plan.chain.n; ++k)
    for (int i = 0; i < rows; ++i) J(i, m.plan.q_index[k]) = m.packed ? m.group->Jp[k][i] : m.group->J[k][i][0];
  return J;
}

// closed_form=auto: a chain the closed-form stage fits (exactly or nearly)
// is solved by the scalar Solver, whose stage answers it (or gives it its
// start): every path returns what Solver::solve returns.
static bool closedFormTakes(const CommonSpecOptions& common, const Problem& problem) {
  return common.closed_form == ClosedFormMode::kAuto && ClosedFormStage(common.closed_form_near).fit(problem) != ClosedFormStage::Fit::kNone;
}

std::string batchFallbackReason(const Problem& problem, const SolverSpec& spec, const SolverOptions& options) {
  std::string why;
  if (options.record_trace) return "the batch kernel records no trace";
  if (!options.isValid(&why)) return why;
  if (!problem.isValid(&why)) return why;
  const SpecPlan sp = planSpec(spec);
  if (!sp.why.empty()) return sp.why;
  std::string chain_why = planChain(problem).why;
  if (chain_why.empty() && closedFormTakes(sp.common, problem))
    return "closed_form=auto: the chain fits analytic-6r's closed form, which the scalar Solver::solve runs first";
  return chain_why;
}

std::vector<BatchResult> solveBatch(const std::vector<Problem>& problems, std::string_view spec,
                                    const BatchOptions& options, BatchStats* stats) {
  return solveBatch(problems, Registry::global().parse(spec), options, stats);
}

BatchStopped::BatchStopped(long solved_problems, long problems)
    : std::runtime_error(fmt::format("solveBatch: stopped after {} of {} problems", solved_problems, problems)),
      solved(solved_problems) {}

namespace {

// BatchArrays::status holds a Status's index in kStatusNames, which is the
// enumerator's value.
constexpr bool statusIndexIsValue() {
  for (size_t k = 0; k < kStatusNames.entries.size(); ++k)
    if (static_cast<size_t>(kStatusNames.entries[k].first) != k) return false;
  return true;
}
static_assert(statusIndexIsValue());

// solveBatch into one BatchResult per problem (*results) or into the rows of
// *arrays.
void solveBatchInto(const std::vector<Problem>& problems, const SolverSpec& spec, const BatchOptions& options,
                    std::vector<BatchResult>* results_out, const BatchArrays* arrays, BatchStats* stats) {
  if (!options.seeds.empty() && options.seeds.size() != problems.size())
    throw std::invalid_argument(
        fmt::format("solveBatch: {} seeds for {} problems (give one per problem, or none)", options.seeds.size(),
                    problems.size()));
  if (options.lanes < kWidth || options.lanes > BatchOptions::kMaxLanes || options.lanes % kWidth != 0)
    throw std::invalid_argument(fmt::format("solveBatch: lanes = {} must be a multiple of {} in [{}, {}]",
                                            options.lanes, kWidth, kWidth, BatchOptions::kMaxLanes));
  if (options.threads < 1 || options.threads > 1024)
    throw std::invalid_argument(fmt::format("solveBatch: threads = {} must be in [1, 1024]", options.threads));

  if (arrays != nullptr && arrays->q != nullptr)
    for (const Problem& pr : problems)
      if (pr.model && pr.model->nq() > arrays->q_stride)
        throw std::invalid_argument(fmt::format(
            "solveBatch: a model of the batch has nq = {}, more than the arrays' q_stride = {}", pr.model->nq(),
            arrays->q_stride));
  // Constructed below, beside the scan of the problems: a large batch's
  // results are large enough that their first-touch page faults are worth
  // overlapping with that scan.
  std::vector<BatchResult>& results = *results_out;
  Shared s(0);
  s.problems = problems.data();
  s.options = &options;
  s.spec = &spec;
  s.results = arrays == nullptr ? &results : nullptr;
  s.arrays = arrays;
  s.spec_plan = planSpec(spec);
  const KernelIsa isa = selectKernel(options.isa);
  s.step = isa.step;
  // The options Solver::solve would use (the spec's keys applied).
  s.solve = withSpecOptions(s.spec_plan.common, options.solve);

  std::string why;
  const bool spec_ok =
      options.kernel && s.spec_plan.why.empty() && !options.solve.record_trace && s.solve.isValid(&why);
  const int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(problems.size())));
  // Which problems the kernel can take (a valid problem with one goal) and
  // the chain each belongs to, found on the batch's threads over contiguous
  // shares of the problems (for large batches this reads every problem's
  // data once, which on one thread would be a serial share of the run), as
  // runs of consecutive problems with one key (none: not for the kernel).
  struct Run {
    size_t begin, end;
    std::optional<PlanKey> key;
  };
  auto keyOf = [&](size_t i) -> std::optional<PlanKey> {
    const Problem& pr = problems[i];
    if (!spec_ok || pr.goals.size() != 1 || !pr.isValid(nullptr)) return std::nullopt;
    return planKey(pr);
  };
  constexpr size_t kSerialCheck = 1 << 14;
  const int sharers = problems.size() < kSerialCheck ? 1 : threads;
  const size_t share = (problems.size() + sharers - 1) / sharers;
  std::vector<std::vector<Run>> runs(static_cast<size_t>(sharers));
  auto scan = [&](int t) {
    for (size_t i = std::min(problems.size(), t * share); i < std::min(problems.size(), (t + 1) * share); ++i) {
      std::optional<PlanKey> key = keyOf(i);
      std::vector<Run>& mine = runs[static_cast<size_t>(t)];
      if (!mine.empty() && mine.back().end == i && mine.back().key == key) ++mine.back().end;
      else mine.push_back({i, i + 1, std::move(key)});
    }
  };
  // The calling thread waits for the scan anyway: it constructs the results
  // meanwhile.
  onThreads(sharers, scan, [&] {
    if (arrays == nullptr) results.resize(problems.size());
  });
  // Plans in the order of their first problem.
  std::map<PlanKey, int> plan_of;
  std::vector<std::vector<int>> plan_problems;
  for (const std::vector<Run>& mine : runs)
    for (const Run& run : mine) {
      int id = -1;
      if (run.key) {
        auto it = plan_of.find(*run.key);
        if (it == plan_of.end()) {
          const Problem& pr = problems[run.begin];
          ChainPlan plan = planChain(pr);
          if (plan.why.empty() && closedFormTakes(s.spec_plan.common, pr)) plan.why = "closed form";
          if (plan.why.empty()) {
            id = static_cast<int>(s.plans.size());
            if (s.spec_plan.common.library > 0)
              plan.library = SeedLibrary::forGoals(pr.model, pr.goals, s.spec_plan.common.library);
            s.plans.push_back(std::move(plan));
            plan_problems.emplace_back();
          }
          it = plan_of.emplace(*run.key, id).first;
        }
        id = it->second;
      }
      std::vector<int>& to = id >= 0 ? plan_problems[static_cast<size_t>(id)] : s.fallback;
      for (size_t i = run.begin; i < run.end; ++i) to.push_back(static_cast<int>(i));
    }
  s.plan_problems = std::move(plan_problems);
  s.cursor = std::vector<std::atomic<size_t>>(s.plans.size());
  for (const ChainPlan& plan : s.plans) s.params.push_back(kernelParams(s.spec_plan, plan, s.solve));

  std::vector<BatchStats> per_thread(static_cast<size_t>(threads));
  auto worker = [&](int t) {
    std::unique_ptr<Solver> scalar;
    runScalar(s, scalar, per_thread[t]);
    if (!s.plans.empty()) {
      runLanes(s, options.lanes, per_thread[t]);
    }
  };
  ThreadsOptions pool;
  pool.on_failure = [&] { s.stop = true; };
  if (options.keep_going) {
    pool.poll_period = std::chrono::milliseconds(100);
    pool.poll = [&] {
      if (!s.stop.load() && !options.keep_going()) s.stop = true;
    };
  }
  onThreads(threads, worker, [] {}, pool);
  long solved = 0;
  for (const BatchStats& b : per_thread) solved += b.solved;
  if (solved < static_cast<long>(problems.size())) throw BatchStopped(solved, static_cast<long>(problems.size()));
  if (stats != nullptr) {
    *stats = BatchStats();
    stats->problems = static_cast<long>(problems.size());
    stats->batched = static_cast<long>(problems.size() - s.fallback.size());
    stats->isa = isa.name;
    for (const BatchStats& b : per_thread) {
      stats->lane_steps += b.lane_steps;
      stats->busy_lane_steps += b.busy_lane_steps;
      stats->kernel_steps += b.kernel_steps;
    }
    stats->solved = solved;
  }
}

}  // namespace

std::vector<BatchResult> solveBatch(const std::vector<Problem>& problems, const SolverSpec& spec,
                                    const BatchOptions& options, BatchStats* stats) {
  std::vector<BatchResult> results;
  solveBatchInto(problems, spec, options, &results, nullptr, stats);
  return results;
}

void solveBatch(const std::vector<Problem>& problems, const SolverSpec& spec, const BatchOptions& options,
                const BatchArrays& out, BatchStats* stats) {
  std::vector<BatchResult> unused;
  solveBatchInto(problems, spec, options, &unused, &out, stats);
}

BatchArrays BatchArrays::from(std::size_t row) const {
  BatchArrays a = *this;
  auto at = [row](auto*& column) {
    if (column != nullptr) column += row;
  };
  if (a.q != nullptr) a.q += row * static_cast<std::size_t>(q_stride);
  at(a.status);
  at(a.iterations);
  at(a.restarts);
  at(a.position_error);
  at(a.orientation_error);
  at(a.time_us);
  at(a.fk_evals);
  at(a.jacobian_evals);
  at(a.within_limits);
  at(a.batched);
  return a;
}

long problemsPerModel(const std::vector<Problem>& problems) {
  // Counted by runs of one key (a batch lists a model's problems together,
  // or cycles through a few models).
  std::map<PlanKey, long> count;
  long most = 0;
  for (size_t i = 0; i < problems.size();) {
    const Problem& pr = problems[i];
    if (pr.goals.size() != 1 || !pr.model) {
      ++i;
      continue;
    }
    const PlanKey key = planKey(pr);
    size_t end = i + 1;
    while (end < problems.size() && problems[end].goals.size() == 1 && planKey(problems[end]) == key) ++end;
    most = std::max(most, count[key] += static_cast<long>(end - i));
    i = end;
  }
  return most;
}

SolverSpec batchSpec(const SolverSpec& spec, long problems_per_model) {
  if (problems_per_model < kBatchLibraryMinProblems) return spec;
  if (spec.common.restarts <= 0 || spec.common.library > 0 || !planSpec(spec).why.empty()) return spec;
  // Only a spec silent about the library: library=0 or start=given opt out.
  if (spec.gives("library") || spec.gives("start")) return spec;
  return Registry::global().with(spec, {{"library", std::to_string(kBatchLibraryEntries)}, {"start", "library"}});
}

std::vector<BatchResult> solveBatch(const std::shared_ptr<const Model>& model, const Goal& goal,
                                    const std::vector<Pose3d>& targets, const std::vector<Eigen::VectorXd>& starts,
                                    std::string_view spec, const BatchOptions& options, BatchStats* stats) {
  if (starts.size() != 1 && starts.size() != targets.size())
    throw std::invalid_argument(fmt::format("solveBatch: {} start configurations for {} targets (give one, or one per target)",
                                            starts.size(), targets.size()));
  std::vector<Problem> problems(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    Problem& p = problems[i];
    p.model = model;
    p.goals = {goal};
    p.goals[0].target_position = targets[i].p;
    p.goals[0].target_orientation = targets[i].R;
    p.q0 = starts.size() == 1 ? starts[0] : starts[i];
    p.name = fmt::format("batch{}", i);
  }
  return solveBatch(problems, spec, options, stats);
}

}  // namespace ikbench
