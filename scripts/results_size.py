#!/usr/bin/python3
"""The size of a results directory, file by file (docs/results-format.md "Size on the default run").

    scripts/results_size.py RUN_DIR [--max-mb N]

Prints every file at the top of RUN_DIR and every subdirectory (summed, e.g. plots/) with its
size in bytes and MB (10^6 bytes), largest first, then the total: what `scripts/run.sh` leaves
there (the run's files, the Google Benchmark JSON, throughput.json, the plots and report.html).
With --max-mb, exits 1 when the total is above N MB.
"""
import argparse
import os
import sys
from pathlib import Path


def sizes(run_dir):
    """[(name, bytes)] of the entries of run_dir, a directory's files summed (links not followed)."""
    out = []
    for entry in sorted(Path(run_dir).iterdir()):
        if entry.is_symlink():
            continue
        if entry.is_dir():
            total = sum(f.stat().st_size for f in entry.rglob("*") if f.is_file() and not f.is_symlink())
            out.append((entry.name + "/", total))
        elif entry.is_file():
            out.append((entry.name, entry.stat().st_size))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="results_size.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", metavar="RUN_DIR")
    ap.add_argument("--max-mb", type=float, metavar="N", help="exit 1 when the total is above N MB")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.run_dir):
        print(f"results_size.py: {args.run_dir}: not a directory", file=sys.stderr)
        return 2
    rows = sorted(sizes(args.run_dir), key=lambda r: -r[1])
    total = sum(b for _, b in rows)
    width = max([len(n) for n, _ in rows] + [5])
    for name, b in rows:
        print(f"{name:<{width}}  {b:>12}  {b / 1e6:8.2f} MB")
    print(f"{'total':<{width}}  {total:>12}  {total / 1e6:8.2f} MB")
    if args.max_mb is not None and total > args.max_mb * 1e6:
        print(f"results_size.py: {total / 1e6:.1f} MB is above {args.max_mb:g} MB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
