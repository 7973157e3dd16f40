// Orocos KDL backends (Smits et al., Orocos Kinematics and Dynamics Library,
// orocos.org/kdl; Debian liborocos-kdl 1.5), the reference peers most of
// robotics uses, wrapped behind the common interface:
//
// `kdl-lma`: KDL::ChainIkSolverPos_LMA, Levenberg-Marquardt with adaptive
//   damping (Nocedal & Wright 1999, as cited by KDL). It minimises
//   |L (x_goal - x)|^2 with task weights L = (1,1,1, w,w,w) and stops when
//   |L dx| < eps. KDL's default L weighs rotation by 0.01 with eps = 1e-5, so
//   it accepts rotation errors up to 1e-5 / 0.01 = 1e-3 rad. Here w =
//   rot_weight (default 1) and eps = min(position_tolerance, w *
//   orientation_tolerance), so KDL's own stop implies ikbench's per-goal
//   tolerance. Position-only goals zero the rotation weights, orientation-only
//   goals the position weights. LMA ignores joint limits: revolute angles
//   outside their limits are brought back by multiples of 2 pi where that
//   lands inside (same pose), the rest is clamped, and the clamped
//   configuration is what the context judges (usually a miss -> stalled, and
//   a restart if any are left). KDL's loop cannot be interrupted: the time
//   budget is checked between attempts (restarts), so a solve may overrun by
//   one attempt. KDL reports its iteration count (lastNrOfIter); the trace has
//   the start and the final state only.
//
// `kdl-nr-jl`: KDL::ChainIkSolverPos_NR_JL (Newton-Raphson on the pose twist,
//   joint limits by clamping after each step) with KDL::ChainIkSolverVel_pinv
//   (SVD pseudoinverse; Buss 2004). NR_JL has no task weights: it always
//   solves the full 6-D frame, so position-only and orientation-only goals are
//   `unsupported` (adding rows to the problem would solve a different one).
//   The FK solver handed to NR_JL is a wrapper that KDL calls once at the
//   start of every iteration: it evaluates ikbench's goal errors there and
//   calls SolveContext::begin / endIteration, so the iteration count, trace,
//   tolerance, stall rule, iteration cap and time budget are exactly those of
//   every other backend (stopping returns an error code that ends KDL's loop).
//   KDL's own stop (every twist component < eps) uses eps = min(tolerances) /
//   sqrt(3), which implies ikbench's, so it never stops first. Cost: one
//   ikbench FK per iteration on top of KDL's own (both counted in fk_evals).
//
// Both: one goal on a serial path of revolute / prismatic / fixed joints (side
// branches are fine); several goals, ball or free joints -> `unsupported`.
// KDL computes its own FK and Jacobians; fk_evals / jacobian_evals count them
// through SolveContext::countEvaluations (LMA: iterations + 1 each, an upper
// bound for Jacobians, which rejected steps skip). Solver::solve recomputes
// every error by ikbench's FK, and random restarts (restarts=N) apply as to
// any backend.
#include <fmt/format.h>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainiksolverpos_lma.hpp>
#include <kdl/chainiksolverpos_nr_jl.hpp>
#include <kdl/chainiksolvervel_pinv.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <numbers>

#include "ikbench/kinematics/config.h"
#include "ikbench/solvers/library_options.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"
#include "kdl_chain.h"

namespace ikbench {
namespace kdl {

KDL::Rotation toKdl(const Eigen::Matrix3d& R) {
  return KDL::Rotation(R(0, 0), R(0, 1), R(0, 2), R(1, 0), R(1, 1), R(1, 2), R(2, 0), R(2, 1), R(2, 2));
}

KDL::Frame toKdl(const Pose3d& pose) { return KDL::Frame(toKdl(pose.R), KDL::Vector(pose.p.x(), pose.p.y(), pose.p.z())); }

Pose3d fromKdl(const KDL::Frame& f) {
  Pose3d out;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) out.R(r, c) = f.M(r, c);
    out.p[r] = f.p(r);
  }
  return out;
}

