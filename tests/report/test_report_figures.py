"""The report's per-family box plots and success bars, the solver x family heatmap, the section per
solver spec and the default specs of the success-vs-DOF panels: their data equal the analysis
library's figures."""
import json

import numpy as np
import pytest
import synth

from ikbench.analysis import curves, figures
from ikbench.render import report, report_figures
from ikbench.io import results


@pytest.fixture(scope="module")
def built(rich_dir):
    run = results.load(rich_dir)
    return report.build(run, report.Options(trace_problems=1)), run, figures.summarize(run)


def test_heatmap_cells_equal_the_figures(built):
    data, run, summ = built
    hm = data["figures"]["heatmap"]
    labels = {s["spec"]: s["label"] for s in data["solvers"]}
    assert hm["data"][0]["y"] == [labels[s] for s in run.solver_specs]
    assert hm["data"][0]["x"] == ["planar-position", "planar-pose"]
    by = summ.set_index(["family", "solver"])
    assert len(hm["cells"]) == len(by)
    # the cell texts: a text trace over the heatmap, one text per cell at its (family, spec label)
    text = hm["data"][1]
    assert text["type"] == "scatter" and text["mode"] == "text"
    drawn = {(x, y): t for x, y, t in zip(text["x"], text["y"], text["text"])}
    assert len(drawn) == len(hm["cells"])
    for c in hm["cells"]:
        r = by.loc[(c["family"], c["solver"])]
        if r["available"]:
            assert c["success_rate"] == r["success_rate"] and c["time_us_median"] == r["time_us_median"]
            i, j = run.solver_specs.index(c["solver"]), hm["data"][0]["x"].index(c["family"])
            assert hm["data"][0]["z"][i][j] == pytest.approx(100 * r["success_rate"], abs=0.05)  # colour: 0.1 %
            assert drawn[(c["family"], labels[c["solver"]])] == report_figures.cell_time(r["time_us_median"])
        else:
            assert c["success_rate"] is None and (c["family"], c["solver"]) == ("planar-pose", "two-bone")
            assert drawn[(c["family"], labels[c["solver"]])] == "n/a"


def test_long_specs_are_drawn_by_a_stable_abbreviation():
    """styles.short_labels: a short spec is its own label; a long one its backend and hash digits,
    the same whatever the other specs, and distinct labels for distinct specs."""
    from ikbench.render import styles

    long_a, long_b = "auto:restarts=100:time_budget_us=0", "auto:solutions=all:restarts=30:time_budget_us=0"
    one = styles.short_labels(["dls", long_a])
    two = styles.short_labels([long_b, "planar-analytic", long_a])
    assert one["dls"] == "dls" and two["planar-analytic"] == "planar-analytic"
    assert one[long_a] == two[long_a] and one[long_a].startswith("auto#") and len(one[long_a]) <= styles.LABEL_MAX
    assert two[long_a] != two[long_b]
    assert styles.label_key(two) == [(two[long_b], long_b), (two[long_a], long_a)]
    assert report_figures.cell_time(1234.0) == "1.2k" and report_figures.cell_time(0.791) == "0.791"
    assert report_figures.cell_time(float("nan")) == "-"


def test_boxes_are_the_quartiles_of_each_cell(built):
    data, run, summ = built
    s = run.solves[figures.attempted_mask(run.solves)]
    for fam, fig in data["figures"]["boxes"].items():
        b = fig["boxes"]
        ranked = summ[(summ["family"] == fam) & summ["available"]].sort_values("rank", kind="stable")
        assert b["solver"] == ranked["solver"].tolist()      # every spec that ran, best first
        for k, spec in enumerate(b["solver"]):
            t = s[(s["family"] == fam) & (s["solver"] == spec)]["time_us"].to_numpy(dtype=float)
            q1, med, q3 = np.percentile(t, [25, 50, 75])
            assert (b["q1"][k], b["median"][k], b["q3"][k]) == (q1, med, q3)
            assert med == summ.set_index(["family", "solver"]).loc[(fam, spec), "time_us_median"]
            assert b["lowerfence"][k] >= q1 - 1.5 * (q3 - q1) and b["upperfence"][k] <= q3 + 1.5 * (q3 - q1)
            assert b["solves"][k] == len(t)
    assert "two-bone" not in data["figures"]["boxes"]["planar-pose"]["boxes"]["solver"]


