// One differential suite for the damped least-squares method (dls,
// dls-adaptive:mode=error and the `auto` preset built on them): every
// implementation of the method solves the same seeded problems and is held to
// the generic scalar code with ONE set of thresholds (kAgreement).
//
// The implementations and how each is chosen:
//   generic          Solver::solve with kernel=generic: the model code
//                    (forward_kinematics.h, goal.h, jacobian_dls.cpp); the reference
//   kernel           Solver::solve with kernel=auto: the compiled chain kernel
//                    (solvers/src/kernel/kernel_solve.h), one problem per solve
//   kernel-packed    kernel=packed: one attempt at a time in the one-problem step
//   kernel-lanes     kernel=lanes: up to four attempts at once, one per lane
//   kernel-portable  kernel=auto, the solver made under IKBENCH_BATCH_ISA=portable
//   batch            solveBatch with BatchIsa::kAuto (AVX2 + FMA when the CPU has them)
//   batch-portable   solveBatch with BatchIsa::kPortable (SSE2, no fused multiply-add)
//   batch-avx2       solveBatch with BatchIsa::kAvx2 (run only when the CPU has AVX2 + FMA)
//
// Against the reference every implementation agrees to rounding within
// kAgreement: statuses and restarts, iterations, configurations where the
// iterations agree, and the number of converged answers; each of its converged
// answers holds by the model's own forward kinematics, within the limits.
// Implementations that run the same arithmetic (one instruction set: the
// kernel's two steps, kernel=auto and the batch lanes) agree bitwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::chainProblems;
using test::prismaticProblems;

// The one set of thresholds every implementation is held to against the
// generic code, per problem family and spec.
struct Agreement {
  // Share of a family's problems with the reference's status and restart count.
  double same_outcome = 0.975;
  // Share of the problems (all families of a spec together) with the
  // reference's iteration count: rounding can move a stopping test
  // (tolerance, stall window, freeze loop) by an iteration, and a later test
  // by more after that.
  double same_iterations = 0.90;
  // Largest |q - q_ref| over the problems with the reference's iteration
  // count: rounding only, far below the 1e-5 tolerance.
  double max_dq = 1e-6;
  // Converged answers may fall short of the reference's count by this share.
  double converged_shortfall = 0.02;
  // A reported goal error against the model's FK of the returned q (the
  // batch reports the kernel's own evaluation; Solver::solve re-evaluates by
  // the model's FK, so its reported errors are exactly that).
  double reported_error = 1e-12;
};
constexpr Agreement kAgreement;

// The restarted recipe without a time budget: results that cannot depend on
// the machine.
constexpr const char* kRestarted =
    "dls-adaptive:restarts=200:mode=error:err_gain=0.03:limits=freeze:max_step=1:max_iterations=20";
// The auto preset's numerical recipe without its time budget. Its
// closed-form stage (closed_form=auto) answers the UR5 family before the
// method runs, the same code on every path: closed_form_stage_test holds it
// to analytic-6r.
constexpr const char* kAutoNoBudget = "auto:time_budget_us=0:closed_form=off";

// Every spec of the method the kernel runs: both limit modes, step clamps,
// restarts, error damping.
const std::vector<std::string> kSpecs = {kRestarted,
                                         kAutoNoBudget,
                                         "dls",
                                         "dls:limits=freeze:max_step=0.3",
                                         "dls-adaptive:mode=error:restarts=3",
                                         "dls-adaptive:mode=error:limits=freeze:restarts=5"};

// ------------------------------------------------------------ problems --



