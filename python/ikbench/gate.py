"""The ikbench regression gate: compare a benchmark run with a committed baseline.

    scripts/regress.py compare BASELINE RUN [RUN...] [--config FILE] [--markdown FILE]
                       [--no-time] [--allow-missing] [--only-changes]
    scripts/regress.py update RUN [RUN...] [--baseline DIR] [--config FILE]
    scripts/regress.py show DIR
    scripts/regress.py history RUN [RUN...] --db DB [--last K | --segment]   (against the history store)
    (or: python3 -m ikbench gate compare|update|show ...)

RUN is a results directory written by `ikbench run` (solves.csv, optional
run.json) or a solves.csv file; several RUNs of one build are combined (each
cell keeps its fastest time). BASELINE is a baseline directory written by
`update` (baseline.json) or, just as well, another results directory: two runs
can be compared directly. Runs are read by ikbench.results (an incomplete or
mixed version-2 run is bad input) and their per-cell figures come from
ikbench.figures.cell_figures, the same definitions as every other table
(docs/analysis.md; README section "Regression gate" for the gate's thresholds).

Time is never compared in absolute microseconds: each run's median solve times
are divided by a time unit measured in the same run (by default the typical
time of one FK/Jacobian evaluation: see time_unit), so a faster or busier
machine does not move the figures. Runs made with different thread counts are
not compared on time here (threads share caches unequally per solver); the
statistical comparison `python3 -m ikbench compare` compares them in time
units instead.

Exit status: 0 no regression, 1 at least one regression, 2 bad input (missing
or malformed file or column, different suites or seeds, a family changed size,
a family x solver of the baseline missing from the run).
"""

import argparse
import datetime
import fnmatch
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from . import figures, results
from .results import LEADING_SOLVE_COLUMNS, NOT_ATTEMPTED, STATUSES, ResultsError  # noqa: F401
from .safe_io import atomic_write_text
from .stats import quantile

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT = 0, 1, 2

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = REPO_ROOT / "scripts" / "regress_thresholds.json"
BASELINE_FILE = "baseline.json"
BASELINE_FORMAT, BASELINE_VERSION = "ikbench-baseline", 1

# The columns of solves.csv the gate reads (by name, so extra or reordered
# columns do no harm).
REQUIRED_COLUMNS = LEADING_SOLVE_COLUMNS

# Relative tolerance under which two deterministic figures are "the same": the
# figures of unchanged code are bit-identical, this only absorbs the rounding
# of a JSON round trip.
SAME_RTOL = 1e-9

THRESHOLD_KEYS = {
    "success_drop_pp": float, "success_min_flips": int,
    "iterations_median_increase": float, "iterations_p90_increase": float, "iterations_min_delta": float,
    "error_factor": float, "position_error_floor_m": float, "orientation_error_floor_rad": float,
    "evals_increase": float, "evals_min_delta": float,
    "time_increase": float, "time_increase_solver": float, "time_min_families": int, "time_min_us": float,
    "time_min_solves": int, "time_limit_allowance": int,
}
BUILTIN_THRESHOLDS = {
    "success_drop_pp": 0.5, "success_min_flips": 1,
    "iterations_median_increase": 0.10, "iterations_p90_increase": 0.20, "iterations_min_delta": 1,
    "error_factor": 1.5, "position_error_floor_m": 1e-5, "orientation_error_floor_rad": 1e-5,
    "evals_increase": 0.10, "evals_min_delta": 1,
    "time_increase": 0.5, "time_increase_solver": 0.5, "time_min_families": 2, "time_min_us": 20,
    "time_min_solves": 10, "time_limit_allowance": 2,
}
BUILTIN_TIME_REFERENCE = ["median-ratio", "solver:dls"]

# Input the gate cannot compare; the message names the file, line and column.
BadInput = ResultsError


def median(values):
    return quantile(sorted(values), 0.5)


# ------------------------------------------------------------------ reading

def _opt(v, integral=False):
    """A figure for the baseline: None for nan (no data); an int where the quantile is an
    exact order statistic of integer data (as baselines have always stored it)."""
    if v is None:
        return None
    v = float(v)
    if math.isnan(v):
        return None
    if integral and v.is_integer() and math.isfinite(v):
        return int(v)
    return v


def aggregate_cells(solves):
    """{(family, solver): figures} of one run's solves, from figures.cell_figures."""
    df = figures.cell_figures(solves)
    exact = _exact_iteration_quantiles(solves, len(df))
    cells = {}
    for i, r in enumerate(df.itertuples(index=False)):
        cells[(r.family, r.solver)] = {
            "dof": int(r.dof), "effectors": int(r.effectors), "goal": str(r.goal),
            "n": int(r.solves), "attempted": int(r.supported), "successes": int(r.successes),
            "limit_violations": int(r.limit_violations), "statuses": r.statuses,
            "iterations_median": _opt(r.iterations_median, exact[0][i]),
            "iterations_p90": _opt(r.iterations_p90, exact[1][i]),
            "position_error_median": _opt(r.position_error_median),
            "orientation_error_median": _opt(r.orientation_error_median),
            "fk_evals_mean": _opt(r.fk_evals_mean),
            "jacobian_evals_mean": _opt(r.jacobian_evals_mean),
            "time_us_median": _opt(r.time_us_median),
            "time_per_eval_median_us": _opt(r.time_per_eval_median_us),
        }
    return cells


def _exact_iteration_quantiles(solves, ngroups):
    """Per cell, whether its median / p90 iterations fall on one order statistic (or between
    equal ones): those are stored as integers."""
    codes, _ = figures._codes(solves, ("family", "solver"))
    att = figures.attempted_mask(solves)
    its = solves["iterations"].to_numpy(dtype=float)[att]
    ca = codes[att]
    out = []
    for p in (0.5, 0.9):
        q = figures.stats.group_quantiles(its, ca, ngroups, [p])[0]
        out.append(np.isfinite(q) & (q == np.floor(q)) & _on_order_statistic(its, ca, ngroups, p))
    return out


