"""The regression gate's report as text: a GateReport (ikbench.analysis.gate.compare) becomes the console
report or the markdown report (--markdown FILE), a Dataset the `show` table. Tables are drawn by
python3-tabulate ('simple' for the console, 'pipe' for markdown). Nothing here computes a figure
or a verdict."""

import math

from tabulate import tabulate

from ..analysis.gate import METRIC_KEYS, METRICS, OUTCOME_KEYS, Change, Status

# Per metric: the table's column title and how a value is written.
TITLES = {"iterations_median": "iters med", "iterations_p90": "iters p90", "position_error_median": "pos err med",
          "orientation_error_median": "ori err med", "fk_evals_mean": "fk/solve", "jacobian_evals_mean": "jac/solve"}
FORMATS = {"iterations_median": lambda v: f"{v:g}", "iterations_p90": lambda v: f"{v:.4g}",
           "position_error_median": lambda v: f"{v:.2e}", "orientation_error_median": lambda v: f"{v:.2e}",
           "fk_evals_mean": lambda v: f"{v:.1f}", "jacobian_evals_mean": lambda v: f"{v:.1f}"}
LABELS = {"success": "success rate", "iterations_median": "median iterations", "iterations_p90": "p90 iterations",
          "position_error_median": "median position error [m]", "orientation_error_median": "median orientation error [rad]",
          "fk_evals_mean": "FK evaluations per solve", "jacobian_evals_mean": "Jacobian evaluations per solve",
          "time": "normalised median time", "limits": "joint limits", "wrong": "wrong answers",
          "outcome:wrong": "wrong-answer rate", "outcome:not-found": "not-found rate (reachable targets)",
          "outcome:timed-out": "timed-out rate", "outcome:refused": "refused rate (unreachable targets)",
          "outcome:converged": "answered rate (unreachable targets)"}
COLUMNS = ["family", "solver", "n", "success", "outcomes"] + [TITLES[m[0]] for m in METRICS] + ["time/unit",
                                                                                                "verdict"]


def _rel(base, run):
    if base is None or run is None:
        return ""
    if base == run:
        return ""
    if base == 0 or not math.isfinite(base) or not math.isfinite(run):
        return f"{base:g} -> {run:g}"
    return f"{100 * (run - base) / base:+.1f}%"


