#!/usr/bin/python3
"""Plots and an HTML report for one ikbench results directory.

    /usr/bin/python3 scripts/plot.py RESULTS_DIR [--no-report] [--formats png,svg]

Reads RESULTS_DIR/{solves.csv, traces.csv, run.json} (written by `ikbench
run`) and any Google Benchmark JSON files in RESULTS_DIR (files with a
"benchmarks" list, e.g. from `bench_solvers --benchmark_out=RESULTS_DIR/
bench_solvers.json --benchmark_out_format=json`). Writes into
RESULTS_DIR/plots/ (PNG and SVG):

  convergence-<family>   median and interquartile band of the error over the
                         traced solves vs iteration and vs time (log y); a
                         solve that stopped keeps its final error afterwards
  success_vs_dof         success rate [%] per solver vs DOF (all families)
  time_distribution      ECDF of solve time per solver: successes only / all
  iterations             histogram of iterations per solver
  gbench-<file>          Google Benchmark time vs DOF (log-log)

and RESULTS_DIR/report.html (summary table, plots, run metadata; relative
links, readable offline). Each solver keeps one colour in every plot (colours
assigned by the sorted list of solver specs of the run).

Uses only the standard library, numpy and matplotlib (Debian packages).
"""
import argparse
import csv
import html
import json
import math
import os
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402,F401
import numpy as np  # noqa: E402

TIME_COLUMNS = ("time_us", "time_per_iteration_us")
ERROR_FLOOR = 1e-16  # exact zeros drawn at this value on log axes


