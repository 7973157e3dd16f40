// The two hierarchy methods of hierarchy.h.
#include "hierarchy.h"

#include <fmt/format.h>

#include <Eigen/LU>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ikbench::wholebody {
namespace {

// Singular values at or below kRankTolerance * s_max (and below
// kAbsoluteRank) count as zero: the directions a level cannot move.
constexpr double kRankTolerance = 1e-9;
constexpr double kAbsoluteRank = 1e-12;
// An inequality row counts as violated beyond this much [row units].
constexpr double kFeasibility = 1e-10;
// Added to lambda^2 in the QP so that a level with lambda = 0 is still a
// strictly convex problem (its minimum-norm solution, to rounding).
constexpr double kDampingFloor2 = 1e-12;

double rankThreshold(const Eigen::VectorXd& s) {
  return std::max(kAbsoluteRank, s.size() > 0 ? kRankTolerance * s.maxCoeff() : 0.0);
}

// The levels with every empty part as 0 x n, after the checks of the header.
std::vector<TaskLevel> checkedLevels(const std::vector<TaskLevel>& levels, const Eigen::VectorXd& lo,
                                     const Eigen::VectorXd& hi, const HierarchyOptions& options) {
  const Eigen::Index n = lo.size();
  if (hi.size() != n)
    throw std::invalid_argument(fmt::format("hierarchy: dq_lower has {} entries but dq_upper has {}", n, hi.size()));
  if (!std::isfinite(options.damping) || options.damping < 0.0)
    throw std::invalid_argument(fmt::format("hierarchy: damping must be finite and >= 0, got {}", options.damping));
  if (options.max_active_set_iterations < 1)
    throw std::invalid_argument(
        fmt::format("hierarchy: max_active_set_iterations must be >= 1, got {}", options.max_active_set_iterations));
  for (Eigen::Index i = 0; i < n; ++i)
    if (std::isnan(lo[i]) || std::isnan(hi[i]) || lo[i] > hi[i] || lo[i] == INFINITY || hi[i] == -INFINITY)
      throw std::invalid_argument(
          fmt::format("hierarchy: box entry {}: expected dq_lower <= dq_upper with a finite side each, got [{}, {}]", i,
                      lo[i], hi[i]));
  std::vector<TaskLevel> out(levels.size());
  for (size_t k = 0; k < levels.size(); ++k) {
    const TaskLevel& l = levels[k];
    auto part = [&](const Eigen::MatrixXd& M, const Eigen::VectorXd& v, const char* mname, const char* vname,
                    Eigen::MatrixXd* Mo, Eigen::VectorXd* vo) {
      if (M.rows() > 0 && M.cols() != n)
        throw std::invalid_argument(
            fmt::format("hierarchy: level {}: {} has {} columns, expected n = {}", k, mname, M.cols(), n));
      if (v.size() != M.rows())
        throw std::invalid_argument(fmt::format("hierarchy: level {}: {} has {} entries for {} rows of {}", k, vname,
                                                v.size(), M.rows(), mname));
      if (!M.allFinite() || !v.allFinite())
        throw std::invalid_argument(
            fmt::format("hierarchy: level {}: {} or {} has a non-finite entry", k, mname, vname));
      if (M.rows() > 0) {
        *Mo = M;
        *vo = v;
      } else {
        Mo->resize(0, n);
        vo->resize(0);
      }
    };
    part(l.A, l.b, "A", "b", &out[k].A, &out[k].b);
    part(l.C, l.upper, "C", "upper", &out[k].C, &out[k].upper);
  }
  return out;
}

void fillResiduals(const std::vector<TaskLevel>& levels, HierarchyStep* step) {
  step->level_residual.clear();
  for (const TaskLevel& l : levels) step->level_residual.push_back(levelResidual(l, step->dq));
}

// min 1/2 y^T H y + g^T y  s.t.  G y <= h, H positive definite, from a
// feasible y: the primal active-set method (Nocedal & Wright 2006, Algorithm
// 16.3). The working set W stays linearly independent (a blocking row has
// G_i p > 0 while every row of W has G_W p = 0), so the KKT matrix
// [H G_W^T; G_W 0] is invertible (LU with partial pivoting). Stops after max_iterations iterations with
// the (feasible) point reached.
Eigen::VectorXd activeSetQp(const Eigen::MatrixXd& H, const Eigen::VectorXd& g, const Eigen::MatrixXd& G,
                            const Eigen::VectorXd& h, Eigen::VectorXd y, int max_iterations, int* iterations) {
  const Eigen::Index n = H.rows(), m = G.rows();
  std::vector<Eigen::Index> W;
  std::vector<char> in_w(static_cast<size_t>(m), 0);
  Eigen::MatrixXd K;
  Eigen::VectorXd rhs;
  for (int it = 0; it < max_iterations; ++it) {
    ++*iterations;
    const Eigen::Index w = static_cast<Eigen::Index>(W.size());
    K.setZero(n + w, n + w);
    K.topLeftCorner(n, n) = H;
    for (Eigen::Index j = 0; j < w; ++j) {
      K.block(0, n + j, n, 1) = G.row(W[j]).transpose();
      K.block(n + j, 0, 1, n) = G.row(W[j]);
    }
    rhs.setZero(n + w);
    rhs.head(n) = -(H * y + g);
    const Eigen::VectorXd sol = K.partialPivLu().solve(rhs);
    const Eigen::VectorXd p = sol.head(n);
    if (!p.allFinite()) break;
    if (p.norm() <= 1e-12 * (1.0 + y.norm())) {
      // A stationary point on W: optimal when every multiplier is >= 0,
      // otherwise the row with the most negative one leaves W.
      Eigen::Index j_min = -1;
      double mu_min = -1e-10 * (1.0 + (w > 0 ? sol.tail(w).cwiseAbs().maxCoeff() : 0.0));
      for (Eigen::Index j = 0; j < w; ++j)
        if (sol[n + j] < mu_min) mu_min = sol[n + j], j_min = j;
      if (j_min < 0) break;
      in_w[static_cast<size_t>(W[j_min])] = 0;
      W.erase(W.begin() + j_min);
      continue;
    }
    double alpha = 1.0;
    Eigen::Index blocking = -1;
    const double pn = p.norm();
    for (Eigen::Index i = 0; i < m; ++i) {
      if (in_w[static_cast<size_t>(i)]) continue;
      const double gp = G.row(i).dot(p);
      if (gp <= 1e-13 * G.row(i).norm() * pn) continue;
      const double a = std::max(0.0, (h[i] - G.row(i).dot(y)) / gp);
      if (a < alpha) alpha = a, blocking = i;
    }
    y += alpha * p;
    if (blocking >= 0) {
      W.push_back(blocking);
      in_w[static_cast<size_t>(blocking)] = 1;
    }
  }
  return y;
}

}  // namespace

