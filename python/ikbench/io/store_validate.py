"""The one check of a run record on its way into a store, for `history add`, `history import` and
`history backfill` alike (docs/history.md "What a run records"):

    record = checked_record(record, where="results/run-1")     # a clean copy, or RecordError naming the field
    skipped = checked_skipped(entry, where="h.json: skipped[3]")

Every column gets a value of its type and range (an integer a 64-bit column holds, and within the
range that figure can take: threads from 1 to 2^31 - 1, counts from 0), text that UTF-8 and both
backends hold (no lone surrogate, no NUL character) and not longer than its limit, finite numbers
(nan is stored as NULL), JSON documents nested at most 64 deep; keys are hexadecimal, a side
file's name is a plain file name, and a table's rows are unique by its primary key. A record that
breaks one is refused whole, with the field and what was expected: nothing of it is stored, so a
stored record is always one that every reader of the store can read.

Secrets are removed on the way (ikbench.io.redact): the command line, every string of run.json and
of the side files. A run whose run.json held one gets its key from the redacted run.json, so that
no key is a hash of a secret.
"""

import hashlib
import json
import math
import re

from .redact import redact_secrets, redact_value
from .results import MAX_JSON_NESTING, ResultsError, _check_json_nesting, _parse_json_text

RECORD_FORMAT = "ikbench-history-record/1"

INT64 = (-(1 << 63), (1 << 63) - 1)
COUNT = (0, 1 << 53)             # counts: exact as a double
SMALL = (0, (1 << 31) - 1)       # C++ ints: dof, problems, indices
THREADS = (1, (1 << 31) - 1)
SHORT_TEXT = 4096                # names, specs, labels, dates
LONG_TEXT = 1 << 20              # a description, a command line, a log's end
DOCUMENT = 64 << 20              # run.json, a side file's text

_HEX_KEY = re.compile(r"[0-9a-f]{8,64}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?")
SOURCES = ("cell", "gbench", "throughput")
DOCUMENT_KINDS = ("gbench", "throughput")


class RecordError(ResultsError):
    """A record (or an entry of an export) that a store refuses; the message names the field."""


class _Bad(Exception):
    def __init__(self, field, expected, value):
        super().__init__(field)
        self.field, self.expected, self.value = field, expected, value


def _show(v):
    text = redact_secrets(repr(v))
    return text if len(text) <= 60 else text[:57] + "..."


def _text_ok(s, field, limit):
    if len(s) > limit:
        raise _Bad(field, f"text of at most {limit} characters", f"{len(s)} characters")
    if "\x00" in s:
        raise _Bad(field, "text without a NUL character", s)
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise _Bad(field, "text of Unicode characters (a lone surrogate is not one)", s) from None


def text(v, field, *, required=False, limit=SHORT_TEXT):
    if v is None and not required:
        return None
    if not isinstance(v, str) or (required and not v):
        raise _Bad(field, "a non-empty string" if required else "a string or null", v)
    _text_ok(v, field, limit)
    return v


def integer(v, field, rng=INT64, *, required=False):
    if v is None and not required:
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int) or isinstance(v, bool) or not rng[0] <= v <= rng[1]:
        raise _Bad(field, f"an integer from {rng[0]} to {rng[1]}" + ("" if required else " or null"), v)
    return v


def real(v, field):
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Bad(field, "a number or null", v)
    f = float(v)
    if math.isnan(f):
        return None
    if not math.isfinite(f):
        raise _Bad(field, "a finite number or null", v)
    return f


def boolean(v, field):
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    raise _Bad(field, "true, false (or 1, 0) or null", v)


def hex_key(v, field):
    if not isinstance(v, str) or not _HEX_KEY.fullmatch(v):
        raise _Bad(field, "a key of 8 to 64 hexadecimal digits", v)
    return v


def date(v, field):
    text(v, field)
    if v is not None and not _DATE.fullmatch(v):
        raise _Bad(field, "an ISO 8601 date (2026-01-02T03:04:05Z) or null", v)
    return v


