"""Reading the history store: runs, machines and the points of series across commits, as
DataFrames (all SQL of the history's readers is here; ikbench.analysis.series analyses them).

A *series* is one figure of one (source, family, solver) on one machine identity, suite and
thread count, across commits. Commit order is the commit date (UTC), then the run's start time,
then the run's id; runs of one commit are one point of the series (the median of their values,
the sum of their counts for a success rate). Every query orders its rows completely (text in byte
order, `{C}`), so SQLite and PostgreSQL give the same rows in the same order.
"""

import json
import math

import pandas as pd

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
    r.suite_seed, r.threads, r.start_time, r.end_time, r.noisy, r.load, r.source, r.added, m.key AS machine,
    m.label AS machine_label FROM runs r JOIN machines m ON m.id = r.machine_id"""


def order_key(df):
    """Commit order: commit date (UTC text), then start time, then run id (text compared by code
    point, as the stores' byte order)."""
    date = df["commit_date"].where(df["commit_date"].notna(), df["start_time"]).fillna("")
    return df.assign(_d=date, _s=df["start_time"].fillna("")).sort_values(["_d", "_s", "run_id"], kind="stable") \
        .drop(columns=["_d", "_s"])


def runs(store, machine=None, suite=None, machine_key=None):
    """Every run (of a machine: `machine` a reference as machine_ids takes it, `machine_key` its
    exact key), in commit order: a DataFrame."""
    where, params = [], []
    if machine:
        ids = machine_ids(store, machine)
        where.append(f"r.machine_id IN ({', '.join('?' * len(ids))})")
        params += ids
    if machine_key is not None:
        where.append("m.key = ?")
        params.append(machine_key)
    if suite:
        where.append("r.suite = ?")
        params.append(suite)
    sql = _RUN_SQL + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY r.id"
    df = pd.DataFrame(store.query(sql, params), columns=["id", "key", "git_commit", "git_revision", "dirty",
                                                         "commit_date", "subject", "suite", "suite_seed", "threads",
                                                         "start_time", "end_time", "noisy", "load", "source", "added",
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
                                     "tied_leader FROM cells WHERE run_id = ? ORDER BY family {C}, solver {C}",
                                     (run_id,)))
    pts = pd.DataFrame(store.query("SELECT family, solver, figure, value, ci_low, ci_high FROM points "
                                   "WHERE run_id = ? AND source = 'cell' ORDER BY family {C}, solver {C}, figure {C}",
                                   (run_id,)))
    if not cells.empty and not pts.empty:
        wide = pts.pivot_table(index=["family", "solver"], columns="figure", values="value", aggfunc="first")
        cells = cells.merge(wide.reset_index(), on=["family", "solver"], how="left")
    docs = store.query("SELECT file, kind FROM documents WHERE run_id = ? ORDER BY file {C}", (run_id,))
    return r, m, cells, docs


def points(store, *, figure=None, family=None, solver=None, machine=None, suite=None, threads=None, source=None,
           figures=None, include_dirty=True, machine_key=None):
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
    if machine_key is not None:
        where.append("m.key = ?")
        params.append(machine_key)
    if not include_dirty:
        where.append("(r.dirty IS NULL OR r.dirty = 0)")
    sql = ("SELECT p.run_id, p.source, p.family, p.solver, p.figure, p.value, p.ci_low, p.ci_high, p.n, "
           "p.successes, r.git_commit, r.dirty, r.commit_date, r.subject, r.start_time, r.suite, r.threads, "
           "r.noisy, m.key AS machine, m.label AS machine_label FROM points p JOIN runs r ON r.id = p.run_id "
           "JOIN machines m ON m.id = r.machine_id" + (" WHERE " + " AND ".join(where) if where else "") +
           " ORDER BY p.run_id, p.source {C}, p.family {C}, p.solver {C}, p.figure {C}")
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


def group_series(pts):
    """[(key tuple, rows)] of the points grouped into series."""
    return list(pts.groupby(SERIES_KEY, sort=False, dropna=False))


# ---------------------------------------------------------------- the gate's, the site's and the tables' reads

def skipped(store, *, with_dates=False):
    """The commits recorded without a run, in the order recorded: git_commit, reason (and
    commit_date, subject with `with_dates`)."""
    cols = "git_commit, commit_date, subject, reason" if with_dates else "git_commit, reason"
    return store.query(f"SELECT {cols} FROM skipped ORDER BY id")


def specs_by_run(store):
    """{run id: {spec}}: the solver specs each stored run ran."""
    out = {}
    for r in store.query("SELECT run_id, spec FROM specs ORDER BY run_id, spec {C}"):
        out.setdefault(r["run_id"], set()).add(r["spec"])
    return out


def run_throughput(store, run_id):
    """A stored run's run.json `throughput` (the timed pass's wall time and solves) as a dict; empty
    when it has none or it is not a JSON object."""
    rows = store.query("SELECT throughput FROM runs WHERE id = ?", (int(run_id),))
    tp = rows[0]["throughput"] if rows else None
    if isinstance(tp, str):
        try:
            tp = json.loads(tp)
        except ValueError:
            tp = None
    return tp if isinstance(tp, dict) else {}


def run_rows(store, ids):
    """id, git_commit, dirty, commit_date, noisy and load of the runs `ids`, by id."""
    ids = [int(i) for i in ids]
    if not ids:
        return []
    return store.query(f"SELECT id, git_commit, dirty, commit_date, noisy, load FROM runs WHERE id IN "
                       f"({', '.join('?' * len(ids))}) ORDER BY id", ids)


def commit_labels(store):
    """{run id: commit label} of every stored run (a modified work tree's commit marked so)."""
    return {r["id"]: commit_label(r["git_commit"], r["dirty"])
            for r in store.query("SELECT id, git_commit, dirty FROM runs ORDER BY id")}


def machine_runs(store, machine_key, suite):
    """id, key, threads, noisy and load of the runs of committed code (a clean work tree) of one
    machine identity and suite, by id."""
    return store.query("SELECT r.id, r.key, r.threads, r.noisy, r.load FROM runs r JOIN machines m "
                       "ON m.id = r.machine_id WHERE m.key = ? AND r.suite = ? AND (r.dirty IS NULL OR r.dirty = 0) "
                       "ORDER BY r.id", (machine_key, suite))


def dirty_run_count(store, machine_key, suite):
    """How many runs of a modified work tree one machine identity holds for a suite."""
    return store.query("SELECT COUNT(*) AS n FROM runs r JOIN machines m ON m.id = r.machine_id "
                       "WHERE m.key = ? AND r.suite = ? AND r.dirty = 1", (machine_key, suite))[0]["n"]


def committed_run_count(store, commit, suite):
    """How many runs of committed code at `commit` the store holds for a suite."""
    return store.query("SELECT COUNT(*) AS n FROM runs WHERE git_commit = ? AND suite = ? AND "
                       "(dirty IS NULL OR dirty = 0)", (commit, suite))[0]["n"]


def run_json_text(store, run_id):
    """The stored run.json text of one run ('{}' when none was kept)."""
    return store.query("SELECT run_json FROM runs WHERE id = ?", (run_id,))[0]["run_json"] or "{}"


def run_cells(store, run_id):
    """(families, cells, cell points) of one stored run: its families rows {family: row}, its
    cells rows by family and solver, and the per-cell figures (family, solver, figure, value)."""
    fams = {r["family"]: r for r in store.query("SELECT * FROM families WHERE run_id = ? ORDER BY family {C}",
                                                (run_id,))}
    cells = store.query("SELECT * FROM cells WHERE run_id = ? ORDER BY family {C}, solver {C}", (run_id,))
    pts = store.query("SELECT family, solver, figure, value FROM points WHERE run_id = ? AND source = 'cell' "
                      "ORDER BY family {C}, solver {C}, figure {C}", (run_id,))
    return fams, cells, pts
