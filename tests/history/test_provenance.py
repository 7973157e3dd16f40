"""Order and provenance: every query orders its rows completely (SQLite and PostgreSQL return
unordered rows in different orders), a git revision this checkout does not know is named on
stderr, and a json export (results/history/history.json.gz) is a store to read, never to write."""
import json
import os
import sqlite3

import pytest

from conftest import REPO, one_line_error, run_cli, sha, synthetic_run
from ikbench.cli.main import main


def outputs(db, tmp_path, capsys, tag):
    """What show, both exports and the site's data say of a store."""
    got = {}
    for name, argv in (("show", ["show", sha(6)[:8]]), ("list", ["list"]), ("csv", ["export", "--format", "csv"]),
                       ("json", ["export", "--format", "json"]),
                       ("changes", ["changes", "--all"])):
        rc, out, err = run_cli(capsys, *argv, "--db", db)
        assert rc == 0, err
        got[name] = out
    site = tmp_path / f"site-{tag}"
    rc, _, err = run_cli(capsys, "publish", str(site), "--db", db)
    assert rc == 0, err
    got["series.json"] = (site / "series.json").read_text()
    return got


def test_rows_in_one_order_whatever_order_the_backend_returns(step_runs, tmp_path, capsys, monkeypatch):
    # SQLite's reverse_unordered_selects returns the rows of every query without a complete ORDER BY
    # in the other order, as another backend may: the outputs must not change
    db = str(tmp_path / "h.sqlite")
    assert main(["history", "add", *map(str, step_runs), "--db", db]) == 0
    capsys.readouterr()
    plain = outputs(db, tmp_path, capsys, "plain")
    connect = sqlite3.connect

    def reversed_rows(*args, **kw):
        conn = connect(*args, **kw)
        conn.execute("PRAGMA reverse_unordered_selects = ON")
        return conn

    monkeypatch.setattr(sqlite3, "connect", reversed_rows)
    again = outputs(db, tmp_path, capsys, "reversed")
    for name in plain:
        assert plain[name] == again[name], name
    show = plain["show"].splitlines()
    cells = [ln.split()[:2] for ln in show[show.index(next(ln for ln in show if ln.startswith("family"))) + 2:]]
    assert cells == sorted(cells)


def test_unknown_git_revision_named_on_stderr(db, tmp_path, capsys):
    d = synthetic_run(tmp_path / "run", 41)
    rc, out, err = run_cli(capsys, "add", str(d), "--db", db)
    assert rc == 0 and f"git_revision '{sha(41)}' is not a commit of the git checkout" in err and str(d) in err
    # the run is stored, without a commit date
    rc, out, _ = run_cli(capsys, "show", sha(41)[:8], "--db", db)
    assert rc == 0 and sha(41) in out
    # a commit the checkout knows: no warning; no checkout at hand: no warning either
    import subprocess

    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    meta = json.loads((d / "run.json").read_text())
    meta["git_revision"] = head
    (d / "run.json").write_text(json.dumps(meta))
    rc, _, err = run_cli(capsys, "add", str(d), "--db", db)
    assert rc == 0 and "warning" not in err, err
    d2 = synthetic_run(tmp_path / "run2", 42)
    nogit = tmp_path / "not-a-checkout"
    nogit.mkdir()
    rc, _, err = run_cli(capsys, "add", str(d2), "--repo", str(nogit), "--db", db)
    assert rc == 0 and "warning" not in err, err


@pytest.fixture
def export_gz(step_runs, tmp_path, capsys):
    db = str(tmp_path / "h.sqlite")
    assert main(["history", "add", *map(str, step_runs), "--db", db]) == 0
    gz = tmp_path / "history.json.gz"
    rc, _, err = run_cli(capsys, "export", "--format", "json", "--slim", "--out", str(gz), "--db", db)
    assert rc == 0, err
    return gz


def test_an_export_is_a_read_only_store(export_gz, step_runs, tmp_path, capsys):
    db = str(export_gz)
    before = export_gz.read_bytes()
    for argv in (["list"], ["show", sha(6)[:8]], ["changes"], ["machines"],
                 ["trend", "--family", "planar-position", "--solver", "dls", "--out", str(tmp_path / "t.png")],
                 ["export", "--format", "csv"]):
        rc, out, err = run_cli(capsys, *argv, "--db", db)
        assert rc == 0, (argv, err)
    rc, out, _ = run_cli(capsys, "changes", "--db", db)
    assert sha(6)[:10] in out
    assert main(["report", str(step_runs[-1]), "--out", str(tmp_path / "r.html"), "--history", db]) == 0
    assert '<section id="history"' in (tmp_path / "r.html").read_text()
    for argv in (["add", str(step_runs[0])], ["import", str(export_gz)], ["backfill", "--commits", "1"]):
        rc, _, err = run_cli(capsys, *argv, "--db", db)
        assert one_line_error(rc, err) and "read only" in err and "history import" in err, (argv, err)
    assert export_gz.read_bytes() == before


def test_the_committed_history_reads_from_a_clone(capsys):
    committed = REPO / "results" / "history" / "history.json.gz"
    if not committed.is_file():
        pytest.skip("no results/history/history.json.gz in this tree")
    rc, out, err = run_cli(capsys, "list", "--db", os.path.relpath(committed))
    assert rc == 0 and " runs; machines:" in out, err
