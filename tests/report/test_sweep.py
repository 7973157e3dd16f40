"""ikbench.analysis.sweep and `compare --sweep`: sweeps from run.json's grid and across runs, figures equal
to figures.summarize per spec."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import synth
from conftest import GRID_SPECS, REPO, external_references

from ikbench.analysis import figures, sweep
from ikbench.render import sweep_render
from ikbench.io import results


def test_grid_group_and_cells_equal_summarize(rich_dir):
    run = results.load(rich_dir)
    (g,) = sweep.sweep_groups([("run", run)])
    assert g.axes == [("lambda", ["0.01", "0.1", "0.5"])]
    assert [m[1] for m in g.members] == GRID_SPECS
    cells = sweep.sweep_cells(g, [("run", run)])
    want = figures.summarize(run.solves[run.solves["solver"].isin(GRID_SPECS)], keys=("solver",))
    pd.testing.assert_series_equal(cells["success_rate"], want["success_rate"], check_names=False)
    pd.testing.assert_series_equal(cells["time_us_mean_ci_high"], want["time_us_mean_ci_high"], check_names=False)
    assert cells["lambda"].tolist() == ["0.01", "0.1", "0.5"]
    fam = sweep.sweep_cells(g, [("run", run)], family="planar-pose")
    part = run.solves[(run.solves["family"] == "planar-pose") & run.solves["solver"].isin(GRID_SPECS)]
    assert fam["successes"].tolist() == figures.summarize(part, keys=("solver",))["successes"].tolist()


def test_lines_one_per_value_of_the_other_axes():
    g = sweep.SweepGroup("x", [("a", ["1", "2"]), ("b", ["x", "y", "z"])])
    cells = pd.DataFrame([{"a": a, "b": b, "cell": f"{a}{b}", "available": True} for a in ("2", "1") for b in "zyx"])
    lines = dict(sweep.sweep_lines(g, cells, "a"))
    assert set(lines) == {"b=x", "b=y", "b=z"}
    assert lines["b=y"]["a"].tolist() == ["1", "2"]  # in the axis' order
    lines = dict(sweep.sweep_lines(g, cells, "b"))
    assert lines["a=1"]["b"].tolist() == ["x", "y", "z"]
    assert sweep.axis_is_numeric(g, "a") and not sweep.axis_is_numeric(g, "b")


def test_figure_draws_success_and_mean_time_with_intervals(rich_dir):
    run = results.load(rich_dir)
    (g,) = sweep.sweep_groups([("run", run)])
    cells = sweep.sweep_cells(g, [("run", run)])
    fig = sweep_render.sweep_figure(g, cells)
    succ, tm = fig.data[0], fig.data[1]
    np.testing.assert_allclose(np.asarray(succ.y), 100 * cells["success_rate"].to_numpy())
    np.testing.assert_allclose(np.asarray(succ.y) + np.asarray(succ.error_y.array), 100 * cells["success_ci_high"])
    np.testing.assert_allclose(np.asarray(tm.y) - np.asarray(tm.error_y.arrayminus), cells["time_us_mean_ci_low"])
    assert list(succ.x) == [0.01, 0.1, 0.5] and fig.layout.xaxis.type == "log"


def test_sweep_across_runs(tmp_path):
    a = synth.make_run(tmp_path / "a", problems=6, solvers={"dls:lambda=0.1": (0.9, 1, (5, 9)),
                                                             "ccd": (0.5, 2, (9, 20))})
    b = synth.make_run(tmp_path / "b", seed=3, problems=6, solvers={"dls:lambda=0.3": (0.6, 1, (5, 9)),
                                                                     "ccd": (0.5, 2, (9, 20))})
    ra, rb = results.load(a), results.load(b)
    groups = {g.name: g for g in sweep.sweep_groups([("a", ra), ("b", rb)])}
    assert set(groups) == {"dls"}  # ccd has the same parameters in both runs: no sweep (compare A B is for that)
    assert groups["dls"].axes == [("lambda", ["0.1", "0.3"])]
    cells = sweep.sweep_cells(groups["dls"], [("a", ra), ("b", rb)])
    assert cells["cell"].tolist() == ["a: dls:lambda=0.1", "b: dls:lambda=0.3"]
    want = figures.summarize(rb.solves[rb.solves["solver"] == "dls:lambda=0.3"], keys=("solver",))
    assert cells["success_rate"].iloc[1] == want["success_rate"].iloc[0]
    # the same parameters in two runs besides a swept one: the run becomes an axis
    c = synth.make_run(tmp_path / "c", seed=4, problems=6, solvers={"dls:lambda=0.1": (0.7, 1, (5, 9))})
    rc = results.load(c)
    (g,) = sweep.sweep_groups([("a", ra), ("b", rb), ("c", rc)])
    assert g.axes == [("lambda", ["0.1", "0.3"]), ("run", ["a", "b", "c"])]
    cells = sweep.sweep_cells(g, [("a", ra), ("b", rb), ("c", rc)])
    lines = dict(sweep.sweep_lines(g, cells, "lambda"))
    assert set(lines) == {"run=a", "run=b", "run=c"}


def test_compare_sweep_command(tmp_path, rich_dir):
    out = tmp_path / "sweep.html"
    env = {"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"}
    p = subprocess.run([sys.executable, "-m", "ikbench", "compare", "--sweep", str(rich_dir), "--out", str(out)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "sweep dls:lambda={0.01,0.1,0.5}" in p.stdout and "dls:lambda=0.5" in p.stdout
    page = out.read_text()
    assert page.count("plotly.js v") == 1  # plotly.js inlined once, no CDN
    assert external_references(page) == []  # nothing loaded from elsewhere
    p = subprocess.run([sys.executable, "-m", "ikbench", "compare", "--sweep", str(rich_dir), "--out", "x.md"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 2 and "HTML" in p.stderr
    plain = synth.make_run(tmp_path / "plain", problems=3)
    p = subprocess.run([sys.executable, "-m", "ikbench", "compare", "--sweep", str(plain)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 2 and "no sweep" in p.stderr
    assert json.loads((rich_dir / "run.json").read_text())["grid"]


def test_grid_curve_includes_the_plain_spec(tmp_path):
    """The run's plain `dls` (the swept lambda at its default 0.05, every other parameter equal to
    the grid's) is a point of the grid's curve; a dls spec differing in another parameter is not."""
    specs = GRID_SPECS + ["dls", "dls:max_step=1"]
    solvers = {s: (0.8, 1.0, (5, 30)) for s in specs}
    base = {"lambda": 0.05, "max_step": 0.5, "restarts": 0}
    params = {"dls:lambda=0.01": dict(base, **{"lambda": 0.01}), "dls:lambda=0.1": dict(base, **{"lambda": 0.1}),
              "dls:lambda=0.5": dict(base, **{"lambda": 0.5}), "dls": dict(base),
              "dls:max_step=1": dict(base, max_step=1.0)}
    d = synth.make_run(tmp_path / "run", problems=6, solvers=solvers, run_json_extra={
        "grid": [{"spec": "dls:lambda={0.01,0.1,0.5}", "axes": [{"key": "lambda", "values": ["0.01", "0.1", "0.5"]}],
                  "specs": GRID_SPECS}],
        "solvers": [{"spec": s, "name": "dls", "parameters": params[s]} for s in specs]})
    run = results.load(d)
    (g,) = sweep.sweep_groups([("run", run)])
    assert [m[1] for m in g.members] == GRID_SPECS + ["dls"]
    assert g.axes == [("lambda", ["0.01", "0.05", "0.1", "0.5"])]
    cells = sweep.sweep_cells(g, [("run", run)])
    ((_, line),) = sweep.sweep_lines(g, cells, "lambda")
    assert line["cell"].tolist() == ["dls:lambda=0.01", "dls", "dls:lambda=0.1", "dls:lambda=0.5"]
    want = figures.summarize(run.solves[run.solves["solver"] == "dls"], keys=("solver",))
    assert cells.set_index("cell").loc["dls", "success_rate"] == want["success_rate"].iloc[0]
    # the report's sweep section draws it
    from ikbench.render import report

    (block,) = report.sweep_blocks(run)
    assert "dls" in [r[block["cells"]["columns"].index("cell")] for r in block["cells"]["rows"]]
