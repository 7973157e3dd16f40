"""Exports and imports of a history store (docs/history.md "Export"):

    export_json(store)  -> {"format": "ikbench-history/1", "schema_version", "records": [...], "skipped": [...]}
    import_json(store, doc)                    # adds the records (a store rebuilt from an export)
    export_csv(store)   -> one row per point, with its run, commit and machine

A JSON export holds every record as `ikbench history add` built it, so that importing it into an
empty store (SQLite or PostgreSQL) gives the same store; results/history/ keeps the project's own
history this way (a text file that reviews as a diff).
"""

import csv
import io
import json
import math
import re

from .record import RECORD_FORMAT
from .store import SCHEMA_VERSION, HistoryError
from . import queries

EXPORT_FORMAT = "ikbench-history/1"

_RUN_COLS = ["key", "source", "git_revision", "git_commit", "dirty", "commit_date", "subject", "suite", "suite_seed",
             "threads", "format_version", "start_time", "end_time", "noisy", "load", "throughput", "build",
             "command_line", "run_json"]
_MACHINE_COLS = ["key", "label", "vendor", "cpu", "cpu_family", "cpu_model", "stepping", "isa", "hardware_threads",
                 "compiler", "flags", "build_type", "batch_kernel", "identity"]
_JSON_COLS = {"load", "throughput", "build", "statuses", "outcomes", "extra", "parameters"}


def _json_value(k, v):
    if k in _JSON_COLS and isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _rows(store, sql, rid, drop=("run_id",)):
    return [{k: _json_value(k, v) for k, v in r.items() if k not in drop} for r in store.query(sql, (rid,))]


def record_of(store, rid):
    """The record of run `rid`, as record.from_run_dir built it."""
    r = store.query("SELECT * FROM runs WHERE id = ?", (rid,))[0]
    m = store.query("SELECT * FROM machines WHERE id = ?", (r["machine_id"],))[0]
    run = {k: _json_value(k, r[k]) for k in _RUN_COLS}
    run["dirty"] = bool(run["dirty"]) if run["dirty"] is not None else None
    run["noisy"] = bool(run["noisy"]) if run["noisy"] is not None else None
    return {
        "format": RECORD_FORMAT,
        "machine": {k: m[k] for k in _MACHINE_COLS},
        "run": run,
        "specs": _rows(store, "SELECT * FROM specs WHERE run_id = ? ORDER BY spec", rid),
        "families": _rows(store, "SELECT * FROM families WHERE run_id = ? ORDER BY family", rid),
        "cells": _rows(store, "SELECT * FROM cells WHERE run_id = ? ORDER BY family, solver", rid),
        "points": _rows(store, "SELECT * FROM points WHERE run_id = ? ORDER BY source, family, solver, figure", rid),
        "gbench": _rows(store, "SELECT * FROM gbench WHERE run_id = ? ORDER BY file, seq", rid),
        "documents": _rows(store, "SELECT * FROM documents WHERE run_id = ? ORDER BY file", rid),
    }


def export_json(store, run_ids=None, slim=False):
    """Every run's record; `slim` leaves out the side files and their raw Google Benchmark entries
    (kept as files beside the export, as results/history/ does), keeping their series points."""
    ids = list(queries.runs(store)["run_id"]) if run_ids is None else list(run_ids)
    skipped = store.query("SELECT s.git_commit, s.commit_date, s.subject, s.reason, s.detail, s.recorded, "
                          "m.key AS machine FROM skipped s LEFT JOIN machines m ON m.id = s.machine_id ORDER BY s.id")
    records = [record_of(store, int(i)) for i in ids]
    if slim:
        for r in records:
            r["gbench"], r["documents"] = [], []
    return {"format": EXPORT_FORMAT, "schema_version": SCHEMA_VERSION, "records": records, "skipped": skipped}


def read_export(path):
    """The document of a json export at `path`, plain or gzip-compressed (FILE.json.gz, as
    results/history/ keeps it; decompression bounded as the run readers bound it)."""
    from pathlib import Path

    from ..results import ResultsError, read_run_file
    p = Path(path)
    if not p.is_file():
        raise ResultsError(f"{path}: not a regular file (a history export, ikbench history export --format json)")
    _, data = read_run_file(p, "a history export")
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ResultsError(f"{path}: not JSON: {e}") from None


