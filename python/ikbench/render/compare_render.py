"""A comparison (ikbench.analysis.compare.Comparison) as text: the console table (python3-tabulate, fitted
to the terminal's width by ikbench.render.console without cutting a name, significant cells first,
verdicts coloured as Google Benchmark's compare.py colours them, the header saying that B is
compared with A), markdown (a tabulate pipe table) and one self-contained HTML page (the jinja2 template
templates/compare.html.j2, which escapes every name). Nothing here computes a figure or a verdict:
the verdicts arrive as data (compare.PairVerdict) and are worded here only (verdict_text).
"""

import math
import re
from pathlib import Path

from tabulate import tabulate

from . import console, templates
from .numbers import number
from ..analysis.compare import _ORDER, Direction, Outcome, is_significant, sorted_rows, verdict_class
from ..io.results import ResultsError
from ..io.safe_io import atomic_write_text
from .tables import fmt_num, fmt_success

# ANSI colours of Google Benchmark's compare.py: green better, red worse (yellow: mixed).
_ANSI = {"better": "\033[32m", "worse": "\033[31m", "mixed": "\033[33m"}
_RESET = "\033[0m"
TEXT_WIDTH = 120
TEXT_COLUMNS = ["family", "solver", "success A", "success B", "diff", "t.med A", "t.med B", "t.med diff", "verdict"]

COLUMNS = ["family", "solver", "success A", "success B", "diff", "p", "t.med A", "t.med B", "t.med diff",
           "t.mean A", "t.mean B", "t.p99 A", "t.p99 B", "p(t)", "it.med A", "it.med B", "verdict"]


SAME_TEXT = "no significant difference"
# A figure's verdict (compare.Direction) in words.
DIRECTION_TEXT = {Direction.BETTER: "better", Direction.WORSE: "worse", Direction.SAME: SAME_TEXT,
                  Direction.NA: "n/a", Direction.NOT_COMPARED: "not compared (noisy run)"}
# The name of a cell's outcome in the verdict counts.
OUTCOME_TEXT = {Outcome.BETTER: "better", Outcome.WORSE: "worse", Outcome.MIXED: "mixed", Outcome.SAME: SAME_TEXT,
                Outcome.NA: "n/a", Outcome.ONLY_A: "only in A", Outcome.ONLY_B: "only in B"}


def verdict_text(verdict):
    """A cell's verdict (compare.PairVerdict) in words: 'better: success, time', 'mixed: time
    better, success worse', 'n/a (A unsupported)', 'only in B', 'no significant difference'."""
    o = verdict.outcome
    better, worse = verdict.figures(Direction.BETTER), verdict.figures(Direction.WORSE)
    if o is Outcome.MIXED:
        return f"mixed: {', '.join(better)} better, {', '.join(worse)} worse"
    if o is Outcome.BETTER:
        return "better: " + ", ".join(better)
    if o is Outcome.WORSE:
        return "worse: " + ", ".join(worse)
    if o is Outcome.NA and verdict.unsupported:
        return f"n/a ({' and '.join(verdict.unsupported)} unsupported)"
    return OUTCOME_TEXT[o]


def _fmt_p(p):
    return number(p, "p")


def _cells_text(row):
    def g(k):
        v = row.get(k)
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    def succ(side):
        if g(f"success_{side}") is None:
            return "n/a" if g(f"solves_{side}") is not None else "-"
        return fmt_success(row[f"success_{side}"], row[f"success_ci_low_{side}"], row[f"success_ci_high_{side}"])

    diff = g("success_diff_pp")
    tch = g("time_median_change")
    return [row["family"], row["solver"], succ("a"), succ("b"),
            "-" if diff is None else f"{diff:+.1f} pp", _fmt_p(g("success_p")),
            fmt_num(g("time_median_a"), "time"), fmt_num(g("time_median_b"), "time"),
            "-" if tch is None else f"{100 * tch:+.1f}%",
            fmt_num(g("time_mean_a"), "time"), fmt_num(g("time_mean_b"), "time"),
            fmt_num(g("time_p99_a"), "time"), fmt_num(g("time_p99_b"), "time"), _fmt_p(g("time_p")),
            fmt_num(g("iterations_median_a"), "int"), fmt_num(g("iterations_median_b"), "int"),
            verdict_text(row["verdict"])]


def _header_lines(result):
    what = (f"A = {result.label_a}\nB = {result.label_b}" if result.mode == "runs"
            else f"A = spec {result.label_a}, B = spec {result.label_b}")
    counts = result.rows["verdict"].map(lambda v: OUTCOME_TEXT[v.outcome]).value_counts()
    summary = ", ".join(f"{k}: {v}" for k, v in counts.items())
    legend = (f"success = converged and within limits over all solves [Wilson 95%], diff = B - A, p = Fisher's exact "
              f"test; times in {result.time_unit} over supported solves, p(t) = Mann-Whitney U on per-solve times; "
              f"a verdict is better / worse when its test has p < {result.alpha:g}, B compared with A")
    chance = (f"{result.tests} tests at alpha {result.alpha:g}: about {result.alpha * result.tests:.1f} "
              "'better'/'worse' verdicts are expected by chance alone when nothing changed")
    return what, legend, summary, chance


def _strip_ansi(text):
    return re.sub(r"\033\[[0-9;]*m", "", text)


def direction_line(result):
    """Which side a verdict speaks of: 'B vs A: better / worse = B is better / worse than A'."""
    if result.mode == "specs":
        return (f"B vs A: better / worse = B (spec {result.label_b}) is better / worse than A (spec "
                f"{result.label_a})")
    return "B vs A: better / worse = B is better / worse than A"


