// The batch kernel's body, written once over a 4-lane double vector and
// compiled per instruction set: batch_kernel_portable.cpp (SSE2) and
// batch_kernel_avx2.cpp (AVX2 + FMA) include it inside their own namespace,
// after defining
//   V                     4 doubles (GCC vector extension)
//   Mk                    the 4 x int64 lane mask a comparison of V gives
//   vfma(a, b, c)         a * b + c (fused where the ISA has it)
//   Mu                    4 x uint64 (for shifts)
//   vsqrt(a), movemask(m) (bit l = lane l's sign bit), select(m, a, b) (m's
//   lanes all ones or all zeros), selectSign(m, a, b) (by m's sign bits)
// No header is included here and nothing here has external linkage outside
// those namespaces, so the two copies never meet at link time.
//
// Each lane runs exactly the iteration of solvers/src/backends/jacobian_dls.cpp and
// jacobian_solvers.cpp (DLS step, freeze loop, max-step clamp, clamp into
// the limits) and the stopping rules of SolveContext, on its own problem
// (to rounding: the freeze loop downdates the normal matrix, see dlsStep);
// lanes never exchange data, so a lane's result does not depend on the
// others. Frames and names: batch_layout.h.

// Small loops of compile-time length (rows, the 6x6 system) are unrolled
// completely: GCC's default limits leave the nested ones rolled, with their
// loop counters and branches in every kernel step (bench_batch
// BatchPerIteration/auto measures it).
#define IKBENCH_BATCH_UNROLL _Pragma("GCC unroll 16")

