"""Statistical comparison of two runs, or of two solver specs of one run, per family x solver.

    result = compare_runs(run_a, run_b)                 # cells matched by (family, solver spec)
    result = compare_specs(run, "dls", "dls:lambda=0.2")  # family x (SPEC1 vs SPEC2)
    compare_render.format_text(result); compare_render.write(result, "cmp.md")  # or .html

Per cell: success of A and B with Wilson intervals, the difference and Fisher's exact test;
median, mean and p99 time and median iterations of A and B, with the Mann-Whitney U test on the
per-solve times (as Google Benchmark's compare.py does). Verdict of a figure: better / worse when
its test is significant at `alpha`, else no significant difference. B is compared with A: "better"
means B is better.

Runs from different machines (run.json `machine`: its model name, vendor, family, model and
stepping) or thread counts are compared in time units: each run's times are divided by its own
unit, the gate's median-ratio unit (the typical time per FK / Jacobian evaluation, see
ikbench.analysis.timeunit), and the table says so.

This module computes: a `Comparison` holds the figures, tests and verdicts of every cell as a
data frame; a verdict is data, a `PairVerdict` (the cell's `Outcome` and each figure's
`Direction`, beside the p-values in the frame), never text: ikbench.render.compare_render words it
in console text, markdown or HTML.
"""

import enum
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import figures, stats, timeunit
from .gate_config import BUILTIN_THRESHOLDS
from ..io.results import ResultsError
from ..io.specs import named as specs_named, spec_records

class Direction(enum.Enum):
    """One figure's verdict, B compared with A."""
    BETTER = "better"            # its test significant at alpha, B better
    WORSE = "worse"              # its test significant at alpha, B worse
    SAME = "same"                # no significant difference
    NA = "n/a"                   # not tested: a side has no supported solve (success) or no time
    NOT_COMPARED = "noisy"       # times not compared: a run was noisy (without --allow-noisy)


class Outcome(enum.Enum):
    """A cell's verdict over its figures."""
    BETTER = "better"            # some figure better, none worse
    WORSE = "worse"              # some figure worse, none better
    MIXED = "mixed"              # some better, some worse
    SAME = "same"                # no figure significantly different
    NA = "n/a"                   # nothing tested, or a side without a supported solve
    ONLY_A = "only in A"         # the cell is in run A only
    ONLY_B = "only in B"         # the cell is in run B only


FIGURES = ("success", "time")    # the figures a cell's verdict is made of, in this order


@dataclass(frozen=True)
class PairVerdict:
    """A cell's verdict as data: its `outcome`, the verdict of each figure (`success`, `time`:
    Directions, None for a cell of one run only) and `unsupported`, the sides ("A", "B") without a
    supported solve, which make the outcome NA."""
    outcome: Outcome
    success: Direction = None
    time: Direction = None
    unsupported: tuple = ()

    def figures(self, direction):
        """The figures (of FIGURES) whose verdict is `direction`, in order."""
        return tuple(f for f in FIGURES if getattr(self, f) is direction)

    @property
    def significant(self):
        """Worth a reader's attention: better, worse, mixed, or a cell only one run has."""
        return self.outcome in (Outcome.BETTER, Outcome.WORSE, Outcome.MIXED, Outcome.ONLY_A, Outcome.ONLY_B)


VERDICT_SAME = Direction.SAME
VERDICT_NOISY = Direction.NOT_COMPARED


def _noisy_note(runs, allow_noisy):
    """(compare times?, notes) for the runs compared: a run whose run.json says load.noisy gets
    no time verdict unless `allow_noisy` (figures.run_noisy; success and iterations are kept)."""
    noisy = [r for r in runs if figures.run_noisy(r)]
    if not noisy:
        return True, []
    names = ", ".join(dict.fromkeys(str(r.path) for r in noisy))
    if allow_noisy:
        return True, [f"noisy run ({names}): times compared anyway (--allow-noisy)"]
    return False, [f"noisy run ({names}): the machine was loaded, no time verdict (--allow-noisy to give one)"]


@dataclass
class Comparison:
    label_a: str
    label_b: str
    mode: str                    # "runs" or "specs"
    rows: pd.DataFrame
    alpha: float
    time_unit: str = "us"        # "us", or "time units" when normalised
    notes: list = field(default_factory=list)
    tests: int = 0


def _resolve(spec, specs, records):
    """The spec of the run `spec` stands for: itself, or the only spec written with that name
    (ikbench.io.specs.named); ResultsError otherwise."""
    named = specs_named(specs, spec, records)
    if len(named) == 1:
        return named[0]
    raise ResultsError(f"solver spec '{spec}' is not in the run (specs: {', '.join(specs)})"
                       + (f"; '{spec}' names several: {', '.join(named)}" if len(named) > 1 else ""))


def _normalised(solves, unit):
    if unit == 1.0:
        return solves
    s = solves.copy()
    s["time_us"] = s["time_us"] / unit
    return s


