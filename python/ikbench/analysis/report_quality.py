"""The report's section on outcomes and answer quality (docs/report.md, docs/protocols.md).

    block = quality_block(run, summary, styles)   # data["quality"] of the page, or None

Tables: per family x solver the outcome rates with their Wilson 95 % intervals (converged =
success, wrong, not found, correctly refused, timed out; outcomes.outcome_figures); per seed regime
x solver the success and median time (outcomes.regime_figures). Figures: per family, box plots of
each quality figure that the run recorded (quartiles and Tukey fences, computed here as
report.box_figures does for times): manipulability, limit margin and the distance from the start
for converged answers; for tracked paths the joint jump, velocity, acceleration and jerk per
frame.
"""

import numpy as np

from . import outcomes

METRICS = [  # column, axis title, converged answers only
    ("manipulability", "manipulability (Yoshikawa)", True),
    ("limit_margin", "smallest normalised distance to a joint limit", True),
    ("seed_distance", "joint-space distance from the start [rad]", True),
    ("joint_jump", "largest joint jump between frames [rad]", False),
    ("joint_velocity", "joint velocity [rad/s]", False),
    ("joint_acceleration", "joint acceleration [rad/s²]", False),
    ("joint_jerk", "joint jerk [rad/s³]", False),
]


def _clean(v):
    if v is None:
        return None
    if isinstance(v, (float, np.floating)):
        return None if not np.isfinite(v) else float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def _box(values):
    v = np.sort(values[np.isfinite(values)])
    if not len(v):
        return None
    a, m, b = (float(x) for x in np.percentile(v, [25, 50, 75]))
    iqr = b - a
    return a, m, b, float(v[v >= a - 1.5 * iqr][0]), float(v[v <= b + 1.5 * iqr][-1]), len(v)


def quality_figures(run, styles):
    """{family: [plotly figure per metric the family has]}."""
    solves = run.solves
    cls = outcomes.outcomes(run)
    out = {}
    for fam, idx in solves.groupby("family", sort=False).indices.items():
        part = solves.iloc[idx]
        good = cls[idx] == "converged"
        figs = []
        for col, title, only_good in METRICS:
            if col not in part or (col == "seed_distance" and "manipulability" not in part):
                continue
            data = []
            for spec, sidx in part.groupby("solver", sort=False).indices.items():
                vals = part[col].to_numpy(dtype=float)[sidx]
                if only_good:
                    vals = vals[good[sidx]]
                b = _box(vals)
                if b is None:
                    continue
                colour = styles.get(spec, {"colour": "#444"})["colour"]
                data.append({"type": "box", "x": [spec], "q1": [b[0]], "median": [b[1]], "q3": [b[2]],
                             "lowerfence": [b[3]], "upperfence": [b[4]], "name": f"{spec} ({b[5]})", "meta": spec,
                             "showlegend": False, "marker": {"color": colour}, "line": {"color": colour, "width": 1.4},
                             "hoverinfo": "y+name"})
            if data:
                figs.append({"metric": col, "data": data,
                             "layout": {"height": 320, "margin": {"l": 70, "r": 20, "t": 30, "b": 110},
                                        "xaxis": {"type": "category", "tickangle": -35},
                                        "yaxis": {"title": {"text": title}}, "hovermode": "closest"}})
        if figs:
            out[fam] = figs
    return out


def quality_block(run, summary, styles):
    """The page's `quality` data: {"outcomes": {columns, rows}, "regimes": {columns, rows},
    "figures": quality_figures, "recorded": whether solves.csv has the quality columns}."""
    cols = ["family", "solver", "start", "targets", "solves", "success_rate", "success_ci_low", "success_ci_high"] + [
        f"{o.replace('-', '_')}_{k}" for o in outcomes.RATED for k in ("rate", "ci_low", "ci_high")] + [
        "targets_solved_rate", "manipulability_median", "limit_margin_median", "seed_distance_median",
        "joint_jump_max", "branch_switches", "joint_velocity_rms", "joint_acceleration_rms", "joint_jerk_rms"]
    have = [c for c in cols if c in summary]
    rows = [[_clean(r[c]) for c in have] for r in summary[summary["supported"] > 0].to_dict("records")]
    reg = outcomes.regime_figures(run)
    rcols = list(reg.columns)
    return {"outcomes": {"columns": have, "rows": rows},
            "regimes": {"columns": rcols, "rows": [[_clean(v) for v in r] for r in reg.itertuples(index=False)]},
            "figures": quality_figures(run, styles),
            "recorded": "outcome" in run.solves}


__all__ = ["quality_block", "quality_figures", "METRICS"]
