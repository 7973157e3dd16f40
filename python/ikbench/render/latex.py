"""The report's tables as LaTeX, for papers: `ikbench report RUN_DIR --latex DIR`.

    data = report.build(run)              # the figures, computed once (the page's data)
    paths = write_tables(data, DIR, inputs=run.inputs)   # DIR/headline.tex, DIR/robots.tex, DIR/family-<name>.tex

Renders only: every number comes from the page's data, i.e. from figures.summarize (ranks and
ties by rank_cells), figures.family_leaders (the headline) and figures.robot_summary (the
per-robot table), as report.build computed them; nothing is recomputed here. One file per table
(a `table` float around a booktabs `tabular`: \\toprule, \\midrule, \\bottomrule; the document
needs \\usepackage{booktabs}), figures with their 95 % intervals as `98.5 [97.1, 99.3]`: success
in percent with its Wilson interval, times in microseconds with their bootstrap intervals. Spec,
family and robot names are escaped for LaTeX (`_ % & # { } $ ~ ^ \\`). The template is
report_assets/table.tex.j2 (jinja2).
"""

import math
import re
from pathlib import Path

from ..io.safe_io import atomic_write_text, check_output_path, output_directory
from .numbers import interval, number

TEMPLATE = "table.tex.j2"

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL))
NA = "n/a"


def escape(text):
    """Text set verbatim in LaTeX: its special characters escaped (`a_b` -> `a\\_b`)."""
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], str(text))


def _finite(v):
    return v is not None and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def fmt_value(v, digits=1):
    """A figure: fixed with `digits` decimals up to 1e5, then 3 significant digits; `--` when none."""
    return number(v, "time", digits=digits, missing="--")


def fmt_interval(v, lo, hi, scale=1.0, digits=1):
    """`98.5 [97.1, 99.3]`: a figure with its interval (the figure alone without one)."""
    return interval(v, lo, hi, "time", digits=digits, missing="--", scale=scale)


def success_cell(c):
    """Success in percent with its Wilson 95 % interval; `n/a` for a cell without a supported solve."""
    if not c.get("available", True) or not _finite(c.get("success_rate")):
        return NA
    return fmt_interval(c["success_rate"], c["success_ci_low"], c["success_ci_high"], scale=100.0)


def _rank_text(c):
    r = c.get("rank")
    if not _finite(r):
        return "--"
    return ("=" if c.get("tied_leader") else "") + str(int(r))


def _rows(columns, rows):
    return [dict(zip(columns, r)) for r in rows]


# ---------------------------------------------------------------- the tables (header, rows, caption)

def headline_table(data):
    """Per family (the page's headline, figures.family_leaders): the tied leaders, the first
    leader's success and median time with intervals, and the peer's rank, success and median time."""
    fam = {f["name"]: f for f in data["families"]}
    header = ["Family", "DOF", "Goal", "Leaders", r"Success [\%]", r"Median time [\si{\micro\second}]",
              "Peer", "Peer rank", r"Peer success [\%]", r"Peer median [\si{\micro\second}]"]
    header = [h.replace(r"\si{\micro\second}", r"$\mu$s") for h in header]
    rows, keys = [], []
    for h in data["headline"]:
        f = fam.get(h["family"], {})
        if h["leaders"]:
            lead = h["leaders"][0]
            names = ", ".join(escape(c["solver"]) for c in h["leaders"])
            if len(h["leaders"]) > 1:
                names = f"tie of {len(h['leaders'])}: {names}"
            figs = [success_cell(lead), fmt_interval(lead["time_us_median"], lead["time_us_median_ci_low"],
                                                     lead["time_us_median_ci_high"])]
        else:
            names = "no winner" if h["verdict"] == "no success" else NA
            figs = ["--", "--"]
        p = h.get("peer")
        peer = ([escape(p["solver"]), (_rank_text(p) + f" of {h['ran']}") if _finite(p.get("rank")) else "no success",
                 success_cell(p), fmt_interval(p["time_us_median"], p["time_us_median_ci_low"],
                                               p["time_us_median_ci_high"]) if p["available"] else "--"]
                if p else ["did not run", "--", "--", "--"])
        rows.append([escape(h["family"]), str(f.get("dof", "")), escape(f.get("goal", "")), names] + figs + peer)
        keys.append(h["family"])
    caption = (r"Leaders per family: success [Wilson 95\,\% interval] and median solve time [bootstrap 95\,\% "
               r"interval] of the first leader; specs not significantly worse are tied with it. Peer: "
               + escape(_peer_name(data)) + ".")
    return {"name": "headline", "header": header, "rows": rows, "keys": keys, "align": "lllp{0.22\\linewidth}rrlrrr",
            "caption": caption}


def _peer_name(data):
    for h in data["headline"]:
        if h.get("peer"):
            return h["peer"]["solver"]
    return "none in this run"


