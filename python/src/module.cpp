// The compiled part of the ikbench Python package: `ikbench._core`.
// ikbench/_bindings.py re-exports it; the package imports that module.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "ikbench/scenarios/suite.h"

PYBIND11_MODULE(_core, m) {
  namespace py = pybind11;
  m.doc() = R"doc(
ikbench's kinematic models and inverse-kinematics solvers: Model (URDF, BVH,
random chains), Goal, Solver (registry specs, e.g. 'auto' or
'dls:lambda=0.05'), solvers() (the registry), solve_batch (many targets on
C++ threads). Errors from C++ arrive as ValueError (bad files, specs,
arguments), TypeError (wrong argument types) or FileNotFoundError, carrying
the C++ message.)doc";
  // A malformed URDF, BVH or suite file is bad input, like a bad spec
  // (ikbench::SpecError and ModelError derive from std::invalid_argument,
  // which pybind11 already turns into ValueError).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ikbench::SuiteError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  ikbench::python::bindModel(m);
  ikbench::python::bindGoal(m);
  ikbench::python::bindSolver(m);
  ikbench::python::bindBatch(m);
}
