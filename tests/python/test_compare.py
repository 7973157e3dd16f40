"""ikbench.analysis.compare: verdicts with tests, time units, one run's two specs, output files."""
import json
import re

import pytest
import synth
from conftest import cli

from ikbench.analysis import compare
from ikbench.render import compare_render, console
from ikbench.io import results

BASE = {"dls": (0.8, 1.0, (5, 30)), "ccd": (0.6, 3.0, (20, 80))}
# dls solves (almost) everything and needs fewer iterations per solve: a real difference
BETTER = {"dls": (1.0, 1.0, (3, 8)), "ccd": (0.6, 3.0, (20, 80))}


def _cell(result, family, solver):
    r = result.rows
    return r[(r.family == family) & (r.solver == solver)].iloc[0]


def test_a_real_difference_is_found(tmp_path):
    a = results.load(synth.make_run(tmp_path / "a", seed=1, problems=80, solvers=BASE))
    b = results.load(synth.make_run(tmp_path / "b", seed=2, problems=80, solvers=BETTER))
    res = compare.compare_runs(a, b)
    for fam in ("planar-position", "planar-pose"):
        c = _cell(res, fam, "dls")
        assert c["success_verdict"] is compare.Direction.BETTER and c["success_p"] < 0.05
        assert c["time_verdict"] is compare.Direction.BETTER and c["time_p"] < 0.05
        assert c["verdict"] == compare.PairVerdict(compare.Outcome.BETTER, compare.Direction.BETTER,
                                                   compare.Direction.BETTER)
        assert compare_render.verdict_text(c["verdict"]) == "better: success, time"
        assert c["success_b"] == 1.0 and c["success_diff_pp"] > 0
    # the other way round it is worse
    rev = compare.compare_runs(b, a)
    worse = _cell(rev, "planar-pose", "dls")["verdict"]
    assert worse.outcome is compare.Outcome.WORSE and worse.figures(compare.Direction.WORSE) == ("success", "time")
    assert compare_render.verdict_text(worse) == "worse: success, time"
    assert res.time_unit == "us"


def test_no_difference_between_samples_of_one_solver(tmp_path):
    a = results.load(synth.make_run(tmp_path / "a", seed=1, problems=80, solvers=BASE))
    b = results.load(synth.make_run(tmp_path / "b", seed=2, problems=80, solvers=BASE))
    res = compare.compare_runs(a, b)
    assert {v.outcome for v in res.rows["verdict"]} == {compare.Outcome.SAME}
    assert (res.rows["success_p"] >= 0.05).all() and (res.rows["time_p"] >= 0.05).all()
    assert any("different seeds" in n for n in res.notes)


def test_other_machine_is_compared_in_time_units(tmp_path):
    a = results.load(synth.make_run(tmp_path / "a", seed=1, problems=80, solvers=BASE))
    # the same solvers on a machine 2.5x slower: equal in time units
    slow = results.load(synth.make_run(tmp_path / "s", seed=2, problems=80, solvers=BASE, time_scale=2.5,
                                       cpu="Slow CPU"))
    res = compare.compare_runs(a, slow)
    assert res.time_unit == "time units"
    assert set(res.rows["time_verdict"]) == {compare.VERDICT_SAME}
    note = next(n for n in res.notes if "machines differ" in n)
    assert "time unit" in note
    ratio = float(note.split("B at x")[1].split(" ")[0])
    assert ratio == pytest.approx(2.5, rel=0.15)
    # the same 2.5x on the same machine is a real slowdown
    same = results.load(synth.make_run(tmp_path / "t", seed=2, problems=80, solvers=BASE, time_scale=2.5))
    res = compare.compare_runs(a, same)
    assert res.time_unit == "us"
    assert set(res.rows["time_verdict"]) == {compare.Direction.WORSE}
    # the same model name on other hardware (family, model) is another machine too
    ident = {"cpu": "Synthetic CPU 1", "hardware_threads": 2, "vendor": "AuthenticAMD", "stepping": 1}
    zen4 = results.load(synth.make_run(tmp_path / "z4", seed=2, problems=80, solvers=BASE, run_json_extra={
        "machine": dict(ident, family=25, model=17)}))
    zen5 = results.load(synth.make_run(tmp_path / "z5", seed=2, problems=80, solvers=BASE, time_scale=2.5,
                                       run_json_extra={"machine": dict(ident, family=26, model=2)}))
    assert zen5.cpu == "Synthetic CPU 1 (AuthenticAMD family 26 model 2 stepping 1)"
    res = compare.compare_runs(zen4, zen5)
    assert res.time_unit == "time units" and any("machines differ" in n for n in res.notes)
    assert set(res.rows["time_verdict"]) == {compare.VERDICT_SAME}
    # another thread count alone also switches to time units
    thr = results.load(synth.make_run(tmp_path / "u", seed=2, problems=80, solvers=BASE, time_scale=2.5, threads=1))
    res = compare.compare_runs(a, thr)
    assert res.time_unit == "time units" and any("thread counts differ" in n for n in res.notes)
    assert set(res.rows["time_verdict"]) == {compare.VERDICT_SAME}


