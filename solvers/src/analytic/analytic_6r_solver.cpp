// `analytic-6r`: every closed-form solution of a 6R arm with a spherical
// wrist or three parallel axes (Paden-Kahan subproblems: Paden 1985; Murray,
// Li & Sastry 1994, ch. 3; Pieper 1968; Elias & Wen, IK-Geo, 2022/2024).
// `analytic-7r`: a 7R arm by a 1-D search over one joint, as in IK-Geo's 1-D
// search and EAIK (Ostermeier et al. 2024): the joint is held at each value
// of a grid over its limits and the 6R left is solved in closed form.
//
// The geometry is in analytic_ik.{h,cpp}; this file binds it to the Solver
// interface. One iteration per solve; every solution is offered with
// SolveContext::addSolution (Solver::solve keeps those that converge by FK
// within the limits), and q is the one closest to the start configuration.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "analytic_6r.h"
#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/solvers/geometric_options.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"

namespace ikbench {
namespace {

using analytic::Arm6;
using analytic::Candidate6;
using analytic::Chain6;
using analytic::ChainLimits;
using analytic::PlanCache;
using analytic::Chain7;
using analytic::Plan6;
using analytic::Solutions6;

// The held joint's angle at which analytic-7r classifies the 6R left (one of
// chooseFreeJoint's generic probe angles).
constexpr double kLockAngle = 0.3;

// One pose goal, or why not.
bool singlePoseGoal(const Problem& problem, const char* solver, std::string* why) {
  if (problem.goals.size() != 1) {
    if (why)
      *why = fmt::format("{} solves one pose goal (position + orientation); the problem has {} goals", solver,
                         problem.goals.size());
    return false;
  }
  if (problem.goals[0].kind != GoalKind::kPose) {
    if (why)
      *why = fmt::format(
          "{} solves one pose goal (position + orientation); the goal is a {} goal, whose solutions "
          "form a continuum",
          solver, toString(problem.goals[0].kind));
    return false;
  }
  return true;
}

// Offers the candidates (closest to the start first, so that Solver::solve's
// FK of the attempt's q is reused for the first candidate), leaves the
// closest in q, and records the one iteration.
template <typename Candidate>
void finish(SolveContext& ctx, Eigen::VectorXd& q, const std::vector<Candidate>& kept, const ChainLimits& lim, int n,
            Status status, std::string message, bool trace, Eigen::VectorXd& buffer) {
  buffer = q;  // same size every solve of a model: no allocation
  for (const Candidate& k : kept) {
    for (int i = 0; i < n; ++i) buffer[lim.iq[i]] = k.q[i];
    ctx.addSolution(buffer);
  }
  double step2 = 0.0;
  if (!kept.empty())
    for (int i = 0; i < n; ++i) {
      const double d = kept.front().q[i] - q[lim.iq[i]];
      step2 += d * d;
      q[lim.iq[i]] = kept.front().q[i];
    }
  if (trace) {
    ctx.endIteration(q, ctx.evaluate(q), std::sqrt(step2));
  } else {
    ctx.addIterations(1);
  }
  ctx.stop(status, std::move(message));
}

// ---------------------------------------------------------------- 6R --

// Without the compiled kernel's FK (a model with DOF off the chain, DOF
// weights) the candidates are offered unchecked and Solver::solve checks
// them with the model's FK.
class Analytic6rSolver final : public Solver {
 public:
  bool supports(const Problem& problem, std::string* why) const override { return prepare(problem, why) != nullptr; }
  bool restartable() const override { return false; }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    std::string why;
    const Arm6* P = prepare(problem, &why);
    if (!P) {
      ctx.stop(Status::kUnsupported, why);
      return;
    }
    const bool trace = ctx.options().record_trace;
    if (trace) ctx.begin(q, ctx.evaluate(q));
    const Goal& g = problem.goals[0];
    std::array<double, 6> hint;
    for (int i = 0; i < 6; ++i) hint[i] = q[P->limits.iq[i]];
    Solutions6 sols;
    analytic::candidates6(*P, g, hint, &sols, &kept_);
    const bool checked = P->fk != nullptr;
    if (checked && analytic::checkCandidates6(*P, g, ctx.options(), &kept_) > 0) ctx.candidatesChecked();
    Status status = Status::kConverged;
    std::string message = analytic::singularityMessage(P->plan, sols.singular);
    if (sols.count + sols.outside == 0) {
      status = Status::kStalled;
      message = "target out of reach: the closed form has no real solution";
    } else if (kept_.empty()) {
      status = Status::kStalled;
      message = "the closed form has real solutions, none within the joint limits";
    }
    finish(ctx, q, kept_, P->limits, 6, status, std::move(message), trace, buffer_);
    // The kernel's FK of the answer is its verdict's (lane_fk.h).
    if (checked && !kept_.empty()) ctx.evaluatedElsewhere(q, kept_.front().errors);
  }

