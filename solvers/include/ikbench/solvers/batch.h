// Batched solving: many IK problems of one model and one solver spec,
// advanced together with SIMD across problems.
//
// What runs batched: a single goal (pose or position) on a chain of
// revolute / prismatic joints (every DOF of the model on the path to the
// goal's body, unit DOF weights, rows <= DOF), solved by the damped
// least-squares step of `dls` or `dls-adaptive:mode=error` (the `auto`
// preset) with the geometric Jacobian, either limit mode, any max_step, and
// the common keys restarts, time_budget_us, max_iterations, stall_iterations and
// stall_relative_improvement. Every other problem or spec is handed to the scalar
// Solver of the same spec, one problem at a time, and its answer is exactly
// the scalar one (BatchResult::batched says which path
// answered).
//
// Method: the iteration of jacobian_dls.cpp (Buss 2004, eq. 11; Sugihara 2011
// error damping; Baerlocher & Boulic 2004 freeze loop; Buss's max-step clamp)
// and the attempt / restart logic of Solver::solve, per problem. Problems are
// laid out structure-of-arrays, four to a SIMD register, and advanced lane by
// lane: a lane whose problem has finished is refilled at once with the next
// problem, so a slow problem does not hold the others. Forward kinematics,
// the pose Jacobian, the damped 6x6 normal equations (L D L^T), the step, the
// clamp and the stopping rules run in one kernel, compiled twice: with AVX2 +
// FMA (picked at run time when the CPU has them) and for plain SSE2. Both
// give the same answers to rounding (see docs/performance.md for measured
// differences to the scalar path).
//
// Determinism: each problem's result depends only on the problem, its seed,
// the spec and the options, never on its lane, the batch size or the thread
// count (lanes never mix; restarts draw from the problem's own stream,
// seeded exactly as Solver::solve seeds it). A binding time budget
// (time_budget_us) is the exception, as for the scalar path. In a batch a
// problem's time is its share of the wall time while it occupies a lane:
// each round of kernel steps is divided equally among the lanes busy in it.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ikbench/core/solver_options.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/pose.h"
#include "ikbench/solvers/solver_spec.h"
#include "ikbench/solvers/summary.h"

