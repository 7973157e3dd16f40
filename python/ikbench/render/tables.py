"""Text tables of a run's figures: the console summary `ikbench run` prints at its end
(`python3 -m ikbench summary RUN_DIR`: compact for a run of several families, full with
`--table full`) and the per-robot table. Renderers only: the figures, ranks and verdicts come
from ikbench.analysis.figures; the tables are drawn by python3-tabulate."""

import math

import numpy as np

from ..analysis.figures import PEER, VERDICT_NA, VERDICT_NO_SUCCESS, family_leaders, noisy_text, robot_summary, summarize
from ..analysis.levels import level_lines

from .numbers import interval, is_finite, number

NA = "n/a"


def fmt_pct(v, digits=1):
    """'93.5%': a proportion in percent."""
    return NA if not is_finite(v) else number(v, "percent", digits=digits) + "%"


def fmt_success(rate, lo, hi):
    """'93.5% [90.1, 95.8]' (Wilson 95 % interval in brackets)."""
    return interval(rate, lo, hi, "percent", unit="%", missing=NA)


_KIND_STYLES = {"int": "int", "sci": "sci", "time": "time"}


def fmt_num(v, kind):
    """A figure of a table column: `kind` int, sci, time, else one decimal; '-' when none."""
    return number(v, _KIND_STYLES.get(kind, "fixed"), infinite="inf")


def na_reason(statuses):
    """Why a cell has no figures: 'unsupported', 'invalid input' or both."""
    kinds = [k for k in ("unsupported", "invalid-input") if statuses.get(k)]
    return NA + " (" + " / ".join(k.replace("-", " ") for k in kinds) + ")"


def render(header, rows, left=2, sep_before=None, markdown=False):
    """Aligned text columns (python3-tabulate's 'simple' table): the first `left` columns
    left-aligned, the rest right-aligned; a blank line before each row index in `sep_before`.
    With markdown, a Markdown table (the figures of docs/ are regenerated this way; '|' in a cell
    escaped)."""
    if markdown:
        header = [h.replace("|", "\\|") for h in header]
        rows = [[c.replace("|", "\\|") for c in r] for r in rows]
    return _tabulate(header, rows, left, markdown, sep_before or ())


def fmt_interval(v, lo, hi, kind="time"):
    """'6.2 [5.9, 6.6]': a figure with its interval; the figure alone when there is none."""
    return interval(v, lo, hi, _KIND_STYLES.get(kind, "fixed"))


def fmt_outliers(mild, severe):
    """Tukey outliers of the times, 'mild/severe' ('0/0' when none)."""
    if mild is None or severe is None or not (math.isfinite(mild) and math.isfinite(severe)):
        return "-"
    return f"{mild:.0f}/{severe:.0f}"


def fmt_rank(r):
    """'=1 of 21' (rank, '=' when tied, of the cells that ran), 'no success', 'n/a'."""
    rank_of = int(r["rank_of"]) if r.get("rank_of") is not None else 0
    text = r.get("rank_text")
    if r.get("rank") is None or not math.isfinite(r["rank"]):
        return text or NA
    return f"{text} of {rank_of}"


def _tabulate(header, rows, left, markdown, sep_before=()):
    """A text table by python3-tabulate: the first `left` columns left-aligned, the rest right;
    a blank line before each row index in `sep_before` (not in Markdown)."""
    from tabulate import tabulate

    align = ["left" if i < left else "right" for i in range(len(header))]
    text = tabulate(rows, headers=header, tablefmt="pipe" if markdown else "simple", colalign=align,
                    disable_numparse=True)
    if markdown or not sep_before:
        return text
    lines = text.split("\n")
    out = lines[:2]
    for i, line in enumerate(lines[2:]):
        if i in sep_before:
            out.append("")
        out.append(line.rstrip())
    return "\n".join(out)


SUMMARY_HEADER = ["family", "solver", "rank", "solves", "supp.", "success [95% CI]", "it.med", "it.p90", "pos.err",
                  "ori.err", "t.med [95% CI]", "t.mean", "t.p99 [us]", "out.", "fk/solve", "J/solve"]
