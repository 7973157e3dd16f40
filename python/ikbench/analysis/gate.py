"""The ikbench regression gate: compare a benchmark run with a committed baseline.

    scripts/regress.py compare BASELINE RUN [RUN...] [--config FILE] [--markdown FILE]
                       [--no-time] [--allow-missing] [--only-changes]
    scripts/regress.py update RUN [RUN...] [--baseline DIR] [--config FILE]
    scripts/regress.py show DIR
    scripts/regress.py history RUN [RUN...] --db DB [--last K | --segment]   (against the history store)
    (or: python3 -m ikbench gate compare|update|show ...)

This module computes: `compare(base, run, config)` returns a `GateReport`, the verdict of every
family x solver cell and figure as data, which ikbench.render.gate_render turns into console text or
markdown and ikbench.cli.gate_commands prints. Its inputs are ikbench.analysis.gate_data's Datasets (runs and
baselines, per-cell figures from ikbench.analysis.cells, the same definitions as every other table:
docs/analysis.md) and ikbench.analysis.gate_config's thresholds (docs/regression-gate.md).

Outcome rates (docs/protocols.md: wrong, not found, timed out, refused) are compared per cell by
Fisher's exact test (ikbench.analysis.stats), a change counting only when it is significant at the
config's outcome_alpha.

Time is never compared in absolute microseconds: each run's median solve times are divided by a
time unit measured in the same run (ikbench.analysis.timeunit, shared with `ikbench compare`), so a faster
or busier machine does not move the figures. Runs made with different thread counts are not
compared on time here (threads share caches unequally per solver); the statistical comparison
`python3 -m ikbench compare` compares them in time units instead.

Exit status of the command: 0 no regression, 1 at least one regression, 2 bad input (missing or
malformed file or column, different suites or seeds, a family changed size, a family x solver of
the baseline missing from the run).
"""

import enum
import math
from collections import Counter
from dataclasses import dataclass, field

from . import figures, stats
from .cells import Dataset, aggregate_cells  # noqa: F401  (the gate's names, for its callers)
from .gate_config import BUILTIN_THRESHOLDS, DEFAULT_CONFIG, THRESHOLD_KEYS, load_config, thresholds_for
from .gate_data import BASELINE_FILE, BASELINE_FORMAT, BASELINE_VERSION, DETERMINISTIC_FIELDS, FLOAT_FIELDS, INT_FIELDS, REQUIRED_COLUMNS, BadInput, load_baseline, load_run, load_runs, write_baseline
from ..io.results import NOT_ATTEMPTED, STATUSES, ResultsError  # noqa: F401
from .stats import quantile  # noqa: F401
from .timeunit import BUILTIN_TIME_REFERENCE, MEDIAN_RATIO_MIN_CELLS, median, resolve_spec, time_unit  # noqa: F401


class Change(enum.StrEnum):
    """A figure's verdict (MetricVerdict.verdict): the gate decides from these values, the renderer
    words them. A StrEnum, so the baseline's and the history's JSON hold the plain word."""
    SAME = "same"                  # equal within SAME_RTOL
    CHANGED = "changed"            # different, within the thresholds (or excused by the time budget)
    REGRESSION = "regression"      # worse beyond the thresholds: the gate fails
    IMPROVEMENT = "improvement"    # better beyond the thresholds
    NA = "n/a"                     # not compared (no value on either side, or times not compared)


class Status(enum.StrEnum):
    """A cell's verdict (CellVerdict.status): the worst of its figures' Changes for a compared cell."""
    SAME = "same"
    CHANGED = "changed"
    IMPROVED = "improved"
    REGRESSION = "REGRESSION"
    NEW = "new"                    # only in the run
    MISSING = "missing"            # only in the baseline (with --allow-missing)
    SKIPPED = "skipped"            # an override skips it


# Relative tolerance under which two deterministic figures are "the same": the
# figures of unchanged code are bit-identical, this only absorbs the rounding
# of a JSON round trip.
SAME_RTOL = 1e-9



# --------------------------------------------------------------- comparison

