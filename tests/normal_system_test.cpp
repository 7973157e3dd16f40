// NormalSystem (solvers/src/backends/jacobian_common.h): the damped normal equations
// behind dls, dls-adaptive and lm, with hand-written kernels for n <= 6.
// Checked against Eigen's LLT and eigensolver on the same matrices.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include "../solvers/src/backends/jacobian_common.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench::jacobian {
namespace {

Eigen::MatrixXd randomMatrix(int rows, int cols, Rng& rng) {
  Eigen::MatrixXd J(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) J(i, j) = rng.uniform(-1.0, 1.0);
  return J;
}

// Every n from 1 to 9 (small kernels up to 6, Eigen's LLT above), J wide
// (m <= nv: A = J J^T) and tall (m > nv: A = J^T J).
TEST(NormalSystem, SolvesTheDampedNormalEquationsLikeEigen) {
  Rng rng(7);
  for (int n = 1; n <= 9; ++n) {
    for (const bool wide : {true, false}) {
      const int m = wide ? n : n + 3, nv = wide ? n + 4 : n;
      const Eigen::MatrixXd J = randomMatrix(m, nv, rng);
      const Eigen::MatrixXd A = wide ? Eigen::MatrixXd(J * J.transpose()) : Eigen::MatrixXd(J.transpose() * J);
      const double lambda2 = 0.01;
      const Eigen::VectorXd b = randomMatrix(n, 1, rng);
      const Eigen::VectorXd expected = (A + lambda2 * Eigen::MatrixXd::Identity(n, n)).llt().solve(b);

      NormalSystem sys;
      sys.resize(n);
      sys.setNormalMatrix(J);
      double smallest = 0.0;
      ASSERT_TRUE(sys.smallestEigenvalue(&smallest));
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(A, Eigen::EigenvaluesOnly);
      EXPECT_NEAR(smallest, eig.eigenvalues()[0], 1e-9) << "n=" << n << " wide=" << wide;
      if (n <= NormalSystem::kSmall) {
        EXPECT_TRUE(sys.eigenvaluesAbove(eig.eigenvalues()[0] - 1e-6)) << "n=" << n;
        EXPECT_FALSE(sys.eigenvaluesAbove(eig.eigenvalues()[0] + 1e-6)) << "n=" << n;
      } else {
        EXPECT_FALSE(sys.eigenvaluesAbove(0.0)) << "large n answers 'unknown'";
      }
      sys.addDiagonal(lambda2);
      ASSERT_TRUE(sys.factor());
      Eigen::VectorXd x(n), in_place = b;
      sys.solve(b, x);
      sys.solve(in_place, in_place);
      EXPECT_LT((x - expected).norm(), 1e-9 * (1.0 + expected.norm())) << "n=" << n << " wide=" << wide;
      EXPECT_EQ(x, in_place) << "n=" << n << ": in place and out of place differ";
    }
  }
}

TEST(NormalSystem, RejectsSingularAndNonFiniteSystems) {
  for (int n : {3, 6, 8}) {
    NormalSystem sys;
    sys.resize(n);
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, n + 1);  // rank 0
    sys.setNormalMatrix(J);
    EXPECT_FALSE(sys.factor()) << "n=" << n;
    J(0, 0) = std::numeric_limits<double>::quiet_NaN();
    sys.setNormalMatrix(J);
    sys.addDiagonal(1.0);
    EXPECT_FALSE(sys.factor()) << "n=" << n << ": NaN must fail, not factor";
  }
}

// A model without DOF (only fixed joints) gives an empty system: nothing
// may be read or written.
TEST(NormalSystem, EmptySystemIsANoOp) {
  NormalSystem sys;
  sys.resize(0);
  const Eigen::MatrixXd J(6, 0);
  sys.setNormalMatrix(J);
  sys.addDiagonal(1.0);
  EXPECT_TRUE(sys.factor());
  Eigen::VectorXd b(0);
  sys.solve(b, b);
  EXPECT_EQ(b.size(), 0);
}

}  // namespace
}  // namespace ikbench::jacobian
