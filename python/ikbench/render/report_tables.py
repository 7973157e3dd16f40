"""report.html's tables and headline (docs/report.md): the summary rows and their texts (formatted by
ikbench.render.tables), the statuses, the per-family leaders beside the reference peer and
their chart, the per-robot rows, and each spec's colour and dash (ikbench.render.styles)."""

import math
import numpy as np

from ..analysis import figures
from . import tables


def solver_styles(specs):
    """{spec: {"colour", "dash", "label"}} in the given order: the package's look of each spec
    (ikbench.render.styles.spec_style, a function of the spec's text alone: the same in every figure,
    plot and report) and its axis label (styles.short_labels: the spec, or its abbreviation when
    long)."""
    from .styles import short_labels, spec_style

    labels = short_labels(specs)
    return {s: {"colour": spec_style(s).colour, "dash": spec_style(s).dash, "label": labels[s]} for s in specs}


def _rgba(hex_colour, alpha):
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


SUMMARY_FIELDS = [
    "family", "solver", "solves", "supported", "converged", "successes", "success_rate", "success_ci_low",
    "success_ci_high", "iterations_median", "iterations_median_ci_low", "iterations_median_ci_high",
    "iterations_p90", "position_error_median", "orientation_error_median", "time_us_median",
    "time_us_median_ci_low", "time_us_median_ci_high", "time_us_mean", "time_us_mean_ci_low",
    "time_us_mean_ci_high", "time_us_p90", "time_us_p99", "time_us_p999", "time_us_max", "fk_evals_mean", "jacobian_evals_mean",
    "available", "rank", "rank_of", "tied_leader", "time_us_outliers_mild", "time_us_outliers_severe",
    "solver_time_us_median", "overhead_us_median",
]
SUMMARY_TEXTS = ["success_text", "iterations_median_text", "iterations_p90_text", "position_error_text",
                 "orientation_error_text", "time_median_text", "time_mean_text", "time_p99_text", "time_p999_text",
                 "time_max_text", "fk_text", "j_text",
                 "statuses_text", "rank_text", "outliers_text", "own_time_text", "overhead_text"]

STATUS_SHORT = {"converged": "conv", "max-iterations": "max-it", "time-limit": "time", "stalled": "stall",
                "numerical-failure": "num-fail", "unsupported": "unsupp", "invalid-input": "invalid",
                "false-convergence": "false-conv"}


def _interval_text(v, lo, hi, kind="time"):
    if v is None or not math.isfinite(v):
        return "-"
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return tables.fmt_num(v, kind)
    return f"{tables.fmt_num(v, kind)} [{tables.fmt_num(lo, kind)}, {tables.fmt_num(hi, kind)}]"


def success_text(r):
    if not r["available"]:
        return tables.na_reason(r["statuses"])
    t = tables.fmt_success(r["success_rate"], r["success_ci_low"], r["success_ci_high"])
    return t + ("*" if r["supported"] < r["solves"] else "")


def statuses_text(statuses):
    return " · ".join(f"{STATUS_SHORT.get(k, k)} {v}" for k, v in
                      sorted(statuses.items(), key=lambda kv: (-kv[1], kv[0])))


def summary_rows(summary):
    """The summary table's rows: SUMMARY_FIELDS (figures.summarize's values, rank and ties from
    figures.rank_cells within the family) then SUMMARY_TEXTS (formatted by ikbench.render.tables)."""
    rows = []
    for r in summary.to_dict("records"):
        a = bool(r["available"])
        vals = [r.get(k, math.nan) if k not in ("available",) else a for k in SUMMARY_FIELDS]
        own, overhead = r.get("solver_time_us_median", math.nan), r.get("overhead_us_median", math.nan)
        texts = [success_text(r),
                 tables.fmt_num(r["iterations_median"], "int") if a else "",
                 tables.fmt_num(r["iterations_p90"], "int") if a else "",
                 tables.fmt_num(r["position_error_median"], "sci") if a else "",
                 tables.fmt_num(r["orientation_error_median"], "sci") if a else "",
                 _interval_text(r["time_us_median"], r["time_us_median_ci_low"], r["time_us_median_ci_high"])
                 if a else "",
                 _interval_text(r["time_us_mean"], r["time_us_mean_ci_low"], r["time_us_mean_ci_high"]) if a else "",
                 tables.fmt_num(r["time_us_p99"], "time") if a else "",
                 tables.fmt_num(r.get("time_us_p999", math.nan), "time") if a else "",
                 tables.fmt_num(r["time_us_max"], "time") if a else "",
                 tables.fmt_num(r["fk_evals_mean"], "f") if a else "",
                 tables.fmt_num(r["jacobian_evals_mean"], "f") if a else "",
                 statuses_text(r["statuses"]), tables.fmt_rank(r),
                 tables.fmt_outliers(r["time_us_outliers_mild"], r["time_us_outliers_severe"]) if a else "",
                 tables.fmt_num(own, "time") if a and math.isfinite(own) else "",
                 tables.fmt_num(overhead, "time") if a and math.isfinite(overhead) else ""]
        rows.append(vals + texts)
    return {"columns": SUMMARY_FIELDS + SUMMARY_TEXTS, "rows": rows}


