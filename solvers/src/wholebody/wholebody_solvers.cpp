// The whole-body backends: `nullspace` (the recursive null-space projection,
// Siciliano & Slotine 1991) and `hqp` (the hierarchical QP with inequality
// levels, Kanoun, Lamiraux & Wieber 2011; Escande, Mansard & Wieber 2014).
// Both iterate the same loop; only the step differs (hierarchy.h):
//   1. forward kinematics of q (SolveContext::evaluate);
//   2. the levels: the goals grouped by priority (Problem::levels(), 0 the
//      highest), each goal's rows from goalRows (kinematics/goal.h): equality
//      rows J dq = r, inequality rows C dq <= upper for bounded goals; within a
//      level the rows are multiplied by the goal's weight (the weighted sum
//      inside a level, as the weighted backends do across all goals);
//   3. the box of the joint limits, dq_lower = lower - q, dq_upper = upper - q
//      for hinges, sliders and free-joint translations (ball and free-joint
//      rotations are clamped after the step);
//   4. one hierarchy step in the DOF-weighted coordinates dqw = W^1/2 dq
//      (W = Model::dofWeights(), the Jacobian family's motion cost), with
//      max|dq_i| <= max_step taken from the lowest levels' parts first
//      (clampByPriority);
//   5. q <- integrate(q, dq), clamped into the limits.
// After each step, restoration steps bring back the higher levels a lower
// level's second-order motion dragged off (HierarchySolver::restore).
// The attempt ends by SolveContext's rules: converged when every goal (so
// every level) is met, stalled when the step vanishes or the residual stops
// improving, the iteration and time budgets. The answer is the last iterate,
// not the one of lowest weighted residual (keepsLowestResidual).
// A problem with one level is solved by damped least squares (the hierarchy
// of one level: dq = J^T (J J^T + lambda^2 I)^-1 e, Buss 2004 eq. 11), the
// `dls` step with the same lambda.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "hierarchy.h"
#include "ikbench/core/enum_table.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/solvers/registry.h"

namespace ikbench {
namespace wholebody {
namespace {

enum class StepMethod { kProjection, kQp };

// The keys of `nullspace` and `hqp`.
struct WholeBodyOptions {
  // Damping lambda of each level's least squares [m] (hierarchy.h
  // HierarchyOptions::damping); `dls`'s default, so that a one-level problem
  // takes the `dls` step.
  double lambda = 0.05;
  // Largest joint change per iteration [rad or m], max|dq_i| <= max_step,
  // taken from the lowest levels' parts of the step first
  // (clampByPriority); 0 = no clamp.
  double max_step = 0.5;
  // Active-set passes (nullspace) or QP iterations per level (hqp) per step.
  int active_set_iterations = 100;
  // Restoration steps of the levels above the lowest after each step
  // (HierarchySolver::restore); 0 = none.
  int restore_steps = 30;
};

class HierarchySolver final : public Solver {
 public:
  HierarchySolver(StepMethod method, const WholeBodyOptions& o) : method_(method), options_(o) {
    hopt_.damping = o.lambda;
    hopt_.max_active_set_iterations = o.active_set_iterations;
  }

  bool keepsLowestResidual() const override { return false; }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    setup(problem);
    GoalErrors e = ctx.evaluate(q);
    if (ctx.begin(q, e)) return;
    for (;;) {
      buildLevels(problem, ctx.data());
      if (!step(ctx, levels_, q)) return;
      e = ctx.evaluate(q);
      if (options_.restore_steps > 0) restore(problem, ctx, q, e);
      if (ctx.endIteration(q, e, dq_.norm(), options_.lambda)) return;
    }
  }

 private:
  const char* name() const { return method_ == StepMethod::kQp ? "hqp" : "nullspace"; }

  // One hierarchy step of `levels` at q (whose rows they hold): dq_ and
  // q <- clamp(q (+) dq_). False (the attempt stopped) on a numerical failure.
  bool step(SolveContext& ctx, const std::vector<TaskLevel>& levels, Eigen::VectorXd& q) {
    const Model& model = ctx.model();
    const Eigen::VectorXd& lower = model.lowerLimits();
    const Eigen::VectorXd& upper = model.upperLimits();
    for (int v = 0; v < nv_; ++v) {
      const int iq = scalar_q_[v];
      lo_[v] = iq >= 0 ? (lower[v] - q[iq]) / s_[v] : -INFINITY;
      hi_[v] = iq >= 0 ? (upper[v] - q[iq]) / s_[v] : INFINITY;
      // A start outside the limits (Solver::solve clamps it, so only by
      // rounding): the box still holds dq = 0 and goes no further out.
      lo_[v] = std::min(lo_[v], 0.0);
      hi_[v] = std::max(hi_[v], 0.0);
    }
    HierarchyStep h;
    try {
      h = method_ == StepMethod::kQp ? solveHierarchy(levels, lo_, hi_, hopt_)
                                     : projectHierarchy(levels, lo_, hi_, hopt_);
    } catch (const std::invalid_argument& ex) {
      ctx.stop(Status::kNumericalFailure, fmt::format("{}: {}", name(), ex.what()));
      return false;
    }
    clampByPriority(h);
    if (!dq_.allFinite()) {
      ctx.stop(Status::kNumericalFailure, fmt::format("{}: non-finite step", name()));
      return false;
    }
    integrate(model, q, dq_, q);
    clampToLimits(model, q);
    return true;
  }

