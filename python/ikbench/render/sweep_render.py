"""Parameter sweeps drawn (docs/analysis.md "Sweeps"): the plotly figure of a sweep (success and
mean time against each swept parameter), its text table and the self-contained page of
`ikbench compare --sweep`. The sweeps and their cells are computed by ikbench.analysis.sweep."""

import math

from ..analysis.sweep import axis_is_numeric, parameter_number, sweep_lines


def sweep_figure(group, cells, title=None):
    """A plotly figure: for each swept parameter a row of two panels, success rate [%] with
    Wilson 95 % error bars and mean time [us] with bootstrap 95 % error bars, against the
    parameter; one line per combination of the other parameters. n/a cells are not drawn."""
    import plotly.graph_objects as go
    from plotly.colors import qualitative
    from plotly.subplots import make_subplots

    axes = [k for k, _ in group.axes]
    fig = make_subplots(rows=len(axes), cols=2, horizontal_spacing=0.09,
                        vertical_spacing=min(0.25, 0.5 / max(len(axes), 1)),
                        subplot_titles=[t for k in axes for t in (f"success vs {k}", f"mean time vs {k}")])
    palette = qualitative.Dark24
    avail = cells[cells["available"]] if not cells.empty else cells
    for r, axis in enumerate(axes, start=1):
        numeric = axis_is_numeric(group, axis)
        for i, (label, part) in enumerate(sweep_lines(group, avail, axis)):
            x = [(parameter_number(v) if numeric else str(v)) for v in part[axis]]
            colour = palette[i % len(palette)]
            s = 100 * part["success_rate"].to_numpy(dtype=float)
            lo = 100 * part["success_ci_low"].to_numpy(dtype=float)
            hi = 100 * part["success_ci_high"].to_numpy(dtype=float)
            t = part["time_us_mean"].to_numpy(dtype=float)
            tlo = part["time_us_mean_ci_low"].to_numpy(dtype=float)
            thi = part["time_us_mean_ci_high"].to_numpy(dtype=float)
            common = dict(mode="lines+markers", name=label, legendgroup=label, line=dict(color=colour),
                          customdata=part[["cell"]].to_numpy())
            fig.add_trace(go.Scatter(x=x, y=s, error_y=dict(type="data", array=hi - s, arrayminus=s - lo),
                                     hovertemplate="%{customdata[0]}<br>success %{y:.1f}%<extra></extra>",
                                     showlegend=(r == 1), **common), row=r, col=1)
            fig.add_trace(go.Scatter(x=x, y=t, error_y=dict(type="data", array=thi - t, arrayminus=t - tlo),
                                     hovertemplate="%{customdata[0]}<br>mean %{y:.3g} us<extra></extra>",
                                     showlegend=False, **common), row=r, col=2)
        vals = [parameter_number(v) for v in dict(group.axes)[axis]] if numeric else []
        logx = numeric and all(v > 0 for v in vals) and max(vals) / min(vals) >= 20
        for c in (1, 2):
            fig.update_xaxes(title_text=axis, type="log" if logx else ("linear" if numeric else "category"),
                             row=r, col=c)
        fig.update_yaxes(title_text="success [%] (Wilson 95%)", range=[-3, 103], row=r, col=1)
        fig.update_yaxes(title_text="mean time [us] (bootstrap 95%)", type="log", row=r, col=2)
    fig.update_layout(height=330 * len(axes) + 80, title=title or f"sweep {group.name}",
                      legend=dict(title="other parameters"), margin=dict(l=60, r=20, t=70, b=50))
    return fig


def format_text(group, cells):
    """A text table of a sweep: the axes, solves, success [Wilson 95 %], mean time [bootstrap 95 %]."""
    from .tables import fmt_num, fmt_success, render

    header = [k for k, _ in group.axes] + ["spec", "solves", "supp.", "success [95% CI]", "t.mean [95% CI] [us]"]
    rows = []
    for r in cells.to_dict("records"):
        succ = fmt_success(r["success_rate"], r["success_ci_low"], r["success_ci_high"]) if r["available"] else "n/a"
        tm = r["time_us_mean"]
        t = "-" if not r["available"] or not math.isfinite(tm) else (
            f"{fmt_num(tm, 'time')} [{fmt_num(r['time_us_mean_ci_low'], 'time')}, "
            f"{fmt_num(r['time_us_mean_ci_high'], 'time')}]")
        rows.append([str(r[k]) for k, _ in group.axes] + [r["cell"], str(r["solves"]), str(r["supported"]), succ, t])
    return render(header, rows, left=len(group.axes) + 1)


def write_html(path, blocks, title, notes=(), inputs=()):
    """A self-contained page (plotly.js inlined once) of sweep figures: blocks [(heading, fig,
    text table)], written by the output rule of ikbench.io.safe_io (`inputs`: the runs' files)."""
    import html

    import plotly.io as pio

    from ..io.safe_io import atomic_write_text

    e = html.escape
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'>", f"<title>{e(title)}</title>",
           "<style>body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
           "pre{background:#f6f6f6;padding:.6em;overflow:auto;font-size:12px}</style></head><body>",
           f"<h1>{e(title)}</h1>"] + [f"<p>{e(n)}</p>" for n in notes]
    first = True
    for heading, fig, text in blocks:
        out.append(f"<h2>{e(heading)}</h2>")
        out.append(pio.to_html(fig, include_plotlyjs=True if first else False, full_html=False))
        out.append(f"<pre>{e(text)}</pre>")
        first = False
    out.append("</body></html>")
    return atomic_write_text(path, "\n".join(out), inputs=inputs)
