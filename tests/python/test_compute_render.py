"""The analysis library computes apart from what it renders: the gate's and compare's compute
functions return data that is checked here without rendering, each renderer is checked on a small
constructed input, and the one subprocess runner maps failures to ResultsError."""
import sys
from collections import Counter

import pandas as pd
import pytest

from ikbench.analysis import compare, gate, tune
from ikbench.render import compare_render, gate_render, tune_render
from ikbench.io import runner
from ikbench.analysis.cells import Dataset
from ikbench.analysis.gate_config import DEFAULT_CONFIG, load_config
from ikbench.io.results import ResultsError


def _cell(successes, iterations, n=200, time_us=100.0):
    return {"dof": 7, "effectors": 1, "goal": "position", "n": n, "attempted": n, "successes": successes,
            "limit_violations": 0, "statuses": {"converged": successes, "max-iterations": n - successes},
            "iterations_median": iterations, "iterations_p90": iterations * 2, "position_error_median": 1e-7,
            "orientation_error_median": 0.0, "fk_evals_mean": iterations + 1.0, "jacobian_evals_mean": float(iterations),
            "time_us_median": time_us, "time_per_eval_median_us": time_us / (2 * iterations + 1)}


def _datasets(run_successes=190, run_iterations=10):
    cells = {("chain7", "dls"): _cell(190, 10), ("chain7", "ccd"): _cell(150, 40), ("tree", "dls"): _cell(100, 20)}
    base = Dataset("baseline", "base", "quick", {}, cells)
    changed = dict(cells)
    changed[("chain7", "dls")] = _cell(run_successes, run_iterations)
    return base, Dataset("run", "run", "quick", {}, changed)


def test_gate_verdicts_are_data_for_a_constructed_regression():
    config = load_config(DEFAULT_CONFIG)
    base, run = _datasets(run_successes=170)
    rep = gate.compare(base, run, config, no_time=True)
    assert isinstance(rep, gate.GateReport) and not rep.passed
    by_cell = {(c.family, c.solver): c for c in rep.cells}
    bad = by_cell[("chain7", "dls")]
    assert bad.status == "REGRESSION" and bad.figures["success"].verdict == "regression"
    assert {c.status for k, c in by_cell.items() if k != ("chain7", "dls")} == {"same"}
    assert rep.counts == Counter({"REGRESSION": 1, "same": 2})
    # The findings name figures; their values are numbers, words are the renderer's.
    assert rep.regressions == [gate.Finding("chain7", "dls", "success")]
    v = rep.verdict(rep.regressions[0])
    assert (v.base, v.run) == (95.0, 85.0) and v.facts["successes"] == (190, 170) and v.facts["n"] == 200
    assert gate_render.finding_text(rep, rep.regressions[0]).startswith("chain7 x dls: success rate 95.0% -> 85.0%")
    assert rep.unit == (None, None) and "time not compared (--no-time)" in rep.notes


def test_gate_verdicts_same_and_improved_pass():
    config = load_config(DEFAULT_CONFIG)
    base, same = _datasets()
    assert gate.compare(base, same, config, no_time=True).passed
    _, better = _datasets(run_iterations=5)
    rep = gate.compare(base, better, config, no_time=True)
    assert rep.passed and rep.improvements
    assert {c.status for c in rep.cells if c.family == "chain7" and c.solver == "dls"} == {"improved"}
    assert rep["regressions"] == []  # the report's fields by name, as the history mode reads them


def test_gate_renderer_draws_the_cells_and_escapes_markdown():
    config = load_config(DEFAULT_CONFIG)
    base, run = _datasets(run_successes=170)
    run.cells[("a|b", "dls")] = _cell(10, 3, n=20)
    base.cells[("a|b", "dls")] = _cell(10, 3, n=20)
    rep = gate.compare(base, run, config, no_time=True)
    text = gate_render.format_report(base, run, config, rep, markdown=False)
    row = next(line for line in text.splitlines() if line.startswith("chain7") and " dls " in line)
    assert "85.0% (-10.0pp) [R]" in row and row.split()[-1] == "REGRESSION"
    assert text.rstrip().splitlines()[-1].startswith("FAIL: 1 regression(s)")
    md = gate_render.format_report(base, run, config, rep, markdown=True)
    assert "**REGRESSION**" in md and "a\\|b" in md
    only = gate_render.format_report(base, run, config, rep, markdown=False, only_changes=True)
    assert "tree " not in only and "chain7" in only


def _comparison(family):
    verdict = compare.PairVerdict(compare.Outcome.BETTER, compare.Direction.BETTER, compare.Direction.SAME)
    rows = pd.DataFrame([{"family": family, "solver": "dls", "verdict": verdict,
                          "solves_a": 10, "success_a": 0.5, "success_ci_low_a": 0.2, "success_ci_high_a": 0.8,
                          "solves_b": 10, "success_b": 1.0, "success_ci_low_b": 0.7, "success_ci_high_b": 1.0,
                          "success_diff_pp": 50.0, "success_p": 0.03, "time_median_a": 5.0, "time_median_b": 4.0,
                          "time_median_change": -0.2}])
    return compare.Comparison("A", "B", "runs", rows, 0.05, "us", [f"note about {family}"], 2)


