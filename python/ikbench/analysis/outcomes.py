"""What an answer is and how good it is (docs/protocols.md): one definition each.

    classes = outcomes(run)                       # per solve: converged, wrong, not-found, ...
    figs = outcome_figures(run)                   # per family x solver: rates with intervals, quality
    regimes = family_regimes(run)                 # {family: seed regime}, {family: targets}

The outcome of a solve, in order of precedence (the same rule as the C++ writer,
benchmarks/harness/answer_quality.cpp, whose `outcome` column `ikbench verify` and verify.py
check against it):

    not-attempted  unsupported or invalid input (n/a in every figure)
    converged      every goal met by FK of q and q within the joint limits (the success of
                   docs/analysis.md, so the converged rate is the success rate)
    wrong          the backend claimed convergence and FK disagrees (status false-convergence), or q
                   meets the goals outside the joint limits (OpenRAVE's "wrong solution")
    timed-out      the time budget ended the solve
    refused        a target known unreachable (run.json families[].targets) answered without a claim
    not-found      a target known reachable answered without a solution

Runs written before families recorded `targets` read every family as reachable (the goal set of
every family but the unreachable ones). Rates are over all solves of a cell, like the success
rate, with Wilson 95 % intervals.

Quality of converged answers (solves.csv's quality columns, written by a protocol's run or
`ikbench run --quality`): manipulability (Yoshikawa 1985) and the smallest normalised distance to
a joint limit, as medians and 10th percentiles; the joint-space distance from the start
(`seed_distance`) as a median. Tracked paths (sequential families): the largest joint jump
between consecutive answers, the number of branch switches (jumps above the family's
`branch_jump`), and the RMS over frames of the joint velocity, acceleration and jerk at the
family's frame rate. A run without the quality columns has these figures empty.
"""

import numpy as np
import pandas as pd

from . import stats
from ..io.results import NOT_ATTEMPTED, OUTCOMES

CLAIMED = ("converged", "false-convergence")
# Outcomes with a rate of their own in summary.csv (the converged rate is success_rate).
RATED = ("wrong", "not-found", "refused", "timed-out")
# summary.csv's columns of this module, after the figures' own.
OUTCOME_COLUMNS = ["start", "targets", "starts_per_target"] + [
    f"{o.replace('-', '_')}_{k}" for o in RATED for k in ("rate", "ci_low", "ci_high")] + [
    "targets_solved_rate", "manipulability_median", "manipulability_p10", "limit_margin_median",
    "limit_margin_p10", "seed_distance_median", "joint_jump_max", "branch_switches", "joint_velocity_rms",
    "joint_acceleration_rms", "joint_jerk_rms"]
TEXT_COLUMNS = ("start", "targets")


def family_info(run):
    """{family: run.json's family object} (an empty dict for a family without one)."""
    return {f.get("name"): f for f in run.families if isinstance(f, dict)}


def family_regimes(run):
    """{family: seed regime} from run.json (nominal, zero, random, previous, near:D); families of
    runs that did not record it: "previous" for a sequential family, else "unknown"."""
    out = {}
    for name, f in family_info(run).items():
        start = f.get("start")
        out[name] = start if isinstance(start, str) and start else ("previous" if f.get("sequential") else "unknown")
    return out


def outcome_of(status, converged, within_limits, unreachable):
    """The outcome of one solve (the module's rule), from its status text, FK flags and whether its
    target is known unreachable."""
    if status in NOT_ATTEMPTED:
        return "not-attempted"
    if converged and within_limits:
        return "converged"
    if converged or status in CLAIMED:
        return "wrong"
    if status == "time-limit":
        return "timed-out"
    return "refused" if unreachable else "not-found"


def outcomes(run_or_solves, families=None):
    """Per solve, the outcome (a numpy array of OUTCOMES names), computed from status, converged,
    within_limits and the family's targets (`families`: {family: run.json family}, from the run
    when given one)."""
    if families is None:
        families = family_info(run_or_solves)
    solves = run_or_solves if isinstance(run_or_solves, pd.DataFrame) else run_or_solves.solves
    unreachable = {n for n, f in families.items() if f.get("targets") == "unreachable"}
    st = solves["status"].to_numpy()
    conv = solves["converged"].to_numpy(dtype=bool)
    lim = solves["within_limits"].to_numpy(dtype=bool)
    unr = solves["family"].isin(unreachable).to_numpy()
    out = np.where(unr, "refused", "not-found").astype(object)
    out[st == "time-limit"] = "timed-out"
    out[conv | np.isin(st, CLAIMED)] = "wrong"
    out[conv & lim] = "converged"
    out[np.isin(st, NOT_ATTEMPTED)] = "not-attempted"
    return out


def _rms(x):
    x = x[np.isfinite(x)]
    return float(np.sqrt(np.mean(x * x))) if len(x) else np.nan