def _check_json(v, field, depth=0):
    if isinstance(v, (dict, list)):
        if depth >= MAX_JSON_NESTING:
            raise _Bad(field, f"JSON nested at most {MAX_JSON_NESTING} deep", "deeper")
        if isinstance(v, dict):
            for k, x in v.items():
                if not isinstance(k, str):
                    raise _Bad(field, "JSON object keys that are strings", k)
                _text_ok(k, f"{field}.{k}", LONG_TEXT)
                _check_json(x, f"{field}.{k}", depth + 1)
        else:
            for i, x in enumerate(v):
                _check_json(x, f"{field}[{i}]", depth + 1)
    elif isinstance(v, str):
        _text_ok(v, field, DOCUMENT)
    elif isinstance(v, float):
        if not math.isfinite(v):
            raise _Bad(field, "finite numbers (JSON has no NaN or Infinity)", v)
    elif isinstance(v, int) and not isinstance(v, bool):
        integer(v, field)
    elif v is not None and not isinstance(v, bool):
        raise _Bad(field, "a JSON value", v)


def json_value(v, field, *, kind=None):
    """A JSON value (objects with string keys, arrays, strings, finite numbers, true, false, null;
    nested at most MAX_JSON_NESTING deep) with its secrets redacted. `kind` dict or list: the
    value's type (or null)."""
    if kind is not None and v is not None and not isinstance(v, kind):
        raise _Bad(field, f"a JSON {'object' if kind is dict else 'array'} or null", v)
    _check_json(v, field)
    return redact_value(v)


def count_map(v, field):
    """{name: count} (statuses, outcomes) or null."""
    v = json_value(v, field, kind=dict)
    if v is not None:
        for k, n in v.items():
            integer(n, f"{field}.{k}", COUNT, required=True)
    return v


def _json_text(v, field):
    """A JSON document kept as text (run.json): (text, changed) with its secrets redacted; the text
    is the redacted document in canonical form (sorted keys) when a secret was removed."""
    if v is None:
        return None, False
    text(v, field, required=True, limit=DOCUMENT)
    try:
        doc = parse_json(v.encode("utf-8"), field)
    except ResultsError as e:
        raise _Bad(field, "JSON text", str(e).split(": ", 1)[-1]) from None
    _check_json(doc, field)
    red = redact_value(doc)
    if red is doc:
        return v, False
    return json.dumps(red, sort_keys=True), True


# table -> ([(column, checker)], the columns of its primary key)
_ROWS = {
    "specs": ([("spec", lambda v, f: text(v, f, required=True)), ("name", text),
               ("parameters", lambda v, f: json_value(v, f))], ("spec",)),
    "families": ([("family", lambda v, f: text(v, f, required=True)), ("dof", lambda v, f: integer(v, f, SMALL)),
                  ("effectors", lambda v, f: integer(v, f, SMALL)), ("goal", text),
                  ("problems", lambda v, f: integer(v, f, COUNT)), ("robot", text),
                  ("description", lambda v, f: text(v, f, limit=LONG_TEXT))], ("family",)),
    "cells": ([("family", lambda v, f: text(v, f, required=True)), ("solver", lambda v, f: text(v, f, required=True)),
               ("solves", lambda v, f: integer(v, f, COUNT)), ("supported", lambda v, f: integer(v, f, COUNT)),
               ("converged", lambda v, f: integer(v, f, COUNT)), ("successes", lambda v, f: integer(v, f, COUNT)),
               ("limit_violations", lambda v, f: integer(v, f, COUNT)), ("available", boolean), ("rank", real),
               ("rank_of", lambda v, f: integer(v, f, COUNT)), ("tied_leader", boolean), ("statuses", count_map),
               ("outcomes", count_map), ("targets", text)], ("family", "solver")),
    "points": ([("source", lambda v, f: _choice(v, f, SOURCES)), ("family", lambda v, f: text(v, f, required=True)),
                ("solver", lambda v, f: text(v, f, required=True)), ("figure", lambda v, f: text(v, f, required=True)),
                ("value", real), ("ci_low", real), ("ci_high", real), ("n", lambda v, f: integer(v, f, COUNT)),
                ("successes", lambda v, f: integer(v, f, COUNT))], ("source", "family", "solver", "figure")),
    "gbench": ([("file", lambda v, f: text(v, f, required=True)), ("seq", lambda v, f: integer(v, f, SMALL, required=True)),
                ("name", lambda v, f: text(v, f, required=True)), ("run_name", text), ("run_type", text),
                ("aggregate_name", text), ("repetitions", lambda v, f: integer(v, f, SMALL)),
                ("repetition_index", lambda v, f: integer(v, f, SMALL)), ("threads", lambda v, f: integer(v, f, SMALL)),
                ("iterations", real), ("real_time", real), ("cpu_time", real), ("time_unit", text),
                ("extra", lambda v, f: json_value(v, f, kind=dict))], ("file", "seq")),
    "documents": ([("file", lambda v, f: file_name(v, f)), ("kind", lambda v, f: _choice(v, f, DOCUMENT_KINDS)),
                   ("body", lambda v, f: text(v, f, required=True, limit=DOCUMENT))], ("file",)),
}

