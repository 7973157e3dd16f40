// A spec and a chain in the kernel's terms: what the spec asks of the kernel
// (SpecPlan) and a model with one goal in the kernel's frames (ChainPlan,
// batch_layout.h's Chain).
#include "batch_internal.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "jacobian_common.h"

namespace ikbench::batch_detail {

namespace {

// What dls and dls-adaptive have in common: the Jacobian, null-space and
// limit options, and the solutions mode.
SpecPlan planJacobian(const std::string& backend, const JacobianOptions& jac, const NullSpaceOptions& null_space,
                      KernelChoice kernel, const CommonSpecOptions& common) {
  SpecPlan plan;
  plan.backend = backend;
  plan.common = common;
  plan.one_problem = kernel;
  if (kernel == KernelChoice::kGeneric) plan.why = "kernel=generic asks for the generic model code";
  else if (jac.jacobian != JacobianMode::kGeometric) plan.why = "the batch kernel uses the geometric Jacobian";
  else if (null_space.null_gain != 0.0) plan.why = "the batch kernel has no null-space term";
  else if (common.solutions != SolutionsMode::kFirst) plan.why = "the batch kernel returns one solution (solutions=first)";
  plan.params.max_step = jac.max_step;
  plan.params.freeze = jac.limits == LimitMode::kFreeze;
  plan.auto_limits = jac.limits == LimitMode::kAuto;
  return plan;
}

}  // namespace

SpecPlan planDls(const DlsOptions& o, const CommonSpecOptions& common) {
  SpecPlan plan = planJacobian("dls", o, o, o.kernel, common);
  plan.params.lambda2 = o.lambda * o.lambda;
  return plan;
}

SpecPlan planDlsAdaptive(const DlsAdaptiveOptions& o, const CommonSpecOptions& common) {
  SpecPlan plan = planJacobian("dls-adaptive", o, o, o.kernel, common);
  if (o.mode != AdaptiveDamping::kError && plan.why.empty())
    plan.why = "dls-adaptive in the batch kernel needs mode=error (the sv term needs eigenvalues)";
  plan.params.adaptive = true;
  plan.params.lambda_min2 = o.lambda_min * o.lambda_min;
  plan.params.err_gain = o.err_gain;
  return plan;
}

SpecPlan planSpec(const SolverSpec& spec) {
  // The spec's keys through the backend's own typed binding (the one the
  // registry parses them with).
  if (spec.name == "dls") return planDls(jacobian::dlsBinding().parse(spec.name, spec.given), spec.common);
  if (spec.name == "dls-adaptive")
    return planDlsAdaptive(jacobian::dlsAdaptiveBinding().parse(spec.name, spec.given), spec.common);
  SpecPlan plan;
  plan.backend = spec.name;
  plan.why = fmt::format("the batch kernel runs dls and dls-adaptive:mode=error, not {}", spec.name);
  return plan;
}

Eigen::Vector3d anyNormal(const Eigen::Vector3d& w) {
  const Eigen::Vector3d e = std::abs(w.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  return (e - e.dot(w) * w).normalized();
}

ChainPlan planChain(const Problem& problem) {
  ChainPlan plan;
  const Model& model = *problem.model;
  if (problem.goals.size() != 1) {
    plan.why = "the batch kernel takes one goal";
    return plan;
  }
  const Goal& goal = problem.goals.front();
  if (!isPointTarget(goal)) {
    plan.why = "the batch kernel takes point targets, not centre-of-mass or bounded goals";
    return plan;
  }
  if (goal.kind == GoalKind::kOrientation) {
    plan.why = "the batch kernel takes pose and position goals";
    return plan;
  }
  if (!model.hasOnlyScalarJoints()) {
    plan.why = "the batch kernel takes revolute, prismatic and fixed joints";
    return plan;
  }
  const std::vector<int> path = model.supportingJoints(goal.body);
  const int n = static_cast<int>(path.size());
  if (n != model.nv()) {
    plan.why = "the batch kernel needs every DOF on the path to the goal's body";
    return plan;
  }
  if (n > kMaxDof) {
    plan.why = fmt::format("the batch kernel takes at most {} DOF", kMaxDof);
    return plan;
  }
  plan.pose = goal.kind == GoalKind::kPose;
  if ((plan.pose ? 6 : 3) > n) {
    plan.why = "the batch kernel needs at least as many DOF as goal rows";
    return plan;
  }
  if (!(model.dofWeights().array() == 1.0).all()) {
    plan.why = "the batch kernel takes unit DOF weights";
    return plan;
  }
  plan.w_pos = goal.weight;
  plan.w_ori = goal.weight * goal.orientation_scale;

  // World frames at q = 0: pivots and axes of the path's joints.
  std::vector<Pose3d> T(model.numJoints());
  std::vector<Eigen::Matrix3d> Rdof(model.numJoints());
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nq());
  forwardKinematics<double>(model, zero.data(), T.data(), Rdof.data());
  std::vector<Eigen::Vector3d> o(n), w(n), x(n);
  for (int k = 0; k < n; ++k) {
    o[k] = T[path[k]].p;
    w[k] = (Rdof[path[k]] * model.axis(path[k])).normalized();
  }
  // x_k normal to z_k and z_{k+1} (any normal when they are parallel).
  for (int k = 0; k < n; ++k) {
    Eigen::Vector3d c = k + 1 < n ? w[k].cross(w[k + 1]) : Eigen::Vector3d::Zero();
    x[k] = c.norm() > 1e-14 ? Eigen::Vector3d(c.normalized()) : anyNormal(w[k]);
  }
  std::vector<Eigen::Matrix3d> F(n);
  for (int k = 0; k < n; ++k) {
    F[k].col(0) = x[k];
    F[k].col(1) = w[k].cross(x[k]);
    F[k].col(2) = w[k];
  }
  Chain& ch = plan.chain;
  ch.n = n;
  for (int r = 0; r < 3; ++r) {
    ch.base_p[r] = o[0][r];
    for (int c = 0; c < 3; ++c) ch.base_R[3 * r + c] = F[0](r, c);
  }
  for (int k = 0; k < n; ++k) {
    ChainJoint& j = ch.joint[k];
    const int mj = path[k];
    const int iv = model.idxV(mj);
    Eigen::Vector3d t = Eigen::Vector3d::Zero();
    double alpha = 0.0, phi = 0.0;
    if (k > 0) {
      const Eigen::Matrix3d rel = F[k - 1].transpose() * F[k];
      alpha = std::atan2(-rel(1, 2), rel(2, 2));
      const Eigen::Matrix3d rz = Eigen::AngleAxisd(-alpha, Eigen::Vector3d::UnitX()).toRotationMatrix() * rel;
      phi = std::atan2(rz(1, 0), rz(0, 0));
      const Eigen::Matrix3d back = (Eigen::AngleAxisd(alpha, Eigen::Vector3d::UnitX()) *
                                    Eigen::AngleAxisd(phi, Eigen::Vector3d::UnitZ()))
                                       .toRotationMatrix();
      if (!((back - rel).cwiseAbs().maxCoeff() <= 1e-12)) {
        plan.why = "the chain's frames did not reduce to Rx Rz form";
        return plan;
      }
      t = F[k - 1].transpose() * (o[k] - o[k - 1]);
    }
    for (int r = 0; r < 3; ++r) j.t[r] = t[r];
    j.has_alpha = alpha != 0.0;
    j.ca = std::cos(alpha);
    j.sa = std::sin(alpha);
    j.prismatic = model.type(mj) == JointType::kPrismatic;
    j.cphi = std::cos(phi);
    j.sphi = std::sin(phi);
    ch.phi[k] = j.prismatic ? 0.0 : phi;
    ch.lo[k] = model.lowerLimits()[iv];
    ch.hi[k] = model.upperLimits()[iv];
    plan.q_index.push_back(model.idxQ(mj));
    // randomConfiguration's draw: the limits where finite, else +-pi (hinge)
    // or +-1 (slider).
    const double dlo = j.prismatic ? -1.0 : -std::numbers::pi, dhi = j.prismatic ? 1.0 : std::numbers::pi;
    plan.draw_lo.push_back(std::isfinite(ch.lo[k]) ? ch.lo[k] : std::max(dlo, ch.lo[k]));
    plan.draw_hi.push_back(std::isfinite(ch.hi[k]) ? ch.hi[k] : std::min(dhi, ch.hi[k]));
  }
  // randomConfiguration draws joint by joint in model order: the path must
  // be in that order (it is, for a chain: parents come first).
  for (int k = 1; k < n; ++k)
    if (plan.q_index[k] <= plan.q_index[k - 1]) {
      plan.why = "the path's DOF are not in model order";
      return plan;
    }
  const Eigen::Vector3d xe = T[goal.body].act(goal.point);
  const Eigen::Vector3d tool = F[n - 1].transpose() * (xe - o[n - 1]);
  for (int r = 0; r < 3; ++r) ch.tool_p[r] = tool[r];
  plan.C = F[n - 1].transpose() * T[goal.body].R;
  return plan;
}


// What the kernel runs for one plan: the spec's part, the chain's, and the
// stopping rules of the (effective) solve options.
KernelParams kernelParams(const SpecPlan& spec_plan, const ChainPlan& plan, const SolverOptions& solve) {
  KernelParams p = spec_plan.params;
  p.chain = &plan.chain;
  p.pose = plan.pose;
  // limits=auto: the freeze loop on a redundant chain (fewer goal rows than DOFs).
  if (spec_plan.auto_limits) p.freeze = (plan.pose ? 6 : 3) < static_cast<int>(plan.q_index.size());
  p.w_pos = plan.w_pos;
  p.w_ori = plan.w_ori;
  p.tol_p = solve.position_tolerance;
  p.tol_o = solve.orientation_tolerance;
  p.max_iterations = solve.max_iterations;
  p.stall_iterations = solve.stall_iterations;
  p.stall_relative_improvement = solve.stall_relative_improvement;
  p.vanishing_step = kVanishingStep;
  return p;
}

}  // namespace ikbench::batch_detail