def _on_order_statistic(values, codes, ngroups, p):
    order = np.lexsort((values, codes))
    v, c = values[order], codes[order]
    counts = np.bincount(c, minlength=ngroups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    res = np.zeros(ngroups, dtype=bool)
    has = counts > 0
    h = (counts[has] - 1) * p
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, counts[has] - 1)
    res[has] = (h == lo) | (v[starts[has] + lo] == v[starts[has] + hi])
    return res


class Dataset:
    """Aggregated figures of one run or baseline: cells[(family, solver)]."""

    def __init__(self, kind, source, suite, run, cells, repeats=1, unstable=()):
        self.kind, self.source, self.suite, self.run, self.cells = kind, source, suite, run, cells
        self.repeats = repeats          # runs of the same build combined into these figures
        self.unstable = list(unstable)  # cells whose deterministic figures differed between repeats

    @property
    def seed(self):
        """The suite's master seed from run.json (top-level 'seed', 'suite.seed' or 'seeds.suite')."""
        s = self.run.get("seed")
        for parent in ("suite", "seeds"):
            if s is None and isinstance(self.run.get(parent), dict):
                s = self.run[parent].get("seed" if parent == "suite" else "suite")
        return s

    @property
    def threads(self):
        t = self.run.get("threads")
        return t if isinstance(t, int) and not isinstance(t, bool) else None

    def describe(self):
        git = self.run.get("git_revision") or self.run.get("git") or "?"
        if isinstance(git, dict):
            git = git.get("revision") or git.get("commit") or "?"
        reps = f", {self.repeats} repeats" if self.repeats > 1 else ""
        return (f"{self.source} ({self.kind}; suite {self.suite}, seed {self.seed if self.seed is not None else '?'}, "
                f"threads {self.threads or '?'}{reps}, git {git})")


def load_run(path, allow_incomplete=False):
    """One run's figures (ikbench.results reads and validates the files; run.json optional).
    allow_incomplete reads a run whose files do not match its manifest (a doctored or
    interrupted run), as the results loader's flag of the same name."""
    run = results.load(path, require_run_json=False, allow_incomplete=allow_incomplete)
    if len(run.solves) == 0:
        raise BadInput(f"{run.solves_path}: no solves (header only)")
    suites = list(dict.fromkeys(run.solves["suite"]))
    if len(suites) != 1:
        raise BadInput(f"{run.solves_path}: column 'suite' holds several suites ({', '.join(sorted(suites))}); "
                       "compare one suite at a time")
    return Dataset("run", str(path), suites[0], run.meta, aggregate_cells(run.solves))


DETERMINISTIC_FIELDS = ["n", "attempted", "successes", "limit_violations", "statuses", "iterations_median",
                        "iterations_p90", "position_error_median", "orientation_error_median", "fk_evals_mean",
                        "jacobian_evals_mean"]


def load_runs(paths, allow_incomplete=False):
    """Loads one run, or combines repeated runs of the same build and suite
    into one Dataset. Time: interference on a shared machine only ever adds
    time, so each cell keeps its fastest repeat, after each repeat is rescaled
    to the first one's speed (median over cells of per-evaluation time
    ratios). Deterministic figures: identical in every repeat unless a time
    budget binds; each cell then keeps its best repeat (most successes, fewest
    time-limit ends) and the cell is listed in `unstable`."""
    runs = [load_run(p, allow_incomplete) for p in paths]
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    for r in runs[1:]:
        if r.suite != first.suite or (r.seed is not None and first.seed is not None and r.seed != first.seed):
            raise BadInput(f"repeats differ: {first.source} is suite '{first.suite}' seed {first.seed}, "
                           f"{r.source} is suite '{r.suite}' seed {r.seed}")
        if set(r.cells) != set(first.cells):
            diff = sorted(set(r.cells) ^ set(first.cells))[:5]
            raise BadInput(f"repeats differ: {first.source} and {r.source} hold different family x solver cells "
                           f"(e.g. {', '.join(f'{f} x {s}' for f, s in diff)})")
    factors = [1.0]
    for r in runs[1:]:
        ratios = [r.cells[c]["time_per_eval_median_us"] / first.cells[c]["time_per_eval_median_us"]
                  for c in first.cells if (first.cells[c]["time_per_eval_median_us"] or 0) > 0
                  and (r.cells[c]["time_per_eval_median_us"] or 0) > 0]
        factors.append(median(ratios) if ratios else 1.0)
    cells, unstable = {}, []
    for c in first.cells:
        versions = [r.cells[c] for r in runs]
        best = max(versions, key=lambda v: (v["successes"], -v["statuses"].get("time-limit", 0)))
        if any(any(v[k] != best[k] for k in DETERMINISTIC_FIELDS) for v in versions):
            unstable.append(c)
        cell = dict(best)
        for k in ("time_us_median", "time_per_eval_median_us"):
            vals = [v[k] / f for v, f in zip(versions, factors) if v[k] is not None]
            cell[k] = min(vals) if vals else None
        cells[c] = cell
    return Dataset("run", " + ".join(r.source for r in runs), first.suite, first.run, cells,
                   repeats=len(runs), unstable=unstable)


# Baseline JSON: non-finite floats are stored as strings (strict JSON has no inf).
FLOAT_FIELDS = ["iterations_median", "iterations_p90", "position_error_median", "orientation_error_median",
                "fk_evals_mean", "jacobian_evals_mean", "time_us_median", "time_per_eval_median_us"]
INT_FIELDS = ["dof", "effectors", "n", "attempted", "successes", "limit_violations"]


