"""The criterion of `ikbench tune` (docs/tuning.md): its syntax, and the ranking of a grid's points
by it. Works on the figures of ikbench.analysis.tune.set_figures (a frame indexed by spec); returns data."""

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..io.results import ResultsError


class TuneError(ResultsError):
    """Bad input to `tune` (exit 2, one line on stderr)."""


# name -> (direction, unit, meaning). Every one is computed by `ikbench.analysis.tune.set_figures` from the
# figures of ikbench.analysis.figures over the set's solves.
SET_FIGURES = {
    "success": ("max", "", "success rate over all solves of the set (converged and within limits)"),
    "success_low": ("max", "", "lower end of that success rate's Wilson 95 % interval"),
    "worst_success": ("max", "", "lowest success rate of the set's families"),
    "mean_time": ("min", "us", "mean solve time over the set's supported solves"),
    "median_time": ("min", "us", "median solve time over the set's supported solves"),
    "p90_time": ("min", "us", "90th percentile of the solve times"),
    "p99_time": ("min", "us", "99th percentile of the solve times"),
    "worst_mean_time": ("min", "us", "highest mean time of the set's families"),
    "geomean_time": ("min", "us", "geometric mean of the families' mean times (each family weighs the same)"),
    "median_iters": ("min", "", "median iterations per solve (all attempts)"),
    "mean_evals": ("min", "", "mean FK + Jacobian evaluations per solve (a cost that does not depend on the "
                              "machine or its load)"),
    "time_ratio": ("min", "", "mean time over the reference's mean time on the same set, same run "
                              "(needs --reference)"),
    "worst_time_ratio": ("min", "", "highest family ratio of mean times to the reference's (needs --reference)"),
}
REFERENCE_FIGURES = ("time_ratio", "worst_time_ratio")


_UNUM = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUM = r"[-+]?" + _UNUM
_CONSTRAINT = re.compile(r"^(.+?)\s*(>=|<=|>|<)\s*(" + _NUM + r")$")
_TERM = re.compile(r"\s*([-+]?)\s*(?:(" + _UNUM + r")\s*\*\s*)?([a-z_0-9]+)\s*")

DEFAULT_CRITERION = "success,median_time"


@dataclass
class Clause:
    kind: str                  # "objective" or "constraint"
    terms: list                # [(coefficient, figure)]
    direction: str = "max"     # objective: "max" or "min"
    op: str = ""               # constraint: >=, <=, >, <
    bound: float = math.nan
    text: str = ""

    def value(self, row):
        v = 0.0
        for c, f in self.terms:
            x = row[f]
            if x is None or not np.isfinite(x):
                return math.nan
            v += c * float(x)
        return v

    def holds(self, row):
        v = self.value(row)
        if not np.isfinite(v):
            return False
        return {">=": v >= self.bound, "<=": v <= self.bound, ">": v > self.bound, "<": v < self.bound}[self.op]

    def figures(self):
        return [f for _, f in self.terms]


@dataclass
class Criterion:
    text: str
    clauses: list = field(default_factory=list)

    @property
    def objectives(self):
        return [c for c in self.clauses if c.kind == "objective"]

    @property
    def constraints(self):
        return [c for c in self.clauses if c.kind == "constraint"]

    def figures(self):
        return sorted({f for c in self.clauses for f in c.figures()})

    def describe(self):
        parts = []
        for c in self.constraints:
            parts.append(f"keep the points with {c.text}")
        objs = [f"{'highest' if c.direction == 'max' else 'lowest'} {c.text.split(':', 1)[-1]}"
                for c in self.objectives]
        if objs:
            parts.append(("then " if parts else "") + ", then ".join(objs))
        return "; ".join(parts) + "; ties: the first point of the grid"


