"""The Python examples run, on small inputs, and say what they should."""

import os
import re
import subprocess
import sys

import pytest

from pyb_helpers import SOURCE_DIR

EXAMPLES = SOURCE_DIR / "examples" / "python"


def run(args, tmp_path):
    return subprocess.run([sys.executable, *map(str, args)], check=True, capture_output=True, text=True,
                          cwd=tmp_path).stdout


def test_arm_table_row(tmp_path):
    pytest.importorskip("matplotlib")
    cli = os.environ.get("IKBENCH_CLI")
    extra = ["--harness", cli] if cli and os.path.exists(cli) else []
    out = run([EXAMPLES / "arm_table_row.py", "--robot", "iiwa14", "--spec", "auto:time_budget_us=0", "--samples", "200",
               "--out", tmp_path / "times.png", *extra], tmp_path)
    assert re.search(r"python  auto:time_budget_us=0: success 100.00% \(200 / 200\)", out), out
    assert "successes re-checked by FK: 200 / 200" in out
    if extra:
        # No time budget: the harness solves the same problems identically.
        assert "same status and iterations as the harness on 200 / 200 problems" in out, out
    assert (tmp_path / "times.png").stat().st_size > 1000


def test_binding_overhead(tmp_path):
    exe = os.environ.get("IKBENCH_PY_REFERENCE")
    if not exe or not os.path.exists(exe):
        pytest.skip("IKBENCH_PY_REFERENCE (the C++ helper ikbench_py_reference) is not set; ctest sets it")
    out = run([EXAMPLES / "binding_overhead.py", "--samples", "300", "--repeats", "1", "--reference", exe], tmp_path)
    assert "in every way" in out
    for name in ("C++", "batch", "loop"):
        assert re.search(rf"^{re.escape(name)}\s+\d+\.\d+", out, re.M), out
