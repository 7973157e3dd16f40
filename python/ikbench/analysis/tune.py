"""`python3 -m ikbench tune`: tune a solver grid on one set of problems, evaluate the chosen point
on another set it never saw, and report both (docs/tuning.md).

    tune --solvers GRID --tune-on SET --evaluate-on SET [--criterion C] [--reference SPEC]
         [--threads N] [--out DIR] [--runner-ups K] [--allow-overlap] [--force] [--ikbench PATH]

1. `ikbench run` runs every point of GRID (the `--solvers` syntax of `ikbench run`, grids and
   presets included) on the tuning set;
2. the criterion picks one point from the tuning set's figures;
3. `ikbench run` runs that point alone (and the reference, if any) on the evaluation set;
4. tune.json and tune.md in DIR give the chosen point's figures on the tuning set beside its
   figures on the evaluation set (with intervals), the runner-ups, and any overlap of the sets.

The command is owned by Python: `ikbench tune` (the C++ binary) hands over to `python3 -m
ikbench tune --ikbench ITS_PATH ...` by exec, and this module runs the harness once per item of a
set through ikbench.io.runner. Modules: ikbench.analysis.tune_sets (the sets), ikbench.analysis.tune_criterion (the
criterion and the ranking), this one (figures of a set, the runs, the report as data: tune.json),
ikbench.render.tune_render (tune.md).

Every figure comes from `ikbench.analysis.figures` (success = converged and within limits over all solves,
Wilson intervals; bootstrap intervals on times); the set figures below pool or combine them.

A SET is one or more ITEMs joined by '+'; an ITEM is `SUITE[@SEED][:FAMILY,FAMILY...]`: a
shipped suite's name or a suite file, optionally another seed (as `ikbench run --seed`), and
optionally some of its families (problems are the same as in the whole suite: a family's
problems depend only on the seed and the family's name). Each item is one `ikbench run`.
"""

import datetime
import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from . import figures
from ..io import runner
from ..io.safe_io import atomic_write_text, check_output_path, output_directory
from .tune_criterion import DEFAULT_CRITERION, REFERENCE_FIGURES, SET_FIGURES, Clause, Criterion, TuneError, choose, parse_criterion
from .tune_sets import Item, data_directory, family_keys, item_suite_file, model_names, parse_item, parse_set, problem_fingerprints, _safe



# ---------------------------------------------------------------- figures of a set

