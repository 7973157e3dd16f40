// atan2 for the closed-form solvers' angles, inline.
//
// Why not libm: the closed form (solvers/src/analytic/analytic_ik.h, CosSin::angle)
// turns every joint of every solution from its cosine and sine into an angle,
// up to 48 atan2 per 6R pose, and glibc's atan2 is an out-of-line call that
// works for a correctly rounded result (a larger share of the closed form
// than any of its subproblems; bench_analytic PureSolve measures it).
//
// Method: Cephes' atan (Moshier, Cephes Math Library, atan.c), the scheme of
// batch_kernel.h's vatan2Positive on one lane: t = min(|y|, |x|) / max(|y|,
// |x|) in [0, 1], reduced at 0.66 by atan t = pi/4 + atan((t - 1) / (t + 1)),
// a 4/5 rational approximation on [0, 0.66] (peak relative error 2.6e-18),
// then placed in the quadrant of (x, y) (pi/2 - a, pi - a, the sign of y) with
// the low bits of pi/2 added back. Accuracy against long-double atan2l: the
// test Atan2.MatchesLibm checks <= 2 ulp over 2e6 random arguments of every
// quadrant and the signed zeros; glibc is < 1 ulp. NaN in gives NaN out; the
// arguments are finite (+-inf in both gives NaN, not +-pi/4 multiples).
#pragma once

#include <cmath>

namespace ikbench {

inline double atan2Fast(double y, double x) {
  const double ay = std::abs(y), ax = std::abs(x);
  const bool swap = ay > ax;
  const double num = swap ? ax : ay, den = swap ? ay : ax;
  const double t = num / (den == 0.0 ? 1.0 : den);  // in [0, 1]; NaN stays NaN
  const bool mid = t > 0.66;
  const double u = mid ? (t - 1.0) / (t + 1.0) : t;
  const double z = u * u;
  const double p = (((-8.750608600031904122785e-1 * z - 1.615753718733365076637e1) * z - 7.500855792314704667340e1) * z -
                    1.228866684490136173410e2) *
                       z -
                   6.485021904942025371773e1;
  const double q = ((((z + 2.485846490142306297962e1) * z + 1.650270098316988542046e2) * z + 4.328810604912902668951e2) *
                        z +
                    4.853903996359136964868e2) *
                       z +
                   1.945506571482613964425e2;
  constexpr double kMoreBits = 6.123233995736765886130e-17;  // pi/2 - double(pi/2)
  double a = u + u * (z * p / q);
  if (mid) a = 7.85398163397448309616e-1 + (a + 0.5 * kMoreBits);
  if (swap) a = (1.57079632679489661923 - a) + kMoreBits;
  if (std::signbit(x)) a = (3.14159265358979323846 - a) + 2.0 * kMoreBits;
  return std::copysign(a, y);
}

}  // namespace ikbench
