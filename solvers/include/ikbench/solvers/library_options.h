// Options of the backends that wrap other libraries: Ceres Solver (ceres-lm,
// ceres-dogleg) and Orocos KDL (kdl-lma, kdl-nr-jl). Bound to spec keys once
// in ceres_solvers.cpp / kdl_solvers.cpp; the defaults here are the defaults
// everywhere.
#pragma once

#include "ikbench/core/enum_table.h"

namespace ikbench {

enum class CeresLinearSolver { kDenseQr, kDenseNormalCholesky };
inline constexpr EnumTable<CeresLinearSolver, 2> kCeresLinearSolverNames{
    {{{CeresLinearSolver::kDenseQr, "dense_qr"}, {CeresLinearSolver::kDenseNormalCholesky, "dense_normal_cholesky"}}},
    "linear solver"};

struct CeresOptions {
  // Jacobians by automatic differentiation (ceres::DynamicAutoDiffCostFunction
  // over the templated FK) instead of ikbench's analytic Jacobian.
  bool autodiff = false;
  CeresLinearSolver linear_solver = CeresLinearSolver::kDenseQr;
  // Ceres' initial_trust_region_radius. Its own default, 1e4, makes the first
  // LM steps nearly Gauss-Newton: large jumps into the joint limits.
  double initial_radius = 1.0;
};

struct KdlLmaOptions {
  // Task-space weight w of the rotation rows, L = diag(1,1,1,w,w,w). KDL's
  // own default 0.01 with its eps = 1e-5 accepts rotation errors up to 1e-3 rad.
  double rot_weight = 1.0;
};
struct KdlNrJlOptions {};

}  // namespace ikbench
