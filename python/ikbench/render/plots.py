"""PNG and (compressed) SVG plots (for papers) of one or more results directories (scripts/plot.py, `ikbench plot`).

    plot RUN_DIR                       -> RUN_DIR/plots/*.png|svgz, RUN_DIR/plots/index.json, and the
                                          run's interactive RUN_DIR/report.html (ikbench.render.report)
    plot RUN_A RUN_B --out DIR         -> the same plots with the runs overlaid, in DIR (no report)

Plots (docs/analysis.md gives the figure definitions they draw). Figures of solves are drawn per
family, never pooled across families (a 2-DOF planar chain beside a 60-DOF humanoid says nothing):

  convergence-<family>   median and interquartile band of the error over the traced solves vs
                         iteration and vs time (log y); a solve that stopped keeps its final error;
                         the specs report.html draws by default (the four best ranked, the KDL
                         peers; --all-specs: every spec), the traced count in the legend, and a
                         note with the re-run that traces more when fewer than 30 were traced.
                         One figure of chosen specs and families: `plot convergence RUN_DIR
                         --family F --solvers A,B` (also `time`, `success`; ikbench.render.family_render)
  time_distribution      one panel per family: box plot of the solve time per spec (supported
                         solves, log axis; box = quartiles, whiskers = Tukey's 1.5 IQR fences)
  success                one panel per family: success rate [%] per spec with Wilson 95 % intervals
  success_heatmap        solver x family: colour = success rate, text = median time [us]
  success_vs_dof         success rate [%] (converged and within limits, over all solves) per solver
                         vs DOF with Wilson 95 % intervals, one panel per sweep of families; at most
                         8 specs per panel (curves.dof_picks: the tied leaders, kdl-lma, dls, ccd,
                         fabrik, kdl-nr-jl; --all-specs: every spec); n/a cells are not drawn
  iterations             one panel per family: box plot of the iterations per spec (supported solves)
  gbench-<file>          Google Benchmark JSON files of a run directory: time vs DOF (log-log) and,
                         where the JSON has a success_rate counter, success vs DOF beside it; in the
                         time panel a point whose success is below 100 % is drawn hollow, one with
                         no success as x (a solver that fails at once is not fast)

Each solver spec keeps one look in every plot, run and report (ikbench.render.styles: a colour of a
24-colour palette, a line style and a marker, from the spec's text alone); with several runs, each
run has its own line style. Legends sit outside the data, titles are per
panel with one figure title above them (constrained layout). Each figure is made readable at 100 %
zoom before it is saved (`readable`: 9 pt ticks at 110 dpi, compact numbers, colliding numeric
labels thinned); a spec longer than 15 characters is drawn by its abbreviation
(styles.short_labels) with the key under the figure. plots/index.json lists every plot
with its files, panels and the series drawn in each panel (for the heatmap also its cells); tests
and tools read it back. SVG text is kept as text.
"""

import json
import math
import os
import textwrap
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis import curves, family_figures, figures
from ..io.results import optional_json
from ..io.safe_io import atomic_write_text, save_figure
from .styles import label_key, matplotlib_modules as _mpl, safe_name, short_labels, spec_style

DPI = 110          # of the PNG files: a 9 pt text is 14 px high at 100 % zoom
TICK_PT = 9        # the smallest tick label, legend and note text of a saved figure
LABEL_PT = 10      # axis labels and panel titles
RUN_LINES = ("-", "--", ":", "-.")
RUN_MARKERS = ("o", "s", "^", "D")


class Styles(dict):
    """One fixed look per solver spec, the package's (ikbench.render.styles.spec_style: a function of the
    spec's text alone, so a spec looks the same in every plot, run and report): colour, line style
    and marker."""

    def __init__(self, solvers):
        super().__init__()
        for s in dict.fromkeys(solvers):
            st = spec_style(s)
            self[s] = {"color": st.colour, "ls": st.ls, "marker": st.marker}

    def line(self, solver, run_index=None):
        st = self[solver]
        ls = st["ls"] if run_index is None else RUN_LINES[run_index % len(RUN_LINES)]
        return {"color": st["color"], "ls": ls}

    def colour(self, solver):
        return self[solver]["color"]