def compare_value(base, run, rel, min_delta=0.0, floor=0.0):
    """The Change of a figure
    where larger is worse: a regression when run > base (1 + rel), run - base >=
    min_delta and run > floor; an improvement when run < base / (1 + rel),
    base - run >= min_delta and base > floor."""
    if base is None or run is None:
        return Change.NA if base is None and run is None else Change.CHANGED
    if base == run or (math.isfinite(base) and math.isfinite(run)
                       and abs(run - base) <= SAME_RTOL * max(abs(base), abs(run))):
        return Change.SAME
    if run > base:
        if run > floor and run - base >= min_delta and run > base * (1 + rel):
            return Change.REGRESSION
    else:
        if base > floor and base - run >= min_delta and run < base / (1 + rel):
            return Change.IMPROVEMENT
    return Change.CHANGED


# Per metric (larger is worse): key and threshold keys (relative increase, least change, floor).
METRICS = [
    ("iterations_median", ("iterations_median_increase", "iterations_min_delta", None)),
    ("iterations_p90", ("iterations_p90_increase", "iterations_min_delta", None)),
    ("position_error_median", ("error_factor", None, "position_error_floor_m")),
    ("orientation_error_median", ("error_factor", None, "orientation_error_floor_rad")),
    ("fk_evals_mean", ("evals_increase", "evals_min_delta", None)),
    ("jacobian_evals_mean", ("evals_increase", "evals_min_delta", None)),
]


def compare_cell(b, r, t, unit_b, unit_r, timed, solver_time):
    """The verdicts of one family x solver: ({metric: MetricVerdict}, budget), where budget is
    (baseline, run) time-limit ends when a difference within time_limit_allowance excused them,
    else None. Numbers only: ikbench.render.gate_render words them."""
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
    verdict = Change.SAME if sb == sr else Change.CHANGED
    if lost > 0 and 100.0 * lost / n > t["success_drop_pp"] and lost >= t["success_min_flips"]:
        verdict = Change.REGRESSION
    elif sr > sb and d > t["success_drop_pp"] and sr - sb >= t["success_min_flips"]:
        verdict = Change.IMPROVEMENT
    if verdict == Change.IMPROVEMENT and r.get("targets") == "unreachable":
        verdict = Change.CHANGED  # more "successes" on known unreachable targets: see the outcome rates
    out["success"] = MetricVerdict(verdict, "success", pb, pr,
                                   {"successes": (sb, sr), "n": n, "drop_pp": t["success_drop_pp"],
                                    "min_flips": t["success_min_flips"]})
    if r["limit_violations"] > b["limit_violations"]:
        out["limits"] = MetricVerdict(Change.REGRESSION, "limits", b["limit_violations"], r["limit_violations"])
    # Wrong answers (docs/protocols.md): a claim of convergence that FK contradicts is a regression
    # whenever there are more of them, whatever the success rate does.
    wb, wr = b["statuses"].get("false-convergence", 0), r["statuses"].get("false-convergence", 0)
    if wr > wb:
        out["wrong"] = MetricVerdict(Change.REGRESSION, "wrong", wb, wr)

    out.update(compare_outcomes(b, r, t, excused))

    for key, (rel_k, delta_k, floor_k) in METRICS:
        vb, vr = b[key], r[key]
        rel = t[rel_k] - 1.0 if rel_k == "error_factor" else t[rel_k]
        verdict = compare_value(vb, vr, rel, t[delta_k] if delta_k else 0.0, t[floor_k] if floor_k else 0.0)
        facts = {"factor": t[rel_k], "floor": t[floor_k]} if rel_k == "error_factor" else \
            {"increase": t[rel_k], "min_delta": t[delta_k] if delta_k else None}
        if excused and verdict == Change.REGRESSION:
            verdict, facts["budget"] = Change.CHANGED, True
        out[key] = MetricVerdict(verdict, key, vb, vr, facts)

    # Time, normalised within each run (see time_unit); cells with few or very
    # short solves are not compared. A cell regresses when its own normalised
    # time and its solver's geometric mean over all its timed families both
    # grow beyond their thresholds: a solver that got slower is slower in
    # every family, while load on a shared machine hits cells one at a time.
    tb, tr = b["time_us_median"], r["time_us_median"]
    if unit_b is None or tb is None or tr is None:
        out["time"] = MetricVerdict(Change.NA, "time")
    elif timed is None or solver_time is None:
        out["time"] = MetricVerdict(Change.NA, "time", None, tr / unit_r, {"not_compared": True})
    else:
        nb, nr = timed
        ratio, k = solver_time
        cell_v = compare_value(nb, nr, t["time_increase"])
        solver_v = compare_value(1.0, ratio, t["time_increase_solver"])
        verdict = cell_v if cell_v in (Change.REGRESSION, Change.IMPROVEMENT) and solver_v == cell_v else Change.SAME
        out["time"] = MetricVerdict(verdict, "time", nb, nr,
                                    {"solver_ratio": ratio, "solver_families": k, "increase": t["time_increase"],
                                     "increase_solver": t["time_increase_solver"], "medians_us": (tb, tr)})
    return out, ((tl_b, tl_r) if excused else None)


