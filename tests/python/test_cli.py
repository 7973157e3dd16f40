"""`python3 -m ikbench summary` and the command line's exit statuses."""
import csv
import json

import synth
from conftest import cli

from ikbench.analysis import figures
from ikbench.io import results


def test_summary_prints_the_table_and_writes_summary_csv(run_dir):
    p = cli("summary", run_dir, "--write", "--table", "full", "--width", "0", check=0)   # 0: one table, unwrapped
    out = p.stdout
    header = next(line for line in out.splitlines() if line.startswith("family "))
    for col in ("success [95% CI]", "it.med", "it.p90", "pos.err", "ori.err", "t.med", "t.mean", "t.p99 [us]",
                "fk/solve", "J/solve"):
        assert col in header
    na = next(line for line in out.splitlines() if line.startswith("planar-pose") and " two-bone " in line)
    assert "n/a (unsupported)" in na
    dls = next(line for line in out.splitlines() if line.startswith("planar-position") and " dls " in line)
    assert "%" in dls and "[" in dls
    assert "solves/s" in out  # the throughput footer from run.json
    with open(run_dir / "summary.csv", newline="") as f:
        assert next(csv.reader(f)) == figures.SUMMARY_CSV_COLUMNS[:len(results.SUMMARY_COLUMNS)] + \
            figures.SUMMARY_EXTRA_COLUMNS
    assert f"summary: {run_dir / 'summary.csv'}" in out


def test_summary_robot_table(tmp_path):
    d = synth.make_run(tmp_path / "r")
    p = cli("summary", d, "--robots", check=0)
    assert "no family of this run comes from a robot" in p.stdout
    meta = json.loads((d / "run.json").read_text())
    meta["families"][0]["source"] = "robots/planar2.urdf"
    (d / "run.json").write_text(json.dumps(meta))
    p = cli("summary", d, check=0)
    assert "per robot" in p.stdout and "planar2" in p.stdout
    p = cli("summary", d, "--robots", check=0)
    assert not any(line.startswith("family ") for line in p.stdout.splitlines()) and p.stdout.startswith("per robot")


def test_bad_input_exits_2_with_one_line(tmp_path, run_dir):
    p = cli("summary", tmp_path / "none", check=2)
    assert len(p.stderr.strip().splitlines()) == 1 and "solves.csv" in p.stderr
    (run_dir / "run.json").write_text("{\"format\": ")
    p = cli("summary", run_dir, check=2)
    assert "run.json:1: malformed JSON" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    p = cli("nosuchcommand", check=2)
    p = cli("summary", check=2)
    assert "usage" in p.stderr


def test_incomplete_run_summary(tmp_path):
    d = synth.make_run(tmp_path / "r", complete=False)
    p = cli("summary", d, check=2)
    assert "incomplete" in p.stderr
    p = cli("summary", d, "--allow-incomplete", check=0)
    assert "INCOMPLETE" in p.stdout


def test_gate_through_the_package_cli(tmp_path, run_dir):
    p = cli("gate", "compare", run_dir, run_dir, "--no-time", check=0)
    assert "PASS" in p.stdout
    # the gate reads runs with ikbench.io.results: an incomplete version-2 run is bad input
    bad = synth.make_run(tmp_path / "bad", complete=False)
    p = cli("gate", "compare", run_dir, bad, check=2)
    assert "incomplete run" in p.stderr and p.stderr.startswith("regress.py: error:")
