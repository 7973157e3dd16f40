"""The figures of a run, one definition each (docs/analysis.md is their documentation).

    cells = cell_figures(run.solves)               # point figures per family x solver
    summary = summarize(run)                       # ... plus intervals (summary.csv's rows)
    write_summary(run)                             # RUN_DIR/summary.csv
    robots = robot_summary(run)                    # per robot x solver, TRAC-IK style
    verdicts = family_leaders(summary)             # per family: the tied leaders, or no winner

Definitions in short: a solve *succeeds* when it is converged and within limits; the success
rate of a cell is over all its solves; a cell whose every solve is unsupported or invalid input
has no figures (n/a) and no rank. Iterations, errors, evaluations and times are over the cell's
supported (attempted) solves. Quantiles interpolate linearly (numpy's default). The rank of a
cell comes first from success, then from the median time, and cells not significantly worse than
the leader are tied with it; a cell without a success is never ranked.
"""

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from . import levels, outcomes, stats
from ..io.safe_io import atomic_write_text
from ..io.results import NOT_ATTEMPTED, SUMMARY_COLUMNS, optional_json
from ..io.specs import named

# Point figures of a cell, in the order cell_figures returns them.
POINT_FIGURES = [
    "solves", "supported", "converged", "successes", "limit_violations", "success_rate",
    "iterations_median", "iterations_p90", "position_error_median", "orientation_error_median",
    "fk_evals_mean", "jacobian_evals_mean", "time_us_median", "time_us_p90", "time_us_p99", "time_us_max",
    "time_us_mean", "time_per_eval_median_us", "time_us_outliers_mild", "time_us_outliers_severe",
]

# summary.csv: the version-2 columns (results.SUMMARY_COLUMNS), then the outlier counts, the rank
# within the family and the run's load flag, then each cell's seed regime, outcome rates and answer
# quality (outcomes.OUTCOME_COLUMNS; docs/results-format.md, docs/analysis.md, docs/protocols.md).
SUMMARY_EXTRA_COLUMNS = ["time_us_outliers_mild", "time_us_outliers_severe", "rank", "rank_of", "tied_leader",
                         "noisy"] + outcomes.OUTCOME_COLUMNS
SUMMARY_CSV_COLUMNS = SUMMARY_COLUMNS + SUMMARY_EXTRA_COLUMNS

ALPHA = 0.05          # significance level of the tests that separate a leader from the others
PEER = "kdl-lma"      # the reference peer shown beside the leaders (Orocos KDL's LMA)


def success_mask(solves):
    """The one definition of a successful solve: converged and within the joint limits, and, in a
    family with a scene, collision-free by the exact check (collision_free nan: no scene)."""
    ok = solves["converged"].to_numpy(dtype=bool) & solves["within_limits"].to_numpy(dtype=bool)
    if "collision_free" in solves:
        ok &= solves["collision_free"].to_numpy(dtype=float) != 0.0
    return ok


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
    if "solver_time_us" in solves.columns:
        # An external solver's own reported time, and the rest of the wall time: the protocol's
        # overhead (docs/external-solvers.md), over the supported solves that reported a time.
        own = pd.to_numeric(solves["solver_time_us"], errors="coerce").to_numpy(dtype=float)
        omask = tmask & np.isfinite(own)
        out["solver_time_us_median"] = stats.group_quantiles(own[omask], codes[omask], G, [0.5])[0]
        out["overhead_us_median"] = stats.group_quantiles(t[omask] - own[omask], codes[omask], G, [0.5])[0]
    mild, severe = stats.group_tukey_outliers(tt, ct, G)
    out["time_us_outliers_mild"] = np.where(nt > 0, mild, np.nan)      # nan: no time to count
    out["time_us_outliers_severe"] = np.where(nt > 0, severe, np.nan)
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
              n_resamples=stats.BOOTSTRAP_RESAMPLES, confidence=stats.CONFIDENCE, intervals=True, alpha=ALPHA):
    """Figures with intervals per family x solver: summary.csv's columns (SUMMARY_COLUMNS), then
    successes, limit_violations, dof, effectors, goal, statuses, `available` (False for n/a
    cells: no supported solve), the outlier counts and, for two keys, the ranking within the
    first key (`rank_cells`: rank, rank_of, tied_leader, rank_text). Intervals: Wilson on the
    success rate; percentile bootstrap (`n_resamples`, numpy.random.default_rng(seed)) on median
    time, mean time and median iterations."""
    solves = run_or_solves if isinstance(run_or_solves, pd.DataFrame) else run_or_solves.solves
    df = cell_figures(solves, keys)
    df["available"] = df["supported"] > 0
    lo, hi = stats.wilson_intervals(df["successes"], df["solves"], confidence)
    df["success_ci_low"] = np.where(df["available"], lo, np.nan)
    df["success_ci_high"] = np.where(df["available"], hi, np.nan)
    names = ["time_us_mean_ci_low", "time_us_mean_ci_high", "time_us_median_ci_low", "time_us_median_ci_high",
             "iterations_median_ci_low", "iterations_median_ci_high"]
    times, iters = cell_samples(solves, keys)
    if intervals:
        kw = dict(seed=seed, n_resamples=n_resamples, confidence=confidence)
        df[names[0]], df[names[1]] = stats.bootstrap_intervals(times, "mean", **kw)
        df[names[2]], df[names[3]] = stats.bootstrap_intervals(times, "median", **kw)
        df[names[4]], df[names[5]] = stats.bootstrap_intervals(iters, "median", **kw)
    else:
        for c in names:
            df[c] = np.nan
    key_cols = list(keys)
    if len(key_cols) == 2:
        df = rank_cells(df, times, within=key_cols[0], alpha=alpha)
    if key_cols == ["family", "solver"] and not isinstance(run_or_solves, pd.DataFrame):
        # outcome rates and answer quality need run.json's families (targets, regimes)
        df = df.merge(outcomes.outcome_figures(run_or_solves, confidence), on=key_cols, how="left")
    lv = levels.level_figures(solves, keys)
    if not lv.empty:  # whole-body families: per-level success and the top level's error
        df = df.merge(lv, on=key_cols, how="left")
    lead = key_cols + [c for c in SUMMARY_COLUMNS if c not in ("family", "solver")]
    rest = [c for c in df.columns if c not in lead]
    return df[lead + rest]


