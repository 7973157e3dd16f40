// The priority hierarchies of solvers/src/wholebody/hierarchy.h: strict
// priority, agreement of the projection and the hierarchical QP on equality
// hierarchies, hand-worked small cases, inequalities (inactive, met exactly,
// least-squares slack when infeasible), the HQP against a brute-force
// enumeration of active sets, rank-deficient and degenerate input.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "../solvers/src/wholebody/hierarchy.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench::wholebody {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
constexpr double kInf = std::numeric_limits<double>::infinity();

TaskLevel equality(const MatrixXd& A, const VectorXd& b) {
  TaskLevel l;
  l.A = A;
  l.b = b;
  return l;
}
TaskLevel inequality(const MatrixXd& C, const VectorXd& u) {
  TaskLevel l;
  l.C = C;
  l.upper = u;
  return l;
}
VectorXd freeBox(int n, double sign) { return VectorXd::Constant(n, sign * kInf); }

MatrixXd randomMatrix(Rng& rng, int rows, int cols) {
  MatrixXd M(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) M(i, j) = rng.uniform(-1.0, 1.0);
  return M;
}
VectorXd randomVector(Rng& rng, int n, double lo = -1.0, double hi = 1.0) {
  VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = rng.uniform(lo, hi);
  return v;
}

HierarchyOptions undamped() {
  HierarchyOptions o;
  o.damping = 0.0;
  return o;
}

using Method = HierarchyStep (*)(const std::vector<TaskLevel>&, const VectorXd&, const VectorXd&,
                                 const HierarchyOptions&);
const std::vector<std::pair<const char*, Method>> kMethods = {{"projection", &projectHierarchy},
                                                              {"hqp", &solveHierarchy}};

// Two conflicting levels on 4 DOF (3 + 3 rows): the hierarchy keeps level 0's
// residual whatever level 1 asks; the weighted sum of both trades it away.
TEST(WholebodyHierarchy, StrictPriorityKeepsTheTopLevelWeightingDoesNot) {
  Rng rng(11);
  const int n = 4;
  for (int trial = 0; trial < 5; ++trial) {
    const MatrixXd A0 = randomMatrix(rng, 3, n), A1 = randomMatrix(rng, 3, n);
    const VectorXd b0 = randomVector(rng, 3), b1 = randomVector(rng, 3, 2.0, 3.0);
    for (const auto& [name, method] : kMethods) {
      SCOPED_TRACE(name);
      const HierarchyStep top = method({equality(A0, b0)}, freeBox(n, -1), freeBox(n, 1), HierarchyOptions{});
      const HierarchyStep both =
          method({equality(A0, b0), equality(A1, b1)}, freeBox(n, -1), freeBox(n, 1), HierarchyOptions{});
      ASSERT_EQ(both.level_residual.size(), 2u);
      EXPECT_NEAR(both.level_residual[0], top.level_residual[0], 1e-9);
      EXPECT_NEAR((A0 * both.dq - b0).norm(), (A0 * top.dq - b0).norm(), 1e-9);
      // Level 1 did move: it is better off than with level 0 alone.
      EXPECT_LT(both.level_residual[1], levelResidual(equality(A1, b1), top.dq) - 1e-3);
    }
    // Weighted least squares over both levels (weight 1 each): level 0's
    // residual grows.
    MatrixXd A(6, n);
    A << A0, A1;
    VectorXd b(6);
    b << b0, b1;
    const VectorXd weighted = A.completeOrthogonalDecomposition().solve(b);
    const HierarchyStep top = solveHierarchy({equality(A0, b0)}, freeBox(n, -1), freeBox(n, 1), HierarchyOptions{});
    EXPECT_GT((A0 * weighted - b0).norm(), top.level_residual[0] + 1e-2);
  }
}

