// One attempt in a lane: where it starts (the attempt policy's start, in the
// kernel's layout), how its end is read for the policy, and the verdict of a
// finished solve from its tally.
#include "batch_internal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ikbench/core/numeric.h"

namespace ikbench::batch_detail {

AttemptEnd readAttemptEnd(const LaneGroup& G, int l, int n, std::int32_t reason, const SolverOptions& solve) {
  AttemptEnd e;
  e.reason = reason;
  e.iterations = static_cast<long>(G.iteration[l]);
  e.step_failed = stepFailed(reason);
  // The attempt's answer: its last iterate, unless an earlier one was better.
  bool q_finite = true;
  for (int k = 0; k < n; ++k) q_finite &= std::isfinite(G.q[k][l]);
  const double last = q_finite ? G.wn[l] : std::numeric_limits<double>::infinity();
  const bool use_best = !(last <= G.lowest_norm[l]);
  // An answer that is not finite leaves the attempt unscored, with its best
  // iterate as its configuration.
  const double(*from)[kWidth] = use_best || !q_finite ? G.best_q : G.q;
  for (int k = 0; k < n; ++k) e.q[k] = from[k][l];
  e.q_finite = q_finite;  // the last iterate's, when it is the answer
  if (use_best) {
    e.q_finite = true;
    for (int k = 0; k < n; ++k) e.q_finite &= std::isfinite(e.q[k]);
  }
  e.pe = use_best ? G.best_pe[l] : G.pe[l];
  e.oe = use_best ? G.best_oe[l] : G.oe[l];
  const double wn = use_best ? G.lowest_norm[l] : G.wn[l];
  e.finite = std::isfinite(e.pe) && std::isfinite(e.oe) && std::isfinite(wn);
  e.score = e.finite ? std::max(e.pe / solve.position_tolerance, e.oe / solve.orientation_tolerance)
                     : std::numeric_limits<double>::infinity();
  return e;
}


void writeAnswer(double* q, const Eigen::VectorXd& start, const AttemptTally& t, const ChainPlan& plan) {
  // A batched chain holds every DOF of its model (planChain), so the start
  // is not read: a solve from a library entry never touches it.
  if (static_cast<Eigen::Index>(plan.q_index.size()) != start.size())
    std::copy(start.data(), start.data() + start.size(), q);
  for (int k = 0; k < plan.chain.n; ++k) q[plan.q_index[k]] = t.best_q[k];
}

Status tallyStatus(const AttemptTally& t, const SolverOptions& solve) {
  return verdictStatus(t.best_finite,
                       t.best_pe <= solve.position_tolerance && t.best_oe <= solve.orientation_tolerance,
                       stopStatus(t.best_reason));
}

bool tallyWithinLimits(const AttemptTally& t, const ChainPlan& plan) {
  bool within = true;
  for (int k = 0; k < plan.chain.n; ++k)
    within &= t.best_q[k] >= plan.chain.lo[k] - kLimitSlack && t.best_q[k] <= plan.chain.hi[k] + kLimitSlack;
  return within;
}

// The Summary of a finished solve from its tally: Solver::verdict on the
// kernel's own errors of the answer.
Summary tallySummary(const AttemptTally& t, const ChainPlan& plan, const std::string& backend,
                     const SolverOptions& solve) {
  Summary sum;
  sum.iterations = static_cast<int>(t.iterations);
  sum.restarts = static_cast<int>(t.driver.restarts());
  sum.fk_evals = t.fk_evals;
  sum.jacobian_evals = t.jacobian_evals;
  sum.position_error = t.best_pe;
  sum.orientation_error = t.best_oe;
  sum.within_limits = tallyWithinLimits(t, plan);
  const Status status = stopStatus(t.best_reason);
  const std::string message = stopMessage(t.best_reason, solve, t.best_reason_iteration, backend);
  answerVerdict(t.best_finite, t.best_pe <= solve.position_tolerance && t.best_oe <= solve.orientation_tolerance,
                t.best_pe, t.best_oe, status, message, &sum.status, &sum.message);
  return sum;
}

// The target of a problem into lane l (the goal body's fixed rotation C
// folded into the target rotation).
void fillTarget(LaneGroup& G, int l, const ChainPlan& plan, const Goal& goal) {
  for (int r = 0; r < 3; ++r) G.target_p[r][l] = goal.target_position[r];
  const Eigen::Matrix3d Rt = plan.pose ? Eigen::Matrix3d(goal.target_orientation * plan.C.transpose())
                                       : Eigen::Matrix3d::Identity();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) G.target_R[3 * r + c][l] = Rt(r, c);
}

