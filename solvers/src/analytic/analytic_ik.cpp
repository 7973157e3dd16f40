// Closed-form 6R inverse kinematics by subproblem decomposition; see
// analytic_ik.h for the method, its sources and the classes covered.
#include "analytic_ik.h"

#include <fmt/format.h>

#include <Eigen/LU>
#include <Eigen/SVD>
#include <algorithm>
#include <functional>
#include <initializer_list>
#include <numbers>

#include "ikbench/core/numeric.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench::analytic {
namespace {

// a in (-pi, pi] for |a| < 5 pi (a sum of three angles in (-pi, pi]):
// conditional turns, cheaper than std::remainder.
double wrapPi(double a) {
  constexpr double kPi = std::numbers::pi, kTwoPi = 2.0 * std::numbers::pi;
  while (a > kPi) a -= kTwoPi;
  while (a <= -kPi) a += kTwoPi;
  return a;
}

}  // namespace

// ------------------------------------------------------------------ chains --

bool revoluteChain(const Model& model, int body, int dof, std::vector<int>* joints, std::string* why) {
  if (body < 0 || body >= model.numJoints()) {
    if (why) *why = fmt::format("goal body {} is not a body of the model", body);
    return false;
  }
  std::vector<int> s = model.supportingJoints(body);
  for (int j : s)
    if (model.type(j) != JointType::kRevolute) {
      if (why)
        *why = fmt::format("joint '{}' between the root and body '{}' is {}; needs {} revolute joints and fixed ones",
                           model.joint(j).name, model.bodyName(body), toString(model.type(j)), dof);
      return false;
    }
  if (static_cast<int>(s.size()) != dof) {
    if (why)
      *why = fmt::format("needs exactly {} revolute joints between the root and body '{}', found {}", dof,
                         model.bodyName(body), s.size());
    return false;
  }
  *joints = std::move(s);
  return true;
}

template <int N>
RevoluteChain<N> chainAtZero(const Model& model, const std::vector<int>& joints, int body,
                             const Eigen::Vector3d& point) {
  Eigen::VectorXd q = model.neutralConfiguration();
  for (int j : joints) q[model.idxQ(j)] = 0.0;
  std::vector<Pose3d> T(model.numJoints());
  std::vector<Eigen::Matrix3d> R_dof(model.numJoints());
  forwardKinematics<double>(model, q.data(), T.data(), R_dof.data());
  RevoluteChain<N> c;
  for (int i = 0; i < N; ++i) {
    const int j = joints[i];
    c.h[i] = (R_dof[j] * model.axis(j)).normalized();
    c.o[i] = T[j].p;  // a hinge does not move its frame's origin
  }
  c.R0 = T[body].R;
  c.p0 = T[body].act(point);
  return c;
}
template Chain6 chainAtZero<6>(const Model&, const std::vector<int>&, int, const Eigen::Vector3d&);
template Chain7 chainAtZero<7>(const Model&, const std::vector<int>&, int, const Eigen::Vector3d&);

// e^{xi_f t} carries every later joint and the effector about axis f
// (Murray, Li & Sastry 1994, ch. 3: e^{A} e^{B} = e^{Ad(e^A) B} e^{A}).
Chain6 lockJoint(const Chain7& chain, int locked, double theta) {
  Chain6 out;
  const CosSin a = CosSin::of(theta);
  const Eigen::Vector3d& hf = chain.h[locked];
  const Eigen::Vector3d& of = chain.o[locked];
  int m = 0;
  for (int i = 0; i < 7; ++i) {
    if (i == locked) continue;
    if (i < locked) {
      out.h[m] = chain.h[i];
      out.o[m] = chain.o[i];
    } else {
      out.h[m] = rotate(hf, a, chain.h[i]);
      out.o[m] = of + rotate(hf, a, chain.o[i] - of);
    }
    ++m;
  }
  for (int col = 0; col < 3; ++col) out.R0.col(col) = rotate(hf, a, chain.R0.col(col));
  out.p0 = of + rotate(hf, a, chain.p0 - of);
  return out;
}

// ---------------------------------------------------------- classification --
namespace {

// The chain read from the effector to the base, solving T^-1:
// T^-1 = T0^-1 e^{-xi6 q6} ... e^{-xi1 q1} = e^{xi'1 q6} ... e^{xi'6 q1} T0^-1
// with xi'k = -Ad(T0^-1) xi_{7-k}: the same angles, in reverse order.
Chain6 reversedChain(const Chain6& c) {
  Chain6 r;
  const Eigen::Matrix3d Rt = c.R0.transpose();
  for (int i = 0; i < 6; ++i) {
    r.h[i] = -(Rt * c.h[5 - i]);
    r.o[i] = Rt * (c.o[5 - i] - c.p0);
  }
  r.R0 = Rt;
  r.p0 = -(Rt * c.p0);
  return r;
}

// The point nearest (least squares) to the lines of the given axes, which
// are not all parallel.
Eigen::Vector3d nearestPoint(const Chain6& k, std::initializer_list<int> axes) {
  Eigen::Matrix3d A = Eigen::Matrix3d::Zero();
  Eigen::Vector3d rhs = Eigen::Vector3d::Zero();
  for (int m : axes) {
    const Eigen::Matrix3d P = Eigen::Matrix3d::Identity() - k.h[m] * k.h[m].transpose();
    A += P;
    rhs += P * k.o[m];
  }
  return A.inverse() * rhs;
}

struct Lines {
  const Chain6& k;
  double tol;                         // [m]
  double par;                         // sine of the angle of parallel axes
  std::vector<std::string>* reasons;  // null: no messages
  std::function<std::string(int)> label;