double levelResidual(const TaskLevel& level, const Eigen::VectorXd& dq) {
  double s = 0.0;
  if (level.A.rows() > 0) s += (level.A * dq - level.b).squaredNorm();
  if (level.C.rows() > 0) s += (level.C * dq - level.upper).cwiseMax(0.0).squaredNorm();
  return std::sqrt(s);
}

HierarchyStep projectHierarchy(const std::vector<TaskLevel>& input, const Eigen::VectorXd& lo,
                               const Eigen::VectorXd& hi, const HierarchyOptions& options) {
  const std::vector<TaskLevel> levels = checkedLevels(input, lo, hi, options);
  const Eigen::Index n = lo.size();
  const double lambda2 = options.damping * options.damping;
  if (n == 0) {
    HierarchyStep step;
    step.dq.resize(0);
    fillResiduals(levels, &step);
    return step;
  }
  // Rows taken as equalities: initially those violated at dq = 0.
  std::vector<std::vector<char>> active(levels.size());
  for (size_t k = 0; k < levels.size(); ++k) {
    active[k].assign(static_cast<size_t>(levels[k].C.rows()), 0);
    for (Eigen::Index i = 0; i < levels[k].C.rows(); ++i) active[k][i] = levels[k].upper[i] < 0.0;
  }
  std::vector<char> frozen(static_cast<size_t>(n), 0);
  Eigen::VectorXd fixed = Eigen::VectorXd::Zero(n);
  HierarchyStep step;
  Eigen::MatrixXd P, M, rows;
  Eigen::VectorXd target;
  for (int pass = 0;; ++pass) {
    ++step.iterations;
    step.dq = fixed;
    step.level_dq.assign(levels.size(), Eigen::VectorXd::Zero(n));
    Eigen::VectorXd before = Eigen::VectorXd::Zero(n);
    P.setZero(n, n);
    for (Eigen::Index v = 0; v < n; ++v) P(v, v) = frozen[v] ? 0.0 : 1.0;
    for (size_t k = 0; k < levels.size(); ++k) {
      const TaskLevel& l = levels[k];
      const Eigen::Index na = std::count(active[k].begin(), active[k].end(), 1);
      rows.resize(l.A.rows() + na, n);
      target.resize(rows.rows());
      rows.topRows(l.A.rows()) = l.A;
      target.head(l.A.rows()) = l.b;
      for (Eigen::Index i = 0, r = l.A.rows(); i < l.C.rows(); ++i)
        if (active[k][i]) {
          rows.row(r) = l.C.row(i);
          target[r++] = l.upper[i];
        }
      if (rows.rows() == 0) {
        step.level_dq[k] = step.dq - before;
        before = step.dq;
        continue;
      }
      M.noalias() = rows * P;
      const Eigen::JacobiSVD<Eigen::MatrixXd> svd(M, Eigen::ComputeThinU | Eigen::ComputeThinV);
      const Eigen::VectorXd& s = svd.singularValues();
      const double tol = rankThreshold(s);
      const Eigen::VectorXd e = target - rows * step.dq;
      const Eigen::VectorXd ue = svd.matrixU().transpose() * e;
      for (Eigen::Index i = 0; i < s.size(); ++i) {
        if (s[i] <= tol) continue;
        const Eigen::VectorXd vi = svd.matrixV().col(i);
        step.dq += (s[i] / (s[i] * s[i] + lambda2) * ue[i]) * vi;
        P.noalias() -= vi * vi.transpose();
      }
      P = 0.5 * (P + P.transpose()).eval();
      step.level_dq[k] = step.dq - before;
      before = step.dq;
    }
    if (pass + 1 >= options.max_active_set_iterations) break;
    bool changed = false;
    for (size_t k = 0; k < levels.size(); ++k)
      for (Eigen::Index i = 0; i < levels[k].C.rows(); ++i)
        if (!active[k][i] && levels[k].C.row(i).dot(step.dq) > levels[k].upper[i] + kFeasibility) {
          active[k][i] = 1;
          changed = true;
        }
    for (Eigen::Index v = 0; v < n; ++v) {
      if (frozen[v]) continue;
      if (step.dq[v] > hi[v] || step.dq[v] < lo[v]) {
        frozen[v] = 1;
        fixed[v] = step.dq[v] > hi[v] ? hi[v] : lo[v];
        changed = true;
      }
    }
    if (!changed) break;
  }
  // The box is the top level: if the pass bound ended the loop first, the
  // step is still put inside it.
  const Eigen::VectorXd inside = step.dq.cwiseMax(lo).cwiseMin(hi);
  if (!step.level_dq.empty()) step.level_dq.back() += inside - step.dq;
  step.dq = inside;
  fillResiduals(levels, &step);
  return step;
}

