"""`ikbench plot convergence|time|success RUN --family F --solvers A,B`: what each figure holds (the data
and the drawn artists, not pixels), the notes, the filters and their errors, and the one look per spec
(ikbench.render.styles) that every figure of the package uses."""
import numpy as np
import pytest
import synth
from conftest import cli

from ikbench.analysis import curves, family_figures, figures
from ikbench.render import family_render, plots, report, styles
from ikbench.io import results
from ikbench.cli import plot_commands


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return synth.make_run(tmp_path_factory.mktemp("fam") / "run", problems=40)


def _median_by_hand(run, family, spec, kind, grid):
    """The median over the traced solves of their step functions (the last record at or before each
    iteration; the final one after a solve stopped), from traces.csv read by pandas alone."""
    tr = run.traces
    col = "position_error" if kind == "position" else "orientation_error"
    vals = []
    for _, part in tr[(tr["family"] == family) & (tr["solver"] == spec)].groupby("problem"):
        part = part.sort_values("iteration")
        its, err = part["iteration"].to_numpy(), part[col].to_numpy()
        vals.append([err[max(np.searchsorted(its, g, side="right") - 1, 0)] for g in grid])
    return np.median(np.maximum(np.array(vals), curves.ERROR_FLOOR), axis=0), len(vals)


def test_convergence_data_is_the_median_and_band_of_the_traced_solves(run_dir):
    run = results.load(run_dir)
    sel = family_figures.select(run, ["planar-pose"], ["dls,ccd"])
    assert dict(sel) == {"planar-pose": ["dls", "ccd"]}
    data = family_figures.convergence_data(run, sel)
    assert data.families["planar-pose"]["kinds"] == ["position", "orientation"]
    ok = figures.success_mask(run.solves)
    for spec in ("dls", "ccd"):
        for kind in ("position", "orientation"):
            s = data.of("planar-pose", spec, kind)
            med, n = _median_by_hand(run, "planar-pose", spec, kind, s.grid)
            np.testing.assert_allclose(s.q50, med)
            assert np.all(s.q25 <= s.q50) and np.all(s.q50 <= s.q75)
            assert s.traced == n == 3 and s.problems == [0, 1, 2]
            m = (run.solves["family"] == "planar-pose") & (run.solves["solver"] == spec) & \
                run.solves["problem"].isin([0, 1, 2])
            assert s.succeeded == int(ok[m.to_numpy()].sum())
            assert f"n=3 traced, {s.succeeded}/3 converged" in s.label
            if np.isfinite(s.reached):   # the first iteration where the median is within the tolerance
                k = int(np.searchsorted(s.grid, s.reached))
                assert s.q50[k] <= data.tolerances[kind] and np.all(s.q50[:k] > data.tolerances[kind])
    # 3 of 40 problems traced: a note naming the run that traces 30
    (note,) = [n for n in data.notes if n.command]
    assert "only 3 of its 40 problems were traced for dls, ccd" in note.text
    assert "--trace-problems 30" in note.command and "--solvers dls,ccd" in note.command


def test_time_axis(run_dir):
    run = results.load(run_dir)
    data = family_figures.convergence_data(run, family_figures.select(run, ["planar-position"], ["dls"]), x="time")
    s = data.of("planar-position", "dls", "position")
    assert s.x == "time" and len(s.grid) == family_figures.TIME_POINTS and np.all(np.diff(s.grid) > 0)
    assert data.families["planar-position"]["kinds"] == ["position"]


def test_the_drawn_convergence_figure_holds_the_data(run_dir):
    run = results.load(run_dir)
    data = family_figures.convergence_data(run, family_figures.select(run, ["planar-pose"], ["dls", "ccd"]))
    fig = family_render.draw_convergence(data, "title")
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title().split(" (")[0] for ax in axes] == ["planar-pose: position error vs iteration",
                                                              "planar-pose: orientation error vs iteration"]
    for ax, kind in zip(axes, ("position", "orientation")):
        lines = {ln.get_gid(): ln for ln in ax.get_lines()}
        for spec in ("dls", "ccd"):
            s = data.of("planar-pose", spec, kind)
            ln = lines[f"median:{spec}"]
            np.testing.assert_allclose(ln.get_ydata(), s.q50)
            assert ln.get_color().lower() == styles.spec_style(spec).colour.lower()
            if np.isfinite(s.reached):
                assert lines[f"reached:{spec}"].get_xdata()[0] == s.reached
        tol = lines[f"tolerance:{kind}"]
        assert tol.get_ydata()[0] == data.tolerances[kind]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(t.startswith("dls (n=3 traced") for t in legend) and any("tolerance" in t for t in legend)
    notes = "\n".join(t.get_text() for t in fig.texts)
    assert "--trace-problems 30" in notes


