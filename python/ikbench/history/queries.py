"""Reading the history store: runs, series across commits, and their change points (data only;
history/cli.py and history/site.py render them).

A *series* is one figure of one (source, family, solver) on one machine identity, suite and
thread count, across commits. Commit order is the commit date (UTC), then the run's start time;
runs of one commit are one point of the series for change points (the median of their values,
the sum of their counts for a success rate).
"""

import json
import math

import numpy as np
import pandas as pd

from . import changepoints as cp
from .store import HistoryError

SERIES_KEY = ["source", "family", "solver", "figure", "machine", "suite", "threads"]

# Figures searched for change points by default: what moves with the code (the error medians of
# converged solves sit at the solver's tolerance, the maxima and outlier counts follow the load).
CHANGE_FIGURES = ["success_rate", "time_us_median", "time_us_mean", "time_us_p90", "time_us_p99",
                  "iterations_median", "iterations_p90", "fk_evals_mean", "jacobian_evals_mean",
                  "real_time_ns", "cpu_time_ns", "solves_per_s", "converged_per_s"]
# Figures where a larger value is better (a step up is an improvement).
HIGHER_IS_BETTER = {"success_rate", "solves_per_s", "converged_per_s"}

_RUN_SQL = """SELECT r.id, r.key, r.git_commit, r.git_revision, r.dirty, r.commit_date, r.subject, r.suite,
    r.suite_seed, r.threads, r.start_time, r.end_time, r.noisy, r.source, r.added, m.key AS machine,
    m.label AS machine_label FROM runs r JOIN machines m ON m.id = r.machine_id"""


def order_key(df):
    """Commit order: commit date (UTC text), then start time, then run id."""
    date = df["commit_date"].where(df["commit_date"].notna(), df["start_time"]).fillna("")
    return df.assign(_d=date, _s=df["start_time"].fillna("")).sort_values(["_d", "_s", "run_id"], kind="stable") \
        .drop(columns=["_d", "_s"])


def runs(store, machine=None, suite=None):
    """Every run, in commit order: a DataFrame."""
    where, params = [], []
    if machine:
        ids = machine_ids(store, machine)
        where.append(f"r.machine_id IN ({', '.join('?' * len(ids))})")
        params += ids
    if suite:
        where.append("r.suite = ?")
        params.append(suite)
    sql = _RUN_SQL + (" WHERE " + " AND ".join(where) if where else "")
    df = pd.DataFrame(store.query(sql, params), columns=["id", "key", "git_commit", "git_revision", "dirty",
                                                         "commit_date", "subject", "suite", "suite_seed", "threads",
                                                         "start_time", "end_time", "noisy", "source", "added",
                                                         "machine", "machine_label"])
    df = df.rename(columns={"id": "run_id"})
    return order_key(df).reset_index(drop=True)


def machines(store):
    return pd.DataFrame(store.query(
        "SELECT m.id, m.key, m.label, COUNT(r.id) AS runs FROM machines m LEFT JOIN runs r ON r.machine_id = m.id "
        "GROUP BY m.id, m.key, m.label ORDER BY m.id"), columns=["id", "key", "label", "runs"])


def machine_ids(store, ref):
    """Ids of the machine identities a reference names: its id, a prefix of its key, or text in
    its label (case-insensitive). Refused when nothing matches."""
    ms = machines(store)
    ref = str(ref)
    hit = ms[(ms["id"].astype(str) == ref) | ms["key"].str.startswith(ref) |
             ms["label"].str.lower().str.contains(ref.lower(), regex=False)]
    if hit.empty:
        known = "; ".join(f"{k} ({lab})" for k, lab in zip(ms["key"], ms["label"])) or "none"
        raise HistoryError(f"--machine {ref}: no machine identity of {store.name} matches (known: {known})")
    return [int(i) for i in hit["id"]]


