"""pytest setup for the analysis library's tests: `ikbench` from <repo>/python (PYTHONPATH as
ctest sets it, or this directory's repository), the synthetic run writer `synth` beside."""
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
for p in (str(REPO / "python"), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

os.environ.setdefault("MPLBACKEND", "Agg")


def harness_binary():
    """The built `ikbench` harness: $IKBENCH_CLI (ctest sets it), else build/release's; the calling
    test is skipped, saying so, when there is none."""
    for p in (os.environ.get("IKBENCH_CLI"), REPO / "build" / "release" / "benchmarks" / "ikbench"):
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return str(p)
    pytest.skip("no ikbench binary: set IKBENCH_CLI to the built harness (ctest does) or build "
                "build/release/benchmarks/ikbench")


@pytest.fixture
def run_dir(tmp_path):
    import synth

    return synth.make_run(tmp_path / "run")


def cli(*args, check=None):
    """Runs `/usr/bin/python3 -m ikbench ARGS` as the C++ harness and users do; returns the
    CompletedProcess."""
    import subprocess

    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, "-m", "ikbench", *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=600)
    if check is not None:
        assert p.returncode == check, p.stdout + p.stderr
    return p
