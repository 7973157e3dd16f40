// Shared pieces of the Python extension `ikbench._core`: the Python-side
// model and goal types and the numpy argument checks every binding uses.
//
// Conventions of the whole module:
// * Arrays are float64. An argument that is already a C-contiguous float64
//   numpy array is read in place (no copy); anything else convertible (lists,
//   integer arrays, strided views) is converted once with numpy. Complex,
//   string and object data are refused with a TypeError naming the argument.
// * Shapes and finiteness are checked before any C++ work; a ValueError names
//   the argument, the expected shape and, for bad values, the row and column.
// * Quaternions are (x, y, z, w), Eigen's coefficient order.
// * Bodies are given by name (str) or index (int).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ikbench/core/solver_options.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"

namespace ikbench::python {

namespace py = pybind11;

using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// A C-contiguous float64 numpy array (the form every array argument takes).
using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

// A Model as Python holds it: the immutable, shared C++ model plus what the
// file it came from said about it.
struct PyModel {
  std::shared_ptr<const Model> model;
  std::string source;                 // the file, or the generator call
  std::vector<std::string> warnings;  // URDF approximations, BVH notes
  // BVH clips: one configuration per motion frame (frames x nq) and the frame
  // period [s]; empty for other models.
  RowMatrixXd frames;
  double frame_time = 0.0;
};

// A goal as Python builds it, before it meets a model: the body stays a name
// or an index until resolve() looks it up.
struct PyGoal {
  GoalKind kind = GoalKind::kPosition;
  std::variant<int, std::string> body;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  Eigen::Vector3d target_position = Eigen::Vector3d::Zero();
  Eigen::Quaterniond target_quaternion = Eigen::Quaterniond::Identity();  // unit
  double weight = 1.0;
  double orientation_scale = 1.0;

  // The C++ goal on `model`; ValueError for an unknown body name (listing
  // the bodies) or an index out of range. `what` prefixes the message.
  Goal resolve(const Model& model, const std::string& what) const;
};

// ---- bodies ----
// "base_link, shoulder_link, ..." for messages.
std::string bodyList(const Model& model);
// Body index of a str or int argument; ValueError naming `arg`, listing the
// bodies of the model for an unknown name.
int resolveBody(const Model& model, py::handle body, const std::string& arg);
// The model's single effector (a leaf moved by some joint); ValueError naming
// `arg` and listing the candidates when there are several.
int defaultEffector(const Model& model, const std::string& arg);

// ---- arrays ----
// The argument as a C-contiguous float64 array (a view when it already is
// one). TypeError naming `arg` for non-numeric data; MemoryError naming `arg`
// and the bytes when the float64 copy cannot be allocated.
DoubleArray asDoubleArray(py::handle obj, const std::string& arg);
// "(3,)", "(N, 7)", "(5, 6)": a numpy-style shape text.
std::string shapeText(const py::array& a);
// ValueError naming arg, the index and the value if an entry is not finite.
// For 2-D arrays the message names the row ("targets row 12 (column 3) is nan").
void requireFinite(const DoubleArray& a, const std::string& arg);
// A vector of exactly `size` finite entries; ValueError naming arg and the
// expected shape otherwise (`meaning` says what the size is, e.g. "nq of model 'ur5'").
Eigen::VectorXd vectorArg(py::handle obj, Eigen::Index size, const std::string& arg, const std::string& meaning = "");
// A unit quaternion from (x, y, z, w): finite, non-zero norm, normalised.
Eigen::Quaterniond quaternionArg(py::handle obj, const std::string& arg);
// A configuration of `model` (nq, finite, unit quaternions): ValueError with
// the reason otherwise.
Eigen::VectorXd configurationArg(const Model& model, py::handle obj, const std::string& arg);

// A seed: a Python or numpy integer in [0, 2^64 - 1]; TypeError / ValueError
// naming `arg` otherwise.
std::uint64_t seedArg(py::handle obj, const std::string& arg);
// A Python or numpy integer (not a bool or float) in [lo, hi]; TypeError
// naming `arg` for other types, ValueError naming `arg`, the value and the
// range when it is outside (however large: 2**63 is out of range, not a cast
// error).
long long integerArg(py::handle obj, const std::string& arg, long long lo, long long hi);
// repr(obj), shortened to its first characters when long (an integer of
// thousands of digits in a message).
std::string shortRepr(py::handle obj);

// Raises the Python exception `type` (PyExc_MemoryError, PyExc_OSError, ...)
// with `message`.
[[noreturn]] void raise(PyObject* type, const std::string& message);

// SolverOptions from keyword arguments (position_tolerance,
// orientation_tolerance, max_iterations, time_budget_us, stall_iterations,
// stall_relative_improvement, record_trace, seed) on top of `base`. TypeError
// naming `function` and an unknown keyword or a value of the wrong type;
// ValueError with SolverOptions::isValid's message for a value out of range.
SolverOptions solverOptionsArg(const py::kwargs& kwargs, const std::string& function);
// The names solverOptionsArg accepts, comma-separated.
std::string solverOptionNames();

// Copies into a new 1-D numpy array.
py::array_t<double> toNumpy(const Eigen::VectorXd& v);

// (x, y, z, w) of a rotation matrix, with w >= 0 (one of the two equal
// quaternions, chosen so that the result is unique).
Eigen::Vector4d rotationToQuaternion(const Eigen::Matrix3d& R);

// ---- module parts (one per source file) ----
void bindModel(py::module_& m);
void bindGoal(py::module_& m);
void bindSolver(py::module_& m);
void bindBatch(py::module_& m);

}  // namespace ikbench::python