def set_figures(solves, reference=None, *, intervals=True):
    """Figures per solver spec over the solves of one set (one or more runs concatenated; family
    names unique in the set). Returns (pooled, per_family): `pooled` is indexed by solver with
    the SET_FIGURES columns plus the pooled intervals (success_ci_low/high, time_us_mean_ci_low/
    high, time_us_median_ci_low/high, iterations_median_ci_low/high) and `available`;
    `per_family` is figures.summarize(keys=(family, solver)) with `time_ratio` (family mean over
    the reference's family mean) and its conservative interval (the two means' intervals
    divided: low / high, high / low) when a reference is given."""
    pooled = figures.summarize(solves, keys=("solver",), intervals=intervals).set_index("solver")
    fam = figures.summarize(solves, keys=("family", "solver"), intervals=intervals)
    out = pd.DataFrame(index=pooled.index)
    out["available"] = pooled["available"]
    out["solves"] = pooled["solves"]
    out["successes"] = pooled["successes"]
    out["success"] = pooled["success_rate"]
    out["success_low"] = pooled["success_ci_low"]
    out["mean_time"] = pooled["time_us_mean"]
    out["median_time"] = pooled["time_us_median"]
    out["p90_time"] = pooled["time_us_p90"]
    out["p99_time"] = pooled["time_us_p99"]
    out["median_iters"] = pooled["iterations_median"]
    out["mean_evals"] = pooled["fk_evals_mean"] + pooled["jacobian_evals_mean"]
    avail = fam[fam["available"]]
    g = avail.groupby("solver", sort=False)
    out["worst_success"] = g["success_rate"].min().reindex(out.index)
    out["worst_mean_time"] = g["time_us_mean"].max().reindex(out.index)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["geomean_time"] = np.exp(g["time_us_mean"].apply(lambda x: np.log(x).mean())).reindex(out.index)
    for c in ("success_ci_low", "success_ci_high", "time_us_mean_ci_low", "time_us_mean_ci_high",
              "time_us_median_ci_low", "time_us_median_ci_high", "iterations_median_ci_low",
              "iterations_median_ci_high"):
        out[c] = pooled[c]
    if reference is not None and reference in out.index:
        ref = out.loc[reference]
        with np.errstate(divide="ignore", invalid="ignore"):
            out["time_ratio"] = out["mean_time"] / ref["mean_time"]
            out["time_ratio_ci_low"] = out["time_us_mean_ci_low"] / ref["time_us_mean_ci_high"]
            out["time_ratio_ci_high"] = out["time_us_mean_ci_high"] / ref["time_us_mean_ci_low"]
            rf = fam[fam["solver"] == reference].set_index("family")
            fam = fam.copy()
            fam["time_ratio"] = fam["time_us_mean"].to_numpy() / rf["time_us_mean"].reindex(fam["family"]).to_numpy()
            fam["time_ratio_ci_low"] = (fam["time_us_mean_ci_low"].to_numpy() /
                                        rf["time_us_mean_ci_high"].reindex(fam["family"]).to_numpy())
            fam["time_ratio_ci_high"] = (fam["time_us_mean_ci_high"].to_numpy() /
                                         rf["time_us_mean_ci_low"].reindex(fam["family"]).to_numpy())
        worst = fam[fam["available"]].groupby("solver", sort=False)["time_ratio"].max()
        out["worst_time_ratio"] = worst.reindex(out.index)
    else:
        for c in ("time_ratio", "time_ratio_ci_low", "time_ratio_ci_high", "worst_time_ratio"):
            out[c] = np.nan
    return out, fam


# ---------------------------------------------------------------- running ikbench

def find_ikbench(given=None):
    """The harness (ikbench.io.runner.find_harness): --ikbench PATH (what `ikbench tune` passes),
    else $IKBENCH_CLI, else this source tree's build/release/benchmarks/ikbench, else `ikbench`
    on PATH."""
    return runner.find_harness(given)


def load_average():
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return None


def sched_prefix(sched):
    """The command prefix of a scheduling policy: [] (normal) or chrt -f 1 (SCHED_FIFO: the run is not
    preempted by the machine's other processes, so a wall-clock budget means the solver's time)."""
    if sched in (None, "normal"):
        return []
    if sched == "fifo":
        chrt = shutil.which("chrt")
        if not chrt:
            raise TuneError("--sched fifo needs chrt (util-linux)")
        return [chrt, "-f", "1"]
    raise TuneError(f"--sched: expected normal or fifo, got '{sched}'")


def run_ikbench(exe, suite_file, seed, solvers, out_dir, threads, log_path, force, sched=None):
    """One `ikbench run` of a set's item through ikbench.io.runner (its output logged to log_path);
    returns (args, load average before, after)."""
    args = sched_prefix(sched) + [exe, "run", "--suite", str(suite_file), "--solvers", solvers, "--threads",
                                  str(threads), "--out", str(out_dir), "--no-trace", "--progress", "none",
                                  "--no-summary"]
    if seed is not None:
        args += ["--seed", str(seed)]
    if force:
        args.append("--force")
    before = load_average()
    runner.run(args, log_path=log_path, inputs=[suite_file])
    after = load_average()
    return args, before, after


