"""The regression gate's inputs: runs (one, or repeats of one build combined) and baselines.

RUN is a results directory written by `ikbench run` (solves.csv, optional run.json) or a
solves.csv file; several RUNs of one build are combined (each cell keeps its fastest time).
A baseline is a directory written by `regress.py update` (baseline.json) or, just as well,
another results directory. Runs are read by ikbench.io.results (an incomplete or mixed version-2 run
is bad input); their figures are ikbench.analysis.cells.aggregate_cells. Everything here returns data
(`Dataset`s) or writes baseline.json; nothing is rendered.
"""

import datetime
import json
import math
from pathlib import Path

from . import outcomes
from ..io import results
from .cells import Dataset, aggregate_cells
from ..io.results import LEADING_SOLVE_COLUMNS, ResultsError, read_json_file, run_file
from ..io.safe_io import atomic_write_text
from .speed import speed_factors

BASELINE_FILE = "baseline.json"
BASELINE_FORMAT, BASELINE_VERSION = "ikbench-baseline", 1

# The columns of solves.csv the gate reads (by name, so extra or reordered
# columns do no harm).
REQUIRED_COLUMNS = LEADING_SOLVE_COLUMNS

# Input the gate cannot compare; the message names the file, line and column.
BadInput = ResultsError


def load_run(path, allow_incomplete=False):
    """One run's figures (ikbench.io.results reads and validates the files; run.json optional).
    allow_incomplete reads a run whose files do not match its manifest (a doctored or
    interrupted run), as the results loader's flag of the same name."""
    run = results.load(path, require_run_json=False, allow_incomplete=allow_incomplete)
    if len(run.solves) == 0:
        raise BadInput(f"{run.solves_path}: no solves (header only)")
    suites = list(dict.fromkeys(run.solves["suite"]))
    if len(suites) != 1:
        raise BadInput(f"{run.solves_path}: column 'suite' holds several suites ({', '.join(sorted(suites))}); "
                       "compare one suite at a time")
    return Dataset("run", str(path), suites[0], run.meta, aggregate_cells(run.solves, outcomes.family_info(run)))


DETERMINISTIC_FIELDS = ["n", "attempted", "successes", "limit_violations", "statuses", "iterations_median",
                        "iterations_p90", "position_error_median", "orientation_error_median", "fk_evals_mean",
                        "jacobian_evals_mean", "outcomes"]


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
    per_eval = speed_factors({i: {c: r.cells[c]["time_per_eval_median_us"] for c in first.cells}
                              for i, r in enumerate(runs)}, reference=0)
    factors = [1.0] + [per_eval[i] or 1.0 for i in range(1, len(runs))]
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
        elif run_file(path, "solves.csv").exists():
            return load_runs([path])
        else:
            raise BadInput(f"{path}: neither {BASELINE_FILE} nor solves.csv found (create a baseline with "
                           f"`regress.py update RUN_DIR --baseline {path}`)")
    elif not path.exists():
        raise BadInput(f"{path}: no such baseline (create one with `regress.py update RUN_DIR`)")
    elif path.name.endswith((".csv", ".csv.gz")):
        return load_run(path)
    try:  # a regular file within the readers' bounds, as every results file (results.read_json_file)
        data, _ = read_json_file(path, "a baseline")
    except ResultsError as e:
        raise BadInput(str(e)) from None
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
        # Outcome counts and target kind: absent from baselines written before them (the gate then
        # does not compare outcome rates and says so).
        oc = c.get("outcomes")
        if oc is not None and not (isinstance(oc, dict) and all(
                k in results.OUTCOMES and isinstance(v, int) and not isinstance(v, bool) and v >= 0
                for k, v in oc.items())):
            raise BadInput(f"{where}: field 'outcomes' must map outcomes ({', '.join(results.OUTCOMES)}) to "
                           f"non-negative integers, got {oc!r}")
        if c.get("targets", "reachable") not in ("reachable", "unreachable"):
            raise BadInput(f"{where}: field 'targets' must be 'reachable' or 'unreachable', got {c['targets']!r}")
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
    """Writes DIRECTORY/baseline.json by the output rule of ikbench.io.safe_io (`inputs`: the files
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
