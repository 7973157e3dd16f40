"""Parameter sweeps: success and mean time against each swept solver parameter
(docs/analysis.md "Sweeps").

    groups = sweep_groups([("run", run)])        # from run.json's grid, else from the specs
    cells = sweep_cells(groups[0], [("run", run)])  # figures.summarize per spec, with the parameters
    fig = sweep_figure(groups[0], cells)         # plotly: success and mean time vs each parameter

A sweep is a set of specs of one backend that differ in some parameters. From one run with a
`grid` in run.json (specs expanded from `dls:lambda={...}:max_step={...}`), each grid is a sweep
over its axes. Otherwise (and across runs: `python3 -m ikbench compare --sweep RUN...`) the specs
of each backend name are grouped, and a parameter is swept when its value in force (run.json's
`solvers[].parameters`, defaults filled in, a common key the spec leaves to the run at the run's
`suite.options`: ikbench.settings; else the spec text) differs between them; when the
same parameters appear in several runs, the run is one more axis.

The figures of a spec are figures.summarize's over the spec's solves, pooled over the families
(keys solver) or per family: success rate with its Wilson interval, mean time with its bootstrap
interval. Across runs, times come from different runs (and perhaps machines): the output says so.
"""

import math
from dataclasses import dataclass, field

import pandas as pd

from . import figures, settings

RUN_AXIS = "run"
ALL_FAMILIES = "all families"


@dataclass
class SweepGroup:
    name: str                                   # backend name, or the grid's spec text
    axes: list                                  # [(key, [values in order])]
    members: list = field(default_factory=list)  # [(label, spec, {key: value})]; label = run label

    def cell_name(self, label, spec, multi):
        return f"{label}: {spec}" if multi else spec


def parse_spec(spec):
    """'dls:lambda=0.1:max_step=0.5' -> ('dls', {'lambda': '0.1', 'max_step': '0.5'})."""
    parts = spec.split(":")
    params = {}
    for p in parts[1:]:
        k, _, v = p.partition("=")
        params[k.strip()] = v.strip()
    return parts[0].strip(), params


