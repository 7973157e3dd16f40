"""Tables of measured figures in the docs, generated from the project's own history
(results/history/history.json.gz, an `ikbench history export --format json`).

    /usr/bin/python3 -m ikbench.render.doctables results/history/history.json.gz             # print the tables
    /usr/bin/python3 -m ikbench.render.doctables results/history/history.json.gz --write docs/history.md
    /usr/bin/python3 -m ikbench.render.doctables results/history/history.json.gz --check docs/history.md
    /usr/bin/python3 -m ikbench.render.doctables results/history/history.json.gz --check   # every document

A document holds each table between `<!-- history-table:NAME -->` and `<!-- /history-table -->`;
--write replaces what is between the markers, --check exits 1 (naming the document and the table)
when it differs from what the history gives now; without a DOC they take every README.md and
docs/*.md that holds a table. The figures come from the store's queries, with their intervals and
the commit, machine and load they were measured on; nothing is typed by hand. The measurements
behind the tables are scripts/docs_measure.sh's runs, added to the store.
"""

import argparse
import json
import math
import functools
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

from ..io.safe_io import atomic_write_text
from ..io import store_queries as queries
from ..io.store_open import open_history
from .numbers import interval, number

BEGIN = re.compile(r"<!-- history-table:([a-z0-9_-]+) -->\n")
END = "<!-- /history-table -->"

REGENERATE = ("`scripts/docs_measure.sh OUT`, `ikbench history add OUT/jacobian-family OUT/trac-* OUT/arms/* OUT/closed-form-* OUT/clutter*`, "
              "then the export and `python3 -m ikbench.render.doctables results/history/history.json.gz --write DOC` "
              "(docs/history.md, \"The project's own history\")")


def _finite(x):
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def _g(x):
    """A figure to three significant digits, thousands separated from 1000 up."""
    return number(x, "grouped")


def _fmt(v, lo, hi, figure):
    if figure == "success_rate":
        return interval(v, lo, hi, "percent", unit=" %", missing="")
    return interval(v, lo, hi, "grouped", missing="")


def fmt(point, scale=1.0, interval=True):
    """A stored point as table text: value [interval], success rates in percent; '' when absent."""
    if point is None:
        return ""
    lo, hi = (point["ci_low"], point["ci_high"]) if interval else (None, None)
    if point["figure"] == "success_rate":
        return _fmt(point["value"], lo, hi, "success_rate")
    return _fmt(*(x * scale if _finite(x) else x for x in (point["value"], lo, hi)), point["figure"])


def _quotient(a, b):
    """a / b of two stored points' values; None when either is absent or b is 0."""
    if a is None or b is None or not _finite(a["value"]) or not _finite(b["value"]) or b["value"] == 0:
        return None
    return a["value"] / b["value"]


def ratio(a, b):
    """a / b of two stored points' values, as '0.123' or '1.23x'; '' when either is absent."""
    r = _quotient(a, b)
    return "" if r is None else f"{r:.3f}" if r < 1 else f"{r:.2f}x"


REPO = Path(__file__).resolve().parents[3]


