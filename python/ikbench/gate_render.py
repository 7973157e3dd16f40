"""The regression gate's report as text: a GateReport (ikbench.gate.compare) becomes the console
report or the markdown report (--markdown FILE), a Dataset the `show` table. Tables are drawn by
python3-tabulate ('simple' for the console, 'pipe' for markdown). Nothing here computes a figure
or a verdict."""

from tabulate import tabulate

from .gate import METRIC_KEYS, METRICS

COLUMNS = ["family", "solver", "n", "success"] + [m[1] for m in METRICS] + ["time/unit", "verdict"]
LEGEND = ("[R] regression beyond its threshold, [I] improvement; changes in brackets are relative to the "
          "baseline; (~) time not compared (too few solves or too fast to time)")


def _mark(verdict, text, markdown):
    if verdict == "regression":
        return f"**{text} [R]**" if markdown else f"{text} [R]"
    if verdict == "improvement":
        return f"_{text} [I]_" if markdown else f"{text} [I]"
    return text


def cell_row(cell, markdown):
    """The table row of one CellVerdict: its figures marked [R] / [I], its status last."""
    dashes = ["-"] * len(METRIC_KEYS)
    if cell.status == "missing":
        return [cell.family, cell.solver, str(cell.n)] + dashes + ["MISSING"]
    if cell.status == "new":
        return [cell.family, cell.solver, str(cell.n), f"{100.0 * cell.success_rate:.1f}%"] + dashes[1:] + ["new"]
    if cell.status == "skipped":
        return [cell.family, cell.solver, str(cell.n)] + dashes + ["skipped"]
    figs = [_mark(cell.figures[k].verdict, cell.figures[k].text, markdown) for k in METRIC_KEYS]
    if "limits" in cell.figures:
        figs[0] += " **[R limits]**" if markdown else " [R limits]"
    status = f"**{cell.status}**" if markdown and cell.regression else cell.status
    return [cell.family, cell.solver, str(cell.n)] + figs + [status]


def render_table(rows, markdown, columns=COLUMNS):
    """A table of text rows: markdown (pipe) with '|' escaped, or aligned console text (names and
    the verdict left, figures right)."""
    if markdown:
        esc = [[str(c).replace("|", "\\|") for c in r] for r in rows]
        return tabulate(esc, headers=columns, tablefmt="pipe", disable_numparse=True)
    align = ["left", "left"] + ["right"] * (len(columns) - 3) + ["left"]
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
    cells = [c for c in rep.cells if c.status != "same"] if only_changes else rep.cells
    rows = [cell_row(c, markdown) for c in cells]
    verdict = "PASS" if rep.passed else "FAIL"
    summary = summary_line(rep)
    out = []
    if markdown:
        out += [f"# Regression gate: {verdict}", "", f"- baseline: `{base.describe()}`", f"- run: `{run.describe()}`",
                f"- thresholds: `{config['path']}`"] + [f"- {n}" for n in rep.notes] + ["", LEGEND, "",
                render_table(rows, True), ""]
        if rep.regressions:
            out += ["## Regressions", ""] + [f"- {x}" for x in rep.regressions] + [""]
        if rep.improvements:
            out += ["## Improvements", ""] + [f"- {x}" for x in rep.improvements] + [""]
        out += [f"**{summary}**", ""]
    else:
        out += [f"baseline:   {base.describe()}", f"run:        {run.describe()}",
                f"thresholds: {config['path']}"] + [f"note: {n}" for n in rep.notes] + ["", LEGEND, "",
                render_table(rows, False), ""]
        if rep.regressions:
            out += ["REGRESSIONS:"] + [f"  {x}" for x in rep.regressions] + [""]
        if rep.improvements:
            out += ["improvements:"] + [f"  {x}" for x in rep.improvements] + [""]
        out += [summary]
    return "\n".join(out) + "\n"


def show_table(ds):
    """The figures of a baseline or run (`regress.py show`)."""
    rows = []
    for (family, solver), c in ds.cells.items():
        def f(k, fmt):
            return "-" if c[k] is None else fmt(c[k])
        rows.append([family, solver, str(c["n"]), f"{100.0 * c['successes'] / c['n']:.1f}%"] +
                    [f(m[0], m[2]) for m in METRICS] + [f("time_us_median", lambda v: f"{v:.1f}us"),
                                                        ",".join(f"{k}:{v}" for k, v in c["statuses"].items())])
    cols = COLUMNS[:-2] + ["time med", "statuses"]
    table = tabulate(rows, headers=cols, tablefmt="simple", disable_numparse=True)
    return "\n".join(line.rstrip() for line in table.splitlines()) + "\n"
