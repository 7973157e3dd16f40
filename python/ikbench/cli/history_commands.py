"""`ikbench history COMMAND ...` (= `python3 -m ikbench history ...`): the history store.

    add RUN_DIR... [--db DB]                 record finished runs (figures, identity, machine, GB JSON, throughput)
    list [--machine ID] [--suite S]          runs in commit order, with their machine
    machines                                 machine identities of the store
    show RUN                                 one run: identity, machine, load, its cells' figures
    trend --figure F --family FAM --solver SPEC [--machine ID] [--out FILE.png|.html]
    changes [--figure F]... [--family FAM] [--solver SPEC] [--machine ID] [--all]
        (trend, changes, publish: --raw times as measured, not at the median speed of their runs;
         --include-noisy keeps the runs that are left out and listed as noisy; docs/history.md)
    export --format csv|json [--out FILE]    for other tools (json: import rebuilds the store)
    import FILE.json[.gz]                    add the records of an export (plain or gzip-compressed)
    publish DIR                              a static site of every series (docs/history.md)
    backfill --commits N                     build, run and add each of the last N commits

DB: an SQLite file (default results/history.sqlite), a PostgreSQL connection string (a
postgresql:// URL or libpq keyword=value pairs; the password from PGPASSWORD or ~/.pgpass, never
on the command line, and removed from every message), or a json export (FILE.json[.gz], read only:
what reads works, what writes is refused). Every file a command writes follows the output rule
(ikbench.io.safe_io): never over the store or another input, a device or a FIFO. Exit status: 0 done;
2 bad input (one line on stderr naming the file or field).
"""

import argparse
import json
import math
import sys

from ..io.redact import redact_secrets
from ..io.results import ResultsError
from ..analysis import backfill
from ..render.numbers import number
from .argtypes import INT32, int_in, seconds
from ..io.store_open import open_history
from ..io.store import DEFAULT_DB, describe_db

from .exits import EXIT_BAD_INPUT, EXIT_OK


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {redact_secrets(message)}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)


def _open(args, create=False, what="write to it"):
    return open_history(args.db, create=create, what=what)


def _warn(text):
    print(f"ikbench history: warning: {text}", file=sys.stderr)


def _fmt(v, digits=4):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return number(v, "sig", digits=digits, infinite="inf")
    return str(v)


def _table(rows, headers):
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True) + "\n"


def cmd_add(args):
    from ..analysis import record

    with _open(args, create=True, what="add runs") as store:
        for d in args.runs:
            rec = record.from_run_dir(d, repo=args.repo)
            for w in rec.get("warnings", []):
                _warn(w)
            rid, added = store.add_record(rec, replace=args.replace, where=str(d))
            r = rec["run"]
            what = (f"{len(rec['cells'])} cells, {len(rec['points'])} points" +
                    (f", {len({g['file'] for g in rec['gbench']})} Google Benchmark files" if rec["gbench"] else "") +
                    "".join(f", {x['file']}" for x in rec["documents"] if x["kind"] == "throughput"))
            rev = (r["git_commit"] or "no revision")[:10] + ("+dirty" if r["dirty"] else "")
            if added:
                print(f"history: added run {rid} ({rev}, suite {r['suite']}, {rec['machine']['label']}; {what}) "
                      f"to {store.name}")
            else:
                print(f"history: {d} is already run {rid} of {store.name} (--replace records it again)")
    return EXIT_OK


def cmd_list(args):
    from ..io import store_queries as queries

    with _open(args) as store:
        df = queries.runs(store, machine=args.machine, suite=args.suite)
        if args.limit:
            df = df.tail(args.limit)
        rows = [[r.run_id, queries.commit_label(r.git_commit, r.dirty), (r.commit_date or "")[:10],
                 (r.subject or "")[:48], r.suite, r.threads, r.machine, "noisy" if r.noisy else ""]
                for r in df.itertuples()]
        sys.stdout.write(_table(rows, ["run", "commit", "date", "subject", "suite", "threads", "machine", "load"]))
        skipped = queries.skipped(store)
        ms = queries.machines(store)
        print(f"{len(df)} runs; machines: " + "; ".join(f"{k} = {lab}" for k, lab in zip(ms["key"], ms["label"])))
        if skipped:
            print(f"{len(skipped)} commits without a run: " +
                  ", ".join(f"{s['git_commit'][:10]} ({s['reason']})" for s in skipped[-10:]))
    return EXIT_OK