std::vector<Problem> armProblems(const char* arm, int count, std::uint64_t seed = 17) {
  const UrdfModel um = loadUrdf(std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/robots/" + arm + ".urdf");
  GoalSetSpec gs;
  gs.count = count;
  gs.kind = GoalKind::kPose;
  return reachableGoals(um.model, gs, seed, arm);
}

struct ProblemFamily {
  std::string name;
  std::vector<Problem> problems;
  // Share of the problems every implementation solves with kRestarted (the
  // method's restarted recipe on reachable targets); 0: no floor.
  double restarted_converges = 0.0;
};

const std::vector<ProblemFamily>& families() {
  static const std::vector<ProblemFamily> f = [] {
    std::vector<ProblemFamily> out;
    out.push_back({"7-DOF pose, four chains", test::poseProblems(7, 4, 40)});
    out.push_back({"7-DOF pose, six chains", chainProblems(6, 40)});
    // 6, 8 and 9 DOF: the kernel's compiled sizes and its general loop.
    ProblemFamily sizes{"6/8/9-DOF pose", {}};
    for (int dof : {6, 8, 9})
      for (Problem& p : test::poseProblems(dof, 1, 20)) sizes.problems.push_back(std::move(p));
    out.push_back(std::move(sizes));
    out.push_back({"7-DOF position", chainProblems(3, 30, GoalKind::kPosition)});
    // Sliders and principal axes: parallel and perpendicular neighbours.
    out.push_back({"8-DOF with sliders", prismaticProblems(8, AxisStyle::kAlternating, 17, 40), 0.75});
    // UR5: three parallel axes; Panda, iiwa14: rest rotations, fixed flanges.
    for (const char* arm : {"ur5", "panda", "iiwa14"}) out.push_back({arm, armProblems(arm, 40), 0.975});
    return out;
  }();
  return f;
}

// ------------------------------------------------------- implementations --

struct Implementation {
  std::string name;
  bool solver_solve = true;   // through Solver::solve (else solveBatch)
  std::string kernel;         // Solver::solve: the kernel= value
  bool portable_env = false;  // Solver::solve: the solver made under IKBENCH_BATCH_ISA=portable
  BatchIsa isa = BatchIsa::kAuto;
  // The arithmetic it runs: "generic", or the kernel's instruction set.
  std::string arithmetic() const {
    if (solver_solve && kernel == "generic") return "generic";
    if (solver_solve) return portable_env ? "portable" : batchIsaName();
    return batchIsaName(isa);
  }
};

std::vector<Implementation> implementations() {
  std::vector<Implementation> out = {
      {"generic", true, "generic"},
      {"kernel", true, "auto"},
      {"kernel-packed", true, "packed"},
      {"kernel-lanes", true, "lanes"},
      {"kernel-portable", true, "auto", true},
      {"batch", false, "", false, BatchIsa::kAuto},
      {"batch-portable", false, "", false, BatchIsa::kPortable},
  };
  if (batchIsaName(BatchIsa::kAvx2) == "avx2") out.push_back({"batch-avx2", false, "", false, BatchIsa::kAvx2});
  return out;
}

struct Answers {
  std::vector<Summary> summaries;
  std::vector<Eigen::VectorXd> q;
};

Answers solveWith(const Implementation& impl, const std::vector<Problem>& problems, const std::string& spec,
                  const SolverOptions& o) {
  Answers out;
  if (impl.solver_solve) {
    if (impl.portable_env) setenv("IKBENCH_BATCH_ISA", "portable", 1);
    test::Solved s = test::solveEach(problems, spec + ":kernel=" + impl.kernel, o);
    if (impl.portable_env) unsetenv("IKBENCH_BATCH_ISA");
    out.summaries = std::move(s.summaries);
    out.q = std::move(s.q);
    return out;
  }
  BatchOptions bo;
  bo.solve = o;
  bo.isa = impl.isa;
  BatchStats stats;
  const std::vector<BatchResult> r = solveBatch(problems, spec, bo, &stats);
  EXPECT_EQ(stats.isa, impl.arithmetic()) << impl.name;
  // Every problem of every family is one the kernel takes.
  EXPECT_EQ(stats.batched, static_cast<long>(problems.size())) << impl.name << " " << spec;
  for (const BatchResult& x : r) {
    EXPECT_TRUE(x.batched) << impl.name;
    out.summaries.push_back(x.summary);
    out.q.push_back(x.q);
  }
  return out;
}

// Each answer on its own: finite, reported errors those of the model's FK of
// q, and a converged answer within the tolerances and the limits.
void expectHoldsByFk(const Implementation& impl, const std::vector<Problem>& problems, const Answers& a,
                     const SolverOptions& o, const std::string& where) {
  for (size_t i = 0; i < problems.size(); ++i) {
    const Summary& s = a.summaries[i];
    ASSERT_TRUE(a.q[i].allFinite()) << where << " problem " << i;
    const GoalErrors e = test::goalErrorsAt(problems[i], a.q[i]);
    if (impl.solver_solve) {
      EXPECT_EQ(e.position, s.position_error) << where << " problem " << i;
      EXPECT_EQ(e.orientation, s.orientation_error) << where << " problem " << i;
    } else {
      EXPECT_NEAR(e.position, s.position_error, kAgreement.reported_error) << where << " problem " << i;
      EXPECT_NEAR(e.orientation, s.orientation_error, kAgreement.reported_error) << where << " problem " << i;
    }
    if (s.converged()) {
      EXPECT_LE(e.position, o.position_tolerance) << where << " problem " << i;
      EXPECT_LE(e.orientation, o.orientation_tolerance) << where << " problem " << i;
      EXPECT_TRUE(withinLimits(*problems[i].model, a.q[i])) << where << " problem " << i;
    }
  }
}

// An implementation against the reference on one family: the counts that
// kAgreement bounds.
struct Tally {
  int n = 0, same_outcome = 0, same_iterations = 0, converged = 0, converged_ref = 0;
  double max_dq = 0.0;
  Tally& operator+=(const Tally& o) {
    n += o.n;
    same_outcome += o.same_outcome;
    same_iterations += o.same_iterations;
    converged += o.converged;
    converged_ref += o.converged_ref;
    max_dq = std::max(max_dq, o.max_dq);
    return *this;
  }
};

Tally compare(const Answers& a, const Answers& ref) {
  Tally t;
  t.n = static_cast<int>(a.q.size());
  for (int i = 0; i < t.n; ++i) {
    const Summary& s = a.summaries[i];
    const Summary& r = ref.summaries[i];
    t.same_outcome += s.status == r.status && s.restarts == r.restarts;
    t.same_iterations += s.iterations == r.iterations;
    t.converged += s.converged();
    t.converged_ref += r.converged();
    if (s.iterations == r.iterations) t.max_dq = std::max(t.max_dq, (a.q[i] - ref.q[i]).cwiseAbs().maxCoeff());
  }
  return t;
}

// Per family: outcomes, configurations and the converged count.
void expectAgrees(const Tally& t, const std::string& where) {
  std::printf("  %-48s outcome %3d/%d  iterations %3d/%d  converged %3d (generic %3d)  max |dq| %.2g\n", where.c_str(),
              t.same_outcome, t.n, t.same_iterations, t.n, t.converged, t.converged_ref, t.max_dq);
  EXPECT_GE(t.same_outcome, kAgreement.same_outcome * t.n) << where;
  EXPECT_LT(t.max_dq, kAgreement.max_dq) << where;
  EXPECT_GE(t.converged, t.converged_ref - kAgreement.converged_shortfall * t.n) << where;
}

// Two implementations of the same arithmetic: bitwise the same answers.
void expectBitwise(const Implementation& ia, const Answers& a, const Implementation& ib, const Answers& b,
                   const std::string& where) {
  for (size_t i = 0; i < a.q.size(); ++i) {
    const Summary& x = a.summaries[i];
    const Summary& y = b.summaries[i];
    ASSERT_TRUE(a.q[i] == b.q[i]) << where << " problem " << i << "\n" << a.q[i].transpose() << "\n"
                                  << b.q[i].transpose();
    EXPECT_EQ(x.status, y.status) << where << " problem " << i;
    EXPECT_EQ(x.iterations, y.iterations) << where << " problem " << i;
    EXPECT_EQ(x.restarts, y.restarts) << where << " problem " << i;
    EXPECT_EQ(x.fk_evals, y.fk_evals) << where << " problem " << i;
    EXPECT_EQ(x.jacobian_evals, y.jacobian_evals) << where << " problem " << i;
    EXPECT_EQ(x.message, y.message) << where << " problem " << i;
    if (ia.solver_solve == ib.solver_solve) {
      EXPECT_EQ(x.position_error, y.position_error) << where << " problem " << i;
      EXPECT_EQ(x.orientation_error, y.orientation_error) << where << " problem " << i;
    }
  }
}

class Differential : public ::testing::TestWithParam<std::string> {};

TEST_P(Differential, EveryImplementationAgreesWithTheGenericCode) {
  const std::string& spec = GetParam();
  const SolverOptions o;
  const std::vector<Implementation> impls = implementations();
  std::vector<Tally> pooled(impls.size());
  std::printf("%s (batchIsaName: %s)\n", spec.c_str(), batchIsaName().c_str());
  for (const ProblemFamily& family : families()) {
    const std::vector<Problem>& problems = family.problems;
    const int n = static_cast<int>(problems.size());
    // The kernel takes every problem: kernel=auto runs it, not the generic code.
    for (const Problem& p : problems)
      ASSERT_TRUE(batchFallbackReason(p, Registry::global().parse(spec), o).empty()) << family.name << " " << p.name;
    std::vector<Answers> answers;
    for (const Implementation& impl : impls) {
      const std::string where = spec + " | " + family.name + " | " + impl.name;
      answers.push_back(solveWith(impl, problems, spec, o));
      expectHoldsByFk(impl, problems, answers.back(), o, where);
      if (spec == kRestarted && family.restarted_converges > 0) {
        int converged = 0;
        for (const Summary& s : answers.back().summaries) converged += s.converged();
        EXPECT_GE(converged, family.restarted_converges * n) << where;
      }
      if (impl.arithmetic() != "generic") {
        const Tally t = compare(answers.back(), answers.front());
        expectAgrees(t, family.name + " | " + impl.name);
        pooled[answers.size() - 1] += t;
      }
    }
    // Same arithmetic, bitwise the same: each against the first of its kind.
    for (size_t b = 1; b < impls.size(); ++b)
      for (size_t a = 1; a < b; ++a)
        if (impls[a].arithmetic() == impls[b].arithmetic()) {
          expectBitwise(impls[a], answers[a], impls[b], answers[b],
                        spec + " | " + family.name + " | " + impls[a].name + " vs " + impls[b].name);
          break;
        }
  }
  // Over all families: iteration counts.
  for (size_t k = 0; k < impls.size(); ++k) {
    if (impls[k].arithmetic() == "generic") continue;
    std::printf("  all families | %-33s iterations %d/%d\n", impls[k].name.c_str(), pooled[k].same_iterations,
                pooled[k].n);
    EXPECT_GE(pooled[k].same_iterations, kAgreement.same_iterations * pooled[k].n) << spec << " | " << impls[k].name;
  }
}

std::string specTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Specs, Differential, ::testing::ValuesIn(kSpecs), specTestName);

