"""Every reader against damaged and hostile results directories (hostile.py): results.load,
`python3 -m ikbench` verify, summary, compare and report each refuse a damaged directory with a
ResultsError / exit status 2 whose one-line message names the damaged file, and read a valid
one; none hangs, crashes or leaves a file behind. With IKBENCH_CLI set (ctest sets it), the C++
`ikbench verify DIR` must agree with the Python verify (exit 2 on every damaged file it reads, 0
on the valid directories), and `ikbench merge DIR --out TMP`, which reads every file, must refuse
every damaged directory (exit 2). The C++ readers and the Python loader must give every
directory the same verdict (test_cpp_and_python_readers_agree, with the built harness wherever
it is): what the C++ readers refuse (`ikbench verify` or `ikbench merge` exits 2) results.load
refuses, and what they accept it accepts. A case's `cpp_gaps` are C++ commands that do not yet
refuse it: their tests are expected to fail (strictly: once the C++ refuses, the mark must go).

The Python readers run in a child process (`hostile.py check`) that reports each case as it
finishes; a case that reports nothing within HANG_GUARD_S is a hang (a FIFO read, an endless
file): the child is killed, the case fails and the others go on in a new child. The guard is not
a measure of speed. The C++ readers run with the same guard."""
import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hostile
from conftest import harness_binary

HANG_GUARD_S = 60
CASES = {c.name: c for c in hostile.CASES}


def _params(gap_of):
    """The case names as test parameters, a case marked as an expected failure where `gap_of(case)`
    says why the C++ readers do not yet do what the test requires."""
    out = []
    for name, c in CASES.items():
        why = gap_of(c)
        out.append(pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=why)) if why else name)
    return out


