// The Ceres backends: the manifold, the templated residual, analytic vs
// autodiff Jacobians (ceres::GradientChecker), convergence checked by FK and
// limits, and the mapping of options, trace and statuses.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "../solvers/src/ceres/ceres_ik.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

using test::expectReached;
using test::poseProblems;

using ceres_ik::BallJointManifold;
using ceres_ik::GoalCost;

// A chain with revolute, prismatic and ball joints (the first seed from 0
// whose random types include all three), with limits.
std::shared_ptr<const Model> mixedChain(int joints, std::uint64_t* seed_out = nullptr) {
  ChainSpec cs;
  cs.joints = joints;
  cs.revolute = 1.0;
  cs.ball = 0.6;
  cs.prismatic = 0.6;
  cs.limit = 2.0;
  for (std::uint64_t seed = 0;; ++seed) {
    auto m = randomChain(cs, seed);
    if (m->hasJointType(JointType::kRevolute) && m->hasJointType(JointType::kPrismatic) &&
        m->hasJointType(JointType::kBall)) {
      if (seed_out) *seed_out = seed;
      return m;
    }
  }
}

TEST(BallJointManifold, PlusIsIkbenchIntegrateAndMinusInvertsIt) {
  const double inf = std::numeric_limits<double>::infinity();
  const double lo[3] = {-inf, -inf, -inf}, hi[3] = {inf, inf, inf};
  BallJointManifold m(lo, hi);
  // A one-ball model gives ikbench's integrate() for comparison.
  JointSpec ball;
  ball.name = "b";
  ball.type = JointType::kBall;
  const Model model({ball});
  Rng rng(7);
  for (int t = 0; t < 50; ++t) {
    const Eigen::Vector4d x = rng.rotation().coeffs();
    Eigen::Vector3d w = rng.unitVector() * rng.uniform(0.0, 3.0);
    Eigen::Vector4d y;
    ASSERT_TRUE(m.Plus(x.data(), w.data(), y.data()));
    const Eigen::VectorXd expect = integrate(model, Eigen::VectorXd(x), Eigen::VectorXd(w));
    // Same rotation (q and -q are the same).
    EXPECT_NEAR(std::abs(y.dot(expect)), 1.0, 1e-12);
    Eigen::Vector3d back;
    ASSERT_TRUE(m.Minus(y.data(), x.data(), back.data()));
    EXPECT_LE((back - w).norm(), 1e-10);
    // PlusJacobian by central differences of Plus; MinusJacobian its left inverse.
    Eigen::Matrix<double, 4, 3, Eigen::RowMajor> P, Pn;
    Eigen::Matrix<double, 3, 4, Eigen::RowMajor> M;
    m.PlusJacobian(x.data(), P.data());
    m.MinusJacobian(x.data(), M.data());
    for (int k = 0; k < 3; ++k) {
      const double h = 1e-6;
      Eigen::Vector3d d = Eigen::Vector3d::Zero();
      Eigen::Vector4d yp, ym;
      d[k] = h;
      m.Plus(x.data(), d.data(), yp.data());
      d[k] = -h;
      m.Plus(x.data(), d.data(), ym.data());
      Pn.col(k) = (yp - ym) / (2 * h);
    }
    EXPECT_LE((P - Pn).cwiseAbs().maxCoeff(), 1e-8);
    EXPECT_LE((M * P - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff(), 1e-12);
  }
}

TEST(BallJointManifold, ProjectsIntoRotationVectorLimits) {
  const double lo[3] = {-0.5, -0.5, -0.5}, hi[3] = {0.5, 0.5, 0.5};
  BallJointManifold m(lo, hi);
  const Eigen::Vector4d x = Eigen::Quaterniond::Identity().coeffs();
  const Eigen::Vector3d w(0.9, -0.2, 0.0);  // first component beyond its bound
  Eigen::Vector4d y;
  m.Plus(x.data(), w.data(), y.data());
  const Eigen::Vector3d r = so3::logQuat(Eigen::Quaterniond(y[3], y[0], y[1], y[2]));
  EXPECT_NEAR(r[0], 0.5, 1e-12);
  EXPECT_NEAR(r[1], -0.2, 1e-12);
  // Inside the box, Plus(x, 0) = x.
  const Eigen::Vector3d zero = Eigen::Vector3d::Zero();
  m.Plus(y.data(), zero.data(), y.data());
  EXPECT_NEAR(so3::logQuat(Eigen::Quaterniond(y[3], y[0], y[1], y[2]))[0], 0.5, 1e-12);
}

TEST(RotationLog, MatchesSo3LogIncludingNearZeroAndPi) {
  Rng rng(3);
  std::vector<Eigen::Vector3d> ws;
  for (int t = 0; t < 40; ++t) ws.push_back(rng.unitVector() * rng.uniform(0.0, std::numbers::pi));
  for (double a : {0.0, 1e-9, 1e-6, 1e-3, std::numbers::pi - 1e-3, std::numbers::pi - 1e-7, std::numbers::pi})
    ws.push_back(rng.unitVector() * a);
  for (const Eigen::Vector3d& w : ws) {
    const Eigen::Matrix3d R = so3::exp<double>(w);
    const Eigen::Vector3d a = ceres_ik::rotationLog<double>(R);
    const Eigen::Vector3d b = so3::log(R);
    // At angle pi, w and -w are the same rotation.
    EXPECT_LE(std::min((a - b).norm(), (a + b).norm()), 1e-9) << w.transpose();
  }
  // The Jet version has finite derivatives at the identity (no sqrt(0)).
  using J = ceres::Jet<double, 3>;
  Vec3<J> w(J(0.0, 0), J(0.0, 1), J(0.0, 2));
  const Vec3<J> e = ceres_ik::rotationLog<J>(so3::exp<J>(w));
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE(std::isfinite(e[k].a));
    EXPECT_TRUE(e[k].v.allFinite());
    EXPECT_NEAR(e[k].v[k], 1.0, 1e-12);  // d log(exp(w)) / dw = I at 0
  }
}

