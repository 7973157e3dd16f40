// numpy argument conversion and checks, body lookup (see bindings.h).
#include <fmt/format.h>

#include <cmath>

#include "bindings.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/scenarios/generators.h"

namespace ikbench::python {

std::string bodyList(const Model& model) {
  constexpr int kMaxNames = 60;
  std::string out;
  const int n = model.numJoints();
  for (int i = 0; i < n && i < kMaxNames; ++i) out += (i ? ", " : "") + model.bodyName(i);
  if (n > kMaxNames) out += fmt::format(", ... ({} more)", n - kMaxNames);
  return out;
}

namespace {

std::string modelLabel(const Model& model) {
  return model.name().empty() ? std::string("model") : fmt::format("model '{}'", model.name());
}

// True for Python ints and numpy integers, false for bool.
bool isIndex(py::handle h) {
  return !py::isinstance<py::bool_>(h) && PyIndex_Check(h.ptr()) && !PyFloat_Check(h.ptr());
}

}  // namespace

void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

namespace {

// The value of a Python integer as a long long; false (and no Python error
// set) when it does not fit, as 2**63 does not.
bool fitsLongLong(py::handle index, long long* out) {
  const py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(index.ptr()));
  if (!v) throw py::error_already_set();
  int overflow = 0;
  *out = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (*out == -1 && PyErr_Occurred()) throw py::error_already_set();
  return overflow == 0;
}

}  // namespace

std::string shortRepr(py::handle obj) {
  std::string r = py::repr(obj).cast<std::string>();
  if (r.size() > 40) r = fmt::format("{}... ({} characters)", r.substr(0, 24), r.size());
  return r;
}

long long integerArg(py::handle obj, const std::string& arg, long long lo, long long hi) {
  if (!isIndex(obj))
    throw py::type_error(fmt::format("{}: expected an integer, got {}", arg,
                                     py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>()));
  long long v = 0;
  if (!fitsLongLong(obj, &v) || v < lo || v > hi)
    throw py::value_error(
        fmt::format("{}: {} is out of range: expected an integer in [{}, {}]", arg, shortRepr(obj), lo, hi));
  return v;
}

int resolveBody(const Model& model, py::handle body, const std::string& arg) {
  if (py::isinstance<py::str>(body)) {
    const std::string name = body.cast<std::string>();
    const int b = model.bodyIndex(name);
    if (b < 0)
      throw py::value_error(
          fmt::format("{}: unknown body '{}' (bodies of {}: {})", arg, name, modelLabel(model), bodyList(model)));
    return b;
  }
  if (isIndex(body)) {
    long long b = 0;
    if (!fitsLongLong(body, &b) || b < 0 || b >= model.numJoints())
      throw py::value_error(fmt::format("{}: body index {} is out of range: {} has bodies 0..{} ({})", arg,
                                        shortRepr(body), modelLabel(model), model.numJoints() - 1, bodyList(model)));
    return static_cast<int>(b);
  }
  throw py::type_error(fmt::format("{}: expected a body name (str) or index (int), got {}", arg,
                                   py::str(py::type::handle_of(body).attr("__name__")).cast<std::string>()));
}

int defaultEffector(const Model& model, const std::string& arg) {
  std::vector<int> effectors;
  try {
    effectors = effectorBodies(model, {});
  } catch (const std::invalid_argument& e) {
    throw py::value_error(fmt::format("{}: {}", arg, e.what()));
  }
  if (effectors.size() != 1) {
    std::string names;
    for (int b : effectors) names += (names.empty() ? "" : ", ") + model.bodyName(b);
    throw py::value_error(fmt::format("{}: {} has {} effectors ({}): name one, e.g. {}='{}'", arg, modelLabel(model),
                                      effectors.size(), names, arg, model.bodyName(effectors.front())));
  }
  return effectors.front();
}

Goal PyGoal::resolve(const Model& model, const std::string& what) const {
  Goal g;
  g.kind = kind;
  if (const int* index = std::get_if<int>(&body)) {
    g.body = resolveBody(model, py::int_(*index), what + " body");
  } else {
    g.body = resolveBody(model, py::str(std::get<std::string>(body)), what + " body");
  }
  g.point = point;
  g.target_position = target_position;
  g.target_orientation = target_quaternion.toRotationMatrix();
  g.weight = weight;
  g.orientation_scale = orientation_scale;
  return g;
}

