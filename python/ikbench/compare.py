"""Statistical comparison of two runs, or of two solver specs of one run, per family x solver.

    result = compare_runs(run_a, run_b)                 # cells matched by (family, solver spec)
    result = compare_specs(run, "dls", "dls:lambda=0.2")  # family x (SPEC1 vs SPEC2)
    print(format_text(result)); write(result, "cmp.md")  # or .html

Per cell: success of A and B with Wilson intervals, the difference and Fisher's exact test;
median, mean and p99 time and median iterations of A and B, with the Mann-Whitney U test on the
per-solve times (as Google Benchmark's compare.py does). Verdict of a figure: better / worse when
its test is significant at `alpha`, else no significant difference. B is compared with A: "better"
means B is better.

Runs from different machines (run.json `machine`: its model name, vendor, family, model and
stepping) or thread counts are compared in time units: each run's times are divided by its own
unit, the gate's median-ratio unit (the typical time per FK / Jacobian evaluation, see
ikbench.gate.time_unit), and the table says so.
"""

import html
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import figures, stats
from .results import ResultsError
from .safe_io import atomic_write_text
from .tables import fmt_num, fmt_success, render

VERDICT_SAME = "no significant difference"
VERDICT_NOISY = "not compared (noisy run)"


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


def _resolve(spec, specs):
    if spec in specs:
        return spec
    named = [s for s in specs if s.split(":", 1)[0] == spec]
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
        return "n/a", math.nan
    p = stats.two_proportion_test(int(a.successes), int(a.solves), int(b.successes), int(b.solves))
    if not (p < alpha):
        return VERDICT_SAME, p
    return ("better" if b.success_rate > a.success_rate else "worse"), p


def _verdict_time(ta, tb, alpha):
    if len(ta) == 0 or len(tb) == 0:
        return "n/a", math.nan
    if np.all(ta == ta[0]) and np.all(tb == ta[0]):
        return VERDICT_SAME, 1.0
    p, a_above = stats.mann_whitney(ta, tb)
    if not (p < alpha):
        return VERDICT_SAME, p
    return ("better" if a_above > 0.5 else "worse"), p


def _overall(vs, vt):
    parts = {"success": vs, "time": vt}
    better = [k for k, v in parts.items() if v == "better"]
    worse = [k for k, v in parts.items() if v == "worse"]
    if better and worse:
        return f"mixed: {', '.join(better)} better, {', '.join(worse)} worse"
    if better:
        return "better: " + ", ".join(better)
    if worse:
        return "worse: " + ", ".join(worse)
    if vs == "n/a" and vt == "n/a":
        return "n/a"
    return VERDICT_SAME


def _compare_cells(pairs, ca, cb, alpha, compare_time=True):
    rows, tests = [], 0
    for key, ia, ib in pairs:
        a = ca.iloc[ia] if ia is not None else None
        b = cb.iloc[ib] if ib is not None else None
        row = {"family": key[0], "solver": key[1]}
        if a is None or b is None:
            row["verdict"] = "only in A" if b is None else "only in B"
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
            vt, pt = VERDICT_NOISY, math.nan
        tests += (vs != "n/a") + (vt not in ("n/a", VERDICT_NOISY))
        with np.errstate(invalid="ignore", divide="ignore"):
            row["success_diff_pp"] = 100 * (b.success_rate - a.success_rate)
            row["time_median_change"] = b.time_us_median / a.time_us_median - 1 if a.time_us_median > 0 else math.nan
        row.update({"success_p": ps, "success_verdict": vs, "time_p": pt, "time_verdict": vt,
                    "verdict": _overall(vs, vt)})
        if not (a.available and b.available):
            row["verdict"] = "n/a (" + " and ".join(s for s, c in (("A", a), ("B", b)) if not c.available) + \
                             " unsupported)"
        rows.append(row)
    return pd.DataFrame(rows), tests


def _unit_for(a, b):
    """(unit_a, unit_b, note) for comparing times of runs a and b."""
    machines_differ = a.cpu != b.cpu and a.cpu is not None and b.cpu is not None
    threads_differ = a.threads != b.threads and a.threads is not None and b.threads is not None
    if not (machines_differ or threads_differ):
        return 1.0, 1.0, None
    from . import gate

    da = gate.Dataset("run", str(a.path), a.suite, a.meta, gate.aggregate_cells(a.solves))
    db = gate.Dataset("run", str(b.path), b.suite, b.meta, gate.aggregate_cells(b.solves))
    common = [c for c in da.cells if c in db.cells]
    # The gate's unit over every cell of at least time_min_solves supported solves (no 20 us floor:
    # the unit is a median of per-evaluation times, not a comparison of short cells).
    ua, ub, desc = gate.time_unit(da, db, common, ["median-ratio"],
                                  min_solves=gate.BUILTIN_THRESHOLDS["time_min_solves"], min_us=0.0)
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
    s1, s2 = _resolve(spec1, specs), _resolve(spec2, specs)
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


# ---------------------------------------------------------------- output

