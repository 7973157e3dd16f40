"""The slow tail (ikbench.analysis.tail, `python3 -m ikbench tail`): quantiles against numpy's,
and each planted slow solve found with the cause its counts point at."""
import numpy as np
import pytest

import synth
from conftest import cli
from ikbench.analysis import figures, tail
from ikbench.io.results import load

FAMILY = "planar-position"


def _plant(rows):
    """Three slow solves of dls on planar-position: one slowed by the machine (ordinary iterations,
    100x the time), one by restarts, one by iterations; one of ccd ended by its budget."""
    cell = [r for r in rows if r["family"] == FAMILY and r["solver"] == "dls" and r["status"] == "converged"]
    its = int(cell[0]["iterations"])
    cell[0]["time_us"] = synth.num(float(cell[0]["time_us"]) * 100.0)
    cell[1].update(restarts="3", time_us=synth.num(float(cell[1]["time_us"]) * 60.0),
                   iterations=str(int(cell[1]["iterations"]) * 4))
    cell[2].update(iterations=str(its * 50), time_us=synth.num(float(cell[2]["time_us"]) * 40.0))
    ccd = [r for r in rows if r["family"] == FAMILY and r["solver"] == "ccd"]
    ccd[0].update(status="time-limit", converged="0", time_us=synth.num(1e6))
    return [(cell[k]["problem"]) for k in range(3)], ccd[0]["problem"]


@pytest.fixture
def planted(tmp_path):
    found = {}

    def edit(rows):
        for r in rows:
            r.setdefault("restarts", "0")
        found["dls"], found["ccd"] = _plant(rows)

    d = synth.make_run(tmp_path / "run", problems=60, edit_rows=edit)
    return d, found


def test_quantiles_are_numpys_and_the_summarys(planted):
    d, _ = planted
    run = load(d)
    report = tail.tail_report(run)
    summary = figures.summarize(run).set_index(["family", "solver"])
    s = run.solves
    for c in report.cells:
        t = s[(s.family == c.family) & (s.solver == c.solver) & ~s.status.isin(["unsupported", "invalid-input"])]
        t = t["time_us"].to_numpy(dtype=float)
        assert c.solves == len(t)
        for got, p in ((c.median_us, 0.5), (c.p99_us, 0.99), (c.p999_us, 0.999), (c.max_us, 1.0)):
            assert got == pytest.approx(np.quantile(t, p), rel=1e-12)
        assert summary.loc[(c.family, c.solver), "time_us_p999"] == pytest.approx(c.p999_us, rel=1e-12)
        assert c.over_threshold == int(np.sum(t > report.threshold_us))


def test_planted_slow_solves_and_their_causes(planted):
    d, found = planted
    report = tail.tail_report(load(d), fraction=0.05, families=[FAMILY], solvers=["dls", "ccd"])
    by = {(s.solver, s.problem): s for s in report.slowest}
    machine, restarts, iterations = (by[("dls", int(p))] for p in found["dls"])
    assert machine.cause == "machine" and machine.time_per_iteration_over_median > 50
    assert restarts.cause == "restarts" and restarts.attempts == 4
    assert iterations.cause == "iterations" and iterations.iterations_over_median > 10
    assert by[("ccd", int(found["ccd"]))].cause == "budget"
    dls = [s for s in report.slowest if s.solver == "dls"]
    assert [s.time_us for s in dls] == sorted((s.time_us for s in dls), reverse=True)
    assert len(dls) == 3  # 5 % of 60 solves
    assert {c.solver for c in report.cells} == {"dls", "ccd"} and {c.family for c in report.cells} == {FAMILY}
    ccd = next(c for c in report.cells if c.solver == "ccd")
    assert ccd.over_threshold == 1 and ccd.max_us == 1e6


def test_command_line(planted):
    d, found = planted
    p = cli("tail", d, "--solver", "dls", "--family", FAMILY, "--fraction", "0.05", check=0)
    assert "p99.9/med" in p.stdout and "machine" in p.stdout and "restarts" in p.stdout
    for args, word in ((["--fraction", "0"], "fraction"), (["--fraction", "1.5"], "fraction"),
                       (["--threshold-us", "-1"], "threshold"), (["--solver", "no-such-spec"], "no attempted solve")):
        p = cli("tail", d, *args, check=2)
        assert word in p.stderr, p.stderr
