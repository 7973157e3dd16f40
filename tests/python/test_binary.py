"""The library against a real run of the `ikbench` binary: the column constants equal the headers
it writes, its run loads, and (format version 2) every solve it reports verifies.

The binary is $IKBENCH_CLI (ctest sets it to the built harness), else build/release/benchmarks/
ikbench of this repository; without either the tests are skipped, saying so."""
import csv
import gzip
import os
import subprocess

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, cli, harness_binary

from ikbench.analysis import figures, verify
from ikbench.render import verify_render
from ikbench.io import results



@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    exe = harness_binary()
    out = tmp_path_factory.mktemp("tiny") / "run"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    p = subprocess.run([exe, "run", "--chain", "3", "--samples", "4", "--solvers", "dls", "--threads", "1",
                        "--out", str(out), "--progress", "none"], capture_output=True, text=True, timeout=300,
                       env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def _header(path):
    """The header of a CSV file of a run: NAME.gz (the binary's files are compressed), else NAME."""
    gz = str(path) + ".gz"
    with (gzip.open(gz, "rt", newline="") if os.path.exists(gz) else open(path, newline="")) as f:
        return next(csv.reader(f))


def test_column_constants_equal_the_binarys_headers(tiny_run):
    run = results.load(tiny_run)
    v = run.format_version
    assert _header(tiny_run / "solves.csv") == results.SOLVE_COLUMNS_BY_VERSION[v]
    assert _header(tiny_run / "traces.csv") == results.TRACE_COLUMNS_BY_VERSION[v]
    if v >= 2:
        assert _header(tiny_run / "solutions.csv") == results.SOLUTION_COLUMNS
    assert results.SOLVE_COLUMNS[:len(results.SOLVE_COLUMNS_V1)] == results.SOLVE_COLUMNS_V1


def test_the_binarys_run_loads_and_summarizes(tiny_run):
    run = results.load(tiny_run)
    assert len(run.solves) == 12 and set(run.solves["solver"]) == {"dls"}
    assert len(run.traces) > 0
    s = figures.summarize(run, n_resamples=200)
    assert len(s) == 3 and s["available"].all()
    header = _header(tiny_run / "summary.csv") if (tiny_run / "summary.csv").exists() else None
    if header == results.SUMMARY_COLUMNS[:15]:
        # the harness's own summary (format version 1): the point figures agree where the
        # definitions do (every solve supported and within limits)
        cpp = pd.read_csv(tiny_run / "summary.csv", float_precision="round_trip")
        m = s.merge(cpp, on=["family", "solver"], suffixes=("", "_cpp"))
        for c in ("iterations_median", "iterations_p90", "time_us_median", "time_us_p90", "time_us_mean",
                  "fk_evals_mean", "position_error_median"):
            np.testing.assert_allclose(m[c], m[c + "_cpp"], rtol=1e-9)
    p = cli("summary", tiny_run, "--write", check=0)
    assert "chain3-position" in p.stdout
    assert _header(tiny_run / "summary.csv") == figures.SUMMARY_CSV_COLUMNS


def test_the_binarys_solves_verify(tiny_run):
    run = results.load(tiny_run)
    if run.format_version < 2:
        pytest.skip("the binary writes format version 1 (no models.json, problems.jsonl, q): nothing to verify")
    report = verify.verify_run(run)
    assert report.disagreements.empty, verify_render.format_report(report)
    assert report.checked == len(run.solves)
    cli("verify", tiny_run, check=0)


def test_files_of_a_run_share_the_umasks_mode(tmp_path):
    """Every file of a run directory (the harness's and summary.csv, written by the analysis
    library) gets the mode the umask gives a new file: none is private while the others are not."""
    exe = harness_binary()
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    umask = 0o027  # not the usual 022, so that a mode chosen by the writer cannot match by chance

    def with_umask():
        os.umask(umask)

    p = subprocess.run([exe, "run", "--chain", "3", "--samples", "3", "--solvers", "dls", "--threads", "1",
                        "--trace-problems", "1", "--out", str(out), "--progress", "none"], capture_output=True,
                       text=True, timeout=300, env=env, preexec_fn=with_umask)
    assert p.returncode == 0, p.stdout + p.stderr
    files = sorted(f for f in out.iterdir() if f.is_file() and not f.name.startswith("."))
    names = {f.name for f in files}
    assert {"run.json", "solves.csv.gz", "traces.csv.gz", "summary.csv"} <= names, names
    modes = {f.name: oct(f.stat().st_mode & 0o777) for f in files}
    assert set(modes.values()) == {oct(0o666 & ~umask)}, modes
