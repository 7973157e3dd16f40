// The IK problem as a Ceres problem (private to ikbench_solvers and its tests).
//
// Parameterisation: one parameter block per joint with DOFs, pointing straight
// into a configuration vector q (nq): revolute / prismatic joints a block of
// size 1 (limits as Ceres parameter bounds), a free root a translation block
// of size 3 (bounds) plus a quaternion block, a ball joint a quaternion block
// (x, y, z, w) of size 4 on BallJointManifold. One residual block per goal,
// depending on the blocks of the joints between the world and the goal's body;
// its residual is exactly ikbench's (goal.h): weight * (target - current),
// orientation rows weight * orientation_scale * log(R_target R^T).
//
// Two cost functions give the same residual: AnalyticGoalCost (ikbench's
// goalJacobian in JacobianMode::kExactResidual, mapped to the blocks) and an
// autodiff one (ceres::DynamicAutoDiffCostFunction over the templated
// forwardKinematics<ceres::Jet>). The tests check both with
// ceres::GradientChecker and against each other.
#pragma once

#include <ceres/ceres.h>

#include <Eigen/Core>
#include <memory>
#include <vector>

#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"

namespace ikbench::ceres_ik {

// Left-multiplicative unit-quaternion manifold matching ikbench's tangent
// convention (config.h): Plus(x, w) = exp(w) * x with exp the true exponential
// (rotation by |w| about w / |w|), quaternions stored (x, y, z, w) like
// Eigen::Quaterniond::coeffs(). ceres::EigenQuaternionManifold (Ceres 2.1,
// manifold.h) also multiplies on the left, but by [cos|d|, sin|d| d/|d|], a
// rotation by 2|d|: its tangent is half of ikbench's, which would scale the
// ball-joint columns, step norms and trust region by 2.
//
// Ball-joint limits bound the components of the rotation vector log(R)
// (model.h). They cannot be box bounds on quaternion coordinates, so Plus
// projects the result back into the box (the same projection Ceres applies to
// parameter bounds in ParameterBlock::Plus, here in rotation-vector
// coordinates). Plus(x, 0) = x for x inside the box, so the Jacobians below
// are those of the unprojected map.
class BallJointManifold final : public ceres::Manifold {
 public:
  // lo, hi: 3 rotation-vector bounds each (may be infinite).
  BallJointManifold(const double* lo, const double* hi);
  int AmbientSize() const override { return 4; }
  int TangentSize() const override { return 3; }
  bool Plus(const double* x, const double* delta, double* x_plus_delta) const override;
  // d(exp(w) x)/dw at w = 0 (4 x 3, row-major): with x = (v, s),
  // vector rows 1/2 (s I - [v]x), scalar row -1/2 v^T.
  bool PlusJacobian(const double* x, double* jacobian) const override;
  bool Minus(const double* y, const double* x, double* y_minus_x) const override;
  // The left inverse of PlusJacobian: the columns of PlusJacobian are
  // orthogonal with norm 1/2 for a unit x, so it is 4 PlusJacobian^T.
  bool MinusJacobian(const double* x, double* jacobian) const override;

 private:
  double lo_[3], hi_[3];
  bool bounded_ = false;
};

enum class BlockKind { kScalar, kTranslation, kQuaternion };

struct Block {
  int joint = -1;
  int q_offset = 0;  // first entry in q (nq)
  int v_offset = 0;  // first tangent DOF (nv)
  int size = 1;      // ambient size
  BlockKind kind = BlockKind::kScalar;
};

// Blocks of every joint with DOFs, in joint order.
std::vector<Block> modelBlocks(const Model& model);
// Blocks of the joints between the world and body `body` (root first).
std::vector<Block> blocksForBody(const Model& model, int body);

// The principal rotation vector of a rotation matrix, for any scalar
// (double or ceres::Jet): theta / (2 sin theta) * vee(R - R^T), with the
// series 1/2 + theta^2/12 near 0 (written in s^2 = sin^2 theta so that no
// sqrt(0) reaches a Jet) and the symmetric-part formula near pi, as in
// so3::log (pose.cpp).
template <typename T>
Vec3<T> rotationLog(const Mat3<T>& R) {
  using std::atan2;
  using std::sqrt;
  const Vec3<T> v(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));
  T c = T(0.5) * (R(0, 0) + R(1, 1) + R(2, 2) - T(1));
  if (c > T(1)) c = T(1);
  if (c < T(-1)) c = T(-1);
  const T s2 = T(0.25) * v.squaredNorm();  // sin^2 theta
  if (c > T(0) && s2 < T(1e-12)) {
    // theta / (2 sin theta) = 1/2 + theta^2 / 12 + O(theta^4), theta^2 = s^2 + O(s^4).
    return (T(0.5) + s2 / T(12)) * v;
  }
  const T s = sqrt(s2);
  const T theta = atan2(s, c);
  if (c > T(-0.99)) return (theta / (T(2) * s)) * v;
  // Near pi: R + R^T = 2 c I + 2 (1 - c) a a^T; take the column with the
  // largest diagonal entry, and the sign of the axis from v.
  const Mat3<T> B = (T(0.5) * (R + R.transpose()) - c * Mat3<T>::Identity()) / (T(1) - c);
  int k = 0;
  for (int i = 1; i < 3; ++i)
    if (B(i, i) > B(k, k)) k = i;
  T bkk = B(k, k);
  if (bkk < T(kTinyDivisor)) bkk = T(kTinyDivisor);
  Vec3<T> a = B.col(k) / sqrt(bkk);
  a /= sqrt(a.squaredNorm());
  if (a.dot(v) < T(0)) a = -a;
  return theta * a;
}

