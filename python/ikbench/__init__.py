"""ikbench analysis library: the one place that reads ikbench results and defines each figure.

Layers (docs/architecture.md), each importing only those below it:
  ikbench.cli       the command line (`python3 -m ikbench`), with gate and history as subcommand groups
  ikbench.render    console text, tables, LaTeX, plots, report.html, the history site, the doc tables
  ikbench.analysis  figures, statistics, verify (an independent numpy FK), gate, compare, tune, sweeps,
                    history series and change points: returns data
  ikbench.io        the results reader (ikbench.io.results.load), safe reads and writes, the history store
Definitions: docs/analysis.md. Command line: `python3 -m ikbench --help`.

With the compiled bindings `ikbench._core` built (python/src, pybind11), `import ikbench` also gives
models, goals, solvers and batch solving (docs/python.md): Model, Goal, Solver, solvers(),
solve_batch(), random_chain(). Without them, `ikbench.bindings_error` says why, and the analysis
library works as ever.
"""

from .io.results import ResultsError, Run, load  # noqa: F401
from ._bindings import *  # noqa: F401,F403  (compiled bindings, when built)

__version__ = "0.1.0"