def run_set(exe, items, solvers, directory, threads, force, log, sched=None):
    """Runs each item of a set; returns [(item, run_dir, record)] and the concatenated solves."""
    runs, frames = [], []
    for k, it in enumerate(items):
        suite_file = item_suite_file(it, directory / "suites")
        out = directory / f"{k}-{_safe(it.suite_name)}"
        log(f"ikbench tune: running {it.text} ({len(it.families)} families) -> {out}")
        args, before, after = run_ikbench(exe, suite_file, it.seed if it.seed_given else None, solvers, out, threads,
                                          directory / "logs" / f"{k}-{_safe(it.suite_name)}.log", force, sched)
        from ..io.results import load

        run = load(out)
        runs.append({"item": it.text, "suite": it.suite_name, "suite_file": str(suite_file), "seed": it.seed,
                     "families": it.families, "results": str(out), "command": " ".join(runner.quote(a) for a in args),
                     "load_average_before": before, "load_average_after": after,
                     "solves": int(len(run.solves)), "_run": run})
        frames.append(run.solves)
    solves = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return runs, solves



# ---------------------------------------------------------------- the command

def _points_order(run, reference):
    return [s for s in run.solver_specs if s != reference]


def _json_num(v):
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return v
    return f if math.isfinite(f) else None


FIGURE_COLUMNS = ["solves", "successes", "success", "success_ci_low", "success_ci_high", "worst_success",
                  "mean_time", "time_us_mean_ci_low", "time_us_mean_ci_high", "median_time",
                  "time_us_median_ci_low", "time_us_median_ci_high", "p90_time", "p99_time", "worst_mean_time",
                  "geomean_time", "median_iters", "iterations_median_ci_low", "iterations_median_ci_high",
                  "mean_evals", "time_ratio", "time_ratio_ci_low", "time_ratio_ci_high", "worst_time_ratio"]

FAMILY_COLUMNS = ["family", "solver", "dof", "solves", "successes", "success_rate", "success_ci_low",
                  "success_ci_high", "time_us_mean", "time_us_mean_ci_low", "time_us_mean_ci_high",
                  "time_us_median", "time_us_median_ci_low", "time_us_median_ci_high", "iterations_median",
                  "iterations_median_ci_low", "iterations_median_ci_high", "time_ratio", "time_ratio_ci_low",
                  "time_ratio_ci_high"]


def _row_json(row, cols):
    return {c: (_json_num(row[c]) if c not in ("family", "solver") else row[c]) for c in cols if c in row}


def _families_json(fam):
    cols = [c for c in FAMILY_COLUMNS if c in fam.columns]
    return [_row_json(r, cols) for _, r in fam.iterrows()]


