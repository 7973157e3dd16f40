"""The figures of a run, one definition each (docs/analysis.md is their documentation).

    cells = cell_figures(run.solves)               # point figures per family x solver
    summary = summarize(run)                       # ... plus intervals (summary.csv's rows)
    write_summary(run)                             # RUN_DIR/summary.csv
    robots = robot_summary(run)                    # per robot x solver, TRAC-IK style

Definitions in short: a solve *succeeds* when it is converged and within limits; the success
rate of a cell is over all its solves; a cell whose every solve is unsupported or invalid input
has no figures (n/a) and no rank. Iterations, errors, evaluations and times are over the cell's
supported (attempted) solves. Quantiles interpolate linearly (numpy's default).
"""

import math
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from . import stats
from .results import NOT_ATTEMPTED, SUMMARY_COLUMNS, ResultsError

# Point figures of a cell, in the order cell_figures returns them.
POINT_FIGURES = [
    "solves", "supported", "converged", "successes", "limit_violations", "success_rate",
    "iterations_median", "iterations_p90", "position_error_median", "orientation_error_median",
    "fk_evals_mean", "jacobian_evals_mean", "time_us_median", "time_us_p90", "time_us_p99", "time_us_max",
    "time_us_mean", "time_per_eval_median_us",
]


def success_mask(solves):
    """The one definition of a successful solve: converged and within the joint limits."""
    return solves["converged"].to_numpy(dtype=bool) & solves["within_limits"].to_numpy(dtype=bool)


def attempted_mask(solves):
    """Solves the backend attempted: all but unsupported and invalid-input."""
    return ~solves["status"].isin(NOT_ATTEMPTED).to_numpy()


def _codes(solves, keys):
    """Group codes in order of first appearance and the key tuple of each group."""
    keys = list(keys)
    if len(solves) == 0:
        return np.zeros(0, dtype=np.int64), []
    g = solves.groupby(keys, sort=False)
    codes = g.ngroup().to_numpy()
    first = np.unique(codes, return_index=True)[1]
    labels = [tuple(solves[k].iat[i] for k in keys) for i in first]
    return codes, labels


def cell_figures(solves, keys=("family", "solver")):
    """Point figures per group of `keys` (default family x solver), groups in file order.

    Columns: the keys, dof, effectors, goal (of the group's first row), then POINT_FIGURES and
    `statuses` (a dict status -> count). Figures over supported solves are nan when a cell has
    none; success_rate is nan (n/a) then too. Error medians count a nan error as +inf (an error
    that is not a number is the worst error); time figures use finite times."""
    codes, labels = _codes(solves, keys)
    G = len(labels)
    att = attempted_mask(solves)
    ok = success_mask(solves)
    conv = solves["converged"].to_numpy(dtype=bool)
    within = solves["within_limits"].to_numpy(dtype=bool)
    n = np.bincount(codes, minlength=G)
    sup = np.bincount(codes[att], minlength=G)
    out = {k: [lab[i] for lab in labels] for i, k in enumerate(keys)}
    first = np.unique(codes, return_index=True)[1] if G else np.zeros(0, dtype=np.int64)
    for k in ("dof", "effectors", "goal"):
        if k in solves and k not in keys:
            out[k] = solves[k].to_numpy()[first]
    out["solves"] = n
    out["supported"] = sup
    out["converged"] = np.bincount(codes[conv], minlength=G)
    out["successes"] = np.bincount(codes[ok], minlength=G)
    out["limit_violations"] = np.bincount(codes[att & ~within], minlength=G)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["success_rate"] = np.where(sup > 0, out["successes"] / np.maximum(n, 1), np.nan)

    ca = codes[att]
    its = solves["iterations"].to_numpy(dtype=float)[att]
    q = stats.group_quantiles(its, ca, G, [0.5, 0.9])
    out["iterations_median"], out["iterations_p90"] = q[0], q[1]
    for col in ("position_error", "orientation_error"):
        e = solves[col].to_numpy(dtype=float)[att]
        e = np.where(np.isnan(e), np.inf, e)
        out[f"{col}_median"] = stats.group_quantiles(e, ca, G, [0.5])[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        for col in ("fk_evals", "jacobian_evals"):
            s = np.bincount(ca, weights=solves[col].to_numpy(dtype=float)[att], minlength=G)
            out[f"{col}_mean"] = np.where(sup > 0, s / np.maximum(sup, 1), np.nan)
    t = solves["time_us"].to_numpy(dtype=float)
    tmask = att & np.isfinite(t)
    ct, tt = codes[tmask], t[tmask]
    q = stats.group_quantiles(tt, ct, G, [0.5, 0.9, 0.99, 1.0])
    out["time_us_median"], out["time_us_p90"], out["time_us_p99"], out["time_us_max"] = q
    nt = np.bincount(ct, minlength=G)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["time_us_mean"] = np.where(nt > 0, np.bincount(ct, weights=tt, minlength=G) / np.maximum(nt, 1), np.nan)
    evals = (solves["fk_evals"].to_numpy(dtype=float) + solves["jacobian_evals"].to_numpy(dtype=float))
    emask = tmask & (evals > 0)
    out["time_per_eval_median_us"] = stats.group_quantiles(t[emask] / evals[emask], codes[emask], G, [0.5])[0]
    df = pd.DataFrame(out)
    st = pd.Series(1, index=pd.MultiIndex.from_arrays([codes, solves["status"].to_numpy()])).groupby(level=[0, 1]).sum()
    statuses = [dict() for _ in range(G)]
    for (c, s), k in st.items():
        statuses[c][s] = int(k)
    df["statuses"] = [dict(sorted(d.items())) for d in statuses]
    return df


def cell_samples(solves, keys=("family", "solver")):
    """Per group (in cell_figures' order): (finite times of supported solves, iterations of
    supported solves) as numpy arrays, the samples of the bootstrap intervals."""
    codes, labels = _codes(solves, keys)
    att = attempted_mask(solves)
    t = solves["time_us"].to_numpy(dtype=float)
    its = solves["iterations"].to_numpy(dtype=float)
    times, iters = [], []
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(labels) + 1))
    for g in range(len(labels)):
        idx = order[bounds[g]:bounds[g + 1]]
        idx = idx[att[idx]]
        tg = t[idx]
        times.append(tg[np.isfinite(tg)])
        iters.append(its[idx])
    return times, iters


