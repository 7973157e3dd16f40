// analytic-6r and analytic-7r: the subproblems, class detection, and every
// solution of seeded random reachable targets on the shipped UR5, synthetic
// arms built with ikbench::Model directly (rotated base and tool frames, axes
// given in arbitrary joint frames), random arms of each class, and the corpus
// arms (ABB IRB 2400, KUKA KR 210; skipped when absent). A solution counts
// only when the kinematics' forwardKinematics of the returned q reaches the
// target.
#include "../solvers/src/analytic/analytic_ik.h"

#include <gtest/gtest.h>

#include <Eigen/SVD>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <numeric>

#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/registry.h"
#include "test_util.h"

namespace ikbench {
namespace {

constexpr double kPi = std::numbers::pi;
// Every returned solution reaches the target by FK to this [m, rad].
constexpr double kExact = 1e-10;
// The generating configuration is among the solutions to this joint-space
// distance (revolute angles modulo 2 pi) [rad].
constexpr double kRecovered = 1e-6;
// "Away from singularities": the smallest singular value of the 6 x 6 pose
// Jacobian (m and rad rows) at the generating configuration is above this.
// It vanishes at every singularity at once (wrist: axes 4 and 6 aligned;
// shoulder: the wrist point on axis 1; elbow: stretched or folded), so
// targets above it are well-conditioned; the others are counted apart.
constexpr double kAway = 1e-3;

const std::string kShipped = std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/robots/";
const std::string kSynthetic = std::string(IKBENCH_SOURCE_DIR) + "/scenarios/data/synthetic/";

std::string corpusRobot(const std::string& file) {
  return test::corpusFile("robots/" + file);
}

std::shared_ptr<const Model> loadArm(const std::string& path, const std::string& base, const std::string& tip) {
  UrdfOptions o;
  o.base = base;
  o.tip = tip;
  return loadUrdf(path, o).model;
}

// The same model without joint limits (every solution counts).
std::shared_ptr<const Model> unlimited(const Model& m) {
  std::vector<JointSpec> js;
  for (int i = 0; i < m.numJoints(); ++i) {
    JointSpec j = m.joint(i);
    j.lower.resize(0);
    j.upper.resize(0);
    js.push_back(j);
  }
  return std::make_shared<const Model>(std::move(js), m.name());
}

Problem posePoseProblem(std::shared_ptr<const Model> model, int body, const Eigen::Vector3d& point,
                        const Eigen::VectorXd& q_gen) {
  Data d(*model);
  forwardKinematics(*model, q_gen, d);
  Goal g;
  g.body = body;
  g.point = point;
  g.kind = GoalKind::kPose;
  g.target_position = d.world_T_body[body].act(point);
  g.target_orientation = d.world_T_body[body].R;
  Problem p;
  p.model = model;
  p.goals = {g};
  p.q0 = model->middleConfiguration();
  p.name = "pose";
  return p;
}

// Independent check: FK of q against the goal.
struct FkError {
  double position, orientation;
};
FkError fkError(const Problem& p, const Eigen::VectorXd& q, Data* data = nullptr) {
  std::unique_ptr<Data> own;
  if (!data) data = (own = std::make_unique<Data>(*p.model)).get();
  forwardKinematics(*p.model, q, *data);
  const Goal& g = p.goals[0];
  return {(data->world_T_body[g.body].act(g.point) - g.target_position).norm(),
          so3::angle(g.target_orientation * data->world_T_body[g.body].R.transpose())};
}

// Smallest singular value of the 6 x n pose Jacobian of the chain at q
// (without the column of chain joint `held`, when given).
double sigmaMin(const Problem& p, const Eigen::VectorXd& q, Data* data = nullptr, int held = -1) {
  std::unique_ptr<Data> own;
  if (!data) data = (own = std::make_unique<Data>(*p.model)).get();
  forwardKinematics(*p.model, q, *data);
  goalJacobian(*p.model, p.goals, *data);
  std::vector<int> chain = p.model->supportingJoints(p.goals[0].body);
  if (held >= 0) chain.erase(chain.begin() + held);
  Eigen::MatrixXd J(6, chain.size());
  for (size_t i = 0; i < chain.size(); ++i) J.col(i) = data->J.col(p.model->idxV(chain[i]));
  return Eigen::JacobiSVD<Eigen::MatrixXd>(J).singularValues().minCoeff();
}

// Sets the problem's single goal to the effector pose at q.
void targetAt(Problem& p, const Eigen::VectorXd& q, Data& data) {
  forwardKinematics(*p.model, q, data);
  Goal& g = p.goals[0];
  g.target_position = data.world_T_body[g.body].act(g.point);
  g.target_orientation = data.world_T_body[g.body].R;
}

// The solutions a solve returned (q alone when it returned one).
std::vector<Eigen::VectorXd> returned(const Summary& s, const Eigen::VectorXd& q) {
  if (!s.solutions.empty()) return s.solutions;
  if (s.converged()) return {q};
  return {};
}

double nearest(const Model& m, const std::vector<Eigen::VectorXd>& sols, const Eigen::VectorXd& q) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& s : sols) best = std::min(best, configurationDistance(m, s, q, /*modulo_2pi=*/true));
  return best;
}

analytic::Chain6 chainOf(const Problem& p) {
  std::vector<int> joints;
  std::string why;
  EXPECT_TRUE(analytic::revoluteChain(*p.model, p.goals[0].body, 6, &joints, &why)) << why;
  return analytic::chainAtZero<6>(*p.model, joints, p.goals[0].body, p.goals[0].point);
}

// ------------------------------------------------------- synthetic arms --

// A 6R (or any-R) arm from its world geometry at q = 0: unit axes h_i through
// points o_i, the effector frame (R_tool, p_tool). Each joint frame gets a
// seeded random orientation Q_i, so parent_T_joint carries arbitrary rotations
// and each axis is given in its joint frame as Q_i^T h_i (never a principal
// axis); a fixed root joint holds an arbitrary base transform and a fixed
// "tool" joint the tool transform.
std::shared_ptr<const Model> buildArm(const std::vector<Eigen::Vector3d>& h, const std::vector<Eigen::Vector3d>& o,
                                      const Eigen::Matrix3d& R_tool, const Eigen::Vector3d& p_tool, std::uint64_t seed,
                                      double limit = 0.0) {
  Rng rng(seed);
  Pose3d base;
  base.R = rng.rotation().toRotationMatrix();
  base.p = rng.unitVector() * 0.3;
  std::vector<JointSpec> js;
  JointSpec b;
  b.name = "base";
  b.type = JointType::kFixed;
  b.parent_T_joint = base;
  js.push_back(b);
  Pose3d world_T_prev = base;
  for (size_t i = 0; i < h.size(); ++i) {
    Pose3d world_T_joint;
    world_T_joint.R = rng.rotation().toRotationMatrix();
    world_T_joint.p = o[i];
    JointSpec j;
    j.name = "j" + std::to_string(i + 1);
    j.parent = static_cast<int>(js.size()) - 1;
    j.type = JointType::kRevolute;
    j.parent_T_joint = world_T_prev.inverse() * world_T_joint;
    j.axis = world_T_joint.R.transpose() * h[i] * (i % 2 ? -1.0 : 1.0);  // some axes opposed
    if (limit > 0.0) {
      j.lower = Eigen::VectorXd::Constant(1, -limit);
      j.upper = Eigen::VectorXd::Constant(1, limit);
    }
    js.push_back(j);
    world_T_prev = world_T_joint;
  }
  JointSpec t;
  t.name = "tool";
  t.parent = static_cast<int>(js.size()) - 1;
  t.type = JointType::kFixed;
  Pose3d world_T_tool;
  world_T_tool.R = R_tool;
  world_T_tool.p = p_tool;
  t.parent_T_joint = world_T_prev.inverse() * world_T_tool;
  js.push_back(t);
  return std::make_shared<const Model>(std::move(js), "arm");
}

// An ABB/KUKA-like arm (spherical wrist, axes 2 and 3 parallel, shoulder and
// lateral offsets) in a world frame rotated by `world`.
std::shared_ptr<const Model> industrialArm(const Pose3d& world, std::uint64_t seed, double lateral = 0.05,
                                           double limit = 0.0) {
  const Eigen::Vector3d X = Eigen::Vector3d::UnitX(), Y = Eigen::Vector3d::UnitY(), Z = Eigen::Vector3d::UnitZ();
  const Eigen::Vector3d c(0.95, lateral, 1.45);  // wrist centre
  std::vector<Eigen::Vector3d> h = {Z, Y, Y, X, Y, X};
  std::vector<Eigen::Vector3d> o = {{0, 0, 0.2}, {0.1, 0, 0.6}, {0.1, 0.02, 1.3}, c - 0.3 * X, c, c + 0.1 * X};
  for (auto& v : h) v = world.R * v;
  for (auto& v : o) v = world.act(v);
  const Eigen::Matrix3d R_tool = world.R * Eigen::AngleAxisd(0.4, Eigen::Vector3d(1, 2, 3).normalized()).matrix();
  return buildArm(h, o, R_tool, world.act(c + Eigen::Vector3d(0.12, 0.03, -0.02)), seed, limit);
}

Pose3d someWorld(std::uint64_t seed) {
  Rng rng(seed);
  Pose3d w;
  w.R = rng.rotation().toRotationMatrix();
  w.p = rng.unitVector();
  return w;
}