def test_command_writes_the_figure_and_says_what_it_shows(run_dir, tmp_path):
    out = tmp_path / "c.svg"
    p = cli("plot", "convergence", run_dir, "--family", "planar-pose", "--solvers", "dls,ccd", "--out", out, check=0)
    assert out.exists() and "median:dls" in out.read_text()           # the artists' ids are in the SVG
    assert any(line.startswith("planar-pose  dls") and "/3" in line for line in p.stdout.splitlines())
    assert "note: planar-pose: only 3 of its 40 problems were traced" in p.stdout
    assert "--trace-problems" in p.stdout and f"written: {out}" in p.stdout
    assert max(len(line) for line in p.stdout.splitlines()) <= 100     # not a terminal: 100 columns
    # default output: RUN/plots/<what>-<family>-<specs>.png
    p = cli("plot", "success", run_dir, "--family", "planar-position", "--solvers", "ccd", check=0)
    assert (run_dir / "plots" / "success-planar-position-ccd.png").exists()
    # the same through scripts/plot.py
    assert plot_commands.main(["time", str(run_dir), "--family", "planar-pose", "--out", str(tmp_path / "t.png")]) == 0
    assert (tmp_path / "t.png").exists()


def test_filters_that_match_nothing_are_bad_input(run_dir):
    for args, what in ((["--family", "nosuch"], "'nosuch' is not a family"),
                       (["--solvers", "nosuch"], "'nosuch' matches no solver spec"),
                       (["--family", "planar-pose", "--solvers", "two-bone"], "no traced solve of two-bone")):
        p = cli("plot", "convergence", run_dir, *args, check=2)
        assert what in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    p = cli("plot", "time", run_dir, "--family", "planar-pose", "--solvers", "two-bone", check=2)
    assert "no supported solve" in p.stderr
    p = cli("plot", "convergence", run_dir, "--x", "distance", check=2)
    assert "usage" in p.stderr
    p = cli("plot", "convergence", run_dir, "--out", "x.txt", check=2)
    assert ".png, .svg, .svgz or .pdf" in p.stderr


def test_no_traces_names_the_run_that_records_them(tmp_path):
    d = synth.make_run(tmp_path / "run", problems=40, traces=False, run_json_extra={
        "command_line": "build/release/benchmarks/ikbench run --suite quick --no-trace --out x --force"})
    p = cli("plot", "convergence", d, "--family", "planar-position", "--solvers", "dls", check=2)
    assert "no traced solve of dls on planar-position" in p.stderr
    command = p.stderr.split("re-run with ")[1]
    assert command.startswith("build/release/benchmarks/ikbench run --suite quick --solvers dls --trace-problems 30 ")
    assert "--no-trace" not in command and "--force" not in command


def test_rerun_command_keeps_the_problems_and_replaces_the_outputs(tmp_path):
    d = synth.make_run(tmp_path / "run", problems=4, run_json_extra={
        "command_line": "ikbench run --suite quick --seed 7 --trace-problems 3 --out results/q --force "
                        "--solvers dls,ccd --progress=none"})
    run = results.load(d)
    cmd = family_figures.rerun_command(run, ["dls"], 30)
    assert cmd.startswith("ikbench run --suite quick --seed 7 --solvers dls --trace-problems 30 --out ")
    assert cmd.endswith(f"{d.resolve()}-trace30") and "--force" not in cmd and "progress" not in cmd
    # every problem of a small family traced: a note without a re-run
    small = results.load(synth.make_run(tmp_path / "small", problems=3))
    data = family_figures.convergence_data(small, family_figures.select(small, ["planar-position"], ["dls"]))
    assert [n.text for n in data.notes] == ["planar-position: all 3 of its problems were traced for dls, fewer "
                                            "than 30: each band is the spread of 3 solves"]


