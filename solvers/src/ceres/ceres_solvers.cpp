// Ceres Solver backends: `ceres-lm` (Levenberg-Marquardt) and `ceres-dogleg`
// (Powell's dogleg), both trust-region methods of Ceres (Agarwal, Mierle et
// al., "Ceres Solver", ceres-solver.org; LM after More 1978, "The
// Levenberg-Marquardt algorithm: implementation and theory"; dogleg after
// Nocedal & Wright 2006, "Numerical Optimization", sec. 4.1). The problem
// formulation (blocks, manifold, cost functions) is in ceres_ik.h.
//
// How the common interface maps onto Ceres:
// * Convergence is ikbench's per-goal tolerance, not Ceres' own tests: an
//   IterationCallback evaluates ikbench's goal errors after every iteration
//   (state updated every iteration) and calls SolveContext::begin /
//   endIteration, which record the trace and apply the common stopping rules
//   (tolerance, stall, iteration cap, time budget); the callback then returns
//   SOLVER_TERMINATE_SUCCESSFULLY. Ceres' function / gradient / parameter
//   tolerances are set tiny (1e-10 relative cost change, 1e-14 gradient,
//   1e-12 relative step) so they only fire at a genuine stationary point that
//   is not a solution (a local minimum, an unreachable target): -> stalled.
// * Ceres' NO_CONVERGENCE -> max-iterations or time-limit, FAILURE ->
//   numerical-failure; Ceres' BriefReport is kept in the message.
// * The ceres::Problem (blocks, bounds, manifolds, cost functions) is built
//   once per model and goal structure (bodies and kinds) and reused by later
//   solves, which only write new targets into the cost functions: the
//   structure Ceres sees is identical, so reuse changes no result. Ceres still
//   rebuilds its reduced program and linear solver inside every Solve().
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ceres_ik.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/solvers/library_options.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"

