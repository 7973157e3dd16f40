// A batch of single-effector problems solved on C++ threads: the engine
// behind ikbench.solve_batch, free of Python so that it can run with the GIL
// released.
//
// Every input is read in place and every output written in place (row i of
// each array belongs to problem i), so the Python side passes numpy buffers
// straight through. Solve i uses the seed seeds[i] and writes only row i, so
// the outputs do not depend on the thread count or on which thread solved
// which row (as long as no time budget binds).
//
// The rows go to ikbench::solveBatch (solvers/batch.h) in chunks: its thread
// pool, its SIMD kernel for the problems the kernel takes and one
// Solver::solve each for the others (every row with simd off), so the
// bindings have no solve loop of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "ikbench/core/solver_options.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/solvers/batch.h"
#include "ikbench/solvers/solver_spec.h"
#include "ikbench/solvers/summary.h"

namespace ikbench::python {

struct BatchInput {
  std::shared_ptr<const Model> model;
  SolverSpec spec;
  // The goal every problem shares; its target is replaced row by row.
  Goal goal;
  // n rows of 3 (position) or 7 (position + quaternion x, y, z, w; unit
  // norm) doubles, row-major.
  const double* targets = nullptr;
  long n = 0;
  int target_cols = 7;
  // Start configurations: nq doubles shared by every row, or n rows of nq.
  const double* q0 = nullptr;
  bool q0_per_row = false;
  // Solve options; `seed` is replaced by seeds[i] for row i.
  SolverOptions options;
  const std::uint64_t* seeds = nullptr;  // n seeds
  int threads = 1;                       // >= 1
  // Solve through the SIMD batch kernel when it takes the problem
  // (solvers/batch.h: dls / dls-adaptive:mode=error, auto, on a chain of
  // scalar joints); otherwise, and with simd off (BatchOptions::kernel),
  // one Solver::solve per row. The two agree to rounding, not bit for bit
  // (docs/performance.md).
  bool simd = true;
};

// Row i of every array belongs to problem i: ikbench::BatchArrays (q with
// q_stride = nq, status as the Status's index in kStatusNames, ...) and
// whether it converged.
struct BatchOutput : BatchArrays {
  std::uint8_t* converged = nullptr;
};

// Solves every row on in.threads threads (solveBatch's). *batched (if
// given) is set to the rows the SIMD kernel solved. The calling thread calls
// keep_going() (if given) about every 100 ms while the workers solve
// (BatchOptions::keep_going); when it returns false, every worker stops
// after its current solve or lane round. Returns the number of rows solved
// (n unless stopped). Rethrows the first exception a worker threw, after all
// have stopped.
long solveBatch(const BatchInput& in, const BatchOutput& out, const std::function<bool()>& keep_going = {},
                long* batched = nullptr);

}  // namespace ikbench::python