def test_specs_of_one_run(tmp_path):
    run = results.load(synth.make_run(tmp_path / "a", problems=80, solvers={
        "ccd": BASE["ccd"], "dls:lambda=0.1": BASE["dls"], "dls:lambda=0.2": BASE["dls"]}))
    res = compare.compare_specs(run, "ccd", "dls:lambda=0.2")
    assert list(res.rows["solver"]) == ["ccd vs dls:lambda=0.2"] * 2
    assert set(res.rows["time_verdict"]) == {compare.Direction.BETTER}
    with pytest.raises(results.ResultsError, match="names several"):
        compare.compare_specs(run, "ccd", "dls")
    with pytest.raises(results.ResultsError, match="not in the run"):
        compare.compare_specs(run, "ccd", "nosuch")


def test_unsupported_cells_and_cells_of_one_run_only(tmp_path):
    a = results.load(synth.make_run(tmp_path / "a", problems=30))
    b = results.load(synth.make_run(tmp_path / "b", seed=2, problems=30,
                                    solvers={"dls": (0.9, 1.0, (5, 30)), "two-bone": (1.0, 0.5, (1, 1))}))
    res = compare.compare_runs(a, b)
    na = _cell(res, "planar-pose", "two-bone")["verdict"]
    assert na.outcome is compare.Outcome.NA and na.unsupported == ("A", "B")
    assert compare_render.verdict_text(na) == "n/a (A and B unsupported)"
    assert _cell(res, "planar-pose", "ccd")["verdict"] == compare.PairVerdict(compare.Outcome.ONLY_A)
    text = compare_render.format_text(res)
    assert "only in A" in text


def test_cli_outputs(tmp_path):
    a = synth.make_run(tmp_path / "a", seed=1, problems=40, solvers=BASE)
    b = synth.make_run(tmp_path / "b", seed=2, problems=40, solvers=BETTER)
    p = cli("compare", a, b, "--out", tmp_path / "cmp.md", check=0)
    assert "better" in p.stdout
    md = (tmp_path / "cmp.md").read_text()
    assert md.startswith("# ikbench compare") and re.search(r"^\| family +\| solver +\|", md, re.M) and "**better" in md
    cli("compare", a, b, "--out", tmp_path / "cmp.html", check=0)
    h = (tmp_path / "cmp.html").read_text()
    assert h.startswith("<!DOCTYPE html>") and "<style>" in h and "src=" not in h and "class='better'" in h
    p = cli("compare", a, "--specs", "dls", "ccd", check=0)
    assert "dls vs ccd" in p.stdout
    p = cli("compare", a, tmp_path / "missing", check=2)
    assert "missing" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    p = cli("compare", a, b, "--out", tmp_path / "cmp.txt", check=2)
    assert ".md or .html" in p.stderr


def test_incomplete_run_is_bad_input(tmp_path):
    a = synth.make_run(tmp_path / "a")
    b = synth.make_run(tmp_path / "b", complete=False)
    p = cli("compare", a, b, check=2)
    assert "incomplete run" in p.stderr
    meta = json.loads((b / "run.json").read_text())
    assert meta["complete"] is False
    p = cli("compare", a, b, "--allow-incomplete", check=0)
    assert "INCOMPLETE" in p.stdout