def export_bytes(text, path):
    """The bytes of an export written to `path`: gzip-compressed (reproducible: no name or time in
    the header) when the name ends in .gz, else the text."""
    import gzip
    data = text.encode("utf-8")
    return gzip.compress(data, 9, mtime=0) if str(path).endswith(".gz") else data


def import_json(store, doc, source="import"):
    """Adds the records of an export; returns (added, already present)."""
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT or not isinstance(doc.get("records"), list):
        raise HistoryError(f"{source}: not a history export (expected an object with \"format\": \"{EXPORT_FORMAT}\" "
                           "and a \"records\" list, as ikbench history export --format json writes)")
    added = present = 0
    machines = {}
    for i, rec in enumerate(doc["records"]):
        if not isinstance(rec, dict) or rec.get("format") != RECORD_FORMAT or not isinstance(rec.get("run"), dict) \
                or not isinstance(rec.get("machine"), dict) or not rec["run"].get("key"):
            raise HistoryError(f"{source}: records[{i}]: not a run record ({RECORD_FORMAT})")
        machines[rec["machine"]["key"]] = rec["machine"]
        _, new = store.add_record(rec)
        added += new
        present += not new
    have = {(s["git_commit"], s["reason"], s["recorded"]) for s in
            store.query("SELECT git_commit, reason, recorded FROM skipped")}
    for s in doc.get("skipped") or []:
        if isinstance(s, dict) and s.get("git_commit") and (s["git_commit"], s.get("reason"), s.get("recorded")) \
                not in have:
            store.add_skipped(s["git_commit"], s.get("reason") or "skipped", commit_date=s.get("commit_date"),
                              subject=s.get("subject"), machine=machines.get(s.get("machine")), detail=s.get("detail"),
                              recorded=s.get("recorded"))
    return added, present


def write_side_files(store, directory):
    """Every run's side documents (Google Benchmark JSON, throughput files) as
    DIR/<commit, 12 digits[-dirty]>/<suite>/<file>.gz, or <suite>-<run key, 8 digits>/ where several
    runs of one commit and suite hold side files (byte-reproducible: no name or time in the gzip
    header); the paths written."""
    import gzip
    from pathlib import Path

    from ..safe_io import atomic_write_bytes, output_directory

    runs = []
    for r in queries.runs(store).itertuples():
        docs = store.query("SELECT file, body FROM documents WHERE run_id = ? ORDER BY file", (int(r.run_id),))
        if docs:
            commit = (r.git_commit or "unknown")[:12] + ("-dirty" if r.dirty else "")
            runs.append((commit, re.sub(r"[^A-Za-z0-9._-]", "_", str(r.suite or "run")), r.key, docs))
    shared = {}
    for commit, suite, _, _ in runs:
        shared[(commit, suite)] = shared.get((commit, suite), 0) + 1
    written = []
    for commit, suite, key, docs in runs:
        d = Path(directory) / commit / (suite if shared[(commit, suite)] == 1 else f"{suite}-{key[:8]}")
        output_directory(d)
        for doc in docs:
            name = Path(doc["file"]).name + ".gz"
            written.append(atomic_write_bytes(d / name, gzip.compress(doc["body"].encode("utf-8"), 9, mtime=0)))
    return written


CSV_COLUMNS = ["run_id", "git_commit", "dirty", "commit_date", "start_time", "machine", "machine_label", "suite",
               "threads", "noisy", "source", "family", "solver", "figure", "value", "ci_low", "ci_high", "n",
               "successes"]


def export_csv(store, **filters):
    pts = queries.points(store, **filters)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in pts[CSV_COLUMNS].itertuples(index=False):
        w.writerow(["" if v is None or (isinstance(v, float) and math.isnan(v)) else
                    (repr(v) if isinstance(v, float) else v) for v in r])
    return buf.getvalue()
