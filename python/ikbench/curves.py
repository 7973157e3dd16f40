"""Curves of a run: convergence bands over the traced solves, time ECDFs and success against
DOF (docs/analysis.md "Curves"). The matplotlib plots (ikbench.plots) and report.html
(ikbench.report) draw these; nothing else computes them.

    bands = convergence(run.traces)                   # per family x solver: median / IQR of the error
    ecdf = time_ecdf(run.solves)                      # per family x solver: sorted solve times
    dof = dof_sweeps(run.solves)                      # success vs DOF of families that form a sweep

Convergence: each traced solve is a step function of the error over iterations and over time
(the last record at or before a point; before the first record, the first; after the solve
stopped, its final error: a solve that stopped keeps its final error). On each grid point the
25th, 50th and 75th percentiles over the cell's traced solves are taken (numpy.percentile,
linear), errors floored at ERROR_FLOOR for log axes.
"""

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import figures

ERROR_FLOOR = 1e-16   # exact zeros are drawn at this value on log axes
TIME_FLOOR_US = 0.1   # the time grid starts at the first record's time, at least this
ERROR_KINDS = (("position", "position_error"), ("orientation", "orientation_error"))


def step_values(xs, ys, grid):
    """Value of the step function through (xs, ys) at each grid point: the last record at or
    before it, the first record before the first, and the final value after the solve stopped."""
    idx = np.searchsorted(xs, grid, side="right") - 1
    return ys[np.clip(idx, 0, len(ys) - 1)]


def time_column(traces):
    """The honest time axis of a trace: `time_us` (format version 2), else the recording pass's
    `elapsed_us` (version 1)."""
    if "time_us" in traces.columns and traces["time_us"].notna().any():
        return "time_us"
    return "elapsed_us"


def traced_solves(traces, time_col=None):
    """{(family, solver): [array (records, 4) of (iteration, position error, orientation error,
    time) per traced solve, in problem order]}, families and solvers in file order."""
    out = {}
    if traces is None or traces.empty:
        return out
    tcol = time_col or time_column(traces)
    tr = traces.sort_values(["family", "solver", "problem", "iteration"], kind="stable")
    cols = tr[["iteration", "position_error", "orientation_error", tcol]].to_numpy(dtype=float)
    keys = tr[["family", "solver", "problem"]].to_numpy()
    change = np.flatnonzero(np.any(keys[1:] != keys[:-1], axis=1)) + 1
    starts = np.concatenate(([0], change))
    ends = np.concatenate((change, [len(tr)]))
    order = {}
    for i, (f, s) in enumerate(zip(traces["family"], traces["solver"])):
        order.setdefault((f, s), i)
    for s, e in zip(starts, ends):
        out.setdefault((keys[s, 0], keys[s, 1]), []).append(cols[s:e])
    return dict(sorted(out.items(), key=lambda kv: order[kv[0]]))


def family_error_kinds(seqs):
    """The error kinds a family's curves show: position when any position error is above zero or
    no orientation error is; orientation when any orientation error is above zero."""
    allrec = np.concatenate(seqs) if seqs else np.zeros((0, 4))
    kinds = []
    if (allrec[:, 1] > 0).any() or not (allrec[:, 2] > 0).any():
        kinds.append("position")
    if (allrec[:, 2] > 0).any():
        kinds.append("orientation")
    return kinds


def full_iteration_grid(last):
    return np.arange(int(last) + 1, dtype=float)


def compact_iteration_grid(last, head=30, points=50):
    """Every iteration up to `head`, then at most `points` iterations spaced geometrically up to
    `last`, which is always included."""
    last = int(last)
    if last <= head:
        return np.arange(last + 1, dtype=float)
    tail = np.unique(np.round(np.geomspace(head, last, points)))
    return np.unique(np.concatenate((np.arange(head + 1), tail, [last]))).astype(float)


def time_grid(seqs, points=200):
    """`points` times spaced geometrically from the earliest first record (at least
    TIME_FLOOR_US) to the latest last record of the cell's traced solves."""
    tmax = max(a[-1, 3] for a in seqs)
    tmin = max(min(a[0, 3] for a in seqs), TIME_FLOOR_US)
    return np.geomspace(tmin, max(tmax, tmin * 1.01), points)


@dataclass
class Band:
    """Median and interquartile band of one error kind of one cell over a grid."""
    grid: np.ndarray
    q25: np.ndarray
    q50: np.ndarray
    q75: np.ndarray


@dataclass
class Convergence:
    family: str
    solver: str
    kinds: list                 # error kinds of the family ("position", "orientation")
    solves: int                 # traced solves of the cell
    records_max: int            # most records of one traced solve
    iteration: dict = field(default_factory=dict)   # kind -> Band over iterations
    time: dict = field(default_factory=dict)        # kind -> Band over time [us]
    final: dict = field(default_factory=dict)       # quartiles of the last records, see `final_records`

    @property
    def sparse(self):
        """True when no traced solve of the cell has more than a start and an end record (e.g.
        KDL's LMA records only those): its curve would be a flat line and a drop, so it is
        drawn as markers (the start and `final`) instead."""
        return self.records_max <= 2


