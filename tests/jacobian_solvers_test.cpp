// The Jacobian family of backends: jt, gd-momentum, pinv, gn, dls,
// dls-adaptive, dls-marquardt, lm, sdls. Every converged result is checked by
// an independent forward kinematics of the returned q and by the limits.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

const std::vector<std::string> kSpecs = {"jt",  "gd-momentum",   "pinv", "gn",  "dls", "dls-adaptive",
                                         "dls-marquardt", "lm", "sdls"};

// FK of q against every goal, and the limits; true if all within tolerance.
bool reached(const Problem& p, const Eigen::VectorXd& q, const SolverOptions& o) {
  Data d(*p.model);
  forwardKinematics(*p.model, q, d);
  for (const Goal& g : p.goals) {
    if (hasPosition(g.kind) && (d.world_T_body[g.body].act(g.point) - g.target_position).norm() > o.position_tolerance)
      return false;
    if (hasOrientation(g.kind) &&
        so3::angle(g.target_orientation * d.world_T_body[g.body].R.transpose()) > o.orientation_tolerance)
      return false;
  }
  return withinLimits(*p.model, q);
}

// A small tree built by hand: a two-joint trunk that splits into `branches`
// branches of `depth` revolute joints with random axes, limits +-2.5 rad and a
// fixed tip on each branch (the leaves that reachableGoals() targets).
std::shared_ptr<const Model> randomTree(std::uint64_t seed, int branches = 2, int depth = 3) {
  Rng rng(seed);
  std::vector<JointSpec> joints;
  auto revolute = [&](const std::string& name, int parent, double length) {
    JointSpec j = test::revolute(name, parent, Eigen::Vector3d(0, 0, length), rng.unitVector());
    j.lower = Eigen::VectorXd::Constant(1, -2.5);
    j.upper = Eigen::VectorXd::Constant(1, 2.5);
    joints.push_back(j);
    return static_cast<int>(joints.size()) - 1;
  };
  const int trunk = revolute("r1", revolute("r0", -1, 0.0), rng.uniform(0.1, 0.3));
  for (int b = 0; b < branches; ++b) {
    int parent = trunk;
    for (int k = 0; k < depth; ++k)
      parent = revolute("b" + std::to_string(b) + "_" + std::to_string(k), parent, rng.uniform(0.1, 0.3));
    joints.push_back(test::fixed("tip" + std::to_string(b), parent, Eigen::Vector3d(0, 0, rng.uniform(0.1, 0.3))));
  }
  return std::make_shared<const Model>(std::move(joints), "tree" + std::to_string(seed));
}

struct ConvergenceFamily {
  std::string name;
  bool tree;
  GoalKind kind;
  int models, goals_per_model, restarts, max_iterations;
};

// The four families the README's table reports (with other seeds and more
// problems there): 7-DOF random chains with limits +-2.5 rad, and the 8-DOF
// two-leaf trees above, each with position and with pose goals, started from
// the middle of the limits (the stretched, singular configuration).
const std::vector<ConvergenceFamily> kFamilies = {
    {"chain7-position", false, GoalKind::kPosition, 5, 8, 2, 500},
    {"chain7-pose", false, GoalKind::kPose, 4, 5, 4, 200},
    {"tree8-position", true, GoalKind::kPosition, 4, 5, 4, 200},
    {"tree8-pose", true, GoalKind::kPose, 4, 5, 4, 200},
};

struct Rates {
  std::string spec;
  int min_converged[4];  // per family, out of the family's problem count
};

// Thresholds a little below what each backend reaches on exactly these
// problems (measured: see the comment at each row; totals 40/20/20/20).
const std::vector<Rates> kRates = {
    // Measured on these problems (Release, GCC 12), then lowered by about 10%.
    // A 0 is for first-order methods on pose goals, run there as one short
    // attempt (see the test) that they do not solve: no rate is asserted
    // there, only the per-solve checks.
    {"jt", {37, 0, 3, 0}},             // measured 40  0  5  0 (pose: one 100-iteration attempt)
    {"gd-momentum", {36, 0, 9, 0}},    // measured 39  0 11  0
    {"pinv", {37, 13, 12, 9}},         // measured 40 15 14 11
    {"gn", {35, 10, 12, 9}},           // measured 38 12 14 11
    {"dls", {37, 11, 16, 9}},          // measured 40 13 18 11
    {"dls-adaptive", {37, 13, 15, 11}},// measured 40 15 17 13
    {"dls-marquardt", {37, 9, 15, 9}}, // measured 40 11 17 11
    {"lm", {37, 12, 15, 8}},           // measured 40 14 17 10
    {"sdls", {37, 10, 15, 10}},        // measured 40 12 17 12
};

class JacobianBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(JacobianBackend, ConvergesOnRandomChainsAndTreesCheckedByFk) {
  const std::string& spec = GetParam();
  const Rates* rates = nullptr;
  for (const Rates& r : kRates)
    if (r.spec == spec) rates = &r;
  ASSERT_NE(rates, nullptr);
  for (size_t f = 0; f < kFamilies.size(); ++f) {
    const ConvergenceFamily& fam = kFamilies[f];
    // First-order methods do not reach 1e-5 on pose goals within these caps
    // (README: 0-4%); one short attempt still checks FK, finiteness and limits
    // without spending the sanitizer build's time on hopeless restarts.
    const bool first_order = spec == "jt" || spec == "gd-momentum";
    const bool short_run = first_order && fam.kind == GoalKind::kPose;
    auto solver = Registry::global().create(spec + ":restarts=" + std::to_string(short_run ? 0 : fam.restarts));
    SolverOptions o;
    o.max_iterations = short_run ? 100 : fam.max_iterations;
    int converged = 0, total = 0;
    for (int s = 0; s < fam.models; ++s) {
      std::shared_ptr<const Model> model;
      if (fam.tree) {
        model = randomTree(300 + s);
      } else {
        ChainSpec cs;
        cs.joints = 7;
        cs.limit = 2.5;
        model = randomChain(cs, 100 + s);
      }
      GoalSetSpec gs;
      gs.count = fam.goals_per_model;
      gs.kind = fam.kind;
      for (const Problem& p : reachableGoals(model, gs, 40 + s, fam.name)) {
        Eigen::VectorXd q = p.q0;
        o.seed = static_cast<std::uint64_t>(total);
        const Summary sum = solver->solve(p, q, o);
        ++total;
        ASSERT_TRUE(q.allFinite()) << spec << " " << p.name;
        EXPECT_TRUE(withinLimits(*p.model, q)) << spec << " " << p.name;
        EXPECT_TRUE(std::isfinite(sum.position_error) && std::isfinite(sum.orientation_error));
        if (sum.converged()) {
          EXPECT_TRUE(reached(p, q, o)) << spec << " " << p.name << ": reported converged, FK disagrees";
          ++converged;
        }
      }
    }
    if (rates->min_converged[f] > 0)
      EXPECT_GE(converged, rates->min_converged[f]) << spec << " on " << fam.name << ": " << converged << " of " << total;
    RecordProperty(spec + "/" + fam.name, converged);
    std::printf("[ rate     ] %-14s %-16s %2d / %2d\n", spec.c_str(), fam.name.c_str(), converged, total);
  }
}

// A planar 3-link chain (reach 1.5 m) and one position goal on its tip.
Problem planarProblem(const Eigen::Vector3d& target, const Eigen::VectorXd& q0) {
  Problem p;
  p.model = test::planarChain({0.5, 0.5, 0.5});
  p.name = "planar";
  p.q0 = q0;
  p.goals.resize(1);
  p.goals[0].body = 3;
  p.goals[0].target_position = target;
  return p;
}

// A spatial 4-DOF chain (redundant for a position goal, so DOF weights
// matter; planar chains have a zero z row, on which gn fails by design), with
// DOF 0's weight set to w0.
std::shared_ptr<const Model> spatialChain(double w0 = 1.0) {
  ChainSpec cs;
  cs.joints = 4;
  const auto base = randomChain(cs, 7);
  std::vector<JointSpec> joints;
  for (int i = 0; i < base->numJoints(); ++i) joints.push_back(base->joint(i));
  joints[0].weight = Eigen::VectorXd::Constant(1, w0);
  return std::make_shared<const Model>(std::move(joints), "spatial4");
}

Problem spatialProblem(const std::shared_ptr<const Model>& model, const Eigen::VectorXd& q_target) {
  Data d(*model);
  forwardKinematics(*model, q_target, d);
  Problem p;
  p.model = model;
  p.name = "spatial";
  p.q0 = Eigen::Vector4d(0.3, -0.4, 0.5, 0.2);
  p.goals.resize(1);
  p.goals[0].body = model->numJoints() - 1;
  p.goals[0].target_position = d.world_T_body.back().p;
  return p;
}