  double sinAngle(int i, int j) const { return k.h[i].cross(k.h[j]).norm(); }
  bool parallel(int i, int j) const { return sinAngle(i, j) <= par; }
  double distanceToLine(const Eigen::Vector3d& x, int i) const { return (x - k.o[i]).cross(k.h[i]).norm(); }
  // Distance between the lines of axes i and j; for meeting (non-parallel)
  // lines also the midpoint of their closest points.
  double lineDistance(int i, int j, Eigen::Vector3d* point = nullptr) const {
    const Eigen::Vector3d n = k.h[i].cross(k.h[j]);
    const Eigen::Vector3d w = k.o[i] - k.o[j];
    if (n.norm() <= par) return w.cross(k.h[i]).norm();
    const double b = k.h[i].dot(k.h[j]), d = k.h[i].dot(w), e = k.h[j].dot(w);
    const double den = 1.0 - b * b;
    const double s = (b * e - d) / den, t = (e - b * d) / den;
    if (point) *point = 0.5 * (k.o[i] + s * k.h[i] + k.o[j] + t * k.h[j]);
    return std::abs(w.dot(n)) / n.norm();
  }
  bool meet(int i, int j, Eigen::Vector3d* point) const { return !parallel(i, j) && lineDistance(i, j, point) <= tol; }
  void note(std::string text) const {
    if (reasons) reasons->push_back(std::move(text));
  }
  // Axes i, j, l through one point c (least squares point of the three lines).
  bool meet3(int i, int j, int l, Eigen::Vector3d* c) const {
    for (auto [a, b] : {std::pair{i, j}, std::pair{j, l}}) {
      if (parallel(a, b)) {
        if (reasons) note(fmt::format("axes of joints {} and {} are parallel", label(a), label(b)));
        return false;
      }
      if (lineDistance(a, b) > tol) {
        if (reasons)
          note(fmt::format("joints {}, {}, {} do not meet in one point (axes of {} and {} are {:.6g} m apart)",
                           label(i), label(j), label(l), label(a), label(b), lineDistance(a, b)));
        return false;
      }
    }
    *c = nearestPoint(k, {i, j, l});
    double miss = 0.0;
    for (int m : {i, j, l}) miss = std::max(miss, distanceToLine(*c, m));
    if (miss > tol) {
      if (reasons)
        note(
            fmt::format("joints {}, {}, {} meet pairwise but not in one point (the nearest point misses an axis "
                        "by {:.6g} m)",
                        label(i), label(j), label(l), miss));
      return false;
    }
    return true;
  }
};

bool tryClassify(const Chain6& k, bool reversed, const Tolerances& tolerances, Plan6* plan,
                 std::vector<std::string>* reasons, const std::function<std::string(int)>& label) {
  const Lines L{k, tolerances.intersect * k.size(), tolerances.parallel, reasons, label};
  Eigen::Vector3d c;
  // Spherical wrist.
  if (L.meet3(3, 4, 5, &c)) {
    Plan6 p;
    p.arm_class = ArmClass::kSphericalWrist;
    p.reversed = reversed;
    p.k = k;
    p.c = c;
    for (int i = 3; i < 6; ++i) p.k.o[i] = c;
    Eigen::Vector3d s;
    bool ok = false;
    if (L.parallel(1, 2) && !L.parallel(0, 1) && L.lineDistance(1, 2) > L.tol && L.distanceToLine(c, 2) > L.tol) {
      p.position = PositionCase::kParallel23;
      p.hp = k.h[1];
      p.k.h[2] = (k.h[2].dot(k.h[1]) >= 0.0 ? 1.0 : -1.0) * k.h[1];
      ok = true;
    } else if (L.meet(0, 1, &s) && L.distanceToLine(c, 2) > L.tol && L.distanceToLine(s, 2) > L.tol) {
      p.position = PositionCase::kIntersect12;
      p.s = s;
      p.k.o[0] = p.k.o[1] = s;
      ok = true;
    } else if (L.meet(1, 2, &s) && (c - s).norm() > L.tol && L.distanceToLine(s, 0) > L.tol) {
      p.position = PositionCase::kIntersect23;
      p.s = s;
      p.k.o[1] = p.k.o[2] = s;
      ok = true;
    }
    if (ok) {
      p.h6_perp = p.k.h[5].unitOrthogonal();
      *plan = p;
      return true;
    }
    if (reasons)
      L.note(
          fmt::format("joints {}-{}-{} form a spherical wrist, but joints {}, {}, {} have none of: axes {} and {} "
                      "parallel, axes {} and {} meeting, axes {} and {} meeting (the general case needs "
                      "subproblem 5)",
                      label(3), label(4), label(5), label(0), label(1), label(2), label(1), label(2), label(0),
                      label(1), label(1), label(2)));
  }
  // Three parallel axes 2, 3, 4 and axes 5, 6 meeting.
  bool three = true;
  for (auto [a, b] : {std::pair{1, 2}, std::pair{1, 3}})
    if (three && !L.parallel(a, b)) {
      three = false;
      if (reasons)
        L.note(fmt::format("joints {}, {}, {} are not parallel (axes {} and {} at {:.6g} rad)", label(1), label(2),
                           label(3), label(a), label(b), std::asin(std::min(1.0, L.sinAngle(a, b)))));
    }
  if (three && !L.meet(4, 5, &c)) {
    three = false;
    if (reasons)
      L.note(fmt::format("axes of joints {} and {} do not meet ({:.6g} m apart)", label(4), label(5),
                         L.lineDistance(4, 5)));
  }
  if (three) {
    if (L.parallel(0, 1) || L.parallel(1, 4)) {
      if (reasons)
        L.note(fmt::format("joints {}, {}, {} are parallel, but so is joint {}", label(1), label(2), label(3),
                           label(L.parallel(0, 1) ? 0 : 4)));
      return false;
    }
    if (L.lineDistance(1, 2) <= L.tol || L.lineDistance(2, 3) <= L.tol) {
      if (reasons) L.note(fmt::format("two of the parallel axes {}, {}, {} coincide", label(1), label(2), label(3)));
      return false;
    }
    Plan6 p;
    p.arm_class = ArmClass::kThreeParallel;
    p.reversed = reversed;
    p.k = k;
    p.c = c;
    p.k.o[4] = p.k.o[5] = c;
    p.hp = k.h[1];
    p.sign3 = k.h[2].dot(p.hp) >= 0.0 ? 1.0 : -1.0;
    p.sign4 = k.h[3].dot(p.hp) >= 0.0 ? 1.0 : -1.0;
    p.k.h[2] = p.sign3 * p.hp;
    p.k.h[3] = p.sign4 * p.hp;
    p.hp_perp = p.hp.unitOrthogonal();
    p.h6_perp = p.k.h[5].unitOrthogonal();
    *plan = p;
    return true;
  }
  return false;
}

}  // namespace

