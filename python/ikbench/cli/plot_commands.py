"""The plots command (`python3 -m ikbench plot RUN_DIR...`, scripts/plot.py): reads the runs, draws
every plot of ikbench.render.plots into DIR/plots with its index, and writes the run's report.html
beside them (one run); `plot convergence|time|success` is one figure of chosen specs on chosen
families (ikbench.render.family_render)."""

import argparse
import sys
from pathlib import Path

from ..analysis import curves
from ..io.results import ResultsError, load
from ..io.safe_io import output_directory
from ..render.plots import Plotter
from .exits import EXIT_BAD_INPUT, EXIT_OK


def add_arguments(ap):
    ap.add_argument("results_dirs", nargs="+", metavar="RESULTS_DIR", help="results directories of `ikbench run`")
    ap.add_argument("--out", metavar="DIR", help="output directory (default RESULTS_DIR with one run; required "
                    "with several): plots go to DIR/plots, the report of one run to DIR/report.html")
    ap.add_argument("--no-report", action="store_true", help="plots only (no report.html)")
    ap.add_argument("--formats", default="png,svgz", help="comma-separated image formats: png, svg, svgz "
                    "(gzip-compressed SVG, which browsers, Inkscape and LaTeX's svg package open; a fifth of "
                    "the bytes) or pdf (default png,svgz)")
    ap.add_argument("--allow-incomplete", action="store_true", help="read incomplete or mixed runs (marked)")
    ap.add_argument("--all-specs", action="store_true", help="success_vs_dof and convergence: draw every spec "
                    f"(default: success_vs_dof at most {curves.MAX_DOF_SPECS} per panel, the tied leaders, kdl-lma, "
                    "dls, ccd, fabrik; convergence the four best ranked of the family and the KDL peers)")


def main_from_args(args):
    formats = [f for f in args.formats.split(",") if f]
    bad = [f for f in formats if f not in ("png", "svg", "svgz", "pdf")]
    if bad or not formats:
        raise ResultsError(f"--formats: expected png, svg, svgz or pdf, got '{args.formats}'")
    if len(args.results_dirs) > 1 and not args.out:
        raise ResultsError("several results directories: give --out DIR for the overlaid plots")
    runs = []
    for d in args.results_dirs:
        run = load(d, allow_incomplete=args.allow_incomplete, require_run_json=False)
        if len(run.solves) == 0:
            raise ResultsError(f"{run.solves_path}: no solves (header only)")
        runs.append(run)
    base = Path(args.out) if args.out else runs[0].path
    outdir = base / "plots"
    output_directory(outdir, inputs=[p for r in runs for p in r.inputs])
    p = Plotter(runs, outdir, formats, all_specs=getattr(args, "all_specs", False))
    plots = []
    plots += p.convergence()
    plots += p.success_vs_dof()
    plots += p.time_distribution()
    plots += p.success()
    plots += p.heatmap()
    plots += p.iterations()
    plots += p.gbench()
    index = p.write_index()
    n = sum(len(x[1]) for x in plots)
    print(f"plots: {n} files in {outdir.resolve()} (index: {index.name})")
    if not args.no_report:
        if len(runs) == 1:  # the interactive report of the run (ikbench.render.report), linking these plots
            from ..render import report

            rep, _ = report.write_report(runs[0], base / "report.html", plots_dir=outdir)
            print(f"report: {rep.resolve()}")
        else:
            print("report: not written for several runs (one report per run: python3 -m ikbench report RUN_DIR; "
                  "runs compared: python3 -m ikbench compare A B --out FILE.html)")
    return EXIT_OK


def main(argv=None):
    """scripts/plot.py's command line; `plot.py convergence|time|success RUN_DIR ...` is one figure of
    chosen specs on chosen families (ikbench.render.family_render)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] and argv[0] in ("convergence", "time", "success"):
        from ..render.family_render import main as kind_main

        return kind_main(argv[1:], argv[0], prog=f"plot.py {argv[0]}")
    ap = argparse.ArgumentParser(prog="plot.py", description="Plots and an HTML report for ikbench results "
                                 "directories (several: overlaid).")
    add_arguments(ap)
    args = ap.parse_args(argv)
    try:
        return main_from_args(args)
    except ResultsError as e:
        print(f"plot.py: error: {' '.join(str(e).split())}", file=sys.stderr)
        return EXIT_BAD_INPUT
