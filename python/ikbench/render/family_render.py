"""`ikbench plot convergence|time|success RUN_DIR [--family F[,G]] [--solvers A,B] [--out FILE]`:
one figure of chosen specs on chosen families (ikbench.analysis.family_figures computes what it shows),
drawn with matplotlib in the package's look of each spec (ikbench.render.styles), written by the output
rule (ikbench.io.safe_io), with a short text of what it shows on stdout.

    convergence   per family and error kind a panel: the median largest goal error of each spec
                  over its traced problems and the 25-75 % band, against the iteration or the time
                  (--x), log scale; the tolerance as a dotted line, the point where the median
                  comes within it marked with a star; the legend says how many problems were
                  traced and how many of those solves converged. A note under the figure (and on
                  stdout) when fewer than 30 problems were traced, with the re-run that traces more.
    time          per family a panel of box plots of the solve times of each spec (supported
                  solves: quartiles, Tukey's whiskers, log scale), n in the labels
    success       per family a panel of success bars [%] with Wilson 95 % intervals; a spec that
                  supported none of the family's problems is named "n/a", not drawn as 0 %

Default output: RUN_DIR/plots/<what>-<families>[-<specs>].png (--out: .png, .svg, .svgz or .pdf).
Exit status 0 written; 2 bad input (a filter that matches nothing among them), with one line on
stderr.
"""

import argparse
import hashlib
import math
import sys
import textwrap
from pathlib import Path

import numpy as np

from . import console
from ..analysis import family_figures
from ..io.results import ResultsError, load
from ..io.safe_io import check_output_path, output_directory, save_figure
from .styles import matplotlib_modules as _mpl, safe_name, spec_style

KINDS = ("convergence", "time", "success")
DESCRIPTIONS = {
    "convergence": "One figure of chosen specs on chosen families: per spec the median largest goal error over its "
                   "traced problems and the 25-75 % band, against the iteration or the time; the tolerance dotted, a "
                   "star where the median comes within it; how many problems each band is over, and the run that "
                   "traces more when fewer than 30 were (docs/analysis.md).",
    "time": "One figure of chosen specs on chosen families: box plots of the solve times (supported solves).",
    "success": "One figure of chosen specs on chosen families: success bars with Wilson 95 % intervals.",
}
FORMATS = ("png", "svg", "svgz", "pdf")
UNITS = {"position": "m", "orientation": "rad"}
NOTE_WIDTH = 150          # characters per line of the notes under a figure


def _notes_text(notes):
    return "\n".join(textwrap.fill(str(n), NOTE_WIDTH, subsequent_indent="    ") for n in notes)


def _add_notes(fig, notes):
    """The notes under the figure, as text of the figure (kept by bbox_inches='tight')."""
    if notes:
        fig.text(0.0, -0.01, _notes_text(notes), ha="left", va="top", fontsize=8, family="monospace")


def _legend(fig, axes):
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    if seen:
        fig.legend(list(seen.values()), list(seen), loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
                   frameon=False)


def draw_convergence(data, title):
    """A matplotlib figure of ConvergenceData: a row per family, a panel per error kind."""
    _, plt = _mpl()
    fams = list(data.families)
    ncols = max(len(data.families[f]["kinds"]) for f in fams)
    fig, axes = plt.subplots(len(fams), ncols, figsize=(6.6 * ncols, 4.4 * len(fams)), squeeze=False,
                             layout="constrained")
    used = []
    tname = "time since solve start [µs]" + ("" if data.time_column == "time_us" else
                                              " (recording pass, includes recording)")
    for i, fam in enumerate(fams):
        kinds = data.families[fam]["kinds"]
        for j in range(ncols):
            ax = axes[i][j]
            if j >= len(kinds):
                ax.set_visible(False)
                continue
            kind = kinds[j]
            used.append(ax)
            for s in data.series:
                if s.family != fam or s.kind != kind:
                    continue
                st = spec_style(s.spec)
                ax.fill_between(s.grid, s.q25, s.q75, color=st.colour, alpha=0.15, lw=0, step="post")
                ax.plot(s.grid, s.q50, drawstyle="steps-post", lw=1.6, label=s.label, marker=st.marker, ms=3.5,
                        markevery=0.1, gid=f"median:{s.spec}", **st.mpl())
                if math.isfinite(s.reached):
                    k = int(np.searchsorted(s.grid, s.reached))
                    ax.plot([s.reached], [s.q50[k]], ls="none", marker="*", ms=13, color=st.colour, mec="black",
                            mew=0.6, gid=f"reached:{s.spec}", label="_reached")
            tol = data.tolerances[kind]
            ax.axhline(tol, color="black", ls=":", lw=1, label=f"{kind} tolerance {tol:g} {UNITS[kind]} "
                       "(★: the median is within it)", gid=f"tolerance:{kind}")
            ax.set_yscale("log")
            if data.x == "iteration":
                ax.set_xscale("symlog", linthresh=10)
                ax.set_xlim(left=0)
                ax.set_xlabel("iteration (linear to 10, then log)")
            else:
                ax.set_xscale("log")
                ax.set_xlabel(tname)
            ax.set_ylabel(f"largest {kind} error [{UNITS[kind]}]\n(median, band = 25-75 %)")
            ax.grid(True, which="major", alpha=0.3)
            traced = sorted({s.traced for s in data.series if s.family == fam})
            ax.set_title(f"{fam}: {kind} error vs {data.x} ({'/'.join(map(str, traced))} of "
                         f"{data.families[fam]['problems']} problems traced)", fontsize=10)
    _legend(fig, used)
    fig.suptitle(title, fontsize=11)
    _add_notes(fig, data.notes)
    return fig


