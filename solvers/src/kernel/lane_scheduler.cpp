// Many problems in the kernel's lanes (solveBatch): each thread keeps groups
// of kWidth lanes busy, refilling a lane as its problem ends, charging each
// problem its share of the rounds it spends in a lane, ending attempts whose
// budget is spent and compacting the lanes of a drained plan.
#include "batch_internal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ikbench/core/numeric.h"
#include "ikbench/solvers/registry.h"

namespace ikbench::batch_detail {

// Busy lanes of a group's 4-bit mask (the build's baseline has no popcnt
// instruction: __builtin_popcount would be a library call per group).
constexpr int kLanesIn[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
inline int lanesIn(std::uint8_t mask) { return kLanesIn[mask & 0xF]; }

// One problem's Solver::solve state while it occupies a lane: its attempt
// driver (attempt_driver.h, in the tally), whose budget counts the problem's
// charged time.
struct LaneState {
  int problem = -1;
  long attempt = 0;
  RestartStream restarts;
  double share_at_entry = 0.0;  // LaneScheduler::share_sum_ when the problem came in
  AttemptTally tally{AttemptDriver(0, nullptr, nullptr, StartMode::kGiven, SolutionsMode::kFirst, 0.0)};
};


class LaneScheduler {
 public:
  LaneScheduler(Shared& shared, int lanes) : s_(shared), groups_(lanes / kWidth), lanes_(lanes), group_plan_(lanes / kWidth, -1) {
    clearGroups(groups_.data(), groups_.size());
    ended_.resize(groups_.size());
  }

  // Rounds: refill free lanes, take the time of the last round, end the
  // attempts whose budget is spent, one kernel step per group, then the
  // attempt ends (restart or answer).
  void run(BatchStats& stats) {
    Clock::time_point last = Clock::now();
    const bool budget = s_.solve.time_budget_us > 0.0;
    while (!s_.stop.load(std::memory_order_relaxed)) {
      int busy = 0;
      for (int g = 0; g < num_groups_; ++g) {
        if (occupied_[g] != 0xF) refill(g);
        busy += lanesIn(occupied_[g]);
      }
      if (compact()) {
        for (int g = 0; g < num_groups_; ++g)
          if (occupied_[g] == 0) refill(g);
        busy = 0;
        for (int g = 0; g < num_groups_; ++g) busy += lanesIn(occupied_[g]);
      }
      if (busy == 0) break;
      if (budget && share_sum_ >= next_deadline_) expire();
      for (int g = 0; g < num_groups_; ++g) {
        const std::uint8_t stepping = occupied_[g] & static_cast<std::uint8_t>(~expired_[g]);
        std::uint8_t ended = 0;
        if (stepping != 0) s_.step(s_.params[group_plan_[g]], &groups_[g], 1, &ended);
        ended_[g] = ended | expired_[g];
      }
      // A problem is charged its share of each round it spends in a lane
      // (the round's wall time over the lanes occupied in it): what its own
      // solve cost, comparable with a scalar solve's time. A lane's charged
      // time is share_sum_ now minus share_sum_ when its problem came in.
      const Clock::time_point now = Clock::now();
      share_sum_ += std::chrono::duration<double, std::micro>(now - last).count() / busy;
      last = now;
      stats.lane_steps += kWidth * num_groups_;
      stats.busy_lane_steps += busy;
      ++stats.kernel_steps;
      for (int g = 0; g < num_groups_; ++g) {
        for (unsigned e = ended_[g]; e != 0; e &= e - 1) attemptEnded(g, __builtin_ctz(e));
        expired_[g] = 0;
      }
    }
  }

  long solved() const { return solved_; }

 private:
  double chargedUs(const LaneState& st) const { return share_sum_ - st.share_at_entry; }

  // Lane compaction: once a plan has no problems left to hand out, its
  // groups can only drain, and a slow problem would keep three lanes of its
  // group idle. Its remaining problems are moved into as few groups as
  // possible (lane state is plain rows, LaneState a value), so that the
  // emptied groups take the next plan at once. Moving a problem does not
  // change its result (lanes are independent). Returns true if a group
  // became empty.
  bool compact() {
    bool emptied = false;
    for (int g = 0; g < num_groups_; ++g) {
      const int p = group_plan_[g];
      if (p < 0 || occupied_[g] == 0 || occupied_[g] == 0xF || !exhausted(p)) continue;
      for (int h = g + 1; h < num_groups_ && occupied_[g] != 0; ++h) {
        if (group_plan_[h] != p || occupied_[h] == 0xF || occupied_[h] == 0) continue;
        // Move g's problems into h's free lanes (the fuller group keeps its own).
        const bool g_smaller = lanesIn(occupied_[g]) <= lanesIn(occupied_[h]);
        const int from = g_smaller ? g : h, to = g_smaller ? h : g;
        while (occupied_[from] != 0 && occupied_[to] != 0xF) {
          moveLane(from, __builtin_ctz(occupied_[from]), to, __builtin_ctz(~occupied_[to] & 0xFu));
        }
        if (occupied_[from] == 0) emptied = true;
        if (from == g) break;
      }
    }
    return emptied;
  }

  void moveLane(int gf, int lf, int gt, int lt) {
    const auto* src = reinterpret_cast<const unsigned char*>(&groups_[gf]);
    auto* dst = reinterpret_cast<unsigned char*>(&groups_[gt]);
    for (int row = 0; row < batch::kLaneGroupRows; ++row)
      std::memcpy(dst + (row * kWidth + lt) * 8, src + (row * kWidth + lf) * 8, 8);
    state(gt, lt) = state(gf, lf);
    state(gf, lf).problem = -1;
    groups_[gf].active[lf] = 0;
    groups_[gf].fresh[lf] = 0;
    occupied_[gt] |= static_cast<std::uint8_t>(1u << lt);
    occupied_[gf] &= static_cast<std::uint8_t>(~(1u << lf));
    ++moves_;
  }

  // Binds an empty group to the next plan with problems left, then fills its
  // free lanes from that plan.
  void refill(int g) {
    if (group_plan_[g] < 0 || (occupied_[g] == 0 && exhausted(group_plan_[g]))) {
      if (occupied_[g] != 0) return;
      group_plan_[g] = -1;
      for (size_t p = 0; p < s_.plans.size(); ++p)
        if (!exhausted(static_cast<int>(p))) {
          group_plan_[g] = static_cast<int>(p);
          break;
        }
      if (group_plan_[g] < 0) return;
    }
    for (int l = 0; l < kWidth; ++l) {
      if (occupied_[g] & (1u << l)) continue;
      const int i = take(group_plan_[g]);
      if (i < 0) return;
      fill(g, l, i);
    }
  }

  // A thread takes a plan's problems kChunk at a time: one atomic operation
  // on the shared cursor per chunk rather than per problem (two threads'
  // increments contend for its cache line). Which lane or thread solves a
  // problem does not change its answer.
  static constexpr size_t kChunk = 32;
  bool exhausted(int p) const {
    return taken_[p].first >= taken_[p].second &&
           s_.cursor[p].load(std::memory_order_relaxed) >= s_.plan_problems[p].size();
  }
  int take(int p) {
    const std::vector<int>& list = s_.plan_problems[p];
    auto& [next, end] = taken_[p];
    if (next >= end) {
      next = s_.cursor[p].fetch_add(kChunk, std::memory_order_relaxed);
      end = std::min(next + kChunk, list.size());
      if (next >= end) return -1;
    }
    return list[next++];
  }

  LaneState& state(int g, int l) { return lane_state_[g * kWidth + l]; }

  void fill(int g, int l, int i) {
    const Problem& pr = s_.problems[i];
    const ChainPlan& plan = s_.plans[group_plan_[g]];
    LaneGroup& G = groups_[g];
    LaneState& st = state(g, l);
    st.problem = i;
    st.attempt = 0;
    st.restarts.reset(s_.options->seeds.empty() ? s_.solve.seed : s_.options->seeds[i]);
    st.share_at_entry = share_sum_;
    occupied_[g] |= static_cast<std::uint8_t>(1u << l);
    const double budget_us = s_.solve.time_budget_us;
    if (budget_us > 0.0) next_deadline_ = std::min(next_deadline_, st.share_at_entry + budget_us);
    const Goal& goal = pr.goals.front();
    fillTarget(G, l, plan, goal);
    const CommonSpecOptions& common = s_.spec_plan.common;
    st.tally.restart(
        AttemptDriver(common.restarts, plan.library.get(), &goal, common.start, common.solutions, budget_us));
    startAttemptAt(G, l, plan, 0, st.tally.driver, pr.q0, st.restarts);
  }

  // Lanes whose problem's budget ends their attempt (time-limit: the
  // driver's rule, TimeBudget::endsAttempt); next_deadline_ becomes the
  // earliest deadline of the others.
  void expire() {
    next_deadline_ = std::numeric_limits<double>::infinity();
    for (int g = 0; g < num_groups_; ++g) {
      for (unsigned o = occupied_[g]; o != 0; o &= o - 1) {
        const int l = __builtin_ctz(o);
        const LaneState& st = state(g, l);
        const TimeBudget& budget = st.tally.driver.budget();
        if (budget.us <= 0.0) continue;
        if (!budget.endsAttempt([&] { return chargedUs(st); }, groups_[g].fresh[l] != 0)) {
          next_deadline_ = std::min(next_deadline_, st.share_at_entry + budget.us);
          continue;
        }
        expired_[g] |= static_cast<std::uint8_t>(1u << l);
        groups_[g].active[l] = 0;  // no step this round; attemptEnded() decides
      }
    }
  }

  // Solver::runAttempts after one attempt: pick the attempt's configuration,
  // score it, keep the best; then restart, or answer and free the lane.
  void attemptEnded(int g, int l) {
    LaneGroup& G = groups_[g];
    LaneState& st = state(g, l);
    const ChainPlan& plan = s_.plans[group_plan_[g]];
    const int n = plan.chain.n;
    if (expired_pending(g, l)) G.reason[l] = batch::kTimeLimit;
    st.tally.take(readAttemptEnd(G, l, n, static_cast<std::int32_t>(G.reason[l]), s_.solve), n, s_.solve);
    if (!st.tally.driver.ended([&] { return chargedUs(st); })) {
      ++st.attempt;
      startAttemptAt(G, l, plan, st.attempt, st.tally.driver, s_.problems[st.problem].q0, st.restarts);
      return;
    }
    finish(g, l);
  }

  bool expired_pending(int g, int l) const { return (expired_[g] >> l) & 1u; }

  // Solver::verdict, and the lane is free.
  void finish(int g, int l) {
    LaneGroup& G = groups_[g];
    LaneState& st = state(g, l);
    const ChainPlan& plan = s_.plans[group_plan_[g]];
    const Problem& pr = s_.problems[st.problem];
    ++solved_;
    if (s_.arrays != nullptr) {
      writeRow(*s_.arrays, static_cast<size_t>(st.problem), pr.q0, st.tally, plan, s_.solve, chargedUs(st));
    } else {
      BatchResult& out = (*s_.results)[st.problem];
      out.batched = true;
      out.q.resize(pr.q0.size());
      writeAnswer(out.q.data(), pr.q0, st.tally, plan);
      out.summary = tallySummary(st.tally, plan, s_.spec_plan.backend, s_.solve);
      out.summary.time_us = chargedUs(st);
    }
    G.active[l] = 0;
    occupied_[g] &= static_cast<std::uint8_t>(~(1u << l));
    G.fresh[l] = 0;
    st.problem = -1;
  }

  Shared& s_;
  std::vector<LaneGroup> groups_;
  int lanes_;
  std::vector<int> group_plan_;
  std::vector<std::uint8_t> ended_;
  std::vector<std::uint8_t> expired_ = std::vector<std::uint8_t>(groups_.size(), 0);
  std::vector<LaneState> lane_state_ = std::vector<LaneState>(static_cast<size_t>(lanes_));
  int num_groups_ = static_cast<int>(groups_.size());
  std::vector<std::uint8_t> occupied_ = std::vector<std::uint8_t>(groups_.size(), 0);  // lanes holding a problem
  double share_sum_ = 0.0;  // sum over rounds of (round time / lanes occupied) [us]
  long moves_ = 0;  // lanes moved by compact()
  long solved_ = 0;  // problems answered
  // Per plan: [next, end) of plan_problems, the chunk this thread took.
  std::vector<std::pair<size_t, size_t>> taken_ = std::vector<std::pair<size_t, size_t>>(s_.plans.size());
  double next_deadline_ = std::numeric_limits<double>::infinity();  // earliest share_sum_ at which a budget ends
};


void runLanes(Shared& shared, int lanes, BatchStats& stats) {
  LaneScheduler scheduler(shared, lanes);
  scheduler.run(stats);
  stats.solved += scheduler.solved();
}

void runScalar(Shared& s, std::unique_ptr<Solver>& solver, BatchStats& stats) {
  Eigen::VectorXd q;
  for (size_t k; !s.stop.load(std::memory_order_relaxed) && (k = s.fallback_cursor.fetch_add(1)) < s.fallback.size();
       ++stats.solved) {
    const int i = s.fallback[k];
    const Problem& pr = s.problems[i];
    if (!solver) solver = Registry::global().create(*s.spec);
    SolverOptions o = s.options->solve;
    if (!s.options->seeds.empty()) o.seed = s.options->seeds[i];
    if (s.arrays != nullptr) {
      q = pr.q0;
      const Summary sum = solver->solve(pr, q, o);
      writeRow(*s.arrays, static_cast<size_t>(i), q, sum, false);
      continue;
    }
    BatchResult& out = (*s.results)[i];
    out.q = pr.q0;
    out.summary = solver->solve(pr, out.q, o);
    out.batched = false;
  }
}

namespace {
double* qRow(const BatchArrays& out, size_t i) {
  return out.q == nullptr ? nullptr : out.q + i * static_cast<size_t>(out.q_stride);
}
template <class T, class U>
void put(T* column, size_t i, U value) {
  if (column != nullptr) column[i] = static_cast<T>(value);
}
}  // namespace

void writeRow(const BatchArrays& out, size_t i, const Eigen::VectorXd& q, const Summary& sum, bool batched) {
  if (double* row = qRow(out, i)) std::copy(q.data(), q.data() + q.size(), row);
  put(out.status, i, static_cast<int>(sum.status));
  put(out.iterations, i, sum.iterations);
  put(out.restarts, i, sum.restarts);
  put(out.position_error, i, sum.position_error);
  put(out.orientation_error, i, sum.orientation_error);
  put(out.time_us, i, sum.time_us);
  put(out.fk_evals, i, sum.fk_evals);
  put(out.jacobian_evals, i, sum.jacobian_evals);
  put(out.within_limits, i, sum.within_limits ? 1 : 0);
  put(out.batched, i, batched ? 1 : 0);
}

// tallySummary's values, written straight into row i.
void writeRow(const BatchArrays& out, size_t i, const Eigen::VectorXd& start, const AttemptTally& t,
              const ChainPlan& plan, const SolverOptions& solve, double time_us) {
  if (double* row = qRow(out, i)) writeAnswer(row, start, t, plan);
  put(out.status, i, static_cast<int>(tallyStatus(t, solve)));
  put(out.iterations, i, t.iterations);
  put(out.restarts, i, t.driver.restarts());
  put(out.position_error, i, t.best_pe);
  put(out.orientation_error, i, t.best_oe);
  put(out.time_us, i, time_us);
  put(out.fk_evals, i, t.fk_evals);
  put(out.jacobian_evals, i, t.jacobian_evals);
  if (out.within_limits != nullptr) out.within_limits[i] = tallyWithinLimits(t, plan) ? 1 : 0;
  put(out.batched, i, 1);
}

}  // namespace ikbench::batch_detail