def rank_cells(summary, times, within="family", alpha=ALPHA):
    """The ranking of the cells of each `within` group (docs/analysis.md "Ranking and ties").

    `times` are the cells' samples of supported solve times, in the rows' order
    (`cell_samples`). Only cells with at least one success are ranked: by success rate, highest
    first, then by median time, lowest first; the first is the *leader*. A ranked cell is *tied*
    with the leader when it is not significantly worse in success (Fisher's exact test,
    two-sided, at `alpha`) and not significantly slower (Mann-Whitney U, two-sided, at `alpha`).
    The tied cells share rank 1 (shown "=1" when there are several); the others follow in order.
    A cell that ran but never succeeded, and an n/a cell, have no rank (nan).

    Adds: `rank` (float, nan when unranked), `rank_of` (cells of the group that ran), `tied_leader`
    (bool), `rank_text` ("1", "=1", "4", "no success", "n/a"), `success_p_vs_leader` and
    `time_p_vs_leader` (the tests' p-values; nan for the leader and unranked cells)."""
    df = summary.copy()
    n = len(df)
    rank = np.full(n, np.nan)
    rank_of = np.zeros(n, dtype=np.int64)
    tied = np.zeros(n, dtype=bool)
    sp = np.full(n, np.nan)
    tp = np.full(n, np.nan)
    avail = (df["available"] if "available" in df else df["supported"] > 0).to_numpy(dtype=bool)
    succ = df["successes"].to_numpy()
    rate = df["success_rate"].to_numpy(dtype=float)
    med = df["time_us_median"].to_numpy(dtype=float)
    solves = df["solves"].to_numpy()
    texts = np.array(["n/a"] * n, dtype=object)
    for _, idx in df.groupby(within, sort=False).indices.items():
        ran = [i for i in idx if avail[i]]
        rank_of[idx] = len(ran)
        for i in ran:
            texts[i] = "no success"
        ok = [i for i in ran if succ[i] > 0]
        if not ok:
            continue
        order = sorted(ok, key=lambda i: (-rate[i], med[i] if math.isfinite(med[i]) else math.inf, i))
        lead = order[0]
        tied[lead] = True
        for i in order[1:]:
            ts, sp[i] = stats.not_worse_in_success(int(succ[lead]), int(solves[lead]), int(succ[i]), int(solves[i]),
                                                   alpha)
            tt, tp[i] = stats.not_slower(times[lead], times[i], alpha)
            tied[i] = ts and tt
        leaders = [i for i in order if tied[i]]
        rest = [i for i in order if not tied[i]]
        for i in leaders:
            rank[i] = 1
            texts[i] = "=1" if len(leaders) > 1 else "1"
        for k, i in enumerate(rest):
            rank[i] = len(leaders) + k + 1
            texts[i] = str(len(leaders) + k + 1)
    df["rank"] = rank
    df["rank_of"] = rank_of
    df["tied_leader"] = tied
    df["rank_text"] = texts
    df["success_p_vs_leader"] = sp
    df["time_p_vs_leader"] = tp
    return df


