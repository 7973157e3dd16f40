"""ikbench analysis library: the one place that reads ikbench results and defines each figure.

Modules:
  results  load and validate a results directory (docs/results-format.md)
  stats    Wilson and bootstrap intervals, quantiles, tests for comparisons
  figures  per family x solver figures (summarize, write_summary), the console tables
  compare  two runs (or two solver specs of one run) compared with tests
  verify   an independent numpy forward kinematics that re-checks every reported solve
  gate     the regression gate behind scripts/regress.py
  plots    the plots and report.html behind scripts/plot.py
Definitions: docs/analysis.md. Command line: `python3 -m ikbench --help`.

With the compiled bindings `ikbench._core` built (python/src, pybind11), `import ikbench` also gives
models, goals, solvers and batch solving (docs/python.md): Model, Goal, Solver, solvers(),
solve_batch(), random_chain(). Without them, `ikbench.bindings_error` says why, and the analysis
library works as ever.
"""

from .results import ResultsError, Run, load  # noqa: F401
from ._bindings import *  # noqa: F401,F403  (compiled bindings, when built)

__version__ = "0.1.0"