namespace ikbench {

// Which compiled kernel the batch runs.
enum class BatchIsa {
  kAuto,      // AVX2 + FMA when the CPU has both, else the portable kernel;
              // the environment variable IKBENCH_BATCH_ISA=portable forces
              // the portable one
  kPortable,  // the SSE2 kernel (the build's baseline; no FMA)
  kAvx2,      // AVX2 + FMA; falls back to kPortable if the CPU lacks them
};

struct BatchOptions {
  // Tolerances, max_iterations, stall rule and seed, as for Solver::solve.
  // record_trace is not supported by the batch kernel: with it set, every
  // problem goes to the scalar path.
  SolverOptions solve;
  // Seed per problem (SolverOptions::seed of that problem's scalar solve);
  // empty: every problem uses solve.seed. Otherwise one per problem.
  std::vector<std::uint64_t> seeds;
  // Worker threads (each runs its own lanes); results do not depend on it.
  int threads = 1;
  // Problems in flight per thread: a multiple of 4 in [4, kMaxLanes].
  int lanes = 16;
  static constexpr int kMaxLanes = 256;
  BatchIsa isa = BatchIsa::kAuto;
  // false: no problem goes through the kernel; each is one Solver::solve of
  // the spec (the bindings' simd=False), on the batch's threads.
  bool kernel = true;
  // When given, the calling thread calls it about every 100 ms while the
  // workers solve (and once after they end); when it returns false, every
  // worker stops after its current solve or lane round and solveBatch
  // throws BatchStopped, unless every problem was answered by then.
  std::function<bool()> keep_going;
};

// Thrown by solveBatch when BatchOptions::keep_going stopped it: `solved`
// problems were answered (their results or rows written), the others not.
struct BatchStopped : std::runtime_error {
  BatchStopped(long solved, long problems);
  long solved = 0;
};

struct BatchResult {
  Eigen::VectorXd q;  // the answer (nq), inside the limits
  // status, message, iterations (all attempts), restarts, final errors by
  // FK of q, fk_evals, jacobian_evals, within_limits; time_us is the
  // problem's share of the rounds it spent in a lane (the time a budget
  // counts). trace and solutions stay empty.
  Summary summary;
  bool batched = false;  // false: answered by the scalar Solver
};

// Counters of one solveBatch call.
struct BatchStats {
  long problems = 0;
  long batched = 0;           // problems through the SIMD kernel
  long lane_steps = 0;        // lane-iterations run (4 per group per kernel step)
  long busy_lane_steps = 0;   // of which occupied by a problem
  long kernel_steps = 0;      // calls of the kernel over one thread's lanes
  long solved = 0;            // problems answered (all, unless BatchStopped)
  std::string isa;            // "avx2" or "portable"
  double fill() const { return lane_steps > 0 ? static_cast<double>(busy_lane_steps) / lane_steps : 0.0; }
};

// The ISA that BatchIsa::kAuto selects on this machine ("avx2" or "portable").
std::string batchIsaName(BatchIsa isa = BatchIsa::kAuto);

// Why a problem (with this spec and these options) would go to the scalar
// path; empty when the batch kernel takes it.
std::string batchFallbackReason(const Problem& problem, const SolverSpec& spec, const SolverOptions& options);

// Solves every problem with the spec; results in the problems' order.
// Problems may use different models: they are grouped by model internally
// (lanes of one kernel step share the model). Throws SpecError for a bad
// spec and std::invalid_argument for bad options (seeds size, lanes,
// threads); a bad problem gets status invalid-input, as from Solver::solve.
std::vector<BatchResult> solveBatch(const std::vector<Problem>& problems, const SolverSpec& spec,
                                    const BatchOptions& options = {}, BatchStats* stats = nullptr);
std::vector<BatchResult> solveBatch(const std::vector<Problem>& problems, std::string_view spec,
                                    const BatchOptions& options = {}, BatchStats* stats = nullptr);

// The outcomes of a batch written in place, one row per problem (structure
// of arrays), for callers that keep many results (solve_batch's numpy
// arrays, `ikbench throughput`): no Summary, string or VectorXd per
// problem. Row i is problem i's, with the values BatchResult would hold.
// Null pointers are fields not wanted (not written).
struct BatchArrays {
  double* q = nullptr;  // problems x q_stride; row i: problem i's answer (its model's nq values)
  int q_stride = 0;     // >= every problem's nq when q is given
  // Status as its index in kStatusNames (= the enumerator's value).
  std::uint8_t* status = nullptr;
  std::int32_t* iterations = nullptr;
  std::int32_t* restarts = nullptr;
  double* position_error = nullptr;
  double* orientation_error = nullptr;
  double* time_us = nullptr;
  std::int64_t* fk_evals = nullptr;
  std::int64_t* jacobian_evals = nullptr;
  std::uint8_t* within_limits = nullptr;
  std::uint8_t* batched = nullptr;  // 1: the SIMD kernel answered
  // The same arrays from row `row` on (for a batch solved in parts).
  BatchArrays from(std::size_t row) const;
};
// solveBatch into arrays: the same solves, the same answers and the same
// exceptions; std::invalid_argument when q is given and a problem's nq
// exceeds q_stride.
void solveBatch(const std::vector<Problem>& problems, const SolverSpec& spec, const BatchOptions& options,
                const BatchArrays& out, BatchStats* stats = nullptr);

// The default seed library of a batch. A spec that the batch kernel runs
// with restarts (`auto`, dls / dls-adaptive with restarts > 0) and that says
// nothing of a library (neither `library` nor `start`) gets
// `library=kBatchLibraryEntries:start=library` when the batch holds at least
// kBatchLibraryMinProblems problems of one model and goal: past that count
// the library's build (once per model and goal) costs less than it saves
// (docs/performance.md, "The batch's default library", has the measured
// break-even). The rule reads only the spec and the batch's size, never the
// thread count or the process's cache, so a problem's answer still depends
// only on the batch and its seed. Returns the spec to run (the given one
// when the rule does not apply).
inline constexpr int kBatchLibraryEntries = 131072;
inline constexpr long kBatchLibraryMinProblems = 32768;
SolverSpec batchSpec(const SolverSpec& spec, long problems_per_model);
// The largest number of problems sharing one model and goal structure (the
// count the rule reads), over a batch of problems.
long problemsPerModel(const std::vector<Problem>& problems);

// One model, one goal (body, point, kind, weights; its targets ignored),
// many targets: targets[i] is world_T_target of problem i (only p is used
// for a position goal); starts holds one start configuration (nq) for all
// problems, or one per problem.
std::vector<BatchResult> solveBatch(const std::shared_ptr<const Model>& model, const Goal& goal,
                                    const std::vector<Pose3d>& targets, const std::vector<Eigen::VectorXd>& starts,
                                    std::string_view spec, const BatchOptions& options = {},
                                    BatchStats* stats = nullptr);

// The compiled chain kernel's evaluation of one problem at a configuration:
// forward kinematics, goal errors, the weighted residual and the weighted
// geometric Jacobian, as a kernel step computes them for a fresh attempt.
// `packed` picks the one-problem step (packed within the problem, what
// Solver::solve runs for a solve with one attempt) or the lane step (four
// problems per vector, solveBatch's); the two give bitwise the same values.
// For benchmarks (bench_kinematics' KernelFkErrorsJacobian: the cost of FK +
// errors + Jacobian in the kernel) and for checking the kernel against the
// model's own FK, goal errors and goalJacobian.
class KernelEvaluator {
 public:
  // Throws std::invalid_argument naming why when the kernel does not take
  // the problem (batchFallbackReason's reasons).
  explicit KernelEvaluator(const Problem& problem, bool packed = true, BatchIsa isa = BatchIsa::kAuto);
  ~KernelEvaluator();
  KernelEvaluator(const KernelEvaluator&) = delete;
  KernelEvaluator& operator=(const KernelEvaluator&) = delete;

  // Evaluates at q (the model's configuration, nq; not clamped).
  void evaluate(const Eigen::VectorXd& q);
  double positionError() const;
  double orientationError() const;
  Eigen::VectorXd residual() const;  // goal rows (3 or 6), target - current, weighted
  Eigen::MatrixXd jacobian() const;  // goal rows x nv; zero columns off the chain

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ikbench