// Parameter block pointers of a goal cost into q.
std::vector<const double*> blockPointers(const GoalCost& cost, const Eigen::VectorXd& q) {
  std::vector<const double*> out;
  for (const auto& b : cost.blocks()) out.push_back(q.data() + b.q_offset);
  return out;
}

// A cost whose Jacobian is wrong in one entry: the gradient check must catch it.
class WrongJacobian final : public ceres::CostFunction {
 public:
  explicit WrongJacobian(const ceres::CostFunction& inner) : inner_(inner) {
    set_num_residuals(inner.num_residuals());
    *mutable_parameter_block_sizes() = inner.parameter_block_sizes();
  }
  bool Evaluate(double const* const* p, double* r, double** J) const override {
    if (!inner_.Evaluate(p, r, J)) return false;
    if (J && J[0]) J[0][0] += 0.05;
    return true;
  }

 private:
  const ceres::CostFunction& inner_;
};

// Largest difference between the cost function's and the numeric local
// (tangent-space) Jacobians of a GradientChecker probe, relative to the
// Jacobian's scale. (Probe's own verdict is entry-wise relative, which exact
// zeros fail: an orientation row against a prismatic joint is 0 analytically
// and ~1e-14 by differences.)
double probeError(const ceres::GradientChecker::ProbeResults& r) {
  double err = 0.0, scale = 1.0;
  for (size_t b = 0; b < r.local_jacobians.size(); ++b) {
    err = std::max(err, (r.local_jacobians[b] - r.local_numeric_jacobians[b]).cwiseAbs().maxCoeff());
    scale = std::max(scale, r.local_numeric_jacobians[b].cwiseAbs().maxCoeff());
  }
  return err / scale;
}