TEST_P(JacobianBackend, HeavyDofWeightMovesThatDofLess) {
  // One iteration; DOF 0 gets weight 100 (a motion cost), so a weighted
  // method moves it much less than with unit weights.
  auto solver = Registry::global().create(GetParam() + ":max_iterations=1");
  SolverOptions o;
  double moved[2];
  for (int k = 0; k < 2; ++k) {
    const Problem p = spatialProblem(spatialChain(k == 0 ? 1.0 : 100.0), Eigen::Vector4d(1.0, 0.5, -0.6, 0.8));
    Eigen::VectorXd q = p.q0;
    solver->solve(p, q, o);
    moved[k] = std::abs(q[0] - p.q0[0]);
  }
  ASSERT_GT(moved[0], 1e-4) << GetParam();
  EXPECT_LT(moved[1], 0.5 * moved[0]) << GetParam();
}

TEST_P(JacobianBackend, MaxStepClampsEveryJointChange) {
  const Problem p = spatialProblem(spatialChain(), Eigen::Vector4d(1.0, 0.5, -0.6, 0.8));
  auto solver = Registry::global().create(GetParam() + ":max_iterations=1:max_step=0.01");
  SolverOptions o;
  Eigen::VectorXd q = p.q0;
  solver->solve(p, q, o);
  EXPECT_GT((q - p.q0).norm(), 0.0) << GetParam();
  EXPECT_LE((q - p.q0).cwiseAbs().maxCoeff(), 0.01 + 1e-12) << GetParam();
}

TEST_P(JacobianBackend, GoalWeightsTradeOffConflictingGoals) {
  // Two position goals, on the tip and on the body before it, whose targets
  // (11 cm apart from a joint solution) cannot both be met: the weighted
  // least-squares optimum leaves the heavier goal with the smaller error.
  const auto model = spatialChain();
  const Eigen::VectorXd q_target = Eigen::Vector4d(1.0, 0.5, -0.6, 0.8);
  Problem p = spatialProblem(model, q_target);
  Data d(*model);
  forwardKinematics(*model, q_target, d);
  Goal inner;
  inner.body = model->numJoints() - 2;
  inner.target_position = d.world_T_body[inner.body].p + Eigen::Vector3d(0.1, 0.05, 0.0);
  p.goals.push_back(inner);
  p.goals[0].weight = 4.0;
  auto solver = Registry::global().create(GetParam());
  SolverOptions o;
  Eigen::VectorXd q = p.q0;
  const Summary s = solver->solve(p, q, o);
  EXPECT_FALSE(s.converged());
  forwardKinematics(*p.model, q, d);
  const double e0 = (d.world_T_body[p.goals[0].body].p - p.goals[0].target_position).norm();
  const double e1 = (d.world_T_body[inner.body].p - inner.target_position).norm();
  EXPECT_LT(e0, e1) << GetParam() << " " << toString(s.status) << " " << s.message;
}

