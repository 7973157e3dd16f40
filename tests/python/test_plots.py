"""ikbench.render.plots (scripts/plot.py): what the plots contain, for one run and for runs overlaid."""
import gzip
import json

import synth
from PIL import Image
from plot_check import check

from ikbench.analysis import figures
from ikbench.io import results
from ikbench.cli import plot_commands


def test_one_run(tmp_path):
    d = synth.make_run(tmp_path / "run", problems=12)
    assert plot_commands.main([str(d), "--formats", "svg"]) == 0
    assert check(d, [d], formats=("svg",)) == []
    index = json.loads((d / "plots" / "index.json").read_text())
    succ = next(p for p in index["plots"] if p["stem"] == "success_vs_dof")
    # the unsupported pose cell of two-bone is not drawn as 0 %: two-bone has one DOF point only
    assert succ["panels"][0]["ylabel"].startswith("success rate [%] (Wilson 95 %)")
    assert (d / "report.html").exists()
    # the checker does catch a plot that lacks a solver
    (d / "plots" / "iterations.svg").write_text((d / "plots" / "iterations.svg").read_text().replace(">ccd<", "><"))
    assert any("ccd" in f for f in check(d, [d], formats=("svg",)))


def test_default_formats_are_png_and_reproducible_compressed_svg(tmp_path):
    d = synth.make_run(tmp_path / "run", problems=12)
    assert plot_commands.main([str(d), "--no-report"]) == 0
    first = {p.name: p.read_bytes() for p in (d / "plots").glob("*.svgz")}
    assert "iterations.svgz" in first and not list((d / "plots").glob("*.svg"))
    pngs = list((d / "plots").glob("*.png"))
    assert pngs and {Image.open(p).mode for p in pngs} == {"P"}      # 256-colour palette images
    assert gzip.decompress(first["iterations.svgz"]).startswith(b"<?xml")
    assert check(d, [d], formats=("png", "svgz")) == []
    assert plot_commands.main([str(d), "--no-report"]) == 0      # the same figures give the same bytes
    assert {p.name: p.read_bytes() for p in (d / "plots").glob("*.svgz")} == first


def test_runs_overlaid(tmp_path):
    a = synth.make_run(tmp_path / "a", problems=10)
    b = synth.make_run(tmp_path / "b", seed=2, problems=10, solvers={"dls": (0.5, 2.0, (5, 30))})
    out = tmp_path / "both"
    assert plot_commands.main([str(a), str(b), "--out", str(out), "--formats", "svg"]) == 0
    index = json.loads((out / "plots" / "index.json").read_text())
    assert [r["label"] for r in index["runs"]] == ["a", "b"]
    it = next(p for p in index["plots"] if p["stem"] == "iterations")
    assert {"a: dls", "b: dls", "a: ccd"} <= set(it["panels"][0]["series"])
    assert "b: ccd" not in it["panels"][0]["series"]
    assert not (out / "report.html").exists()  # a report is of one run (python3 -m ikbench report RUN)


def test_bad_input(tmp_path, capsys):
    assert plot_commands.main([str(tmp_path / "nothing")]) == 2
    assert "solves.csv" in capsys.readouterr().err
    d = synth.make_run(tmp_path / "a", problems=3)
    assert plot_commands.main([str(d), str(d)]) == 2  # several runs need --out


# ---------------------------------------------------------------- the figures researchers expect

MANY = {  # eleven specs: more than a success-vs-DOF panel draws by default
    "auto": (1.0, 0.5, (2, 6)), "dls": (0.9, 1.0, (5, 30)), "ccd": (0.6, 3.0, (20, 80)),
    "fabrik": (0.7, 2.0, (10, 40)), "kdl-lma": (0.8, 4.0, (3, 10)), "jt": (0.3, 1.0, (50, 90)),
    "pinv": (0.5, 1.2, (5, 20)), "sdls": (0.6, 1.5, (5, 20)), "lm": (0.8, 1.1, (4, 12)),
    "gd-momentum": (0.2, 1.0, (60, 99)), "gn": (0.0, 0.2, (1, 1)),
}