// IKBENCH_BATCH_ISA=portable makes BatchIsa::kAuto the portable kernel, for
// solveBatch and for a solver made under it: bitwise the answers of
// BatchIsa::kPortable.
TEST(DifferentialIsa, EnvironmentForcesThePortableKernel) {
  const std::vector<Problem> problems = chainProblems(2, 20);
  BatchOptions portable;
  portable.isa = BatchIsa::kPortable;
  BatchStats sp;
  const std::vector<BatchResult> rp = solveBatch(problems, kRestarted, portable, &sp);
  EXPECT_EQ(sp.isa, "portable");
  setenv("IKBENCH_BATCH_ISA", "portable", 1);
  EXPECT_EQ(batchIsaName(BatchIsa::kAuto), "portable");
  BatchStats se;
  const std::vector<BatchResult> re = solveBatch(problems, kRestarted, BatchOptions(), &se);
  const test::Solved k = test::solveEach(problems, kRestarted, SolverOptions());
  unsetenv("IKBENCH_BATCH_ISA");
  EXPECT_EQ(se.isa, "portable");
  for (size_t i = 0; i < problems.size(); ++i) {
    EXPECT_TRUE(re[i].q == rp[i].q) << i;
    EXPECT_TRUE(k.q[i] == rp[i].q) << i;
    EXPECT_EQ(k.summaries[i].iterations, rp[i].summary.iterations) << i;
  }
}