COMPACT_HEADER = ["family", "ran", "leaders", "success [95% CI]", "t.med [us]",
                  "out.", "peer", "peer rank", "peer success", "peer t.med", "failed most", "its success"]
COMPACT_LEADERS = 3   # tied leaders named in a compact row; the rest are counted
TABLE_CHOICES = ("compact", "full")


def table_kind(summary, table=None):
    """'compact' or 'full': what `table` asks for, else compact for more than one family."""
    if table in TABLE_CHOICES:
        return table
    return "compact" if summary["family"].nunique() > 1 else "full"


def _full_rows(summary):
    rows, seps, last, partial = [], set(), None, False
    for r in summary.to_dict("records"):
        if last is not None and r["family"] != last:
            seps.add(len(rows))
        last = r["family"]
        if not r["available"]:
            rows.append([r["family"], r["solver"], NA, str(r["solves"]), str(r["supported"]),
                         na_reason(r["statuses"])] + [""] * 10)
            continue
        succ = fmt_success(r["success_rate"], r["success_ci_low"], r["success_ci_high"])
        if r["supported"] < r["solves"]:
            succ += "*"
            partial = True
        rows.append([r["family"], r["solver"], fmt_rank(r), str(r["solves"]), str(r["supported"]), succ,
                     fmt_num(r["iterations_median"], "int"), fmt_num(r["iterations_p90"], "int"),
                     fmt_num(r["position_error_median"], "sci"), fmt_num(r["orientation_error_median"], "sci"),
                     fmt_interval(r["time_us_median"], r["time_us_median_ci_low"], r["time_us_median_ci_high"]),
                     fmt_num(r["time_us_mean"], "time"), fmt_num(r["time_us_p99"], "time"),
                     fmt_outliers(r["time_us_outliers_mild"], r["time_us_outliers_severe"]),
                     fmt_num(r["fk_evals_mean"], "f"), fmt_num(r["jacobian_evals_mean"], "f")])
    return rows, seps, partial


def compact_rows(summary, verdicts=None, within="family"):
    """The compact table's rows, one per group of `family_leaders`: the tied leaders (the first's
    figures), the reference peer with its rank, and the cell that failed most."""
    if verdicts is None:
        verdicts = family_leaders(summary, within=within)
    by_solver = {(r[within], r["solver"]): r for r in summary.to_dict("records")}
    rows = []
    for v in verdicts.to_dict("records"):
        fam = v[within]
        if v["verdict"] in (VERDICT_NA, VERDICT_NO_SUCCESS):
            lead_text = "n/a: no spec ran" if v["verdict"] == VERDICT_NA else f"no winner: none of {v['ran']} succeeded"
            row = [fam, str(v["ran"]), lead_text, "", "", ""]
        else:
            names = list(v["leaders"])
            shown = names[:COMPACT_LEADERS]
            lead_text = ("=" if len(names) > 1 else "") + ", ".join(shown) + \
                (f" (+{len(names) - len(shown)} tied)" if len(names) > len(shown) else "")
            b = by_solver[(fam, names[0])]
            row = [fam, str(v["ran"]), lead_text, fmt_success(b["success_rate"], b["success_ci_low"],
                                                              b["success_ci_high"]),
                   fmt_interval(b["time_us_median"], b["time_us_median_ci_low"], b["time_us_median_ci_high"]),
                   fmt_outliers(b["time_us_outliers_mild"], b["time_us_outliers_severe"])]
        if v["peer"] is not None:
            pr = summary.loc[v["peer_row"]]
            row += [v["peer"], fmt_rank(pr), fmt_pct(pr["success_rate"]), fmt_num(pr["time_us_median"], "time")]
        else:
            row += ["-", "", "", ""]
        if v["failed_most"] is not None:
            w = summary.loc[v["failed_most"]]
            row += [w["solver"], fmt_pct(w["success_rate"])]
        else:
            row += ["-", ""]
        rows.append(row)
    return rows


def _head(run):
    head = f"suite {run.suite}" + (f" (seed {run.seed})" if run.seed is not None else "") + \
        (f", format version {run.format_version}" if run.format_version < 2 else "")
    return head