def robots_table(data):
    """Per robot and solver (figures.robot_summary, best first within each robot, as on the page)."""
    header = ["Robot", "Solver", "Rank", "Solves", r"Success [\%]", r"Mean [$\mu$s]", r"Median [$\mu$s]",
              r"p99 [$\mu$s]", "Iterations"]
    rows, keys = [], []
    for r in data["robots"]:
        a = r["available"]
        rows.append([escape(r["robot"]), escape(r["solver"]), _rank_text(r), str(r["solves"]), success_cell(r),
                     fmt_value(r["time_us_mean"]) if a else "--", fmt_value(r["time_us_median"]) if a else "--",
                     fmt_value(r["time_us_p99"]) if a else "--", fmt_value(r["iterations_median"], 0) if a else "--"])
        keys.append((r["robot"], r["solver"]))
    return {"name": "robots", "header": header, "rows": rows, "keys": keys, "align": "llrrrrrrr",
            "caption": r"Per robot: success [Wilson 95\,\% interval] over all solves, times over the supported "
                       r"solves; rank =1 marks the tied leaders."}


def family_tables(data):
    """Per family, its solvers (figures.summarize), best first: rank, success, median iterations,
    median and mean time with their intervals, p99 time."""
    cols = data["summary"]["columns"]
    recs = _rows(cols, data["summary"]["rows"])
    out = []
    for fam in dict.fromkeys(r["family"] for r in recs):
        part = [r for r in recs if r["family"] == fam]
        part.sort(key=lambda r: r["rank"] if _finite(r["rank"]) else math.inf)
        header = ["Solver", "Rank", "Solves", r"Success [\%]", "Iterations", r"Median time [$\mu$s]",
                  r"Mean time [$\mu$s]", r"p99 [$\mu$s]"]
        rows = []
        for r in part:
            a = r["available"]
            rows.append([escape(r["solver"]), _rank_text(r), str(r["solves"]), success_cell(r),
                         fmt_value(r["iterations_median"], 0) if a else "--",
                         fmt_interval(r["time_us_median"], r["time_us_median_ci_low"], r["time_us_median_ci_high"])
                         if a else "--",
                         fmt_interval(r["time_us_mean"], r["time_us_mean_ci_low"], r["time_us_mean_ci_high"])
                         if a else "--",
                         fmt_value(r["time_us_p99"]) if a else "--"])
        out.append({"name": "family-" + slug(fam), "family": fam, "header": header, "rows": rows,
                    "keys": [r["solver"] for r in part], "align": "lrrrrrrr",
                    "caption": "Family " + escape(fam) + r": success [Wilson 95\,\% interval], median and mean "
                               r"solve time [bootstrap 95\,\% intervals]; best first."})
    return out


def slug(name):
    """A file-name part for a family name: letters, digits, `_`, `-` and `.`; others become `-`."""
    s = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(name)).strip("-.")
    return s or "family"


def tables(data):
    """Every table of the LaTeX export, as {name, header, rows, keys, align, caption}."""
    out = [headline_table(data)]
    if data.get("robots"):
        out.append(robots_table(data))
    out.extend(family_tables(data))
    names = [t["name"] for t in out]
    for i, n in enumerate(names):  # two family names with the same slug keep distinct files
        if names.count(n) > 1:
            out[i]["name"] = f"{n}-{names[:i].count(n) + 1}"
    return out


def render(table, run_name=""):
    """One table as LaTeX (report_assets/table.tex.j2)."""
    from .templates import environment

    env = environment()
    label = "tab:ikbench-" + slug(run_name) + "-" + table["name"] if run_name else "tab:ikbench-" + table["name"]
    comment = f"{table['name']}: {len(table['rows'])} rows" + (f", run {run_name}" if run_name else "")
    return env.get_template(TEMPLATE).render(comment=comment.replace("\n", " "), caption=table["caption"],
                                              label=label, align=table["align"], header=table["header"],
                                              rows=table["rows"])


def check_directory(directory, inputs=()):
    """The --latex directory as a Path, checked by the output rule (ikbench.io.safe_io: absent or a
    directory, never a device, FIFO or file, never one of the command's `inputs`) before the
    report's work, not after."""
    check_output_path(directory, kind="dir", inputs=inputs)
    return Path(directory)


def write_tables(data, directory, inputs=()):
    """Writes one .tex file per table into `directory` (created), each by the output rule
    (ikbench.io.safe_io: a temporary file of a random name beside it, written, synced and renamed
    over the target; a device, FIFO or input at a table's path refused); returns the paths."""
    directory = output_directory(directory, inputs=inputs)
    run_name = data.get("run", {}).get("name", "")
    paths = []
    for t in tables(data):
        path = directory / f"{t['name']}.tex"
        atomic_write_text(path, render(t, run_name), inputs=inputs)
        paths.append(path)
    return paths
