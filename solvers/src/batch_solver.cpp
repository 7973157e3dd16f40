// solveBatch (ikbench/solvers/batch.h): the driver around the SIMD kernels
// of batch_kernel_*.cpp. It decides which problems the kernel can take, turns
// each model into the kernel's chain frames (batch_layout.h), keeps the
// per-problem state of Solver::solve (attempts, seeded restarts, the best
// attempt, the verdict) outside the kernel, refills lanes as problems finish
// and runs the rest through the scalar Solver.
#include "ikbench/solvers/batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <tuple>

#include "batch_layout.h"
#include "kernel_solve.h"
#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/seed_library.h"

namespace ikbench {
namespace {

using batch::Chain;
using batch::ChainJoint;
using batch::KernelParams;
using batch::kMaxDof;
using batch::kWidth;
using batch::LaneGroup;
using Clock = std::chrono::steady_clock;

// ------------------------------------------------------------ dispatch --

bool cpuHasAvx2() {
#if defined(__x86_64__) || defined(__i386__)
  return batch::avx2Step() != nullptr && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// The kernel an ISA request gets on this machine: its lane step, its
// one-problem step and its name.
struct KernelIsa {
  batch::StepFn step;
  batch::StepFn one_step;
  const char* name;
};
KernelIsa selectKernel(BatchIsa isa) {
  if (isa == BatchIsa::kAuto) {
    const char* env = std::getenv("IKBENCH_BATCH_ISA");
    if (env != nullptr && std::strcmp(env, "portable") == 0) isa = BatchIsa::kPortable;
  }
  if (isa != BatchIsa::kPortable && cpuHasAvx2()) return {batch::avx2Step(), batch::avx2OneStep(), "avx2"};
  return {batch::portableStep(), batch::portableOneStep(), "portable"};
}

// ---------------------------------------------------------- spec plan --

// What the spec asks of the kernel; why is non-empty when it cannot.
struct SpecPlan {
  std::string why;
  std::string backend;  // "dls" or "dls-adaptive": prefixes failure messages as the scalar backend does
  KernelParams params;  // the spec's part (damping, step, limits)
  bool auto_limits = false;  // limits=auto: freeze decided per chain (redundant or not)
  CommonSpecOptions common;  // restarts, budget, iteration cap and stall rule
  std::string one_problem;   // kernel=auto|lanes|packed: how Solver::solve runs the kernel
};

SpecPlan planSpec(const SolverSpec& spec) {
  SpecPlan plan;
  plan.backend = spec.name;
  auto value = [&](const std::string& key) -> std::string {
    for (const auto& [k, v] : spec.parameters)
      if (k == key) return v;
    return {};
  };
  auto real = [&](const std::string& key) {
    double x = 0.0;
    if (!parseRealText(value(key), &x)) throw SpecError(fmt::format("batch: cannot read {} = '{}'", key, value(key)));
    return x;
  };
  if (spec.name != "dls" && spec.name != "dls-adaptive") {
    plan.why = fmt::format("the batch kernel runs dls and dls-adaptive:mode=error, not {}", spec.name);
    return plan;
  }
  if (spec.name == "dls-adaptive" && value("mode") != "error") {
    plan.why = "dls-adaptive in the batch kernel needs mode=error (the sv term needs eigenvalues)";
    return plan;
  }
  if (value("kernel") == "generic") {
    plan.why = "kernel=generic asks for the generic model code";
    return plan;
  }
  plan.one_problem = value("kernel");
  if (value("jacobian") != "geometric") {
    plan.why = "the batch kernel uses the geometric Jacobian";
    return plan;
  }
  if (real("null_gain") != 0.0) {
    plan.why = "the batch kernel has no null-space term";
    return plan;
  }
  if (spec.common.solutions != SolutionsMode::kFirst) {
    plan.why = "the batch kernel returns one solution (solutions=first)";
    return plan;
  }
  KernelParams& p = plan.params;
  p.max_step = real("max_step");
  p.freeze = value("limits") == "freeze";
  plan.auto_limits = value("limits") == "auto";
  if (spec.name == "dls") {
    const double lambda = real("lambda");
    p.lambda2 = lambda * lambda;
  } else {
    p.adaptive = true;
    const double lmin = real("lambda_min");
    p.lambda_min2 = lmin * lmin;
    p.err_gain = real("err_gain");
  }
  plan.common = spec.common;
  return plan;
}

// --------------------------------------------------------- chain plan --

// A model and a goal structure in the kernel's frames.
struct ChainPlan {
  std::string why;               // non-empty: not for the kernel
  Chain chain;
  Eigen::Matrix3d C = Eigen::Matrix3d::Identity();  // R_body = R_{n-1} C
  std::vector<int> q_index;      // path DOF k -> model q index
  std::vector<double> draw_lo, draw_hi;  // restart draw ranges (randomConfiguration), path order
  bool pose = true;
  double w_pos = 1.0, w_ori = 1.0;
  std::shared_ptr<const SeedLibrary> library;  // the spec's seed library (library=N), else null
};

Eigen::Vector3d anyNormal(const Eigen::Vector3d& w) {
  const Eigen::Vector3d e = std::abs(w.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  return (e - e.dot(w) * w).normalized();
}

ChainPlan planChain(const Problem& problem) {
  ChainPlan plan;
  const Model& model = *problem.model;
  if (problem.goals.size() != 1) {
    plan.why = "the batch kernel takes one goal";
    return plan;
  }
  const Goal& goal = problem.goals.front();
  if (goal.kind == GoalKind::kOrientation) {
    plan.why = "the batch kernel takes pose and position goals";
    return plan;
  }
  if (!model.hasOnlyScalarJoints()) {
    plan.why = "the batch kernel takes revolute, prismatic and fixed joints";
    return plan;
  }
  const std::vector<int> path = model.supportingJoints(goal.body);
  const int n = static_cast<int>(path.size());
  if (n != model.nv()) {
    plan.why = "the batch kernel needs every DOF on the path to the goal's body";
    return plan;
  }
  if (n > kMaxDof) {
    plan.why = fmt::format("the batch kernel takes at most {} DOF", kMaxDof);
    return plan;
  }
  plan.pose = goal.kind == GoalKind::kPose;
  if ((plan.pose ? 6 : 3) > n) {
    plan.why = "the batch kernel needs at least as many DOF as goal rows";
    return plan;
  }
  if (!(model.dofWeights().array() == 1.0).all()) {
    plan.why = "the batch kernel takes unit DOF weights";
    return plan;
  }
  plan.w_pos = goal.weight;
  plan.w_ori = goal.weight * goal.orientation_scale;

  // World frames at q = 0: pivots and axes of the path's joints.
  std::vector<Pose3d> T(model.numJoints());
  std::vector<Eigen::Matrix3d> Rdof(model.numJoints());
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nq());
  forwardKinematics<double>(model, zero.data(), T.data(), Rdof.data());
  std::vector<Eigen::Vector3d> o(n), w(n), x(n);
  for (int k = 0; k < n; ++k) {
    o[k] = T[path[k]].p;
    w[k] = (Rdof[path[k]] * model.axis(path[k])).normalized();
  }
  // x_k normal to z_k and z_{k+1} (any normal when they are parallel).
  for (int k = 0; k < n; ++k) {
    Eigen::Vector3d c = k + 1 < n ? w[k].cross(w[k + 1]) : Eigen::Vector3d::Zero();
    x[k] = c.norm() > 1e-14 ? Eigen::Vector3d(c.normalized()) : anyNormal(w[k]);
  }
  std::vector<Eigen::Matrix3d> F(n);
  for (int k = 0; k < n; ++k) {
    F[k].col(0) = x[k];
    F[k].col(1) = w[k].cross(x[k]);
    F[k].col(2) = w[k];
  }
  Chain& ch = plan.chain;
  ch.n = n;
  for (int r = 0; r < 3; ++r) {
    ch.base_p[r] = o[0][r];
    for (int c = 0; c < 3; ++c) ch.base_R[3 * r + c] = F[0](r, c);
  }
  for (int k = 0; k < n; ++k) {
    ChainJoint& j = ch.joint[k];
    const int mj = path[k];
    const int iv = model.idxV(mj);
    Eigen::Vector3d t = Eigen::Vector3d::Zero();
    double alpha = 0.0, phi = 0.0;
    if (k > 0) {
      const Eigen::Matrix3d rel = F[k - 1].transpose() * F[k];
      alpha = std::atan2(-rel(1, 2), rel(2, 2));
      const Eigen::Matrix3d rz = Eigen::AngleAxisd(-alpha, Eigen::Vector3d::UnitX()).toRotationMatrix() * rel;
      phi = std::atan2(rz(1, 0), rz(0, 0));
      const Eigen::Matrix3d back = (Eigen::AngleAxisd(alpha, Eigen::Vector3d::UnitX()) *
                                    Eigen::AngleAxisd(phi, Eigen::Vector3d::UnitZ()))
                                       .toRotationMatrix();
      if (!((back - rel).cwiseAbs().maxCoeff() <= 1e-12)) {
        plan.why = "the chain's frames did not reduce to Rx Rz form";
        return plan;
      }
      t = F[k - 1].transpose() * (o[k] - o[k - 1]);
    }
    for (int r = 0; r < 3; ++r) j.t[r] = t[r];
    j.has_alpha = alpha != 0.0;
    j.ca = std::cos(alpha);
    j.sa = std::sin(alpha);
    j.prismatic = model.type(mj) == JointType::kPrismatic;
    j.cphi = std::cos(phi);
    j.sphi = std::sin(phi);
    ch.phi[k] = j.prismatic ? 0.0 : phi;
    ch.lo[k] = model.lowerLimits()[iv];
    ch.hi[k] = model.upperLimits()[iv];
    plan.q_index.push_back(model.idxQ(mj));
    // randomConfiguration's draw: the limits where finite, else +-pi (hinge)
    // or +-1 (slider).
    const double dlo = j.prismatic ? -1.0 : -std::numbers::pi, dhi = j.prismatic ? 1.0 : std::numbers::pi;
    plan.draw_lo.push_back(std::isfinite(ch.lo[k]) ? ch.lo[k] : std::max(dlo, ch.lo[k]));
    plan.draw_hi.push_back(std::isfinite(ch.hi[k]) ? ch.hi[k] : std::min(dhi, ch.hi[k]));
  }
  // randomConfiguration draws joint by joint in model order: the path must
  // be in that order (it is, for a chain: parents come first).
  for (int k = 1; k < n; ++k)
    if (plan.q_index[k] <= plan.q_index[k - 1]) {
      plan.why = "the path's DOF are not in model order";
      return plan;
    }
  const Eigen::Vector3d xe = T[goal.body].act(goal.point);
  const Eigen::Vector3d tool = F[n - 1].transpose() * (xe - o[n - 1]);
  for (int r = 0; r < 3; ++r) ch.tool_p[r] = tool[r];
  plan.C = F[n - 1].transpose() * T[goal.body].R;
  return plan;
}

// Problems of one model with the same goal structure share a plan.
struct PlanKey {
  const Model* model;
  int body;
  double px, py, pz;
  GoalKind kind;
  double weight, orientation_scale;
  auto tie() const { return std::tie(model, body, px, py, pz, kind, weight, orientation_scale); }
  bool operator<(const PlanKey& o) const { return tie() < o.tie(); }
  bool operator==(const PlanKey& o) const { return tie() == o.tie(); }
};

// ----------------------------------------------------------- attempts --

// How one attempt in a lane ended, read from the lane after its last
// kernel step (Solver::runAttempts after solveImpl).
struct AttemptEnd {
  std::int32_t reason = batch::kRunning;
  long iterations = 0;
  bool step_failed = false;  // the last step failed (its Jacobian was evaluated)
  bool q_finite = false;     // the attempt's answer is finite (else runAttempts skips it)
  bool finite = false;       // and its errors are
  double score = 0.0;        // max(pe / tol_p, oe / tol_o); <= 1: converged
  double q[kMaxDof];         // the answer (the attempt's best iterate when not finite)
  double pe = 0.0, oe = 0.0;
};

// Whether an attempt ended because its last step failed (the step's Jacobian
// was evaluated, and SolveContext records no iterate for it).
bool stepFailed(std::int64_t reason) {
  return reason == batch::kNotPositiveDefinite || reason == batch::kNonFiniteStep || reason == batch::kNonFiniteConfig;
}

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
  for (int k = 0; k < n; ++k) e.q[k] = use_best ? G.best_q[k][l] : G.q[k][l];
  e.pe = use_best ? G.best_pe[l] : G.pe[l];
  e.oe = use_best ? G.best_oe[l] : G.oe[l];
  const double wn = use_best ? G.lowest_norm[l] : G.wn[l];
  e.q_finite = true;
  for (int k = 0; k < n; ++k) e.q_finite &= std::isfinite(e.q[k]);
  if (!e.q_finite)
    for (int k = 0; k < n; ++k) e.q[k] = G.best_q[k][l];
  e.finite = std::isfinite(e.pe) && std::isfinite(e.oe) && std::isfinite(wn);
  e.score = e.finite ? std::max(e.pe / solve.position_tolerance, e.oe / solve.orientation_tolerance)
                     : std::numeric_limits<double>::infinity();
  return e;
}

// The attempts of one solve so far, taken in attempt order: the counts and
// the best attempt (Solver::runAttempts).
struct AttemptTally {
  long attempts = 0, iterations = 0, fk_evals = 0, jacobian_evals = 0;
  double best_score = 0.0;
  std::int32_t best_reason = batch::kMaxIterations;
  long best_reason_iteration = 0;
  double best_q[kMaxDof];
  double best_pe = 0.0, best_oe = 0.0;
  bool best_finite = false;