 private:
  const Arm6* prepare(const Problem& problem, std::string* why) const {
    if (!singlePoseGoal(problem, "analytic-6r", why)) return nullptr;
    if (!cache_.matches(problem)) {
      cache_.key(problem);
      cache_.ok = analytic::prepareArm6(problem, analytic::Tolerances{}, &cache_.value, &cache_.why);
    }
    if (!cache_.ok && why) *why = cache_.why;
    return cache_.ok ? &cache_.value : nullptr;
  }

  mutable PlanCache<Arm6> cache_;
  std::vector<Candidate6> kept_;
  Eigen::VectorXd buffer_;
};

// ---------------------------------------------------------------- 7R --

struct Prepared7 {
  std::vector<int> joints;
  ChainLimits limits;
  Chain7 chain;
  int free = -1;             // chain index of the searched joint
  std::vector<double> grid;  // its sampled values
  analytic::LockedPlan locked;  // the 6R left, classified once
  analytic::Limits6 limits6;    // the limits of the 6 joints left
  // The compiled kernel's FK for the returned solutions (null when the
  // kernel does not take the model: Solver::solve checks them instead).
  std::unique_ptr<LaneFk> fk;
};

struct Candidate7 {
  double dist;
  std::array<double, 7> q;
};

class Analytic7rSolver final : public Solver {
 public:
  explicit Analytic7rSolver(const Analytic7rOptions& o)
      : free_joint_(o.free_joint), samples_(o.samples), max_solutions_(o.max_solutions) {}

  bool supports(const Problem& problem, std::string* why) const override { return prepare(problem, why) != nullptr; }
  bool restartable() const override { return false; }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    std::string why;
    const Prepared7* P = prepare(problem, &why);
    if (!P) {
      ctx.stop(Status::kUnsupported, why);
      return;
    }
    const bool trace = ctx.options().record_trace;
    if (trace) ctx.begin(q, ctx.evaluate(q));
    const Goal& g = problem.goals[0];
    const int f = P->free;
    std::array<double, 7> start;
    for (int i = 0; i < 7; ++i) start[i] = q[P->limits.iq[i]];
    std::array<double, 6> hint;
    for (int i = 0, m = 0; i < 7; ++i)
      if (i != f) hint[m++] = start[i];
    // Every branch is completed when max_solutions is at least the family's
    // size; otherwise those farther than the max_solutions closest so far are
    // pruned. Should the FK check reject one of the closest (never seen: the
    // solutions are exact), a pruned branch might have been next: the sweep
    // is run again without the bound.
    Sweep sw = sweep(*P, g, start, hint, true);
    const size_t want = static_cast<size_t>(max_solutions_);
    int failed = 0;
    if (P->fk) {
      failed = checkClosest(*P, g, ctx.options());
      if (failed > 0 && sw.pruned + sw.skipped > 0) {
        sw = sweep(*P, g, start, hint, false);
        failed = checkClosest(*P, g, ctx.options());
      }
      if (failed < static_cast<int>(sw.distinct)) ctx.candidatesChecked();
    } else {
      closestFirst(0, std::min(sw.distinct, want));
      kept_.resize(std::min(sw.distinct, want));
    }
    const size_t distinct = sw.distinct;
    const int used = sw.used, empty_samples = sw.empty;
    std::string message = fmt::format(
        "{} distinct solution{} within limits on {} values of joint {} ('{}'): a sampled family of the self-motion "
        "manifold{}{}; {} value{} gave none",
        distinct, distinct == 1 ? "" : "s", used, f + 1, problem.model->joint(P->joints[f]).name,
        failed > 0 ? fmt::format(", {} of them not within tolerance by FK", failed) : "",
        distinct - failed > kept_.size() || sw.pruned + sw.skipped > 0
            ? fmt::format(" (the {} closest to the start returned{})", kept_.size(),
                          sw.pruned + sw.skipped > 0
                              ? fmt::format("; {} branch{} and {} held value{} farther than those left unfinished",
                                            sw.pruned, sw.pruned == 1 ? "" : "es", sw.skipped,
                                            sw.skipped == 1 ? "" : "s")
                              : "")
            : "",
        empty_samples, empty_samples == 1 ? "" : "s");
    if (sw.singular)
      message +=
          "; " + analytic::singularityMessage(sw.singular_plan, sw.singular) + " (joints numbered in the 6R left)";
    if (sw.found == 0) message = "target out of reach at every value of the searched joint: " + message;
    finish(ctx, q, kept_, P->limits, 7, kept_.empty() ? Status::kStalled : Status::kConverged, std::move(message),
           trace, buffer_);
  }