HierarchyStep solveHierarchy(const std::vector<TaskLevel>& input, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                             const HierarchyOptions& options) {
  const std::vector<TaskLevel> levels = checkedLevels(input, lo, hi, options);
  const Eigen::Index n = lo.size();
  const double lambda2 = options.damping * options.damping + kDampingFloor2;
  HierarchyStep step;
  if (n == 0) {
    step.dq.resize(0);
    fillResiduals(levels, &step);
    return step;
  }
  // x: the step so far (feasible for the box and every level above).
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n).cwiseMax(lo).cwiseMin(hi);
  Eigen::MatrixXd Z = Eigen::MatrixXd::Identity(n, n);
  // Hard rows G x <= h: the box's finite sides, then the inequality rows of
  // the levels solved so far with their optimal slacks.
  std::vector<Eigen::RowVectorXd> g_rows;
  std::vector<double> g_rhs;
  for (Eigen::Index v = 0; v < n; ++v) {
    if (std::isfinite(hi[v])) {
      g_rows.push_back(Eigen::RowVectorXd::Unit(n, v));
      g_rhs.push_back(hi[v]);
    }
    if (std::isfinite(lo[v])) {
      g_rows.push_back(-Eigen::RowVectorXd::Unit(n, v));
      g_rhs.push_back(-lo[v]);
    }
  }
  Eigen::VectorXd before = Eigen::VectorXd::Zero(n);
  for (const TaskLevel& l : levels) {
    const Eigen::Index nz = Z.cols(), p = l.C.rows(), nh = static_cast<Eigen::Index>(g_rows.size());
    if (l.A.rows() + p > 0) {
      const Eigen::MatrixXd AZ = l.A * Z;
      // Variables y = (z, w): the motion in the free subspace and the slacks.
      Eigen::MatrixXd H = Eigen::MatrixXd::Zero(nz + p, nz + p);
      H.topLeftCorner(nz, nz).noalias() = AZ.transpose() * AZ;
      H.topLeftCorner(nz, nz).diagonal().array() += lambda2;
      H.bottomRightCorner(p, p).setIdentity();
      Eigen::VectorXd g = Eigen::VectorXd::Zero(nz + p);
      g.head(nz).noalias() = AZ.transpose() * (l.A * x - l.b);
      Eigen::MatrixXd G = Eigen::MatrixXd::Zero(nh + p, nz + p);
      Eigen::VectorXd h(nh + p);
      for (Eigen::Index i = 0; i < nh; ++i) {
        G.row(i).head(nz).noalias() = g_rows[i] * Z;
        h[i] = g_rhs[i] - g_rows[i].dot(x);
      }
      if (p > 0) {
        G.bottomLeftCorner(p, nz).noalias() = l.C * Z;
        G.bottomRightCorner(p, p) = -Eigen::MatrixXd::Identity(p, p);
        h.tail(p) = l.upper - l.C * x;
      }
      Eigen::VectorXd y = Eigen::VectorXd::Zero(nz + p);
      if (p > 0) y.tail(p) = (l.C * x - l.upper).cwiseMax(0.0);
      y = activeSetQp(H, g, G, h, y, options.max_active_set_iterations, &step.iterations);
      x.noalias() += Z * y.head(nz);
    }
    step.level_dq.push_back(x - before);
    before = x;
    // The levels below keep this level's inequality rows at their optimal
    // slack, C_i dq <= max(upper_i, C_i x) ...
    for (Eigen::Index i = 0; i < p; ++i) {
      g_rows.push_back(l.C.row(i));
      g_rhs.push_back(std::max(l.upper[i], l.C.row(i).dot(x)));
    }
    // ... and its equality rows at their values: Z <- Z null(A Z).
    if (l.A.rows() > 0 && nz > 0) {
      const Eigen::JacobiSVD<Eigen::MatrixXd> svd(l.A * Z, Eigen::ComputeFullV);
      const Eigen::VectorXd& s = svd.singularValues();
      const double tol = rankThreshold(s);
      Eigen::Index rank = 0;
      while (rank < s.size() && s[rank] > tol) ++rank;
      Z = (Z * svd.matrixV().rightCols(nz - rank)).eval();
    }
  }
  step.dq = x;
  fillResiduals(levels, &step);
  return step;
}

}  // namespace ikbench::wholebody