def die(msg):
    print(f"plot.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


class Styles(dict):
    """One fixed look per solver spec, assigned by sorted spec: the 10 tab10
    colours, then the same colours with dashed / dotted lines and other
    markers (pastel pairs as in tab20 are too hard to tell apart)."""

    LINES = ("-", "--", ":")
    MARKERS = ("o", "s", "^")

    def __init__(self, solvers):
        super().__init__()
        cmap = plt.get_cmap("tab10")
        for i, s in enumerate(sorted(set(solvers))):
            self[s] = {"color": cmap(i % 10), "ls": self.LINES[(i // 10) % 3], "marker": self.MARKERS[(i // 10) % 3]}

    def line(self, solver):
        st = self[solver]
        return {"color": st["color"], "ls": st["ls"]}

    def colour(self, solver):
        return self[solver]["color"]


def colour_map(solvers):
    return Styles(solvers)


def legend_right(fig, _first_axes=None, ncol=1):
    """One legend for the figure, right of the panels: every label of every
    panel once (solvers sorted, other entries such as the tolerance last)."""
    seen = {}
    for ax in fig.axes:
        for h, l in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(l, h)
    labels = sorted(seen, key=lambda l: (l.startswith("tolerance"), l))
    fig.legend([seen[l] for l in labels], labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
               ncol=ncol, frameon=False)


def save(fig, outdir, stem, formats):
    paths = []
    for ext in formats:
        p = os.path.join(outdir, f"{stem}.{ext}")
        fig.savefig(p, dpi=110, bbox_inches="tight")
        paths.append(p)
    plt.close(fig)
    return paths


def safe_name(s):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)


def fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


# ---------------------------------------------------------------- convergence
def step_values(xs, ys, grid):
    """Value of the step function through (xs, ys) at each grid point: the
    last record at or before it, the first record before the first, and the
    final value after the solve stopped."""
    idx = np.searchsorted(xs, grid, side="right") - 1
    return ys[np.clip(idx, 0, len(ys) - 1)]


def read_traces(path):
    """family -> solver -> [(iterations, position, orientation, elapsed)] arrays per traced solve."""
    out = defaultdict(lambda: defaultdict(dict))
    if not os.path.isfile(path):
        return out
    with open(path, newline="") as f:
        rd = csv.reader(f)
        header = next(rd, None)
        if not header:
            return out
        c = {h: i for i, h in enumerate(header)}
        fi, pi, si, ii = c["family"], c["problem"], c["solver"], c["iteration"]
        pe, oe, te = c["position_error"], c["orientation_error"], c["elapsed_us"]
        for r in rd:
            out[r[fi]][r[si]].setdefault(r[pi], []).append((int(r[ii]), fnum(r[pe]), fnum(r[oe]), fnum(r[te])))
    for fam in out.values():
        for solver, probs in fam.items():
            fam[solver] = [np.array(sorted(v), dtype=float) for v in probs.values()]
    return out


def convergence_plots(suite, traces, solvers_order, styles, tolerances, outdir, formats):
    """Per family: rows = error kinds present, columns = vs iteration / vs time."""
    written = []
    for family, per_solver in traces.items():
        allrec = np.concatenate([a for seqs in per_solver.values() for a in seqs])
        kinds = []
        if (allrec[:, 1] > 0).any() or not (allrec[:, 2] > 0).any():
            kinds.append(("position", 1, "position error [m]", tolerances[0]))
        if (allrec[:, 2] > 0).any():
            kinds.append(("orientation", 2, "orientation error [rad]", tolerances[1]))
        fig, axes = plt.subplots(len(kinds), 2, figsize=(13, 4.3 * len(kinds)), squeeze=False)
        nproblems = 0
        for solver in solvers_order:
            seqs = per_solver.get(solver)
            if not seqs:
                continue
            nproblems = max(nproblems, len(seqs))
            max_it = int(max(a[-1, 0] for a in seqs))
            its = np.arange(max_it + 1)
            tmax = max(a[-1, 3] for a in seqs)
            tmin = max(min(a[0, 3] for a in seqs), 0.1)
            tgrid = np.geomspace(tmin, max(tmax, tmin * 1.01), 200)
            for row, (kname, col, label, tol) in enumerate(kinds):
                for c, (grid, xcol) in enumerate(((its, 0), (tgrid, 3))):
                    vals = np.array([step_values(a[:, xcol], a[:, col], grid) for a in seqs])
                    q25, q50, q75 = np.percentile(np.maximum(vals, ERROR_FLOOR), [25, 50, 75], axis=0)
                    ax = axes[row][c]
                    ax.plot(grid, q50, lw=1.5, label=solver, **styles.line(solver))
                    ax.fill_between(grid, q25, q75, color=styles.colour(solver), alpha=0.08, lw=0)
        for row, (kname, col, label, tol) in enumerate(kinds):
            for c, xlabel in enumerate(("iteration (linear to 10, then log)", "time since solve start [µs]")):
                ax = axes[row][c]
                ax.set_yscale("log")
                if c == 0:
                    ax.set_xscale("symlog", linthresh=10)
                    ax.set_xlim(left=0)
                else:
                    ax.set_xscale("log")
                ax.axhline(tol, color="black", ls=":", lw=1, label=f"tolerance {tol:g}")
                ax.set_xlabel(xlabel)
                ax.set_ylabel(f"{label}\n(median, band = 25-75 %)")
                ax.grid(True, which="major", alpha=0.3)
                ax.set_title(f"{suite} / {family}: {kname} error vs {'iteration' if c == 0 else 'time'}", fontsize=10)
        legend_right(fig, axes[0][0])
        fig.suptitle(f"Convergence, suite {suite}, family {family} ({nproblems} traced problems per solver; "
                     "a stopped solve keeps its final error)", fontsize=11)
        fig.tight_layout()
        written.append((f"Convergence: {family}", save(fig, outdir, f"convergence-{safe_name(family)}", formats)))
    return written


# ------------------------------------------------------------- success vs DOF
def success_vs_dof(suite, solves, solvers_order, styles, outdir, formats):
    """Families whose names differ only in numbers (chain7-position,
    chain15-position, ...) form a DOF sweep: one panel per sweep with at least
    two DOF values, success rate per solver vs DOF. Without any sweep, one
    panel of all families pooled per DOF (markers only)."""
    stats = defaultdict(lambda: [0, 0])  # (sweep, solver, dof) -> [converged, supported]
    sweep_dofs = defaultdict(set)
    for r in solves:
        if r["status"] in ("unsupported", "invalid-input"):
            continue
        key = re.sub(r"\d+", "N", r["family"])
        st = stats[(key, r["solver"], int(r["dof"]))]
        st[0] += int(r["converged"])
        st[1] += 1
        sweep_dofs[key].add(int(r["dof"]))
    sweeps = sorted(k for k, d in sweep_dofs.items() if len(d) >= 2)
    pooled = not sweeps
    if pooled:
        merged = defaultdict(lambda: [0, 0])
        for (k, solver, dof), (c, n) in stats.items():
            merged[("all families", solver, dof)][0] += c
            merged[("all families", solver, dof)][1] += n
        stats, sweeps = merged, ["all families"]
    ncols = min(3, len(sweeps))
    nrows = (len(sweeps) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 4.2 * nrows), squeeze=False)
    for ax, sweep in zip(axes.flat, sweeps):
        dofs = sorted({d for (k, _, d) in stats if k == sweep})
        for solver in solvers_order:
            pts = sorted((d, 100.0 * c / n) for (k, s, d), (c, n) in stats.items() if k == sweep and s == solver and n)
            if pts:
                st = styles[solver]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=st["marker"], ms=4,
                        ls="none" if pooled else st["ls"], color=st["color"], label=solver)
        if dofs[-1] / max(dofs[0], 1) > 8:
            ax.set_xscale("log")
        ax.set_xticks(dofs)
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("degrees of freedom (nv)")
        ax.set_ylabel("success rate [%]\n(converged / supported)")
        ax.set_ylim(-3, 103)
        ax.grid(True, alpha=0.3)
        ax.set_title(f"{suite}: {sweep}", fontsize=10)
    for ax in list(axes.flat)[len(sweeps):]:
        ax.set_visible(False)
    legend_right(fig, axes[0][0])
    fig.suptitle(f"Success rate vs DOF, suite {suite}"
                 + (" (families pooled per DOF)" if pooled else " (families differing only in DOF)"), fontsize=11)
    fig.tight_layout()
    return [("Success rate vs DOF", save(fig, outdir, "success_vs_dof", formats))]


# ------------------------------------------------------- time distribution
def time_distribution(suite, solves, solvers_order, colours, outdir, formats):
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, only_ok, what in ((axes[0], True, "successes only"), (axes[1], False, "all supported solves")):
        for solver in solvers_order:
            t = np.sort([fnum(r["time_us"]) for r in solves if r["solver"] == solver
                         and r["status"] not in ("unsupported", "invalid-input")
                         and (not only_ok or r["converged"] == "1")])
            t = t[t > 0]
            if len(t) == 0:
                continue
            y = np.arange(1, len(t) + 1) / len(t)
            ax.step(t, 100 * y, where="post", label=f"{solver} (n={len(t)})", **colours.line(solver))
        ax.set_xscale("log")
        ax.set_xlabel("solve time [µs] (wall clock, whole solve call)")
        ax.set_title(f"Time ECDF, suite {suite}: {what}")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    axes[0].set_ylabel("solves finished within the time [%]")
    fig.tight_layout()
    return [("Solve time distribution", save(fig, outdir, "time_distribution", formats))]


# ------------------------------------------------------------- iterations
def iterations_hist(suite, solves, solvers_order, colours, outdir, formats):
    fig, ax = plt.subplots(figsize=(9, 5))
    data = {s: [int(r["iterations"]) for r in solves if r["solver"] == s
                and r["status"] not in ("unsupported", "invalid-input")] for s in solvers_order}
    top = max([max(v) for v in data.values() if v] + [1])
    if top > 50:  # integer-aligned, roughly log-spaced bins; [-0.5, 0.5) holds solves done at the start
        bins = np.concatenate(([-0.5], np.unique(np.round(np.geomspace(1, top + 1, 40))) - 0.5))
    else:
        bins = np.arange(-0.5, top + 1.5)
    for solver in solvers_order:
        if data[solver]:
            ax.hist(data[solver], bins=bins, histtype="step", lw=1.4, label=solver, **colours.line(solver))
    if top > 50:
        ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel("iterations per solve (all attempts)")
    ax.set_ylabel("solves")
    ax.set_title(f"Iterations, suite {suite} (all families, supported solves)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return [("Iterations histogram", save(fig, outdir, "iterations", formats))]


# ------------------------------------------------------- Google Benchmark
def gbench_plots(resdir, colours, outdir, formats):
    """Time vs DOF (log-log) of every benchmark with a 'dof' counter. Names
    'Group/<solver>/dof:N/<variant>' (bench_solvers) give one panel per
    (group, variant) with a line per solver in its run colours; other names
    (bench_kinematics: 'BM_X/<dof>/<type>') one panel per group with a line
    per remaining name part and label."""
    written = []
    for fname in sorted(os.listdir(resdir)):
        if not fname.endswith(".json") or fname in ("run.json", "throughput.json"):
            continue
        data = read_json(os.path.join(resdir, fname))
        if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
            continue
        panels = defaultdict(lambda: defaultdict(list))  # panel -> series -> [(dof, time us)]
        for b in data["benchmarks"]:
            if b.get("error_occurred") or b.get("run_type") == "aggregate" or "dof" not in b:
                continue
            dof = fnum(b["dof"])
            unit = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}.get(b.get("time_unit", "ns"), 1e-3)
            parts = b.get("run_name", b["name"]).split("/")
            d = str(int(dof))
            rest = list(parts[1:])
            # Drop the size argument: the DOF itself, or (ball joints: nv = 3 per
            # joint) the first numeric argument, the joint count.
            for cand in (f"dof:{d}", d):
                if cand in rest:
                    rest.remove(cand)
                    break
            else:
                for i, p in enumerate(rest):
                    if p.split(":")[-1].isdigit():
                        del rest[i]
                        break
            if rest and rest[0] in colours:  # a solver benchmark
                panel = "/".join([parts[0]] + rest[1:])
                series = rest[0]
            else:
                panel = parts[0]
                series = "/".join(rest) + (f" [{b['label']}]" if b.get("label") else "")
            panels[panel][series or parts[0]].append((dof, fnum(b["real_time"]) * unit))
        if not panels:
            continue
        n = len(panels)
        ncols = min(2, n)
        nrows = (n + ncols - 1) // ncols
        fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 * ncols, 4.6 * nrows), squeeze=False)
        solver_panels = False
        for ax, (pname, series) in zip(axes.flat, sorted(panels.items())):
            for label, pts in sorted(series.items()):
                pts.sort()
                if label in colours:
                    solver_panels = True
                    st = colours[label]
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
            legend_right(fig)
        fig.suptitle(f"Google Benchmark {fname}: time vs DOF (log-log)", fontsize=11)
        fig.tight_layout()
        written.append((f"Google Benchmark: {fname}",
                        save(fig, outdir, f"gbench-{safe_name(os.path.splitext(fname)[0])}", formats)))
    return written


