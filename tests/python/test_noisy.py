"""A run whose run.json says load.noisy = true (the machine was loaded while it ran): marked in the
console summary and summary.csv, and compare and the gate give it no time verdict unless asked to
(--allow-noisy); success verdicts still apply. A run without a load object is unknown, not noisy."""
import csv
import json

import synth
from conftest import cli

from ikbench.analysis import compare, figures, gate
from ikbench.cli import gate_commands
from ikbench.io import results
from ikbench.render import tables

LOAD = {"start": 3.2, "end": 5.1, "samples": {"count": 12, "min": 2.9, "mean": 4.0, "max": 6.3},
        "runnable_max": 9, "cpu_mhz": 2400.0, "cores": 2, "noisy": True}


def noisy_run(directory, **kw):
    return synth.make_run(directory, run_json_extra={"load": LOAD}, **kw)


def test_the_load_is_read_defensively(tmp_path):
    quiet = results.load(synth.make_run(tmp_path / "old"))
    assert figures.run_load(quiet) is None and figures.run_noisy(quiet) is None and figures.noisy_text(quiet) is None
    run = results.load(noisy_run(tmp_path / "noisy"))
    assert figures.run_noisy(run) is True and "load average 3.2 -> 5.1" in figures.noisy_text(run)
    odd = results.load(synth.make_run(tmp_path / "odd", run_json_extra={"load": {"noisy": "yes"}}))
    assert figures.run_noisy(odd) is None  # not a boolean: unknown
    calm = results.load(synth.make_run(tmp_path / "calm", run_json_extra={"load": dict(LOAD, noisy=False)}))
    assert figures.run_noisy(calm) is False and figures.noisy_text(calm) is None


def test_a_noisy_run_is_marked_in_the_summary_and_summary_csv(tmp_path):
    d = noisy_run(tmp_path / "r")
    run = results.load(d)
    text = tables.summary_table(run)
    assert "NOISY RUN" in text and "load average 3.2 -> 5.1" in text
    path = figures.write_summary(run, n_resamples=50)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["noisy"] for r in rows} == {"1"}
    quiet = results.load(synth.make_run(tmp_path / "q"))
    assert "NOISY" not in tables.summary_table(quiet)


def test_compare_gives_no_time_verdict_on_a_noisy_run_unless_allowed(tmp_path):
    a = results.load(synth.make_run(tmp_path / "a", seed=1))
    b = results.load(noisy_run(tmp_path / "b", seed=1, time_scale=3.0))  # every solve 3 times slower
    allowed = compare.compare_runs(a, b, allow_noisy=True).rows
    assert (allowed["time_verdict"] == compare.Direction.WORSE).sum() >= 3  # the slow-down is found when asked for
    refused = compare.compare_runs(a, b)
    rows = refused.rows[[v.unsupported != ("B",) for v in refused.rows["verdict"]]]
    assert set(refused.rows["time_verdict"].dropna()) <= {compare.VERDICT_NOISY, compare.Direction.NA}
    assert not any("time" in v.figures(compare.Direction.BETTER) + v.figures(compare.Direction.WORSE)
                   for v in rows["verdict"])
    assert any("noisy run" in n for n in refused.notes)
    # success verdicts still apply: same seed, same successes here; with fewer successes, 'worse: success'
    c = results.load(noisy_run(tmp_path / "c", seed=1, solvers={"dls": (0.2, 1.0, (5, 30)),
                                                                "ccd": (0.6, 3.0, (20, 80)),
                                                                "two-bone": (1.0, 0.5, (1, 1))}))
    worse = compare.compare_runs(a, c).rows.set_index(["family", "solver"])
    assert worse.loc[("planar-position", "dls"), "success_verdict"] is compare.Direction.WORSE
    assert worse.loc[("planar-position", "dls"), "time_verdict"] == compare.VERDICT_NOISY
    # two specs of one noisy run
    spec = compare.compare_specs(b, "dls", "ccd")
    assert set(spec.rows["time_verdict"]) == {compare.VERDICT_NOISY}
    assert (compare.compare_specs(b, "dls", "ccd", allow_noisy=True).rows["time_verdict"]
            == compare.Direction.WORSE).all()


def test_compare_command_line_allow_noisy(tmp_path):
    a = synth.make_run(tmp_path / "a", seed=1)
    b = noisy_run(tmp_path / "b", seed=1, time_scale=3.0)
    out = cli("compare", a, b, check=0).stdout
    assert "noisy run" in out and "worse: time" not in out
    out = cli("compare", a, b, "--allow-noisy", check=0).stdout
    assert "worse: time" in out


def test_the_gate_compares_no_time_on_a_noisy_run_unless_allowed(tmp_path, capsys):
    base = synth.make_run(tmp_path / "base", seed=1)
    slow = noisy_run(tmp_path / "slow", seed=1)
    # one cell three times slower than in the baseline (the others keep the run's time unit): a time
    # regression
    meta = json.loads((slow / "run.json").read_text())
    lines = (slow / "solves.csv").read_text().splitlines()
    head = lines[0].split(",")
    ti, si, fi = head.index("time_us"), head.index("solver"), head.index("family")
    out = [lines[0]]
    for line in lines[1:]:
        f = line.split(",")
        if f[si] == "ccd" and f[fi] == "planar-position":
            f[ti] = repr(float(f[ti]) * 3)
        out.append(",".join(f))
    (slow / "solves.csv").write_text("\n".join(out) + "\n")
    synth.rewrite_manifest(slow)
    assert json.loads((slow / "run.json").read_text())["load"] == meta["load"]
    code = gate_commands.main(["compare", str(base), str(slow)])
    text = capsys.readouterr().out
    assert "noisy run" in text and code == 0
    code = gate_commands.main(["compare", str(base), str(slow), "--allow-noisy"])
    text = capsys.readouterr().out
    assert code == 1 and "ccd" in text
