"""The regression gate's history mode (`scripts/regress.py history RUN --db DB`, docs/regression-gate.md):
a run is compared with the recent history of its own machine identity instead of one committed baseline.

The baseline is built from the store: the runs of the same machine identity (record.machine_identity:
CPU, ISA, compiler, flags), suite and thread count, from clean work trees, in commit order, the run
under test left out, and noisy runs left out unless `--include-noisy` (ikbench.history.series: a
recorded load beyond the run's own threads above the cores, or a speed factor more than 1.5x from
the others'; they are named in the report's baseline line). `--last K` (default 5) takes the last
K; `--segment` takes,
per cell, the runs since the last change point of that cell's median time (history.changepoints
over the last 30 runs, once they are as many as a verdict needs), so that a level the history has
already accepted is the reference, not the runs before it. The deterministic figures (success,
iterations, errors, evaluations) are those of the latest run of the window; the time of a cell is
the median over the window's runs of its time divided by the run's speed factor (the median over
cells of the ratio of time per evaluation to the cell's median over the window:
ikbench.speed.speed_factors, as the gate combines repeats); `--raw` takes the times as measured.
Thresholds, time units and verdicts are the gate's own.
"""

import json

import numpy as np

from ..redact import redact_value
from ..speed import MIN_CELLS, speed_factors
from . import queries, record
from .argtypes import INT32, int_in
from .changepoints import detect
from .db import open_history
from .series import load_reason, needed_commits, speed_outliers
from .validate import run_key

SEGMENT_WINDOW = 30   # runs searched for the current segment
_FIG = {"iterations_median", "iterations_p90", "position_error_median", "orientation_error_median", "fk_evals_mean",
        "jacobian_evals_mean", "time_us_median", "time_per_eval_median_us"}


def _cells_of(store, run_id):
    """Gate cells {(family, solver): figures} of a stored run."""
    fams = {r["family"]: r for r in store.query("SELECT * FROM families WHERE run_id = ? ORDER BY family {C}",
                                                (run_id,))}
    cells = {}
    for c in store.query("SELECT * FROM cells WHERE run_id = ? ORDER BY family {C}, solver {C}", (run_id,)):
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
    for p in store.query("SELECT family, solver, figure, value FROM points WHERE run_id = ? AND source = 'cell' "
                         "ORDER BY family {C}, solver {C}, figure {C}", (run_id,)):
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


def history_dataset(gate, db, run, last=5, segment=False, raw=False, include_noisy=False):
    """A gate Dataset of the recent history of `run`'s machine identity (see the module's text)."""
    meta = run.run or {}
    ident = record.machine_identity(meta)
    own_key = run_key(json.dumps(redact_value(meta), sort_keys=True))
    with open_history(db) as store:
        rows = store.query("SELECT r.id, r.key, r.threads, r.noisy, r.load FROM runs r JOIN machines m "
                           "ON m.id = r.machine_id WHERE m.key = ? AND r.suite = ? AND (r.dirty IS NULL OR r.dirty = 0) "
                           "ORDER BY r.id", (ident["key"], run.suite))
        ids = {r["id"] for r in rows if r["key"] != own_key and r["threads"] == run.threads}
        loaded = {r["id"]: load_reason(r["load"], r["threads"]) for r in rows}
        ordered = [int(i) for i in queries.runs(store)["run_id"] if int(i) in ids]
        if not ordered:
            dirty = store.query("SELECT COUNT(*) AS n FROM runs r JOIN machines m ON m.id = r.machine_id "
                                "WHERE m.key = ? AND r.suite = ? AND r.dirty = 1", (ident["key"], run.suite))[0]["n"]
            raise gate.BadInput(f"{store.name}: no history of machine {ident['key']} ({ident['label']}) for suite "
                                f"'{run.suite}' at {run.threads} threads" +
                                (f" ({dirty} runs of a modified work tree, which are never a reference)" if dirty
                                 else "") + ": add runs of committed code on this machine with ikbench history "
                                "add, or compare with a committed baseline (regress.py compare)")
        commits = {r["id"]: queries.commit_label(r["git_commit"], r["dirty"]) for r in
                   store.query("SELECT id, git_commit, dirty FROM runs ORDER BY id")}
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
            raise gate.BadInput(f"{store.name}: every recent run of machine {ident['key']} for suite '{run.suite}' is "
                                "noisy (" + "; ".join(f"{commits[r]}: {w}" for r, w in list(noisy.items())[:5]) +
                                "): add quieter runs, or --include-noisy")
        left_out = [] if include_noisy else [rid for rid in candidates if rid in noisy and
                                             ordered.index(rid) >= ordered.index(window[0])]
        per_run = {rid: per_run[rid] for rid in window}
        latest_id = window[-1]
        latest = per_run[latest_id]
        base_meta = redact_value(json.loads(store.query("SELECT run_json FROM runs WHERE id = ?",
                                                        (latest_id,))[0]["run_json"] or "{}"))
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
    return gate.Dataset("history", source, run.suite, base_meta, cells, repeats=1)


def cmd_history(gate, args):
    """scripts/regress.py history RUN [RUN...] --db DB [--last K | --segment]."""
    import sys

    if args.last < 1:
        raise gate.BadInput(f"--last {args.last}: expected an integer >= 1")
    config = gate.load_config(args.config)
    run = gate.load_runs(args.run, getattr(args, "allow_incomplete", False))
    base = history_dataset(gate, args.db, run, last=args.last, segment=args.segment, raw=args.raw,
                           include_noisy=args.include_noisy)
    rep = gate.compare(base, run, config, no_time=args.no_time, allow_missing=args.allow_missing,
                       allow_noisy=args.allow_noisy)
    sys.stdout.write(gate.format_report(base, run, config, rep, markdown=False, only_changes=args.only_changes))
    if args.markdown:
        gate._write_text(args.markdown, gate.format_report(base, run, config, rep, markdown=True,
                                                           only_changes=args.only_changes),
                         inputs=gate._run_inputs([args.config, *args.run]))
    return gate.EXIT_REGRESSION if rep["regressions"] else gate.EXIT_OK


def add_arguments(h, default_config):
    h.add_argument("run", nargs="+", help="results dir(s) of `ikbench run` (repeats of one build combined)")
    h.add_argument("--db", default="results/history.sqlite", help="history store: SQLite file, PostgreSQL connection "
                   "string or json export (default results/history.sqlite)")
    h.add_argument("--last", type=int_in(1, INT32), default=5, help="compare with the last K runs of this machine "
                   "(default 5)")
    h.add_argument("--segment", action="store_true", help="compare with the runs since each cell's last change point")
    h.add_argument("--raw", action="store_true", help="the history's times as measured (default: each run's speed "
                   "factor taken out, docs/history.md)")
    h.add_argument("--include-noisy", action="store_true", help="keep the history's noisy runs in the window (a load "
                   "above the cores, a speed far from the others')")
    h.add_argument("--config", default=str(default_config), help="thresholds file (default: %(default)s)")
    h.add_argument("--markdown", metavar="FILE", help="also write the report as markdown")
    h.add_argument("--no-time", action="store_true", help="do not compare times (deterministic figures only)")
    h.add_argument("--allow-noisy", action="store_true", help="compare times even when a run is marked noisy")
    h.add_argument("--allow-missing", action="store_true", help="report cells of the history absent from the run")
    h.add_argument("--only-changes", action="store_true", help="print only the rows that changed")
    h.add_argument("--allow-incomplete", action="store_true", help="read runs that are incomplete (marked as such)")