bool buildKdlChain(const Model& model, int body, const Eigen::Vector3d& point, KdlChain* out, std::string* why) {
  auto fail = [&](std::string msg) {
    if (why) *why = std::move(msg);
    return false;
  };
  if (body < 0 || body >= model.numJoints())
    return fail(fmt::format("body {} is not in model '{}'", body, model.name()));
  std::vector<int> path;
  for (int j = body; j >= 0; j = model.parent(j)) path.push_back(j);
  std::reverse(path.begin(), path.end());
  for (int j : path) {
    const JointType t = model.type(j);
    if (t == JointType::kBall || t == JointType::kFree)
      return fail(fmt::format("joint '{}' is a {} joint; KDL chains have only 1-DOF joints (revolute, prismatic) "
                              "and fixed ones",
                              model.joint(j).name, toString(t)));
  }
  // Fold rest transforms: `pending` accumulates the rest transforms since the
  // last moving joint; it becomes the tip of that joint's segment.
  struct Moving {
    int joint;
    Pose3d tip;
  };
  std::vector<Moving> moving;
  Pose3d base, pending;
  for (int j : path) {
    pending = pending * model.parentTJoint(j);
    if (model.type(j) == JointType::kFixed) continue;
    if (moving.empty()) {
      base = pending;
    } else {
      moving.back().tip = pending;
    }
    moving.push_back({j, Pose3d()});
    pending = Pose3d();
  }
  if (moving.empty())
    return fail(fmt::format("no revolute or prismatic joint between the world and body '{}'", model.bodyName(body)));
  Pose3d point_offset;
  point_offset.p = point;
  moving.back().tip = pending * point_offset;

  KdlChain result;
  result.chain.addSegment(KDL::Segment("ikbench_base", KDL::Joint(KDL::Joint::Fixed), toKdl(base)));
  for (const Moving& m : moving) {
    const Eigen::Vector3d& a = model.axis(m.joint);
    const KDL::Joint::JointType type =
        model.type(m.joint) == JointType::kRevolute ? KDL::Joint::RotAxis : KDL::Joint::TransAxis;
    const std::string& name = model.joint(m.joint).name;
    result.chain.addSegment(
        KDL::Segment(name, KDL::Joint(name, KDL::Vector::Zero(), KDL::Vector(a.x(), a.y(), a.z()), type), toKdl(m.tip)));
    result.joints.push_back(m.joint);
    result.q_index.push_back(model.idxQ(m.joint));
    result.v_index.push_back(model.idxV(m.joint));
  }
  *out = std::move(result);
  return true;
}

}  // namespace kdl

namespace {

using kdl::KdlChain;

// FK solver handed to NR_JL: KDL calls JntToCart once at the start of each
// of its iterations, which is where the context sees every iterate.
class HookedFk final : public KDL::ChainFkSolverPos {
 public:
  struct Hook {
    virtual ~Hook() = default;
    // Returns false to end KDL's loop.
    virtual bool onIterate(const KDL::JntArray& q) = 0;
  };
  explicit HookedFk(const KDL::Chain& chain) : fk_(chain) {}
  static constexpr int kStoppedByHook = -1000;  // < E_NOERROR: NR_JL returns E_FKSOLVERPOS_FAILED
  int JntToCart(const KDL::JntArray& q, KDL::Frame& p_out, int segment = -1) override {
    if (hook_ != nullptr && !hook_->onIterate(q)) return kStoppedByHook;
    ++calls_;
    return fk_.JntToCart(q, p_out, segment);
  }
  int JntToCart(const KDL::JntArray& q, std::vector<KDL::Frame>& p_out, int segment = -1) override {
    return fk_.JntToCart(q, p_out, segment);
  }
  void updateInternalDataStructures() override { fk_.updateInternalDataStructures(); }
  void setHook(Hook* hook) { hook_ = hook; }
  long calls() const { return calls_; }

 private:
  KDL::ChainFkSolverPos_recursive fk_;
  Hook* hook_ = nullptr;
  long calls_ = 0;
};

enum class KdlMethod { kLma, kNrJl };

class KdlSolver final : public Solver, private HookedFk::Hook {
 public:
  explicit KdlSolver(const KdlLmaOptions& o) : method_(KdlMethod::kLma), rot_weight_(o.rot_weight) {}
  explicit KdlSolver(const KdlNrJlOptions&) : method_(KdlMethod::kNrJl) {}

