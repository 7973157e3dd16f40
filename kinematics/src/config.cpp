#include "ikbench/kinematics/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ikbench {
namespace {

Eigen::Quaterniond quatAt(const Eigen::VectorXd& q, int i) {
  return Eigen::Quaterniond(q[i + 3], q[i], q[i + 1], q[i + 2]);  // (w, x, y, z) ctor
}
void setQuat(Eigen::VectorXd& q, int i, const Eigen::Quaterniond& r) { q.segment<4>(i) = r.coeffs(); }

// Clamps the rotation vector of the quaternion at q[i..i+3] into [lo, hi].
bool clampRotation(Eigen::VectorXd& q, int i, const double* lo, const double* hi) {
  bool bounded = false;
  for (int k = 0; k < 3; ++k) bounded |= std::isfinite(lo[k]) || std::isfinite(hi[k]);
  if (!bounded) return false;
  Eigen::Vector3d w = so3::logQuat(quatAt(q, i));
  bool changed = false;
  // exp/log round trips move a component sitting exactly on its bound by a
  // few ulps; only a real violation counts as a change.
  for (int k = 0; k < 3; ++k) {
    if (w[k] < lo[k] - 1e-12 || w[k] > hi[k] + 1e-12) changed = true;
    w[k] = std::clamp(w[k], lo[k], hi[k]);
  }
  if (changed) setQuat(q, i, so3::expQuat(w));
  return changed;
}

}  // namespace

void integrate(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& dq, Eigen::VectorXd& q_out) {
  if (&q_out != &q) q_out = q;
  for (int j = 0; j < model.numJoints(); ++j) {
    const int iq = model.idxQ(j), iv = model.idxV(j);
    switch (model.type(j)) {
      case JointType::kRevolute:
      case JointType::kPrismatic:
        q_out[iq] += dq[iv];
        break;
      case JointType::kBall: {
        const Eigen::Quaterniond r = so3::expQuat(dq.segment<3>(iv)) * quatAt(q_out, iq);
        setQuat(q_out, iq, r.normalized());
        break;
      }
      case JointType::kFree: {
        q_out.segment<3>(iq) += dq.segment<3>(iv);
        const Eigen::Quaterniond r = so3::expQuat(dq.segment<3>(iv + 3)) * quatAt(q_out, iq + 3);
        setQuat(q_out, iq + 3, r.normalized());
        break;
      }
      case JointType::kFixed: break;
    }
  }
}

Eigen::VectorXd integrate(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& dq) {
  Eigen::VectorXd out;
  integrate(model, q, dq, out);
  return out;
}

Eigen::VectorXd difference(const Model& model, const Eigen::VectorXd& q1, const Eigen::VectorXd& q0) {
  Eigen::VectorXd dq(model.nv());
  for (int j = 0; j < model.numJoints(); ++j) {
    const int iq = model.idxQ(j), iv = model.idxV(j);
    switch (model.type(j)) {
      case JointType::kRevolute:
      case JointType::kPrismatic:
        dq[iv] = q1[iq] - q0[iq];
        break;
      case JointType::kBall:
        dq.segment<3>(iv) = so3::logQuat(quatAt(q1, iq) * quatAt(q0, iq).conjugate());
        break;
      case JointType::kFree:
        dq.segment<3>(iv) = q1.segment<3>(iq) - q0.segment<3>(iq);
        dq.segment<3>(iv + 3) = so3::logQuat(quatAt(q1, iq + 3) * quatAt(q0, iq + 3).conjugate());
        break;
      case JointType::kFixed: break;
    }
  }
  return dq;
}

void tangentCoordinates(const Model& model, const Eigen::VectorXd& q, Eigen::VectorXd& coords) {
  coords.resize(model.nv());
  for (int j = 0; j < model.numJoints(); ++j) {
    const int iq = model.idxQ(j), iv = model.idxV(j);
    switch (model.type(j)) {
      case JointType::kRevolute:
      case JointType::kPrismatic: coords[iv] = q[iq]; break;
      case JointType::kBall: coords.segment<3>(iv) = so3::logQuat(quatAt(q, iq)); break;
      case JointType::kFree:
        coords.segment<3>(iv) = q.segment<3>(iq);
        coords.segment<3>(iv + 3) = so3::logQuat(quatAt(q, iq + 3));
        break;
      case JointType::kFixed: break;
    }
  }
}

