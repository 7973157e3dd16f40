"""tune.md: the report of `ikbench tune` (a tune.json dict, ikbench.analysis.tune) as markdown, its tables
drawn by python3-tabulate (pipe format). Nothing here computes a figure or a choice."""

import numpy as np
from tabulate import tabulate

from ..analysis.tune import _g, overlapping
from .numbers import interval, number


def _table(rows, headers, align):
    # tabulate takes column alignments only when there is a row to align
    return tabulate(rows, headers=headers, tablefmt="pipe", disable_numparse=True,
                    colalign=align if rows else None).splitlines()


def _pct(v, lo=None, hi=None, digits=2):
    if v is None or not np.isfinite(v):
        return "n/a"
    s = f"{100 * v:.{digits}f}%"
    if lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi):
        s += f" [{100 * lo:.{digits}f}, {100 * hi:.{digits}f}]"
    return s


def _num(v, lo=None, hi=None, digits=1):
    """'6.2 [5.9, 6.6]' with `digits` decimals; 'n/a' when none."""
    return interval(v, lo, hi, "fixed", digits=digits, missing="n/a")


def _figure_rows(t, e, reference):
    rows = [("success", _pct(_g(t, "success"), _g(t, "success_ci_low"), _g(t, "success_ci_high")),
             _pct(_g(e, "success"), _g(e, "success_ci_low"), _g(e, "success_ci_high"))),
            ("worst family success", _pct(_g(t, "worst_success")), _pct(_g(e, "worst_success"))),
            ("mean time [us]", _num(_g(t, "mean_time"), _g(t, "time_us_mean_ci_low"), _g(t, "time_us_mean_ci_high")),
             _num(_g(e, "mean_time"), _g(e, "time_us_mean_ci_low"), _g(e, "time_us_mean_ci_high"))),
            ("median time [us]", _num(_g(t, "median_time"), _g(t, "time_us_median_ci_low"),
                                      _g(t, "time_us_median_ci_high")),
             _num(_g(e, "median_time"), _g(e, "time_us_median_ci_low"), _g(e, "time_us_median_ci_high"))),
            ("p99 time [us]", _num(_g(t, "p99_time")), _num(_g(e, "p99_time"))),
            ("median iterations", _num(_g(t, "median_iters"), _g(t, "iterations_median_ci_low"),
                                       _g(t, "iterations_median_ci_high"), 0),
             _num(_g(e, "median_iters"), _g(e, "iterations_median_ci_low"), _g(e, "iterations_median_ci_high"),
                  0)),
            ("mean FK + Jacobian evaluations", _num(_g(t, "mean_evals")), _num(_g(e, "mean_evals"))),
            ("geometric mean of family mean times [us]", _num(_g(t, "geomean_time")), _num(_g(e, "geomean_time")))]
    if reference:
        rows += [(f"mean time / `{reference}`'s", _num(_g(t, "time_ratio"), _g(t, "time_ratio_ci_low"),
                                                       _g(t, "time_ratio_ci_high"), 3),
                  _num(_g(e, "time_ratio"), _g(e, "time_ratio_ci_low"), _g(e, "time_ratio_ci_high"), 3)),
                 ("worst family ratio", _num(_g(t, "worst_time_ratio"), digits=3),
                  _num(_g(e, "worst_time_ratio"), digits=3))]
    return rows


def _family_table(fams, reference, solver):
    headers = ["family", "DOF", "solves", "success [95% CI]", "mean time [us]", "median time [us]", "median it."]
    align = ["left", "right", "right", "left", "left", "left", "right"]
    if reference:
        headers.append("ratio to the reference's mean")
        align.append("left")
    rows = []
    for f in fams:
        if f["solver"] != solver:
            continue
        row = [f["family"], _num(_g(f, "dof"), digits=0), _num(_g(f, "solves"), digits=0),
               _pct(_g(f, "success_rate"), _g(f, "success_ci_low"), _g(f, "success_ci_high")),
               _num(_g(f, "time_us_mean"), _g(f, "time_us_mean_ci_low"), _g(f, "time_us_mean_ci_high")),
               _num(_g(f, "time_us_median"), _g(f, "time_us_median_ci_low"), _g(f, "time_us_median_ci_high")),
               _num(_g(f, "iterations_median"), digits=0)]
        if reference:
            row.append(_num(_g(f, "time_ratio"), _g(f, "time_ratio_ci_low"), _g(f, "time_ratio_ci_high"), 3))
        rows.append(row)
    return _table(rows, headers, align)