# The outcome rates the gate compares (docs/protocols.md, "What an answer is"), per target kind: on
# reachable targets the bad outcomes (the converged rate is the success rate, compared as such),
# on known unreachable ones the right answer (refused) and the bad ones, "converged" there being an
# answer to a target without one.
OUTCOME_METRICS = {"reachable": ("wrong", "not-found", "timed-out"),
                   "unreachable": ("refused", "converged", "wrong", "timed-out")}
OUTCOME_KEYS = [f"outcome:{o}" for o in dict.fromkeys(o for v in OUTCOME_METRICS.values() for o in v)]


def compare_outcomes(b, r, t, excused=False):
    """{"outcome:NAME": MetricVerdict} of one cell: each outcome rate of its target kind (over all
    solves), a regression when a bad outcome rises, or the right one falls, significantly (Fisher's
    exact test, two-sided, p < outcome_alpha), an improvement in the other direction. Empty when
    either side has no outcome counts (a baseline written before them, a history store's run recorded
    before it kept them)."""
    ob, orun = b.get("outcomes"), r.get("outcomes")
    if ob is None or orun is None:
        return {}
    targets = r.get("targets") or "reachable"
    out = {}
    for o in OUTCOME_METRICS[targets]:
        (kb, nb), (kr, nr) = (ob.get(o, 0), b["n"]), (orun.get(o, 0), r["n"])
        same = (kb, nb) == (kr, nr)
        p = 1.0 if same else stats.two_proportion_test(kb, nb, kr, nr)
        rb, rr = kb / nb, kr / nr
        verdict = Change.SAME if same else Change.CHANGED
        if verdict == Change.CHANGED and p < t["outcome_alpha"]:
            worse = rr < rb if o == "refused" else rr > rb
            verdict = Change.REGRESSION if worse else Change.IMPROVEMENT
        facts = {"counts": (kb, kr), "n": (nb, nr), "p": p, "alpha": t["outcome_alpha"], "targets": targets,
                 "ci": (stats.wilson_interval(kb, nb), stats.wilson_interval(kr, nr))}
        if excused and verdict == Change.REGRESSION:
            verdict, facts["budget"] = Change.CHANGED, True
        out[f"outcome:{o}"] = MetricVerdict(verdict, f"outcome:{o}", 100.0 * rb, 100.0 * rr, facts)
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


METRIC_KEYS = ["success"] + [m[0] for m in METRICS] + ["time"]


@dataclass
class MetricVerdict:
    """One figure of one cell as data: its verdict (a Change), which figure (a METRIC_KEYS entry, or 'limits'), the baseline's and
    the run's value (success in percent, time in time units) and `facts`, the numbers the verdict
    was reached with (the thresholds, the solves behind a success rate, the solver's time ratio).
    ikbench.render.gate_render words it."""
    verdict: Change
    metric: str
    base: object = None
    run: object = None
    facts: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Finding:
    """A regression or an improvement: the cell and the figure (its MetricVerdict is the cell's)."""
    family: str
    solver: str
    metric: str