def _sweep_run(path):
    """A run whose two families differ only in a number (a DOF sweep: 2 and 7 DOF), eleven specs."""
    def edit(rows):
        for r in rows:
            if r["family"] == "planar7-position":
                r["dof"] = "7"
    return synth.make_run(path, problems=30, solvers=MANY, families=("planar2-position", "planar7-position"),
                          unsupported=(), edit_rows=edit)


def _index(d):
    return {p["stem"]: p for p in json.loads((d / "plots" / "index.json").read_text())["plots"]}


def test_per_family_figures_have_a_panel_per_family_and_nothing_pooled(tmp_path):
    d = synth.make_run(tmp_path / "run", problems=12)
    assert plot_commands.main([str(d), "--formats", "svg", "--no-report"]) == 0
    idx = _index(d)
    for stem in ("time_distribution", "success", "iterations"):
        panels = idx[stem]["panels"]
        assert [p["title"] for p in panels] == ["planar-position", "planar-pose"]
        by = {p["title"]: p["series"] for p in panels}
        assert "two-bone" in by["planar-position"]           # ran there
        assert "two-bone" not in by["planar-pose"]           # unsupported on every pose problem: n/a, not 0
        assert set(by["planar-pose"]) == {"dls", "ccd"}
    assert check(d, [d], formats=("svg",)) == []


def test_heatmap_cells_equal_the_figures(tmp_path):
    d = synth.make_run(tmp_path / "run", problems=12)
    assert plot_commands.main([str(d), "--formats", "png", "--no-report"]) == 0
    cells = _index(d)["success_heatmap"]["panels"][0]["cells"]
    summ = figures.summarize(results.load(d)).set_index(["family", "solver"])
    assert len(cells) == len(summ) == 6
    for c in cells:
        r = summ.loc[(c["family"], c["solver"])]
        if r["available"]:
            assert c["success_rate"] == r["success_rate"] and c["time_us_median"] == r["time_us_median"]
        else:
            assert (c["family"], c["solver"]) == ("planar-pose", "two-bone") and c["success_rate"] is None


def test_success_vs_dof_draws_at_most_eight_specs_with_the_tied_leaders(tmp_path):
    d = _sweep_run(tmp_path / "run")
    assert plot_commands.main([str(d), "--formats", "svg", "--no-report"]) == 0
    (panel,) = _index(d)["success_vs_dof"]["panels"]
    assert panel["title"] == "planarN-position"
    assert len(panel["series"]) <= 8 < len(MANY)
    summ = figures.summarize(results.load(d))
    leaders = {s for ls in figures.family_leaders(summ)["leaders"] for s in ls}
    assert leaders and leaders <= set(panel["series"])
    assert {"kdl-lma", "dls", "ccd", "fabrik"} <= set(panel["series"])
    assert check(d, [d], formats=("svg",)) == []
    # --all-specs: every spec
    assert plot_commands.main([str(d), "--formats", "svg", "--no-report", "--all-specs"]) == 0
    (panel,) = _index(d)["success_vs_dof"]["panels"]
    assert set(panel["series"]) == set(MANY)
    assert check(d, [d], formats=("svg",), all_specs=True) == []


def test_gbench_success_beside_time(tmp_path):
    d = synth.make_run(tmp_path / "run", problems=4)
    bench = [{"name": f"Solve/{s}/dof:{n}/goal:pose", "run_name": f"Solve/{s}/dof:{n}/goal:pose",
              "run_type": "iteration", "real_time": t * n, "time_unit": "us", "dof": n, "success_rate": ok}
             for s, t, ok in (("dls", 10.0, 1.0), ("ccd", 0.5, 0.0)) for n in (7, 30)]
    (d / "bench_solvers.json").write_text(json.dumps({"benchmarks": bench}))
    assert plot_commands.main([str(d), "--formats", "svg", "--no-report"]) == 0
    panels = _index(d)["gbench-bench_solvers"]["panels"]
    titles = [p["title"] for p in panels]
    assert titles == ["bench_solvers.json: Solve/goal:pose (hollow: success < 100 %, x: no success)",
                      "bench_solvers.json: Solve/goal:pose: success"]
    assert set(panels[1]["series"]) == {"dls", "ccd"}   # ccd fails at once: fast and no success


