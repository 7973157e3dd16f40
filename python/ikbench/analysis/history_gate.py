"""The regression gate's history mode (`scripts/regress.py history RUN --db DB`, docs/regression-gate.md):
a run is compared with the recent history of its own machine identity instead of one committed baseline.

The baseline is built from the store: the runs of the same machine identity (record.machine_identity:
CPU, ISA, compiler, flags), suite and thread count, from clean work trees, in commit order, the run
under test left out, and noisy runs left out unless `--include-noisy` (ikbench.analysis.series: a
recorded load beyond the run's own threads above the cores, or a speed factor more than 1.5x from
the others'; they are named in the report's baseline line). `--last K` (default 5) takes the last
K; `--segment` takes,
per cell, the runs since the last change point of that cell's median time (history.changepoints
over the last 30 runs, once they are as many as a verdict needs), so that a level the history has
already accepted is the reference, not the runs before it. The deterministic figures (success,
iterations, errors, evaluations) are those of the latest run of the window; the time of a cell is
the median over the window's runs of its time divided by the run's speed factor (the median over
cells of the ratio of time per evaluation to the cell's median over the window:
ikbench.analysis.speed.speed_factors, as the gate combines repeats); `--raw` takes the times as measured.
Thresholds, time units and verdicts are the gate's own.
"""

import json

import numpy as np

from ..io.redact import redact_value
from .speed import MIN_CELLS, speed_factors
from ..io import store_queries as queries
from . import record
from .changepoints import detect
from .gate_data import BadInput, Dataset
from ..io.store_open import open_history
from .series import load_reason, needed_commits, speed_outliers
from ..io.store_validate import run_key

SEGMENT_WINDOW = 30   # runs searched for the current segment
_FIG = {"iterations_median", "iterations_p90", "position_error_median", "orientation_error_median", "fk_evals_mean",
        "jacobian_evals_mean", "time_us_median", "time_per_eval_median_us"}


def _cells_of(store, run_id):
    """Gate cells {(family, solver): figures} of a stored run."""
    fams, cell_rows, cell_points = queries.run_cells(store, run_id)
    cells = {}
    for c in cell_rows:
        f = fams.get(c["family"], {})
        st = json.loads(c["statuses"]) if isinstance(c["statuses"], str) else (c["statuses"] or {})
        cells[(c["family"], c["solver"])] = {
            "dof": int(f.get("dof") or 0), "effectors": int(f.get("effectors") or 0), "goal": str(f.get("goal") or ""),
            "n": int(c["solves"]), "attempted": int(c["supported"]), "successes": int(c["successes"]),
            "limit_violations": int(c["limit_violations"]), "statuses": st, **{k: None for k in _FIG}}
        # Outcome counts: absent in runs recorded before the store kept them (schema version 2),
        # which the gate then compares without the outcome rates, saying so.
        oc = c.get("outcomes")
        oc = json.loads(oc) if isinstance(oc, str) else oc
        if isinstance(oc, dict):
            cells[(c["family"], c["solver"])].update(outcomes={str(k): int(v) for k, v in oc.items()},
                                                     targets=c.get("targets") or "reachable")
    for p in cell_points:
        key = (p["family"], p["solver"])
        if key in cells and p["figure"] in _FIG and p["value"] is not None:
            cells[key][p["figure"]] = float(p["value"])
    return cells


def window_factors(per_run, raw=False):
    """{run: speed factor} of the window's runs: the median over cells of the time per evaluation
    relative to the cell's median over the window (1 for every run when `raw`, or for a run
    without MIN_CELLS such cells)."""
    if raw:
        return {rid: 1.0 for rid in per_run}
    f = speed_factors({rid: {c: v["time_per_eval_median_us"] for c, v in cells.items()}
                       for rid, cells in per_run.items()}, min_cells=MIN_CELLS)
    return {rid: v or 1.0 for rid, v in f.items()}