def peer_spec(specs, peer=PEER, records=None):
    """The reference peer among `specs`: the spec equal to `peer`, else the first written with
    that backend name (ikbench.io.specs.named, from run.json's `records` when given); None when it
    did not run."""
    hits = named(specs, peer, records)
    return hits[0] if hits else None


VERDICT_WINNER, VERDICT_TIE, VERDICT_NO_SUCCESS, VERDICT_NA = "winner", "tie", "no success", "n/a"


def family_leaders(ranked, within="family", peer=PEER, records=None):
    """Per group of a ranked summary (`rank_cells`), the verdict as data, one row per group in
    order: `family` (the group), `ran`, `succeeded` (cells with a success), `leaders` (tuple of
    the tied leaders' specs, best first), `verdict` ("winner": one leader; "tie": several;
    "no success": cells ran and none succeeded, no leader is named; "n/a": nothing ran), `peer`
    (the reference peer's spec, or None) and `peer_row` (its row index in `ranked`, or None), and
    `failed_most` (the row index of the cell that ran with the lowest success rate, or None).
    `records`: the run's ikbench.io.specs.spec_records, which name the peer's specs."""
    out = []
    for fam, part in ranked.groupby(within, sort=False):
        avail = part[part["available"]]
        lead = avail[avail["tied_leader"]].sort_values(["rank", "success_rate", "time_us_median"],
                                                       ascending=[True, False, True], kind="stable")
        leaders = tuple(lead["solver"])
        succeeded = int((avail["successes"] > 0).sum())
        verdict = (VERDICT_NA if avail.empty else VERDICT_NO_SUCCESS if not leaders else
                   VERDICT_WINNER if len(leaders) == 1 else VERDICT_TIE)
        ps = peer_spec(avail["solver"], peer, records)
        peer_row = avail.index[avail["solver"] == ps][0] if ps is not None else None
        worst = None
        if not avail.empty:
            w = avail.sort_values(["success_rate", "time_us_median"], ascending=[True, False], kind="stable")
            worst = w.index[0] if w.iloc[0]["success_rate"] < 1 and not w.iloc[0]["tied_leader"] else None
        out.append({within: fam, "ran": len(avail), "succeeded": succeeded, "leaders": leaders, "verdict": verdict,
                    "peer": ps, "peer_row": peer_row, "failed_most": worst})
    # object columns: a row label or None, never a float nan for "none" beside integer labels
    df = pd.DataFrame(out, columns=[within, "ran", "succeeded", "leaders", "verdict", "peer", "peer_row",
                                    "failed_most"], dtype=object)
    return df.astype({"ran": int, "succeeded": int})


# ---------------------------------------------------------------- the run's load

def run_load(run):
    """run.json's `load` object (the machine's load during the run, written by the harness), or
    None when the run has none (older runs) or it is not an object. `run` is a loaded run or
    run.json's dict."""
    meta = run if isinstance(run, dict) else getattr(run, "meta", None)
    v = meta.get("load") if isinstance(meta, dict) else None
    return v if isinstance(v, dict) else None


def run_noisy(run):
    """True when run.json's load.noisy is true, False when it is false, None (unknown) when the
    run records no load; an unknown run is treated as not noisy."""
    load = run_load(run)
    v = load.get("noisy") if load else None
    return v if isinstance(v, bool) else None


def noisy_text(run):
    """One line on a noisy run's load ("noisy run: load average 3.2 -> 5.1 on 2 cores, up to 9
    runnable: times are unreliable"), or None when the run is not marked noisy."""
    if run_noisy(run) is not True:
        return None
    load = run_load(run)

    def num(k, d=None):
        v = (d or load).get(k)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    parts = []
    a, b = num("start"), num("end")
    if a is not None and b is not None:
        parts.append(f"load average {a:.1f} -> {b:.1f}")
    if num("cores") is not None:
        parts.append(f"on {num('cores'):.0f} cores")
    if num("runnable_max") is not None:
        parts.append(f"up to {num('runnable_max'):.0f} runnable")
    return "noisy run" + (": " + ", ".join(parts) if parts else "") + \
        ": its times are unreliable (success and iterations are not affected)"


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