@dataclass
class CellVerdict:
    """One family x solver of the comparison. `status` (a Status): SAME, CHANGED, IMPROVED or
    REGRESSION for a compared cell (the worst of its figures), NEW (only in the run), MISSING
    (only in the baseline, with --allow-missing) or SKIPPED (an override skips it). `figures`
    maps METRIC_KEYS, the OUTCOME_KEYS of the cell's target kind (when both sides hold outcome
    counts) and 'limits' / 'wrong' (when more solves end outside the joint limits / are wrong
    answers) to MetricVerdicts; it is empty unless the cell was compared."""
    family: str
    solver: str
    n: int
    status: Status
    figures: dict = field(default_factory=dict)
    success_rate: float = math.nan   # the run's, for a new cell

    @property
    def regression(self):
        return self.status == Status.REGRESSION


@dataclass
class GateReport:
    """The gate's result as data: every cell's verdict, the regressions and improvements (Findings,
    each naming a cell's figure), notes (time unit, repeats, budgets), counts per status and the
    baseline cells missing from the run. `passed` is the gate's verdict (exit status 0)."""
    cells: list
    regressions: list
    improvements: list
    notes: list
    counts: Counter
    missing: list
    unit: tuple = (None, None)   # (baseline, run) time unit in us, None when time is not compared

    @property
    def passed(self):
        return not self.regressions

    def verdict(self, finding):
        """The MetricVerdict a Finding names."""
        cell = next(c for c in self.cells if (c.family, c.solver) == (finding.family, finding.solver))
        return cell.figures[finding.metric]

    def __getitem__(self, key):
        """Field access by name (report["regressions"]), for callers that index the report."""
        return getattr(self, key)


def _status(verdicts):
    if Change.REGRESSION in verdicts:
        return Status.REGRESSION
    if Change.IMPROVEMENT in verdicts:
        return Status.IMPROVED
    if Change.CHANGED in verdicts:
        return Status.CHANGED
    return Status.SAME


def compare(base, run, config, no_time=False, allow_missing=False, allow_noisy=False):
    """Compares `run` with `base` (Datasets) under `config` (gate_config.load_config); returns a
    GateReport. Times are not compared when the baseline or the run is noisy (run.json
    load.noisy), unless `allow_noisy`."""
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
    for d in (base, run):
        if any("outcomes" not in c for c in d.cells.values()):
            why = ("its latest run was recorded before the history store kept them: `ikbench history add` a run "
                   "recorded by this ikbench" if d.kind == "history" else
                   "a baseline written before them: `regress.py update` writes them")
            notes.append(f"outcome rates not compared: {d.source} holds no outcome counts ({why})")
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
    regressions, improvements, cells = [], [], []
    counts = Counter()
    for c in list(base.cells) + [c for c in run.cells if c not in base.cells]:
        family, solver = c
        if c in missing:
            cells.append(CellVerdict(family, solver, base.cells[c]["n"], Status.MISSING))
            counts[Status.MISSING] += 1
            continue
        if c not in base.cells:
            r = run.cells[c]
            cells.append(CellVerdict(family, solver, r["n"], Status.NEW, success_rate=r["successes"] / r["n"]))
            counts[Status.NEW] += 1
            continue
        t, skip = thresholds_for(config, family, solver)
        b, r = base.cells[c], run.cells[c]
        if skip:
            cells.append(CellVerdict(family, solver, r["n"], Status.SKIPPED))
            counts[Status.SKIPPED] += 1
            continue
        res, budget = compare_cell(b, r, t, ub, ur, timed.get(c), solver_time.get(solver))
        if budget:
            notes.append(f"{family} x {solver}: {budget[0]} solve(s) of the baseline and {budget[1]} of the run ended "
                         f"at the time budget (a difference within time_limit_allowance {t['time_limit_allowance']}): "
                         "put down to machine load, the figures they shift are not failed")
        verdict = _status([v.verdict for v in res.values()])
        counts[verdict] += 1
        for m, v in res.items():
            if v.verdict == Change.REGRESSION:
                regressions.append(Finding(family, solver, m))
            elif v.verdict == Change.IMPROVEMENT:
                improvements.append(Finding(family, solver, m))
        if r["statuses"].get("time-limit", 0) and not budget:
            notes.append(f"{family} x {solver}: {r['statuses']['time-limit']} solve(s) ended at the time budget "
                         "(success and iterations of such solves depend on machine speed)")
        cells.append(CellVerdict(family, solver, r["n"], verdict, res))
    return GateReport(cells, regressions, improvements, notes, counts, missing, (ub, ur))
