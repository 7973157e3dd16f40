"""report.html's plotly figures as JSON (docs/report.md): convergence bands, time ECDFs,
iterations, success against DOF, box plots, success bars, the heatmap, the per-solver sections,
the sweeps (ikbench.render.sweep_render) and solution coverage (ikbench.analysis.coverage)."""

import json
import math
import numpy as np
import pandas as pd

from ..analysis import coverage, curves, figures, sweep
from . import sweep_render, tables
from .report_tables import _interval_text, _rgba, success_text
from ..analysis.family_figures import spec_name
from .report_values import CURVE_TIME_POINTS, sig


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
        labels = [_label(styles, s) for s in specs]
        data = [{"type": "scatter", "mode": "markers", "x": labels, "y": med, "customdata": specs, "name": "median [bootstrap 95%]",
                 "marker": {"color": cols, "size": 10},
                 "error_y": {"type": "data", "array": np.where(np.isfinite(hi), hi - med, 0),
                             "arrayminus": np.where(np.isfinite(lo), med - lo, 0), "thickness": 1.2},
                 "hovertemplate": "%{customdata}<br>median %{y} iterations<extra></extra>"},
                {"type": "scatter", "mode": "markers", "x": labels, "y": p90, "customdata": specs, "name": "90th percentile",
                 "marker": {"color": cols, "size": 9, "symbol": "line-ew-open", "line": {"width": 2, "color": cols}},
                 "hovertemplate": "%{customdata}<br>p90 %{y} iterations<extra></extra>"}]
        lay = {"margin": {"l": 80, "r": 20, "t": 40},
               "yaxis": {"title": {"text": "iterations (supported solves)"}, "rangemode": "tozero"},
               "legend": {"orientation": "h", "y": 1.12},
               "updatemenus": [{"type": "buttons", "direction": "right", "x": 1, "xanchor": "right", "y": 1.12,
                                "yanchor": "bottom", "font": {"size": 11},
                                "buttons": [{"label": "linear", "method": "relayout",
                                             "args": [{"yaxis.type": "linear"}]},
                                            {"label": "log", "method": "relayout", "args": [{"yaxis.type": "log"}]}]}]}
        _spec_axis(labels, lay, data_px=260)
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


SPEC_TICK_PX = 6.6      # px per character of an 11 px tick label (the page's sans-serif font, generous)
PLOT_AREA_PX = 300      # the height of a per-family figure's data area


def _label(styles, spec):
    """The axis label of a spec: its abbreviation (styles.short_labels) or the spec itself."""
    return styles.get(spec, {}).get("label", spec)


def _spec_axis(labels, layout, data_px=PLOT_AREA_PX):
    """A category axis of spec labels (best first) on `layout`: horizontal ticks when they fit a
    1280 px page side by side, else vertical (a label's box is then its column's width, so
    neighbours never overlap, where rotated labels reach under their neighbours and the first under
    the y axis); the bottom margin sized to the labels (and plotly's automargin as a guard) and the
    figure's height to keep `data_px` for the data, so that labels neither overlap each other nor
    the axis titles nor eat the plot."""
    longest = max((len(x) for x in labels), default=1)
    flat = (longest + 2) * SPEC_TICK_PX * len(labels) < 1000
    tick_px = 16 if flat else int(longest * SPEC_TICK_PX) + 12
    margin = dict(layout.get("margin", {}), b=tick_px + 20)
    layout.update({"margin": margin, "height": data_px + margin.get("t", 30) + margin["b"]})
    layout["xaxis"] = {"type": "category", "tickangle": 0 if flat else -90, "automargin": True,
                       "tickfont": {"size": 11}, "categoryorder": "array", "categoryarray": list(labels)}
    return layout


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
            data.append({"type": "box", "x": [_label(styles, spec)], "q1": [q[0]], "median": [q[1]], "q3": [q[2]],
                         "lowerfence": [q[3]], "upperfence": [q[4]], "name": spec, "meta": spec,
                         "showlegend": False, "marker": {"color": col}, "line": {"color": col, "width": 1.4},
                         "fillcolor": _rgba(col, 0.35), "hoverinfo": "y+name"})
        lo_hi = (min(boxes["lowerfence"], default=1.0), max(boxes["upperfence"], default=1.0))
        decades = math.log10(max(lo_hi[1], 1e-12) / max(lo_hi[0], 1e-12))
        lay = {"margin": {"l": 80, "r": 20, "t": 20},
               # labelled by decades when the boxes span two or more, else with 2 and 5 between
               "yaxis": {"type": "log", "title": {"text": "solve time [µs], log"}, "automargin": True,
                         "dtick": 1 if decades >= 2 else "D2", "tickfont": {"size": 11}},
               "hovermode": "closest"}
        _spec_axis([_label(styles, x) for x in boxes["solver"]], lay)
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
        data = [{"type": "bar", "x": [_label(styles, x) for x in ran["solver"]], "y": y,
                 "marker": {"color": [styles.get(x, {"colour": "#444"})["colour"] for x in ran["solver"]]},
                 "error_y": {"type": "data", "array": 100 * ran["success_ci_high"].to_numpy(dtype=float) - y,
                             "arrayminus": y - 100 * ran["success_ci_low"].to_numpy(dtype=float), "thickness": 1.2},
                 "customdata": ran[["solves", "solver"]].to_numpy(), "name": "success",
                 "hovertemplate": "%{customdata[1]}<br>success %{y:.1f}% of %{customdata[0]} solves<extra></extra>"}]
        na = part.loc[~part["available"], "solver"].tolist()
        lay = {"margin": {"l": 80, "r": 20, "t": 30},
               "yaxis": {"range": [0, 103], "title": {"text": "success [%] (Wilson 95 %)"}}}
        _spec_axis([_label(styles, x) for x in ran["solver"]], lay, data_px=260)
        if na:
            lay["annotations"] = [{"text": "n/a (nothing supported): " + ", ".join(na), "xref": "paper",
                                   "yref": "paper", "x": 1, "y": 1.02, "xanchor": "right", "yanchor": "bottom",
                                   "showarrow": False, "font": {"size": 10, "color": "#555"}}]
        out[fam] = {"data": data, "layout": lay, "na": na}
    return out


