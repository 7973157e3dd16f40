// Closed-form two-link IK: `two-bone` (root ball or hinge, middle hinge or
// ball, as in GAMES105 lecture 3 and CSE169's two-bone IK) and
// `planar-analytic` (two parallel hinges, with the elbow solution selectable).
//
// Geometry. Let p1 be the root pivot, p2 the middle pivot, x the effector and
// t the target; u = p2 - p1, l = x - p2, a the (world) bend axis of the middle
// joint (its hinge axis, or for a ball joint the normal u x l of the current
// bend plane). Rotating the lower link by phi about a:
//   |u + R(a, phi) l|^2 = |u|^2 + |l|^2 + 2 u_a l_a + 2 rho cos(phi - phi0),
// with u_a = a.u, l_a = a.l, rho = |u_perp| |l_perp| (perpendicular to a) and
// phi0 = atan2(a.(l_perp x u_perp), u_perp.l_perp): the law of cosines, with
// the axial parts that make it exact for links not perpendicular to the hinge.
// Step 1 solves |u + R l| = |t - p1| for phi (two solutions, +-acos; the
// cosine is clamped to [-1, 1] when the target is outside the reachable shell,
// which gives the fully stretched or fully folded best effort). Step 2 aims
// the root: a ball root takes the minimal rotation taking x - p1 to t - p1,
// then turns about the root-target line so that the middle joint lies toward
// an optional pole point (the "swivel"/pole-vector control of animation rigs);
// a hinge root (planar case) takes the hinge angle that aligns the two
// vectors projected onto its plane, and its cosine law uses the in-plane
// distance (the axial offset of a planar chain is fixed).
// One iteration: exact (to rounding) on reachable targets within limits.
#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "geometric_util.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"

namespace ikbench::geometric {
namespace {

constexpr double kPi = std::numbers::pi;

struct TwoLinkPlan {
  int root = -1, mid = -1;
  bool planar = false;  // both hinges, parallel axes
};

bool buildTwoLink(const Problem& problem, bool require_planar, TwoLinkPlan* plan, std::string* why) {
  const Model& model = *problem.model;
  auto fail = [&](std::string msg) {
    if (why) *why = std::move(msg);
    return false;
  };
  if (problem.goals.size() != 1)
    return fail(fmt::format("needs exactly one goal, the problem has {}", problem.goals.size()));
  const Goal& g = problem.goals[0];
  if (g.bounded()) return fail("the goal has a bound; the closed form solves position targets only");
  if (g.kind != GoalKind::kPosition)
    return fail(fmt::format("the goal is a {} goal; the closed form solves position goals only",
                            toString(g.kind)));
  const std::vector<int> joints = model.supportingJoints(g.body);
  if (joints.size() != 2)
    return fail(fmt::format("needs exactly two moving joints between the world and body '{}', found {}",
                            model.bodyName(g.body), joints.size()));
  const int r = joints[0], m = joints[1];
  const JointType tr = model.type(r), tm = model.type(m);
  if (tr != JointType::kBall && tr != JointType::kRevolute)
    return fail(fmt::format("root joint '{}' is {}, needs ball or revolute", model.joint(r).name, toString(tr)));
  if (tm != JointType::kBall && tm != JointType::kRevolute)
    return fail(fmt::format("middle joint '{}' is {}, needs revolute or ball", model.joint(m).name, toString(tm)));
  // Constant transforms: root body -> middle joint frame, middle body -> effector.
  Pose3d r_T_m;
  for (int j = m; j != r; j = model.parent(j)) r_T_m = model.parentTJoint(j) * r_T_m;
  Eigen::Vector3d l_loc = g.point;
  for (int j = g.body; j != m; j = model.parent(j)) l_loc = model.parentTJoint(j).act(l_loc);
  const Eigen::Vector3d u_mid = r_T_m.R.transpose() * r_T_m.p;  // root->mid, middle joint frame
  const bool planar = tr == JointType::kRevolute && tm == JointType::kRevolute &&
                      (r_T_m.R * model.axis(m)).cross(model.axis(r)).norm() < 1e-9;
  if (require_planar && !planar)
    return fail(fmt::format("needs two revolute joints with parallel axes (joints '{}' and '{}')",
                            model.joint(r).name, model.joint(m).name));
  if (tr == JointType::kRevolute && !planar)
    return fail(fmt::format("a revolute root ('{}') aims only within its plane: needs a revolute middle joint "
                            "with a parallel axis (planar chain) or a ball root",
                            model.joint(r).name));
  if (tm == JointType::kRevolute) {
    const Eigen::Vector3d a = model.axis(m);
    const double rho = (u_mid - a.dot(u_mid) * a).norm() * (l_loc - a.dot(l_loc) * a).norm();
    if (rho < 1e-12)
      return fail(fmt::format("a link of middle joint '{}' lies along its hinge axis, so the hinge cannot change "
                              "the root-to-effector distance",
                              model.joint(m).name));
  } else if (u_mid.norm() < 1e-12 || l_loc.norm() < 1e-12) {
    return fail("zero-length link");
  }
  plan->root = r;
  plan->mid = m;
  plan->planar = planar;
  return true;
}

// The representative theta + 2 pi k within the joint's limits closest to its
// current value; if none is within the limits, the closest one (clamped later).
double pickAngle(const Model& model, int j, double current, double theta) {
  const double lo = model.lowerLimits()[model.idxV(j)], hi = model.upperLimits()[model.idxV(j)];
  theta = current + std::remainder(theta - current, 2.0 * kPi);
  double best = theta, best_cost = std::numeric_limits<double>::infinity();
  for (int k = -2; k <= 2; ++k) {
    const double c = theta + 2.0 * kPi * k;
    const double outside = std::max(0.0, lo - c) + std::max(0.0, c - hi);
    const double cost = outside * 1e6 + std::abs(c - current);
    if (cost < best_cost) best_cost = cost, best = c;
  }
  return best;
}

class TwoLinkSolver final : public Solver {
 public:
  explicit TwoLinkSolver(const TwoBoneOptions& o)
      : planar_only_(false), use_pole_(o.pole), pole_(o.pole_x, o.pole_y, o.pole_z), swivel_(o.swivel) {}
  explicit TwoLinkSolver(const PlanarAnalyticOptions& o) : planar_only_(true), elbow_(o.elbow) {}

