"""The data embedded in report.html: every number equals the analysis library's (figures.summarize,
rank_cells, robot_summary, curves, sweep), the viewer embeds what the size rules say, the figures
are valid plotly, and the page loads nothing from elsewhere."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import synth
from conftest import GRID_SPECS, REPO, external_references

from ikbench.analysis import curves, figures
from ikbench.render import report, report_viewer
from ikbench.io import results


@pytest.fixture(scope="module")
def page(rich_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("page") / "report.html"
    path, _ = report.write_report(rich_dir, out, report.Options(trace_problems=2, trace_head=3, trace_points=1))
    text = path.read_text(encoding="utf-8")
    return text, report.extract_data(text), results.load(rich_dir)


def same(a, b):
    """Equal values, JSON null for nan, 1e999 for inf."""
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return a is None
    if isinstance(b, (bool, np.bool_)):
        return a is bool(b)
    if isinstance(b, (int, float, np.integer, np.floating)):
        return a is not None and float(a) == float(b)
    return a == b


def rows(table):
    return [dict(zip(table["columns"], r)) for r in table["rows"]]


def test_summary_rows_equal_summarize_and_rank(page):
    _, data, run = page
    want = figures.summarize(run)  # ranked within each family
    got = rows(data["summary"])
    assert len(got) == len(want) == 2 * 6
    for g, w in zip(got, want.to_dict("records")):
        for k in report.SUMMARY_FIELDS:
            # an external solver's figures are columns of a run that has them only
            assert same(g[k], w.get(k, math.nan)), (g["family"], g["solver"], k, g[k], w.get(k))
    na = [g for g in got if not g["available"]]
    assert [(g["family"], g["solver"]) for g in na] == [("planar-pose", "two-bone")]
    assert na[0]["success_text"] == "n/a (unsupported)" and na[0]["success_rate"] is None


def test_texts_come_from_the_tables_module(page):
    from ikbench.render import tables

    _, data, run = page
    ranks = {(r["family"], r["solver"]): tables.fmt_rank(r) for r in figures.summarize(run).to_dict("records")}
    for g in rows(data["summary"]):
        assert g["rank_text"] == ranks[(g["family"], g["solver"])]
        if g["available"]:
            assert g["success_text"].startswith(tables.fmt_success(g["success_rate"], g["success_ci_low"],
                                                                   g["success_ci_high"]))
            assert g["time_median_text"].startswith(tables.fmt_num(g["time_us_median"], "time"))


def test_headline_names_the_tied_leaders_beside_kdl(page):
    _, data, run = page
    ranked = figures.summarize(run)  # ranked within each family
    verdicts = figures.family_leaders(ranked).set_index("family")
    for h in data["headline"]:
        part = ranked[ranked["family"] == h["family"]]
        v = verdicts.loc[h["family"]]
        assert [c["solver"] for c in h["leaders"]] == list(v["leaders"]) and h["verdict"] == v["verdict"]
        tied = part[part["tied_leader"]]
        assert {c["solver"] for c in h["leaders"]} == set(tied["solver"])
        assert all(c["rank"] == 1 and c["rank_text"] == ("=1" if len(tied) > 1 else "1") + f" of {h['ran']}"
                   for c in h["leaders"])
        best = part.set_index("solver").loc[h["leaders"][0]["solver"]]
        assert same(h["leaders"][0]["success_ci_low"], best["success_ci_low"])
        assert same(h["leaders"][0]["time_us_median_ci_high"], best["time_us_median_ci_high"])
        peer = part[part["solver"] == "kdl-lma"].iloc[0]
        assert h["peer"]["solver"] == "kdl-lma" and same(h["peer"]["rank"], peer["rank"])
        assert h["ran"] == int(part["available"].sum())
    chart = data["figures"]["headline"]
    names = {t["name"] for t in chart["data"]}
    assert {"tied leaders", "kdl-lma (peer)"} <= names
    leaders = [t for t in chart["data"] if t["name"] == "tied leaders"]
    assert len(leaders[0]["x"]) == sum(len(h["leaders"]) for h in data["headline"])


def test_headline_of_a_family_without_success_names_no_winner(tmp_path):
    solvers = {"gn": (0.0, 0.1, (1, 1)), "dls": (0.0, 1.0, (5, 30)), "kdl-lma": (0.0, 2.0, (3, 10))}
    d = synth.make_run(tmp_path / "r", problems=10, solvers=solvers, unsupported=(), traces=False)
    data = report.build(results.load(d), report.Options(resamples=100))
    for h in data["headline"]:
        assert h["verdict"] == "no success" and h["leaders"] == [] and h["ran"] == 3
        assert h["peer"]["rank_text"] == "no success"
    nowin = [t for t in data["figures"]["headline"]["data"] if t["name"].startswith("no winner")]
    assert len(nowin) == 1 and nowin[0]["x"] == [h["family"] for h in data["headline"]]


def test_robot_table_equals_robot_summary(page):
    _, data, run = page
    want = figures.robot_summary(run)
    assert {r["robot"] for r in data["robots"]} == {"planar2"}
    by = {r["solver"]: r for r in data["robots"]}
    for w in want.to_dict("records"):
        g = by[w["solver"]]
        for k in ("solves", "supported", "success_rate", "success_ci_low", "success_ci_high", "time_us_mean",
                  "time_us_median", "time_us_p99", "iterations_median", "rank"):
            assert same(g[k], w[k]), (w["solver"], k)
    ranks = [r["rank"] for r in data["robots"] if r["rank"] is not None]
    assert ranks == sorted(ranks)  # best first


def test_default_picks_are_best_four_plus_kdl(page):
    _, data, run = page
    ranked = figures.summarize(run)  # ranked within each family
    for fam, picks in data["defaults"].items():
        part = ranked[ranked["family"] == fam].sort_values("rank", kind="stable")
        best = part[part["rank"].notna()]["solver"].tolist()[:4]
        assert picks[:4] == best
        assert "kdl-lma" in picks


def test_convergence_curves_equal_the_curves_module(page):
    _, data, run = page
    convs = curves.convergence(run.traces, compact=True, time_points=report.CURVE_TIME_POINTS)
    figs = data["figures"]["convergence"]
    assert set(figs) == {c.family for c in convs}
    for c in convs:
        traces = [t for t in figs[c.family]["data"] if t["meta"] == c.solver]
        if c.sparse:
            assert all(t["mode"] == "markers" for t in traces)
            continue
        med = [t for t in traces if t.get("hovertemplate") and t["xaxis"] == "x"]
        assert len(med) == 1
        np.testing.assert_array_equal(med[0]["y"], report.sig(c.iteration[c.kinds[0]].q50))
        np.testing.assert_array_equal(med[0]["x"], c.iteration[c.kinds[0]].grid)
    assert data["families"][1]["kinds"] == ["position", "orientation"]


def test_time_ecdfs_equal_the_curves_module(page):
    _, data, run = page
    e = curves.time_ecdf(run.solves)
    for fam, fig in data["figures"]["ecdf"].items():
        for t in fig["data"]:
            if t["xaxis"] == "x2":  # all supported solves
                np.testing.assert_array_equal(t["x"], report.sig(e[(fam, t["meta"])]))
                assert t["y"][-1] == 100


def test_iterations_figure_equals_summarize(page):
    _, data, run = page
    s = figures.summarize(run)
    for fam, fig in data["figures"]["iterations"].items():
        med = fig["data"][0]
        for spec, y in zip(med["x"], med["y"]):
            w = s[(s["family"] == fam) & (s["solver"] == spec)].iloc[0]
            assert y == w["iterations_median"]


def test_sweep_block_equals_the_sweep_module(page):
    from ikbench.analysis import sweep

    _, data, run = page
    (blk,) = data["sweeps"]
    assert blk["name"] == "dls:lambda={0.01,0.1,0.5}"
    assert blk["axes"] == [{"key": "lambda", "values": ["0.01", "0.1", "0.5"]}]
    assert set(blk["figures"]) == {"all families", "planar-position", "planar-pose"}
    (g,) = sweep.grid_groups(run, "run")
    want = sweep.sweep_cells(g, [("run", run)])
    got = [r for r in rows(blk["cells"]) if r["family"] == "all families"]
    assert [r["cell"] for r in got] == GRID_SPECS
    for r, w in zip(got, want.to_dict("records")):
        assert same(r["success_rate"], w["success_rate"]) and same(r["time_us_mean_ci_low"], w["time_us_mean_ci_low"])


def test_every_figure_is_valid_plotly(page):
    import plotly.graph_objects as go

    _, data, _ = page
    figs = list(data["figures"]["convergence"].values()) + list(data["figures"]["ecdf"].values()) + \
        list(data["figures"]["iterations"].values()) + [f for b in data["sweeps"] for f in b["figures"].values()]
    assert len(figs) >= 7
    for f in figs:
        go.Figure(f)  # raises on an unknown attribute or a bad value


def test_viewer_embeds_the_first_problems_thinned(page):
    _, data, run = page
    v = data["viewer"]
    assert set(v["models"]) == {"m0"} and len(v["models"]["m0"]["joints"]) == 3
    tr = run.traces
    for fam, fd in v["families"].items():
        assert fd["mode"] == "trace"
        assert [p["problem"] for p in fd["problems"]] == [0, 1]  # --trace-problems 2
        for p in fd["problems"]:
            rec = run.problem(fam, p["problem"])
            assert p["goals"][0]["target_position"] == rec["goals"][0]["target_position"]
            for spec, sv in p["solves"].items():
                row = run.solves[(run.solves["family"] == fam) & (run.solves["problem"] == p["problem"]) &
                                 (run.solves["solver"] == spec)].iloc[0]
                assert sv["status"] == row["status"]
                if sv["trace"] is None:
                    assert sv["status"] == "unsupported"
                    continue
                t = tr[(tr["family"] == fam) & (tr["problem"] == p["problem"]) & (tr["solver"] == spec)]
                keep = kept(len(t), 3, 1)
                assert sv["trace"]["records"] == len(t)
                assert sv["trace"]["it"] == t["iteration"].to_numpy()[keep].tolist()
                assert report_viewer.trace_q(sv["trace"])[-1] == [float(x) for x in t["q"].iloc[-1].split()]
                assert sv["q"] == [float(x) for x in row["q"].split()]
    assert v["records"]["embedded"] < v["records"]["total"]
    assert data["embedding"] == {"trace_problems": 2, "trace_head": 3, "trace_points": 1,
                                 "clip_frames": report.DEFAULT_CLIP_FRAMES, "curve_digits": report.CURVE_DIGITS}


def kept(n, head, points):
    """The size rule, written out: all of the first `head` records, then every s-th with the
    smallest s that keeps at most `points` of the rest, and the last."""
    if n <= head + points:
        return list(range(n))
    s = 1
    while len(range(head, n, s)) > points:
        s += 1
    return sorted(set(range(head)) | set(range(head, n, s)) | {n - 1})


def test_thin_indices():
    for n, head, points in ((5, 10, 10), (501, 40, 40), (100, 3, 1), (81, 40, 40), (82, 40, 40), (0, 3, 3)):
        assert report.thin_indices(n, head, points).tolist() == kept(n, head, points), (n, head, points)
    assert len(report.thin_indices(501, 40, 40)) <= 40 + 40 + 1


def test_sequential_family_plays_as_a_clip(tmp_path):
    d = synth.make_run(tmp_path / "seq", problems=7, families=("planar-position",))
    lines = [json.loads(x) for x in (d / "problems.jsonl").read_text().splitlines()]
    for x in lines:
        x["sequential"] = True
    (d / "problems.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    meta = json.loads((d / "run.json").read_text())
    meta["families"][0]["sequential"] = True
    (d / "run.json").write_text(json.dumps(meta))
    synth.rewrite_manifest(d)
    run = results.load(d)
    _, data = report.write_report(run, tmp_path / "r.html", report.Options(clip_frames=5))
    fd = data["viewer"]["families"]["planar-position"]
    assert fd["mode"] == "clip" and [f["problem"] for f in fd["frames"]] == [0, 1, 2, 3, 4]
    dls = run.solves[(run.solves["solver"] == "dls") & (run.solves["problem"] < 5)]
    assert fd["solves"]["dls"]["q"] == [[float(x) for x in q.split()] for q in dls["q"]]
    assert fd["solves"]["dls"]["success"] == figures.success_mask(dls).tolist()


def test_page_is_self_contained(page):
    text, data, _ = page
    assert report.extract_script(text, "ikbench-plotly").count("plotly.js v") == 1  # the offline bundle, once
    assert len(text) < len(report.extract_script(text, "ikbench-data")) + 4_000_000  # both packed (gzip)
    assert external_references(text) == []
    assert '<body data-ikbench-ready="0">' in text  # the script sets "1" once the first screen is drawn
    assert 'id="summary-table"' in text and 'id="solve-viewer"' in text
    assert data["format"] == report.REPORT_FORMAT


def test_json_encoding():
    t = report.to_json({"a": [1.5, math.inf, -math.inf, math.nan], "s": "</script><!--", "n": np.array([1.0, np.nan])})
    assert "</" not in t and "<!--" not in t
    back = json.loads(t)
    assert back == {"a": [1.5, math.inf, -math.inf, None], "s": "</script><!--", "n": [1.0, None]}
    assert report.sig([123456.0, 0.000123456, 0.0, math.inf], 3).tolist() == [123000.0, 0.000123, 0.0, math.inf]


def test_command_line(tmp_path, rich_dir):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    out = tmp_path / "x" / "r.html"
    p = subprocess.run([sys.executable, "-m", "ikbench", "report", str(rich_dir), "--out", str(out),
                        "--trace-problems", "1"], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    assert str(out.resolve()) in p.stdout and out.exists()
    data = report.extract_data(out.read_text())
    assert all(len(f["problems"]) == 1 for f in data["viewer"]["families"].values())
    p = subprocess.run([sys.executable, "-m", "ikbench", "report", str(tmp_path / "missing")], capture_output=True,
                       text=True, env=env, timeout=600)
    assert p.returncode == 2 and "solves.csv" in p.stderr
    cli = os.environ.get("IKBENCH_CLI")
    if cli:  # the harness passes `ikbench report ...` to the analysis library
        out2 = tmp_path / "y.html"
        p = subprocess.run([cli, "report", str(rich_dir), "--out", str(out2)], capture_output=True, text=True,
                           env=env, timeout=600)
        assert p.returncode == 0, p.stderr
        assert out2.exists()


def test_a_password_in_the_runs_command_line_never_reaches_the_page(tmp_path):
    d = synth.make_run(tmp_path / "pw", problems=5)
    meta = json.loads((d / "run.json").read_text())
    meta["command_line"] = "ikbench run --history postgresql://alice:hunter2@db/ikb --suite quick"
    (d / "run.json").write_text(json.dumps(meta))
    out = tmp_path / "r.html"
    report.write_report(d, out)
    page = out.read_text()
    data = report.extract_data(page)   # the page's data is packed: searched unpacked
    assert "hunter2" not in page and "hunter2" not in json.dumps(data)
    assert "postgresql://alice:***@db/ikb" in data["run"]["command_line"]
    assert "postgresql://alice:***@db/ikb" in data["meta"]["command_line"]


def test_report_of_a_run_without_traces(tmp_path):
    d = synth.make_run(tmp_path / "nt", problems=5, traces=False)
    _, data = report.write_report(d, tmp_path / "r.html")
    assert data["figures"]["convergence"] == {}
    fd = data["viewer"]["families"]["planar-position"]
    assert all(s["trace"] is None for p in fd["problems"] for s in p["solves"].values())
