#!/usr/bin/python3
"""Every command of docs/tutorial.md works: its fenced blocks marked `sh test` run, in order, in one
bash (`set -euo pipefail`) from the source tree, on the tutorial's own small run.

    docs_tutorial_test.py IKBENCH_CLI REPO_DIR     run them (exit 0, or 1 naming the failing command)
    docs_tutorial_test.py --self-test              check the extraction of the blocks

IKBENCH (the harness) and WORK (a fresh temporary directory) are set before the blocks; the
tutorial's own lines keep them (`${IKBENCH:-...}`). After the blocks the test checks what the
tutorial says they leave: two complete runs whose solves include the user's solver, the report,
the comparison's output and the plot. Exit 77 (skipped, with the reason) where Debian's numpy is
absent.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FENCE = re.compile(r"^```sh test\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
SKIP = 77


def blocks(markdown):
    """The bodies of the fenced blocks whose info string is `sh test`, in document order."""
    return [m.group(1) for m in FENCE.finditer(markdown)]


def self_test():
    doc = "a\n```sh test\necho 1\n```\ntext\n```sh\nnot run\n```\n```sh test\necho 2\necho 3\n```\n"
    assert blocks(doc) == ["echo 1\n", "echo 2\necho 3\n"], blocks(doc)
    print("self-test passed")


def main(argv):
    if argv[1:2] == ["--self-test"]:
        self_test()
        return 0
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    cli, repo = os.path.abspath(argv[1]), Path(argv[2]).resolve()
    if subprocess.run(["/usr/bin/python3", "-c", "import numpy"], capture_output=True).returncode != 0:
        print("Debian's numpy (/usr/bin/python3) is absent: the tutorial's solver needs it: skipped")
        return SKIP
    script = blocks((repo / "docs" / "tutorial.md").read_text(encoding="utf-8"))
    if len(script) < 5:
        print(f"docs/tutorial.md: {len(script)} blocks marked `sh test`, expected the tutorial's steps")
        return 1
    with tempfile.TemporaryDirectory(prefix="ikbench-tutorial-") as work:
        env = dict(os.environ, IKBENCH=cli, WORK=work, NO_COLOR="1")
        body = "set -euo pipefail\n" + "".join(f"echo '+ block {i + 1}'\n{b}" for i, b in enumerate(script))
        out = subprocess.run(["bash", "-c", body], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
        print(out.stdout[-6000:])
        if out.returncode != 0:
            print(out.stderr[-4000:])
            print(f"docs/tutorial.md: a command failed (exit {out.returncode}) in the last block named above")
            return 1
        w = Path(work)
        bad = []
        for run in ("run-a", "run-b"):
            meta = json.loads((w / run / "run.json").read_text())
            if meta.get("complete") is not True:
                bad.append(f"{run}: run.json is not complete")
            specs = [s.get("spec", s) if isinstance(s, dict) else s for s in meta.get("solvers", [])]
            if not any("my_solver.py" in str(s) for s in specs):
                bad.append(f"{run}: the user's solver is not among the run's specs {specs}")
        if not (w / "run-a" / "report.html").stat().st_size > 0:
            bad.append("run-a/report.html is empty")
        for png in ("time.png", "convergence.png"):
            if not (w / png).read_bytes().startswith(b"\x89PNG"):
                bad.append(f"{png} is not a PNG")
        if "my_solver.py" not in out.stdout:
            bad.append("the comparison does not name the user's solver")
        for b in bad:
            print(f"docs/tutorial.md: {b}")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