def _cells(solves):
    fig = figures.summarize(solves, intervals=False)
    times, iters = figures.cell_samples(solves)
    fig["_times"] = times
    return fig


def _verdict_success(a, b, alpha):
    if not (a.available and b.available):
        return Direction.NA, math.nan
    p = stats.two_proportion_test(int(a.successes), int(a.solves), int(b.successes), int(b.solves))
    if not (p < alpha):
        return Direction.SAME, p
    return (Direction.BETTER if b.success_rate > a.success_rate else Direction.WORSE), p


def _verdict_time(ta, tb, alpha):
    if len(ta) == 0 or len(tb) == 0:
        return Direction.NA, math.nan
    if np.all(ta == ta[0]) and np.all(tb == ta[0]):
        return Direction.SAME, 1.0
    p, a_above = stats.mann_whitney(ta, tb)
    if not (p < alpha):
        return Direction.SAME, p
    return (Direction.BETTER if a_above > 0.5 else Direction.WORSE), p


def _overall(vs, vt):
    """The Outcome of a cell whose figures have the verdicts vs (success) and vt (time)."""
    verdicts = (vs, vt)
    better, worse = Direction.BETTER in verdicts, Direction.WORSE in verdicts
    if better and worse:
        return Outcome.MIXED
    if better:
        return Outcome.BETTER
    if worse:
        return Outcome.WORSE
    if vs is Direction.NA and vt is Direction.NA:
        return Outcome.NA
    return Outcome.SAME


def _compare_cells(pairs, ca, cb, alpha, compare_time=True):
    rows, tests = [], 0
    for key, ia, ib in pairs:
        a = ca.iloc[ia] if ia is not None else None
        b = cb.iloc[ib] if ib is not None else None
        row = {"family": key[0], "solver": key[1]}
        if a is None or b is None:
            row["verdict"] = PairVerdict(Outcome.ONLY_A if b is None else Outcome.ONLY_B)
            for side, c in (("a", a), ("b", b)):
                if c is not None:
                    row.update({f"solves_{side}": c.solves, f"success_{side}": c.success_rate,
                                f"success_ci_low_{side}": c.success_ci_low, f"success_ci_high_{side}": c.success_ci_high})
            rows.append(row)
            continue
        for side, c in (("a", a), ("b", b)):
            row.update({
                f"solves_{side}": int(c.solves), f"supported_{side}": int(c.supported),
                f"successes_{side}": int(c.successes), f"success_{side}": c.success_rate,
                f"success_ci_low_{side}": c.success_ci_low, f"success_ci_high_{side}": c.success_ci_high,
                f"time_median_{side}": c.time_us_median, f"time_mean_{side}": c.time_us_mean,
                f"time_p99_{side}": c.time_us_p99, f"iterations_median_{side}": c.iterations_median,
                f"available_{side}": bool(c.available),
            })
        vs, ps = _verdict_success(a, b, alpha)
        if compare_time:
            vt, pt = _verdict_time(np.asarray(a["_times"]), np.asarray(b["_times"]), alpha)
        else:
            vt, pt = Direction.NOT_COMPARED, math.nan
        tests += (vs is not Direction.NA) + (vt not in (Direction.NA, Direction.NOT_COMPARED))
        with np.errstate(invalid="ignore", divide="ignore"):
            row["success_diff_pp"] = 100 * (b.success_rate - a.success_rate)
            row["time_median_change"] = b.time_us_median / a.time_us_median - 1 if a.time_us_median > 0 else math.nan
        unsupported = tuple(s for s, c in (("A", a), ("B", b)) if not c.available)
        row.update({"success_p": ps, "success_verdict": vs, "time_p": pt, "time_verdict": vt,
                    "verdict": PairVerdict(Outcome.NA if unsupported else _overall(vs, vt), vs, vt, unsupported)})
        rows.append(row)
    return pd.DataFrame(rows), tests


def _unit_for(a, b):
    """(unit_a, unit_b, note) for comparing times of runs a and b."""
    machines_differ = a.cpu != b.cpu and a.cpu is not None and b.cpu is not None
    threads_differ = a.threads != b.threads and a.threads is not None and b.threads is not None
    if not (machines_differ or threads_differ):
        return 1.0, 1.0, None
    # The gate's median-ratio unit over every cell of at least time_min_solves supported solves.
    ua, ub, desc = timeunit.runs_unit(a, b, min_solves=BUILTIN_THRESHOLDS["time_min_solves"])
    why = []
    if machines_differ:
        why.append(f"machines differ (A: {a.cpu}; B: {b.cpu})")
    if threads_differ:
        why.append(f"thread counts differ (A: {a.threads}, B: {b.threads})")
    if ua is None:
        return None, None, ("; ".join(why) + f": times cannot be put on one scale ({desc}); time is not compared")
    return ua, ub, ("; ".join(why) + f": times are in each run's time unit, the median-ratio unit of the "
                    f"regression gate (A: 1 unit = {ua:.4g} us, B: 1 unit = {ub:.4g} us, B at x{ub / ua:.3f} "
                    "A's time per evaluation)")