bool classify6(const Chain6& chain, Plan6* plan, std::string* why, const std::array<std::string, 6>* names,
               const Tolerances& tolerances) {
  std::vector<std::string> forward, backward;
  auto label = [&](bool reversed) {
    return [reversed, names](int i) {
      const int j = reversed ? 5 - i : i;
      return names ? fmt::format("{} ('{}')", j + 1, (*names)[j]) : std::to_string(j + 1);
    };
  };
  if (tryClassify(chain, false, tolerances, plan, why ? &forward : nullptr, label(false))) return true;
  if (tryClassify(reversedChain(chain), true, tolerances, plan, why ? &backward : nullptr, label(true))) return true;
  if (why) {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
      return s;
    };
    *why = fmt::format(
        "no supported 6R class (a spherical wrist, or three parallel axes 2-4 with axes 5 and 6 meeting; also "
        "tried from the tool to the base). Base to tool: {}. Tool to base: {}",
        join(forward), join(backward));
  }
  return false;
}

std::string describe(const Plan6& plan) {
  // Joint numbers of the original chain, in increasing order.
  auto J = [&](int i) { return plan.reversed ? 6 - i : i + 1; };
  auto pair = [&](int a, int b) { return fmt::format("{} and {}", std::min(J(a), J(b)), std::max(J(a), J(b))); };
  auto triple = [&](int a, int b, int c) {
    int v[3] = {J(a), J(b), J(c)};
    std::sort(v, v + 3);
    return fmt::format("{}, {}, {}", v[0], v[1], v[2]);
  };
  std::string s;
  if (plan.arm_class == ArmClass::kSphericalWrist) {
    s = fmt::format("spherical {} (axes of joints {} meet)", plan.reversed ? "shoulder" : "wrist", triple(3, 4, 5));
    switch (plan.position) {
      case PositionCase::kParallel23:
        s += fmt::format(", axes {} parallel", pair(1, 2));
        break;
      case PositionCase::kIntersect12:
        s += fmt::format(", axes {} meet", pair(0, 1));
        break;
      case PositionCase::kIntersect23:
        s += fmt::format(", axes {} meet", pair(1, 2));
        break;
    }
  } else {
    s = fmt::format("three parallel axes (joints {}), axes {} meet", triple(1, 2, 3), pair(4, 5));
  }
  return s;
}

