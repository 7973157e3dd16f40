"""PNG/SVG plots (for papers) of one or more results directories (scripts/plot.py, `ikbench plot`).

    plot RUN_DIR                       -> RUN_DIR/plots/*.png|svg, RUN_DIR/plots/index.json, and the
                                          run's interactive RUN_DIR/report.html (ikbench.report)
    plot RUN_A RUN_B --out DIR         -> the same plots with the runs overlaid, in DIR (no report)

Plots (docs/analysis.md gives the figure definitions they draw):

  convergence-<family>   median and interquartile band of the error over the traced solves vs
                         iteration and vs time (log y); a solve that stopped keeps its final error
  success_vs_dof         success rate [%] (converged and within limits, over all solves) per solver
                         vs DOF with Wilson 95 % intervals as error bars; n/a cells are not drawn
  time_distribution      ECDF of solve time per solver: successes only / all supported solves
  iterations             histogram of iterations per solver (supported solves)
  gbench-<file>          Google Benchmark JSON files of a run directory: time vs DOF (log-log)

Each solver spec keeps one colour in every plot (assigned by the sorted list of specs); with
several runs, each run has its own line style. plots/index.json lists every plot with its files,
panels and the series drawn in each panel (read back by tests and tools). SVG text is kept as text.
"""

import argparse
import json
import math
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from . import curves, figures
from .results import ResultsError, load, optional_json
from .safe_io import atomic_write_text, output_directory, save_figure

RUN_LINES = ("-", "--", ":", "-.")
RUN_MARKERS = ("o", "s", "^", "D")


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.fonttype"] = "none"      # text stays text (searchable, smaller)
    matplotlib.rcParams["svg.hashsalt"] = "ikbench"   # stable ids: the same files give the same SVG
    return matplotlib, plt