TEST_P(JacobianBackend, FreezeLimitModeConvergesWithinTightLimits) {
  ChainSpec cs;
  cs.joints = 7;
  cs.limit = 1.0;
  auto solver = Registry::global().create(GetParam() + ":limits=freeze:restarts=3");
  SolverOptions o;
  o.max_iterations = 200;
  int converged = 0, total = 0;
  for (int s = 0; s < 3; ++s) {
    GoalSetSpec gs;
    gs.count = 6;
    for (const Problem& p : reachableGoals(randomChain(cs, 500 + s), gs, 9 + s, "tight")) {
      Eigen::VectorXd q = p.q0;
      const Summary sum = solver->solve(p, q, o);
      ++total;
      EXPECT_TRUE(q.allFinite() && withinLimits(*p.model, q));
      if (sum.converged()) {
        EXPECT_TRUE(reached(p, q, o)) << GetParam() << " " << p.name;
        ++converged;
      }
    }
  }
  std::printf("[ rate     ] %-14s freeze, tight   %2d / %2d\n", GetParam().c_str(), converged, total);
  // First-order methods are slow; the rest nearly always get there.
  const bool first_order = GetParam() == "jt" || GetParam() == "gd-momentum";
  EXPECT_GE(converged, first_order ? total / 2 : total - 2) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Specs, JacobianBackend, ::testing::ValuesIn(kSpecs),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(JacobianFamily, RegistryDeclaresEveryBackendWithCitationAndDocumentedParams) {
  const auto list = Registry::global().list();
  for (const std::string& spec : kSpecs) {
    const SolverInfo* info = nullptr;
    for (const SolverInfo& i : list)
      if (i.name == spec) info = &i;
    ASSERT_NE(info, nullptr) << spec;
    for (const ParamInfo& p : info->params) {
      EXPECT_FALSE(p.help.empty()) << spec << ":" << p.name;
      EXPECT_NO_THROW(Registry::global().create(spec + ":" + p.name + "=" + p.default_value)) << spec << ":" << p.name;
    }
    EXPECT_THROW(Registry::global().create(spec + ":limits=bogus"), SpecError) << spec;
    EXPECT_THROW(Registry::global().create(spec + ":max_step=-1"), SpecError) << spec;
    EXPECT_THROW(Registry::global().create(spec + ":jacobian=bogus"), SpecError) << spec;
  }
  EXPECT_THROW(Registry::global().create("jt:alpha=-1"), SpecError);
  EXPECT_THROW(Registry::global().create("jt:null_gain=0.5"), SpecError);  // not a linear step: no null space
  EXPECT_THROW(Registry::global().create("gd-momentum:beta=1"), SpecError);
  EXPECT_THROW(Registry::global().create("pinv:rcond=1.5"), SpecError);
  EXPECT_THROW(Registry::global().create("dls:null_gain=2"), SpecError);
  EXPECT_THROW(Registry::global().create("dls:null_target=elsewhere"), SpecError);
  EXPECT_THROW(Registry::global().create("dls-adaptive:mode=magic"), SpecError);
  EXPECT_THROW(Registry::global().create("dls-marquardt:relax=2"), SpecError);
  EXPECT_THROW(Registry::global().create("lm:tau=0"), SpecError);
  EXPECT_THROW(Registry::global().create("sdls:gamma_max=0"), SpecError);
  // The pre-existing dls spec keeps its parameters and defaults.
  EXPECT_NO_THROW(Registry::global().create("dls:lambda=0.05:max_step=0.5"));
}

// At the straight, singular start with the target on the chain's line, the
// normal matrix of Gauss-Newton is singular: gn refuses the step.
TEST(JacobianFamily, GnReportsNumericalFailureAtTheSingularStart) {
  const Problem p = planarProblem({1.5 + 1e-3, 0, 0}, Eigen::VectorXd::Zero(3));
  Eigen::VectorXd q = p.q0;
  const Summary s = Registry::global().create("gn")->solve(p, q, SolverOptions{});
  EXPECT_EQ(s.status, Status::kNumericalFailure) << s.message;
  EXPECT_TRUE(q.allFinite());
  EXPECT_NEAR(s.position_error, 1e-3, 1e-9);
}

TEST(JacobianFamily, JacobianTransposeUsesBussStepAndFixedAlpha) {
  // One iteration from q0: with Buss's alpha the new error is the minimum of
  // |e - alpha J J^T e| over alpha to first order, so it beats a tiny fixed
  // step and a huge one.
  const Eigen::VectorXd q0 = Eigen::Vector3d(0.3, 0.6, 0.9);
  const Problem p = planarProblem({0.6, 1.0, 0}, q0);
  SolverOptions o;
  auto err = [&](const std::string& spec) {
    Eigen::VectorXd q = q0;
    return Registry::global().create(spec + ":max_iterations=1:max_step=0")->solve(p, q, o).position_error;
  };
  const double buss = err("jt"), small = err("jt:alpha=0.01"), big = err("jt:alpha=20");
  EXPECT_LT(buss, small);
  EXPECT_LT(buss, big);
}

TEST(JacobianFamily, NullSpacePullsRedundantChainTowardTheMiddleOfItsLimits) {
  ChainSpec cs;
  cs.joints = 7;
  cs.limit = 2.5;
  GoalSetSpec gs;
  gs.count = 10;
  gs.start = StartPolicy::kRandom;
  const auto model = randomChain(cs, 42);
  const Eigen::VectorXd mid = model->middleConfiguration();
  for (const std::string base : {"dls", "pinv", "dls-adaptive", "dls-marquardt"}) {
    auto plain = Registry::global().create(base);
    auto pulled = Registry::global().create(base + ":null_gain=0.2");
    SolverOptions o;
    double d_plain = 0, d_pulled = 0;
    int both = 0;
    for (const Problem& p : reachableGoals(model, gs, 11, "ns")) {
      Eigen::VectorXd q1 = p.q0, q2 = p.q0;
      const bool c1 = plain->solve(p, q1, o).converged();
      const bool c2 = pulled->solve(p, q2, o).converged();
      if (c2) EXPECT_TRUE(reached(p, q2, o)) << base;
      if (!(c1 && c2)) continue;
      ++both;
      d_plain += (q1 - mid).norm();
      d_pulled += (q2 - mid).norm();
    }
    EXPECT_GE(both, 5) << base;
    EXPECT_LT(d_pulled, 0.8 * d_plain) << base << ": the secondary objective did not act";
  }
}

TEST(JacobianFamily, FreezeKeepsASaturatedJointOnItsLimitAndUsesTheOthers) {
  // Joint 0 of a planar 3-link chain may only turn within [-0.2, 0.2]; the
  // target needs the chain swung further, so joint 0 saturates and the other
  // joints must make up for it.
  auto base = test::planarChain({0.5, 0.5, 0.5});
  std::vector<JointSpec> joints;
  for (int i = 0; i < base->numJoints(); ++i) joints.push_back(base->joint(i));
  joints[0].lower = Eigen::VectorXd::Constant(1, -0.2);
  joints[0].upper = Eigen::VectorXd::Constant(1, 0.2);
  auto model = std::make_shared<const Model>(std::move(joints), "limited");
  Data d(*model);
  const Eigen::VectorXd q_target = Eigen::Vector3d(0.2, 0.9, 0.6);
  forwardKinematics(*model, q_target, d);
  Problem p = planarProblem(d.world_T_body[3].p, Eigen::Vector3d(0.0, 0.1, 0.1));
  p.model = model;
  for (const std::string spec : {"dls:limits=freeze", "lm:limits=freeze", "pinv:limits=freeze", "sdls:limits=freeze"}) {
    Eigen::VectorXd q = p.q0;
    SolverOptions o;
    const Summary s = Registry::global().create(spec)->solve(p, q, o);
    EXPECT_TRUE(s.converged()) << spec << " " << toString(s.status) << " " << s.message;
    EXPECT_TRUE(reached(p, q, o)) << spec;
    EXPECT_LE(q[0], 0.2) << spec;
  }
}

}  // namespace
}  // namespace ikbench

