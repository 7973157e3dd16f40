"""Trend plots of history series (ikbench.analysis.series.Series): a PNG/SVG/PDF (matplotlib) or an
HTML page (plotly), one panel per series, points in commit order with their 95 % intervals, change
points marked, the segments between them drawn at their medians. Files are written by the output
rule (ikbench.io.safe_io: atomically, never over an input such as the store, a device or a FIFO)."""

import math
from pathlib import Path

import numpy as np

from ..io.results import ResultsError
from ..io.safe_io import atomic_write_text, check_output_path, save_figure

TREND_SUFFIXES = (".png", ".svg", ".pdf", ".html", ".htm")


def _segments(clean, cps):
    from ..analysis.changepoints import segments

    out = []
    for a, b in segments(len(clean), cps):
        v = clean["value"].iloc[a:b].to_numpy(float)
        v = v[np.isfinite(v)]
        if len(v):
            out.append((list(clean["commit"].iloc[a:b]), float(np.median(v))))
    return out


def _title(key):
    src, fam, solver, fig, machine, suite, threads = key
    return f"{fig}: {fam} x {solver} ({suite}, {threads} threads, machine {machine})"


def plotly_figure(s, height=360):
    """A plotly Figure of one Series."""
    import plotly.graph_objects as go

    key, pc, clean, cps = s.key, s.pc, s.clean, s.changes
    x = list(pc["commit"])
    y = pc["value"].to_numpy(float)
    lo, hi = pc["ci_low"].to_numpy(float), pc["ci_high"].to_numpy(float)
    has_ci = np.isfinite(lo) & np.isfinite(hi)
    err = dict(type="data", symmetric=False, array=np.where(has_ci, hi - y, np.nan).tolist(),
               arrayminus=np.where(has_ci, y - lo, np.nan).tolist(), visible=bool(has_ci.any()))
    text = [f"{c}<br>{(d or '')[:10]} {(s or '')[:60]}<br>runs: {n}" for c, d, s, n in
            zip(pc["commit"], pc["commit_date"], pc["subject"], pc["runs"])]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=y.tolist(), mode="lines+markers", name=key[3], error_y=err, text=text,
                             hovertemplate="%{text}<br>%{y}<extra></extra>"))
    for commits, med in _segments(clean, cps):
        fig.add_trace(go.Scatter(x=commits, y=[med] * len(commits), mode="lines", showlegend=False,
                                 line=dict(dash="dot", color="gray"), hoverinfo="skip"))
    for c in cps:
        commit = clean["commit"].iloc[c.index]
        fig.add_vline(x=x.index(commit) if commit in x else 0, line=dict(color="crimson", dash="dash"))
    fig.update_layout(title=dict(text=_title(key), font=dict(size=13)), height=height, margin=dict(l=50, r=20, t=40, b=80),
                      xaxis=dict(type="category", title="commit (commit order)"), yaxis=dict(title=key[3]),
                      showlegend=False)
    return fig


def check_trend_path(out, inputs=()):
    """Refuses, before any work, a trend output the rule or the format refuses."""
    if Path(out).suffix.lower() not in TREND_SUFFIXES:
        raise ResultsError(f"--out {out}: expected FILE.png, .svg, .pdf or .html")
    check_output_path(out, inputs=inputs)


def write_trend(series, out, inputs=()):
    """Writes `series` ([Series]) to `out`; `inputs`: files it must not replace (the store's)."""
    check_trend_path(out, inputs)
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix in (".html", ".htm"):
        import plotly.io as pio

        parts = [pio.to_html(plotly_figure(s), include_plotlyjs=(i == 0), full_html=False) for i, s in
                 enumerate(series)]
        html = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>ikbench trend</title></head><body>" +
                "".join(parts) + "</body></html>\n")
        atomic_write_text(out, html, inputs=inputs)
        return out
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(series), 1, figsize=(9, 3.2 * len(series)), squeeze=False)
    for ax, s in zip(axes[:, 0], series):
        key, pc, clean, cps = s.key, s.pc, s.clean, s.changes
        xs = np.arange(len(pc))
        y = pc["value"].to_numpy(float)
        lo, hi = pc["ci_low"].to_numpy(float), pc["ci_high"].to_numpy(float)
        ok = np.isfinite(lo) & np.isfinite(hi)
        ax.plot(xs, y, "o-", ms=4)
        if ok.any():
            ax.errorbar(xs[ok], y[ok], yerr=[y[ok] - lo[ok], hi[ok] - y[ok]], fmt="none", capsize=3)
        pos = {c: i for i, c in enumerate(pc["commit"])}
        for commits, med in _segments(clean, cps):
            ax.plot([pos[c] for c in commits], [med] * len(commits), ":", color="gray")
        for c in cps:
            ax.axvline(pos[clean["commit"].iloc[c.index]] - 0.5, color="crimson", ls="--")
        ax.set_xticks(xs)
        ax.set_xticklabels([c[:7] for c in pc["commit"]], rotation=60, fontsize=7)
        ax.set_ylabel(key[3] + ("" if not s.normalised else " (speed taken out)"))
        ax.set_title(_title(key), fontsize=9)
    fig.tight_layout()
    try:
        save_figure(fig, out, inputs=inputs, dpi=100)
    finally:
        plt.close(fig)
    return out


def sparkline_svg(values, change_indices=(), width=120, height=24, ci=None):
    """A small inline SVG of a series (values in commit order; nan skipped), change points as red
    ticks, the last point as a dot. `ci`: optional (lows, highs) drawn as a light band."""
    v = np.asarray(values, dtype=float)
    idx = np.flatnonzero(np.isfinite(v))
    if len(idx) == 0:
        return ""
    lo_all, hi_all = np.nanmin(v), np.nanmax(v)
    if ci is not None:
        lows, highs = np.asarray(ci[0], float), np.asarray(ci[1], float)
        lo_all = np.nanmin([lo_all, np.nanmin(lows) if np.isfinite(lows).any() else lo_all])
        hi_all = np.nanmax([hi_all, np.nanmax(highs) if np.isfinite(highs).any() else hi_all])
    span = hi_all - lo_all if hi_all > lo_all else 1.0
    n = max(len(v) - 1, 1)

    def px(i):
        return 2 + (width - 4) * i / n

    def py(y):
        return height - 2 - (height - 4) * (y - lo_all) / span

    parts = [f'<svg class="spark" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">']
    if ci is not None:
        ok = [i for i in idx if math.isfinite(lows[i]) and math.isfinite(highs[i])]
        if len(ok) > 1:
            top = " ".join(f"{px(i):.1f},{py(highs[i]):.1f}" for i in ok)
            bottom = " ".join(f"{px(i):.1f},{py(lows[i]):.1f}" for i in reversed(ok))
            parts.append(f'<polygon points="{top} {bottom}" fill="#cfe0f5" stroke="none"/>')
    pts = " ".join(f"{px(i):.1f},{py(v[i]):.1f}" for i in idx)
    parts.append(f'<polyline points="{pts}" fill="none" stroke="#1f5fa8" stroke-width="1.2"/>')
    for c in change_indices:
        x = px(c - 0.5)
        parts.append(f'<line class="cp" x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height}" stroke="#c0392b" '
                     'stroke-width="1" stroke-dasharray="2,1"/>')
    last = idx[-1]
    parts.append(f'<circle cx="{px(last):.1f}" cy="{py(v[last]):.1f}" r="2" fill="#1f5fa8"/>')
    parts.append("</svg>")
    return "".join(parts)