COLUMNS = ["family", "solver", "success A", "success B", "diff", "p", "t.med A", "t.med B", "t.med diff",
           "t.mean A", "t.mean B", "t.p99 A", "t.p99 B", "p(t)", "it.med A", "it.med B", "verdict"]


def _fmt_p(p):
    if p is None or not math.isfinite(p):
        return "-"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.0e}"


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
            fmt_num(g("iterations_median_a"), "int"), fmt_num(g("iterations_median_b"), "int"), row["verdict"]]


def _header_lines(result):
    what = (f"A = {result.label_a}\nB = {result.label_b}" if result.mode == "runs"
            else f"A = spec {result.label_a}, B = spec {result.label_b}")
    counts = result.rows["verdict"].map(lambda v: v.split(":")[0].split(" (")[0]).value_counts()
    summary = ", ".join(f"{k}: {v}" for k, v in counts.items())
    legend = (f"success = converged and within limits over all solves [Wilson 95%], diff = B - A, p = Fisher's exact "
              f"test; times in {result.time_unit} over supported solves, p(t) = Mann-Whitney U on per-solve times; "
              f"a verdict is better / worse when its test has p < {result.alpha:g}, B compared with A")
    chance = (f"{result.tests} tests at alpha {result.alpha:g}: about {result.alpha * result.tests:.1f} "
              "'better'/'worse' verdicts are expected by chance alone when nothing changed")
    return what, legend, summary, chance


# Verdict classes, in the order the significant cells are listed (worst news first).
_ORDER = {"worse": 0, "mixed": 1, "better": 2, "only": 3, "same": 4, "n/a": 5}
# ANSI colours of Google Benchmark's compare.py: green better, red worse (yellow: mixed).
_ANSI = {"better": "\033[32m", "worse": "\033[31m", "mixed": "\033[33m"}
_RESET = "\033[0m"
TEXT_WIDTH = 120
TEXT_COLUMNS = ["family", "solver", "success A", "success B", "diff", "t.med A", "t.med B", "t.med diff", "verdict"]


def verdict_class(verdict):
    """'better', 'worse', 'mixed', 'only' (a cell of one run only), 'same' or 'n/a'."""
    head = str(verdict).split(":")[0].split(" (")[0]
    if head in ("better", "worse", "mixed"):
        return head
    if head.startswith("only in"):
        return "only"
    return "same" if head == VERDICT_SAME else "n/a"


def is_significant(verdict):
    """A verdict worth a reader's attention: better, worse, mixed, or a cell only one run has."""
    return verdict_class(verdict) in ("better", "worse", "mixed", "only")


def sorted_rows(result):
    """The cells, significant verdicts first (worse, mixed, better, one run only), then the rest,
    each group in the comparison's own order."""
    rows = result.rows.to_dict("records")
    return sorted(rows, key=lambda r: _ORDER[verdict_class(r["verdict"])])


def _strip_ansi(text):
    import re

    return re.sub(r"\033\[[0-9;]*m", "", text)


def _short(text, width):
    return text if len(text) <= width else text[:max(1, width - 1)] + "~"


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
            "-" if tch is None else f"{100 * tch:+.1f}%", row["verdict"]]


def format_text(result, show_all=False, color=False, width=TEXT_WIDTH):
    """The console text: by default only the cells with a significant verdict (--all: every
    cell), significant ones first, in at most `width` columns (long family and solver names are
    shortened, ending in '~'), verdicts coloured when `color`; then one line counting the cells
    not shown, the verdict counts and the legend."""
    import textwrap

    from tabulate import tabulate

    what, _, summary, chance = _header_lines(result)
    legend = (f"success = converged and within limits over all solves, diff = B - A; t.med = median time in "
              f"{result.time_unit} over supported solves; a verdict is better / worse when its test (Fisher's exact "
              f"on success, Mann-Whitney U on per-solve times) has p < {result.alpha:g}, B compared with A")
    rows = sorted_rows(result)
    shown = rows if show_all else [r for r in rows if is_significant(r["verdict"])]
    cells = [_compact_cells(r) for r in shown]
    out = [what]
    for n in result.notes:
        out += textwrap.wrap(f"note: {n}", width=width, subsequent_indent="  ")
    out.append("")
    if cells:
        for c in cells:
            cls = verdict_class(c[-1])
            if color and cls in _ANSI:
                c[-1] = f"{_ANSI[cls]}{c[-1]}{_RESET}"
        names = [(c[0], c[1]) for c in cells]
        fam_w, sol_w = max(len(f) for f, _ in names), max(len(s) for _, s in names)
        while True:
            # Family and solver names give way (shortened, ending in '~') until the table fits.
            for c, (f, sv) in zip(cells, names):
                c[0], c[1] = _short(f, fam_w), _short(sv, sol_w)
            table = tabulate(cells, headers=TEXT_COLUMNS, tablefmt="simple", disable_numparse=True,
                             colalign=["left", "left"] + ["right"] * (len(TEXT_COLUMNS) - 3) + ["left"])
            over = max(len(_strip_ansi(line)) for line in table.splitlines()) - width
            if over <= 0 or (fam_w <= 8 and sol_w <= 8):
                break
            if sol_w >= fam_w:
                sol_w = max(8, sol_w - over)
            else:
                fam_w = max(8, fam_w - over)
        out.append(table)
    else:
        out.append("no cell has a significant difference" if not show_all else "no cells")
    hidden = len(rows) - len(shown)
    out.append("")
    if hidden:
        out.append(f"{hidden} of {len(rows)} cells not shown (no significant difference or n/a): --all lists them")
    out.append(f"verdicts: {summary}")
    for text in (legend, chance, "intervals and p-values of every cell: --out FILE.md or FILE.html"):
        out += textwrap.wrap(text, width=width)
    return "\n".join(out) + "\n"