  bool supports(const Problem& problem, std::string* why) const override {
    const char* name = method_ == KdlMethod::kLma ? "kdl-lma" : "kdl-nr-jl";
    if (problem.goals.size() != 1) {
      if (why)
        *why = fmt::format("{} solves one end-effector frame of a serial chain; this problem has {} goals", name,
                           problem.goals.size());
      return false;
    }
    const Goal& g = problem.goals[0];
    if (!isPointTarget(g)) {
      if (why)
        *why = fmt::format("{} solves an end-effector frame; a {} goal{} is not one", name, toString(g.kind),
                           g.bounded() ? " with a bound" : "");
      return false;
    }
    if (method_ == KdlMethod::kNrJl && g.kind != GoalKind::kPose) {
      if (why)
        *why = fmt::format(
            "kdl-nr-jl (ChainIkSolverPos_NR_JL) has no task-space weights and always solves the full 6-D frame; "
            "a {} goal would become a different problem (kdl-lma handles it with zero weights)",
            toString(g.kind));
      return false;
    }
    KdlChain chain;
    std::string reason;
    if (!kdl::buildKdlChain(*problem.model, g.body, g.point, &chain, &reason)) {
      if (why) *why = fmt::format("{}: {}", name, reason);
      return false;
    }
    return true;
  }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    if (!ensureChain(problem, ctx)) return;
    const Goal& g = problem.goals[0];
    const int n = static_cast<int>(chain_->q_index.size());
    for (int k = 0; k < n; ++k) kq_init_(k) = q[chain_->q_index[k]];
    target_ = KDL::Frame(kdl::toKdl(g.target_orientation),
                         KDL::Vector(g.target_position.x(), g.target_position.y(), g.target_position.z()));
    if (method_ == KdlMethod::kNrJl) {
      solveNrJl(q, ctx);
    } else {
      solveLma(q, ctx);
    }
  }

 private:
  // (Re)builds the chain and the KDL solvers when the model, body, point or
  // goal kind (task weights) changed since the last solve.
  bool ensureChain(const Problem& problem, SolveContext& ctx) {
    const Goal& g = problem.goals[0];
    const SolverOptions& o = ctx.options();
    if (chain_ && model_.get() == problem.model.get() && body_ == g.body && point_ == g.point && kind_ == g.kind &&
        tol_p_ == o.position_tolerance && tol_o_ == o.orientation_tolerance && max_iters_ == o.max_iterations)
      return true;
    auto chain = std::make_unique<KdlChain>();
    std::string why;
    if (!kdl::buildKdlChain(*problem.model, g.body, g.point, chain.get(), &why)) {
      ctx.stop(Status::kUnsupported, why);
      return false;
    }
    lma_.reset();
    nr_jl_.reset();
    vel_.reset();
    fk_.reset();
    chain_ = std::move(chain);  // the KDL solvers keep references to *chain_
    model_ = problem.model;
    body_ = g.body;
    point_ = g.point;
    kind_ = g.kind;
    tol_p_ = o.position_tolerance;
    tol_o_ = o.orientation_tolerance;
    max_iters_ = o.max_iterations;
    const int n = static_cast<int>(chain_->q_index.size());
    kq_init_.resize(n);
    kq_out_.resize(n);
    kq_prev_ = Eigen::VectorXd::Zero(n);
    const Model& model = *model_;
    if (method_ == KdlMethod::kLma) {
      Eigen::Matrix<double, 6, 1> L;
      double eps;
      switch (g.kind) {
        case GoalKind::kPose:
          L << 1, 1, 1, rot_weight_, rot_weight_, rot_weight_;
          eps = std::min(tol_p_, rot_weight_ * tol_o_);
          break;
        case GoalKind::kPosition:
          L << 1, 1, 1, 0, 0, 0;
          eps = tol_p_;
          break;
        case GoalKind::kOrientation:
        default:
          L << 0, 0, 0, 1, 1, 1;
          eps = tol_o_;
          break;
      }
      lma_ = std::make_unique<KDL::ChainIkSolverPos_LMA>(chain_->chain, L, eps, max_iters_, 1e-15);
    } else {
      KDL::JntArray lo(n), hi(n);
      for (int k = 0; k < n; ++k) {
        lo(k) = model.lowerLimits()[chain_->v_index[k]];
        hi(k) = model.upperLimits()[chain_->v_index[k]];
      }
      fk_ = std::make_unique<HookedFk>(chain_->chain);
      vel_ = std::make_unique<KDL::ChainIkSolverVel_pinv>(chain_->chain);
      // KDL's stop: every twist component below eps, i.e. both norms below
      // sqrt(3) eps <= the tolerances. The context's cap binds first.
      const double eps = std::min(tol_p_, tol_o_) / std::sqrt(3.0);
      nr_jl_ = std::make_unique<KDL::ChainIkSolverPos_NR_JL>(chain_->chain, lo, hi, *fk_, *vel_,
                                                             static_cast<unsigned>(max_iters_) + 1u, eps);
    }
    return true;
  }

