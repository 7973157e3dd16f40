#include "lane_fk.h"

#include <algorithm>

#include "batch_internal.h"

namespace ikbench {
using namespace batch_detail;

struct LaneFk::Impl {
  ChainPlan plan;
  KernelParams params;
  batch::ErrorsFn errors = nullptr;
  static constexpr int kGroups = (kMaxCount + kWidth - 1) / kWidth;
  LaneGroup groups[kGroups];
};

LaneFk::LaneFk() : impl_(std::make_unique<Impl>()) {}
LaneFk::~LaneFk() = default;

std::unique_ptr<LaneFk> LaneFk::forProblem(const Problem& problem) {
  ChainPlan plan = planChain(problem);
  if (!plan.why.empty()) return nullptr;
  std::unique_ptr<LaneFk> f(new LaneFk());
  Impl& m = *f->impl_;
  m.plan = std::move(plan);
  // Only the chain and the goal's weights play a part in an evaluation (not
  // the spec's damping or the stopping rules).
  m.params = kernelParams(planDls(DlsOptions{}, CommonSpecOptions{}), m.plan, SolverOptions());
  m.errors = selectKernel(BatchIsa::kAuto).errors;
  clearGroups(m.groups, Impl::kGroups);
  return f;
}

int LaneFk::dof() const { return impl_->plan.chain.n; }

void LaneFk::errors(const Goal& goal, const double* q, int count, GoalErrors* out) {
  Impl& m = *impl_;
  const int n = m.plan.chain.n;
  const int groups = (count + kWidth - 1) / kWidth;
  // The goal's target in the kernel's frame once, copied into every lane
  // (a row of a group at a time).
  fillTarget(m.groups[0], 0, m.plan, goal);
  const LaneGroup& G0 = m.groups[0];
  for (int g = 0; g < groups; ++g) {
    LaneGroup& G = m.groups[g];
    for (int r = 0; r < 3; ++r) std::fill_n(G.target_p[r], kWidth, G0.target_p[r][0]);
    for (int r = 0; r < 9; ++r) std::fill_n(G.target_R[r], kWidth, G0.target_R[r][0]);
  }
  for (int k = 0; k < groups * kWidth; ++k) {
    LaneGroup& G = m.groups[k / kWidth];
    // Lanes past count repeat the last configuration (finite, discarded).
    const double* qk = q + static_cast<size_t>(std::min(k, count - 1)) * n;
    for (int i = 0; i < n; ++i) G.q[i][k % kWidth] = qk[m.plan.q_index[i]];
  }
  m.errors(m.params, m.groups, groups);
  for (int k = 0; k < count; ++k) {
    const LaneGroup& G = m.groups[k / kWidth];
    const int l = k % kWidth;
    out[k] = {G.pe[l], G.oe[l], G.wn[l]};
  }
}

}  // namespace ikbench