def cell_time(us):
    """A median time in a heatmap cell, in µs, at most 4 characters (numbers.number's "compact":
    "0.87", "12.3", "456", "1.2k", "35k", "1.5M"); "-" when none."""
    from .numbers import number

    return number(us, "compact")


def heatmap_figure(ranked, specs, styles=None):
    """Solver x family: colour = success rate (cividis: colour-blind safe), text = median time [µs]
    (figures.summarize, cell_time); n/a cells empty with "n/a". The texts are a scatter trace of
    text over the heatmap (the bundled plotly.js draws no heatmap text), black on the light half of
    the colour scale, white on the dark. Rows are the specs' axis labels (styles' "label"), the
    hover names the spec. `cells` holds the figures drawn."""
    styles = styles or {}
    fams = list(dict.fromkeys(ranked["family"]))
    by = {(r["family"], r["solver"]): r for r in ranked.to_dict("records")}
    labels = [_label(styles, s) for s in specs]
    z, hover, cells = [], [], []
    tx, ty, tt, tc = [], [], [], []
    for spec, lab in zip(specs, labels):
        zr, hr = [], []
        for fam in fams:
            r = by.get((fam, spec))
            if r is None:
                zr.append(None)
                hr.append("")
                continue
            if not r["available"]:
                zr.append(None)
                hr.append(f"{spec} on {fam}: n/a (nothing supported)")
                tx.append(fam), ty.append(lab), tt.append("n/a"), tc.append("#666")
                cells.append({"family": fam, "solver": spec, "success_rate": None, "time_us_median": None})
                continue
            med = float(r["time_us_median"])
            rate = 100 * float(r["success_rate"])
            zr.append(round(rate, 1))
            text = cell_time(med)
            hr.append(f"{spec} on {fam}<br>success {rate:.1f}%<br>median {text} µs")
            tx.append(fam), ty.append(lab), tt.append(text), tc.append("#000" if rate >= 50 else "#fff")
            cells.append({"family": fam, "solver": spec, "success_rate": float(r["success_rate"]),
                          "time_us_median": med if math.isfinite(med) else None, "text": text})
        z.append(zr)
        hover.append(hr)
    data = [{"type": "heatmap", "x": fams, "y": labels, "z": z, "text": hover, "colorscale": "Cividis",
             "zmin": 0, "zmax": 100, "colorbar": {"title": {"text": "success [%]", "side": "right"}, "thickness": 14},
             "xgap": 1, "ygap": 1, "hovertemplate": "%{text}<extra></extra>"},
            {"type": "scatter", "mode": "text", "x": tx, "y": ty, "text": tt, "name": "median time [µs]",
             "textfont": {"size": 10, "color": tc}, "hoverinfo": "skip", "showlegend": False}]
    longest_fam = max((len(f) for f in fams), default=1)
    longest_spec = max((len(x) for x in labels), default=1)
    bottom = int(longest_fam * SPEC_TICK_PX) + 20
    lay = {"height": 24 * len(specs) + 40 + bottom, "margin": {"l": int(longest_spec * SPEC_TICK_PX) + 20, "r": 20,
                                                              "t": 20, "b": bottom},
           "xaxis": {"tickangle": -90, "type": "category", "automargin": True, "tickfont": {"size": 11}},
           "yaxis": {"autorange": "reversed", "type": "category", "automargin": True, "tickfont": {"size": 11}},
           "plot_bgcolor": "#eee", "hovermode": "closest"}
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
    from ..analysis import settings

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
                "yaxis": {"type": "log", "title": {"text": "median largest goal error"}, "exponentformat": "power"},
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


def sweep_blocks(run):
    """The sweeps of run.json's grid (ikbench.analysis.sweep): per grid the figure pooled over families,
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
            fig = sweep_render.sweep_figure(g, cells, title=f"{g.name}: {fam or sweep.ALL_FAMILIES}")
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
    """Solution coverage (ikbench.analysis.coverage) when a solve returned several solutions or a spec
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