// ikbench's residual of one goal (goal.h) at the body pose, any scalar.
template <typename T>
void goalResidual(const Goal& g, const Pose<T>& body, T* r) {
  int row = 0;
  if (hasPosition(g.kind)) {
    const Vec3<T> x = body.R * g.point.cast<T>() + body.p;
    for (int k = 0; k < 3; ++k) r[k] = T(g.weight) * (T(g.target_position[k]) - x[k]);
    row = 3;
  }
  if (hasOrientation(g.kind)) {
    const Mat3<T> E = g.target_orientation.cast<T>() * body.R.transpose();
    const Vec3<T> e = rotationLog<T>(E);
    const double w = g.weight * g.orientation_scale;
    for (int k = 0; k < 3; ++k) r[row + k] = T(w) * e[k];
  }
}

// Residual of one goal from the blocks of its supporting joints, with the
// Jacobian from goalJacobian(kExactResidual): -J columns of scalar and
// translation blocks as they are, quaternion blocks mapped to the ambient
// coordinates by J_ambient = J_tangent * MinusJacobian(x) (so that
// J_ambient * PlusJacobian(x) = J_tangent; both vanish along x).
class AnalyticGoalCost final : public ceres::CostFunction {
 public:
  AnalyticGoalCost(std::shared_ptr<const Model> model, const Goal& goal);
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override;
  Goal& goal() { return goals_[0]; }
  const std::vector<Block>& blocks() const { return blocks_; }

 private:
  std::shared_ptr<const Model> model_;
  std::vector<Goal> goals_;  // one goal, as evaluateGoals() takes a vector
  std::vector<Block> blocks_;
  mutable Eigen::VectorXd q_;
  mutable Data data_;
};

// The autodiff functor: copies the blocks into a configuration of the
// functor's scalar type and runs the templated forwardKinematics. Buffers
// for double and for the Jet type are sized once here (no allocation per
// evaluation).
constexpr int kJetStride = 8;  // derivatives per pass; a 7-DOF chain takes one pass
class GoalFunctor {
 public:
  using Jet = ceres::Jet<double, kJetStride>;
  GoalFunctor(std::shared_ptr<const Model> model, const Goal& goal);
  template <typename T>
  bool operator()(T const* const* params, T* residual) const {
    std::vector<T>* q;
    std::vector<Pose<T>>* poses;
    if constexpr (std::is_same_v<T, double>) {
      q = &qd_;
      poses = &posed_;
    } else {
      static_assert(std::is_same_v<T, Jet>, "GoalFunctor runs on double and its Jet type only");
      q = &qj_;
      poses = &posej_;
    }
    for (size_t b = 0; b < blocks_.size(); ++b)
      for (int k = 0; k < blocks_[b].size; ++k) (*q)[blocks_[b].q_offset + k] = params[b][k];
    forwardKinematics<T>(*model_, q->data(), poses->data());
    goalResidual<T>(goal_, (*poses)[goal_.body], residual);
    return true;
  }
  Goal& goal() { return goal_; }
  const std::vector<Block>& blocks() const { return blocks_; }

 private:
  std::shared_ptr<const Model> model_;
  Goal goal_;
  std::vector<Block> blocks_;
  mutable std::vector<double> qd_;
  mutable std::vector<Jet> qj_;
  mutable std::vector<Pose<double>> posed_;
  mutable std::vector<Pose<Jet>> posej_;
};

// A cost function for one goal (analytic or autodiff), counting its calls.
class GoalCost final : public ceres::CostFunction {
 public:
  GoalCost(std::shared_ptr<const Model> model, const Goal& goal, bool autodiff);
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override;
  // The goal the residual is computed for (targets may change between solves).
  void setGoal(const Goal& goal);
  const std::vector<Block>& blocks() const { return blocks_; }
  long evaluations() const { return evals_; }
  long jacobianEvaluations() const { return jac_evals_; }
  // Manifolds of the blocks (nullptr for Euclidean blocks), for GradientChecker.
  std::vector<const ceres::Manifold*> manifolds() const;

 private:
  std::shared_ptr<const Model> model_;
  std::vector<Block> blocks_;
  std::unique_ptr<ceres::CostFunction> inner_;
  AnalyticGoalCost* analytic_ = nullptr;
  GoalFunctor* functor_ = nullptr;
  std::vector<std::unique_ptr<ceres::Manifold>> manifolds_;
  mutable long evals_ = 0, jac_evals_ = 0;
};

}  // namespace ikbench::ceres_ik
