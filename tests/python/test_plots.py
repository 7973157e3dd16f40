"""ikbench.plots (scripts/plot.py): what the plots contain, for one run and for runs overlaid."""
import json

import synth
from plot_check import check

from ikbench import plots


def test_one_run(tmp_path):
    d = synth.make_run(tmp_path / "run", problems=12)
    assert plots.main([str(d), "--formats", "svg"]) == 0
    assert check(d, [d], formats=("svg",)) == []
    index = json.loads((d / "plots" / "index.json").read_text())
    succ = next(p for p in index["plots"] if p["stem"] == "success_vs_dof")
    # the unsupported pose cell of two-bone is not drawn as 0 %: two-bone has one DOF point only
    assert succ["panels"][0]["ylabel"].startswith("success rate [%] (Wilson 95 %)")
    assert (d / "report.html").exists()
    # the checker does catch a plot that lacks a solver
    (d / "plots" / "iterations.svg").write_text((d / "plots" / "iterations.svg").read_text().replace(">ccd<", "><"))
    assert any("ccd" in f for f in check(d, [d], formats=("svg",)))


def test_runs_overlaid(tmp_path):
    a = synth.make_run(tmp_path / "a", problems=10)
    b = synth.make_run(tmp_path / "b", seed=2, problems=10, solvers={"dls": (0.5, 2.0, (5, 30))})
    out = tmp_path / "both"
    assert plots.main([str(a), str(b), "--out", str(out), "--formats", "svg"]) == 0
    index = json.loads((out / "plots" / "index.json").read_text())
    assert [r["label"] for r in index["runs"]] == ["a", "b"]
    it = next(p for p in index["plots"] if p["stem"] == "iterations")
    assert {"a: dls", "b: dls", "a: ccd"} <= set(it["panels"][0]["series"])
    assert "b: ccd" not in it["panels"][0]["series"]
    assert not (out / "report.html").exists()  # a report is of one run (python3 -m ikbench report RUN)


def test_bad_input(tmp_path, capsys):
    assert plots.main([str(tmp_path / "nothing")]) == 2
    assert "solves.csv" in capsys.readouterr().err
    d = synth.make_run(tmp_path / "a", problems=3)
    assert plots.main([str(d), str(d)]) == 2  # several runs need --out
