"""report.html: one self-contained page where a researcher understands a run (docs/report.md).

    python3 -m ikbench report RUN_DIR [--out FILE] [--trace-problems K] [--trace-head N]
                                      [--trace-points M] [--clip-frames F] [--latex DIR]
    ikbench report RUN_DIR [...]                 (the harness passes its arguments here)

    data = build(ikbench.results.load(RUN_DIR))  # the page's data (a dict of JSON values)
    html = render(data)                          # the page
    write_report(RUN_DIR)                        # RUN_DIR/report.html

Every number of the page comes from the analysis library: figures.summarize (ranks and ties by
rank_cells) and family_leaders (the headline and its chart, the summary table, iterations),
figures.robot_summary (the per-robot table), curves (convergence bands, time ECDFs, success vs
DOF), sweep (parameter sweeps) and coverage (solution coverage); texts are formatted with ikbench.tables. The page embeds its data as JSON
(`<script id="ikbench-data" type="application/json">`), plotly.js once (python3-plotly's
offline bundle) and its own script (report_assets/), so it opens from file:// without a network.
The 3D solve viewer computes forward kinematics in JavaScript from models.json's joints
(docs/results-format.md "Frames and conventions") and draws with plotly's scatter3d.

Size: the traces of K problems of each family are embedded (K = --trace-problems, default 3
as `ikbench run`'s, or 'all': the first K of the run's traced sample, run.json
trace.problems), each thinned to its first N records (--trace-head, default 40) and then at most M
more at an even stride (--trace-points, default 40), always with the last; a sequential family
(trajectory tracking) is embedded as a clip of its first F problems' returned configurations
(--clip-frames, default 300). The page says what it embeds.
"""

import html
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import coverage, curves, figures, report_quality, stats, sweep, tables
from .results import NOT_ATTEMPTED, ResultsError, input_paths, load, optional_json
from .redact import redact_secrets, redact_value
from .safe_io import atomic_write_bytes, atomic_write_text, check_output_path

REPORT_FORMAT = "ikbench-report/1"
ASSETS = Path(__file__).resolve().parent / "report_assets"
PEERS = ("kdl-lma", "kdl-nr-jl")      # KDL's solvers: the peers drawn by default beside the best
HEADLINE_PEER = figures.PEER          # the reference peer beside the leaders
DEFAULT_PICKS = 4                     # best solvers picked by default in the per-family plots
PLAYGROUND_PAGE = "playground.html"   # linked from the report when it is beside it

DEFAULT_TRACE_PROBLEMS = 3           # as `ikbench run --trace-problems` (RunConfig::kDefaultTraceProblems)
DEFAULT_TRACE_HEAD = 40
DEFAULT_TRACE_POINTS = 40
DEFAULT_CLIP_FRAMES = 300
CURVE_DIGITS = 4                      # significant digits of drawn curve values (not of table figures)
CURVE_TIME_POINTS = 120               # points of the time grid of the convergence curves


def trace_problems_arg(text):
    """--trace-problems: 'all' (None) or a count >= 0."""
    import argparse

    if text == "all":
        return None
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected 'all' or a count >= 0")
    return v


def embedded_problems(run, traced_keys, k):
    """{family: set of problems} whose traces the viewer embeds: the first `k` (None: all) of each
    family's traced sample in its order (run.json trace.problems), or, for a run that does not
    list it, the `k` lowest traced problems. `traced_keys`: the (family, problem) pairs of
    traces.csv."""
    traced = {}
    for f, p in traced_keys:
        traced.setdefault(f, set()).add(int(p))
    listed = (run.meta.get("trace") or {}).get("problems") if isinstance(run.meta.get("trace"), dict) else None
    out = {}
    for f, have in traced.items():
        order = listed.get(f) if isinstance(listed, dict) and isinstance(listed.get(f), list) else None
        order = [int(p) for p in order if isinstance(p, int) and p in have] if order is not None else sorted(have)
        out[f] = set(order if k is None else order[:k])
    return out


@dataclass
class Options:
    trace_problems: int = DEFAULT_TRACE_PROBLEMS   # None: every traced problem
    trace_head: int = DEFAULT_TRACE_HEAD
    trace_points: int = DEFAULT_TRACE_POINTS
    clip_frames: int = DEFAULT_CLIP_FRAMES
    seed: int = stats.BOOTSTRAP_SEED
    resamples: int = stats.BOOTSTRAP_RESAMPLES


# ---------------------------------------------------------------- values

def sig(a, digits=CURVE_DIGITS):
    """Values rounded to `digits` significant digits (for drawing; non-finite values kept)."""
    a = np.array(a, dtype=float, copy=True)
    m = np.isfinite(a) & (a != 0)
    if m.any():
        e = (digits - 1 - np.floor(np.log10(np.abs(a[m])))).astype(int)
        v = a[m]
        pos = e >= 0
        out = np.empty_like(v)
        out[pos] = np.round(v[pos] * 10.0 ** e[pos]) / 10.0 ** e[pos]
        out[~pos] = np.round(v[~pos] / 10.0 ** (-e[~pos])) * 10.0 ** (-e[~pos])
        a[m] = out
    return a