// One problem through Solver::solve is bitwise the same as through
// solveBatch (the same kernel, lanes are independent), although
// Solver::solve runs up to four attempts of the problem at once and
// solveBatch one after another: the attempts are taken in order. Includes a
// target out of reach, whose 5001 attempts all fail (the best is the answer).
TEST(DifferentialBitwise, SolverSolveKernelIsTheBatchAnswer) {
  std::vector<Problem> problems = test::poseProblems(7, 3, 30);
  for (Problem& p : test::poseProblems(5, 2, 20, GoalKind::kPosition)) problems.push_back(std::move(p));
  Problem far = problems.front();
  far.goals.front().target_position *= 10.0;
  problems.push_back(far);
  SolverOptions o;
  const test::Solved k = test::solveEach(problems, kAutoNoBudget, o);
  BatchOptions bo;
  bo.solve = o;
  BatchStats stats;
  const std::vector<BatchResult> r = solveBatch(problems, kAutoNoBudget, bo, &stats);
  EXPECT_EQ(stats.batched, static_cast<long>(problems.size()));
  for (size_t i = 0; i < problems.size(); ++i) {
    EXPECT_TRUE(k.q[i] == r[i].q) << i;
    EXPECT_EQ(k.summaries[i].status, r[i].summary.status) << i;
    EXPECT_EQ(k.summaries[i].iterations, r[i].summary.iterations) << i;
    EXPECT_EQ(k.summaries[i].restarts, r[i].summary.restarts) << i;
    EXPECT_EQ(k.summaries[i].fk_evals, r[i].summary.fk_evals) << i;
    EXPECT_EQ(k.summaries[i].jacobian_evals, r[i].summary.jacobian_evals) << i;
    EXPECT_EQ(k.summaries[i].message, r[i].summary.message) << i;
  }
  int several = 0;
  for (const Summary& s : k.summaries) several += s.restarts >= 4;
  EXPECT_GT(several, 2);  // attempts beyond the first four lanes were taken
  EXPECT_EQ(k.summaries.back().restarts, 5000);
  EXPECT_FALSE(k.summaries.back().converged());
}