// ------------------------------------------------------------------- solve --
namespace {

// The limits in the plan's joint order (reversed for a reversed plan); null
// for none.
struct PlanLimits {
  const Limits6* lim = nullptr;
  std::array<double, 6> lo, hi;
  std::array<double, 6> near;  // the hint (the start), plan order
  const Bound6* bound = nullptr;
  std::array<double, 6> from;  // the bound's configuration, plan order
  // Wraps a into joint i's limits, as the representative a + 2 pi k nearest
  // the start among those within them (a joint with more than a turn of
  // range has several: the one a path through the start would reach);
  // false if none is within.
  bool ok(int i, double& a) const {
    if (!lim) return true;
    if (!(a >= lo[i] && a <= hi[i])) {
      a = wrapAngleIntoLimits(a, lo[i], hi[i]);
      if (!(a >= lo[i] - kLimitSlack && a <= hi[i] + kLimitSlack)) return false;
    }
    if (std::abs(a - near[i]) > std::numbers::pi) a = nearestTurn(a, near[i], lo[i], hi[i]);  // else a is nearest
    return true;
  }
  // The first three angles of a branch; counts the branch as dropped if not
  // within the limits, or as pruned if beyond the bound. With a bound,
  // *partial is the branch's squared distance so far (base and the three).
  bool first3(double& q1, double& q2, double& q3, Solutions6* out, double* partial) const {
    const bool in = ok(0, q1) && ok(1, q2) && ok(2, q3);
    out->outside += !in;
    if (in && bound) {
      const double d1 = q1 - from[0], d2 = q2 - from[1], d3 = q3 - from[2];
      *partial = bound->base + d1 * d1 + d2 * d2 + d3 * d3;
      if (*partial > bound->bound) {
        ++out->pruned;
        return false;
      }
    }
    return in;
  }
  // The next two angles of a branch that passed first3 (wrapped into the
  // limits); false, and the solution counted as dropped or pruned, if either
  // is outside the limits or they put it beyond the bound. The last angle
  // only adds to the distance.
  bool next2(double& q4, double& q5, double partial, Solutions6* out) const {
    if (!(ok(3, q4) && ok(4, q5))) {
      ++out->outside;
      return false;
    }
    if (bound) {
      const double d4 = q4 - from[3], d5 = q5 - from[4];
      if (partial + d4 * d4 + d5 * d5 > bound->bound) {
        ++out->pruned;
        return false;
      }
    }
    return true;
  }
};

// Stores a solution whose first five angles passed PlanLimits::first3 and
// next2 (wrapped into the limits there).
void store5(const PlanLimits& L, Solutions6* out, double q1, double q2, double q3, double q4, double q5, double q6) {
  if (out->count >= 8) return;
  if (!L.ok(5, q6)) {
    ++out->outside;
    return;
  }
  out->q[out->count++] = {q1, q2, q3, q4, q5, q6};
}

// Stores a solution whose first three angles passed PlanLimits::first3.
void store(const PlanLimits& L, Solutions6* out, double q1, double q2, double q3, double q4, double q5, double q6) {
  // q4-q6 wrapped into the limits here
  if (out->count >= 8) return;
  if (!(L.ok(3, q4) && L.ok(4, q5) && L.ok(5, q6))) {  // q1-q3 checked by first3
    ++out->outside;
    return;
  }
  out->q[out->count++] = {q1, q2, q3, q4, q5, q6};
}

struct Position3 {
  CosSin t1, t2, t3;
};

// Spherical wrist: the wrist centre (Pieper 1968), then the orientation.
void solveSphericalWrist(const Plan6& P, const Eigen::Matrix3d& Rd, const Eigen::Vector3d& p,
                         const std::array<double, 6>& hint, const PlanLimits& lim, Solutions6* out) {
  const Chain6& k = P.k;
  const Eigen::Vector3d w = p - Rd * (k.p0 - P.c);
  Position3 pos[4];
  int np = 0;
  unsigned& flags = out->singular;
  switch (P.position) {
    case PositionCase::kParallel23: {
      // h2 . R1^T (w - o1) = h2 . (c - o1): SP4 for q1.
      const Eigen::Vector3d a = w - k.o[0];
      Roots r1 = subproblem4(a, k.h[0], P.hp, P.hp.dot(P.c - k.o[0]));
      if (r1.any) {
        r1.count = 1;
        r1.t[0] = CosSin::of(hint[0]);
        flags |= kShoulderFree;
      } else if (r1.double_root && r1.count > 0) {
        flags |= kShoulderDouble;
      }
      for (int i = 0; i < r1.count; ++i) {
        const CosSin t1 = r1.t[i];
        // R2 ((o3 - o2) + R3 (c - o3)) = b: SP3 for q3, SP1 for q2.
        const Eigen::Vector3d b = rotate(k.h[0], t1.inverse(), a) - (k.o[1] - k.o[0]);
        const Roots r3 = subproblem3(k.h[2], P.c - k.o[2], k.o[1] - k.o[2], b.norm());
        if (r3.double_root && r3.count > 0) flags |= kElbowDouble;
        for (int j = 0; j < r3.count; ++j) {
          const Eigen::Vector3d v = (k.o[2] - k.o[1]) + rotate(k.h[2], r3.t[j], P.c - k.o[2]);
          CosSin t2;
          if (!subproblem1(k.h[1], v, b, &t2)) {
            t2 = CosSin::of(hint[1]);
            flags |= kArmFree;
          }
          pos[np++] = {t1, t2, r3.t[j]};
        }
      }
      break;
    }
    case PositionCase::kIntersect12: {
      // |(o3 - s) + R3 (c - o3)| = |w - s|: SP3 for q3; then
      // R(h2, q2) v = R(h1, -q1) (w - s): SP2 for q1, q2.
      const Eigen::Vector3d a = w - P.s;
      const Roots r3 = subproblem3(k.h[2], P.c - k.o[2], P.s - k.o[2], a.norm());
      if (r3.double_root && r3.count > 0) flags |= kElbowDouble;
      for (int j = 0; j < r3.count; ++j) {
        const Eigen::Vector3d v = (k.o[2] - P.s) + rotate(k.h[2], r3.t[j], P.c - k.o[2]);
        const Roots2 r = subproblem2(k.h[0], a, k.h[1], v, -hint[0], hint[1]);
        if (r.free1) flags |= kShoulderFree;
        if (r.free2) flags |= kArmFree;
        if (r.double_root && r.count > 0 && !r.free1 && !r.free2) flags |= kShoulderDouble;
        for (int m = 0; m < r.count; ++m) pos[np++] = {r.t1[m].inverse(), r.t2[m], r3.t[j]};
      }
      break;
    }
    case PositionCase::kIntersect23: {
      // |R(h1, -q1) (w - o1) - (s - o1)| = |c - s|: SP3 for q1; then
      // R(h3, q3) (c - s) = R(h2, -q2) b: SP2 for q2, q3.
      const Eigen::Vector3d a = w - k.o[0];
      Roots r1 = subproblem3(k.h[0], a, P.s - k.o[0], (P.c - P.s).norm());
      if (r1.any) {
        r1.count = 1;
        r1.t[0] = CosSin::of(-hint[0]);
        flags |= kShoulderFree;
      } else if (r1.double_root && r1.count > 0) {
        flags |= kShoulderDouble;
      }
      for (int i = 0; i < r1.count; ++i) {
        const Eigen::Vector3d b = rotate(k.h[0], r1.t[i], a) - (P.s - k.o[0]);
        const Roots2 r = subproblem2(k.h[1], b, k.h[2], P.c - P.s, -hint[1], hint[2]);
        if (r.free1 || r.free2) flags |= kArmFree;
        if (r.double_root && r.count > 0 && !r.free1 && !r.free2) flags |= kElbowDouble;
        for (int m = 0; m < r.count; ++m) pos[np++] = {r1.t[i].inverse(), r.t1[m].inverse(), r.t2[m]};
      }
      break;
    }
  }
  // The angles of every position solution, two at a time (atan2Fast2).
  double ys[12], xs[12], angles[12];
  for (int i = 0; i < np; ++i) {
    const CosSin* t[3] = {&pos[i].t1, &pos[i].t2, &pos[i].t3};
    for (int j = 0; j < 3; ++j) {
      ys[3 * i + j] = t[j]->s;
      xs[3 * i + j] = t[j]->c;
    }
  }
  int j = 0;
  for (; j + 1 < 3 * np; j += 2) atan2Fast2(ys + j, xs + j, angles + j);
  if (j < 3 * np) angles[j] = atan2Fast(ys[j], xs[j]);
  // Orientation: R4 R5 R6 = R_w = R03^T R_d.
  const Eigen::Vector3d y0 = Rd * k.h[5], z0 = Rd * P.h6_perp;
  const Sp1Axis q6_axis(k.h[5], P.h6_perp);  // SP1's parts for q6, the same for every branch
  for (int i = 0; i < np; ++i) {
    const Position3& x = pos[i];
    double q1 = angles[3 * i], q2 = angles[3 * i + 1], q3 = angles[3 * i + 2], partial = 0.0;
    if (!lim.first3(q1, q2, q3, out, &partial)) continue;
    const Eigen::Vector3d y =
        rotate(k.h[2], x.t3.inverse(), rotate(k.h[1], x.t2.inverse(), rotate(k.h[0], x.t1.inverse(), y0)));
    const Eigen::Vector3d z =
        rotate(k.h[2], x.t3.inverse(), rotate(k.h[1], x.t2.inverse(), rotate(k.h[0], x.t1.inverse(), z0)));
    // R(h5, q5) h6 = R(h4, -q4) R_w h6: SP2.
    const Roots2 r = subproblem2(k.h[3], y, k.h[4], k.h[5], -hint[3], hint[4]);
    if (r.free1) flags |= kWristFree;
    if (r.double_root && r.count > 0 && !r.free1) flags |= kWristDouble;
    // q4 and q5 of both roots are checked against the limits and the bound
    // before q6 is solved (a wrist flip far from the start is dropped here).
    double wy[4], wx[4], wa[4];
    for (int m = 0; m < r.count; ++m) {
      wy[2 * m] = r.t1[m].s;
      wx[2 * m] = r.t1[m].c;
      wy[2 * m + 1] = r.t2[m].s;
      wx[2 * m + 1] = r.t2[m].c;
    }
    for (int m = 0; m < r.count; ++m) atan2Fast2(wy + 2 * m, wx + 2 * m, wa + 2 * m);
    double q45[2][2], y6[2], x6[2];
    int kept = 0;
    for (int m = 0; m < r.count; ++m) {
      double q4 = -wa[2 * m], q5 = wa[2 * m + 1];
      if (!lim.next2(q4, q5, partial, out)) continue;
      // R6 = R5^T R4^T R_w: SP1 on a vector normal to h6.
      const Eigen::Vector3d u = rotate(k.h[4], r.t2[m].inverse(), rotate(k.h[3], r.t1[m], z));
      CosSin t6;
      q6_axis.solve(u, &t6);
      q45[kept][0] = q4;
      q45[kept][1] = q5;
      y6[kept] = t6.s;
      x6[kept++] = t6.c;
    }
    double q6[2];
    if (kept == 2) {
      atan2Fast2(y6, x6, q6);
    } else if (kept == 1) {
      q6[0] = atan2Fast(y6[0], x6[0]);
    }
    for (int m = 0; m < kept; ++m) store5(lim, out, q1, q2, q3, q45[m][0], q45[m][1], q6[m]);
  }
}

// The root at the boundary of a double root (Roots::double_root), whose two
// roots rounding alone puts about sqrt(eps) apart: their midpoint.
CosSin boundaryRoot(const Roots& r) {
  if (r.count < 2) return r.t[0];
  const double c = r.t[0].c + r.t[1].c, s = r.t[0].s + r.t[1].s, n = std::hypot(c, s);
  return n > 0.0 ? CosSin{c / n, s / n} : r.t[0];
}

// Three parallel axes, wrist singular (axis 6 parallel to them): the turn
// t234 = q2 + q3 + q4 is free with q6, and it places o4 at
// b(t234) = m - R(h, t234) pb3 for the planar 2R of joints 2, 3 to reach
// (|R(h3, q3) p43 - p13| = |b|). The components along h are fixed, so the
// planar 2R reaches b when its distance from the axis, s = |b_perp|, is
// within [|r43 - r13|, r43 + r13] (r the vectors' distances from h), and
// t234 moves s over [|m_perp - pb3_perp|, m_perp + pb3_perp]. Sets *t234 to
// the turn, nearest the given one, whose s is the given one's clamped into
// both ranges; false when they do not overlap (to kBeyondBoundary relative).
bool reachableWristTurn(const Eigen::Vector3d& h, const Eigen::Vector3d& m, const Eigen::Vector3d& pb3,
                        const Eigen::Vector3d& p43, const Eigen::Vector3d& p13, CosSin* t234) {
  auto perp = [&](const Eigen::Vector3d& v) { return (v - h.dot(v) * h).norm(); };
  const double mp = perp(m), bp = perp(pb3), r43 = perp(p43), r13 = perp(p13);
  const double lo = std::max(std::abs(mp - bp), std::abs(r43 - r13));
  const double hi = std::min(mp + bp, r43 + r13);
  if (!(lo <= hi + kBeyondBoundary * (mp + bp + r43 + r13))) return false;
  const double s = std::clamp(perp(m - rotate(h, *t234, pb3)), std::min(lo, hi), hi);
  const double along = h.dot(m - pb3);
  const Roots r = subproblem3(h, pb3, m, std::sqrt(s * s + along * along));
  if (r.count == 0) return false;
  // The root nearest the given turn: the larger cosine of the difference.
  auto cosDiff = [&](const CosSin& a) { return a.c * t234->c + a.s * t234->s; };
  *t234 = r.count == 2 && cosDiff(r.t[1]) > cosDiff(r.t[0]) ? r.t[1] : r.t[0];
  return true;
}

// Three parallel axes 2, 3, 4 (direction h) and axes 5, 6 meeting at b.
void solveThreeParallel(const Plan6& P, const Eigen::Matrix3d& Rd, const Eigen::Vector3d& p,
                        const std::array<double, 6>& hint, const PlanLimits& lim, Solutions6* out) {
  const Chain6& k = P.k;
  const Eigen::Vector3d& h = P.hp;
  unsigned& flags = out->singular;
  // x = R1 ((o2 - o1) + R2 (o3 - o2) + R23 (o4 - o3) + R234 (b - o4)), whose
  // h-component after R1^T is h.(b - o1): SP4 for q1.
  const Eigen::Vector3d x = p - k.o[0] - Rd * (k.p0 - P.c);
  Roots r1 = subproblem4(x, k.h[0], h, h.dot(P.c - k.o[0]));
  if (r1.any) {
    r1.count = 1;
    r1.t[0] = CosSin::of(hint[0]);
    flags |= kShoulderFree;
  } else if (r1.double_root && r1.count > 0) {
    flags |= kShoulderDouble;
    // One root, the boundary's: q1 off it by rounding's sqrt(eps) would hide
    // a wrist singularity (kOnAxis) and push a stretched elbow out of reach.
    r1.t[0] = boundaryRoot(r1);
    r1.count = 1;
  }
  const Eigen::Vector3d Rd_h6 = Rd * k.h[5];
  const Eigen::Vector3d p43 = k.o[3] - k.o[2], p13 = k.o[1] - k.o[2], p21 = k.o[2] - k.o[1];
  const Eigen::Vector3d p10 = k.o[1] - k.o[0], pb3 = P.c - k.o[3];
  for (int i = 0; i < r1.count; ++i) {
    const CosSin t1 = r1.t[i];
    const Eigen::Vector3d g = rotate(k.h[0], t1, h);  // R1 h
    // h . R5 h6 = (R1 h) . (R_d h6): SP4 for q5.
    const Roots r5 = subproblem4(h, k.h[4], k.h[5], g.dot(Rd_h6));
    const Eigen::Vector3d xr = rotate(k.h[0], t1.inverse(), x);  // R1^T x
    const Eigen::Vector3d RdT_g = Rd.transpose() * g;
    bool wrist_free = false;
    for (int j = 0; j < r5.count; ++j) {
      CosSin t5 = r5.t[j];
      // R6 (R_d^T R1 h) = R5^T h: SP1 for q6.
      CosSin t6;
      if (!subproblem1(k.h[5], RdT_g, rotate(k.h[4], t5.inverse(), h), &t6)) {
        t6 = CosSin::of(hint[5]);
        wrist_free = true;
        // Axis 6 parallel to h (to kOnAxis): q5 is at SP4's boundary.
        if (r5.double_root) t5 = boundaryRoot(r5);
      }
      // R(h, q2 + q3 + q4) = R1^T R_d R6^T R5^T: SP1 on a vector normal to h.
      const Eigen::Vector3d e =
          rotate(k.h[0], t1.inverse(), Rd * rotate(k.h[5], t6.inverse(), rotate(k.h[4], t5.inverse(), P.hp_perp)));
      CosSin t234;
      subproblem1(h, P.hp_perp, e, &t234);
      // The planar 3R: R2 ((o3 - o2) + R3 (o4 - o3)) = b.
      Eigen::Vector3d b = xr - p10 - rotate(h, t234, pb3);
      Roots r3 = subproblem3(k.h[2], p43, p13, b.norm());
      if (wrist_free && r3.count == 0 && reachableWristTurn(h, xr - p10, pb3, p43, p13, &t234)) {
        // The start's q6 leaves the point o4 out of the planar 2R's reach:
        // the turn q2 + q3 + q4 nearest it that brings o4 within reach, and
        // the q6 that keeps the orientation with it (R6 = R5^T R234^T R1^T R_d).
        const Eigen::Vector3d v = P.h6_perp;
        subproblem1(k.h[5], v,
                    rotate(k.h[4], t5.inverse(), rotate(h, t234.inverse(), rotate(k.h[0], t1.inverse(), Rd * v))),
                    &t6);
        b = xr - p10 - rotate(h, t234, pb3);
        r3 = subproblem3(k.h[2], p43, p13, b.norm());
        flags |= kWristTurned;
      }
      if (r3.double_root && r3.count > 0) flags |= kElbowDouble;
      const double q1_turn = t1.angle(), q5 = t5.angle(), q6 = t6.angle(), q234 = t234.angle();
      for (int m = 0; m < r3.count; ++m) {
        const Eigen::Vector3d v = p21 + rotate(k.h[2], r3.t[m], p43);
        CosSin t2;
        if (!subproblem1(k.h[1], v, b, &t2)) {
          t2 = CosSin::of(hint[1]);
          flags |= kArmFree;
        }
        double q1 = q1_turn, q2 = t2.angle(), q3 = r3.t[m].angle();
        double partial = 0.0;
        if (!lim.first3(q1, q2, q3, out, &partial)) continue;
        const double q4 = wrapPi(P.sign4 * (q234 - q2 - P.sign3 * q3));
        store(lim, out, q1, q2, q3, q4, q5, q6);
      }
      if (wrist_free) break;  // the second q5 root is the same point of the continuum
    }
    if (wrist_free)
      flags |= kWristFree;
    else if (r5.double_root && r5.count > 0)
      flags |= kWristDouble;
  }
}

}  // namespace

