"""history backfill on a scratch git repository whose commits do not build: each is recorded as
skipped with its reason and log, with one progress line per commit, and its worktree removed.
(Measuring commits that build is what `ikbench history backfill` does on this repository; it takes
a release build per commit, too long for a test.)"""
import subprocess

from ikbench.cli.main import main
from ikbench.analysis import backfill
from ikbench.io.store import open_store


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def scratch_repo(path, n):
    path.mkdir()
    git(path, "init", "-q")
    git(path, "config", "user.email", "t@example.org")
    git(path, "config", "user.name", "t")
    (path / "CMakePresets.json").write_text(
        '{"version": 3, "configurePresets": [{"name": "release", "binaryDir": "${sourceDir}/build/release"}],'
        ' "buildPresets": [{"name": "release", "configurePreset": "release"}]}\n')
    for i in range(n):
        (path / "CMakeLists.txt").write_text(f"message(FATAL_ERROR \"commit {i} does not configure\")\n")
        git(path, "add", "CMakeLists.txt", "CMakePresets.json")
        git(path, "commit", "-q", "-m", f"commit {i}")
    return path


def test_commits_oldest_first(tmp_path):
    repo = scratch_repo(tmp_path / "repo", 3)
    shas = backfill.commits(repo, 2)
    assert shas == git(repo, "rev-list", "-n", "2", "HEAD").split()[::-1]


def test_unbuildable_commits_are_recorded(db, tmp_path, capsys):
    repo = scratch_repo(tmp_path / "repo", 3)
    wt, runs = tmp_path / "wt", tmp_path / "runs"
    rc = main(["history", "backfill", "--commits", "2", "--repo", str(repo), "--worktrees", str(wt), "--runs-dir",
               str(runs), "--time-cap", "120", "--db", db])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "[1/2]" in out and "[2/2]" in out and out.count("build failed, skipped") == 2
    assert "0 commits added, 2 skipped" in out
    with open_store(db) as s:
        rows = s.query("SELECT git_commit, reason, detail, subject FROM skipped ORDER BY id")
    assert [r["git_commit"] for r in rows] == git(repo, "rev-list", "-n", "2", "HEAD").split()[::-1]
    assert all(r["reason"] == "build failed" and "does not configure" in r["detail"] for r in rows)
    assert [r["subject"] for r in rows] == ["commit 1", "commit 2"]
    assert not any(wt.iterdir()) and git(repo, "worktree", "list").count("\n") == 0
    assert len(list(runs.glob("*.log"))) == 2


def test_bad_arguments(db, tmp_path, capsys):
    repo = scratch_repo(tmp_path / "repo", 1)
    try:
        rc = main(["history", "backfill", "--commits", "0", "--repo", str(repo), "--db", db])
    except SystemExit as e:   # argparse's refusal
        rc = e.code
    err = capsys.readouterr().err
    assert rc == 2 and "--commits: 0: expected an integer from 1" in err and "Traceback" not in err
