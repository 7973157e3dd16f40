"""The regression gate's thresholds: the shipped file (python/ikbench/data/regress_thresholds.json,
keys documented in docs/regression-gate.md), or one given by `--config FILE`, read and checked
into a plain dict; `thresholds_for` applies the per-cell overrides."""

import fnmatch
import math
from pathlib import Path

from ..io.results import ResultsError, read_json_file
from .timeunit import BUILTIN_TIME_REFERENCE, valid_reference

BadInput = ResultsError

DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "data" / "regress_thresholds.json"

THRESHOLD_KEYS = {
    "success_drop_pp": float, "success_min_flips": int,
    "iterations_median_increase": float, "iterations_p90_increase": float, "iterations_min_delta": float,
    "error_factor": float, "position_error_floor_m": float, "orientation_error_floor_rad": float,
    "evals_increase": float, "evals_min_delta": float,
    "time_increase": float, "time_increase_solver": float, "time_min_families": int, "time_min_us": float,
    "time_min_solves": int, "time_limit_allowance": int, "outcome_alpha": float,
}
BUILTIN_THRESHOLDS = {
    "success_drop_pp": 0.5, "success_min_flips": 1,
    "iterations_median_increase": 0.10, "iterations_p90_increase": 0.20, "iterations_min_delta": 1,
    "error_factor": 1.5, "position_error_floor_m": 1e-5, "orientation_error_floor_rad": 1e-5,
    "evals_increase": 0.10, "evals_min_delta": 1,
    "time_increase": 0.5, "time_increase_solver": 0.5, "time_min_families": 2, "time_min_us": 20,
    "time_min_solves": 10, "time_limit_allowance": 2, "outcome_alpha": 0.01,
}

def load_config(path):
    path = Path(path)
    if not path.exists():
        raise BadInput(f"{path}: no such thresholds file")
    try:  # a regular file within the readers' bounds (results.read_json_file)
        data, _ = read_json_file(path, "a thresholds file")
    except ResultsError as e:
        raise BadInput(str(e)) from None
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
            if k == "outcome_alpha" and v > 1:
                raise BadInput(f"{path}: {where}key 'outcome_alpha' must be a probability (<= 1), got {v!r}")
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
        if not valid_reference(r):
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