def cmd_machines(args):
    from ..io import store_queries as queries

    with _open(args) as store:
        ms = queries.machines(store)
        sys.stdout.write(_table([[r.id, r.key, r.runs, r.label] for r in ms.itertuples()],
                                ["id", "key", "runs", "machine identity"]))
    return EXIT_OK


def cmd_show(args):
    from ..io import store_queries as queries

    with _open(args) as store:
        ref = queries.resolve_run(store, args.run)
        r, m, cells, docs = queries.run_details(store, int(ref["run_id"]))
        load = json.loads(r["load"]) if r["load"] else None
        print(f"run {r['id']}  key {r['key']}")
        print(f"  commit    {r['git_revision'] or '?'}  {r['commit_date'] or ''}  {r['subject'] or ''}")
        print(f"  suite     {r['suite']} (seed {r['suite_seed']}), {r['threads']} threads, "
              f"{r['start_time']} .. {r['end_time']}")
        print(f"  machine   {m['key']}: {m['label']}")
        if load:
            print(f"  load      {load.get('start')} -> {load.get('end')} on {load.get('cores')} cores"
                  f"{', noisy' if load.get('noisy') else ''}")
        print(f"  source    {r['source']}")
        if docs:
            print("  files     " + ", ".join(f"{d['file']} ({d['kind']})" for d in docs))
        if not cells.empty:
            rows = []
            for c in cells.itertuples():
                d = c._asdict()
                rows.append([c.family, c.solver, f"{d.get('successes')}/{d.get('solves')}",
                             _fmt(d.get("success_rate")), _fmt(d.get("time_us_median")), _fmt(d.get("time_us_mean")),
                             _fmt(d.get("time_us_p99")), _fmt(d.get("iterations_median"))])
            print()
            sys.stdout.write(_table(rows, ["family", "solver", "succ/solves", "success", "t.med [us]", "t.mean",
                                           "t.p99", "it.med"]))
    return EXIT_OK


def cmd_trend(args):
    from ..render import history_plots as plots
    from ..io import store_queries as queries
    from ..analysis import series
    from ..render.history_text import excluded_text, normalised_text, not_enough_text, step_text

    with _open(args) as store:
        if args.out:
            plots.check_trend_path(args.out, inputs=store.inputs)   # refused before the work
        pts = queries.points(store, figure=args.figure, family=args.family, solver=args.solver, machine=args.machine,
                             suite=args.suite, threads=args.threads)
        if pts.empty:
            raise ResultsError(f"{store.name}: no point of figure {args.figure!r}, family {args.family!r}, "
                               f"solver {args.solver!r}" + (f" on machine {args.machine}" if args.machine else "") +
                               " (ikbench history list; figures: docs/history.md)")
        found = series.series_of(store, pts, alpha=args.alpha, raw=args.raw, include_noisy=args.include_noisy)
        inputs = list(store.inputs)
    for s in found:
        src, fam, solver, fig, machine, suite, threads = s.key
        label = pts[pts["machine"] == machine]["machine_label"].iloc[0]
        print(f"{fig} of {fam} x {solver}: suite {suite}, {threads} threads, machine {machine} ({label})")
        print(f"  {normalised_text(s.normalised, fig)}")
        steps = {s.change_commit(c): c for c in s.changes}
        rows = []
        for r in s.pc.itertuples():
            c = steps.get(r.commit)
            ci = f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]" if not math.isnan(r.ci_low) else ""
            rows.append([r.commit, (r.commit_date or r.start_time or "")[:10], (r.subject or "")[:40], _fmt(r.value),
                         ci, r.runs, step_text(c.step, c.step_low, c.step_high, c.scale) +
                         f" p={c.p_value:.3g}" if c else ""])
        sys.stdout.write(_table(rows, ["commit", "date", "subject", fig, "95% interval", "runs", "change point"]))
        if not s.enough:
            print(f"change points: {not_enough_text(s.commits, s.need)}")
        elif not s.changes:
            print(f"change points: none in {s.commits} commits")
        if s.excluded:
            print(excluded_text(s.excluded, limit=20))
        print()
    if args.out:
        drawn = [s for s in found if not s.pc.empty]
        if not drawn:
            raise ResultsError(f"--out {args.out}: nothing to draw (every run of these series was left out as noisy; "
                               "--include-noisy keeps them)")
        path = plots.write_trend(drawn, args.out, inputs=inputs)
        print(f"written: {path}")
    return EXIT_OK