def _cell_brief(r):
    a = bool(r["available"])
    return {"solver": r["solver"], "rank": r["rank"], "rank_text": tables.fmt_rank(r), "available": a,
            "tied_leader": bool(r["tied_leader"]),
            "success_rate": r["success_rate"], "success_ci_low": r["success_ci_low"],
            "success_ci_high": r["success_ci_high"], "time_us_median": r["time_us_median"],
            "time_us_median_ci_low": r["time_us_median_ci_low"], "time_us_median_ci_high": r["time_us_median_ci_high"],
            "time_us_mean": r["time_us_mean"], "time_us_mean_ci_low": r["time_us_mean_ci_low"],
            "time_us_mean_ci_high": r["time_us_mean_ci_high"],
            "time_us_outliers_mild": r["time_us_outliers_mild"], "time_us_outliers_severe": r["time_us_outliers_severe"],
            "success_text": success_text(r),
            "time_median_text": _interval_text(r["time_us_median"], r["time_us_median_ci_low"],
                                               r["time_us_median_ci_high"]) if a else "",
            "time_mean_text": tables.fmt_num(r["time_us_mean"], "time") if a else "",
            "outliers_text": tables.fmt_outliers(r["time_us_outliers_mild"], r["time_us_outliers_severe"]) if a else ""}


def headline(ranked):
    """Per family, the verdict of figures.family_leaders as page data: `verdict` (winner, tie,
    no success, n/a), `ran` (cells that ran), `leaders` (the tied leaders, best first, with their
    figures), `peer` (figures.PEER where it ran) and `failed_most` (the cell with the lowest
    success, when it is not a leader)."""
    out = []
    recs = ranked.to_dict("index")
    for v in figures.family_leaders(ranked).to_dict("records"):
        fam = v["family"]
        by_spec = {r["solver"]: r for r in recs.values() if r["family"] == fam}
        out.append({"family": fam, "verdict": v["verdict"], "ran": v["ran"], "succeeded": v["succeeded"],
                    "cells": len(by_spec), "leaders": [_cell_brief(by_spec[s]) for s in v["leaders"]],
                    "peer": _cell_brief(recs[v["peer_row"]]) if v["peer"] is not None else None,
                    "failed_most": _cell_brief(recs[v["failed_most"]]) if v["failed_most"] is not None else None})
    return out


def robot_rows(run):
    """figures.robot_summary, best first within each robot, with texts."""
    rs = figures.robot_summary(run)
    if rs.empty:
        return []
    rs = rs.assign(_o=rs["rank"].fillna(np.inf))
    out = []
    for _, part in rs.groupby("robot", sort=False):
        for r in part.sort_values("_o", kind="stable").to_dict("records"):
            a = bool(r["available"])
            out.append({
                "robot": r["robot"], "solver": r["solver"], "families": r["families"], "rank": r["rank"],
                "rank_text": tables.fmt_rank(r), "tied_leader": bool(r["tied_leader"]),
                "outliers_text": tables.fmt_outliers(r["time_us_outliers_mild"], r["time_us_outliers_severe"])
                if a else "",
                "solves": r["solves"], "supported": r["supported"], "successes": r["successes"],
                "success_rate": r["success_rate"], "success_ci_low": r["success_ci_low"],
                "success_ci_high": r["success_ci_high"], "time_us_mean": r["time_us_mean"],
                "time_us_median": r["time_us_median"], "time_us_p99": r["time_us_p99"],
                "iterations_median": r["iterations_median"], "available": a,
                "success_text": success_text(r),
                "time_mean_text": tables.fmt_num(r["time_us_mean"], "time") if a else "",
                "time_median_text": tables.fmt_num(r["time_us_median"], "time") if a else "",
                "time_p99_text": tables.fmt_num(r["time_us_p99"], "time") if a else "",
                "iterations_text": tables.fmt_num(r["iterations_median"], "int") if a else ""})
    return out