namespace ikbench {
namespace ceres_ik {

// ------------------------------------------------------------- manifold --

namespace {
// Quaternion (x, y, z, w) of the rotation vector w (the true exponential).
void expQuaternion(const double* w, double* out) {
  const Eigen::Quaterniond q = so3::expQuat(Eigen::Vector3d(w[0], w[1], w[2]));
  Eigen::Map<Eigen::Vector4d> o(out);
  o = q.coeffs();
}
Eigen::Quaterniond quat(const double* x) { return Eigen::Quaterniond(x[3], x[0], x[1], x[2]); }
}  // namespace

BallJointManifold::BallJointManifold(const double* lo, const double* hi) {
  for (int k = 0; k < 3; ++k) {
    lo_[k] = lo[k];
    hi_[k] = hi[k];
    bounded_ |= std::isfinite(lo[k]) || std::isfinite(hi[k]);
  }
}

bool BallJointManifold::Plus(const double* x, const double* delta, double* x_plus_delta) const {
  double e[4];
  expQuaternion(delta, e);
  Eigen::Quaterniond r = (quat(e) * quat(x)).normalized();
  if (bounded_) {
    Eigen::Vector3d w = so3::logQuat(r);
    bool out = false;
    for (int k = 0; k < 3; ++k) {
      if (w[k] < lo_[k] || w[k] > hi_[k]) out = true;
      w[k] = std::clamp(w[k], lo_[k], hi_[k]);
    }
    if (out) r = so3::expQuat(w);
  }
  Eigen::Map<Eigen::Vector4d> o(x_plus_delta);
  o = r.coeffs();
  return true;
}

bool BallJointManifold::PlusJacobian(const double* x, double* jacobian) const {
  // (d/2, 1) * (v, s) = (v + 1/2 (s d + d x v), s - 1/2 d.v)
  //                   = (v + 1/2 (s I - [v]x) d, s - 1/2 v.d).
  Eigen::Map<Eigen::Matrix<double, 4, 3, Eigen::RowMajor>> P(jacobian);
  const Eigen::Vector3d v(x[0], x[1], x[2]);
  const double s = x[3];
  P.topRows<3>() = 0.5 * (s * Eigen::Matrix3d::Identity() - so3::hat<double>(v));
  P.row(3) = -0.5 * v.transpose();
  return true;
}

bool BallJointManifold::Minus(const double* y, const double* x, double* y_minus_x) const {
  Eigen::Map<Eigen::Vector3d> o(y_minus_x);
  o = so3::logQuat(quat(y) * quat(x).conjugate());
  return true;
}

bool BallJointManifold::MinusJacobian(const double* x, double* jacobian) const {
  double P[12];
  PlusJacobian(x, P);
  Eigen::Map<Eigen::Matrix<double, 3, 4, Eigen::RowMajor>> M(jacobian);
  M = 4.0 * Eigen::Map<Eigen::Matrix<double, 4, 3, Eigen::RowMajor>>(P).transpose();
  return true;
}

// --------------------------------------------------------------- blocks --

std::vector<Block> modelBlocks(const Model& model) {
  std::vector<Block> out;
  for (int j = 0; j < model.numJoints(); ++j) {
    const int iq = model.idxQ(j), iv = model.idxV(j);
    switch (model.type(j)) {
      case JointType::kRevolute:
      case JointType::kPrismatic: out.push_back({j, iq, iv, 1, BlockKind::kScalar}); break;
      case JointType::kBall: out.push_back({j, iq, iv, 4, BlockKind::kQuaternion}); break;
      case JointType::kFree:
        out.push_back({j, iq, iv, 3, BlockKind::kTranslation});
        out.push_back({j, iq + 3, iv + 3, 4, BlockKind::kQuaternion});
        break;
      case JointType::kFixed: break;
    }
  }
  return out;
}

std::vector<Block> blocksForBody(const Model& model, int body) {
  std::vector<bool> on_path(model.numJoints(), false);
  for (int j = body; j >= 0; j = model.parent(j)) on_path[j] = true;
  std::vector<Block> out;
  for (const Block& b : modelBlocks(model))
    if (on_path[b.joint]) out.push_back(b);
  return out;
}

// ----------------------------------------------------------------- costs --

AnalyticGoalCost::AnalyticGoalCost(std::shared_ptr<const Model> model, const Goal& goal)
    : model_(std::move(model)),
      goals_{goal},
      blocks_(blocksForBody(*model_, goal.body)),
      q_(model_->neutralConfiguration()),
      data_(*model_) {
  set_num_residuals(goalRows(goal.kind));
  for (const Block& b : blocks_) mutable_parameter_block_sizes()->push_back(b.size);
  data_.resizeGoals(1, goalRows(goal.kind));
}

bool AnalyticGoalCost::Evaluate(double const* const* parameters, double* residuals, double** jacobians) const {
  for (size_t b = 0; b < blocks_.size(); ++b)
    for (int k = 0; k < blocks_[b].size; ++k) q_[blocks_[b].q_offset + k] = parameters[b][k];
  forwardKinematics(*model_, q_, data_);
  const GoalErrors e = evaluateGoals(*model_, goals_, data_);
  const int m = num_residuals();
  Eigen::Map<Eigen::VectorXd> res(residuals, m);
  res = data_.residual;
  if (jacobians == nullptr) return e.finite();
  goalJacobian(*model_, goals_, data_, JacobianMode::kExactResidual);
  // residual = target - current, so d residual / d dq = -J.
  for (size_t b = 0; b < blocks_.size(); ++b) {
    if (jacobians[b] == nullptr) continue;
    const Block& blk = blocks_[b];
    double* out = jacobians[b];
    if (blk.kind != BlockKind::kQuaternion) {
      for (int r = 0; r < m; ++r)
        for (int c = 0; c < blk.size; ++c) out[r * blk.size + c] = -data_.J(r, blk.v_offset + c);
    } else {
      // J_ambient = J_tangent * MinusJacobian(x), MinusJacobian = 4 P^T
      //           = 2 [s I + [v]x | -v]  (3 x 4).
      const double* x = parameters[b];
      const Eigen::Vector3d v(x[0], x[1], x[2]);
      Eigen::Matrix<double, 3, 4> M;
      M.leftCols<3>() = 2.0 * (x[3] * Eigen::Matrix3d::Identity() + so3::hat<double>(v));
      M.col(3) = -2.0 * v;
      Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, 4, Eigen::RowMajor>> Ja(out, m, 4);
      Ja.noalias() = -data_.J.middleCols<3>(blk.v_offset) * M;
    }
  }
  return e.finite();
}

GoalFunctor::GoalFunctor(std::shared_ptr<const Model> model, const Goal& goal)
    : model_(std::move(model)), goal_(goal), blocks_(blocksForBody(*model_, goal.body)) {
  const Eigen::VectorXd q0 = model_->neutralConfiguration();
  qd_.assign(q0.data(), q0.data() + q0.size());
  qj_.resize(q0.size());
  for (int i = 0; i < q0.size(); ++i) qj_[i] = Jet(q0[i]);
  posed_.resize(model_->numJoints());
  posej_.resize(model_->numJoints());
}

GoalCost::GoalCost(std::shared_ptr<const Model> model, const Goal& goal, bool autodiff)
    : model_(std::move(model)), blocks_(blocksForBody(*model_, goal.body)) {
  if (autodiff) {
    auto functor = std::make_unique<GoalFunctor>(model_, goal);
    functor_ = functor.get();
    auto cost = std::make_unique<ceres::DynamicAutoDiffCostFunction<GoalFunctor, kJetStride>>(functor.release());
    for (const Block& b : blocks_) cost->AddParameterBlock(b.size);
    cost->SetNumResiduals(goalRows(goal.kind));
    inner_ = std::move(cost);
  } else {
    auto cost = std::make_unique<AnalyticGoalCost>(model_, goal);
    analytic_ = cost.get();
    inner_ = std::move(cost);
  }
  set_num_residuals(goalRows(goal.kind));
  *mutable_parameter_block_sizes() = inner_->parameter_block_sizes();
  for (const Block& b : blocks_) {
    if (b.kind == BlockKind::kQuaternion) {
      manifolds_.push_back(std::make_unique<BallJointManifold>(&model_->lowerLimits()[b.v_offset],
                                                               &model_->upperLimits()[b.v_offset]));
    } else {
      manifolds_.push_back(nullptr);
    }
  }
}

bool GoalCost::Evaluate(double const* const* parameters, double* residuals, double** jacobians) const {
  ++evals_;
  if (jacobians != nullptr) ++jac_evals_;
  return inner_->Evaluate(parameters, residuals, jacobians);
}

void GoalCost::setGoal(const Goal& goal) {
  if (analytic_) analytic_->goal() = goal;
  if (functor_) functor_->goal() = goal;
}

std::vector<const ceres::Manifold*> GoalCost::manifolds() const {
  std::vector<const ceres::Manifold*> out;
  for (const auto& m : manifolds_) out.push_back(m.get());
  return out;
}

}  // namespace ceres_ik

namespace {

using ceres_ik::Block;
using ceres_ik::BlockKind;
using ceres_ik::GoalCost;

// Feeds every Ceres iteration to the SolveContext (see the file comment).
class ContextCallback final : public ceres::IterationCallback {
 public:
  ContextCallback(SolveContext& ctx, Eigen::VectorXd& q, bool lm) : ctx_(ctx), q_(q), lm_(lm) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& s) override {
    if (s.iteration == 0 || !began_) {
      last_ = ctx_.evaluate(q_);
      began_ = true;
      stopped_ = ctx_.begin(q_, last_);
    } else {
      // A rejected step leaves x (and so the errors) unchanged.
      if (s.step_is_successful) last_ = ctx_.evaluate(q_);
      // LM's diagonal regularisation is 1 / radius (Ceres' convention);
      // for dogleg the radius itself.
      const double damping = lm_ ? 1.0 / s.trust_region_radius : s.trust_region_radius;
      stopped_ = ctx_.endIteration(q_, last_, s.step_norm, damping);
    }
    return stopped_ ? ceres::SOLVER_TERMINATE_SUCCESSFULLY : ceres::SOLVER_CONTINUE;
  }
  bool began() const { return began_; }
  bool stopped() const { return stopped_; }