def clean(x):
    """JSON values: numpy scalars and arrays to Python, nan to null, +-inf to +-1e999 (which
    JSON.parse reads as Infinity)."""
    if isinstance(x, dict):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f":
            if np.isfinite(x).all():
                return x.tolist()
            o = x.astype(object)
            o[np.isnan(x)] = None
            o[x == np.inf] = _INF
            o[x == -np.inf] = _NEG_INF
            return o.tolist()
        if x.dtype.kind in "iub":
            return x.tolist()
        return clean(x.tolist())
    if isinstance(x, (list, tuple)):
        if x and all(type(v) is float for v in x):
            return x if all(map(math.isfinite, x)) else [_num(v) for v in x]
        return [clean(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return _num(float(x))
    if x is None or isinstance(x, str):
        return x
    if x is pd.NA:
        return None
    return str(x)


_INF = "\u0000inf\u0000"
_NEG_INF = "\u0000-inf\u0000"


def _num(v):
    if v != v:
        return None
    if v == math.inf:
        return _INF      # written as 1e999 by to_json
    if v == -math.inf:
        return _NEG_INF  # -1e999
    return v


def _json_one(obj):
    text = json.dumps(clean(obj), separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    text = text.replace(json.dumps(_INF), "1e999").replace(json.dumps(_NEG_INF), "-1e999")
    return text.replace("</", "<\\/").replace("<!--", "\\u003c!--")


def _json_pieces(obj, depth=0):
    """The JSON text of `obj` in pieces: the large dicts of the page's data (sections, families)
    are encoded member by member, so that only one member's clean() copy exists at a time."""
    if isinstance(obj, dict) and depth < 4 and len(obj) > 1:
        yield "{"
        for i, (k, v) in enumerate(obj.items()):
            yield ("," if i else "") + _json_one(str(k)) + ":"
            yield from _json_pieces(v, depth + 1)
        yield "}"
    else:
        yield _json_one(obj)


def to_json(obj):
    """Compact JSON of clean(obj); infinities as 1e999 / -1e999, safe inside <script> (no '</')."""
    return "".join(_json_pieces(obj))


# ---------------------------------------------------------------- solvers and colours

def solver_styles(specs):
    """{spec: {"colour", "dash"}} in the given order: the package's look of each spec
    (ikbench.styles.spec_style, a function of the spec's text alone: the same in every figure,
    plot and report)."""
    from .styles import spec_style

    return {s: {"colour": spec_style(s).colour, "dash": spec_style(s).dash} for s in specs}


def spec_name(spec):
    return spec.split(":", 1)[0]


def _rgba(hex_colour, alpha):
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


# ---------------------------------------------------------------- tables

SUMMARY_FIELDS = [
    "family", "solver", "solves", "supported", "converged", "successes", "success_rate", "success_ci_low",
    "success_ci_high", "iterations_median", "iterations_median_ci_low", "iterations_median_ci_high",
    "iterations_p90", "position_error_median", "orientation_error_median", "time_us_median",
    "time_us_median_ci_low", "time_us_median_ci_high", "time_us_mean", "time_us_mean_ci_low",
    "time_us_mean_ci_high", "time_us_p90", "time_us_p99", "time_us_max", "fk_evals_mean", "jacobian_evals_mean",
    "available", "rank", "rank_of", "tied_leader", "time_us_outliers_mild", "time_us_outliers_severe",
]
SUMMARY_TEXTS = ["success_text", "iterations_median_text", "iterations_p90_text", "position_error_text",
                 "orientation_error_text", "time_median_text", "time_mean_text", "time_p99_text", "fk_text", "j_text",
                 "statuses_text", "rank_text", "outliers_text"]

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
    figures.rank_cells within the family) then SUMMARY_TEXTS (formatted by ikbench.tables)."""
    rows = []
    for r in summary.to_dict("records"):
        a = bool(r["available"])
        vals = [r[k] if k not in ("available",) else a for k in SUMMARY_FIELDS]
        texts = [success_text(r),
                 tables.fmt_num(r["iterations_median"], "int") if a else "",
                 tables.fmt_num(r["iterations_p90"], "int") if a else "",
                 tables.fmt_num(r["position_error_median"], "sci") if a else "",
                 tables.fmt_num(r["orientation_error_median"], "sci") if a else "",
                 _interval_text(r["time_us_median"], r["time_us_median_ci_low"], r["time_us_median_ci_high"])
                 if a else "",
                 _interval_text(r["time_us_mean"], r["time_us_mean_ci_low"], r["time_us_mean_ci_high"]) if a else "",
                 tables.fmt_num(r["time_us_p99"], "time") if a else "",
                 tables.fmt_num(r["fk_evals_mean"], "f") if a else "",
                 tables.fmt_num(r["jacobian_evals_mean"], "f") if a else "",
                 statuses_text(r["statuses"]), tables.fmt_rank(r),
                 tables.fmt_outliers(r["time_us_outliers_mild"], r["time_us_outliers_severe"]) if a else ""]
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


def headline_figure(heads, styles):
    """The headline's chart (plotly JSON): per family, the success rate [Wilson 95 %] (top) and
    the median time [bootstrap 95 %] (bottom, log scale) of the tied leaders beside the peer. A
    family without a success has no leader and is marked "no winner"."""
    fams = [h["family"] for h in heads]
    lay = _subplots(2, 1, ["success rate [Wilson 95 %]", "median time [µs] [bootstrap 95 %], log scale"],
                    shared_xaxes=True, vertical_spacing=0.12)

    def err(vals, lo, hi):
        return {"type": "data", "symmetric": False, "array": [None if h is None or v is None else h - v
                                                              for v, h in zip(vals, hi)],
                "arrayminus": [None if lo_ is None or v is None else v - lo_ for v, lo_ in zip(vals, lo)]}

    def fin(x):
        return None if x is None or not math.isfinite(x) else float(x)

    data = []
    leaders = {"x": [], "s": [], "slo": [], "shi": [], "t": [], "tlo": [], "thi": [], "text": []}
    for h in heads:
        for c in h["leaders"]:
            leaders["x"].append(h["family"])
            leaders["s"].append(fin(c["success_rate"]))
            leaders["slo"].append(fin(c["success_ci_low"]))
            leaders["shi"].append(fin(c["success_ci_high"]))
            leaders["t"].append(fin(c["time_us_median"]))
            leaders["tlo"].append(fin(c["time_us_median_ci_low"]))
            leaders["thi"].append(fin(c["time_us_median_ci_high"]))
            leaders["text"].append(f"{c['solver']} ({c['rank_text']})")
    peer = {"x": [], "s": [], "slo": [], "shi": [], "t": [], "tlo": [], "thi": [], "text": []}
    for h in heads:
        c = h["peer"]
        if c is None or not c["available"]:
            continue
        peer["x"].append(h["family"])
        peer["s"].append(fin(c["success_rate"]))
        peer["slo"].append(fin(c["success_ci_low"]))
        peer["shi"].append(fin(c["success_ci_high"]))
        peer["t"].append(fin(c["time_us_median"]))
        peer["tlo"].append(fin(c["time_us_median_ci_low"]))
        peer["thi"].append(fin(c["time_us_median_ci_high"]))
        peer["text"].append(f"{c['solver']} ({c['rank_text']})")
    for name, d, colour, symbol, dx in (("tied leaders", leaders, "#1f77b4", "circle", -0.15),
                                        (f"{figures.PEER} (peer)", peer, "#d62728", "diamond", 0.15)):
        if not d["x"]:
            continue
        base = {"name": name, "legendgroup": name, "mode": "markers", "type": "scatter", "text": d["text"],
                "x": d["x"], "marker": {"color": colour, "symbol": symbol, "size": 8},
                "hovertemplate": "%{x}<br>%{text}<br>%{y}<extra></extra>"}
        data.append(dict(base, y=d["s"], error_y=err(d["s"], d["slo"], d["shi"]), xaxis="x", yaxis="y"))
        data.append(dict(base, y=d["t"], error_y=err(d["t"], d["tlo"], d["thi"]), xaxis="x2", yaxis="y2",
                         showlegend=False))
    nowin = [h["family"] for h in heads if h["verdict"] == figures.VERDICT_NO_SUCCESS]
    if nowin:
        data.append({"name": "no winner (no spec succeeded)", "type": "scatter", "mode": "markers+text",
                     "x": nowin, "y": [0.0] * len(nowin), "text": ["no winner"] * len(nowin),
                     "textposition": "top center", "marker": {"color": "#555", "symbol": "x", "size": 9},
                     "xaxis": "x", "yaxis": "y", "hovertemplate": "%{x}: no spec succeeded<extra></extra>"})
    lay.update({"height": 540, "margin": {"l": 60, "r": 20, "t": 70, "b": 140},
                "legend": {"orientation": "h", "y": 1.16, "x": 0},
                "hovermode": "closest"})
    lay["yaxis"] = dict(lay.get("yaxis", {}), range=[-0.05, 1.05], tickformat=".0%")
    lay["yaxis2"] = dict(lay.get("yaxis2", {}), type="log")
    lay["xaxis2"] = dict(lay.get("xaxis2", {}), tickangle=-45, categoryorder="array", categoryarray=fams)
    lay["xaxis"] = dict(lay.get("xaxis", {}), categoryorder="array", categoryarray=fams)
    return {"data": data, "layout": lay}


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


def default_picks(ranked):
    """{family: [specs]}: the DEFAULT_PICKS best ranked cells of the family, then the KDL peers
    (PEERS) that ran on it with a supported solve."""
    out = {}
    for fam, part in ranked.groupby("family", sort=False):
        best = part[part["rank"].notna()].sort_values("rank")["solver"].tolist()[:DEFAULT_PICKS]
        peers = [s for s in part[part["available"]]["solver"] if spec_name(s) in PEERS and s not in best]
        out[fam] = best + peers
    return out


# ---------------------------------------------------------------- figures (plotly JSON)

def _axis_name(kind, k):
    return f"{kind}{'' if k == 1 else k}"


_SUBPLOT_LAYOUTS = {}


def _subplots(rows, cols, titles, **kw):
    """The layout of plotly.subplots.make_subplots (axes domains, titles as annotations), as a
    JSON dict; made once per grid and copied."""
    from plotly.subplots import make_subplots

    key = (rows, cols, tuple(sorted(kw.items())))
    if key not in _SUBPLOT_LAYOUTS:
        fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"@{i}" for i in range(rows * cols)], **kw)
        lay = fig.to_plotly_json()["layout"]
        lay.pop("template", None)
        _SUBPLOT_LAYOUTS[key] = json.dumps(lay)
    lay = json.loads(_SUBPLOT_LAYOUTS[key])
    texts = list(titles) + [""] * (rows * cols - len(titles))
    for a in lay.get("annotations", []):
        if isinstance(a.get("text"), str) and a["text"].startswith("@"):
            a["text"] = texts[int(a["text"][1:])]
    return lay


def _trace_axes(row, col, cols):
    k = (row - 1) * cols + col
    return {"xaxis": "x" if k == 1 else f"x{k}", "yaxis": "y" if k == 1 else f"y{k}"}


def convergence_figures(run, styles, convs=None, traces_table=None):
    """{family: plotly figure} of the convergence bands (curves.convergence, compact iteration
    grid): per error kind a row, error vs iteration and vs time; per solver the median line and
    the interquartile band, or, for a solver with only start and end records
    (Convergence.sparse), markers at the start and at the last records' quartiles. Traces carry
    `meta` = the solver spec (the page shows the picked ones)."""
    tr = (traces_table if traces_table is not None else curves.read_traces(run)).frame
    if tr is None or tr.empty:
        return {}, {}
    tcol = curves.time_column(tr)
    convs = convs if convs is not None else curves.convergence(tr, compact=True, time_points=CURVE_TIME_POINTS,
                                                               time_col=tcol)
    tol = dict(zip(("position", "orientation"), run.tolerances))
    units = {"position": "m", "orientation": "rad"}
    per_family = {}
    for c in convs:
        per_family.setdefault(c.family, []).append(c)
    out, info = {}, {}
    tname = "time since solve start [µs]" + ("" if tcol == "time_us" else " (recording pass, includes recording)")
    for fam, cells in per_family.items():
        kinds = cells[0].kinds
        titles = [f"{k} error vs {x}" for k in kinds for x in ("iteration", "time")]
        lay = _subplots(len(kinds), 2, titles, horizontal_spacing=0.08, vertical_spacing=0.16)
        data = []
        for c in cells:
            st = styles.get(c.solver, {"colour": "#444", "dash": "solid"})
            col_ = st["colour"]
            first = True
            for r, kind in enumerate(kinds, start=1):
                for cc, (bands, xname) in enumerate(((c.iteration, "iteration"), (c.time, "time")), start=1):
                    ax = _trace_axes(r, cc, 2)
                    b = bands[kind]
                    common = {"meta": c.solver, "legendgroup": c.solver, **ax}
                    if c.sparse:
                        f = c.final
                        x_end = f["iteration"] if xname == "iteration" else f["time"]
                        e_end = f[kind]
                        xs, ys, exm, exp, eym, eyp, sym = [], [], [], [], [], [], []
                        if xname == "iteration":
                            s0 = f[f"{kind}_start"]
                            xs.append(0), ys.append(s0[1]), exm.append(0), exp.append(0)
                            eym.append(s0[1] - s0[0]), eyp.append(s0[2] - s0[1]), sym.append("circle-open")
                        xs.append(x_end[1]), ys.append(e_end[1])
                        exm.append(x_end[1] - x_end[0]), exp.append(x_end[2] - x_end[1])
                        eym.append(e_end[1] - e_end[0]), eyp.append(e_end[2] - e_end[1]), sym.append("diamond")
                        data.append({"type": "scatter", "mode": "markers", "name": c.solver, "x": sig(xs),
                                     "y": sig(ys), "showlegend": first,
                                     "marker": {"color": col_, "size": 9, "symbol": sym},
                                     "error_x": {"type": "data", "array": sig(exp), "arrayminus": sig(exm),
                                                 "color": col_, "thickness": 1},
                                     "error_y": {"type": "data", "array": sig(eyp), "arrayminus": sig(eym),
                                                 "color": col_, "thickness": 1},
                                     "hovertemplate": f"{c.solver} (start and end records only)<br>{xname} "
                                                      f"%{{x:.3g}}<br>median {kind} error %{{y:.3g}} {units[kind]}"
                                                      "<extra></extra>",
                                     **common})
                        first = False
                        continue
                    x = sig(b.grid)
                    data.append({"type": "scatter", "mode": "lines", "x": x, "y": sig(b.q25), "showlegend": False,
                                 "hoverinfo": "skip", "line": {"width": 0, "color": col_}, "name": c.solver,
                                 **common})
                    data.append({"type": "scatter", "mode": "lines", "x": x, "y": sig(b.q75), "showlegend": False,
                                 "hoverinfo": "skip", "fill": "tonexty", "fillcolor": _rgba(col_, 0.12),
                                 "line": {"width": 0, "color": col_}, "name": c.solver, **common})
                    data.append({"type": "scatter", "mode": "lines", "x": x, "y": sig(b.q50), "name": c.solver,
                                 "showlegend": first, "line": {"color": col_, "dash": st["dash"], "width": 1.8},
                                 "hovertemplate": f"{c.solver}<br>{xname} %{{x:.4g}}<br>median {kind} error "
                                                  f"%{{y:.3g}} {units[kind]}<extra></extra>", **common})
                    first = False
        shapes = []
        for r, kind in enumerate(kinds, start=1):
            for cc in (1, 2):
                ax = _trace_axes(r, cc, 2)
                k = (r - 1) * 2 + cc
                lay[_axis_name("yaxis", k)].update({"type": "log", "title": {"text": f"{kind} error [{units[kind]}]"},
                                                    "exponentformat": "power"})
                lay[_axis_name("xaxis", k)].update({"type": "linear" if cc == 1 else "log",
                                                    "title": {"text": "iteration" if cc == 1 else tname}})
                shapes.append({"type": "line", "xref": f"{ax['xaxis']} domain", "x0": 0, "x1": 1,
                               "yref": ax["yaxis"], "y0": tol[kind], "y1": tol[kind],
                               "line": {"color": "black", "dash": "dot", "width": 1}})
        iter_axes = [_axis_name("xaxis", (r - 1) * 2 + 1) for r in range(1, len(kinds) + 1)]
        lay.update({"shapes": shapes, "height": 330 * len(kinds) + 110, "hovermode": "closest",
                    "margin": {"l": 70, "r": 20, "t": 60, "b": 50},
                    "legend": {"orientation": "v", "font": {"size": 11}},
                    "updatemenus": [{"type": "buttons", "direction": "right", "x": 0, "xanchor": "left", "y": 1.12,
                                     "yanchor": "bottom", "showactive": True, "font": {"size": 11},
                                     "buttons": [{"label": "iteration axis: linear", "method": "relayout",
                                                  "args": [{f"{a}.type": "linear" for a in iter_axes}]},
                                                 {"label": "log", "method": "relayout",
                                                  "args": [{f"{a}.type": "log" for a in iter_axes}]}]}]})
        out[fam] = {"data": data, "layout": lay}
        info[fam] = {"traced": max(c.solves for c in cells), "kinds": kinds,
                     "sparse": [c.solver for c in cells if c.sparse],
                     "solvers": [c.solver for c in cells]}
    return out, info


def ecdf_figures(run, styles):
    """{family: plotly figure}: per solver the ECDF of solve times (curves.time_ecdf), successes
    only and all supported solves."""
    both = [curves.time_ecdf(run.solves, successes_only=True), curves.time_ecdf(run.solves)]
    fams = list(dict.fromkeys(run.solves["family"]))
    out = {}
    for fam in fams:
        lay = _subplots(1, 2, ["successes only", "all supported solves"], horizontal_spacing=0.08,
                        shared_yaxes=True)
        data = []
        for spec in styles:
            st = styles[spec]
            for c, ecdf in enumerate(both, start=1):
                t = ecdf.get((fam, spec))
                if t is None or not len(t):
                    continue
                n = len(t)
                data.append({"type": "scatter", "mode": "lines", "x": sig(t), "y": sig(100 * np.arange(1, n + 1) / n),
                             "line": {"shape": "hv", "color": st["colour"], "dash": st["dash"], "width": 1.6},
                             "name": spec, "legendgroup": spec, "meta": spec, "showlegend": c == 1 or
                             (fam, spec) not in both[0], **_trace_axes(1, c, 2),
                             "hovertemplate": f"{spec} (n={n})<br>%{{y:.1f}}% within %{{x:.4g}} µs<extra></extra>"})
        for k in (1, 2):
            lay[_axis_name("xaxis", k)].update({"type": "log", "title": {"text": "solve time [µs]"}})
        lay["yaxis"].update({"title": {"text": "solves finished within the time [%]"}, "range": [0, 101]})
        lay.update({"height": 380, "margin": {"l": 70, "r": 20, "t": 40, "b": 50}, "hovermode": "closest"})
        out[fam] = {"data": data, "layout": lay}
    return out


def iteration_figures(ranked, styles):
    """{family: plotly figure}: per solver (best first) the median iterations with its bootstrap
    95 % interval and the 90th percentile (figures.summarize)."""
    out = {}
    for fam, part in ranked.groupby("family", sort=False):
        part = part[part["available"]].assign(_o=lambda d: d["rank"].fillna(np.inf)).sort_values("_o", kind="stable")
        specs = part["solver"].tolist()
        med = part["iterations_median"].to_numpy(dtype=float)
        lo = part["iterations_median_ci_low"].to_numpy(dtype=float)
        hi = part["iterations_median_ci_high"].to_numpy(dtype=float)
        p90 = part["iterations_p90"].to_numpy(dtype=float)
        cols = [styles.get(s, {"colour": "#444"})["colour"] for s in specs]
        data = [{"type": "scatter", "mode": "markers", "x": specs, "y": med, "name": "median [bootstrap 95%]",
                 "marker": {"color": cols, "size": 10},
                 "error_y": {"type": "data", "array": np.where(np.isfinite(hi), hi - med, 0),
                             "arrayminus": np.where(np.isfinite(lo), med - lo, 0), "thickness": 1.2},
                 "hovertemplate": "%{x}<br>median %{y} iterations<extra></extra>"},
                {"type": "scatter", "mode": "markers", "x": specs, "y": p90, "name": "90th percentile",
                 "marker": {"color": cols, "size": 9, "symbol": "line-ew-open", "line": {"width": 2, "color": cols}},
                 "hovertemplate": "%{x}<br>p90 %{y} iterations<extra></extra>"}]
        lay = {"height": 340, "margin": {"l": 70, "r": 20, "t": 30, "b": 130},
               "xaxis": {"type": "category", "tickangle": -35, "title": {"text": "solver (best first)"}},
               "yaxis": {"title": {"text": "iterations (supported solves)"}, "rangemode": "tozero"},
               "legend": {"orientation": "h", "y": 1.12},
               "updatemenus": [{"type": "buttons", "direction": "right", "x": 1, "xanchor": "right", "y": 1.12,
                                "yanchor": "bottom", "font": {"size": 11},
                                "buttons": [{"label": "linear", "method": "relayout",
                                             "args": [{"yaxis.type": "linear"}]},
                                            {"label": "log", "method": "relayout", "args": [{"yaxis.type": "log"}]}]}]}
        out[fam] = {"data": data, "layout": lay}
    return out


def dof_figure(run, styles, ranked=None):
    """Success vs DOF (curves.dof_sweeps): one panel per sweep of families, per solver the
    success rate with Wilson 95 % error bars; n/a groups are not drawn. None without a sweep.
    With the ranked summary, each panel shows at most curves.MAX_DOF_SPECS specs
    (curves.dof_picks: the tied leaders, kdl-lma, dls, ccd, fabrik); the others are in the
    legend, one click away (plotly's "legendonly")."""
    cells = curves.dof_sweeps(run.solves)
    if cells.empty:
        return None, []
    picks = {}
    if ranked is not None:
        for sw, part in cells.groupby("sweep", sort=False):
            picks[sw] = curves.dof_picks(ranked, set(", ".join(part["families"]).split(", ")))
    sweeps = list(dict.fromkeys(cells["sweep"]))
    ncols = min(3, len(sweeps))
    nrows = (len(sweeps) + ncols - 1) // ncols
    lay = _subplots(nrows, ncols, sweeps, horizontal_spacing=0.06, vertical_spacing=0.18 if nrows > 1 else 0.1)
    data = []
    shown = set()
    for i, s in enumerate(sweeps):
        r, c = i // ncols + 1, i % ncols + 1
        part = cells[(cells["sweep"] == s) & cells["available"]]
        for spec in styles:
            p = part[part["solver"] == spec].sort_values("dof")
            if p.empty:
                continue
            y = 100 * p["success_rate"].to_numpy(dtype=float)
            data.append({"type": "scatter", "mode": "lines+markers", "x": p["dof"].to_numpy(), "y": y,
                         "error_y": {"type": "data", "array": 100 * p["success_ci_high"].to_numpy(dtype=float) - y,
                                     "arrayminus": y - 100 * p["success_ci_low"].to_numpy(dtype=float),
                                     "thickness": 1},
                         "name": spec, "legendgroup": spec, "meta": spec, "showlegend": spec not in shown,
                         **({} if s not in picks or spec in picks[s] else {"visible": "legendonly"}),
                         "line": {"color": styles[spec]["colour"], "dash": styles[spec]["dash"], "width": 1.5},
                         "marker": {"size": 6}, "customdata": p[["families"]].to_numpy(),
                         "hovertemplate": f"{spec}<br>DOF %{{x}}: %{{y:.1f}}%<br>%{{customdata[0]}}<extra></extra>",
                         **_trace_axes(r, c, ncols)})
            shown.add(spec)
        k = (r - 1) * ncols + c
        dofs = sorted(set(cells[cells["sweep"] == s]["dof"].astype(int)))
        logx = dofs[-1] / max(dofs[0], 1) > 8
        lay[_axis_name("xaxis", k)].update({"type": "log" if logx else "linear", "tickvals": dofs,
                                            "title": {"text": "DOF (nv)"}})
        lay[_axis_name("yaxis", k)].update({"range": [-3, 103], "title": {"text": "success [%]" if c == 1 else ""}})
    lay.update({"height": 330 * nrows + 80, "margin": {"l": 60, "r": 20, "t": 50, "b": 50}, "hovermode": "closest"})
    return {"data": data, "layout": lay, "picks": picks}, sweeps


def _family_order(part):
    """A family's cells, best ranked first, then unranked, then n/a."""
    return part.assign(_o=part["rank"].fillna(np.inf), _na=~part["available"]).sort_values(["_na", "_o"],
                                                                                           kind="stable")


def box_figures(run, ranked, styles):
    """{family: plotly figure}: per spec (best first) a box of its solve times over the supported
    solves (quartiles, whiskers at Tukey's 1.5 IQR fences clipped to the data, as Criterion.rs and
    ik_benchmarking draw them), log axis. The quartiles are computed here (numpy's linear
    quantiles, the figures' definition), so the page holds five numbers per box, not every solve;
    `boxes` keeps them unrounded."""
    att = run.solves[figures.attempted_mask(run.solves)]
    t = att["time_us"].to_numpy(dtype=float)
    ok = np.isfinite(t) & (t > 0)
    fam_, spec_ = att["family"].to_numpy()[ok], att["solver"].to_numpy()[ok]
    groups = {k: np.sort(v.to_numpy()) for k, v in pd.Series(t[ok]).groupby([fam_, spec_], sort=False)}
    out = {}
    for fam, part in ranked.groupby("family", sort=False):
        part = _family_order(part[part["available"]])
        boxes = {"solver": [], "q1": [], "median": [], "q3": [], "lowerfence": [], "upperfence": [], "solves": []}
        data = []
        for spec in part["solver"]:
            v = groups.get((fam, spec))
            if v is None or not len(v):
                continue
            a, m, b = (float(x) for x in np.percentile(v, [25, 50, 75]))
            iqr = b - a
            lo, hi = float(v[v >= a - 1.5 * iqr][0]), float(v[v <= b + 1.5 * iqr][-1])
            for k, x in zip(boxes, (spec, a, m, b, lo, hi, len(v))):
                boxes[k].append(x)
            col = styles.get(spec, {"colour": "#444"})["colour"]
            q = sig([a, m, b, lo, hi])
            data.append({"type": "box", "x": [spec], "q1": [q[0]], "median": [q[1]], "q3": [q[2]],
                         "lowerfence": [q[3]], "upperfence": [q[4]], "name": spec, "meta": spec,
                         "showlegend": False, "marker": {"color": col}, "line": {"color": col, "width": 1.4},
                         "fillcolor": _rgba(col, 0.35), "hoverinfo": "y+name"})
        lay = {"height": 380, "margin": {"l": 70, "r": 20, "t": 30, "b": 130},
               "xaxis": {"type": "category", "tickangle": -35, "title": {"text": "solver (best first)"},
                         "categoryorder": "array", "categoryarray": boxes["solver"]},
               "yaxis": {"type": "log", "title": {"text": "solve time [µs] (supported solves), log"}},
               "hovermode": "closest"}
        out[fam] = {"data": data, "layout": lay, "boxes": boxes}
    return out


def success_figures(ranked, styles):
    """{family: plotly figure}: per spec that ran (best first) its success rate as a bar with its
    Wilson 95 % interval (figures.summarize); n/a specs are named above the bars, not drawn as 0."""
    out = {}
    for fam, part in ranked.groupby("family", sort=False):
        part = _family_order(part)
        ran = part[part["available"]]
        y = 100 * ran["success_rate"].to_numpy(dtype=float)
        data = [{"type": "bar", "x": ran["solver"].tolist(), "y": y,
                 "marker": {"color": [styles.get(x, {"colour": "#444"})["colour"] for x in ran["solver"]]},
                 "error_y": {"type": "data", "array": 100 * ran["success_ci_high"].to_numpy(dtype=float) - y,
                             "arrayminus": y - 100 * ran["success_ci_low"].to_numpy(dtype=float), "thickness": 1.2},
                 "customdata": ran[["solves"]].to_numpy(), "name": "success",
                 "hovertemplate": "%{x}<br>success %{y:.1f}% of %{customdata[0]} solves<extra></extra>"}]
        na = part.loc[~part["available"], "solver"].tolist()
        lay = {"height": 360, "margin": {"l": 70, "r": 20, "t": 30, "b": 130},
               "xaxis": {"type": "category", "tickangle": -35, "title": {"text": "solver (best first)"}},
               "yaxis": {"range": [0, 103], "title": {"text": "success [%] (Wilson 95 %)"}}}
        if na:
            lay["annotations"] = [{"text": "n/a (nothing supported): " + ", ".join(na), "xref": "paper",
                                   "yref": "paper", "x": 1, "y": 1.02, "xanchor": "right", "yanchor": "bottom",
                                   "showarrow": False, "font": {"size": 10, "color": "#555"}}]
        out[fam] = {"data": data, "layout": lay, "na": na}
    return out


def heatmap_figure(ranked, specs):
    """Solver x family: colour = success rate (cividis: colour-blind safe), text = median time [µs]
    (figures.summarize); n/a cells empty with "n/a". `cells` holds the figures drawn."""
    fams = list(dict.fromkeys(ranked["family"]))
    by = {(r["family"], r["solver"]): r for r in ranked.to_dict("records")}
    z, text, cells = [], [], []
    for spec in specs:
        zr, tr = [], []
        for fam in fams:
            r = by.get((fam, spec))
            if r is None:
                zr.append(None)
                tr.append("")
                continue
            if not r["available"]:
                zr.append(None)
                tr.append("n/a")
                cells.append({"family": fam, "solver": spec, "success_rate": None, "time_us_median": None})
                continue
            med = float(r["time_us_median"])
            zr.append(100 * float(r["success_rate"]))
            tr.append(tables.fmt_num(med, "time") if math.isfinite(med) else "-")
            cells.append({"family": fam, "solver": spec, "success_rate": float(r["success_rate"]),
                          "time_us_median": med if math.isfinite(med) else None})
        z.append(zr)
        text.append(tr)
    data = [{"type": "heatmap", "x": fams, "y": list(specs), "z": z, "text": text, "texttemplate": "%{text}",
             "textfont": {"size": 9}, "colorscale": "Cividis", "zmin": 0, "zmax": 100,
             "colorbar": {"title": {"text": "success [%]"}}, "xgap": 1, "ygap": 1,
             "hovertemplate": "%{y} on %{x}<br>success %{z:.1f}%<br>median %{text} µs<extra></extra>"}]
    lay = {"height": 24 * len(specs) + 190, "margin": {"l": 230, "r": 20, "t": 20, "b": 150},
           "xaxis": {"tickangle": -45, "type": "category"}, "yaxis": {"autorange": "reversed", "type": "category"},
           "plot_bgcolor": "#eee"}
    return {"data": data, "layout": lay, "cells": cells}


def solver_sections(run, ranked, convs):
    """Per solver spec: its description and the settings it ran under (settings.settings_in_force:
    run.json solvers[].parameters, a common key the spec leaves null at the run's suite option, then
    the run's tolerances; each with its value, its text and where it comes from), its
    figures on every family (rank, success [Wilson], median time [bootstrap], mean time, median
    iterations; figures.summarize), and its convergence on every traced family (median largest
    goal error vs iteration, one line per family; curves.convergence)."""
    meta = {s.get("spec"): s for s in run.meta.get("solvers", []) if isinstance(s, dict)} \
        if isinstance(run.meta.get("solvers"), list) else {}
    from . import settings

    params = settings.spec_parameters(run)
    by_spec = {}
    for c in convs or []:
        by_spec.setdefault(c.solver, []).append(c)
    out = []
    for spec in run.solver_specs:
        part = ranked[ranked["solver"] == spec]
        rows = []
        for r in part.to_dict("records"):
            a = bool(r["available"])
            rows.append({"family": r["family"], "available": a, "rank_text": tables.fmt_rank(r),
                         "success_rate": r["success_rate"], "success_text": success_text(r),
                         "time_us_median": r["time_us_median"] if a else None,
                         "time_median_text": _interval_text(r["time_us_median"], r["time_us_median_ci_low"],
                                                            r["time_us_median_ci_high"]) if a else "",
                         "time_mean_text": tables.fmt_num(r["time_us_mean"], "time") if a else "",
                         "iterations_text": tables.fmt_num(r["iterations_median"], "int") if a else ""})
        data = []
        for c in by_spec.get(spec, []):
            kind = c.kinds[0]
            b = c.iteration[kind]
            data.append({"type": "scatter", "mode": "lines+markers" if c.sparse else "lines", "x": sig(b.grid),
                         "y": sig(b.q50), "name": c.family,
                         "line": {"width": 1.4, "dash": "solid" if kind == "position" else "dash"},
                         "hovertemplate": f"{c.family}<br>iteration %{{x}}<br>median {kind} error %{{y:.3g}}"
                                          "<extra></extra>"})
        conv = None
        if data:
            conv = {"data": data, "layout": {
                "height": 380, "margin": {"l": 70, "r": 20, "t": 30, "b": 50}, "hovermode": "closest",
                "xaxis": {"title": {"text": "iteration"}, "type": "linear"},
                "yaxis": {"type": "log", "title": {"text": "median largest goal error (solid: position [m], "
                                                           "dashed: orientation [rad])"}, "exponentformat": "power"},
                "legend": {"font": {"size": 10}}}}
        m = meta.get(spec, {})
        in_force = settings.settings_in_force(run, spec, params)
        ran = part[part["available"]]
        out.append({"spec": spec, "name": spec_name(spec), "description": m.get("description"),
                    "parameters": [[st.key, st.value] for st in in_force],
                    "parameter_texts": [st.text for st in in_force],
                    "parameter_sources": [st.source for st in in_force], "families": rows,
                    "total": {"families": int(len(ran)), "solves": int(ran["solves"].sum()),
                              "successes": int(ran["successes"].sum()), "leads": int(ran["tied_leader"].sum())},
                    "convergence": conv})
    return out


# ---------------------------------------------------------------- sweeps and coverage

def sweep_blocks(run):
    """The sweeps of run.json's grid (ikbench.sweep): per grid the figure pooled over families,
    per family, and the cells (figures.summarize per spec)."""
    groups = sweep.grid_groups(run, "run")
    out = []
    for g in groups:
        labelled = [("run", run)]
        fams = list(dict.fromkeys(run.solves[run.solves["solver"].isin([m[1] for m in g.members])]["family"]))
        figs, cells_all = {}, []
        for fam in [None] + fams:
            cells = sweep.sweep_cells(g, labelled, family=fam)
            if cells.empty:
                continue
            fig = sweep.sweep_figure(g, cells, title=f"{g.name}: {fam or sweep.ALL_FAMILIES}")
            d = fig.to_plotly_json()
            d["layout"].pop("template", None)
            figs[fam or sweep.ALL_FAMILIES] = d
            cells_all.append(cells)
        if not figs:
            continue
        cells = pd.concat(cells_all, ignore_index=True)
        keep = ["family", "cell", *[k for k, _ in g.axes], "solves", "supported", "successes", "success_rate",
                "success_ci_low", "success_ci_high", "time_us_mean", "time_us_mean_ci_low", "time_us_mean_ci_high",
                "available"]
        out.append({"name": g.name, "axes": [{"key": k, "values": v} for k, v in g.axes], "figures": figs,
                    "cells": {"columns": keep, "rows": cells[keep].to_numpy().tolist()}})
    return out


def coverage_block(run, styles, opts):
    """Solution coverage (ikbench.coverage) when a solve returned several solutions or a spec
    asks for all: the table and a figure per family (coverage, or distinct solutions found
    without a closed-form reference). None otherwise."""
    roles = coverage.solver_roles(run)
    if not roles:
        return None
    df = coverage.solution_coverage(run, seed=opts.seed, n_resamples=opts.resamples)
    if df.empty:
        return None
    has_ref = df["coverage_mean"].notna().any()
    y, lo, hi = (("coverage_mean", "coverage_ci_low", "coverage_ci_high") if has_ref else
                 ("found_mean", "found_ci_low", "found_ci_high"))
    part = df[df[y].notna()]
    data = []
    for spec in dict.fromkeys(part["solver"]):
        p = part[part["solver"] == spec]
        v = p[y].to_numpy(dtype=float) * (100 if has_ref else 1)
        scale = 100 if has_ref else 1
        data.append({"type": "bar", "x": p["family"].tolist(), "y": v, "name": spec, "meta": spec,
                     "marker": {"color": styles.get(spec, {"colour": "#444"})["colour"]},
                     "error_y": {"type": "data", "array": np.nan_to_num(p[hi].to_numpy(dtype=float) * scale - v),
                                 "arrayminus": np.nan_to_num(v - p[lo].to_numpy(dtype=float) * scale)},
                     "customdata": p[["problems"]].to_numpy(),
                     "hovertemplate": f"{spec}<br>%{{x}}: %{{y:.3g}}{'%' if has_ref else ' distinct solutions'}"
                                      "<br>%{customdata[0]} problems<extra></extra>"})
    lay = {"barmode": "group", "height": 360, "margin": {"l": 90, "r": 20, "t": 30, "b": 90},
           "yaxis": {"title": {"text": "coverage [%] (bootstrap 95%)" if has_ref else
                               "distinct solutions per problem (bootstrap 95%)"}},
           "xaxis": {"title": {"text": "family"}}}
    cols = list(df.columns)
    return {"reference": next((r for r in df["reference"] if isinstance(r, str)), None), "has_reference": bool(has_ref),
            "tolerance": coverage.DISTINCT_TOL, "figure": {"data": data, "layout": lay},
            "table": {"columns": cols, "rows": df.to_numpy().tolist()}}


# ---------------------------------------------------------------- the solve viewer

def thin_indices(n, head, points, keep=()):
    """Indices of the records kept of a trace of n records: all of the first `head`, then at most
    `points` more at an even stride, always the last and every index in `keep` (the first and last
    record of each attempt, so that the viewer can draw where each attempt ended)."""
    keep = np.asarray(keep, dtype=int)
    if n <= head + points:
        return np.arange(n)
    if points == 0:  # the head and the last record only
        return np.unique(np.concatenate((np.arange(head), [n - 1], keep)))
    stride = int(math.ceil((n - head) / points))
    idx = np.concatenate((np.arange(head), np.arange(head, n, stride), [n - 1], keep))
    return np.unique(idx)


def attempt_starts(iterations):
    """Indices of the records of one solve's trace where an attempt starts: the first record, and
    every record whose iteration does not grow (an attempt after a restart opens with a record at
    the iteration count reached so far; docs/results-format.md "traces.csv")."""
    it = np.asarray(iterations)
    if not len(it):
        return np.zeros(0, dtype=int)
    return np.concatenate(([0], np.flatnonzero(it[1:] <= it[:-1]) + 1))


def goal_errors(model, goals, Q):
    """(position, orientation) errors of configurations Q (n, nq) against a problem's goals, by the
    numpy forward kinematics of ikbench.verify (independent of the page's JavaScript): the largest
    goal position error [m] and rotation angle [rad]; nan for a kind no goal has."""
    from . import verify

    Q = np.asarray(Q, dtype=float).reshape(-1, model.nq)
    R, p = model.fk(Q)
    n = Q.shape[0]
    pe, oe = np.full(n, np.nan), np.full(n, np.nan)
    for g in goals:
        b = g["body_index"]
        if g["kind"] != "orientation":
            world = p[:, b] + np.einsum("nab,b->na", R[:, b], np.asarray(g["point"], dtype=float))
            e = np.linalg.norm(np.asarray(g["target_position"], dtype=float) - world, axis=1)
            pe = np.fmax(pe, e)
        if g["kind"] != "position":
            Rt = verify.quat_to_matrix(np.asarray(g["target_quat_xyzw"], dtype=float))
            e = verify.rotation_angle(Rt @ np.swapaxes(R[:, b], -1, -2))
            oe = np.fmax(oe, e)
    return pe, oe


def within_tolerance(pe, oe, tolerances):
    """Converged by FK: every goal's errors within run.json's tolerances (nan: no goal of the kind)."""
    tp, to = tolerances
    pe, oe = np.asarray(pe, dtype=float), np.asarray(oe, dtype=float)
    return (np.isnan(pe) | (pe <= tp)) & (np.isnan(oe) | (oe <= to))


def _qlist(text):
    return [float(x) for x in str(text).split()]


def _slim_model(m):
    joints = []
    for j in m["joints"]:
        joints.append({"name": j.get("name"), "parent": j["parent"], "type": j["type"],
                       "xyz": j["parent_T_joint"]["xyz"], "quat": j["parent_T_joint"]["quat_xyzw"],
                       "axis": j.get("axis") or [0, 0, 1], "lower": j["lower"], "upper": j["upper"],
                       "iq": j["idx_q"]})
    src = m.get("source") or ""
    out = {"id": m["id"], "name": m.get("name"), "source": os.path.basename(src) if src else None,
           "nq": m["nq"], "nv": m["nv"], "up": "y" if src.lower().endswith(".bvh") else "z", "joints": joints}
    if isinstance(m.get("scene"), dict):
        out["scene"] = _slim_scene(m["scene"], {j["body"]: i for i, j in enumerate(m["joints"])})
    for j, mj in zip(joints, m["joints"]):
        j["body_name"] = mj.get("body")
    return out


MAX_DRAWN_TRIANGLES = 20000   # a mesh obstacle with more is drawn as its bounding box


def _slim_scene(scene, body_index):
    """What the viewer draws of a scene: the obstacles (world frame), each link shape as the segment
    of its capsule (body frame; a sphere is one of length 0) and each link mesh or hull (body frame,
    up to MAX_DRAWN_TRIANGLES); other link shapes are not drawn."""
    obstacles = []
    for o in scene.get("obstacles", []):
        d = {"name": o["name"], "type": o["type"], "xyz": o["xyz"], "quat": o["quat_xyzw"]}
        for k in ("size", "radius", "length"):
            if k in o:
                d[k] = o[k]
        if o["type"] == "mesh":
            v = np.asarray(o["vertices"], dtype=float).reshape(-1, 3)
            if len(o["triangles"]) <= MAX_DRAWN_TRIANGLES:
                d["vertices"], d["triangles"] = v.tolist(), o["triangles"]
            else:
                lo, hi = v.min(axis=0), v.max(axis=0)
                d["size"] = (hi - lo).tolist()
                d["xyz"] = (np.asarray(o["xyz"]) + verify_rotate(o["quat_xyzw"], (lo + hi) / 2)).tolist()
        obstacles.append(d)
    links, link_meshes = [], []
    for l in scene.get("links", []):
        if l["type"] == "mesh" and l.get("body") in body_index and len(l["triangles"]) <= MAX_DRAWN_TRIANGLES:
            # A link's mesh (or hull), its vertices in the body frame.
            v = np.asarray(l["vertices"], dtype=float).reshape(-1, 3) @ quat_matrix(l["quat_xyzw"]).T + l["xyz"]
            link_meshes.append({"body": body_index[l["body"]], "vertices": v.tolist(), "triangles": l["triangles"]})
        if l["type"] not in ("capsule", "sphere") or l.get("body") not in body_index:
            continue
        R = quat_matrix(l["quat_xyzw"])
        h = 0.5 * l.get("length", 0.0)
        c = np.asarray(l["xyz"], dtype=float)
        links.append({"body": body_index[l["body"]], "a": (c - h * R[:, 2]).tolist(), "b": (c + h * R[:, 2]).tolist(),
                      "r": l["radius"]})
    return {"name": scene.get("name"), "obstacles": obstacles, "links": links, "link_meshes": link_meshes}


def quat_matrix(q):
    from .verify import quat_to_matrix
    return quat_to_matrix(np.asarray(q, dtype=float))


def verify_rotate(q, x):
    return quat_matrix(q) @ np.asarray(x, dtype=float)


def _collision_info(r):
    """The exact check of a solve in a scene (collision_free 0/1, clearance, pair), else nothing."""
    free = r.get("collision_free")
    if free is None or (isinstance(free, float) and math.isnan(free)):
        return {}
    clear = r.get("min_clearance")
    return {"collision_free": int(free), "min_clearance": None if clear is None or math.isnan(clear) else float(clear),
            "collision_pair": r.get("collision_pair") or ""}


def _goals(goals):
    return [{"body": g.get("body"), "body_index": g["body_index"], "kind": g["kind"], "point": g["point"],
             "target_position": g["target_position"], "target_quat_xyzw": g["target_quat_xyzw"]} for g in goals]


def _outcomes(model, goals, tolerances, row, q, trace, several):
    """What the viewer may say about the configurations it draws of one solve, decided by FK of
    those very configurations (goal_errors):

    * `attempts`: per attempt of the trace (attempt_starts), where it ended: its last record's
      iteration, position and orientation error, and whether those are within the tolerances;
    * `solutions`: the configurations the solve returned, solution 0 the q of solves.csv (its
      verdict is solves.csv's `converged`, which `ikbench verify` checks), then solutions.csv's
      solutions 1..k-1 of a solve that returned several (each with its FK errors and verdict).

    The trace's private `_ends` (kept position of each attempt's last record) is consumed here."""
    out = {"attempts": [], "solutions": []}
    qs, kinds = [], []
    if trace is not None:
        for a, k in enumerate(trace.pop("_ends")):
            k = int(k)
            out["attempts"].append({"last": k, "iteration": int(trace["it"][k]), "position_error": None,
                                    "orientation_error": None, "converged": None})  # None: no q recorded
            if k < len(trace["q"]) and len(trace["q"][k]) == model.nq:
                qs.append(trace["q"][k])
                kinds.append(("attempt", a))
    if q is not None and len(q) == model.nq:
        qs.append(q)
        kinds.append(("solution", 0))
        for i, sq in enumerate((several or [])[1:], start=1):
            if len(sq) == model.nq:
                qs.append(sq)
                kinds.append(("solution", i))
    if not qs:
        return out
    pe, oe = goal_errors(model, goals, np.array(qs))
    ok = within_tolerance(pe, oe, tolerances)
    for (kind, k), e_p, e_o, c, qq in zip(kinds, pe, oe, ok, qs):
        if kind == "attempt":
            out["attempts"][k].update(position_error=e_p, orientation_error=e_o, converged=bool(c))
        else:
            out["solutions"].append({"solution": k, "q": qq, "position_error": e_p, "orientation_error": e_o,
                                     "converged": bool(row["converged"]) if k == 0 else bool(c)})
    return out


def viewer_data(run, opts, sequential, traces_table=None):
    """The solve viewer's data: the models used, and per family either the first
    `trace_problems` problems with each solver's outcome (solves.csv), thinned trace (traces.csv:
    iteration, errors, honest time, q, attempt `a` of each record), where each attempt ended and
    the solutions returned (_outcomes), or, for a sequential family, a clip of its first
    `clip_frames` problems with each solver's returned q, errors and verdict per problem.
    `traces_table`: curves.read_traces(run) when already read."""
    if run.problems is None or run.models is None:
        return None
    solves = run.solves
    problems = run.problems
    table = traces_table if traces_table is not None else curves.read_traces(run)
    tr = table.frame
    K = opts.trace_problems
    fams = list(dict.fromkeys(problems["family"]))
    models_used = set()
    out = {}
    # traces of the embedded problems, thinned; q is read for the kept records only
    traces = {}
    thinned_records = total_records = 0
    chosen = {}   # the embedded problems of the traced families (others: the first K problems)
    if tr is not None and not tr.empty and K != 0:
        seq = [f for f in fams if sequential.get(f)]
        keys = tr[["family", "problem"]].drop_duplicates()
        chosen = embedded_problems(run, zip(keys["family"].astype(str), keys["problem"]), K)
        mask = np.zeros(len(tr), dtype=bool)
        fam_col = tr["family"].astype(str).to_numpy()
        for f, ps in chosen.items():
            if f not in seq:
                mask |= (fam_col == f) & tr["problem"].isin(list(ps)).to_numpy()
        rows = np.flatnonzero(mask)
        t = tr.iloc[rows]
        tcol = curves.time_column(t) if len(t) else "time_us"
        if len(t):
            order, starts, ends = curves.solve_order(t)
            rows = rows[order]
            fam = t["family"].to_numpy()[order]
            prob = t["problem"].to_numpy()[order]
            spec = t["solver"].to_numpy()[order]
            it = t["iteration"].to_numpy()[order]
            pe = t["position_error"].to_numpy(dtype=float)[order]
            oe = t["orientation_error"].to_numpy(dtype=float)[order]
            tt = t[tcol].to_numpy(dtype=float)[order]
            kept = []
            for s, e in zip(starts, ends):
                first = attempt_starts(it[s:e])
                last = np.concatenate((first[1:] - 1, [e - s - 1]))
                rel = thin_indices(e - s, opts.trace_head, opts.trace_points, keep=np.concatenate((first, last)))
                idx = s + rel
                kept.append(idx)
                total_records += e - s
                thinned_records += len(idx)
                # attempt of every kept record, and the kept position of each attempt's last record
                traces[(fam[s], int(prob[s]), spec[s])] = {
                    "it": it[idx], "pe": sig(pe[idx], 6), "oe": sig(oe[idx], 6), "t": sig(tt[idx], 4),
                    "q": idx, "records": int(e - s),
                    "a": np.searchsorted(first, rel, side="right") - 1,
                    "_ends": np.searchsorted(rel, last)}
            want = np.unique(rows[np.concatenate(kept)]) if kept else np.zeros(0, np.int64)
            texts = dict(zip(want.tolist(), table.q_texts(want)))
            has_q = table.line_starts is not None or "q" in tr
            model_of = dict(zip(zip(problems["family"], problems["problem"].astype(int)), problems["model"]))
            for key, d in traces.items():
                qs = []
                for i in rows[d["q"]].tolist() if has_q else []:
                    try:
                        qs.append(_qlist(texts[i]))
                    except ValueError:
                        raise ResultsError(f"{table.path or 'traces.csv'}:{i + 2}: column 'q': expected numbers "
                                           f"separated by spaces, got '{texts[i][:60]}'") from None
                nq = run.models.get(model_of.get((key[0], key[1])), {}).get("nq") if qs else None
                if qs and nq is not None and any(len(q) != nq for q in qs):
                    i = rows[d["q"]][[len(q) != nq for q in qs].index(True)]
                    raise ResultsError(f"{table.path or 'traces.csv'}:{i + 2}: column 'q': expected {nq} numbers "
                                       f"(the model's nq)")
                d["q"] = np.array(qs, dtype=float) if qs else []   # (records, nq): 8 bytes a number
    scols = ["family", "problem", "solver", "status", "converged", "within_limits", "iterations", "position_error",
             "orientation_error", "time_us", "message", "q"] + (["restarts"] if "restarts" in solves else []) + \
        (["solutions"] if "solutions" in solves else []) + \
        [c for c in ("collision_free", "min_clearance", "collision_pair") if c in solves]
    # solutions.csv rows of the embedded problems: {(family, problem, solver): [q of solution 0, 1, ...]}
    several = {}
    sol = getattr(run, "solutions", None)
    def embedded(fam, problem):
        """Mask of the embedded problems among `problem` (a Series) of family `fam`."""
        if fam in chosen:
            return problem.isin(list(chosen[fam]))
        return problem >= 0 if K is None else problem < K

    if sol is not None and len(sol) and K != 0:
        keep = np.zeros(len(sol), dtype=bool)
        for f in fams:
            if not sequential.get(f):
                keep |= ((sol["family"] == f) & embedded(f, sol["problem"])).to_numpy()
        part = sol[keep]
        for key, g in part.sort_values("solution", kind="stable").groupby(["family", "problem", "solver"], sort=False):
            several[(key[0], int(key[1]), key[2])] = [_qlist(x) for x in g["q"]]
    compiled = {}
    for fam in fams:
        fp = problems[problems["family"] == fam]
        fs = solves[solves["family"] == fam]
        if sequential.get(fam):
            fp = fp[fp["problem"] < opts.clip_frames].sort_values("problem")
            nums = fp["problem"].tolist()
            m = fp["model"].iloc[0]
            models_used.add(m)
            per = {}
            for spec, part in fs[fs["problem"].isin(nums)].groupby("solver", sort=False):
                part = part.sort_values("problem")
                per[spec] = {"q": [_qlist(x) if x.strip() else None for x in part["q"]],
                             "pe": sig(part["position_error"].to_numpy(dtype=float), 6),
                             "oe": sig(part["orientation_error"].to_numpy(dtype=float), 6),
                             "status": part["status"].tolist(), "converged": part["converged"].astype(bool).tolist(),
                             "success": figures.success_mask(part).tolist()}
            out[fam] = {"mode": "clip", "model": m, "q0": fp["q0"].iloc[0],
                        "frames": [{"problem": int(p), "goals": _goals(g)} for p, g in zip(fp["problem"], fp["goals"])],
                        "solves": per, "problems": int((problems["family"] == fam).sum())}
            continue
        fp = fp[embedded(fam, fp["problem"])].sort_values("problem")
        plist = []
        for rec in fp.to_dict("records"):
            models_used.add(rec["model"])
            ps = fs[fs["problem"] == rec["problem"]][scols]
            model = compiled.get(rec["model"])
            if model is None:
                from . import verify

                model = compiled[rec["model"]] = verify.Model(run.models[rec["model"]])
            sv = {}
            for r in ps.to_dict("records"):
                att = r["status"] not in NOT_ATTEMPTED
                key = (fam, int(rec["problem"]), r["solver"])
                q = _qlist(r["q"]) if att and str(r["q"]).strip() else None
                trace = traces.get(key)
                sv[r["solver"]] = {
                    "status": r["status"], "converged": bool(r["converged"]),
                    "success": bool(figures.success_mask(pd.DataFrame([r]))[0]), "iterations": r["iterations"],
                    "restarts": r.get("restarts"),
                    "position_error": r["position_error"], "orientation_error": r["orientation_error"],
                    "time_us": r["time_us"], "message": r["message"] or "", "q": q,
                    **_collision_info(r),
                    "trace": trace, **_outcomes(model, rec["goals"], run.tolerances, r, q, trace, several.get(key))}
            plist.append({"problem": int(rec["problem"]), "name": rec.get("name"), "model": rec["model"],
                          "q0": rec["q0"], "goals": _goals(rec["goals"]), "solves": sv})
        out[fam] = {"mode": "trace", "problems": plist}
    models = {m: _slim_model(run.models[m]) for m in sorted(models_used, key=lambda x: int(x[1:]) if x[1:].isdigit()
                                                              else 0)}
    return {"models": models, "families": out, "records": {"total": int(total_records),
                                                           "embedded": int(thinned_records)}}


# ---------------------------------------------------------------- the page data

def _families(run, convinfo):
    fams = []
    meta = {f.get("name"): f for f in run.families}
    robots = figures.robot_families(run)
    for fam in dict.fromkeys(run.solves["family"]):
        f = meta.get(fam, {})
        first = run.solves[run.solves["family"] == fam].iloc[0]
        fams.append({"name": fam, "description": f.get("description"), "problems": f.get("problems"),
                     "dof": int(first["dof"]), "effectors": int(first["effectors"]), "goal": first["goal"],
                     "sequential": bool(f.get("sequential", False)), "robot": robots.get(fam),
                     "type": f.get("type"), "traced": convinfo.get(fam, {}).get("traced", 0),
                     "sparse": convinfo.get(fam, {}).get("sparse", []),
                     "kinds": convinfo.get(fam, {}).get("kinds", [])})
    return fams


def _run_facts(run):
    meta = run.meta
    build = meta.get("build") if isinstance(meta.get("build"), dict) else {}
    trace = meta.get("trace") if isinstance(meta.get("trace"), dict) else {}
    return {"path": str(run.path), "name": run.path.resolve().name, "suite": run.suite, "seed": run.seed,
            "format_version": run.format_version, "complete": run.complete, "issues": run.issues,
            "notes": run.notes, "tolerances": list(run.tolerances), "solves": len(run.solves),
            "start_time": meta.get("start_time"), "end_time": meta.get("end_time"),
            "git_revision": meta.get("git_revision"), "compiler": build.get("compiler"),
            "flags": build.get("flags"), "cpu": run.cpu, "threads": run.threads,
            "throughput": tables.throughput_line(run),
            "command_line": redact_secrets(meta["command_line"]) if isinstance(meta.get("command_line"), str) else None,
            "trace_problems_per_family": trace.get("problems_per_family"), "trace_note": trace.get("note"),
            "trace_mismatches": trace.get("mismatches"), "load": figures.run_load(run),
            "noisy": figures.run_noisy(run), "noisy_text": figures.noisy_text(run)}


def _meta_for_page(meta):
    """run.json without the bulky parts that the page shows elsewhere, and without secrets (a run
    written before the harness redacted its command line may hold a store's password)."""
    out = {k: redact_value(v) for k, v in meta.items() if k not in ("files",)}
    if isinstance(meta.get("files"), dict):
        out["files"] = {k: {kk: vv for kk, vv in v.items() if kk in ("rows", "bytes")} if isinstance(v, dict) else v
                        for k, v in meta["files"].items()}
    return out


class Stages:
    """Progress of the report's work: `stage(name)` ends the stage before (one line on the stream,
    with its seconds) and starts the next; `done()` ends the last. Silent without a stream."""

    def __init__(self, stream=None):
        self.stream = stream
        self.name = None
        self.t = time.monotonic()
        self.times = {}

    def stage(self, name=None):
        now = time.monotonic()
        if self.name is not None:
            self.times[self.name] = round(now - self.t, 3)
            if self.stream is not None:
                import resource

                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # kB on Linux
                print(f"report: {self.name}: {now - self.t:.1f} s (peak memory so far {peak:.0f} MB)",
                      file=self.stream, flush=True)
        self.name, self.t = name, now

    def done(self):
        self.stage(None)


def build(run, opts=None, plots_index=None, progress=None):
    """The page's data (JSON values) for a loaded run; see the module documentation. `progress`:
    a Stages (one line per stage on its stream)."""
    opts = opts or Options()
    progress = progress or Stages()
    t0 = time.monotonic()
    specs = run.solver_specs
    styles = solver_styles(specs)
    progress.stage("traces.csv without q (its manifest hash in a helper process)")
    table = curves.read_traces(run)
    progress.stage("figures per family x solver (summarize, ranks)")
    summary = figures.summarize(run, seed=opts.seed, n_resamples=opts.resamples)
    ranked = summary                  # ranked within each family by figures.summarize
    progress.stage("convergence curves")
    tr = table.frame
    convs_list = curves.convergence(tr, compact=True, time_points=CURVE_TIME_POINTS,
                                    time_col=curves.time_column(tr)) if not tr.empty else []
    del tr
    convs, convinfo = convergence_figures(run, styles, convs=convs_list, traces_table=table)
    fams = _families(run, convinfo)
    sequential = {f["name"]: f["sequential"] for f in fams}
    progress.stage("success against DOF, time distributions")
    dof, sweeps_ = dof_figure(run, styles, ranked)
    solvers = []
    desc = {s.get("spec"): s for s in run.meta.get("solvers", []) if isinstance(s, dict)} \
        if isinstance(run.meta.get("solvers"), list) else {}
    for s in specs:
        solvers.append({"spec": s, "name": spec_name(s), "colour": styles[s]["colour"], "dash": styles[s]["dash"],
                        "description": desc.get(s, {}).get("description"), "peer": spec_name(s) in PEERS})
    progress.stage("headline, per robot, per family figures")
    heads = headline(ranked)
    data = {
        "format": REPORT_FORMAT,
        "run": _run_facts(run),
        "solvers": solvers,
        "families": fams,
        "summary": summary_rows(ranked),
        "headline": heads,
        "robots": robot_rows(run),
        "defaults": default_picks(ranked),
        "figures": {"headline": headline_figure(heads, styles), "convergence": convs, "ecdf": ecdf_figures(run, styles),
                    "iterations": iteration_figures(ranked, styles), "dof": dof, "dof_sweeps": sweeps_,
                    "boxes": box_figures(run, ranked, styles), "success": success_figures(ranked, styles),
                    "heatmap": heatmap_figure(ranked, specs)},
        "solver_sections": solver_sections(run, ranked, convs_list),
    }
    progress.stage("parameter sweeps")
    data["sweeps"] = sweep_blocks(run)
    progress.stage("solution coverage")
    data["coverage"] = coverage_block(run, styles, opts) if run.format_version >= 2 else None
    progress.stage("outcomes, seed regimes and answer quality")
    data["quality"] = report_quality.quality_block(run, ranked, styles)
    progress.stage("solve viewer (traces of the embedded problems)")
    data["viewer"] = viewer_data(run, opts, sequential, traces_table=table)
    table.check()                     # traces.csv is the one run.json lists (raises before any output)
    del table
    data.update({
        "embedding": {"trace_problems": "all" if opts.trace_problems is None else opts.trace_problems,
                      "trace_head": opts.trace_head,
                      "trace_points": opts.trace_points, "clip_frames": opts.clip_frames,
                      "curve_digits": CURVE_DIGITS},
        "plots": plots_index,
        "meta": _meta_for_page(run.meta),
        "bootstrap": {"seed": opts.seed, "resamples": opts.resamples},
    })
    progress.stage(None)
    data["build_seconds"] = round(time.monotonic() - t0, 3)
    return data


# ---------------------------------------------------------------- the page

def _asset(name):
    return (ASSETS / name).read_text(encoding="utf-8")


def _plotly_template():
    import plotly.io as pio

    t = pio.templates["plotly_white"].to_plotly_json()
    return t


def _packed(pieces):
    """gzip of the UTF-8 text `pieces`, as base64 text (in 76-character lines): how the page
    carries plotly.js and its data (report.html unpacks them with DecompressionStream)."""
    import base64
    import zlib

    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [z.compress(p.encode("utf-8")) for p in pieces]
    out.append(z.flush())
    return [base64.encodebytes(b"".join(out)).decode("ascii")]


def _unpacked(text):
    """The text of a packed script's body (_packed's inverse)."""
    import base64
    import gzip

    return gzip.decompress(base64.b64decode(text)).decode("utf-8")


def _page_parts(data):
    """The page as a sequence of text pieces (the template with its markers filled in)."""
    import re

    import plotly.offline

    page = _asset("report.html")
    title = f"ikbench report: suite {data['run']['suite']} ({data['run']['name']})"
    parts = {
        "@@TITLE@@": lambda: [html.escape(title)],
        "/*@@CSS@@*/": lambda: [_asset("report.css")],
        "@@PLOTLY@@": lambda: _packed([plotly.offline.get_plotlyjs()]),
        "@@DATA@@": lambda: _packed(_json_pieces(data)),
        "@@TEMPLATE@@": lambda: [to_json(_plotly_template())],
        "/*@@JS@@*/": lambda: [_asset("kinematics.js"), "\n", _asset("report.js")],
    }
    # one pass over the template, so that no inserted text is searched for markers again
    pattern = re.compile("|".join(re.escape(k) for k in parts))
    pos = 0
    for m in pattern.finditer(page):
        yield page[pos:m.start()]
        yield from parts[m.group(0)]()
        pos = m.end()
    yield page[pos:]


def render(data):
    """The self-contained HTML page of `data` (build's output)."""
    return "".join(_page_parts(data))


def render_bytes(data):
    """render(data) encoded as UTF-8, piece by piece (no page-sized text of wide characters)."""
    return b"".join(p.encode("utf-8") for p in _page_parts(data))


def _plots_index(plots_dir, out_path):
    """The static plots of PLOTS_DIR/index.json (scripts/plot.py), as links relative to the page."""
    idx = Path(plots_dir) / "index.json"
    if not idx.exists():
        return None
    doc = optional_json(idx)
    if not isinstance(doc, dict):
        return None
    rel = os.path.relpath(idx.parent, Path(out_path).resolve().parent)
    return [{"title": p.get("title"), "stem": p.get("stem"),
             "files": [f"{rel}/{f}".replace(os.sep, "/") for f in p.get("files", [])]} for p in doc.get("plots", [])]


def write_report(run_or_dir, out=None, opts=None, allow_incomplete=False, plots_dir=None, progress=None):
    """Writes the report (default RUN_DIR/report.html) atomically; returns (path, data). The
    static plots listed in `plots_dir`/index.json (default RUN_DIR/plots) are linked.
    `progress`: a Stages (a line per stage on its stream)."""
    progress = progress or Stages()
    if not hasattr(run_or_dir, "solves"):
        progress.stage("read the run (solves.csv, problems, models; manifest checked)")
    run = run_or_dir if hasattr(run_or_dir, "solves") else load(run_or_dir, allow_incomplete=allow_incomplete)
    if len(run.solves) == 0:
        raise ResultsError(f"{run.solves_path}: no solves (header only)")
    path = Path(out) if out else run.path / "report.html"
    check_output_path(path, inputs=run.inputs)  # refused before the work, not after
    data = build(run, opts, plots_index=_plots_index(plots_dir or run.path / "plots", path), progress=progress)
    # The interactive playground (`ikbench playground`, docs/playground.md) when one sits beside the
    # page, as scripts/run.sh writes it: linked, by its name relative to the page.
    data["playground"] = PLAYGROUND_PAGE if (path.parent / PLAYGROUND_PAGE).is_file() else None
    progress.stage("write the page")
    page = render_bytes(data)
    atomic_write_bytes(path, page, inputs=run.inputs)
    del page
    progress.done()
    return path, data


def extract_script(page_text, script_id):
    """The text of the page's script `script_id` (ikbench-data, ikbench-plotly: unpacked)."""
    start = page_text.index(f'<script id="{script_id}"')
    packed = 'type="application/gzip-base64"' in page_text[start:page_text.index(">", start)]
    start = page_text.index(">", start) + 1
    end = page_text.index("</script>", start)
    return _unpacked(page_text[start:end]) if packed else page_text[start:end]


def extract_data(page_text):
    """The data embedded in a report page (for tests and tools)."""
    return json.loads(extract_script(page_text, "ikbench-data"))


# ---------------------------------------------------------------- command line

def add_arguments(ap):
    ap.add_argument("run_dir", metavar="RUN_DIR", help="results directory of `ikbench run`")
    ap.add_argument("--out", metavar="FILE", help="the page to write (default RUN_DIR/report.html)")
    ap.add_argument("--trace-problems", type=trace_problems_arg, default=DEFAULT_TRACE_PROBLEMS, metavar="K",
                    help=f"problems per family whose traces the viewer embeds, the first K of the run's traced "
                         f"sample, or 'all' (default {DEFAULT_TRACE_PROBLEMS}, as ikbench run --trace-problems)")
    ap.add_argument("--trace-head", type=int, default=DEFAULT_TRACE_HEAD, metavar="N",
                    help=f"records of a trace kept in full (default {DEFAULT_TRACE_HEAD})")
    ap.add_argument("--trace-points", type=int, default=DEFAULT_TRACE_POINTS, metavar="M",
                    help=f"records kept after those, at an even stride, plus the last (default {DEFAULT_TRACE_POINTS})")
    ap.add_argument("--clip-frames", type=int, default=DEFAULT_CLIP_FRAMES, metavar="F",
                    help=f"problems of a sequential family played as a clip (default {DEFAULT_CLIP_FRAMES})")
    ap.add_argument("--allow-incomplete", action="store_true", help="read an incomplete or mixed run (marked)")
    ap.add_argument("--progress", choices=("auto", "lines", "none"), default="auto",
                    help="a line per stage on stderr with its seconds and the peak memory: 'lines' always, 'auto' "
                         "(default) when stderr is a terminal, 'none' never")
    ap.add_argument("--history", metavar="DB", help="add a history section: each headline cell's trend across "
                    "commits in this store, with its change points (docs/history.md)")
    ap.add_argument("--latex", metavar="DIR",
                    help="also write the headline, per-robot and per-family tables as LaTeX (booktabs), one .tex file "
                         "per table, into DIR")


def main_from_args(args):
    for name, lowest in (("trace_problems", 0), ("trace_head", 0), ("trace_points", 0), ("clip_frames", 1)):
        if getattr(args, name) is not None and getattr(args, name) < lowest:
            raise ResultsError(f"--{name.replace('_', '-')} must be {lowest} or more")
    opts = Options(args.trace_problems, args.trace_head, args.trace_points, args.clip_frames)
    if getattr(args, "latex", None):
        from . import latex

        latex.check_directory(args.latex, inputs=input_paths(args.run_dir))
    t0 = time.monotonic()
    import sys

    mode = getattr(args, "progress", "auto")
    show = mode == "lines" or (mode == "auto" and sys.stderr.isatty())
    progress = Stages(sys.stderr if show else None)
    path, data = write_report(args.run_dir, args.out, opts, allow_incomplete=args.allow_incomplete,
                              progress=progress)
    if getattr(args, "history", None):
        from .history.report import add_history_section

        add_history_section(path, data, args.history, args.run_dir, allow_incomplete=args.allow_incomplete)
    size = path.stat().st_size
    print(f"report: {path.resolve()} ({size / 1e6:.1f} MB, {time.monotonic() - t0:.1f} s)")
    if getattr(args, "latex", None):
        from . import latex

        # the page's figures, rendered (not recomputed)
        tex = latex.write_tables(data, args.latex, inputs=input_paths(args.run_dir))
        print(f"latex: {len(tex)} tables in {Path(args.latex).resolve()}")
    return 0

