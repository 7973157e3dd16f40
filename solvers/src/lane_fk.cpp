#include "lane_fk.h"

#include "batch_internal.h"

namespace ikbench {
using namespace batch_detail;

struct LaneFk::Impl {
  ChainPlan plan;
  KernelParams params;
  batch::StepFn step = nullptr;
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
  // A fresh lane is evaluated and not stepped: the spec's damping and the
  // stopping rules play no part, only the chain and the goal's weights.
  m.params = kernelParams(planDls(DlsOptions{}, CommonSpecOptions{}), m.plan, SolverOptions());
  m.step = selectKernel(BatchIsa::kAuto).step;
  clearGroups(m.groups, Impl::kGroups);
  return f;
}

int LaneFk::dof() const { return impl_->plan.chain.n; }

void LaneFk::errors(const Goal& goal, const double* q, int count, double* position_error,
                    double* orientation_error) {
  Impl& m = *impl_;
  const int n = m.plan.chain.n;
  const int groups = (count + kWidth - 1) / kWidth;
  // The goal's target in the kernel's frame once, copied into every lane.
  fillTarget(m.groups[0], 0, m.plan, goal);
  for (int k = 0; k < groups * kWidth; ++k) {
    LaneGroup& G = m.groups[k / kWidth];
    const int l = k % kWidth;
    // Lanes past count repeat the last configuration (finite, discarded).
    const double* qk = q + static_cast<size_t>(std::min(k, count - 1)) * n;
    for (int i = 0; i < n; ++i) G.q[i][l] = qk[m.plan.q_index[i]];
    if (k > 0) {
      for (int r = 0; r < 3; ++r) G.target_p[r][l] = m.groups[0].target_p[r][0];
      for (int r = 0; r < 9; ++r) G.target_R[r][l] = m.groups[0].target_R[r][0];
    }
    startAttempt(G, l);
  }
  std::uint8_t ended[Impl::kGroups];
  m.step(m.params, m.groups, groups, ended);
  for (int k = 0; k < count; ++k) {
    const LaneGroup& G = m.groups[k / kWidth];
    position_error[k] = G.pe[k % kWidth];
    orientation_error[k] = G.oe[k % kWidth];
  }
}

}  // namespace ikbench