inline V splat(double x) { return V{x, x, x, x}; }
inline V load(const double* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void store(double* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
inline Mk loadMask(const std::int64_t* p) {
  Mk m;
  __builtin_memcpy(&m, p, sizeof m);
  return m;
}
inline void storeMask(std::int64_t* p, Mk m) { __builtin_memcpy(p, &m, sizeof m); }
inline Mk splatMask(long long x) { return Mk{x, x, x, x}; }
inline V vabs(V x) { return (V)((Mk)x & splatMask(0x7fffffffffffffffLL)); }
inline Mk finiteMask(V x) { return (x - x) == splat(0.0); }  // false for +-inf and NaN
inline V vmax(V a, V b) { return select(a < b, b, a); }  // std::max(a, b)
// <row i of A, row j of B> for row-major 3x3 A, B.
inline V rowDot(const V* A, const V* B, int i, int j) {
  return vfma(A[3 * i + 2], B[3 * j + 2], vfma(A[3 * i + 1], B[3 * j + 1], A[3 * i] * B[3 * j]));
}

// sin and cos of each lane: the algorithm of kinematics/sincos.h (Cody-Waite
// reduction by pi/2, fdlibm's kernels, quadrant by the low bits of n) on
// four lanes; lanes with |x| > 1e5 (or NaN, inf) take std::sin / std::cos
// as there.
inline void vsinCos(V x, V& s, V& c) {
  const V magic = splat(6755399441055744.0);
  const V t = x * splat(0.63661977236758134308) + magic;
  const Mk bits = (Mk)t;
  const V n = t - magic;
  const V r = ((x - n * splat(1.57079625129699707031e0)) - n * splat(7.54978941586159635336e-8)) -
              n * splat(5.39030285815811905290e-15);
  const V z = r * r;
  const V sr = vfma(
      z,
      vfma(z, vfma(z, vfma(z, splat(1.58969099521155010221e-10), splat(-2.50507602534068634195e-08)),
                   splat(2.75573137070700676789e-06)),
           splat(-1.98412698298579493134e-04)),
      splat(8.33333333332248946124e-03));
  const V sin_r = vfma(z * r, vfma(z, sr, splat(-1.66666666666666324348e-01)), r);
  const V cr =
      z * vfma(z,
               vfma(z,
                    vfma(z,
                         vfma(z, vfma(z, splat(-1.13596475577881948265e-11), splat(2.08757232129817482790e-09)),
                              splat(-2.75573143513906633035e-07)),
                         splat(2.48015872894767294178e-05)),
                    splat(-1.38888888888741095749e-03)),
               splat(4.16666666666666019037e-02));
  const V hz = splat(0.5) * z, w = splat(1.0) - hz;
  const V cos_r = w + (((splat(1.0) - w) - hz) + z * cr);
  // Quadrant n mod 4 from the low bits of t: bit 0 (shifted to the sign
  // bit) swaps, bit 1 of n (of n + 1) negates sin (cos).
  const Mu ubits = (Mu)bits;
  const Mu sign = Mu{} + 0x8000000000000000ULL;
  const Mk odd = (Mk)(ubits << 63);
  s = selectSign(odd, cos_r, sin_r);
  c = selectSign(odd, sin_r, cos_r);
  s = (V)((Mu)s ^ ((ubits << 62) & sign));
  c = (V)((Mu)c ^(((ubits + 1) << 62) & sign));
  const int big = movemask(~(vabs(x) <= splat(1e5)));
  if (big != 0) {
    IKBENCH_BATCH_UNROLL
    for (int l = 0; l < 4; ++l)
      if (big & (1 << l)) {
        s[l] = __builtin_sin(x[l]);
        c[l] = __builtin_cos(x[l]);
      }
  }
}

// atan2(s, c) for s >= 0, in [0, pi]: Cephes' atan (Moshier, Cephes Math
// Library, atan.c: range reduction at tan(3 pi / 8) and 0.66, a 4/5 rational
// approximation, peak relative error 2.6e-18 on [0, 0.66]) of min/max of
// (s, |c|), placed in the quadrant.
inline V vatan2Positive(V s, V c) {
  const V ac = vabs(c);
  const Mk swap = s > ac;
  const V num = select(swap, ac, s), den = select(swap, s, ac);
  const V t = num / select(den == splat(0.0), splat(1.0), den);  // in [0, 1]
  const Mk mid = t > splat(0.66);
  const V x = select(mid, (t - splat(1.0)) / (t + splat(1.0)), t);
  const V z = x * x;
  const V p = vfma(vfma(vfma(vfma(splat(-8.750608600031904122785e-1), z, splat(-1.615753718733365076637e1)), z,
                             splat(-7.500855792314704667340e1)),
                        z, splat(-1.228866684490136173410e2)),
                   z, splat(-6.485021904942025371773e1));
  const V q = vfma(vfma(vfma(vfma(z + splat(2.485846490142306297962e1), z, splat(1.650270098316988542046e2)), z,
                             splat(4.328810604912902668951e2)),
                        z, splat(4.853903996359136964868e2)),
                   z, splat(1.945506571482613964425e2));
  const V morebits = splat(6.123233995736765886130e-17);
  V a = vfma(x, z * p / q, x);
  a = select(mid, splat(7.85398163397448309616e-1) + (a + splat(0.5) * morebits), a);
  const V a0 = select(swap, (splat(1.57079632679489661923) - a) + morebits, a);
  return select(c < splat(0.0), (splat(3.14159265358979323846) - a0) + splat(2.0) * morebits, a0);
}

// Goal errors and the weighted residual from the effector point x and the
// goal body's rotation R (row-major) of each lane: writes g.r, g.pe, g.oe,
// g.wn. Inlined into the step (GCC would call it, with the frame and the
// point passed through memory).
template <bool kPose>
__attribute__((always_inline)) inline void errorsAndResidual(const KernelParams& P, LaneGroup& g, const V (&x)[3], const V (&R)[9]) {
  // Position error and rows (goal weights of 1 skip their products).
  const bool unit = P.w_pos == 1.0 && P.w_ori == 1.0;
  const V wp = splat(P.w_pos);
  V ep[3];
  IKBENCH_BATCH_UNROLL
  for (int r = 0; r < 3; ++r) ep[r] = load(g.target_p[r]) - x[r];
  const V pe = vsqrt(vfma(ep[2], ep[2], vfma(ep[1], ep[1], ep[0] * ep[0])));
  V sum = splat(0.0);
  IKBENCH_BATCH_UNROLL
  for (int r = 0; r < 3; ++r) {
    const V e = unit ? ep[r] : wp * ep[r];
    store(g.r[r], e);
    sum = vfma(e, e, sum);
  }
  V oe = splat(0.0);
  if constexpr (kPose) {
    // log(Rt R^T) (pose.cpp, so3::log): M = Rt R^T needs only its trace and
    // its antisymmetric part, v = (M21 - M12, M02 - M20, M10 - M01), where
    // M_ij = <row i of Rt, row j of R>.
    V Rt[9];
    IKBENCH_BATCH_UNROLL
    for (int k = 0; k < 9; ++k) Rt[k] = load(g.target_R[k]);
    const V m00 = rowDot(Rt, R, 0, 0), m11 = rowDot(Rt, R, 1, 1), m22 = rowDot(Rt, R, 2, 2);
    const V v0 = rowDot(Rt, R, 2, 1) - rowDot(Rt, R, 1, 2), v1 = rowDot(Rt, R, 0, 2) - rowDot(Rt, R, 2, 0), v2 = rowDot(Rt, R, 1, 0) - rowDot(Rt, R, 0, 1);
    V cth = splat(0.5) * (((m00 + m11) + m22) - splat(1.0));
    cth = select(cth < splat(-1.0), splat(-1.0), select(cth > splat(1.0), splat(1.0), cth));
    const V sth = splat(0.5) * vsqrt(vfma(v2, v2, vfma(v1, v1, v0 * v0)));
    const V theta = vatan2Positive(sth, cth);
    // theta / (2 sin theta), or its series 1/2 + theta^2 / 12 below 1e-5.
    const Mk small = theta < splat(1e-5);
    const V k = select(small, splat(0.5) + theta * theta / splat(12.0), theta / (splat(2.0) * select(small, splat(1.0), sth)));
    V w[3] = {k * v0, k * v1, k * v2};
    const Mk near_pi = ~small & ~(cth > splat(-0.99));
    const int np = movemask(near_pi);
    if (np != 0) {
      // Near pi, v carries no reliable axis: from the symmetric part,
      // B = ((M + M^T) / 2 - c I) / (1 - c) = a a^T, the column with the
      // largest diagonal, normalised, signed by v (as so3::log).
      const V m01 = rowDot(Rt, R, 0, 1), m10 = rowDot(Rt, R, 1, 0), m02 = rowDot(Rt, R, 0, 2), m20 = rowDot(Rt, R, 2, 0), m12 = rowDot(Rt, R, 1, 2), m21 = rowDot(Rt, R, 2, 1);
      IKBENCH_BATCH_UNROLL
      for (int l = 0; l < 4; ++l) {
        if (!(np & (1 << l))) continue;
        const double c = cth[l], den = 1.0 - c;
        const double B[3][3] = {{(m00[l] - c) / den, 0.5 * (m01[l] + m10[l]) / den, 0.5 * (m02[l] + m20[l]) / den},
                                {0.5 * (m01[l] + m10[l]) / den, (m11[l] - c) / den, 0.5 * (m12[l] + m21[l]) / den},
                                {0.5 * (m02[l] + m20[l]) / den, 0.5 * (m12[l] + m21[l]) / den, (m22[l] - c) / den}};
        int kk = 0;
        if (B[1][1] > B[kk][kk]) kk = 1;
        if (B[2][2] > B[kk][kk]) kk = 2;
        const double d = __builtin_sqrt(B[kk][kk] > 1e-300 ? B[kk][kk] : 1e-300);
        double a[3] = {B[0][kk] / d, B[1][kk] / d, B[2][kk] / d};
        const double an = __builtin_sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        if (an > 0) {
          for (double& ai : a) ai /= an;
        }
        if (a[0] * v0[l] + a[1] * v1[l] + a[2] * v2[l] < 0.0)
          for (double& ai : a) ai = -ai;
        IKBENCH_BATCH_UNROLL
        for (int r = 0; r < 3; ++r) w[r][l] = theta[l] * a[r];
      }
    }
    const V wo = splat(P.w_ori);
    IKBENCH_BATCH_UNROLL
    for (int r = 0; r < 3; ++r) {
      const V e = unit ? w[r] : wo * w[r];
      store(g.r[3 + r], e);
      sum = vfma(e, e, sum);
    }
    oe = theta;
  }
  store(g.pe, pe);
  store(g.oe, oe);
  store(g.wn, vsqrt(sum));
}

// Goal errors, residual and (kJacobian) Jacobian at lq for one group (the
// forward kinematics in the frames of batch_layout.h). Writes g.r, g.pe,
// g.oe, g.wn and (kJacobian) g.J.
template <bool kPose, int kN, bool kJacobian = true>
void evaluate(const KernelParams& P, LaneGroup& g, const V* lq) {
  const Chain& ch = *P.chain;
  const int n = kN > 0 ? kN : ch.n;
  V R[9], p[3];
  IKBENCH_BATCH_UNROLL
  for (int k = 0; k < 9; ++k) R[k] = splat(ch.base_R[k]);
  IKBENCH_BATCH_UNROLL
  for (int k = 0; k < 3; ++k) p[k] = splat(ch.base_p[k]);
  V zax[kMaxDof][3], piv[kMaxDof][3];
  // Every hinge's sin and cos first: independent of each other, and the
  // frame recursion below then keeps only the frame in registers.
  V cs[kMaxDof], sn[kMaxDof];
  for (int i = 0; i < n; ++i) {
    const ChainJoint& jc = ch.joint[i];
    if (jc.prismatic) {
      cs[i] = splat(jc.cphi);
      sn[i] = splat(jc.sphi);
    } else {
      vsinCos(lq[i] + splat(ch.phi[i]), sn[i], cs[i]);
    }
  }
  for (int i = 0; i < n; ++i) {
    const ChainJoint& jc = ch.joint[i];
    IKBENCH_BATCH_UNROLL
    for (int r = 0; r < 3; ++r) p[r] = vfma(R[3 * r + 2], splat(jc.t[2]), vfma(R[3 * r + 1], splat(jc.t[1]), vfma(R[3 * r], splat(jc.t[0]), p[r])));
    if (jc.has_alpha) {
      const V ca = splat(jc.ca), sa = splat(jc.sa);
      IKBENCH_BATCH_UNROLL
      for (int r = 0; r < 3; ++r) {
        const V a = R[3 * r + 1], b = R[3 * r + 2];
        R[3 * r + 1] = vfma(ca, a, sa * b);
        R[3 * r + 2] = vfma(ca, b, -(sa * a));
      }
    }
    const V c = cs[i], s = sn[i];
    IKBENCH_BATCH_UNROLL
    for (int r = 0; r < 3; ++r) {
      const V a = R[3 * r], b = R[3 * r + 1];
      R[3 * r] = vfma(c, a, s * b);
      R[3 * r + 1] = vfma(c, b, -(s * a));
    }
    if (jc.prismatic)
      IKBENCH_BATCH_UNROLL
      for (int r = 0; r < 3; ++r) p[r] = vfma(lq[i], R[3 * r + 2], p[r]);
    if constexpr (kJacobian)
      IKBENCH_BATCH_UNROLL
      for (int r = 0; r < 3; ++r) {
        zax[i][r] = R[3 * r + 2];
        piv[i][r] = p[r];
      }
  }
  V x[3];
  IKBENCH_BATCH_UNROLL
  for (int r = 0; r < 3; ++r) x[r] = vfma(R[3 * r + 2], splat(ch.tool_p[2]), vfma(R[3 * r + 1], splat(ch.tool_p[1]), vfma(R[3 * r], splat(ch.tool_p[0]), p[r])));

  errorsAndResidual<kPose>(P, g, x, R);
  if constexpr (!kJacobian) return;
  const bool unit = P.w_pos == 1.0 && P.w_ori == 1.0;
  const V wp = splat(P.w_pos);

  // Jacobian: a hinge's column is (z x (x - pivot); z), a slider's (z; 0),
  // weighted like the rows.
  const V wo = splat(P.w_ori);
  for (int i = 0; i < n; ++i) {
    double(*col)[kWidth] = g.J[i];
    const V* z = zax[i];
    if (ch.joint[i].prismatic) {
      IKBENCH_BATCH_UNROLL
      for (int r = 0; r < 3; ++r) store(col[r], wp * z[r]);
      if constexpr (kPose)
        IKBENCH_BATCH_UNROLL
        for (int r = 0; r < 3; ++r) store(col[3 + r], splat(0.0));
      continue;
    }
    const V d0 = x[0] - piv[i][0], d1 = x[1] - piv[i][1], d2 = x[2] - piv[i][2];
    const V j0 = vfma(z[1], d2, -(z[2] * d1)), j1 = vfma(z[2], d0, -(z[0] * d2)), j2 = vfma(z[0], d1, -(z[1] * d0));
    if (unit) {
      store(col[0], j0);
      store(col[1], j1);
      store(col[2], j2);
      if constexpr (kPose) {
        for (int r = 0; r < 3; ++r) store(col[3 + r], z[r]);
      }
    } else {
      store(col[0], wp * j0);
      store(col[1], wp * j1);
      store(col[2], wp * j2);
      if constexpr (kPose) {
        for (int r = 0; r < 3; ++r) store(col[3 + r], wo * z[r]);
      }
    }
  }
}

// Helpers of the one-problem step, on vectors holding one problem's values.
// v's elements rotated: (y, z, x, w) and (z, x, y, w), for cross products.
inline V yzx(V v) { return __builtin_shufflevector(v, v, 1, 2, 0, 3); }
inline V zxy(V v) { return __builtin_shufflevector(v, v, 2, 0, 1, 3); }
// Lane 0 of x[c], ..., x[c + 3] in one vector (0 from x[n] on), by
// shuffles (a vector load of four scalar stores would wait for them).
inline V lanes0(const V* x, int c, int n) {
  const V zero = splat(0.0);
  const V a = x[c], b = c + 1 < n ? x[c + 1] : zero, d = c + 2 < n ? x[c + 2] : zero, e = c + 3 < n ? x[c + 3] : zero;
  return __builtin_shufflevector(__builtin_shufflevector(a, b, 0, 4, 0, 4), __builtin_shufflevector(d, e, 0, 4, 0, 4),
                                 0, 1, 4, 5);
}
// (a, b, c, d) as rows of a 4 x 4 matrix -> its columns.
inline void transpose4(V& a, V& b, V& c, V& d) {
  const V t0 = __builtin_shufflevector(a, b, 0, 4, 2, 6), t1 = __builtin_shufflevector(a, b, 1, 5, 3, 7);
  const V t2 = __builtin_shufflevector(c, d, 0, 4, 2, 6), t3 = __builtin_shufflevector(c, d, 1, 5, 3, 7);
  a = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
  b = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
  c = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
  d = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
}

// evaluate() for one problem, lane 0 of g, packed within the problem: the
// frame's columns (x, y, z, 0) are vectors, so a column rotation is two
// vector operations instead of two per row, and four hinges share one
// sin/cos. Element r of each vector operation is the operation evaluate()
// does on row r, so lane 0's values are bitwise evaluate()'s. The errors are
// computed on values broadcast to every lane (errorsAndResidual, the same
// code as the lanes'); the Jacobian goes to g.Jp (batch_layout.h).
template <bool kPose, int kN>
void evaluatePacked(const KernelParams& P, LaneGroup& g, const V* lq) {
  const Chain& ch = *P.chain;
  const int n = kN > 0 ? kN : ch.n;
  // sin and cos of hinge angles, four per vector (sliders keep their
  // constant offset).
  alignas(32) double sd[kMaxDof], cd[kMaxDof];
  for (int c = 0; c < n; c += 4) {
    V s, co;
    vsinCos(lanes0(lq, c, n) + load(ch.phi + c), s, co);
    store(sd + c, s);
    store(cd + c, co);
  }
  // The frame: columns of R and the origin, (x, y, z, 0).
  V C0 = {ch.base_R[0], ch.base_R[3], ch.base_R[6], 0.0};
  V C1 = {ch.base_R[1], ch.base_R[4], ch.base_R[7], 0.0};
  V C2 = {ch.base_R[2], ch.base_R[5], ch.base_R[8], 0.0};
  V p = {ch.base_p[0], ch.base_p[1], ch.base_p[2], 0.0};
  V zax[kMaxDof], piv[kMaxDof];
  for (int i = 0; i < n; ++i) {
    const ChainJoint& jc = ch.joint[i];
    p = vfma(C2, splat(jc.t[2]), vfma(C1, splat(jc.t[1]), vfma(C0, splat(jc.t[0]), p)));
    if (jc.has_alpha) {
      const V ca = splat(jc.ca), sa = splat(jc.sa);
      const V a = C1, b = C2;
      C1 = vfma(ca, a, sa * b);
      C2 = vfma(ca, b, -(sa * a));
    }
    const V c = jc.prismatic ? splat(jc.cphi) : splat(cd[i]), s = jc.prismatic ? splat(jc.sphi) : splat(sd[i]);
    const V a = C0, b = C1;
    C0 = vfma(c, a, s * b);
    C1 = vfma(c, b, -(s * a));
    if (jc.prismatic) p = vfma(splat(lq[i][0]), C2, p);
    zax[i] = C2;
    piv[i] = p;
  }
  const V x = vfma(C2, splat(ch.tool_p[2]), vfma(C1, splat(ch.tool_p[1]), vfma(C0, splat(ch.tool_p[0]), p)));

  // Jacobian columns as rows (0..3) and (4, 5, 0, 0), one store each (the
  // next step's loads then forward from them). First, since the next step's
  // normal matrix waits for them and not for the errors. The frame vectors'
  // fourth element is 0.
  const bool unit = P.w_pos == 1.0 && P.w_ori == 1.0;
  const V wp = splat(P.w_pos), wo = splat(P.w_ori);
  for (int i = 0; i < n; ++i) {
    double* col = g.Jp[i];
    const V z = zax[i];
    if (ch.joint[i].prismatic) {
      store(col, wp * z);
      if constexpr (kPose) store(col + 4, splat(0.0));
      continue;
    }
    const V d = x - piv[i];
    V j = vfma(yzx(z), zxy(d), -(zxy(z) * yzx(d)));
    if (!unit) j = wp * j;
    if constexpr (kPose) {
      const V zw = unit ? z : wo * z;
      store(col, __builtin_shufflevector(j, zw, 0, 1, 2, 4));
      store(col + 4, __builtin_shufflevector(zw, zw, 1, 2, 3, 3));
    } else {
      store(col, j);
    }
  }

  // The errors on broadcast values (they are a scalar computation).
  const V xs[3] = {splat(x[0]), splat(x[1]), splat(x[2])};
  V Rs[9];
  if constexpr (kPose) {
    IKBENCH_BATCH_UNROLL
    for (int r = 0; r < 3; ++r) {
      Rs[3 * r] = splat(C0[r]);
      Rs[3 * r + 1] = splat(C1[r]);
      Rs[3 * r + 2] = splat(C2[r]);
    }
  }
  errorsAndResidual<kPose>(P, g, xs, Rs);
}

// Accumulates K entries (ii[k], jj[k]) of the lower triangle of J J^T over
// the n columns of J, in K accumulators that stay in registers.
template <int M, int K, int kN>
inline void normalEntries(const double (*J)[6][kWidth], int n, const int (&ii)[K], const int (&jj)[K], V (&A)[M][M]) {
  V acc[K];
  IKBENCH_BATCH_UNROLL
  for (int k = 0; k < K; ++k) acc[k] = splat(0.0);
  for (int v = 0; v < (kN > 0 ? kN : n); ++v)
    IKBENCH_BATCH_UNROLL
    for (int k = 0; k < K; ++k) acc[k] = vfma(load(J[v][ii[k]]), load(J[v][jj[k]]), acc[k]);
  IKBENCH_BATCH_UNROLL
  for (int k = 0; k < K; ++k) A[jj[k]][ii[k]] = acc[k];
}

// lower(J J^T): for six rows three sweeps of seven entries (16 vector
// registers hold seven accumulators and a column); for three rows one.
template <int M, int kN>
inline void normalMatrix(const double (*J)[6][kWidth], int n, V (&A)[M][M]) {
  if constexpr (M == 6) {
    static constexpr int i0[7] = {0, 1, 2, 3, 4, 5, 5}, j0[7] = {0, 0, 0, 0, 0, 0, 5};
    static constexpr int i1[7] = {1, 2, 3, 4, 5, 4, 5}, j1[7] = {1, 1, 1, 1, 1, 4, 4};
    static constexpr int i2[7] = {2, 3, 4, 5, 3, 4, 5}, j2[7] = {2, 2, 2, 2, 3, 3, 3};
    normalEntries<M, 7, kN>(J, n, i0, j0, A);
    normalEntries<M, 7, kN>(J, n, i1, j1, A);
    normalEntries<M, 7, kN>(J, n, i2, j2, A);
  } else {
    static constexpr int i0[6] = {0, 1, 2, 1, 2, 2}, j0[6] = {0, 0, 0, 1, 1, 2};
    normalEntries<M, 6, kN>(J, n, i0, j0, A);
  }
}

// Where dlsStep reads the Jacobian: the lanes' own columns (g.J) ...
template <int M, int kN>
struct LaneColumns {
  static constexpr bool kPacked = false;
  const double (*J)[6][kWidth];
  explicit LaneColumns(const double (*columns)[6][kWidth]) : J(columns) {}
  V get(int v, int i) const { return load(J[v][i]); }
  void normal(int n, V (&A)[M][M]) const { normalMatrix<M, kN>(J, n, A); }
  // dq = J^T y, each entry J[v][0] y[0] + ... in row order.
  void jty(int n, const V (&y)[M], V* dq) const {
    for (int v = 0; v < n; ++v) {
      V s = get(v, 0) * y[0];
      IKBENCH_BATCH_UNROLL
      for (int i = 1; i < M; ++i) s = vfma(get(v, i), y[i], s);
      dq[v] = s;
    }
  }
};

// ... or lane 0's packed columns (g.Jp), read as broadcasts; the normal
// matrix accumulates whole columns of lower(J J^T) as vectors, each entry by
// the same multiply-adds in the same order as normalEntries.
template <int M, int kN>
inline void normalMatrixPacked(const double (*J)[8], int n, V (&A)[M][M]) {
  constexpr int kLo = M == 6 ? 4 : 3;  // columns with rows in the first vector
  constexpr int kHi = M == 6 ? 6 : 0;  // columns with rows 4, 5 in the second
  V lo[kLo], hi[kHi > 0 ? kHi : 1];
  IKBENCH_BATCH_UNROLL
  for (int c = 0; c < kLo; ++c) lo[c] = splat(0.0);
  IKBENCH_BATCH_UNROLL
  for (int c = 0; c < kHi; ++c) hi[c] = splat(0.0);
  for (int v = 0; v < (kN > 0 ? kN : n); ++v) {
    const V a = load(J[v]);
    IKBENCH_BATCH_UNROLL
    for (int c = 0; c < kLo; ++c) lo[c] = vfma(a, splat(J[v][c]), lo[c]);
    if constexpr (kHi > 0) {
      const V b = load(J[v] + 4);
      IKBENCH_BATCH_UNROLL
      for (int c = 0; c < kHi; ++c) hi[c] = vfma(b, splat(J[v][c]), hi[c]);
    }
  }
  alignas(32) double L[kLo][4], H[kHi > 0 ? kHi : 1][4];
  IKBENCH_BATCH_UNROLL
  for (int c = 0; c < kLo; ++c) store(L[c], lo[c]);
  IKBENCH_BATCH_UNROLL
  for (int c = 0; c < kHi; ++c) store(H[c], hi[c]);
  IKBENCH_BATCH_UNROLL
  for (int c = 0; c < M; ++c)
    IKBENCH_BATCH_UNROLL
    for (int r = c; r < M; ++r) A[c][r] = splat(r < 4 ? L[c][r] : H[c][r - 4]);
}

template <int M, int kN>
struct PackedColumns {
  static constexpr bool kPacked = true;
  const double (*J)[8];
  explicit PackedColumns(const double (*columns)[8]) : J(columns) {}
  V get(int v, int i) const { return splat(J[v][i]); }
  void normal(int n, V (&A)[M][M]) const { normalMatrixPacked<M, kN>(J, n, A); }
  // dq = J^T y for four DOF at a time: blocks of four columns transposed
  // into rows, then entry v is J[v][0] y[0] + ... in row order, as in
  // LaneColumns::jty. Only lane 0 of y is the problem's (the other lanes of
  // dlsStep's values may differ from it after a freeze), so y is broadcast
  // from lane 0.
  void jty(int n, const V (&y)[M], V* dq) const {
    V y0[M];
    IKBENCH_BATCH_UNROLL
    for (int i = 0; i < M; ++i) y0[i] = splat(y[i][0]);
    alignas(32) double out[kMaxDof];
    for (int c = 0; c < (kN > 0 ? kN : n); c += 4) {
      V a = load(J[c]), b = load(J[c + 1]), d = load(J[c + 2]), e = load(J[c + 3]);
      transpose4(a, b, d, e);
      V s = a * y0[0];
      s = vfma(b, y0[1], s);
      s = vfma(d, y0[2], s);
      if constexpr (M == 6) {
        s = vfma(e, y0[3], s);
        V a2 = load(J[c] + 4), b2 = load(J[c + 1] + 4), d2 = load(J[c + 2] + 4), e2 = load(J[c + 3] + 4);
        transpose4(a2, b2, d2, e2);
        s = vfma(a2, y0[4], s);
        s = vfma(b2, y0[5], s);
      }
      store(out + c, s);
    }
    for (int v = 0; v < n; ++v) dq[v] = splat(out[v]);
  }
};

// The DLS step of the stepping lanes (jacobian_dls.cpp DlsSolver::factor /
// apply inside JacobianSolver::computeStep, then takeStep): fills qn (q
// after the step, clamped into the limits), step (|dq|) and the lanes whose
// step failed (reason set). Lanes outside `stepping` are left to the caller.
// jac: where J is read (LaneColumns or PackedColumns).
template <int M, int kN, class Jac>
void dlsStep(const KernelParams& P, const LaneGroup& g, Jac& jac, const Mk& stepping, V* qn, V& step, V& damping2,
             V& fail_reason, Mk& failed_out) {
  const Chain& ch = *P.chain;
  const int n = kN > 0 ? kN : ch.n;
  V q[kMaxDof], dq[kMaxDof];
  for (int v = 0; v < n; ++v) q[v] = load(g.q[v]);
  V r_act[M];
  IKBENCH_BATCH_UNROLL
  for (int i = 0; i < M; ++i) r_act[i] = load(g.r[i]);
  // Frozen DOFs and their fixed steps, set up when the first DOF freezes.
  Mk frozen[kMaxDof];
  V fixed[kMaxDof];
  bool any_frozen = false;
  Mk failed = splatMask(0);
  // N = lower(Jw Jw^T) over the DOFs not frozen: built once, then each DOF
  // the freeze loop takes out leaves it as a rank-one downdate, N - j j^T
  // (j its column), instead of a rebuild from the Jacobian with that column
  // zeroed: the same matrix to rounding, at one product per entry of the
  // lower triangle (21 for a pose) per DOF frozen instead of one per entry
  // per DOF of the chain, and no copy of J. On `ikbench
  // throughput`'s problems some lane of a group freezes a DOF in about three
  // of four group steps, so a re-solve is the common case.
  // The column itself is left in J: jty's entry for a frozen DOF is
  // replaced by its fixed step.
  V N[M][M];
  jac.normal(n, N);
  for (int pass = 0;; ++pass) {
    // A = N + lambda^2 I.
    V A[M][M];
    IKBENCH_BATCH_UNROLL
    for (int c = 0; c < M; ++c)
      IKBENCH_BATCH_UNROLL
      for (int r = c; r < M; ++r) A[c][r] = N[c][r];
    V l2;
    if (P.adaptive) {
      V rr = splat(0.0);
      IKBENCH_BATCH_UNROLL
      for (int i = 0; i < M; ++i) rr = vfma(r_act[i], r_act[i], rr);
      l2 = splat(P.lambda_min2) + splat(P.err_gain) * rr;
    } else {
      l2 = splat(P.lambda2);
    }
    damping2 = l2;
    IKBENCH_BATCH_UNROLL
    for (int i = 0; i < M; ++i) A[i][i] = A[i][i] + l2;
    // L D L^T, right-looking; the diagonal keeps 1 / d_j (normal_system.cpp).
    Mk bad = splatMask(0);
    IKBENCH_BATCH_UNROLL
    for (int j = 0; j < M; ++j) {
      const V d = A[j][j];
      bad |= ~(d > splat(0.0));
      const V inv = splat(1.0) / d;
      A[j][j] = inv;
      IKBENCH_BATCH_UNROLL
      for (int k = j + 1; k < M; ++k) {
        const V akj = A[j][k];
        A[k][k] = A[k][k] - (akj * akj) * inv;
        const V lkj = akj * inv;
        IKBENCH_BATCH_UNROLL
        for (int i = k + 1; i < M; ++i) A[k][i] = A[k][i] - A[j][i] * lkj;
      }
      IKBENCH_BATCH_UNROLL
      for (int i = j + 1; i < M; ++i) A[j][i] = A[j][i] * inv;
    }
    const Mk newly_bad = bad & stepping & ~failed;
    if (movemask(newly_bad)) {
      fail_reason = select(newly_bad, splat(kNotPositiveDefinite), fail_reason);
      failed |= newly_bad;
    }
    // y = A^-1 r_act; dq = Jw^T y.
    V y[M];
    IKBENCH_BATCH_UNROLL
    for (int i = 0; i < M; ++i) y[i] = r_act[i];
    IKBENCH_BATCH_UNROLL
    for (int k = 0; k < M; ++k)
      IKBENCH_BATCH_UNROLL
      for (int i = k + 1; i < M; ++i) y[i] = y[i] - A[k][i] * y[k];
    IKBENCH_BATCH_UNROLL
    for (int i = 0; i < M; ++i) y[i] = y[i] * A[i][i];
    IKBENCH_BATCH_UNROLL
    for (int i = M - 1; i >= 0; --i) {
      V s = y[i];
      IKBENCH_BATCH_UNROLL
      for (int k = i + 1; k < M; ++k) s = s - A[i][k] * y[k];
      y[i] = s;
    }
    jac.jty(n, y, dq);
    if (!P.freeze) break;
    if (any_frozen)
      for (int v = 0; v < n; ++v) dq[v] = select(frozen[v], fixed[v], dq[v]);
    if (pass >= n) break;
    // Baerlocher & Boulic's clamping loop: a DOF whose step crosses a limit
    // moves onto it and leaves the system; the rest re-solve for what remains.
    Mk any = splatMask(0);
    const Mk work = stepping & ~failed;
    for (int v = 0; v < n; ++v) {
      const V x = q[v] + dq[v];
      const V lo = splat(ch.lo[v]), hi = splat(ch.hi[v]);
      const Mk over = x > hi, under = x < lo;
      const Mk nf = work & (any_frozen ? ~frozen[v] : splatMask(-1)) & (over | under);
      if (!movemask(nf)) continue;
      if (!any_frozen) {
        for (int u = 0; u < n; ++u) {
          frozen[u] = splatMask(0);
          fixed[u] = splat(0.0);
        }
        any_frozen = true;
      }
      const V d = select(over, hi - q[v], lo - q[v]);
      frozen[v] |= nf;
      fixed[v] = select(nf, d, fixed[v]);
      dq[v] = select(nf, d, dq[v]);
      V j[M];
      IKBENCH_BATCH_UNROLL
      for (int i = 0; i < M; ++i) j[i] = jac.get(v, i);
      IKBENCH_BATCH_UNROLL
      for (int i = 0; i < M; ++i) r_act[i] = r_act[i] - select(nf, j[i] * d, splat(0.0));
      IKBENCH_BATCH_UNROLL
      for (int c = 0; c < M; ++c)
        IKBENCH_BATCH_UNROLL
        for (int r = c; r < M; ++r) N[c][r] = N[c][r] - select(nf, j[c] * j[r], splat(0.0));
      any |= nf;
    }
    if (!movemask(any)) break;
  }
  Mk dq_finite = splatMask(-1);
  for (int v = 0; v < n; ++v) dq_finite &= finiteMask(dq[v]);
  const Mk bad_dq = stepping & ~failed & ~dq_finite;
  if (movemask(bad_dq)) {
    fail_reason = select(bad_dq, splat(kNonFiniteStep), fail_reason);
    failed |= bad_dq;
  }
  // Buss's clamp on max |dq_i|, q + dq, the box (takeStep).
  V before2 = splat(0.0), amax = splat(0.0);
  for (int v = 0; v < n; ++v) before2 = vfma(dq[v], dq[v], before2);
  // Lane 0's DOF four at a time in the one-problem step (padding: dq = q =
  // lo = hi = 0).
  V dq0[kMaxDof / 4], q0[kMaxDof / 4];
  alignas(32) double d0[kMaxDof], c0[kMaxDof];
  if constexpr (Jac::kPacked) {
    for (int c = 0; c < n; c += 4) {
      dq0[c / 4] = lanes0(dq, c, n);
      q0[c / 4] = lanes0(q, c, n);
    }
    // The largest |dq_v| (the order of a maximum does not matter; a NaN
    // fails the step above).
    for (int c = 0; c < n; c += 4) amax = vmax(amax, vabs(dq0[c / 4]));
    amax = vmax(amax, __builtin_shufflevector(amax, amax, 2, 3, 0, 1));
    amax = vmax(amax, __builtin_shufflevector(amax, amax, 1, 0, 3, 2));
  } else {
    for (int v = 0; v < n; ++v) amax = vmax(amax, vabs(dq[v]));
  }
  Mk scale = splatMask(0);
  V f = splat(1.0);
  if (P.max_step > 0.0) {
    scale = amax > splat(P.max_step);
    f = select(scale, splat(P.max_step) / select(scale, amax, splat(1.0)), splat(1.0));
  }
  V step2 = splat(0.0);
  Mk q_finite = splatMask(-1);
  if constexpr (Jac::kPacked) {
    Mk fin = splatMask(-1);
    for (int c = 0; c < n; c += 4) {
      const V dqc = dq0[c / 4];
      const V d = select(scale, dqc * f, dqc);
      const V x = q0[c / 4] + d;
      const V lo = load(ch.lo + c), hi = load(ch.hi + c);
      const V cl = select(x < lo, lo, select(hi < x, hi, x));
      fin &= finiteMask(cl);
      store(d0 + c, d);
      store(c0 + c, cl);
    }
    for (int v = 0; v < n; ++v) {
      const V d = splat(d0[v]);
      step2 = vfma(d, d, step2);
      qn[v] = splat(c0[v]);
    }
    q_finite = movemask(~fin) == 0 ? splatMask(-1) : splatMask(0);
  } else {
    for (int v = 0; v < n; ++v) {
      const V d = select(scale, dq[v] * f, dq[v]);
      step2 = vfma(d, d, step2);
      const V x = q[v] + d;
      const V lo = splat(ch.lo[v]), hi = splat(ch.hi[v]);
      const V c = select(x < lo, lo, select(hi < x, hi, x));
      q_finite &= finiteMask(c);
      qn[v] = c;
    }
  }
  step = select(scale, vsqrt(step2), vsqrt(before2));
  const Mk bad_q = stepping & ~failed & ~q_finite;
  if (movemask(bad_q)) {
    fail_reason = select(bad_q, splat(kNonFiniteConfig), fail_reason);
    failed |= bad_q;
  }
  failed_out = failed & stepping;
  // Lanes that do not move (fresh, failed, empty) keep q.
  const Mk moves = stepping & ~failed;
  for (int v = 0; v < n; ++v) qn[v] = select(moves, qn[v], q[v]);
}

// One iteration of every active lane of g; kPacked: the one-problem step
// (lane 0 only, evaluatePacked and g.Jp).
template <bool kPose, int kN, bool kPacked>
std::uint8_t stepGroup(const KernelParams& P, LaneGroup& g) {
  constexpr int M = kPose ? 6 : 3;
  const int n = kN > 0 ? kN : P.chain->n;
  const Mk active = loadMask(g.active);
  const Mk fresh = loadMask(g.fresh) & active;
  const Mk stepping = active & ~fresh;
  V qn[kMaxDof];
  V step = splat(0.0), damping2 = splat(0.0), fail_reason = splat(0.0);
  Mk failed = splatMask(0);
  if (movemask(stepping)) {
    if constexpr (kPacked) {
      PackedColumns<M, kN> jac(g.Jp);
      dlsStep<M, kN>(P, g, jac, stepping, qn, step, damping2, fail_reason, failed);
    } else {
      LaneColumns<M, kN> jac(g.J);
      dlsStep<M, kN>(P, g, jac, stepping, qn, step, damping2, fail_reason, failed);
    }
  } else {
    for (int v = 0; v < n; ++v) qn[v] = load(g.q[v]);
  }
  if constexpr (kPacked) {
    evaluatePacked<kPose, kN>(P, g, qn);
  } else {
    evaluate<kPose, kN>(P, g, qn);
  }
  for (int v = 0; v < n; ++v) store(g.q[v], qn[v]);

  // SolveContext::begin (fresh lanes) and endIteration (stepping lanes).
  const V pe = load(g.pe), oe = load(g.oe), wn = load(g.wn);
  const Mk fin = finiteMask(pe) & finiteMask(oe) & finiteMask(wn);
  const Mk within = (pe <= splat(P.tol_p)) & (oe <= splat(P.tol_o));
  const Mk moved = stepping & ~failed;
  const V it = select(moved, load(g.iteration) + splat(1.0), select(fresh, splat(0.0), load(g.iteration)));
  store(g.iteration, it);
  const V lowest_old = load(g.lowest_norm);
  const Mk lower = fin & (wn < lowest_old);
  const Mk take_best = fresh | (moved & lower);
  const V inf = splat(__builtin_inf());
  store(g.lowest_norm, select(fresh, select(fin, wn, inf), select(moved & lower, wn, lowest_old)));
  if (movemask(take_best)) {
    for (int v = 0; v < n; ++v) store(g.best_q[v], select(take_best, qn[v], load(g.best_q[v])));
    store(g.best_pe, select(take_best, pe, load(g.best_pe)));
    store(g.best_oe, select(take_best, oe, load(g.best_oe)));
  }
  // Stall rule: relative improvement of the best norm within
  // stall_iterations, and a vanishing step.
  const V best_norm = load(g.best_norm), best_it = load(g.best_iteration);
  const Mk improved = wn < splat(1.0 - P.stall_relative_improvement) * best_norm;
  const bool stall_on = P.stall_iterations > 0;
  const Mk stall_a = stall_on ? (~improved & ((it - best_it) >= splat(P.stall_iterations))) : splatMask(0);
  const Mk stall_b = stall_on ? (step < splat(P.vanishing_step)) : splatMask(0);
  store(g.best_norm, select(fresh, wn, select(moved & improved, wn, best_norm)));
  store(g.best_iteration, select(fresh, splat(0.0), select(moved & improved, it, best_it)));
  const Mk step_fin = finiteMask(step);
  const Mk maxit = it >= splat(P.max_iterations);
  // The first rule that fires names the end, in SolveContext's order.
  V reason = splat(kRunning);
  reason = select(moved & maxit, splat(kMaxIterations), reason);
  reason = select(moved & stall_b, splat(kStallVanishingStep), reason);
  reason = select(moved & stall_a, splat(kStallNoImprovement), reason);
  reason = select(moved & within, splat(kConverged), reason);
  reason = select(moved & ~(fin & step_fin), splat(kNonFiniteError), reason);
  reason = select(fresh & within, splat(kConverged), reason);
  reason = select(fresh & ~fin, splat(kNonFiniteStart), reason);
  reason = select(failed, fail_reason, reason);
  store(g.step, select(moved, step, splat(0.0)));
  store(g.lambda2, select(moved, damping2, splat(0.0)));
  const Mk ended = active & ~(reason == splat(kRunning));
  IKBENCH_BATCH_UNROLL
  for (int l = 0; l < (kPacked ? 1 : 4); ++l) g.reason[l] = static_cast<std::int64_t>(reason[l]);
  storeMask(g.fresh, splatMask(0));
  return static_cast<std::uint8_t>(movemask(ended) & (kPacked ? 1 : 0xf));
}

// Compiled for 6, 7 and 8 DOF (every loop unrolled: industrial arms, 7-DOF
// arms, an arm on a torso) and for any DOF.
template <bool kPose, bool kPacked>
inline void stepPose(const KernelParams& P, LaneGroup* groups, int num_groups, std::uint8_t* ended) {
  switch (P.chain->n) {
    case 6:
      for (int k = 0; k < num_groups; ++k) ended[k] = stepGroup<kPose, 6, kPacked>(P, groups[k]);
      break;
    case 7:
      for (int k = 0; k < num_groups; ++k) ended[k] = stepGroup<kPose, 7, kPacked>(P, groups[k]);
      break;
    case 8:
      for (int k = 0; k < num_groups; ++k) ended[k] = stepGroup<kPose, 8, kPacked>(P, groups[k]);
      break;
    default:
      for (int k = 0; k < num_groups; ++k) ended[k] = stepGroup<kPose, 0, kPacked>(P, groups[k]);
  }
}

// The goal errors (g.pe, g.oe, g.r, g.wn) of every lane of each group at
// its q: evaluate()'s forward kinematics without the Jacobian and without a
// step or the attempt's bookkeeping (what checking configurations needs).
template <bool kPose, int kN>
inline void errorsGroups(const KernelParams& P, LaneGroup* groups, int num_groups) {
  const int n = kN > 0 ? kN : P.chain->n;
  for (int k = 0; k < num_groups; ++k) {
    V lq[kMaxDof];
    for (int v = 0; v < n; ++v) lq[v] = load(groups[k].q[v]);
    evaluate<kPose, kN, false>(P, groups[k], lq);
  }
}

template <bool kPose>
inline void errorsPose(const KernelParams& P, LaneGroup* groups, int num_groups) {
  switch (P.chain->n) {
    case 6:
      errorsGroups<kPose, 6>(P, groups, num_groups);
      break;
    case 7:
      errorsGroups<kPose, 7>(P, groups, num_groups);
      break;
    default:
      errorsGroups<kPose, 0>(P, groups, num_groups);
  }
}

inline void errorsAll(const KernelParams& P, LaneGroup* groups, int num_groups) {
  if (P.pose) {
    errorsPose<true>(P, groups, num_groups);
  } else {
    errorsPose<false>(P, groups, num_groups);
  }
}

template <bool kPacked>
inline void stepAll(const KernelParams& P, LaneGroup* groups, int num_groups, std::uint8_t* ended) {
  if (P.pose) {
    stepPose<true, kPacked>(P, groups, num_groups, ended);
  } else {
    stepPose<false, kPacked>(P, groups, num_groups, ended);
  }
}

#undef IKBENCH_BATCH_UNROLL