TEST(CeresCost, AnalyticAndAutodiffJacobiansPassGradientCheckerAndAgree) {
  std::vector<std::shared_ptr<const Model>> models = {mixedChain(6), mixedChain(9)};
  ChainSpec cs;
  cs.joints = 7;
  cs.limit = 2.5;
  models.push_back(randomChain(cs, 11));
  int probes = 0;
  for (const auto& model : models) {
    ASSERT_TRUE(model->hasJointType(JointType::kRevolute));
    Rng rng(Rng::mix(42, model->nq()));
    for (GoalKind kind : {GoalKind::kPose, GoalKind::kPosition, GoalKind::kOrientation}) {
      for (int t = 0; t < 4; ++t) {
        // Target = FK of a nearby configuration (rotation errors well below
        // pi, where the principal log jumps and differences mean nothing).
        const Eigen::VectorXd q = randomConfiguration(*model, rng);
        Eigen::VectorXd dq(model->nv());
        for (int k = 0; k < dq.size(); ++k) dq[k] = rng.uniform(-0.3, 0.3);
        const Eigen::VectorXd qt = integrate(*model, q, dq);
        Data d(*model);
        forwardKinematics(*model, qt, d);
        Goal g;
        g.body = model->numJoints() - 1;
        g.kind = kind;
        g.point = Eigen::Vector3d(0.05, -0.02, 0.03);
        g.target_position = d.world_T_body[g.body].act(g.point);
        g.target_orientation = d.world_T_body[g.body].R;
        g.weight = 1.5;
        g.orientation_scale = 0.7;
        GoalCost analytic(model, g, false), autodiff(model, g, true);
        const auto manifolds = analytic.manifolds();
        const auto params = blockPointers(analytic, q);
        ceres::NumericDiffOptions nd;
        ceres::GradientChecker check_a(&analytic, &manifolds, nd), check_b(&autodiff, &manifolds, nd);
        ceres::GradientChecker::ProbeResults ra, rb;
        check_a.Probe(params.data(), 1e-6, &ra);
        check_b.Probe(params.data(), 1e-6, &rb);
        ASSERT_TRUE(ra.return_value && rb.return_value);
        const std::string what = model->name() + " " + std::string(toString(kind));
        EXPECT_LE(probeError(ra), 1e-6) << what << "\n" << ra.error_log;
        EXPECT_LE(probeError(rb), 1e-6) << what << "\n" << rb.error_log;
        EXPECT_LE((ra.residuals - rb.residuals).cwiseAbs().maxCoeff(), 1e-12) << what;
        ASSERT_EQ(ra.local_jacobians.size(), rb.local_jacobians.size());
        for (size_t b = 0; b < ra.local_jacobians.size(); ++b)
          EXPECT_LE((ra.local_jacobians[b] - rb.local_jacobians[b]).cwiseAbs().maxCoeff(), 1e-10)
              << what << " block " << b;
        // The check is not vacuous: one wrong entry is caught.
        WrongJacobian wrong(analytic);
        ceres::GradientChecker check_w(&wrong, &manifolds, nd);
        ceres::GradientChecker::ProbeResults rw;
        check_w.Probe(params.data(), 1e-6, &rw);
        EXPECT_GT(probeError(rw), 1e-3) << what;
        ++probes;
      }
    }
  }
  EXPECT_EQ(probes, 36);
}

TEST(CeresSolvers, ConvergeOnReachableRandomChainsCheckedByFk) {
  SolverOptions o;
  for (const char* spec : {"ceres-lm", "ceres-lm:autodiff=1", "ceres-dogleg",
                           "ceres-lm:linear_solver=dense_normal_cholesky"}) {
    auto solver = Registry::global().create(std::string(spec) + ":restarts=10");
    int converged = 0, total = 0;
    for (int joints : {6, 7}) {
      const std::vector<Problem> problems = poseProblems(joints, 3, 4);
      total += static_cast<int>(problems.size());
      converged += test::solveAllChecked(
          *solver, problems, o, spec,
          [](const Summary& s) {
            EXPECT_GT(s.fk_evals, 0);
            EXPECT_GT(s.jacobian_evals, 0);
          },
          test::expectMessage);
    }
    // Measured 20/24 for every variant (dls with 10 restarts: 20/24 too);
    // the rest end in local minima against the limits.
    EXPECT_GE(converged, 18) << spec << ": " << converged << "/" << total;
  }
}

TEST(CeresSolvers, BallAndPrismaticChainsConvergeWithinLimits) {
  SolverOptions o;
  std::uint64_t seed = 0;
  const auto model = mixedChain(6, &seed);
  GoalSetSpec gs;
  gs.count = 8;
  gs.kind = GoalKind::kPose;
  for (const char* spec : {"ceres-lm:restarts=10", "ceres-lm:autodiff=1:restarts=10"}) {
    auto solver = Registry::global().create(spec);
    const int converged = test::solveAllChecked(*solver, reachableGoals(model, gs, 77, "mixed"), o, spec);
    EXPECT_GE(converged, 7) << spec;
  }
}