_MACHINE = [("key", hex_key), ("label", lambda v, f: text(v, f, required=True)), ("vendor", text), ("cpu", text),
            ("cpu_family", lambda v, f: integer(v, f, SMALL)), ("cpu_model", lambda v, f: integer(v, f, SMALL)),
            ("stepping", lambda v, f: integer(v, f, SMALL)), ("isa", text),
            ("hardware_threads", lambda v, f: integer(v, f, SMALL)), ("compiler", text),
            ("flags", lambda v, f: text(v, f, limit=LONG_TEXT)), ("build_type", text), ("batch_kernel", text),
            ("identity", lambda v, f: text(v, f, required=True, limit=LONG_TEXT))]

_RUN = [("key", hex_key), ("source", lambda v, f: text(v, f, limit=LONG_TEXT)), ("git_revision", text),
        ("git_commit", text), ("dirty", boolean), ("commit_date", date), ("subject", lambda v, f: text(v, f, limit=LONG_TEXT)),
        ("suite", text), ("suite_seed", text), ("threads", lambda v, f: integer(v, f, THREADS)),
        ("format_version", lambda v, f: integer(v, f, SMALL)), ("start_time", text), ("end_time", text),
        ("noisy", boolean), ("load", lambda v, f: json_value(v, f, kind=dict)),
        ("throughput", lambda v, f: json_value(v, f, kind=dict)), ("build", lambda v, f: json_value(v, f, kind=dict)),
        ("command_line", lambda v, f: None if v is None else redact_secrets(text(v, f, limit=LONG_TEXT)))]


def _choice(v, field, choices):
    if v not in choices:
        raise _Bad(field, " or ".join(repr(c) for c in choices), v)
    return v


def file_name(v, field):
    """A side file's name as the run directory held it: one path component (no '/', '\\' or
    control character, not starting with '.'). Paths built from it are escaped as well
    (exchange.safe_name)."""
    if not isinstance(v, str) or not v or len(v) > 255 or v.startswith(".") or \
            any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in v):
        raise _Bad(field, "a file name (one path component, not starting with '.')", v)
    _text_ok(v, field, 255)
    return v


def _redacted_body(body):
    """A side file's text with its secrets removed (parsed and written again only when one was)."""
    if "://" not in body and "=" not in body:
        return body
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return redact_secrets(body)
    red = redact_value(doc)
    return body if red is doc else json.dumps(red, indent=1)


def _columns(row, spec, field):
    if not isinstance(row, dict):
        raise _Bad(field, "an object", row)
    return {col: check(row.get(col), f"{field}.{col}") for col, check in spec}


