"""Text tables of a run's figures: the console table `ikbench run` prints at its end
(`python3 -m ikbench summary RUN_DIR`) and the per-robot table."""

import math

import numpy as np

from .figures import robot_summary, summarize

NA = "n/a"


def fmt_pct(v, digits=1):
    return NA if v is None or not math.isfinite(v) else f"{100 * v:.{digits}f}%"


def fmt_success(rate, lo, hi):
    """'93.5% [90.1, 95.8]' (Wilson 95 % interval in brackets)."""
    if rate is None or not math.isfinite(rate):
        return NA
    return f"{100 * rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def fmt_num(v, kind):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    if kind == "int":
        return f"{v:.0f}"
    if kind == "sci":
        return f"{v:.2e}"
    if kind == "time":
        return f"{v:.1f}" if abs(v) < 1e5 else f"{v:.3g}"
    return f"{v:.1f}"


def na_reason(statuses):
    """Why a cell has no figures: 'unsupported', 'invalid input' or both."""
    kinds = [k for k in ("unsupported", "invalid-input") if statuses.get(k)]
    return NA + " (" + " / ".join(k.replace("-", " ") for k in kinds) + ")"


def render(header, rows, left=2, sep_before=None, markdown=False):
    """Aligned text columns: the first `left` columns left-aligned, the rest right-aligned; a
    blank line before each row index in `sep_before`. With markdown, a Markdown table (the
    figures of docs/ are regenerated this way)."""
    if markdown:
        esc = [[c.replace("|", "\\|") for c in r] for r in [header] + rows]
        align = ["---" if i < left else "---:" for i in range(len(header))]
        return "\n".join(["| " + " | ".join(esc[0]) + " |", "|" + "|".join(align) + "|"] +
                         ["| " + " | ".join(r) + " |" for r in esc[1:]])
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i]) for i in range(len(header))]

    def line(r):
        return "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    out = [line(header)]
    for i, r in enumerate(rows):
        if sep_before and i in sep_before:
            out.append("")
        out.append(line(r))
    return "\n".join(out)


SUMMARY_HEADER = ["family", "solver", "solves", "supp.", "success [95% CI]", "it.med", "it.p90", "pos.err",
                  "ori.err", "t.med", "t.mean", "t.p99 [us]", "fk/solve", "J/solve"]


def summary_table(run, summary=None, markdown=False):
    """The console table: family x solver, success with its Wilson interval, figures over
    supported solves, n/a cells marked, and a footer with the run's throughput."""
    if summary is None:
        summary = summarize(run)
    rows, seps, last = [], set(), None
    partial = False
    for r in summary.itertuples(index=False):
        if last is not None and r.family != last:
            seps.add(len(rows))
        last = r.family
        supp = str(r.supported)
        if not r.available:
            rows.append([r.family, r.solver, str(r.solves), supp, na_reason(r.statuses)] + [""] * 9)
            continue
        succ = fmt_success(r.success_rate, r.success_ci_low, r.success_ci_high)
        if r.supported < r.solves:
            succ += "*"
            partial = True
        rows.append([r.family, r.solver, str(r.solves), supp, succ, fmt_num(r.iterations_median, "int"),
                     fmt_num(r.iterations_p90, "int"), fmt_num(r.position_error_median, "sci"),
                     fmt_num(r.orientation_error_median, "sci"), fmt_num(r.time_us_median, "time"),
                     fmt_num(r.time_us_mean, "time"), fmt_num(r.time_us_p99, "time"),
                     fmt_num(r.fk_evals_mean, "f"), fmt_num(r.jacobian_evals_mean, "f")])
    out = [f"suite {run.suite}" + (f" (seed {run.seed})" if run.seed is not None else "") +
           (f", format version {run.format_version}" if run.format_version < 2 else ""),
           render(SUMMARY_HEADER, rows, sep_before=seps, markdown=markdown), ""]
    out.append("success = converged and within limits, over all solves [Wilson 95% interval]; it., err., t. "
               "(us) and evaluations over supported solves; n/a = no supported solve (never ranked)")
    if partial:
        out.append("* partly unsupported: success over all solves (unsupported ones count as failures), the other "
                   "figures over the supported ones (supp.)")
    out.append("definitions: docs/analysis.md")
    foot = throughput_line(run)
    if foot:
        out += ["", foot]
    for n in run.notes + [f"INCOMPLETE: {i}" for i in run.issues]:
        out.append(f"note: {n}")
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


ROBOT_HEADER = ["robot", "solver", "rank", "solves", "supp.", "success [95% CI]", "t.mean", "t.med", "t.p99 [us]",
                "it.med"]


def robot_table(run, robots=None, markdown=False):
    """Per robot x solver (TRAC-IK / MoveIt ik_benchmarking style), best first; None when the
    run has no robot families."""
    if robots is None:
        robots = robot_summary(run)
    if robots.empty:
        return None
    rows, seps, last = [], set(), None
    robots = robots.assign(_order=robots["rank"].fillna(np.inf))
    order = []
    for _, part in robots.groupby("robot", sort=False):
        order.append(part.sort_values("_order", kind="stable"))
    fams = {}
    for part in order:
        for r in part.itertuples(index=False):
            fams[r.robot] = r.families
            if last is not None and r.robot != last:
                seps.add(len(rows))
            last = r.robot
            if not r.available:
                rows.append([r.robot, r.solver, "-", str(r.solves), str(r.supported), na_reason(r.statuses),
                             "", "", "", ""])
                continue
            succ = fmt_success(r.success_rate, r.success_ci_low, r.success_ci_high)
            if r.supported < r.solves:
                succ += "*"
            rows.append([r.robot, r.solver, f"{r.rank:.0f}", str(r.solves), str(r.supported), succ,
                         fmt_num(r.time_us_mean, "time"), fmt_num(r.time_us_median, "time"),
                         fmt_num(r.time_us_p99, "time"), fmt_num(r.iterations_median, "int")])
    lines = ["per robot (families: " + "; ".join(f"{k}: {v}" for k, v in fams.items()) + ")",
             render(ROBOT_HEADER, rows, left=2, sep_before=seps, markdown=markdown), "",
             "rank: success rate, then mean time; success over all solves [Wilson 95%], times over supported solves"]
    return "\n".join(lines) + "\n"
