// `ikbench run --chain DOF`: a suite built in code on random revolute chains,
// for a quick look at a DOF without writing a suite file.
#include <fmt/format.h>

#include <cmath>

#include "harness/chain_suite.h"
#include "harness/run_config.h"
#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"

namespace ikbench::harness {

Suite chainSuite(int dof, int samples, std::uint64_t seed) {
  if (dof < 1) throw HarnessError(fmt::format("--chain: DOF must be >= 1, got {}", dof));
  if (samples < 1) throw HarnessError(fmt::format("--samples must be >= 1, got {}", samples));
  Suite suite;
  suite.name = fmt::format("chain{}", dof);
  suite.source = "built in (ikbench run --chain)";
  suite.seed = seed;
  ChainSpec cs;
  cs.joints = dof;
  cs.limit = 2.5;

  // Reachable position and pose goals, spread over 4 random chains.
  for (GoalKind kind : {GoalKind::kPosition, GoalKind::kPose}) {
    Family fam;
    fam.name = fmt::format("chain{}-{}", dof, toString(kind));
    fam.description = fmt::format("random {}-DOF revolute chains (limits +-2.5 rad), reachable {} goals", dof,
                                  toString(kind));
    fam.goal = std::string(toString(kind));
    fam.dof = dof;
    fam.effectors = 1;
    fam.type = "random_chain";
    const int chains = std::min(4, samples);
    for (int c = 0; c < chains; ++c) {
      const std::uint64_t s = Rng::mix(Rng::mix(seed, static_cast<std::uint64_t>(kind)), static_cast<std::uint64_t>(c));
      GoalSetSpec gs;
      gs.count = samples / chains + (c < samples % chains ? 1 : 0);
      gs.kind = kind;
      for (Problem& p : reachableGoals(randomChain(cs, s), gs, s, fmt::format("c{}-", c)))
        fam.problems.push_back(std::move(p));
    }
    suite.families.push_back(std::move(fam));
  }

  // Tracking: pose targets along a smooth joint-space path
  //   q_j(t) = 0.8 * limit * sin(w_j t + phi_j),  t = i / samples,
  // each problem starting from the answer to the previous one.
  {
    Family fam;
    fam.name = fmt::format("chain{}-track", dof);
    fam.description = fmt::format("random {}-DOF chain following a smooth joint-space path with pose goals, "
                                  "starting on the path, each solve from the previous answer",
                                  dof);
    fam.goal = "pose";
    fam.dof = dof;
    fam.effectors = 1;
    fam.sequential = true;
    fam.type = "random_chain";
    const std::uint64_t s = Rng::mix(seed, kTrackPathSalt);
    auto model = randomChain(cs, s);
    Rng rng(s);
    Eigen::VectorXd w(model->nq()), phi(model->nq());
    for (int j = 0; j < model->nq(); ++j) {
      w[j] = rng.uniform(0.5, 2.0) * 2.0 * M_PI;
      phi[j] = rng.uniform(0.0, 2.0 * M_PI);
    }
    Data data(*model);
    const int tip = model->leaves().front();
    auto path = [&](double t) {
      Eigen::VectorXd q(model->nq());
      for (int j = 0; j < model->nq(); ++j) q[j] = 0.8 * cs.limit * std::sin(w[j] * t + phi[j]);
      return q;
    };
    // The tracker starts where the path starts: problem i's start is the path
    // at t_{i-1} (the harness replaces it by the previous answer when the
    // family runs in sequence; problem 0 starts at t_0).
    Eigen::VectorXd q_prev = path(0.0);
    for (int i = 0; i < samples; ++i) {
      const double t = static_cast<double>(i) / samples;
      const Eigen::VectorXd q = path(t);
      forwardKinematics(*model, q, data);
      Problem p;
      p.model = model;
      p.name = fmt::format("t{}", i);
      Goal g;
      g.body = tip;
      g.kind = GoalKind::kPose;
      g.target_position = data.world_T_body[tip].p;
      g.target_orientation = data.world_T_body[tip].R;
      p.goals.push_back(g);
      p.q0 = q_prev;
      q_prev = q;
      fam.problems.push_back(std::move(p));
    }
    suite.families.push_back(std::move(fam));
  }
  return suite;
}

}  // namespace ikbench::harness
