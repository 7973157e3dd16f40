"""The time unit: how two runs' times are put on one scale.

Times are never compared in absolute microseconds across runs: each run's median solve times are
divided by a unit measured in the same run, so a faster or busier machine does not move the
figures. The regression gate (ikbench.analysis.gate) and the statistical comparison (ikbench.analysis.compare) both
take their unit from `time_unit`; the units it knows (the gate's `time_reference` list, first
usable one wins):

* `median-ratio`: the median over cells of the ratio of per-evaluation times (time per FK /
  Jacobian evaluation) puts the run at some factor of the baseline's speed; a change to one backend
  moves only its own cells, so it cannot move this median while most cells are untouched;
* `solver:SPEC`: the median time per evaluation of one spec in the same run;
* `run_json:KEY`: a number run.json holds (a dotted key);
* `pooled`: the median over every cell of the median time per evaluation.

Both sides are `ikbench.analysis.cells.Dataset`s (per-cell figures in the gate's form).
"""

from .stats import quantile
from ..io.specs import named, spec_records

MEDIAN_RATIO_MIN_CELLS = 3
BUILTIN_TIME_REFERENCE = ["median-ratio", "solver:dls"]


def median(values):
    return quantile(sorted(values), 0.5)


def resolve_spec(spec, solvers, records=None):
    """The solver spec meant by `spec`: itself, or the only spec written with that name
    (dls -> dls:lambda=0.05; ikbench.io.specs.named, from run.json's `records` when given); None
    when there is none or several."""
    hits = named(sorted(solvers), spec, records)
    return hits[0] if len(hits) == 1 else None


def _dig(obj, dotted):
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj if isinstance(obj, (int, float)) and not isinstance(obj, bool) else None


def valid_reference(ref):
    """Whether `ref` is one of the units this module knows."""
    return (ref in ("pooled", "median-ratio") or (ref.startswith("solver:") and len(ref) > 7)
            or (ref.startswith("run_json:") and len(ref) > 9))


def _per_eval(ds, c):
    return ds.cells[c]["time_per_eval_median_us"] or 0


def time_unit(base, run, common, refs, min_solves=0, min_us=0.0):
    """(unit_base_us, unit_run_us, description) from the first usable reference of `refs`, or
    (None, None, why none was usable). `common`: the (family, solver) cells both datasets hold."""
    tried = []
    for ref in refs:
        if ref.startswith("solver:"):
            records = {**spec_records(run.run if isinstance(run.run, dict) else {}),
                       **spec_records(base.run if isinstance(base.run, dict) else {})}
            spec = resolve_spec(ref[7:], {s for _, s in common}, records)
            if spec is None:
                tried.append(f"solver '{ref[7:]}' not in both")
                continue
            fams = [f for f, s in common if s == spec and _per_eval(base, (f, s)) > 0 and _per_eval(run, (f, s)) > 0]
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
            cells = [c for c in common if _per_eval(base, c) > 0 and _per_eval(run, c) > 0
                     and min(base.cells[c]["attempted"], run.cells[c]["attempted"]) >= min_solves
                     and min(base.cells[c]["time_us_median"], run.cells[c]["time_us_median"]) >= min_us]
            if len(cells) >= MEDIAN_RATIO_MIN_CELLS:
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
            cells = [c for c in common if _per_eval(base, c) > 0 and _per_eval(run, c) > 0]
            if cells:
                ub = median([base.cells[c]["time_per_eval_median_us"] for c in cells])
                ur = median([run.cells[c]["time_per_eval_median_us"] for c in cells])
                return ub, ur, (f"time unit = median over {len(cells)} family x solver cells of the median time per "
                                f"evaluation (pooled): baseline {ub:.4g} us, run {ur:.4g} us")
            tried.append("no timed evaluations to pool")
    return None, None, "time not compared: no usable time reference (" + "; ".join(tried) + ")"


def runs_unit(a, b, min_solves):
    """(unit_a, unit_b, description) of two loaded runs (ikbench.io.results.Run) by the median-ratio
    unit over every cell of at least `min_solves` supported solves (no floor on the time: the unit
    is a median of per-evaluation times, not a comparison of short cells); (None, None, why) when
    the runs have too few timed cells in common."""
    from .cells import Dataset, aggregate_cells

    da = Dataset("run", str(a.path), a.suite, a.meta, aggregate_cells(a.solves))
    db = Dataset("run", str(b.path), b.suite, b.meta, aggregate_cells(b.solves))
    common = [c for c in da.cells if c in db.cells]
    return time_unit(da, db, common, ["median-ratio"], min_solves=min_solves, min_us=0.0)