  bool supports(const Problem& problem, std::string* why) const override {
    TwoLinkPlan plan;
    return buildTwoLink(problem, planar_only_, &plan, why);
  }
  bool restartable() const override { return false; }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    const Model& model = *problem.model;
    TwoLinkPlan plan;
    std::string why;
    if (!buildTwoLink(problem, planar_only_, &plan, &why)) {
      ctx.stop(Status::kUnsupported, why);
      return;
    }
    const Goal& g = problem.goals[0];
    const int r = plan.root, m = plan.mid;
    GoalErrors e = ctx.evaluate(q);
    if (ctx.begin(q, e)) return;
    const Data& d = ctx.data();
    const Eigen::Vector3d p1 = d.world_T_body[r].p, p2 = d.world_T_body[m].p;
    const Eigen::Vector3d x = d.world_T_body[g.body].act(g.point);
    const Eigen::Vector3d& t = g.target_position;
    const Eigen::Vector3d u = p2 - p1, l = x - p2;
    double step2 = 0.0;

    // Step 1: the middle joint, by the law of cosines.
    Eigen::Vector3d a;
    if (model.type(m) == JointType::kRevolute) {
      a = d.world_R_dof[m] * model.axis(m);
    } else {
      a = u.cross(l);
      if (a.norm() < 1e-9 * u.norm() * l.norm()) {  // straight: bend toward the pole, or anywhere
        a = use_pole_ ? u.cross(pole_ - p1) : Eigen::Vector3d::Zero();
        if (a.norm() < 1e-12) a = u.unitOrthogonal();
      }
      a.normalize();
    }
    const double ua = a.dot(u), la = a.dot(l);
    const Eigen::Vector3d up = u - ua * a, lp = l - la * a;
    const double rho = up.norm() * lp.norm();
    const double phi0 = std::atan2(a.dot(lp.cross(up)), up.dot(lp));
    double dist2, base;
    if (plan.planar) {  // in-plane distance; a is also the root axis
      const Eigen::Vector3d tp = (t - p1) - a.dot(t - p1) * a;
      dist2 = tp.squaredNorm();
      base = up.squaredNorm() + lp.squaredNorm();
    } else {
      dist2 = (t - p1).squaredNorm();
      base = u.squaredNorm() + l.squaredNorm() + 2.0 * ua * la;
    }
    const double c_raw = rho > 0.0 ? (dist2 - base) / (2.0 * rho) : 1.0;
    const bool out_of_reach = !(c_raw >= -1.0 && c_raw <= 1.0);
    const double gamma_abs = std::acos(std::clamp(c_raw, -1.0, 1.0));  // |bend| after the step
    const double gamma_now = -phi0;  // current bend of l about a, relative to u
    int sign = 1;
    if (planar_only_ && elbow_ != 0) sign = elbow_;
    else sign = gamma_now < 0.0 ? -1 : 1;  // keep the current bend side
    Eigen::Matrix3d dR_mid;
    if (model.type(m) == JointType::kRevolute) {
      const double cur = q[model.idxQ(m)];
      double theta = pickAngle(model, m, cur, cur + sign * gamma_abs - gamma_now);
      const double lo = model.lowerLimits()[model.idxV(m)], hi = model.upperLimits()[model.idxV(m)];
      if (!(planar_only_ && elbow_ != 0) && (theta < lo || theta > hi)) {
        // The preferred bend side violates the limits: try the mirror solution.
        const double other = pickAngle(model, m, cur, cur - sign * gamma_abs - gamma_now);
        if (other >= lo && other <= hi) theta = other;
      }
      dR_mid = axisRotation<double>(a, addScalar(model, m, theta - cur, q, &step2));
    } else {
      const double phi = sign * gamma_abs - gamma_now;
      dR_mid = rotateBall(model, m, d.world_R_dof[m], axisRotation<double>(a, phi), q, &step2);
    }
    const Eigen::Vector3d x1 = p2 + dR_mid * l;