 private:
  struct Sweep {
    size_t distinct = 0;  // distinct solutions kept (within limits, completed)
    int found = 0;        // solutions and branches found, within limits or not
    int used = 0;         // values of the held joint solved
    int empty = 0;        // of them, those that gave no solution within limits
    int pruned = 0;       // branches left unfinished by the bound
    int skipped = 0;      // values of the held joint left unsolved by the bound
    unsigned singular = 0;
    Plan6 singular_plan;
  };

  // Solves the 6R left at every held value, into kept_ (distinct, within
  // limits, unordered). The start configuration's own value of the held
  // joint first (so that a target near the start keeps its branch), then the
  // grid values nearest it first, so that the max_solutions closest are
  // found early and, with `use_bound`, a branch whose first angles already
  // put it farther than them is left unfinished (analytic::Bound6).
  Sweep sweep(const Prepared7& P, const Goal& g, const std::array<double, 7>& start,
              const std::array<double, 6>& hint, bool use_bound) {
    Sweep sw;
    const int f = P.free;
    const int n = static_cast<int>(P.grid.size());
    const bool start_on_grid = std::find(P.grid.begin(), P.grid.end(), start[f]) != P.grid.end();
    order_.clear();
    if (!start_on_grid) order_.push_back(n);
    const size_t first_grid = order_.size();
    for (int k = 0; k < n; ++k) order_.push_back(k);
    auto value = [&](int item) { return item < n ? P.grid[item] : start[f]; };
    // Each grid value's distance to the start's, computed once (not in every
    // comparison of the sort).
    keys_.resize(n);
    for (int k = 0; k < n; ++k) keys_[k] = std::abs(analytic::turnDifference(P.grid[k], start[f]));
    std::sort(order_.begin() + static_cast<long>(first_grid), order_.end(),
              [&](int a, int b) { return keys_[a] < keys_[b] || (keys_[a] == keys_[b] && a < b); });
    ranges_.assign(n + 1, HeldRange{0, 0, false});
    kept_.clear();
    heap_.clear();
    const size_t want = static_cast<size_t>(max_solutions_);
    analytic::Bound6 bound;
    for (int i = 0, m = 0; i < 7; ++i)
      if (i != f) bound.from[m++] = start[i];
    Plan6 plan;
    Solutions6 sols;
    for (int item : order_) {
      const double theta = value(item);
      HeldRange& range = ranges_[item];
      range.begin = range.end = kept_.size();
      range.done = true;
      const double dt = theta - start[f];
      bound.base = dt * dt;
      // The farthest of the max_solutions closest so far, with room for the
      // rounding of the partial sums (the bound keeps every solution within it).
      bound.bound = heap_.size() == want ? heap_.front() * (1 + 1e-12) : std::numeric_limits<double>::infinity();
      if (use_bound && bound.base > bound.bound) {
        // The held joint alone puts every branch of this value beyond the
        // bound (solve6 would prune each before its wrist, as base plus
        // squares is at least base): the value is not solved at all.
        ++sw.skipped;
        continue;
      }
      ++sw.used;
      // Values solved before within the duplicate distance (modulo 2 pi):
      // the grid's neighbours on either side, on a very fine grid, and the
      // start's value.
      near_.clear();
      auto near = [&](int r) {
        return std::abs(analytic::turnDifference(value(r), theta)) <= kDistinctSolutionDistance;
      };
      if (item < n) {
        if (ranges_[n].done && near(n)) near_.push_back(n);
        for (int dir : {-1, 1})
          for (int step = 1; step < n; ++step) {
            const int r = ((item + dir * step) % n + n) % n;
            if (!near(r)) break;
            if (ranges_[r].done) near_.push_back(r);
          }
      }
      analytic::planAt(P.locked, theta, &plan);
      analytic::solve6(plan, g.target_orientation, g.target_position, hint, &sols, &P.limits6,
                       use_bound ? &bound : nullptr);
      sw.found += sols.count + sols.outside + sols.pruned;
      sw.pruned += sols.pruned;
      if (sols.singular && !sw.singular) sw.singular_plan = plan;
      sw.singular |= sols.singular;
      for (int s = 0; s < sols.count; ++s) addCandidate(P, theta, sols.q[s], start, range.begin);
      range.end = kept_.size();
      sw.empty += range.end == range.begin && sols.pruned == 0;
    }
    sw.distinct = kept_.size();
    return sw;
  }

