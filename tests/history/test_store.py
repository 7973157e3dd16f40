"""The history store and its command line: add, list, show, trend, changes, export/import, schema
versions, bad input. Runs against SQLite, or PostgreSQL under tests/history/pg_cluster.py."""
import csv
import gzip
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO, sha, synthetic_run, write_gbench, write_throughput
from ikbench.analysis import figures
from ikbench.io import results
from ikbench.cli.main import main
from ikbench.io import store_exchange as exchange, store_queries as queries, store as store_mod
from ikbench.analysis import series
from ikbench.io.store import open_store


def run_cli(capsys, *argv):
    try:
        rc = main(["history", *argv])
    except SystemExit as e:   # argparse's errors
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_add_list_show(db, tmp_path, capsys):
    d = synthetic_run(tmp_path / "a", 1)
    write_gbench(d)
    write_throughput(d)
    rc, out, err = run_cli(capsys, "add", str(d), "--db", db)
    assert rc == 0, err
    assert "added run 1" in out and "1 Google Benchmark files" in out and "throughput.json" in out
    rc, out, _ = run_cli(capsys, "add", str(d), "--db", db)
    assert rc == 0 and "already run 1" in out
    rc, out, _ = run_cli(capsys, "list", "--db", db)
    assert rc == 0 and sha(1)[:10] in out and "Synthetic CPU 1" in out and "1 runs" in out
    rc, out, _ = run_cli(capsys, "show", sha(1)[:8], "--db", db)
    assert rc == 0 and "planar-position" in out and "dls" in out and "bench_kinematics.json (gbench)" in out
    rc, out, _ = run_cli(capsys, "add", str(d), "--db", db, "--replace")
    assert rc == 0 and "added run" in out
    with open_store(db) as s:
        assert len(queries.runs(s)) == 1


def test_stored_figures_are_the_summary(db, tmp_path):
    d = synthetic_run(tmp_path / "a", 2)
    main(["history", "add", str(d), "--db", db])
    summary = figures.summarize(results.load(d)).set_index(["family", "solver"])
    with open_store(db) as s:
        pts = queries.points(s, source="cell")
        cells = {(r["family"], r["solver"]): r for r in s.query("SELECT * FROM cells")}
    assert len(cells) == len(summary)
    for fig, lo, hi in (("time_us_median", "time_us_median_ci_low", "time_us_median_ci_high"),
                        ("success_rate", "success_ci_low", "success_ci_high"), ("time_us_mean", None, None)):
        got = pts[pts["figure"] == fig].set_index(["family", "solver"])
        avail = summary[summary["available"]]
        assert set(got.index) == set(avail.index)
        for k, row in avail.iterrows():
            assert got.loc[k, "value"] == row[fig]
            if lo:
                assert got.loc[k, "ci_low"] == row[lo] and got.loc[k, "ci_high"] == row[hi]
    # the n/a cell (two-bone on pose problems) has counts and no figures
    assert cells[("planar-pose", "two-bone")]["supported"] == 0
    assert not ((pts["family"] == "planar-pose") & (pts["solver"] == "two-bone")).any()
    p90 = pts[(pts["figure"] == "time_us_p90") & (pts["solver"] == "dls")]
    assert (p90["ci_low"] <= p90["value"]).all() and (p90["value"] <= p90["ci_high"]).all()
    sr = pts[(pts["figure"] == "success_rate")].iloc[0]
    assert sr["n"] == 20 and 0 <= sr["successes"] <= 20


def test_gbench_and_throughput_points(db, tmp_path):
    d = synthetic_run(tmp_path / "a", 3)
    write_gbench(d, 2.0)
    write_throughput(d, 500.0)
    main(["history", "add", str(d), "--db", db])
    with open_store(db) as s:
        g = queries.points(s, source="gbench", figure="real_time_ns").iloc[0]
        assert g["family"] == "gbench:bench_kinematics" and g["solver"] == "ForwardKinematics/dof:7"
        assert g["value"] == 200.0 and g["ci_low"] == 196.0 and g["ci_high"] == 208.0 and g["n"] == 3
        t = queries.points(s, source="throughput", figure="solves_per_s")
        assert sorted(t["value"]) == [500.0, 900.0]
        assert len(s.query("SELECT * FROM gbench")) == 4
        doc = s.query("SELECT body FROM documents WHERE file = 'throughput.json'")[0]["body"]
        assert json.loads(doc)["solver"] == "dls"


def test_gbench_aggregates_only(tmp_path):
    """A file of --benchmark_report_aggregates_only: its median aggregate is the point (no interval);
    the mean and the standard deviation are not, and a benchmark with repetitions keeps their median."""
    from ikbench.analysis.record import gbench_rows
    agg = {"run_name": "Solve/x", "run_type": "aggregate", "repetitions": 5, "threads": 1, "iterations": 5,
           "time_unit": "us", "aggregate_unit": "time", "solutions": 4.0}
    doc = {"context": {}, "benchmarks": [
        dict(agg, name="Solve/x_mean", aggregate_name="mean", real_time=2.0, cpu_time=1.5),
        dict(agg, name="Solve/x_median", aggregate_name="median", real_time=1.8, cpu_time=1.4),
        dict(agg, name="Solve/x_stddev", aggregate_name="stddev", real_time=0.3, cpu_time=0.1),
        dict(agg, name="Solve/x_cv", aggregate_name="cv", aggregate_unit="percentage", real_time=0.1, cpu_time=0.1)]}
    rows, points = gbench_rows("bench_analytic.json", doc)
    got = {p["figure"]: p for p in points}
    assert len(rows) == 4 and set(got) == {"real_time_ns", "cpu_time_ns", "counter:solutions"}
    assert got["cpu_time_ns"]["value"] == 1400.0 and got["real_time_ns"]["value"] == 1800.0
    assert got["cpu_time_ns"]["ci_low"] is None and got["counter:solutions"]["value"] == 4.0
    d = tmp_path / "g"
    d.mkdir()
    write_gbench(d)
    rows, points = gbench_rows("bench_kinematics.json", json.loads((d / "bench_kinematics.json").read_text()))
    real = [p for p in points if p["figure"] == "real_time_ns"][0]
    assert real["value"] == 100.0 and real["n"] == 3


def test_machine_identity_separates_series(db, tmp_path, capsys):
    for i, cpu in enumerate(["CPU A", "CPU B"]):
        main(["history", "add", str(synthetic_run(tmp_path / f"r{i}", 10 + i, cpu=cpu)), "--db", db])
    capsys.readouterr()
    with open_store(db) as s:
        ms = queries.machines(s)
        assert len(ms) == 2
        key_b = ms[ms["label"].str.contains("CPU B")]["key"].iloc[0]
    rc, out, _ = run_cli(capsys, "trend", "--family", "planar-position", "--solver", "dls", "--db", db)
    assert rc == 0 and out.count("time_us_median of planar-position x dls") == 2
    rc, out, _ = run_cli(capsys, "trend", "--family", "planar-position", "--solver", "dls", "--machine", key_b[:6],
                         "--db", db)
    assert rc == 0 and out.count("time_us_median of") == 1 and key_b in out
    rc, _, err = run_cli(capsys, "list", "--machine", "no-such-machine", "--db", db)
    assert rc == 2 and "no machine identity" in err


def test_incomplete_run_refused(db, tmp_path, capsys):
    d = synthetic_run(tmp_path / "a", 4, complete=False)
    rc, out, err = run_cli(capsys, "add", str(d), "--db", db)
    assert rc == 2 and str(d) in err and "incomplete" in err and "--resume" in err


def test_bad_inputs(db, tmp_path, capsys):
    rc, _, err = run_cli(capsys, "add", str(tmp_path), "--db", db)
    assert rc == 2 and "not a results directory" in err
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    rc, _, err = run_cli(capsys, "list", "--db", str(junk))
    assert rc == 2 and "junk.sqlite" in err and "not an SQLite database" in err
    rc, _, err = run_cli(capsys, "list", "--db", str(tmp_path / "absent.sqlite"))
    assert rc == 2 and "no such history store" in err
    main(["history", "add", str(synthetic_run(tmp_path / "a", 5)), "--db", db])
    capsys.readouterr()
    rc, _, err = run_cli(capsys, "trend", "--family", "planar-position", "--solver", "nope", "--db", db)
    assert rc == 2 and "no point" in err and "'nope'" in err
    rc, _, err = run_cli(capsys, "show", "does-not-exist", "--db", db)
    assert rc == 2 and "does-not-exist" in err
    rc, _, err = run_cli(capsys, "changes", "--alpha", "2", "--db", db)
    assert rc == 2 and "--alpha" in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    rc, _, err = run_cli(capsys, "import", str(bad), "--db", db)
    assert rc == 2 and "bad.json" in err and "not a history export" in err


def test_command_line_exit_status_without_traceback(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    p = subprocess.run([sys.executable, "-m", "ikbench", "history", "add", str(tmp_path / "none"), "--db",
                        str(tmp_path / "h.sqlite")], capture_output=True, text=True, env=env)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "none" in p.stderr


def test_trend_and_changes_find_the_step(db, step_runs, tmp_path, capsys):
    rc, out, err = run_cli(capsys, "add", *map(str, step_runs), "--db", db)
    assert rc == 0, err
    png, html = tmp_path / "t.png", tmp_path / "t.html"
    rc, out, _ = run_cli(capsys, "trend", "--family", "planar-position", "--solver", "dls", "--db", db,
                         "--out", str(png))
    assert rc == 0 and png.stat().st_size > 1000
    lines = [ln for ln in out.splitlines() if ln.startswith(sha(6)[:10])]
    assert lines and "%" in lines[0] and "p=" in lines[0], out
    rc, out, _ = run_cli(capsys, "trend", "--family", "gbench:bench_kinematics", "--solver", "ForwardKinematics/dof:7",
                         "--figure", "real_time_ns", "--db", db, "--out", str(html))
    assert rc == 0 and "+30.0 %" in out and "<html" in html.read_text()
    with open_store(db) as s:
        ch = series.changes(s)
    got = {(r.family, r.solver, r.figure): r for r in ch.itertuples()}
    t = got[("planar-position", "dls", "time_us_median")]
    assert t.commit == sha(6)[:10] and t.regression and t.step_low > 0.4 and t.step_high > t.step > t.step_low
    s_ = got[("planar-position", "dls", "success_rate")]
    assert s_.commit == sha(6)[:10] and s_.scale == "proportion" and s_.step < -0.2 and s_.regression
    g = got[("gbench:bench_kinematics", "ForwardKinematics/dof:7", "real_time_ns")]
    assert g.commit == sha(6)[:10] and g.step == pytest.approx(0.3)
    # half the cells stepped at once: the runs' speed factors step there too (a step of the whole
    # run, reported as run_speed), and are measured within the segments, so dls's step stays
    assert got[("*", "*", "run_speed")].commit == sha(6)[:10]
    with open_store(db) as s:
        raw = series.changes(s, raw=True)   # the synthetic runs have no machine noise to take out
    assert not any(r.solver == "ccd" and r.figure.startswith("time") for r in raw.itertuples())   # ccd did not change
    assert ("planar-position", "dls", "time_us_median") in {(r.family, r.solver, r.figure) for r in raw.itertuples()}
    rc, out, _ = run_cli(capsys, "changes", "--regressions", "--db", db)
    assert rc == 0 and sha(6)[:10] in out and "worse" in out and "better" not in out.split("\n", 2)[2]


def test_export_import_round_trip(db, step_runs, tmp_path, capsys):
    main(["history", "add", *map(str, step_runs[:3]), "--db", db])
    with open_store(db) as s:
        s.add_skipped(sha(99), "build failed", detail="error: ...")
    out = tmp_path / "h.json"
    rc, _, err = run_cli(capsys, "export", "--format", "json", "--out", str(out), "--db", db)
    assert rc == 0, err
    copy = str(tmp_path / "copy.sqlite")
    rc, text, _ = run_cli(capsys, "import", str(out), "--db", copy)
    assert rc == 0 and "3 runs added" in text
    with open_store(db) as a, open_store(copy) as b:
        ea, eb = exchange.export_json(a), exchange.export_json(b)
    assert ea["records"] == eb["records"] and len(eb["skipped"]) == 1
    rc, text, _ = run_cli(capsys, "import", str(out), "--db", copy)
    assert rc == 0 and "0 runs added, 3 already present" in text, (rc, text, _)
    rc, text, _ = run_cli(capsys, "export", "--format", "csv", "--db", db)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows and set(exchange.CSV_COLUMNS) == set(rows[0])
    with open_store(db) as s:
        assert len(rows) == len(queries.points(s))


def test_export_gzip_round_trip(db, step_runs, tmp_path, capsys):
    """export --out FILE.json.gz writes a reproducible gzip stream (the same bytes twice) that import
    and the document tables read as the plain export; a damaged one is refused naming the file."""
    main(["history", "add", *map(str, step_runs[:2]), "--db", db])
    plain, gz, gz2 = tmp_path / "h.json", tmp_path / "h.json.gz", tmp_path / "again.json.gz"
    for out in (plain, gz, gz2):
        rc, _, err = run_cli(capsys, "export", "--format", "json", "--slim", "--out", str(out), "--db", db)
        assert rc == 0, err
    assert gz.read_bytes()[:2] == b"\x1f\x8b" and gz.read_bytes() == gz2.read_bytes()
    assert gzip.decompress(gz.read_bytes()) == plain.read_bytes()
    assert exchange.read_export(gz) == exchange.read_export(plain)
    copy = str(tmp_path / "copy.sqlite")
    rc, text, _ = run_cli(capsys, "import", str(gz), "--db", copy)
    assert rc == 0 and "2 runs added" in text
    bad = tmp_path / "cut.json.gz"
    bad.write_bytes(gz.read_bytes()[:len(gz.read_bytes()) // 2])
    rc, _, err = run_cli(capsys, "import", str(bad), "--db", copy)
    assert rc == 2 and "cut.json.gz" in err and "truncated" in err


def test_schema_version_and_migration(db, tmp_path, monkeypatch):
    main(["history", "add", str(synthetic_run(tmp_path / "a", 7)), "--db", db])
    with open_store(db) as s:
        assert s.version() == store_mod.SCHEMA_VERSION
        n = len(s.query("SELECT * FROM points"))
    # a later schema: one more migration; opening the old store applies it and keeps the data
    later = store_mod.MIGRATIONS + [["ALTER TABLE runs ADD COLUMN note {TEXT}",
                                     "CREATE INDEX runs_commit ON runs (git_commit)"]]
    monkeypatch.setattr(store_mod, "MIGRATIONS", later)
    with open_store(db) as s:
        assert s.version() == len(later)
        assert len(s.query("SELECT * FROM points")) == n
        assert s.query("SELECT note FROM runs")[0]["note"] is None
    # that store is newer than this ikbench: refused, not misread
    monkeypatch.setattr(store_mod, "MIGRATIONS", later[:-1])
    with pytest.raises(store_mod.HistoryError, match="newer than this ikbench"):
        open_store(db)


def test_describe_db_hides_passwords():
    assert store_mod.describe_db("postgresql://bob:s3cret@host/db") == "postgresql://bob:***@host/db"
    assert "s3cret" not in store_mod.describe_db("postgresql://host/db?password=s3cret&sslmode=require")
    assert store_mod.describe_db("results/history.sqlite") == "results/history.sqlite"


def test_backend_under_test(db):
    with open_store(db) as s:
        assert s.kind == ("postgresql" if os.environ.get("IKBENCH_HISTORY_PG") else "sqlite")
        assert s.version() == store_mod.SCHEMA_VERSION


@pytest.mark.skipif(not os.path.isfile(os.environ.get("IKBENCH_CLI", "")),
                    reason="IKBENCH_CLI (the built harness) is not set or not built")
def test_harness_run_history_and_forwarding(db, tmp_path):
    cli = os.environ["IKBENCH_CLI"]
    out = tmp_path / "run"
    p = subprocess.run([cli, "run", "--suite", "quick", "--solvers", "dls,ccd", "--threads", "2", "--no-trace",
                        "--progress", "none", "--no-summary", "--out", str(out), "--history", db],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "history: added run" in p.stdout
    p = subprocess.run([cli, "history", "show", str(out), "--db", db], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "chain6-position" in p.stdout and "machine" in p.stdout, p.stderr
    p = subprocess.run([cli, "history", "add", str(tmp_path / "nope"), "--db", db], capture_output=True, text=True)
    assert p.returncode == 2 and "nope" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run([cli, "run", "--suite", "quick", "--shard", "1/2", "--out", str(tmp_path / "s"), "--history",
                        db], capture_output=True, text=True)
    assert p.returncode == 2 and "--history" in p.stderr


def test_export_writes_side_files_compressed(tmp_path):
    """export --side-files: each run's Google Benchmark JSON and throughput files, gzip-compressed,
    under <commit>/<suite>/, byte for byte the files the run held."""
    import gzip

    d = synthetic_run(tmp_path / "r", 3)
    write_gbench(d)
    write_throughput(d)
    db = str(tmp_path / "h.sqlite")
    assert main(["history", "add", str(d), "--db", db]) == 0
    out = tmp_path / "side"
    assert main(["history", "export", "--format", "json", "--slim", "--out", str(tmp_path / "e.json"),
                 "--side-files", str(out), "--db", db]) == 0
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.gz"))
    assert files == [f"{sha(3)[:12]}/synthetic/bench_kinematics.json.gz", f"{sha(3)[:12]}/synthetic/throughput.json.gz"]
    for f in ("bench_kinematics.json", "throughput.json"):
        assert gzip.decompress((out / sha(3)[:12] / "synthetic" / (f + ".gz")).read_bytes()) == (d / f).read_bytes()


def test_a_directory_of_throughput_files_is_a_run(tmp_path, capsys):
    """ikbench throughput --out without a run.json: a record of suite `throughput`, its identity
    and load from the file, no cells; files of two builds in one directory, or Google Benchmark JSON
    alone (it names no commit), are refused with the directory named."""
    d = tmp_path / "tp"
    d.mkdir()
    doc = {"solver": "auto", "git_revision": sha(4) + "-dirty", "seed": 1, "distinct_problems": 2000,
           "start_time": "2026-01-01T00:04:00Z", "end_time": "2026-01-01T00:05:00Z",
           "machine": {"cpu": "Synthetic CPU 1", "vendor": "X", "family": 1, "model": 2, "hardware_threads": 2},
           "build": {"compiler": "GNU 12", "flags": "-O3", "build_type": "Release"},
           "points": [{"path": "batch", "threads": t, "solves": 100, "solves_per_s": 10.0 * t,
                       "converged_per_s": 9.0 * t, "cores_busy": 0.9 * t,
                       "load": {"start": 1.5, "end": 2.5, "cores": 2, "noisy": t == 2}} for t in (1, 2)]}
    (d / "throughput.json").write_text(json.dumps(doc))
    db = str(tmp_path / "h.sqlite")
    assert main(["history", "add", str(d), "--db", db]) == 0
    with open_store(db) as s:
        r = s.query("SELECT suite, threads, dirty, git_commit, noisy FROM runs")[0]
        assert (r["suite"], r["threads"], bool(r["dirty"]), r["git_commit"], bool(r["noisy"])) == \
            ("throughput", 2, True, sha(4), True)
        pts = {(p["solver"], p["figure"]): p["value"] for p in s.query("SELECT solver, figure, value FROM points")}
        assert pts[("auto/batch/threads:2", "converged_per_s")] == 18.0
        assert pts[("auto/batch/threads:2", "cores_busy")] == 1.8
        assert s.query("SELECT COUNT(*) AS n FROM cells")[0]["n"] == 0
    (d / "throughput-b.json").write_text(json.dumps(dict(doc, git_revision=sha(5))))
    capsys.readouterr()
    assert main(["history", "add", str(d), "--db", db]) == 2
    err = capsys.readouterr().err
    assert str(d) in err and "git_revision" in err
    g = tmp_path / "gb"
    g.mkdir()
    write_gbench(g)
    assert main(["history", "add", str(g), "--db", db]) == 2
    assert "throughput.json" in capsys.readouterr().err


def test_side_files_of_two_runs_of_one_commit_both_kept(tmp_path):
    """Two runs of one commit and suite with side files: each keeps its own directory."""
    db = str(tmp_path / "h.sqlite")
    for i, rate in ((1, 100.0), (2, 200.0)):
        d = synthetic_run(tmp_path / f"r{i}", 7, time_scale=float(i))
        write_throughput(d, rate)
        assert main(["history", "add", str(d), "--db", db]) == 0
    out = tmp_path / "side"
    assert main(["history", "export", "--format", "csv", "--out", str(tmp_path / "e.csv"), "--side-files", str(out),
                 "--db", db]) == 0
    dirs = sorted(p.name for p in (out / sha(7)[:12]).iterdir())
    assert len(dirs) == 2 and all(n.startswith("synthetic-") for n in dirs), dirs


def test_gbench_nan_of_a_statistic_with_no_value(db, tmp_path):
    """Google Benchmark writes NaN for the coefficient of variation of a counter whose mean is 0:
    `history add` takes the file, the NaN as no value, and stores the document as written."""
    d = synthetic_run(tmp_path / "a", 3)
    write_gbench(d, 2.0)
    path = d / "bench_kinematics.json"
    doc = json.loads(path.read_text())
    cv = dict(doc["benchmarks"][0], name="ForwardKinematics/dof:7_cv", run_type="aggregate", aggregate_name="cv",
              aggregate_unit="percentage", success_rate=0.0)
    text = json.dumps(dict(doc, benchmarks=doc["benchmarks"] + [cv]), indent=1)
    path.write_text(text.replace('"success_rate": 0.0', '"success_rate": NaN'))
    main(["history", "add", str(d), "--db", db])
    with open_store(db) as s:
        g = queries.points(s, source="gbench", figure="real_time_ns").iloc[0]
        assert g["value"] == 200.0 and g["n"] == 3
        body = s.query("SELECT body FROM documents WHERE file = 'bench_kinematics.json'")[0]["body"]
        assert '"success_rate": NaN' in body