    // Step 2: aim the root.
    if (model.type(r) == JointType::kRevolute) {
      const Eigen::Vector3d ar = d.world_R_dof[r] * model.axis(r);
      const double dtheta = bestHingeAngle(ar, (x1 - p1) * (t - p1).transpose());
      const double cur = q[model.idxQ(r)];
      addScalar(model, r, pickAngle(model, r, cur, cur + dtheta) - cur, q, &step2);
    } else {
      Eigen::Matrix3d dR = minimalRotation(x1 - p1, t - p1);
      const Eigen::Vector3d k = t - p1;
      if (k.norm() > 1e-12) {
        const Eigen::Vector3d kn = k.normalized();
        double turn = swivel_;
        if (use_pole_) {
          const Eigen::Vector3d mm = dR * u, pl = pole_ - p1;
          const Eigen::Vector3d mp = mm - kn.dot(mm) * kn, pp = pl - kn.dot(pl) * kn;
          if (mp.norm() > 1e-12 && pp.norm() > 1e-12) turn += std::atan2(kn.dot(mp.cross(pp)), mp.dot(pp));
        }
        if (turn != 0.0) dR = axisRotation<double>(kn, turn) * dR;
      }
      rotateBall(model, r, d.world_R_dof[r], dR, q, &step2);
    }
    e = ctx.evaluate(q);
    const bool done = ctx.endIteration(q, e, std::sqrt(step2));
    if (done && ctx.status() == Status::kConverged) return;
    if (out_of_reach) {
      const double reach_max = std::sqrt(std::max(0.0, base + 2.0 * rho));
      const double reach_min = std::sqrt(std::max(0.0, base - 2.0 * rho));
      ctx.stop(Status::kStalled,
               fmt::format("target out of reach (distance {:.6g} m outside [{:.6g}, {:.6g}] m): best stretch",
                           std::sqrt(dist2), reach_min, reach_max));
    } else {
      ctx.stop(Status::kStalled, "closed form not within tolerance (joint limits or an out-of-plane target)");
    }
  }

 private:
  bool planar_only_ = false;
  int elbow_ = 1;
  bool use_pole_ = false;
  Eigen::Vector3d pole_ = Eigen::Vector3d::Zero();
  double swivel_ = 0.0;
};

}  // namespace

SolverInfo twoBoneInfo() {
  OptionsBinding<TwoBoneOptions> b;
  b.flag("pole", &TwoBoneOptions::pole, "use the pole point (pole_x, pole_y, pole_z) for the swivel");
  b.real("pole_x", &TwoBoneOptions::pole_x, Range::any(), "m", "pole point x (world): the middle joint turns toward it");
  b.real("pole_y", &TwoBoneOptions::pole_y, Range::any(), "m", "pole point y (world)");
  b.real("pole_z", &TwoBoneOptions::pole_z, Range::any(), "m", "pole point z (world)");
  b.real("swivel", &TwoBoneOptions::swivel, Range::any(), "rad",
         "extra rotation about the root-target line, after the pole (ball root only)");
  return solverInfo("two-bone",
                    "closed-form two-joint IK: law of cosines at the middle joint, then aim the root, with "
                    "pole/swivel control (GAMES105 lecture 3; CSE169)",
                    b, [](const TwoBoneOptions& o) { return std::make_unique<TwoLinkSolver>(o); });
}

SolverInfo planarAnalyticInfo() {
  OptionsBinding<PlanarAnalyticOptions> b;
  b.integer("elbow", &PlanarAnalyticOptions::elbow, Range::closed(-1, 1), "1",
            "elbow solution: 1 = lower link bent counter-clockwise about the middle hinge axis relative to the "
            "upper link, -1 = clockwise, 0 = keep the current side");
  return solverInfo("planar-analytic",
                    "closed-form IK of a 2-link planar chain (two parallel hinges), law of cosines, elbow selectable",
                    b, [](const PlanarAnalyticOptions& o) { return std::make_unique<TwoLinkSolver>(o); });
}

}  // namespace ikbench::geometric
