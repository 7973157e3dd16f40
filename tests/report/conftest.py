"""pytest setup for the report's tests: `ikbench` from <repo>/python, the synthetic run writer
`synth` of tests/python, and a rich synthetic run (grid, KDL peer, a robot family) shared by the
tests of the page data."""
import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
for p in (str(REPO / "python"), str(REPO / "tests" / "python")):
    if p not in sys.path:
        sys.path.insert(0, p)

os.environ.setdefault("MPLBACKEND", "Agg")

# browser_test.py is a ctest program of its own (report_browser), not a pytest module
collect_ignore = ["browser_test.py"]

GRID_SPECS = ["dls:lambda=0.01", "dls:lambda=0.1", "dls:lambda=0.5"]


def external_references(page):
    """Tags of an HTML page that load something (script src, link href, img / iframe src): the
    page must work from file:// without a network. Script bodies are not parsed as markup."""
    from html.parser import HTMLParser

    found = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            for key in ("src", "href"):
                if tag in ("script", "link", "img", "iframe", "embed", "object") and a.get(key):
                    found.append((tag, a[key]))

    P().feed(page)
    return found


def rich_run(directory, problems=12):
    """A synthetic run with a grid of dls specs, ccd, two-bone (unsupported on pose), kdl-lma, and
    the pose family marked as coming from a robot."""
    import synth

    solvers = {"dls:lambda=0.01": (0.9, 1.0, (5, 30)), "dls:lambda=0.1": (0.7, 1.2, (8, 40)),
               "dls:lambda=0.5": (0.5, 1.5, (10, 60)), "ccd": (0.6, 3.0, (20, 80)), "two-bone": (1.0, 0.5, (1, 1)),
               "kdl-lma": (0.8, 2.0, (3, 10))}
    d = synth.make_run(directory, problems=problems, solvers=solvers, run_json_extra={
        "grid": [{"spec": "dls:lambda={0.01,0.1,0.5}", "axes": [{"key": "lambda", "values": ["0.01", "0.1", "0.5"]}],
                  "specs": GRID_SPECS}]})
    meta = json.loads((d / "run.json").read_text())
    for f in meta["families"]:
        if f["name"] == "planar-pose":
            f["robot"] = "planar2"
    (d / "run.json").write_text(json.dumps(meta, indent=2) + "\n")  # run.json is not in its own manifest
    return d


@pytest.fixture(scope="session")
def rich_dir(tmp_path_factory):
    return rich_run(tmp_path_factory.mktemp("rich") / "run")