class Styles(dict):
    """One fixed look per solver spec, assigned by sorted spec: the 10 tab10 colours, then the
    same colours with dashed / dotted lines and other markers."""

    LINES = ("-", "--", ":")
    MARKERS = ("o", "s", "^")

    def __init__(self, solvers):
        super().__init__()
        _, plt = _mpl()
        cmap = plt.get_cmap("tab10")
        for i, s in enumerate(sorted(set(solvers))):
            self[s] = {"color": cmap(i % 10), "ls": self.LINES[(i // 10) % 3], "marker": self.MARKERS[(i // 10) % 3]}

    def line(self, solver, run_index=None):
        st = self[solver]
        ls = st["ls"] if run_index is None else RUN_LINES[run_index % len(RUN_LINES)]
        return {"color": st["color"], "ls": ls}

    def colour(self, solver):
        return self[solver]["color"]


class Plotter:
    def __init__(self, runs, outdir, formats, labels=None):
        self.runs = runs
        self.outdir = Path(outdir)
        self.formats = formats
        self.multi = len(runs) > 1
        self.labels = labels or run_labels(runs)
        specs = []
        for r in runs:
            specs += [s for s in r.solver_specs if s not in specs]
        self.solvers = sorted(specs)
        self.styles = Styles(self.solvers)
        self.index = []
        self.inputs = [p for r in runs for p in r.inputs]  # what no plot may replace

    def label(self, k, solver):
        return f"{self.labels[k]}: {solver}" if self.multi else solver

    def save(self, fig, stem, title):
        _, plt = _mpl()
        panels = []
        for ax in fig.axes:
            if not ax.get_visible() or not ax.has_data():
                continue
            labels = [lab for lab in ax.get_legend_handles_labels()[1] if not lab.startswith("_")]
            panels.append({"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
                           "series": labels})
        paths = []
        for ext in self.formats:
            p = self.outdir / f"{stem}.{ext}"
            save_figure(fig, p, inputs=self.inputs, dpi=110, bbox_inches="tight",
                        metadata={"Date": None} if ext == "svg" else None)
            paths.append(p)
        plt.close(fig)
        self.index.append({"stem": stem, "title": title, "files": [p.name for p in paths], "panels": panels})
        return title, paths

    def legend_right(self, fig, ncol=1):
        seen = {}
        for ax in fig.axes:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(lab, h)
        labels = sorted(seen, key=lambda lab: (lab.startswith("tolerance"), lab))
        fig.legend([seen[lab] for lab in labels], labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
                   ncol=ncol, frameon=False)

    def title_suffix(self):
        if self.multi:
            return "runs " + ", ".join(f"{lab} ({'solid' if i == 0 else RUN_LINES[i % 4]})"
                                       for i, lab in enumerate(self.labels))
        return f"suite {self.runs[0].suite}"

    # ------------------------------------------------------------ convergence
    def convergence(self):
        _, plt = _mpl()
        cells = {}  # (family, (k, solver)) -> traced solves; curves.convergence treats the solver as a label
        time_axis = set()
        for k, run in enumerate(self.runs):
            tr = run.traces
            if tr.empty:
                continue
            tcol = curves.time_column(tr)
            time_axis.add(tcol)
            for (fam, solver), seqs in curves.traced_solves(tr, tcol).items():
                cells[(fam, (k, solver))] = seqs
        per_family = defaultdict(list)
        for c in curves.convergence(None, cells=cells):
            per_family[c.family].append(c)
        written = []
        tol = self.runs[0].tolerances
        for family, series in sorted(per_family.items()):
            names = {"position": ("position error [m]", tol[0]), "orientation": ("orientation error [rad]", tol[1])}
            kinds = [(kind, None, *names[kind]) for kind in series[0].kinds]
            fig, axes = plt.subplots(len(kinds), 2, figsize=(13, 4.3 * len(kinds)), squeeze=False)
            nproblems = 0
            for c in sorted(series, key=lambda c: (c.solver[1], c.solver[0])):
                k, solver = c.solver
                nproblems = max(nproblems, c.solves)
                for row, (kind, _, _, _) in enumerate(kinds):
                    for col, b in enumerate((c.iteration[kind], c.time[kind])):
                        ax = axes[row][col]
                        ax.plot(b.grid, b.q50, lw=1.5, label=self.label(k, solver),
                                **self.styles.line(solver, k if self.multi else None))
                        ax.fill_between(b.grid, b.q25, b.q75, color=self.styles.colour(solver), alpha=0.08, lw=0)
            tname = "time since solve start [µs]" + ("" if time_axis == {"time_us"} else
                                                      " (recording pass, includes recording)")
            for row, (kname, _, label, tl) in enumerate(kinds):
                for c, xlabel in enumerate(("iteration (linear to 10, then log)", tname)):
                    ax = axes[row][c]
                    ax.set_yscale("log")
                    if c == 0:
                        ax.set_xscale("symlog", linthresh=10)
                        ax.set_xlim(left=0)
                    else:
                        ax.set_xscale("log")
                    ax.axhline(tl, color="black", ls=":", lw=1, label=f"tolerance {tl:g}")
                    ax.set_xlabel(xlabel)
                    ax.set_ylabel(f"{label}\n(median, band = 25-75 %)")
                    ax.grid(True, which="major", alpha=0.3)
                    ax.set_title(f"{family}: {kname} error vs {'iteration' if c == 0 else 'time'}", fontsize=10)
            self.legend_right(fig)
            fig.suptitle(f"Convergence, {self.title_suffix()}, family {family} ({nproblems} traced problems per "
                         "solver; a stopped solve keeps its final error)", fontsize=11)
            fig.tight_layout()
            written.append(self.save(fig, f"convergence-{safe_name(family)}", f"Convergence: {family}"))
        return written

    # ------------------------------------------------------------ success vs DOF
    def success_vs_dof(self):
        """Families whose names differ only in numbers (chain7-position, chain15-position, ...)
        form a DOF sweep: one panel per sweep with at least two DOF values. Without any sweep,
        one panel of all families pooled per DOF (markers only). Success = converged and within
        limits over all solves of the (sweep, solver, DOF) group; error bars: Wilson 95 %."""
        matplotlib, plt = _mpl()
        data = [(k, curves.dof_sweeps(run.solves)) for k, run in enumerate(self.runs)]
        sweeps = sorted(set().union(*(set(d["sweep"]) for _, d in data)))
        pooled = not sweeps
        if pooled:  # all families pooled per DOF (min_dofs=1 keeps a single DOF)
            data = [(k, curves.dof_sweeps(run.solves.assign(family="all families"), min_dofs=1))
                    for k, run in enumerate(self.runs)]
            sweeps = ["all families"]
        ncols = min(3, len(sweeps))
        nrows = (len(sweeps) + ncols - 1) // ncols
        fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 4.2 * nrows), squeeze=False)
        for ax, sweep in zip(axes.flat, sweeps):
            dofs = set()
            for k, cells in data:
                cells = cells[(cells["sweep"] == sweep) & cells["available"]]
                for solver in self.solvers:
                    c = cells[cells["solver"] == solver].sort_values("dof")
                    if c.empty:
                        continue
                    dofs |= set(int(d) for d in c["dof"])
                    x = c["dof"].to_numpy(dtype=float)
                    y = 100 * c["success_rate"].to_numpy(dtype=float)
                    err = np.vstack([y - 100 * c["success_ci_low"].to_numpy(dtype=float),
                                     100 * c["success_ci_high"].to_numpy(dtype=float) - y])
                    st = self.styles[solver]
                    ls = "none" if pooled else (RUN_LINES[k % 4] if self.multi else st["ls"])
                    ax.errorbar(x, y, yerr=err, marker=RUN_MARKERS[k % 4] if self.multi else st["marker"], ms=4,
                                ls=ls, color=st["color"], capsize=2, lw=1.2, elinewidth=0.8,
                                label=self.label(k, solver))
            dofs = sorted(dofs) or [1]
            if dofs[-1] / max(dofs[0], 1) > 8:
                ax.set_xscale("log")
            ax.set_xticks(dofs)
            ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            ax.set_xlabel("degrees of freedom (nv)")
            ax.set_ylabel("success rate [%] (Wilson 95 %)\nconverged and within limits / all solves")
            ax.set_ylim(-3, 103)
            ax.grid(True, alpha=0.3)
            ax.set_title(sweep, fontsize=10)
        for ax in list(axes.flat)[len(sweeps):]:
            ax.set_visible(False)
        self.legend_right(fig)
        fig.suptitle(f"Success rate vs DOF, {self.title_suffix()}"
                     + (" (families pooled per DOF)" if pooled else " (families differing only in DOF)"), fontsize=11)
        fig.tight_layout()
        return [self.save(fig, "success_vs_dof", "Success rate vs DOF")]

    # ------------------------------------------------------------ time distribution
    def time_distribution(self):
        _, plt = _mpl()
        fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
        for ax, only_ok, what in ((axes[0], True, "successes only"), (axes[1], False, "all supported solves")):
            for solver in self.solvers:
                for k, run in enumerate(self.runs):
                    s = run.solves[run.solves["solver"] == solver]
                    mask = figures.attempted_mask(s)
                    if only_ok:
                        mask &= figures.success_mask(s)
                    t = np.sort(s["time_us"].to_numpy(dtype=float)[mask])
                    t = t[np.isfinite(t) & (t > 0)]
                    if len(t) == 0:
                        continue
                    y = np.arange(1, len(t) + 1) / len(t)
                    ax.step(t, 100 * y, where="post", label=f"{self.label(k, solver)} (n={len(t)})",
                            **self.styles.line(solver, k if self.multi else None))
            ax.set_xscale("log")
            ax.set_xlabel("solve time [µs] (wall clock, whole solve call)")
            ax.set_title(f"Time ECDF: {what}")
            ax.grid(True, which="major", alpha=0.3)
            if ax.has_data():
                ax.legend(fontsize=7, loc="lower right")
        axes[0].set_ylabel("solves finished within the time [%]")
        fig.suptitle(f"Solve time, {self.title_suffix()}", fontsize=11)
        fig.tight_layout()
        return [self.save(fig, "time_distribution", "Solve time distribution")]

    # ------------------------------------------------------------ iterations
    def iterations(self):
        _, plt = _mpl()
        fig, ax = plt.subplots(figsize=(9, 5))
        data = {}
        for k, run in enumerate(self.runs):
            att = run.solves[figures.attempted_mask(run.solves)]
            for solver, its in att.groupby("solver", sort=False)["iterations"]:
                data[(k, solver)] = its.to_numpy()
        top = max([int(v.max()) for v in data.values() if len(v)] + [1])
        if top > 50:  # integer-aligned, roughly log-spaced bins; [-0.5, 0.5) holds solves done at the start
            bins = np.concatenate(([-0.5], np.unique(np.round(np.geomspace(1, top + 1, 40))) - 0.5))
        else:
            bins = np.arange(-0.5, top + 1.5)
        for (k, solver), v in sorted(data.items(), key=lambda x: (x[0][1], x[0][0])):
            if len(v):
                ax.hist(v, bins=bins, histtype="step", lw=1.4, label=self.label(k, solver),
                        **self.styles.line(solver, k if self.multi else None))
        if top > 50:
            ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel("iterations per solve (all attempts)")
        ax.set_ylabel("solves")
        ax.set_title(f"Iterations, {self.title_suffix()} (all families, supported solves)")
        ax.grid(True, alpha=0.3)
        if ax.has_data():
            ax.legend(fontsize=8)
        return [self.save(fig, "iterations", "Iterations histogram")]

    # ------------------------------------------------------------ Google Benchmark
    def gbench(self):
        """Time vs DOF (log-log) of every benchmark with a 'dof' counter in the JSON files of
        the (first) run directory. Names 'Group/<solver>/dof:N/<variant>' (bench_solvers) give
        one panel per (group, variant) with a line per solver in its run colours; other names
        (bench_kinematics: 'ForwardKinematics/dof:N/joint:T') one panel per group with a line per
        variant. PerIteration cases plot their time_per_iteration counter; repetitions their median."""
        _, plt = _mpl()
        written = []
        resdir = self.runs[0].path
        for fname in sorted(os.listdir(resdir)):
            if not fname.endswith(".json") or fname in ("run.json", "throughput.json", "models.json"):
                continue
            data = optional_json(resdir / fname)  # None unless a regular file of JSON
            if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
                continue
            panels = defaultdict(lambda: defaultdict(list))
            for b in data["benchmarks"]:
                if not isinstance(b, dict) or b.get("error_occurred") or b.get("run_type") == "aggregate" \
                        or "dof" not in b:
                    continue
                dof = _fnum(b["dof"])
                unit = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}.get(b.get("time_unit", "ns"), 1e-3)
                parts = str(b.get("run_name", b.get("name", ""))).split("/")
                d = str(int(dof)) if math.isfinite(dof) else ""
                rest = list(parts[1:])
                for cand in (f"dof:{d}", d):
                    if cand in rest:
                        rest.remove(cand)
                        break
                else:
                    for i, p in enumerate(rest):
                        if p.split(":")[-1].isdigit():
                            del rest[i]
                            break
                if rest and rest[0] in self.styles:
                    panel, series = "/".join([parts[0]] + rest[1:]), rest[0]
                else:
                    panel = parts[0]
                    series = "/".join(rest) + (f" [{b['label']}]" if b.get("label") else "")
                # PerIteration cases time whole 200-iteration solves: their figure is the
                # time_per_iteration counter [s], not the time of the call.
                if "time_per_iteration" in b:
                    value = _fnum(b["time_per_iteration"]) * 1e6
                    panel += " (time per iteration)"
                else:
                    value = _fnum(b.get("real_time")) * unit
                panels[panel][series or parts[0]].append((dof, value))
            if not panels:
                continue
            n = len(panels)
            ncols = min(2, n)
            nrows = (n + ncols - 1) // ncols
            fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 * ncols, 4.6 * nrows), squeeze=False)
            solver_panels = False
            for ax, (pname, series) in zip(axes.flat, sorted(panels.items())):
                for label, pts in sorted(series.items()):
                    # Repetitions (--benchmark_repetitions) give several points per DOF: their median.
                    by_dof = defaultdict(list)
                    for d_, v_ in pts:
                        by_dof[d_].append(v_)
                    pts = sorted((d_, float(np.median(v_))) for d_, v_ in by_dof.items())
                    if label in self.styles:
                        solver_panels = True
                        st = self.styles[label]
                        kw = {"color": st["color"], "ls": st["ls"], "marker": st["marker"]}
                    else:
                        kw = {"marker": "o"}
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], ms=3, label=label, **kw)
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_xlabel("degrees of freedom (nv)")
                ax.set_ylabel("time per call [µs] (real time)")
                ax.set_title(f"{fname}: {pname}", fontsize=10)
                ax.grid(True, which="major", alpha=0.3)
                if not solver_panels:
                    ax.legend(fontsize=7)
            for ax in list(axes.flat)[n:]:
                ax.set_visible(False)
            if solver_panels:
                self.legend_right(fig)
            fig.suptitle(f"Google Benchmark {fname}: time vs DOF (log-log)", fontsize=11)
            fig.tight_layout()
            written.append(self.save(fig, f"gbench-{safe_name(os.path.splitext(fname)[0])}",
                                     f"Google Benchmark: {fname}"))
        return written

    def write_index(self):
        doc = {"runs": [{"label": lab, "path": str(r.path), "suite": r.suite, "format_version": r.format_version}
                        for lab, r in zip(self.labels, self.runs)],
               "solvers": self.solvers, "plots": self.index}
        p = self.outdir / "index.json"
        return atomic_write_text(p, json.dumps(doc, indent=1) + "\n", inputs=self.inputs)