void solve6(const Plan6& plan, const Eigen::Matrix3d& R_target, const Eigen::Vector3d& p_target,
            const std::array<double, 6>& hint, Solutions6* out, const Limits6* limits, const Bound6* bound) {
  out->count = 0;
  out->singular = 0;
  out->outside = 0;
  out->pruned = 0;
  Eigen::Matrix3d R;
  Eigen::Vector3d p;
  std::array<double, 6> h;
  PlanLimits lim;
  lim.lim = limits;
  lim.bound = bound;
  for (int i = 0; i < 6; ++i) lim.near[i] = hint[plan.reversed ? 5 - i : i];
  if (bound)
    for (int i = 0; i < 6; ++i) lim.from[i] = bound->from[plan.reversed ? 5 - i : i];
  if (plan.reversed) {
    R = R_target.transpose();
    p = -(R * p_target);
    for (int i = 0; i < 6; ++i) h[i] = hint[5 - i];
    if (limits)
      for (int i = 0; i < 6; ++i) {
        lim.lo[i] = limits->lo[5 - i];
        lim.hi[i] = limits->hi[5 - i];
      }
  } else {
    R = R_target;
    p = p_target;
    h = hint;
    if (limits) {
      lim.lo = limits->lo;
      lim.hi = limits->hi;
    }
  }
  const Eigen::Matrix3d Rd = R * plan.k.R0.transpose();
  if (plan.arm_class == ArmClass::kSphericalWrist) {
    solveSphericalWrist(plan, Rd, p, h, lim, out);
  } else {
    solveThreeParallel(plan, Rd, p, h, lim, out);
  }
  if (plan.reversed)
    for (int i = 0; i < out->count; ++i) std::reverse(out->q[i].begin(), out->q[i].end());
}