def format_markdown(result):
    what, legend, summary, chance = _header_lines(result)
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    out = ["# ikbench compare", ""] + [f"- {esc(x)}" for x in what.split("\n")] + \
          [f"- note: {esc(n)}" for n in result.notes] + ["", "| " + " | ".join(COLUMNS) + " |",
                                                          "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for r in sorted_rows(result):
        cells = _cells_text(r)
        v = cells[-1]
        cells[-1] = f"**{v}**" if v.startswith(("worse", "better", "mixed")) else v
        out.append("| " + " | ".join(esc(c) for c in cells) + " |")
    out += ["", legend, "", chance, "", f"verdicts: {summary}", ""]
    return "\n".join(out)


_HTML_TEMPLATE = """<!DOCTYPE html><html><head><meta charset='utf-8'><title>ikbench compare</title>
<style>
body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td.l{text-align:left}th{background:#eee}
tr.better td.v,span.better{background:#c8f0c8;color:#0a5a0a;font-weight:bold}
tr.worse td.v,span.worse{background:#f6c6c6;color:#8a0d0d;font-weight:bold}
tr.mixed td.v,span.mixed{background:#fbe3a6;color:#6b4a00;font-weight:bold}
tr.only td.v,span.only{background:#dde6f6}
tr.same td,tr.na td{color:#666}tr.sep td{background:#f4f4f4;text-align:left;font-style:italic}
span.better,span.worse,span.mixed,span.only{padding:1px 6px;border-radius:3px}
p.n{color:#555;font-size:13px}
</style></head><body><h1>ikbench compare</h1>
{% for line in what %}<p>{{ line }}</p>
{% endfor %}{% for n in notes %}<p class='n'>note: {{ n }}</p>
{% endfor %}<p>{% for cls, label, count in counts %}<span class='{{ cls }}'>{{ label }}: {{ count }}</span> {% endfor %}</p>
<table><tr>{% for c in columns %}<th>{{ c }}</th>{% endfor %}</tr>
{% for r in rows %}{% if r.first_of_rest %}<tr class='sep'><td colspan='{{ columns|length }}'>{{ rest }} cells without a significant difference (or n/a)</td></tr>
{% endif %}<tr class='{{ r.cls }}'>{% for c in r.cells[:2] %}<td class='l'>{{ c }}</td>{% endfor %}{% for c in r.cells[2:-1] %}<td>{{ c }}</td>{% endfor %}<td class='l v'>{{ r.cells[-1] }}</td></tr>
{% endfor %}</table>
<p class='n'>{{ legend }}</p>
<p class='n'>{{ chance }}</p>
<p class='n'>Significant verdicts first (worse, mixed, better, cells of one run only), then the rest.</p>
</body></html>
"""


def format_html(result):
    """The comparison as one self-contained page (a jinja2 template): every cell with its
    intervals and p-values, verdicts coloured, the significant ones first."""
    import jinja2

    what, legend, summary, chance = _header_lines(result)
    rows, first_rest = [], True
    for r in sorted_rows(result):
        cls = verdict_class(r["verdict"]).replace("/", "")  # "n/a" -> "na", a CSS class
        rest = not is_significant(r["verdict"])
        rows.append({"cls": cls, "cells": _cells_text(r), "first_of_rest": rest and first_rest})
        first_rest = first_rest and not rest
    classes = [r["cls"] for r in rows]
    counts = [(c, {"same": VERDICT_SAME, "only": "one run only", "na": "n/a"}.get(c, c), classes.count(c))
              for c in sorted(set(classes), key=lambda c: _ORDER["n/a" if c == "na" else c])]
    env = jinja2.Environment(autoescape=True, trim_blocks=False)
    return env.from_string(_HTML_TEMPLATE).render(
        what=what.split("\n"), notes=result.notes, counts=counts, columns=COLUMNS, rows=rows,
        rest=sum(1 for c in classes if c in ("same", "na")), legend=legend, chance=chance)


def write(result, path, inputs=()):
    """Writes the comparison as Markdown (.md) or HTML (.html) by the output rule of
    ikbench.safe_io; `inputs` are the compared runs' files (`Run.inputs`)."""
    path = Path(path)
    if path.suffix.lower() in (".md", ".markdown"):
        text = format_markdown(result)
    elif path.suffix.lower() in (".html", ".htm"):
        text = format_html(result)
    else:
        raise ResultsError(f"--out {path}: expected a file name ending in .md or .html")
    return atomic_write_text(path, text, inputs=inputs)