# ------------------------------------------------------------- report
def summary_rows(resdir, solves):
    rows = read_csv(os.path.join(resdir, "summary.csv")) if os.path.exists(os.path.join(resdir, "summary.csv")) else []
    if rows:
        return rows
    groups = defaultdict(list)
    for r in solves:
        groups[(r["family"], r["solver"])].append(r)
    for (fam, solver), rs in groups.items():
        sup = [r for r in rs if r["status"] not in ("unsupported", "invalid-input")]
        row = {"family": fam, "solver": solver, "solves": len(rs), "supported": len(sup),
               "converged": sum(int(r["converged"]) for r in sup)}
        if sup:
            it = [fnum(r["iterations"]) for r in sup]
            t = [fnum(r["time_us"]) for r in sup]
            row.update(success_rate=row["converged"] / len(sup), iterations_median=np.median(it),
                       iterations_p90=np.percentile(it, 90),
                       position_error_median=np.median([fnum(r["position_error"]) for r in sup]),
                       orientation_error_median=np.median([fnum(r["orientation_error"]) for r in sup]),
                       time_us_median=np.median(t), time_us_p90=np.percentile(t, 90), time_us_mean=np.mean(t),
                       fk_evals_mean=np.mean([fnum(r["fk_evals"]) for r in sup]),
                       jacobian_evals_mean=np.mean([fnum(r["jacobian_evals"]) for r in sup]))
        rows.append(row)
    return rows