def test_success_bars_with_wilson_intervals(built):
    data, _, summ = built
    for fam, fig in data["figures"]["success"].items():
        bars = fig["data"][0]
        part = summ[(summ["family"] == fam) & summ["available"]].set_index("solver")
        assert sorted(bars["x"]) == sorted(part.index)
        for x, y, hi in zip(bars["x"], bars["y"], bars["error_y"]["array"]):
            assert y == pytest.approx(100 * part.loc[x, "success_rate"])
            assert y + hi == pytest.approx(100 * part.loc[x, "success_ci_high"])
    assert data["figures"]["success"]["planar-pose"]["na"] == ["two-bone"]   # named, not a 0 % bar


def test_solver_section_lists_the_spec_parameters_and_its_figures(tmp_path):
    params = {"dls": {"lambda": 0.05, "max_step": 0.5, "restarts": 0}, "ccd": {"max_iterations": None, "restarts": 0},
              "two-bone": {}}
    d = synth.make_run(tmp_path / "run", problems=6, run_json_extra={
        "solvers": [{"spec": s, "name": s, "description": f"the {s} method", "parameters": p}
                    for s, p in params.items()]})
    run = results.load(d)
    data = report.build(run, report.Options(trace_problems=1))
    secs = {s["spec"]: s for s in data["solver_sections"]}
    assert set(secs) == set(run.solver_specs)
    # every parameter at the value it ran under, then the run's tolerances
    assert secs["dls"]["parameters"] == [["lambda", 0.05], ["max_step", 0.5], ["restarts", 0],
                                         ["position_tolerance_m", 1e-5], ["orientation_tolerance_rad", 1e-5]]
    # a common key the spec leaves to the run (null in run.json) is the run's suite option, said so
    assert secs["ccd"]["parameters"][0] == ["max_iterations", 100]
    assert secs["ccd"]["parameter_sources"][:2] == ["suite option", "spec"]
    assert "default (none)" not in report.to_json(secs)
    assert secs["dls"]["description"] == "the dls method"
    summ = figures.summarize(run).set_index(["family", "solver"])
    for spec, sec in secs.items():
        assert [r["family"] for r in sec["families"]] == ["planar-position", "planar-pose"]
        for r in sec["families"]:
            assert r["available"] == bool(summ.loc[(r["family"], spec), "available"])
            if r["available"]:
                assert r["success_rate"] == summ.loc[(r["family"], spec), "success_rate"]
    # its convergence on every traced family: the median of curves.convergence
    conv = {(c.family, c.solver): c for c in curves.convergence(run.traces, compact=True,
                                                                 time_points=report.CURVE_TIME_POINTS)}
    lines = {t["name"]: t for t in secs["dls"]["convergence"]["data"]}
    assert set(lines) == {"planar-position", "planar-pose"}
    c = conv[("planar-position", "dls")]
    np.testing.assert_allclose(lines["planar-position"]["y"], report.sig(c.iteration["position"].q50))
    # the page shows the section and its parameters (the browser test draws it)
    text = report.render(data)
    assert 'id="solvers"' in text and 'id="solver-select"' in text
    assert json.loads(json.dumps(report.extract_data(text)["solver_sections"][0]["parameters"])) is not None


def test_dof_panels_show_at_most_eight_specs_the_rest_a_click_away(tmp_path):
    many = {s: (p, 1.0, (3, 30)) for s, p in (("auto", 1.0), ("dls", 0.9), ("ccd", 0.6), ("fabrik", 0.7),
                                              ("kdl-lma", 0.8), ("jt", 0.3), ("pinv", 0.5), ("sdls", 0.6),
                                              ("lm", 0.8), ("gd-momentum", 0.2), ("gn", 0.0))}

    def edit(rows):
        for r in rows:
            if r["family"] == "planar7-position":
                r["dof"] = "7"

    d = synth.make_run(tmp_path / "run", problems=20, solvers=many, unsupported=(), edit_rows=edit,
                       families=("planar2-position", "planar7-position"))
    run = results.load(d)
    data = report.build(run, report.Options(trace_problems=0))
    dof = data["figures"]["dof"]
    shown = {t["meta"] for t in dof["data"] if t.get("visible", True) is True}
    hidden = {t["meta"] for t in dof["data"] if t.get("visible") == "legendonly"}
    assert len(shown) <= 8 < len(many) and shown | hidden == set(many)
    summ = figures.summarize(run)
    leaders = {s for ls in figures.family_leaders(summ)["leaders"] for s in ls}
    assert leaders <= shown and {"kdl-lma", "dls", "ccd", "fabrik"} <= shown
    assert dof["picks"]["planarN-position"] == curves.dof_picks(summ, {"planar2-position", "planar7-position"})
