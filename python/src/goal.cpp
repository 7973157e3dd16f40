// ikbench.Goal: position, orientation and pose goals on a body named by
// name or index, resolved against a model when a solve uses them.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "bindings.h"

namespace ikbench::python {
namespace {

std::variant<int, std::string> bodyArg(py::handle body) {
  if (py::isinstance<py::str>(body)) return body.cast<std::string>();
  if (!py::isinstance<py::bool_>(body) && PyIndex_Check(body.ptr()) && !PyFloat_Check(body.ptr())) {
    const long long max = std::numeric_limits<int>::max();
    try {
      return static_cast<int>(integerArg(body, "body", 0, max));
    } catch (const py::value_error&) {
      throw py::value_error(
          fmt::format("body: index {} is out of range: expected a body index in [0, {}]", shortRepr(body), max));
    }
  }
  throw py::type_error(fmt::format("body: expected a body name (str) or index (int), got {}",
                                   py::str(py::type::handle_of(body).attr("__name__")).cast<std::string>()));
}

double positiveArg(double v, const char* arg) {
  if (!(v > 0.0) || !std::isfinite(v))
    throw py::value_error(fmt::format("{}: {} is out of range: expected a finite number > 0", arg, v));
  return v;
}

std::string bodyText(const PyGoal& g) {
  if (const int* i = std::get_if<int>(&g.body)) return std::to_string(*i);
  return "'" + std::get<std::string>(g.body) + "'";
}

std::string vec(const Eigen::VectorXd& v) {
  std::string s = "(";
  for (Eigen::Index i = 0; i < v.size(); ++i) s += fmt::format("{}{:.6g}", i ? ", " : "", v[i]);
  return s + ")";
}

}  // namespace

void bindGoal(py::module_& m) {
  py::class_<PyGoal>(m, "Goal", R"doc(
A goal on one body (name or index, looked up in the model when a solve uses
the goal): a position target for a point of the body, an orientation target
for the body's frame, or both (pose). Errors are the Euclidean position error
[m] and the rotation angle of R_target R^T [rad]; a solve converges when every
goal is within the tolerances. weight multiplies the goal's residual rows;
orientation_scale [m/rad] its orientation rows. Quaternions are x, y, z, w
and are normalised (a zero quaternion is an error).)doc")
      .def_static(
          "position",
          [](const py::object& body, const py::object& target, const py::object& point, double weight) {
            PyGoal g;
            g.kind = GoalKind::kPosition;
            g.body = bodyArg(body);
            g.target_position = vectorArg(target, 3, "target", "a world position x, y, z [m]");
            g.point = vectorArg(point, 3, "point", "a point in the body frame [m]");
            g.weight = positiveArg(weight, "weight");
            return g;
          },
          py::arg("body"), py::arg("target"), py::arg("point") = py::make_tuple(0.0, 0.0, 0.0), py::arg("weight") = 1.0,
          "Moves `point` (body frame) of `body` to `target` (world) [m].")
      .def_static(
          "orientation",
          [](const py::object& body, const py::object& quaternion, double weight, double orientation_scale) {
            PyGoal g;
            g.kind = GoalKind::kOrientation;
            g.body = bodyArg(body);
            g.target_quaternion = quaternionArg(quaternion, "quaternion_xyzw");
            g.weight = positiveArg(weight, "weight");
            g.orientation_scale = positiveArg(orientation_scale, "orientation_scale");
            return g;
          },
          py::arg("body"), py::arg("quaternion_xyzw"), py::arg("weight") = 1.0, py::arg("orientation_scale") = 1.0,
          "Turns `body`'s frame to the world orientation `quaternion_xyzw`.")
      .def_static(
          "pose",
          [](const py::object& body, const py::object& position, const py::object& quaternion, const py::object& point,
             double weight, double orientation_scale) {
            PyGoal g;
            g.kind = GoalKind::kPose;
            g.body = bodyArg(body);
            g.target_position = vectorArg(position, 3, "position", "a world position x, y, z [m]");
            g.target_quaternion = quaternionArg(quaternion, "quaternion_xyzw");
            g.point = vectorArg(point, 3, "point", "a point in the body frame [m]");
            g.weight = positiveArg(weight, "weight");
            g.orientation_scale = positiveArg(orientation_scale, "orientation_scale");
            return g;
          },
          py::arg("body"), py::arg("position"), py::arg("quaternion_xyzw"),
          py::arg("point") = py::make_tuple(0.0, 0.0, 0.0), py::arg("weight") = 1.0, py::arg("orientation_scale") = 1.0,
          "Position and orientation goal (6 residual rows).")
      .def_property_readonly("kind", [](const PyGoal& g) { return std::string(toString(g.kind)); })
      .def_property_readonly("body",
                             [](const PyGoal& g) -> py::object {
                               if (const int* i = std::get_if<int>(&g.body)) return py::int_(*i);
                               return py::str(std::get<std::string>(g.body));
                             })
      .def_property_readonly("point", [](const PyGoal& g) { return toNumpy(g.point); })
      .def_property_readonly("target_position",
                             [](const PyGoal& g) -> py::object {
                               if (!hasPosition(g.kind)) return py::none();
                               return toNumpy(g.target_position);
                             })
      .def_property_readonly("target_quaternion",
                             [](const PyGoal& g) -> py::object {
                               if (!hasOrientation(g.kind)) return py::none();
                               return toNumpy(g.target_quaternion.coeffs());
                             })
      .def_readonly("weight", &PyGoal::weight)
      .def_readonly("orientation_scale", &PyGoal::orientation_scale)
      .def("__repr__", [](const PyGoal& g) {
        std::string s = fmt::format("<ikbench.Goal {} body={}", toString(g.kind), bodyText(g));
        if (hasPosition(g.kind)) s += " target=" + vec(g.target_position);
        if (hasOrientation(g.kind)) s += " quaternion_xyzw=" + vec(g.target_quaternion.coeffs());
        if (!g.point.isZero()) s += " point=" + vec(g.point);
        if (g.weight != 1.0) s += fmt::format(" weight={:.6g}", g.weight);
        return s + ">";
      });
}

}  // namespace ikbench::python
