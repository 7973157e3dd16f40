#!/usr/bin/python3
"""Runs scripts/plot.py on results directories and checks what the plots contain, not only the
exit status: every plot of plots/index.json exists in every format, the expected plots and
panels are there; the per-family plots (time_distribution, success, iterations) have one panel
per family, titled by it, drawing exactly the specs that ran on that family (nothing pooled
across families); the heatmap's cells are figures.summarize's success and median time; a
success-vs-DOF panel draws at most 8 specs (unless --all-specs), the tied leaders among them; the
solver names are text in the SVG files; and report.html shows the plots.

    plot_check.py RESULTS_DIR [RESULTS_DIR...] [--out DIR]      (ctest: harness_plot_tiny)

`check(outdir, runs)` is also used by tests/python/test_plots.py. Exit status 0 when every check
passes, 1 otherwise (with the failed checks listed).
"""
import argparse
import csv
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


sys.path.insert(0, str(ROOT / "python"))


def _open_run_csv(run_dir, name):
    """A CSV file of a run as text: NAME.gz (what `ikbench run` writes) or NAME, else None."""
    import gzip

    for path, opener in ((Path(run_dir) / (name + ".gz"), gzip.open), (Path(run_dir) / name, open)):
        if path.exists():
            return opener(path, "rt", newline="")
    return None


def _solvers_and_families(run_dir):
    with _open_run_csv(run_dir, "solves.csv") as f:
        rows = list(csv.DictReader(f))
    solvers = sorted({r["solver"] for r in rows})
    traced = set()
    f = _open_run_csv(run_dir, "traces.csv")
    if f is not None:
        with f:
            traced = {r["family"] for r in csv.DictReader(f)}
    return solvers, traced


def _families_in_order(run_dir):
    with _open_run_csv(run_dir, "solves.csv") as f:
        return list(dict.fromkeys(r["family"] for r in csv.DictReader(f)))