  // Orders kept_[begin, end) closest to the start first, with everything
  // after it at least as far (a selection, then a sort of the selected: the
  // family has up to 8 solutions per held value, of which max_solutions are
  // returned).
  void closestFirst(size_t begin, size_t end) {
    auto by_dist = [](const Candidate7& a, const Candidate7& b) { return a.dist < b.dist; };
    if (end < kept_.size()) std::nth_element(kept_.begin() + begin, kept_.begin() + end, kept_.end(), by_dist);
    std::sort(kept_.begin() + begin, kept_.begin() + end, by_dist);
  }

  // What Solver::solve does with offered candidates (FK check; the wrap and
  // the duplicate check are done by solve6 and addCandidate), done at once
  // for the max_solutions closest: their FK in passes of the compiled kernel
  // (P.fk, one lane per candidate, up to LaneFk::kMaxCount a pass), the next
  // closest taking the place of any that fails. Leaves those within
  // tolerance in kept_, closest first, and returns how many of the distinct
  // candidates failed; when all fail, leaves the closest alone in kept_ (its
  // error is the verdict's to report).
  int checkClosest(const Prepared7& P, const Goal& goal, const SolverOptions& options) {
    const size_t total = kept_.size(), want = static_cast<size_t>(max_solutions_);
    const int dof = P.fk->dof();
    double q[LaneFk::kMaxCount * 7];
    GoalErrors e[LaneFk::kMaxCount];
    size_t ordered = std::min(total, want), next = 0, m = 0;
    int failed = 0;
    closestFirst(0, ordered);
    while (m < want && next < total) {
      if (next == ordered) {  // a failure left room: the rest in order
        closestFirst(ordered, total);
        ordered = total;
      }
      const int count = static_cast<int>(std::min<size_t>({LaneFk::kMaxCount, ordered - next, want - m}));
      for (int c = 0; c < count; ++c)
        for (int i = 0; i < 7; ++i) q[dof * c + P.limits.iq[i]] = kept_[next + c].q[i];
      P.fk->errors(goal, q, count, e);
      for (int c = 0; c < count; ++c) {
        if (e[c].position <= options.position_tolerance && e[c].orientation <= options.orientation_tolerance) {
          kept_[m++] = kept_[next + c];
        } else {
          ++failed;
        }
      }
      next += count;
    }
    // All failed: every one was checked, in order, so kept_[0] is the closest.
    kept_.resize(m == 0 ? std::min<size_t>(total, 1) : m);
    return failed;
  }

  // Keeps a 6R solution (within the limits) with the held joint at theta
  // unless it repeats one kept before: of the same value (kept from
  // kept_begin on; singular targets) or of a value in near_.
  void addCandidate(const Prepared7& P, double theta, const std::array<double, 6>& q6,
                    const std::array<double, 7>& start, size_t kept_begin) {
    const int f = P.free;
    Candidate7 c{0.0, {}};
    for (int i = 0, m = 0; i < 7; ++i) c.q[i] = i == f ? theta : q6[m++];
    // solve6 wrapped the six angles into their limits (and theta is a grid
    // value within them, or the start's, clamped into them).
    for (int i = 0; i < 7; ++i) {
      const double d = c.q[i] - start[i];
      c.dist += d * d;
    }
    auto repeats = [&](size_t begin, size_t end) {
      for (size_t j = begin; j < end; ++j)
        if (analytic::sameSolution(kept_[j].q, c.q)) return true;
      return false;
    };
    if (repeats(kept_begin, kept_.size())) return;
    for (int r : near_)
      if (repeats(ranges_[r].begin, ranges_[r].end)) return;
    kept_.push_back(c);
    // The max_solutions smallest distances so far, the largest on top. Once
    // full, a distance not below the top would be pushed and popped again:
    // the top, the only element read, stays the same.
    if (heap_.size() == static_cast<size_t>(max_solutions_) && !(c.dist < heap_.front())) return;
    heap_.push_back(c.dist);
    std::push_heap(heap_.begin(), heap_.end());
    if (heap_.size() > static_cast<size_t>(max_solutions_)) {
      std::pop_heap(heap_.begin(), heap_.end());
      heap_.pop_back();
    }
  }

