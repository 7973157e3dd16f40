// ikbench.solve_batch and its BatchResult: many single-effector targets
// solved on C++ threads with the GIL released.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <system_error>
#include <thread>

#include "batch.h"
#include "bindings.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/registry.h"

namespace ikbench::python {
namespace {

constexpr int kMaxThreads = 1024;

struct PyBatchResult {
  std::string spec;
  std::string body;
  std::uint64_t seed = 0;
  int threads = 1;
  double wall_time_s = 0.0;
  long batched = 0;  // rows the SIMD kernel solved
  py::array q, converged, status, iterations, restarts, position_error, orientation_error, time_us, fk_evals,
      jacobian_evals, within_limits, seeds;
};

std::string typeName(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>(); }

// The per-row seeds: given (N,) integers >= 0, or Rng::mix(seed, i).
py::array_t<std::uint64_t> seedsArg(py::handle seeds, std::uint64_t seed, py::ssize_t n) {
  py::array_t<std::uint64_t> out(n);
  std::uint64_t* o = out.mutable_data();
  if (seeds.is_none()) {
    for (py::ssize_t i = 0; i < n; ++i) o[i] = Rng::mix(seed, static_cast<std::uint64_t>(i));
    return out;
  }
  py::module_ np = py::module_::import("numpy");
  py::array a = np.attr("asarray")(seeds);
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw py::type_error(
        fmt::format("seeds: expected integers in [0, 2^64 - 1], got dtype {}", py::str(a.dtype()).cast<std::string>()));
  if (a.ndim() != 1 || a.shape(0) != n)
    throw py::value_error(fmt::format("seeds: expected shape ({},) (one per target), got shape {}", n, shapeText(a)));
  if (kind == 'i' && np.attr("any")(np.attr("less")(a, 0)).cast<bool>())
    throw py::value_error("seeds: expected integers in [0, 2^64 - 1], got a negative seed");
  const auto u = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  std::copy(u.data(), u.data() + n, o);
  return out;
}

PyBatchResult solveBatchPy(const std::shared_ptr<PyModel>& model, const py::object& spec_obj,
                           const py::object& targets_obj, const py::object& q0_obj, const py::object& threads_obj,
                           const py::object& body_obj, const py::object& seed_obj, const py::object& seeds_obj,
                           const py::object& point_obj, double weight, double orientation_scale, bool simd,
                           const py::kwargs& kwargs) {
  if (!model) throw py::type_error("model: expected an ikbench.Model, got None");
  const Model& mdl = *model->model;
  const int nq = mdl.nq();

  BatchInput in;
  in.model = model->model;
  if (py::isinstance<py::str>(spec_obj)) {
    in.spec = Registry::global().parse(spec_obj.cast<std::string>());
  } else if (py::hasattr(spec_obj, "spec") && py::hasattr(spec_obj, "solve")) {
    in.spec = Registry::global().parse(spec_obj.attr("spec").cast<std::string>());  // an ikbench.Solver
  } else {
    throw py::type_error(
        fmt::format("spec: expected a solver spec (str) or an ikbench.Solver, got {}", typeName(spec_obj)));
  }

  // Targets: read in place when C-contiguous float64.
  const DoubleArray targets = asDoubleArray(targets_obj, "targets");
  if (targets.ndim() != 2 || (targets.shape(1) != 7 && targets.shape(1) != 3))
    throw py::value_error(
        fmt::format("targets: expected shape (N, 7) (position + quaternion x, y, z, w) or (N, 3) "
                    "(position), got shape {}",
                    shapeText(targets)));
  requireFinite(targets, "targets");
  const py::ssize_t n = targets.shape(0);
  in.target_cols = static_cast<int>(targets.shape(1));
  in.targets = targets.data();
  in.n = static_cast<long>(n);
  if (in.target_cols == 7) {
    for (py::ssize_t i = 0; i < n; ++i) {
      const double norm = Eigen::Map<const Eigen::Vector4d>(in.targets + 7 * i + 3).norm();
      if (!(norm > 1e-12))
        throw py::value_error(
            fmt::format("targets: row {}: quaternion (columns 3..6, x, y, z, w) has norm {}, "
                        "expected a rotation",
                        i, norm));
    }
  }

  // The goal every row shares.
  Goal& goal = in.goal;
  goal.kind = in.target_cols == 7 ? GoalKind::kPose : GoalKind::kPosition;
  goal.body = body_obj.is_none() ? defaultEffector(mdl, "body") : resolveBody(mdl, body_obj, "body");
  if (!point_obj.is_none()) goal.point = vectorArg(point_obj, 3, "point", "a point in the body frame [m]");
  if (!(weight > 0.0) || !std::isfinite(weight))
    throw py::value_error(fmt::format("weight: {} is out of range: expected a finite number > 0", weight));
  if (!(orientation_scale > 0.0) || !std::isfinite(orientation_scale))
    throw py::value_error(
        fmt::format("orientation_scale: {} is out of range: expected a finite number > 0", orientation_scale));
  goal.weight = weight;
  goal.orientation_scale = orientation_scale;

  // Start configurations: the middle of the limits, one shared (nq,), or one per row (N, nq).
  DoubleArray q0;
  Eigen::VectorXd middle;
  if (q0_obj.is_none()) {
    middle = mdl.middleConfiguration();
    in.q0 = middle.data();
  } else {
    q0 = asDoubleArray(q0_obj, "q0");
    const bool shared = q0.ndim() == 1 && q0.shape(0) == nq;
    const bool per_row = q0.ndim() == 2 && q0.shape(0) == n && q0.shape(1) == nq;
    if (!shared && !per_row)
      throw py::value_error(
          fmt::format("q0: expected shape ({},) or ({}, {}) (nq of model '{}'; one row per "
                      "target), got shape {}",
                      nq, n, nq, mdl.name(), shapeText(q0)));
    in.q0 = q0.data();
    in.q0_per_row = per_row;
    const py::ssize_t rows = per_row ? n : 1;
    for (py::ssize_t i = 0; i < rows; ++i) {
      std::string why;
      if (!isValidConfiguration(mdl, Eigen::Map<const Eigen::VectorXd>(in.q0 + i * nq, nq), &why))
        throw py::value_error(per_row ? fmt::format("q0: row {}: {}", i, why) : fmt::format("q0: {}", why));
    }
  }

  // The batch's default library (ikbench::batchSpec): a spec with restarts
  // and no library key gets one when the batch is large enough for it to
  // pay, unless the caller gave the starts.
  if (q0_obj.is_none()) in.spec = batchSpec(in.spec, static_cast<long>(n));

  in.options = solverOptionsArg(kwargs, "solve_batch");
  if (in.options.record_trace)
    throw py::value_error("solve_batch(): record_trace is not available for batches; use Solver.solve for traces");
  const std::uint64_t seed = seedArg(seed_obj, "seed");
  const py::array_t<std::uint64_t> seeds = seedsArg(seeds_obj, seed, n);
  in.seeds = seeds.data();

  if (!PyIndex_Check(threads_obj.ptr()) || PyFloat_Check(threads_obj.ptr()) || py::isinstance<py::bool_>(threads_obj))
    throw py::type_error(fmt::format("threads: expected an integer, got {}", typeName(threads_obj)));
  long long threads = -1;
  try {
    threads = integerArg(threads_obj, "threads", 0, kMaxThreads);
  } catch (const py::value_error&) {
    throw py::value_error(
        fmt::format("threads: {} is out of range: expected 0 (all cores) to {}", shortRepr(threads_obj), kMaxThreads));
  }
  in.threads = threads > 0 ? static_cast<int>(threads)
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  in.simd = simd;

  // The problem of row 0 passes the same checks as a single solve.
  if (n > 0) {
    Problem p;
    p.model = in.model;
    p.goals = {goal};
    p.goals[0].target_position = Eigen::Map<const Eigen::Vector3d>(in.targets);
    if (in.target_cols == 7)
      p.goals[0].target_orientation = Eigen::Quaterniond(in.targets[6], in.targets[3], in.targets[4], in.targets[5])
                                          .normalized()
                                          .toRotationMatrix();
    p.q0 = Eigen::Map<const Eigen::VectorXd>(in.q0, nq);
    p.name = "solve_batch row 0";
    std::string why;
    if (!p.isValid(&why)) throw py::value_error(why);
  }

  PyBatchResult r;
  r.spec = in.spec.text;
  r.body = mdl.bodyName(goal.body);
  r.seed = seed;
  r.threads = static_cast<int>(std::clamp<long>(in.threads, 1, std::max<long>(1, in.n)));
  py::array_t<double> q_out({n, py::ssize_t{nq}});
  py::array_t<bool> converged(n), within(n);
  py::array_t<std::uint8_t> status(n);
  py::array_t<std::int32_t> iterations(n), restarts(n);
  py::array_t<double> pos_err(n), ori_err(n), time_us(n);
  py::array_t<std::int64_t> fk(n), jac(n);
  BatchOutput out;
  out.q = q_out.mutable_data();
  out.q_stride = nq;
  out.converged = reinterpret_cast<std::uint8_t*>(converged.mutable_data());
  out.within_limits = reinterpret_cast<std::uint8_t*>(within.mutable_data());
  out.status = status.mutable_data();
  out.iterations = iterations.mutable_data();
  out.restarts = restarts.mutable_data();
  out.position_error = pos_err.mutable_data();
  out.orientation_error = ori_err.mutable_data();
  out.time_us = time_us.mutable_data();
  out.fk_evals = fk.mutable_data();
  out.jacobian_evals = jac.mutable_data();

  // Ctrl-C (or any pending signal) stops the batch between solves.
  auto keep_going = [] {
    py::gil_scoped_acquire acquire;
    return PyErr_CheckSignals() == 0;
  };
  const auto t0 = std::chrono::steady_clock::now();
  long solved = 0;
  try {
    py::gil_scoped_release release;
    solved = solveBatch(in, out, keep_going, &r.batched);
  } catch (const std::system_error& e) {
    // No thread of the batch could be started (a process or memory limit): nothing is running.
    raise(PyExc_OSError, fmt::format("solve_batch: cannot start {} threads: {} (threads={}: ask for fewer, or 0 for "
                                     "one per core)",
                                     in.threads, e.code().message(), in.threads));
  }
  r.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (PyErr_Occurred()) throw py::error_already_set();
  if (solved != in.n) throw std::runtime_error(fmt::format("solve_batch: stopped after {} of {} solves", solved, n));

  r.q = q_out;
  r.converged = converged;
  r.within_limits = within;
  r.status = status;
  r.iterations = iterations;
  r.restarts = restarts;
  r.position_error = pos_err;
  r.orientation_error = ori_err;
  r.time_us = time_us;
  r.fk_evals = fk;
  r.jacobian_evals = jac;
  r.seeds = seeds;
  return r;
}

py::tuple statusNames() {
  py::list names;
  for (const auto& [v, n] : kStatusNames.entries) names.append(std::string(n));
  return py::tuple(names);
}

}  // namespace

void bindBatch(py::module_& m) {
  py::class_<PyBatchResult>(m, "BatchResult", R"doc(
The outcome of solve_batch, one entry per target (row i of every array):
q (N, nq), converged and within_limits (N,) bool, status (N,) uint8 codes
(status_names[code] is the name: the legend, equal to ikbench.STATUS_NAMES),
iterations and restarts (int32), position_error [m], orientation_error [rad],
time_us (float64; the C++ solve's wall time), fk_evals and jacobian_evals
(int64), seeds (uint64, the seed of each solve). wall_time_s is the whole
batch's wall time.)doc")
      .def_readonly("spec", &PyBatchResult::spec)
      .def_readonly("body", &PyBatchResult::body)
      .def_readonly("seed", &PyBatchResult::seed)
      .def_readonly("threads", &PyBatchResult::threads)
      .def_readonly("wall_time_s", &PyBatchResult::wall_time_s)
      .def_readonly("batched", &PyBatchResult::batched,
                    "Rows solved by the SIMD batch kernel (the rest: one Solver.solve each).")
      .def_readonly("q", &PyBatchResult::q)
      .def_readonly("converged", &PyBatchResult::converged)
      .def_readonly("within_limits", &PyBatchResult::within_limits)
      .def_readonly("status", &PyBatchResult::status)
      .def_readonly("iterations", &PyBatchResult::iterations)
      .def_readonly("restarts", &PyBatchResult::restarts)
      .def_readonly("position_error", &PyBatchResult::position_error)
      .def_readonly("orientation_error", &PyBatchResult::orientation_error)
      .def_readonly("time_us", &PyBatchResult::time_us)
      .def_readonly("fk_evals", &PyBatchResult::fk_evals)
      .def_readonly("jacobian_evals", &PyBatchResult::jacobian_evals)
      .def_readonly("seeds", &PyBatchResult::seeds)
      .def_property_readonly(
          "status_names", [](const PyBatchResult&) { return statusNames(); },
          "The legend of status: status_names[code].")
      .def_property_readonly(
          "status_text",
          [](const PyBatchResult& r) {
            py::module_ np = py::module_::import("numpy");
            return np.attr("asarray")(statusNames()).attr("__getitem__")(r.status);
          },
          "status as an (N,) array of names.")
      .def_property_readonly(
          "success_rate",
          [](const PyBatchResult& r) {
            const py::ssize_t n = r.converged.size();
            if (n == 0) return std::nan("");
            const auto* c = static_cast<const bool*>(r.converged.data());
            const auto* w = static_cast<const bool*>(r.within_limits.data());
            py::ssize_t ok = 0;
            for (py::ssize_t i = 0; i < n; ++i) ok += (c[i] && w[i]) ? 1 : 0;
            return static_cast<double>(ok) / static_cast<double>(n);
          },
          "Fraction of targets converged and within limits (nan for an empty batch).")
      .def(
          "as_dict",
          [](const PyBatchResult& r) {
            py::dict d;
            d["q"] = r.q;
            d["converged"] = r.converged;
            d["within_limits"] = r.within_limits;
            d["status"] = r.status;
            d["iterations"] = r.iterations;
            d["restarts"] = r.restarts;
            d["position_error"] = r.position_error;
            d["orientation_error"] = r.orientation_error;
            d["time_us"] = r.time_us;
            d["fk_evals"] = r.fk_evals;
            d["jacobian_evals"] = r.jacobian_evals;
            d["seeds"] = r.seeds;
            return d;
          },
          "The arrays by name (the same objects, not copies).")
      .def("__len__", [](const PyBatchResult& r) { return r.converged.size(); })
      .def("__repr__", [](const PyBatchResult& r) {
        const py::ssize_t n = r.converged.size();
        const auto* c = static_cast<const bool*>(r.converged.data());
        py::ssize_t ok = 0;
        for (py::ssize_t i = 0; i < n; ++i) ok += c[i] ? 1 : 0;
        return fmt::format("<ikbench.BatchResult '{}' on '{}': {} of {} converged, {} threads, {:.3f} s>", r.spec,
                           r.body, ok, n, r.threads, r.wall_time_s);
      });

  m.def("solve_batch", &solveBatchPy, py::arg("model"), py::arg("spec"), py::arg("targets"), py::arg("q0") = py::none(),
        py::arg("threads") = 0, py::arg("body") = py::none(), py::arg("seed") = 0, py::kw_only(),
        py::arg("seeds") = py::none(), py::arg("point") = py::none(), py::arg("weight") = 1.0,
        py::arg("orientation_scale") = 1.0, py::arg("simd") = true, R"doc(
Solves one single-effector problem per row of targets on C++ threads, with
the GIL released: targets (N, 7) are pose targets (position [m] + quaternion
x, y, z, w), (N, 3) position targets, for `point` (default the origin) of
`body` (name or index; default the model's single effector). q0: None (the
middle of the limits), (nq,) shared or (N, nq) per row. spec: a spec string
or an ikbench.Solver. threads: 0 = every core. Solve i's seed is
seeds[i] if given, else ikbench.rng_mix(seed, i), so the result does not
depend on the thread count (unless a time budget binds). Keyword options are
the SolverOptions fields, as for Solver.solve (record_trace excepted).
simd (default True): problems the SIMD batch kernel takes (dls,
dls-adaptive:mode=error and the auto preset on a chain of scalar joints; see
solvers/batch.h) are solved four to a vector register, the others one
Solver.solve each (BatchResult.batched counts the former). Solver.solve runs
the same kernel one problem at a time for such problems, so simd=True and
simd=False give bitwise the same answers, and simd=False gives exactly the
answers of Solver.solve in every case. Without q0, a spec with restarts
that names no library (`auto`) runs with a seed library
(library=131072:start=library, the spec in BatchResult.spec) when the batch
has at least 32768 targets, where building the library costs less than it
saves (docs/performance.md); library=0 in the spec opts out. C-contiguous float64 targets and q0
are read in place (no copy). Ctrl-C stops the batch between solves (between
chunks of 4096 rows per thread on the SIMD path; KeyboardInterrupt). Returns
an ikbench.BatchResult.)doc");
}

}  // namespace ikbench::python
