#!/usr/bin/python3
"""Runs scripts/plot.py on results directories and checks what the plots contain, not only the
exit status: every plot of plots/index.json exists in every format, the expected plots and
panels are there, each panel of the success, time and iteration plots draws every solver of the
runs (index.json's series, and the solver names as text in the SVG files), and report.html shows
the plots.

    plot_check.py RESULTS_DIR [RESULTS_DIR...] [--out DIR]      (ctest: harness_plot_tiny)

`check(outdir, runs)` is also used by tests/python/test_plots.py. Exit status 0 when every check
passes, 1 otherwise (with the failed checks listed).
"""
import argparse
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _solvers_and_families(run_dir):
    with open(Path(run_dir) / "solves.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    solvers = sorted({r["solver"] for r in rows})
    traced = set()
    tpath = Path(run_dir) / "traces.csv"
    if tpath.exists():
        with open(tpath, newline="") as f:
            traced = {r["family"] for r in csv.DictReader(f)}
    return solvers, traced


def check(outdir, run_dirs, labels=None, formats=("png", "svg")):
    """List of failed checks (empty when all pass)."""
    outdir = Path(outdir)
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    index_path = outdir / "plots" / "index.json"
    if not index_path.exists():
        return [f"{index_path} not written"]
    index = json.loads(index_path.read_text())
    plots = {p["stem"]: p for p in index["plots"]}
    multi = len(run_dirs) > 1
    solvers, families = set(), set()
    for d in run_dirs:
        s, f = _solvers_and_families(d)
        solvers |= set(s)
        families |= f
    expect(set(index["solvers"]) == solvers, f"index solvers {index['solvers']} != {sorted(solvers)}")
    for stem in ["success_vs_dof", "time_distribution", "iterations"] + \
            [f"convergence-{re.sub(r'[^A-Za-z0-9._-]', '_', f)}" for f in sorted(families)]:
        expect(stem in plots, f"plot {stem} missing from index.json")
    for p in index["plots"]:
        for ext in formats:
            f = outdir / "plots" / f"{p['stem']}.{ext}"
            expect(f.exists() and f.stat().st_size > 1000, f"{f} missing or empty")
        expect(len(p["panels"]) > 0, f"{p['stem']}: no panel drawn")
    labels = labels or [None] * len(run_dirs)

    def series_names(solver):
        return [f"{lab}: {solver}" if multi else solver for lab in labels]

    for stem in ("success_vs_dof", "iterations"):
        if stem not in plots:
            continue
        drawn = set().union(*[set(pn["series"]) for pn in plots[stem]["panels"]])
        for s in solvers:
            for name in series_names(s):
                expect(name in drawn, f"{stem}: series '{name}' not drawn (drawn: {sorted(drawn)})")
    if "time_distribution" in plots:
        drawn = " ".join(" ".join(pn["series"]) for pn in plots["time_distribution"]["panels"])
        for s in solvers:
            expect(s in drawn, f"time_distribution: solver '{s}' not drawn")
    for fam in families:
        stem = f"convergence-{re.sub(r'[^A-Za-z0-9._-]', '_', fam)}"
        if stem in plots:
            titles = [pn["title"] for pn in plots[stem]["panels"]]
            expect(any(t.startswith(f"{fam}: position error vs iteration") or
                       t.startswith(f"{fam}: orientation error vs iteration") for t in titles),
                   f"{stem}: no error-vs-iteration panel ({titles})")
            expect(any("vs time" in t for t in titles), f"{stem}: no error-vs-time panel")
    if "svg" in formats:
        for stem in ("success_vs_dof", "iterations", "time_distribution"):
            f = outdir / "plots" / f"{stem}.svg"
            if f.exists():
                texts = set(re.findall(r"<text[^>]*>([^<]*)</text>", f.read_text()))
                for s in solvers:
                    expect(any(s in t for t in texts), f"{f.name}: solver '{s}' not in the SVG text")
    report = outdir / "report.html"
    if report.exists():
        r = report.read_text()
        for p in index["plots"]:
            expect(f"plots/{p['stem']}." in r, f"report.html does not show {p['stem']}")
        for s in solvers:
            expect(s in r, f"report.html: solver '{s}' not in the summary table")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dirs", nargs="+")
    ap.add_argument("--out")
    args = ap.parse_args()
    cmd = [sys.executable, str(ROOT / "scripts" / "plot.py"), *args.run_dirs] + (["--out", args.out] if args.out else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        print(f"plot_check: plot.py exited with {p.returncode}", file=sys.stderr)
        return 1
    out = args.out or args.run_dirs[0]
    labels = None
    if len(args.run_dirs) > 1:
        labels = [r["label"] for r in json.loads((Path(out) / "plots" / "index.json").read_text())["runs"]]
    failures = check(out, args.run_dirs, labels)
    for f in failures:
        print(f"plot_check: FAILED: {f}", file=sys.stderr)
    if not failures:
        print(f"plot_check: the plots of {', '.join(args.run_dirs)} hold every expected plot, panel and solver")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