 private:
  SolveContext& ctx_;
  Eigen::VectorXd& q_;
  bool lm_;
  bool began_ = false, stopped_ = false;
  GoalErrors last_;
};

class CeresSolver final : public Solver {
 public:
  CeresSolver(const CeresOptions& o, bool dogleg) : dogleg_(dogleg), autodiff_(o.autodiff) {
    linear_solver_ =
        o.linear_solver == CeresLinearSolver::kDenseQr ? ceres::DENSE_QR : ceres::DENSE_NORMAL_CHOLESKY;
    options_.trust_region_strategy_type = dogleg ? ceres::DOGLEG : ceres::LEVENBERG_MARQUARDT;
    options_.dogleg_type = ceres::TRADITIONAL_DOGLEG;
    options_.linear_solver_type = linear_solver_;
    options_.dense_linear_algebra_library_type = ceres::EIGEN;
    options_.num_threads = 1;
    options_.logging_type = ceres::SILENT;
    options_.minimizer_progress_to_stdout = false;
    options_.update_state_every_iteration = true;
    options_.function_tolerance = 1e-10;
    options_.gradient_tolerance = 1e-14;
    options_.parameter_tolerance = 1e-12;
    options_.initial_trust_region_radius = o.initial_radius;
  }

  bool supports(const Problem& problem, std::string* why) const override {
    return pointTargetsOnly(problem, dogleg_ ? "ceres-dogleg" : "ceres-lm", why);
  }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    ensureProblem(problem);
    for (size_t i = 0; i < problem.goals.size(); ++i) costs_[i]->setGoal(problem.goals[i]);
    // The parameter blocks point into q_: copy, never reallocate.
    q_ = q;
    const long evals0 = costs_[0]->evaluations(), jac0 = costs_[0]->jacobianEvaluations();

