// Options of the geometric and closed-form backends (ccd, fabrik, two-bone,
// planar-analytic, analytic-6r, analytic-7r).
// Each backend's spec keys are bound to these fields once (its .cpp file);
// the defaults here are the defaults everywhere.
#pragma once

#include <Eigen/Core>

#include "ikbench/core/enum_table.h"

namespace ikbench {

// ccd: cyclic coordinate descent (Wang & Chen 1991; Welman 1993).
enum class CcdOrder { kTipToRoot, kRootToTip };
inline constexpr EnumTable<CcdOrder, 2> kCcdOrderNames{
    {{{CcdOrder::kTipToRoot, "tip-to-root"}, {CcdOrder::kRootToTip, "root-to-tip"}}}, "joint order"};
struct CcdOptions {
  CcdOrder order = CcdOrder::kTipToRoot;  // joint visiting order of a sweep
  double max_angle = 0.0;  // largest rotation of one joint update [rad]; 0 = none
};

// fabrik: forward and backward reaching (Aristidou & Lasenby 2011).
// A free-floating root: free (each iteration the rigid translation that best
// moves all effectors onto their targets, then the centroid its sub-chains
// propose), centroid (the paper's sub-base rule alone, Sec. 5) or pinned (the
// start translation kept); its rotation aims the sub-chains in every mode.
enum class FabrikRoot { kFree, kCentroid, kPinned };
inline constexpr EnumTable<FabrikRoot, 3> kFabrikRootNames{
    {{{FabrikRoot::kFree, "free"}, {FabrikRoot::kCentroid, "centroid"}, {FabrikRoot::kPinned, "pinned"}}},
    "root mode"};
// Where joint limits act: both stages (the paper, Sec. 4; Aristidou,
// Chrysanthou & Lasenby 2016) or the backward stage only.
enum class FabrikLimits { kBoth, kBackward };
inline constexpr EnumTable<FabrikLimits, 2> kFabrikLimitsNames{
    {{{FabrikLimits::kBoth, "both"}, {FabrikLimits::kBackward, "backward"}}}, "limit stages"};
struct FabrikOptions {
  // Single chain, target beyond reach: every node on the ray to the target at
  // once (paper Alg. 1) and, if unconstrained, stop there.
  bool stretch = true;
  FabrikRoot root = FabrikRoot::kFree;
  FabrikLimits limits = FabrikLimits::kBoth;
};

// two-bone: law of cosines at the middle joint, then aim the root.
struct TwoBoneOptions {
  bool pole = false;  // turn the middle joint toward pole_x/y/z
  double pole_x = 0.0, pole_y = 0.0, pole_z = 0.0;  // world pole point [m]
  double swivel = 0.0;  // extra rotation about the root-target line [rad] (ball root)
};

// planar-analytic: 2-link planar chain.
struct PlanarAnalyticOptions {
  // 1 = lower link bent counter-clockwise about the middle hinge axis relative
  // to the upper link, -1 = clockwise, 0 = keep the current side.
  int elbow = 1;
};

// analytic-6r: every solution of a 6R arm in closed form; no parameters.
struct Analytic6rOptions {};

// analytic-7r: one joint held on a grid, the 6R left in closed form.
struct Analytic7rOptions {
  int free_joint = -1;      // chain index 0-6 of the held joint; -1 = chosen from the model
  int samples = 64;         // grid size over the held joint's range
  int max_solutions = 64;   // distinct solutions returned, closest to the start first
};

}  // namespace ikbench