def fmt_cell(v, kind):
    x = fnum(v)
    if math.isnan(x):
        return "–"
    if kind == "pct":
        return f"{100 * x:.1f}%"
    if kind == "int":
        return f"{x:.0f}"
    if kind == "sci":
        return f"{x:.2e}"
    return f"{x:.1f}"


def write_report(resdir, run, solves, plots, colours):
    suite = run.get("suite", {}).get("name", "?") if run else "?"
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
           f"<title>ikbench report: {html.escape(suite)}</title><style>",
           "body{font-family:sans-serif;max-width:1300px;margin:auto;padding:1em}"
           "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 7px;"
           "text-align:right}th{background:#eee}td.l{text-align:left}img{max-width:100%;border:1px solid #ddd}"
           "pre{background:#f6f6f6;padding:.6em;overflow:auto;font-size:12px}"
           ".sw{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle}",
           "</style></head><body>", f"<h1>ikbench run: suite {html.escape(suite)}</h1>"]
    if run:
        tp = run.get("throughput", {})
        out.append("<p>" + " · ".join(html.escape(str(x)) for x in (
            f"{run.get('start_time', '?')} – {run.get('end_time', '?')}",
            f"git {run.get('git_revision', '?')}",
            f"{run.get('build', {}).get('compiler', '?')} {run.get('build', {}).get('flags', '')}",
            f"CPU {run.get('machine', {}).get('cpu', '?')}",
            f"{run.get('threads', '?')} threads",
            f"{tp.get('solves', '?')} solves in {fnum(tp.get('wall_s')):.2f} s "
            f"({fnum(tp.get('solves_per_s')):.0f} solves/s)")) + "</p>")
    # Summary table.
    cols = [("family", "family", None), ("solver", "solver", None), ("solves", "solves", "int"),
            ("success", "success_rate", "pct"), ("it. median", "iterations_median", "int"),
            ("it. p90", "iterations_p90", "int"), ("pos. err median [m]", "position_error_median", "sci"),
            ("ori. err median [rad]", "orientation_error_median", "sci"),
            ("time median [µs]", "time_us_median", "f"), ("time p90 [µs]", "time_us_p90", "f"),
            ("time mean [µs]", "time_us_mean", "f"),
            ("FK / solve", "fk_evals_mean", "f"), ("J / solve", "jacobian_evals_mean", "f")]
    out.append("<h2>Summary (family × solver)</h2><p>Success = converged / supported solves; iteration, "
               "error and time figures over supported solves; p90 = 90th percentile.</p><table><tr>")
    out += [f"<th>{html.escape(c[0])}</th>" for c in cols] + ["</tr>"]
    for r in summary_rows(resdir, solves):
        cells = []
        for _, key, kind in cols:
            if kind is None:
                sw = (f"<span class='sw' style='background:{matplotlib.colors.to_hex(colours.colour(r[key]))}'></span>"
                      if key == "solver" and r[key] in colours else "")
                cells.append(f"<td class='l'>{sw}{html.escape(str(r[key]))}</td>")
            elif int(fnum(r.get("supported", 1)) or 0) == 0 and key not in ("solves",):
                cells.append("<td>unsupported</td>" if key == "success_rate" else "<td>–</td>")
            else:
                cells.append(f"<td>{fmt_cell(r.get(key), kind)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    # Status counts.
    counts = defaultdict(lambda: defaultdict(int))
    statuses = sorted({r["status"] for r in solves})
    for r in solves:
        counts[r["solver"]][r["status"]] += 1
    out.append("<h2>Termination status per solver</h2><table><tr><th>solver</th>"
               + "".join(f"<th>{html.escape(s)}</th>" for s in statuses) + "</tr>")
    for solver in sorted(counts):
        out.append(f"<tr><td class='l'>{html.escape(solver)}</td>"
                   + "".join(f"<td>{counts[solver][s]}</td>" for s in statuses) + "</tr>")
    out.append("</table>")
    if run and "throughput_benchmark" in run:
        tb = run["throughput_benchmark"]
        out.append("<h2>Throughput benchmark</h2><p>" + html.escape(str(tb.get("problem", ""))) + ", solver "
                   + html.escape(str(tb.get("solver", ""))) + "</p><table><tr><th>threads</th><th>solves</th>"
                   "<th>wall [s]</th><th>solves/s</th><th>solves in 60 s</th><th>cores busy</th></tr>")
        for p in tb.get("points", []):
            out.append(f"<tr><td>{p.get('threads')}</td><td>{p.get('solves')}</td><td>{fnum(p.get('wall_s')):.2f}"
                       f"</td><td>{fnum(p.get('solves_per_s')):.0f}</td><td>{fnum(p.get('solves_in_60_s')):.0f}"
                       f"</td><td>{fnum(p.get('cores_busy')):.2f}</td></tr>")
        out.append(f"</table><p>speedup {fnum(tb.get('speedup')):.2f} ({html.escape(str(tb.get('speedup_of')))})"
                   f"; load average at start {html.escape(str(tb.get('load_average_1min_at_start')))}</p>")
    out.append("<h2>Plots</h2>")
    for title, paths in plots:
        png = [p for p in paths if p.endswith(".png")]
        svg = [p for p in paths if p.endswith(".svg")]
        if not png:
            continue
        rel = os.path.relpath(png[0], resdir)
        link = os.path.relpath(svg[0], resdir) if svg else rel
        out.append(f"<h3>{html.escape(title)}</h3><a href='{html.escape(link)}'>"
                   f"<img src='{html.escape(rel)}' alt='{html.escape(title)}'></a>")
    if run:
        out.append("<h2>Run metadata (run.json)</h2><pre>"
                   + html.escape(json.dumps({k: v for k, v in run.items() if k != "summary"}, indent=2)) + "</pre>")
    out.append("<p>Files: <a href='solves.csv'>solves.csv</a> · <a href='traces.csv'>traces.csv</a> · "
               "<a href='summary.csv'>summary.csv</a> · <a href='run.json'>run.json</a></p></body></html>")
    path = os.path.join(resdir, "report.html")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out))
    os.replace(tmp, path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results_dir")
    ap.add_argument("--no-report", action="store_true", help="plots only")
    ap.add_argument("--formats", default="png,svg", help="comma-separated image formats (default png,svg)")
    args = ap.parse_args()
    resdir = args.results_dir
    formats = [f for f in args.formats.split(",") if f]
    solves_path = os.path.join(resdir, "solves.csv")
    if not os.path.isfile(solves_path):
        die(f"{solves_path} not found (is '{resdir}' an ikbench results directory?)")
    solves = read_csv(solves_path)
    if not solves:
        die(f"{solves_path} has no rows")
    needed = ["suite", "family", "dof", "solver", "status", "converged", "iterations", "time_us"]
    missing = [c for c in needed if c not in solves[0]]
    if missing:
        die(f"{solves_path}: missing columns {missing}")
    traces = read_traces(os.path.join(resdir, "traces.csv"))
    run = read_json(os.path.join(resdir, "run.json")) or {}
    suite = solves[0]["suite"]

    # Solver order and colours: the run's spec list, sorted.
    specs = [s["spec"] for s in run.get("solvers", [])] or sorted({r["solver"] for r in solves})
    solvers_order = sorted(set(specs) | {r["solver"] for r in solves})
    colours = colour_map(solvers_order)
    opts = run.get("suite", {}).get("options", {})
    tolerances = (fnum(opts.get("position_tolerance_m", 1e-5)), fnum(opts.get("orientation_tolerance_rad", 1e-5)))

    outdir = os.path.join(resdir, "plots")
    os.makedirs(outdir, exist_ok=True)
    plots = []
    plots += convergence_plots(suite, traces, solvers_order, colours, tolerances, outdir, formats)
    plots += success_vs_dof(suite, solves, solvers_order, colours, outdir, formats)
    plots += time_distribution(suite, solves, solvers_order, colours, outdir, formats)
    plots += iterations_hist(suite, solves, solvers_order, colours, outdir, formats)
    plots += gbench_plots(resdir, colours, outdir, formats)
    n = sum(len(p) for _, p in plots)
    print(f"plots: {n} files in {os.path.abspath(outdir)}")
    if not args.no_report:
        print(f"report: {os.path.abspath(write_report(resdir, run, solves, plots, colours))}")


if __name__ == "__main__":
    main()