// Random arms of each class: seeded random axes and points, then the class's
// constraints imposed (axes made parallel, points put on other axes).
enum class RandomClass { kWristParallel23, kWristIntersect12, kWristIntersect23, kThreeParallel };
std::shared_ptr<const Model> randomArm(RandomClass cls, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Eigen::Vector3d> h(6), o(6);
  for (int i = 0; i < 6; ++i) {
    h[i] = rng.unitVector();
    o[i] = 0.4 * rng.unitVector() + Eigen::Vector3d(0, 0, 0.25 * i);
  }
  if (cls == RandomClass::kThreeParallel) {
    h[2] = h[1];
    h[3] = -h[1];
    // Axes 5 and 6 meet at a point of axis 5.
    const Eigen::Vector3d meet = o[4] + rng.uniform(-0.2, 0.2) * h[4];
    o[5] = meet + rng.uniform(-0.2, 0.2) * h[5];
  } else {
    const Eigen::Vector3d c = o[4];
    o[3] = c + rng.uniform(-0.3, 0.3) * h[3];
    o[5] = c + rng.uniform(-0.3, 0.3) * h[5];
    if (cls == RandomClass::kWristParallel23) h[2] = h[1];
    if (cls == RandomClass::kWristIntersect12) o[1] = o[0] + rng.uniform(0.2, 0.5) * h[0];
    if (cls == RandomClass::kWristIntersect23) o[2] = o[1] + rng.uniform(0.2, 0.5) * h[1];
  }
  const Eigen::Matrix3d R_tool = rng.rotation().toRotationMatrix();
  const Eigen::Vector3d p_tool = o[5] + 0.2 * rng.unitVector();
  return buildArm(h, o, R_tool, p_tool, seed + 1000);
}

int toolBody(const Model& m) { return m.bodyIndex("tool"); }

// ------------------------------------------------------------ the sweep --

struct SweepStats {
  int targets = 0, away = 0, near_singular = 0;
  int recovered_away = 0, strict_success_away = 0;
  int recovered_near = 0, converged_near = 0;
  int max_solutions = 0;
  long solutions = 0;
  double worst_position = 0, worst_orientation = 0;
};

// `n` targets = FK of seeded random configurations within limits; every
// returned solution checked by FK; the generating configuration looked up.
SweepStats sweep(const std::string& what, std::shared_ptr<const Model> model, int body, const Eigen::Vector3d& point,
                 int n, std::uint64_t seed, const std::string& spec = "analytic-6r") {
  auto solver = Registry::global().create(spec);
  SolverOptions o;
  Rng rng(seed);
  SweepStats st;
  Data data(*model);
  Problem p = posePoseProblem(model, body, point, model->neutralConfiguration());
  for (int t = 0; t < n; ++t) {
    const Eigen::VectorXd q_gen = randomConfiguration(*model, rng);
    targetAt(p, q_gen, data);
    Eigen::VectorXd q = p.q0;
    const Summary s = solver->solve(p, q, o);
    const std::vector<Eigen::VectorXd> sols = returned(s, q);
    ++st.targets;
    st.solutions += static_cast<long>(sols.size());
    st.max_solutions = std::max(st.max_solutions, static_cast<int>(sols.size()));
    EXPECT_TRUE(q.allFinite()) << what << " target " << t;
    for (const auto& x : sols) {
      const FkError e = fkError(p, x, &data);
      st.worst_position = std::max(st.worst_position, e.position);
      st.worst_orientation = std::max(st.worst_orientation, e.orientation);
      EXPECT_TRUE(withinLimits(*model, x)) << what << " target " << t;
    }
    const bool away = sigmaMin(p, q_gen, &data) > kAway;
    const bool found = nearest(*model, sols, q_gen) <= kRecovered;
    const bool strict = s.converged() && s.within_limits;
    if (away) {
      ++st.away;
      st.recovered_away += found;
      st.strict_success_away += strict;
      EXPECT_TRUE(found) << what << " target " << t << ": generating configuration not among " << sols.size()
                         << " solutions (nearest " << nearest(*model, sols, q_gen) << ") " << s.message;
      EXPECT_TRUE(strict) << what << " target " << t << ": " << toString(s.status) << " " << s.message;
    } else {
      ++st.near_singular;
      st.recovered_near += found;
      st.converged_near += s.converged();
    }
  }
  EXPECT_LE(st.worst_position, kExact) << what;
  EXPECT_LE(st.worst_orientation, kExact) << what;
  EXPECT_LE(st.max_solutions, 8) << what;
  std::printf(
      "[ sweep    ] %-28s %d targets: %d away (recovered %d, strict success %d), %d near-singular (recovered %d, "
      "converged %d); %.2f solutions/target (max %d); worst FK error %.2e m %.2e rad\n",
      what.c_str(), st.targets, st.away, st.recovered_away, st.strict_success_away, st.near_singular, st.recovered_near,
      st.converged_near, static_cast<double>(st.solutions) / st.targets, st.max_solutions, st.worst_position,
      st.worst_orientation);
  return st;
}

// ========================================================== subproblems ==

TEST(AnalyticSubproblems, RecoverSeededRandomAngles) {
  using namespace analytic;
  Rng rng(11);
  for (int t = 0; t < 2000; ++t) {
    const Eigen::Vector3d k = rng.unitVector(), k2 = rng.unitVector();
    const Eigen::Vector3d p = rng.unitVector() * rng.uniform(0.1, 2), q2 = rng.unitVector() * rng.uniform(0.1, 2);
    const double th = rng.uniform(-kPi, kPi), th2 = rng.uniform(-kPi, kPi);
    const CosSin a = CosSin::of(th), b = CosSin::of(th2);
    // SP1
    CosSin r;
    ASSERT_TRUE(subproblem1(k, p, rotate(k, a, p), &r));
    EXPECT_NEAR(std::remainder(r.angle() - th, 2 * kPi), 0.0, 1e-9);
    // SP3 and SP4: the generating angle is one of the roots.
    const Eigen::Vector3d v = rotate(k, a, p);
    for (const Roots& roots : {subproblem3(k, p, q2, (v - q2).norm()), subproblem4(q2, k, p, q2.dot(v))}) {
      ASSERT_GE(roots.count, 1);
      double best = 10;
      for (int i = 0; i < roots.count; ++i)
        best = std::min(best, std::abs(std::remainder(roots.t[i].angle() - th, 2 * kPi)));
      EXPECT_LE(best, 1e-6) << t;
      for (int i = 0; i < roots.count; ++i)  // every root solves it
        EXPECT_NEAR((rotate(k, roots.t[i], p) - q2).norm(), (v - q2).norm(), 1e-9);
    }
    // SP2: R(k, th) p = R(k2, th2) p2 with p2 = R(k2, -th2) R(k, th) p.
    const Eigen::Vector3d p2 = rotate(k2, b.inverse(), v);
    const Roots2 r2 = subproblem2(k, p, k2, p2, 0, 0);
    ASSERT_GE(r2.count, 1);
    double best = 10;
    for (int i = 0; i < r2.count; ++i) {
      EXPECT_LE((rotate(k, r2.t1[i], p) - rotate(k2, r2.t2[i], p2)).norm(), 1e-9);
      best = std::min(best, std::abs(std::remainder(r2.t1[i].angle() - th, 2 * kPi)) +
                                std::abs(std::remainder(r2.t2[i].angle() - th2, 2 * kPi)));
    }
    EXPECT_LE(best, 1e-6) << t;
  }
}

TEST(AnalyticSubproblems, DegenerateAndUnreachableCases) {
  using namespace analytic;
  const Eigen::Vector3d z = Eigen::Vector3d::UnitZ(), x = Eigen::Vector3d::UnitX();
  CosSin t;
  EXPECT_FALSE(subproblem1(z, 2 * z, z, &t));          // p on the axis: any angle
  EXPECT_EQ(subproblem3(z, x, -x, 3.0).count, 0);      // |R x + x| <= 2 < 3
  const Roots stretched = subproblem3(z, x, -x, 2.0);  // boundary: one double root at 0
  ASSERT_EQ(stretched.count, 1);
  EXPECT_TRUE(stretched.double_root);
  EXPECT_NEAR(stretched.t[0].angle(), 0.0, 1e-12);
  EXPECT_TRUE(subproblem4(z, z, x, 0.0).any);   // a on the axis, d matches
  EXPECT_FALSE(subproblem4(z, z, x, 0.5).any);  // a on the axis, d does not
  EXPECT_EQ(subproblem4(z, z, x, 0.5).count, 0);
  const Roots2 free = subproblem2(z, 2 * z, x, 2 * z, 0.7, 0.0);  // p1 on k1: t1 takes the hint
  ASSERT_EQ(free.count, 1);
  EXPECT_TRUE(free.free1);
  EXPECT_NEAR(free.t1[0].angle(), 0.7, 1e-12);
}

// The two-lane atan2 the spherical wrist's angles go through returns, bit
// for bit, what the scalar atan2Fast returns: on seeded random pairs of every
// magnitude and sign, and on the branch points of its reduction (|y| = |x|,
// the 0.66 switch, zeros of either sign, infinities, NaN).
TEST(AnalyticSubproblems, TwoLaneAtan2IsBitForBitTheScalar) {
  auto same = [](double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(double)) == 0;
  };
  std::vector<double> values = {0.0,  -0.0, 1.0,  -1.0, 0.66, -0.66, 1.0 / 0.66, std::nextafter(0.66, 1.0),
                                1e-300, -1e300, std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  Rng rng(511);
  for (int i = 0; i < 400; ++i) values.push_back(rng.uniform(-1.0, 1.0) * std::pow(10.0, rng.uniform(-8.0, 8.0)));
  int checked = 0;
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t j = 0; j < values.size(); j += 7) {
      const double y[2] = {values[i], values[j]}, x[2] = {values[j], values[(i + j) % values.size()]};
      double out[2];
      analytic::atan2Fast2(y, x, out);
      for (int l = 0; l < 2; ++l) {
        ASSERT_TRUE(same(out[l], atan2Fast(y[l], x[l]))) << y[l] << " " << x[l] << ": " << out[l];
        ++checked;
      }
    }
  EXPECT_GT(checked, 10000);
}

// ======================================================= classification ==