def history_dataset(db, run, last=5, segment=False, raw=False, include_noisy=False):
    """A gate Dataset of the recent history of `run`'s machine identity (see the module's text)."""
    meta = run.run or {}
    ident = record.machine_identity(meta)
    own_key = run_key(json.dumps(redact_value(meta), sort_keys=True))
    with open_history(db) as store:
        rows = queries.machine_runs(store, ident["key"], run.suite)
        ids = {r["id"] for r in rows if r["key"] != own_key and r["threads"] == run.threads}
        loaded = {r["id"]: load_reason(r["load"], r["threads"]) for r in rows}
        ordered = [int(i) for i in queries.runs(store)["run_id"] if int(i) in ids]
        if not ordered:
            dirty = queries.dirty_run_count(store, ident["key"], run.suite)
            raise BadInput(f"{store.name}: no history of machine {ident['key']} ({ident['label']}) for suite "
                                f"'{run.suite}' at {run.threads} threads" +
                                (f" ({dirty} runs of a modified work tree, which are never a reference)" if dirty
                                 else "") + ": add runs of committed code on this machine with ikbench history "
                                "add, or compare with a committed baseline (regress.py compare)")
        commits = queries.commit_labels(store)
        # Noisy runs: a recorded load beyond the run's threads above the cores, or (among the window's
        # candidates) a speed far from the others'; the window is taken from the runs that remain.
        candidates = ordered[-(SEGMENT_WINDOW if segment else last) * 3:]
        per_run = {rid: _cells_of(store, rid) for rid in candidates}
        noisy = {rid: loaded[rid] for rid in candidates if loaded.get(rid)}
        quiet = {rid: per_run[rid] for rid in candidates if rid not in noisy}
        if not include_noisy:
            noisy.update(speed_outliers(window_factors(quiet)))
        keep = candidates if include_noisy else [rid for rid in candidates if rid not in noisy]
        window = keep[-(SEGMENT_WINDOW if segment else last):]
        if not window:
            raise BadInput(f"{store.name}: every recent run of machine {ident['key']} for suite '{run.suite}' is "
                                "noisy (" + "; ".join(f"{commits[r]}: {w}" for r, w in list(noisy.items())[:5]) +
                                "): add quieter runs, or --include-noisy")
        left_out = [] if include_noisy else [rid for rid in candidates if rid in noisy and
                                             ordered.index(rid) >= ordered.index(window[0])]
        per_run = {rid: per_run[rid] for rid in window}
        latest_id = window[-1]
        latest = per_run[latest_id]
        base_meta = redact_value(json.loads(queries.run_json_text(store, latest_id)))
        name = store.name
    factors = window_factors(per_run, raw)
    need = needed_commits("time_us_median")
    cells, used, short = {}, set(), 0
    for c, cell in latest.items():
        cell = dict(cell)
        runs_c = [rid for rid in window if c in per_run[rid]]
        if segment:
            vals = [per_run[rid][c]["time_us_median"] for rid in runs_c]
            if all(v is not None and v > 0 for v in vals) and need is not None and len(vals) >= need:
                vals = [v / factors[rid] for v, rid in zip(vals, runs_c)]
                cps = detect(vals, key=json.dumps([name, ident["key"], run.suite, *c]))
                if cps:
                    runs_c = runs_c[cps[-1].index:]
            else:
                short += 1
        else:
            runs_c = runs_c[-last:]
        used.update(runs_c)
        for k in ("time_us_median", "time_per_eval_median_us"):
            v = [per_run[rid][c][k] / factors[rid] for rid in runs_c if per_run[rid][c][k] is not None]
            cell[k] = float(np.median(v)) if v else None
        cells[c] = cell
    how = "the current segment of each cell (change points)" if segment else f"the last {last} runs"
    source = (f"{name}: {how} of machine {ident['key']} ({ident['label']}), "
              f"{len(used)} runs, {commits[window[0]]} .. {commits[latest_id]}, "
              + ("times as measured" if raw else "times at the median speed of the window's runs"))
    if segment and short:
        source += (f"; {short} cells have not enough commits for a change point ({len(window)}, need {need}): "
                   "their whole window is the reference")
    if left_out:
        source += ("; left out as noisy (--include-noisy keeps them): " +
                   ", ".join(f"{commits[r]} ({noisy[r]})" for r in left_out[:8]) +
                   (f" and {len(left_out) - 8} more" if len(left_out) > 8 else ""))
    # repeats=1: the window is a reference level (medians), not repeats whose fastest time counts
    return Dataset("history", source, run.suite, base_meta, cells, repeats=1)