def _feet(run):
    out = []
    noisy = noisy_text(run)
    if noisy:
        out.append(noisy)
    foot = throughput_line(run)
    if foot:
        out += ["", foot]
    for n in run.notes + [f"INCOMPLETE: {i}" for i in run.issues]:
        out.append(f"note: {n}")
    return out


RANK_LEGEND = ("rank: by success, then median time, among the cells with a success, 'of N' cells that ran; "
               "'=1': tied leaders, not significantly worse than the first (Fisher's exact test on success, "
               "Mann-Whitney U on times, p >= 0.05); out. = Tukey outliers of the times, mild (beyond 1.5 IQR) / "
               "severe (beyond 3 IQR)")


def _table(header, rows, left, markdown, width, keys, sep_before=()):
    """A table of the console summary: Markdown, python3-tabulate's 'simple' table, or with a
    `width`, fitted to it without cutting a name (ikbench.render.console.fit_table; `keys` leading
    columns name a row)."""
    if markdown or width is None:
        return _tabulate(header, rows, left, markdown, sep_before)
    from .console import fit_table

    return fit_table(header, rows, width, keys=keys,
                     align=["left" if i < left else "right" for i in range(len(header))], sep_before=sep_before)


def _wrapped(lines, width, markdown=False):
    """The lines wrapped to `width` (none when None or in Markdown)."""
    if markdown or width is None:
        return list(lines)
    from .console import wrap_lines

    return wrap_lines(lines, width)


def summary_table(run, summary=None, markdown=False, table=None, width=None):
    """The console summary of a run. Compact (more than one family, or table='compact'): one row
    per family with its tied leaders, the reference peer and the cell that failed most; full
    (one family, or table='full'): every family x solver with rank, success with its Wilson
    interval, the median time with its bootstrap interval, mean, p99 and outlier counts. A
    footer gives the legend, the run's load when it was noisy, and its throughput. `width`: the
    columns the text must fit (None: no limit); names are never cut (ikbench.render.console)."""
    if summary is None:
        summary = summarize(run)
    kind = table_kind(summary, table)
    out = [_head(run)]
    if noisy_text(run):
        out.append("NOISY RUN: times are unreliable (see below)")
    if kind == "compact":
        rows = compact_rows(summary)
        out += [_table(COMPACT_HEADER, rows, 3, markdown, width, keys=1), ""]
        out += _wrapped(["per family: the tied leaders (first's figures: success over all solves [Wilson 95%], "
                         "median time [bootstrap 95%]), the reference peer " + PEER + " with its rank, and the spec "
                         "with the lowest success; every cell: summary.csv, or --table full", RANK_LEGEND],
                        width, markdown)
    else:
        rows, seps, partial = _full_rows(summary)
        out += [_table(SUMMARY_HEADER, rows, 2, markdown, width, keys=2, sep_before=seps), ""]
        feet = ["success = converged and within limits (and collision-free in a family with a scene), over all "
                "solves [Wilson 95% interval]; it., err., t. "
                "(us, median [bootstrap 95%]) and evaluations over supported solves; n/a = no supported solve "
                "(never ranked)", RANK_LEGEND]
        if partial:
            feet.append("* partly unsupported: success over all solves (unsupported ones count as failures), the "
                        "other figures over the supported ones (supp.)")
        out += _wrapped(feet, width, markdown)
    out += _wrapped(level_lines(summary), width, markdown)
    out.append("definitions: docs/analysis.md")
    out += _wrapped(_feet(run), width, markdown)
    return "\n".join(out) + "\n"


def throughput_line(run):
    tp = run.meta.get("throughput")
    if not isinstance(tp, dict):
        return None

    def num(k):
        v = tp.get(k)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan

    s = f"{int(num('solves')) if math.isfinite(num('solves')) else '?'} solves in {num('wall_s'):.2f} s on " \
        f"{run.threads or '?'} thread(s): {num('solves_per_s'):.0f} solves/s (sum of solve times " \
        f"{num('sum_solve_time_s'):.2f} s"
    if math.isfinite(num("parallel_efficiency")):
        s += f", parallel efficiency {num('parallel_efficiency'):.2f}"
    return s + ")"


