"""`python3 -m ikbench COMMAND ...`: the analysis library's command line.

    summary RUN_DIR [--write] [--robots] [--width N]
                                              console table (and per-robot table); --write: summary.csv
    compare A B [--out FILE.md|.html]         two runs, per family x solver, with tests
    compare RUN --specs SPEC1 SPEC2           two solver specs of one run
    verify RUN_DIR [--ikbench PATH]           re-check every solve: the harness's verdict, a numpy cross-check
    compare --sweep RUN [RUN...] [--out F]    success and mean time against each swept solver parameter
    plot RUN_DIR [RUN_DIR...] [--out DIR]     PNG/SVG plots for papers (and report.html for one run)
    plot convergence|time|success RUN_DIR [--family F] [--solvers A,B] [--out FILE] [--x iteration|time]
                                              one figure of chosen specs on chosen families
    report RUN_DIR [--out FILE]               the self-contained interactive report.html of a run
    gate compare|update|show ...              the regression gate (as scripts/regress.py)
    history add|list|show|trend|changes|export|publish|backfill ...
                                              the history store of runs across commits (docs/history.md)
    tune --solvers GRID --tune-on SET --evaluate-on SET [--criterion C] [--out DIR]
                                              pick a grid point on one set, evaluate it on another

Exit status: 0 success; 1 a finding (verify: a disagreement; gate: a regression); 2 bad input,
with a one-line message on stderr.
"""

import argparse
import shlex
import sys
from pathlib import Path

from ..io.results import ResultsError

from .exits import EXIT_BAD_INPUT, EXIT_FINDING, EXIT_OK

PLOT_KINDS = ("convergence", "time", "success")   # `plot KIND RUN_DIR ...` (ikbench.render.family_render)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)


def _load(path, args):
    from ..io.results import load

    return load(path, allow_incomplete=getattr(args, "allow_incomplete", False))


def cmd_summary(args):
    from ..analysis import figures
    from ..render import tables

    run = _load(args.run_dir, args)
    summary = figures.summarize(run, seed=args.seed, n_resamples=args.resamples)
    robots = figures.robot_summary(run)
    md = getattr(args, "markdown", False)
    width = _width(args)
    if args.robots:
        text = tables.robot_table(run, robots, markdown=md, table=args.table, width=width)
        sys.stdout.write(text if text else f"{run.path}: no family of this run comes from a robot description\n")
    else:
        sys.stdout.write(tables.summary_table(run, summary, markdown=md, table=args.table, width=width))
        text = tables.robot_table(run, robots, markdown=md, table=tables.table_kind(summary, args.table),
                                  width=width)
        if text:
            sys.stdout.write("\n" + text)
    if args.write:
        path = figures.write_summary(run, summary=summary)
        print(f"summary: {path}")
    if not md:
        print("\n".join([""] + tables.next_steps(run, summary, width)))
    return EXIT_OK


def _width(args):
    """The columns console text is fitted to: --width (0: no limit), else the terminal's
    (ikbench.render.console.terminal_width: 100 when stdout is not a terminal)."""
    from ..render.console import terminal_width

    w = getattr(args, "width", None)
    if w is None:
        return terminal_width()
    return None if w == 0 else w


def cmd_compare(args):
    from ..analysis import compare
    from ..render import compare_render

    if args.sweep:
        return cmd_sweep(args)
    if args.specs:
        if len(args.runs) != 1:
            raise ResultsError("compare --specs SPEC1 SPEC2 takes one results directory")
        a = b = _load(args.runs[0], args)
        _check_out(args, [a])
        result = compare.compare_specs(a, args.specs[0], args.specs[1], alpha=args.alpha,
                                       allow_noisy=args.allow_noisy)
    else:
        if len(args.runs) != 2:
            raise ResultsError("compare takes two results directories A B (or one with --specs SPEC1 SPEC2)")
        a, b = _load(args.runs[0], args), _load(args.runs[1], args)
        _check_out(args, [a, b])
        result = compare.compare_runs(a, b, alpha=args.alpha, allow_noisy=args.allow_noisy)
    sys.stdout.write(compare_render.format_text(result, show_all=args.all, color=_color(args), width=_width(args)))
    if args.out:
        path = compare_render.write(result, args.out, inputs=a.inputs + (b.inputs if b is not a else []))
        print(f"written: {path}")
    return EXIT_OK


def _color(args):
    """Coloured verdicts: on a terminal, unless --no-color or NO_COLOR (no-color.org) says otherwise."""
    import os

    return not getattr(args, "no_color", False) and not os.environ.get("NO_COLOR") and sys.stdout.isatty()


