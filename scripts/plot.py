#!/usr/bin/python3
"""Plots and an HTML report for ikbench results directories.

    /usr/bin/python3 scripts/plot.py RESULTS_DIR [--no-report] [--formats png,svgz]
    /usr/bin/python3 scripts/plot.py RUN_A RUN_B --out DIR      # runs overlaid
    /usr/bin/python3 scripts/plot.py convergence RESULTS_DIR --family F --solvers A,B [--out FILE] [--x time]
                                                                # one figure (also: time, success)

Writes RESULTS_DIR/plots/*.png|svgz, RESULTS_DIR/plots/index.json (every plot with its panels and
series) and RESULTS_DIR/report.html. Exit status 0, or 2 with a message for bad input.

A thin wrapper: the plots live in the analysis library (python/ikbench/render/plots.py), which reads
results and defines the figures for every tool (docs/analysis.md).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from ikbench.cli.plot_commands import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