def _row_panels(groups):
    """A figure with a panel per family of `groups` ({family: [one row per spec]}), stacked, each as
    tall as the longest family needs: (figure, [(axes, family)])."""
    _, plt = _mpl()
    fams = list(groups)
    tallest = max(len(g) for g in groups.values())
    fig, axes = plt.subplots(len(fams), 1, figsize=(9, (0.45 * tallest + 1.6) * len(fams)), squeeze=False,
                             layout="constrained")
    return fig, list(zip(axes[:, 0], fams))


def draw_time(boxes, title, notes=()):
    """A matplotlib figure of time_data: a panel per family, a horizontal box per spec."""
    fig, panels = _row_panels(boxes)
    for ax, fam in panels:
        bs = boxes[fam]
        stats = [{"med": b.median, "q1": b.q1, "q3": b.q3, "whislo": b.whisker_low, "whishi": b.whisker_high,
                  "fliers": [], "label": b.label} for b in bs]
        art = ax.bxp(stats, vert=False, patch_artist=True, showfliers=False, widths=0.6)
        for patch, b in zip(art["boxes"], bs):
            st = spec_style(b.spec)
            patch.set_facecolor(st.colour)
            patch.set_alpha(0.55)
            patch.set_edgecolor(st.colour)
            patch.set_gid(f"box:{b.spec}")
        for med in art["medians"]:
            med.set_color("black")
        ax.invert_yaxis()                       # the first chosen spec on top
        ax.set_xscale("log")
        ax.set_xlabel("solve time [µs] (supported solves; box = quartiles, whiskers = 1.5 IQR)")
        ax.set_title(fam, fontsize=10)
        ax.grid(True, axis="x", which="major", alpha=0.3)
        ax.tick_params(axis="y", labelsize=8)
    fig.suptitle(title, fontsize=11)
    _add_notes(fig, notes)
    return fig


def draw_success(bars, title, notes=()):
    """A matplotlib figure of success_data: a panel per family, a horizontal bar per spec."""
    fig, panels = _row_panels(bars)
    for ax, fam in panels:
        bs = bars[fam]
        y = np.arange(len(bs))
        for k, b in enumerate(bs):
            st = spec_style(b.spec)
            if not b.available:
                ax.text(1, k, "n/a: supported none of the family's problems", va="center", fontsize=8,
                        color="#444", gid=f"na:{b.spec}")
                continue
            r = 100 * b.rate
            ax.barh(k, r, color=st.colour, alpha=0.8, height=0.6, gid=f"bar:{b.spec}",
                    xerr=[[r - 100 * b.low], [100 * b.high - r]], error_kw={"ecolor": "black", "capsize": 3,
                                                                          "lw": 1})
            ax.text(100 * b.high + 1.5, k, f"{r:.1f} % ({b.successes}/{b.solves})", va="center", fontsize=8)
        ax.set_yticks(y, [b.label for b in bs], fontsize=8)
        ax.set_ylim(len(bs) - 0.5, -0.5)        # the first chosen spec on top
        ax.set_xlim(0, 125)
        ax.set_xticks(range(0, 101, 20))
        ax.set_xlabel("success [%] (converged and within limits over all solves; Wilson 95 %)")
        ax.set_title(fam, fontsize=10)
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(title, fontsize=11)
    _add_notes(fig, notes)
    return fig


# ------------------------------------------------------------------ the command

def default_out(run, kind, selection, solvers_given):
    """RUN_DIR/plots/<kind>-<families>[-<specs>].png, a name made of safe characters; a long one
    is shortened with a hash of the whole."""
    fams = list(selection)
    fam_part = "+".join(fams) if len(fams) <= 3 else f"{len(fams)}-families"
    stem = f"{kind}-{fam_part}"
    if solvers_given:
        stem += "-" + "+".join(dict.fromkeys(s for specs in selection.values() for s in specs))
    stem = safe_name(stem)
    if len(stem) > 120:
        stem = stem[:100] + "-" + hashlib.sha1(stem.encode()).hexdigest()[:8]
    return run.path / "plots" / f"{stem}.png"


