// Closed-form inverse kinematics of 6R arms by subproblem decomposition, and
// the geometry a 7R arm reduces to when one joint is locked. Pure functions on
// plain geometry: no registry, no Solver (the backends are in
// analytic_6r_solver.cpp).
//
// Kinematic form. A serial revolute chain is described at q = 0 in world
// coordinates by each joint's unit axis h_i and a point o_i on that axis, and
// by the effector frame T0 = (R0, p0). By the product of exponentials (Murray,
// Li & Sastry 1994, "A Mathematical Introduction to Robotic Manipulation",
// ch. 3) the effector at q is
//   R(q) = R(h1, q1) ... R(h6, q6) R0,
//   p(q) = o1 + R01 (o2 - o1) + R02 (o3 - o2) + ... + R06 (p0 - o6),
// with R0k = R(h1, q1) ... R(hk, qk): the form of Elias & Wen, "IK-Geo:
// Unified robot inverse kinematics using subproblem decomposition" (2022/2024).
// Any base and tool transform, any joint-frame convention and axes given in
// any joint frame end up in this form, because it is read off the model's own
// forward kinematics at q = 0.
//
// Subproblems (Paden 1985, "Kinematics and control of robot manipulators",
// PhD thesis, Berkeley, after Kahan; Murray, Li & Sastry 1994, sec. 3.3;
// IK-Geo's numbering):
//   SP1  R(k, t) p = q                        one angle (least squares in the plane of k)
//   SP2  R(k1, t1) p1 = R(k2, t2) p2          two angles, 0-2 solutions
//   SP3  |R(k, t) p - q| = d                  one angle, 0-2 solutions
//   SP4  a . R(k, t) p = d                    one angle, 0-2 solutions
// SP3 is an SP4 (|Rp - q|^2 = |p|^2 + |q|^2 - 2 q.Rp); SP2 finds the common
// image v (k1.v = k1.p1, k2.v = k2.p2, |v| = |p1|) and then two SP1s.
//
// Classes (each also tried on the reversed chain, i.e. the inverse pose on
// the chain read from the tool to the base, which turns a spherical shoulder
// into a spherical wrist):
//   spherical wrist  axes 4, 5, 6 meet in one point c (the wrist centre).
//       The wrist centre's target w = p_t - R_d (p0 - c), R_d = R_t R0^T,
//       depends on q1..q3 only (Pieper 1968, "The kinematics of manipulators
//       under computer control", PhD thesis, Stanford):
//         axes 2 || 3:         q1 by SP4 (h2.R1^T (w - o1) = h2.(c - o1)),
//                              q3 by SP3, q2 by SP1   (ABB, KUKA, most industrial arms)
//         axes 1 and 2 meet:   q3 by SP3, (q1, q2) by SP2
//         axes 2 and 3 meet:   q1 by SP3, (q2, q3) by SP2
//       then (q4, q5) by SP2 on R(h5, q5) h6 = R(h4, -q4) R_w h6 and q6 by
//       SP1, R_w = R03^T R_d: up to 4 x 2 = 8 solutions.
//   three parallel axes 2 || 3 || 4 (direction h) with axes 5 and 6 meeting
//       in a point b (the UR family): h.R1^T (p_t - o1 - R_d (p0 - b)) =
//       h.(b - o1) gives q1 (SP4); h.R5 h6 = (R1 h).(R_d h6) gives q5 (SP4);
//       R6 (R_d^T R1 h) = R5^T h gives q6 (SP1); R(h, q2+q3+q4) = R1^T R_d
//       R6^T R5^T gives the sum (SP1); the planar 3R then gives q3 (SP3),
//       q2 (SP1) and q4: up to 2 x 2 x 2 = 8 solutions.
//
// Detection tolerance: two axes are parallel when |h_i x h_j| <= 1e-9 (the
// sine of their angle), and lines meet when their distance is at most 1e-9
// times the arm's size (the summed distances between consecutive joint
// points and from the last joint to the effector). The solution is computed
// on the ideal geometry (parallel axes made exactly parallel, meeting axes
// through their common point), so a model that deviates by up to the
// tolerance gets answers whose FK error is of the order of that deviation.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "ikbench/kinematics/atan2.h"

