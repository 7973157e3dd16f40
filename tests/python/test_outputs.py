"""The one rule for outputs (ikbench.io.safe_io, docs/results-format.md "Outputs"), through the
command line and directly: links are written through, non-regular files and the command's own
inputs are refused (exit 2, nothing written), files are replaced atomically with the umask's mode,
and a write that fails leaves no temporary file and no traceback."""
import json
import os
import shutil
import stat
import subprocess
import sys

import pytest
import synth
from conftest import REPO, cli

from ikbench.io import safe_io

HANG_GUARD_S = 120


def _no_temporaries(directory):
    return [n for n in os.listdir(directory) if ".tmp-" in n]


def test_report_through_a_symlink_writes_the_target_and_keeps_the_link(run_dir, tmp_path):
    target = tmp_path / "pages" / "page.html"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "link.html"
    os.symlink(target, link)
    cli("report", run_dir, "--out", link, check=0)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert _no_temporaries(target.parent) == [] and _no_temporaries(tmp_path) == []
    # a dangling link: its target is created
    dangling = tmp_path / "dangling.html"
    os.symlink(tmp_path / "new" / "made.html", dangling)
    cli("report", run_dir, "--out", dangling, check=0)
    assert dangling.is_symlink() and (tmp_path / "new" / "made.html").read_text(encoding="utf-8").startswith("<!")


def test_report_onto_dev_null_is_refused_and_the_device_untouched(run_dir):
    before = os.stat("/dev/null")
    p = cli("report", run_dir, "--out", "/dev/null", check=2)
    assert "/dev/null: is a character device; refused" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_report_onto_a_fifo_is_refused_without_opening_it(run_dir, tmp_path):
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    link = tmp_path / "to-pipe.html"
    os.symlink(fifo, link)
    for out in (fifo, link):  # cli() times out rather than hang if the FIFO were opened
        p = cli("report", run_dir, "--out", out, check=2)
        assert "is a FIFO; refused" in p.stderr, p.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()
    assert _no_temporaries(tmp_path) == []


def test_an_output_onto_an_input_is_refused(run_dir, tmp_path):
    solves = (run_dir / "solves.csv").read_bytes()
    p = cli("report", run_dir, "--out", run_dir / "solves.csv", check=2)
    assert "an input of this command" in p.stderr
    os.symlink(run_dir / "solves.csv", tmp_path / "alias.html")
    p = cli("report", run_dir, "--out", tmp_path / "alias.html", check=2)
    assert "an input of this command" in p.stderr
    os.link(run_dir / "problems.jsonl", tmp_path / "hard.md")
    other = synth.make_run(tmp_path / "other", seed=2)
    p = cli("compare", run_dir, other, "--out", tmp_path / "hard.md", check=2)
    assert "an input of this command" in p.stderr
    os.symlink(run_dir / "traces.csv", tmp_path / "sweep.html")
    p = cli("compare", run_dir, other, "--sweep", "--out", tmp_path / "sweep.html", check=2)
    assert "an input of this command" in p.stderr
    assert (run_dir / "solves.csv").read_bytes() == solves
    manifest = json.loads((run_dir / "run.json").read_text())["files"]
    for name in ("problems.jsonl", "traces.csv"):
        assert synth.fnv1a64((run_dir / name).read_bytes()) == manifest[name]["fnv1a64"]


def test_plot_refuses_a_file_where_its_directory_goes(run_dir, tmp_path):
    (tmp_path / "plots").write_text("a file")
    p = cli("plot", run_dir, "--out", tmp_path, "--no-report", check=2)
    assert "plots: is a regular file; refused (an output must be a directory or absent)" in p.stderr


def _in_namespace(script):
    """Runs a shell script as root of a new user and mount namespace (unshare -rm), so that it can
    mount without touching the machine's mounts; None when the system does not allow it."""
    unshare = shutil.which("unshare")
    if not unshare:
        return None
    probe = subprocess.run([unshare, "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        return None
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), MPLBACKEND="Agg")
    return subprocess.run([unshare, "-rm", "sh", "-c", script], capture_output=True, text=True, env=env,
                          timeout=HANG_GUARD_S)


def test_summary_write_on_a_read_only_file_system_is_a_clean_error(run_dir):
    d = str(run_dir)
    p = _in_namespace(f"mount --bind {d} {d} && mount -o remount,bind,ro {d} {d} && "
                      f"exec {sys.executable} -m ikbench summary {d} --write")
    if p is None:
        pytest.skip("cannot make a read-only file system here (unshare -rm is not allowed)")
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in p.stderr
    assert f"{d}/summary.csv: cannot write: Read-only file system" in err
    assert not (run_dir / "summary.csv").exists() and _no_temporaries(run_dir) == []


def test_a_report_that_fails_while_writing_leaves_no_temporary_file(run_dir, tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    p = _in_namespace(f"mount -t tmpfs -o size=64k tmpfs {full} && "
                      f"{sys.executable} -m ikbench report {run_dir} --out {full}/report.html; rc=$?; "
                      f"ls -A {full}; exit $rc")
    if p is None:
        pytest.skip("cannot mount a small file system here (unshare -rm is not allowed)")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "report.html: cannot write: No space left on device" in p.stderr and "Traceback" not in p.stderr
    assert p.stdout.strip() == "", f"files left on the full file system: {p.stdout}"


def test_files_get_the_umasks_mode(run_dir):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), MPLBACKEND="Agg")
    for mask, mode in ((0o022, 0o644), (0o027, 0o640)):
        (run_dir / "summary.csv").unlink(missing_ok=True)
        p = subprocess.run([sys.executable, "-m", "ikbench", "summary", str(run_dir), "--write"], env=env,
                           capture_output=True, text=True, timeout=HANG_GUARD_S,
                           preexec_fn=lambda m=mask: os.umask(m))
        assert p.returncode == 0, p.stderr
        assert stat.S_IMODE(os.stat(run_dir / "summary.csv").st_mode) == mode


