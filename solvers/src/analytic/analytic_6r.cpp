#include "analytic_6r.h"

#include <algorithm>

#include "ikbench/core/solver_options.h"
#include "ikbench/kinematics/model.h"

namespace ikbench::analytic {

void ChainLimits::read(const Model& model, const std::vector<int>& joints) {
  iq.clear();
  lo.clear();
  hi.clear();
  for (int j : joints) {
    iq.push_back(model.idxQ(j));
    lo.push_back(model.lowerLimits()[model.idxV(j)]);
    hi.push_back(model.upperLimits()[model.idxV(j)]);
  }
}

bool prepareArm6(const Problem& problem, const Tolerances& tolerances, Arm6* arm, std::string* why) {
  const Model& model = *problem.model;
  const Goal& g = problem.goals[0];
  arm->fk = nullptr;
  if (!revoluteChain(model, g.body, 6, &arm->joints, why)) return false;
  std::array<std::string, 6> names;
  for (int i = 0; i < 6; ++i) names[i] = model.joint(arm->joints[i]).name;
  if (!classify6(chainAtZero<6>(model, arm->joints, g.body, g.point), &arm->plan, why, &names, tolerances))
    return false;
  arm->limits.read(model, arm->joints);
  std::copy(arm->limits.lo.begin(), arm->limits.lo.end(), arm->limits6.lo.begin());
  std::copy(arm->limits.hi.begin(), arm->limits.hi.end(), arm->limits6.hi.begin());
  arm->fk = LaneFk::forProblem(problem);
  return true;
}

void candidates6(const Arm6& arm, const Goal& goal, const std::array<double, 6>& hint, Solutions6* sols,
                 std::vector<Candidate6>* kept) {
  solve6(arm.plan, goal.target_orientation, goal.target_position, hint, sols, &arm.limits6);
  std::vector<Candidate6>& k = *kept;
  k.resize(sols->count);  // at most 8: no allocation after the first solves
  for (int s = 0; s < sols->count; ++s) {
    Candidate6 c{0.0, sols->q[s], {}};
    for (int i = 0; i < 6; ++i) {
      const double d = c.q[i] - hint[i];
      c.dist += d * d;
    }
    // Insertion by distance, equal distances in solution order.
    int at = s;
    for (; at > 0 && c.dist < k[at - 1].dist; --at) k[at] = k[at - 1];
    k[at] = c;
  }
}

int checkCandidates6(const Arm6& arm, const Goal& goal, const SolverOptions& options,
                     std::vector<Candidate6>* kept) {
  std::vector<Candidate6>& k = *kept;
  const int n = static_cast<int>(k.size());
  if (n == 0) return 0;
  // The kernel takes the whole configuration: with every DOF on the chain
  // (LaneFk's condition) that is the chain's six angles in q order.
  double q[LaneFk::kMaxCount * 6];
  GoalErrors e[LaneFk::kMaxCount];
  for (int c = 0; c < n; ++c)
    for (int i = 0; i < 6; ++i) q[6 * c + arm.limits.iq[i]] = k[c].q[i];
  arm.fk->errors(goal, q, n, e);
  for (int c = 0; c < n; ++c) k[c].errors = e[c];
  int m = 0;
  for (int c = 0; c < n; ++c) {
    if (!(e[c].position <= options.position_tolerance && e[c].orientation <= options.orientation_tolerance)) continue;
    bool repeat = false;
    for (int j = 0; j < m && !repeat; ++j) repeat = sameSolution(k[j].q, k[c].q);
    if (repeat) continue;
    if (m != c) k[m] = k[c];
    ++m;
  }
  k.resize(std::max(m, 1));
  return m;
}

}  // namespace ikbench::analytic
