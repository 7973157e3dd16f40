"""Parameter sweeps: success and mean time against each swept solver parameter
(docs/analysis.md "Sweeps").

    groups = sweep_groups([("run", run)])        # from run.json's grid, else from the specs
    cells = sweep_cells(groups[0], [("run", run)])  # figures.summarize per spec, with the parameters
    # drawn by ikbench.render.sweep_render: sweep_figure, format_text, write_html

A sweep is a set of specs of one backend that differ in some parameters. From one run with a
`grid` in run.json (specs expanded from `dls:lambda={...}:max_step={...}`), each grid is a sweep
over its axes. Otherwise (and across runs: `python3 -m ikbench compare --sweep RUN...`) the specs
of each backend name are grouped, and a parameter is swept when its value in force (run.json's
`solvers[].parameters`, defaults filled in, a common key the spec leaves to the run at the run's
`suite.options`: ikbench.analysis.settings) differs between them; when the
same parameters appear in several runs, the run is one more axis. A spec's backend name and
parameters come from run.json through ikbench.io.specs: its text is never split.

The figures of a spec are figures.summarize's over the spec's solves, pooled over the families
(keys solver) or per family: success rate with its Wilson interval, mean time with its bootstrap
interval. Across runs, times come from different runs (and perhaps machines): the output says so.
"""

import math
from dataclasses import dataclass, field

import pandas as pd

from . import figures, settings
from ..io.specs import spec_name, spec_records

RUN_AXIS = "run"
ALL_FAMILIES = "all families"


@dataclass
class SweepGroup:
    name: str                                   # backend name, or the grid's spec text
    axes: list                                  # [(key, [values in order])]
    members: list = field(default_factory=list)  # [(label, spec, {key: value})]; label = run label

    def cell_name(self, label, spec, multi):
        return f"{label}: {spec}" if multi else spec


def parameter_number(v):
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
    nums = [parameter_number(v) for v in uniq]
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
    records = spec_records(run)
    name = spec_name(members[0], records)
    ref = params.get(members[0])
    if ref is None:
        return None
    axes = [k for k, _ in grp.axes]
    for spec in run.solver_specs:
        if spec in members or spec_name(spec, records) != name or spec not in set(run.solves["solver"]):
            continue
        p = params.get(spec)
        if p is None or any(k not in p for k in axes):
            continue
        if {k: v for k, v in p.items() if k not in axes} == {k: v for k, v in ref.items() if k not in axes}:
            return spec, {k: "" if p[k] is None else str(p[k]) for k in axes}
    return None


def _axis_text(value, texts):
    """A member's run.json value on a grid axis as the grid writes it: the axis value of the same
    text or number (`1e-3` for 0.001), else the value's own text ("" when not recorded)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else ("true" if value is True else "false" if value is False else str(value))
    num = parameter_number(value)
    for t in texts:
        if t == text or (num is not None and parameter_number(t) == num):
            return t
    return text


def grid_groups(run, label="run"):
    """The sweeps of run.json's `grid`: one SweepGroup per grid, its axes and specs as listed
    there, a member's value on an axis the grid's text of its run.json parameter (_axis_text).
    The run's plain spec of the grid (_plain_spec: the backend with the swept parameters
    at their defaults) is a member too, at its default values, so that a curve shows where the
    defaults stand among the grid."""
    grid = run.meta.get("grid")
    groups = []
    if not isinstance(grid, list):
        return groups
    present = set(run.solves["solver"])
    params = _parameters(run)
    for g in grid:
        if not isinstance(g, dict) or not isinstance(g.get("axes"), list):
            continue
        axes = [(a["key"], list(a.get("values", []))) for a in g["axes"] if isinstance(a, dict) and "key" in a]
        grp = SweepGroup(str(g.get("spec", "grid")), [(k, _order([str(v) for v in vals])) for k, vals in axes])
        for spec in g.get("specs", []):
            if spec not in present:
                continue
            p = params.get(spec, {})
            grp.members.append((label, spec, {k: _axis_text(p.get(k), vals) for k, vals in grp.axes}))
        if grp.members:
            plain = _plain_spec(run, grp, params)
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
        records = spec_records(run)
        for spec in run.solver_specs:
            if spec not in set(run.solves["solver"]):
                continue
            name = spec_name(spec, records)
            p = params.get(spec, {})
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
    return all(parameter_number(v) is not None for v in dict(group.axes)[axis])