def tune(args, log=None, markdown=None):
    """Runs the whole command; returns (finding, report dict): finding is True when no point of
    the grid meets the criterion's constraints, or the evaluation set overlaps the tuning set
    without --allow-overlap. Writes tune.json into the output
    directory and, given `markdown` (report dict, runner_ups -> text: the renderer of the command
    line), tune.md beside it."""
    log = log or (lambda m: print(m, file=sys.stderr))
    crit = parse_criterion(args.criterion)
    if args.reference is None and any(f in REFERENCE_FIGURES for f in crit.figures()):
        raise TuneError(f"--criterion '{crit.text}' uses a ratio to the reference: give --reference SPEC")
    if args.threads < 0:
        raise TuneError(f"--threads must be >= 0 (0 = all cores), got {args.threads}")
    if args.runner_ups < 0:
        raise TuneError(f"--runner-ups must be >= 0, got {args.runner_ups}")
    if not args.solvers or not args.solvers.strip():
        raise TuneError("--solvers: empty (expected a spec list or grid, e.g. dls:lambda={0.01,0.5})")
    tune_items = parse_set(args.tune_on, "--tune-on")
    eval_items = parse_set(args.evaluate_on, "--evaluate-on")
    shared = sorted(family_keys(tune_items) & family_keys(eval_items))
    notes = []
    if shared:
        text = ", ".join(f"{f} (seed {s})" for f, s in shared)
        if not args.allow_overlap:
            raise TuneError(f"the tuning and evaluation sets share families with the same name and seed, hence the "
                            f"same problems: {text}. Evaluate on other families or another seed (SUITE@SEED), or "
                            "pass --allow-overlap to run anyway (the report then flags it)")
        notes.append(f"OVERLAP: the sets share families with the same name and seed: {text}")
    exe = find_ikbench(args.ikbench)
    out = Path(args.out) if args.out else Path("results") / (
        datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + "-tune")
    inputs = [it.suite_file for it in tune_items + eval_items]  # what the outputs must never replace
    check_output_path(out, kind="dir", inputs=inputs)
    if out.exists() and any(out.iterdir()) and not args.force:
        raise TuneError(f"output directory '{out}' is not empty (pass --force to replace its runs)")
    output_directory(out, inputs=inputs)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    reference = args.reference.strip() if args.reference else None
    grid_text = args.solvers.strip()

    # 1. every point on the tuning set
    solvers = grid_text + ("," + reference if reference else "")
    tune_runs, tune_solves = run_set(exe, tune_items, solvers, out / "tune", args.threads, args.force, log,
                                      args.sched)
    order = _points_order(tune_runs[0]["_run"], reference)
    if reference and reference not in set(tune_solves["solver"]):
        raise TuneError(f"--reference '{reference}' is not among the run's solver specs")
    if not order:
        raise TuneError("the grid has no point besides the reference")
    pts, tune_fam = set_figures(tune_solves, reference)
    points = pts.loc[order]
    ranking, excluded = choose(points, crit, order)
    chosen = ranking[0] if ranking else None

    report = {
        "format": "ikbench-tune/1",
        "command": args.command_line,
        "criterion": {"text": crit.text, "meaning": crit.describe(),
                      "clauses": [{"kind": c.kind, "text": c.text, "direction": c.direction if c.kind == "objective"
                                   else None, "op": c.op or None, "bound": _json_num(c.bound),
                                   "terms": [[co, f] for co, f in c.terms]} for c in crit.clauses]},
        "grid": grid_text, "points": order, "reference": reference, "threads": args.threads, "sched": args.sched,
        "start_time": started, "ikbench": exe,
        "tuning_set": {"text": args.tune_on, "runs": [{k: v for k, v in r.items() if k != "_run"} for r in tune_runs]},
        "evaluation_set": {"text": args.evaluate_on, "runs": []},
        "ranking": ranking, "excluded": excluded, "chosen": chosen,
        "tuning": {"points": {s: _row_json(points.loc[s], FIGURE_COLUMNS) for s in order},
                   "reference": _row_json(pts.loc[reference], FIGURE_COLUMNS) if reference else None,
                   "families": _families_json(tune_fam)},
        "evaluation": None, "notes": notes, "out": str(out), "runner_ups": args.runner_ups,
    }
    if chosen is None:
        report["notes"].append("no point of the grid meets the criterion's constraints on the tuning set: nothing "
                               "was evaluated")
        _write(out, report, inputs, markdown)
        log(f"ikbench tune: no point meets the constraints of '{crit.text}' on the tuning set (see {out / 'tune.md'})")
        return True, report

    # 2. the chosen point (and the reference) on the evaluation set
    eval_solvers = chosen + ("," + reference if reference else "")
    eval_runs, eval_solves = run_set(exe, eval_items, eval_solvers, out / "evaluate", args.threads, args.force,
                                      log, args.sched)
    ran = set(eval_solves["solver"])
    expected = {chosen} | ({reference} if reference else set())
    if ran != expected:
        raise TuneError(f"the evaluation runs ran {sorted(ran)}, expected {sorted(expected)}")
    ev, eval_fam = set_figures(eval_solves, reference)
    report["evaluation_set"]["runs"] = [{k: v for k, v in r.items() if k != "_run"} for r in eval_runs]
    report["evaluation"] = {"point": _row_json(ev.loc[chosen], FIGURE_COLUMNS),
                            "reference": _row_json(ev.loc[reference], FIGURE_COLUMNS) if reference else None,
                            "families": _families_json(eval_fam)}

    # 3. overlap of what was actually run
    finding = False
    tp, ep = {}, {}
    for r in tune_runs:
        tp.update(problem_fingerprints(r["_run"]))
    for r in eval_runs:
        ep.update(problem_fingerprints(r["_run"]))
    common = set(tp) & set(ep)
    if common:
        ex = sorted(ep[k] for k in common)[:3]
        notes.append(f"OVERLAP: {len(common)} of the {len(ep)} evaluation problems are also in the tuning set "
                     f"(e.g. {', '.join(f'{f}/{p}' for f, p in ex)}): their figures are not an evaluation on unseen "
                     "problems")
        if not args.allow_overlap:
            finding = True
    tm, em = {}, {}
    for r in tune_runs:
        tm.update(model_names(r["_run"]))
    for r in eval_runs:
        em.update(model_names(r["_run"]))
    same_models = sorted({em[k][0] or "?" for k in set(tm) & set(em)})
    if same_models:
        notes.append("same model in both sets (other targets): " + ", ".join(same_models) +
                     "; the evaluation on those models is on unseen targets of a model the point was tuned on")
    report["end_time"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    _write(out, report, inputs, markdown)
    return finding, report


# ---------------------------------------------------------------- reading the report

def _g(d, k):
    v = d.get(k) if d else None
    return np.nan if v is None else v



def overlapping(p, c):
    """Which 95 % intervals of point p overlap those of point c: success (Wilson), mean time
    (bootstrap)."""
    out = []
    if c is None:
        return out
    for name, lo, hi in (("success", "success_ci_low", "success_ci_high"),
                         ("mean time", "time_us_mean_ci_low", "time_us_mean_ci_high")):
        a, b, x, y = _g(p, lo), _g(p, hi), _g(c, lo), _g(c, hi)
        if all(np.isfinite(v) for v in (a, b, x, y)) and a <= y and x <= b:
            out.append(name)
    return out



def _write(out, report, inputs=(), markdown=None):
    crit_figs = []
    for c in report["criterion"]["clauses"]:
        for _, f in c["terms"]:
            if f not in crit_figs:
                crit_figs.append(f)
    report["criterion_figures"] = crit_figs
    atomic_write_text(out / "tune.json", json.dumps(report, indent=1, allow_nan=False) + "\n", inputs=inputs)
    if markdown is not None:
        atomic_write_text(out / "tune.md", markdown(report, runner_ups=report.get("runner_ups", 5)), inputs=inputs)


def add_arguments(p):
    p.add_argument("--solvers", required=True, metavar="GRID",
                   help="the points: a spec list or grid, as `ikbench run --solvers` (e.g. dls:lambda={0.01,0.5})")
    p.add_argument("--tune-on", required=True, metavar="SET",
                   help="tuning set: SUITE[@SEED][:FAMILY,...] joined by '+' (suite name or file)")
    p.add_argument("--evaluate-on", required=True, metavar="SET",
                   help="evaluation set, same syntax; must not share a family (name and seed) with the tuning set")
    p.add_argument("--criterion", default=DEFAULT_CRITERION,
                   help="how the point is chosen (default 'success,median_time': highest success, then lowest "
                        "median time, which a few preempted solves do not move as they move the mean); e.g. 'success>=0.999,mean_time', 'max:success-0.001*mean_time' (docs/tuning.md)")
    p.add_argument("--reference", metavar="SPEC", help="a spec run beside the points on both sets (not a point): "
                   "gives the figures time_ratio and worst_time_ratio")
    p.add_argument("--threads", type=int, default=1, help="threads of each `ikbench run` (default 1; 0 = all cores)")
    p.add_argument("--out", help="output directory (default results/<timestamp>-tune)")
    p.add_argument("--runner-ups", type=int, default=5, help="runner-ups listed in tune.md (default 5)")
    p.add_argument("--allow-overlap", action="store_true",
                   help="run even when the sets share families (flagged in the report)")
    p.add_argument("--force", action="store_true", help="replace the runs in a non-empty --out")
    p.add_argument("--sched", choices=("normal", "fifo"), default="normal",
                   help="fifo: run each `ikbench run` under chrt -f 1 (SCHED_FIFO, needs root): on a loaded machine "
                        "the solves are then not preempted past their wall-clock budget")
    p.add_argument("--ikbench", help="the harness binary (`ikbench tune` passes its own path; default: $IKBENCH_CLI, "
                   "else the source tree's build/release, else ikbench on PATH)")