def markdown(report, runner_ups=5):
    r = report
    ref = r.get("reference")
    L = ["# ikbench tune", "", f"`{r['command']}`" if r.get("command") else "", "",
         f"* grid: `{r['grid']}` ({len(r['points'])} points)" + (f"; reference `{ref}`" if ref else ""),
         f"* criterion: `{r['criterion']['text']}`: {r['criterion']['meaning']}",
         f"* tuning set: `{r['tuning_set']['text']}`; evaluation set: `{r['evaluation_set']['text']}`",
         f"* threads: {r['threads']}; scheduling: {r.get('sched', 'normal')}; started {r['start_time']}"]
    for side in ("tuning_set", "evaluation_set"):
        for run in r[side]["runs"]:
            la = run.get("load_average_before"), run.get("load_average_after")
            L.append(f"* {side.replace('_', ' ')} run `{run['results']}` ({', '.join(run['families'])}; seed "
                     f"{run['seed']}): load average {la[0]} before, {la[1]} after")
    L.append("")
    for n in r["notes"]:
        L += [f"**{n}**", ""]
    chosen = r["chosen"]
    if chosen is None:
        L += ["No point meets the criterion's constraints on the tuning set; nothing was evaluated.", ""]
    else:
        t = r["tuning"]["points"][chosen]
        e = r["evaluation"]["point"]
        L += [f"## Chosen point: `{chosen}`", ""]
        L += _table([list(row) for row in _figure_rows(t, e, ref)],
                    ["figure", "on the tuning set (the data it was chosen on)", "on the evaluation set (unseen)"],
                    ["left", "left", "left"])
        L += ["", "Success: converged and within limits over all solves [Wilson 95 % interval]; times over "
              "supported solves [percentile bootstrap 95 % intervals]; ratios [the two means' intervals "
              "divided: a conservative interval]. Definitions: docs/analysis.md, docs/tuning.md.", ""]
        L += ["### Per family, on the evaluation set", ""] + _family_table(r["evaluation"]["families"], ref, chosen)
        if ref:
            L += ["", f"Reference `{ref}` on the evaluation set:", ""] + \
                 _family_table(r["evaluation"]["families"], None, ref)
        L += ["", "### Per family, on the tuning set (the data it was chosen on)", ""] + \
            _family_table(r["tuning"]["families"], ref, chosen)
    extra = [f for f in r["criterion_figures"] if f not in ("success", "mean_time")]
    L += ["", "## Ranking on the tuning set", ""]
    headers = ["rank", "point", "success [95% CI]", "mean time [us]"] + extra + ["intervals overlapping the chosen's"]
    shown = r["ranking"][:1 + runner_ups]
    c = r["tuning"]["points"][chosen] if chosen else None
    rows = []
    for k, s in enumerate(shown):
        p = r["tuning"]["points"][s]
        cells = [str(k + 1), f"`{s}`" + (" (chosen)" if s == chosen else ""),
                 _pct(_g(p, "success"), _g(p, "success_ci_low"), _g(p, "success_ci_high")),
                 _num(_g(p, "mean_time"), _g(p, "time_us_mean_ci_low"), _g(p, "time_us_mean_ci_high"))]
        cells += [number(_criterion_value(p, f), "sig", digits=6, missing="n/a") for f in extra]
        cells.append("" if s == chosen else ", ".join(overlapping(p, c)) or "none")
        rows.append(cells)
    if len(r["ranking"]) > len(shown):
        rows.append(["", f"... {len(r['ranking']) - len(shown)} more (tune.json)"] + [""] * (len(headers) - 2))
    L += _table(rows, headers, ["right"] + ["left"] * (len(headers) - 1))
    L += ["", "A runner-up whose success and mean-time intervals both overlap the chosen point's is not separated "
          "from it by this tuning set: a repeat with other seeds may rank them the other way round."]
    if r["excluded"]:
        L += ["", "Excluded by the criterion:", ""]
        for s, why in list(r["excluded"].items())[:20]:
            L.append(f"* `{s}`: {why}")
        if len(r["excluded"]) > 20:
            L.append(f"* ... {len(r['excluded']) - 20} more (tune.json)")
    L.append("")
    return "\n".join(x for x in L if x is not None) + "\n"


def _criterion_value(p, f):
    v = p.get(f)
    return np.nan if v is None else v