TEST(AnalyticClass, ShippedUr5HasThreeParallelAxes) {
  const auto model = loadArm(kShipped + "ur5.urdf", "", "");
  const Problem p =
      posePoseProblem(model, model->bodyIndex("tool0"), Eigen::Vector3d::Zero(), model->neutralConfiguration());
  analytic::Plan6 plan;
  std::string why;
  ASSERT_TRUE(analytic::classify6(chainOf(p), &plan, &why)) << why;
  EXPECT_EQ(plan.arm_class, analytic::ArmClass::kThreeParallel);
  EXPECT_FALSE(plan.reversed);
  EXPECT_EQ(analytic::describe(plan), "three parallel axes (joints 2, 3, 4), axes 5 and 6 meet");
}

TEST(AnalyticClass, SyntheticSphericalWristArmsInRotatedFrames) {
  for (std::uint64_t seed : {1, 2, 3}) {
    const auto model = industrialArm(someWorld(seed), seed);
    const Problem p =
        posePoseProblem(model, toolBody(*model), Eigen::Vector3d(0.01, 0.02, 0.03), model->neutralConfiguration());
    analytic::Plan6 plan;
    std::string why;
    ASSERT_TRUE(analytic::classify6(chainOf(p), &plan, &why)) << why;
    EXPECT_EQ(plan.arm_class, analytic::ArmClass::kSphericalWrist);
    EXPECT_EQ(plan.position, analytic::PositionCase::kParallel23);
    EXPECT_EQ(analytic::describe(plan), "spherical wrist (axes of joints 4, 5, 6 meet), axes 2 and 3 parallel");
    // The wrist centre found is where the arm was built to have it.
    const Pose3d world = someWorld(seed);
    EXPECT_LE((plan.c - world.act(Eigen::Vector3d(0.95, 0.05, 1.45))).norm(), 1e-12);
  }
  // Each positioning case on random arms, and the reversed chain (a
  // spherical shoulder) of a random wrist arm.
  const std::pair<RandomClass, analytic::PositionCase> cases[] = {
      {RandomClass::kWristParallel23, analytic::PositionCase::kParallel23},
      {RandomClass::kWristIntersect12, analytic::PositionCase::kIntersect12},
      {RandomClass::kWristIntersect23, analytic::PositionCase::kIntersect23}};
  for (const auto& [cls, pos] : cases) {
    const auto model = randomArm(cls, 40);
    const Problem p = posePoseProblem(model, toolBody(*model), Eigen::Vector3d::Zero(), model->neutralConfiguration());
    analytic::Plan6 plan;
    std::string why;
    ASSERT_TRUE(analytic::classify6(chainOf(p), &plan, &why)) << why;
    EXPECT_EQ(plan.arm_class, analytic::ArmClass::kSphericalWrist);
    EXPECT_EQ(plan.position, pos);
    EXPECT_FALSE(plan.reversed);
  }
}

TEST(AnalyticClass, ReversedChainIsASphericalShoulder) {
  // The industrial arm read backwards: its first three axes meet.
  const auto arm = industrialArm(someWorld(5), 5, 0.0);
  const Problem p = posePoseProblem(arm, toolBody(*arm), Eigen::Vector3d::Zero(), arm->neutralConfiguration());
  const analytic::Chain6 c = chainOf(p);
  std::vector<Eigen::Vector3d> h, o;
  for (int i = 5; i >= 0; --i) {
    h.push_back(c.h[i]);
    o.push_back(c.o[i]);
  }
  const auto shoulder = buildArm(h, o, Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0, -0.3), 77);
  const Problem ps =
      posePoseProblem(shoulder, toolBody(*shoulder), Eigen::Vector3d::Zero(), shoulder->neutralConfiguration());
  analytic::Plan6 plan;
  std::string why;
  ASSERT_TRUE(analytic::classify6(chainOf(ps), &plan, &why)) << why;
  EXPECT_TRUE(plan.reversed);
  EXPECT_EQ(analytic::describe(plan), "spherical shoulder (axes of joints 1, 2, 3 meet), axes 4 and 5 parallel");
}

TEST(AnalyticClass, CorpusIndustrialArmsHaveSphericalWrists) {
  for (const char* file : {"abb_irb2400.urdf", "kuka_kr210l150.urdf", "ur5.urdf"}) {
    const std::string path = corpusRobot(file);
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus file missing: " << path;
    const auto model = loadArm(path, "base_link", "tool0");
    const Problem p =
        posePoseProblem(model, model->bodyIndex("tool0"), Eigen::Vector3d::Zero(), model->neutralConfiguration());
    analytic::Plan6 plan;
    std::string why;
    ASSERT_TRUE(analytic::classify6(chainOf(p), &plan, &why)) << file << ": " << why;
    EXPECT_EQ(plan.arm_class, std::string(file) == "ur5.urdf" ? analytic::ArmClass::kThreeParallel
                                                              : analytic::ArmClass::kSphericalWrist)
        << file;
    std::printf("[ class    ] %s: %s\n", file, analytic::describe(plan).c_str());
  }
}