def test_default_specs_are_the_reports_picks(run_dir):
    run = results.load(run_dir)
    sel = family_figures.select(run)
    assert dict(sel) == report.default_picks(figures.summarize(run, intervals=False))
    # a backend name stands for every spec of that backend
    d = synth.make_run(run_dir.parent / "grid", problems=5, solvers={"dls:lambda=0.1": (0.9, 1.0, (5, 30)),
                                                                       "dls:lambda=0.5": (0.9, 1.0, (5, 30)),
                                                                       "ccd": (0.6, 3.0, (20, 80))}, unsupported=())
    sel = family_figures.select(results.load(d), ["planar-pose"], ["dls"])
    assert sel["planar-pose"] == ["dls:lambda=0.1", "dls:lambda=0.5"]


def test_time_and_success_data_are_the_library_figures(run_dir):
    run = results.load(run_dir)
    sel = family_figures.select(run, ["planar-position", "planar-pose"], ["dls", "two-bone"])
    boxes = family_figures.time_data(run, sel)
    s = run.solves
    for fam, bs in boxes.items():
        for b in bs:
            m = (s["family"] == fam) & (s["solver"] == b.spec) & figures.attempted_mask(s)
            t = s.loc[m, "time_us"].to_numpy(dtype=float)
            assert (b.q1, b.median, b.q3) == tuple(np.percentile(t, [25, 50, 75])) and b.solves == len(t)
            assert b.q1 - 1.5 * (b.q3 - b.q1) <= b.whisker_low <= b.q1 and b.q3 <= b.whisker_high
    assert [b.spec for b in boxes["planar-pose"]] == ["dls"]          # two-bone: n/a there, named in a note
    assert any("two-bone has no supported solve" in n.text for n in boxes.notes)
    fig = family_render.draw_time(boxes, "t")
    assert {p.get_gid() for ax in fig.axes for p in ax.patches} >= {"box:dls", "box:two-bone"}
    bars = family_figures.success_data(run, sel)
    summ = figures.summarize(run).set_index(["family", "solver"])
    for fam, bs in bars.items():
        for b in bs:
            r = summ.loc[(fam, b.spec)]
            assert b.available == bool(r["available"])
            if b.available:
                assert (b.rate, b.low, b.high) == (r["success_rate"], r["success_ci_low"], r["success_ci_high"])
    fig = family_render.draw_success(bars, "s")
    gids = {a.get_gid() for ax in fig.axes for a in list(ax.patches) + list(ax.texts)}
    assert "na:two-bone" in gids and "bar:dls" in gids                  # n/a is named, not a 0 % bar


def test_one_look_per_spec_in_every_figure(tmp_path):
    known = [styles.spec_style(s) for s in styles.KNOWN]
    assert len({s.colour for s in known}) == len(known)                # the shipped backends: distinct colours
    assert all(s.dash == "solid" for s in known)
    hashed = styles.spec_style("dls:lambda=0.1")
    assert hashed.dash != "solid" and hashed == styles.spec_style("dls:lambda=0.1")
    assert hashed.colour in styles.PALETTE
    # a spec's look does not depend on the other specs drawn, in the plots and in the report
    a, b = ["dls", "ccd", "dls:lambda=0.1"], ["zzz", "dls:lambda=0.1", "aaa", "dls"]
    for spec in ("dls", "dls:lambda=0.1"):
        assert plots.Styles(a)[spec]["color"] == plots.Styles(b)[spec]["color"] == styles.spec_style(spec).colour
        assert report.solver_styles(a)[spec] == report.solver_styles(b)[spec] == \
            {"colour": styles.spec_style(spec).colour, "dash": styles.spec_style(spec).dash,
             "label": styles.short_label(spec)}
    # the report page of a run carries those colours
    d = synth.make_run(tmp_path / "run", problems=4)
    data = report.build(results.load(d), report.Options(trace_problems=1))
    assert {s["spec"]: s["colour"] for s in data["solvers"]} == \
        {s: styles.spec_style(s).colour for s in ("dls", "ccd", "two-bone")}