TEST(CeresSolvers, TraceIterationsAndStoppingRulesComeFromTheContext) {
  const auto problems = poseProblems(7, 1, 1);
  const Problem& p = problems[0];
  SolverOptions o;
  o.record_trace = true;
  auto lm = Registry::global().create("ceres-lm");
  Eigen::VectorXd q = p.q0;
  Summary s = lm->solve(p, q, o);
  ASSERT_TRUE(s.converged()) << s.message;
  const Eigen::VectorXd q_solved = q;
  ASSERT_EQ(static_cast<int>(s.trace.size()), s.iterations + 1);
  EXPECT_EQ(s.trace.front().iteration, 0);
  EXPECT_EQ(s.trace.back().iteration, s.iterations);
  EXPECT_LE(s.trace.back().position_error, o.position_tolerance);
  EXPECT_GT(s.trace.front().position_error, o.position_tolerance);
  for (size_t i = 1; i < s.trace.size(); ++i) {
    EXPECT_GE(s.trace[i].elapsed_us, s.trace[i - 1].elapsed_us);
    EXPECT_GT(s.trace[i].damping, 0.0);  // 1 / trust-region radius
  }
  // Iteration cap: exactly max_iterations iterations, status max-iterations.
  auto capped = Registry::global().create("ceres-lm:max_iterations=2");
  q = p.q0;
  s = capped->solve(p, q, o);
  EXPECT_EQ(s.status, Status::kMaxIterations) << s.message;
  EXPECT_EQ(s.iterations, 2);
  // Tiny budget: time-limit (the start evaluation alone takes longer than 1 us).
  auto timed = Registry::global().create("ceres-lm:time_budget_us=1");
  q = p.q0;
  s = timed->solve(p, q, o);
  EXPECT_EQ(s.status, Status::kTimeLimit) << s.message;
  // Already solved: zero iterations.
  Eigen::VectorXd q_done = q_solved;
  const Summary again = lm->solve(p, q_done, SolverOptions{});
  EXPECT_TRUE(again.converged());
  EXPECT_EQ(again.iterations, 0);
}

TEST(CeresSolvers, ReusedProblemGivesTheSameResultAsAFreshOne) {
  const auto problems = poseProblems(7, 2, 3);
  SolverOptions o;
  auto reused = Registry::global().create("ceres-lm");
  // Solve everything once (the problem is rebuilt when the model changes),
  // then compare each with a fresh solver.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Problem& p : problems) {
      Eigen::VectorXd q1 = p.q0, q2 = p.q0;
      const Summary a = reused->solve(p, q1, o);
      auto fresh = Registry::global().create("ceres-lm");
      const Summary b = fresh->solve(p, q2, o);
      EXPECT_EQ(a.status, b.status) << p.name;
      EXPECT_EQ(a.iterations, b.iterations) << p.name;
      EXPECT_LE((q1 - q2).cwiseAbs().maxCoeff(), 0.0) << p.name;
    }
  }
  // A different goal structure on the same model (position goal) is rebuilt.
  const auto pos = poseProblems(7, 1, 1, GoalKind::kPosition);
  Eigen::VectorXd q = pos[0].q0;
  EXPECT_TRUE(reused->solve(pos[0], q, o).converged());
  expectReached(pos[0], q, o, "ceres-lm position");
}

TEST(CeresSolvers, UnreachableTargetDoesNotConvergeAndSaysWhy) {
  auto model = test::planarChain({0.3, 0.3, 0.3});
  Problem p;
  p.model = model;
  p.name = "far";
  Goal g;
  g.body = model->numJoints() - 1;
  g.kind = GoalKind::kPosition;
  g.target_position = Eigen::Vector3d(2.0, 0.5, 0.0);
  p.goals = {g};
  p.q0 = model->neutralConfiguration();
  for (const char* spec : {"ceres-lm", "ceres-dogleg", "ceres-lm:autodiff=1"}) {
    Eigen::VectorXd q = p.q0;
    const Summary s = Registry::global().create(spec)->solve(p, q, SolverOptions{});
    EXPECT_FALSE(s.converged()) << spec;
    EXPECT_TRUE(s.status == Status::kStalled || s.status == Status::kMaxIterations) << spec << " " << toString(s.status);
    EXPECT_FALSE(s.message.empty()) << spec;
    EXPECT_TRUE(q.allFinite());
    // The arm points at the target: the best it can do.
    Data d(*model);
    forwardKinematics(*model, q, d);
    EXPECT_NEAR((d.world_T_body[g.body].p - g.target_position).norm(),
                g.target_position.norm() - 0.9, 1e-4) << spec;
  }
}

TEST(CeresSolvers, SpecErrors) {
  EXPECT_THROW(Registry::global().create("ceres-lm:linear_solver=sparse"), SpecError);
  EXPECT_THROW(Registry::global().create("ceres-lm:autodiff=maybe"), SpecError);
  EXPECT_NO_THROW(Registry::global().create("ceres-dogleg:autodiff=1:linear_solver=dense_normal_cholesky"));
}

}  // namespace
}  // namespace ikbench