// Equality-only hierarchies: the QP's null-space basis spans the range of
// the projector, so both methods give the same step, damped or not.
TEST(WholebodyHierarchy, EqualityHierarchiesAgreeWithTheProjection) {
  Rng rng(5);
  for (double damping : {0.0, 1e-3, 0.1}) {
    HierarchyOptions o;
    o.damping = damping;
    for (int trial = 0; trial < 10; ++trial) {
      const int n = 7;
      std::vector<TaskLevel> levels;
      for (int k = 0; k < 3; ++k) levels.push_back(equality(randomMatrix(rng, 2 + k, n), randomVector(rng, 2 + k)));
      const HierarchyStep p = projectHierarchy(levels, freeBox(n, -1), freeBox(n, 1), o);
      const HierarchyStep q = solveHierarchy(levels, freeBox(n, -1), freeBox(n, 1), o);
      EXPECT_LT((p.dq - q.dq).norm(), 1e-6) << "damping " << damping;
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(p.level_residual[k], q.level_residual[k], 1e-6);
    }
  }
}

// Worked by hand. Level 0: x0 = 1. Level 1: x0 + x1 = 3 and x0 = 5, which
// conflicts with level 0: x1 minimises (1 + x1 - 3)^2 + (1 - 5)^2, x1 = 2,
// level 1's residual is 4.
TEST(WholebodyHierarchy, SmallCaseWorkedByHand) {
  MatrixXd A0(1, 2), A1(2, 2);
  A0 << 1, 0;
  A1 << 1, 1, 1, 0;
  const std::vector<TaskLevel> levels = {equality(A0, VectorXd::Constant(1, 1.0)),
                                         equality(A1, (VectorXd(2) << 3, 5).finished())};
  for (const auto& [name, method] : kMethods) {
    SCOPED_TRACE(name);
    const HierarchyStep s = method(levels, freeBox(2, -1), freeBox(2, 1), undamped());
    EXPECT_NEAR(s.dq[0], 1.0, 1e-9);
    EXPECT_NEAR(s.dq[1], 2.0, 1e-9);
    EXPECT_NEAR(s.level_residual[0], 0.0, 1e-9);
    EXPECT_NEAR(s.level_residual[1], 4.0, 1e-9);
  }
}

// One level A = diag(1, 2), b = (1, 1) with damping lambda:
// dq_i = a_i b_i / (a_i^2 + lambda^2) (damped least squares).
TEST(WholebodyHierarchy, DampedSingleLevelIsDampedLeastSquares) {
  MatrixXd A = MatrixXd::Zero(2, 2);
  A(0, 0) = 1;
  A(1, 1) = 2;
  HierarchyOptions o;
  o.damping = 0.5;
  for (const auto& [name, method] : kMethods) {
    SCOPED_TRACE(name);
    const HierarchyStep s = method({equality(A, VectorXd::Ones(2))}, freeBox(2, -1), freeBox(2, 1), o);
    EXPECT_NEAR(s.dq[0], 1.0 / 1.25, 1e-9);
    EXPECT_NEAR(s.dq[1], 2.0 / 4.25, 1e-9);
  }
}

// A level-0 half-plane x0 + x1 <= 1 that dq = 0 satisfies, level 1 asking
// for (2, 2): the QP holds the bound, x = (0.5, 0.5) (the projection of the
// target onto the half-plane); the projection method activates the row after
// its first pass and finds the same.
TEST(WholebodyHierarchy, InequalityActivatedByALowerLevel) {
  MatrixXd C(1, 2);
  C << 1, 1;
  const std::vector<TaskLevel> levels = {inequality(C, VectorXd::Ones(1)),
                                         equality(MatrixXd::Identity(2, 2), VectorXd::Constant(2, 2.0))};
  for (const auto& [name, method] : kMethods) {
    SCOPED_TRACE(name);
    const HierarchyStep s = method(levels, freeBox(2, -1), freeBox(2, 1), undamped());
    EXPECT_NEAR(s.dq[0], 0.5, 1e-9);
    EXPECT_NEAR(s.dq[1], 0.5, 1e-9);
    EXPECT_NEAR(s.level_residual[0], 0.0, 1e-12);
    EXPECT_NEAR(s.level_residual[1], std::sqrt(2 * 1.5 * 1.5), 1e-9);
  }
}