def _rows(table, rows):
    spec, pk = _ROWS[table]
    if rows is None:
        rows = []
    if not isinstance(rows, list):
        raise _Bad(table, "a list", rows)
    seen, clean = set(), []
    for i, row in enumerate(rows):
        r = _columns(row, spec, f"{table}[{i}]")
        k = tuple(r[c] for c in pk)
        if k in seen:
            raise _Bad(f"{table}[{i}]", f"rows unique by {', '.join(pk)}", k if len(k) > 1 else k[0])
        seen.add(k)
        if table == "documents":
            r["body"] = _redacted_body(r["body"])
        clean.append(r)
    return clean


def checked_rows(table, rows, where):
    """Clean copies of one table's rows of a record (`table`: specs, families, cells, points,
    gbench, documents)."""
    try:
        return _rows(table, rows)
    except _Bad as e:
        raise RecordError(f"{where}: {e.field}: expected {e.expected}, got {_show(e.value)}") from None


def _record(rec):
    if not isinstance(rec, dict):
        raise _Bad("record", "an object", rec)
    if rec.get("format", RECORD_FORMAT) != RECORD_FORMAT:
        raise _Bad("format", repr(RECORD_FORMAT), rec.get("format"))
    if not isinstance(rec.get("machine"), dict):
        raise _Bad("machine", "an object (the machine identity)", rec.get("machine"))
    if not isinstance(rec.get("run"), dict):
        raise _Bad("run", "an object (the run's identity)", rec.get("run"))
    out = {"format": RECORD_FORMAT, "machine": _columns(rec["machine"], _MACHINE, "machine"),
           "run": _columns(rec["run"], _RUN, "run")}
    run_json, changed = _json_text(rec["run"].get("run_json"), "run.run_json")
    out["run"]["run_json"] = run_json
    if changed:   # a key that was a hash of a secret is replaced by the redacted run.json's
        out["run"]["key"] = run_key(run_json)
    for table in _ROWS:
        out[table] = _rows(table, rec.get(table, []))
    return out


def parse_json(data, where):
    """JSON bytes read as every reader of the results reads them (ikbench.io.results: nesting at most
    MAX_JSON_NESTING, checked before parsing; strict JSON, no NaN or Infinity, no number beyond a
    double); ResultsError naming `where`."""
    _check_json_nesting(data, where)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResultsError(f"{where}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    return _parse_json_text(text, where)


def run_key(run_json_text):
    """A run's key: the hash of its (redacted, canonical) run.json."""
    return hashlib.sha256(run_json_text.encode("utf-8")).hexdigest()[:24]


def checked_record(rec, where="record"):
    """A clean copy of a run record (module text); RecordError naming `where`, the field and what
    was expected."""
    try:
        return _record(rec)
    except _Bad as e:
        raise RecordError(f"{where}: {e.field}: expected {e.expected}, got {_show(e.value)}") from None
    except RecursionError:
        raise RecordError(f"{where}: nested deeper than {MAX_JSON_NESTING} levels") from None


_SKIPPED = [("git_commit", lambda v, f: text(v, f, required=True, limit=256)), ("commit_date", date),
            ("subject", lambda v, f: text(v, f, limit=LONG_TEXT)), ("reason", lambda v, f: text(v, f, required=True)),
            ("detail", lambda v, f: None if v is None else redact_secrets(text(v, f, limit=LONG_TEXT))),
            ("recorded", date), ("machine", lambda v, f: None if v is None else hex_key(v, f))]


def checked_skipped(entry, where="skipped"):
    """A clean copy of a `skipped` entry of an export (a commit without a run)."""
    try:
        return _columns(entry, _SKIPPED, "skipped")
    except _Bad as e:
        raise RecordError(f"{where}: {e.field}: expected {e.expected}, got {_show(e.value)}") from None


__all__ = ["RECORD_FORMAT", "RecordError", "checked_record", "checked_rows", "parse_json", "checked_skipped", "file_name", "run_key"]