namespace ikbench {
namespace {

// limits=auto is the freeze loop on a redundant problem (fewer goal rows than
// DOFs) and the clamp otherwise: the same answers as the mode it picks.
TEST(JacobianFamily, AutoLimitModeFreezesRedundantProblemsAndClampsTheOthers) {
  for (int joints : {6, 7}) {
    ChainSpec cs;
    cs.joints = joints;
    cs.limit = 1.2;  // tight limits: the mode matters
    const auto model = randomChain(cs, 41);
    GoalSetSpec gs;
    gs.count = 12;
    gs.kind = GoalKind::kPose;
    const std::string picked = joints > 6 ? "freeze" : "clamp", other = joints > 6 ? "clamp" : "freeze";
    auto a = Registry::global().create("dls:limits=auto");
    auto b = Registry::global().create("dls:limits=" + picked);
    auto c = Registry::global().create("dls:limits=" + other);
    int differs_from_other = 0;
    for (const Problem& p : reachableGoals(model, gs, 42, "auto-limits")) {
      Eigen::VectorXd qa = p.q0, qb = p.q0, qc = p.q0;
      const Summary sa = a->solve(p, qa, SolverOptions{});
      const Summary sb = b->solve(p, qb, SolverOptions{});
      c->solve(p, qc, SolverOptions{});
      EXPECT_EQ(qa, qb) << joints << " joints";
      EXPECT_EQ(sa.iterations, sb.iterations);
      differs_from_other += qa != qc;
    }
    EXPECT_GT(differs_from_other, 0) << joints << " joints: the two modes never differed, the test proves nothing";
  }
}

}  // namespace
}  // namespace ikbench