def _compact_cells(row):
    """The console's cells of one comparison row: success rates without their intervals (the
    files --out writes have them, and the p-values)."""
    def g(k):
        v = row.get(k)
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    def succ(side):
        v = g(f"success_{side}")
        if v is None:
            return "n/a" if g(f"solves_{side}") is not None else "-"
        return f"{100 * v:.1f}%"

    diff, tch = g("success_diff_pp"), g("time_median_change")
    return [row["family"], row["solver"], succ("a"), succ("b"), "-" if diff is None else f"{diff:+.1f} pp",
            fmt_num(g("time_median_a"), "time"), fmt_num(g("time_median_b"), "time"),
            "-" if tch is None else f"{100 * tch:+.1f}%", verdict_text(row["verdict"])]


def format_text(result, show_all=False, color=False, width=TEXT_WIDTH):
    """The console text: by default only the cells with a significant verdict (--all: every
    cell), significant ones first, in at most `width` columns (None: no limit), verdicts coloured
    when `color`; then one line counting the cells not shown, the verdict counts and the legend.
    The header says which side a verdict speaks of (B compared with A). Names are never cut: a
    table too wide for `width` is laid out again by ikbench.render.console.fit_table (blocks of columns,
    names above the figures, or records)."""
    what, _, summary, chance = _header_lines(result)
    legend = (f"success = converged and within limits over all solves, diff = B - A; t.med = median time in "
              f"{result.time_unit} over supported solves; a verdict is better / worse when its test (Fisher's exact "
              f"on success, Mann-Whitney U on per-solve times) has p < {result.alpha:g}, B compared with A")
    rows = sorted_rows(result)
    shown = rows if show_all else [r for r in rows if is_significant(r["verdict"])]
    cells = [_compact_cells(r) for r in shown]
    classes = [verdict_class(r["verdict"]) for r in shown]
    out = []
    for line in what.split("\n") + [direction_line(result)]:
        out += console.wrap_text(line, width, "  ") if width else [line]
    for n in result.notes:
        out += console.wrap_text(f"note: {n}", width, "  ") if width else [f"note: {n}"]
    out.append("")
    if cells:
        for c, cls in zip(cells, classes):
            if color and cls in _ANSI:
                c[-1] = f"{_ANSI[cls]}{c[-1]}{_RESET}"
        header = list(TEXT_COLUMNS)
        if result.mode == "specs":
            header[1] = "specs (A vs B)"
        out.append(console.fit_table(header, cells, width, keys=2, names_first=True,
                                     align=["left", "left"] + ["right"] * (len(TEXT_COLUMNS) - 3) + ["left"]))
    else:
        out.append("no cell has a significant difference" if not show_all else "no cells")
    hidden = len(rows) - len(shown)
    out.append("")
    if hidden:
        out += console.wrap_lines([f"{hidden} of {len(rows)} cells not shown (no significant difference or n/a): "
                                   "--all lists them"], width)
    out += console.wrap_lines([f"verdicts: {summary}", legend, chance,
                               "intervals and p-values of every cell: --out FILE.md or FILE.html"], width, "")
    return "\n".join(out) + "\n"


def format_markdown(result):
    """The comparison as markdown: every cell with its intervals and p-values (a pipe table)."""
    what, legend, summary, chance = _header_lines(result)
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    rows = []
    for r in sorted_rows(result):
        cells = _cells_text(r)
        if verdict_class(r["verdict"]) in ("worse", "better", "mixed"):
            cells[-1] = f"**{cells[-1]}**"
        rows.append([esc(c) for c in cells])
    table = tabulate(rows, headers=COLUMNS, tablefmt="pipe", disable_numparse=True)
    out = ["# ikbench compare", ""] + [f"- {esc(x)}" for x in what.split("\n") + [direction_line(result)]] + \
          [f"- note: {esc(n)}" for n in result.notes] + ["", table]
    out += ["", legend, "", chance, "", f"verdicts: {summary}", ""]
    return "\n".join(out)


def format_html(result):
    """The comparison as one self-contained page (a jinja2 template): every cell with its
    intervals and p-values, verdicts coloured, the significant ones first."""
    what, legend, summary, chance = _header_lines(result)
    rows, first_rest = [], True
    for r in sorted_rows(result):
        cls = verdict_class(r["verdict"]).replace("/", "")  # "n/a" -> "na", a CSS class
        rest = not is_significant(r["verdict"])
        rows.append({"cls": cls, "cells": _cells_text(r), "first_of_rest": rest and first_rest})
        first_rest = first_rest and not rest
    classes = [r["cls"] for r in rows]
    counts = [(c, {"same": SAME_TEXT, "only": "one run only", "na": "n/a"}.get(c, c), classes.count(c))
              for c in sorted(set(classes), key=lambda c: _ORDER["n/a" if c == "na" else c])]
    return templates.render("compare.html.j2",
        what=what.split("\n") + [direction_line(result)], notes=result.notes, counts=counts, columns=COLUMNS, rows=rows,
        rest=sum(1 for c in classes if c in ("same", "na")), legend=legend, chance=chance)


def write(result, path, inputs=()):
    """Writes the comparison as Markdown (.md) or HTML (.html) by the output rule of
    ikbench.io.safe_io; `inputs` are the compared runs' files (`Run.inputs`)."""
    path = Path(path)
    if path.suffix.lower() in (".md", ".markdown"):
        text = format_markdown(result)
    elif path.suffix.lower() in (".html", ".htm"):
        text = format_html(result)
    else:
        raise ResultsError(f"--out {path}: expected a file name ending in .md or .html")
    return atomic_write_text(path, text, inputs=inputs)
