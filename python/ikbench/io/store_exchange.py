"""Exports and imports of a history store (docs/history.md "Export"):

    export_json(store)  -> {"format": "ikbench-history/1", "schema_version", "records": [...], "skipped": [...]}
    import_json(store, doc)                    # adds the records (a store rebuilt from an export)
    export_csv(store)   -> one row per point, with its run, commit and machine

A JSON export holds every record as `ikbench history add` built it, so that importing it into an
empty store (SQLite or PostgreSQL) gives the same store; results/history/ keeps the project's own
history this way (a text file that reviews as a diff). Records pass the store's check on the way
in (ikbench.io.store_validate: an import adds all of an export's records or refuses it naming the
record and field) and on the way out (secrets removed from records stored before that check).
Every file is written by the output rule (ikbench.io.safe_io), never over the store it reads, and a
path built from stored text (a commit, a suite, a file name) is escaped to one plain path component.
"""

import csv
import hashlib
import io
import json
import math
import re

from .results import read_run_file
from .safe_io import atomic_write_bytes, output_directory
from . import store_queries as queries
from .store import SCHEMA_VERSION, HistoryError
from .store_validate import RECORD_FORMAT, checked_record, checked_rows, checked_skipped, parse_json

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
    """The record of run `rid`, as record.from_run_dir built it (checked again, which removes a
    secret that a record stored before the check still holds)."""
    r = store.query("SELECT * FROM runs WHERE id = ?", (rid,))[0]
    m = store.query("SELECT * FROM machines WHERE id = ?", (r["machine_id"],))[0]
    run = {k: _json_value(k, r[k]) for k in _RUN_COLS}
    run["dirty"] = bool(run["dirty"]) if run["dirty"] is not None else None
    run["noisy"] = bool(run["noisy"]) if run["noisy"] is not None else None
    rec = {
        "format": RECORD_FORMAT,
        "machine": {k: m[k] for k in _MACHINE_COLS},
        "run": run,
        "specs": _rows(store, "SELECT * FROM specs WHERE run_id = ? ORDER BY spec {C}", rid),
        "families": _rows(store, "SELECT * FROM families WHERE run_id = ? ORDER BY family {C}", rid),
        "cells": _rows(store, "SELECT * FROM cells WHERE run_id = ? ORDER BY family {C}, solver {C}", rid),
        "points": _rows(store, "SELECT * FROM points WHERE run_id = ? ORDER BY source {C}, family {C}, solver {C}, "
                        "figure {C}", rid),
        "gbench": _rows(store, "SELECT * FROM gbench WHERE run_id = ? ORDER BY file {C}, seq", rid),
        "documents": _rows(store, "SELECT * FROM documents WHERE run_id = ? ORDER BY file {C}", rid),
    }
    out = checked_record(rec, f"{store.name}: run {rid}")
    for k in ("dirty", "noisy"):   # as stored: a flag, not 0/1
        out["run"][k] = run[k]
    for c in out["cells"]:
        c["available"] = None if c["available"] is None else int(c["available"])
        c["tied_leader"] = None if c["tied_leader"] is None else int(c["tied_leader"])
    return out


def export_json(store, run_ids=None, slim=False):
    """Every run's record; `slim` leaves out the side files and their raw Google Benchmark entries
    (kept as files beside the export, as results/history/ does), keeping their series points."""
    ids = list(queries.runs(store)["run_id"]) if run_ids is None else list(run_ids)
    skipped = [checked_skipped(s, f"{store.name}: skipped") for s in store.query(
        "SELECT s.git_commit, s.commit_date, s.subject, s.reason, s.detail, s.recorded, m.key AS machine "
        "FROM skipped s LEFT JOIN machines m ON m.id = s.machine_id ORDER BY s.id")]
    records = [record_of(store, int(i)) for i in ids]
    if slim:
        for r in records:
            r["gbench"], r["documents"] = [], []
    return {"format": EXPORT_FORMAT, "schema_version": SCHEMA_VERSION, "records": records, "skipped": skipped}


MAX_EXPORT_BYTES = 4 << 30   # an export's JSON text


def read_export(path):
    """The document of a json export at `path`, plain or gzip-compressed (FILE.json.gz, as
    results/history/ keeps it), read as every reader of the results reads JSON: a regular file,
    decompression bounded, nesting at most 64 deep, strict JSON (ResultsError naming the file)."""
    _, data = read_run_file(path, "a history export (ikbench history export --format json)", MAX_EXPORT_BYTES)
    return parse_json(data, path)


def export_bytes(text, path):
    """The bytes of an export written to `path`: gzip-compressed (reproducible: no name or time in
    the header) when the name ends in .gz, else the text."""
    import gzip
    data = text.encode("utf-8")
    return gzip.compress(data, 9, mtime=0) if str(path).endswith(".gz") else data