DoubleArray asDoubleArray(py::handle obj, const std::string& arg) {
  py::array a;
  if (py::isinstance<py::array>(obj)) {
    a = py::reinterpret_borrow<py::array>(obj);
  } else {
    try {
      a = py::module_::import("numpy").attr("asarray")(obj);
    } catch (py::error_already_set& e) {
      throw py::value_error(
          fmt::format("{}: expected an array of real numbers, got something numpy cannot read "
                      "as one ({})",
                      arg, e.what()));
    }
  }
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u')
    throw py::type_error(
        fmt::format("{}: expected real numbers (float64, or an integer or float type converted "
                    "to it), got dtype {}",
                    arg, py::str(a.dtype()).cast<std::string>()));
  // A view when `a` is already C-contiguous float64, else one converted copy;
  // a copy too large to allocate is a MemoryError, not a conversion error.
  if (py::isinstance<DoubleArray>(a)) return py::reinterpret_borrow<DoubleArray>(a);
  try {
    a = py::module_::import("numpy").attr("ascontiguousarray")(a, py::arg("dtype") = "float64");
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_MemoryError))
      raise(PyExc_MemoryError, fmt::format("{}: cannot allocate the float64 copy of an array of shape {} ({:.0f} bytes)",
                                           arg, shapeText(a), static_cast<double>(a.size()) * sizeof(double)));
    throw py::type_error(fmt::format("{}: cannot convert to a float64 array ({})", arg, e.what()));
  }
  DoubleArray out = DoubleArray::ensure(a);
  if (!out) throw py::type_error(fmt::format("{}: cannot convert to a float64 array", arg));
  return out;
}

std::string shapeText(const py::array& a) {
  if (a.ndim() == 1) return fmt::format("({},)", a.shape(0));
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + ")";
}

void requireFinite(const DoubleArray& a, const std::string& arg) {
  const double* p = a.data();
  const py::ssize_t n = a.size();
  for (py::ssize_t k = 0; k < n; ++k) {
    if (std::isfinite(p[k])) continue;
    if (a.ndim() == 2) {
      const py::ssize_t cols = a.shape(1);
      throw py::value_error(
          fmt::format("{}: row {} (column {}) is {}: expected finite values", arg, k / cols, k % cols, p[k]));
    }
    throw py::value_error(fmt::format("{}: entry {} is {}: expected finite values", arg, k, p[k]));
  }
}

Eigen::VectorXd vectorArg(py::handle obj, Eigen::Index size, const std::string& arg, const std::string& meaning) {
  const DoubleArray a = asDoubleArray(obj, arg);
  if (a.ndim() != 1 || a.shape(0) != size)
    throw py::value_error(fmt::format("{}: expected shape ({},){}, got shape {}", arg, size,
                                      meaning.empty() ? "" : " (" + meaning + ")", shapeText(a)));
  requireFinite(a, arg);
  return Eigen::Map<const Eigen::VectorXd>(a.data(), size);
}

Eigen::Quaterniond quaternionArg(py::handle obj, const std::string& arg) {
  const Eigen::VectorXd v = vectorArg(obj, 4, arg, "a quaternion x, y, z, w");
  const double norm = v.norm();
  if (!(norm > 1e-12))
    throw py::value_error(fmt::format("{}: quaternion (x, y, z, w) has norm {}, expected a rotation", arg, norm));
  return Eigen::Quaterniond(v[3] / norm, v[0] / norm, v[1] / norm, v[2] / norm);
}

Eigen::VectorXd configurationArg(const Model& model, py::handle obj, const std::string& arg) {
  Eigen::VectorXd q = vectorArg(obj, model.nq(), arg, fmt::format("nq of {}", modelLabel(model)));
  std::string why;
  if (!isValidConfiguration(model, q, &why)) throw py::value_error(fmt::format("{}: {}", arg, why));
  return q;
}

std::uint64_t seedArg(py::handle obj, const std::string& arg) {
  if (!isIndex(obj))
    throw py::type_error(fmt::format("{}: expected an integer seed in [0, 2^64 - 1], got {}", arg,
                                     py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>()));
  const py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(obj.ptr()));
  const unsigned long long s = PyLong_AsUnsignedLongLong(v.ptr());
  if (s == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error(fmt::format("{}: {} is out of range: expected an integer in [0, 2^64 - 1]", arg,
                                      py::repr(v).cast<std::string>()));
  }
  return static_cast<std::uint64_t>(s);
}

py::array_t<double> toNumpy(const Eigen::VectorXd& v) {
  py::array_t<double> out(v.size());
  std::copy(v.data(), v.data() + v.size(), out.mutable_data());
  return out;
}

Eigen::Vector4d rotationToQuaternion(const Eigen::Matrix3d& R) {
  Eigen::Quaterniond q(R);
  q.normalize();
  if (q.w() < 0) q.coeffs() = -q.coeffs();
  return q.coeffs();
}

}  // namespace ikbench::python