def add_arguments(ap, kind):
    ap.add_argument("run_dir", metavar="RUN_DIR", help="a results directory of `ikbench run`")
    ap.add_argument("--family", action="append", metavar="F[,G]",
                    help="the families to draw (comma-separated or repeated; default: every family)")
    ap.add_argument("--solvers", action="append", metavar="A,B",
                    help="the specs to draw: a spec as written, or a backend name for every spec of it "
                         "(comma-separated or repeated; default: per family the four best ranked and the KDL peers)")
    ap.add_argument("--out", metavar="FILE", help="the figure: .png, .svg, .svgz or .pdf (default "
                    f"RUN_DIR/plots/{kind}-<families>[-<specs>].png)")
    if kind == "convergence":
        ap.add_argument("--x", choices=family_figures.X_AXES, default="iteration",
                        help="the x axis: iteration (default) or time since the solve's start")
    ap.add_argument("--allow-incomplete", action="store_true", help="read an incomplete or mixed run (marked)")


def run_command(args, kind, out=sys.stdout, width=None):
    """Computes, draws and writes the figure; prints what it shows. Returns the exit status."""
    width = console.terminal_width(out) if width is None else width
    run = load(args.run_dir, allow_incomplete=args.allow_incomplete)
    if len(run.solves) == 0:
        raise ResultsError(f"{run.solves_path}: no solves (header only)")
    selection = family_figures.select(run, args.family, args.solvers)
    path = Path(args.out) if args.out else default_out(run, kind, selection, bool(args.solvers))
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ResultsError(f"--out {path}: expected a file name ending in .png, .svg, .svgz or .pdf")
    if args.out:
        check_output_path(path, inputs=run.inputs)
    else:
        output_directory(path.parent, inputs=run.inputs)
    notes = list(selection.notes)
    where = f"suite {run.suite}, {run.path.resolve().name}"
    if kind == "convergence":
        data = family_figures.convergence_data(run, selection, x=args.x)
        notes += data.notes
        data.notes = notes
        fig = draw_convergence(data, f"Convergence ({where}): median largest goal error over the traced problems, "
                                     "band = 25-75 %; a stopped solve keeps its final error")
        header = ["family", "spec", "error", "traced", "converged", f"median within tolerance at ({args.x})"]
        rows = [[s.family, s.spec, s.kind, str(s.traced), f"{s.succeeded}/{s.traced}",
                 "never" if not math.isfinite(s.reached) else f"{s.reached:.4g}"] for s in data.series]
    elif kind == "time":
        boxes = family_figures.time_data(run, selection)
        notes += boxes.notes
        fig = draw_time(boxes, f"Solve time ({where})", notes)
        header = ["family", "spec", "solves", "q1 [us]", "median [us]", "q3 [us]", "beyond whiskers"]
        rows = [[b.family, b.spec, str(b.solves), f"{b.q1:.4g}", f"{b.median:.4g}", f"{b.q3:.4g}", str(b.outliers)]
                for bs in boxes.values() for b in bs]
    else:
        bars = family_figures.success_data(run, selection)
        notes += [family_figures.Note(f"{b.family}: {b.spec} supported none of its problems (n/a)")
                  for bs in bars.values() for b in bs if not b.available]
        fig = draw_success(bars, f"Success ({where})", notes)
        header = ["family", "spec", "solves", "successes", "success [95% CI]"]
        rows = [[b.family, b.spec, str(b.solves), str(b.successes),
                 "n/a" if not b.available else f"{100 * b.rate:.1f}% [{100 * b.low:.1f}, {100 * b.high:.1f}]"]
                for bs in bars.values() for b in bs]
    _, plt = _mpl()
    from .plots import DPI, readable

    readable(fig)    # 9 pt ticks and notes, numeric ticks that do not collide
    save_figure(fig, path, inputs=run.inputs, dpi=DPI, bbox_inches="tight",
                metadata={"Date": None} if fmt in ("svg", "svgz") else None)
    plt.close(fig)
    text_cols = 3 if kind == "convergence" else 2
    lines = [console.fit_table(header, rows, width, keys=2,
                               align=["left"] * text_cols + ["right"] * (len(header) - text_cols)), ""]
    for n in notes:
        lines += console.wrap_text(f"note: {n.text}", width, "  ")
        if n.command:
            lines += ["  " + x for x in console.command_lines(n.command, width - 2)]
    lines.append(f"written: {path}")
    out.write("\n".join(lines) + "\n")
    return 0


def main(argv, kind, prog=None):
    """`ikbench plot KIND ...` (and scripts/plot.py KIND ...): exit status 0, or 2 with one line on
    stderr for bad input."""
    ap = _Parser(prog=prog or f"ikbench plot {kind}", description=DESCRIPTIONS[kind],
                 epilog="Exit status: 0 written; 2 bad input (a one-line message on stderr).")
    add_arguments(ap, kind)
    args = ap.parse_args(argv)
    try:
        return run_command(args, kind)
    except ResultsError as e:
        print(f"{ap.prog}: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as e:
        what = f"{e.filename}: " if e.filename else ""
        print(f"{ap.prog}: error: {what}{e.strerror or e}", file=sys.stderr)
        return 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)