// ---------------------------------------------------------------- 7R search --

bool lockPlan(const Chain7& chain, int locked, double theta0, LockedPlan* out, std::string* why) {
  const Chain6 k = lockJoint(chain, locked, theta0);
  if (!classify6(k, &out->plan, why)) return false;
  out->theta0 = theta0;
  const Eigen::Vector3d& h = chain.h[locked];
  const Eigen::Vector3d& o = chain.o[locked];
  if (!out->plan.reversed) {
    // Forward: the joints after the held one (6R index >= locked) and the
    // effector turn by G about the held axis.
    out->point = o;
    out->axis = h;
    out->sign = 1.0;
    for (int i = 0; i < 6; ++i) out->moving[i] = i >= locked;
  } else {
    // Reversed: plan joint i is 6R joint 5 - i, seen from the effector
    // T0(theta) = G T0(theta0); the joints before the held one and the
    // base turn by G^-1 about the held axis seen from T0(theta0).
    const Eigen::Matrix3d Rt = k.R0.transpose();
    out->point = Rt * (o - k.p0);
    out->axis = Rt * h;
    out->sign = -1.0;
    for (int i = 0; i < 6; ++i) out->moving[i] = 5 - i < locked;
  }
  return true;
}

void planAt(const LockedPlan& L, double theta, Plan6* plan) {
  const Plan6& P0 = L.plan;
  Plan6& P = *plan;
  P = P0;
  const CosSin a = CosSin::of(L.sign * (theta - L.theta0));
  // The turn as a matrix (Rodrigues' formula, G = c I + s [k]x + (1 - c) k k^T),
  // built once and applied to every vector that turns.
  const double k0 = L.axis[0], k1 = L.axis[1], k2 = L.axis[2], c = a.c, s = a.s, t = 1.0 - a.c;
  const double g00 = t * k0 * k0 + c, g01 = t * k0 * k1 - s * k2, g02 = t * k0 * k2 + s * k1;
  const double g10 = t * k0 * k1 + s * k2, g11 = t * k1 * k1 + c, g12 = t * k1 * k2 - s * k0;
  const double g20 = t * k0 * k2 - s * k1, g21 = t * k1 * k2 + s * k0, g22 = t * k2 * k2 + c;
  auto dir = [&](const Eigen::Vector3d& v) -> Eigen::Vector3d {
    return {g00 * v[0] + g01 * v[1] + g02 * v[2], g10 * v[0] + g11 * v[1] + g12 * v[2],
            g20 * v[0] + g21 * v[1] + g22 * v[2]};
  };
  auto pt = [&](const Eigen::Vector3d& x) -> Eigen::Vector3d { return L.point + dir(x - L.point); };
  // The points of axes through a meeting point that turns whole are put back
  // through it below (meet): they are not turned here.
  std::array<bool, 6> through{};
  auto whole = [&](std::initializer_list<int> axes) {
    bool all = true;
    for (int i : axes) all = all && L.moving[i];
    if (all)
      for (int i : axes) through[i] = true;
  };
  if (P.arm_class == ArmClass::kSphericalWrist) {
    whole({3, 4, 5});
    if (P.position == PositionCase::kIntersect12) whole({0, 1});
    if (P.position == PositionCase::kIntersect23) whole({1, 2});
  } else {
    whole({4, 5});
  }
  for (int i = 0; i < 6; ++i)
    if (L.moving[i]) {
      P.k.h[i] = dir(P0.k.h[i]);
      if (!through[i]) P.k.o[i] = pt(P0.k.o[i]);
    }
  for (int col = 0; col < 3; ++col) P.k.R0.col(col) = dir(P0.k.R0.col(col));
  P.k.p0 = pt(P0.k.p0);
  // A meeting point turns with its axes when they all turn and stays when
  // none does; where a turning axis meets a fixed one the point moves along
  // the fixed axis (two coplanar lines, one turning in their plane): it is
  // found again as the point nearest both. The axes are put back through it.
  auto meet = [&](Eigen::Vector3d* x, std::initializer_list<int> axes) {
    int turning = 0;
    for (int i : axes) turning += L.moving[i];
    if (turning == static_cast<int>(axes.size())) {
      *x = pt(*x);
    } else if (turning > 0) {
      *x = nearestPoint(P.k, axes);
    }
    for (int i : axes) P.k.o[i] = *x;
  };
  if (P.arm_class == ArmClass::kSphericalWrist) {
    meet(&P.c, {3, 4, 5});
    if (P.position == PositionCase::kIntersect12) {
      meet(&P.s, {0, 1});
    } else if (P.position == PositionCase::kIntersect23) {
      meet(&P.s, {1, 2});
    } else {
      if (L.moving[1]) P.hp = dir(P0.hp);
      P.k.h[2] = (P0.k.h[2].dot(P0.hp) >= 0.0 ? 1.0 : -1.0) * P.hp;
    }
  } else {
    meet(&P.c, {4, 5});
    if (L.moving[1]) {
      P.hp = dir(P0.hp);
      P.hp_perp = dir(P0.hp_perp);
    }
    P.k.h[1] = P.hp;
    P.k.h[2] = P.sign3 * P.hp;
    P.k.h[3] = P.sign4 * P.hp;
  }
  if (L.moving[5]) P.h6_perp = dir(P0.h6_perp);
}

