"""Per-level figures of whole-body runs (docs/wholebody.md).

A whole-body problem has goals at priority levels (0 the highest). solves.csv's `level_errors`
holds "position:orientation" for each level from the top and `levels_met` the number of levels met
from the top (a level is met when its goals are within the run's tolerances and every level above
is met; recomputed by FK by `ikbench verify` and by ikbench.analysis.verify). Per family x solver:

    levels               the number of levels of the cell's problems (the most of any row)
    levels_met_mean      the mean of levels_met over all solves (an unattempted solve meets none)
    level_success        the share of all solves meeting levels 0..k, for k = 0, 1, ...: "r0 r1 ..."
    level0_error_median  median level-0 position error over attempted solves [m]: how far the top
                         level gives way when the lower levels are added (a strict hierarchy
                         keeps it at the level's own optimum; a weighted sum trades it off)
    level0_error_p90     its 90th percentile

The rows of a family without levels (empty cells) are left out of these figures.
"""
import math

import numpy as np
import pandas as pd

LEVEL_SUMMARY_COLUMNS = ["levels", "levels_met_mean", "level_success", "level0_error_median", "level0_error_p90"]


def parse_level_errors(cell):
    """[(position, orientation), ...] of one level_errors cell ("" -> [])."""
    if not isinstance(cell, str) or not cell.strip():
        return []
    out = []
    for token in cell.split():
        p, sep, o = token.partition(":")
        if not sep:
            raise ValueError(f"level_errors token {token!r}: expected position:orientation")
        out.append((float(p), float(o)))
    return out


def level_figures(solves, keys=("family", "solver")):
    """LEVEL_SUMMARY_COLUMNS per group of `keys` that has level columns (a DataFrame keyed by
    `keys`; empty when the solves have none)."""
    if "levels_met" not in solves or "level_errors" not in solves:
        return pd.DataFrame(columns=list(keys) + LEVEL_SUMMARY_COLUMNS)
    met = pd.to_numeric(solves["levels_met"], errors="coerce").to_numpy(dtype=float)
    errors = [parse_level_errors(c) for c in solves["level_errors"].fillna("").astype(str)]
    rows = []
    has = ~np.isnan(met)
    for key, idx in solves.groupby(list(keys), sort=False).indices.items():
        idx = np.asarray(idx)
        sel = idx[has[idx]]
        key = key if isinstance(key, tuple) else (key,)
        if len(sel) == 0:
            continue
        n = len(idx)
        levels = max((len(errors[i]) for i in sel), default=0)
        m = np.nan_to_num(met[idx], nan=0.0)
        success = [float(np.sum(m >= k + 1)) / n for k in range(levels)]
        e0 = np.array([errors[i][0][0] if errors[i] else math.inf for i in sel], dtype=float)
        e0 = np.where(np.isnan(e0), math.inf, e0)
        rows.append(dict(zip(keys, key), levels=levels, levels_met_mean=float(np.mean(m)),
                         level_success=" ".join(f"{s:.3g}" for s in success),
                         level0_error_median=float(np.quantile(e0, 0.5, method="lower")) if len(e0) else math.nan,
                         level0_error_p90=float(np.quantile(e0, 0.9, method="higher")) if len(e0) else math.nan))
    return pd.DataFrame(rows, columns=list(keys) + LEVEL_SUMMARY_COLUMNS)


def level_lines(summary):
    """Text lines of the per-level figures of a summary (none without them)."""
    if "level_success" not in summary:
        return []
    out = []
    for r in summary.to_dict("records"):
        s = r.get("level_success")
        if not isinstance(s, str) or not s:
            continue
        out.append(f"{r['family']} / {r['solver']}: levels met from the top {r['levels_met_mean']:.2f} of "
                   f"{int(r['levels'])} on average; share meeting levels 0..k: {s}; level-0 error median "
                   f"{r['level0_error_median']:.3g} m, p90 {r['level0_error_p90']:.3g} m")
    return ["per level (whole-body families, docs/wholebody.md):"] + out if out else []