def import_json(store, doc, source="import"):
    """Adds the records of an export; returns (added, already present). Every record and entry is
    checked before the first is added: an export with a bad one adds nothing."""
    store.refuse_writes("import into it")
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT or not isinstance(doc.get("records"), list):
        raise HistoryError(f"{source}: not a history export (expected an object with \"format\": \"{EXPORT_FORMAT}\" "
                           "and a \"records\" list, as ikbench history export --format json writes)")
    skipped_in = doc.get("skipped")
    if skipped_in is not None and not isinstance(skipped_in, list):
        raise HistoryError(f"{source}: skipped: expected a list (commits without a run) or null")
    records = []
    for i, rec in enumerate(doc["records"]):
        if isinstance(rec, dict) and rec.get("format") != RECORD_FORMAT:
            raise HistoryError(f"{source}: records[{i}]: format: expected {RECORD_FORMAT!r} (a run record)")
        records.append(checked_record(rec, f"{source}: records[{i}]"))
    skipped = [checked_skipped(s, f"{source}: skipped[{i}]") for i, s in enumerate(skipped_in or [])]
    machines = {r["machine"]["key"]: r["machine"] for r in records}
    for i, s in enumerate(skipped):
        if s["machine"] is not None and s["machine"] not in machines:
            raise HistoryError(f"{source}: skipped[{i}]: machine: expected the key of a machine of the export's "
                               f"records, got {s['machine']!r}")
    added = present = 0
    for i, rec in enumerate(records):
        _, new = store.add_record(rec, where=f"{source}: records[{i}]")
        added += new
        present += not new
    have = {(s["git_commit"], s["reason"], s["recorded"]) for s in
            store.query("SELECT git_commit, reason, recorded FROM skipped ORDER BY id")}
    for s in skipped:
        if (s["git_commit"], s["reason"], s["recorded"]) not in have:
            store.add_skipped(s["git_commit"], s["reason"], commit_date=s["commit_date"], subject=s["subject"],
                              machine=machines.get(s["machine"]), detail=s["detail"], recorded=s["recorded"])
    return added, present


_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
_HEX = re.compile(r"[0-9a-f]{4,64}")


def safe_name(text, fallback="x"):
    """`text` as one plain path component: letters, digits and '._+-', not starting with '.' (so
    never '.', '..' or hidden), at most 100 characters; anything else is escaped, and an escaped
    name carries a hash of the text, so that two texts never share a name."""
    text = str(text or "")
    name = _UNSAFE.sub("_", text).lstrip(".")[:100]
    if name == text and name:
        return name
    return f"{name or fallback}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def commit_dir(git_commit, dirty):
    """The directory name of a commit's side files: its first 12 hexadecimal digits (-dirty for a
    modified work tree); a revision that is not a commit id is escaped (safe_name)."""
    if git_commit is None:
        base = "unknown"
    elif _HEX.fullmatch(git_commit):
        base = git_commit[:12]
    else:
        base = "rev-" + safe_name(git_commit)
    return base + ("-dirty" if dirty else "")


def write_side_files(store, directory, inputs=()):
    """Every run's side documents (Google Benchmark JSON, throughput files) as
    DIR/<commit, 12 digits[-dirty]>/<suite>/<file>.gz, or <suite>-<run key, 8 digits>/ where several
    runs of one commit and suite hold side files (byte-reproducible: no name or time in the gzip
    header), their secrets removed; every component of those paths is escaped (safe_name,
    commit_dir), so nothing is written outside DIR. `inputs`: files no output may replace (the
    store's, besides store.inputs). Returns the paths written."""
    import gzip
    from pathlib import Path

    inputs = list(inputs) + list(store.inputs)
    runs = []
    for r in queries.runs(store).itertuples():
        rows = store.query("SELECT file, kind, body FROM documents WHERE run_id = ? ORDER BY file {C}",
                           (int(r.run_id),))
        if rows:
            docs = checked_rows("documents", rows, f"{store.name}: run {int(r.run_id)}")
            runs.append((commit_dir(r.git_commit, bool(r.dirty)), safe_name(r.suite, "run"), safe_name(r.key[:8]),
                         docs))
    shared = {}
    for commit, suite, _, _ in runs:
        shared[(commit, suite)] = shared.get((commit, suite), 0) + 1
    written = []
    output_directory(directory, inputs=inputs)
    for commit, suite, key, docs in runs:
        d = Path(directory) / commit / (suite if shared[(commit, suite)] == 1 else f"{suite}-{key}")
        output_directory(d, inputs=inputs)
        for doc in docs:
            name = safe_name(doc["file"]) + ".gz"
            written.append(atomic_write_bytes(d / name, gzip.compress(doc["body"].encode("utf-8"), 9, mtime=0),
                                              inputs=inputs))
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