  const Prepared7* prepare(const Problem& problem, std::string* why) const {
    if (!singlePoseGoal(problem, "analytic-7r", why)) return nullptr;
    if (!cache_.matches(problem)) {
      cache_.key(problem);
      const Model& model = *problem.model;
      const Goal& g = problem.goals[0];
      Prepared7& p = cache_.value;
      cache_.ok = analytic::revoluteChain(model, g.body, 7, &p.joints, &cache_.why);
      if (cache_.ok) {
        p.chain = analytic::chainAtZero<7>(model, p.joints, g.body, g.point);
        p.limits.read(model, p.joints);
        std::array<std::string, 7> names;
        for (int i = 0; i < 7; ++i) names[i] = model.joint(p.joints[i]).name;
        std::array<double, 7> lo, hi;
        std::copy(p.limits.lo.begin(), p.limits.lo.end(), lo.begin());
        std::copy(p.limits.hi.begin(), p.limits.hi.end(), hi.begin());
        p.free = analytic::chooseFreeJoint(p.chain, free_joint_, lo, hi, &cache_.why, &names);
        cache_.ok = p.free >= 0 && analytic::lockPlan(p.chain, p.free, kLockAngle, &p.locked, &cache_.why);
        p.fk = nullptr;
        if (cache_.ok) {
          p.fk = LaneFk::forProblem(problem);
          p.grid = analytic::freeJointGrid(p.limits.lo[p.free], p.limits.hi[p.free], samples_);
          for (int i = 0, m = 0; i < 7; ++i)
            if (i != p.free) {
              p.limits6.lo[m] = lo[i];
              p.limits6.hi[m++] = hi[i];
            }
        }
      }
    }
    if (!cache_.ok && why) *why = cache_.why;
    return cache_.ok ? &cache_.value : nullptr;
  }

  int free_joint_ = -1, samples_ = 64, max_solutions_ = 64;
  mutable PlanCache<Prepared7> cache_;
  std::vector<Candidate7> kept_;
  // Each held value's candidates in kept_ (grid values by their index, the
  // start's value last), and whether the value has been solved.
  struct HeldRange {
    size_t begin, end;
    bool done;
  };
  std::vector<HeldRange> ranges_;
  std::vector<int> order_;      // the values in the order they are solved
  std::vector<int> near_;       // solved values within the duplicate distance of the current one
  std::vector<double> heap_;    // the max_solutions smallest distances kept so far (a max-heap)
  std::vector<double> keys_;    // each grid value's distance to the start's value (modulo 2 pi)
  Eigen::VectorXd buffer_;
};

}  // namespace

void registerAnalyticIkSolvers(Registry& registry) {
  registry.add(solverInfo("analytic-6r",
                          "closed-form IK of a 6R arm with a spherical wrist or three parallel axes 2-4 (UR): every "
                          "solution, up to 8, by Paden-Kahan subproblems (Paden 1985; Pieper 1968; Elias & Wen, "
                          "IK-Geo, 2022)",
                          OptionsBinding<Analytic6rOptions>{},
                          [](const Analytic6rOptions&) { return std::make_unique<Analytic6rSolver>(); }));
  OptionsBinding<Analytic7rOptions> b;
  b.integer("free_joint", &Analytic7rOptions::free_joint, Range::closed(-1, 6), "",
            "chain index (0-6, root first) of the searched joint; -1 = of the joints whose holding leaves a "
            "spherical-wrist or three-parallel-axes 6R, the one that moves most along the self-motion (median "
            "null-space share over 64 seeded configurations)");
  b.integer("samples", &Analytic7rOptions::samples, Range::closed(1, 1'000'000), "",
            "grid size: the joint's limits [lo, hi] evenly with both ends, or [-pi, pi) evenly when unlimited or "
            "spanning a turn; the start configuration's value is added");
  b.integer("max_solutions", &Analytic7rOptions::max_solutions, Range::closed(1, 1'000'000), "",
            "at most this many distinct solutions are returned, the closest to the start configuration first");
  registry.add(solverInfo(
      "analytic-7r",
      "7R arm by a 1-D search: one joint held on a grid over its limits, the 6R left solved in closed form (IK-Geo's "
      "1-D search, Elias & Wen 2022; EAIK, Ostermeier et al. 2024); returns a sampled family of the self-motion "
      "manifold",
      b, [](const Analytic7rOptions& o) { return std::make_unique<Analytic7rSolver>(o); }));
}

}  // namespace ikbench