class Plotter:
    def __init__(self, runs, outdir, formats, labels=None, all_specs=False):
        self.runs = runs
        self.outdir = Path(outdir)
        self.formats = formats
        self.multi = len(runs) > 1
        self.labels = labels or run_labels(runs)
        self.all_specs = all_specs
        specs = []
        for r in runs:
            specs += [s for s in r.solver_specs if s not in specs]
        self.solvers = sorted(specs)
        self.styles = Styles(self.solvers)
        self.index = []
        self.inputs = [p for r in runs for p in r.inputs]  # what no plot may replace
        self._summaries = {}

    def summary(self, k):
        """figures.summarize of run k (ranks, Wilson intervals), computed once."""
        if k not in self._summaries:
            self._summaries[k] = figures.summarize(self.runs[k])
        return self._summaries[k]

    def families(self):
        """The families of the runs, in file order."""
        return list(dict.fromkeys(f for r in self.runs for f in r.solves["family"]))

    def label(self, k, solver):
        return f"{self.labels[k]}: {solver}" if self.multi else solver

    def tick(self, k, solver):
        """A spec's tick label: its abbreviation (styles.short_labels; the key under the figure
        spells it out), after the run's number when runs are overlaid."""
        if not hasattr(self, "_short"):
            self._short = short_labels(self.solvers)
        return f"{k + 1}: {self._short[solver]}" if self.multi else self._short[solver]

    def most_specs(self):
        """The most specs that one family's panel draws side by side (over the overlaid runs)."""
        return max((sum(len(self._family_specs(k, f)) for k in range(len(self.runs))) for f in self.families()),
                   default=0)

    def key(self, fig, specs, notes=()):
        """Under the figure, the key of its abbreviated specs (abbreviation = spec), with runs
        overlaid the run numbers of the tick labels, then `notes`."""
        pairs = label_key({s: lab for s, lab in short_labels(self.solvers).items() if s in set(specs)})
        lines = [f"{lab} = {spec}" for lab, spec in pairs] + list(notes)
        if self.multi:
            lines.insert(0, "runs: " + ", ".join(f"{i + 1}: {lab}" for i, lab in enumerate(self.labels)))
        if lines:
            fig.text(0.0, -0.01, "\n".join(textwrap.wrap("; ".join(lines), 140)), ha="left", va="top",
                     fontsize=TICK_PT, family="monospace")

    def save(self, fig, stem, title):
        _, plt = _mpl()
        readable(fig)
        panels = []
        for ax in fig.axes:
            if not ax.get_visible() or getattr(ax, "_ikbench_skip", False) or not ax.has_data():
                continue
            labels = getattr(ax, "_ikbench_series", None)
            if labels is None:
                labels = [lab for lab in ax.get_legend_handles_labels()[1] if not lab.startswith("_")]
            panel = {"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
                     "series": list(labels)}
            if hasattr(ax, "_ikbench_cells"):
                panel["cells"] = ax._ikbench_cells
            panels.append(panel)
        paths = []
        for ext in self.formats:
            p = self.outdir / f"{stem}.{ext}"
            save_figure(fig, p, inputs=self.inputs, dpi=DPI, bbox_inches="tight",
                        metadata={"Date": None} if ext in ("svg", "svgz") else None)
            paths.append(p)
        plt.close(fig)
        self.index.append({"stem": stem, "title": title, "files": [p.name for p in paths], "panels": panels})
        return title, paths

    def legend_right(self, fig, ncol=1):
        """One legend for the figure, outside the panels on the right (never over the data)."""
        seen = {}
        for ax in fig.axes:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(lab, h)
        labels = sorted(seen, key=lambda lab: (lab.startswith("tolerance"), lab))
        if labels:
            fig.legend([seen[lab] for lab in labels], labels, loc="center left", bbox_to_anchor=(1.0, 0.5),
                       fontsize=TICK_PT, ncol=ncol, frameon=False)

    def title_suffix(self):
        if self.multi:
            return "runs " + ", ".join(f"{lab} ({'solid' if i == 0 else RUN_LINES[i % 4]})"
                                       for i, lab in enumerate(self.labels))
        return f"suite {self.runs[0].suite}"

    def grid(self, n, width=4.6, height=3.6, max_cols=4, labels=0):
        """A constrained-layout figure of n panels (at most max_cols per row); unused axes hidden.
        `labels`: the most category labels a panel puts side by side on its x axis (each needs
        a 9 pt line, 0.17 in with its gap), which widens the panels."""
        _, plt = _mpl()
        width = max(width, 0.17 * labels + 1.3)
        ncols = max(1, min(max_cols, n))
        nrows = max(1, (n + ncols - 1) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False,
                                 layout="constrained")
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        return fig, list(axes.flat)[:n]

    # ------------------------------------------------------------ convergence
    def convergence(self):
        _, plt = _mpl()
        cells = {}  # (family, (k, solver)) -> traced solves; curves.convergence treats the solver as a label
        time_axis = set()
        for k, run in enumerate(self.runs):
            table = curves.read_traces(run).check()   # traces.csv without q, checked against the manifest
            tr = table.frame
            if tr.empty:
                continue
            tcol = curves.time_column(tr)
            time_axis.add(tcol)
            for (fam, solver), seqs in curves.traced_solves(tr, tcol).items():
                cells[(fam, (k, solver))] = seqs
            del table, tr
        if not self.all_specs:
            # per family the specs report.html draws by default: the four best ranked, the KDL peers
            from ..analysis.family_figures import default_picks

            picks = defaultdict(set)
            for k in range(len(self.runs)):
                for fam, specs in default_picks(self.summary(k)).items():
                    picks[fam] |= set(specs)
            cells = {key: v for key, v in cells.items() if key[1][1] in picks[key[0]]}
        per_family = defaultdict(list)
        for c in curves.convergence(None, cells=cells):
            per_family[c.family].append(c)
        written = []
        tol = self.runs[0].tolerances
        for family, series in sorted(per_family.items()):
            names = {"position": ("position error [m]", tol[0]), "orientation": ("orientation error [rad]", tol[1])}
            kinds = [(kind, None, *names[kind]) for kind in series[0].kinds]
            fig, axes = plt.subplots(len(kinds), 2, figsize=(13, 4.3 * len(kinds)), squeeze=False,
                                     layout="constrained")
            nproblems = 0
            for c in sorted(series, key=lambda c: (c.solver[1], c.solver[0])):
                k, solver = c.solver
                nproblems = max(nproblems, c.solves)
                st = self.styles[solver]
                for row, (kind, _, _, _) in enumerate(kinds):
                    for col, b in enumerate((c.iteration[kind], c.time[kind])):
                        ax = axes[row][col]
                        ax.plot(b.grid, b.q50, lw=1.5, label=f"{self.label(k, solver)} (n={c.solves} traced)",
                                marker=st["marker"], ms=3.5,
                                markevery=0.12, **self.styles.line(solver, k if self.multi else None))
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
            nfam = family_figures.family_problems(self.runs[0], family)
            if nproblems < min(family_figures.MIN_TRACED, nfam):
                specs0 = [c.solver[1] for c in series if c.solver[0] == 0]
                target = family_figures.MIN_TRACED if nfam > family_figures.MIN_TRACED else "all"
                fig.text(0.0, -0.01, textwrap.fill(
                    f"Only {nproblems} of the family's {nfam} problems were traced: each band is the spread of "
                    f"{nproblems} solves. To trace more, re-run: "
                    f"{family_figures.rerun_command(self.runs[0], specs0, target)}", 150, subsequent_indent="    "),
                    ha="left", va="top", fontsize=8, family="monospace")
            written.append(self.save(fig, f"convergence-{safe_name(family)}", f"Convergence: {family}"))
        return written

    # ------------------------------------------------------------ success vs DOF
    def success_vs_dof(self):
        """Families whose names differ only in numbers (chain7-position, chain15-position, ...)
        form a DOF sweep: one panel per sweep with at least two DOF values, drawing at most
        curves.MAX_DOF_SPECS specs (curves.dof_picks over the first run; every spec with
        --all-specs). Without any sweep, one panel with a point per family at its DOF (markers
        only, nothing pooled). Success = converged and within limits over all solves of the
        (family or sweep, solver, DOF) group; error bars: Wilson 95 %."""
        matplotlib, plt = _mpl()
        data = [(k, curves.dof_sweeps(run.solves)) for k, run in enumerate(self.runs)]
        sweeps = sorted(set().union(*(set(d["sweep"]) for _, d in data)))
        per_family = not sweeps
        if per_family:  # no sweep: each family is a point at its DOF (a "sweep" of one family each)
            data = []
            for k, run in enumerate(self.runs):
                frames = [curves.dof_sweeps(part.assign(family="families at their DOF"), min_dofs=1)
                          .assign(families=fam) for fam, part in run.solves.groupby("family", sort=False)]
                data.append((k, pd.concat(frames, ignore_index=True)))
            sweeps = ["families at their DOF"]
        fig, axes = self.grid(len(sweeps), width=5.4, height=4.2, max_cols=3)
        shown = 0
        for ax, sweep in zip(axes, sweeps):
            dofs = set()
            cells0 = data[0][1]
            fams = set(", ".join(cells0.loc[cells0["sweep"] == sweep, "families"]).split(", "))
            picks = self.solvers if self.all_specs or per_family else \
                curves.dof_picks(self.summary(0), fams)
            for k, cells in data:
                cells = cells[(cells["sweep"] == sweep) & cells["available"]]
                for solver in picks:
                    c = cells[cells["solver"] == solver].sort_values("dof")
                    if c.empty:
                        continue
                    dofs |= set(int(d) for d in c["dof"])
                    x = c["dof"].to_numpy(dtype=float)
                    y = 100 * c["success_rate"].to_numpy(dtype=float)
                    err = np.vstack([y - 100 * c["success_ci_low"].to_numpy(dtype=float),
                                     100 * c["success_ci_high"].to_numpy(dtype=float) - y])
                    st = self.styles[solver]
                    ls = "none" if per_family else (RUN_LINES[k % 4] if self.multi else st["ls"])
                    ax.errorbar(x, y, yerr=err, marker=RUN_MARKERS[k % 4] if self.multi else st["marker"], ms=4,
                                ls=ls, color=st["color"], capsize=2, lw=1.2, elinewidth=0.8,
                                label=self.label(k, solver))
            shown = max(shown, len(picks))
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
        self.legend_right(fig)
        which = ("every spec" if self.all_specs or per_family else
                 f"at most {curves.MAX_DOF_SPECS} specs per panel: the tied leaders, kdl-lma, dls, ccd, fabrik "
                 "(--all-specs: every spec)")
        fig.suptitle(f"Success rate vs DOF, {self.title_suffix()}"
                     + (" (each family at its DOF; no sweep of families)" if per_family else
                        f" (families differing only in DOF; {which})"), fontsize=11)
        return [self.save(fig, "success_vs_dof", "Success rate vs DOF")]

    # ------------------------------------------------------------ per family: boxes and bars
    def _family_specs(self, k, family):
        """The specs of run k on `family`, best ranked first, then unranked, then n/a: (rows of
        the summary in that order)."""
        part = self.summary(k)
        part = part[part["family"] == family]
        return part.assign(_o=part["rank"].fillna(np.inf), _na=~part["available"]).sort_values(
            ["_na", "_o"], kind="stable")

    def _boxes(self, column, stem, title, ylabel, log=True):
        """One panel per family: a box plot of `column` per spec over the supported solves (box =
        quartiles, whiskers = Tukey's 1.5 IQR fences, outliers as dots), specs best first."""
        families = self.families()
        fig, axes = self.grid(len(families), labels=self.most_specs())
        used = set()
        for ax, fam in zip(axes, families):
            vals, names, colours, ticks = [], [], [], []
            for k, run in enumerate(self.runs):
                s = run.solves[run.solves["family"] == fam]
                att = s[figures.attempted_mask(s)]
                by = {sv: g[column].to_numpy(dtype=float) for sv, g in att.groupby("solver", sort=False)}
                for sv in self._family_specs(k, fam)["solver"]:
                    v = by.get(sv, np.zeros(0))
                    v = v[np.isfinite(v) & ((v > 0) if log else (v >= 0))]
                    if len(v):
                        vals.append(v)
                        names.append(self.label(k, sv))
                        ticks.append(self.tick(k, sv))
                        used.add(sv)
                        colours.append(self.styles.colour(sv))
            if vals:
                bp = ax.boxplot(vals, whis=1.5, patch_artist=True, widths=0.6, sym="",
                                medianprops={"color": "black", "lw": 1.2}, flierprops={"ms": 2})
                for patch, c in zip(bp["boxes"], colours):
                    patch.set_facecolor(c)
                    patch.set_alpha(0.75)
                ax.set_xticks(range(1, len(names) + 1), ticks, rotation=90, fontsize=TICK_PT)
                ax._ikbench_categories = True
            if log:
                ax.set_yscale("log")
            elif vals and max(float(np.max(v)) for v in vals) > 50:
                ax.set_yscale("symlog", linthresh=1)
            ax.set_ylabel(ylabel, fontsize=LABEL_PT)
            ax.set_title(fam, fontsize=LABEL_PT)
            ax.grid(True, axis="y", which="major", alpha=0.3)
            ax._ikbench_series = names
        self.key(fig, used)
        fig.suptitle(f"{title}, {self.title_suffix()}: one panel per family, specs best ranked first", fontsize=11)
        return [self.save(fig, stem, title)]

    def time_distribution(self):
        return self._boxes("time_us", "time_distribution", "Solve time per family",
                           "solve time [µs], log (supported solves)")

    def iterations(self):
        return self._boxes("iterations", "iterations", "Iterations per family",
                           "iterations per solve (supported)", log=False)

    def success(self):
        """One panel per family: success rate per spec (bars) with Wilson 95 % intervals; specs
        that ran best first; n/a specs (nothing supported) are listed in the panel, not drawn."""
        families = self.families()
        fig, axes = self.grid(len(families), labels=self.most_specs())
        used, nas = set(), []
        for ax, fam in zip(axes, families):
            names, na, ticks = [], [], []
            x = 0
            for k in range(len(self.runs)):
                for r in self._family_specs(k, fam).to_dict("records"):
                    name = self.label(k, r["solver"])
                    if not r["available"]:
                        na.append(name)
                        continue
                    y = 100 * r["success_rate"]
                    ax.bar(x, y, color=self.styles.colour(r["solver"]), alpha=0.8, width=0.7,
                           yerr=[[y - 100 * r["success_ci_low"]], [100 * r["success_ci_high"] - y]],
                           error_kw={"lw": 0.8, "capsize": 1.5})
                    names.append(name)
                    ticks.append(self.tick(k, r["solver"]))
                    used.add(r["solver"])
                    x += 1
            if names:
                ax.set_xticks(range(len(names)), ticks, rotation=90, fontsize=TICK_PT)
                ax._ikbench_categories = True
            ax.set_ylim(0, 103)
            ax.set_ylabel("success [%] (Wilson 95 %)", fontsize=LABEL_PT)
            ax.set_title(fam, fontsize=LABEL_PT)
            ax.grid(True, axis="y", alpha=0.3)
            ax._ikbench_series = names
            if na:
                nas.append(f"{fam}: {', '.join(na)}")
        self.key(fig, used, ["n/a (nothing supported): " + "; ".join(nas)] if nas else [])
        fig.suptitle(f"Success rate per family, {self.title_suffix()}: converged and within limits / all solves, "
                     "specs best ranked first", fontsize=11)
        return [self.save(fig, "success", "Success rate per family")]

    def heatmap(self):
        """Solver x family (one panel per run): colour = success rate (cividis, colour-blind safe),
        text = median solve time [us] of the supported solves; n/a cells grey."""
        matplotlib, plt = _mpl()
        families = self.families()
        n = len(self.runs)
        labels = short_labels(self.solvers)
        fig, axes = plt.subplots(n, 1, figsize=(max(8, 0.62 * len(families) + 3), (0.3 * len(self.solvers) + 3.2) * n),
                                 squeeze=False, layout="constrained")
        for k, ax in enumerate(axes[:, 0]):
            summ = self.summary(k).set_index(["family", "solver"])
            m = np.full((len(self.solvers), len(families)), np.nan)
            cells = []
            for i, sv in enumerate(self.solvers):
                for j, fam in enumerate(families):
                    if (fam, sv) not in summ.index:
                        continue
                    r = summ.loc[(fam, sv)]
                    avail = bool(r["available"])
                    rate = float(r["success_rate"]) if avail else None
                    med = float(r["time_us_median"]) if avail and math.isfinite(r["time_us_median"]) else None
                    cells.append({"family": fam, "solver": sv, "success_rate": rate, "time_us_median": med})
                    if avail:
                        m[i, j] = rate
                        ax.text(j, i, _short_time(med), ha="center", va="center", fontsize=8,
                                color="white" if rate < 0.5 else "black")
                    else:
                        ax.text(j, i, "n/a", ha="center", va="center", fontsize=8, color="#444")
            cmap = plt.get_cmap("cividis").copy()
            cmap.set_bad("#d9d9d9")
            im = ax.imshow(np.ma.masked_invalid(m) * 100, cmap=cmap, vmin=0, vmax=100, aspect="auto")
            ax.set_xticks(range(len(families)), families, rotation=90, fontsize=TICK_PT)
            ax.set_yticks(range(len(self.solvers)), [labels[s] for s in self.solvers], fontsize=TICK_PT)
            ax._ikbench_categories = True
            ax.set_xlabel("family")
            ax.set_ylabel("solver spec")
            ax.set_title(f"{self.labels[k] if self.multi else self.runs[k].suite}: colour = success [%], "
                         "text = median time [µs] (k = 1,000)", fontsize=10)
            cb = fig.colorbar(im, ax=ax, shrink=0.8)
            cb.set_label("success rate [%]")
            cb.ax._ikbench_skip = True
            ax._ikbench_series = list(self.solvers)
            ax._ikbench_cells = cells
        self.key(fig, self.solvers)
        fig.suptitle(f"Success and median time, solver x family, {self.title_suffix()}", fontsize=11)
        return [self.save(fig, "success_heatmap", "Success x family heatmap")]

    # ------------------------------------------------------------ Google Benchmark
    def gbench(self):
        """Time vs DOF (log-log) of every benchmark with a 'dof' counter in the JSON files of
        the (first) run directory. Names 'Group/<solver>/dof:N/<variant>' (bench_solvers) give
        one panel per (group, variant) with a line per solver in its run colours; other names
        (bench_kinematics: 'ForwardKinematics/dof:N/joint:T') one panel per group with a line per
        variant. PerIteration cases plot their time_per_iteration counter; repetitions their median.
        Where the benchmarks carry a `success_rate` counter (bench_solvers' solves), a panel of
        success vs DOF sits beside the time panel, and in the time panel a point whose success is
        below 100 % is drawn hollow, one with no success as x: a solve that fails at once is fast
        and useless."""
        matplotlib, plt = _mpl()
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
                panels[panel][series or parts[0]].append((dof, value, _fnum(b.get("success_rate"))))
            if not panels:
                continue

            def has_success(series):
                ok = [p[2] for pts in series.values() for p in pts if math.isfinite(p[2])]
                return bool(ok) and max(ok) > 0   # one-iteration cases never converge: no success panel

            # a row per panel: time, and its success beside it when the benchmarks count successes
            rows_ = [(pname, series, has_success(series)) for pname, series in sorted(panels.items())]
            ncols = 2 if any(r[2] for r in rows_) else min(2, len(rows_))
            if ncols == 2 and any(r[2] for r in rows_):
                layout = [(p_, s_, w) for p_, s_, ok in rows_ for w in (("time", "success") if ok else ("time", None))]
            else:
                layout = [(p_, s_, "time") for p_, s_, _ in rows_]
            n = len(layout)
            nrows = (n + ncols - 1) // ncols
            fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 * ncols, 4.6 * nrows), squeeze=False,
                                     layout="constrained")
            solver_panels = False
            for ax, (pname, series, what) in zip(axes.flat, layout):
                if what is None:
                    ax.set_visible(False)
                    continue
                counted = has_success(series)
                marked = False
                for label, pts in sorted(series.items()):
                    # Repetitions (--benchmark_repetitions) give several points per DOF: their median.
                    by_dof = defaultdict(list)
                    for d_, v_, s_ in pts:
                        by_dof[d_].append((v_, s_))
                    rows = sorted((d_, float(np.median([v for v, _ in vs])), float(np.median([s for _, s in vs])))
                                  for d_, vs in by_dof.items())
                    x = np.array([r[0] for r in rows])
                    y = np.array([r[1] if what == "time" else 100 * r[2] for r in rows])
                    succ = np.array([r[2] for r in rows])
                    if label in self.styles:
                        solver_panels = True
                        st = self.styles[label]
                        kw = {"color": st["color"], "ls": st["ls"]}
                        mk = st["marker"]
                    else:
                        kw, mk = {}, "o"
                    line, = ax.plot(x, y, ms=4, label=label, marker=mk if what == "success" or not counted else None,
                                    **kw)
                    if what == "time" and counted:
                        full = succ >= 1
                        some = (succ > 0) & (succ < 1)
                        none = succ <= 0
                        colour = line.get_color()
                        ax.plot(x[full], y[full], ls="none", marker=mk, ms=4, color=colour)
                        ax.plot(x[some], y[some], ls="none", marker=mk, ms=5, mfc="none", color=colour)
                        ax.plot(x[none], y[none], ls="none", marker="x", ms=6, color=colour)
                        marked |= bool((~full).any())
                ax.set_xscale("log")
                ax.set_xlabel("degrees of freedom (nv)")
                if what == "time":
                    ax.set_yscale("log")
                    ax.set_ylabel("time per call [µs] (real time)")
                    ax.set_title(f"{fname}: {pname}" + (" (hollow: success < 100 %, x: no success)" if marked
                                                         else ""), fontsize=9)
                else:
                    ax.set_ylim(-3, 103)
                    ax.set_ylabel("success [%] (success_rate counter)")
                    ax.set_title(f"{fname}: {pname}: success", fontsize=9)
                dofs = sorted({p_[0] for pts in series.values() for p_ in pts if math.isfinite(p_[0])})
                if dofs:
                    ax.set_xticks(dofs)
                ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
                ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
                ax.grid(True, which="major", alpha=0.3)
                if not solver_panels:
                    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
            for ax in list(axes.flat)[n:]:
                ax.set_visible(False)
            if solver_panels:
                self.legend_right(fig)
            fig.suptitle(f"Google Benchmark {fname}: time vs DOF (log-log)"
                         + (", success beside it" if any(w == "success" for _, _, w in layout) else ""), fontsize=11)
            written.append(self.save(fig, f"gbench-{safe_name(os.path.splitext(fname)[0])}",
                                     f"Google Benchmark: {fname}"))
        return written

    def write_index(self):
        doc = {"runs": [{"label": lab, "path": str(r.path), "suite": r.suite, "format_version": r.format_version}
                        for lab, r in zip(self.labels, self.runs)],
               "solvers": self.solvers, "plots": self.index}
        p = self.outdir / "index.json"
        return atomic_write_text(p, json.dumps(doc, indent=1) + "\n", inputs=self.inputs)