def check(outdir, run_dirs, labels=None, formats=("png", "svgz"), all_specs=False):
    """List of failed checks (empty when all pass)."""
    import math

    from ikbench.analysis import curves, figures
    from ikbench.io import results

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
    for stem in ["success_vs_dof", "time_distribution", "success", "success_heatmap", "iterations"] + \
            [f"convergence-{re.sub(r'[^A-Za-z0-9._-]', '_', f)}" for f in sorted(families)]:
        expect(stem in plots, f"plot {stem} missing from index.json")
    for p in index["plots"]:
        for ext in formats:
            f = outdir / "plots" / f"{p['stem']}.{ext}"
            expect(f.exists() and f.stat().st_size > 1000, f"{f} missing or empty")
        expect(len(p["panels"]) > 0, f"{p['stem']}: no panel drawn")
    labels = labels or [None] * len(run_dirs)

    def name(k, solver):
        return f"{labels[k]}: {solver}" if multi else solver

    runs = [results.load(d, require_run_json=False) for d in run_dirs]
    summaries = [figures.summarize(r) for r in runs]
    fams = list(dict.fromkeys(f for d in run_dirs for f in _families_in_order(d)))
    # per family: one panel per family, in order, with exactly the specs that ran on it
    for stem in ("time_distribution", "success", "iterations"):
        if stem not in plots:
            continue
        panels = plots[stem]["panels"]
        expect([pn["title"] for pn in panels] == fams,
               f"{stem}: panels {[pn['title'] for pn in panels]} are not one per family {fams}")
        for pn in panels:
            want = set()
            for k, summ in enumerate(summaries):
                part = summ[(summ["family"] == pn["title"]) & summ["available"]]
                want |= {name(k, sv) for sv in part["solver"]}
            expect(set(pn["series"]) == want, f"{stem}: panel {pn['title']} draws {sorted(pn['series'])}, "
                                              f"the specs that ran on it are {sorted(want)}")
    drawn_somewhere = set()
    for stem in ("time_distribution", "success"):
        for pn in plots.get(stem, {"panels": []})["panels"]:
            drawn_somewhere |= set(pn["series"])
    for k, summ in enumerate(summaries):
        for sv in summ.loc[summ["available"], "solver"].unique():
            expect(name(k, sv) in drawn_somewhere, f"spec {name(k, sv)} drawn in no per-family plot")
    # the heatmap: its cells are the figures
    if "success_heatmap" in plots:
        for k, pn in enumerate(plots["success_heatmap"]["panels"]):
            summ = summaries[k].set_index(["family", "solver"])
            expect(len(pn["cells"]) == len(summ), f"success_heatmap: {len(pn['cells'])} cells, "
                                                  f"{len(summ)} family x solver cells in the run")
            for c in pn["cells"]:
                r = summ.loc[(c["family"], c["solver"])]
                if not r["available"]:
                    expect(c["success_rate"] is None, f"success_heatmap: n/a cell {c} has a figure")
                    continue
                expect(c["success_rate"] == float(r["success_rate"]),
                       f"success_heatmap: {c['family']} x {c['solver']}: {c['success_rate']} != {r['success_rate']}")
                med = float(r["time_us_median"])
                expect((c["time_us_median"] is None and not math.isfinite(med)) or c["time_us_median"] == med,
                       f"success_heatmap: {c['family']} x {c['solver']}: median {c['time_us_median']} != {med}")
    # success against DOF: at most 8 specs a panel (unless --all-specs), with the tied leaders
    if "success_vs_dof" in plots:
        cells = curves.dof_sweeps(runs[0].solves)
        for pn in plots["success_vs_dof"]["panels"]:
            part = cells[cells["sweep"] == pn["title"]]
            if part.empty:
                continue   # a run without a sweep: each family at its DOF
            specs = {sv for sv in pn["series"]}
            if not all_specs:
                expect(len(specs) <= curves.MAX_DOF_SPECS * len(run_dirs),
                       f"success_vs_dof: panel {pn['title']} draws {len(specs)} series")
                fam_set = set(", ".join(part["families"]).split(", "))
                leaders = figures.family_leaders(summaries[0][summaries[0]["family"].isin(fam_set)])
                lead = {s for ls in leaders["leaders"] for s in ls}
                picks = curves.dof_picks(summaries[0], fam_set)
                for s in lead & set(picks):
                    expect(name(0, s) in specs, f"success_vs_dof: panel {pn['title']}: tied leader {s} not drawn")
            else:
                for sv in part.loc[part["available"], "solver"].unique():
                    expect(name(0, sv) in specs, f"success_vs_dof: panel {pn['title']}: {sv} not drawn")
    for fam in families:
        stem = f"convergence-{re.sub(r'[^A-Za-z0-9._-]', '_', fam)}"
        if stem in plots:
            titles = [pn["title"] for pn in plots[stem]["panels"]]
            expect(any(t.startswith(f"{fam}: position error vs iteration") or
                       t.startswith(f"{fam}: orientation error vs iteration") for t in titles),
                   f"{stem}: no error-vs-iteration panel ({titles})")
            expect(any("vs time" in t for t in titles), f"{stem}: no error-vs-time panel")
    for ext in ("svg", "svgz"):
        if ext not in formats:
            continue
        for stem in ("iterations", "time_distribution", "success", "success_heatmap"):
            f = outdir / "plots" / f"{stem}.{ext}"
            if f.exists() and stem in plots:
                svg = gzip.decompress(f.read_bytes()).decode() if ext == "svgz" else f.read_text()
                texts = set(re.findall(r"<text[^>]*>([^<]*)</text>", svg))
                drawn = set().union(*[set(pn["series"]) for pn in plots[stem]["panels"]])
                for s in drawn:
                    expect(any(s in t for t in texts), f"{f.name}: series '{s}' not in the SVG text")
    report = outdir / "report.html"
    if report.exists():
        from ikbench.render.report import extract_data

        r = report.read_text()
        r = r + json.dumps(extract_data(r))  # the page's figures travel packed (gzip, base64)
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