def _quantile(x, q):
    x = x[np.isfinite(x)]
    return float(np.quantile(x, q)) if len(x) else np.nan


def outcome_figures(run, confidence=stats.CONFIDENCE):
    """Per family x solver (in file order): OUTCOME_COLUMNS plus `outcome_counts` (a dict outcome
    -> count), keyed by family and solver."""
    solves = run.solves
    fams = family_info(run)
    regimes = family_regimes(run)
    cls = outcomes(solves, fams)
    rows = []
    for (fam, solver), idx in solves.groupby(["family", "solver"], sort=False).indices.items():
        f = fams.get(fam, {})
        c = cls[idx]
        n = len(idx)
        row = {"family": fam, "solver": solver, "start": regimes.get(fam, "unknown"),
               "targets": f.get("targets") if isinstance(f.get("targets"), str) else "unknown",
               "starts_per_target": int(f.get("starts_per_target") or 1),
               "outcome_counts": {o: int((c == o).sum()) for o in OUTCOMES if (c == o).any()}}
        attempted = (c != "not-attempted").any()
        for o in RATED:
            k = int((c == o).sum())
            lo, hi = stats.wilson_intervals(np.array([k]), np.array([n]), confidence)
            key = o.replace("-", "_")
            row[f"{key}_rate"] = k / n if attempted and n else np.nan
            row[f"{key}_ci_low"] = float(lo[0]) if attempted and n else np.nan
            row[f"{key}_ci_high"] = float(hi[0]) if attempted and n else np.nan
        part = solves.iloc[idx]
        spt = row["starts_per_target"]
        if spt > 1 and attempted:
            ok = (c == "converged")
            target = part["problem"].to_numpy() // spt
            row["targets_solved_rate"] = float(pd.Series(ok).groupby(target).any().mean())
        else:
            row["targets_solved_rate"] = np.nan
        good = c == "converged"

        def col(name, mask=None):
            if name not in part:
                return np.array([], dtype=float)
            v = part[name].to_numpy(dtype=float)
            return v[mask] if mask is not None else v

        row["manipulability_median"] = _quantile(col("manipulability", good), 0.5)
        row["manipulability_p10"] = _quantile(col("manipulability", good), 0.1)
        row["limit_margin_median"] = _quantile(col("limit_margin", good), 0.5)
        row["limit_margin_p10"] = _quantile(col("limit_margin", good), 0.1)
        row["seed_distance_median"] = _quantile(col("seed_distance", good), 0.5)
        jumps = col("joint_jump")
        row["joint_jump_max"] = float(np.nanmax(jumps)) if np.isfinite(jumps).any() else np.nan
        sw = col("branch_switch")
        row["branch_switches"] = float(np.nansum(sw)) if np.isfinite(sw).any() else np.nan
        row["joint_velocity_rms"] = _rms(col("joint_velocity"))
        row["joint_acceleration_rms"] = _rms(col("joint_acceleration"))
        row["joint_jerk_rms"] = _rms(col("joint_jerk"))
        rows.append(row)
    return pd.DataFrame(rows, columns=["family", "solver"] + OUTCOME_COLUMNS + ["outcome_counts"])


def regime_figures(run, confidence=stats.CONFIDENCE):
    """Success and time broken down by seed regime x solver, over the run's families of each regime
    (one row per regime x solver): solves, successes, success_rate with its Wilson interval,
    time_us_median (attempted solves) with its percentile bootstrap interval (stats.bootstrap_intervals,
    the seeded resampling of every other time interval); regimes in order of first appearance."""
    regimes = family_regimes(run)
    solves = run.solves.assign(regime=run.solves["family"].map(regimes).fillna("unknown"))
    cls = outcomes(run)
    solves["ok"] = cls == "converged"
    solves["att"] = cls != "not-attempted"
    rows, times = [], []
    for (regime, solver), part in solves.groupby(["regime", "solver"], sort=False):
        n, k = len(part), int(part["ok"].sum())
        lo, hi = stats.wilson_intervals(np.array([k]), np.array([n]), confidence)
        t = part.loc[part["att"], "time_us"].to_numpy(dtype=float)
        t = t[np.isfinite(t)]
        times.append(t)
        rows.append({"regime": regime, "solver": solver, "families": part["family"].nunique(), "solves": n,
                     "successes": k, "success_rate": k / n if n else np.nan, "success_ci_low": float(lo[0]),
                     "success_ci_high": float(hi[0]), "time_us_median": float(np.median(t)) if len(t) else np.nan})
    out = pd.DataFrame(rows)
    if len(out):
        out["time_us_median_ci_low"], out["time_us_median_ci_high"] = stats.bootstrap_intervals(
            times, "median", confidence=confidence)
    return out


__all__ = ["outcomes", "outcome_of", "outcome_figures", "regime_figures", "family_regimes", "family_info",
           "OUTCOME_COLUMNS", "RATED"]