def resolve_run(store, ref):
    """A run by reference: its id, a prefix of its key, a prefix of its git commit (the latest run
    of that commit) or the path it was added from."""
    from pathlib import Path

    ref = str(ref)
    df = runs(store)
    cands = df[df["run_id"].astype(str) == ref]
    if cands.empty:
        cands = df[df["key"].str.startswith(ref) | df["git_commit"].fillna("").str.startswith(ref)] \
            if len(ref) >= 4 else cands
    if cands.empty:
        try:
            path = str(Path(ref).resolve())
            cands = df[df["source"] == path]
        except OSError:
            pass
    if cands.empty:
        raise HistoryError(f"{ref}: no run of {store.name} has this id, key, commit or path (ikbench history list)")
    return cands.iloc[-1].to_dict()


def run_details(store, run_id):
    """(run row, machine row, cells DataFrame with the cell figures as columns, side documents)."""
    r = store.query("SELECT * FROM runs WHERE id = ?", (run_id,))[0]
    m = store.query("SELECT * FROM machines WHERE id = ?", (r["machine_id"],))[0]
    cells = pd.DataFrame(store.query("SELECT family, solver, solves, supported, successes, available, rank, "
                                     "tied_leader FROM cells WHERE run_id = ? ", (run_id,)))
    pts = pd.DataFrame(store.query("SELECT family, solver, figure, value, ci_low, ci_high FROM points "
                                   "WHERE run_id = ? AND source = 'cell'", (run_id,)))
    if not cells.empty and not pts.empty:
        wide = pts.pivot_table(index=["family", "solver"], columns="figure", values="value", aggfunc="first")
        cells = cells.merge(wide.reset_index(), on=["family", "solver"], how="left")
    docs = store.query("SELECT file, kind FROM documents WHERE run_id = ? ORDER BY file", (run_id,))
    return r, m, cells, docs