def test_compare_renderers_on_a_constructed_comparison():
    res = _comparison("<script>alert(1)</script>")
    h = compare_render.format_html(res)
    assert "<script>alert" not in h and "&lt;script&gt;alert(1)&lt;/script&gt;" in h
    assert "class='better'" in h
    text = compare_render.format_text(_comparison("planar"))
    row = next(line for line in text.splitlines() if line.startswith("planar"))
    assert "50.0%" in row and "100.0%" in row and "+50.0 pp" in row and row.rstrip().endswith("better: success")
    md = compare_render.format_markdown(_comparison("x|y"))
    assert "x\\|y" in md and "**better: success**" in md


def test_tune_markdown_on_a_constructed_report():
    pts = {"dls:lambda=0.1": {"success": 1.0, "success_ci_low": 0.9, "success_ci_high": 1.0, "mean_time": 12.5},
           "dls:lambda=0.5": {"success": 0.8, "success_ci_low": 0.6, "success_ci_high": 0.9, "mean_time": 9.0}}
    rep = {"command": "ikbench tune ...", "grid": "dls:lambda={0.1,0.5}", "points": list(pts), "reference": None,
           "criterion": {"text": "success,mean_time", "meaning": "m"}, "criterion_figures": ["success", "mean_time"],
           "tuning_set": {"text": "t", "runs": []}, "evaluation_set": {"text": "e", "runs": []}, "threads": 1,
           "start_time": "s", "notes": [], "chosen": None, "ranking": list(pts), "excluded": {},
           "tuning": {"points": pts}}
    md = tune_render.markdown(rep, runner_ups=5)
    ranking = md[md.index("## Ranking on the tuning set"):].splitlines()
    rows = [line for line in ranking if line.startswith("|") and "`dls" in line]
    assert len(rows) == 2
    assert "100.00% [90.00, 100.00]" in rows[0] and "12.5" in rows[0]
    assert "80.00% [60.00, 90.00]" in rows[1] and "9.0" in rows[1]


def test_runner_maps_failures_to_results_errors(tmp_path):
    done = runner.run([sys.executable, "-c", "print('hello')"])
    assert done.returncode == 0 and done.output == "hello\n"
    lines = []
    runner.run([sys.executable, "-c", "print('a'); print('b')"], stream=lines.append, log_path=tmp_path / "x.log")
    assert lines == ["a", "b"] and (tmp_path / "x.log").read_text().endswith("a\nb\n")
    with pytest.raises(ResultsError, match=r"failed \(exit 3\): boom"):
        runner.run([sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"])
    with pytest.raises(ResultsError, match="did not finish within 0.5 s"):
        runner.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    with pytest.raises(ResultsError, match="cannot run"):
        runner.run([str(tmp_path / "no-such-binary")])
    with pytest.raises(ResultsError, match="not an executable file"):
        runner.find_harness(str(tmp_path / "no-such-binary"))


def test_tune_runs_the_harness_given_as_an_argument_through_the_runner(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "run", lambda args, **kw: calls.append((args, kw)))
    monkeypatch.setenv("IKBENCH_BIN", "/nonexistent/ikbench")  # not read: the harness is an argument
    suite = tmp_path / "s.json"
    suite.write_text("{}")
    exe = sys.executable  # any executable file stands in for the harness here
    assert tune.find_ikbench(exe) == str(__import__("pathlib").Path(exe).resolve())
    args, _, _ = tune.run_ikbench(exe, suite, 5, "dls", tmp_path / "out", 1, tmp_path / "log", False)
    (called, kw), = calls
    assert called == args and called[:2] == [exe, "run"] and called[called.index("--seed") + 1] == "5"
    assert kw["log_path"] == tmp_path / "log"


def test_solver_docs_render_the_listing_as_markdown_tables():
    from ikbench.render import solver_docs
    listing = {"solvers": [{"name": "dls", "description": "damped least squares",
                            "parameters": [{"name": "lambda", "type": "real", "default": "0.05", "range": "[0, inf)",
                                            "unit": "m", "help": "damping | factor"}]},
                           {"name": "ccd", "description": "cyclic coordinate descent", "parameters": []}],
               "common_parameters": [{"name": "restarts", "type": "integer", "default": "", "range": "[0, 1e6]",
                                      "unit": "", "help": "random restarts"}],
               "presets": [{"name": "auto", "spec": "dls-adaptive:restarts=5", "description": "the recipe"}]}
    md = solver_docs.markdown(listing)
    assert "### `dls`" in md and "No parameters of its own." in md
    assert "damping \\| factor" in md                 # a '|' in a help text does not end the cell
    assert "`(run's)`" in md                          # no default: the run's setting
    assert "| `auto` " in md and "`dls-adaptive:restarts=5`" in md
    assert md.count("### ") == 4                      # two backends, the common keys, the presets
