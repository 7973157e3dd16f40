"""report.html: one self-contained page where a researcher understands a run (docs/report.md).

    python3 -m ikbench report RUN_DIR [--out FILE] [--trace-problems K] [--trace-head N]
                                      [--trace-points M] [--clip-frames F] [--latex DIR]
    ikbench report RUN_DIR [...]                 (the harness passes its arguments here)

    data = build(ikbench.io.results.load(RUN_DIR))  # the page's data (a dict of JSON values)
    html = render(data)                          # the page
    write_report(RUN_DIR)                        # RUN_DIR/report.html

Every number of the page comes from the analysis library: figures.summarize (ranks and ties by
rank_cells) and family_leaders (the headline and its chart, the summary table, iterations),
figures.robot_summary (the per-robot table), curves (convergence bands, time ECDFs, success vs
DOF), sweep (parameter sweeps) and coverage (solution coverage); texts are formatted with ikbench.render.tables. The page embeds its data as JSON
(`<script id="ikbench-data" type="application/json">`), plotly.js once (python3-plotly's
offline bundle) and its own script (report_assets/), so it opens from file:// without a network.
The 3D solve viewer computes forward kinematics in JavaScript from models.json's joints
(docs/results-format.md "Frames and conventions") and draws with plotly's scatter3d.

Size: the traces of K problems of each family are embedded (K = --trace-problems, default 3
as `ikbench run`'s, or 'all': the first K of the run's traced sample, run.json
trace.problems), each thinned to its first N records (--trace-head, default 40) and then at most M
more at an even stride (--trace-points, default 40), always with the last; a sequential family
(trajectory tracking) is embedded as a clip of its first F problems' returned configurations
(--clip-frames, default 300). The page says what it embeds. Traced configurations travel
delta-coded in 1e-4 steps, each attempt's end exact (report_viewer.encode_trace_q); the page draws
a figure only when it comes near the window, so it is interactive once its first screen is drawn.
"""

import html
import json
import os
import time
from pathlib import Path

from ..analysis import curves, figures, report_quality
from . import tables
from ..io.results import ResultsError, load, optional_json
from ..io.redact import redact_secrets, redact_value
from ..io.safe_io import atomic_write_bytes, check_output_path
from .report_figures import box_figures, convergence_figures, coverage_block, dof_figure, ecdf_figures, headline_figure, heatmap_figure, iteration_figures, solver_sections, success_figures, sweep_blocks  # noqa: F401
from .report_tables import SUMMARY_FIELDS, headline, robot_rows, solver_styles, summary_rows  # noqa: F401
from ..analysis.family_figures import DEFAULT_PICKS, PEERS, default_picks, spec_name  # noqa: F401
from .templates import ASSETS
from .report_values import CURVE_DIGITS, CURVE_TIME_POINTS, DEFAULT_CLIP_FRAMES, DEFAULT_TRACE_HEAD, DEFAULT_TRACE_POINTS, DEFAULT_TRACE_PROBLEMS, Options, PLAYGROUND_PAGE, REPORT_FORMAT, _json_pieces, embedded_problems, sig, to_json, trace_problems_arg  # noqa: F401
from .report_viewer import attempt_starts, thin_indices, viewer_data  # noqa: F401


def _families(run, convinfo):
    fams = []
    meta = {f.get("name"): f for f in run.families}
    robots = figures.robot_families(run)
    for fam in dict.fromkeys(run.solves["family"]):
        f = meta.get(fam, {})
        first = run.solves[run.solves["family"] == fam].iloc[0]
        fams.append({"name": fam, "description": f.get("description"), "problems": f.get("problems"),
                     "dof": int(first["dof"]), "effectors": int(first["effectors"]), "goal": first["goal"],
                     "sequential": bool(f.get("sequential", False)), "robot": robots.get(fam),
                     "type": f.get("type"), "traced": convinfo.get(fam, {}).get("traced", 0),
                     "sparse": convinfo.get(fam, {}).get("sparse", []),
                     "kinds": convinfo.get(fam, {}).get("kinds", [])})
    return fams


def _run_facts(run):
    meta = run.meta
    build = meta.get("build") if isinstance(meta.get("build"), dict) else {}
    trace = meta.get("trace") if isinstance(meta.get("trace"), dict) else {}
    return {"path": str(run.path), "name": run.path.resolve().name, "suite": run.suite, "seed": run.seed,
            "format_version": run.format_version, "complete": run.complete, "issues": run.issues,
            "notes": run.notes, "tolerances": list(run.tolerances), "solves": len(run.solves),
            "start_time": meta.get("start_time"), "end_time": meta.get("end_time"),
            "git_revision": meta.get("git_revision"), "compiler": build.get("compiler"),
            "flags": build.get("flags"), "cpu": run.cpu, "threads": run.threads,
            "throughput": tables.throughput_line(run),
            "command_line": redact_secrets(meta["command_line"]) if isinstance(meta.get("command_line"), str) else None,
            "trace_problems_per_family": trace.get("problems_per_family"), "trace_note": trace.get("note"),
            "trace_mismatches": trace.get("mismatches"), "load": figures.run_load(run),
            "noisy": figures.run_noisy(run), "noisy_text": figures.noisy_text(run)}