// Satisfied inequalities change nothing: the same step as without them.
TEST(WholebodyHierarchy, SatisfiedInequalitiesAreInactive) {
  Rng rng(3);
  const int n = 5;
  for (int trial = 0; trial < 5; ++trial) {
    const MatrixXd A = randomMatrix(rng, 3, n);
    const VectorXd b = randomVector(rng, 3);
    for (const auto& [name, method] : kMethods) {
      SCOPED_TRACE(name);
      const HierarchyStep plain = method({equality(A, b)}, freeBox(n, -1), freeBox(n, 1), HierarchyOptions{});
      // Rows both dq = 0 and the plain solution satisfy with a margin.
      const MatrixXd C = randomMatrix(rng, 4, n);
      const VectorXd u = (C * plain.dq).cwiseMax(0.0).array() + 0.5;
      for (const bool same_level : {false, true}) {
        std::vector<TaskLevel> levels;
        if (same_level) {
          TaskLevel l = equality(A, b);
          l.C = C;
          l.upper = u;
          levels = {l};
        } else {
          levels = {inequality(C, u), equality(A, b)};
        }
        const HierarchyStep s = method(levels, freeBox(n, -1), freeBox(n, 1), HierarchyOptions{});
        EXPECT_LT((s.dq - plain.dq).norm(), 1e-9);
        if (same_level)
          EXPECT_NEAR(s.level_residual[0], plain.level_residual[0], 1e-9);
        else
          EXPECT_EQ(s.level_residual[0], 0.0);
      }
    }
  }
}

// Violated at dq = 0 and feasible: x0 + x1 >= 1, x2 <= -0.5 at level 0, a
// level 1 pulling every DOF back to 0: the rows hold with equality, x = (0.5,
// 0.5, -0.5, 0).
TEST(WholebodyHierarchy, ViolatedFeasibleInequalitiesAreMetExactly) {
  MatrixXd C(2, 4);
  C << -1, -1, 0, 0, 0, 0, 1, 0;
  const VectorXd u = (VectorXd(2) << -1, -0.5).finished();
  const std::vector<TaskLevel> levels = {inequality(C, u), equality(MatrixXd::Identity(4, 4), VectorXd::Zero(4))};
  for (const auto& [name, method] : kMethods) {
    SCOPED_TRACE(name);
    const HierarchyStep s = method(levels, freeBox(4, -1), freeBox(4, 1), undamped());
    EXPECT_LT((C * s.dq - u).cwiseAbs().maxCoeff(), 1e-9);
    EXPECT_LT((s.dq - (VectorXd(4) << 0.5, 0.5, -0.5, 0).finished()).norm(), 1e-9);
    EXPECT_NEAR(s.level_residual[0], 0.0, 1e-9);
  }
}

// Infeasible: x0 <= -1, x1 <= -1, x0 + x1 >= 1. The least-squares slacks
// minimise (x0+1)^2 + (x1+1)^2 + (1-x0-x1)^2 at x = 0 with slacks (1, 1, 1),
// residual sqrt(3); a level 1 pulling elsewhere cannot move it (the slack
// optimum is unique).
TEST(WholebodyHierarchy, InfeasibleInequalitiesGiveTheLeastSquaresSlack) {
  MatrixXd C(3, 2);
  C << 1, 0, 0, 1, -1, -1;
  const VectorXd u = (VectorXd(3) << -1, -1, -1).finished();
  const std::vector<TaskLevel> levels = {inequality(C, u),
                                         equality(MatrixXd::Identity(2, 2), (VectorXd(2) << 5, -5).finished())};
  const HierarchyStep s = solveHierarchy(levels, freeBox(2, -1), freeBox(2, 1), undamped());
  EXPECT_LT(s.dq.norm(), 1e-8);
  EXPECT_NEAR(s.level_residual[0], std::sqrt(3.0), 1e-8);
  // Two contradicting rows, one DOF: x0 <= -1 and x0 >= 1 meet halfway.
  MatrixXd C2(2, 1);
  C2 << 1, -1;
  const HierarchyStep t = solveHierarchy(
      {inequality(C2, VectorXd::Constant(2, -1.0)), equality(MatrixXd::Identity(1, 1), VectorXd::Constant(1, 5.0))},
      freeBox(1, -1), freeBox(1, 1), undamped());
  EXPECT_NEAR(t.dq[0], 0.0, 1e-9);
  EXPECT_NEAR(t.level_residual[0], std::sqrt(2.0), 1e-9);
}