    const SolverOptions& o = ctx.options();
    ceres::Solver::Options options = options_;
    // ctx applies the iteration cap and the budget; Ceres' own limits are a
    // backstop one step behind.
    options.max_num_iterations = o.max_iterations + 1;
    if (o.time_budget_us > 0.0)
      options.max_solver_time_in_seconds = std::max(0.0, (o.time_budget_us - ctx.elapsedUs()) * 1e-6) + 1e-3;
    ContextCallback callback(ctx, q_, !dogleg_);
    options.callbacks.push_back(&callback);

    ceres::Solver::Summary summary;
    ceres::Solve(options, problem_.get(), &summary);
    ctx.countEvaluations(costs_[0]->evaluations() - evals0,
                         costs_[0]->jacobianEvaluations() - jac0);
    q = q_;
    normalizeConfiguration(ctx.model(), q);
    if (!callback.began()) {
      // Ceres stopped before its first callback (e.g. zero gradient at the
      // start, or invalid input): still judge the start by ikbench's rules.
      if (ctx.begin(q, ctx.evaluate(q))) return;
    }
    if (callback.stopped()) return;  // ctx decided (converged, stall, cap, time)
    const std::string report = fmt::format("ceres: {} [{}]", summary.message, summary.BriefReport());
    switch (summary.termination_type) {
      case ceres::CONVERGENCE: ctx.stop(Status::kStalled, report); break;
      case ceres::NO_CONVERGENCE:
        ctx.stop(ctx.timeUp() ? Status::kTimeLimit : Status::kMaxIterations, report);
        break;
      case ceres::FAILURE: ctx.stop(Status::kNumericalFailure, report); break;
      default: ctx.stop(Status::kStalled, report); break;
    }
  }