// Lane groups with every lane idle: a finite, harmless problem (q = 0,
// target at the origin with the identity rotation) that a step may evaluate
// with the busy lanes.
void clearGroups(LaneGroup* groups, size_t count) {
  std::memset(static_cast<void*>(groups), 0, count * sizeof(LaneGroup));
  for (size_t g = 0; g < count; ++g)
    for (int l = 0; l < kWidth; ++l)
      for (int c : {0, 4, 8}) groups[g].target_R[c][l] = 1.0;
}

// A fresh attempt in lane l (its q already written).
void startAttempt(LaneGroup& G, int l) {
  G.active[l] = -1;
  G.fresh[l] = -1;
  G.reason[l] = batch::kRunning;
}

// Attempt 0 in lane l: from the start clamped into the limits (Solver::solve).
void startFromStart(LaneGroup& G, int l, const ChainPlan& plan, const Eigen::VectorXd& start) {
  for (int k = 0; k < plan.chain.n; ++k)
    G.q[k][l] = std::clamp(start[plan.q_index[k]], plan.chain.lo[k], plan.chain.hi[k]);
  startAttempt(G, l);
}

// A restart in lane l from the next seeded restart configuration
// (randomConfiguration's draws, in model order).
void startFromRestart(LaneGroup& G, int l, const ChainPlan& plan, Rng& rng) {
  for (int k = 0; k < plan.chain.n; ++k) G.q[k][l] = rng.uniform(plan.draw_lo[k], plan.draw_hi[k]);
  startAttempt(G, l);
}

// An attempt in lane l from a seed library entry (nq values, within the
// limits).
void startFromEntry(LaneGroup& G, int l, const ChainPlan& plan, const double* q) {
  for (int k = 0; k < plan.chain.n; ++k) G.q[k][l] = q[plan.q_index[k]];
  startAttempt(G, l);
}

// Attempt `attempt` of a solve in lane l, where the attempt policy says it
// starts (as Solver::runAttempts starts it).
void startAttemptAt(LaneGroup& G, int l, const ChainPlan& plan, long attempt, AttemptDriver& driver,
                    const Eigen::VectorXd& start, RestartStream& restarts) {
  const AttemptStart from = driver.start(attempt);
  if (from.kind == AttemptStart::kLibraryEntry)
    startFromEntry(G, l, plan, from.entry);
  else if (from.kind == AttemptStart::kStart)
    startFromStart(G, l, plan, start);
  else
    startFromRestart(G, l, plan, restarts.rng());
}

// Lane 0's Jacobian from the one-problem step's layout (LaneGroup::Jp,
// which shares J's memory) into the lanes' (J[v][i][0]); the other lanes'
// columns are left holding other values, as a lane's Jacobian is written by
// its first evaluation before any step reads it.
void packedToLanes(LaneGroup& G, int n, int rows) {
  double Jp[kMaxDof][8];
  std::memcpy(Jp, G.Jp, sizeof Jp);
  for (int v = 0; v < n; ++v)
    for (int i = 0; i < rows; ++i) G.J[v][i][0] = Jp[v][i];
}

}  // namespace ikbench::batch_detail