def points(store, *, figure=None, family=None, solver=None, machine=None, suite=None, threads=None, source=None,
           figures=None, include_dirty=True):
    """Points of the store joined with their run and machine, in commit order (a DataFrame with
    SERIES_KEY columns and run_id, git_commit, dirty, commit_date, subject, start_time, noisy,
    machine_label, value, ci_low, ci_high, n, successes)."""
    where, params = [], []
    for col, v in (("p.figure", figure), ("p.family", family), ("p.solver", solver), ("r.suite", suite),
                   ("r.threads", threads), ("p.source", source)):
        if v is not None:
            where.append(f"{col} = ?")
            params.append(v)
    if figures:
        where.append(f"p.figure IN ({', '.join('?' * len(figures))})")
        params += list(figures)
    if machine is not None:
        ids = machine_ids(store, machine)
        where.append(f"r.machine_id IN ({', '.join('?' * len(ids))})")
        params += ids
    if not include_dirty:
        where.append("(r.dirty IS NULL OR r.dirty = 0)")
    sql = ("SELECT p.run_id, p.source, p.family, p.solver, p.figure, p.value, p.ci_low, p.ci_high, p.n, "
           "p.successes, r.git_commit, r.dirty, r.commit_date, r.subject, r.start_time, r.suite, r.threads, "
           "r.noisy, m.key AS machine, m.label AS machine_label FROM points p JOIN runs r ON r.id = p.run_id "
           "JOIN machines m ON m.id = r.machine_id" + (" WHERE " + " AND ".join(where) if where else ""))
    cols = ["run_id", "source", "family", "solver", "figure", "value", "ci_low", "ci_high", "n", "successes",
            "git_commit", "dirty", "commit_date", "subject", "start_time", "suite", "threads", "noisy", "machine",
            "machine_label"]
    df = pd.DataFrame(store.query(sql, params), columns=cols)
    for c in ("value", "ci_low", "ci_high"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    df["threads"] = df["threads"].fillna(0).astype(int)
    return order_key(df).reset_index(drop=True)


def commit_label(commit, dirty):
    c = (commit or "?")[:10]
    return c + ("+dirty" if dirty else "")


def _median(s):
    s = pd.to_numeric(s, errors="coerce").dropna()
    return float(s.median()) if len(s) else math.nan


def per_commit(series):
    """One point per commit of a series (its rows in commit order): the median value (the median
    of the intervals' ends), summed counts; dirty runs are their own points."""
    out = []
    s = series.assign(_c=[commit_label(c, d) for c, d in zip(series["git_commit"], series["dirty"])])
    for label, g in s.groupby("_c", sort=False):
        row = g.iloc[0].to_dict()
        row.update(commit=label, runs=len(g), value=_median(g["value"]), ci_low=_median(g["ci_low"]),
                   ci_high=_median(g["ci_high"]))
        if g["successes"].notna().any():
            row.update(successes=int(g["successes"].sum()), n=int(g["n"].sum()))
        out.append(row)
    return pd.DataFrame(out).drop(columns=["_c"], errors="ignore")


def series_changes(pc, key="", alpha=cp.ALPHA):
    """Change points of one series, given its per-commit points (per_commit)."""
    if len(pc) < 2 * cp.MIN_SIZE:
        return []
    fig = pc["figure"].iloc[0]
    if fig == "success_rate" and pc["successes"].notna().all():
        return cp.detect_proportions(pc["successes"].to_numpy(float), pc["n"].to_numpy(float), alpha=alpha)
    v = pc["value"].to_numpy(float)
    finite = v[np.isfinite(v)]
    if len(finite) < 2 * cp.MIN_SIZE or np.ptp(finite) == 0:
        return []
    return cp.detect(v, key=key, alpha=alpha)


def group_series(pts):
    """[(key tuple, rows)] of the points grouped into series."""
    return list(pts.groupby(SERIES_KEY, sort=False, dropna=False))


def changes(store, *, figures=None, include_dirty=False, alpha=cp.ALPHA, **filters):
    """Change points of every series of the store (or of those the filters select): a DataFrame,
    one row per change point, most recent first, with the series key, the commit before and
    after the step, the step with its interval, the p-value and whether it is a regression."""
    pts = points(store, figures=figures or CHANGE_FIGURES, include_dirty=include_dirty, **filters)
    rows = []
    for key, g in group_series(pts):
        pc = per_commit(g)
        for c in series_changes(pc, key=json.dumps([str(k) for k in key]), alpha=alpha):
            after, before = pc.iloc[c.index], pc.iloc[c.index - 1]
            higher = key[3] in HIGHER_IS_BETTER
            worse = (c.step < 0) if higher else (c.step > 0)
            rows.append(dict(zip(SERIES_KEY, key), machine_label=g["machine_label"].iloc[0], commit=after["commit"],
                             commit_date=after["commit_date"], subject=after["subject"], previous=before["commit"],
                             position=c.index, points=len(pc), before=c.before, after=c.after, step=c.step,
                             step_low=c.step_low, step_high=c.step_high, scale=c.scale, p_value=c.p_value,
                             method=c.method, regression=bool(worse)))
    cols = SERIES_KEY + ["machine_label", "commit", "commit_date", "subject", "previous", "position", "points",
                         "before", "after", "step", "step_low", "step_high", "scale", "p_value", "method", "regression"]
    df = pd.DataFrame(rows, columns=cols)
    if not df.empty:
        df = df.assign(_d=df["commit_date"].fillna("")).sort_values(["_d", "p_value"], ascending=[False, True],
                                                                    kind="stable").drop(columns="_d")
    return df.reset_index(drop=True)


def step_text(step, low, high, scale):
    """'+10.2 % [+6.1, +14.0]' (log scale), '-0.100 [-0.13, -0.07]' (a proportion, in points)."""
    def f(v, pct):
        if v is None or not math.isfinite(v):
            return "?"
        return f"{100 * v:+.1f}" if pct else f"{v:+.3g}"
    if scale == "log":
        return f"{f(step, True)} % [{f(low, True)}, {f(high, True)}]"
    if scale == "proportion":
        return f"{f(step, True)} pts [{f(low, True)}, {f(high, True)}]"
    return f"{f(step, False)} [{f(low, False)}, {f(high, False)}]"