  // Restoration of the levels above the lowest after a step (the
  // second-order correction of constrained optimisation, Nocedal & Wright
  // 2006, sec. 15.6, taken level by level): a lower level's step lies in the
  // null space of the higher levels' rows only to first order, and near a
  // singularity its second-order motion drags a higher level off (the planted
  // foot slides while the hand reaches), which the next step's correction
  // undoes only for the lower level to repeat it. So while the highest level
  // j that is not met (a goal's error above half the tolerance) is above the
  // lowest level, Gauss-Newton steps of levels 0..j alone are taken, up to
  // restore_steps, each kept only when it cuts level j's residual by 10%
  // (an unreachable level j stops them at once).
  void restore(const Problem& problem, SolveContext& ctx, Eigen::VectorXd& q, GoalErrors& e) {
    const size_t L = levels_.size();
    for (int r = 0; r < options_.restore_steps && L > 1; ++r) {
      size_t j = 0;
      while (j + 1 < L && levelMet(ctx, j)) ++j;
      if (j + 1 >= L) return;
      const double before = levelNorm(ctx.data(), j);
      buildLevels(problem, ctx.data());
      upper_levels_.assign(levels_.begin(), levels_.begin() + static_cast<std::ptrdiff_t>(j + 1));
      q_try_ = q;
      if (!step(ctx, upper_levels_, q_try_)) return;
      const GoalErrors e_try = ctx.evaluate(q_try_);
      if (!(levelNorm(ctx.data(), j) < 0.9 * before)) {
        e = ctx.evaluate(q);  // data() back at q for the next step
        return;
      }
      q.swap(q_try_);
      e = e_try;
    }
  }

  bool levelMet(SolveContext& ctx, size_t k) const {
    const Data& d = ctx.data();
    const double tp = 0.5 * ctx.options().position_tolerance, to = 0.5 * ctx.options().orientation_tolerance;
    for (int g : level_goals_[k])
      if (d.goal_position_error[static_cast<size_t>(g)] > tp || d.goal_orientation_error[static_cast<size_t>(g)] > to)
        return false;
    return true;
  }
  // The norm of level k's residual rows (weighted) in data.
  double levelNorm(const Data& d, size_t k) const {
    double s = 0.0;
    for (int g : level_goals_[k]) {
      const auto [offset, rows] = goal_rows_[static_cast<size_t>(g)];
      s += d.residual.segment(offset, rows).squaredNorm();
    }
    return std::sqrt(s);
  }

  // dq_ = sum_k alpha_k S dqw_k (S dqw_k: level k's part in dq), alpha_k
  // from the top level down the largest in [0, 1] that keeps max|dq_i| <=
  // max_step given the levels above: a lower level gets the step the higher
  // ones leave. Scaling every part alike (Buss's clamp on the whole step)
  // would shorten a higher level's correction as much as a lower level's
  // long reach, and the lower level's second-order motion would then drag
  // the higher level off its target (a foot sliding under a hand that
  // reaches out of range). Without a clamp (max_step = 0) dq_ = S dqw.
  void clampByPriority(const HierarchyStep& step) {
    dq_ = s_.cwiseProduct(step.dq);
    const double m = options_.max_step;
    if (m <= 0.0 || dq_.size() == 0 || dq_.cwiseAbs().maxCoeff() <= m) return;
    dq_.setZero();
    for (const Eigen::VectorXd& part : step.level_dq) {
      part_ = s_.cwiseProduct(part);
      double alpha = 1.0;
      for (int i = 0; i < nv_; ++i) {
        if (part_[i] > 0.0) alpha = std::min(alpha, (m - dq_[i]) / part_[i]);
        if (part_[i] < 0.0) alpha = std::min(alpha, (-m - dq_[i]) / part_[i]);
      }
      dq_ += std::max(alpha, 0.0) * part_;
    }
  }

  void setup(const Problem& problem) {
    const Model& model = *problem.model;
    nv_ = model.nv();
    s_ = model.dofWeights().cwiseSqrt().cwiseInverse();
    lo_.resize(nv_);
    hi_.resize(nv_);
    scalar_q_.assign(static_cast<size_t>(nv_), -1);
    for (int j = 0; j < model.numJoints(); ++j) {
      const int iq = model.idxQ(j), iv = model.idxV(j);
      switch (model.type(j)) {
        case JointType::kRevolute:
        case JointType::kPrismatic:
          scalar_q_[iv] = iq;
          break;
        case JointType::kFree:
          for (int k = 0; k < 3; ++k) scalar_q_[iv + k] = iq + k;
          break;
        default:
          break;
      }
    }
    goal_rows_.clear();
    for (int g = 0, offset = 0; g < static_cast<int>(problem.goals.size()); ++g) {
      const int rows = residualRows(problem.goals[static_cast<size_t>(g)]);
      goal_rows_.emplace_back(offset, rows);
      offset += rows;
    }
    priorities_ = problem.levels();
    level_goals_.clear();
    for (int p : priorities_) level_goals_.push_back(problem.goalsAtLevel(p));
    levels_.resize(priorities_.size());
  }