// The one-problem step (packed within the problem: frame columns, Jacobian
// columns and normal-matrix columns as vectors) computes what the lane step
// computes for lane 0, operation for operation: kernel=packed, kernel=auto
// (which moves from the one step to the other within a solve) and
// kernel=lanes give bitwise the same answers, counts, messages and traces,
// on random chains of 6 to 9 DOF (the unrolled 6/7/8 kernels and the
// general one), position goals, prismatic joints, the shipped arms,
// weighted goals and targets out of reach (the freeze loop at the limits),
// on the CPU's kernel and on the portable one.
TEST(DifferentialBitwise, PackedAutoAndLanesStepsGiveTheSameAnswersAndTraces) {
  std::vector<Problem> problems;
  for (int dof : {6, 7, 8, 9})
    for (Problem& p : test::poseProblems(dof, 2, 10)) problems.push_back(std::move(p));
  for (Problem& p : test::poseProblems(5, 2, 10, GoalKind::kPosition)) problems.push_back(std::move(p));
  for (Problem& p : prismaticProblems(8, AxisStyle::kAlternating, 17, 15)) problems.push_back(std::move(p));
  for (const char* arm : {"ur5", "panda", "iiwa14"})
    for (Problem& p : armProblems(arm, 10)) problems.push_back(std::move(p));
  const size_t plain = problems.size();
  for (size_t i = 0; i < plain; i += 7) {
    Problem w = problems[i];
    w.goals.front().weight = 2.5;
    w.goals.front().orientation_scale = 0.4;
    problems.push_back(w);
    Problem far = problems[i];
    far.goals.front().target_position *= 3.0;
    problems.push_back(far);
  }
  SolverOptions o;
  o.record_trace = true;
  // The last run: both steps of the portable (SSE2) kernel.
  const std::vector<std::string> specs = {"dls", "dls:limits=freeze:max_step=0.3:max_iterations=60", kAutoNoBudget,
                                          "dls-adaptive:mode=error:limits=freeze:restarts=3:max_iterations=40",
                                          "dls-adaptive:mode=error:limits=freeze:restarts=3:max_iterations=40"};
  for (size_t run = 0; run < specs.size(); ++run) {
    const std::string& spec = specs[run];
    const bool portable = run + 1 == specs.size();
    if (portable) setenv("IKBENCH_BATCH_ISA", "portable", 1);
    const test::Solved packed = test::solveEach(problems, spec + ":kernel=packed", o);
    const test::Solved lanes = test::solveEach(problems, spec + ":kernel=lanes", o);
    // kernel=auto: the one-problem step for attempt 0 until restarts start
    // beside it (for restarts=0, throughout), then the lane step.
    const test::Solved mixed = test::solveEach(problems, spec, o);
    if (portable) unsetenv("IKBENCH_BATCH_ISA");
    int converged = 0, frozen_or_failed = 0;
    for (size_t i = 0; i < problems.size(); ++i) {
      for (const test::Solved* x : {&packed, &mixed}) {
        const char* kernel = x == &packed ? "packed" : "auto";
        const Summary& a = x->summaries[i];
        const Summary& b = lanes.summaries[i];
        ASSERT_TRUE(x->q[i] == lanes.q[i]) << spec << " kernel=" << kernel << " problem " << i << "\n"
                                           << x->q[i].transpose() << "\n"
                                           << lanes.q[i].transpose();
        EXPECT_EQ(a.status, b.status) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.iterations, b.iterations) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.restarts, b.restarts) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.fk_evals, b.fk_evals) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.jacobian_evals, b.jacobian_evals) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.message, b.message) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.position_error, b.position_error) << spec << " kernel=" << kernel << " problem " << i;
        EXPECT_EQ(a.orientation_error, b.orientation_error) << spec << " kernel=" << kernel << " problem " << i;
        ASSERT_EQ(a.trace.size(), b.trace.size()) << spec << " kernel=" << kernel << " problem " << i;
        for (size_t t = 0; t < a.trace.size(); ++t) {
          EXPECT_EQ(a.trace[t].iteration, b.trace[t].iteration);
          EXPECT_EQ(a.trace[t].position_error, b.trace[t].position_error)
              << spec << " kernel=" << kernel << " problem " << i << " record " << t;
          EXPECT_EQ(a.trace[t].orientation_error, b.trace[t].orientation_error);
          EXPECT_EQ(a.trace[t].step_norm, b.trace[t].step_norm);
          EXPECT_EQ(a.trace[t].damping, b.trace[t].damping);
          EXPECT_TRUE(a.trace[t].q == b.trace[t].q) << spec << " kernel=" << kernel << " problem " << i << " record " << t;
        }
      }
      const Summary& a = packed.summaries[i];
      converged += a.converged();
      frozen_or_failed += !a.converged();
      if (a.converged()) {
        const GoalErrors e = test::goalErrorsAt(problems[i], packed.q[i]);
        EXPECT_LE(e.position, o.position_tolerance) << spec << " problem " << i;
        EXPECT_LE(e.orientation, o.orientation_tolerance) << spec << " problem " << i;
      }
    }
    std::printf("%s (%s): kernel=packed, auto and lanes bitwise equal on %zu problems (%d converged)\n", spec.c_str(),
                portable ? "portable" : batchIsaName().c_str(), problems.size(), converged);
    EXPECT_GT(converged, static_cast<int>(problems.size()) / 3) << spec;
    EXPECT_GT(frozen_or_failed, 0) << spec;  // the far targets
  }
}

}  // namespace
}  // namespace ikbench