  // ---- NR_JL: every iteration goes through onIterate().
  void solveNrJl(Eigen::VectorXd& q, SolveContext& ctx) {
    ctx_ = &ctx;
    q_work_ = &q;
    began_ = false;
    stopped_ = false;
    fk_->setHook(this);
    const long fk0 = fk_->calls();
    const int rc = nr_jl_->CartToJnt(kq_init_, target_, kq_out_);
    fk_->setHook(nullptr);
    const long kdl_fk = fk_->calls() - fk0;
    // One pseudoinverse (and Jacobian) per completed iteration.
    ctx.countEvaluations(kdl_fk, std::max<long>(0, ctx.iteration() + (rc == KDL::ChainIkSolverPos_NR_JL::E_IKSOLVERVEL_FAILED ? 1 : 0)));
    for (int k = 0; k < kq_out_.rows(); ++k) q[chain_->q_index[k]] = kq_out_(k);
    if (stopped_) return;  // the context decided
    switch (rc) {
      case KDL::ChainIkSolverPos_NR_JL::E_IKSOLVERVEL_FAILED:
        ctx.stop(Status::kNumericalFailure,
                 fmt::format("kdl-nr-jl: ChainIkSolverVel_pinv failed (SVD result {})", vel_->getSVDResult()));
        break;
      case KDL::SolverI::E_MAX_ITERATIONS_EXCEEDED:
        ctx.stop(Status::kMaxIterations, "kdl-nr-jl: KDL's iteration cap");
        break;
      default:
        // KDL's own stop implies ikbench's tolerance, which the hook checks
        // first; anything else is reported as is.
        ctx.stop(Status::kStalled, fmt::format("kdl-nr-jl: KDL returned {} ({})", rc, nr_jl_->strError(rc)));
        break;
    }
  }

  bool onIterate(const KDL::JntArray& kq) override {
    Eigen::VectorXd& q = *q_work_;
    for (int k = 0; k < kq.rows(); ++k) q[chain_->q_index[k]] = kq(k);
    const GoalErrors e = ctx_->evaluate(q);
    if (!began_) {
      began_ = true;
      stopped_ = ctx_->begin(q, e);
    } else {
      const double step = (kq.data - kq_prev_).norm();
      stopped_ = ctx_->endIteration(q, e, step, 0.0);
    }
    kq_prev_ = kq.data;
    return !stopped_;
  }