 private:
  // (Re)builds the ceres::Problem when the model or the goal structure
  // (count, bodies, kinds) differs from the last solve.
  void ensureProblem(const Problem& problem) {
    bool same = problem_ && model_.get() == problem.model.get() && bodies_.size() == problem.goals.size();
    for (size_t i = 0; same && i < problem.goals.size(); ++i)
      same = bodies_[i] == problem.goals[i].body && kinds_[i] == problem.goals[i].kind;
    if (same) return;
    const Model& model = *problem.model;
    model_ = problem.model;
    bodies_.clear();
    kinds_.clear();
    costs_.clear();
    ceres::Problem::Options po;
    po.cost_function_ownership = ceres::TAKE_OWNERSHIP;
    po.manifold_ownership = ceres::TAKE_OWNERSHIP;
    problem_ = std::make_unique<ceres::Problem>(po);
    q_ = model.neutralConfiguration();
    for (const Goal& g : problem.goals) {
      bodies_.push_back(g.body);
      kinds_.push_back(g.kind);
      auto* cost = new GoalCost(model_, g, autodiff_);
      costs_.push_back(cost);
      std::vector<double*> blocks;
      for (const Block& b : cost->blocks()) blocks.push_back(q_.data() + b.q_offset);
      problem_->AddResidualBlock(cost, nullptr, blocks);
    }
    // Bounds and manifolds, once per block actually used by a goal.
    const Eigen::VectorXd& lo = model.lowerLimits();
    const Eigen::VectorXd& hi = model.upperLimits();
    for (const Block& b : ceres_ik::modelBlocks(model)) {
      double* x = q_.data() + b.q_offset;
      if (!problem_->HasParameterBlock(x)) continue;
      if (b.kind == BlockKind::kQuaternion) {
        problem_->SetManifold(x, new ceres_ik::BallJointManifold(&lo[b.v_offset], &hi[b.v_offset]));
      } else {
        for (int k = 0; k < b.size; ++k) {
          if (std::isfinite(lo[b.v_offset + k])) problem_->SetParameterLowerBound(x, k, lo[b.v_offset + k]);
          if (std::isfinite(hi[b.v_offset + k])) problem_->SetParameterUpperBound(x, k, hi[b.v_offset + k]);
        }
      }
    }
  }

  bool dogleg_, autodiff_;
  ceres::LinearSolverType linear_solver_ = ceres::DENSE_QR;
  ceres::Solver::Options options_;
  std::shared_ptr<const Model> model_;
  std::vector<int> bodies_;
  std::vector<GoalKind> kinds_;
  std::unique_ptr<ceres::Problem> problem_;
  std::vector<GoalCost*> costs_;  // owned by problem_
  Eigen::VectorXd q_;             // the parameter blocks live here
};

OptionsBinding<CeresOptions> ceresBinding() {
  OptionsBinding<CeresOptions> b;
  b.flag("autodiff", &CeresOptions::autodiff,
         "1: Jacobians by automatic differentiation (ceres::DynamicAutoDiffCostFunction over the templated forward "
         "kinematics); 0: ikbench's analytic Jacobian of the residual");
  b.choice("linear_solver", &CeresOptions::linear_solver, kCeresLinearSolverNames,
           "linear solver of the trust-region subproblem");
  b.real("initial_radius", &CeresOptions::initial_radius, Range::above(0), "1",
         "initial trust-region radius (Ceres' initial_trust_region_radius, whose own default 1e4 makes the first LM "
         "steps nearly Gauss-Newton: large jumps into the joint limits); LM's first damping is its inverse");
  return b;
}

void registerCeresSolvers(Registry& registry) {
  registry.add(solverInfo("ceres-lm",
                          "Ceres Solver Levenberg-Marquardt (More 1978) on ikbench's residual; limits as bounds, ball "
                          "joints on an SO(3) manifold",
                          ceresBinding(), [](const CeresOptions& o) { return std::make_unique<CeresSolver>(o, false); }));
  registry.add(solverInfo("ceres-dogleg",
                          "Ceres Solver trust-region dogleg (Powell; Nocedal & Wright 2006, sec. 4.1) on ikbench's "
                          "residual",
                          ceresBinding(), [](const CeresOptions& o) { return std::make_unique<CeresSolver>(o, true); }));
}

}  // namespace

// Registered by Registry::global() when this library is linked (whole: the
// ikbench_backends target), after the Jacobian and geometric families.
const BackendLibrary kCeresLibrary("ceres", 0, &registerCeresSolvers);

}  // namespace ikbench