// The joint-limit box is above every level: both methods stop on it, and the
// levels below it use what the box leaves.
TEST(WholebodyHierarchy, TheBoxIsTheTopLevel) {
  MatrixXd A(2, 3);
  A << 1, 0, 0, 1, 1, 1;
  const VectorXd b = (VectorXd(2) << 2, 0).finished();
  const VectorXd lo = VectorXd::Constant(3, -1), hi = VectorXd::Constant(3, 1);
  for (const auto& [name, method] : kMethods) {
    SCOPED_TRACE(name);
    const HierarchyStep s = method({equality(A, b)}, lo, hi, undamped());
    EXPECT_NEAR(s.dq[0], 1.0, 1e-9);
    EXPECT_NEAR(s.dq[1] + s.dq[2], -1.0, 1e-9);  // the second row holds with x0 on its bound
    EXPECT_TRUE((s.dq.array() >= lo.array() - 1e-12).all() && (s.dq.array() <= hi.array() + 1e-12).all());
  }
}

// ---------------------------------------------------------------- brute force
// The minimum of |A x - b|^2 + |max(0, C x - u)|^2 subject to E x = f and
// G x <= h, by enumerating which hard rows hold with equality (T) and which
// soft rows are penalised (S): for each pair the equality-constrained least
// squares, kept when feasible; the piecewise objective's minimum over them is
// the optimum (the optimum's own T and S are among the pairs).
struct BruteForce {
  double value = kInf;
  VectorXd x;
};
BruteForce bruteForce(const MatrixXd& A, const VectorXd& b, const MatrixXd& C, const VectorXd& u, const MatrixXd& E,
                      const VectorXd& f, const MatrixXd& G, const VectorXd& h) {
  const int n = static_cast<int>(A.cols()), nh = static_cast<int>(G.rows()), ns = static_cast<int>(C.rows());
  BruteForce best;
  for (int T = 0; T < (1 << nh); ++T) {
    for (int S = 0; S < (1 << ns); ++S) {
      const int nt = __builtin_popcount(T), nsel = __builtin_popcount(S);
      MatrixXd Eq(E.rows() + nt, n);
      VectorXd eq(E.rows() + nt);
      Eq.topRows(E.rows()) = E;
      eq.head(E.rows()) = f;
      for (int i = 0, r = static_cast<int>(E.rows()); i < nh; ++i)
        if (T & (1 << i)) Eq.row(r) = G.row(i), eq[r++] = h[i];
      MatrixXd M(A.rows() + nsel, n);
      VectorXd m(A.rows() + nsel);
      M.topRows(A.rows()) = A;
      m.head(A.rows()) = b;
      for (int i = 0, r = static_cast<int>(A.rows()); i < ns; ++i)
        if (S & (1 << i)) M.row(r) = C.row(i), m[r++] = u[i];
      VectorXd xp = VectorXd::Zero(n);
      MatrixXd N = MatrixXd::Identity(n, n);
      if (Eq.rows() > 0) {
        xp = Eq.completeOrthogonalDecomposition().solve(eq);
        if ((Eq * xp - eq).norm() > 1e-9) continue;  // inconsistent equalities
        Eigen::JacobiSVD<MatrixXd> svd(Eq, Eigen::ComputeFullV);
        int rank = 0;
        while (rank < svd.singularValues().size() && svd.singularValues()[rank] > 1e-10) ++rank;
        N = svd.matrixV().rightCols(n - rank);
      }
      VectorXd x = xp;
      if (N.cols() > 0 && M.rows() > 0) x += N * (M * N).completeOrthogonalDecomposition().solve(m - M * xp);
      if (nh > 0 && (G * x - h).maxCoeff() > 1e-8) continue;
      const double value = (A * x - b).squaredNorm() + (C * x - u).cwiseMax(0.0).squaredNorm();
      if (value < best.value) best = {value, x};
    }
  }
  return best;
}