def _encode(v):
    """JSON-safe copy: non-finite floats become strings, recursively."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, dict):
        return {k: _encode(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_encode(x) for x in v]
    return v


def load_baseline(path):
    path = Path(path)
    if path.is_dir():
        if (path / BASELINE_FILE).exists():
            path = path / BASELINE_FILE
        elif (path / "solves.csv").exists():
            return load_runs([path])
        else:
            raise BadInput(f"{path}: neither {BASELINE_FILE} nor solves.csv found (create a baseline with "
                           f"`regress.py update RUN_DIR --baseline {path}`)")
    elif not path.exists():
        raise BadInput(f"{path}: no such baseline (create one with `regress.py update RUN_DIR`)")
    elif path.suffix == ".csv":
        return load_run(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}:{e.lineno}: malformed JSON: {e.msg}")
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise BadInput(f"{path}: field 'format' is not '{BASELINE_FORMAT}' (not a baseline written by regress.py)")
    if data.get("version") != BASELINE_VERSION:
        raise BadInput(f"{path}: field 'version' is {data.get('version')!r}, this gate reads version {BASELINE_VERSION}")
    for k in ("suite", "cells"):
        if k not in data:
            raise BadInput(f"{path}: missing field '{k}'")
    if not isinstance(data["cells"], list) or not data["cells"]:
        raise BadInput(f"{path}: field 'cells' must be a non-empty list")
    cells = {}
    for i, c in enumerate(data["cells"]):
        where = f"{path}: cells[{i}]"
        if not isinstance(c, dict):
            raise BadInput(f"{where}: expected an object")
        for k in ["family", "solver", "goal", "statuses"] + INT_FIELDS + FLOAT_FIELDS:
            if k not in c:
                raise BadInput(f"{where}: missing field '{k}'")
        cell = dict(c)
        if not isinstance(c["statuses"], dict):
            raise BadInput(f"{where}: field 'statuses' must be an object")
        for k in INT_FIELDS:
            if not isinstance(c[k], int) or c[k] < 0:
                raise BadInput(f"{where}: field '{k}' must be a non-negative integer")
        for k in FLOAT_FIELDS:
            v = c[k]
            if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)):
                cell[k] = None if v is None else float(v)
            elif v in ("inf", "nan"):
                cell[k] = math.inf
            else:
                raise BadInput(f"{where}: field '{k}' must be a number, null or \"inf\", got {v!r}")
        key = (c["family"], c["solver"])
        if key in cells:
            raise BadInput(f"{where}: duplicate family x solver ({key[0]}, {key[1]})")
        cells[key] = cell
    repeats = data.get("repeats", 1)
    if not isinstance(repeats, int) or repeats < 1:
        raise BadInput(f"{path}: field 'repeats' must be a positive integer")
    unstable = [tuple(c) for c in data.get("unstable", []) if isinstance(c, list) and len(c) == 2]
    return Dataset("baseline", str(path), data["suite"], data.get("run") or {}, cells, repeats=repeats,
                   unstable=unstable)


def write_baseline(ds, directory, inputs=()):
    """Writes DIRECTORY/baseline.json by the output rule of ikbench.safe_io (`inputs`: the files
    the baseline is made from, which it must not replace); returns its path."""
    directory = Path(directory)
    out = directory / BASELINE_FILE
    # One cell per line so that a baseline update reads as a per-cell diff in review.
    cells = []
    for (family, solver), c in ds.cells.items():
        entry = {"family": family, "solver": solver}
        entry.update({k: _encode(v) for k, v in c.items() if k not in ("family", "solver")})
        cells.append("    " + json.dumps(entry, sort_keys=False, allow_nan=False))
    header = {
        "format": BASELINE_FORMAT, "version": BASELINE_VERSION,
        "suite": ds.suite,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "source": ds.source,
        "repeats": ds.repeats,
        "unstable": [list(c) for c in ds.unstable],
        "note": "written by `scripts/regress.py update`; figures per family x solver, see README 'Regression gate'",
        # Provenance: run.json without its per-cell summary (the cells below
        # hold the figures) and trace details.
        "run": _encode({k: v for k, v in ds.run.items() if k not in ("summary", "trace")}),
    }
    text = json.dumps(header, indent=2, allow_nan=False)[:-2] + ',\n  "cells": [\n' + ",\n".join(cells) + "\n  ]\n}\n"
    atomic_write_text(out, text, inputs=inputs)
    return out


# ------------------------------------------------------------------ config

def load_config(path):
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise BadInput(f"{path}: no such thresholds file")
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}:{e.lineno}: malformed JSON: {e.msg}")
    if not isinstance(data, dict):
        raise BadInput(f"{path}: expected a JSON object")

    def check_thresholds(obj, where, allowed_extra=()):
        out = {}
        for k, v in obj.items():
            if k.startswith("_") or k in allowed_extra:
                continue
            if k not in THRESHOLD_KEYS:
                raise BadInput(f"{path}: {where}unknown key '{k}' (known: {', '.join(sorted(THRESHOLD_KEYS))})")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise BadInput(f"{path}: {where}key '{k}' must be a non-negative number, got {v!r}")
            if k == "error_factor" and v < 1:
                raise BadInput(f"{path}: {where}key 'error_factor' must be >= 1, got {v!r}")
            out[k] = THRESHOLD_KEYS[k](v)
        return out

    thresholds = dict(BUILTIN_THRESHOLDS)
    thresholds.update(check_thresholds(data, "", allowed_extra=("time_reference", "overrides")))
    refs = data.get("time_reference", BUILTIN_TIME_REFERENCE)
    if isinstance(refs, str):
        refs = [refs]
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise BadInput(f"{path}: key 'time_reference' must be a list of strings")
    for r in refs:
        if not (r in ("pooled", "median-ratio") or (r.startswith("solver:") and len(r) > 7) or (r.startswith("run_json:") and len(r) > 9)):
            raise BadInput(f"{path}: key 'time_reference': '{r}' is not 'median-ratio', 'solver:SPEC', 'run_json:KEY' or 'pooled'")
    overrides = data.get("overrides", [])
    if not isinstance(overrides, list):
        raise BadInput(f"{path}: key 'overrides' must be a list")
    parsed = []
    for i, o in enumerate(overrides):
        where = f"overrides[{i}]: "
        if not isinstance(o, dict):
            raise BadInput(f"{path}: {where}expected an object")
        for k in ("family", "solver", "note"):
            if k in o and not isinstance(o[k], str):
                raise BadInput(f"{path}: {where}key '{k}' must be a string")
        if "skip" in o and not isinstance(o["skip"], bool):
            raise BadInput(f"{path}: {where}key 'skip' must be true or false")
        parsed.append({"family": o.get("family", "*"), "solver": o.get("solver", "*"),
                       "skip": o.get("skip", False),
                       "thresholds": check_thresholds(o, where, allowed_extra=("family", "solver", "skip", "note"))})
    return {"path": str(path), "thresholds": thresholds, "time_reference": refs, "overrides": parsed}


def thresholds_for(config, family, solver):
    t, skip = dict(config["thresholds"]), False
    for o in config["overrides"]:
        if fnmatch.fnmatchcase(family, o["family"]) and fnmatch.fnmatchcase(solver, o["solver"]):
            t.update(o["thresholds"])
            skip = o["skip"]
    return t, skip


# --------------------------------------------------------------- comparison

def _dig(obj, dotted):
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj if isinstance(obj, (int, float)) and not isinstance(obj, bool) else None


def resolve_spec(spec, solvers):
    """The solver spec meant by `spec`: itself, or the only spec named `spec` (dls -> dls:lambda=0.05)."""
    if spec in solvers:
        return spec
    named = sorted(s for s in solvers if s.split(":", 1)[0] == spec)
    return named[0] if len(named) == 1 else None


MEDIAN_RATIO_MIN_CELLS = 3


def time_unit(base, run, common, refs, min_solves=0, min_us=0.0):
    """(unit_base_us, unit_run_us, description) from the first usable reference, or (None, None, why)."""
    tried = []
    for ref in refs:
        if ref.startswith("solver:"):
            spec = resolve_spec(ref[7:], {s for _, s in common})
            if spec is None:
                tried.append(f"solver '{ref[7:]}' not in both")
                continue
            fams = [f for f, s in common if s == spec
                    and (base.cells[(f, s)]["time_per_eval_median_us"] or 0) > 0
                    and (run.cells[(f, s)]["time_per_eval_median_us"] or 0) > 0]
            if not fams:
                tried.append(f"solver '{spec}' has no timed evaluations")
                continue
            ub = median([base.cells[(f, spec)]["time_per_eval_median_us"] for f in fams])
            ur = median([run.cells[(f, spec)]["time_per_eval_median_us"] for f in fams])
            return ub, ur, (f"time unit = median time per FK/Jacobian evaluation of '{spec}' in the same run "
                            f"(median over {len(fams)} families): baseline {ub:.4g} us, run {ur:.4g} us")
        if ref.startswith("run_json:"):
            key = ref[9:]
            ub, ur = _dig(base.run, key), _dig(run.run, key)
            if ub and ur and ub > 0 and ur > 0:
                return float(ub), float(ur), (f"time unit = run.json '{key}': baseline {ub:.4g}, run {ur:.4g}")
            tried.append(f"run.json '{key}' not in both")
            continue
        if ref == "median-ratio":
            cells = [c for c in common if (base.cells[c]["time_per_eval_median_us"] or 0) > 0
                     and (run.cells[c]["time_per_eval_median_us"] or 0) > 0
                     and min(base.cells[c]["attempted"], run.cells[c]["attempted"]) >= min_solves
                     and min(base.cells[c]["time_us_median"], run.cells[c]["time_us_median"]) >= min_us]
            if len(cells) >= MEDIAN_RATIO_MIN_CELLS:
                # The run's speed relative to the baseline: the median over cells
                # of the ratio of per-evaluation times. A change to one backend
                # moves only its own cells, so it cannot move this median while
                # most cells are untouched (a plain pooled median can shift).
                factor = median([run.cells[c]["time_per_eval_median_us"] / base.cells[c]["time_per_eval_median_us"]
                                 for c in cells])
                ub = median([base.cells[c]["time_per_eval_median_us"] for c in cells])
                return ub, ub * factor, (f"time unit = the typical time per FK/Jacobian evaluation of each run: the "
                                         f"median over {len(cells)} cells of per-evaluation time ratios puts this run at "
                                         f"x{factor:.3f} the baseline's speed (unit: baseline {ub:.4g} us, "
                                         f"run {ub * factor:.4g} us)")
            tried.append(f"median-ratio needs {MEDIAN_RATIO_MIN_CELLS} timed cells, found {len(cells)}")
            continue
        if ref == "pooled":
            cells = [c for c in common if (base.cells[c]["time_per_eval_median_us"] or 0) > 0
                     and (run.cells[c]["time_per_eval_median_us"] or 0) > 0]
            if cells:
                ub = median([base.cells[c]["time_per_eval_median_us"] for c in cells])
                ur = median([run.cells[c]["time_per_eval_median_us"] for c in cells])
                return ub, ur, (f"time unit = median over {len(cells)} family x solver cells of the median time per "
                                f"evaluation (pooled): baseline {ub:.4g} us, run {ur:.4g} us")
            tried.append("no timed evaluations to pool")
    return None, None, "time not compared: no usable time reference (" + "; ".join(tried) + ")"


def compare_value(base, run, rel, min_delta=0.0, floor=0.0):
    """'same' | 'changed' | 'regression' | 'improvement' | 'n/a' for a figure
    where larger is worse: a regression when run > base (1 + rel), run - base >=
    min_delta and run > floor; an improvement when run < base / (1 + rel),
    base - run >= min_delta and base > floor."""
    if base is None or run is None:
        return "n/a" if base is None and run is None else "changed"
    if base == run or (math.isfinite(base) and math.isfinite(run)
                       and abs(run - base) <= SAME_RTOL * max(abs(base), abs(run))):
        return "same"
    if run > base:
        if run > floor and run - base >= min_delta and run > base * (1 + rel):
            return "regression"
    else:
        if base > floor and base - run >= min_delta and run < base / (1 + rel):
            return "improvement"
    return "changed"


def _rel(base, run):
    if base is None or run is None:
        return ""
    if base == run:
        return ""
    if base == 0 or not math.isfinite(base) or not math.isfinite(run):
        return f"{base:g} -> {run:g}"
    return f"{100 * (run - base) / base:+.1f}%"


# Per metric: key, column title, formatter, threshold keys (rel, min_delta, floor).
METRICS = [
    ("iterations_median", "iters med", lambda v: f"{v:g}", ("iterations_median_increase", "iterations_min_delta", None)),
    ("iterations_p90", "iters p90", lambda v: f"{v:.4g}", ("iterations_p90_increase", "iterations_min_delta", None)),
    ("position_error_median", "pos err med", lambda v: f"{v:.2e}", ("error_factor", None, "position_error_floor_m")),
    ("orientation_error_median", "ori err med", lambda v: f"{v:.2e}", ("error_factor", None, "orientation_error_floor_rad")),
    ("fk_evals_mean", "fk/solve", lambda v: f"{v:.1f}", ("evals_increase", "evals_min_delta", None)),
    ("jacobian_evals_mean", "jac/solve", lambda v: f"{v:.1f}", ("evals_increase", "evals_min_delta", None)),
]
LABELS = {"success": "success rate", "iterations_median": "median iterations", "iterations_p90": "p90 iterations",
          "position_error_median": "median position error [m]", "orientation_error_median": "median orientation error [rad]",
          "fk_evals_mean": "FK evaluations per solve", "jacobian_evals_mean": "Jacobian evaluations per solve",
          "time": "normalised median time"}


def compare_cell(b, r, t, unit_b, unit_r, timed, solver_time):
    """Returns {metric: (verdict, text, detail)} for one family x solver."""
    out = {}
    # Success: a drop of more than success_drop_pp points that also loses at
    # least success_min_flips solves (b["n"] == r["n"] is checked before).
    # Up to time_limit_allowance extra solves ending at the suite's time budget
    # are put down to machine load: the successes they cost are not counted,
    # and the cell's other deterministic figures (which these solves also
    # shift) cannot fail it. More extra time-limit ends count in full.
    sb, sr, n = b["successes"], r["successes"], r["n"]
    tl_b, tl_r = b["statuses"].get("time-limit", 0), r["statuses"].get("time-limit", 0)
    excused = 0 < abs(tl_r - tl_b) <= t["time_limit_allowance"]  # in either run: a loaded baseline run too
    lost = sb - sr - (min(max(tl_r - tl_b, 0), max(sb - sr, 0)) if excused else 0)
    pb, pr = 100.0 * sb / b["n"], 100.0 * sr / n
    d = pr - pb
    verdict = "same" if sb == sr else "changed"
    if lost > 0 and 100.0 * lost / n > t["success_drop_pp"] and lost >= t["success_min_flips"]:
        verdict = "regression"
    elif sr > sb and d > t["success_drop_pp"] and sr - sb >= t["success_min_flips"]:
        verdict = "improvement"
    text = f"{pr:.1f}%" + (f" ({d:+.1f}pp)" if sb != sr else "")
    detail = (f"{pb:.1f}% -> {pr:.1f}% ({d:+.1f} pp, {abs(sr - sb)} of {n} solves "
              f"{'lost' if sr < sb else 'gained'}; threshold {t['success_drop_pp']:g} pp and "
              f"{t['success_min_flips']} solve(s))")
    out["success"] = (verdict, text, detail)
    out["_budget"] = (tl_b, tl_r) if excused else None
    if r["limit_violations"] > b["limit_violations"]:
        out["limits"] = ("regression", f"{r['limit_violations']}",
                         f"{b['limit_violations']} -> {r['limit_violations']} solves end outside the joint limits")

    for key, _, fmt, (rel_k, delta_k, floor_k) in METRICS:
        vb, vr = b[key], r[key]
        rel = t[rel_k] - 1.0 if rel_k == "error_factor" else t[rel_k]
        verdict = compare_value(vb, vr, rel, t[delta_k] if delta_k else 0.0, t[floor_k] if floor_k else 0.0)
        if vr is None:
            text = "-"
        elif rel_k == "error_factor":
            text = fmt(vr) + (f" (x{vr / vb:.3g})" if verdict != "same" and vb and math.isfinite(vb) and math.isfinite(vr) else "")
        else:
            text = fmt(vr) + (f" ({_rel(vb, vr)})" if verdict != "same" and _rel(vb, vr) else "")
        if rel_k == "error_factor":
            limit = f"factor {t[rel_k]:g} above a floor of {t[floor_k]:g}"
            change = (f"x{vr / vb:.3g}" if vb and vr is not None and math.isfinite(vb) and math.isfinite(vr)
                      else _rel(vb, vr))
        else:
            limit = f"{100 * t[rel_k]:+g}%" + (f" and at least {t[delta_k]:g}" if delta_k and t[delta_k] else "")
            change = _rel(vb, vr)
        detail = (f"{fmt(vb) if vb is not None else '-'} -> {fmt(vr) if vr is not None else '-'} "
                  f"({change}; threshold {limit})")
        if excused and verdict == "regression":
            verdict = "changed"
            text += " (budget)"
        out[key] = (verdict, text, detail)

    # Time, normalised within each run (see time_unit); cells with few or very
    # short solves are not compared. A cell regresses when its own normalised
    # time and its solver's geometric mean over all its timed families both
    # grow beyond their thresholds: a solver that got slower is slower in
    # every family, while load on a shared machine hits cells one at a time.
    tb, tr = b["time_us_median"], r["time_us_median"]
    if unit_b is None or tb is None or tr is None:
        out["time"] = ("n/a", "-", "")
    elif timed is None or solver_time is None:
        out["time"] = ("n/a", f"{tr / unit_r:.1f} (~)", "")
    else:
        nb, nr = timed
        ratio, k = solver_time
        cell_v = compare_value(nb, nr, t["time_increase"])
        solver_v = compare_value(1.0, ratio, t["time_increase_solver"])
        verdict = cell_v if cell_v in ("regression", "improvement") and solver_v == cell_v else "same"
        text = f"{nr:.1f}" + (f" ({_rel(nb, nr)})" if verdict != "same" else "")
        out["time"] = (verdict, text,
                       f"{nb:.2f} -> {nr:.2f} time units ({_rel(nb, nr)}; this solver over its {k} timed "
                       f"families: {100 * (ratio - 1):+.1f}%; thresholds {100 * t['time_increase']:+g}% per cell and "
                       f"{100 * t['time_increase_solver']:+g}% per solver; medians {tb:.1f} -> {tr:.1f} us)")
    return out


def check_comparable(base, run, allow_missing):
    problems = []
    if base.suite != run.suite:
        raise BadInput(f"suites differ: baseline {base.source} is suite '{base.suite}', run {run.source} is "
                       f"suite '{run.suite}'")
    if base.seed is not None and run.seed is not None and base.seed != run.seed:
        raise BadInput(f"seeds differ: baseline {base.source} has seed {base.seed}, run {run.source} has seed "
                       f"{run.seed}; deterministic figures are only comparable for the same seed")
    missing = [c for c in base.cells if c not in run.cells]
    for c in base.cells:
        if c in run.cells:
            b, r = base.cells[c], run.cells[c]
            for k in ("n", "dof", "effectors", "goal"):
                if b[k] != r[k]:
                    problems.append(f"family '{c[0]}' x solver '{c[1]}': {k} is {b[k]} in the baseline but "
                                    f"{r[k]} in the run (the suite changed: update the baseline)")
    if missing and not allow_missing:
        problems += [f"family '{f}' x solver '{s}' is in the baseline but not in the run" for f, s in missing]
        problems.append("(run every solver of the baseline, or pass --allow-missing to compare the rest)")
    if problems:
        shown = problems[:25] + ([f"... and {len(problems) - 25} more"] if len(problems) > 25 else [])
        raise BadInput(f"run {run.source} cannot be compared with baseline {base.source}:\n  " + "\n  ".join(shown))
    return missing


# ------------------------------------------------------------------ output

COLUMNS = ["family", "solver", "n", "success"] + [m[1] for m in METRICS] + ["time/unit", "verdict"]
METRIC_KEYS = ["success"] + [m[0] for m in METRICS] + ["time"]


def _mark(verdict, text, markdown):
    if verdict == "regression":
        return f"**{text} [R]**" if markdown else f"{text} [R]"
    if verdict == "improvement":
        return f"_{text} [I]_" if markdown else f"{text} [I]"
    return text


def render_table(rows, markdown):
    if markdown:
        esc = lambda s: s.replace("|", "\\|")  # noqa: E731
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
        lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(COLUMNS[i]), *(len(r[i]) for r in rows)) if rows else len(COLUMNS[i]) for i in range(len(COLUMNS))]
    fmt_row = lambda row: "  ".join(c.ljust(w) if i < 2 or i == len(row) - 1 else c.rjust(w)  # noqa: E731
                                    for i, (c, w) in enumerate(zip(row, widths))).rstrip()
    out = [fmt_row(COLUMNS), fmt_row(["-" * w for w in widths])]
    out += [fmt_row(r) for r in rows]
    return "\n".join(out)


def compare(base, run, config, no_time=False, allow_missing=False, allow_noisy=False):
    """Returns a report dict: rows (text and markdown), regressions, improvements, notes. Times are
    not compared when the baseline or the run is noisy (run.json load.noisy), unless
    `allow_noisy`."""
    missing = check_comparable(base, run, allow_missing)
    common = [c for c in base.cells if c in run.cells]
    notes = []
    if no_time:
        ub = ur = None
        notes.append("time not compared (--no-time)")
    else:
        ub, ur, desc = time_unit(base, run, common, config["time_reference"],
                                 min_solves=config["thresholds"]["time_min_solves"],
                                 min_us=config["thresholds"]["time_min_us"])
        if ub is not None and base.threads and run.threads and base.threads != run.threads:
            # Threads share caches and memory bandwidth, unequally per solver.
            ub = ur = None
            desc = (f"time not compared: the baseline ran on {base.threads} thread(s), the run on {run.threads} "
                    "(run both with the same --threads)")
        notes.append(desc)
        noisy = [d.source for d in (base, run) if figures.run_noisy(d.run)]
        if noisy and ub is not None and not allow_noisy:
            ub = ur = None
            notes.append(f"time not compared: noisy run ({', '.join(noisy)}: the machine was loaded; "
                         "--allow-noisy compares anyway)")
    if run.repeats > 1 or base.repeats > 1:
        notes.append(f"times are the fastest of {base.repeats} (baseline) and {run.repeats} (run) repeats")
    for c in base.unstable + run.unstable:
        notes.append(f"{c[0]} x {c[1]}: deterministic figures differ between repeats (a time budget binds?); "
                     "the best repeat is used")
    # Normalised times of the cells whose time is compared, and per solver the
    # geometric mean of their run / baseline ratios.
    timed, logs = {}, {}
    for c in common:
        t, skip = thresholds_for(config, *c)
        b, r = base.cells[c], run.cells[c]
        if (skip or ub is None or b["time_us_median"] is None or r["time_us_median"] is None
                or min(b["attempted"], r["attempted"]) < t["time_min_solves"]
                or min(b["time_us_median"], r["time_us_median"]) < t["time_min_us"]):
            continue
        timed[c] = (b["time_us_median"] / ub, r["time_us_median"] / ur)
        logs.setdefault(c[1], []).append(math.log(timed[c][1] / timed[c][0]))
    solver_time = {s: (math.exp(sum(v) / len(v)), len(v)) for s, v in logs.items()
                   if len(v) >= config["thresholds"]["time_min_families"]}
    regressions, improvements, text_rows, md_rows = [], [], [], []
    counts = Counter()
    for c in list(base.cells) + [c for c in run.cells if c not in base.cells]:
        family, solver = c
        if c in missing:
            row = [family, solver, str(base.cells[c]["n"])] + ["-"] * (len(METRIC_KEYS)) + ["MISSING"]
            text_rows.append(row), md_rows.append(row)
            counts["missing"] += 1
            continue
        if c not in base.cells:
            r = run.cells[c]
            row = [family, solver, str(r["n"]), f"{100.0 * r['successes'] / r['n']:.1f}%"] + \
                  ["-"] * (len(METRIC_KEYS) - 1) + ["new"]
            text_rows.append(row), md_rows.append(row)
            counts["new"] += 1
            continue
        t, skip = thresholds_for(config, family, solver)
        b, r = base.cells[c], run.cells[c]
        if skip:
            row = [family, solver, str(r["n"])] + ["-"] * len(METRIC_KEYS) + ["skipped"]
            text_rows.append(row), md_rows.append(row)
            counts["skipped"] += 1
            continue
        res = compare_cell(b, r, t, ub, ur, timed.get(c), solver_time.get(solver))
        budget = res.pop("_budget")
        if budget:
            notes.append(f"{family} x {solver}: {budget[0]} solve(s) of the baseline and {budget[1]} of the run ended "
                          f"at the time budget (a difference within time_limit_allowance {t['time_limit_allowance']}): "
                          "put down to machine load, the figures they shift are not failed")
        verdicts = [v for v, _, _ in res.values()]
        if "regression" in verdicts:
            verdict = "REGRESSION"
        elif "improvement" in verdicts:
            verdict = "improved"
        elif "changed" in verdicts:
            verdict = "changed"
        else:
            verdict = "same"
        counts[verdict] += 1
        for m, (v, _, detail) in res.items():
            label = LABELS.get(m, "joint limits")
            if v == "regression":
                regressions.append(f"{family} x {solver}: {label} {detail}")
            elif v == "improvement":
                improvements.append(f"{family} x {solver}: {label} {detail}")
        if r["statuses"].get("time-limit", 0) and not budget:
            notes.append(f"{family} x {solver}: {r['statuses']['time-limit']} solve(s) ended at the time budget "
                         "(success and iterations of such solves depend on machine speed)")
        for markdown, rows in ((False, text_rows), (True, md_rows)):
            cells = [_mark(*res[k][:2], markdown) for k in METRIC_KEYS]
            if "limits" in res:
                cells[0] += " [R limits]" if not markdown else " **[R limits]**"
            rows.append([family, solver, str(r["n"])] + cells +
                        [f"**{verdict}**" if markdown and verdict == "REGRESSION" else verdict])
    return {"text_rows": text_rows, "md_rows": md_rows, "regressions": regressions, "improvements": improvements,
            "notes": notes, "counts": counts, "missing": missing}


def format_report(base, run, config, rep, markdown, only_changes=False):
    rows = rep["md_rows"] if markdown else rep["text_rows"]
    if only_changes:
        rows = [r for r in rows if r[-1].strip("*") not in ("same",)]
    c = rep["counts"]
    verdict = "FAIL" if rep["regressions"] else "PASS"
    summary = (f"{verdict}: {len(rep['regressions'])} regression(s) in {c['REGRESSION']} of "
               f"{sum(c.values())} family x solver cells; {len(rep['improvements'])} improvement(s); "
               f"{c['changed']} changed within thresholds; {c['same']} unchanged"
               + (f"; {c['new']} new" if c["new"] else "") + (f"; {c['skipped']} skipped" if c["skipped"] else "")
               + (f"; {c['missing']} MISSING" if c["missing"] else ""))
    legend = ("[R] regression beyond its threshold, [I] improvement; changes in brackets are relative to the "
              "baseline; (~) time not compared (too few solves or too fast to time)")
    out = []
    if markdown:
        out += [f"# Regression gate: {verdict}", "", f"- baseline: `{base.describe()}`", f"- run: `{run.describe()}`",
                f"- thresholds: `{config['path']}`"] + [f"- {n}" for n in rep["notes"]] + ["", legend, "",
                render_table(rows, True), ""]
        if rep["regressions"]:
            out += ["## Regressions", ""] + [f"- {x}" for x in rep["regressions"]] + [""]
        if rep["improvements"]:
            out += ["## Improvements", ""] + [f"- {x}" for x in rep["improvements"]] + [""]
        out += [f"**{summary}**", ""]
    else:
        out += [f"baseline:   {base.describe()}", f"run:        {run.describe()}",
                f"thresholds: {config['path']}"] + [f"note: {n}" for n in rep["notes"]] + ["", legend, "",
                render_table(rows, False), ""]
        if rep["regressions"]:
            out += ["REGRESSIONS:"] + [f"  {x}" for x in rep["regressions"]] + [""]
        if rep["improvements"]:
            out += ["improvements:"] + [f"  {x}" for x in rep["improvements"]] + [""]
        out += [summary]
    return "\n".join(out) + "\n"


def show_table(ds):
    rows = []
    for (family, solver), c in ds.cells.items():
        def f(k, fmt):
            return "-" if c[k] is None else fmt(c[k])
        rows.append([family, solver, str(c["n"]), f"{100.0 * c['successes'] / c['n']:.1f}%"] +
                    [f(m[0], m[2]) for m in METRICS] + [f("time_us_median", lambda v: f"{v:.1f}us"),
                                                        ",".join(f"{k}:{v}" for k, v in c["statuses"].items())])
    cols = COLUMNS[:-2] + ["time med", "statuses"]
    widths = [max(len(cols[i]), *(len(r[i]) for r in rows)) for i in range(len(cols))]
    line = lambda r: "  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(cols), line(["-" * w for w in widths])] + [line(r) for r in rows]) + "\n"


# -------------------------------------------------------------------- main

def _run_inputs(paths):
    """The files (and directories) of the runs or baselines at `paths`: what an output must not replace."""
    names = ("", "run.json", BASELINE_FILE, *results.MANIFEST_FILES)
    return [Path(p) / n for p in paths if p for n in names]


def _write_text(path, text, inputs=()):
    atomic_write_text(path, text, inputs=inputs)


def cmd_compare(args):
    config = load_config(args.config)
    base = load_baseline(args.baseline)
    run = load_runs(args.run, getattr(args, "allow_incomplete", False))
    rep = compare(base, run, config, no_time=args.no_time, allow_missing=args.allow_missing,
                  allow_noisy=args.allow_noisy)
    sys.stdout.write(format_report(base, run, config, rep, markdown=False, only_changes=args.only_changes))
    if args.markdown:
        _write_text(args.markdown, format_report(base, run, config, rep, markdown=True, only_changes=args.only_changes),
                    inputs=_run_inputs([args.baseline, args.config, *args.run]))
    return EXIT_REGRESSION if rep["regressions"] else EXIT_OK


def cmd_update(args):
    run = load_runs(args.run)
    target = Path(args.baseline) if args.baseline else REPO_ROOT / "results" / "baseline" / run.suite
    old = None
    if (target / BASELINE_FILE).exists():
        try:
            old = load_baseline(target)
        except BadInput as e:
            print(f"note: the old baseline is unreadable and will be replaced: {e}")
    limited = [f"{f} x {s}" for (f, s), c in run.cells.items() if c["statuses"].get("time-limit")]
    if limited:
        print(f"warning: {len(limited)} family x solver cells hit a time budget ({', '.join(limited[:5])}"
              f"{', ...' if len(limited) > 5 else ''}); their success and iterations depend on machine speed")
    run.kind = "baseline"
    if old is not None:
        try:
            config = load_config(args.config)
            rep = compare(old, run, config, allow_missing=True)
            if rep["counts"]["same"] == sum(rep["counts"].values()):
                print(f"The new figures equal those of the old baseline {old.source} (time within its thresholds).")
            else:
                print("What this update changes (old baseline -> new):")
                sys.stdout.write(format_report(old, run, config, rep, markdown=False, only_changes=True))
                print()
        except BadInput as e:
            print(f"note: not comparable with the old baseline ({e})")
    out = write_baseline(run, target, inputs=_run_inputs(args.run))
    fams = {f for f, _ in run.cells}
    solvers = {s for _, s in run.cells}
    print(f"wrote {out}: suite '{run.suite}', {len(run.cells)} family x solver cells ({len(fams)} families, "
          f"{len(solvers)} solvers); commit it with the change that explains it")
    return EXIT_OK


def cmd_show(args):
    ds = load_baseline(args.dir)
    print(ds.describe())
    sys.stdout.write(show_table(ds))
    return EXIT_OK


def cmd_history(args):
    from .history.gate import cmd_history as history_gate

    return history_gate(sys.modules[__name__], args)


def main(argv=None, prog="regress.py"):
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Exit status: 0 no regression, 1 regression, 2 bad input. "
                                       "See docs/regression-gate.md.")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare", help="compare RUN with BASELINE; exit 1 on any regression")
    c.add_argument("baseline", help="baseline dir (baseline.json) or a results dir / solves.csv")
    c.add_argument("run", nargs="+", help="results dir of `ikbench run` (solves.csv, run.json) or a solves.csv; "
                   "several repeated runs of one build are combined (fastest time per cell)")
    c.add_argument("--config", default=str(DEFAULT_CONFIG), help="thresholds file (default: %(default)s)")
    c.add_argument("--markdown", metavar="FILE", help="also write the report as markdown")
    c.add_argument("--no-time", action="store_true", help="do not compare times (deterministic figures only)")
    c.add_argument("--allow-noisy", action="store_true", help="compare times even when a run is marked noisy")
    c.add_argument("--allow-missing", action="store_true",
                   help="report baseline cells absent from the run instead of failing with exit 2")
    c.add_argument("--only-changes", action="store_true", help="print only the rows that changed")
    c.add_argument("--allow-incomplete", action="store_true",
                   help="read runs that are incomplete or whose files differ from their manifest (marked as such)")
    c.set_defaults(func=cmd_compare)
    u = sub.add_parser("update", help="write RUN's figures as the new baseline")
    u.add_argument("run", nargs="+", help="results dir(s) of `ikbench run` (repeats combined as for compare)")
    u.add_argument("--baseline", metavar="DIR", help="baseline dir (default: results/baseline/<suite>)")
    u.add_argument("--config", default=str(DEFAULT_CONFIG), help="thresholds used to show what changes")
    u.set_defaults(func=cmd_update)
    s = sub.add_parser("show", help="print the figures of a baseline or run")
    s.add_argument("dir", help="baseline dir, results dir or file")
    s.set_defaults(func=cmd_show)
    h = sub.add_parser("history", help="compare RUN with the recent history of its machine in a history store "
                       "(docs/history.md); exit 1 on any regression")
    from .history.gate import add_arguments as history_arguments

    history_arguments(h, DEFAULT_CONFIG)
    h.set_defaults(func=cmd_history)
    args = p.parse_args(argv)
    try:
        return args.func(args)
    except BadInput as e:
        print(f"regress.py: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK


