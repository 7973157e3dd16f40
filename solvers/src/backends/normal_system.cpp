// NormalSystem (jacobian_common.h): the damped normal equations of the
// DLS-type steps, with compile-time-size kernels for n <= 6.
//
// This file is compiled with -fno-tree-vectorize (solvers/CMakeLists.txt).
// At n = 6 GCC's SLP vectoriser packs pairs of scalar partial results
// into SSE registers and unpacks them again, with stores of one half read
// back as a whole (store-forwarding stalls), and leaves the substitutions'
// loops rolled around 2-wide bodies: the scalar code is faster here
// (bench_solvers PerIteration, 7-DOF pose DLS, measures it).
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <cstring>
#include <type_traits>

#include "jacobian_common.h"

namespace ikbench::jacobian {

namespace {

// The kernels below work on local arrays or __restrict pointers: through
// plain double* parameters the compiler must assume A, Jw and b alias, and
// would store and reload every partial sum.

typedef double Pair __attribute__((vector_size(16)));  // one SSE2 register

// lower(J J^T) for a 6 x nv J (one pose goal): the sum over columns c of
// c c^T, in SSE2 pairs of rows (0,1), (2,3), (4,5). Column j of the lower
// triangle needs rows j..5, i.e. 3, 3, 2, 2, 1, 1 pairs (the pair that
// straddles the diagonal also fills one upper entry, which nobody reads):
// 12 packed multiply-adds per column of J instead of 21 scalar ones.
void normal6Wide(const double* J, Eigen::Index nv, double* out) {
  // Accumulator a<j><p>: column j of the lower triangle, rows 2p and 2p + 1
  // (named, not an array: an array of 12 accumulators was kept in memory).
  Pair a00 = {}, a01 = {}, a02 = {}, a10 = {}, a11 = {}, a12 = {};
  Pair a21 = {}, a22 = {}, a31 = {}, a32 = {}, a42 = {}, a52 = {};
  for (Eigen::Index k = 0; k < nv; ++k, J += 6) {
    Pair c0, c1, c2;
    std::memcpy(&c0, J, sizeof c0);
    std::memcpy(&c1, J + 2, sizeof c1);
    std::memcpy(&c2, J + 4, sizeof c2);
    Pair b = {J[0], J[0]};
    a00 += c0 * b, a01 += c1 * b, a02 += c2 * b;
    b = Pair{J[1], J[1]};
    a10 += c0 * b, a11 += c1 * b, a12 += c2 * b;
    b = Pair{J[2], J[2]};
    a21 += c1 * b, a22 += c2 * b;
    b = Pair{J[3], J[3]};
    a31 += c1 * b, a32 += c2 * b;
    b = Pair{J[4], J[4]};
    a42 += c2 * b;
    b = Pair{J[5], J[5]};
    a52 += c2 * b;
  }
  const Pair* acc[6][3] = {{&a00, &a01, &a02}, {&a10, &a11, &a12}, {nullptr, &a21, &a22},
                           {nullptr, &a31, &a32}, {nullptr, nullptr, &a42}, {nullptr, nullptr, &a52}};
  for (int j = 0; j < 6; ++j)
    for (int p = j / 2; p < 3; ++p) std::memcpy(out + j * 6 + 2 * p, acc[j][p], sizeof(Pair));
}

// A = lower(Jw Jw^T) (wide) or lower(Jw^T Jw) (tall), N = min(m, nv).
template <int N>
void smallNormal(const Eigen::MatrixXd& Jw, double* out) {
  const Eigen::Index m = Jw.rows(), nv = Jw.cols();
  const double* J = Jw.data();  // column-major
  if (N == 6 && m == 6) {
    normal6Wide(J, nv, out);
    return;
  }
  double A[N * N] = {};
  if (m <= nv) {
    for (Eigen::Index k = 0; k < nv; ++k) {  // sum of c c^T over the columns c
      double c[N];
      for (int i = 0; i < N; ++i) c[i] = J[k * N + i];
      for (int j = 0; j < N; ++j)
        for (int i = j; i < N; ++i) A[j * N + i] += c[i] * c[j];
    }
  } else {
    for (int j = 0; j < N; ++j)  // A_ij = <column i, column j>
      for (int i = j; i < N; ++i) {
        const double* ci = J + i * m;
        const double* cj = J + j * m;
        double s = 0.0;
        for (Eigen::Index r = 0; r < m; ++r) s += ci[r] * cj[r];
        A[j * N + i] = s;
      }
  }
  for (int i = 0; i < N * N; ++i) out[i] = A[i];
}

// In-place square-root-free Cholesky A = L D L^T of the lower triangle (L
// unit lower triangular; Golub & Van Loan alg. 4.1.2); false unless every
// pivot d_j is > 0 (NaN included), which holds exactly when A is positive
// definite. The diagonal keeps 1 / d_j, so that the substitutions multiply
// instead of divide.
// Written for latency: at n = 6 the factorisation is a chain of dependent
// pivots, each waiting for the division by the one before. Hence no square
// roots (an L L^T pivot pays a sqrt and a division on that chain, L D L^T
// one division), and the right-looking (outer-product) order, in which the
// next pivot is one multiply-subtract after 1 / d_j (the left-looking order
// sums j products on pivot j's chain). bench_solvers PerIteration (7-DOF
// pose DLS) measures it, together with normal6Wide.
template <int N>
bool smallCholesky(double* __restrict a) {
  for (int j = 0; j < N; ++j) {
    const double d = a[j * N + j];
    if (!(d > 0.0)) return false;
    const double inv = 1.0 / d;
    a[j * N + j] = inv;
    for (int k = j + 1; k < N; ++k) {
      const double akj = a[j * N + k];
      // The next pivot's update A_kk -= A_kj^2 / d_j: the square is formed
      // while the division runs, so one multiply-subtract follows it.
      a[k * N + k] -= (akj * akj) * inv;
      const double lkj = akj * inv;  // L_kj
      for (int i = k + 1; i < N; ++i) a[k * N + i] -= a[j * N + i] * lkj;
    }
    for (int i = j + 1; i < N; ++i) a[j * N + i] *= inv;
  }
  return true;
}

// x = (L D L^T)^-1 b: forward substitution with the unit L (column by
// column), scaling by D^-1 (stored on the diagonal, see smallCholesky),
// backward with L^T (a dot product down each column of L). x may be b.
template <int N>
void smallSolve(const double* __restrict L, const double* b, double* x_out) {
  double x[N];
  for (int i = 0; i < N; ++i) x[i] = b[i];
  for (int k = 0; k < N; ++k)
    for (int i = k + 1; i < N; ++i) x[i] -= L[k * N + i] * x[k];
  for (int i = 0; i < N; ++i) x[i] *= L[i * N + i];
  for (int i = N - 1; i >= 0; --i) {
    double s = x[i];
    for (int k = i + 1; k < N; ++k) s -= L[i * N + k] * x[k];
    x[i] = s;
  }
  for (int i = 0; i < N; ++i) x_out[i] = x[i];
}

// Calls f(std::integral_constant<int, n>) for n in 1..NormalSystem::kSmall
// (callers handle n = 0).
template <typename F>
decltype(auto) withSmallSize(int n, F&& f) {
  switch (n) {
    case 1: return f(std::integral_constant<int, 1>());
    case 2: return f(std::integral_constant<int, 2>());
    case 3: return f(std::integral_constant<int, 3>());
    case 4: return f(std::integral_constant<int, 4>());
    case 5: return f(std::integral_constant<int, 5>());
    default: return f(std::integral_constant<int, 6>());
  }
}

}  // namespace

void NormalSystem::resize(int n) {
  if (n == n_) return;
  n_ = n;
  if (n > kSmall) {
    ad_.resize(n, n);
    rebuild(lltd_, n);
    rebuild(eigd_, n);
  } else if (n != 3) {
    eig_in_.resize(n, n);
    rebuild(eigd_, n);
  }
}

void NormalSystem::setNormalMatrix(const Eigen::MatrixXd& Jw) {
  if (n_ == 0) return;  // no DOF (or no row): nothing to solve
  if (n_ <= kSmall) {
    withSmallSize(n_, [&](auto size) { smallNormal<decltype(size)::value>(Jw, a_); });
  } else if (Jw.rows() <= Jw.cols()) {
    ad_.noalias() = Jw * Jw.transpose();
  } else {
    ad_.noalias() = Jw.transpose() * Jw;
  }
}

bool NormalSystem::smallestEigenvalue(double* out) {
  if (n_ == 0) {
    *out = 0.0;
    return true;
  }
  if (n_ > kSmall) {
    eigd_.compute(ad_, Eigen::EigenvaluesOnly);
    *out = eigd_.eigenvalues()[0];
    return eigd_.info() == Eigen::Success;
  }
  const Eigen::Map<const Eigen::MatrixXd> A(a_, n_, n_);  // lower triangle is what the solvers read
  if (n_ == 3) {
    // Closed form for 3x3 (Eigen's computeDirect: the characteristic cubic).
    eig3_.computeDirect(Eigen::Matrix3d(A), Eigen::EigenvaluesOnly);
    *out = eig3_.eigenvalues()[0];
    return eig3_.info() == Eigen::Success;
  }
  eig_in_ = A;
  eigd_.compute(eig_in_, Eigen::EigenvaluesOnly);
  *out = eigd_.eigenvalues()[0];
  return eigd_.info() == Eigen::Success;
}

bool NormalSystem::eigenvaluesAbove(double t) const {
  if (n_ == 0) return true;  // vacuously
  if (n_ > kSmall) return false;
  double shifted[kSmall * kSmall];
  for (int i = 0; i < n_ * n_; ++i) shifted[i] = a_[i];
  for (int i = 0; i < n_; ++i) shifted[i * n_ + i] -= t;
  return withSmallSize(n_, [&](auto size) { return smallCholesky<decltype(size)::value>(shifted); });
}

void NormalSystem::addDiagonal(double d) {
  if (n_ <= kSmall) {
    for (int i = 0; i < n_; ++i) a_[i * n_ + i] += d;
  } else {
    ad_.diagonal().array() += d;
  }
}

bool NormalSystem::factor() {
  if (n_ == 0) return true;
  if (n_ <= kSmall) return withSmallSize(n_, [&](auto size) { return smallCholesky<decltype(size)::value>(a_); });
  // Eigen's LLT tests pivots with x <= 0, which a NaN passes.
  return lltd_.compute(ad_).info() == Eigen::Success && lltd_.matrixLLT().diagonal().allFinite();
}

void NormalSystem::solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) const {
  if (n_ == 0) return;
  if (n_ <= kSmall) {
    withSmallSize(n_, [&](auto size) { smallSolve<decltype(size)::value>(a_, b.data(), x.data()); });
  } else {
    x = b;
    lltd_.solveInPlace(x);
  }
}

}  // namespace ikbench::jacobian