def _meta_for_page(meta):
    """run.json without the bulky parts that the page shows elsewhere, and without secrets (a run
    written before the harness redacted its command line may hold a store's password)."""
    out = {k: redact_value(v) for k, v in meta.items() if k not in ("files",)}
    if isinstance(meta.get("files"), dict):
        out["files"] = {k: {kk: vv for kk, vv in v.items() if kk in ("rows", "bytes")} if isinstance(v, dict) else v
                        for k, v in meta["files"].items()}
    return out


class Stages:
    """Progress of the report's work: `stage(name)` ends the stage before (one line on the stream,
    with its seconds) and starts the next; `done()` ends the last. Silent without a stream."""

    def __init__(self, stream=None):
        self.stream = stream
        self.name = None
        self.t = time.monotonic()
        self.times = {}

    def stage(self, name=None):
        now = time.monotonic()
        if self.name is not None:
            self.times[self.name] = round(now - self.t, 3)
            if self.stream is not None:
                import resource

                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # kB on Linux
                print(f"report: {self.name}: {now - self.t:.1f} s (peak memory so far {peak:.0f} MB)",
                      file=self.stream, flush=True)
        self.name, self.t = name, now

    def done(self):
        self.stage(None)


def build(run, opts=None, plots_index=None, progress=None):
    """The page's data (JSON values) for a loaded run; see the module documentation. `progress`:
    a Stages (one line per stage on its stream)."""
    opts = opts or Options()
    progress = progress or Stages()
    t0 = time.monotonic()
    specs = run.solver_specs
    styles = solver_styles(specs)
    progress.stage("traces.csv without q (its manifest hash in a helper process)")
    table = curves.read_traces(run)
    progress.stage("figures per family x solver (summarize, ranks)")
    summary = figures.summarize(run, seed=opts.seed, n_resamples=opts.resamples)
    ranked = summary                  # ranked within each family by figures.summarize
    progress.stage("convergence curves")
    tr = table.frame
    convs_list = curves.convergence(tr, compact=True, time_points=CURVE_TIME_POINTS,
                                    time_col=curves.time_column(tr)) if not tr.empty else []
    del tr
    convs, convinfo = convergence_figures(run, styles, convs=convs_list, traces_table=table)
    fams = _families(run, convinfo)
    sequential = {f["name"]: f["sequential"] for f in fams}
    progress.stage("success against DOF, time distributions")
    dof, sweeps_ = dof_figure(run, styles, ranked)
    solvers = []
    desc = {s.get("spec"): s for s in run.meta.get("solvers", []) if isinstance(s, dict)} \
        if isinstance(run.meta.get("solvers"), list) else {}
    for s in specs:
        solvers.append({"spec": s, "name": spec_name(s), "label": styles[s]["label"], "colour": styles[s]["colour"],
                        "dash": styles[s]["dash"],
                        "description": desc.get(s, {}).get("description"), "peer": spec_name(s) in PEERS})
    progress.stage("headline, per robot, per family figures")
    heads = headline(ranked)
    data = {
        "format": REPORT_FORMAT,
        "run": _run_facts(run),
        "solvers": solvers,
        "families": fams,
        "summary": summary_rows(ranked),
        "headline": heads,
        "robots": robot_rows(run),
        "defaults": default_picks(ranked),
        "figures": {"headline": headline_figure(heads, styles), "convergence": convs, "ecdf": ecdf_figures(run, styles),
                    "iterations": iteration_figures(ranked, styles), "dof": dof, "dof_sweeps": sweeps_,
                    "boxes": box_figures(run, ranked, styles), "success": success_figures(ranked, styles),
                    "heatmap": heatmap_figure(ranked, specs, styles)},
        "solver_sections": solver_sections(run, ranked, convs_list),
    }
    progress.stage("parameter sweeps")
    data["sweeps"] = sweep_blocks(run)
    progress.stage("solution coverage")
    data["coverage"] = coverage_block(run, styles, opts) if run.format_version >= 2 else None
    progress.stage("outcomes, seed regimes and answer quality")
    data["quality"] = report_quality.quality_block(run, ranked, styles)
    progress.stage("solve viewer (traces of the embedded problems)")
    data["viewer"] = viewer_data(run, opts, sequential, traces_table=table)
    table.check()                     # traces.csv is the one run.json lists (raises before any output)
    del table
    data.update({
        "embedding": {"trace_problems": "all" if opts.trace_problems is None else opts.trace_problems,
                      "trace_head": opts.trace_head,
                      "trace_points": opts.trace_points, "clip_frames": opts.clip_frames,
                      "curve_digits": CURVE_DIGITS},
        "plots": plots_index,
        "meta": _meta_for_page(run.meta),
        "bootstrap": {"seed": opts.seed, "resamples": opts.resamples},
    })
    progress.stage(None)
    data["build_seconds"] = round(time.monotonic() - t0, 3)
    return data


