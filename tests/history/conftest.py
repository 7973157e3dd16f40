"""pytest setup for the history tests: `ikbench` from <repo>/python, synthetic runs from
tests/python/synth.py, and the store under test.

The store is an SQLite file in a temporary directory, or, when IKBENCH_HISTORY_PG names a
PostgreSQL server (a libpq connection URL, as tests/history/pg_cluster.py sets it for a throwaway
cluster), a fresh database on that server per test: the same tests run against both backends."""
import itertools
import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
for p in (str(REPO / "python"), str(REPO / "tests" / "python")):
    if p not in sys.path:
        sys.path.insert(0, p)

os.environ.setdefault("MPLBACKEND", "Agg")
collect_ignore = ["pg_cluster.py", "browser_test.py"]

PG = os.environ.get("IKBENCH_HISTORY_PG")
_counter = itertools.count()


def _pg_database(name):
    import psycopg2

    conn = psycopg2.connect(PG)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cur.execute(f'CREATE DATABASE "{name}"')
    conn.close()
    from urllib.parse import urlsplit

    u = urlsplit(PG)
    url = f"{u.scheme}://{u.netloc}/{name}" + (f"?{u.query}" if u.query else "")
    assert url.startswith(("postgresql://", "postgres://")), url
    return url


@pytest.fixture
def db(tmp_path):
    """A new, empty store: a path (SQLite) or a postgresql:// URL."""
    if PG:
        return _pg_database(f"ikbench_test_{os.getpid()}_{next(_counter)}")
    return str(tmp_path / "history.sqlite")


def sha(i):
    """A commit id for synthetic run i (unknown to git: such runs have no commit date)."""
    import hashlib

    return hashlib.sha1(f"commit {i}".encode()).hexdigest()


def synthetic_run(directory, i, *, time_scale=1.0, cpu="Synthetic CPU 1", solvers=None, p_dls=0.9, complete=True,
                  problems=20, dirty=False, suite="synthetic"):
    """Synthetic run number i of `suite`: commit sha(i), start time i minutes after a fixed date."""
    import synth

    solvers = solvers or {"dls": (p_dls, 1.0, (5, 30)), "ccd": (0.6, 3.0, (20, 80)), "two-bone": (1.0, 0.5, (1, 1))}
    return synth.make_run(directory, seed=100 + i, problems=problems, solvers=solvers, time_scale=time_scale,
                          cpu=cpu, complete=complete, suite=suite, run_json_extra={
                              "git_revision": sha(i) + ("-dirty" if dirty else ""),
                              "start_time": f"2026-01-01T{i // 60:02d}:{i % 60:02d}:00Z",
                              "load": {"start": 0.5, "end": 0.6, "cores": 2, "noisy": False}})


def write_gbench(directory, scale=1.0, name="bench_kinematics.json"):
    doc = {"context": {"date": "2026-01-01T00:00:00+00:00", "num_cpus": 2, "library_build_type": "release"},
           "benchmarks": []}
    for rep, t in enumerate((100.0, 104.0, 98.0)):
        doc["benchmarks"].append({"name": "ForwardKinematics/dof:7", "run_name": "ForwardKinematics/dof:7",
                                  "run_type": "iteration", "repetitions": 3, "repetition_index": rep, "threads": 1,
                                  "iterations": 1000, "real_time": t * scale, "cpu_time": t * scale * 0.9,
                                  "time_unit": "ns", "dof": 7})
    doc["benchmarks"].append({"name": "ForwardKinematics/dof:7_mean", "run_name": "ForwardKinematics/dof:7",
                              "run_type": "aggregate", "aggregate_name": "mean", "repetitions": 3, "threads": 1,
                              "iterations": 3, "real_time": 100.666 * scale, "cpu_time": 90.6 * scale,
                              "time_unit": "ns"})
    (Path(directory) / name).write_text(json.dumps(doc))


def write_throughput(directory, per_s=1000.0):
    doc = {"solver": "dls", "points": [
        {"path": "scalar", "threads": 1, "solves": 1000, "solves_per_s": per_s, "converged_per_s": per_s * 0.9},
        {"path": "scalar", "threads": 2, "solves": 1000, "solves_per_s": 1.8 * per_s, "converged_per_s": per_s * 1.6}]}
    (Path(directory) / "throughput.json").write_text(json.dumps(doc))


@pytest.fixture(scope="session")
def step_runs(tmp_path_factory):
    """12 runs of successive commits; from the 7th on, dls is 1.5x slower, dls's success drops
    and the Google Benchmark FK time is 1.3x."""
    base = tmp_path_factory.mktemp("steps")
    out = []
    for i in range(12):
        d = synthetic_run(base / f"r{i:02d}", i, solvers={"dls": (0.95 if i < 6 else 0.5, 1.0 if i < 6 else 1.5,
                                                                  (5, 30)),
                                                          "ccd": (0.6, 3.0, (20, 80))}, problems=40)
        write_gbench(d, 1.0 if i < 6 else 1.3)
        write_throughput(d, 1000.0 + i)
        out.append(d)
    return out


def run_cli(capsys, *argv):
    """`ikbench history ARGV...` in this process: (exit status, stdout, stderr); argparse's refusals
    included."""
    from ikbench.cli.main import main

    try:
        rc = main(["history", *argv])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def one_line_error(rc, err):
    """True for a refusal as the command line makes one: exit status 2, one line, no traceback."""
    lines = [ln for ln in err.splitlines() if ln.startswith("ikbench history: error:")]
    return rc == 2 and len(lines) == 1 and "Traceback" not in err


@pytest.fixture
def sqlite_db(tmp_path):
    """A new SQLite store's path, for the tests of what a store's file is (both backends' runs)."""
    return str(tmp_path / "store" / "history.sqlite")