def metric_text(v):
    """A MetricVerdict in words: (the table's text of the run's value, with its change when it
    changed; the sentence of a finding: baseline -> run, change, threshold)."""
    f = v.facts
    if v.metric == "success":
        (sb, sr), n = f["successes"], f["n"]
        d = v.run - v.base
        text = f"{v.run:.1f}%" + (f" ({d:+.1f}pp)" if sb != sr else "")
        detail = (f"{v.base:.1f}% -> {v.run:.1f}% ({d:+.1f} pp, {abs(sr - sb)} of {n} solves "
                  f"{'lost' if sr < sb else 'gained'}; threshold {f['drop_pp']:g} pp and "
                  f"{f['min_flips']} solve(s))")
        return text, detail
    if v.metric.startswith("outcome:"):
        name = "answered" if v.metric == "outcome:converged" else v.metric.split(":", 1)[1]
        (kb, kr), (nb, nr), (cb, cr) = f["counts"], f["n"], f["ci"]
        text = f"{name} {v.run:.1f}%" + (" (budget)" if f.get("budget") else "")
        detail = (f"{v.base:.2f}% [{100 * cb[0]:.2f}, {100 * cb[1]:.2f}] -> {v.run:.2f}% [{100 * cr[0]:.2f}, "
                  f"{100 * cr[1]:.2f}] ({kb} of {nb} -> {kr} of {nr} solves; Fisher's exact test p = {f['p']:.2g}, "
                  f"threshold p < {f['alpha']:g})")
        return text, detail
    if v.metric == "limits":
        return f"{v.run}", f"{v.base} -> {v.run} solves end outside the joint limits"
    if v.metric == "wrong":
        return f"{v.run}", (f"{v.base} -> {v.run} wrong answers (the backend claimed convergence and forward "
                            "kinematics disagrees)")
    if v.metric == "time":
        if v.verdict is Change.NA:
            return (f"{v.run:.1f} (~)", "") if f.get("not_compared") else ("-", "")
        nb, nr = v.base, v.run
        text = f"{nr:.1f}" + (f" ({_rel(nb, nr)})" if v.verdict is not Change.SAME else "")
        tb, tr = f["medians_us"]
        detail = (f"{nb:.2f} -> {nr:.2f} time units ({_rel(nb, nr)}; this solver over its {f['solver_families']} "
                  f"timed families: {100 * (f['solver_ratio'] - 1):+.1f}%; thresholds {100 * f['increase']:+g}% per "
                  f"cell and {100 * f['increase_solver']:+g}% per solver; medians {tb:.1f} -> {tr:.1f} us)")
        return text, detail
    fmt, vb, vr = FORMATS[v.metric], v.base, v.run
    factor = "factor" in f
    if vr is None:
        text = "-"
    elif factor:
        text = fmt(vr) + (f" (x{vr / vb:.3g})" if v.verdict is not Change.SAME and vb and math.isfinite(vb) and math.isfinite(vr)
                          else "")
    else:
        text = fmt(vr) + (f" ({_rel(vb, vr)})" if v.verdict is not Change.SAME and _rel(vb, vr) else "")
    if factor:
        limit = f"factor {f['factor']:g} above a floor of {f['floor']:g}"
        change = (f"x{vr / vb:.3g}" if vb and vr is not None and math.isfinite(vb) and math.isfinite(vr)
                  else _rel(vb, vr))
    else:
        limit = f"{100 * f['increase']:+g}%" + (f" and at least {f['min_delta']:g}" if f["min_delta"] else "")
        change = _rel(vb, vr)
    detail = (f"{fmt(vb) if vb is not None else '-'} -> {fmt(vr) if vr is not None else '-'} "
              f"({change}; threshold {limit})")
    if f.get("budget"):
        text += " (budget)"
    return text, detail


def finding_text(rep, finding):
    """A regression or improvement (a gate.Finding of `rep`) as one sentence."""
    return (f"{finding.family} x {finding.solver}: {LABELS.get(finding.metric, finding.metric)} "
            f"{metric_text(rep.verdict(finding))[1]}")
LEGEND = ("[R] regression beyond its threshold, [I] improvement; changes in brackets are relative to the "
          "baseline; (~) time not compared (too few solves or too fast to time)")


def _mark(verdict, text, markdown):
    if verdict is Change.REGRESSION:
        return f"**{text} [R]**" if markdown else f"{text} [R]"
    if verdict is Change.IMPROVEMENT:
        return f"_{text} [I]_" if markdown else f"{text} [I]"
    return text


def outcome_cell(cell, markdown):
    """The outcomes column of a compared cell: its outcome rates that changed, marked [R] / [I]
    ("" when none did, "n/a" when they were not compared)."""
    verdicts = [cell.figures[k] for k in OUTCOME_KEYS if k in cell.figures]
    if not verdicts:
        return "n/a"
    return ", ".join(_mark(v.verdict, metric_text(v)[0], markdown) for v in verdicts if v.verdict is not Change.SAME)


def cell_row(cell, markdown):
    """The table row of one CellVerdict: its figures marked [R] / [I], its status last."""
    dashes = ["-"] * (len(METRIC_KEYS) + 1)
    if cell.status is Status.MISSING:
        return [cell.family, cell.solver, str(cell.n)] + dashes + ["MISSING"]
    if cell.status is Status.NEW:
        return [cell.family, cell.solver, str(cell.n), f"{100.0 * cell.success_rate:.1f}%"] + dashes[1:] + ["new"]
    if cell.status is Status.SKIPPED:
        return [cell.family, cell.solver, str(cell.n)] + dashes + ["skipped"]
    figs = [_mark(cell.figures[k].verdict, metric_text(cell.figures[k])[0], markdown) for k in METRIC_KEYS]
    for extra in ("limits", "wrong"):
        if extra in cell.figures:
            figs[0] += f" **[R {extra}]**" if markdown else f" [R {extra}]"
    figs.insert(1, outcome_cell(cell, markdown))
    status = f"**{cell.status}**" if markdown and cell.regression else cell.status
    return [cell.family, cell.solver, str(cell.n)] + figs + [status]


