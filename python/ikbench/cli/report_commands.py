"""The report command (`python3 -m ikbench report RUN_DIR`, and `ikbench report`, which the harness
forwards here): its options, then report.html written by ikbench.render.report, the history
section and the LaTeX tables when asked (docs/report.md)."""

import sys
import time
from pathlib import Path

from ..io.results import ResultsError, input_paths
from ..render.report import Options, Stages, write_report
from ..render.report_values import (DEFAULT_CLIP_FRAMES, DEFAULT_TRACE_HEAD, DEFAULT_TRACE_POINTS,
                                    DEFAULT_TRACE_PROBLEMS, trace_problems_arg)
from .exits import EXIT_OK


def add_arguments(ap):
    ap.add_argument("run_dir", metavar="RUN_DIR", help="results directory of `ikbench run`")
    ap.add_argument("--out", metavar="FILE", help="the page to write (default RUN_DIR/report.html)")
    ap.add_argument("--trace-problems", type=trace_problems_arg, default=DEFAULT_TRACE_PROBLEMS, metavar="K",
                    help=f"problems per family whose traces the viewer embeds, the first K of the run's traced "
                         f"sample, or 'all' (default {DEFAULT_TRACE_PROBLEMS}, as ikbench run --trace-problems)")
    ap.add_argument("--trace-head", type=int, default=DEFAULT_TRACE_HEAD, metavar="N",
                    help=f"records of a trace kept in full (default {DEFAULT_TRACE_HEAD})")
    ap.add_argument("--trace-points", type=int, default=DEFAULT_TRACE_POINTS, metavar="M",
                    help=f"records kept after those, at an even stride, plus the last (default {DEFAULT_TRACE_POINTS})")
    ap.add_argument("--clip-frames", type=int, default=DEFAULT_CLIP_FRAMES, metavar="F",
                    help=f"problems of a sequential family played as a clip (default {DEFAULT_CLIP_FRAMES})")
    ap.add_argument("--allow-incomplete", action="store_true", help="read an incomplete or mixed run (marked)")
    ap.add_argument("--progress", choices=("auto", "lines", "none"), default="auto",
                    help="a line per stage on stderr with its seconds and the peak memory: 'lines' always, 'auto' "
                         "(default) when stderr is a terminal, 'none' never")
    ap.add_argument("--history", metavar="DB", help="add a history section: each headline cell's trend across "
                    "commits in this store, with its change points (docs/history.md)")
    ap.add_argument("--latex", metavar="DIR",
                    help="also write the headline, per-robot and per-family tables as LaTeX (booktabs), one .tex file "
                         "per table, into DIR")


def main_from_args(args):
    for name, lowest in (("trace_problems", 0), ("trace_head", 0), ("trace_points", 0), ("clip_frames", 1)):
        if getattr(args, name) is not None and getattr(args, name) < lowest:
            raise ResultsError(f"--{name.replace('_', '-')} must be {lowest} or more")
    opts = Options(args.trace_problems, args.trace_head, args.trace_points, args.clip_frames)
    if getattr(args, "latex", None):
        from ..render import latex

        latex.check_directory(args.latex, inputs=input_paths(args.run_dir))
    t0 = time.monotonic()
    mode = getattr(args, "progress", "auto")
    show = mode == "lines" or (mode == "auto" and sys.stderr.isatty())
    progress = Stages(sys.stderr if show else None)
    path, data = write_report(args.run_dir, args.out, opts, allow_incomplete=args.allow_incomplete,
                              progress=progress)
    if getattr(args, "history", None):
        from ..render.history_report import add_history_section

        add_history_section(path, data, args.history, args.run_dir, allow_incomplete=args.allow_incomplete)
    size = path.stat().st_size
    print(f"report: {path.resolve()} ({size / 1e6:.1f} MB, {time.monotonic() - t0:.1f} s)")
    if getattr(args, "latex", None):
        from ..render import latex

        # the page's figures, rendered (not recomputed)
        tex = latex.write_tables(data, args.latex, inputs=input_paths(args.run_dir))
        print(f"latex: {len(tex)} tables in {Path(args.latex).resolve()}")
    return EXIT_OK