def cmd_sweep(args):
    """compare --sweep: the sweeps of one run (its grid) or across runs (specs of one backend whose
    parameters differ), as text tables and, with --out FILE.html, a page of plots."""
    from ..analysis import sweep
    from ..render import sweep_render
    from ..render.plots import run_labels

    runs = [_load(d, args) for d in args.runs]
    if args.out and not str(args.out).lower().endswith((".html", ".htm")):
        raise ResultsError(f"--out {args.out}: compare --sweep writes an HTML page (FILE.html)")
    _check_out(args, runs)
    labelled = list(zip(run_labels(runs), runs))
    groups = sweep.sweep_groups(labelled)
    if not groups:
        raise ResultsError("compare --sweep: no sweep found: give a run with a grid of specs "
                           "(dls:lambda={0.01,0.1}) or runs whose specs of one backend differ in a parameter")
    notes = []
    if len(runs) > 1:
        notes.append("specs pooled from " + ", ".join(f"{lab} = {r.path}" for lab, r in labelled) +
                     "; times come from different runs" +
                     (" on different machines or thread counts" if len({(r.cpu, r.threads) for r in runs}) > 1 else ""))
    blocks = []
    for g in groups:
        cells = sweep.sweep_cells(g, labelled)
        text = sweep_render.format_text(g, cells)
        axes = ", ".join(f"{k} ({len(v)} values)" for k, v in g.axes)
        sys.stdout.write(f"sweep {g.name}: {axes}; pooled over families\n{text}\n\n")
        blocks.append((f"{g.name}: {axes}", sweep_render.sweep_figure(g, cells), text))
    for n in notes:
        print(f"note: {n}")
    print("success = converged and within limits over all solves [Wilson 95%]; t.mean over supported solves "
          "[bootstrap 95%]; definitions: docs/analysis.md")
    if args.out:
        path = sweep_render.write_html(args.out, blocks, "ikbench sweep", notes, inputs=[p for r in runs for p in r.inputs])
        print(f"written: {path}")
    return EXIT_OK


def _check_out(args, runs):
    """--out checked by the output rule (ikbench.io.safe_io) before the work, so that a refused
    output costs nothing."""
    if getattr(args, "out", None):
        from ..io.safe_io import check_output_path

        check_output_path(args.out, inputs=[p for r in runs for p in r.inputs])


def cmd_report(args):
    from . import report_commands

    if getattr(args, "history", None):  # the page never replaces the history store it reads (before the work)
        import os

        from ..render.history_report import check_output

        check_output(args.history, args.out or os.path.join(args.run_dir, "report.html"))
    return report_commands.main_from_args(args)


def cmd_verify(args):
    from ..analysis import verify, verify_quality
    from ..render import verify_render

    from ..io import verdicts

    run = _load(args.run_dir, args)
    given = verdicts.from_harness(args.ikbench, args.run_dir) if args.ikbench else None
    report = verify.verify_run(run, verdicts=given)
    sys.stdout.write(verify_render.format_report(report, limit=args.max_rows))
    quality = verify_quality.verify_quality(run)  # None: the run has no quality columns
    sys.stdout.write(verify_render.format_quality(quality, limit=args.max_rows))
    ok = (report.disagreements.empty and (quality is None or quality.disagreements.empty) and
          (report.cross_check is None or report.cross_check.empty))
    return EXIT_OK if ok else EXIT_FINDING


def cmd_tail(args):
    from ..analysis import tail
    from ..render import tail_render

    run = _load(args.run_dir, args)
    try:
        report = tail.tail_report(run, fraction=args.fraction, threshold_us=args.threshold_us,
                                  solvers=args.solver, families=args.family)
    except ValueError as e:
        raise ResultsError(str(e)) from None
    if not report.cells:
        raise ResultsError(f"{args.run_dir}: no attempted solve with a time" +
                           (" of the --solver / --family given" if args.solver or args.family else ""))
    sys.stdout.write(tail_render.format_report(report, limit=args.max_rows))
    return EXIT_OK


def cmd_plot(args):
    from . import plot_commands

    return plot_commands.main_from_args(args)


def cmd_tune(args):
    from ..analysis import tune
    from ..render.tune_render import markdown

    finding, report = tune.tune(args, markdown=markdown)
    sys.stdout.write(markdown(report, runner_ups=args.runner_ups))
    out = Path(report["out"])
    print(f"tune: {out / 'tune.json'}, {out / 'tune.md'}")
    return EXIT_FINDING if finding else EXIT_OK


WIDTH_HELP = ("columns the console text fits (default: the terminal's width, 100 when stdout is not a terminal; "
              "0: no limit); a table too wide is wrapped, never a name cut")