@functools.lru_cache(maxsize=None)
def _repository_commits():
    """(set of full hashes, {subject: [full hashes]}) of every commit of the source tree holding this
    module; None where it is not a git checkout (a tarball): labels are then printed as stored."""
    try:
        out = subprocess.run(["git", "-C", str(REPO), "log", "--all", "--format=%H %s"], capture_output=True,
                             text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    hashes, by_subject = set(), {}
    for line in out.splitlines():
        h, _, subject = line.partition(" ")
        hashes.add(h)
        by_subject.setdefault(subject, []).append(h)
    return (hashes, by_subject) if hashes else None


def cite(commit, dirty, subject):
    """A stored run's commit as a table cites it: its label when the commit is one of this repository;
    a run recorded on a commit since rewritten (rebased: same change, new hash) is cited by the
    repository's one commit of the same subject; otherwise the label as stored (a store of another
    repository's runs; in this repository's docs, tests/docs_commits_test.py fails on such a label)."""
    label = queries.commit_label(commit, dirty)
    known = _repository_commits()
    if known is None or not commit:
        return label
    hashes, by_subject = known
    if any(h.startswith(commit) for h in hashes):
        return label
    same = by_subject.get(subject or "", [])
    if len(same) == 1:
        return queries.commit_label(same[0], dirty)
    return label


def _machines_footer(store):
    ms = queries.machines(store)
    return ["", "Machines: " + "; ".join(f"`{k}` = {lab}" for k, lab in zip(ms["key"], ms["label"])) + ".",
            "Generated by `python3 -m ikbench.render.doctables results/history/history.json.gz --write DOC`."]


class PerCommit:
    """One row per commit, in commit order, on each machine identity: columns of
    (label, source, family, solver, figure), read from the runs of one `suite` only (a run of another
    suite, or of `--urdf`, on the same commit measures other problems and is not a row of this table)."""

    def __init__(self, title, cols, *, suite):
        self.title, self.cols, self.suite = title, cols, suite

    def render(self, store):
        by_commit, order = {}, []
        for label, source, family, solver, figure in self.cols:
            pts = queries.points(store, source=source, family=family, solver=solver, figure=figure, suite=self.suite)
            for key, g in queries.group_series(pts):
                for r in queries.per_commit(g).itertuples():
                    k = (r.machine, cite(r.git_commit, bool(r.dirty), r.subject))
                    if k not in by_commit:
                        by_commit[k] = {"date": (r.commit_date or r.start_time or "")[:10], "subject": r.subject or "",
                                        "order": (r.commit_date or r.start_time or "")}
                        order.append(k)
                    by_commit[k][label] = _fmt(r.value, r.ci_low, r.ci_high, figure)
        order.sort(key=lambda k: (k[0], by_commit[k]["order"]))
        lines = [self.title, "", "| machine | commit | date | subject | " + " | ".join(c[0] for c in self.cols) + " |",
                 "|---|---|---|---|" + "---:|" * len(self.cols)]
        for k in order:
            row = by_commit[k]
            subj = row["subject"].replace("|", "\\|")
            subj = subj if len(subj) <= 50 else subj[:49] + "…"
            lines.append(f"| {k[0]} | {k[1]} | {row['date']} | {subj} | " +
                         " | ".join(row.get(c[0], "") for c in self.cols) + " |")
        return "\n".join(lines + _machines_footer(store)) + "\n"


def _natural(text):
    """Sort key: digits by their value ('entries:4096' before 'entries:65536')."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text)]


class Latest:
    """One measurement: the newest commit (and its machine identity) whose runs hold the table's
    points. Runs are selected by `suite` (a tuple of suites: the newest measurement of each), or by
    `specs` (the run's solver specs are exactly these), and `source`.

    rows: [(label, base)], base a dict of filters (source, family, solver, figure) or a tuple whose
    first item is one; rows=None: every family of those runs, or with `family` and `match` every
    Google Benchmark case of that file whose name matches. cols: [(label, function(get) -> text)],
    where get(**filters) returns the stored point (value, ci_low, ci_high, n, successes) that the
    row's and the given filters name, or None, and get.row is the row's base; cols=None with `cell`:
    one column per family, cell(get, row solver, family)."""

    def __init__(self, title, cols, *, rows=None, suite=None, specs=None, source=None, family=None, match=None,
                 cell=None, row_label=None, note="", regenerate=REGENERATE):
        self.title, self.cols, self.rows, self.suite, self.source = title, cols, rows, suite, source
        self.regenerate = regenerate
        self.specs = frozenset(specs) if specs else None
        self.family, self.match, self.cell = family, re.compile(match) if match else None, cell
        self.row_label, self.note = row_label or "", note

    def _runs(self, store):
        """Ids of the runs this table reads (None: every run)."""
        if self.specs is None:
            return None
        by_run = queries.specs_by_run(store)
        return {rid for rid, specs in by_run.items() if specs == self.specs}

    def _selection(self, store):
        if isinstance(self.suite, tuple):  # several suites (one per arm): each suite's newest measurement
            parts = [self._selection_of(store, suite) for suite in self.suite]
            parts = [p for p in parts if not p.empty]
            return pd.concat(parts) if parts else queries.points(store, suite=self.suite[0], source="none")
        return self._selection_of(store, self.suite)

    def _selection_of(self, store, suite):
        pts = queries.points(store, suite=suite, source=self.source, family=self.family)
        ids = self._runs(store)
        if ids is not None:
            pts = pts[pts["run_id"].isin(ids)]
        if self.match is not None:
            pts = pts[pts["solver"].map(lambda n: bool(self.match.search(n)))]
        if pts.empty:
            return pts
        last = pts.iloc[-1]
        return pts[(pts["git_commit"] == last["git_commit"]) & (pts["machine"] == last["machine"]) &
                   (pts["dirty"] == last["dirty"])]

    def render(self, store):
        sel = self._selection(store)
        if sel.empty:
            return f"{self.title}\n\nNo stored run holds these figures yet; measure them with {self.regenerate}.\n"
        index = {}
        for key, g in queries.group_series(sel):
            pc = queries.per_commit(g).iloc[-1].to_dict()
            index[(pc["source"], pc["family"], pc["solver"], pc["figure"])] = pc
        families = sorted(sel.loc[sel["source"] == "cell", "family"].unique())
        rows = self.rows
        if rows is None and self.family:
            rows = [(f"`{n}`", {"source": "gbench", "family": self.family, "solver": n})
                    for n in sorted(sel["solver"].unique(), key=_natural)]
        elif rows is None:
            rows = [(f"`{f}`", {"family": f}) for f in families]
        cols = self.cols
        if cols is None:
            cols = [(f"`{f}`", lambda get, f=f: self.cell(get, get.row.get("solver"), f)) for f in families]

        def getter(base):
            filters = base if isinstance(base, dict) else base[0] if isinstance(base, tuple) and \
                isinstance(base[0], dict) else {}

            def get(**kw):
                k = dict(filters, **kw)
                return index.get((k.get("source", "cell"), k.get("family"), k.get("solver"), k.get("figure")))
            get.row = base
            return get

        lines = [self.title, "", f"| {self.row_label} | " + " | ".join(c[0] for c in cols) + " |",
                 "|---|" + "---:|" * len(cols)]
        for label, base in rows:
            cells = [fn(getter(base)) for _, fn in cols]
            if any(cells):
                lines.append(f"| {label} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines += ["", _provenance(store, sel) + (" " + self.note if self.note else ""),
                  f"Regenerate: {self.regenerate}."]
        return "\n".join(lines) + "\n"


class Coverage:
    """What the stored history holds: its commits in commit order, per machine identity, with the
    suites run on each, and the commits recorded as skipped."""

    def render(self, store):
        rs = queries.runs(store)
        if rs.empty:
            return "The stored history holds no run.\n"
        lines = [f"The stored history holds {len(rs)} runs of {rs['git_commit'].nunique()} commits on "
                 f"{rs['machine'].nunique()} machine identit{'y' if rs['machine'].nunique() == 1 else 'ies'} "
                 "(`+dirty`: a modified work tree of that commit):", "",
                 "| machine | commit | date | subject | runs (suite x threads) |", "|---|---|---|---|---|"]
        rs = rs.assign(commit=[cite(c, bool(d), sj) for c, d, sj in zip(rs["git_commit"], rs["dirty"], rs["subject"])])
        for (machine, commit), g in rs.groupby(["machine", "commit"], sort=False):
            first = g.iloc[0]
            subj = (first["subject"] or "").replace("|", "\\|")
            subj = subj if len(subj) <= 60 else subj[:59] + "…"
            what = ", ".join(f"{n} x {suite} ({t} thread{'s' if t != 1 else ''})" for (suite, t), n in
                             g.groupby(["suite", "threads"], sort=True).size().items())
            lines.append(f"| {machine} | {commit} | "
                         f"{(first['commit_date'] or first['start_time'] or '')[:10]} | {subj} | {what} |")
        skipped = queries.skipped(store)
        if skipped:
            lines += ["", "Recorded without a run: " + "; ".join(f"`{r['git_commit'][:10]}` ({r['reason']})"
                                                                 for r in skipped) + "."]
        return "\n".join(lines + _machines_footer(store)) + "\n"


class RunTimes:
    """How long the newest stored run of each suite took: its solve pass (run.json `throughput`:
    the timed pass's wall time and solves) and the run from start to end, on the machine and
    commit it names."""

    def __init__(self, title, suites, regenerate):
        self.title, self.suites, self.regenerate = title, suites, regenerate

    def render(self, store):
        lines = [self.title, "", "| suite | threads | solves | solve pass [s] | run, start to end [s] | measured at |",
                 "|---|---:|---:|---:|---:|---|"]
        found = False
        for suite in self.suites:
            rs = queries.runs(store, suite=suite)
            if rs.empty:
                continue
            r = rs.iloc[-1]
            tp = queries.run_throughput(store, r["run_id"])
            wall = _seconds_between(r["start_time"], r["end_time"])
            [row] = queries.run_rows(store, [int(r["run_id"])])
            found = True
            lines.append(f"| `{suite}` | {r['threads']} | {_g(tp['solves']) if _finite(tp.get('solves')) else ''} | "
                         f"{_g(tp['wall_s']) if _finite(tp.get('wall_s')) else ''} | {'' if wall is None else _g(wall)} | "
                         f"commit `{cite(r['git_commit'], bool(r['dirty']), r['subject'])}` on `{r['machine']}`, "
                         f"{_load_text([row['load']])}{', noisy' if row['noisy'] else ''} |")
        if not found:
            return f"{self.title}\n\nNo stored run holds these figures yet; measure them with {self.regenerate}.\n"
        return "\n".join(lines + _machines_footer(store)[:2] + ["", f"Regenerate: {self.regenerate}."]) + "\n"


def _seconds_between(start, end):
    """Seconds from one ISO 8601 time to another; None when either is absent or unreadable."""
    from datetime import datetime
    try:
        a, b = (datetime.fromisoformat(str(t).replace("Z", "+00:00")) for t in (start, end))
    except (TypeError, ValueError):
        return None
    return (b - a).total_seconds()


def _load_text(loads):
    """'load average 1.2-3.4 on 2 cores' from the runs' load objects."""
    vals, cores = [], set()
    for ld in loads:
        if isinstance(ld, str):
            try:
                ld = json.loads(ld)
            except ValueError:
                continue
        if not isinstance(ld, dict):
            continue
        for k in ("start", "end"):
            if _finite(ld.get(k)):
                vals.append(float(ld[k]))
        samples = ld.get("samples")
        if isinstance(samples, dict):
            vals += [float(samples[k]) for k in ("min", "max") if _finite(samples.get(k))]
        if isinstance(ld.get("cores"), int):
            cores.add(ld["cores"])
    if not vals:
        return "load not recorded"
    text = f"load average {min(vals):.1f}-{max(vals):.1f}"
    return text + (f" on {max(cores)} cores" if cores else "")


def _provenance(store, sel):
    """Which commit, machine and load the points of a table were measured on."""
    ids = sorted(int(i) for i in sel["run_id"].unique())
    rs = queries.run_rows(store, ids)
    noisy = sum(1 for r in rs if r["noisy"])
    first = sel.iloc[-1]
    commit = cite(first["git_commit"], bool(first["dirty"]), first["subject"])
    date = (first["commit_date"] or first["start_time"] or "")[:10]
    text = (f"Measured at commit `{commit}` ({date}) on `{first['machine']}` ({first['machine_label']}), "
            f"{len(rs)} run{'s' if len(rs) != 1 else ''}, {_load_text(r['load'] for r in rs)}")
    if noisy:
        text += (f"; {noisy} of them noisy (the machine was shared: absolute times are that moment's, "
                 "ratios within one run are what carries)")
    return text + "."


# The runs behind the tables (scripts/docs_measure.sh).
DOCS_SUITE = "jacobian-family"
TRAC_SPECS = ["auto", "dls:time_budget_us=5000", "dls:restarts=100:time_budget_us=5000",
              "lm:restarts=100:time_budget_us=5000", "sdls:restarts=100:time_budget_us=5000",
              "ceres-lm:time_budget_us=5000", "ceres-lm:autodiff=1:time_budget_us=5000", "kdl-lma:time_budget_us=5000",
              "kdl-lma:restarts=100:time_budget_us=5000", "kdl-nr-jl:time_budget_us=5000", "analytic-6r", "analytic-7r"]
ARM_SPECS = ["auto", "kdl-lma:time_budget_us=5000"]
JACOBIAN_SPECS = ["jt", "gd-momentum", "pinv", "gn", "dls", "dls-adaptive", "dls-marquardt", "lm", "sdls"]
LIBRARY = "auto:library=131072:start=library"
# The collision suites (docs/collision.md): the scene-aware `auto`, its avoiding form, the same recipe
# blind to the scene, and KDL's LMA re-seeding (with and without rejecting colliding answers).
KDL_RESEED = "kdl-lma:restarts=1000:time_budget_us=5000"
# `auto` taking the closed form where a chain qualifies (docs/solvers.md), beside the closed form and
# the numerical recipe alone.
CLOSED_FORM_SPECS = ["analytic-6r", "auto", "auto:closed_form=off"]
# The external-solver protocol's own cost (docs/external-solvers.md): the null solvers, which answer
# every problem with its start, in Python and Node, one problem per message and batches of 50, in one
# run on the UR5 (scripts/docs_measure.sh, OUT/external-overhead).
EXTERNAL_NULL = {"Python": "ext:cmd='/usr/bin/python3 examples/external/null_solver.py'",
                 "Node": "ext:cmd='node examples/external/null_solver.mjs'"}
EXTERNAL_SPECS = [s + b for s in EXTERNAL_NULL.values() for b in ("", ":batch=50")]
EXTERNAL_FAMILY = "ur5-pose"
CLUTTER_SPECS = ["auto", "auto:collision=avoid", "auto:collision=off", f"{KDL_RESEED}:collision=reject", KDL_RESEED]


# The evaluation protocols' runs (docs/protocols.md): the specs each protocol runs.
PROTOCOL_SPECS = {"trac-ik": ["auto", "kdl-lma:restarts=1000000", "kdl-nr-jl"],
                  "ikfast-test": ["analytic-6r", "auto", "kdl-lma"],
                  "seeds": ["auto", "dls", "kdl-lma"], "tracking": ["auto", "dls", "kdl-lma"]}
PROTOCOL_REGENERATE = ("the `ikbench run --protocol ...` commands of docs/protocols.md, \"Measured\", `ikbench history add` "
                       "of their run directories, then the export and `python3 -m ikbench.render.doctables "
                       "results/history/history.json.gz --write DOC` (docs/history.md, \"The project's own history\")")


def _gb(file, name):
    return {"source": "gbench", "family": f"gbench:{file}", "solver": name}


def _tp(spec, path, threads, problems=None):
    return {"source": "throughput", "family": "throughput", "figure": "converged_per_s",
            "solver": f"{spec}/{path}/threads:{threads}" + (f"/problems:{problems}" if problems else "")}


def cpu_per_unit(get, scale=1e9):
    """A Google Benchmark case's CPU time per unit of work: per iteration of the solver where the
    case counts them (`time_per_iteration`, s), else per call; in ns by default."""
    per_it = get(figure="counter:time_per_iteration")
    if per_it is not None:
        return fmt(per_it, scale=scale)
    return fmt(get(figure="cpu_time_ns"), scale=scale * 1e-9)


def real_over_cpu(get):
    """Wall time over CPU time of a case: 1 when the process had a core to itself."""
    r = _quotient(get(figure="real_time_ns"), get(figure="cpu_time_ns"))
    return "" if r is None else f"{r:.2f}"  # one format either side of 1


def _gbench_cols(unit="ns", scale=1e9):
    return [(f"CPU time [{unit}]", lambda get: cpu_per_unit(get, scale)), ("real / CPU", real_over_cpu)]


def _cell(get, spec, family, *, median=True):
    """'99.4 % [98.3, 99.8] · 7.5 / 8.9 µs · 9 it' of one (family, spec) cell."""
    k = {"solver": spec, "family": family}
    succ = get(figure="success_rate", **k)
    if succ is None:
        return ""
    parts = [fmt(succ)]
    mean, med, it = (get(figure=f, **k) for f in ("time_us_mean", "time_us_median", "iterations_median"))
    if mean is not None:
        parts.append((fmt(med, interval=False) + " / " if median and med is not None else "") +
                     fmt(mean, interval=False) + " µs")
    if it is not None:
        parts.append(fmt(it, interval=False) + " it")
    return " · ".join(parts)


def _protocol_table(protocol, what, suites):
    """The table of a literature protocol's stored runs: a row per spec of the protocol, a column per
    family of the newest run of each of `suites`; `what` says what was run."""
    return Latest(what + " Each cell: success [Wilson 95 %] · median / mean time · median iterations.", None,
                  rows=[(f"`{sp}`", {"solver": sp}) for sp in PROTOCOL_SPECS[protocol]], cell=_cell, suite=suites,
                  row_label="spec", regenerate=PROTOCOL_REGENERATE)


def _throughput_rows():
    return [("`auto`", ("auto", None)), ("`dls`", ("dls", None)),
            (f"`{LIBRARY}`, 2000 problems cycled", (LIBRARY, None)),
            (f"`{LIBRARY}`, a million distinct problems", (LIBRARY, 1000000))]


def _throughput_cols():
    cols = []
    for path, name in (("scalar", "`Solver::solve`"), ("batch", "batch"), ("generic", "generic code")):
        for t in (1, 2):
            cols.append((f"{name}, {t} thread{'s' if t > 1 else ''}",
                         lambda get, path=path, t=t: fmt(get(**_tp(get.row[0], path, t, get.row[1])))))
    for t in (1, 2):
        cols.append((f"batch / generic, {t} thread{'s' if t > 1 else ''}",
                     lambda get, t=t: ratio(get(**_tp(get.row[0], "batch", t, get.row[1])),
                                            get(**_tp(get.row[0], "generic", t, get.row[1])))))
    cols.append(("batch / `Solver::solve`, 2 threads",
                 lambda get: ratio(get(**_tp(get.row[0], "batch", 2, get.row[1])),
                                   get(**_tp(get.row[0], "scalar", 2, get.row[1])))))
    cols.append(("cores busy, batch, 2 threads",
                 lambda get: fmt(get(**dict(_tp(get.row[0], "batch", 2, get.row[1]), figure="cores_busy")),
                                 interval=False)))
    return cols


KERNEL_ROWS = [
    ("FK, 7 random-axis hinges, generic code (per call)", _gb("bench_kinematics", "ForwardKinematics/dof:7/joint:revolute")),
    ("FK + errors + pose Jacobian, generic code (per call)",
     _gb("bench_kinematics", "FkErrorsJacobian/dof:7/joint:revolute/goal:pose")),
    ("the same, the kernel's one-problem step",
     _gb("bench_kinematics", "KernelFkErrorsJacobian/dof:7/step:packed/goal:pose")),
    ("the same, the kernel's lane step on one problem",
     _gb("bench_kinematics", "KernelFkErrorsJacobian/dof:7/step:lanes/goal:pose")),
    ("7-DOF pose `dls` iteration, `Solver::solve` (one-problem step)",
     _gb("bench_solvers", "PerIteration/dls/dof:7/goal:pose")),
    ("the same, lane step (`dls:kernel=lanes`)", _gb("bench_solvers", "PerIteration/dls:kernel=lanes/dof:7/goal:pose")),
    ("the same, generic code (`dls:kernel=generic`)",
     _gb("bench_solvers", "PerIteration/dls:kernel=generic/dof:7/goal:pose")),
    ("7-DOF position `dls` iteration, `Solver::solve`", _gb("bench_solvers", "PerIteration/dls/dof:7/goal:position")),
    ("`auto`'s iteration, one problem (`ScalarPerIteration/auto`)", _gb("bench_batch", "ScalarPerIteration/auto")),
    ("`auto`'s iteration, lane step on one problem", _gb("bench_batch", "ScalarLanesPerIteration/auto")),
    ("`auto`'s iteration, generic code", _gb("bench_batch", "ScalarGenericPerIteration/auto")),
    ("`auto`, per lane-step in a batch (AVX2)", _gb("bench_batch", "BatchPerIteration/auto/lanes:16/isa:0")),
    ("`auto`, per lane-step in a batch (portable SSE2)", _gb("bench_batch", "BatchPerIteration/auto/lanes:16/isa:1")),
    ("`dls`, per lane-step in a batch (AVX2)", _gb("bench_batch", "BatchPerIteration/dls/lanes:16/isa:0")),
]

BATCH_ROWS = [
    ("`Solver::solve`, generic code (`ScalarGeneric/auto`)", _gb("bench_batch", "ScalarGeneric/auto")),
    ("`Solver::solve`, the kernel (`Scalar/auto`)", _gb("bench_batch", "Scalar/auto")),
    ("batch, AVX2, 16 lanes (`Batch/auto/lanes:16/isa:0`)", _gb("bench_batch", "Batch/auto/lanes:16/isa:0")),
    (f"batch with a seed library (`Batch/{LIBRARY}/lanes:16/isa:0`)",
     _gb("bench_batch", f"Batch/{LIBRARY}/lanes:16/isa:0")),
]


def _with_cores(get):
    """A throughput point with the cores its process kept busy ('427,947 (1.02 cores busy)')."""
    text, busy = fmt(get()), get(figure="cores_busy")
    return text + (f" ({busy['value']:.2f} cores busy)" if text and busy is not None else "")


def _counter(name, scale=1.0, interval=False):
    return lambda get: fmt(get(figure=f"counter:{name}"), scale=scale, interval=interval)


TABLES = {
    "coverage": Coverage(),
    "quick": PerCommit(
        "Per commit, in commit order, on each machine identity: the `quick` suite's `ur5-pose` family with "
        "`auto` (success [Wilson 95 %], median time [bootstrap 95 %]), the 7-DOF revolute forward "
        "kinematics of `bench_kinematics` (median of 3 repetitions [their range]) and `ikbench throughput` "
        "of `dls` on 2 threads.",
        [("`auto` success on ur5-pose", "cell", "ur5-pose", "auto", "success_rate"),
         ("`auto` median [us] on ur5-pose", "cell", "ur5-pose", "auto", "time_us_median"),
         ("FK 7 hinges [ns]", "gbench", "gbench:bench_kinematics", "ForwardKinematics/dof:7/joint:revolute",
          "real_time_ns"),
         ("`dls` solves/s, 2 threads", "throughput", "throughput", "dls/scalar/threads:2", "solves_per_s")],
        suite="quick"),
    "speed": Latest(
        "The speed targets, each measured in one run (Google Benchmark: CPU time, median of 5 repetitions "
        "[their range]; `ikbench throughput`: converged 7-DOF pose solves per second of wall time).",
        [("measured", lambda get: get.row[1](get)), ("target", lambda get: get.row[2])],
        rows=[("FK + errors + pose Jacobian of 7 hinges, CPU time [ns]",
               (_gb("bench_kinematics", "KernelFkErrorsJacobian/dof:7/step:packed/goal:pose"), cpu_per_unit, "≤ 200")),
              ("7-DOF pose DLS iteration, CPU time [ns]",
               (_gb("bench_solvers", "PerIteration/dls/dof:7/goal:pose"), cpu_per_unit, "≤ 300")),
              (f"converged solves/s, 2 threads, `{LIBRARY}` batch",
               (_tp(LIBRARY, "batch", 2), _with_cores, "≥ 2 000 000")),
              ("the same, a million distinct targets",
               (_tp(LIBRARY, "batch", 2, 1000000), _with_cores, "≥ 2 000 000")),
              ("converged solves/s, 2 threads, `auto` batch without a library",
               (_tp("auto", "batch", 2), _with_cores, "≥ 600 000")),
              ("batch / generic code, `auto`, 2 threads",
               ({}, lambda get: ratio(get(**_tp("auto", "batch", 2)), get(**_tp("auto", "generic", 2))), "≥ 3x"))],
        suite=DOCS_SUITE, row_label="figure"),
    "kernels": Latest(
        "One problem's evaluation and iteration, and a lane-step in a batch (Google Benchmark, median of 5 "
        "repetitions [their range]; CPU time per call, or per solver iteration where the case counts them; "
        "real / CPU above 1: the process waited for a core).", _gbench_cols(), rows=KERNEL_ROWS, suite=DOCS_SUITE, row_label="case"),
    "batch-gbench": Latest(
        "`auto` on the throughput problems (2000 reachable 7-DOF pose targets on 20 random chains, solved once "
        "per benchmark iteration), one thread, Google Benchmark (median of 5 repetitions).",
        [("CPU time per solve [µs]", _counter("per_solve", 1e6)),
         ("converged solves per CPU second", _counter("converged_per_s")),
         ("lane-steps per solve", _counter("lane_steps")),
         ("lanes filled", _counter("lanes_filled")),
         ("real / CPU", real_over_cpu)],
        rows=BATCH_ROWS, suite=DOCS_SUITE, row_label="case"),
    "peak": Latest(
        "The core's measured multiply-add issue (`bench_batch` `Peak`: twelve independent multiply-add chains) "
        "and the seed library's search (`LibraryNearest`: the nearest k of N entries, cycled over 2000 "
        "targets).",
        [("lane multiply-adds per CPU second [G]", _counter("lane_fma_per_s", 1e-9)),
         ("CPU time per search [µs]", lambda get: "" if get(figure="counter:lane_fma_per_s") is not None else
          fmt(get(figure="cpu_time_ns"), scale=1e-3)),
         ("real / CPU", real_over_cpu)],
        family="gbench:bench_batch", match=r"^(Peak|LibraryNearest)/", suite=DOCS_SUITE,
        row_label="case"),
    "throughput": Latest(
        "`ikbench throughput --batch --threads 1,2`: converged 7-DOF pose solves per second on 2000 reachable "
        "targets (20 random chains, limits ±2.5 rad; `--problems 1000000`: a million distinct ones), each "
        "thread count doing the same solves; `Solver::solve` runs the compiled kernel one problem at a "
        "time, the generic code is the spec with `kernel=generic`.",
        _throughput_cols(), rows=_throughput_rows(), suite=DOCS_SUITE, row_label="spec"),
    "arms": Latest(
        "`auto` against KDL LMA on every arm chain (`scripts/arm_table.py table --samples 10000`: the TRAC-IK "
        "protocol, one thread, both specs interleaved in one run per arm): success [Wilson 95 %], mean time "
        "[bootstrap 95 %] and the ratio of the means.",
        [("`auto` success", lambda get: fmt(get(solver="auto", figure="success_rate"))),
         ("`auto` mean [µs]", lambda get: fmt(get(solver="auto", figure="time_us_mean"))),
         ("KDL LMA success", lambda get: fmt(get(solver=ARM_SPECS[1], figure="success_rate"))),
         ("KDL LMA mean [µs]", lambda get: fmt(get(solver=ARM_SPECS[1], figure="time_us_mean"))),
         ("`auto` / KDL LMA", lambda get: ratio(get(solver="auto", figure="time_us_mean"),
                                                get(solver=ARM_SPECS[1], figure="time_us_mean")))],
        specs=ARM_SPECS, row_label="arm (family)"),
    "trac-ik": Latest(
        "Every backend that takes a 6-D pose goal on the four shipped arms, the TRAC-IK protocol (10 000 "
        "targets per arm, one thread, all specs of an arm interleaved in one run). Each cell: success "
        "[Wilson 95 %] · median / mean time · median iterations; empty = the backend does not apply.",
        None, rows=[(f"`{sp}`", {"solver": sp}) for sp in TRAC_SPECS], cell=_cell, specs=TRAC_SPECS,
        row_label="spec"),
    "jacobian-family": Latest(
        "The Jacobian-family backends (`:restarts=2`) on `scenarios/data/suites/jacobian-family.json`. Each "
        "cell: success [Wilson 95 %] · mean time · median iterations.",
        None, rows=[(f"`{sp}`", {"solver": f"{sp}:restarts=2"}) for sp in JACOBIAN_SPECS],
        cell=lambda get, spec, family: _cell(get, spec, family, median=False), suite=DOCS_SUITE, row_label="spec"),
    "clutter": Latest(
        "Every shipped arm on the table of the workcell (`ikbench run --suite clutter --threads 1 --no-trace`: "
        "2000 pose targets per arm from collision-free configurations, one thread, the specs interleaved "
        "problem by problem). Success = converged (1e-5 m, 1e-5 rad), within limits and collision-free by "
        "FCL's exact check. Each cell: success [Wilson 95 %] · median / mean time · median iterations.",
        None, rows=[(f"`{sp}`", {"solver": sp}) for sp in CLUTTER_SPECS], cell=_cell, suite="clutter",
        row_label="spec"),
    "clutter-near": Latest(
        "Targets whose configurations come within 2 cm of a collision (`ikbench run --suite clutter-near "
        "--threads 1 --no-trace`: 500 per family), where re-seeding and avoiding differ; cells as above.",
        None, rows=[(f"`{sp}`", {"solver": sp}) for sp in CLUTTER_SPECS], cell=_cell, suite="clutter-near",
        row_label="spec"),
    "collision-queries": Latest(
        "One query of each kind (`bench_collision --benchmark_repetitions=5 "
        "--benchmark_enable_random_interleaving=true`: CPU time per call, median of 5 repetitions [their range]).",
        _gbench_cols(), family="gbench:bench_collision", match=r".", suite="clutter", row_label="case"),
    "analytic": Latest(
        "The closed forms, `bench_analytic` (64 fixed targets per arm; CPU time per call, median of 5 "
        "repetitions [their range]): "
        "whole `Solver::solve` (`SolveRobot`), the closed form alone (`PureSolve`) and the parts of "
        "`Solver::solve`'s checks (`Overhead`).",
        _gbench_cols("µs", 1e6) + [("solutions per solve", _counter("solutions"))],
        family="gbench:bench_analytic", match=r"^(SolveRobot|PureSolve|Overhead)/", specs=CLOSED_FORM_SPECS,
        row_label="case"),
    "closed-form-auto": Latest(
        "The closed form through the harness: `analytic-6r` (every solution), `auto` (the closed form first where "
        "the chain qualifies) and `auto:closed_form=off` (the numerical recipe alone) on 2000 reachable pose "
        "targets per arm (`ikbench run --urdf ARM --samples 2000 --threads 1`, the three specs interleaved "
        "problem by problem; the KR 210 was not used while choosing the rule). Each cell: success [Wilson 95 %] · "
        "median / mean time · median iterations; the last column is the ratio of `auto`'s mean to the numerical "
        "recipe's.",
        [(f"`{sp}`", lambda get, sp=sp: _cell(get, sp, get.row["family"])) for sp in CLOSED_FORM_SPECS] +
        [("`auto` / `closed_form=off`", lambda get: ratio(get(solver="auto", figure="time_us_mean"),
                                                          get(solver="auto:closed_form=off", figure="time_us_mean")))],
        specs=CLOSED_FORM_SPECS, row_label="arm (family)"),
    "external-overhead": Latest(
        "The protocol's cost per problem: the null solvers (examples/external/null_solver.py and "
        "null_solver.mjs, which answer every problem with its start at once) on 2000 pose targets on the UR5 "
        "(`ikbench run --urdf scenarios/data/robots/ur5.urdf --samples 2000 --threads 1 --no-trace`, the four "
        "specs interleaved problem by problem). The wall time per problem in the harness (writing the problem, "
        "the adapter reading it and answering, reading and verifying the answer) [bootstrap 95 %] is what any "
        "external solver of that language pays on top of its own time; with `batch=50` a problem's time is its "
        "verification plus a 50th of its message's round trip.",
        [("median per problem [µs]", lambda get: fmt(get(figure="time_us_median"))),
         ("mean per problem [µs]", lambda get: fmt(get(figure="time_us_mean")))],
        rows=[(f"{lang}, {per}", {"solver": spec + batch, "family": EXTERNAL_FAMILY})
              for lang, spec in EXTERNAL_NULL.items()
              for per, batch in (("1 problem per message", ""), ("batch=50", ":batch=50"))],
        specs=EXTERNAL_SPECS, row_label="null solver",
        regenerate="`scripts/docs_measure.sh OUT`, `ikbench history add OUT/external-overhead`, then the export and "
                   "`python3 -m ikbench.render.doctables results/history/history.json.gz --write DOC` "
                   "(docs/history.md, \"The project's own history\")"),
    "protocol-trac-ik": _protocol_table(
        "trac-ik",
        "`--protocol trac-ik` on the shipped arms (`ikbench run --protocol trac-ik --urdf ARM --threads 1 --no-trace`: "
        "10 000 targets per arm from random configurations, nominal starts, a 5 ms budget, 1e-5 m and rad; the "
        "specs interleaved problem by problem).",
        tuple(f"trac-ik-{a}" for a in ("ur5", "iiwa14", "panda", "irb2400"))),
    "protocol-ikfast-test": _protocol_table(
        "ikfast-test",
        "`--protocol ikfast-test` on the shipped 6R arms (`ikbench run --protocol ikfast-test --urdf ARM --threads 1 "
        "--no-trace`). On `*-unreachable` no answer can succeed: the cell's time is what a spec spends before it "
        "refuses (the rates of wrong, not-found and refused answers: `scripts/protocol_table.py ikfast-test RUN...`).",
        ("ikfast-test-ur5", "ikfast-test-irb2400")),
    "protocol-seeds": _protocol_table(
        "seeds",
        "`--protocol seeds` on the UR5 and the Panda (`ikbench run --protocol seeds --urdf ARM --threads 1 "
        "--no-trace`): one family per seed regime.",
        ("seeds-ur5", "seeds-panda")),
    "protocol-tracking": _protocol_table(
        "tracking",
        "`--protocol tracking` on the UR5 and the Panda (`ikbench run --protocol tracking --urdf ARM --threads 1 "
        "--no-trace`): one family per frame rate, each frame started from the previous answer.",
        ("tracking-ur5", "tracking-panda")),
    "run-times": RunTimes(
        "How long a run takes: the newest stored run of each suite, its timed solve pass (`ikbench run` "
        "prints it; run.json `throughput`) and the whole run from start to end (run.json `start_time`, "
        "`end_time`, whole seconds; with the trace pass where the run made one).",
        ["quick", "jacobian-family", "clutter", "trac-ik-ur5"],
        "`ikbench run --suite quick --threads 2 --no-trace --out RUN`, `ikbench history add RUN`, then the export and "
        "`python3 -m ikbench.render.doctables results/history/history.json.gz --write DOC` (docs/history.md)"),
    "build": Latest(
        "A clean build of what the main command builds (`scripts/build_time.sh`: a fresh worktree, the release "
        "preset, `-j2`, no ccache; `build/main_job`: the `ikbench` CLI, `bench_kinematics`, `bench_solvers` and "
        "the playground's WebAssembly module), wall and CPU time of the configuration and the build, and the "
        "size of what it makes.",
        [("wall [s]", lambda get: fmt(get(figure="real_time_ns"), scale=1e-9, interval=False)),
         ("CPU [s]", lambda get: fmt(get(figure="cpu_time_ns"), scale=1e-9, interval=False)),
         ("`ikbench` [MB]", _counter("ikbench_bytes", 1e-6)),
         ("playground module [MB]", _counter("ikbench_playground_js_bytes", 1e-6))],
        family="gbench:build", match=r"^build/", row_label="step"),
}


def tables(export_path):
    with open_history(export_path) as store:
        return {name: t.render(store) for name, t in TABLES.items()}


def replace(doc_text, generated):
    """(new text, [names of tables that changed])."""
    out, pos, changed = [], 0, []
    for m in BEGIN.finditer(doc_text):
        name = m.group(1)
        end = doc_text.index(END, m.end())
        out.append(doc_text[pos:m.end()])
        new = generated.get(name)
        if new is None:
            raise SystemExit(f"{name}: no such history table (known: {', '.join(TABLES)})")
        if doc_text[m.end():end] != new:
            changed.append(name)
        out.append(new)
        pos = end
    out.append(doc_text[pos:])
    return "".join(out), changed


def documents(repo):
    """README.md and docs/*.md of a source tree that hold a generated table."""
    repo = Path(repo)
    docs = [repo / "README.md"] + sorted((repo / "docs").glob("*.md"))
    return [d for d in docs if d.is_file() and BEGIN.search(d.read_text(encoding="utf-8"))]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m ikbench.render.doctables", description=__doc__.split("\n\n")[0])
    ap.add_argument("export", help="results/history/history.json.gz")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", metavar="DOC", nargs="*", help="replace the tables between the markers of each DOC "
                   "(none: every document of --repo that holds one)")
    g.add_argument("--check", metavar="DOC", nargs="*", help="exit 1 when a table of a DOC is not what the history "
                   "gives (none: every document of --repo that holds one)")
    ap.add_argument("--repo", default=str(REPO),
                    help="source tree whose README.md and docs/*.md --write/--check take without DOC (default: "
                         "the one holding this module)")
    args = ap.parse_args(argv)
    generated = tables(args.export)
    if args.write is None and args.check is None:
        for name, text in generated.items():
            print(f"<!-- history-table:{name} -->\n{text}{END}\n")
        return 0
    docs = [Path(d) for d in (args.write if args.write is not None else args.check)] or documents(args.repo)
    if not docs:
        print(f"{args.repo}: no document holds a generated table", file=sys.stderr)
        return 1
    stale = []
    for doc in docs:
        text, changed = replace(doc.read_text(encoding="utf-8"), generated)
        if args.check is not None:
            if changed:
                stale.append(doc)
                print(f"{doc}: tables {', '.join(changed)} are not current: regenerate them with\n"
                      f"  PYTHONPATH=python /usr/bin/python3 -m ikbench.render.doctables {args.export} --write {doc}",
                      file=sys.stderr)
            continue
        atomic_write_text(doc, text, inputs=[args.export])
        print(f"{doc}: {len(changed)} tables rewritten")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