def _parse_expr(text, where):
    text = text.strip()
    if not text:
        raise TuneError(f"{where}: empty expression")
    pos, terms = 0, []
    while pos < len(text):
        m = _TERM.match(text, pos)
        if not m or m.end() == pos or (terms and not m.group(1)):
            raise TuneError(f"{where}: cannot read '{text[pos:]}' (expected [NUMBER*]FIGURE terms joined by + or -, "
                            f"figures: {', '.join(SET_FIGURES)})")
        sign = -1.0 if m.group(1) == "-" else 1.0
        coef = float(m.group(2)) if m.group(2) else 1.0
        name = m.group(3)
        if name not in SET_FIGURES:
            raise TuneError(f"{where}: unknown figure '{name}' (known: {', '.join(SET_FIGURES)})")
        terms.append((sign * coef, name))
        pos = m.end()
    return terms


def parse_criterion(text):
    """Parses the criterion syntax (docs/tuning.md):

        criterion := clause (',' clause)*
        clause    := FIGURE                     objective, in the figure's own direction
                   | 'max:' EXPR | 'min:' EXPR  objective: a weighted score
                   | EXPR OP NUMBER             constraint, OP one of >= <= > <
        EXPR      := [NUMBER '*'] FIGURE (('+' | '-') [NUMBER '*'] FIGURE)*

    Constraints keep the points that meet them; objectives rank the points kept, the first
    objective first, ties broken by the next and finally by the order of the grid. Without any
    objective the default objectives `success,median_time` apply."""
    if text is None or not str(text).strip():
        raise TuneError("--criterion: empty (e.g. 'success,mean_time' or 'success>=0.999,mean_time')")
    crit = Criterion(text=str(text).strip())
    for k, raw in enumerate(crit.text.split(",")):
        item = raw.strip()
        where = f"--criterion '{crit.text}': clause {k + 1} '{item}'"
        if not item:
            raise TuneError(f"{where}: empty clause")
        m = _CONSTRAINT.match(item)
        if m:
            terms = _parse_expr(m.group(1), where)
            crit.clauses.append(Clause("constraint", terms, op=m.group(2), bound=float(m.group(3)), text=item))
            continue
        if re.match(r"^(max|min)\s*:", item):
            direction, expr = item.split(":", 1)
            terms = _parse_expr(expr, where)
            crit.clauses.append(Clause("objective", terms, direction=direction.strip(), text=item))
            continue
        if item in SET_FIGURES:
            crit.clauses.append(Clause("objective", [(1.0, item)], direction=SET_FIGURES[item][0], text=item))
            continue
        if any(op in item for op in "<>="):
            raise TuneError(f"{where}: a constraint is EXPR OP NUMBER with OP one of >= <= > < (e.g. success>=0.999)")
        raise TuneError(f"{where}: unknown figure '{item}' (known: {', '.join(SET_FIGURES)}; or max:EXPR, "
                        "min:EXPR, EXPR>=NUMBER)")
    if not crit.objectives:
        for name in DEFAULT_CRITERION.split(","):
            crit.clauses.append(Clause("objective", [(1.0, name)], direction=SET_FIGURES[name][0], text=name))
    return crit


def choose(points, criterion, order=None):
    """Ranks the points (rows of a set_figures frame, indexed by spec) by the criterion.

    Returns (ranking, excluded): `ranking` lists the specs that meet every constraint, best
    first (objectives in order; a figure that is not a number ranks last; ties keep `order`, the
    grid's order, default the frame's); `excluded` maps every other spec to why (n/a: no
    supported solve; or the first constraint it fails, with its value)."""
    order = list(points.index) if order is None else list(order)
    excluded, kept = {}, []
    for spec in order:
        row = points.loc[spec]
        if not bool(row.get("available", True)):
            excluded[spec] = "n/a: no supported solve on the tuning set"
            continue
        why = None
        for c in criterion.constraints:
            if not c.holds(row):
                v = c.value(row)
                why = f"fails {c.text} (value {_fmt_value(v)})"
                break
        if why:
            excluded[spec] = why
        else:
            kept.append(spec)

    def key(spec):
        row = points.loc[spec]
        k = []
        for c in criterion.objectives:
            v = c.value(row)
            if not np.isfinite(v):
                k += [1, 0.0]
            else:
                k += [0, -v if c.direction == "max" else v]
        return k

    ranking = sorted(kept, key=key)  # stable: ties keep the grid order
    return ranking, excluded


def _fmt_value(v):
    if v is None or not np.isfinite(v):
        return "n/a"
    return f"{v:.6g}"
