"""report.js formats the numbers the page data carries (never a pre-formatted text it takes apart):
its `fmtTime` writes a time as ikbench.render.numbers.number(v, "time") does, checked by running the
function from report_assets/report.js under node, exact ties of the one decimal (x.25, x.75) included.
Above 1e5 the values are no exact ties of 3 significant digits, which fmtTime leaves to JavaScript's
rounding. Skipped, saying so, without node."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ikbench.render.numbers import number

REPORT_JS = Path(__file__).resolve().parents[2] / "python" / "ikbench" / "report_assets" / "report.js"
VALUES = [0.0, 0.04, 0.05, 6.25, 6.75, -6.25, 6.234, 99999.4, 100000.0, 123456.0, 2.5e7, 1e12, -3.5]


def js_function(source, name):
    """The text of `function NAME(...) { ... }` in `source`, braces balanced."""
    start = source.index(f"function {name}(")
    depth, i = 0, source.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        if depth == 0:
            return source[start:i + 1]
        i += 1


def test_report_js_time_equals_the_python_text():
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on PATH: report.js's number formatting is not checked")
    source = REPORT_JS.read_text(encoding="utf-8")
    fn = js_function(source, "fmtTime")
    script = f"{fn}\nconsole.log(JSON.stringify({json.dumps(VALUES + [None])}.map(fmtTime)));"
    out = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [number(v, "time") for v in VALUES] + ["-"]


def test_report_js_takes_no_time_apart_from_a_text():
    source = REPORT_JS.read_text(encoding="utf-8")
    assert not re.search(r"\.exec\([^)]*_text", source), "report.js parses a pre-formatted text of the page data"