def cmd_changes(args):
    from ..analysis import series
    from ..render.history_text import excluded_text, not_enough_text, step_text

    with _open(args) as store:
        filters = dict(family=args.family, solver=args.solver, machine=args.machine, suite=args.suite)
        found = series.find_changes(store, figures=args.figure or None, alpha=args.alpha,
                                    include_dirty=args.include_dirty, raw=args.raw,
                                    include_noisy=args.include_noisy, **filters)
    df = found.table
    if not args.all:
        df = df[df["regression"]] if args.regressions else df
    shown = df.head(args.limit) if args.limit else df
    rows = [[r.commit, (r.commit_date or "")[:10], r.figure, r.family, r.solver, r.machine,
             step_text(r.step, r.step_low, r.step_high, r.scale), f"{r.p_value:.2g}",
             "worse" if r.regression else "better"] for r in shown.itertuples()]
    sys.stdout.write(_table(rows, ["commit", "date", "figure", "family", "solver", "machine", "step [95%]", "p",
                                   "verdict"]))
    print(f"{len(df)} change points in {found.series} series (E-Divisive means, permutation test p < {args.alpha}; "
          "success rates: Fisher's exact test, Bonferroni over splits); most recent first; times "
          + ("as measured" if args.raw else "at the median speed of their runs (--raw: as measured)"))
    if found.short:
        need = sorted({n for _, _, n in found.short}, key=lambda v: -1 if v is None else v)
        shown_short = [f"{k[3]} of {k[1]} x {k[2]} ({not_enough_text(c, n)})" for k, c, n in found.short[:5]]
        print(f"{len(found.short)} series without a verdict, not enough commits (need "
              f"{' or '.join('?' if n is None else str(n) for n in need)}): " + "; ".join(shown_short) +
              (", ..." if len(found.short) > 5 else ""))
    if not found.excluded.empty:
        runs = found.excluded.drop_duplicates("run_id").to_dict("records")
        print(excluded_text(runs, limit=20))
    return EXIT_OK


