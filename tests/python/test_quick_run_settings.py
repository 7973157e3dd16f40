"""On a real run of the quick suite (the harness, `ikbench run --suite quick`): every setting report.html's
per-solver table states is the value the spec ran under (run.json: the spec's parameters, the suite's
options where the spec leaves a key to the run), and the on-demand convergence figure of that run.
Skipped, saying so, without a built harness."""
import json
import subprocess

import pytest
from conftest import cli, harness_binary

from ikbench.render import console, report
from ikbench.analysis import family_figures, settings
from ikbench.io import results


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("quick") / "run"
    p = subprocess.run([harness_binary(), "run", "--suite", "quick", "--out", str(out), "--progress", "none",
                        "--no-summary"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def test_every_setting_of_every_spec_is_the_value_in_force(quick):
    meta = json.loads((quick / "run.json").read_text())
    opts = meta["suite"]["options"]
    run = results.load(quick)
    data = report.build(run, report.Options(trace_problems=1))
    sections = {s["spec"]: s for s in data["solver_sections"]}
    assert set(sections) == {s["spec"] for s in meta["solvers"]}
    for s in meta["solvers"]:
        sec = sections[s["spec"]]
        shown = dict(sec["parameters"])
        sources = dict(zip(shown, sec["parameter_sources"]))
        texts = dict(zip(shown, sec["parameter_texts"]))
        assert list(shown) == list(s["parameters"]) + list(settings.RUN_WIDE)
        for key, value in s["parameters"].items():
            if value is None:   # left to the run by the spec: the suite's option is in force
                assert key in settings.FROM_RUN, (s["spec"], key)
                assert shown[key] == opts[key] and sources[key] == "suite option", (s["spec"], key, shown[key])
            else:
                assert shown[key] == value and sources[key] == "spec", (s["spec"], key)
            assert texts[key] != "not recorded"
        for key in settings.RUN_WIDE:
            assert shown[key] == opts[key] and sources[key] == "suite option"
    # the quick suite sets 300 iterations and a 20-iteration stall window; auto's preset its own
    dls = dict(sections["dls"]["parameters"])
    assert (dls["max_iterations"], dls["stall_iterations"], dls["time_budget_us"]) == (300, 20, 50000)
    auto = dict(sections["auto"]["parameters"])
    assert (auto["max_iterations"], auto["stall_iterations"]) == (12, 4)
    # what the page shows: no "default (none)" where a value was in force
    page = report.render(data)
    assert "default (none)" not in page


def test_convergence_of_chosen_specs_on_a_real_run(quick, tmp_path):
    meta = json.loads((quick / "run.json").read_text())
    run = results.load(quick)
    sel = family_figures.select(run, ["chain7-pose"], ["dls", "kdl-lma"])
    data = family_figures.convergence_data(run, sel)
    traced = meta["trace"]["problems"]["chain7-pose"]
    for s in data.series:
        assert s.problems == sorted(traced) and s.traced == len(traced)
    assert {s.kind for s in data.series} == {"position", "orientation"}
    out = tmp_path / "c.png"
    p = cli("plot", "convergence", quick, "--family", "chain7-pose", "--solvers", "dls,kdl-lma", "--out", out,
            check=0)
    assert out.exists() and out.stat().st_size > 10_000
    # 3 of 80 problems traced: the note names the harness command that traces 30 of them
    assert f"only {len(traced)} of its 80 problems were traced" in p.stdout
    assert "ikbench run --suite quick --solvers dls,kdl-lma --trace-problems 30 --out " in console.unwrap(p.stdout)
