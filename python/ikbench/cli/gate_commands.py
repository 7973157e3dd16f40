"""The regression gate's command line (`scripts/regress.py`, `python3 -m ikbench gate`):
compare, update, show, history. It reads the inputs (ikbench.analysis.gate_data), computes the verdicts
(ikbench.analysis.gate), renders them (ikbench.render.gate_render), prints and writes them, and turns the verdict
into the exit status: 0 no regression, 1 at least one regression, 2 bad input."""

import argparse
import sys
from pathlib import Path

from ..analysis import gate
from ..io import results
from ..analysis.gate import compare
from .exits import EXIT_BAD_INPUT, EXIT_OK, EXIT_REGRESSION
from ..analysis.gate_config import DEFAULT_CONFIG, load_config
from ..analysis.gate_data import BASELINE_FILE, BadInput, Dataset, load_baseline, load_runs, write_baseline  # noqa: F401
from ..render.gate_render import format_report, show_table
from ..io.safe_io import atomic_write_text
from .argtypes import INT32, int_in

REPO_ROOT = Path(__file__).resolve().parents[3]


def _run_inputs(paths):
    """The files (and directories) of the runs or baselines at `paths`: what an output must not replace."""
    names = ("", "run.json", BASELINE_FILE, *results.MANIFEST_FILES)
    return [Path(p) / n for p in paths if p for n in names]


def _write_text(path, text, inputs=()):
    atomic_write_text(path, text, inputs=inputs)


def cmd_compare(args):
    config = load_config(args.config)
    base = load_baseline(args.baseline)
    run = load_runs(args.run, getattr(args, "allow_incomplete", False))
    rep = compare(base, run, config, no_time=args.no_time, allow_missing=args.allow_missing,
                  allow_noisy=args.allow_noisy)
    sys.stdout.write(format_report(base, run, config, rep, markdown=False, only_changes=args.only_changes))
    if args.markdown:
        _write_text(args.markdown, format_report(base, run, config, rep, markdown=True, only_changes=args.only_changes),
                    inputs=_run_inputs([args.baseline, args.config, *args.run]))
    return EXIT_OK if rep.passed else EXIT_REGRESSION


def cmd_update(args):
    run = load_runs(args.run)
    target = Path(args.baseline) if args.baseline else REPO_ROOT / "results" / "baseline" / run.suite
    old = None
    if (target / BASELINE_FILE).exists():
        try:
            old = load_baseline(target)
        except BadInput as e:
            print(f"note: the old baseline is unreadable and will be replaced: {e}")
    limited = [f"{f} x {s}" for (f, s), c in run.cells.items() if c["statuses"].get("time-limit")]
    if limited:
        print(f"warning: {len(limited)} family x solver cells hit a time budget ({', '.join(limited[:5])}"
              f"{', ...' if len(limited) > 5 else ''}); their success and iterations depend on machine speed")
    run.kind = "baseline"
    if old is not None:
        try:
            config = load_config(args.config)
            rep = compare(old, run, config, allow_missing=True)
            if rep.counts["same"] == sum(rep.counts.values()):
                print(f"The new figures equal those of the old baseline {old.source} (time within its thresholds).")
            else:
                print("What this update changes (old baseline -> new):")
                sys.stdout.write(format_report(old, run, config, rep, markdown=False, only_changes=True))
                print()
        except BadInput as e:
            print(f"note: not comparable with the old baseline ({e})")
    out = write_baseline(run, target, inputs=_run_inputs(args.run))
    fams = {f for f, _ in run.cells}
    solvers = {s for _, s in run.cells}
    print(f"wrote {out}: suite '{run.suite}', {len(run.cells)} family x solver cells ({len(fams)} families, "
          f"{len(solvers)} solvers); commit it with the change that explains it")
    return EXIT_OK


def cmd_show(args):
    ds = load_baseline(args.dir)
    print(ds.describe())
    sys.stdout.write(show_table(ds))
    return EXIT_OK


def cmd_history(args):
    """scripts/regress.py history RUN [RUN...] --db DB [--last K | --segment]: RUN against the recent
    history of its machine identity (ikbench.analysis.history_gate builds that baseline)."""
    from ..analysis.history_gate import history_dataset

    if args.last < 1:
        raise BadInput(f"--last {args.last}: expected an integer >= 1")
    config = load_config(args.config)
    run = load_runs(args.run, getattr(args, "allow_incomplete", False))
    base = history_dataset(args.db, run, last=args.last, segment=args.segment, raw=args.raw,
                           include_noisy=args.include_noisy)
    rep = compare(base, run, config, no_time=args.no_time, allow_missing=args.allow_missing,
                  allow_noisy=args.allow_noisy)
    sys.stdout.write(format_report(base, run, config, rep, markdown=False, only_changes=args.only_changes))
    if args.markdown:
        _write_text(args.markdown, format_report(base, run, config, rep, markdown=True, only_changes=args.only_changes),
                    inputs=_run_inputs([args.config, *args.run]))
    return EXIT_REGRESSION if rep["regressions"] else EXIT_OK