# ---------------------------------------------------------------- the helper itself

def test_atomic_write_replaces_a_regular_file_and_follows_a_chain_of_links(tmp_path):
    target = tmp_path / "a" / "file.txt"
    target.parent.mkdir()
    target.write_text("old")
    os.symlink(target, tmp_path / "l1")
    os.symlink(tmp_path / "l1", tmp_path / "l2")
    ino = os.stat(target).st_ino
    assert safe_io.atomic_write_text(tmp_path / "l2", "new") == tmp_path / "l2"
    assert target.read_text() == "new" and os.stat(target).st_ino != ino  # replaced, not rewritten
    assert (tmp_path / "l1").is_symlink() and (tmp_path / "l2").is_symlink()
    assert _no_temporaries(target.parent) == []


def test_the_rule_refuses_what_it_must(tmp_path):
    os.symlink(tmp_path / "loop2", tmp_path / "loop1")
    os.symlink(tmp_path / "loop1", tmp_path / "loop2")
    with pytest.raises(safe_io.OutputError, match="loop of symbolic links"):
        safe_io.atomic_write_text(tmp_path / "loop1", "x")
    (tmp_path / "d").mkdir()
    with pytest.raises(safe_io.OutputError, match="is a directory; refused"):
        safe_io.atomic_write_text(tmp_path / "d", "x")
    (tmp_path / "f").write_text("keep")
    with pytest.raises(safe_io.OutputError, match="is a regular file; refused"):
        safe_io.output_directory(tmp_path / "f")
    with pytest.raises(safe_io.OutputError, match="not a directory"):
        safe_io.atomic_write_text(tmp_path / "f" / "below.txt", "x")
    with pytest.raises(safe_io.OutputError, match="an input of this command"):
        safe_io.atomic_write_text(tmp_path / "f", "x", inputs=[tmp_path / "f"])
    with pytest.raises(safe_io.OutputError, match="an input of this command"):
        safe_io.output_directory(tmp_path / "d", inputs=[tmp_path / "d"])
    assert (tmp_path / "f").read_text() == "keep"
    assert _no_temporaries(tmp_path) == []


def test_a_failed_write_is_an_output_error_and_leaves_nothing(tmp_path, monkeypatch):
    def no_rename(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safe_io.os, "replace", no_rename)
    with pytest.raises(safe_io.OutputError, match=r"out\.txt: cannot write: No space left on device"):
        safe_io.atomic_write_text(tmp_path / "out.txt", "x" * 1000)
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------- report --latex DIR

def test_latex_tables_follow_the_rule_a_planted_temporary_name_is_never_used(run_dir, tmp_path):
    """The .tex files are written by the rule: a link planted at a name a writer might use for its
    temporary file (.NAME.tex.tmp) is neither followed nor removed, its target keeps its bytes,
    and no temporary file is left."""
    tex = tmp_path / "tables"
    tex.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    planted = tex / ".headline.tex.tmp"
    os.symlink(victim, planted)
    cli("report", run_dir, "--out", tmp_path / "report.html", "--latex", tex, check=0)
    assert victim.read_text() == "keep me" and planted.is_symlink()
    assert (tex / "headline.tex").read_text(encoding="utf-8").lstrip().startswith("%")
    assert _no_temporaries(tex) == []
    mode = stat.S_IMODE(os.stat(tex / "headline.tex").st_mode)
    assert mode == 0o666 & ~safe_io.umask()


def test_latex_onto_a_fifo_or_device_in_the_directory_is_refused_and_left_in_place(run_dir, tmp_path):
    """A FIFO (or a device node, where this process may make one) at a table's path is refused
    with exit status 2 and one line naming it; it stays what it was, and nothing is left behind."""
    tex = tmp_path / "tables"
    tex.mkdir()
    os.mkfifo(tex / "headline.tex")
    p = cli("report", run_dir, "--out", tmp_path / "report.html", "--latex", tex, check=2)
    assert "headline.tex: is a FIFO; refused" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "Traceback" not in p.stderr
    assert stat.S_ISFIFO(os.lstat(tex / "headline.tex").st_mode) and _no_temporaries(tex) == []
    os.unlink(tex / "headline.tex")
    try:
        os.mknod(tex / "headline.tex", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # as /dev/null
    except (PermissionError, OSError):
        return  # no CAP_MKNOD here: the FIFO above is the same rule
    p = cli("report", run_dir, "--out", tmp_path / "report.html", "--latex", tex, check=2)
    assert "headline.tex: is a character device; refused" in p.stderr, p.stderr
    assert stat.S_ISCHR(os.lstat(tex / "headline.tex").st_mode)


def test_latex_directory_that_is_a_file_fifo_or_the_run_is_refused_before_the_work(run_dir, tmp_path):
    """--latex DIR is a directory output: a regular file, a FIFO or the run directory itself (an
    input) is refused before the report is written."""
    afile = tmp_path / "file.tex"
    afile.write_text("x")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for bad, what in ((afile, "is a regular file; refused"), (fifo, "is a FIFO; refused"),
                      (run_dir, "an input of this command")):
        page = tmp_path / "report.html"
        p = cli("report", run_dir, "--out", page, "--latex", bad, check=2)
        assert what in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert not page.exists()
    assert afile.read_text() == "x" and stat.S_ISFIFO(os.lstat(fifo).st_mode)
