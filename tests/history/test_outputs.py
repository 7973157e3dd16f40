"""Every file a history command writes follows the output rule (docs/results-format.md "Outputs"):
never over the store it reads, a device or a FIFO; and paths built from stored text stay inside
the directory they are written to."""
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, one_line_error, run_cli, sha, synthetic_run, write_throughput
from ikbench.cli.main import main
from ikbench.io.store_exchange import commit_dir, safe_name


@pytest.fixture
def store(tmp_path, step_runs, capsys):
    """An SQLite store of the 12 step runs at a path whose name a trend plot may take (t.svg)."""
    path = tmp_path / "t.svg"
    rc, _, err = run_cli(capsys, "add", *map(str, step_runs), "--db", str(path))
    assert rc == 0, err
    return path


TREND = ["trend", "--family", "planar-position", "--solver", "dls"]


def test_outputs_never_replace_the_store(store, tmp_path, step_runs, capsys):
    before = store.read_bytes()
    link = tmp_path / "link.html"
    link.symlink_to(store)
    for argv in (["export", "--format", "json", "--out", str(store)], ["export", "--format", "csv", "--out", str(link)],
                 TREND + ["--out", str(store)], TREND + ["--out", str(link)]):
        rc, out, err = run_cli(capsys, *argv, "--db", str(store))
        assert one_line_error(rc, err) and "an input of this command" in err, (argv, err)
    page = store.with_name("t.html")
    os.link(store, page)   # a hard link to the store is the store
    assert main(["report", str(step_runs[-1]), "--history", str(store), "--out", str(page)]) == 2
    assert "an input of this command" in capsys.readouterr().err
    assert store.read_bytes() == before and page.read_bytes() == before
    # publish: a page of the site is never the store
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").symlink_to(store)
    rc, _, err = run_cli(capsys, "publish", str(site), "--db", str(store))
    assert one_line_error(rc, err) and store.read_bytes() == before


def test_export_file_as_store_is_not_replaced(store, tmp_path, capsys):
    export = tmp_path / "h.json"
    assert run_cli(capsys, "export", "--format", "json", "--out", str(export), "--db", str(store))[0] == 0
    before = export.read_bytes()
    rc, _, err = run_cli(capsys, "export", "--format", "json", "--out", str(export), "--db", str(export))
    assert one_line_error(rc, err) and export.read_bytes() == before


def test_trend_refuses_devices_and_fifos(store, tmp_path, capsys):
    dev = tmp_path / "dev.png"
    dev.symlink_to("/dev/null")
    rc, _, err = run_cli(capsys, *TREND, "--out", str(dev), "--db", str(store))
    assert one_line_error(rc, err) and "character device" in err
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    # in a process of its own: a writer that opened the FIFO would wait for a reader for ever
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, "-m", "ikbench", "history", *TREND, "--out", str(fifo), "--db", str(store)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 2 and "FIFO" in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("revision", ["../../escaped", "/tmp/absolute-revision", "..", "a/../../b", ".hidden"])
def test_side_file_paths_stay_inside_their_directory(revision, tmp_path, capsys):
    d = synthetic_run(tmp_path / "run", 3)
    meta = json.loads((d / "run.json").read_text())
    meta["git_revision"] = revision
    (d / "run.json").write_text(json.dumps(meta))
    write_throughput(d)
    db = str(tmp_path / "h.sqlite")
    rc, _, err = run_cli(capsys, "add", str(d), "--db", db)
    assert rc == 0, err
    out = tmp_path / "a" / "b" / "side"
    before = set(tmp_path.rglob("*"))
    rc, _, err = run_cli(capsys, "export", "--format", "csv", "--out", str(tmp_path / "e.csv"), "--side-files", str(out),
                         "--db", db)
    assert rc == 0, err
    new = set(tmp_path.rglob("*")) - before - {tmp_path / "e.csv"}
    assert new and all(p == out or out in p.parents or p in out.parents for p in new), sorted(map(str, new))
    (gz,) = out.rglob("throughput.json.gz")
    assert all(not part.startswith(".") for part in gz.relative_to(out).parts)
    assert not os.path.exists("/tmp/absolute-revision")


def test_safe_names():
    assert safe_name("quick") == "quick" and safe_name("bench_kinematics.json") == "bench_kinematics.json"
    for bad in ("..", ".", "../x", "/abs", ".hidden", "a/b", "", "x\ny"):
        name = safe_name(bad)
        assert name and "/" not in name and not name.startswith(".") and name not in (".", "..")
    assert safe_name("a/b") != safe_name("a_b")
    assert commit_dir(sha(1), False) == sha(1)[:12] and commit_dir(sha(1), True) == sha(1)[:12] + "-dirty"
    assert commit_dir("../../x", False).startswith("rev-") and "/" not in commit_dir("../../x", False)