std::array<double, 7> selfMotionShare(const Chain7& chain, const std::array<double, 7>& lo,
                                      const std::array<double, 7>& hi, int configurations) {
  // The spatial Jacobian by the product of exponentials: column i is the
  // twist of joint i carried by the joints before it (Murray, Li & Sastry
  // 1994, sec. 3.4); its 1-D null space is the self-motion direction.
  Rng rng(kSelfMotionSeed);
  std::array<std::vector<double>, 7> share;
  Eigen::Matrix<double, 6, 7> J;
  for (int t = 0; t < configurations; ++t) {
    Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
    Eigen::Vector3d p = Eigen::Vector3d::Zero();
    for (int i = 0; i < 7; ++i) {
      const bool finite = std::isfinite(lo[i]) && std::isfinite(hi[i]);
      const double q = finite ? rng.uniform(lo[i], hi[i]) : rng.uniform(-std::numbers::pi, std::numbers::pi);
      const Eigen::Vector3d w = R * chain.h[i], r = R * chain.o[i] + p;
      J.col(i) << r.cross(w), w;
      const Eigen::Matrix3d Ri = Eigen::AngleAxisd(q, chain.h[i]).toRotationMatrix();
      p += R * (chain.o[i] - Ri * chain.o[i]);
      R = R * Ri;
    }
    Eigen::JacobiSVD<Eigen::Matrix<double, 6, 7>> svd(J, Eigen::ComputeFullV);
    const Eigen::Matrix<double, 7, 1> n = svd.matrixV().col(6);
    for (int i = 0; i < 7; ++i) share[i].push_back(std::abs(n[i]));
  }
  std::array<double, 7> median;
  for (int i = 0; i < 7; ++i) {
    std::sort(share[i].begin(), share[i].end());
    median[i] = share[i].empty() ? 0.0 : share[i][share[i].size() / 2];
  }
  return median;
}