def history_arguments(h, default_config):
    h.add_argument("run", nargs="+", help="results dir(s) of `ikbench run` (repeats of one build combined)")
    h.add_argument("--db", default="results/history.sqlite", help="history store: SQLite file, PostgreSQL connection "
                   "string or json export (default results/history.sqlite)")
    h.add_argument("--last", type=int_in(1, INT32), default=5, help="compare with the last K runs of this machine "
                   "(default 5)")
    h.add_argument("--segment", action="store_true", help="compare with the runs since each cell's last change point")
    h.add_argument("--raw", action="store_true", help="the history's times as measured (default: each run's speed "
                   "factor taken out, docs/history.md)")
    h.add_argument("--include-noisy", action="store_true", help="keep the history's noisy runs in the window (a load "
                   "above the cores, a speed far from the others')")
    h.add_argument("--config", default=str(default_config), help="thresholds file (default: %(default)s)")
    h.add_argument("--markdown", metavar="FILE", help="also write the report as markdown")
    h.add_argument("--no-time", action="store_true", help="do not compare times (deterministic figures only)")
    h.add_argument("--allow-noisy", action="store_true", help="compare times even when a run is marked noisy")
    h.add_argument("--allow-missing", action="store_true", help="report cells of the history absent from the run")
    h.add_argument("--only-changes", action="store_true", help="print only the rows that changed")
    h.add_argument("--allow-incomplete", action="store_true", help="read runs that are incomplete (marked as such)")



def build_parser(prog="regress.py", parser=None):
    """The gate's subcommands, on a parser of their own (scripts/regress.py) or on `parser` (the
    `gate` group of `python3 -m ikbench`'s parser tree)."""
    p = parser if parser is not None else argparse.ArgumentParser(prog=prog)
    p.description = gate.__doc__.split("\n\n")[0]
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = "Exit status: 0 no regression, 1 regression, 2 bad input. See docs/regression-gate.md."
    sub = p.add_subparsers(dest="gate_command", required=True)
    c = sub.add_parser("compare", help="compare RUN with BASELINE; exit 1 on any regression")
    c.add_argument("baseline", help="baseline dir (baseline.json) or a results dir / solves.csv")
    c.add_argument("run", nargs="+", help="results dir of `ikbench run` (solves.csv, run.json) or a solves.csv; "
                   "several repeated runs of one build are combined (fastest time per cell)")
    c.add_argument("--config", default=str(DEFAULT_CONFIG), help="thresholds file (default: %(default)s)")
    c.add_argument("--markdown", metavar="FILE", help="also write the report as markdown")
    c.add_argument("--no-time", action="store_true", help="do not compare times (deterministic figures only)")
    c.add_argument("--allow-noisy", action="store_true", help="compare times even when a run is marked noisy")
    c.add_argument("--allow-missing", action="store_true",
                   help="report baseline cells absent from the run instead of failing with exit 2")
    c.add_argument("--only-changes", action="store_true", help="print only the rows that changed")
    c.add_argument("--allow-incomplete", action="store_true",
                   help="read runs that are incomplete or whose files differ from their manifest (marked as such)")
    c.set_defaults(func=cmd_compare)
    u = sub.add_parser("update", help="write RUN's figures as the new baseline")
    u.add_argument("run", nargs="+", help="results dir(s) of `ikbench run` (repeats combined as for compare)")
    u.add_argument("--baseline", metavar="DIR", help="baseline dir (default: results/baseline/<suite>)")
    u.add_argument("--config", default=str(DEFAULT_CONFIG), help="thresholds used to show what changes")
    u.set_defaults(func=cmd_update)
    s = sub.add_parser("show", help="print the figures of a baseline or run")
    s.add_argument("dir", help="baseline dir, results dir or file")
    s.set_defaults(func=cmd_show)
    h = sub.add_parser("history", help="compare RUN with the recent history of its machine in a history store "
                       "(docs/history.md); exit 1 on any regression")
    history_arguments(h, DEFAULT_CONFIG)
    h.set_defaults(func=cmd_history)
    return p


def main(argv=None, prog="regress.py"):
    parser = build_parser(prog)
    return run(parser.parse_args(argv), parser)


def run(args, parser=None):
    """Runs parsed gate arguments; returns the exit status."""
    try:
        return args.func(args)
    except BadInput as e:
        print(f"regress.py: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK


