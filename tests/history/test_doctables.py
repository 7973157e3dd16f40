"""Generated tables of measured figures: written between markers, and --check fails when stale."""
import json

from conftest import sha, synthetic_run, write_gbench, write_throughput
from ikbench.cli.main import main
from ikbench.render import doctables


def test_write_then_check(tmp_path, capsys):
    """The per-commit `quick` table: written between its markers, its rows read from the quick suite's
    runs only (a run of another suite on the same commit measures other problems), stale once the
    history changes."""
    db = str(tmp_path / "h.sqlite")
    d = synthetic_run(tmp_path / "r", 1, suite="quick")
    write_throughput(d, 1234.0)
    other = synthetic_run(tmp_path / "o", 1, suite="ur5")   # same commit, another suite, other figures
    write_throughput(other, 5000.0)
    for run in (d, other):
        assert main(["history", "add", str(run), "--db", db]) == 0
    export = tmp_path / "history.json"
    assert main(["history", "export", "--format", "json", "--out", str(export), "--db", db]) == 0
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\nmethod text\n\n<!-- history-table:quick -->\nold\n<!-- /history-table -->\n\nafter\n")
    assert doctables.main([str(export), "--check", str(doc)]) == 1
    assert "quick" in capsys.readouterr().err
    assert doctables.main([str(export), "--write", str(doc)]) == 0
    text = doc.read_text()
    assert "old" not in text and text.startswith("# Doc\n\nmethod text\n") and text.endswith("after\n")
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and not ln.startswith("| machine")]
    assert len(rows) == 1 and "2,221" in rows[0], rows   # dls solves/s on 2 threads: 1.8 x 1234, the quick run's only
    assert doctables.main([str(export), "--check", str(doc)]) == 0
    # a changed history makes the document stale
    data = json.loads(export.read_text())
    for p in (p for r in data["records"] for p in r["points"]):
        if p["figure"] == "solves_per_s":
            p["value"] *= 2
    export.write_text(json.dumps(data))
    assert doctables.main([str(export), "--check", str(doc)]) == 1


def _store_of(tmp_path, runs):
    """An in-memory store of `runs` (directories) through an export, as the docs' generator reads it."""
    db = str(tmp_path / "h.sqlite")
    for d in runs:
        assert main(["history", "add", str(d), "--db", db]) == 0
    export = tmp_path / "history.json"
    assert main(["history", "export", "--format", "json", "--slim", "--out", str(export), "--db", db]) == 0
    return export


def test_latest_table_reads_the_newest_commit_of_its_runs(tmp_path):
    """A Latest table: the newest commit whose runs hold its points, a Google Benchmark counter,
    several throughput files of one run, a ratio, and the commit, machine and load it names."""
    old, new = synthetic_run(tmp_path / "a", 1), synthetic_run(tmp_path / "b", 2)
    write_gbench(old, 1.0)
    write_gbench(new, 2.0)
    doc = json.loads((new / "bench_kinematics.json").read_text())
    for b in doc["benchmarks"]:
        b["lane_steps"] = 8.5
    (new / "bench_kinematics.json").write_text(json.dumps(doc))
    for name, spec, rate in (("throughput-a.json", "dls", 100.0), ("throughput-b.json", "auto", 400.0)):
        (new / name).write_text(json.dumps({"solver": spec, "distinct_problems": 2000 if spec == "dls" else 10, "points": [
            {"path": "batch", "threads": 2, "solves": 10, "solves_per_s": rate, "converged_per_s": rate}]}))
    export = _store_of(tmp_path, [old, new])
    t = doctables.Latest(
        "T.", [("FK [ns]", lambda get: doctables.fmt(get(source="gbench", family="gbench:bench_kinematics",
                                                         solver="ForwardKinematics/dof:7", figure="real_time_ns"))),
               ("lane-steps", lambda get: doctables.fmt(get(source="gbench", family="gbench:bench_kinematics",
                                                            solver="ForwardKinematics/dof:7",
                                                            figure="counter:lane_steps"), interval=False)),
               ("auto / dls", lambda get: doctables.ratio(
                   get(source="throughput", family="throughput", solver="auto/batch/threads:2/problems:10",
                       figure="converged_per_s"),
                   get(source="throughput", family="throughput", solver="dls/batch/threads:2",
                       figure="converged_per_s")))],
        rows=[("row", {})], suite="synthetic", row_label="x")
    from ikbench.io.store_exchange import import_json
    from ikbench.io.store import open_store
    with open_store(":memory:") as store:
        import_json(store, json.loads(export.read_text()))
        text = t.render(store)
    row = [ln for ln in text.splitlines() if ln.startswith("| row")][0]
    assert row == "| row | 200 [196, 208] | 8.5 | 4.00x |", row      # commit 2's times (x2), not commit 1's
    assert "Measured at commit `" + sha(2)[:10] + "`" in text and "load average 0.5-0.6 on 2 cores" in text


def test_every_document_is_checked(tmp_path, capsys):
    """--check without a DOC takes every README.md and docs/*.md holding a table; one stale table fails."""
    d = synthetic_run(tmp_path / "r", 1)
    export = _store_of(tmp_path, [d])
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "README.md").write_text("# R\n\n<!-- history-table:coverage -->\n<!-- /history-table -->\n")
    (repo / "docs" / "a.md").write_text("# A\n\n<!-- history-table:coverage -->\n<!-- /history-table -->\n")
    (repo / "docs" / "b.md").write_text("# B\n\nno table\n")
    assert doctables.main([str(export), "--check", "--repo", str(repo)]) == 1
    assert doctables.main([str(export), "--write", "--repo", str(repo)]) == 0
    assert "1 runs of 1 commits" in (repo / "docs" / "a.md").read_text()
    assert doctables.main([str(export), "--check", "--repo", str(repo)]) == 0
    (repo / "docs" / "a.md").write_text((repo / "docs" / "a.md").read_text().replace("1 runs", "2 runs"))
    capsys.readouterr()
    assert doctables.main([str(export), "--check", "--repo", str(repo)]) == 1
    err = capsys.readouterr().err
    assert "a.md" in err and "README.md" not in err


def test_external_overhead_table_reads_the_null_solvers_run(tmp_path):
    """The protocol's overhead table (docs/external-solvers.md): the run of exactly the four null-solver
    specs (scripts/docs_measure.sh, OUT/external-overhead), one row per language and message size; a
    run with other specs is not read, and without the run the table says how to make it."""
    import synth
    from ikbench.io.store_exchange import import_json
    from ikbench.io.store import open_store

    table = doctables.TABLES["external-overhead"]
    assert len(doctables.EXTERNAL_SPECS) == 4 and all(s.startswith("ext:cmd='") for s in doctables.EXTERNAL_SPECS)
    times = {s: 30.0 + 10 * k for k, s in enumerate(doctables.EXTERNAL_SPECS)}  # us per solve (no iterations)
    runs = []
    for i, solvers in ((1, {s: (1.0, t, (0, 0)) for s, t in times.items()}),
                       (2, dict({s: (1.0, 1.0, (0, 0)) for s in times}, auto=(1.0, 1.0, (1, 3))))):
        runs.append(synth.make_run(tmp_path / f"r{i}", seed=i, problems=30, solvers=solvers,
                                   families=(doctables.EXTERNAL_FAMILY,), run_json_extra={
                                       "git_revision": sha(i), "start_time": f"2026-01-01T00:0{i}:00Z",
                                       "load": {"start": 0.5, "end": 0.6, "cores": 2, "noisy": False}}))
    with open_store(":memory:") as store:
        assert "No stored run holds these figures yet" in table.render(store)
        assert "OUT/external-overhead" in table.render(store)
        import_json(store, json.loads(_store_of(tmp_path, runs).read_text()))
        text = table.render(store)
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and not ln.startswith("| null solver")]
    assert [r.split(" | ")[0] for r in rows] == ["| Python, 1 problem per message", "| Python, batch=50",
                                                 "| Node, 1 problem per message", "| Node, batch=50"], rows
    # The run of the four specs alone (commit 1, where a solve takes 30-60 us), not the later one with auto.
    medians = [float(r.split(" | ")[1].split(" ")[0]) for r in rows]
    assert medians == sorted(medians) and 20 <= medians[0] and medians[-1] <= 90, medians
    assert "Measured at commit `" + sha(1)[:10] + "`" in text


def test_tables_cite_only_commits_of_this_repository():
    """A run recorded on a commit since rewritten is cited by the repository's commit of the same
    subject; one with no such commit keeps its stored label (tests/docs_commits_test.py then fails
    on a document citing it)."""
    import subprocess
    import pytest
    head = subprocess.run(["git", "-C", str(doctables.REPO), "log", "-1", "--format=%H%x00%s"],
                          capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip(f"{doctables.REPO} is not a git checkout: its commits cannot be looked up")
    full, subject = head.stdout.strip().split("\0")
    assert doctables.cite(full, False, "anything") == full[:10]
    assert doctables.cite(full, True, "anything") == full[:10] + "+dirty"
    missing = "f" * 40 if not full.startswith("f" * 8) else "e" * 40
    same = subprocess.run(["git", "-C", str(doctables.REPO), "log", "--all", "--format=%s"],
                          capture_output=True, text=True).stdout.splitlines().count(subject)
    if same == 1:
        assert doctables.cite(missing, True, subject) == full[:10] + "+dirty"
    assert doctables.cite(missing, False, "a subject no commit of this repository has \0") == missing[:10]


def test_run_times_table_reads_the_newest_run_of_each_suite(tmp_path):
    """The run-times table: the newest stored run of the suite, its solve pass (run.json throughput)
    and its start-to-end time, not an older run's nor another suite's."""
    old = synthetic_run(tmp_path / "a", 1, suite="quick")
    new = synthetic_run(tmp_path / "b", 2, suite="quick")
    other = synthetic_run(tmp_path / "c", 3, suite="ur5")
    for d, wall, end in ((old, 7.5, "00:00:09"), (new, 2.25, "00:02:04"), (other, 99.0, "00:03:59")):
        meta = json.loads((d / "run.json").read_text())
        meta["throughput"]["wall_s"] = wall
        meta["end_time"] = meta["start_time"][:11] + end + "Z"
        (d / "run.json").write_text(json.dumps(meta))
    export = _store_of(tmp_path, [old, new, other])
    t = doctables.RunTimes("T.", ["quick", "absent-suite"], "`cmd`")
    from ikbench.io.store_exchange import import_json
    from ikbench.io.store import open_store
    with open_store(":memory:") as store:
        import_json(store, json.loads(export.read_text()))
        text = t.render(store)
    rows = [ln for ln in text.splitlines() if ln.startswith("| `")]
    assert len(rows) == 1 and rows[0].startswith("| `quick` |"), rows
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[3] == "2.25" and cells[4] == "4", cells          # run 2 started at 00:02:00
    assert sha(2)[:10] in cells[5] and "load average 0.5-0.6 on 2 cores" in cells[5], cells
    with open_store(":memory:") as store:
        assert "No stored run holds these figures yet" in doctables.RunTimes("T.", ["quick"], "`cmd`").render(store)