def test_a_transparent_png_figure_keeps_its_alpha(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ikbench.io.safe_io import save_figure

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    save_figure(fig, tmp_path / "opaque.png")
    save_figure(fig, tmp_path / "clear.png", transparent=True)
    plt.close(fig)
    assert Image.open(tmp_path / "opaque.png").mode == "P"
    assert Image.open(tmp_path / "clear.png").mode == "RGBA"


LONG = "dls:lambda=0.05:max_step=0.25"     # a spec longer than styles.LABEL_MAX


def _texts_readable(fig):
    """What test_saved_figures_are_readable asserts of one figure as it is saved: failures."""
    from ikbench.render import plots

    bad = []
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        ticks = {w: plots.tick_texts(ax, w) for w in ("x", "y")}
        for w, ts in ticks.items():
            bad += [f"{ax.get_title()!r}: {w} tick {t.get_text()!r} at {t.get_fontsize()} pt" for t in ts
                    if t.get_fontsize() < plots.TICK_PT]
        texts = ticks["x"] + ticks["y"] + [t for t in (ax.xaxis.label, ax.yaxis.label, ax.title)
                                            if t.get_visible() and t.get_text()]
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
        for i, (ta, a) in enumerate(boxes):
            for tb, b in boxes[i + 1:]:
                if plots._overlap(a, b):
                    bad.append(f"{ax.get_title()!r}: {ta!r} overlaps {tb!r}")
    return bad


def test_saved_figures_are_readable(tmp_path, monkeypatch):
    """Every figure of `ikbench plot` as it is saved: tick labels of at least 9 pt at a dpi of at
    least 96 (12 px or more at 100 % zoom), no two tick labels, axis labels or titles of a panel
    overlapping, a long spec drawn by its abbreviation with the key under the figure."""
    from ikbench.render import plots, styles

    solvers = {"dls": (0.9, 1.0, (5, 30)), "ccd": (0.6, 3.0, (20, 80)), LONG: (0.7, 1500.0, (900, 4000)),
               "kdl-lma": (0.8, 12000.0, (3, 10)), "two-bone": (1.0, 0.5, (1, 1))}
    d = synth.make_run(tmp_path / "run", problems=12, solvers=solvers)
    seen, failures = [], []
    real = plots.save_figure

    def inspect(fig, path, **kw):
        assert kw.get("dpi", 0) >= 96, path
        seen.append((path.name, [t.get_text() for t in fig.texts]))
        failures.extend(f"{path.name}: {f}" for f in _texts_readable(fig))
        return real(fig, path, **kw)

    monkeypatch.setattr(plots, "save_figure", inspect)
    assert plot_commands.main([str(d), "--formats", "png", "--no-report"]) == 0
    assert {"success.png", "time_distribution.png", "success_heatmap.png", "iterations.png"} <= {n for n, _ in seen}
    assert failures == []
    abbr = styles.short_label(LONG)
    assert abbr != LONG
    for name in ("success.png", "time_distribution.png", "success_heatmap.png"):
        notes = " ".join(t for n, texts in seen if n == name for t in texts)
        assert f"{abbr} = {LONG}" in notes, (name, notes)


def test_readable_thins_colliding_numeric_labels_and_keeps_category_labels():
    """readable() on a figure built to collide: 40 numeric ticks in a narrow panel are thinned until
    none overlap; small fonts are raised to 9 pt; the category labels of a spec axis are left as
    the figure set them (all of them)."""
    from ikbench.render import plots
    from ikbench.render.styles import matplotlib_modules

    _, plt = matplotlib_modules()
    fig, (a, b) = plt.subplots(1, 2, figsize=(4, 2.5))
    a.plot([10000, 14000], [0, 1])
    a.xaxis.set_major_locator(plt.MaxNLocator(40))
    a.tick_params(labelsize=6)
    assert _texts_readable(fig)                      # built to fail the check
    b.bar(range(3), [1, 2, 3])
    b.set_xticks(range(3), ["dls", "ccd", "auto#12ab"], rotation=90, fontsize=6)
    b._ikbench_categories = True
    plots.readable(fig)
    assert all(t.get_fontsize() >= plots.TICK_PT for t in a.get_xticklabels() + b.get_xticklabels())
    assert [t.get_text() for t in plots.tick_texts(b, "x")] == ["dls", "ccd", "auto#12ab"]
    shown = plots.tick_texts(a, "x")
    assert 1 < len(shown) < 40
    assert _texts_readable(fig) == []
    plt.close(fig)