  // Each level's rows at data's configuration, in dqw (columns times s).
  void buildLevels(const Problem& problem, const Data& data) {
    const Model& model = *problem.model;
    for (size_t k = 0; k < level_goals_.size(); ++k) {
      rows_.clear();
      int m_eq = 0, m_in = 0;
      for (int gi : level_goals_[k]) {
        const Goal& goal = problem.goals[static_cast<size_t>(gi)];
        rows_.push_back(goalRows(model, goal, data));
        m_eq += static_cast<int>(rows_.back().J.rows());
        m_in += static_cast<int>(rows_.back().C.rows());
      }
      TaskLevel& l = levels_[k];
      l.A.resize(m_eq, nv_);
      l.b.resize(m_eq);
      l.C.resize(m_in, nv_);
      l.upper.resize(m_in);
      int ie = 0, ii = 0;
      for (size_t j = 0; j < rows_.size(); ++j) {
        const double w = problem.goals[static_cast<size_t>(level_goals_[k][j])].weight;
        const GoalRows& r = rows_[j];
        if (r.J.rows() > 0) {
          l.A.middleRows(ie, r.J.rows()) = w * r.J * s_.asDiagonal();
          l.b.segment(ie, r.J.rows()) = w * r.r;
          ie += static_cast<int>(r.J.rows());
        }
        if (r.C.rows() > 0) {
          l.C.middleRows(ii, r.C.rows()) = w * r.C * s_.asDiagonal();
          l.upper.segment(ii, r.C.rows()) = w * r.upper;
          ii += static_cast<int>(r.C.rows());
        }
      }
    }
  }

  StepMethod method_;
  WholeBodyOptions options_;
  HierarchyOptions hopt_;
  int nv_ = 0;
  Eigen::VectorXd s_, lo_, hi_, dq_, part_;
  std::vector<int> scalar_q_;
  std::vector<int> priorities_;
  std::vector<std::vector<int>> level_goals_;
  std::vector<TaskLevel> levels_, upper_levels_;
  std::vector<GoalRows> rows_;
  std::vector<std::pair<int, int>> goal_rows_;  // each goal's rows in data.residual: offset, count
  Eigen::VectorXd q_try_;
};

OptionsBinding<WholeBodyOptions> binding(const char* active_set_help) {
  OptionsBinding<WholeBodyOptions> b;
  b.real("lambda", &WholeBodyOptions::lambda, Range::atLeast(0), "m",
         "damping lambda of every level's least squares, |A_k dq - b_k|^2 + lambda^2 |dq in the level's free "
         "subspace|^2 (one level: the dls step)");
  b.real("max_step", &WholeBodyOptions::max_step, Range::atLeast(0), "rad or m",
         "clamp on the largest joint change per iteration, max|dq_i| <= max_step, each level's part of the step "
         "scaled by the largest factor in [0, 1] that keeps it, from the top level down (Buss 2004's clamp by "
         "priority); 0 = no clamp");
  b.integer("active_set_iterations", &WholeBodyOptions::active_set_iterations, Range::closed(1, 100000), "1",
            active_set_help);
  b.integer("restore_steps", &WholeBodyOptions::restore_steps, Range::closed(0, 1000), "1",
            "after each step, up to this many Gauss-Newton steps of the levels down to the highest unmet one above the "
            "lowest, each kept when it cuts that level's residual by 10% (a second-order correction, Nocedal & Wright "
            "2006, sec. 15.6); 0 = none");
  return b;
}

}  // namespace
}  // namespace wholebody

void registerWholeBodySolvers(Registry& registry) {
  using wholebody::HierarchySolver;
  using wholebody::StepMethod;
  using wholebody::WholeBodyOptions;
  registry.add(solverInfo(
      "nullspace",
      "task-priority hierarchy by recursive null-space projection, dq_k = dq_{k-1} + (J_k P_{k-1})^# (e_k - J_k "
      "dq_{k-1}), P_k = P_{k-1} - (J_k P_{k-1})^+ (J_k P_{k-1}), one level per goal priority, inequality rows as "
      "equalities while violated (Siciliano & Slotine 1991)",
      wholebody::binding("active-set passes per step: rows taken as equalities while violated, joints saturated on "
                         "their limits"),
      [](const WholeBodyOptions& o) { return std::make_unique<HierarchySolver>(StepMethod::kProjection, o); }));
  registry.add(solverInfo(
      "hqp",
      "hierarchical quadratic program: each priority level minimises its equality error and inequality slacks "
      "keeping every higher level's optimum, one primal active-set QP per level (Kanoun, Lamiraux & Wieber 2011; "
      "Escande, Mansard & Wieber 2014)",
      wholebody::binding("primal active-set iterations per level and step"),
      [](const WholeBodyOptions& o) { return std::make_unique<HierarchySolver>(StepMethod::kQp, o); }));
}

}  // namespace ikbench