def cmd_export(args):
    import json

    from ..io.safe_io import atomic_write_bytes, check_output_path
    from ..io import store_exchange as exchange

    with _open(args) as store:
        inputs = list(store.inputs)
        if args.out:
            check_output_path(args.out, inputs=inputs)   # refused before the work
        if args.side_files:
            from ..io.safe_io import output_directory

            output_directory(args.side_files, inputs=inputs + ([args.out] if args.out else []))
        if args.format == "json":
            text = json.dumps(exchange.export_json(store, slim=args.slim), sort_keys=True, indent=0,
                              separators=(",", ":")) + "\n"
        else:
            text = exchange.export_csv(store, machine=args.machine)
        if args.side_files:
            written = exchange.write_side_files(store, args.side_files,
                                                inputs=[args.out] if args.out else [])
            print(f"side files: {len(written)} under {args.side_files}", file=sys.stderr)
    if args.out:
        atomic_write_bytes(args.out, exchange.export_bytes(text, args.out), inputs=inputs)
        print(f"written: {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_import(args):
    from ..io import store_exchange as exchange

    with _open(args, create=True, what="import into it") as store:
        docs = [(f, exchange.read_export(f)) for f in args.files]
        total = [0, 0]
        for f, doc in docs:
            a, p = exchange.import_json(store, doc, source=f)
            total[0] += a
            total[1] += p
        print(f"history: {total[0]} runs added, {total[1]} already present, in {store.name}")
    return EXIT_OK


def cmd_publish(args):
    from ..render import site

    with _open(args) as store:
        index = site.publish(store, args.out_dir, alpha=args.alpha, raw=args.raw, include_noisy=args.include_noisy)
    print(f"site: {index}")
    return EXIT_OK


def cmd_backfill(args):
    return backfill.main_from_args(args)


DESCRIPTION = "the history store of finished runs: add, query, change points, site (docs/history.md)"
EPILOG = "Exit status: 0 done; 2 bad input (a one-line message on stderr)."


def build_parser(prog="ikbench history", parser=None):
    """The `history` subcommands, on a parser of their own or on `parser` (the `history` group of
    `python3 -m ikbench`'s parser tree)."""
    p = parser if parser is not None else _Parser(prog=prog)
    p.description, p.epilog = DESCRIPTION, EPILOG
    sub = p.add_subparsers(dest="history_command", required=True, parser_class=_Parser)

    def db(sp):
        sp.add_argument("--db", default=DEFAULT_DB, help=f"SQLite file, PostgreSQL connection string (postgresql://... or "
                        f"host=... dbname=...; the password from PGPASSWORD or ~/.pgpass) or json export "
                        f"(read only) (default {DEFAULT_DB})")
        sp.epilog = "Exit status: 0 done; 2 bad input (a one-line message on stderr)."

    def filters(sp, figure_required=False):
        sp.add_argument("--machine", help="machine identity: id, key prefix or text of its label")
        sp.add_argument("--suite", help="only runs of this suite")

    def speed(sp):
        sp.add_argument("--raw", action="store_true", help="times as measured (default: each run's speed factor "
                        "taken out, docs/history.md \"Machine speed\")")
        sp.add_argument("--include-noisy", action="store_true", help="keep the noisy runs in the time series (a load "
                        "above the cores, a speed far from the others'); they are left out and listed by default")

    def alpha(sp):
        sp.add_argument("--alpha", type=float, default=0.01, help="significance of a change point (default 0.01)")

    a = sub.add_parser("add", help="record finished runs in the store")
    a.add_argument("runs", nargs="+", metavar="RUN_DIR")
    a.add_argument("--replace", action="store_true", help="record a run that is already in the store again")
    a.add_argument("--repo", help="git work tree that knows the runs' commits (default: this source tree)")
    db(a)
    a.set_defaults(func=cmd_add)

    ls = sub.add_parser("list", help="runs in commit order, by commit and machine")
    filters(ls)
    ls.add_argument("--limit", type=int_in(0, INT32), default=0, help="only the last N runs")
    db(ls)
    ls.set_defaults(func=cmd_list)

    m = sub.add_parser("machines", help="the machine identities of the store")
    db(m)
    m.set_defaults(func=cmd_machines)

    s = sub.add_parser("show", help="one run: identity, machine, load and its cells' figures")
    s.add_argument("run", metavar="RUN", help="run id, key or commit prefix, or the directory it was added from")
    db(s)
    s.set_defaults(func=cmd_show)

    t = sub.add_parser("trend", help="one figure of a family x solver across commits, with intervals and change points")
    t.add_argument("--figure", default="time_us_median", help="figure (default time_us_median; docs/history.md)")
    t.add_argument("--family", required=True, help="family (gbench:FILE for Google Benchmark, throughput)")
    t.add_argument("--solver", required=True, help="solver spec (a benchmark name for gbench:FILE)")
    t.add_argument("--threads", type=int_in(0, INT32), help="only runs with this thread count")
    t.add_argument("--out", help="also plot it: FILE.png, .svg, .pdf or .html")
    filters(t)
    speed(t)
    alpha(t)
    db(t)
    t.set_defaults(func=cmd_trend)

    c = sub.add_parser("changes", help="the change points of every series, most recent first")
    c.add_argument("--figure", action="append", help="only this figure (repeatable; default: docs/history.md)")
    c.add_argument("--family")
    c.add_argument("--solver")
    alpha(c)
    speed(c)
    c.add_argument("--regressions", action="store_true", help="only the steps for the worse")
    c.add_argument("--all", action="store_true", help="every change point (the default lists them all too)")
    c.add_argument("--include-dirty", action="store_true", help="also runs of modified work trees")
    c.add_argument("--limit", type=int_in(0, INT32), default=0, help="at most N rows")
    filters(c)
    db(c)
    c.set_defaults(func=cmd_changes)

    e = sub.add_parser("export", help="the store for other tools: csv (one row per point) or json (re-importable)")
    e.add_argument("--format", choices=("csv", "json"), required=True)
    e.add_argument("--out", help="file (default: stdout)")
    e.add_argument("--machine", help="csv: only this machine identity")
    e.add_argument("--slim", action="store_true", help="json: without the runs' side files and raw Google Benchmark "
                   "entries (their series points stay)")
    e.add_argument("--side-files", metavar="DIR", help="also write every run's Google Benchmark JSON and throughput "
                   "files, gzip-compressed, as DIR/<commit>/<suite>[-<run key>]/<file>.gz")
    db(e)
    e.set_defaults(func=cmd_export)

    i = sub.add_parser("import", help="add the records of a json export")
    i.add_argument("files", nargs="+", metavar="FILE.json[.gz]")
    db(i)
    i.set_defaults(func=cmd_import)

    pb = sub.add_parser("publish", help="write a static site of the whole store (index, per spec, per machine)")
    pb.add_argument("out_dir", metavar="DIR")
    alpha(pb)
    speed(pb)
    db(pb)
    pb.set_defaults(func=cmd_publish)

    bf = sub.add_parser("backfill", help="build, run and add each of the last N commits (git worktrees)")
    backfill_arguments(bf)
    db(bf)
    bf.set_defaults(func=cmd_backfill)
    return p


def backfill_arguments(p):
    """The options of `history backfill` (ikbench.analysis.backfill runs it)."""
    p.add_argument("--commits", type=int_in(1, INT32), required=True, help="the last N commits of the first-parent line")
    p.add_argument("--rev", default="HEAD", help="the newest commit (default HEAD)")
    p.add_argument("--repo", help="git repository (default: this source tree)")
    p.add_argument("--worktrees", default="build/history-worktrees", help="where the worktrees are made "
                   "(default build/history-worktrees; removed after each commit unless --keep)")
    p.add_argument("--runs-dir", default="results/history-runs", help="run directories, one per commit "
                   "(default results/history-runs)")
    p.add_argument("--suite", default="quick", help="suite to run (default quick)")
    p.add_argument("--threads", type=int_in(1, 1024), default=2, help="threads of the run (default 2)")
    p.add_argument("--jobs", type=int_in(1, 1024), default=2, help="build parallelism (default 2)")
    p.add_argument("--time-cap", type=seconds, default=3600, help="seconds per commit, build and runs (default 3600)")
    p.add_argument("--no-gbench", action="store_true", help="skip the Google Benchmark binaries")
    p.add_argument("--no-throughput", action="store_true", help="skip ikbench throughput")
    p.add_argument("--keep", action="store_true", help="keep the worktrees (and their builds)")


def main(argv=None, prog="ikbench history"):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(prog)
    return run(parser.parse_args(argv), parser)


def run(args, parser):
    """Runs parsed `history` arguments: their checks, the command, and its exit status."""
    alpha = getattr(args, "alpha", None)
    if alpha is not None:
        from ..analysis.changepoints import PERMUTATIONS

        if not (math.isfinite(alpha) and 1 / (PERMUTATIONS + 1) < alpha < 1):
            parser.error(f"--alpha {alpha}: expected a significance level above {1 / (PERMUTATIONS + 1):g} (the "
                         f"smallest p-value of {PERMUTATIONS} permutations) and below 1")
    db = getattr(args, "db", None)
    try:
        rc = args.func(args)
        if db is not None and describe_db(db) != str(db):
            _warn(f"--db {describe_db(db)}: a password on the command line is seen by every user of this machine (the "
                  "process list, shell history): give it in PGPASSWORD or ~/.pgpass")
        return rc
    except ResultsError as e:
        print(f"ikbench history: error: {redact_secrets(' '.join(str(e).split()))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:
        what = f"{e.filename}: " if e.filename else ""
        print(f"ikbench history: error: {redact_secrets(f'{what}{e.strerror or e}')}", file=sys.stderr)
        return EXIT_BAD_INPUT


__all__ = ["main", "run", "build_parser", "describe_db"]