def compare_runs(a, b, alpha=0.05, allow_noisy=False):
    """Compares run B with run A, cells matched by (family, solver spec). A noisy run gets no time
    verdict unless `allow_noisy`."""
    notes = []
    if a.suite != b.suite:
        notes.append(f"different suites (A: {a.suite}, B: {b.suite}): only cells with the same family name are matched")
    elif a.seed != b.seed:
        notes.append(f"different seeds (A: {a.seed}, B: {b.seed}): the problems differ, the comparison is "
                     "between samples, not problem by problem")
    ua, ub, unit_note = _unit_for(a, b)
    if unit_note:
        notes.append(unit_note)
    sa = _normalised(a.solves, ua) if ua is not None else a.solves.assign(time_us=np.nan)
    sb = _normalised(b.solves, ub) if ub is not None else b.solves.assign(time_us=np.nan)
    ca, cb = _cells(sa), _cells(sb)
    ka = {(f, s): i for i, (f, s) in enumerate(zip(ca["family"], ca["solver"]))}
    kb = {(f, s): i for i, (f, s) in enumerate(zip(cb["family"], cb["solver"]))}
    keys = list(ka) + [k for k in kb if k not in ka]
    pairs = [(k, ka.get(k), kb.get(k)) for k in keys]
    for k, ia, ib in pairs:
        if ia is not None and ib is not None and ca.iloc[ia].solves != cb.iloc[ib].solves:
            notes.append(f"{k[0]} x {k[1]}: {ca.iloc[ia].solves} solves in A, {cb.iloc[ib].solves} in B")
    compare_time, noisy = _noisy_note((a, b), allow_noisy)
    notes += noisy
    rows, tests = _compare_cells(pairs, ca, cb, alpha, compare_time)
    unit = "us" if ua == 1.0 else ("time units" if ua is not None else "us (not compared)")
    for r in (a, b):
        notes += [f"{r.path}: {n}" for n in r.notes] + [f"{r.path}: INCOMPLETE: {i}" for i in r.issues]
    return Comparison(str(a.path), str(b.path), "runs", rows, alpha, unit, notes, tests)


def compare_specs(run, spec1, spec2, alpha=0.05, allow_noisy=False):
    """Compares solver spec2 with spec1 inside one run, per family (family x (SPEC1 vs SPEC2)); a
    noisy run gets no time verdict unless `allow_noisy`."""
    specs = list(pd.unique(run.solves["solver"]))
    records = spec_records(run)
    s1, s2 = _resolve(spec1, specs, records), _resolve(spec2, specs, records)
    if s1 == s2:
        raise ResultsError(f"--specs: '{spec1}' and '{spec2}' are the same spec '{s1}'")
    c = _cells(run.solves)
    ia = {f: i for i, (f, s) in enumerate(zip(c["family"], c["solver"])) if s == s1}
    ib = {f: i for i, (f, s) in enumerate(zip(c["family"], c["solver"])) if s == s2}
    fams = list(ia) + [f for f in ib if f not in ia]
    pairs = [((f, f"{s1} vs {s2}"), ia.get(f), ib.get(f)) for f in fams]
    compare_time, noisy = _noisy_note((run,), allow_noisy)
    rows, tests = _compare_cells(pairs, c, c, alpha, compare_time)
    notes = noisy + [f"A = {s1}, B = {s2}, both from {run.path}"] + [f"{run.path}: {n}" for n in run.notes] + \
            [f"{run.path}: INCOMPLETE: {i}" for i in run.issues]
    return Comparison(s1, s2, "specs", rows, alpha, "us", notes, tests)


# Verdict classes, in the order the significant cells are listed (worst news first).
_ORDER = {"worse": 0, "mixed": 1, "better": 2, "only": 3, "same": 4, "n/a": 5}
_CLASS = {Outcome.BETTER: "better", Outcome.WORSE: "worse", Outcome.MIXED: "mixed", Outcome.ONLY_A: "only",
          Outcome.ONLY_B: "only", Outcome.SAME: "same", Outcome.NA: "n/a"}


def verdict_class(verdict):
    """The class of a PairVerdict: 'better', 'worse', 'mixed', 'only' (a cell of one run only),
    'same' or 'n/a' (the order of _ORDER)."""
    return _CLASS[verdict.outcome]


def is_significant(verdict):
    """A PairVerdict worth a reader's attention: better, worse, mixed, or a cell only one run has."""
    return verdict.significant


def sorted_rows(result):
    """The cells, significant verdicts first (worse, mixed, better, one run only), then the rest,
    each group in the comparison's own order."""
    rows = result.rows.to_dict("records")
    return sorted(rows, key=lambda r: _ORDER[verdict_class(r["verdict"])])