# The exit statuses each subcommand's --help lists (argparse's own errors exit 2 too).
EXIT_HELP_SIMPLE = "Exit status: 0 done; 2 bad input (a one-line message on stderr)."
EXIT_HELP_VERIFY = "Exit status: 0 every solve agrees; 1 a disagreement; 2 bad input (a one-line message on stderr)."


def build_parser():
    p = _Parser(prog="ikbench", description="ikbench analysis: tables, comparisons, verification, "
                "plots and the regression gate over results directories of `ikbench run` "
                "(definitions: docs/analysis.md)",
                epilog="Exit status: 0 ok, 1 a finding (verify disagreement, gate regression), 2 bad input.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("summary", help="print the family x solver table (and the per-robot table)")
    s.add_argument("run_dir")
    s.add_argument("--write", action="store_true", help="also write RUN_DIR/summary.csv")
    s.add_argument("--markdown", action="store_true", help="the tables as Markdown (how the figures in docs/ are made)")
    s.add_argument("--robots", action="store_true", help="print only the per-robot table")
    s.add_argument("--table", choices=("compact", "full"), help="compact: per family the tied leaders, the peer "
                   "and the spec that failed most (default for several families); full: every family x solver")
    s.add_argument("--seed", type=int, default=None, help="bootstrap seed (default: the library's fixed seed)")
    s.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default 2000, at most 100000)")
    s.add_argument("--allow-incomplete", action="store_true", help="read an incomplete or mixed run (marked)")
    s.add_argument("--width", type=int, metavar="N", help=WIDTH_HELP)
    s.set_defaults(func=cmd_summary)

    c = sub.add_parser("compare", help="compare two runs (or two specs of one run) per family x solver")
    c.add_argument("runs", nargs="+", metavar="RUN_DIR")
    c.add_argument("--specs", nargs=2, metavar=("SPEC1", "SPEC2"), help="compare two solver specs of one run")
    c.add_argument("--out", metavar="FILE", help="also write the table as markdown (.md) or HTML (.html)")
    c.add_argument("--alpha", type=float, default=0.05, help="significance level of each test, in (0, 1) (default 0.05)")
    c.add_argument("--sweep", action="store_true", help="plot success and mean time against each swept solver "
                   "parameter: the grid of one run, or the specs of one backend across runs (--out FILE.html)")
    c.add_argument("--all", action="store_true", help="list every cell, not only those with a significant verdict")
    c.add_argument("--no-color", action="store_true", help="no colours (also off when stdout is not a terminal or "
                   "NO_COLOR is set)")
    c.add_argument("--allow-incomplete", action="store_true", help="read incomplete or mixed runs (marked)")
    c.add_argument("--allow-noisy", action="store_true", help="give time verdicts on runs marked noisy")
    c.add_argument("--width", type=int, metavar="N", help=WIDTH_HELP)
    c.set_defaults(func=cmd_compare)

    v = sub.add_parser("verify", help="re-check converged / within_limits of every solve with a numpy FK")
    v.add_argument("run_dir")
    v.add_argument("--max-rows", type=int, default=50, help="disagreements listed (default 50; all are counted)")
    v.add_argument("--allow-incomplete", action="store_true", help="read an incomplete or mixed run (marked)")
    v.add_argument("--ikbench", metavar="PATH", default=None,
                   help="the harness binary: its verdicts (ikbench verify --verdicts) decide, and the numpy "
                        "recomputation is held to them as a cross-check")
    v.set_defaults(func=cmd_verify)

    tl = sub.add_parser("tail", help="the slow tail of the solve times: p99.9 and max beside the median per cell, "
                        "and the slowest solves with their attempts, iterations and cause (docs/analysis.md)")
    tl.add_argument("run_dir")
    tl.add_argument("--fraction", type=float, default=0.001,
                    help="the share of each cell's solves listed, slowest first, at least one (default 0.001)")
    tl.add_argument("--threshold-us", type=float, default=1000.0,
                    help="count the solves slower than this [us] (default 1000)")
    tl.add_argument("--solver", action="append", metavar="SPEC", help="only this spec (repeatable)")
    tl.add_argument("--family", action="append", metavar="FAMILY", help="only this family (repeatable)")
    tl.add_argument("--max-rows", type=int, default=50, help="slow solves listed (default 50)")
    tl.add_argument("--allow-incomplete", action="store_true", help="read an incomplete or mixed run (marked)")
    tl.set_defaults(func=cmd_tail)

    pl = sub.add_parser("plot", help="PNG/SVG plots of one or more runs (overlaid), and report.html for one run; "
                        "plot convergence|time|success RUN_DIR --family F --solvers A,B: one figure of chosen specs "
                        "on chosen families (plot convergence --help)")
    from .plot_commands import add_arguments

    pl.description = ("PNG/SVG plots of one or more runs (overlaid), and report.html for one run. One figure of "
                      "chosen specs on chosen families: plot convergence|time|success RUN_DIR [--family F[,G]] "
                      "[--solvers A,B] [--out FILE] [--x iteration|time] [--allow-incomplete] (--x: convergence "
                      "only; plot convergence --help says more).")
    add_arguments(pl)
    pl.set_defaults(func=cmd_plot)

    r = sub.add_parser("report", help="write the self-contained interactive report.html of a run")
    from .report_commands import add_arguments as report_arguments

    report_arguments(r)
    r.set_defaults(func=cmd_report)

    t = sub.add_parser("tune", help="run a solver grid on a tuning set, pick a point by a criterion, evaluate "
                       "it on another set (docs/tuning.md)")
    from ..analysis.tune import add_arguments as tune_arguments

    tune_arguments(t)
    t.set_defaults(func=cmd_tune)

    for sp in (s, c, pl, r, t, tl):
        sp.epilog = EXIT_HELP_SIMPLE
    v.epilog = EXIT_HELP_VERIFY

    # The subcommand groups: their subcommands, checks and errors are their modules'.
    from . import gate_commands, history_commands

    g = sub.add_parser("gate", help="the regression gate: gate compare|update|show|history ... (docs/regression-gate.md)")
    gate_commands.build_parser(parser=g)
    g.set_defaults(group=gate_commands.run, group_parser=g)
    h = sub.add_parser("history", help="the history store: history add|list|show|trend|changes|export|publish|backfill "
                       "(docs/history.md)")
    history_commands.build_parser(parser=h)
    h.set_defaults(group=history_commands.run, group_parser=h)
    return p