def _number(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _order(values):
    """Values in ascending numeric order when all are numbers, else in order of appearance."""
    uniq = []
    for v in values:
        if v not in uniq:
            uniq.append(v)
    nums = [_number(v) for v in uniq]
    if all(n is not None for n in nums):
        return [v for _, v in sorted(zip(nums, uniq), key=lambda x: x[0])]
    return uniq


def _parameters(run):
    """{spec: {key: value in force}} of the specs run.json lists with their parameters."""
    listed = settings.spec_parameters(run)
    return {spec: settings.parameters_in_force(run, spec, listed) for spec in listed}


def _plain_spec(run, grp, params):
    """The spec of the run that is the grid's plain form: same backend, not a member, and its
    run.json parameters equal the members' on every key but the swept ones (there it has its
    defaults, e.g. `dls` beside `dls:lambda={0.01,0.1}`). (spec, {axis: value}) or None."""
    members = [spec for _, spec, _ in grp.members]
    name = parse_spec(members[0])[0]
    ref = params.get(members[0])
    if ref is None:
        return None
    axes = [k for k, _ in grp.axes]
    for spec in run.solver_specs:
        if spec in members or parse_spec(spec)[0] != name or spec not in set(run.solves["solver"]):
            continue
        p = params.get(spec)
        if p is None or any(k not in p for k in axes):
            continue
        if {k: v for k, v in p.items() if k not in axes} == {k: v for k, v in ref.items() if k not in axes}:
            return spec, {k: "" if p[k] is None else str(p[k]) for k in axes}
    return None


def grid_groups(run, label="run"):
    """The sweeps of run.json's `grid`: one SweepGroup per grid, its axes and specs as listed
    there, parameter values from the spec text (run.json's typed value when the text is the same
    number). The run's plain spec of the grid (_plain_spec: the backend with the swept parameters
    at their defaults) is a member too, at its default values, so that a curve shows where the
    defaults stand among the grid."""
    grid = run.meta.get("grid")
    groups = []
    if not isinstance(grid, list):
        return groups
    present = set(run.solves["solver"])
    for g in grid:
        if not isinstance(g, dict) or not isinstance(g.get("axes"), list):
            continue
        axes = [(a["key"], list(a.get("values", []))) for a in g["axes"] if isinstance(a, dict) and "key" in a]
        grp = SweepGroup(str(g.get("spec", "grid")), [(k, _order([str(v) for v in vals])) for k, vals in axes])
        for spec in g.get("specs", []):
            if spec not in present:
                continue
            _, params = parse_spec(spec)
            grp.members.append((label, spec, {k: params.get(k, "") for k, _ in axes}))
        if grp.members:
            plain = _plain_spec(run, grp, _parameters(run))
            if plain is not None:
                grp.members.append((label, plain[0], plain[1]))
                grp.axes = [(k, _order(list(vals) + [plain[1][k]])) for k, vals in grp.axes]
            groups.append(grp)
    return groups


def sweep_groups(labelled_runs):
    """Sweeps of one or more runs [(label, run)]: run.json's grids when there is one run with a
    grid; otherwise the specs of each backend name grouped, with the parameters that differ as
    axes (and the run as an axis when the same parameters appear in several runs). Backends with
    fewer than two distinct parameter sets are not sweeps."""
    if len(labelled_runs) == 1:
        groups = grid_groups(labelled_runs[0][1], labelled_runs[0][0])
        if groups:
            return groups
    by_name = {}
    for label, run in labelled_runs:
        params = _parameters(run)
        for spec in run.solver_specs:
            if spec not in set(run.solves["solver"]):
                continue
            name, given = parse_spec(spec)
            p = {k: v for k, v in params.get(spec, {}).items()}
            for k, v in given.items():
                p.setdefault(k, v)
            by_name.setdefault(name, []).append((label, spec, {k: ("" if v is None else str(v) if not isinstance(v, str)
                                                                   else v) for k, v in p.items()}))
    groups = []
    for name, members in by_name.items():
        keys = sorted({k for _, _, p in members for k in p})
        swept = [k for k in keys if len({p.get(k, "") for _, _, p in members}) > 1]
        if not swept:
            continue
        combos = [tuple(p.get(k, "") for k in swept) for _, _, p in members]
        axes = [(k, _order([p.get(k, "") for _, _, p in members])) for k in swept]
        if len(set(combos)) < len(combos):
            axes.append((RUN_AXIS, _order([lab for lab, _, _ in members])))
        grp = SweepGroup(name, axes)
        for lab, spec, p in members:
            vals = {k: p.get(k, "") for k in swept}
            if axes[-1][0] == RUN_AXIS:
                vals[RUN_AXIS] = lab
            grp.members.append((lab, spec, vals))
        groups.append(grp)
    return groups


def sweep_cells(group, labelled_runs, family=None):
    """figures.summarize of each member spec of the sweep, pooled over families (family None) or
    over one family: one row per member with `label`, `spec`, `cell` and a column per axis, then
    summarize's columns (success with Wilson interval, mean time with bootstrap interval, ...)."""
    runs = dict(labelled_runs)
    multi = len(labelled_runs) > 1
    frames = []
    for label in dict.fromkeys(lab for lab, _, _ in group.members):
        specs = [spec for lab, spec, _ in group.members if lab == label]
        s = runs[label].solves
        part = s[s["solver"].isin(specs)]
        if family is not None:
            part = part[part["family"] == family]
        if part.empty:
            continue
        part = part.assign(solver=[group.cell_name(label, x, multi) for x in part["solver"]])
        frames.append(part)
    if not frames:
        return pd.DataFrame()
    solves = pd.concat(frames, ignore_index=True)
    cells = figures.summarize(solves, keys=("solver",)).rename(columns={"solver": "cell"})
    info = {group.cell_name(lab, spec, multi): (lab, spec, vals) for lab, spec, vals in group.members}
    cells.insert(0, "label", [info[c][0] for c in cells["cell"]])
    cells.insert(1, "spec", [info[c][1] for c in cells["cell"]])
    for i, (k, _) in enumerate(group.axes):
        cells.insert(2 + i, k, [info[c][2].get(k, "") for c in cells["cell"]])
    cells["family"] = ALL_FAMILIES if family is None else family
    return cells


def sweep_lines(group, cells, axis):
    """The lines of the plot against `axis`: [(legend label, rows of `cells` in the axis'
    order)], one line per combination of the other axes' values."""
    others = [k for k, _ in group.axes if k != axis]
    order = dict((v, i) for i, v in enumerate(dict(group.axes)[axis]))
    lines = []
    if cells.empty:
        return lines
    keyed = cells.assign(_x=cells[axis].map(order))
    if not others:
        groups = [((), keyed)]
    else:
        groups = keyed.groupby(others if len(others) > 1 else others[0], sort=False)
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(f"{k}={v}" for k, v in zip(others, key)) or group.name
        lines.append((label, part.sort_values("_x", kind="stable").drop(columns="_x")))
    return lines


def axis_is_numeric(group, axis):
    return all(_number(v) is not None for v in dict(group.axes)[axis])


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
            x = [(_number(v) if numeric else str(v)) for v in part[axis]]
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
        vals = [_number(v) for v in dict(group.axes)[axis]] if numeric else []
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
    text table)], written by the output rule of ikbench.safe_io (`inputs`: the runs' files)."""
    import html

    import plotly.io as pio

    from .safe_io import atomic_write_text

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