def render_table(rows, markdown, columns=COLUMNS):
    """A table of text rows: markdown (pipe) with '|' escaped, or aligned console text (names and
    the verdict left, figures right)."""
    if markdown:
        esc = [[str(c).replace("|", "\\|") for c in r] for r in rows]
        return tabulate(esc, headers=columns, tablefmt="pipe", disable_numparse=True)
    align = ["left", "left"] + ["right"] * (len(columns) - 3) + ["left"]
    if "outcomes" in columns:
        align[columns.index("outcomes")] = "left"
    table = tabulate(rows, headers=columns, tablefmt="simple", disable_numparse=True, colalign=align if rows else None)
    return "\n".join(line.rstrip() for line in table.splitlines())


def summary_line(rep):
    c = rep.counts
    verdict = "PASS" if rep.passed else "FAIL"
    return (f"{verdict}: {len(rep.regressions)} regression(s) in {c['REGRESSION']} of "
            f"{sum(c.values())} family x solver cells; {len(rep.improvements)} improvement(s); "
            f"{c['changed']} changed within thresholds; {c['same']} unchanged"
            + (f"; {c['new']} new" if c["new"] else "") + (f"; {c['skipped']} skipped" if c["skipped"] else "")
            + (f"; {c['missing']} MISSING" if c["missing"] else ""))


def format_report(base, run, config, rep, markdown, only_changes=False):
    """The whole report of a GateReport: what was compared, notes, the table, the regressions and
    improvements, and the PASS / FAIL line."""
    cells = [c for c in rep.cells if c.status is not Status.SAME] if only_changes else rep.cells
    rows = [cell_row(c, markdown) for c in cells]
    verdict = "PASS" if rep.passed else "FAIL"
    summary = summary_line(rep)
    out = []
    if markdown:
        out += [f"# Regression gate: {verdict}", "", f"- baseline: `{base.describe()}`", f"- run: `{run.describe()}`",
                f"- thresholds: `{config['path']}`"] + [f"- {n}" for n in rep.notes] + ["", LEGEND, "",
                render_table(rows, True), ""]
        if rep.regressions:
            out += ["## Regressions", ""] + [f"- {finding_text(rep, x)}" for x in rep.regressions] + [""]
        if rep.improvements:
            out += ["## Improvements", ""] + [f"- {finding_text(rep, x)}" for x in rep.improvements] + [""]
        out += [f"**{summary}**", ""]
    else:
        out += [f"baseline:   {base.describe()}", f"run:        {run.describe()}",
                f"thresholds: {config['path']}"] + [f"note: {n}" for n in rep.notes] + ["", LEGEND, "",
                render_table(rows, False), ""]
        if rep.regressions:
            out += ["REGRESSIONS:"] + [f"  {finding_text(rep, x)}" for x in rep.regressions] + [""]
        if rep.improvements:
            out += ["improvements:"] + [f"  {finding_text(rep, x)}" for x in rep.improvements] + [""]
        out += [summary]
    return "\n".join(out) + "\n"


def show_table(ds):
    """The figures of a baseline or run (`regress.py show`)."""
    rows = []
    for (family, solver), c in ds.cells.items():
        def f(k, fmt):
            return "-" if c[k] is None else fmt(c[k])
        outcomes = "n/a" if c.get("outcomes") is None else ",".join(f"{k}:{v}" for k, v in c["outcomes"].items())
        rows.append([family, solver, str(c["n"]), f"{100.0 * c['successes'] / c['n']:.1f}%", outcomes] +
                    [f(m[0], FORMATS[m[0]]) for m in METRICS] + [f("time_us_median", lambda v: f"{v:.1f}us"),
                                                        ",".join(f"{k}:{v}" for k, v in c["statuses"].items())])
    cols = COLUMNS[:-2] + ["time med", "statuses"]
    table = tabulate(rows, headers=cols, tablefmt="simple", disable_numparse=True)
    return "\n".join(line.rstrip() for line in table.splitlines()) + "\n"