int chooseFreeJoint(const Chain7& chain, int requested, const std::array<double, 7>& lo,
                    const std::array<double, 7>& hi, std::string* why, const std::array<std::string, 7>* names) {
  constexpr double kProbeAngles[] = {0.3, 1.9, -2.6};
  auto label = [&](int f) { return names ? fmt::format("{} ('{}')", f + 1, (*names)[f]) : std::to_string(f + 1); };
  std::string reasons;
  std::vector<int> lockable;
  for (int f = requested < 0 ? 0 : requested; f < (requested < 0 ? 7 : requested + 1); ++f) {
    Plan6 plan;
    std::string reason;
    bool ok = true;
    for (double a : kProbeAngles)
      if (ok && !classify6(lockJoint(chain, f, a), &plan, why ? &reason : nullptr)) ok = false;
    if (ok) {
      lockable.push_back(f);
    } else if (why) {
      reasons += fmt::format("{}holding joint {}: {}", reasons.empty() ? "" : " | ", label(f), reason);
    }
  }
  if (lockable.empty()) {
    if (why)
      *why = fmt::format("{} leaves no supported 6R class (spherical wrist or three parallel axes). {}",
                         requested >= 0 ? "holding joint " + label(requested) : "holding any one joint", reasons);
    return -1;
  }
  if (lockable.size() == 1) return lockable.front();
  const std::array<double, 7> share = selfMotionShare(chain, lo, hi);
  int best = lockable.front();
  for (int f : lockable)
    if (share[f] > share[best]) best = f;
  return best;
}

std::vector<double> freeJointGrid(double lo, double hi, int samples) {
  std::vector<double> grid;
  constexpr double kPi = std::numbers::pi;
  if (samples < 1) return grid;
  if (std::isfinite(lo) && std::isfinite(hi) && hi - lo < 2 * kPi) {
    if (samples == 1) return {0.5 * (lo + hi)};
    for (int k = 0; k < samples; ++k) grid.push_back(lo + (hi - lo) * k / (samples - 1));
  } else {
    for (int k = 0; k < samples; ++k) grid.push_back(-kPi + 2 * kPi * k / samples);
  }
  return grid;
}

std::string singularityMessage(const Plan6& plan, unsigned f) {
  if (f == 0) return "";
  auto J = [&](int i) { return plan.reversed ? 6 - i : i + 1; };
  std::vector<std::string> parts;
  const bool sw = plan.arm_class == ArmClass::kSphericalWrist;
  if (f & kShoulderFree)
    parts.push_back(fmt::format(
        "shoulder singular (the {} on the axis of joint {}): a continuum of solutions, q{} is free; a "
        "representative with q{} from the start configuration returned",
        sw ? "wrist centre" : "meeting point of axes " + std::to_string(J(4)) + " and " + std::to_string(J(5)), J(0),
        J(0), J(0)));
  if (f & kWristFree) {
    if (sw)
      parts.push_back(fmt::format(
          "wrist singular (axes of joints {} and {} aligned): a continuum of solutions, only q{} + q{} (q{} - q{} "
          "for opposed axes) is fixed; a representative with q{} from the start configuration returned",
          J(3), J(5), J(3), J(5), J(3), J(5), J(3)));
    else
      parts.push_back(fmt::format(
          "wrist singular (axis of joint {} parallel to joints {}, {}, {}): a continuum of solutions, only "
          "q{} + q{} + q{} +- q{} is fixed; a representative with q{} {} returned",
          J(5), J(1), J(2), J(3), J(1), J(2), J(3), J(5), J(5),
          f & kWristTurned ? "near the start configuration's value, moved until the position is within reach"
                           : "from the start configuration"));
  }
  if (f & kArmFree)
    parts.push_back(
        "the wrist point on the axis of a positioning joint: a continuum of solutions, that joint is free; a "
        "representative with its value from the start configuration returned");
  if (f & kShoulderDouble)
    parts.push_back(fmt::format("joint {} at the boundary of its reach: its two solutions coincide", J(0)));
  if (f & kElbowDouble) parts.push_back("elbow fully stretched or folded: its two solutions coincide");
  if ((f & kWristDouble) && !(f & kWristFree)) parts.push_back("the two wrist-flip solutions coincide");
  std::string s = "singular target: ";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  return s;
}

}  // namespace ikbench::analytic
