// A 6R arm prepared for its closed form, and the candidate solutions of one
// pose: what `analytic-6r` (analytic_6r_solver.cpp) and `auto`'s closed-form
// stage (closed_form_stage.cpp) share. The geometry is in analytic_ik.h.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "analytic_ik.h"
#include "ikbench/core/numeric.h"
#include "ikbench/core/solver_options.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "lane_fk.h"

namespace ikbench::analytic {

// What a solver derives once per (model, goal body, goal point).
template <typename Prepared>
struct PlanCache {
  std::shared_ptr<const Model> model;  // keeps the pointer's identity valid
  int body = -1;
  Eigen::Vector3d point = Eigen::Vector3d::Constant(std::nan(""));
  bool ok = false;
  std::string why;
  Prepared value;

  bool matches(const Problem& p) const {
    const Goal& g = p.goals[0];
    return model.get() == p.model.get() && body == g.body && point == g.point;
  }
  void key(const Problem& p) {
    model = p.model;
    body = p.goals[0].body;
    point = p.goals[0].point;
  }
};

// a - b modulo 2 pi, in [-pi, pi].
inline double turnDifference(double a, double b) {
  constexpr double kTurn = 2.0 * std::numbers::pi;
  const double d = a - b;
  return std::abs(d) <= std::numbers::pi ? d : d - kTurn * std::nearbyint(d / kTurn);
}

// Whether two solutions repeat each other: configurationsWithin(
// kDistinctSolutionDistance) of their angles, each modulo 2 pi, stopping at
// the first joint that already tells them apart.
template <std::size_t N>
inline bool sameSolution(const std::array<double, N>& a, const std::array<double, N>& b) {
  constexpr double kTol2 = kDistinctSolutionDistance * kDistinctSolutionDistance;
  double d2 = 0.0;
  for (std::size_t i = 0; i < N && d2 <= kTol2; ++i) {
    const double d = turnDifference(a[i], b[i]);
    d2 += d * d;
  }
  return d2 <= kTol2;
}

// Limits of the chain's joints (DOF indices and bounds), read once.
struct ChainLimits {
  std::vector<int> iq;  // configuration index of each chain joint
  std::vector<double> lo, hi;
  void read(const Model& model, const std::vector<int>& joints);
};

// A 6R arm ready for solve6.
struct Arm6 {
  std::vector<int> joints;
  ChainLimits limits;
  Limits6 limits6;  // the same, for solve6 (which drops branches outside them early)
  Plan6 plan;
  // The compiled kernel's FK for the candidates (null when the kernel does
  // not take the model: DOF off the chain, DOF weights, ...).
  std::unique_ptr<LaneFk> fk;
};

// Prepares the arm of the problem's single pose goal, classified with
// `tolerances` (the defaults: the chain as it is; looser: the idealised
// chain). False (and *why) when the chain is not a 6R chain of a supported
// class within them.
bool prepareArm6(const Problem& problem, const Tolerances& tolerances, Arm6* arm, std::string* why);

struct Candidate6 {
  double dist;  // squared distance to the hint
  std::array<double, 6> q;
  GoalErrors errors;  // at q, by the kernel's FK (set by checkCandidates6)
};

// Every closed-form solution of the goal's pose, each wrapped by 2 pi into
// the limits (those with no representative within dropped, by solve6 as
// soon as a branch's first angles are outside: sols->outside counts them),
// closest to `hint` (chain order) first.
void candidates6(const Arm6& arm, const Goal& goal, const std::array<double, 6>& hint, Solutions6* sols,
                 std::vector<Candidate6>* kept);

// What Solver::solve does with offered candidates (FK check, duplicates
// dropped, closest first; the wrap is done by candidates6), done at once:
// every candidate's FK in one pass of the compiled kernel (arm.fk, one lane
// per candidate) and the duplicates by their wrapped angles. Leaves the
// distinct candidates within tolerance of `goal` in *kept, each with its
// errors, and returns their number; when none is, returns 0 and leaves the
// closest candidate alone in *kept (its error is the verdict's to report).
int checkCandidates6(const Arm6& arm, const Goal& goal, const SolverOptions& options,
                     std::vector<Candidate6>* kept);

}  // namespace ikbench::analytic