  // Takes the next attempt; true when it converged (the solve's answer).
  bool add(const AttemptEnd& e, int n) {
    const bool first = attempts == 0;
    ++attempts;
    iterations += e.iterations;
    fk_evals += 1 + e.iterations;
    jacobian_evals += e.iterations + (e.step_failed ? 1 : 0);
    if (e.q_finite) {
      if (e.score < best_score || first) {
        best_score = e.score;
        best_reason = e.reason;
        best_reason_iteration = e.iterations;
        std::memcpy(best_q, e.q, sizeof(double) * n);
        best_pe = e.pe;
        best_oe = e.oe;
        best_finite = e.finite;
      }
      return e.score <= 1.0;
    }
    if (first) {
      // Solver::solve keeps the clamped start as the answer.
      std::memcpy(best_q, e.q, sizeof(double) * n);
      best_reason = e.reason;
      best_reason_iteration = e.iterations;
      best_finite = false;
    }
    return false;
  }
};

// The status and message SolveContext / the backend give for an end reason.
std::string reasonMessage(const std::string& backend, const SolverOptions& solve, std::int32_t reason, long iteration,
                          Status* status) {
  switch (reason) {
    case batch::kConverged: *status = Status::kConverged; return {};
    case batch::kMaxIterations: *status = Status::kMaxIterations; return {};
    case batch::kTimeLimit: *status = Status::kTimeLimit; return {};
    case batch::kStallNoImprovement:
      *status = Status::kStalled;
      return fmt::format("no relative improvement of {} in {} iterations", solve.stall_relative_improvement,
                         solve.stall_iterations);
    case batch::kStallVanishingStep:
      *status = Status::kStalled;
      return fmt::format("step vanished (|dq| < {:g})", kVanishingStep);
    case batch::kNonFiniteError:
      *status = Status::kNumericalFailure;
      return fmt::format("non-finite error or step at iteration {}", iteration);
    case batch::kNonFiniteStart:
      *status = Status::kNumericalFailure;
      return "non-finite error at the start configuration";
    case batch::kNotPositiveDefinite:
      *status = Status::kNumericalFailure;
      return fmt::format("{}: J J^T + lambda^2 I is not positive definite (lambda = 0 at a singularity?)", backend);
    case batch::kNonFiniteStep: *status = Status::kNumericalFailure; return fmt::format("{}: non-finite step", backend);
    case batch::kNonFiniteConfig:
      *status = Status::kNumericalFailure;
      return fmt::format("{}: non-finite configuration after the step", backend);
    default: *status = Status::kMaxIterations; return {};
  }
}

// The Summary of a finished solve from its tally: Solver::verdict on the
// kernel's own errors of the answer. Writes the answer into the path DOF of
// *q (which holds the rest of the configuration).
Summary tallySummary(const AttemptTally& t, const ChainPlan& plan, const std::string& backend,
                     const SolverOptions& solve, Eigen::VectorXd* q) {
  Summary sum;
  const int n = plan.chain.n;
  for (int k = 0; k < n; ++k) (*q)[plan.q_index[k]] = t.best_q[k];
  sum.iterations = static_cast<int>(t.iterations);
  sum.restarts = static_cast<int>(std::max(0L, t.attempts - 1));
  sum.fk_evals = t.fk_evals;
  sum.jacobian_evals = t.jacobian_evals;
  sum.position_error = t.best_pe;
  sum.orientation_error = t.best_oe;
  bool within = true;
  for (int k = 0; k < n; ++k)
    within &= t.best_q[k] >= plan.chain.lo[k] - kLimitSlack && t.best_q[k] <= plan.chain.hi[k] + kLimitSlack;
  sum.within_limits = within;
  Status status;
  std::string message = reasonMessage(backend, solve, t.best_reason, t.best_reason_iteration, &status);
  if (!t.best_finite) {
    sum.status = Status::kNumericalFailure;
    sum.message = message.empty() ? "non-finite forward kinematics at the result" : message;
  } else if (t.best_pe <= solve.position_tolerance && t.best_oe <= solve.orientation_tolerance) {
    sum.status = Status::kConverged;
    sum.message = status == Status::kConverged ? message : std::string();
  } else if (status == Status::kConverged) {
    sum.status = Status::kStalled;
    sum.message = fmt::format(
        "backend reported convergence, but FK gives position error {:.3g} m, orientation error {:.3g} rad", t.best_pe,
        t.best_oe);
  } else {
    sum.status = status;
    sum.message = message;
  }
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

// Attempt `attempt` of a solve in lane l, as Solver::runAttempts starts it:
// from the seed library's next entry while it has one for this attempt
// (restarts, and the first attempt with start=library), else from the start
// (attempt 0) or the restart stream.
void startAttemptAt(LaneGroup& G, int l, const ChainPlan& plan, long attempt, LibraryStarts& library,
                    const Eigen::VectorXd& start, Rng& rng) {
  if (const double* entry = library.forAttempt(attempt); entry != nullptr)
    startFromEntry(G, l, plan, entry);
  else if (attempt == 0)
    startFromStart(G, l, plan, start);
  else
    startFromRestart(G, l, plan, rng);
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

// Runs f(0), ..., f(n - 1), each on its own thread when n > 1, and
// meanwhile() on the calling thread (first, when n == 1). An exception from
// meanwhile() is rethrown once the threads are joined.
template <class F, class G>
void onThreads(int n, const F& f, const G& meanwhile) {
  if (n == 1) {
    meanwhile();
    f(0);
    return;
  }
  // Every thread that started is joined before anything is thrown: a thread
  // that cannot start (a process or memory limit) is a std::system_error
  // naming the count, and an exception inside f or meanwhile is rethrown on
  // the calling thread (the first one), never std::terminate.
  std::mutex m;
  std::exception_ptr error;
  auto keep = [&](std::exception_ptr e) {
    std::lock_guard lock(m);
    if (!error) error = e;
  };
  auto guarded = [&](int t) {
    try {
      f(t);
    } catch (...) {
      keep(std::current_exception());
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(n));
  std::optional<std::system_error> start_error;
  try {
    for (int t = 0; t < n; ++t) pool.emplace_back(guarded, t);
  } catch (const std::system_error& e) {
    start_error.emplace(e.code(), fmt::format("solveBatch: only {} of {} threads could start (threads = {})",
                                              pool.size(), n, n));
  }
  if (!start_error) {
    try {
      meanwhile();
    } catch (...) {
      keep(std::current_exception());
    }
  }
  for (auto& th : pool) th.join();
  if (start_error) throw *start_error;
  if (error) std::rethrow_exception(error);
}
template <class F>
void onThreads(int n, const F& f) {
  onThreads(n, f, [] {});
}

// ------------------------------------------------------------- engine --

// One problem's Solver::solve state while it occupies a lane.
struct LaneState {
  int problem = -1;
  long attempt = 0;
  Rng rng{0};
  LibraryStarts library;  // the seed library's starts (plan.library)
  double share_at_entry = 0.0;  // Engine::share_sum_ when the problem came in
  double deadline_us = 0.0;  // 0 = none
  AttemptTally tally;
};

struct Shared {
  const Problem* problems = nullptr;  // [0, number of problems)
  const BatchOptions* options = nullptr;
  SolverOptions solve;  // effective options (withSpecOptions: the spec's budget, cap and stall rule)
  const SolverSpec* spec = nullptr;
  SpecPlan spec_plan;
  batch::StepFn step = nullptr;
  std::vector<ChainPlan> plans;
  std::vector<KernelParams> params;         // per plan
  std::vector<std::vector<int>> plan_problems;  // per plan, problem indices in order
  std::vector<std::atomic<size_t>> cursor;  // per plan: next problem to take
  std::vector<int> fallback;                // problems for the scalar path
  std::atomic<size_t> fallback_cursor{0};
  std::vector<BatchResult>* results = nullptr;
  explicit Shared(size_t plans) : cursor(plans) {}
};

class Engine {
 public:
  Engine(Shared& shared, int lanes) : s_(shared), groups_(lanes / kWidth), lanes_(lanes), group_plan_(lanes / kWidth, -1) {
    clearGroups(groups_.data(), groups_.size());
    ended_.resize(groups_.size());
  }

  // Rounds: refill free lanes, take the time of the last round, end the
  // attempts whose budget is spent, one kernel step per group, then the
  // attempt ends (restart or answer).
  void run(BatchStats& stats) {
    Clock::time_point last = Clock::now();
    const bool budget = s_.solve.time_budget_us > 0.0;
    while (true) {
      int busy = 0;
      for (int g = 0; g < num_groups_; ++g) {
        if (occupied_[g] != 0xF) refill(g);
        busy += __builtin_popcount(occupied_[g]);
      }
      if (compact()) {
        for (int g = 0; g < num_groups_; ++g)
          if (occupied_[g] == 0) refill(g);
        busy = 0;
        for (int g = 0; g < num_groups_; ++g) busy += __builtin_popcount(occupied_[g]);
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
        const bool g_smaller = __builtin_popcount(occupied_[g]) <= __builtin_popcount(occupied_[h]);
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
    st = LaneState();
    st.problem = i;
    const std::uint64_t seed = s_.options->seeds.empty() ? s_.solve.seed : s_.options->seeds[i];
    st.rng = Rng(Rng::mix(seed, kRestartStreamSalt));
    st.share_at_entry = share_sum_;
    st.deadline_us = s_.solve.time_budget_us;
    occupied_[g] |= static_cast<std::uint8_t>(1u << l);
    if (st.deadline_us > 0.0) next_deadline_ = std::min(next_deadline_, st.share_at_entry + st.deadline_us);
    fillTarget(G, l, plan, pr.goals.front());
    st.library = LibraryStarts(plan.library.get(), &pr.goals.front(), s_.spec_plan.common.start);
    startAttemptAt(G, l, plan, 0, st.library, pr.q0, st.rng);
  }

  // Lanes whose problem's budget is spent end their attempt (time-limit);
  // next_deadline_ becomes the earliest deadline of the others.
  void expire() {
    next_deadline_ = std::numeric_limits<double>::infinity();
    for (int g = 0; g < num_groups_; ++g) {
      for (unsigned o = occupied_[g]; o != 0; o &= o - 1) {
        const int l = __builtin_ctz(o);
        const LaneState& st = state(g, l);
        if (st.deadline_us <= 0.0) continue;
        if (groups_[g].fresh[l] || chargedUs(st) < st.deadline_us) {
          next_deadline_ = std::min(next_deadline_, st.share_at_entry + st.deadline_us);
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
    const bool done =
        st.tally.add(readAttemptEnd(G, l, n, static_cast<std::int32_t>(G.reason[l]), s_.solve), n);
    const bool time_up = st.deadline_us > 0.0 && chargedUs(st) >= st.deadline_us;
    if (!done && !time_up && st.attempt < s_.spec_plan.common.restarts) {
      ++st.attempt;
      startAttemptAt(G, l, plan, st.attempt, st.library, s_.problems[st.problem].q0, st.rng);
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
    BatchResult& out = (*s_.results)[st.problem];
    const Problem& pr = s_.problems[st.problem];
    out.batched = true;
    out.q = pr.q0;
    out.summary = tallySummary(st.tally, plan, s_.spec_plan.backend, s_.solve, &out.q);
    out.summary.time_us = chargedUs(st);
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
  // Per plan: [next, end) of plan_problems, the chunk this thread took.
  std::vector<std::pair<size_t, size_t>> taken_ = std::vector<std::pair<size_t, size_t>>(s_.plans.size());
  double next_deadline_ = std::numeric_limits<double>::infinity();  // earliest share_sum_ at which a budget ends
};

// What the kernel runs for one plan: the spec's part, the chain's, and the
// stopping rules of the (effective) solve options.
KernelParams kernelParams(const SpecPlan& spec_plan, const ChainPlan& plan, const SolverOptions& solve) {
  KernelParams p = spec_plan.params;
  p.chain = &plan.chain;
  p.pose = plan.pose;
  // limits=auto: the freeze loop on a redundant chain (fewer goal rows than DOFs).
  if (spec_plan.auto_limits) p.freeze = (plan.pose ? 6 : 3) < static_cast<int>(plan.q_index.size());
  p.w_pos = plan.w_pos;
  p.w_ori = plan.w_ori;
  p.tol_p = solve.position_tolerance;
  p.tol_o = solve.orientation_tolerance;
  p.max_iterations = solve.max_iterations;
  p.stall_iterations = solve.stall_iterations;
  p.stall_relative_improvement = solve.stall_relative_improvement;
  p.vanishing_step = kVanishingStep;
  return p;
}

void runScalar(Shared& s, std::unique_ptr<Solver>& solver) {
  for (size_t k; (k = s.fallback_cursor.fetch_add(1)) < s.fallback.size();) {
    const int i = s.fallback[k];
    const Problem& pr = s.problems[i];
    if (!solver) solver = Registry::global().create(*s.spec);
    SolverOptions o = s.options->solve;
    if (!s.options->seeds.empty()) o.seed = s.options->seeds[i];
    BatchResult& out = (*s.results)[i];
    out.q = pr.q0;
    out.summary = solver->solve(pr, out.q, o);
    out.batched = false;
  }
}

}  // namespace

// ------------------------------------------------------- KernelSolve --

// One solve in the kernel's lanes, up to four attempts at once, taken in
// attempt order (kernel_solve.h says why the answer is the sequential one).
struct KernelSolve::Impl {
  SpecPlan spec_plan;
  batch::StepFn step = nullptr;      // the lane step
  batch::StepFn one_step = nullptr;  // the one-problem step
  // The plan of the last problem's model and goal structure (the model kept
  // alive, so that its address cannot be reused by another).
  std::shared_ptr<const Model> model;
  PlanKey key{};
  bool have_key = false;
  ChainPlan plan;
  bool plan_ok = false;
  std::unique_ptr<LaneGroup> group;
  // Attempts that ended but are not yet taken, by attempt - next_taken
  // (a window: no attempt starts kWindow or more ahead of the next one to
  // take), with their trace records.
  static constexpr int kWindow = 16;
  // Steps of attempt 0 before other attempts start beside it. It changes no
  // answer, only the time: started at once, the other lanes slow the solves
  // that need no restart (the freeze loop takes the passes of its busiest
  // lane), which sets the median; started after attempt 0 ends, restarts run
  // one at a time, which sets the mean. Tuned (0, 4, 8 steps, or after attempt
  // 0 ends) on the arms of docs/tuning.md's per-arm section, which has the
  // command and the figures.
  static constexpr long kAttemptsAfter = 4;
  AttemptEnd ended[kWindow];
  bool has_ended[kWindow] = {};
  std::vector<IterationRecord> records[kWindow];
};

KernelSolve::KernelSolve() : impl_(std::make_unique<Impl>()) {}
KernelSolve::~KernelSolve() = default;

std::unique_ptr<KernelSolve> KernelSolve::make(const SolverSpec& spec) {
  SpecPlan plan = planSpec(spec);
  if (!plan.why.empty()) return nullptr;
  std::unique_ptr<KernelSolve> k(new KernelSolve());
  Impl& m = *k->impl_;
  m.spec_plan = std::move(plan);
  const KernelIsa isa = selectKernel(BatchIsa::kAuto);
  m.step = isa.step;
  m.one_step = isa.one_step;
  m.group = std::make_unique<LaneGroup>();
  clearGroups(m.group.get(), 1);
  return k;
}

bool KernelSolve::solve(const Problem& problem, const Eigen::VectorXd& start, const SeedLibrary* library,
                        const SolverOptions& options,
                        std::chrono::steady_clock::time_point t0, Summary* summary, Eigen::VectorXd* q,
                        Status* status, std::string* message) {
  Impl& m = *impl_;
  if (problem.goals.size() != 1) return false;
  const Goal& goal = problem.goals.front();
  const PlanKey key{problem.model.get(), goal.body,   goal.point.x(), goal.point.y(), goal.point.z(),
                    goal.kind,           goal.weight, goal.orientation_scale};
  if (!m.have_key || key < m.key || m.key < key) {
    m.plan = planChain(problem);
    m.plan_ok = m.plan.why.empty();
    m.model = problem.model;
    m.key = key;
    m.have_key = true;
  }
  if (!m.plan_ok) return false;
  const ChainPlan& plan = m.plan;
  const int n = plan.chain.n;
  const KernelParams params = kernelParams(m.spec_plan, plan, options);
  LaneGroup& G = *m.group;
  const bool trace = options.record_trace;
  const double budget = options.time_budget_us;
  const long last_attempt = m.spec_plan.common.restarts;  // attempts 0 .. restarts
  // The one-problem step runs while only lane 0 is busy: always with
  // kernel=packed (one attempt at a time), and with kernel=auto until
  // restarts start beside attempt 0 (never, without restarts); then lane 0's
  // Jacobian moves to the lanes' layout and the lane step runs up to four
  // attempts at once. The answer is the same, bitwise, either way.
  const std::string& choice = m.spec_plan.one_problem;
  const bool packed = choice == "packed";
  bool one = choice != "lanes";  // the one-problem step runs now
  auto elapsed = [&] { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); };

  for (int l = 0; l < kWidth; ++l) fillTarget(G, l, plan, goal);
  Rng rng(Rng::mix(options.seed, kRestartStreamSalt));
  LibraryStarts library_starts(library, &goal, m.spec_plan.common.start);
  long lane_attempt[kWidth];  // the attempt each lane runs, -1: idle
  std::fill_n(lane_attempt, kWidth, -1L);
  long next_start = 0;  // the next attempt to start
  long next_taken = 0;  // the next attempt to take, in order
  for (int w = 0; w < Impl::kWindow; ++w) {
    m.has_ended[w] = false;
    m.records[w].clear();
  }
  AttemptTally tally;
  double taken_us = 0.0;  // elapsed time of the last trace record taken
  bool done = false, time_up = false;
  while (!done) {
    // Idle lanes start the next attempts: the first from the start clamped
    // into the limits, the others from the restart stream, drawn in
    // attempt order (randomConfiguration's draws, in model order).
    // The other lanes wait until attempt 0 has taken Impl::kAttemptsAfter
    // steps without converging: most targets converge in their first
    // attempt within a few more, and lanes stepping beside it would only
    // add freeze-loop passes (the kernel's passes are those of its busiest
    // lane).
    bool hold = false;
    for (int l = 0; l < (one ? 1 : kWidth); ++l)
      if (lane_attempt[l] == 0 && (G.fresh[l] != 0 || static_cast<long>(G.iteration[l]) < Impl::kAttemptsAfter))
        hold = true;
    if (one && !packed && !hold && !time_up && next_start > 0 && next_start <= last_attempt) {
      packedToLanes(G, n, plan.pose ? 6 : 3);
      one = false;
    }
    const int lanes = one ? 1 : kWidth;
    for (int l = 0; l < lanes; ++l) {
      if (lane_attempt[l] >= 0 || time_up || next_start > last_attempt || next_start >= next_taken + Impl::kWindow)
        continue;
      if (next_start > 0 && hold) continue;
      startAttemptAt(G, l, plan, next_start, library_starts, start, rng);
      if (next_start == 0) hold = true;  // attempt 0 is fresh
      lane_attempt[l] = next_start++;
    }
    std::uint8_t busy = 0, fresh = 0;
    for (int l = 0; l < lanes; ++l) {
      busy |= static_cast<std::uint8_t>((lane_attempt[l] >= 0) << l);
      fresh |= static_cast<std::uint8_t>((lane_attempt[l] >= 0 && G.fresh[l] != 0) << l);
    }
    if (busy == 0) break;
    // A spent budget ends the attempts that have taken a step (time-limit);
    // a fresh one still evaluates its start, as in the generic code.
    std::uint8_t expired = 0;
    if (budget > 0.0 && elapsed() >= budget) {
      time_up = true;
      expired = busy & static_cast<std::uint8_t>(~fresh);
      for (unsigned e = expired; e != 0; e &= e - 1) G.active[__builtin_ctz(e)] = 0;
    }
    std::uint8_t ended = 0;
    if ((busy & ~expired) != 0) (one ? m.one_step : m.step)(params, &G, 1, &ended);
    if (trace) {
      // SolveContext::begin / endIteration's records (a step that failed
      // records nothing), kept per attempt until it is taken.
      const double now = elapsed();
      for (unsigned b = busy & static_cast<std::uint8_t>(~expired); b != 0; b &= b - 1) {
        const int l = __builtin_ctz(b);
        const bool first = (fresh >> l) & 1u;
        if (!first && stepFailed(G.reason[l])) continue;
        IterationRecord r;
        r.iteration = first ? 0 : static_cast<int>(G.iteration[l]);  // within the attempt; offset when taken
        r.position_error = G.pe[l];
        r.orientation_error = G.oe[l];
        r.step_norm = first ? 0.0 : G.step[l];
        r.damping = first ? 0.0 : std::sqrt(G.lambda2[l]);
        r.elapsed_us = now;
        r.q = start;
        for (int k = 0; k < n; ++k) r.q[plan.q_index[k]] = G.q[k][l];
        m.records[lane_attempt[l] % Impl::kWindow].push_back(std::move(r));
      }
    }
    for (unsigned e = ended | expired; e != 0; e &= e - 1) {
      const int l = __builtin_ctz(e);
      if ((expired >> l) & 1u) G.reason[l] = batch::kTimeLimit;
      const long a = lane_attempt[l];
      const int w = static_cast<int>(a % Impl::kWindow);
      m.ended[w] = readAttemptEnd(G, l, n, static_cast<std::int32_t>(G.reason[l]), options);
      m.has_ended[w] = true;
      lane_attempt[l] = -1;
      G.active[l] = 0;
      G.fresh[l] = 0;
    }
    // Take the ended attempts in attempt order (Solver::runAttempts): stop
    // at the first that converged, or when the budget is spent.
    while (!done) {
      const int w = static_cast<int>(next_taken % Impl::kWindow);
      if (!m.has_ended[w]) break;
      m.has_ended[w] = false;
      if (trace) {
        for (IterationRecord& r : m.records[w]) {
          r.iteration += static_cast<int>(tally.iterations);
          // The time a record can be taken in attempt order: not before the
          // records of the attempts before it (so the trace's time grows,
          // as in one attempt after another).
          r.elapsed_us = std::max(r.elapsed_us, taken_us);
          taken_us = r.elapsed_us;
          if (summary->trace.size() < Summary::kMaxTraceRecords) {
            summary->trace.push_back(std::move(r));
          } else {
            summary->trace.back() = std::move(r);  // the trace ends where the solve ended (SolveContext::record)
          }
        }
        m.records[w].clear();
      }
      ++next_taken;
      done = tally.add(m.ended[w], n) || (budget > 0.0 && elapsed() >= budget) || next_taken > last_attempt;
    }
  }
  // Attempts run ahead of the answer are dropped; the lanes are free.
  for (int l = 0; l < kWidth; ++l) {
    G.active[l] = 0;
    G.fresh[l] = 0;
  }
  summary->iterations = static_cast<int>(tally.iterations);
  summary->restarts = static_cast<int>(tally.attempts - 1);
  summary->fk_evals = tally.fk_evals;
  summary->jacobian_evals = tally.jacobian_evals;
  q->resize(start.size());
  *q = start;
  for (int k = 0; k < n; ++k) (*q)[plan.q_index[k]] = tally.best_q[k];
  // The best attempt's own end (Solver::verdict recomputes the errors by
  // the model's FK and decides the status from them).
  *message = reasonMessage(m.spec_plan.backend, options, tally.best_reason, tally.best_reason_iteration, status);
  return true;
}

std::string batchIsaName(BatchIsa isa) { return selectKernel(isa).name; }

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

std::string batchFallbackReason(const Problem& problem, const SolverSpec& spec, const SolverOptions& options) {
  std::string why;
  if (options.record_trace) return "the batch kernel records no trace";
  if (!options.isValid(&why)) return why;
  if (!problem.isValid(&why)) return why;
  const SpecPlan sp = planSpec(spec);
  if (!sp.why.empty()) return sp.why;
  return planChain(problem).why;
}

std::vector<BatchResult> solveBatch(const std::vector<Problem>& problems, std::string_view spec,
                                    const BatchOptions& options, BatchStats* stats) {
  return solveBatch(problems, Registry::global().parse(spec), options, stats);
}

std::vector<BatchResult> solveBatch(const std::vector<Problem>& problems, const SolverSpec& spec,
                                    const BatchOptions& options, BatchStats* stats) {
  if (!options.seeds.empty() && options.seeds.size() != problems.size())
    throw std::invalid_argument(
        fmt::format("solveBatch: {} seeds for {} problems (give one per problem, or none)", options.seeds.size(),
                    problems.size()));
  if (options.lanes < kWidth || options.lanes > BatchOptions::kMaxLanes || options.lanes % kWidth != 0)
    throw std::invalid_argument(fmt::format("solveBatch: lanes = {} must be a multiple of {} in [{}, {}]",
                                            options.lanes, kWidth, kWidth, BatchOptions::kMaxLanes));
  if (options.threads < 1 || options.threads > 1024)
    throw std::invalid_argument(fmt::format("solveBatch: threads = {} must be in [1, 1024]", options.threads));

  // Constructed below, beside the scan of the problems: a large batch's
  // results are large enough that their first-touch page faults are worth
  // overlapping with that scan.
  std::vector<BatchResult> results;
  Shared s(0);
  s.problems = problems.data();
  s.options = &options;
  s.spec = &spec;
  s.results = &results;
  s.spec_plan = planSpec(spec);
  const KernelIsa isa = selectKernel(options.isa);
  s.step = isa.step;
  // The options Solver::solve would use (the spec's keys applied).
  s.solve = withSpecOptions(s.spec_plan.common, options.solve);

  std::string why;
  const bool spec_ok = s.spec_plan.why.empty() && !options.solve.record_trace && s.solve.isValid(&why);
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
    const Goal& g = pr.goals.front();
    return PlanKey{pr.model.get(), g.body, g.point.x(), g.point.y(), g.point.z(), g.kind, g.weight, g.orientation_scale};
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
  onThreads(sharers, scan, [&] { results.resize(problems.size()); });
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
    runScalar(s, scalar);
    if (!s.plans.empty()) {
      Engine engine(s, options.lanes);
      engine.run(per_thread[t]);
    }
  };
  onThreads(threads, worker);
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
  }
  return results;
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
