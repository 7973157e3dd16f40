"""`ikbench tune` is owned by the analysis library: the C++ binary hands over by exec, passing its
own path as `--ikbench PATH`, never through the environment, and no C++ process stays behind
waiting on Python (which would run the binary again)."""
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent


def _binary():
    for p in (os.environ.get("IKBENCH_CLI"), REPO / "build" / "release" / "benchmarks" / "ikbench"):
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return str(Path(p).resolve())
    pytest.skip("no ikbench binary: set IKBENCH_CLI to the built harness (ctest does) or build "
                "build/release/benchmarks/ikbench")


def test_tune_execs_the_analysis_library_with_the_binary_as_an_argument(tmp_path):
    exe = _binary()
    record = tmp_path / "record.json"
    # A stand-in interpreter that records how it was started: its argv, its pid, IKBENCH_BIN.
    stub = tmp_path / "python3"
    stub.write_text("#!/bin/sh\nexec /usr/bin/python3 -c 'import json, os, sys; json.dump({\"argv\": sys.argv[2:], "
                    "\"pid\": os.getpid(), \"bin\": os.environ.get(\"IKBENCH_BIN\")}, open(sys.argv[1], \"w\"))' "
                    f"'{record}' \"$@\"\n")
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items() if k != "IKBENCH_BIN"}
    env.update(IKBENCH_PYTHON=str(stub), IKBENCH_PYTHONPATH=str(REPO / "python"))
    p = subprocess.Popen([exe, "tune", "--solvers", "dls", "--tune-on", "quick", "--evaluate-on", "x"], env=env)
    assert p.wait(timeout=60) == 0
    got = json.loads(record.read_text())
    # exec: the interpreter is the very process that was started as `ikbench tune`
    assert got["pid"] == p.pid
    assert got["bin"] is None
    assert got["argv"][:4] == ["-m", "ikbench", "tune", "--ikbench"]
    assert Path(got["argv"][4]).resolve() == Path(exe).resolve()
    assert got["argv"][5:] == ["--solvers", "dls", "--tune-on", "quick", "--evaluate-on", "x"]