def summary_csv_text(summary, noisy=None):
    """summary.csv's text (SUMMARY_CSV_COLUMNS); `noisy` is the run's flag (run_noisy: True,
    False, or None for unknown, written empty). Each figure is formatted here (the shortest text
    that reads back as the same double, integers as integers, n/a empty); pandas writes the CSV
    (quoting a name that holds a comma or a quote)."""
    noisy_cell = "" if noisy is None else ("1" if noisy else "0")
    # A run with whole-body families appends the per-level figures (levels.LEVEL_SUMMARY_COLUMNS).
    columns = SUMMARY_CSV_COLUMNS + (levels.LEVEL_SUMMARY_COLUMNS if "level_success" in summary else [])
    rows = []
    for d in summary.to_dict("records"):
        avail = d["supported"] > 0
        row = []
        for c in columns:
            v = d.get(c)
            if c in ("family", "solver"):
                row.append(str(v))
            elif c in outcomes.TEXT_COLUMNS:
                row.append("" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
            elif c in ("solves", "supported", "converged", "rank_of"):
                row.append(str(int(v)))
            elif c == "noisy":
                row.append(noisy_cell)
            elif c == "level_success":
                row.append(v if isinstance(v, str) else "")
            elif c in levels.LEVEL_SUMMARY_COLUMNS and (v is None or (isinstance(v, float) and math.isnan(v))):
                row.append("")
            else:
                row.append(_csv_number(v) if avail else "")
        rows.append(row)
    return pd.DataFrame(rows, columns=columns, dtype=object).to_csv(index=False, lineterminator="\n")


def write_summary(run, path=None, summary=None, **kw):
    """Writes summary.csv (SUMMARY_CSV_COLUMNS, one row per family x solver; an n/a cell has empty
    figures) atomically to `path` (default RUN_DIR/summary.csv). Returns the path."""
    if summary is None:
        summary = summarize(run, **kw)
    path = Path(path) if path else run.path / "summary.csv"
    text = summary_csv_text(summary, run_noisy(run))
    return atomic_write_text(path, text, inputs=run.inputs)


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
        doc = optional_json(source)  # a regular file only: run.json may name anything
        for f in doc.get("families", []):
            if isinstance(f, dict) and f.get("type") == "urdf" and isinstance(f.get("file"), str):
                if any(x.get("name") == f.get("name") for x in fams):
                    out[f["name"]] = Path(f["file"]).stem
    except (OSError, ValueError, AttributeError):
        pass
    return out


def robot_summary(run, confidence=stats.CONFIDENCE):
    """Per robot x solver over the solves of the robot's families (`robot_families`): solves,
    supported, successes, success_rate with its Wilson interval, time mean / median (bootstrap
    interval) / p99, outlier counts, iterations median, and the ranking within the robot
    (`rank_cells`). Empty frame when the run has no robot."""
    robots = robot_families(run)
    solves = run.solves[run.solves["family"].isin(list(robots))].copy()
    if solves.empty:
        return pd.DataFrame(columns=["robot", "solver", "families", "solves", "supported", "successes",
                                     "success_rate", "success_ci_low", "success_ci_high", "time_us_mean",
                                     "time_us_median", "time_us_median_ci_low", "time_us_median_ci_high",
                                     "time_us_p99", "time_us_outliers_mild",
                                     "time_us_outliers_severe", "iterations_median", "available", "rank", "rank_of",
                                     "tied_leader", "rank_text", "statuses"])
    solves["robot"] = solves["family"].map(robots)
    df = cell_figures(solves, keys=("robot", "solver"))
    fams = solves.groupby("robot", sort=False)["family"].unique()
    df["families"] = [", ".join(fams[r]) for r in df["robot"]]
    df["available"] = df["supported"] > 0
    lo, hi = stats.wilson_intervals(df["successes"], df["solves"], confidence)
    df["success_ci_low"] = np.where(df["available"], lo, np.nan)
    df["success_ci_high"] = np.where(df["available"], hi, np.nan)
    times, _ = cell_samples(solves, keys=("robot", "solver"))
    df["time_us_median_ci_low"], df["time_us_median_ci_high"] = stats.bootstrap_intervals(times, "median",
                                                                                          confidence=confidence)
    df = rank_cells(df, times, within="robot")
    cols = ["robot", "solver", "families", "solves", "supported", "successes", "success_rate", "success_ci_low",
            "success_ci_high", "time_us_mean", "time_us_median", "time_us_median_ci_low", "time_us_median_ci_high",
            "time_us_p99", "time_us_outliers_mild", "time_us_outliers_severe", "iterations_median", "available",
            "rank", "rank_of", "tied_leader", "rank_text", "statuses"]
    return df[cols]