def _gaps(c, commands=("verify", "merge")):
    return "; ".join(f"ikbench {k} should {v}" for k, v in c.cpp_gaps.items() if k in commands)


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    return hostile.make_cases(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def python_reports(cases, tmp_path_factory):
    """{case: the readers' report, or "hung" / the child's death}, every case checked."""
    _, good = cases
    root, out = good.parent, tmp_path_factory.mktemp("hostile-out")
    todo, reports = list(CASES), {}
    env = dict(os.environ, MPLBACKEND="Agg")
    while todo:
        child = subprocess.Popen([sys.executable, str(Path(hostile.__file__)), "check", str(root), str(out), *todo],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        sel = selectors.DefaultSelector()
        sel.register(child.stdout, selectors.EVENT_READ)
        current, deadline = None, time.monotonic() + HANG_GUARD_S
        while True:
            if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                child.kill()
                reports[current or todo[0]] = f"hung: no answer within {HANG_GUARD_S} s"
                break
            line = child.stdout.readline()
            if not line:  # the child ended
                if current is not None:
                    reports[current] = f"the child died: {child.wait()} {child.stderr.read()[-2000:]}"
                break
            word, name, *rest = line.rstrip("\n").split(" ", 2)
            if word == "start":
                current, deadline = name, time.monotonic() + HANG_GUARD_S
            elif word == "done":
                reports[name], current = json.loads(rest[0]), None
        child.wait()
        child.stdout.close()
        child.stderr.close()
        todo = [n for n in todo if n not in reports]
    return reports


@pytest.mark.parametrize("name", list(CASES))
def test_python_readers(name, python_reports):
    c = CASES[name]
    rep = python_reports[name]
    assert isinstance(rep, dict), f"{name}: {rep}"
    for reader, r in rep.items():
        assert "exception" not in r, f"{name}: {reader} raised:\n{r['exception']}"
    if c.names is None:
        assert rep["load"] == {"ok": True}
        for reader in ("verify", "summary", "compare", "report"):
            assert rep[reader]["rc"] == 0, f"{name}: {reader}: {rep[reader]}"
        assert rep["report"]["files_left"] == ["report.html"]
        return
    assert rep["load"]["ok"] is False and c.names in rep["load"]["error"], rep["load"]
    for reader in ("verify", "summary", "compare", "report"):
        r = rep[reader]
        if reader not in c.readers:
            assert r["rc"] == 0, f"{name}: {reader} does not read what the case damages, yet: {r}"
            continue
        assert r["rc"] == 2, f"{name}: {reader} exited {r['rc']}: {r['stderr']}"
        msg = r["stderr"].strip()
        assert len(msg.splitlines()) == 1 and msg.startswith("ikbench: error: "), f"{name}: {reader}: {msg}"
        assert c.names in msg, f"{name}: {reader} does not name {c.names}: {msg}"
    assert rep["report"]["files_left"] == [], "a refused report leaves no file"


def _cli_binary():
    exe = os.environ.get("IKBENCH_CLI")
    return exe if exe and Path(exe).is_file() and os.access(exe, os.X_OK) else None


@pytest.mark.parametrize("name", _params(_gaps))
def test_cpp_readers(name, cases, tmp_path):
    exe = _cli_binary()
    if exe is None:
        pytest.skip("IKBENCH_CLI is not set to the built harness: the C++ readers are not run")
    dirs, _ = cases
    c = CASES[name]
    damaged = c.names is not None
    # verify reads what Python's verify reads; merge reads every file of the run.
    failures = []
    for args, expected in ((["verify", str(dirs[name])], 2 if damaged and "verify" in c.readers else 0),
                           (["merge", str(dirs[name]), "--out", str(tmp_path / "merged")], 2 if damaged else 0)):
        p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=HANG_GUARD_S)
        if p.returncode != expected:
            failures.append(f"ikbench {args[0]} exited {p.returncode}, expected {expected}: {(p.stdout + p.stderr)[:300]}")
        elif expected == 2 and c.names not in p.stderr:
            failures.append(f"ikbench {args[0]} does not name {c.names}: {p.stderr[:300]}")
    assert not failures, f"{name}: " + "; ".join(failures)


def _cpp_verdict(p):
    """'refuse' (exit 2), 'accept' (exit 0, or verify's 1 for a finding), or what went wrong."""
    if p.returncode == 2:
        return "refuse"
    if p.returncode in (0, 1) and "ikbench: error" not in p.stderr:
        return "accept"
    return f"exit {p.returncode}: {p.stderr.strip()[:300]}"


def _verdict_gap(c):
    """Why the C++ readers as a whole (verify and merge) do not yet refuse a case, if they do not."""
    return _gaps(c) if {"verify", "merge"} <= set(c.cpp_gaps) else None


@pytest.mark.parametrize("name", _params(_verdict_gap))
def test_cpp_and_python_readers_agree(name, cases, python_reports, tmp_path):
    """The C++ readers and results.load (with the traces) give a directory the same verdict: the
    C++ readers refuse it when `ikbench verify DIR` (every file but the traces, the scenes
    included) or `ikbench merge DIR --out TMP` (every file, the traces included) exits 2, accept
    it when both read it."""
    exe = harness_binary()
    dirs, _ = cases
    cpp = {}
    for args in (["verify", str(dirs[name])], ["merge", str(dirs[name]), "--out", str(tmp_path / "merged")]):
        cpp[args[0]] = _cpp_verdict(subprocess.run([exe, *args], capture_output=True, text=True,
                                                   timeout=HANG_GUARD_S))
    verdicts = set(cpp.values())
    cpp_verdict = "refuse" if "refuse" in verdicts else "accept" if verdicts == {"accept"} else str(cpp)
    rep = python_reports[name]
    assert isinstance(rep, dict) and "exception" not in rep["load"], f"{name}: {rep}"
    py_verdict = "accept" if rep["load"].get("ok") else "refuse"
    assert cpp_verdict == py_verdict, (f"{name}: the C++ readers {cpp_verdict} ({cpp}), results.load {py_verdict}"
                                       f" ({rep['load'].get('error', '')[:300]})")


def test_every_reader_file_has_a_case():
    """The cases damage every file of a run and every kind of hostile file."""
    named = {c.names for c in hostile.CASES}
    assert {"run.json", "models.json", "problems.jsonl", "solves.csv", "solutions.csv", "traces.csv"} <= named
    kinds = " ".join(CASES)
    for kind in ("fifo", "dev-zero", "deep-nesting", "huge", "truncated", "duplicate", "tolerance", "q-too"):
        assert kind in kinds
