"""Per-cell figures of a run in the form the regression gate stores and compares.

A cell is one family x solver spec. `aggregate_cells` takes every figure from
ikbench.analysis.figures.cell_figures (the definitions of docs/analysis.md) and keeps the gate's
conventions: None for "no data", integers where a quantile of integer data falls on an order
statistic (as baselines store them). A `Dataset` is the cells of one run, a combination of
repeated runs, a baseline or a window of the history store, with its run.json; the gate
(ikbench.analysis.gate) and the time unit (ikbench.analysis.timeunit) work on Datasets.
"""

import math

import numpy as np
import pandas as pd

from . import figures, outcomes


def _opt(v, integral=False):
    """A figure for the baseline: None for nan (no data); an int where the quantile is an
    exact order statistic of integer data (as baselines have always stored it)."""
    if v is None:
        return None
    v = float(v)
    if math.isnan(v):
        return None
    if integral and v.is_integer() and math.isfinite(v):
        return int(v)
    return v


def outcome_counts(solves, families=None):
    """{(family, solver): ({outcome: solves}, target kind)} of one run's solves: the outcome
    counts (ikbench.analysis.outcomes; outcomes no solve had are left out) and whether the family's
    targets are known `unreachable` (run.json's families by name) or `reachable`."""
    families = families or {}
    counts = pd.crosstab([solves["family"], solves["solver"]], outcomes.outcomes(solves, families))
    out = {}
    for (family, solver), row in counts.iterrows():
        kind = "unreachable" if families.get(family, {}).get("targets") == "unreachable" else "reachable"
        out[(family, solver)] = ({str(o): int(k) for o, k in row.items() if k}, kind)
    return out


def aggregate_cells(solves, families=None):
    """{(family, solver): figures} of one run's solves, from figures.cell_figures, with each cell's
    outcome counts (ikbench.analysis.outcomes; `families`: run.json's families by name, which say which
    targets are known unreachable; without them every family reads as reachable)."""
    df = figures.cell_figures(solves)
    exact = _exact_iteration_quantiles(solves, len(df))
    counts = outcome_counts(solves, families)
    cells = {}
    for i, r in enumerate(df.itertuples(index=False)):
        outcome, kind = counts[(r.family, r.solver)]
        cells[(r.family, r.solver)] = {
            "dof": int(r.dof), "effectors": int(r.effectors), "goal": str(r.goal),
            "n": int(r.solves), "attempted": int(r.supported), "successes": int(r.successes),
            "limit_violations": int(r.limit_violations), "statuses": r.statuses,
            "iterations_median": _opt(r.iterations_median, exact[0][i]),
            "iterations_p90": _opt(r.iterations_p90, exact[1][i]),
            "position_error_median": _opt(r.position_error_median),
            "orientation_error_median": _opt(r.orientation_error_median),
            "fk_evals_mean": _opt(r.fk_evals_mean),
            "jacobian_evals_mean": _opt(r.jacobian_evals_mean),
            "time_us_median": _opt(r.time_us_median),
            "time_per_eval_median_us": _opt(r.time_per_eval_median_us),
            "targets": kind,
            "outcomes": outcome,
        }
    return cells


def _exact_iteration_quantiles(solves, ngroups):
    """Per cell, whether its median / p90 iterations fall on one order statistic (or between
    equal ones): those are stored as integers."""
    codes, _ = figures._codes(solves, ("family", "solver"))
    att = figures.attempted_mask(solves)
    its = solves["iterations"].to_numpy(dtype=float)[att]
    ca = codes[att]
    out = []
    for p in (0.5, 0.9):
        q = figures.stats.group_quantiles(its, ca, ngroups, [p])[0]
        out.append(np.isfinite(q) & (q == np.floor(q)) & _on_order_statistic(its, ca, ngroups, p))
    return out


def _on_order_statistic(values, codes, ngroups, p):
    order = np.lexsort((values, codes))
    v, c = values[order], codes[order]
    counts = np.bincount(c, minlength=ngroups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    res = np.zeros(ngroups, dtype=bool)
    has = counts > 0
    h = (counts[has] - 1) * p
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, counts[has] - 1)
    res[has] = (h == lo) | (v[starts[has] + lo] == v[starts[has] + hi])
    return res


class Dataset:
    """Aggregated figures of one run or baseline: cells[(family, solver)]."""

    def __init__(self, kind, source, suite, run, cells, repeats=1, unstable=()):
        self.kind, self.source, self.suite, self.run, self.cells = kind, source, suite, run, cells
        self.repeats = repeats          # runs of the same build combined into these figures
        self.unstable = list(unstable)  # cells whose deterministic figures differed between repeats

    @property
    def seed(self):
        """The suite's master seed from run.json (top-level 'seed', 'suite.seed' or 'seeds.suite')."""
        s = self.run.get("seed")
        for parent in ("suite", "seeds"):
            if s is None and isinstance(self.run.get(parent), dict):
                s = self.run[parent].get("seed" if parent == "suite" else "suite")
        return s

    @property
    def threads(self):
        t = self.run.get("threads")
        return t if isinstance(t, int) and not isinstance(t, bool) else None

    def describe(self):
        git = self.run.get("git_revision") or self.run.get("git") or "?"
        if isinstance(git, dict):
            git = git.get("revision") or git.get("commit") or "?"
        reps = f", {self.repeats} repeats" if self.repeats > 1 else ""
        return (f"{self.source} ({self.kind}; suite {self.suite}, seed {self.seed if self.seed is not None else '?'}, "
                f"threads {self.threads or '?'}{reps}, git {git})")
