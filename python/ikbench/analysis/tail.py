"""The slow tail of a run's solve times: how far each cell's p99.9 and maximum are from its
median, and what the slowest solves are.

    report = tail_report(run, fraction=0.001)      # every family x solver cell
    report.cells[0].p999_over_median, report.slowest[0].cause

A user with a real-time budget sees a solver's worst solves, not its typical one. For each cell
(family x solver) the report gives the median, p99, p99.9 and maximum of the attempted solves'
times (stats.quantile's definition, as every figure of docs/analysis.md), the ratio of p99.9 to
the median and the solves over a threshold (1 ms by default). It then lists the slowest
`fraction` of the attempted solves of each cell (at least one), each with its problem, status,
attempts and iterations, and the cause the solve's own counts point at:

- ``budget``: the solve ended at its time budget (status time-limit);
- ``restarts``: it took more attempts than the cell's median solve (each attempt restarts the
  iteration from a new start);
- ``iterations``: no more attempts than usual, but at least ITERATIONS_FACTOR times the cell's
  median iterations (a hard target, a slow approach to a singular configuration);
- ``machine``: as many attempts and no more iterations than usual, yet its time per iteration is
  at least MACHINE_FACTOR times the cell's median time per iteration. The work was ordinary and
  the time went elsewhere: the thread was descheduled, a page fault, a cold cache. The run's load
  (run.json `load`) is given beside it;
- ``work``: none of the above (more evaluations per iteration, a slow closed-form stage).

Attempts are `restarts + 1` (solves.csv's `restarts`, docs/results-format.md).
"""

from dataclasses import dataclass, field

import numpy as np

from . import stats
from .figures import attempted_mask

ITERATIONS_FACTOR = 2.0   # iterations over the cell's median that mark a solve its own work made slow
MACHINE_FACTOR = 3.0      # time per iteration over the cell's median that marks a solve the machine slowed
DEFAULT_FRACTION = 0.001  # the slowest 0.1 %
DEFAULT_THRESHOLD_US = 1000.0


@dataclass(frozen=True)
class TailCell:
    family: str
    solver: str
    solves: int            # attempted solves with a finite time
    median_us: float
    p99_us: float
    p999_us: float
    max_us: float
    over_threshold: int    # solves slower than the report's threshold

    @property
    def p999_over_median(self):
        return self.p999_us / self.median_us if self.median_us > 0 else float("nan")

    @property
    def max_over_median(self):
        return self.max_us / self.median_us if self.median_us > 0 else float("nan")


@dataclass(frozen=True)
class SlowSolve:
    family: str
    solver: str
    problem: int
    problem_name: str
    status: str
    time_us: float
    over_median: float     # time / the cell's median time
    attempts: int
    iterations: int
    iterations_over_median: float
    time_per_iteration_over_median: float
    cause: str             # budget, restarts, iterations, machine or work (module docstring)


@dataclass
class TailReport:
    fraction: float
    threshold_us: float
    load: dict = field(default_factory=dict)   # run.json's load record (empty when it has none)
    cells: list = field(default_factory=list)     # [TailCell], in file order
    slowest: list = field(default_factory=list)   # [SlowSolve], per cell slowest first, cells in file order

    @property
    def causes(self):
        """{cause: solves} over the listed slow solves."""
        out = {}
        for s in self.slowest:
            out[s.cause] = out.get(s.cause, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def _cause(status, attempts, attempts_median, its_ratio, tpi_ratio):
    if status == "time-limit":
        return "budget"
    if attempts > attempts_median:
        return "restarts"
    if its_ratio >= ITERATIONS_FACTOR:
        return "iterations"
    if tpi_ratio >= MACHINE_FACTOR:
        return "machine"
    return "work"


def tail_report(run, *, fraction=DEFAULT_FRACTION, threshold_us=DEFAULT_THRESHOLD_US, solvers=None, families=None):
    """The TailReport of a loaded run (ikbench.io.results.load). `solvers` / `families`: keep only
    these cells (None: all). `fraction` in (0, 1]: the share of each cell's solves listed (at least
    one); `threshold_us` > 0."""
    if not (0.0 < fraction <= 1.0):
        raise ValueError(f"fraction {fraction}: expected a share in (0, 1]")
    if not (threshold_us > 0.0 and np.isfinite(threshold_us)):
        raise ValueError(f"threshold {threshold_us}: expected a positive time in microseconds")
    s = run.solves
    keep = attempted_mask(s) & np.isfinite(s["time_us"].to_numpy(dtype=float))
    if solvers is not None:
        keep &= s["solver"].isin(list(solvers)).to_numpy()
    if families is not None:
        keep &= s["family"].isin(list(families)).to_numpy()
    s = s[keep]
    load = run.meta.get("load") if isinstance(getattr(run, "meta", None), dict) else None
    report = TailReport(fraction=fraction, threshold_us=threshold_us, load=load if isinstance(load, dict) else {})
    for (family, solver), g in s.groupby(["family", "solver"], sort=False):
        t = g["time_us"].to_numpy(dtype=float)
        its = g["iterations"].to_numpy(dtype=float)
        attempts = g["restarts"].to_numpy(dtype=float) + 1.0
        ts = np.sort(t)
        med, p99, p999, mx = (stats.quantile(ts, p) for p in (0.5, 0.99, 0.999, 1.0))
        report.cells.append(TailCell(family=family, solver=solver, solves=len(t), median_us=med, p99_us=p99,
                                     p999_us=p999, max_us=mx, over_threshold=int(np.sum(t > threshold_us))))
        its_med = stats.quantile(np.sort(its), 0.5)
        att_med = stats.quantile(np.sort(attempts), 0.5)
        tpi = t / np.maximum(its, 1.0)
        tpi_med = stats.quantile(np.sort(tpi), 0.5)
        k = max(1, int(np.ceil(fraction * len(t))))
        order = np.argsort(-t, kind="stable")[:k]
        for i in order:
            row = g.iloc[i]
            tpi_ratio = tpi[i] / tpi_med if tpi_med > 0 else float("nan")
            its_ratio = its[i] / its_med if its_med > 0 else (float("inf") if its[i] > 0 else float("nan"))
            name = str(row["problem_name"]) if "problem_name" in g else ""
            report.slowest.append(SlowSolve(
                family=family, solver=solver, problem=int(row["problem"]),
                problem_name="" if name in ("", "nan", f"{family}/{int(row['problem'])}") else name,
                status=str(row["status"]), time_us=float(t[i]), over_median=t[i] / med if med > 0 else float("nan"),
                attempts=int(attempts[i]), iterations=int(its[i]),
                iterations_over_median=its_ratio,
                time_per_iteration_over_median=tpi_ratio,
                cause=_cause(row["status"], attempts[i], att_med, its_ratio, tpi_ratio)))
    return report
