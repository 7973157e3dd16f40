"""Curves of a run: convergence bands over the traced solves, time ECDFs and success against
DOF (docs/analysis.md "Curves"). The matplotlib plots (ikbench.render.plots) and report.html
(ikbench.render.report) draw these; nothing else computes them.

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
from ..io.specs import named

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


def _codes(col):
    """(integer codes, labels) of a key column (categorical or not), codes in label order."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy(dtype=np.int64), list(col.cat.categories)
    codes, labels = pd.factorize(col, sort=False)
    return codes.astype(np.int64), list(labels)


def solve_order(traces):
    """(row order, starts, ends) of a trace table's solves: rows sorted by family, solver, problem
    and iteration (stable: records of one iteration keep their file order), and the bounds of each
    solve's records in that order."""
    fc, _ = _codes(traces["family"])
    sc, _ = _codes(traces["solver"])
    pr = traces["problem"].to_numpy(dtype=np.int64)
    it = traces["iteration"].to_numpy(dtype=np.int64)
    order = np.lexsort((it, pr, sc, fc))
    k = np.stack((fc[order], sc[order], pr[order]))
    change = np.flatnonzero(np.any(k[:, 1:] != k[:, :-1], axis=0)) + 1 if len(order) else np.zeros(0, np.int64)
    starts = np.concatenate(([0], change)).astype(np.int64) if len(order) else np.zeros(0, np.int64)
    ends = np.concatenate((change, [len(order)])).astype(np.int64) if len(order) else np.zeros(0, np.int64)
    return order, starts, ends


def traced_solves(traces, time_col=None):
    """{(family, solver): [array (records, 4) of (iteration, position error, orientation error,
    time) per traced solve, in problem order]}, families and solvers in file order."""
    out = {}
    if traces is None or traces.empty:
        return out
    tcol = time_col or time_column(traces)
    order, starts, ends = solve_order(traces)
    cols = np.column_stack([traces[c].to_numpy(dtype=float)[order]
                            for c in ("iteration", "position_error", "orientation_error", tcol)])
    fc, fl = _codes(traces["family"])
    sc, sl = _codes(traces["solver"])
    cell = fc * (len(sl) + 1) + sc
    _, first = np.unique(cell, return_index=True)        # first row of each cell in the file
    rank = {int(cell[i]): r for r, i in enumerate(np.sort(first))}
    fo, so = fc[order], sc[order]
    for s, e in zip(starts, ends):
        out.setdefault((int(fo[s]), int(so[s])), []).append(cols[s:e])
    items = sorted(out.items(), key=lambda kv: rank[kv[0][0] * (len(sl) + 1) + kv[0][1]])
    return {(fl[f], sl[s]): v for (f, s), v in items}


# ---------------------------------------------------------------- reading traces.csv for curves

class TraceTable:
    """traces.csv for the curves and the viewer: `frame` is the run's traces as ikbench.io.results
    reads them (`run.traces`: every cell checked as the C++ readers check it, the file against
    run.json's manifest), so that the report and the plots accept and refuse exactly the
    traces.csv that results.load does. `q_texts` gives the `q` text of chosen rows."""

    def __init__(self, frame):
        self.frame = frame
        self.path = None
        self.line_starts = self.line_ends = None

    def check(self):
        return self

    def q_texts(self, rows):
        """The q text of the given rows (positions in `frame`)."""
        rows = np.asarray(rows, dtype=np.int64)
        return [str(x) for x in self.frame["q"].to_numpy()[rows]] if "q" in self.frame else [""] * len(rows)


def read_traces(run):
    """traces.csv for the curves and the viewer as a TraceTable (read once, by the run)."""
    return TraceTable(run.traces)


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


# ---------------------------------------------------------------- which specs a DOF panel draws

MAX_DOF_SPECS = 8                       # specs drawn by default in a success-vs-DOF panel
DOF_PEERS = ("kdl-lma", "kdl-nr-jl")    # reference peers (Orocos KDL), kdl-lma first
DOF_CLASSICS = ("dls", "ccd", "fabrik")  # the classic methods every reader knows


def _named(specs, name, records=None):
    """The spec equal to `name`, else the first written with that backend name
    (ikbench.io.specs.named); None when absent."""
    hits = named(specs, name, records)
    return hits[0] if hits else None


def dof_picks(ranked, families, max_specs=MAX_DOF_SPECS, records=None):
    """The specs a success-vs-DOF panel of `families` draws by default, at most `max_specs`, in
    this order: the tied leaders of those families (figures.family_leaders over the ranked
    summary `ranked`; a spec leading more families first, then by its best rank), the peers
    (kdl-lma, kdl-nr-jl) and the classic methods (dls, ccd, fabrik), each where it ran with a
    supported solve on one of the families. The rest of the run's specs stay a click away
    (report) or behind --all-specs (plots). `records`: the run's ikbench.io.specs.spec_records,
    which name the peers' and classics' specs."""
    from . import figures

    part = ranked[ranked["family"].isin(list(families))]
    avail = list(dict.fromkeys(part.loc[part["available"], "solver"]))
    leads = {}
    for v in figures.family_leaders(part, records=records).to_dict("records"):
        for i, s in enumerate(v["leaders"]):
            n, best = leads.get(s, (0, i))
            leads[s] = (n + 1, min(best, i))
    picks = sorted(leads, key=lambda s: (-leads[s][0], leads[s][1], avail.index(s) if s in avail else 0))
    for name in DOF_PEERS[:1] + DOF_CLASSICS + DOF_PEERS[1:]:
        s = _named(avail, name, records)
        if s is not None and s not in picks:
            picks.append(s)
    return picks[:max_specs]