def summarize(run_or_solves, *, keys=("family", "solver"), seed=stats.BOOTSTRAP_SEED,
              n_resamples=stats.BOOTSTRAP_RESAMPLES, confidence=stats.CONFIDENCE, intervals=True):
    """Figures with intervals per family x solver: summary.csv's columns (SUMMARY_COLUMNS), then
    successes, limit_violations, dof, effectors, goal, statuses and `available` (False for n/a
    cells: no supported solve). Intervals: Wilson on the success rate; percentile bootstrap
    (`n_resamples`, numpy.random.default_rng(seed)) on median time, mean time and median
    iterations."""
    solves = run_or_solves if isinstance(run_or_solves, pd.DataFrame) else run_or_solves.solves
    df = cell_figures(solves, keys)
    df["available"] = df["supported"] > 0
    lo, hi = stats.wilson_intervals(df["successes"], df["solves"], confidence)
    df["success_ci_low"] = np.where(df["available"], lo, np.nan)
    df["success_ci_high"] = np.where(df["available"], hi, np.nan)
    names = ["time_us_mean_ci_low", "time_us_mean_ci_high", "time_us_median_ci_low", "time_us_median_ci_high",
             "iterations_median_ci_low", "iterations_median_ci_high"]
    if intervals:
        times, iters = cell_samples(solves, keys)
        kw = dict(seed=seed, n_resamples=n_resamples, confidence=confidence)
        df[names[0]], df[names[1]] = stats.bootstrap_intervals(times, "mean", **kw)
        df[names[2]], df[names[3]] = stats.bootstrap_intervals(times, "median", **kw)
        df[names[4]], df[names[5]] = stats.bootstrap_intervals(iters, "median", **kw)
    else:
        for c in names:
            df[c] = np.nan
    key_cols = list(keys)
    lead = key_cols + [c for c in SUMMARY_COLUMNS if c not in ("family", "solver")]
    rest = [c for c in df.columns if c not in lead]
    return df[lead + rest]


def rank_cells(summary, within="family"):
    """Adds `rank` (1 = best) among the cells of each `within` group: success rate descending,
    then mean time ascending. n/a cells (no supported solve) get no rank (nan)."""
    df = summary.copy()
    df["rank"] = np.nan
    avail = df["available"] if "available" in df else df["supported"] > 0
    for _, idx in df[avail].groupby(within, sort=False).groups.items():
        part = df.loc[idx]
        order = part.sort_values(["success_rate", "time_us_mean"], ascending=[False, True], kind="stable").index
        df.loc[order, "rank"] = np.arange(1, len(order) + 1)
    return df


# ---------------------------------------------------------------- summary.csv

def _csv_number(v):
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = float(v)
    if math.isnan(f):
        return ""
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f.is_integer() and abs(f) < 2 ** 53:
        return str(int(f))
    return repr(f)


def _csv_text(s):
    s = str(s)
    if any(c in s for c in ',"\n\r'):
        return '"' + s.replace('"', '""') + '"'
    return s


