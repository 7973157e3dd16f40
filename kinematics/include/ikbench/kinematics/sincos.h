// sin and cos of one angle together, for the forward-kinematics hot path.
//
// Why not libm: glibc's sincos is an out-of-line call around which every
// live SSE register must be spilled (all are caller-saved), and it is a large
// share of a hinge chain's FK. The double overload below is inline and needs
// no call. The gain shows mostly where q changes every call, as in a solve:
// bench_solvers PerIteration (7-DOF pose DLS) measures it, beside
// bench_kinematics ForwardKinematics, whose q never changes.
//
// Method (fdlibm / Cephes, the textbook scheme, Muller, "Elementary
// Functions", ch. 11):
//   1. n = nearest integer to x * 2/pi, r = x - n pi/2 by Cody & Waite's
//      three-part constant (pi/2 = P1 + P2 + P3, P1 and P2 with trailing zero
//      bits so that n * P1 and n * P2 are exact for the |n| allowed here);
//   2. sin r and cos r on |r| <= pi/4 by fdlibm's minimax polynomials
//      (k_sin.c / k_cos.c, S1..S6 and C1..C6), cos with fdlibm's compensated
//      1 - z/2;
//   3. the quadrant n mod 4 swaps and negates them.
// Accuracy against long-double sinl / cosl: <= 1.51 ulp and <= 1.2e-16
// absolute for |x| <= 1e5 over 8e7 random arguments (a one-off run); the
// test SinCos.MatchesLibm re-checks 1.6 ulp and 1.3e-16 on 2e6 of them.
// glibc is < 1 ulp. Outside |x| <= 1e5 (and for NaN and +-inf) it calls
// std::sin / std::cos. The x86-64 build has no FMA instructions (SSE2), so
// the same input gives the same bits on every x86-64 machine, where libm
// picks an FMA or a non-FMA variant at run time.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ikbench {

// Any scalar type with sin / cos found by ADL or in std (ceres::Jet).
template <typename S>
inline void sinCos(const S& x, S& s, S& c) {
  using std::cos;
  using std::sin;
  s = sin(x);
  c = cos(x);
}

inline void sinCos(double x, double& s, double& c) {
  if (!(std::abs(x) <= 1e5)) {  // also NaN and +-inf
    s = std::sin(x);
    c = std::cos(x);
    return;
  }
  // Round to nearest by the 1.5 * 2^52 trick: the sum's low mantissa bits
  // are n (two's complement), valid for |x * 2/pi| < 2^51.
  constexpr double kMagic = 6755399441055744.0;
  const double t = x * 0.63661977236758134308 + kMagic;
  std::int64_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  const double n = t - kMagic;
  // Cephes' DP1..DP3 times 2: P1 has 23 significant bits and P2 21, so
  // n * P1 and n * P2 are exact for |n| < 2^30; here |n| < 2^16.
  const double r = ((x - n * 1.57079625129699707031e0) - n * 7.54978941586159635336e-8) -
                   n * 5.39030285815811905290e-15;
  const double z = r * r;
  // fdlibm __kernel_sin(r, 0, 0): r + r^3 (S1 + z (S2 + ... + z S6)).
  const double sr = 8.33333333332248946124e-03 +
                    z * (-1.98412698298579493134e-04 +
                         z * (2.75573137070700676789e-06 +
                              z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
  const double sin_r = r + (z * r) * (-1.66666666666666324348e-01 + z * sr);
  // fdlibm __kernel_cos(r, 0): w = 1 - z/2 plus the rounding error of that
  // subtraction ((1 - w) - z/2), then z^2 (C1 + z (C2 + ... + z C6)).
  const double cr =
      z * (4.16666666666666019037e-02 +
           z * (-1.38888888888741095749e-03 +
                z * (2.48015872894767294178e-05 +
                     z * (-2.75573143513906633035e-07 +
                          z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))));
  const double hz = 0.5 * z, w = 1.0 - hz;
  const double cos_r = w + (((1.0 - w) - hz) + z * cr);
  // x = n pi/2 + r: quadrant 1 swaps (sin, cos) -> (cos, -sin), 2 negates
  // both, 3 is (-cos, sin). Branches, not bit masks: in a solve a joint's
  // quadrant rarely changes between iterations, so they predict well, and
  // masks would move both results through integer registers, a longer
  // dependency chain (bench_kinematics ForwardKinematics/dof:7 measures it).
  const int quadrant = static_cast<int>(bits & 3);
  const bool odd = (quadrant & 1) != 0;
  s = odd ? cos_r : sin_r;
  c = odd ? sin_r : cos_r;
  if (quadrant & 2) s = -s;
  if ((quadrant + 1) & 2) c = -c;
}

}  // namespace ikbench