bool normalizeConfiguration(const Model& model, Eigen::VectorXd& q) {
  if (!q.allFinite()) return false;
  for (int j = 0; j < model.numJoints(); ++j) {
    int iq = model.idxQ(j);
    if (model.type(j) == JointType::kFree) iq += 3;
    else if (model.type(j) != JointType::kBall) continue;
    const double n = q.segment<4>(iq).norm();
    if (n < 1e-12) return false;
    q.segment<4>(iq) /= n;
  }
  return true;
}

bool clampToLimits(const Model& model, Eigen::VectorXd& q) {
  const Eigen::VectorXd& lo = model.lowerLimits();
  const Eigen::VectorXd& hi = model.upperLimits();
  bool changed = false;
  if (model.hasOnlyScalarJoints()) {  // q is its own tangent coordinates: entry k is DOF k
    for (int k = 0; k < model.nv(); ++k) {
      const double c = std::clamp(q[k], lo[k], hi[k]);
      changed |= c != q[k];
      q[k] = c;
    }
    return changed;
  }
  for (int j = 0; j < model.numJoints(); ++j) {
    const int iq = model.idxQ(j), iv = model.idxV(j);
    switch (model.type(j)) {
      case JointType::kRevolute:
      case JointType::kPrismatic: {
        const double c = std::clamp(q[iq], lo[iv], hi[iv]);
        changed |= c != q[iq];
        q[iq] = c;
        break;
      }
      case JointType::kBall: changed |= clampRotation(q, iq, &lo[iv], &hi[iv]); break;
      case JointType::kFree:
        for (int k = 0; k < 3; ++k) {
          const double c = std::clamp(q[iq + k], lo[iv + k], hi[iv + k]);
          changed |= c != q[iq + k];
          q[iq + k] = c;
        }
        changed |= clampRotation(q, iq + 3, &lo[iv + 3], &hi[iv + 3]);
        break;
      case JointType::kFixed: break;
    }
  }
  return changed;
}

double wrapAngleIntoLimits(double a, double lo, double hi) {
  constexpr double two_pi = 2.0 * std::numbers::pi;
  if (!std::isfinite(a)) return a;
  double w = a;
  if (w < lo && std::isfinite(lo)) w += two_pi * std::ceil((lo - w) / two_pi);
  if (w > hi && std::isfinite(hi)) w -= two_pi * std::ceil((w - hi) / two_pi);
  return (w >= lo && w <= hi) ? w : a;
}

bool wrapIntoLimits(const Model& model, Eigen::VectorXd& q, double slack) {
  for (int j = 0; j < model.numJoints(); ++j) {
    if (model.type(j) != JointType::kRevolute) continue;
    const int v = model.idxV(j), iq = model.idxQ(j);
    q[iq] = wrapAngleIntoLimits(q[iq], model.lowerLimits()[v], model.upperLimits()[v]);
  }
  return withinLimits(model, q, slack);
}

double configurationDistance(const Model& model, const Eigen::VectorXd& q1, const Eigen::VectorXd& q0,
                             bool modulo_2pi) {
  if (model.hasOnlyScalarJoints() && !modulo_2pi) return (q1 - q0).norm();
  Eigen::VectorXd d = difference(model, q1, q0);
  if (modulo_2pi) {
    constexpr double two_pi = 2.0 * std::numbers::pi;
    for (int j = 0; j < model.numJoints(); ++j) {
      if (model.type(j) != JointType::kRevolute) continue;
      double& x = d[model.idxV(j)];
      x = std::remainder(x, two_pi);
    }
  }
  return d.norm();
}

bool configurationsWithin(const Model& model, const Eigen::VectorXd& a, const Eigen::VectorXd& b, double tol) {
  if (!model.hasOnlyScalarJoints()) return configurationDistance(model, a, b, /*modulo_2pi=*/true) <= tol;
  constexpr double two_pi = 2.0 * std::numbers::pi;
  const double tol2 = tol * tol;
  double sum = 0.0;
  for (int j = 0; j < model.numJoints(); ++j) {
    if (model.jointNq(j) == 0) continue;
    const int iq = model.idxQ(j);
    double d = a[iq] - b[iq];
    if (model.type(j) == JointType::kRevolute) d -= two_pi * std::nearbyint(d / two_pi);
    sum += d * d;
    if (sum > tol2) return false;
  }
  return true;
}

