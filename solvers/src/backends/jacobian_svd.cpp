// Undamped and selectively damped members of the Jacobian family: the SVD
// pseudoinverse, Gauss-Newton on the normal equations, and Buss & Kim's
// selectively damped least squares. Notation: jacobian_common.h.
#include <Eigen/Cholesky>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>

#include "ikbench/core/numeric.h"
#include "jacobian_common.h"

namespace ikbench::jacobian {
namespace {

// Thin SVD Jw = U diag(s) V^T, sized once; JacobiSVD::compute does not
// allocate when the matrix size is unchanged (its buffers are made in the
// (rows, cols, options) constructor).
using Svd = Eigen::JacobiSVD<Eigen::MatrixXd>;

// Pseudoinverse (Moore-Penrose) by SVD (Buss 2004, sec. 5; Golub & Van Loan,
// Matrix Computations, sec. 5.5.4 "rank-deficient least squares"):
//   dq = V diag(1/s_i) U^T e, where singular values s_i <= rcond * s_max are
// treated as zero (their directions get no motion) so that the step stays
// finite at singularities.
class PinvSolver final : public JacobianSolver {
 public:
  explicit PinvSolver(const PinvOptions& o) : JacobianSolver("pinv", o, o), rcond_(o.rcond) {
  }

 protected:
  void resize(int m, int nv) override {
    if (svd_.rows() != m || svd_.cols() != nv) rebuild(svd_, m, nv, Eigen::ComputeThinU | Eigen::ComputeThinV);
    t_.resize(std::min(m, nv));
  }
  bool factor(const Eigen::MatrixXd& Jw, const Eigen::VectorXd&, std::string* why) override {
    svd_.compute(Jw);
    const Eigen::VectorXd& s = svd_.singularValues();
    if (!s.allFinite()) {
      *why = "non-finite singular values";
      return false;
    }
    // s is sorted decreasingly; an all-zero Jacobian gives threshold 0 and
    // the strict '>' below then drops every direction.
    threshold_ = s.size() > 0 ? std::max(rcond_ * s[0], kTinyDivisor) : 0.0;
    return true;
  }
  void apply(const Eigen::MatrixXd&, const Eigen::VectorXd& rhs, Eigen::VectorXd& dqw) override {
    const Eigen::VectorXd& s = svd_.singularValues();
    t_.noalias() = svd_.matrixU().transpose() * rhs;
    for (int i = 0; i < t_.size(); ++i) t_[i] = s[i] > threshold_ ? t_[i] / s[i] : 0.0;
    dqw.noalias() = svd_.matrixV() * t_;
  }

 private:
  bool supportsNullSpace() const override { return true; }
  double rcond_, threshold_ = 0.0;
  Svd svd_;
  Eigen::VectorXd t_;
};

// Gauss-Newton (Nocedal & Wright 2006, Numerical Optimization, sec. 10.3,
// eq. 10.23): the step solves the normal equations of the linearised
// residual, (J^T J) dq = J^T e, when m >= nv. For redundant problems (m < nv)
// J^T J is always singular and the Gauss-Newton step is the minimum-norm
// solution of J dq = e, dq = J^T (J J^T)^-1 e (normal equations of the second
// kind). Both systems are solved by Cholesky; when the normal matrix is
// singular (the smallest Cholesky pivot ratio min L_ii^2 / max L_ii^2, an upper
// bound of 1/cond_2, is below rcond_min, or the factorisation fails) the
// attempt stops with numerical-failure instead of producing inf/NaN.
// A DOF that no goal depends on (zero column, e.g. another branch of a tree)
// gets the minimum-norm answer 0 in the m >= nv form.
class GnSolver final : public JacobianSolver {
 public:
  explicit GnSolver(const GnOptions& o) : JacobianSolver("gn", o), rcond_min_(o.rcond_min) {
  }

 protected:
  void resize(int m, int nv) override {
    // Both forms are kept ready: with limits=freeze the number of movable
    // columns, and so the form, can change from one pass to the next.
    if (Am_.rows() != m) {
      Am_.resize(m, m);
      rebuild(llt_m_, m);
    }
    if (An_.rows() != nv) {
      An_.resize(nv, nv);
      rebuild(llt_n_, nv);
    }
    y_.resize(m);
  }
  bool factor(const Eigen::MatrixXd& Jw, const Eigen::VectorXd&, std::string* why) override {
    // The form follows the columns that can move (frozen DOFs and DOFs no
    // goal depends on have zero columns): fewer of them than rows makes
    // J J^T singular by construction, so the m >= nv form is used then.
    int active = 0;
    for (int j = 0; j < Jw.cols(); ++j) active += Jw.col(j).squaredNorm() > 0.0;
    min_norm_ = Jw.rows() < active;
    Eigen::MatrixXd& A = min_norm_ ? Am_ : An_;
    Eigen::LLT<Eigen::MatrixXd>& llt = min_norm_ ? llt_m_ : llt_n_;
    if (min_norm_) {
      A.noalias() = Jw * Jw.transpose();
    } else {
      A.noalias() = Jw.transpose() * Jw;
      for (int k = 0; k < A.rows(); ++k)
        if (A(k, k) == 0.0) A(k, k) = 1.0;  // zero column: its row of J^T e is 0 too
    }
    llt.compute(A);
    if (llt.info() != Eigen::Success || !A.allFinite()) {
      *why = "singular normal matrix (Cholesky failed): the Jacobian is rank-deficient";
      return false;
    }
    const auto d = llt.matrixLLT().diagonal();
    const double hi = d.maxCoeff(), lo = d.minCoeff();
    const double ratio = hi > 0.0 ? (lo / hi) * (lo / hi) : 0.0;
    if (!(ratio > rcond_min_)) {
      *why = "singular normal matrix (pivot ratio below rcond_min): the Jacobian is rank-deficient";
      return false;
    }
    return true;
  }
  void apply(const Eigen::MatrixXd& Jw, const Eigen::VectorXd& rhs, Eigen::VectorXd& dqw) override {
    if (min_norm_) {
      y_ = rhs;
      llt_m_.solveInPlace(y_);
      dqw.noalias() = Jw.transpose() * y_;
    } else {
      dqw.noalias() = Jw.transpose() * rhs;
      llt_n_.solveInPlace(dqw);
    }
  }