// Two levels with equalities and inequalities in a finite box on 4 DOF,
// random and seeded: each level's optimum (residual^2) from the HQP equals the
// brute-force optimum of that level given the levels above.
TEST(WholebodyHierarchy, HqpLevelsMatchBruteForceEnumeration) {
  Rng rng(2024);
  const int n = 4;
  for (int trial = 0; trial < 8; ++trial) {
    SCOPED_TRACE(trial);
    TaskLevel l0, l1;
    l0.A = randomMatrix(rng, 1, n);
    l0.b = randomVector(rng, 1);
    l0.C = randomMatrix(rng, 2, n);
    l0.upper = randomVector(rng, 2, -1.0, 0.5);
    l1.A = randomMatrix(rng, 2, n);
    l1.b = randomVector(rng, 2, -2.0, 2.0);
    l1.C = randomMatrix(rng, 3, n);
    l1.upper = randomVector(rng, 3, -1.0, 0.5);
    const VectorXd lo = -randomVector(rng, n, 0.3, 1.5), hi = randomVector(rng, n, 0.3, 1.5);
    MatrixXd G(2 * n, n);
    VectorXd h(2 * n);
    G << MatrixXd::Identity(n, n), -MatrixXd::Identity(n, n);
    h << hi, -lo;
    const HierarchyStep s = solveHierarchy({l0, l1}, lo, hi, undamped());
    const BruteForce b0 = bruteForce(l0.A, l0.b, l0.C, l0.upper, MatrixXd(0, n), VectorXd(0), G, h);
    ASSERT_TRUE(std::isfinite(b0.value));
    EXPECT_NEAR(s.level_residual[0] * s.level_residual[0], b0.value, 1e-7);
    // Level 1 keeps level 0's equality values and slacks (unique at the optimum).
    MatrixXd G1(2 * n + 2, n);
    VectorXd h1(2 * n + 2);
    G1 << G, l0.C;
    h1 << h, (l0.C * b0.x).cwiseMax(l0.upper);
    const BruteForce b1 = bruteForce(l1.A, l1.b, l1.C, l1.upper, l0.A, l0.A * b0.x, G1, h1);
    ASSERT_TRUE(std::isfinite(b1.value));
    EXPECT_NEAR(s.level_residual[1] * s.level_residual[1], b1.value, 1e-6);
    EXPECT_TRUE(((G * s.dq - h).array() <= 1e-9).all());
  }
}

// Rank-deficient levels: duplicated conflicting rows meet in the middle; a
// level wholly inside the span of the one above cannot move anything.
TEST(WholebodyHierarchy, RankDeficientLevels) {
  MatrixXd A(2, 3);
  A << 1, 1, 0, 1, 1, 0;
  for (const auto& [name, method] : kMethods) {
    SCOPED_TRACE(name);
    const HierarchyStep s =
        method({equality(A, (VectorXd(2) << 1, 2).finished())}, freeBox(3, -1), freeBox(3, 1), undamped());
    EXPECT_NEAR(s.dq[0] + s.dq[1], 1.5, 1e-9);
    EXPECT_NEAR(s.dq[2], 0.0, 1e-9);  // minimum norm: nothing asks for x2
    EXPECT_NEAR(s.level_residual[0], std::sqrt(0.5), 1e-9);
    MatrixXd A1(1, 3);
    A1 << 2, 2, 0;  // the same row, scaled
    const HierarchyStep t =
        method({equality(A.topRows(1), VectorXd::Ones(1)), equality(A1, VectorXd::Constant(1, 6.0))}, freeBox(3, -1),
               freeBox(3, 1), undamped());
    EXPECT_NEAR(t.dq[0] + t.dq[1], 1.0, 1e-9);
    EXPECT_NEAR(t.level_residual[1], 4.0, 1e-9);
  }
}