def _overlap(a, b):
    """Whether two display boxes (matplotlib Bbox) intersect by more than a pixel both ways."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1


def _compact(v, _pos=None):
    """A tick value in at most 5 characters: 0.02, 3, 250, 1,500, 20k, 3M."""
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e4:
        return f"{v / 1e3:g}k"
    if a >= 1000:
        return f"{v:,.0f}"
    return f"{v:g}"


def tick_texts(ax, which):
    """The visible, non-empty tick labels of an axis ('x' or 'y') of `ax`, major then minor."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    lo, hi = sorted(ax.get_xlim() if which == "x" else ax.get_ylim())
    out = []
    for t in axis.get_ticklabels(which="both"):
        v = t.get_position()[0 if which == "x" else 1]
        if t.get_visible() and t.get_text().strip() and lo - 1e-9 * abs(lo) <= v <= hi + 1e-9 * abs(hi):
            out.append((v, t))
    return [t for _, t in sorted(out, key=lambda vt: vt[0])]


def readable(fig):
    """Makes a figure readable at 100 % zoom before it is saved: every tick label at least TICK_PT
    (axis labels and titles LABEL_PT); numeric axes labelled compactly (1,500, 20k; log axes by
    their decades, with 2 and 5 between them when they span less than two); and where the labels of
    a numeric axis still collide, every second (third, ...) one hidden until none does. Category
    axes (spec and family names) are laid out by their figures so that they never collide."""
    import matplotlib.ticker as mt

    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for which in ("x", "y"):
            axis = ax.xaxis if which == "x" else ax.yaxis
            if getattr(ax, "_ikbench_categories", False) and isinstance(axis.get_major_formatter(), mt.FixedFormatter):
                continue
            scale = axis.get_scale()
            lo, hi = sorted(ax.get_xlim() if which == "x" else ax.get_ylim())
            if scale == "log" and lo > 0 and isinstance(axis.get_major_locator(), mt.LogLocator):
                subs = (1.0,) if hi / lo >= 100 else (1.0, 2.0, 5.0)
                axis.set_major_locator(mt.LogLocator(base=10, subs=subs, numticks=12))
                axis.set_minor_locator(mt.LogLocator(base=10, subs=np.arange(2, 10) * 1.0, numticks=12))
                axis.set_major_formatter(mt.FuncFormatter(_compact))
                axis.set_minor_formatter(mt.NullFormatter())
            elif scale in ("linear", "symlog") and isinstance(axis.get_major_formatter(), mt.ScalarFormatter) \
                    and max(abs(lo), abs(hi)) >= 1000:
                axis.set_major_formatter(mt.FuncFormatter(_compact))
        for t in ax.get_xticklabels(which="both") + ax.get_yticklabels(which="both"):
            if t.get_fontsize() < TICK_PT:
                t.set_fontsize(TICK_PT)
        for t in (ax.xaxis.label, ax.yaxis.label, ax.title):
            if t.get_fontsize() < LABEL_PT:
                t.set_fontsize(LABEL_PT)
        leg = ax.get_legend()
        if leg is not None:
            for t in leg.get_texts():
                t.set_fontsize(max(t.get_fontsize(), TICK_PT))
    for leg in fig.legends:
        for t in leg.get_texts():
            t.set_fontsize(max(t.get_fontsize(), TICK_PT))
    for t in fig.texts:
        t.set_fontsize(max(t.get_fontsize(), TICK_PT))
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for which in ("x", "y"):
            axis = ax.xaxis if which == "x" else ax.yaxis
            if getattr(ax, "_ikbench_categories", False) or isinstance(axis.get_major_formatter(), mt.FixedFormatter):
                continue   # names set by the figure (specs, families): each one is needed
            labels = tick_texts(ax, which)
            for step in range(2, len(labels) + 1):
                boxes = [t.get_window_extent(renderer) for t in labels if t.get_visible()]
                if not any(_overlap(a, b) for a, b in zip(boxes, boxes[1:])):
                    break
                for i, t in enumerate(labels):
                    t.set_visible(i % step == 0)
    return fig


def _short_time(us):
    """A median time in a heatmap cell, in µs, at most 4 characters (numbers.number's "compact":
    1.2k = 1,200 µs); "-" when none."""
    from .numbers import number

    return number(us, "compact")


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