MAX_COUNT_OPTION = 2**31 - 1
# Ranges of the numeric options: (attribute, option, lowest, highest); None = no bound.
NUMERIC_OPTIONS = [
    ("resamples", "--resamples", 1, 100_000),
    ("seed", "--seed", 0, 2**64 - 1),
    ("max_rows", "--max-rows", 0, None),
    # Counts of problems and of a trace's records: problem indices and iterations are below 2^31
    # (docs/results-format.md), so a larger count means nothing more. A clip has at least a frame.
    ("trace_problems", "--trace-problems", 0, MAX_COUNT_OPTION),
    ("trace_head", "--trace-head", 0, MAX_COUNT_OPTION),
    ("trace_points", "--trace-points", 0, MAX_COUNT_OPTION),
    ("clip_frames", "--clip-frames", 1, MAX_COUNT_OPTION),
    ("threads", "--threads", 0, 1024),
    ("runner_ups", "--runner-ups", 0, None),
    ("width", "--width", 0, 100_000),
]


def _bad_number(args):
    """Why a numeric option is out of its range (None if every one is in range)."""
    import math

    alpha = getattr(args, "alpha", None)
    if alpha is not None and not (math.isfinite(alpha) and 0 < alpha < 1):
        return f"--alpha {alpha}: expected a significance level strictly between 0 and 1"
    for attr, option, lo, hi in NUMERIC_OPTIONS:
        v = getattr(args, attr, None)
        if v is None or isinstance(v, bool) or not isinstance(v, int):
            continue
        if v < lo or (hi is not None and v > hi):
            return f"{option} {v}: expected an integer " + (f">= {lo}" if hi is None else f"in [{lo}, {hi}]")
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["plot"] and argv[1:2] and argv[1] in PLOT_KINDS:   # one figure of chosen specs and families
        from ..render.family_render import main as plot_kind_main

        return plot_kind_main(argv[2:], argv[1], prog=f"ikbench plot {argv[1]}")
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "group", None) is not None:   # gate, history: their own checks and errors
        return args.group(args, args.group_parser)
    args.command_line = "ikbench " + shlex.join(argv)
    if args.command == "summary":
        from ..analysis import stats

        args.seed = stats.BOOTSTRAP_SEED if args.seed is None else args.seed
        args.resamples = stats.BOOTSTRAP_RESAMPLES if args.resamples is None else args.resamples
    why = _bad_number(args)
    if why:
        parser.error(why)
    try:
        return args.func(args)
    except ResultsError as e:
        msg = " ".join(str(e).split())  # one line
        print(f"ikbench: error: {msg}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:  # a file the command reads or writes, refused by the system
        what = f"{e.filename}: " if e.filename else ""
        print(f"ikbench: error: {what}{e.strerror or e}", file=sys.stderr)
        return EXIT_BAD_INPUT