  // ---- LMA: one call of KDL's own loop.
  void solveLma(Eigen::VectorXd& q, SolveContext& ctx) {
    const Model& model = ctx.model();
    if (ctx.begin(q, ctx.evaluate(q))) return;
    const int rc = lma_->CartToJnt(kq_init_, target_, kq_out_);
    // lastNrOfIter is the 0-based index of the last loop pass: a step taken
    // there (E_NOERROR) completes it; the other stops happen before its step.
    const int iters = lma_->lastNrOfIter + (rc == KDL::SolverI::E_NOERROR ? 1 : 0);
    ctx.countEvaluations(iters + 1, iters + 1);
    // Same pose, inside the limits: revolute angles shifted by 2 pi k.
    double step2 = 0.0;
    for (int k = 0; k < kq_out_.rows(); ++k) {
      double a = kq_out_(k);
      const int j = chain_->joints[k], v = chain_->v_index[k];
      // No equivalent angle inside: left to the clamp below.
      if (model.type(j) == JointType::kRevolute)
        a = wrapAngleIntoLimits(a, model.lowerLimits()[v], model.upperLimits()[v]);
      q[chain_->q_index[k]] = a;
    }
    // LMA knows no limits: clamp what is still outside (prismatic joints,
    // angles without an equivalent inside), so that the context judges the
    // configuration that is returned.
    const bool clamped = clampToLimits(model, q);
    for (int k = 0; k < kq_out_.rows(); ++k) {
      const double d = q[chain_->q_index[k]] - kq_init_(k);
      step2 += d * d;
    }
    ctx.addIterations(iters - 1);
    const bool stopped = ctx.endIteration(q, ctx.evaluate(q), std::sqrt(step2), 0.0);
    if (stopped && (ctx.status() == Status::kConverged || ctx.status() == Status::kNumericalFailure)) return;
    switch (rc) {
      case KDL::ChainIkSolverPos_LMA::E_GRADIENT_JOINTS_TOO_SMALL:
      case KDL::ChainIkSolverPos_LMA::E_INCREMENT_JOINTS_TOO_SMALL:
        ctx.stop(Status::kStalled, fmt::format("kdl-lma: {} after {} iterations (KDL error {})", lma_->strError(rc),
                                               iters, lma_->lastDifference));
        break;
      case KDL::SolverI::E_MAX_ITERATIONS_EXCEEDED:
        ctx.stop(Status::kMaxIterations, fmt::format("kdl-lma: iteration cap (KDL error {})", lma_->lastDifference));
        break;
      case KDL::SolverI::E_NOERROR:
        ctx.stop(Status::kStalled, clamped ? fmt::format("kdl-lma: KDL's solution ({} iterations) violates the joint "
                                                         "limits (LMA ignores them); clamped, it misses the goal",
                                                         iters)
                                           : "kdl-lma: converged in KDL's metric but not in ikbench's");
        break;
      default:
        ctx.stop(Status::kNumericalFailure, fmt::format("kdl-lma: KDL returned {} ({})", rc, lma_->strError(rc)));
        break;
    }
  }

  KdlMethod method_;
  double rot_weight_ = 1.0;
  // Cache key and KDL objects (rebuilt when the key changes).
  std::shared_ptr<const Model> model_;
  int body_ = -1;
  Eigen::Vector3d point_ = Eigen::Vector3d::Zero();
  GoalKind kind_ = GoalKind::kPose;
  double tol_p_ = 0.0, tol_o_ = 0.0;
  int max_iters_ = 0;
  std::unique_ptr<KdlChain> chain_;
  std::unique_ptr<KDL::ChainIkSolverPos_LMA> lma_;
  std::unique_ptr<HookedFk> fk_;
  std::unique_ptr<KDL::ChainIkSolverVel_pinv> vel_;
  std::unique_ptr<KDL::ChainIkSolverPos_NR_JL> nr_jl_;
  KDL::JntArray kq_init_, kq_out_;
  KDL::Frame target_;
  // Per-attempt state of the NR_JL hook.
  SolveContext* ctx_ = nullptr;
  Eigen::VectorXd* q_work_ = nullptr;
  Eigen::VectorXd kq_prev_;
  bool began_ = false, stopped_ = false;
};

}  // namespace

void registerKdlSolvers(Registry& registry) {
  OptionsBinding<KdlLmaOptions> lma;
  lma.real("rot_weight", &KdlLmaOptions::rot_weight, Range::above(0), "m/rad",
           "task-space weight w of the rotation rows, L = diag(1,1,1,w,w,w); KDL's own default is 0.01, which with "
           "its eps = 1e-5 accepts rotation errors up to 1e-3 rad. eps = min(position_tolerance, w * "
           "orientation_tolerance)");
  registry.add(solverInfo("kdl-lma",
                          "Orocos KDL ChainIkSolverPos_LMA, Levenberg-Marquardt with task weights (1,1,1,w,w,w) (KDL "
                          "1.5)",
                          lma, [](const KdlLmaOptions& o) { return std::make_unique<KdlSolver>(o); }));
  registry.add(solverInfo("kdl-nr-jl",
                          "Orocos KDL ChainIkSolverPos_NR_JL with ChainIkSolverVel_pinv: Newton-Raphson with "
                          "joint-limit clamping (KDL 1.5)",
                          OptionsBinding<KdlNrJlOptions>{},
                          [](const KdlNrJlOptions& o) { return std::make_unique<KdlSolver>(o); }));
}

}  // namespace ikbench
