"""A finished run as a history record: what `ikbench history add` stores (docs/history.md).

    record = from_run_dir("results/<run>")      # dict: run, machine, specs, families, cells, points, gbench, documents

The figures are `ikbench.analysis.figures.summarize`'s (docs/analysis.md), the same numbers as summary.csv;
the store adds only bootstrap intervals of the 90th and 99th percentile times, drawn as the
median's are (`stats.bootstrap_intervals`, same seed and resamples). Google Benchmark JSON files
and throughput.json of the run directory are kept verbatim and as series points. JSON files are
read as every reader of the results reads them (bounded size and nesting); secrets are removed
from what is kept (ikbench.io.redact: the command line, run.json, the side files), and the run's key
is the hash of its redacted run.json.

`record["warnings"]` lists what the caller should say on stderr (a git revision this checkout does
not know); it is not stored.
"""

import hashlib
import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np

from . import cells as gate_cells
from . import figures, outcomes, stats
from ..io.redact import redact_value
from ..io.results import ResultsError, load, read_json_file
from ..io.store import CELL_FIGURES
from ..io.store_validate import RECORD_FORMAT, run_key
from ..io.specs import spec_records
DEFAULT_THROUGHPUT_PROBLEMS = 2000  # ikbench throughput --problems' default
MAX_SIDE_FILE_BYTES = 64 << 20   # a Google Benchmark JSON or throughput.json of the run directory

# figure -> (ci_low column, ci_high column) of figures.summarize, for the figures that carry one
_INTERVALS = {
    "success_rate": ("success_ci_low", "success_ci_high"),
    "time_us_median": ("time_us_median_ci_low", "time_us_median_ci_high"),
    "time_us_mean": ("time_us_mean_ci_low", "time_us_mean_ci_high"),
    "time_us_p90": ("time_us_p90_ci_low", "time_us_p90_ci_high"),
    "time_us_p99": ("time_us_p99_ci_low", "time_us_p99_ci_high"),
    "iterations_median": ("iterations_median_ci_low", "iterations_median_ci_high"),
}
_NS_PER = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def _num(v):
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


def _int(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)


def machine_identity(meta):
    """The machine identity of run.json: CPU vendor, model name, family, model, stepping, ISA,
    hardware threads, compiler, flags and build type. Runs share a series only on one identity:
    times are comparable across commits only on one machine and one build configuration."""
    m = meta.get("machine") if isinstance(meta.get("machine"), dict) else {}
    b = meta.get("build") if isinstance(meta.get("build"), dict) else {}

    def text(d, k):
        v = d.get(k)
        return v if isinstance(v, str) and v else None

    def integer(d, k):
        v = d.get(k)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    isa = m.get("isa")
    isa = "+".join(sorted(x for x in isa if isinstance(x, str))) if isinstance(isa, list) else None
    ident = {"vendor": text(m, "vendor"), "cpu": text(m, "cpu"), "cpu_family": integer(m, "family"),
             "cpu_model": integer(m, "model"), "stepping": integer(m, "stepping"), "isa": isa,
             "hardware_threads": integer(m, "hardware_threads"), "compiler": text(b, "compiler"),
             "flags": text(b, "flags"), "build_type": text(b, "build_type"), "batch_kernel": text(m, "batch_kernel")}
    canon = json.dumps(ident, sort_keys=True)
    key = hashlib.sha256(canon.encode()).hexdigest()[:12]
    cpu = ident["cpu"] or "unknown CPU"
    model = "/".join(str(ident[k]) for k in ("cpu_family", "cpu_model", "stepping") if ident[k] is not None)
    parts = [cpu + (f" ({ident['vendor'] or ''} {model})".replace("( ", "(") if model else "")]
    if ident["hardware_threads"]:
        parts.append(f"{ident['hardware_threads']} threads")
    if isa:
        parts.append(isa)
    if ident["compiler"]:
        parts.append(f"{ident['compiler']} {ident['flags'] or ''}".strip())
    return dict(ident, key=key, label=", ".join(parts), identity=canon)


def repo_dir():
    """The git work tree of this source tree (python/ikbench/analysis -> the repository)."""
    return Path(__file__).resolve().parents[3]


def _is_hex(revision):
    return bool(revision) and len(revision) <= 64 and all(c in "0123456789abcdef" for c in revision)