def band(seqs, col, xcol, grid):
    vals = np.array([step_values(a[:, xcol], a[:, col], grid) for a in seqs])
    q25, q50, q75 = np.percentile(np.maximum(vals, ERROR_FLOOR), [25, 50, 75], axis=0)
    return Band(grid, q25, q50, q75)


def final_records(seqs):
    """Quartiles (25, 50, 75 %) over the traced solves of the start errors (first record) and of
    the last record's iteration, time and errors: {name: (q25, q50, q75)}."""
    first = np.array([a[0] for a in seqs])
    last = np.array([a[-1] for a in seqs])
    q = lambda v: tuple(float(x) for x in np.percentile(v, [25, 50, 75]))  # noqa: E731
    out = {"iteration": q(last[:, 0]), "time": q(last[:, 3])}
    for k, (name, _) in enumerate(ERROR_KINDS):
        out[f"{name}_start"] = q(np.maximum(first[:, 1 + k], ERROR_FLOOR))
        out[name] = q(np.maximum(last[:, 1 + k], ERROR_FLOOR))
    return out


def convergence(traces, *, compact=False, time_points=200, time_col=None, cells=None):
    """Convergence bands per family x solver of the traced solves: a list of Convergence.

    Over iterations the grid is every iteration up to the cell's last (`compact`: every one up to
    30, then at most 50 geometrically spaced, see compact_iteration_grid); over time, `time_points`
    geometrically spaced times (time_grid) on the honest time axis (time_column). Error kinds per
    family: family_error_kinds over all its solvers. `cells`: precomputed traced_solves."""
    cells = traced_solves(traces, time_col) if cells is None else cells
    per_family = {}
    for (fam, _), seqs in cells.items():
        per_family.setdefault(fam, []).extend(seqs)
    kinds_of = {fam: family_error_kinds(seqs) for fam, seqs in per_family.items()}
    out = []
    for (fam, solver), seqs in cells.items():
        kinds = kinds_of[fam]
        last = max(a[-1, 0] for a in seqs)
        its = compact_iteration_grid(last) if compact else full_iteration_grid(last)
        tg = time_grid(seqs, time_points)
        c = Convergence(fam, solver, kinds, len(seqs), int(max(len(a) for a in seqs)))
        for kind in kinds:
            col = 1 if kind == "position" else 2
            c.iteration[kind] = band(seqs, col, 0, its)
            c.time[kind] = band(seqs, col, 3, tg)
        c.final = final_records(seqs)
        out.append(c)
    return out


# ---------------------------------------------------------------- time ECDFs

def time_ecdf(solves, keys=("family", "solver"), successes_only=False):
    """{key tuple: ascending finite solve times [us]} per group of `keys`, over the supported
    (attempted) solves, or over the successes only; groups without any are left out. The ECDF
    at t is the fraction of the group's values <= t."""
    att = figures.attempted_mask(solves)
    mask = att & (figures.success_mask(solves) if successes_only else True)
    t = solves["time_us"].to_numpy(dtype=float)
    mask &= np.isfinite(t)
    part = pd.DataFrame({k: solves[k].to_numpy()[mask] for k in keys})
    part["_t"] = t[mask]
    out = {}
    for key, grp in part.groupby(list(keys), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        out[key] = np.sort(grp["_t"].to_numpy())
    return out


# ---------------------------------------------------------------- success vs DOF

def sweep_name(family):
    """Families whose names differ only in numbers form a sweep: chain7-position -> chainN-position."""
    return re.sub(r"\d+", "N", family)


def dof_sweeps(solves, min_dofs=2):
    """Success rate vs DOF: per sweep of families (sweep_name) with at least `min_dofs` DOF
    values, per solver x DOF over all solves of the group (the success definition of
    figures.summarize, Wilson 95 % interval). Columns: sweep, families, solver, dof, solves,
    supported, successes, success_rate, success_ci_low, success_ci_high, available; n/a groups
    (no supported solve) are kept with available False."""
    s = solves.assign(sweep=solves["family"].map(sweep_name))
    dofs = s.groupby("sweep", sort=False)["dof"].nunique()
    frames = []
    for sweep in [k for k, n in dofs.items() if n >= min_dofs]:
        part = s[s["sweep"] == sweep]
        cells = figures.summarize(part, keys=("solver", "dof"), intervals=False)
        fams = part.groupby("dof")["family"].unique()
        cells.insert(0, "sweep", sweep)
        cells.insert(1, "families", [", ".join(fams[d]) for d in cells["dof"]])
        frames.append(cells[["sweep", "families", "solver", "dof", "solves", "supported", "successes",
                             "success_rate", "success_ci_low", "success_ci_high", "available"]])
    if not frames:
        return pd.DataFrame(columns=["sweep", "families", "solver", "dof", "solves", "supported", "successes",
                                     "success_rate", "success_ci_low", "success_ci_high", "available"])
    return pd.concat(frames, ignore_index=True).sort_values(["sweep", "solver", "dof"], kind="stable",
                                                            ignore_index=True)