bool withinLimits(const Model& model, const Eigen::VectorXd& q, double slack) {
  const Eigen::VectorXd& lo = model.lowerLimits();
  const Eigen::VectorXd& hi = model.upperLimits();
  if (model.hasOnlyScalarJoints()) {  // q is its own tangent coordinates: nothing to allocate
    for (int k = 0; k < model.nv(); ++k)
      if (!(q[k] >= lo[k] - slack && q[k] <= hi[k] + slack)) return false;
    return true;
  }
  Eigen::VectorXd c;
  tangentCoordinates(model, q, c);
  for (int k = 0; k < model.nv(); ++k) {
    // Ball-joint rotation vectors are only checked where a limit is finite:
    // log() is ambiguous at angle pi, where any bound would be meaningless.
    if (!(c[k] >= lo[k] - slack && c[k] <= hi[k] + slack)) return false;
  }
  return true;
}

Eigen::VectorXd randomConfiguration(const Model& model, Rng& rng) {
  Eigen::VectorXd q = model.neutralConfiguration();
  const Eigen::VectorXd& lo = model.lowerLimits();
  const Eigen::VectorXd& hi = model.upperLimits();
  auto draw = [&](int dof, double default_lo, double default_hi) {
    const double a = std::isfinite(lo[dof]) ? lo[dof] : std::max(default_lo, lo[dof]);
    const double b = std::isfinite(hi[dof]) ? hi[dof] : std::min(default_hi, hi[dof]);
    return rng.uniform(a, b);
  };
  auto draw_rotation = [&](int iq, int iv) {
    bool bounded = false;
    for (int k = 0; k < 3; ++k) bounded |= model.hasFiniteLimits(iv + k);
    if (!bounded) {
      setQuat(q, iq, rng.rotation());
    } else {
      Eigen::Vector3d w;
      for (int k = 0; k < 3; ++k) w[k] = draw(iv + k, -std::numbers::pi, std::numbers::pi);
      setQuat(q, iq, so3::expQuat(w));
      // A rotation vector longer than pi maps to a shorter one of the same
      // rotation whose components may leave the box: clamp back inside.
      clampRotation(q, iq, &lo[iv], &hi[iv]);
    }
  };
  for (int j = 0; j < model.numJoints(); ++j) {
    const int iq = model.idxQ(j), iv = model.idxV(j);
    switch (model.type(j)) {
      case JointType::kRevolute: q[iq] = draw(iv, -std::numbers::pi, std::numbers::pi); break;
      case JointType::kPrismatic: q[iq] = draw(iv, -1.0, 1.0); break;
      case JointType::kBall: draw_rotation(iq, iv); break;
      case JointType::kFree:
        for (int k = 0; k < 3; ++k) q[iq + k] = draw(iv + k, -1.0, 1.0);
        draw_rotation(iq + 3, iv + 3);
        break;
      case JointType::kFixed: break;
    }
  }
  return q;
}

bool isValidConfiguration(const Model& model, const Eigen::VectorXd& q, std::string* why) {
  auto fail = [&](std::string msg) {
    if (why) *why = std::move(msg);
    return false;
  };
  if (q.size() != model.nq())
    return fail(fmt::format("configuration has {} entries, model '{}' expects nq = {}", q.size(), model.name(),
                            model.nq()));
  // Without ball or free joints there is no quaternion to check: finite is
  // valid (the loop below names the entry that is not).
  if (model.hasOnlyScalarJoints() && q.allFinite()) return true;
  for (int j = 0; j < model.numJoints(); ++j) {
    const int iq = model.idxQ(j), nq = model.jointNq(j);
    for (int k = 0; k < nq; ++k)
      if (!std::isfinite(q[iq + k]))
        return fail(fmt::format("configuration entry {} (joint '{}') is not finite", iq + k, model.joint(j).name));
    int iquat = -1;
    if (model.type(j) == JointType::kBall) iquat = iq;
    if (model.type(j) == JointType::kFree) iquat = iq + 3;
    if (iquat >= 0 && std::abs(q.segment<4>(iquat).norm() - 1.0) > 1e-6)
      return fail(fmt::format("quaternion of joint '{}' has norm {}, expected 1", model.joint(j).name,
                              q.segment<4>(iquat).norm()));
  }
  return true;
}

}  // namespace ikbench