namespace ikbench {
class Model;
}

namespace ikbench::analytic {

// Sine of the angle below which two axes count as parallel [rad].
inline constexpr double kParallelTolerance = 1e-9;
// Distance below which lines meet, relative to the arm's size.
inline constexpr double kIntersectTolerance = 1e-9;

// An angle as its cosine and sine (what the subproblems produce; the angle
// itself is taken by atan2 only where it is stored: the inline atan2Fast,
// within 2 ulp of libm's).
struct CosSin {
  double c = 1.0, s = 0.0;
  double angle() const { return atan2Fast(s, c); }
  CosSin inverse() const { return {c, -s}; }
  static CosSin of(double theta) { return {std::cos(theta), std::sin(theta)}; }
};

// atan2Fast(y[i], x[i]) for two pairs at once, in the two lanes of one SSE2
// register (GCC vector extensions): the same operations in the same order,
// each lane rounded as the scalar function rounds it, its branches turned
// into lane selects; the results are bit for bit the scalar's.
inline void atan2Fast2(const double y[2], const double x[2], double out[2]) {
  using V = double __attribute__((vector_size(16)));
  using M = long long __attribute__((vector_size(16)));
  constexpr long long kSign = static_cast<long long>(0x8000000000000000ULL);
  const M sign = {kSign, kSign}, zero_m = {0, 0};
  auto all = [](double v) { return V{v, v}; };
  const V yv = {y[0], y[1]}, xv = {x[0], x[1]};
  const V ay = (V)((M)yv & ~sign), ax = (V)((M)xv & ~sign);
  const M swap = ay > ax;
  const V num = swap ? ax : ay, den = swap ? ay : ax;
  const V t = num / (den == all(0.0) ? all(1.0) : den);
  const M mid = t > all(0.66);
  const V u = mid ? (t - all(1.0)) / (t + all(1.0)) : t;
  const V z = u * u;
  const V p = (((all(-8.750608600031904122785e-1) * z - all(1.615753718733365076637e1)) * z -
                all(7.500855792314704667340e1)) *
                   z -
               all(1.228866684490136173410e2)) *
                  z -
              all(6.485021904942025371773e1);
  const V q = ((((z + all(2.485846490142306297962e1)) * z + all(1.650270098316988542046e2)) * z +
                all(4.328810604912902668951e2)) *
                   z +
               all(4.853903996359136964868e2)) *
                  z +
              all(1.945506571482613964425e2);
  constexpr double kMoreBits = 6.123233995736765886130e-17;  // pi/2 - double(pi/2)
  V a = u + u * (z * p / q);
  a = mid ? all(7.85398163397448309616e-1) + (a + all(0.5 * kMoreBits)) : a;
  a = swap ? (all(1.57079632679489661923) - a) + all(kMoreBits) : a;
  a = ((M)xv & sign) != zero_m ? (all(3.14159265358979323846) - a) + all(2.0 * kMoreBits) : a;
  a = (V)(((M)a & ~sign) | ((M)yv & sign));
  out[0] = a[0];
  out[1] = a[1];
}

// R(k, t) v by Rodrigues' formula (k unit).
// Dot and cross products of 3-vectors written out per component (scalar
// code: Eigen's two-lane packets spend shuffles on a 3-vector).
[[gnu::always_inline]] inline double dot3(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
[[gnu::always_inline]] inline Eigen::Vector3d cross3(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

// Written out per component: the same sums in the same order as the vector
// expression a.c v + a.s (k x v) + ((1 - a.c) k.v) k, without the shuffles
// of Eigen's two-lane packets for a 3-vector.
[[gnu::always_inline]] inline Eigen::Vector3d rotate(const Eigen::Vector3d& k, const CosSin& a, const Eigen::Vector3d& v) {
  const double k0 = k[0], k1 = k[1], k2 = k[2], v0 = v[0], v1 = v[1], v2 = v[2];
  const double w = (1.0 - a.c) * (k0 * v0 + k1 * v1 + k2 * v2);
  return {a.c * v0 + a.s * (k1 * v2 - k2 * v1) + w * k0, a.c * v1 + a.s * (k2 * v0 - k0 * v2) + w * k1,
          a.c * v2 + a.s * (k0 * v1 - k1 * v0) + w * k2};
}

// ------------------------------------------------------------- subproblems --

// A vector within this relative distance of an axis counts as on it (its
// angle about the axis is free).
inline constexpr double kOnAxis = 1e-12;
// A subproblem whose target exceeds its reachable range by this relative
// amount still gets the boundary root (rounding of targets on the boundary);
// beyond it there is no root.
inline constexpr double kBeyondBoundary = 1e-9;
// Roots closer than this (in the sine of half their difference) are reported
// as a double root (stretched elbow, wrist flip at its boundary). Rounding
// alone puts an exactly stretched target about 1.5e-8 apart.
inline constexpr double kDoubleRoot = 1e-7;

// Roots of a one-angle subproblem.
struct Roots {
  CosSin t[2];
  int count = 0;
  bool any = false;          // every angle solves it (degenerate: a continuum)
  bool double_root = false;  // the two roots coincide (boundary of the reachable set)
};
// SP2's roots. When p1 lies on k1 (or p2 on k2) that angle is free and takes
// the hint; `free1` / `free2` say so.
struct Roots2 {
  CosSin t1[2], t2[2];
  int count = 0;
  bool free1 = false, free2 = false;
  bool double_root = false;
};

// The subproblems are defined here, inline, so that the solvers' loops
// inline them.

// R(k, t) p = (k.p) k + sin t (k x p) + cos t p_perp, so q.(k x p) and q.p_perp
// are proportional to sin t and cos t (Paden-Kahan subproblem 1; Murray, Li &
// Sastry 1994, sec. 3.3.1).
// What SP1 needs of (k, p) alone, so that several targets q share it (SP2's
// two roots): k x p, the part of p normal to k, and whether p is on the axis.
struct Sp1Axis {
  Eigen::Vector3d kxp, pp;
  bool on_axis;
  Sp1Axis(const Eigen::Vector3d& k, const Eigen::Vector3d& p) : kxp(cross3(k, p)) {
    const double kp = dot3(k, p);
    pp = {p[0] - kp * k[0], p[1] - kp * k[1], p[2] - kp * k[2]};
    on_axis = !(dot3(pp, pp) > kOnAxis * kOnAxis * dot3(p, p));
  }
  // SP1 for this (k, p) and q (see subproblem1).
  bool solve(const Eigen::Vector3d& q, CosSin* t) const {
    if (on_axis) return false;
    const double x = dot3(q, kxp), y = dot3(q, pp);
    const double n = std::sqrt(x * x + y * y);
    if (n == 0.0) {  // q on the axis: no angle moves p there; any answer is as good
      *t = CosSin{};
      return true;
    }
    *t = {y / n, x / n};
    return true;
  }
};
// SP1: t with R(k, t) p = q (least squares in the plane normal to k). Returns
// false when p is (within kOnAxis relative) on the axis: every t is a solution.
inline bool subproblem1(const Eigen::Vector3d& k, const Eigen::Vector3d& p, const Eigen::Vector3d& q, CosSin* t) {
  return Sp1Axis(k, p).solve(q, t);
}

// a . R(k, t) p = (a.k)(k.p) + sin t a.(k x p) + cos t a.p_perp
//              = (a.k)(k.p) + rho cos(t - phi)
// (subproblem 4 in IK-Geo's numbering, Elias & Wen 2022).
// SP4: t with a . R(k, t) p = d. No root when |d - (a.k)(k.p)| exceeds the
// amplitude |a_perp| |p_perp| by more than kBeyondBoundary relative (within it
// the boundary root).
inline Roots subproblem4(const Eigen::Vector3d& a, const Eigen::Vector3d& k, const Eigen::Vector3d& p, double d) {
  Roots r;
  const double kp = dot3(k, p);
  const double alpha = dot3(a, cross3(k, p));
  const double beta = a[0] * (p[0] - kp * k[0]) + a[1] * (p[1] - kp * k[1]) + a[2] * (p[2] - kp * k[2]);
  const double e = d - dot3(a, k) * kp;
  const double rho2 = alpha * alpha + beta * beta;
  const double scale2 = dot3(a, a) * dot3(p, p);
  if (!(rho2 > kOnAxis * kOnAxis * scale2)) {
    // a or p on the axis: the left side does not depend on t.
    r.any = e * e <= kBeyondBoundary * kBeyondBoundary * scale2;
    return r;
  }
  const double rho = std::sqrt(rho2);
  double u = e / rho;
  if (!(std::abs(u) <= 1.0 + kBeyondBoundary)) return r;
  double w = 0.0;
  if (std::abs(u) >= 1.0) {
    u = std::copysign(1.0, u);
  } else {
    w = std::sqrt((1.0 - u) * (1.0 + u));
  }
  const double cphi = beta / rho, sphi = alpha / rho;
  // t = phi +- acos(u): cos t = cphi u -+ sphi w, sin t = sphi u +- cphi w.
  r.t[0] = {cphi * u - sphi * w, sphi * u + cphi * w};
  r.t[1] = {cphi * u + sphi * w, sphi * u - cphi * w};
  r.count = w > 0.0 ? 2 : 1;
  r.double_root = w < kDoubleRoot;
  return r;
}

// |R p - q|^2 = |p|^2 + |q|^2 - 2 q.R p (Paden-Kahan subproblem 3).
// SP3: t with |R(k, t) p - q| = d.
inline Roots subproblem3(const Eigen::Vector3d& k, const Eigen::Vector3d& p, const Eigen::Vector3d& q, double d) {
  return subproblem4(q, k, p, 0.5 * (dot3(p, p) + dot3(q, q) - d * d));
}

// The common image v = R(k1, t1) p1 = R(k2, t2) p2 satisfies k1.v = k1.p1,
// k2.v = k2.p2 and |v| = |p1|: v = x k1 + y k2 + z (k1 x k2) (Paden-Kahan
// subproblem 2; Murray, Li & Sastry 1994, sec. 3.3.1), then one SP1 per angle.
// SP2: (t1, t2) with R(k1, t1) p1 = R(k2, t2) p2, k1 not parallel to k2.
[[gnu::always_inline]] inline Roots2 subproblem2(const Eigen::Vector3d& k1, const Eigen::Vector3d& p1, const Eigen::Vector3d& k2,
                          const Eigen::Vector3d& p2, double hint1, double hint2) {
  Roots2 r;
  const double c12 = dot3(k1, k2);
  const double den = 1.0 - c12 * c12;  // |k1 x k2|^2 > 0 (axes not parallel)
  const double a1 = dot3(k1, p1), a2 = dot3(k2, p2);
  const double x = (a1 - c12 * a2) / den, y = (a2 - c12 * a1) / den;
  const Eigen::Vector3d w0{x * k1[0] + y * k2[0], x * k1[1] + y * k2[1], x * k1[2] + y * k2[2]};
  const double r2 = 0.5 * (dot3(p1, p1) + dot3(p2, p2));
  const double z2 = r2 - dot3(w0, w0);  // times den
  if (!(z2 >= -kBeyondBoundary * r2)) return r;
  const double z = z2 > 0.0 ? std::sqrt(z2 / den) : 0.0;
  r.double_root = z2 <= kDoubleRoot * kDoubleRoot * r2;
  const Eigen::Vector3d n = cross3(k1, k2);
  const Sp1Axis sp1(k1, p1), sp2(k2, p2);
  const int m = z > 0.0 ? 2 : 1;
  for (int i = 0; i < m; ++i) {
    const double zi = i == 0 ? z : -z;
    Eigen::Vector3d v{w0[0] + zi * n[0], w0[1] + zi * n[1], w0[2] + zi * n[2]};
    CosSin t1, t2;
    if (!sp1.solve(v, &t1)) {
      r.free1 = true;
      t1 = CosSin::of(hint1);
      v = rotate(k1, t1, p1);
    }
    if (!sp2.solve(v, &t2)) {
      r.free2 = true;
      t2 = CosSin::of(hint2);
      if (!r.free1) sp1.solve(rotate(k2, t2, p2), &t1);
    }
    r.t1[r.count] = t1;
    r.t2[r.count] = t2;
    ++r.count;
    if (r.free1 || r.free2) break;  // the two roots are one point of the continuum
  }
  return r;
}

// ------------------------------------------------------------------ chains --

// A revolute chain at q = 0 in world coordinates (see the file comment).
template <int N>
struct RevoluteChain {
  std::array<Eigen::Vector3d, N> h;                  // unit axis of each joint
  std::array<Eigen::Vector3d, N> o;                  // a point on each axis
  Eigen::Matrix3d R0 = Eigen::Matrix3d::Identity();  // effector orientation at q = 0
  Eigen::Vector3d p0 = Eigen::Vector3d::Zero();      // effector point at q = 0
  // Arm size [m]: summed distances between consecutive joint points and from
  // the last one to the effector (the scale of the intersection tolerance).
  double size() const {
    double s = (p0 - o[N - 1]).norm();
    for (int i = 1; i < N; ++i) s += (o[i] - o[i - 1]).norm();
    return s;
  }
};
using Chain6 = RevoluteChain<6>;
using Chain7 = RevoluteChain<7>;

// The moving joints from the root to `body`: exactly `dof` revolute joints
// and nothing else that moves (fixed joints between them are fine).
bool revoluteChain(const Model& model, int body, int dof, std::vector<int>* joints, std::string* why);
// The chain's geometry at q = 0 (other joints of the model at their neutral
// value), for the effector `point` in `body`'s frame.
template <int N>
RevoluteChain<N> chainAtZero(const Model& model, const std::vector<int>& joints, int body,
                             const Eigen::Vector3d& point);

// The 6R chain left when joint `locked` of a 7R chain is held at theta: the
// joints after it are carried by R(h_locked, theta) about its axis.
Chain6 lockJoint(const Chain7& chain, int locked, double theta);

// ----------------------------------------------------------------- 6R plan --

enum class ArmClass { kSphericalWrist, kThreeParallel };
// How a spherical-wrist arm positions its wrist centre.
enum class PositionCase { kParallel23, kIntersect12, kIntersect23 };

// A classified 6R chain, ready to solve: the ideal geometry of the chain that
// is solved (the reversed one if `reversed`) and the constants of its class.
struct Plan6 {
  ArmClass arm_class = ArmClass::kSphericalWrist;
  PositionCase position = PositionCase::kParallel23;
  bool reversed = false;
  Chain6 k;
  Eigen::Vector3d c = Eigen::Vector3d::Zero();         // wrist centre / meeting point of axes 5 and 6
  Eigen::Vector3d s = Eigen::Vector3d::Zero();         // meeting point of axes 1-2 or 2-3
  Eigen::Vector3d hp = Eigen::Vector3d::UnitZ();       // direction of the parallel axes
  Eigen::Vector3d hp_perp = Eigen::Vector3d::UnitX();  // a unit vector normal to hp
  Eigen::Vector3d h6_perp = Eigen::Vector3d::UnitX();  // a unit vector normal to axis 6
  double sign3 = 1.0, sign4 = 1.0;                     // three parallel: h3 = sign3 hp, h4 = sign4 hp
};

// What counts as parallel and as meeting when classifying: the sine of the
// angle between parallel axes, and the distance between meeting lines
// relative to the arm's size (RevoluteChain::size).
struct Tolerances {
  double parallel = kParallelTolerance;
  double intersect = kIntersectTolerance;
};
// Classifies a 6R chain (forward, then reversed). On failure *why lists, for
// both directions, which joints do not meet or are not parallel. `names`
// (optional) are the joints' names for the message. With tolerances looser
// than the defaults the plan is that of the idealised chain (see the file
// comment): its solutions are those of a chain up to that far from the
// given one.
bool classify6(const Chain6& chain, Plan6* plan, std::string* why = nullptr,
               const std::array<std::string, 6>* names = nullptr, const Tolerances& tolerances = {});
// One line: the class, e.g. "spherical wrist (joints 4-6 meet), axes 2 and 3 parallel".
std::string describe(const Plan6& plan);

// Singular targets met while solving (bits of Solutions6::singular).
enum Singularity : unsigned {
  kShoulderFree = 1u,     // the wrist point on axis 1: q1 free (a representative from the hint)
  kWristFree = 2u,        // wrist axes aligned: only a combination of two angles is fixed
  kArmFree = 4u,          // the wrist point on axis 2 or 3: that angle free
  kElbowDouble = 8u,      // elbow stretched or folded: its two roots coincide
  kShoulderDouble = 16u,  // q1 at its reach boundary: its two roots coincide
  kWristDouble = 32u,     // the wrist flip's two roots coincide
  kWristTurned = 64u,     // kWristFree, three parallel axes: the start's q6 left the position out of reach,
                          // a q6 near it that reaches the position taken instead
};

// Up to 8 solutions, each angle in (-pi, pi] (with limits given to solve6:
// the representative within them), in the original chain order.
struct Solutions6 {
  std::array<std::array<double, 6>, 8> q;
  int count = 0;
  unsigned singular = 0;
  // Solutions (or branches of them: a shoulder-elbow branch whose angles are
  // outside the limits is dropped before its wrist is solved) dropped by
  // the limits given to solve6.
  int outside = 0;
  // Shoulder-elbow branches within the limits dropped by the Bound6 given to
  // solve6 before their wrist was solved, and (spherical wrist) solutions
  // whose first five angles put them beyond it before the last was solved.
  int pruned = 0;
};

// The representative a + 2 pi k of angle a nearest `to` among those within
// [lo, hi] (infinite bounds allowed); a when no other within them is nearer.
inline double nearestTurn(double a, double to, double lo, double hi) {
  constexpr double kPi = std::numbers::pi, kTurn = 2.0 * kPi;
  const double d = to - a;
  // One turn either way when |d| <= 3 pi (an angle of atan2 and a start
  // within +-2 pi), without a division.
  const double k = std::abs(d) <= kPi         ? 0.0
                   : std::abs(d) <= 3.0 * kPi ? std::copysign(1.0, d)
                                              : std::nearbyint(d / kTurn);
  double best = a;
  for (double j : {k, k - 1.0, k + 1.0}) {  // the nearest overall, else a neighbour of it within the limits
    const double b = a + j * kTurn;
    if (b >= lo && b <= hi && std::abs(b - to) < std::abs(best - to)) best = b;
  }
  return best;
}

// Joint limits (original chain order) a solution must meet: each angle has
// a representative angle + 2 pi k within [lo - kLimitSlack, hi + kLimitSlack]
// (infinite bounds allowed), as wrapAngleIntoLimits finds it; solve6 returns
// the one nearest the hint (nearestTurn).
struct Limits6 {
  std::array<double, 6> lo, hi;
};

// Only the solutions near a configuration (analytic-7r keeps the closest to
// the start): a branch whose first three angles (in the order solve6 solves
// them, wrapped into the limits) already put it farther than `bound` from
// `from` (squared joint-space distance, plus `base` for joints outside the
// 6R) is dropped before its wrist is solved and counted in
// Solutions6::pruned; on a spherical wrist, so is a solution whose first
// five angles put it beyond the bound, before its last angle is solved. The
// angles not yet known only add to that distance, so no solution within the
// bound is lost.
struct Bound6 {
  std::array<double, 6> from;  // original chain order
  double base = 0.0;
  double bound = 0.0;
};

// Every solution of R(q) R0 = R_target, p(q) = p_target. `hint` (original
// chain order) gives the free angle's value at a singular target (the start
// configuration, so that the representative is the closest one). With
// `limits`, solutions outside them are dropped while solving (a branch as
// soon as its first angles are known), so that their remaining angles are
// not computed; the kept ones are the same as without, each angle as its
// representative within the limits nearest the hint (on a joint with more
// than a turn of range the nearest solution to a start near pi stays on its
// branch instead of coming back a turn away). With `bound`, the
// solutions farther than it (Bound6) are dropped the same way.
void solve6(const Plan6& plan, const Eigen::Matrix3d& R_target, const Eigen::Vector3d& p_target,
            const std::array<double, 6>& hint, Solutions6* out, const Limits6* limits = nullptr,
            const Bound6* bound = nullptr);

// ---------------------------------------------------------------- 7R search --

// A 7R chain with joint `locked` held, classified once. Holding the joint at
// theta carries every later joint and the effector by the rotation G(theta)
// about the held axis (lockJoint), so the 6R plan at theta is the plan at
// theta0 with the parts that G moves turned by theta - theta0 about that
// line; in a reversed plan (the chain read from the tool, in the effector's
// frame at q = 0) the joints before the held one move instead, by
// -(theta - theta0) about the held axis seen from the effector. Meeting
// points and parallel directions move with their axes (a point where a
// moving and a fixed axis meet lies on the held axis: it stays). This
// replaces a classification per sample (a dozen line distances and a 3 x 3
// solve) by a few rotations.
struct LockedPlan {
  Plan6 plan;                                    // at theta0
  double theta0 = 0.0;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // a point of the held axis, in the plan's frame
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();  // its direction; the plan turns by sign (theta - theta0)
  double sign = 1.0;
  std::array<bool, 6> moving{};  // which of the plan's joints turn with the held joint
};
// Classifies the 6R left by holding `locked` at theta0. False (and why)
// when that leaves no supported class.
bool lockPlan(const Chain7& chain, int locked, double theta0, LockedPlan* out, std::string* why = nullptr);
// The plan of the 6R left with the held joint at theta.
void planAt(const LockedPlan& locked, double theta, Plan6* plan);

// The joint of a 7R chain held during the 1-D search: `requested` (a chain
// index 0-6) if holding it leaves a supported 6R class; for requested = -1,
// of the joints that do, the one that moves most along the self-motion
// (largest selfMotionShare): a grid over a joint that barely moves along the
// self-motion of a target (the iiwa's base yaw, the Panda's elbow) hits its
// narrow range rarely, one that sweeps widely (the iiwa's joint 5, the
// Panda's joint 7) covers the family (measured in docs/analytic-ik.md).
// "Leaves a class" is checked at three generic angles (0.3, 1.9, -2.6 rad),
// so that a class that holds only at special angles (two axes parallel at 0)
// does not count. Returns -1 and says why for each joint otherwise. `lo`,
// `hi` are the joints' limits; `names` (optional) name the joints in the
// message.
int chooseFreeJoint(const Chain7& chain, int requested, const std::array<double, 7>& lo,
                    const std::array<double, 7>& hi, std::string* why = nullptr,
                    const std::array<std::string, 7>* names = nullptr);
// How much each joint moves along the self-motion: the median, over
// `configurations` random configurations within the limits (infinite limits:
// [-pi, pi]; fixed seed kSelfMotionSeed), of |n_i| for the unit null vector n
// of the 6 x 7 Jacobian.
inline constexpr std::uint64_t kSelfMotionSeed = 0x5E1F30u;
std::array<double, 7> selfMotionShare(const Chain7& chain, const std::array<double, 7>& lo,
                                      const std::array<double, 7>& hi, int configurations = 64);
// The values the held joint takes: `samples` values over [lo, hi] evenly
// with both ends when both limits are finite and span less than a turn;
// otherwise the full turn [-pi, pi) evenly (every angle has a
// representative there).
std::vector<double> freeJointGrid(double lo, double hi, int samples);

// A sentence about the singular bits for the Summary message, naming joints
// by their 1-based number in the chain (original order), e.g. "wrist singular
// (axes of joints 4 and 6 aligned): only q4 + q6 is fixed; a representative
// with q4 from the start configuration returned". Empty for 0.
std::string singularityMessage(const Plan6& plan, unsigned singular);

}  // namespace ikbench::analytic
