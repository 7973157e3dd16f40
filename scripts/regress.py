#!/usr/bin/python3
"""ikbench regression gate: compare a benchmark run with a committed baseline.

    regress.py compare BASELINE RUN [RUN...] [--config FILE] [--markdown FILE]
                       [--no-time] [--allow-missing] [--only-changes]
    regress.py update RUN [RUN...] [--baseline DIR] [--config FILE]
    regress.py show DIR

Exit status: 0 no regression, 1 at least one regression, 2 bad input.

A thin wrapper: the gate lives in the analysis library (python/ikbench/analysis/gate.py computes,
render/gate_render.py renders, cli/gate_commands.py is this command line; thresholds in
python/ikbench/data/regress_thresholds.json),
which reads results and defines the figures for every tool (docs/analysis.md);
README section "Regression gate" documents the gate. Run with /usr/bin/python3.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from ikbench.analysis.gate import *  # noqa: E402,F401,F403  (the gate's names, for scripts that import this file)
from ikbench.cli.gate_commands import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