def summary_csv_text(summary):
    lines = [",".join(SUMMARY_COLUMNS)]
    for row in summary[SUMMARY_COLUMNS].itertuples(index=False):
        d = row._asdict()
        avail = d["supported"] > 0
        cells = []
        for c in SUMMARY_COLUMNS:
            v = d[c]
            if c in ("family", "solver"):
                cells.append(_csv_text(v))
            elif c in ("solves", "supported", "converged"):
                cells.append(str(int(v)))
            else:
                cells.append(_csv_number(v) if avail else "")
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def write_summary(run, path=None, summary=None, **kw):
    """Writes summary.csv (SUMMARY_COLUMNS, one row per family x solver; an n/a cell has empty
    figures) atomically to `path` (default RUN_DIR/summary.csv). Returns the path."""
    if summary is None:
        summary = summarize(run, **kw)
    path = Path(path) if path else run.path / "summary.csv"
    text = summary_csv_text(summary)
    fd, tmp = tempfile.mkstemp(prefix=".summary.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise ResultsError(f"{path}: cannot write: {e.strerror}") from None
    return path


# ---------------------------------------------------------------- robots

_URDF = re.compile(r"([^\s'\"(),:;]+)\.urdf\b", re.IGNORECASE)


def robot_families(run):
    """{family: robot} for the families of a run that come from a robot description.

    Format version 2: run.json families[].robot, else the file name (without .urdf) of a
    families[].source ending in .urdf. Version 1 (no such fields), in this order: a run of
    `ikbench run --urdf FILE` (suite source ending in .urdf) -> its families ending in -pose are
    that robot's; a family whose description names a .urdf file -> that file's robot; a suite
    file that run.json's suite.source names and that can still be read -> its families of type
    "urdf" (robot = the file name of their "file")."""
    out = {}
    fams = run.families
    for f in fams:
        name = f.get("name")
        if not isinstance(name, str):
            continue
        if isinstance(f.get("robot"), str) and f["robot"]:
            out[name] = f["robot"]
        elif isinstance(f.get("source"), str) and f["source"].lower().endswith(".urdf"):
            out[name] = Path(f["source"]).stem
    if out or run.format_version >= 2:
        return out
    suite = run.meta.get("suite") if isinstance(run.meta.get("suite"), dict) else {}
    source = suite.get("source") if isinstance(suite.get("source"), str) else ""
    for f in fams:
        name, desc = f.get("name"), f.get("description") or ""
        if not isinstance(name, str):
            continue
        if source.lower().endswith(".urdf") and name.endswith("-pose"):
            out[name] = Path(source).stem
            continue
        m = _URDF.search(desc) if isinstance(desc, str) else None
        if m:
            out[name] = Path(m.group(1)).name
    if out or not source.lower().endswith(".json"):
        return out
    try:
        import json

        with open(source, encoding="utf-8") as fh:
            doc = json.load(fh)
        for f in doc.get("families", []):
            if isinstance(f, dict) and f.get("type") == "urdf" and isinstance(f.get("file"), str):
                if any(x.get("name") == f.get("name") for x in fams):
                    out[f["name"]] = Path(f["file"]).stem
    except (OSError, ValueError, AttributeError):
        pass
    return out


def robot_summary(run, confidence=stats.CONFIDENCE):
    """Per robot x solver over the solves of the robot's families (`robot_families`): solves,
    supported, successes, success_rate with its Wilson interval, time mean / median / p99,
    iterations median, and `rank` within the robot. Empty frame when the run has no robot."""
    robots = robot_families(run)
    solves = run.solves[run.solves["family"].isin(list(robots))].copy()
    if solves.empty:
        return pd.DataFrame(columns=["robot", "solver", "families", "solves", "supported", "successes",
                                     "success_rate", "success_ci_low", "success_ci_high", "time_us_mean",
                                     "time_us_median", "time_us_p99", "iterations_median", "available", "rank"])
    solves["robot"] = solves["family"].map(robots)
    df = cell_figures(solves, keys=("robot", "solver"))
    fams = solves.groupby("robot", sort=False)["family"].unique()
    df["families"] = [", ".join(fams[r]) for r in df["robot"]]
    df["available"] = df["supported"] > 0
    lo, hi = stats.wilson_intervals(df["successes"], df["solves"], confidence)
    df["success_ci_low"] = np.where(df["available"], lo, np.nan)
    df["success_ci_high"] = np.where(df["available"], hi, np.nan)
    df = rank_cells(df, within="robot")
    cols = ["robot", "solver", "families", "solves", "supported", "successes", "success_rate", "success_ci_low",
            "success_ci_high", "time_us_mean", "time_us_median", "time_us_p99", "iterations_median", "available",
            "rank", "statuses"]
    return df[cols]