def commit_info(revision, repo=None):
    """(commit date ISO 8601, subject) of a git revision, or (None, None) when git or the commit
    is not at hand."""
    date, subject, _ = commit_lookup(revision, repo)
    return date, subject


def commit_lookup(revision, repo=None):
    """(commit date, subject, known) of a git revision: known is True when the checkout `repo`
    (default: this source tree) has the commit, False when it is a git checkout without it (or the
    revision is not a commit id), None when no git checkout is at hand to ask."""
    repo = str(repo or repo_dir())
    try:
        inside = subprocess.run(["git", "-C", repo, "rev-parse", "--git-dir"], capture_output=True, text=True,
                                timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return None, None, None
    if not inside:
        return None, None, None
    if not _is_hex(revision):
        return None, None, False
    try:
        p = subprocess.run(["git", "-C", repo, "log", "-1", "--format=%cI%x00%s", f"{revision}^{{commit}}", "--"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None, None, None
    if p.returncode != 0 or "\0" not in p.stdout:
        return None, None, False
    date, subject = p.stdout.rstrip("\n").split("\0", 1)
    return utc_text(date), subject or None, True


def revision_warnings(where, revision, known, repo=None):
    """The warning for a run whose git revision the checkout does not know ([] when it knows it, or
    when no checkout is at hand)."""
    if known is not False:
        return []
    shown = repr(revision)[:80] if revision is not None else "(none)"
    return [f"{where}: git_revision {shown} is not a commit of the git checkout {repo or repo_dir()}: stored without "
            "a commit date or subject (its commit order falls back to the run's start time)"]


def utc_text(date):
    """An ISO 8601 date with offset as UTC text ('2026-01-02T03:04:05Z'), which sorts as text."""
    from datetime import datetime, timezone

    if not date:
        return None
    try:
        d = datetime.fromisoformat(date.replace("Z", "+00:00"))
    except ValueError:
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=timezone.utc)
    return d.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _quantile_statistic(p):
    def f(x, axis=-1):
        return np.quantile(x, p, axis=axis)
    return f


def cell_rows(run):
    """(cells, points) of a loaded run: per family x solver its counts, and the points of
    CELL_FIGURES with their intervals (n/a cells have no points)."""
    summary = figures.summarize(run)
    times, _ = figures.cell_samples(run.solves)
    for p, name in ((0.9, "time_us_p90"), (0.99, "time_us_p99")):
        summary[f"{name}_ci_low"], summary[f"{name}_ci_high"] = stats.bootstrap_intervals(
            times, _quantile_statistic(p))
    counts = gate_cells.outcome_counts(run.solves, outcomes.family_info(run))
    cells, points = [], []
    for d in summary.to_dict("records"):
        avail = bool(d["available"])
        outcome, kind = counts.get((d["family"], d["solver"]), ({}, "reachable"))
        cells.append({"family": d["family"], "solver": d["solver"], "solves": _int(d["solves"]),
                      "supported": _int(d["supported"]), "converged": _int(d["converged"]),
                      "successes": _int(d["successes"]), "limit_violations": _int(d["limit_violations"]),
                      "available": avail, "rank": _num(d.get("rank")), "rank_of": _int(d.get("rank_of")),
                      "tied_leader": bool(d.get("tied_leader")), "statuses": d.get("statuses") or {},
                      "outcomes": outcome, "targets": kind})
        if not avail:
            continue
        for fig in CELL_FIGURES:
            value = _num(d.get(fig))
            lo_c, hi_c = _INTERVALS.get(fig, (None, None))
            pt = {"source": "cell", "family": d["family"], "solver": d["solver"], "figure": fig, "value": value,
                  "ci_low": _num(d.get(lo_c)) if lo_c else None, "ci_high": _num(d.get(hi_c)) if hi_c else None,
                  "n": _int(d["solves"] if fig == "success_rate" else d["supported"]),
                  "successes": _int(d["successes"]) if fig == "success_rate" else None}
            points.append(pt)
    return cells, points


def _is_gbench(doc):
    return isinstance(doc, dict) and isinstance(doc.get("context"), dict) and isinstance(doc.get("benchmarks"), list)


# Fields of a Google Benchmark entry that are not user counters.
_GBENCH_NOT_COUNTERS = {"family_index", "per_family_instance_index", "error_occurred"}


def gbench_rows(file, doc):
    """(rows, points) of a Google Benchmark JSON document: one row per entry, and per benchmark
    (run_name) the median over its repetitions of real and CPU time in ns and of each user counter
    (figure `counter:NAME`), the repetitions' range as its interval. A file written with
    --benchmark_report_aggregates_only holds no repetition: its `median` aggregates are taken
    (without an interval)."""
    rows, per, medians = [], {}, {}
    known = {"name", "run_name", "run_type", "aggregate_name", "repetitions", "repetition_index", "threads",
             "iterations", "real_time", "cpu_time", "time_unit"}
    for seq, b in enumerate(doc["benchmarks"]):
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            raise ResultsError(f"{file}: benchmarks[{seq}]: expected an object with a 'name'")
        row = {k: b.get(k) for k in known}
        row.update(file=file, seq=seq, extra={k: v for k, v in b.items() if k not in known})
        for k in ("iterations", "real_time", "cpu_time"):
            v = row[k]
            row[k] = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        for k in ("repetitions", "repetition_index", "threads"):
            row[k] = row[k] if isinstance(row[k], int) and not isinstance(row[k], bool) else None
        rows.append(row)
        run_type = b.get("run_type", "iteration")
        median = run_type == "aggregate" and b.get("aggregate_name") == "median" and \
            b.get("aggregate_unit", "time") == "time"
        if (run_type == "iteration" or median) and not b.get("error_occurred"):
            scale = _NS_PER.get(b.get("time_unit", "ns"))
            if scale is None or row["real_time"] is None:
                continue
            counters = {f"counter:{k}": float(v) for k, v in row["extra"].items()
                        if k not in _GBENCH_NOT_COUNTERS | {"aggregate_unit"} and isinstance(v, (int, float))
                        and not isinstance(v, bool)}
            (medians if median else per).setdefault(b.get("run_name") or b["name"], []).append(
                dict(counters, real_time_ns=row["real_time"] * scale, cpu_time_ns=(row["cpu_time"] or math.nan) * scale))
    for name, agg in medians.items():
        per.setdefault(name, agg[:1])
    points = []
    family = "gbench:" + Path(file).stem
    for name, reps in per.items():
        figs = ["real_time_ns", "cpu_time_ns"] + sorted({k for r in reps for k in r if k.startswith("counter:")})
        for fig in figs:
            v = np.array([r.get(fig, math.nan) for r in reps], dtype=float)
            v = v[np.isfinite(v)]
            if len(v) == 0:
                continue
            points.append({"source": "gbench", "family": family, "solver": name, "figure": fig,
                           "value": float(np.median(v)), "ci_low": float(v.min()) if len(v) > 1 else None,
                           "ci_high": float(v.max()) if len(v) > 1 else None, "n": len(v), "successes": None})
    return rows, points


def throughput_points(file, doc):
    """Points of a throughput.json: per measured point (path, threads) solves/s, converged/s and
    the cores the process kept busy (below the thread count: it waited for a core)."""
    pts = doc.get("points") if isinstance(doc, dict) else None
    if not isinstance(pts, list):
        raise ResultsError(f"{file}: expected an object with a 'points' list (ikbench throughput --out)")
    # The spec that ran: a large --batch run of a spec without a library runs with the batch's
    # default library (effective_solver), another series than the spec as given.
    ran = doc.get("effective_solver", doc.get("solver"))
    solver = ran if isinstance(ran, str) else "?"
    problems = doc.get("distinct_problems")
    # Another problem set than the default is another series.
    suffix = f"/problems:{problems}" if isinstance(problems, int) and problems != DEFAULT_THROUGHPUT_PROBLEMS else ""
    out = []
    for i, p in enumerate(pts):
        if not isinstance(p, dict):
            raise ResultsError(f"{file}: points[{i}]: expected an object")
        label = f"{solver}/{p.get('path', 'scalar')}/threads:{p.get('threads')}{suffix}"
        for fig in ("solves_per_s", "converged_per_s", "cores_busy"):
            v = p.get(fig)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                out.append({"source": "throughput", "family": "throughput", "solver": label, "figure": fig,
                            "value": float(v), "ci_low": None, "ci_high": None,
                            "n": p.get("solves") if isinstance(p.get("solves"), int) else None, "successes": None})
    return out


def is_throughput_file(name):
    """throughput.json, or throughput-NAME.json where a run keeps several (one per spec)."""
    return name == "throughput.json" or (name.startswith("throughput-") and name.endswith(".json"))


def side_files(run_dir):
    """Google Benchmark JSON files and throughput[-NAME].json at the top of a run directory, sorted."""
    out = []
    for p in sorted(Path(run_dir).glob("*.json")):
        if p.name in ("run.json", "models.json") or not p.is_file() or p.is_symlink():
            continue
        out.append(p)
    return out


def _read_side(p):
    """(text, document) of a side file: read as every reader reads JSON (a regular file of at most
    MAX_SIDE_FILE_BYTES, nested at most 64 deep, strict JSON), except that Google Benchmark's NaN
    for a statistic with no value (a counter's coefficient of variation when its mean is 0) reads
    as no value."""
    doc, data = read_json_file(p, "a Google Benchmark JSON or throughput file", MAX_SIDE_FILE_BYTES,
                               undefined_numbers=True)
    return data.decode("utf-8"), doc


def _side_records(run_dir, record):
    """Adds the Google Benchmark and throughput files of a directory to a record."""
    for p in side_files(run_dir):
        text, doc = _read_side(p)
        if _is_gbench(doc):
            rows, pts = gbench_rows(p.name, doc)
            record["gbench"] += rows
            record["points"] += pts
            record["documents"].append({"file": p.name, "kind": "gbench", "body": text})
        elif is_throughput_file(p.name):
            record["points"] += throughput_points(p.name, doc)
            record["documents"].append({"file": p.name, "kind": "throughput", "body": text})
    return record


def _throughput_load(docs):
    """One load object for a directory's throughput files, as run.json's `load` reads: the first
    point's start, the last point's end, the largest sample, noisy when any point was."""
    loads = [pt["load"] for d in docs for pt in d.get("points", []) if isinstance(pt, dict)
             and isinstance(pt.get("load"), dict)]
    if not loads:
        return None
    nums = [v for ld in loads for k in ("start", "end") for v in [ld.get(k)] if _num(v) is not None]
    out = {"start": _num(loads[0].get("start")), "end": _num(loads[-1].get("end")),
           "noisy": any(ld.get("noisy") is True for ld in loads)}
    if nums:
        out["samples"] = {"count": len(nums), "min": min(nums), "max": max(nums)}
    cores = [ld.get("cores") for ld in loads if isinstance(ld.get("cores"), int)]
    if cores:
        out["cores"] = max(cores)
    return out


def from_side_files(run_dir, *, repo=None):
    """The record of a directory that holds `ikbench throughput --out` files (throughput.json or
    throughput-NAME.json, and Google Benchmark JSON of the same build beside them) but no run.json:
    its identity (git revision, machine, build, times, load) is the throughput files', its suite
    `throughput`, and it has no cells. Files of different revisions or machines are refused."""
    run_dir = Path(run_dir)
    docs = []
    for p in side_files(run_dir):
        if is_throughput_file(p.name):
            _, doc = _read_side(p)
            if not isinstance(doc, dict) or not isinstance(doc.get("points"), list):
                raise ResultsError(f"{p}: expected an object with a 'points' list (ikbench throughput --out)")
            docs.append((p, doc))
    for key in ("git_revision", "machine", "build"):
        values = {json.dumps(d.get(key), sort_keys=True) for _, d in docs}
        if len(values) > 1:
            raise ResultsError(f"{run_dir}: its throughput files differ in '{key}' ({', '.join(p.name for p, _ in docs)}): "
                               "one directory is one build on one machine")
    first = docs[0][1]
    rev = first.get("git_revision") if isinstance(first.get("git_revision"), str) else None
    dirty = bool(rev and rev.endswith("-dirty"))
    commit = rev[:-len("-dirty")] if dirty else rev
    date, subject, known = commit_lookup(commit, repo)
    meta = {"machine": first.get("machine"), "build": first.get("build")}
    canon = json.dumps(redact_value([d for _, d in docs]), sort_keys=True)
    load = _throughput_load([d for _, d in docs])
    starts = sorted(d["start_time"] for _, d in docs if isinstance(d.get("start_time"), str))
    ends = sorted(d["end_time"] for _, d in docs if isinstance(d.get("end_time"), str))
    threads = [pt.get("threads") for _, d in docs for pt in d["points"] if isinstance(pt, dict)
               and isinstance(pt.get("threads"), int)]
    record = {
        "format": RECORD_FORMAT,
        "machine": machine_identity(meta),
        "run": {"key": hashlib.sha256(canon.encode()).hexdigest()[:24], "source": str(run_dir.resolve()),
                "git_revision": rev, "git_commit": commit, "dirty": dirty, "commit_date": date, "subject": subject,
                "suite": "throughput", "suite_seed": str(first["seed"]) if isinstance(first.get("seed"), int) else None,
                "threads": max(threads) if threads else None, "format_version": None,
                "start_time": starts[0] if starts else None, "end_time": ends[-1] if ends else None,
                "noisy": load["noisy"] if load else None, "load": load, "throughput": None,
                "build": meta["build"] if isinstance(meta["build"], dict) else None, "command_line": None,
                "run_json": None},
        "specs": [], "families": [], "cells": [], "points": [], "gbench": [], "documents": [],
        "warnings": revision_warnings(run_dir, rev, known, repo),
    }
    return _side_records(run_dir, record)


def from_run_dir(run_dir, *, repo=None):
    """The record of a finished run directory. An incomplete run is refused (ResultsError), as
    every reader of the results does."""
    run_dir = Path(run_dir)
    meta = None
    rj = run_dir / "run.json"
    if os.path.lexists(rj):
        meta, _ = read_json_file(rj, "run.json")
        if not isinstance(meta, dict):
            raise ResultsError(f"{rj}: expected a JSON object (the run's identity, written by ikbench run)")
    if not isinstance(meta, dict):
        if run_dir.is_dir() and any(is_throughput_file(p.name) for p in side_files(run_dir)):
            return from_side_files(run_dir, repo=repo)
        raise ResultsError(f"{run_dir}: not a results directory of ikbench run (no readable run.json) nor a "
                           "directory of ikbench throughput --out (throughput.json)")
    if meta.get("complete") is not True:
        raise ResultsError(f"{run_dir}: the run is incomplete (run.json \"complete\": false): complete it with the "
                           "same ikbench run command and --resume --out DIR, then add it")
    run = load(run_dir)
    meta = redact_value(meta)
    rev = meta.get("git_revision") if isinstance(meta.get("git_revision"), str) else None
    dirty = bool(rev and rev.endswith("-dirty"))
    commit = rev[:-len("-dirty")] if dirty else rev
    date, subject, known = commit_lookup(commit, repo)
    canon = json.dumps(meta, sort_keys=True)
    record = {
        "format": RECORD_FORMAT,
        "machine": machine_identity(meta),
        "run": {"key": run_key(canon), "source": str(run_dir.resolve()),
                "git_revision": rev, "git_commit": commit, "dirty": dirty, "commit_date": date, "subject": subject,
                "suite": run.suite, "suite_seed": None if run.seed is None else str(run.seed),
                "threads": run.threads, "format_version": run.format_version,
                "start_time": meta.get("start_time"), "end_time": meta.get("end_time"),
                "noisy": figures.run_noisy(meta), "load": figures.run_load(meta),
                "throughput": meta.get("throughput") if isinstance(meta.get("throughput"), dict) else None,
                "build": meta.get("build") if isinstance(meta.get("build"), dict) else None,
                "command_line": meta.get("command_line") if isinstance(meta.get("command_line"), str) else None,
                "run_json": canon},
        "specs": [{"spec": r.spec, "name": r.backend, "parameters": dict(r.parameters)}
                  for r in spec_records(meta).values()],
        "families": [{"family": f.get("name"), "dof": f.get("dof"), "effectors": f.get("effectors"),
                      "goal": f.get("goal"), "problems": f.get("problems"), "robot": f.get("robot"),
                      "description": f.get("description")}
                     for f in run.families if isinstance(f, dict) and isinstance(f.get("name"), str)],
        "gbench": [], "documents": [],
        "warnings": revision_warnings(run_dir, rev, known, repo),
    }
    record["cells"], record["points"] = cell_rows(run)
    return _side_records(run_dir, record)