def safe_name(s):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)


def _fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def run_labels(runs):
    names = [r.path.resolve().name or str(r.path) for r in runs]
    if len(set(names)) == len(names):
        return names
    return [f"run{i + 1}" for i in range(len(runs))]


# ------------------------------------------------------------------ command line

def add_arguments(ap):
    ap.add_argument("results_dirs", nargs="+", metavar="RESULTS_DIR", help="results directories of `ikbench run`")
    ap.add_argument("--out", metavar="DIR", help="output directory (default RESULTS_DIR with one run; required "
                    "with several): plots go to DIR/plots, the report of one run to DIR/report.html")
    ap.add_argument("--no-report", action="store_true", help="plots only (no report.html)")
    ap.add_argument("--formats", default="png,svg", help="comma-separated image formats (default png,svg)")
    ap.add_argument("--allow-incomplete", action="store_true", help="read incomplete or mixed runs (marked)")


def main_from_args(args):
    formats = [f for f in args.formats.split(",") if f]
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if bad or not formats:
        raise ResultsError(f"--formats: expected png, svg or pdf, got '{args.formats}'")
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
    p = Plotter(runs, outdir, formats)
    plots = []
    plots += p.convergence()
    plots += p.success_vs_dof()
    plots += p.time_distribution()
    plots += p.iterations()
    plots += p.gbench()
    index = p.write_index()
    n = sum(len(x[1]) for x in plots)
    print(f"plots: {n} files in {outdir.resolve()} (index: {index.name})")
    if not args.no_report:
        if len(runs) == 1:  # the interactive report of the run (ikbench.report), linking these plots
            from . import report

            rep, _ = report.write_report(runs[0], base / "report.html", plots_dir=outdir)
            print(f"report: {rep.resolve()}")
        else:
            print("report: not written for several runs (one report per run: python3 -m ikbench report RUN_DIR; "
                  "runs compared: python3 -m ikbench compare A B --out FILE.html)")
    return 0


def main(argv=None):
    """scripts/plot.py's command line."""
    ap = argparse.ArgumentParser(prog="plot.py", description="Plots and an HTML report for ikbench results "
                                 "directories (several: overlaid).")
    add_arguments(ap)
    args = ap.parse_args(argv)
    try:
        return main_from_args(args)
    except ResultsError as e:
        print(f"plot.py: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
