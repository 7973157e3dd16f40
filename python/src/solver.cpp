// ikbench.Solver (a registry spec), its solve() and Summary, the solve
// options as keyword arguments, and ikbench.solvers() (the registry's
// backends, parameters and presets, as `ikbench list solvers --format json`).
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>

#include "bindings.h"
#include "ikbench/solvers/registry.h"

namespace ikbench::python {
namespace {

enum class OptionType { kReal, kInteger, kBool, kSeed };
struct OptionField {
  const char* name;
  OptionType type;
};
constexpr OptionField kOptionFields[] = {
    {"position_tolerance", OptionType::kReal},  {"orientation_tolerance", OptionType::kReal},
    {"max_iterations", OptionType::kInteger},   {"time_budget_us", OptionType::kReal},
    {"stall_iterations", OptionType::kInteger}, {"stall_relative_improvement", OptionType::kReal},
    {"record_trace", OptionType::kBool},        {"seed", OptionType::kSeed},
};

std::string typeName(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>(); }

double realOption(py::handle v, const std::string& name) {
  if (py::isinstance<py::bool_>(v) || py::isinstance<py::str>(v) || !PyNumber_Check(v.ptr()))
    throw py::type_error(fmt::format("{}: expected a number, got {}", name, typeName(v)));
  PyObject* f = PyNumber_Float(v.ptr());
  if (!f) {
    const bool overflow = PyErr_ExceptionMatches(PyExc_OverflowError);  // an integer beyond a double
    PyErr_Clear();
    if (overflow)
      throw py::value_error(fmt::format("{}: {} is out of range: too large for a double", name, shortRepr(v)));
    throw py::type_error(fmt::format("{}: expected a number, got {}", name, typeName(v)));
  }
  return py::reinterpret_steal<py::float_>(f).cast<double>();
}

// An iteration count in [lowest, SolverOptions::kMaxIterationsLimit]: one
// beyond an int (10**20) is a ValueError naming the option and its range;
// SolverOptions::isValid words the others.
int integerOption(py::handle v, const std::string& name, int lowest) {
  if (py::isinstance<py::bool_>(v) || PyFloat_Check(v.ptr()) || !PyIndex_Check(v.ptr()))
    throw py::type_error(fmt::format("{}: expected an integer, got {} {}", name, typeName(v), shortRepr(v)));
  try {
    return static_cast<int>(integerArg(v, name, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
  } catch (const py::value_error&) {
    throw py::value_error(fmt::format("{}: {} is out of range: expected an integer in [{}, {}]", name, shortRepr(v),
                                      lowest, SolverOptions::kMaxIterationsLimit));
  }
}

}  // namespace

std::string solverOptionNames() {
  std::string out;
  for (const OptionField& f : kOptionFields) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

SolverOptions solverOptionsArg(const py::kwargs& kwargs, const std::string& function) {
  SolverOptions o;
  for (const auto& [key_obj, value] : kwargs) {
    const std::string key = key_obj.cast<std::string>();
    const OptionField* field = nullptr;
    for (const OptionField& f : kOptionFields)
      if (key == f.name) field = &f;
    if (!field)
      throw py::type_error(fmt::format("{}() got an unexpected keyword argument '{}' (solver options: {})", function,
                                       key, solverOptionNames()));
    if (key == "position_tolerance") o.position_tolerance = realOption(value, key);
    if (key == "orientation_tolerance") o.orientation_tolerance = realOption(value, key);
    if (key == "max_iterations") o.max_iterations = integerOption(value, key, 1);
    if (key == "time_budget_us") o.time_budget_us = realOption(value, key);
    if (key == "stall_iterations") o.stall_iterations = integerOption(value, key, 0);
    if (key == "stall_relative_improvement") o.stall_relative_improvement = realOption(value, key);
    if (key == "record_trace") {
      if (!py::isinstance<py::bool_>(value))
        throw py::type_error(fmt::format("record_trace: expected True or False, got {}", typeName(value)));
      o.record_trace = value.cast<bool>();
    }
    if (key == "seed") o.seed = seedArg(value, "seed");
  }
  std::string why;
  if (!o.isValid(&why)) throw py::value_error(fmt::format("{}(): {}", function, why));
  return o;
}

namespace {

// A registry solver with the lock that serialises its solves (an instance
// keeps its workspace between calls, so one instance runs one solve at a time).
struct PySolver {
  SolverSpec spec;
  std::unique_ptr<Solver> solver;
  std::mutex mutex;
};

struct PySummary {
  std::string spec;
  std::string status;
  std::string message;
  bool converged = false;
  bool within_limits = false;
  int iterations = 0;
  int restarts = 0;
  double position_error = 0.0;
  double orientation_error = 0.0;
  double time_us = 0.0;
  long fk_evals = 0;
  long jacobian_evals = 0;
  py::array_t<double> q;
  py::list solutions;
  py::object trace = py::none();
};

// The trace as a numpy structured array, one record per iteration (0 = the
// start configuration), with the configuration reached as a subarray q (nq).
py::object traceArray(const std::vector<IterationRecord>& trace, int nq) {
  py::module_ np = py::module_::import("numpy");
  py::list fields;
  fields.append(py::make_tuple("iteration", "<i8"));
  for (const char* f : {"position_error", "orientation_error", "step_norm", "damping", "elapsed_us"})
    fields.append(py::make_tuple(f, "<f8"));
  fields.append(py::make_tuple("q", "<f8", py::make_tuple(nq)));
  py::object dtype = np.attr("dtype")(fields);
  py::array out = np.attr("zeros")(trace.size(), dtype);
  py::dict offsets = dtype.attr("fields");
  auto offset = [&](const char* name) { return offsets[name].cast<py::tuple>()[1].cast<py::ssize_t>(); };
  const py::ssize_t o_it = offset("iteration"), o_pe = offset("position_error"), o_oe = offset("orientation_error"),
                    o_sn = offset("step_norm"), o_d = offset("damping"), o_t = offset("elapsed_us"), o_q = offset("q");
  const py::ssize_t item = dtype.attr("itemsize").cast<py::ssize_t>();
  auto* base = static_cast<char*>(out.mutable_data());
  for (size_t i = 0; i < trace.size(); ++i) {
    char* rec = base + static_cast<py::ssize_t>(i) * item;
    const IterationRecord& r = trace[i];
    const std::int64_t it = r.iteration;
    std::memcpy(rec + o_it, &it, sizeof it);
    std::memcpy(rec + o_pe, &r.position_error, sizeof(double));
    std::memcpy(rec + o_oe, &r.orientation_error, sizeof(double));
    std::memcpy(rec + o_sn, &r.step_norm, sizeof(double));
    std::memcpy(rec + o_d, &r.damping, sizeof(double));
    std::memcpy(rec + o_t, &r.elapsed_us, sizeof(double));
    if (r.q.size() == nq) std::memcpy(rec + o_q, r.q.data(), sizeof(double) * nq);
  }
  return std::move(out);
}

std::vector<Goal> goalsArg(const Model& model, py::handle goals) {
  std::vector<Goal> out;
  if (py::isinstance<PyGoal>(goals)) {
    out.push_back(goals.cast<const PyGoal&>().resolve(model, "goal"));
    return out;
  }
  if (py::isinstance<py::str>(goals) || !py::isinstance<py::sequence>(goals))
    throw py::type_error(fmt::format("goals: expected an ikbench.Goal or a sequence of them, got {}", typeName(goals)));
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(goals);
  if (seq.size() == 0) throw py::value_error("goals: expected at least one ikbench.Goal, got an empty sequence");
  for (size_t i = 0; i < seq.size(); ++i) {
    const py::object g = seq[i];
    if (!py::isinstance<PyGoal>(g))
      throw py::type_error(fmt::format("goals[{}]: expected an ikbench.Goal, got {}", i, typeName(g)));
    out.push_back(g.cast<const PyGoal&>().resolve(model, fmt::format("goals[{}]", i)));
  }
  return out;
}

PySummary solve(PySolver& self, const std::shared_ptr<PyModel>& model, const py::object& goals, const py::object& q0,
                const py::kwargs& kwargs) {
  if (!model) throw py::type_error("model: expected an ikbench.Model, got None");
  const SolverOptions options = solverOptionsArg(kwargs, "solve");
  Problem problem;
  problem.model = model->model;
  problem.name = "python";
  problem.goals = goalsArg(*model->model, goals);
  problem.q0 = q0.is_none() ? model->model->middleConfiguration() : configurationArg(*model->model, q0, "q0");
  std::string why;
  if (!problem.isValid(&why)) throw py::value_error(why);

  Eigen::VectorXd q = problem.q0;
  Summary s;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    s = self.solver->solve(problem, q, options);
  }
  PySummary out;
  out.spec = self.spec.text;
  out.status = std::string(toString(s.status));
  out.message = s.message;
  out.converged = s.converged();
  out.within_limits = s.within_limits;
  out.iterations = s.iterations;
  out.restarts = s.restarts;
  out.position_error = s.position_error;
  out.orientation_error = s.orientation_error;
  out.time_us = s.time_us;
  out.fk_evals = s.fk_evals;
  out.jacobian_evals = s.jacobian_evals;
  out.q = toNumpy(q);
  for (const Eigen::VectorXd& sol : s.solutions) out.solutions.append(toNumpy(sol));
  if (options.record_trace) out.trace = traceArray(s.trace, model->model->nq());
  return out;
}

py::dict paramDict(const ParamInfo& p) {
  py::dict d;
  d["name"] = p.name;
  d["type"] = std::string(kParamTypeNames.name(p.type));
  d["default"] = p.default_value;
  d["range"] = p.rangeText();
  d["unit"] = p.unit;
  d["help"] = p.help;
  return d;
}

}  // namespace

void bindSolver(py::module_& m) {
  py::class_<PySummary>(m, "Summary", R"doc(
What a solve reports. status is one of ikbench.STATUS_NAMES; converged is
decided by forward kinematics of the returned q alone (every goal within the
tolerances). position_error [m] and orientation_error [rad] are the largest
over the goals. solutions lists every distinct converged configuration when
the backend returned several (closed-form backends, solutions=all), else is
empty. trace is None unless the solve ran with record_trace=True; then a
numpy structured array with one record per iteration (fields iteration,
position_error, orientation_error, step_norm, damping, elapsed_us, and the
configuration q).)doc")
      .def_readonly("spec", &PySummary::spec)
      .def_readonly("status", &PySummary::status)
      .def_readonly("message", &PySummary::message)
      .def_readonly("converged", &PySummary::converged)
      .def_readonly("within_limits", &PySummary::within_limits)
      .def_readonly("iterations", &PySummary::iterations)
      .def_readonly("restarts", &PySummary::restarts)
      .def_readonly("position_error", &PySummary::position_error)
      .def_readonly("orientation_error", &PySummary::orientation_error)
      .def_readonly("time_us", &PySummary::time_us)
      .def_readonly("fk_evals", &PySummary::fk_evals)
      .def_readonly("jacobian_evals", &PySummary::jacobian_evals)
      .def_readonly("q", &PySummary::q)
      .def_readonly("solutions", &PySummary::solutions)
      .def_readonly("trace", &PySummary::trace)
      .def("__bool__", [](const PySummary& s) { return s.converged; })
      .def("__repr__", [](const PySummary& s) {
        return fmt::format(
            "<ikbench.Summary {} '{}': {} iterations, {} restarts, position_error={:.3g} m, "
            "orientation_error={:.3g} rad, {:.1f} us{}>",
            s.status, s.spec, s.iterations, s.restarts, s.position_error, s.orientation_error, s.time_us,
            s.message.empty() ? "" : ": " + s.message);
      });

  py::class_<PySolver, std::shared_ptr<PySolver>>(m, "Solver", R"doc(
A solver from a registry spec, 'name[:key=value]...' (e.g. 'dls',
'dls:lambda=0.05:max_step=0.5', 'auto'; see ikbench.solvers()). A bad spec
raises ValueError with the registry's message. A Solver keeps its workspace
between solves and runs one solve at a time (concurrent calls on one object
wait for each other); use one Solver per thread to solve in parallel.)doc")
      .def(py::init([](const std::string& spec) {
             auto out = std::make_shared<PySolver>();
             out->spec = Registry::global().parse(spec);
             out->solver = Registry::global().create(out->spec);
             return out;
           }),
           py::arg("spec"))
      .def_property_readonly("spec", [](const PySolver& s) { return s.spec.text; })
      .def_property_readonly(
          "name", [](const PySolver& s) { return s.spec.name; }, "The backend.")
      .def_property_readonly(
          "preset", [](const PySolver& s) { return s.spec.preset; }, "The preset the spec named ('auto'), else ''.")
      .def_property_readonly(
          "parameters",
          [](const PySolver& s) {
            py::dict d;
            for (const auto& [k, v] : s.spec.parameters) d[py::str(k)] = v;
            return d;
          },
          "Every parameter of the backend as canonical spec text, defaults filled in.")
      .def_property_readonly(
          "common",
          [](const PySolver& s) {
            py::dict d;
            d["restarts"] = s.spec.common.restarts;
            d["time_budget_us"] = s.spec.common.time_budget_us ? py::object(py::float_(*s.spec.common.time_budget_us)) : py::none();
            d["max_iterations"] = s.spec.common.max_iterations ? py::object(py::int_(*s.spec.common.max_iterations)) : py::none();
            d["stall_iterations"] = s.spec.common.stall_iterations ? py::object(py::int_(*s.spec.common.stall_iterations)) : py::none();
            d["stall_relative_improvement"] = s.spec.common.stall_relative_improvement
                                         ? py::object(py::float_(*s.spec.common.stall_relative_improvement))
                                         : py::none();
            d["solutions"] = std::string(kSolutionsModeNames.name(s.spec.common.solutions));
            return d;
          },
          "The keys every solver accepts (restarts, time_budget_us, max_iterations, stall_iterations, stall_relative_improvement, "
          "solutions); None = the solve's option.")
      .def("solve", &solve, py::arg("model"), py::arg("goals"), py::arg("q0") = py::none(), R"doc(
Solves goals (an ikbench.Goal or a list) on model from q0 (nq; default: the
middle of the limits). Keyword options are SolverOptions fields:
position_tolerance [m] and orientation_tolerance [rad] (1e-5), max_iterations
(500 per attempt), time_budget_us (0 = none), stall_iterations (20),
stall_relative_improvement (1e-4), record_trace (False), seed (0); the spec's
own max_iterations / time_budget_us / stall_iterations / stall_relative_improvement override them.
The GIL is released while solving.
Returns an ikbench.Summary.)doc")
      .def("__repr__", [](const PySolver& s) { return fmt::format("<ikbench.Solver '{}'>", s.spec.text); });

  m.def(
      "solvers",
      [] {
        py::list backends;
        for (const SolverInfo& info : Registry::global().list()) {
          py::dict b;
          b["name"] = info.name;
          b["description"] = info.description;
          py::list params;
          for (const ParamInfo& p : info.params) params.append(paramDict(p));
          b["parameters"] = params;
          backends.append(b);
        }
        py::list common;
        for (const ParamInfo& p : Registry::commonParams()) common.append(paramDict(p));
        py::list presets;
        for (const PresetInfo& p : Registry::global().presets()) {
          py::dict d;
          d["name"] = p.name;
          d["spec"] = p.spec;
          d["description"] = p.description;
          presets.append(d);
        }
        py::dict out;
        out["solvers"] = backends;
        out["common_parameters"] = common;
        out["presets"] = presets;
        return out;
      },
      R"doc(
The registry: {'solvers': [{'name', 'description', 'parameters': [{'name',
'type', 'default', 'range', 'unit', 'help'}, ...]}, ...], 'common_parameters':
[...], 'presets': [{'name', 'spec', 'description'}, ...]}, the same record
that `ikbench list solvers --format json` prints (values as spec text).)doc");

  py::list status_names;
  for (const auto& [v, n] : kStatusNames.entries) status_names.append(std::string(n));
  m.attr("STATUS_NAMES") = py::tuple(status_names);
  py::list option_names;
  for (const OptionField& f : kOptionFields) option_names.append(f.name);
  m.attr("SOLVER_OPTIONS") = py::tuple(option_names);
}

}  // namespace ikbench::python