 private:
  double rcond_min_;
  bool min_norm_ = false;
  Eigen::MatrixXd Am_, An_;
  Eigen::VectorXd y_;
  Eigen::LLT<Eigen::MatrixXd> llt_m_, llt_n_;
};

// Selectively damped least squares (Buss & Kim 2005, "Selectively damped
// least squares for inverse kinematics", J. Graphics Tools 10(3), sec. 3).
// With J = sum_i s_i u_i v_i^T and the rows grouped into 3-row effector
// blocks l (each goal's position rows and its orientation rows):
//   alpha_i = u_i^T e
//   N_i     = sum_l |u_{l,i}|                      (size of the target change)
//   M_i     = s_i^-1 sum_j |v_{j,i}| rho_j,  rho_j = sum_l |J_{l,j}|
//   gamma_i = min(1, N_i / M_i) * gamma_max
//   phi_i   = ClampMaxAbs(s_i^-1 alpha_i v_i, gamma_i)
//   dq      = ClampMaxAbs(sum_i phi_i, gamma_max).
// (The paper also clamps each effector's error to a maximum length before the
// step; ikbench leaves that to the common max_step and the target itself.)
// With DOF weights everything runs in the scaled coordinates dqw.
class SdlsSolver final : public JacobianSolver {
 public:
  explicit SdlsSolver(const SdlsOptions& o) : JacobianSolver("sdls", o), gamma_max_(o.gamma_max) {
  }

 protected:
  void resize(int m, int nv) override {
    if (svd_.rows() != m || svd_.cols() != nv) rebuild(svd_, m, nv, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const int k = std::min(m, nv);
    gamma_.resize(k);
    rho_.resize(nv);
    phi_.resize(nv);
  }
  bool factor(const Eigen::MatrixXd& Jw, const Eigen::VectorXd&, std::string* why) override {
    svd_.compute(Jw);
    const Eigen::VectorXd& s = svd_.singularValues();
    if (!s.allFinite()) {
      *why = "non-finite singular values";
      return false;
    }
    const int m = static_cast<int>(Jw.rows()), nv = static_cast<int>(Jw.cols());
    const int blocks = m / 3;
    for (int j = 0; j < nv; ++j) {
      double rho = 0.0;
      for (int l = 0; l < blocks; ++l) rho += Jw.col(j).segment<3>(3 * l).norm();
      rho_[j] = rho;
    }
    const Eigen::MatrixXd& U = svd_.matrixU();
    const Eigen::MatrixXd& V = svd_.matrixV();
    cutoff_ = s.size() > 0 ? std::max(1e-12 * s[0], kTinyDivisor) : 0.0;
    for (int i = 0; i < gamma_.size(); ++i) {
      if (!(s[i] > cutoff_)) {
        gamma_[i] = 0.0;
        continue;
      }
      double N = 0.0;
      for (int l = 0; l < blocks; ++l) N += U.col(i).segment<3>(3 * l).norm();
      const double M = V.col(i).cwiseAbs().dot(rho_) / s[i];
      gamma_[i] = (M > N ? N / M : 1.0) * gamma_max_;
    }
    return true;
  }
  void apply(const Eigen::MatrixXd&, const Eigen::VectorXd& rhs, Eigen::VectorXd& dqw) override {
    const Eigen::VectorXd& s = svd_.singularValues();
    const Eigen::MatrixXd& U = svd_.matrixU();
    const Eigen::MatrixXd& V = svd_.matrixV();
    dqw.setZero();
    for (int i = 0; i < gamma_.size(); ++i) {
      if (!(s[i] > cutoff_)) continue;
      const double alpha = U.col(i).dot(rhs);
      phi_ = (alpha / s[i]) * V.col(i);
      clampMaxAbs(phi_, gamma_[i]);
      dqw += phi_;
    }
    clampMaxAbs(dqw, gamma_max_);
  }
  double damping() const override { return gamma_max_; }

 private:
  double gamma_max_, cutoff_ = 0.0;
  Svd svd_;
  Eigen::VectorXd gamma_, rho_, phi_;
};

}  // namespace

std::unique_ptr<Solver> makePinv(const PinvOptions& o) { return std::make_unique<PinvSolver>(o); }
std::unique_ptr<Solver> makeGn(const GnOptions& o) { return std::make_unique<GnSolver>(o); }
std::unique_ptr<Solver> makeSdls(const SdlsOptions& o) { return std::make_unique<SdlsSolver>(o); }

}  // namespace ikbench::jacobian