def console_cells(text, prefix="planar-"):
    """{(family, solver): the text of its cell} of a console comparison, whatever layout
    ikbench.render.console chose: a table row, or a names line ("family | solver") with the figures on the
    lines below it. Names broken over lines are joined back first (console.unwrap)."""
    cells, key = {}, None
    for line in console.unwrap(text).splitlines():
        if line.startswith(prefix) and " | " in line:
            key = tuple(line.split(" | "))
            cells[key] = ""
        elif line.startswith(prefix):
            key = None
            parts = line.split()
            cells[(parts[0], parts[1])] = line
        elif key is not None and line.startswith(" "):
            cells[key] += line + "\n"
        else:
            key = None
    return cells


def test_console_shows_significant_cells_in_120_columns_and_all_with_all(tmp_path):
    long_spec = "dls:lambda=0.05:max_step=0.5:restarts=20:time_budget_us=5000:max_iterations=300"
    base = dict(BASE, **{long_spec: (0.6, 3.0, (20, 80))})
    better = dict(BETTER, **{long_spec: (0.6, 3.0, (20, 80))})
    a = results.load(synth.make_run(tmp_path / "a", seed=1, problems=80, solvers=base))
    b = results.load(synth.make_run(tmp_path / "b", seed=2, problems=80, solvers=better))
    res = compare.compare_runs(a, b)
    significant = [v for v in res.rows["verdict"] if compare.is_significant(v)]
    quiet = [v for v in res.rows["verdict"] if not compare.is_significant(v)]
    assert significant and quiet  # both kinds, or the test shows nothing
    text = compare_render.format_text(res)
    table = console_cells(text)
    assert len(table) == len(significant)
    assert all("better" in c or "worse" in c or "mixed" in c for c in table.values())
    assert f"{len(quiet)} of {len(res.rows)} cells not shown" in text
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "\033[" not in text
    assert "B vs A: better / worse = B is better / worse than A" in text
    everything = compare_render.format_text(res, show_all=True)
    rows = list(console_cells(everything).items())
    assert len(rows) == len(res.rows) and "not shown" not in everything
    assert {k for k, _ in rows} == set(zip(res.rows["family"], res.rows["solver"]))   # every name whole
    assert max(len(line) for line in everything.splitlines()) <= 120
    # significant cells first
    first_quiet = next(i for i, (_, c) in enumerate(rows) if compare_render.SAME_TEXT in c)
    assert all(compare_render.SAME_TEXT in c for _, c in rows[first_quiet:])
    # colours: green better, red worse, and nothing else changes
    coloured = compare_render.format_text(res, color=True)
    assert "\033[32mbetter" in coloured and "\033[0m" in coloured
    assert compare_render._strip_ansi(coloured).splitlines()[3:] == text.splitlines()[3:]
    rev = compare_render.format_text(compare.compare_runs(b, a), color=True)
    assert "\033[31mworse" in rev


def test_cli_colour_is_off_off_a_terminal_and_all_lists_every_cell(tmp_path):
    a = synth.make_run(tmp_path / "a", seed=1, problems=40, solvers=BASE)
    b = synth.make_run(tmp_path / "b", seed=2, problems=40, solvers=BETTER)
    p = cli("compare", a, b, check=0)
    assert "\033[" not in p.stdout  # a pipe is not a terminal
    n_default = sum(line.startswith("planar-") for line in p.stdout.splitlines())
    p = cli("compare", a, b, "--all", "--no-color", check=0)
    n_all = sum(line.startswith("planar-") for line in p.stdout.splitlines())
    assert n_all == 4 and n_default < n_all


def test_html_colours_and_puts_significant_verdicts_first(tmp_path):
    a = results.load(synth.make_run(tmp_path / "a", seed=1, problems=80, solvers=BASE))
    b = results.load(synth.make_run(tmp_path / "b", seed=2, problems=80, solvers=BETTER))
    res = compare.compare_runs(a, b)
    h = compare_render.format_html(res)
    classes = [part.split("'")[0] for part in h.split("<tr class='")[1:]]
    data = [c for c in classes if c != "sep"]
    order = [compare._ORDER["n/a" if c == "na" else c] for c in data]
    assert order == sorted(order) and data[0] == "better" and "same" in data
    assert classes.index("sep") == data.index("same")  # the divider before the cells without a verdict
    assert "tr.better td.v" in h and "tr.worse td.v" in h  # the colours
    assert h.count("<tr class='") == len(res.rows) + 1
