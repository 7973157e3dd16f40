// A backend that answers several problems in one exchange (an external
// solver process with `batch=N`, docs/external-solvers.md): before solving a
// unit's problems one by one, the run engine hands it the next batch; the
// backend answers them all at once and keeps the answers, and each solve of
// those problems then takes its kept answer, still verified by the verdict of
// Solver::solve. The wall time of the exchange is shared out equally over the
// batch's problems (time_us), since no single problem's time exists apart.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "ikbench/core/solver_options.h"
#include "ikbench/kinematics/goal.h"

namespace ikbench::harness {

class BatchingSolver {
 public:
  virtual ~BatchingSolver() = default;
  // Problems per exchange; 1: the engine solves one by one as for any backend.
  virtual int batchSize() const = 0;
  // Answers problems[i] from starts[i] under options[i] and keeps the answers
  // for the solves that follow.
  virtual void prefetch(const std::vector<const Problem*>& problems, const std::vector<Eigen::VectorXd>& starts,
                        const std::vector<SolverOptions>& options) = 0;
};

}  // namespace ikbench::harness