def _asset(name):
    return (ASSETS / name).read_text(encoding="utf-8")


def _plotly_template():
    import plotly.io as pio

    t = pio.templates["plotly_white"].to_plotly_json()
    return t


def _packed(pieces):
    """gzip of the UTF-8 text `pieces`, as base64 text (in 76-character lines): how the page
    carries plotly.js and its data (report.html unpacks them with DecompressionStream)."""
    import base64
    import zlib

    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [z.compress(p.encode("utf-8")) for p in pieces]
    out.append(z.flush())
    return [base64.encodebytes(b"".join(out)).decode("ascii")]


def _unpacked(text):
    """The text of a packed script's body (_packed's inverse)."""
    import base64
    import gzip

    return gzip.decompress(base64.b64decode(text)).decode("utf-8")


def _page_parts(data):
    """The page as a sequence of text pieces (the template with its markers filled in)."""
    import re

    import plotly.offline

    page = _asset("report.html")
    title = f"ikbench report: suite {data['run']['suite']} ({data['run']['name']})"
    parts = {
        "@@TITLE@@": lambda: [html.escape(title)],
        "/*@@CSS@@*/": lambda: [_asset("report.css")],
        "@@PLOTLY@@": lambda: _packed([plotly.offline.get_plotlyjs()]),
        "@@DATA@@": lambda: _packed(_json_pieces(data)),
        "@@TEMPLATE@@": lambda: [to_json(_plotly_template())],
        "/*@@JS@@*/": lambda: [_asset("kinematics.js"), "\n", _asset("report.js")],
    }
    # one pass over the template, so that no inserted text is searched for markers again
    pattern = re.compile("|".join(re.escape(k) for k in parts))
    pos = 0
    for m in pattern.finditer(page):
        yield page[pos:m.start()]
        yield from parts[m.group(0)]()
        pos = m.end()
    yield page[pos:]


def render(data):
    """The self-contained HTML page of `data` (build's output)."""
    return "".join(_page_parts(data))


def render_bytes(data):
    """render(data) encoded as UTF-8, piece by piece (no page-sized text of wide characters)."""
    return b"".join(p.encode("utf-8") for p in _page_parts(data))


def _plots_index(plots_dir, out_path):
    """The static plots of PLOTS_DIR/index.json (scripts/plot.py), as links relative to the page."""
    idx = Path(plots_dir) / "index.json"
    if not idx.exists():
        return None
    doc = optional_json(idx)
    if not isinstance(doc, dict):
        return None
    rel = os.path.relpath(idx.parent, Path(out_path).resolve().parent)
    return [{"title": p.get("title"), "stem": p.get("stem"),
             "files": [f"{rel}/{f}".replace(os.sep, "/") for f in p.get("files", [])]} for p in doc.get("plots", [])]


def write_report(run_or_dir, out=None, opts=None, allow_incomplete=False, plots_dir=None, progress=None):
    """Writes the report (default RUN_DIR/report.html) atomically; returns (path, data). The
    static plots listed in `plots_dir`/index.json (default RUN_DIR/plots) are linked.
    `progress`: a Stages (a line per stage on its stream)."""
    progress = progress or Stages()
    if not hasattr(run_or_dir, "solves"):
        progress.stage("read the run (solves.csv, problems, models; manifest checked)")
    run = run_or_dir if hasattr(run_or_dir, "solves") else load(run_or_dir, allow_incomplete=allow_incomplete)
    if len(run.solves) == 0:
        raise ResultsError(f"{run.solves_path}: no solves (header only)")
    path = Path(out) if out else run.path / "report.html"
    check_output_path(path, inputs=run.inputs)  # refused before the work, not after
    data = build(run, opts, plots_index=_plots_index(plots_dir or run.path / "plots", path), progress=progress)
    # The interactive playground (`ikbench playground`, docs/playground.md) when one sits beside the
    # page, as scripts/run.sh writes it: linked, by its name relative to the page.
    data["playground"] = PLAYGROUND_PAGE if (path.parent / PLAYGROUND_PAGE).is_file() else None
    progress.stage("write the page")
    page = render_bytes(data)
    atomic_write_bytes(path, page, inputs=run.inputs)
    del page
    progress.done()
    return path, data


def extract_script(page_text, script_id):
    """The text of the page's script `script_id` (ikbench-data, ikbench-plotly: unpacked)."""
    start = page_text.index(f'<script id="{script_id}"')
    packed = 'type="application/gzip-base64"' in page_text[start:page_text.index(">", start)]
    start = page_text.index(">", start) + 1
    end = page_text.index("</script>", start)
    return _unpacked(page_text[start:end]) if packed else page_text[start:end]


def extract_data(page_text):
    """The data embedded in a report page (for tests and tools)."""
    return json.loads(extract_script(page_text, "ikbench-data"))