ROBOT_HEADER = ["robot", "solver", "rank", "solves", "supp.", "success [95% CI]", "t.med", "t.mean", "t.p99 [us]",
                "out.", "it.med"]


def robot_table(run, robots=None, markdown=False, table=None, width=None):
    """Per robot x solver (TRAC-IK / MoveIt ik_benchmarking style), best first; compact (one row
    per robot, as the compact summary) unless table='full'; None when the run has no robot
    families. `width`: as summary_table's."""
    if robots is None:
        robots = robot_summary(run)
    if robots.empty:
        return None
    fams = dict(zip(robots["robot"], robots["families"]))
    head = "per robot (families: " + "; ".join(f"{k}: {v}" for k, v in fams.items()) + ")"
    if table != "full":
        rows = compact_rows(robots, within="robot")
        header = ["robot"] + COMPACT_HEADER[1:]
        return "\n".join(_wrapped([head], width, markdown) + [_table(header, rows, 3, markdown, width, keys=1), ""]
                         + _wrapped([RANK_LEGEND], width, markdown)) + "\n"
    rows, seps, last = [], set(), None
    robots = robots.assign(_order=robots["rank"].fillna(np.inf))
    order = []
    for _, part in robots.groupby("robot", sort=False):
        order.append(part.sort_values("_order", kind="stable"))
    for part in order:
        for r in part.to_dict("records"):
            if last is not None and r["robot"] != last:
                seps.add(len(rows))
            last = r["robot"]
            if not r["available"]:
                rows.append([r["robot"], r["solver"], NA, str(r["solves"]), str(r["supported"]),
                             na_reason(r["statuses"]), "", "", "", "", ""])
                continue
            succ = fmt_success(r["success_rate"], r["success_ci_low"], r["success_ci_high"])
            if r["supported"] < r["solves"]:
                succ += "*"
            rows.append([r["robot"], r["solver"], fmt_rank(r), str(r["solves"]), str(r["supported"]), succ,
                         fmt_num(r["time_us_median"], "time"), fmt_num(r["time_us_mean"], "time"),
                         fmt_num(r["time_us_p99"], "time"),
                         fmt_outliers(r["time_us_outliers_mild"], r["time_us_outliers_severe"]),
                         fmt_num(r["iterations_median"], "int")])
    lines = _wrapped([head], width, markdown) + \
        [_table(ROBOT_HEADER, rows, 2, markdown, width, keys=2, sep_before=seps), ""] + \
        _wrapped([RANK_LEGEND + "; success over all solves [Wilson 95%], times over supported solves"], width,
                 markdown)
    return "\n".join(lines) + "\n"


def next_steps(run, summary, width=None):
    """The "next:" lines that end the console summary: what to run next on this run (the report,
    a comparison, the convergence curves of a family's leaders), with the harness program the run
    was made with (run.json's command line) and this run's names filled in."""
    import shlex

    from ..analysis.family_figures import harness_program

    prog = harness_program(run)
    path = shlex.quote(str(run.path))
    fam, specs = None, []
    verdicts = family_leaders(summary) if len(summary) else None
    for v in (verdicts.to_dict("records") if verdicts is not None else []):
        if v["leaders"]:
            fam = v["family"]
            specs = list(v["leaders"][:2]) + ([v["peer"]] if v["peer"] and v["peer"] not in v["leaders"][:2] else [])
            break
    steps = [(f"{prog} report {path}", "every table and curve"),
             (f"{prog} compare {path} OTHER_RUN", "a verdict per cell")]
    if fam is not None:
        steps.append((f"{prog} plot convergence {path} --family {shlex.quote(fam)} --solvers "
                      f"{shlex.quote(','.join(specs))}", "the leaders' error curves"))
    out = []
    for cmd, why in steps:
        line = f"next: {cmd}   # {why}"
        if width is None or len(line) <= width:
            out.append(line)
            continue
        from .console import command_lines

        out += command_lines(f"next: {cmd}", width)   # the command whole, without its comment
    return out