TEST(WholebodyHierarchy, DegenerateInputGivesFiniteSteps) {
  for (const auto& [name, method] : kMethods) {
    SCOPED_TRACE(name);
    // No levels; levels without rows; an all-zero level; a fixed DOF (lo == hi).
    EXPECT_EQ(method({}, freeBox(3, -1), freeBox(3, 1), HierarchyOptions{}).dq, VectorXd::Zero(3));
    const HierarchyStep e = method({TaskLevel{}, TaskLevel{}}, freeBox(3, -1), freeBox(3, 1), HierarchyOptions{});
    EXPECT_EQ(e.dq, VectorXd::Zero(3));
    EXPECT_EQ(e.level_residual, (std::vector<double>{0.0, 0.0}));
    const HierarchyStep z =
        method({equality(MatrixXd::Zero(2, 3), VectorXd::Ones(2))}, freeBox(3, -1), freeBox(3, 1), undamped());
    EXPECT_TRUE(z.dq.allFinite());
    EXPECT_EQ(z.dq, VectorXd::Zero(3));
    EXPECT_NEAR(z.level_residual[0], std::sqrt(2.0), 1e-12);
    const VectorXd fixed_lo = (VectorXd(2) << 0.0, -1.0).finished(), fixed_hi = (VectorXd(2) << 0.0, 1.0).finished();
    const HierarchyStep f =
        method({equality(MatrixXd::Identity(2, 2), VectorXd::Ones(2))}, fixed_lo, fixed_hi, undamped());
    EXPECT_EQ(f.dq[0], 0.0);
    EXPECT_NEAR(f.dq[1], 1.0, 1e-9);
    // n = 0.
    EXPECT_EQ(method({TaskLevel{}}, VectorXd(0), VectorXd(0), HierarchyOptions{}).dq.size(), 0);
    // Nearly singular rows with no damping: a finite step.
    MatrixXd S(2, 2);
    S << 1, 1, 1, 1 + 1e-14;
    EXPECT_TRUE(method({equality(S, (VectorXd(2) << 0, 1).finished())}, freeBox(2, -1), freeBox(2, 1), undamped())
                    .dq.allFinite());
  }
}

TEST(WholebodyHierarchy, BadInputIsAClearError) {
  for (const auto& [name, method] : kMethods) {
    SCOPED_TRACE(name);
    const VectorXd lo = freeBox(2, -1), hi = freeBox(2, 1);
    auto message = [&](const std::vector<TaskLevel>& levels, const VectorXd& l, const VectorXd& h) {
      try {
        method(levels, l, h, HierarchyOptions{});
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    EXPECT_NE(message({equality(MatrixXd::Ones(1, 3), VectorXd::Ones(1))}, lo, hi).find("level 0: A has 3 columns"),
              std::string::npos);
    EXPECT_NE(message({TaskLevel{}, inequality(MatrixXd::Ones(2, 2), VectorXd::Ones(1))}, lo, hi)
                  .find("level 1: upper has 1 entries"),
              std::string::npos);
    EXPECT_NE(message({equality(MatrixXd::Ones(1, 2), VectorXd::Constant(1, NAN))}, lo, hi).find("non-finite"),
              std::string::npos);
    EXPECT_NE(message({}, (VectorXd(2) << 1, 0).finished(), (VectorXd(2) << 0, 0).finished()).find("box entry 0"),
              std::string::npos);
    EXPECT_NE(message({}, VectorXd(3), hi).find("dq_lower has 3 entries"), std::string::npos);
  }
}

}  // namespace
}  // namespace ikbench::wholebody
