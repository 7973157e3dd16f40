"""The regression gate's history mode (`scripts/regress.py history RUN --db DB`, docs/regression-gate.md):
a run is compared with the recent history of its own machine identity instead of one committed baseline.

The baseline is built from the store: the runs of the same machine identity (record.machine_identity:
CPU, ISA, compiler, flags), suite and thread count, from clean work trees, in commit order, the run
under test left out. `--last K` (default 5) takes the last K; `--segment` takes, per cell, the runs
since the last change point of that cell's median time (history.changepoints over the last 30 runs),
so that a level the history has already accepted is the reference, not the runs before it. The
deterministic figures (success, iterations, errors, evaluations) are those of the latest run of the
window; the time of a cell is the median over the window's runs, each rescaled to the latest run's
speed (the median over cells of the ratio of time per evaluation), as the gate combines repeats.
Thresholds, time units and verdicts are the gate's own.
"""

import hashlib
import json

import numpy as np

from . import queries, record
from .store import open_store

SEGMENT_WINDOW = 30   # runs searched for the current segment
_FIG = {"iterations_median", "iterations_p90", "position_error_median", "orientation_error_median", "fk_evals_mean",
        "jacobian_evals_mean", "time_us_median", "time_per_eval_median_us"}


def _cells_of(store, run_id):
    """Gate cells {(family, solver): figures} of a stored run."""
    fams = {r["family"]: r for r in store.query("SELECT * FROM families WHERE run_id = ?", (run_id,))}
    cells = {}
    for c in store.query("SELECT * FROM cells WHERE run_id = ?", (run_id,)):
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
    for p in store.query("SELECT family, solver, figure, value FROM points WHERE run_id = ? AND source = 'cell'",
                         (run_id,)):
        key = (p["family"], p["solver"])
        if key in cells and p["figure"] in _FIG and p["value"] is not None:
            cells[key][p["figure"]] = float(p["value"])
    return cells


def _speed_factor(cells, ref):
    ratios = [cells[c]["time_per_eval_median_us"] / ref[c]["time_per_eval_median_us"] for c in ref
              if c in cells and (cells[c]["time_per_eval_median_us"] or 0) > 0
              and (ref[c]["time_per_eval_median_us"] or 0) > 0]
    return float(np.median(ratios)) if ratios else 1.0


def history_dataset(gate, db, run, last=5, segment=False):
    """A gate Dataset of the recent history of `run`'s machine identity (see the module's text)."""
    meta = run.run or {}
    ident = record.machine_identity(meta)
    own_key = hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()[:24]
    with open_store(db, create=False) as store:
        rows = store.query("SELECT r.id, r.key, r.threads FROM runs r JOIN machines m ON m.id = r.machine_id "
                           "WHERE m.key = ? AND r.suite = ? AND (r.dirty IS NULL OR r.dirty = 0)",
                           (ident["key"], run.suite))
        ids = {r["id"] for r in rows if r["key"] != own_key and r["threads"] == run.threads}
        ordered = [int(i) for i in queries.runs(store)["run_id"] if int(i) in ids]
        if not ordered:
            dirty = store.query("SELECT COUNT(*) AS n FROM runs r JOIN machines m ON m.id = r.machine_id "
                                "WHERE m.key = ? AND r.suite = ? AND r.dirty = 1", (ident["key"], run.suite))[0]["n"]
            raise gate.BadInput(f"{store.name}: no history of machine {ident['key']} ({ident['label']}) for suite "
                                f"'{run.suite}' at {run.threads} threads" +
                                (f" ({dirty} runs of a modified work tree, which are never a reference)" if dirty
                                 else "") + ": add runs of committed code on this machine with ikbench history "
                                "add, or compare with a committed baseline (regress.py compare)")
        window = ordered[-(SEGMENT_WINDOW if segment else last):]
        per_run = {rid: _cells_of(store, rid) for rid in window}
        latest_id = window[-1]
        latest = per_run[latest_id]
        base_meta = json.loads(store.query("SELECT run_json FROM runs WHERE id = ?", (latest_id,))[0]["run_json"])
        commits = {r["id"]: queries.commit_label(r["git_commit"], r["dirty"]) for r in
                   store.query("SELECT id, git_commit, dirty FROM runs")}
        name = store.name
    factors = {rid: _speed_factor(per_run[rid], latest) for rid in window}
    cells, used = {}, set()
    for c, cell in latest.items():
        cell = dict(cell)
        runs_c = [rid for rid in window if c in per_run[rid]]
        if segment:
            vals = [per_run[rid][c]["time_us_median"] for rid in runs_c]
            if all(v is not None and v > 0 for v in vals) and len(vals) >= 6:
                from .changepoints import detect

                cps = detect(vals, key=json.dumps([name, ident["key"], run.suite, *c]))
                if cps:
                    runs_c = runs_c[cps[-1].index:]
        else:
            runs_c = runs_c[-last:]
        used.update(runs_c)
        for k in ("time_us_median", "time_per_eval_median_us"):
            v = [per_run[rid][c][k] / factors[rid] for rid in runs_c if per_run[rid][c][k] is not None]
            cell[k] = float(np.median(v)) if v else None
        cells[c] = cell
    how = "the current segment of each cell (change points)" if segment else f"the last {last} runs"
    source = (f"{name}: {how} of machine {ident['key']} ({ident['label']}), "
              f"{len(used)} runs, {commits[window[0]]} .. {commits[latest_id]}")
    # repeats=1: the window is a reference level (medians), not repeats whose fastest time counts
    return gate.Dataset("history", source, run.suite, base_meta, cells, repeats=1)


def cmd_history(gate, args):
    """scripts/regress.py history RUN [RUN...] --db DB [--last K | --segment]."""
    import sys

    if args.last < 1:
        raise gate.BadInput(f"--last {args.last}: expected an integer >= 1")
    config = gate.load_config(args.config)
    run = gate.load_runs(args.run, getattr(args, "allow_incomplete", False))
    base = history_dataset(gate, args.db, run, last=args.last, segment=args.segment)
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
    h.add_argument("--db", default="results/history.sqlite", help="history store: SQLite file or postgresql:// URL "
                   "(default results/history.sqlite)")
    h.add_argument("--last", type=int, default=5, help="compare with the last K runs of this machine (default 5)")
    h.add_argument("--segment", action="store_true", help="compare with the runs since each cell's last change point")
    h.add_argument("--config", default=str(default_config), help="thresholds file (default: %(default)s)")
    h.add_argument("--markdown", metavar="FILE", help="also write the report as markdown")
    h.add_argument("--no-time", action="store_true", help="do not compare times (deterministic figures only)")
    h.add_argument("--allow-noisy", action="store_true", help="compare times even when a run is marked noisy")
    h.add_argument("--allow-missing", action="store_true", help="report cells of the history absent from the run")
    h.add_argument("--only-changes", action="store_true", help="print only the rows that changed")
    h.add_argument("--allow-incomplete", action="store_true", help="read runs that are incomplete (marked as such)")