TEST(AnalyticClass, RandomAxisChainIsUnsupportedWithTheReason) {
  ChainSpec cs;
  cs.joints = 6;
  const auto model = randomChain(cs, 3);
  const Problem p =
      posePoseProblem(model, model->bodyIndex("tip"), Eigen::Vector3d::Zero(), model->neutralConfiguration());
  auto solver = Registry::global().create("analytic-6r");
  Eigen::VectorXd q = p.q0;
  const Summary s = solver->solve(p, q, SolverOptions{});
  EXPECT_EQ(s.status, Status::kUnsupported);
  std::printf("[ message  ] %s\n", s.message.c_str());
  EXPECT_NE(s.message.find("no supported 6R class"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("do not meet in one point"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("are not parallel"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("'j3'"), std::string::npos) << s.message;  // joints named
  EXPECT_EQ(q, p.q0);
}

TEST(AnalyticClass, AWristMissingByAMicrometreIsUnsupported) {
  // The tolerance is 1e-9 x the arm's size (about 3 m here): 1e-6 m is out.
  const Eigen::Vector3d X = Eigen::Vector3d::UnitX(), Y = Eigen::Vector3d::UnitY(), Z = Eigen::Vector3d::UnitZ();
  const Eigen::Vector3d c(0.9, 0, 1.4);
  for (double miss : {1e-6, 1e-12}) {
    const std::vector<Eigen::Vector3d> h = {Z, Y, Y, X, Y, X};
    const std::vector<Eigen::Vector3d> o = {{0, 0, 0}, {0.1, 0, 0.6}, {0.1, 0, 1.3}, c, c + miss * Z, c};
    const auto model = buildArm(h, o, Eigen::Matrix3d::Identity(), c + 0.1 * X, 9);
    const Problem p = posePoseProblem(model, toolBody(*model), Eigen::Vector3d::Zero(), model->neutralConfiguration());
    analytic::Plan6 plan;
    std::string why;
    const bool ok = analytic::classify6(chainOf(p), &plan, &why);
    EXPECT_EQ(ok, miss < 1e-9) << miss << ": " << why;
    if (!ok) EXPECT_NE(why.find("joints 4, 5, 6 do not meet in one point"), std::string::npos) << why;
  }
}

TEST(AnalyticClass, GoalsOtherThanOnePoseAreUnsupported) {
  const auto model = loadArm(kShipped + "ur5.urdf", "", "");
  Problem p = posePoseProblem(model, model->bodyIndex("tool0"), Eigen::Vector3d::Zero(), model->neutralConfiguration());
  auto solver = Registry::global().create("analytic-6r");
  for (GoalKind kind : {GoalKind::kPosition, GoalKind::kOrientation}) {
    Problem q = p;
    q.goals[0].kind = kind;
    const Summary s = solver->solve(q, SolverOptions{});
    EXPECT_EQ(s.status, Status::kUnsupported);
    EXPECT_NE(s.message.find(std::string(toString(kind)) + " goal"), std::string::npos) << s.message;
  }
  Problem two = p;
  two.goals.push_back(p.goals[0]);
  const Summary s = solver->solve(two, SolverOptions{});
  EXPECT_EQ(s.status, Status::kUnsupported);
  EXPECT_NE(s.message.find("2 goals"), std::string::npos) << s.message;
  // A 7R chain is not a 6R.
  const auto iiwa = loadArm(kShipped + "iiwa14.urdf", "", "");
  const Problem p7 =
      posePoseProblem(iiwa, iiwa->bodyIndex("tool0"), Eigen::Vector3d::Zero(), iiwa->neutralConfiguration());
  const Summary s7 = solver->solve(p7, SolverOptions{});
  EXPECT_EQ(s7.status, Status::kUnsupported);
  EXPECT_NE(s7.message.find("exactly 6 revolute joints"), std::string::npos) << s7.message;
}

// ====================================================== random targets ==

TEST(Analytic6r, ShippedUr5TenThousandTargets) {
  const auto model = loadArm(kShipped + "ur5.urdf", "", "");
  const SweepStats st = sweep("shipped ur5", model, model->bodyIndex("tool0"), Eigen::Vector3d::Zero(), 10000, 101);
  EXPECT_GT(st.away, 9000);
}

TEST(Analytic6r, SyntheticIndustrialArmsTenThousandTargets) {
  // Rotated world, odd joint frames, a lateral offset, an effector point off
  // the tool origin; once with +-2.5 rad limits on every joint.
  const auto a = industrialArm(someWorld(21), 21);
  const SweepStats s1 = sweep("industrial arm", a, toolBody(*a), Eigen::Vector3d(0.02, -0.01, 0.05), 10000, 202);
  EXPECT_GT(s1.away, 9000);
  const auto b = industrialArm(someWorld(22), 22, 0.0, 2.5);
  const SweepStats s2 = sweep("industrial arm, limits", b, toolBody(*b), Eigen::Vector3d::Zero(), 3000, 203);
  EXPECT_GT(s2.away, 2700);
}

TEST(Analytic6r, RandomArmsOfEveryClass) {
  const std::pair<RandomClass, const char*> classes[] = {{RandomClass::kWristParallel23, "wrist, 2 || 3"},
                                                         {RandomClass::kWristIntersect12, "wrist, 1 meets 2"},
                                                         {RandomClass::kWristIntersect23, "wrist, 2 meets 3"},
                                                         {RandomClass::kThreeParallel, "three parallel"}};
  for (const auto& [cls, name] : classes)
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      const auto model = randomArm(cls, 300 + seed);
      sweep(std::string(name) + " #" + std::to_string(seed), model, toolBody(*model), Eigen::Vector3d::Zero(), 200,
            400 + seed);
    }
}

TEST(Analytic6r, SphericalShoulderArmTenThousandTargets) {
  // The industrial arm reversed (solved on the chain read from the tool).
  const auto arm = industrialArm(someWorld(5), 5, 0.03);
  const Problem p = posePoseProblem(arm, toolBody(*arm), Eigen::Vector3d::Zero(), arm->neutralConfiguration());
  const analytic::Chain6 c = chainOf(p);
  std::vector<Eigen::Vector3d> h, o;
  for (int i = 5; i >= 0; --i) {
    h.push_back(c.h[i]);
    o.push_back(c.o[i]);
  }
  const auto shoulder = buildArm(h, o, Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0.1, -0.3), 78);
  const SweepStats st = sweep("spherical shoulder", shoulder, toolBody(*shoulder), Eigen::Vector3d::Zero(), 3000, 204);
  EXPECT_GT(st.away, 2700);
}

void corpusSweep(const char* file, int n) {
  const std::string path = corpusRobot(file);
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus file missing: " << path;
  const auto model = loadArm(path, "base_link", "tool0");
  const SweepStats st = sweep(file, model, model->bodyIndex("tool0"), Eigen::Vector3d::Zero(), n, 205);
  EXPECT_GT(st.away, n * 8 / 10) << file;
}
TEST(Analytic6r, CorpusAbbIrb2400TenThousandTargets) { corpusSweep("abb_irb2400.urdf", 10000); }
TEST(Analytic6r, CorpusKukaKr210TenThousandTargets) { corpusSweep("kuka_kr210l150.urdf", 10000); }
TEST(Analytic6r, CorpusUr5Targets) { corpusSweep("ur5.urdf", 3000); }

// ===================================================== solution counts ==

// Every solution of the closed form is found by a numeric solver too, and
// nothing else: lm from 300 seeded random starts (each converged answer is
// an independent witness) must land only on returned solutions.
void expectNumericSolutionsAmong(const Problem& p, const std::vector<Eigen::VectorXd>& sols, int* distinct_found) {
  auto lm = Registry::global().create("lm");
  SolverOptions o;
  o.position_tolerance = o.orientation_tolerance = 1e-10;
  o.max_iterations = 200;
  Rng rng(77);
  std::vector<Eigen::VectorXd> seen;
  for (int i = 0; i < 300; ++i) {
    Eigen::VectorXd q = randomConfiguration(*p.model, rng);
    if (!lm->solve(p, q, o).converged()) continue;
    EXPECT_LE(nearest(*p.model, sols, q), 1e-6) << "numeric solution outside the closed form's set";
    if (nearest(*p.model, seen, q) > 1e-3) seen.push_back(q);
  }
  *distinct_found = static_cast<int>(seen.size());
}

TEST(Analytic6r, EightSolutionsOnAGenericUr5PoseWithUnlimitedJoints) {
  const auto model = unlimited(*loadArm(kShipped + "ur5.urdf", "", ""));
  Eigen::VectorXd q_gen(6);
  q_gen << 0.4, -1.1, 1.3, -0.8, 1.2, 0.6;
  const Problem p = posePoseProblem(model, model->bodyIndex("tool0"), Eigen::Vector3d::Zero(), q_gen);
  Eigen::VectorXd q = p.q0;
  const Summary s = Registry::global().create("analytic-6r")->solve(p, q, SolverOptions{});
  ASSERT_TRUE(s.converged()) << s.message;
  ASSERT_EQ(s.solutions.size(), 8u);  // the class's maximum, so the count is exact
  for (const auto& x : s.solutions) {
    EXPECT_LE(fkError(p, x).position, kExact);
    EXPECT_LE(fkError(p, x).orientation, kExact);
    int same = 0;
    for (const auto& y : s.solutions) same += configurationDistance(*model, x, y, true) < 1e-3;
    EXPECT_EQ(same, 1);  // pairwise distinct
  }
  EXPECT_LE(nearest(*model, s.solutions, q_gen), kRecovered);
  int numeric = 0;
  expectNumericSolutionsAmong(p, s.solutions, &numeric);
  EXPECT_EQ(numeric, 8) << "lm from 300 starts found " << numeric << " of the 8";
}

TEST(Analytic6r, EightOrFourSolutionsOnASphericalWristArm) {
  // Unlimited: 8 (shoulder front/back x elbow up/down x wrist flip). With q5
  // limited to [0.05, 3.1]: the wrist flip (q4 + pi, -q5, q6 + pi) of each
  // is outside, so exactly half remain.
  const auto arm = industrialArm(someWorld(31), 31, 0.05);
  Eigen::VectorXd q_gen(6);
  q_gen << 0.3, 0.4, -0.5, 0.7, 0.9, -0.4;
  const Problem p = posePoseProblem(arm, toolBody(*arm), Eigen::Vector3d::Zero(), q_gen);
  Eigen::VectorXd q = p.q0;
  auto solver = Registry::global().create("analytic-6r");
  const Summary s = solver->solve(p, q, SolverOptions{});
  ASSERT_TRUE(s.converged()) << s.message;
  ASSERT_EQ(s.solutions.size(), 8u);
  EXPECT_LE(nearest(*arm, s.solutions, q_gen), kRecovered);
  int numeric = 0;
  expectNumericSolutionsAmong(p, s.solutions, &numeric);
  EXPECT_EQ(numeric, 8);
  // The wrist-flip pairing, checked on the returned set.
  for (const auto& x : s.solutions) {
    Eigen::VectorXd flip = x;
    flip[3] += kPi;
    flip[4] = -flip[4];
    flip[5] += kPi;
    EXPECT_LE(nearest(*arm, s.solutions, flip), 1e-9);
  }
  std::vector<JointSpec> js;
  for (int i = 0; i < arm->numJoints(); ++i) js.push_back(arm->joint(i));
  js[5].lower = Eigen::VectorXd::Constant(1, 0.05);  // joint 5 (model index 5: base is 0)
  js[5].upper = Eigen::VectorXd::Constant(1, 3.1);
  const auto limited = std::make_shared<const Model>(std::move(js), "limited");
  const Problem pl = posePoseProblem(limited, toolBody(*limited), Eigen::Vector3d::Zero(), q_gen);
  Eigen::VectorXd ql = pl.q0;
  const Summary sl = solver->solve(pl, ql, SolverOptions{});
  ASSERT_TRUE(sl.converged()) << sl.message;
  EXPECT_EQ(sl.solutions.size(), 4u);
  for (const auto& x : sl.solutions) EXPECT_GT(x[4], 0.0);
}

// ====================================================== singular poses ==

Summary solveFrom(const Problem& p, Eigen::VectorXd& q, const std::string& spec = "analytic-6r") {
  return Registry::global().create(spec)->solve(p, q, SolverOptions{});
}

void expectFiniteAndReached(const Problem& p, const Summary& s, const Eigen::VectorXd& q) {
  EXPECT_TRUE(s.converged()) << s.message;
  EXPECT_TRUE(q.allFinite());
  for (const auto& x : returned(s, q)) {
    EXPECT_TRUE(x.allFinite());
    EXPECT_LE(fkError(p, x).position, 1e-9);
    EXPECT_LE(fkError(p, x).orientation, 1e-9);
  }
}

// On a joint with more than a turn of range (the UR5's +-2 pi) an angle has
// two representatives within the limits. From a start just below pi (or
// above -pi) on one joint, to a target whose solution lies just past it,
// the nearest solution is a small step on the same branch: the closed form
// returns the representative beyond pi, not the one a turn away (nor
// another branch that is nearer than that), for analytic-6r and for auto,
// which answers with it; as tracking a path through pi needs.
TEST(Analytic6r, NearestSolutionCrossesPiOnAJointWithMoreThanATurn) {
  const auto model = loadArm(kShipped + "ur5.urdf", "", "");
  const int body = model->bodyIndex("tool0");
  const double gen[6] = {0.3, -1.1, 1.4, -0.8, 1.2, 0.5};
  int compared = 0;
  for (const char* spec : {"analytic-6r", "auto"})
    for (int i = 0; i < 6; ++i)
      for (double side : {1.0, -1.0}) {
        if (model->upperLimits()[i] - model->lowerLimits()[i] <= 2 * kPi) continue;  // the elbow: +-pi
        Eigen::VectorXd start = model->neutralConfiguration(), past = start;
        for (int j = 0; j < 6; ++j) start[j] = past[j] = gen[j];
        start[i] = side * (kPi - 0.01);
        past[i] = side * (kPi + 0.01);
        Problem p = posePoseProblem(model, body, Eigen::Vector3d::Zero(), past);
        p.q0 = start;
        Eigen::VectorXd q = start;
        const Summary s = solveFrom(p, q, spec);
        ASSERT_TRUE(s.converged()) << spec << " joint " << i << ": " << s.message;
        EXPECT_LE((q - past).cwiseAbs().maxCoeff(), 1e-6)
            << spec << " joint " << i << " side " << side << ": q = " << q.transpose() << ", the solution past pi is "
            << past.transpose();
        ++compared;
      }
  EXPECT_EQ(compared, 20);  // five joints of +-2 pi, two sides, two specs
}

TEST(Analytic6r, SingularTargetsGiveFiniteSolutionsAndSaySo) {
  // UR5, q5 = 0: axis 6 parallel to axes 2-4.
  {
    const auto model = loadArm(kShipped + "ur5.urdf", "", "");
    Eigen::VectorXd q_gen(6);
    q_gen << 0.4, -1.1, 1.3, -0.8, 0.0, 0.6;
    Problem p = posePoseProblem(model, model->bodyIndex("tool0"), Eigen::Vector3d::Zero(), q_gen);
    p.q0 << 0.1, -1.0, 1.0, -0.5, 0.2, 0.25;
    Eigen::VectorXd q = p.q0;
    const Summary s = solveFrom(p, q);
    expectFiniteAndReached(p, s, q);
    EXPECT_NE(s.message.find("wrist singular"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("continuum"), std::string::npos) << s.message;
    EXPECT_NEAR(q[5], p.q0[5], 1e-12);  // the representative keeps the start's q6
  }
  // Spherical wrist, q5 = 0: axes 4 and 6 aligned.
  const auto arm = industrialArm(someWorld(41), 41, 0.0);
  {
    Eigen::VectorXd q_gen(6);
    q_gen << 0.3, 0.4, -0.5, 0.7, 0.0, -0.4;
    Problem p = posePoseProblem(arm, toolBody(*arm), Eigen::Vector3d::Zero(), q_gen);
    p.q0 << 0.2, 0.3, -0.4, 1.5, 0.1, 0.0;
    Eigen::VectorXd q = p.q0;
    const Summary s = solveFrom(p, q);
    expectFiniteAndReached(p, s, q);
    EXPECT_NE(s.message.find("wrist singular (axes of joints 4 and 6 aligned)"), std::string::npos) << s.message;
    EXPECT_NEAR(q[3], 1.5, 1e-12);  // q4 from the start, q6 takes up the rest
  }
  // Spherical wrist, wrist centre on axis 1 (no lateral offset: the wrist
  // centre's distance from axis 1 is |0.1 + 0.7 sin q2 + 0.85 cos(q2 + q3) ...|;
  // solved numerically for q3 below).
  {
    // Find q2, q3 with the wrist centre on axis 1 by bisection on q3.
    const Problem p0 = posePoseProblem(arm, toolBody(*arm), Eigen::Vector3d::Zero(), arm->neutralConfiguration());
    const analytic::Chain6 c = chainOf(p0);
    analytic::Plan6 plan;
    ASSERT_TRUE(analytic::classify6(c, &plan));
    auto offAxis = [&](double q3) {  // signed distance of the wrist centre from axis 1 in the arm's plane
      Eigen::VectorXd q = Eigen::VectorXd::Zero(6);
      q[1] = 0.9;
      q[2] = q3;
      Data d(*arm);
      forwardKinematics(*arm, q, d);
      const Eigen::Vector3d wc = d.world_T_body[5].p;  // joint 5's origin (model index 5) is the wrist centre
      const Eigen::Vector3d r = wc - c.o[0];
      const Eigen::Vector3d perp = r - c.h[0].dot(r) * c.h[0];
      return perp.dot(c.h[1].cross(c.h[0]));
    };
    // A bracket on a grid of q3, then bisection to rounding.
    double lo = -kPi, hi = -kPi;
    for (int i = 1; i <= 64 && hi == -kPi; ++i) {
      const double x = -kPi + 2 * kPi * i / 64;
      if (offAxis(x - 2 * kPi / 64) * offAxis(x) <= 0.0) lo = x - 2 * kPi / 64, hi = x;
    }
    ASSERT_LT(offAxis(lo) * offAxis(hi), 0.0);
    for (int i = 0; i < 200; ++i) {
      const double mid = 0.5 * (lo + hi);
      (offAxis(lo) * offAxis(mid) <= 0.0 ? hi : lo) = mid;
    }
    Eigen::VectorXd q_gen(6);
    q_gen << 0.0, 0.9, 0.5 * (lo + hi), 0.3, 0.8, 0.2;
    Problem p = posePoseProblem(arm, toolBody(*arm), Eigen::Vector3d::Zero(), q_gen);
    p.q0 << 0.6, 0, 0, 0, 0, 0;
    Eigen::VectorXd q = p.q0;
    const Summary s = solveFrom(p, q);
    expectFiniteAndReached(p, s, q);
    EXPECT_NE(s.message.find("shoulder singular"), std::string::npos) << s.message;
    EXPECT_NEAR(q[0], 0.6, 1e-12);  // q1 from the start
  }
  // Elbow fully stretched: the elbow's two solutions coincide (no continuum).
  {
    const Eigen::Vector3d X = Eigen::Vector3d::UnitX(), Y = Eigen::Vector3d::UnitY(), Z = Eigen::Vector3d::UnitZ();
    const Eigen::Vector3d wc(0.1, 0, 1.6);  // straight up at q = 0: elbow stretched
    const auto straight = buildArm({Z, Y, Y, Z, Y, Z}, {{0, 0, 0}, {0.1, 0, 0.4}, {0.1, 0, 1.0}, wc, wc, wc},
                                   Eigen::Matrix3d::Identity(), wc + 0.1 * Z + 0.05 * X, 5);
    Eigen::VectorXd q_gen(6);
    q_gen << 0.3, 0.5, 0.0, 0.2, 0.7, 0.1;
    const Problem p = posePoseProblem(straight, toolBody(*straight), Eigen::Vector3d::Zero(), q_gen);
    Eigen::VectorXd q = p.q0;
    const Summary s = solveFrom(p, q);
    expectFiniteAndReached(p, s, q);
    EXPECT_NE(s.message.find("elbow fully stretched"), std::string::npos) << s.message;
    EXPECT_LE(nearest(*straight, returned(s, q), q_gen), 1e-6);
  }
}

// The IKFast test's degenerate targets (OpenRAVE's ikfast.py: joints at 0,
// +-pi/2, pi): every configuration of the shipped UR5 and Puma 560 whose
// joints all take those values (within the limits), each solved from the
// middle of the limits; plus UR5 targets of the ikfast-test protocol (seed
// 20100601) with random values in the other joints. Singular ones abound:
// q5 = 0 or pi (the UR5's axis 6 parallel to axes 2-4, where q6 is free
// only as far as the planar 2R still reaches the position; the Puma's axes
// 4 and 6 aligned), q3 = 0 (the UR5's elbow stretched). Each must be solved
// and every returned solution must reach the target by FK.
void expectEverySolvedWithinLimits(const std::shared_ptr<const Model>& model, const std::vector<Eigen::VectorXd>& qs,
                                   const std::string& arm) {
  const int body = model->bodyIndex("tool0");
  for (const Eigen::VectorXd& q_gen : qs) {
    const Problem p = posePoseProblem(model, body, Eigen::Vector3d::Zero(), q_gen);
    Eigen::VectorXd q = p.q0;
    const Summary s = solveFrom(p, q);
    const std::vector<Eigen::VectorXd> sols = returned(s, q);
    ASSERT_TRUE(s.converged()) << arm << " q = " << q_gen.transpose() << ": " << s.message;
    ASSERT_FALSE(sols.empty());
    for (const auto& x : sols) {
      const FkError e = fkError(p, x);
      EXPECT_LE(e.position, 1e-9) << arm << " q = " << q_gen.transpose() << " -> " << x.transpose();
      EXPECT_LE(e.orientation, 1e-9) << arm << " q = " << q_gen.transpose() << " -> " << x.transpose();
      EXPECT_TRUE(withinLimits(*model, x)) << arm << " q = " << q_gen.transpose() << " -> " << x.transpose();
    }
  }
}

std::vector<Eigen::VectorXd> degenerateGrid(const Model& model) {
  const double v[] = {0.0, kPi / 2, -kPi / 2, kPi};
  std::vector<Eigen::VectorXd> qs;
  for (int code = 0; code < 4096; ++code) {
    Eigen::VectorXd q(6);
    for (int j = 0, c = code; j < 6; ++j, c /= 4) q[j] = v[c % 4];
    if (withinLimits(model, q)) qs.push_back(q);
  }
  return qs;
}

TEST(Analytic6r, IkfastDegenerateTargetsAreSolved) {
  const auto ur5 = loadArm(kShipped + "ur5.urdf", "", "");
  const auto puma = loadArm(kShipped + "puma560.urdf", "", "");
  std::vector<Eigen::VectorXd> ur5_q = degenerateGrid(*ur5);
  const std::vector<Eigen::VectorXd> puma_q = degenerateGrid(*puma);
  EXPECT_EQ(ur5_q.size(), 4096u);  // all within the UR5's limits
  EXPECT_GT(puma_q.size(), 500u);
  // ikfast-test protocol targets on the UR5 that the closed form once
  // reported as out of reach (the generating q, from its 'near:0' start).
  const double h = kPi / 2;
  for (const std::array<double, 6>& a : std::vector<std::array<double, 6>>{
           {-h, 0.03804024464312139, -0.13289801963118375, -h, kPi, -4.6264787252129365},
           {5.0889190128397885, kPi, 0.0, -0.8544261862490226, 0.0, h},
           {1.56260281690518, kPi, 0.37687757008589173, 3.8913105822931353, 0.0, 4.906866956126651},
           {kPi, kPi, -0.04423530429903311, -h, 0.0, 0.5605449439005081},
           {-2.029279787455387, 0.0, 0.19690870951727346, -1.2724157928830424, 0.0, -5.994476305663722},
           {kPi, -5.422474967027468, 0.0, -1.8479622012865935, kPi, h},
           {-h, -2.580749675671103, -0.4270834715462186, -h, 0.0, -1.3858752856659686},
           {0.0, h, 0.0, -h, kPi, 3.898962968582813},
           // also q1 at its reach boundary (a double root) and the elbow stretched
           {-3.2249155805579157, h, 0.0, -h, 0.0, -0.602537981219081},
           {-3.553548608786473, -h, 0.0, -h, kPi, -h}})
    ur5_q.push_back(Eigen::Map<const Eigen::VectorXd>(a.data(), 6));
  expectEverySolvedWithinLimits(ur5, ur5_q, "ur5");
  expectEverySolvedWithinLimits(puma, puma_q, "puma560");
}

TEST(Analytic6r, UnreachableAndOutOfLimitTargets) {
  const auto model = loadArm(kShipped + "ur5.urdf", "", "");
  Problem p = posePoseProblem(model, model->bodyIndex("tool0"), Eigen::Vector3d::Zero(), model->neutralConfiguration());
  p.goals[0].target_position = Eigen::Vector3d(3, 0, 0);
  Eigen::VectorXd q = p.q0;
  const Summary s = solveFrom(p, q);
  EXPECT_FALSE(s.converged());
  EXPECT_NE(s.message.find("out of reach"), std::string::npos) << s.message;
  EXPECT_TRUE(q.allFinite());
  EXPECT_EQ(s.numSolutions(), 1);  // q, not a solution list
  // Every solution outside tight limits on joint 1.
  std::vector<JointSpec> js;
  for (int i = 0; i < model->numJoints(); ++i) js.push_back(model->joint(i));
  const int pan = model->bodyIndex("shoulder_link");  // the joint moving it: shoulder_pan_joint
  js[pan].lower = Eigen::VectorXd::Constant(1, -0.1);
  js[pan].upper = Eigen::VectorXd::Constant(1, 0.1);
  const auto tight = std::make_shared<const Model>(std::move(js), "tight");
  Eigen::VectorXd q_gen(6);
  q_gen << 1.0, -1.1, 1.3, -0.8, 1.2, 0.6;
  const Problem pt = posePoseProblem(tight, tight->bodyIndex("tool0"), Eigen::Vector3d::Zero(), q_gen);
  Eigen::VectorXd qt = pt.q0;
  const Summary st = solveFrom(pt, qt);
  EXPECT_FALSE(st.converged());
  EXPECT_NE(st.message.find("none within the joint limits"), std::string::npos) << st.message;
}

TEST(Analytic6r, OneIterationAndATraceWhenAsked) {
  const auto model = loadArm(kShipped + "ur5.urdf", "", "");
  Eigen::VectorXd q_gen(6);
  q_gen << 0.4, -1.1, 1.3, -0.8, 1.2, 0.6;
  const Problem p = posePoseProblem(model, model->bodyIndex("tool0"), Eigen::Vector3d::Zero(), q_gen);
  auto solver = Registry::global().create("analytic-6r:restarts=5");
  SolverOptions o;
  Eigen::VectorXd q = p.q0;
  Summary s = solver->solve(p, q, o);
  EXPECT_TRUE(s.converged());
  EXPECT_EQ(s.iterations, 1);
  EXPECT_EQ(s.restarts, 0);
  EXPECT_EQ(s.fk_evals, 0);  // the closed form does no FK of its own
  o.record_trace = true;
  q = p.q0;
  s = solver->solve(p, q, o);
  EXPECT_TRUE(s.converged());
  ASSERT_EQ(s.trace.size(), 2u);
  EXPECT_LE(s.trace[1].position_error, kExact);
  // q is the solution closest to the start.
  double best = std::numeric_limits<double>::infinity();
  for (const auto& x : s.solutions) best = std::min(best, (x - p.q0).norm());
  EXPECT_DOUBLE_EQ((q - p.q0).norm(), best);
}

// ================================================================== 7R ==

struct Arm7 {
  std::shared_ptr<const Model> model;
  int body = -1;
  std::vector<int> joints;
  analytic::Chain7 chain;
  std::array<double, 7> lo, hi;
};
Arm7 arm7(const std::string& path, const std::string& base, const std::string& tip) {
  Arm7 a;
  a.model = loadArm(path, base, tip);
  a.body = a.model->bodyIndex(tip);
  std::string why;
  EXPECT_TRUE(analytic::revoluteChain(*a.model, a.body, 7, &a.joints, &why)) << why;
  a.chain = analytic::chainAtZero<7>(*a.model, a.joints, a.body, Eigen::Vector3d::Zero());
  for (int i = 0; i < 7; ++i) {
    a.lo[i] = a.model->lowerLimits()[a.model->idxV(a.joints[i])];
    a.hi[i] = a.model->upperLimits()[a.model->idxV(a.joints[i])];
  }
  return a;
}

// Nearest joint-space distance (modulo 2 pi) from q to the family of exact
// solutions with joint f on `grid` (the pure functions, limits ignored).
double familyDistance(const Arm7& a, int f, const std::vector<double>& grid, const Problem& p,
                      const Eigen::VectorXd& q) {
  double best = std::numeric_limits<double>::infinity();
  analytic::Plan6 plan;
  analytic::Solutions6 sols;
  for (double theta : grid) {
    if (!analytic::classify6(analytic::lockJoint(a.chain, f, theta), &plan)) continue;
    analytic::solve6(plan, p.goals[0].target_orientation, p.goals[0].target_position, {}, &sols);
    for (int s = 0; s < sols.count; ++s) {
      double d2 = 0.0;
      for (int i = 0, m = 0; i < 7; ++i) {
        const double v = i == f ? theta : sols.q[s][m++];
        const double d = std::remainder(v - q[a.model->idxQ(a.joints[i])], 2 * kPi);
        d2 += d * d;
      }
      best = std::min(best, std::sqrt(d2));
    }
  }
  return best;
}

TEST(Analytic7r, FreeJointIsTheOneThatMovesMostAlongTheSelfMotion) {
  const Arm7 iiwa = arm7(kShipped + "iiwa14.urdf", "", "tool0");
  const std::array<double, 7> share = analytic::selfMotionShare(iiwa.chain, iiwa.lo, iiwa.hi);
  // An S-R-S arm's elbow angle is fixed by the shoulder-wrist distance: it
  // does not move along the self-motion at all.
  EXPECT_LT(share[3], 1e-9);
  for (int i : {0, 1, 2, 4, 5, 6}) EXPECT_GT(share[i], 0.05) << i;
  std::string why;
  const int f = analytic::chooseFreeJoint(iiwa.chain, -1, iiwa.lo, iiwa.hi, &why);
  ASSERT_GE(f, 0) << why;
  for (int i : {0, 1, 2, 4, 5, 6}) EXPECT_GE(share[f], share[i]);
  EXPECT_TRUE(f == 2 || f == 4) << f;  // an upper-arm or forearm roll
  // The grid over the chosen joint passes nearer the generating
  // configurations than one over joint 1 (the first joint whose holding
  // leaves a supported class), which barely moves along many self-motions.
  Rng rng(601);
  std::vector<double> chosen, first;
  for (int t = 0; t < 100; ++t) {
    const Eigen::VectorXd q_gen = randomConfiguration(*iiwa.model, rng);
    const Problem p = posePoseProblem(iiwa.model, iiwa.body, Eigen::Vector3d::Zero(), q_gen);
    chosen.push_back(familyDistance(iiwa, f, analytic::freeJointGrid(iiwa.lo[f], iiwa.hi[f], 64), p, q_gen));
    first.push_back(familyDistance(iiwa, 0, analytic::freeJointGrid(iiwa.lo[0], iiwa.hi[0], 64), p, q_gen));
  }
  std::sort(chosen.begin(), chosen.end());
  std::sort(first.begin(), first.end());
  std::printf(
      "[ 7r       ] iiwa14, 100 targets, 64 samples: nearest family member median %.4f / 90th percentile "
      "%.4f rad holding joint %d, %.4f / %.4f holding joint 1 (%d targets with no member at all)\n",
      chosen[50], chosen[90], f + 1, first[50], first[90],
      static_cast<int>(std::count(first.begin(), first.end(), std::numeric_limits<double>::infinity())));
  EXPECT_LT(chosen[50], first[50]);
  EXPECT_LT(chosen[90], first[90]);
  // Panda: holding joint 1, 2, 3 or 5 leaves no supported class; of joints 4,
  // 6, 7 the elbow moves least (its range is bounded by the 0.088 m wrist offset).
  const Arm7 panda = arm7(kShipped + "panda.urdf", "panda_link0", "panda_hand_tcp");
  for (int g : {0, 1, 2, 4}) EXPECT_EQ(analytic::chooseFreeJoint(panda.chain, g, panda.lo, panda.hi), -1) << g;
  for (int g : {3, 5, 6}) EXPECT_EQ(analytic::chooseFreeJoint(panda.chain, g, panda.lo, panda.hi), g) << g;
  const std::array<double, 7> ps = analytic::selfMotionShare(panda.chain, panda.lo, panda.hi);
  EXPECT_LT(ps[3], ps[5]);
  EXPECT_LT(ps[3], ps[6]);
  EXPECT_NE(analytic::chooseFreeJoint(panda.chain, -1, panda.lo, panda.hi), 3);
}

// (a) Targets whose held joint is exactly on a grid value: the generating
// configuration is one of the exact solutions of that sample (the whole
// family, by the pure functions), and the backend returns it (started 0.02
// rad away from it on the other joints, max_solutions=16: it is among the
// closest). (b) Any target, default spec (64 samples, at most 64 solutions):
// every returned solution converges by FK within limits with the held joint
// on the grid or at the start's value; the whole sampled family (limits
// aside) passes near the generating configuration, and nearer on a grid 8
// times finer (it samples the self-motion manifold; on the first `n_fine`
// targets).
struct Family7Stats {
  int away = 0, exact_found = 0, targets = 0, close = 0;
  double median64 = 0, median512 = 0, p90_64 = 0;
};
Family7Stats check7r(const std::string& what, const Arm7& a, int n_grid, int n_any, int n_fine, std::uint64_t seed) {
  Family7Stats st;
  const int f = analytic::chooseFreeJoint(a.chain, -1, a.lo, a.hi);
  EXPECT_GE(f, 0);
  if (f < 0) return st;
  const int fq = a.model->idxQ(a.joints[f]);
  const std::vector<double> grid = analytic::freeJointGrid(a.lo[f], a.hi[f], 64);
  const std::vector<double> fine = analytic::freeJointGrid(a.lo[f], a.hi[f], 512);
  double worst = 0.0;
  Data data(*a.model);
  auto near_start = Registry::global().create("analytic-7r:max_solutions=16");
  Rng rng(seed);
  for (int t = 0; t < n_grid; ++t) {
    Eigen::VectorXd q_gen = randomConfiguration(*a.model, rng);
    q_gen[fq] = grid[static_cast<size_t>(rng.uniformInt(0, 63))];
    Problem p = posePoseProblem(a.model, a.body, Eigen::Vector3d::Zero(), q_gen);
    p.q0 = q_gen + Eigen::VectorXd::Constant(q_gen.size(), 0.02);
    p.q0[fq] = q_gen[fq];
    clampToLimits(*a.model, p.q0);
    Eigen::VectorXd q = p.q0;
    const Summary s = near_start->solve(p, q, SolverOptions{});
    const auto sols = returned(s, q);
    for (const auto& x : sols)
      worst = std::max({worst, fkError(p, x, &data).position, fkError(p, x, &data).orientation});
    if (sigmaMin(p, q_gen, &data) > kAway) {
      ++st.away;
      const double in_family = familyDistance(a, f, grid, p, q_gen);
      const double d = nearest(*a.model, sols, q_gen);
      st.exact_found += in_family <= kRecovered && d <= kRecovered;
      EXPECT_LE(in_family, kRecovered) << what << " target " << t;
      EXPECT_LE(d, kRecovered) << what << " target " << t << ": " << s.message;
    }
  }
  auto solver = Registry::global().create("analytic-7r");
  long total = 0;
  std::vector<double> coarse, coarse_head, finer;
  for (int t = 0; t < n_any; ++t) {
    const Eigen::VectorXd q_gen = randomConfiguration(*a.model, rng);
    const Problem p = posePoseProblem(a.model, a.body, Eigen::Vector3d::Zero(), q_gen);
    Eigen::VectorXd q = p.q0;
    const Summary s = solver->solve(p, q, SolverOptions{});
    const auto sols = returned(s, q);
    EXPECT_LE(sols.size(), 64u);
    total += static_cast<long>(sols.size());
    for (const auto& x : sols) {
      worst = std::max({worst, fkError(p, x, &data).position, fkError(p, x, &data).orientation});
      EXPECT_TRUE(withinLimits(*a.model, x));
      const bool on_grid = std::find(grid.begin(), grid.end(), x[fq]) != grid.end() || x[fq] == p.q0[fq];
      EXPECT_TRUE(on_grid) << x[fq];
    }
    ++st.targets;
    coarse.push_back(familyDistance(a, f, grid, p, q_gen));
    st.close += coarse.back() <= 0.25;
    if (t < n_fine) {
      coarse_head.push_back(coarse.back());
      finer.push_back(familyDistance(a, f, fine, p, q_gen));
    }
  }
  EXPECT_LE(worst, kExact) << what;
  EXPECT_EQ(st.exact_found, st.away) << what;
  std::sort(coarse.begin(), coarse.end());
  std::sort(coarse_head.begin(), coarse_head.end());
  std::sort(finer.begin(), finer.end());
  st.median64 = coarse_head[coarse_head.size() / 2];
  st.median512 = finer[finer.size() / 2];
  st.p90_64 = coarse[coarse.size() * 9 / 10];
  std::printf(
      "[ 7r       ] %s, joint %d held: %d on-grid targets away from singularities, generating q in the "
      "family and returned in %d; arbitrary targets: the family passes within 0.25 rad of q in %d of %d "
      "(90th percentile of the nearest distance %.4f); on the first %d, median nearest distance %.4f (64 "
      "samples) / %.4f (512); %.1f solutions/solve returned (cap 64); worst FK error %.2e\n",
      what.c_str(), f + 1, st.away, st.exact_found, st.close, st.targets, st.p90_64, n_fine, st.median64, st.median512,
      static_cast<double>(total) / st.targets, worst);
  return st;
}

TEST(Analytic7r, ShippedIiwaSolutionsConvergeAndSampleTheSelfMotion) {
  const Family7Stats st = check7r("iiwa14", arm7(kShipped + "iiwa14.urdf", "", "tool0"), 40, 200, 60, 501);
  EXPECT_GT(st.away, 35);
  EXPECT_GE(st.close, st.targets * 9 / 10);
  EXPECT_LT(st.median512, st.median64 / 4);
}

TEST(Analytic7r, ShippedPandaSolutionsConvergeAndSampleTheSelfMotion) {
  const Family7Stats st =
      check7r("panda", arm7(kShipped + "panda.urdf", "panda_link0", "panda_hand_tcp"), 40, 200, 60, 502);
  EXPECT_GT(st.away, 35);
  EXPECT_LT(st.median512, st.median64 / 4);
}

TEST(Analytic7r, SyntheticOffsetWristArmSolutionsConvergeAndSampleTheSelfMotion) {
  // Axes 5, 6, 7 do not meet; holding joint 4, 5 or 6 leaves a spherical
  // shoulder and two meeting axes (see the URDF's comment).
  const Arm7 a = arm7(kSynthetic + "offset_wrist_7r.urdf", "", "tool0");
  for (int g = 0; g < 7; ++g)
    EXPECT_EQ(analytic::chooseFreeJoint(a.chain, g, a.lo, a.hi) == g, g == 3 || g == 4 || g == 5) << g;
  const Family7Stats st = check7r("offset-wrist 7R", a, 40, 200, 60, 504);
  EXPECT_GT(st.away, 35);
  EXPECT_LT(st.median512, st.median64 / 4);
}

// The plan of the 6R left, rotated from one classification (planAt), gives
// the solutions that classifying the locked chain afresh gives (the generic
// path), at every grid value and at random angles, on every joint whose
// holding leaves a supported class, forward and reversed plans alike; and the
// generating configuration is among them.
TEST(Analytic7r, LockedPlanAgreesWithClassifyingEverySample) {
  std::vector<std::pair<std::string, Arm7>> arms = {
      {"iiwa14", arm7(kShipped + "iiwa14.urdf", "", "tool0")},
      {"panda", arm7(kShipped + "panda.urdf", "panda_link0", "panda_hand_tcp")},
      {"offset-wrist 7R", arm7(kSynthetic + "offset_wrist_7r.urdf", "", "tool0")}};
  Rng rng(505);
  int compared = 0, reversed = 0, forward = 0;
  for (const auto& [name, a] : arms)
    for (int f = 0; f < 7; ++f) {
      if (analytic::chooseFreeJoint(a.chain, f, a.lo, a.hi) != f) continue;
      analytic::LockedPlan lp;
      std::string why;
      ASSERT_TRUE(analytic::lockPlan(a.chain, f, 0.3, &lp, &why)) << name << " joint " << f + 1 << ": " << why;
      (lp.plan.reversed ? reversed : forward) += 1;
      std::vector<double> angles = analytic::freeJointGrid(a.lo[f], a.hi[f], 16);
      for (int k = 0; k < 8; ++k) angles.push_back(rng.uniform(a.lo[f], a.hi[f]));
      for (double theta : angles) {
        analytic::Plan6 fresh, rotated;
        if (!analytic::classify6(analytic::lockJoint(a.chain, f, theta), &fresh)) continue;
        analytic::planAt(lp, theta, &rotated);
        for (int t = 0; t < 3; ++t) {
          Eigen::VectorXd q_gen = randomConfiguration(*a.model, rng);
          q_gen[a.model->idxQ(a.joints[f])] = theta;
          const Problem p = posePoseProblem(a.model, a.body, Eigen::Vector3d::Zero(), q_gen);
          const Goal& g = p.goals[0];
          analytic::Solutions6 s_fresh, s_rot;
          analytic::solve6(fresh, g.target_orientation, g.target_position, {}, &s_fresh);
          analytic::solve6(rotated, g.target_orientation, g.target_position, {}, &s_rot);
          // Where the 6R left is near a singularity its solutions are
          // ill-conditioned (two of them close, moved far by rounding):
          // both sets are checked by FK in the sweeps; compared here only
          // away from it.
          if (sigmaMin(p, q_gen, nullptr, f) <= kAway) continue;
          EXPECT_EQ(s_fresh.count, s_rot.count) << name << " joint " << f + 1 << " at " << theta;
          auto distance = [](const std::array<double, 6>& x, const std::array<double, 6>& y) {
            double d2 = 0.0;
            for (int i = 0; i < 6; ++i) d2 += std::pow(std::remainder(x[i] - y[i], 2 * kPi), 2);
            return std::sqrt(d2);
          };
          auto covered = [&](const analytic::Solutions6& from, const analytic::Solutions6& in) {
            for (int i = 0; i < from.count; ++i) {
              double best = std::numeric_limits<double>::infinity();
              for (int j = 0; j < in.count; ++j) best = std::min(best, distance(from.q[i], in.q[j]));
              if (best > 1e-7) return false;
            }
            return true;
          };
          EXPECT_TRUE(covered(s_fresh, s_rot) && covered(s_rot, s_fresh)) << name << " joint " << f + 1 << " at "
                                                                           << theta;
          std::array<double, 6> gen;
          for (int i = 0, m = 0; i < 7; ++i)
            if (i != f) gen[m++] = q_gen[a.model->idxQ(a.joints[i])];
          analytic::Solutions6 just_gen;
          just_gen.q[0] = gen;
          just_gen.count = 1;
          EXPECT_TRUE(covered(just_gen, s_rot)) << name << " joint " << f + 1 << " at " << theta;
          ++compared;
        }
      }
    }
  EXPECT_GT(compared, 600);
  EXPECT_GT(forward, 0);
  EXPECT_GT(reversed, 0);
}

TEST(Analytic7r, CorpusArms) {
  // The corpus iiwa: its 0.44 mm shoulder offsets break the spherical
  // shoulder, but holding joint 1, 2 or 4 leaves a supported class.
  const std::string iiwa = corpusRobot("kuka_lbr_iiwa_14_r820.urdf");
  if (!std::filesystem::exists(iiwa)) GTEST_SKIP() << "corpus file missing: " << iiwa;
  const Arm7 a = arm7(iiwa, "base_link", "tool0");
  for (int g = 0; g < 7; ++g)
    EXPECT_EQ(analytic::chooseFreeJoint(a.chain, g, a.lo, a.hi) == g, g == 0 || g == 1 || g == 3) << g;
  check7r("corpus iiwa", a, 20, 60, 30, 503);
  // Kinova Gen3: its wrist axes miss each other by 0.35 mm (and its rpy
  // values by 4e-6 rad): no joint leaves a supported class.
  const std::string gen3 = corpusRobot("kinova_gen3_7dof.urdf");
  if (!std::filesystem::exists(gen3)) GTEST_SKIP() << "corpus file missing: " << gen3;
  const Arm7 k = arm7(gen3, "base_link", "end_effector_link");
  const Problem p = posePoseProblem(k.model, k.body, Eigen::Vector3d::Zero(), k.model->neutralConfiguration());
  Eigen::VectorXd q = p.q0;
  const Summary s = solveFrom(p, q, "analytic-7r");
  EXPECT_EQ(s.status, Status::kUnsupported);
  EXPECT_NE(s.message.find("holding any one joint leaves no supported 6R class"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("meet"), std::string::npos) << s.message;
}

// A pose of the shipped iiwa14's tool0 at a generic configuration.
Problem iiwaGenericPose() {
  const auto model = loadArm(kShipped + "iiwa14.urdf", "", "");
  Eigen::VectorXd q_gen(7);
  q_gen << 0.3, 0.6, -0.4, -1.2, 0.5, 0.9, 0.2;
  return posePoseProblem(model, model->bodyIndex("tool0"), Eigen::Vector3d::Zero(), q_gen);
}

TEST(Analytic7r, DefaultsCapTheFamilyAndHoldingAnUnsupportedJointIsRefused) {
  const Problem p = iiwaGenericPose();
  Eigen::VectorXd q = p.q0;
  const Summary s = solveFrom(p, q, "analytic-7r:samples=200:max_solutions=16");
  ASSERT_TRUE(s.converged()) << s.message;
  EXPECT_EQ(s.solutions.size(), 16u);
  EXPECT_NE(s.message.find("a sampled family of the self-motion manifold"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("the 16 closest to the start returned"), std::string::npos) << s.message;
  // Holding joint 4 (the elbow) leaves a 6R with no supported class.
  const Summary s4 = solveFrom(p, q, "analytic-7r:free_joint=3");
  EXPECT_EQ(s4.status, Status::kUnsupported);
  EXPECT_NE(s4.message.find("holding joint 4"), std::string::npos) << s4.message;
  // A random-axis 7R chain: no joint works, and the message says so per joint.
  ChainSpec cs;
  cs.joints = 7;
  const auto chain = randomChain(cs, 8);
  const Problem pr =
      posePoseProblem(chain, chain->bodyIndex("tip"), Eigen::Vector3d::Zero(), chain->neutralConfiguration());
  Eigen::VectorXd qr = pr.q0;
  const Summary sr = solveFrom(pr, qr, "analytic-7r");
  EXPECT_EQ(sr.status, Status::kUnsupported);
  EXPECT_NE(sr.message.find("holding any one joint"), std::string::npos) << sr.message;
  EXPECT_NE(sr.message.find("holding joint 7"), std::string::npos) << sr.message;
}

// The 7R arms at hand without the corpus: the shipped iiwa14 and Panda and
// the synthetic offset-wrist arm.
std::vector<std::pair<std::string, Arm7>> shippedArms7() {
  return {{"iiwa14", arm7(kShipped + "iiwa14.urdf", "", "tool0")},
          {"panda", arm7(kShipped + "panda.urdf", "panda_link0", "panda_hand_tcp")},
          {"offset-wrist 7R", arm7(kSynthetic + "offset_wrist_7r.urdf", "", "tool0")}};
}

// The backend checks the solutions it returns in the compiled kernel's
// lanes and declares them checked; on the same arm with DOF weights of 2
// (which the kernel does not take) it offers them unchecked and
// Solver::solve checks each by the model's FK and drops duplicates pairwise.
// Both return the same solutions in the same order, and every one reaches
// the target by the model's FK.
TEST(Analytic7r, LaneCheckReturnsWhatTheModelsFkReturns) {
  const std::vector<std::pair<std::string, Arm7>> arms = shippedArms7();
  auto fast = Registry::global().create("analytic-7r");
  auto slow = Registry::global().create("analytic-7r");
  Rng rng(507);
  int compared = 0;
  for (const auto& [name, a] : arms) {
    const auto generic = test::withRevoluteWeights(*a.model, 2.0);
    Data data(*a.model);
    for (int t = 0; t < 20; ++t) {
      const Problem p = posePoseProblem(a.model, a.body, Eigen::Vector3d::Zero(), randomConfiguration(*a.model, rng));
      Problem g = p;
      g.model = generic;
      Eigen::VectorXd qf = p.q0, qg = g.q0;
      const Summary sf = fast->solve(p, qf, SolverOptions{}), sg = slow->solve(g, qg, SolverOptions{});
      ASSERT_EQ(sf.status, sg.status) << name << " target " << t;
      ASSERT_EQ(sf.solutions.size(), sg.solutions.size()) << name << " target " << t;
      EXPECT_TRUE(qf == qg) << name << " target " << t;
      for (size_t k = 0; k < sf.solutions.size(); ++k) {
        EXPECT_TRUE(sf.solutions[k] == sg.solutions[k]) << name << " target " << t << " solution " << k;
        const FkError e = fkError(p, sf.solutions[k], &data);
        EXPECT_LE(std::max(e.position, e.orientation), kExact) << name << " target " << t;
      }
      compared += sf.converged();
    }
  }
  EXPECT_GT(compared, 50);
}

// With max_solutions below the family's size the sweep solves the held
// values nearest the start's first and leaves unfinished every branch whose
// first angles already put it farther than the max_solutions closest so far
// (analytic::Bound6). The solutions returned are still the closest of the
// whole family: the first 16 of the unbounded family (max_solutions above its
// size), in the same order, on 20 targets each of the three arms; and the
// bound does leave branches unfinished (the message counts them).
TEST(Analytic7r, TheBoundKeepsTheClosestOfTheWholeFamily) {
  const std::vector<std::pair<std::string, Arm7>> arms = shippedArms7();
  auto bounded = Registry::global().create("analytic-7r:max_solutions=16");
  auto whole = Registry::global().create("analytic-7r:max_solutions=100000");
  Rng rng(509);
  int compared = 0, unfinished = 0;
  for (const auto& [name, a] : arms)
    for (int t = 0; t < 20; ++t) {
      const Problem p = posePoseProblem(a.model, a.body, Eigen::Vector3d::Zero(), randomConfiguration(*a.model, rng));
      Eigen::VectorXd qb = p.q0, qw = p.q0;
      const Summary sb = bounded->solve(p, qb, SolverOptions{}), sw = whole->solve(p, qw, SolverOptions{});
      ASSERT_EQ(sb.status, sw.status) << name << " target " << t;
      if (!sb.converged()) continue;
      const auto rb = returned(sb, qb), rw = returned(sw, qw);
      ASSERT_EQ(rb.size(), std::min<size_t>(16, rw.size())) << name << " target " << t << ": " << sb.message;
      for (size_t k = 0; k < rb.size(); ++k) EXPECT_TRUE(rb[k] == rw[k]) << name << " target " << t << " solution " << k;
      EXPECT_EQ(sw.message.find("left unfinished"), std::string::npos) << sw.message;
      unfinished += sb.message.find("left unfinished") != std::string::npos;
      ++compared;
    }
  EXPECT_GT(compared, 50);
  EXPECT_GT(unfinished, compared / 2);
}

// On a grid finer than the duplicate distance (20 000 values over the iiwa's
// +-170 degrees of joint 3: 1.5e-4 rad apart), neighbouring values give
// solutions within 1e-3 of each other along each branch: the backend keeps
// one of each such run, checking every earlier value within the distance,
// so that no two returned solutions are within it (the check Solver::solve
// no longer repeats).
TEST(Analytic7r, NoTwoReturnedSolutionsAreDuplicatesOnAFineGrid) {
  const Problem p = iiwaGenericPose();
  Eigen::VectorXd q = p.q0;
  const Summary s = solveFrom(p, q, "analytic-7r:samples=20000:max_solutions=400");
  ASSERT_TRUE(s.converged()) << s.message;
  ASSERT_EQ(s.solutions.size(), 400u) << s.message;
  int pairs_near = 0;
  for (size_t i = 0; i < s.solutions.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      EXPECT_FALSE(configurationsWithin(*p.model, s.solutions[i], s.solutions[j], kDistinctSolutionDistance))
          << i << " " << j;
      pairs_near += configurationsWithin(*p.model, s.solutions[i], s.solutions[j], 3 * kDistinctSolutionDistance);
    }
  // The grid is fine enough that the kept ones follow each other closely.
  EXPECT_GT(pairs_near, 100);
}

TEST(AnalyticRegistry, BothBackendsAreListedWithTheirParameters) {
  bool six = false, seven = false;
  for (const SolverInfo& i : Registry::global().list()) {
    if (i.name == "analytic-6r") {
      six = true;
      EXPECT_NE(i.description.find("Paden"), std::string::npos);
    }
    if (i.name == "analytic-7r") {
      seven = true;
      std::vector<std::string> keys;
      for (const auto& p : i.params) keys.push_back(p.name);
      EXPECT_EQ(keys, (std::vector<std::string>{"free_joint", "samples", "max_solutions"}));
    }
  }
  EXPECT_TRUE(six);
  EXPECT_TRUE(seven);
  EXPECT_THROW(Registry::global().create("analytic-7r:samples=0"), SpecError);
  EXPECT_THROW(Registry::global().create("analytic-7r:free_joint=7"), SpecError);
  EXPECT_THROW(Registry::global().create("analytic-6r:lambda=1"), SpecError);
}

}  // namespace
}  // namespace ikbench
