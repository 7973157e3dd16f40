"""Reading a results directory written by `ikbench run` (docs/results-format.md).

    run = ikbench.results.load("results/20261123-default")
    run.solves        # pandas DataFrame, one row per solve (solves.csv)
    run.traces        # per-iteration records (traces.csv), read on first use
    run.problems      # problems.jsonl (format version 2; None for version 1)
    run.solutions     # solutions.csv (version 2; None for version 1)
    run.models        # {model id: model} from models.json (version 2; None for version 1)
    run.meta          # run.json

Every file is validated against the format: a missing file, column or field, or a value of the
wrong kind raises `ResultsError` with a message naming the file, the line and the column or
field. A version-2 run must be complete (`"complete": true` in run.json) and its files must match
run.json's manifest (rows, bytes, FNV-1a 64-bit hash); otherwise it is refused as incomplete or
mixed, unless `allow_incomplete=True`, which loads what is there and lists the reasons in
`run.issues`. Version-1 runs (format "ikbench-run/1") load with what they have; figures that need
version 2 raise `ResultsError` through `Run.require_version`.
"""

import csv
import json
import math
import os
import re
import stat
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from .hashing import fnv1a64_hex
from .results_models import validate_model, validate_problem, validate_scene
from .results_schema import (LIMITS, SCHEMA, TOLERANCES, CsvLineError, ResultsError, cells_match, is_number, kind_of,
                             parse_csv_line, split_lines, trim)

# ---------------------------------------------------------------- the format
# The shared facts come from python/ikbench/data/results_format.json (ikbench.results_schema), the
# file the C++ constants are checked against; format version 1 (older runs, which only this
# library reads) is described here.

FORMAT_NAME = SCHEMA["format"]
LATEST_VERSION = SCHEMA["format_version"]
_COLUMNS = SCHEMA["columns"]

# solves.csv: the leading columns never change order; later versions only append.
LEADING_SOLVE_COLUMNS = list(_COLUMNS["solves_leading"])
SOLVE_COLUMNS_V1 = LEADING_SOLVE_COLUMNS + ["time_per_iteration_us", "seed", "problem_name", "message"]
SOLVE_COLUMNS = LEADING_SOLVE_COLUMNS + list(_COLUMNS["solves_extra"])
# Appended by a run with a scene (docs/collision.md): the exact check of the returned q, empty in
# the rows of families without a scene. Read as collision_free in {1.0, 0.0, nan (no scene)},
# min_clearance [m] (nan: no scene), collision_pair as text.
COLLISION_COLUMNS = list(_COLUMNS["collision"])

TRACE_COLUMNS_V1 = ["family", "problem", "solver", "iteration", "position_error", "orientation_error",
                    "step_norm", "damping", "elapsed_us"]
TRACE_COLUMNS = list(_COLUMNS["traces"])

SOLUTION_COLUMNS = list(_COLUMNS["solutions"])

# summary.csv (written by ikbench.figures.write_summary): the columns of format version 1's
# summary first, in their order, then the intervals and the extra time figures.
SUMMARY_COLUMNS = [
    "family", "solver", "solves", "supported", "converged", "success_rate", "iterations_median",
    "iterations_p90", "position_error_median", "orientation_error_median", "time_us_median", "time_us_p90",
    "fk_evals_mean", "jacobian_evals_mean", "time_us_mean",
    "success_ci_low", "success_ci_high", "time_us_p99", "time_us_max", "time_us_mean_ci_low",
    "time_us_mean_ci_high", "time_us_median_ci_low", "time_us_median_ci_high", "iterations_median_ci_low",
    "iterations_median_ci_high",
]

# Optional columns of solves.csv after SOLVE_COLUMNS, each at most once, found by name (a run
# without them reads as before): the outcome and answer-quality columns of a protocol's run or
# `ikbench run --quality` (docs/protocols.md, benchmarks/harness/answer_quality.h), and the
# collision columns of a run with a scene.
QUALITY_COLUMNS = list(_COLUMNS["quality"])
# Appended by a run with an external solver (docs/external-solvers.md): the time the solver
# process reported for the solve [us], empty where it reported none.
EXTERNAL_COLUMNS = list(_COLUMNS["external"])
OPTIONAL_SOLVE_COLUMNS = QUALITY_COLUMNS + COLLISION_COLUMNS + EXTERNAL_COLUMNS
OUTCOMES = tuple(SCHEMA["outcomes"])

SOLVE_COLUMNS_BY_VERSION = {1: SOLVE_COLUMNS_V1, 2: SOLVE_COLUMNS}
TRACE_COLUMNS_BY_VERSION = {1: TRACE_COLUMNS_V1, 2: TRACE_COLUMNS}

STATUSES = tuple(SCHEMA["statuses"])
# Solves the backend never attempted: they count (as failures) in the success rate, but not in
# iteration, error, evaluation or time figures.
NOT_ATTEMPTED = tuple(SCHEMA["not_attempted"])
GOAL_KINDS = tuple(SCHEMA["goal_kinds"])
JOINT_TYPES = {k: tuple(v) for k, v in SCHEMA["joint_types"].items()}

# How the cells of each column kind (results_schema.COLUMN_KINDS) are typed in a DataFrame.
_INT_KINDS = {"index", "count"}
_BOOL_KINDS = {"flag"}
_FLOAT_KINDS = {"number", "number_or_empty", "non_negative", "non_negative_or_empty", "flag_or_empty"}
_MAX_INDEX = LIMITS["max_index"]            # problem and solution indices are C++ ints
_MAX_COUNT = LIMITS["max_count"]            # other counts: exact as a double


# ---------------------------------------------------------------- limits of the readers
# What a reader accepts (docs/results-format.md, "Guarantees"), each checked before the data it
# bounds is parsed, so that a damaged or hostile directory gets a ResultsError naming the file,
# never a hang, a recursion error or an allocation sized by the file. The C++ readers
# (benchmarks/harness/results_format.h) keep the same limits.

# The files a complete run's manifest (run.json "files") lists: exactly these, by plain name, each
# under this name or gzip-compressed as NAME.gz (what `ikbench run` writes; docs/results-format.md
# "Compression").
MANIFEST_FILES = tuple(SCHEMA["manifest_files"])
GZIP_SUFFIX = SCHEMA["gzip_suffix"]
# A compressed file may expand to MAX_GZIP_RATIO times its size (a run's files expand 3 to 15
# times; gzip at most about 1032 times, a stream of zeros), and to GZIP_FLOOR_BYTES whatever its
# ratio: a gzip bomb is refused once it passes that, never read whole.
MAX_GZIP_RATIO = LIMITS["max_gzip_ratio"]
GZIP_FLOOR_BYTES = LIMITS["gzip_floor_bytes"]
MAX_RUN_JSON_BYTES = LIMITS["max_run_json_bytes"]        # run.json
MAX_MODELS_JSON_BYTES = LIMITS["max_models_json_bytes"]  # models.json (the loaders' 1 GiB input limit)
# Longest line (and so CSV field) of a CSV or JSON Lines file: the q of the largest model the
# loaders accept (100 000 joints, at most 7 configuration numbers each, a number at most 24
# characters and a space: 17.5 MB) fits with room to spare.
MAX_LINE_BYTES = LIMITS["max_line_bytes"]
MAX_JSON_NESTING = LIMITS["max_json_nesting"]            # arrays and objects in one JSON document
MAX_PROBLEM_INDEX = _MAX_INDEX

if csv.field_size_limit() < MAX_LINE_BYTES:
    csv.field_size_limit(MAX_LINE_BYTES)


# ---------------------------------------------------------------- helpers

def file_kind(mode):
    """What a file of this st_mode is, for messages: 'a FIFO', 'a directory', ..."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size_text(n):
    return f"{n >> 30} GiB" if n >= 1 << 30 and n % (1 << 30) == 0 else f"{n >> 20} MiB"


def stat_regular(path, what):
    """os.stat of `path` (a symbolic link followed), which must be a regular file; ResultsError
    naming the path and what it is otherwise. FileNotFoundError is left to the caller."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise
    except NotADirectoryError:
        raise ResultsError(f"{path}: a component of the path is not a directory (expected {what})") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot read: {e.strerror} (expected {what})") from None
    if not stat.S_ISREG(st.st_mode):
        raise ResultsError(f"{path}: is {file_kind(st.st_mode)}, not a regular file (expected {what})")
    return st


def _read_bytes(path, what, max_bytes=None):
    """The bytes of the regular file `path` (at most `max_bytes`). Nothing else is opened: a
    FIFO, device, socket or directory is refused before any open (and an open that finds one
    there after all does not block: O_NONBLOCK, then fstat)."""
    size = None
    try:
        stat_regular(path, what)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file ({what})") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot read: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ResultsError(f"{path}: is {file_kind(st.st_mode)}, not a regular file (expected {what})")
        size = st.st_size
        if max_bytes is not None and size > max_bytes:
            raise ResultsError(f"{path}: {size} bytes, more than a reader takes for {what} "
                               f"({_size_text(max_bytes)})")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(size + 1)
        if len(data) > size:
            raise ResultsError(f"{path}: the file grew while it was read (written to by another process?)")
        return data
    except MemoryError:
        raise ResultsError(f"{path}: {size} bytes: not enough memory to read it") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot read: {e.strerror}") from None
    finally:
        os.close(fd)


def manifest_file_of(name):
    """The MANIFEST_FILES name a manifest key or file name stands for ('solves.csv.gz' and
    'solves.csv': 'solves.csv'), or None."""
    plain = name[:-len(GZIP_SUFFIX)] if name.endswith(GZIP_SUFFIX) else name
    return plain if plain in MANIFEST_FILES else None


def run_file(directory, name):
    """Where the file `name` (of MANIFEST_FILES) of the run in `directory` is: NAME.gz or NAME,
    whichever exists (NAME when neither does). ResultsError when both do: a reader never
    guesses which one is the run's."""
    directory = Path(directory)
    plain, gz = directory / name, directory / (name + GZIP_SUFFIX)
    has_plain, has_gz = os.path.lexists(plain), os.path.lexists(gz)
    if has_plain and has_gz:
        raise ResultsError(f"{directory}: both {name} and {name}{GZIP_SUFFIX} are here: which one is the run's? "
                           "(remove the other)")
    return gz if has_gz else plain


def gunzip_bounded(raw, path, max_bytes=None):
    """The decompressed content of the gzip file `path` whose bytes are `raw` (members one after
    another read as their concatenation). ResultsError naming the file for a stream that is
    empty, corrupt or truncated (a file cut short by a kill or a full disk), or that expands
    beyond MAX_GZIP_RATIO times its size (at least GZIP_FLOOR_BYTES) or `max_bytes`: decompression
    stops there, so a gzip bomb costs at most that much memory."""
    limit = max(GZIP_FLOOR_BYTES, MAX_GZIP_RATIO * len(raw))
    why = f"{MAX_GZIP_RATIO} times its {len(raw)} compressed bytes"
    if max_bytes is not None and max_bytes < limit:
        limit, why = max_bytes, "what a reader takes of this file"
    if not raw:
        raise ResultsError(f"{path}: empty, not a gzip stream")
    out, total, pos, view = [], 0, 0, memoryview(raw)
    while pos < len(raw):
        d = zlib.decompressobj(wbits=31)
        buf = view[pos:]
        while not d.eof:
            try:
                piece = d.decompress(buf, limit - total + 1)
            except zlib.error as e:
                raise ResultsError(f"{path}: not a valid gzip stream ({e}; after byte {pos} of the file)") from None
            total += len(piece)
            if total > limit:
                raise ResultsError(f"{path}: decompresses to more than {limit} bytes ({why}): not a file ikbench "
                                   "wrote (a gzip bomb?)")
            out.append(piece)
            buf = d.unconsumed_tail
            if not buf and not piece and not d.eof:
                raise ResultsError(f"{path}: the gzip stream is truncated (the file ends inside compressed data "
                                   f"after {len(raw)} bytes: cut short by a kill or a full disk?)")
        pos = len(raw) - len(d.unused_data)
    return b"".join(out)


def read_run_file(path, what, max_bytes=None):
    """(raw bytes, content) of a file of a run: a NAME.gz file's content decompressed
    (gunzip_bounded), any other file's its bytes; at most `max_bytes` of content."""
    path = Path(path)
    if not path.name.endswith(GZIP_SUFFIX):
        data = _read_bytes(path, what, max_bytes)
        return data, data
    raw = _read_bytes(path, what + ", gzip-compressed")
    return raw, gunzip_bounded(raw, path, max_bytes)


def _exists(path):
    """True if something is at `path` (a symbolic link counts only when its target exists)."""
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def _decode(data, path):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ResultsError(f"{path}:{line}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def count_lines(data):
    """Lines of a text file's bytes (a last line without a newline counts)."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _check_line_lengths(data, path):
    """Refuses a line longer than MAX_LINE_BYTES (the CSV and JSON Lines files of a run)."""
    if len(data) <= MAX_LINE_BYTES:
        return
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    bounds = np.concatenate(([-1], ends, [len(data)]))
    lengths = np.diff(bounds) - 1
    long_ = np.flatnonzero(lengths > MAX_LINE_BYTES)
    if len(long_):
        i = int(long_[0])
        raise ResultsError(f"{path}:{i + 1}: a line of {int(lengths[i])} bytes, more than a reader takes "
                           f"({_size_text(MAX_LINE_BYTES)})")


_JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _check_json_nesting(data, path, first_line=1):
    """Refuses JSON bytes nested deeper than MAX_JSON_NESTING (arrays and objects; brackets in
    strings do not count), before any parser recurses into them. The message names the line."""
    if data.count(b"[") + data.count(b"{") <= MAX_JSON_NESTING:
        return
    brackets = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    a = np.frombuffer(brackets, dtype=np.uint8)
    depth, deepest = 0, 0
    for start in range(0, len(a), 1 << 22):
        part = a[start:start + (1 << 22)]
        d = depth + np.cumsum(np.where((part == ord("[")) | (part == ord("{")), 1, -1), dtype=np.int64)
        deepest = max(deepest, int(d.max()))
        depth = int(d[-1])
        if deepest > MAX_JSON_NESTING:
            break
    if deepest <= MAX_JSON_NESTING:
        return
    depth = 0
    for m in _JSON_TOKEN.finditer(data):  # the error's line (stops at the first level too deep)
        c = m.group()
        if c in (b"[", b"{"):
            depth += 1
            if depth > MAX_JSON_NESTING:
                line = first_line + data.count(b"\n", 0, m.start())
                raise ResultsError(f"{path}:{line}: JSON nested deeper than {MAX_JSON_NESTING} levels "
                                   "(arrays and objects)")
        elif c in (b"]", b"}"):
            depth -= 1
    raise ResultsError(f"{path}: JSON nested deeper than {MAX_JSON_NESTING} levels (arrays and objects)")


def _refuse_constant(name):
    raise ValueError(f"'{name}' is not a JSON number")


def _parse_int(text):
    """A JSON integer, exact; one beyond the range of a double is refused, as nlohmann-json (the
    C++ readers' parser) refuses it ("number overflow"), before Python reads thousands of digits."""
    if len(text) > 330 or math.isinf(float(text)):
        raise ValueError(f"number overflow: an integer of {len(text.lstrip('-'))} digits")
    return int(text)


def _parse_float(text):
    v = float(text)
    if math.isinf(v):
        raise ValueError(f"number overflow: {_clip(text, 40)}")
    return v


def _parse_json_text(text, path, line=None):
    """JSON text -> value; ResultsError naming the file (and line) for malformed JSON, nesting
    deeper than MAX_JSON_NESTING, NaN/Infinity (not JSON) and integers Python will not read."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_int=_parse_int, parse_float=_parse_float)
    except json.JSONDecodeError as e:
        ln = e.lineno if line is None else line
        raise ResultsError(f"{path}:{ln}: malformed JSON: {e.msg} (column {e.colno})") from None
    except RecursionError:
        raise ResultsError(f"{where}: JSON nested deeper than {MAX_JSON_NESTING} levels (arrays and objects)") from None
    except ValueError as e:  # NaN, Infinity, a number beyond a double's range
        raise ResultsError(f"{where}: malformed JSON: {e}") from None


def read_json_file(path, what, max_bytes=MAX_RUN_JSON_BYTES):
    data = _read_bytes(path, what, max_bytes)
    _check_json_nesting(data, path)
    return _parse_json_text(_decode(data, path), path), data


def optional_json(path, max_bytes=MAX_RUN_JSON_BYTES):
    """A JSON file a reader uses when it can (a suite file that run.json names, a plots index,
    Google Benchmark output beside a run): its value, or None when it is absent, not a regular
    file (a FIFO or device is never opened), larger than `max_bytes`, nested deeper than
    MAX_JSON_NESTING or not JSON."""
    try:
        data = _read_bytes(path, "a JSON file", max_bytes)
        _check_json_nesting(data, path)
        return _parse_json_text(_decode(data, path), path)
    except ResultsError:
        return None


def format_version(meta):
    """The format version a run.json declares: 'format_version', else the N of 'format':
    'ikbench-run/N', else 1 (run.json files written before the version field)."""
    v = meta.get("format_version")
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    fmt = meta.get("format")
    if isinstance(fmt, str) and fmt.startswith(FORMAT_NAME + "/"):
        try:
            return int(fmt.split("/", 1)[1])
        except ValueError:
            pass
    return 1


def _read_version(meta, path):
    """The format version of a run.json, as the readers take it: a run.json with a
    'format_version' must give the integer LATEST_VERSION (the C++ readers' rule: a newer
    version, whose files this library does not know, is refused, not guessed at); one without it
    is format version 1 (written before the field) when its 'format' is absent or
    'ikbench-run/1', and is refused otherwise."""
    if "format_version" in meta:
        v = meta["format_version"]
        if not _int(v) or v != LATEST_VERSION:
            raise _field_error(path, "format_version", f"expected {LATEST_VERSION}, the format version this ikbench "
                               f"reads" + (" (a newer ikbench wrote this run: read it with that one)"
                                           if _int(v) and v > LATEST_VERSION else ""), v)
        return v
    fmt = meta.get("format")
    if fmt is None or fmt == FORMAT_NAME + "/1":
        return 1
    raise _field_error(path, "format_version", f"missing, and 'format' is not '{FORMAT_NAME}/1' (a run.json of "
                       f"format version {LATEST_VERSION} has 'format_version': {LATEST_VERSION})", fmt)


def _where(path, line, column):
    return f"{path}:{line}: column '{column}'"


def _exact_floats(raw):
    """Text -> float64, correctly rounded (Python's float(); pandas' fast parser is not, and
    files are written so that they read back exactly); nan where the text is not a number."""
    arr = np.asarray(raw, dtype=str) if len(raw) else np.zeros(0, dtype=str)
    try:
        return arr.astype(np.float64)
    except ValueError:
        out = np.empty(len(arr))
        for i, x in enumerate(arr):
            try:
                out[i] = float(x)
            except ValueError:
                out[i] = np.nan
        return out


def _header_problem(header, expected, optional, line):
    """Why a CSV header is not the format's: `expected` in order, then columns of `optional`,
    each at most once (the C++ readers' rule). None when it is."""
    lead = header[:len(expected)]
    if lead != expected:
        hint = (" (a '\\r' before the line end: CRLF line ends are not the format's, which ends lines with '\\n' "
                "alone)") if "\r" in line else ""
        missing = [c for c in expected if c not in header]
        if missing:
            return (f"missing column(s) {', '.join(repr(c) for c in missing)} in the header (expected the format's "
                    f"columns {','.join(expected)}){hint}")
        k = next((i for i, (a, b) in enumerate(zip(lead, expected)) if a != b), len(lead))
        got = f"'{_clip(lead[k])}'" if k < len(lead) else "nothing"
        return (f"header column {k + 1} is {got}, expected '{expected[k]}' (the format's columns in this order: "
                f"{','.join(expected)}){hint}")
    seen = set()
    for c in header[len(expected):]:
        if c not in optional or c in seen:
            return (f"column '{_clip(c)}' after the format's columns is not one of the optional columns "
                    f"({','.join(optional)}) or is given twice")
        seen.add(c)
    return None


class _Table:
    """A CSV file split as the C++ readers split it (ikbench.results_schema): header, columns of
    strings, file line of every record. With `expected`, the header must be those columns in
    order, then only columns of `optional`; with `required` (format version 1), those columns
    in any order, others kept as text."""

    def __init__(self, path, data, kind, *, expected=None, optional=(), required=None):
        self.path = path
        _check_line_lengths(data, path)
        columns = expected if expected is not None else required
        if not data:
            raise ResultsError(f"{path}:1: empty file, expected a header line with the {kind} columns "
                               f"{','.join(columns)}")
        lines = split_lines(_decode(data, path))
        del data
        try:
            header = parse_csv_line(lines[0])
        except CsvLineError as e:
            raise ResultsError(f"{path}:1: malformed CSV header: {e}") from None
        if expected is not None:
            why = _header_problem(header, list(expected), list(optional), lines[0])
            if why:
                raise ResultsError(f"{path}:1: {why}")
        else:
            header = [h.strip() for h in header]
            missing = [c for c in required if c not in header]
            if missing:
                raise ResultsError(f"{path}:1: missing column(s) {', '.join(repr(c) for c in missing)} in the header "
                                   f"(expected the {kind} columns {','.join(required)})")
        dup = sorted({h for h in header if header.count(h) > 1})
        if dup:
            raise ResultsError(f"{path}:1: column(s) {', '.join(repr(c) for c in dup)} appear more than once")
        n = len(header)
        # Cells go straight into their columns: a list per row beside the columns would hold
        # every cell's reference twice (a default run's solves.csv has 1.6 million cells).
        cols = [[] for _ in header]
        appenders = [c.append for c in cols]
        for number, line in enumerate(lines[1:], 2):
            try:
                row = parse_csv_line(line)
            except CsvLineError as e:
                raise ResultsError(f"{path}:{number}: malformed CSV: {e} (a field never spans lines)") from None
            if len(row) != n:
                blank = " (a blank line)" if not line.strip(" ") else ""
                raise ResultsError(f"{path}:{number}: {len(row)} field{'' if len(row) == 1 else 's'}{blank}, but the "
                                   f"header has {n}")
            for add, cell in zip(appenders, row):
                add(cell)
        self.n = len(lines) - 1
        del lines
        self.header = header
        self.lines = np.arange(2, self.n + 2, dtype=np.int64)
        self.columns = {}
        for h, c in zip(header, cols):
            a = np.empty(len(c), dtype=object)
            a[:] = c
            self.columns[h] = a
            c.clear()

    def fail(self, column, mask, expected, values=None):
        i = int(np.flatnonzero(mask)[0])
        got = (self.columns[column] if values is None else values)[i]
        raise ResultsError(f"{_where(self.path, self.lines[i], column)}: expected {expected}, got '{_clip(got)}'")

    def frame(self, columns=None):
        """DataFrame of the named columns (all by default), typed by the format's column kinds."""
        out = {}
        for c in (columns or self.header):
            out[c] = self.typed(c)
        return pd.DataFrame(out)

    def typed(self, c):
        """Column `c` checked against its kind (results_schema.COLUMN_KINDS) and typed: ints, floats
        (nan for nan and for an empty cell), bools for flags, uint64 seeds, text as str objects."""
        raw = self.columns[c]
        kind = kind_of(c)
        cells = [str(x) for x in raw]
        if kind == "index":  # plain digits (no sign, exponent or spaces), below 2^31
            top = _MAX_INDEX - 1 if c == "solution" else _MAX_INDEX
            ok = cells_match("index", cells)
            vals = np.array([int(x) if k else -1 for x, k in zip(cells, ok)], dtype=np.int64)
            bad = ~ok | (vals > top)
            if bad.any():
                self.fail(c, bad, f"a non-negative integer below {top + 1} written in digits")
            return vals
        if kind in ("number", "number_or_empty", "non_negative", "non_negative_or_empty", "count"):
            ok = cells_match(kind, cells)
            if not ok.all():
                what = {"count": "a non-negative integer", "number": "a number (or nan, inf)",
                        "non_negative": "a non-negative number (or nan, inf)"}.get(
                    kind, ("a non-negative number" if kind.startswith("non_negative") else "a number") +
                    " (or nan, inf) or nothing")
                self.fail(c, ~ok, what)
            trimmed = np.array([trim(x) for x in cells], dtype=object)
            empty = trimmed == ""
            v = _exact_floats(np.where(empty, "nan", trimmed).astype(str) if len(trimmed) else trimmed)
            if kind == "count":
                with np.errstate(invalid="ignore"):
                    bad = ~np.isfinite(v) | (v < 0) | (v != np.floor(v)) | (v > _MAX_COUNT)
                if bad.any():
                    self.fail(c, bad, "a non-negative integer")
                return v.astype(np.int64)
            if kind.startswith("non_negative"):
                neg = v < 0
                if neg.any():
                    self.fail(c, neg, "a non-negative number")
            return v
        if kind in ("flag", "flag_or_empty"):
            ok = cells_match(kind, cells)
            if not ok.all():
                self.fail(c, ~ok, "0 or 1" if kind == "flag" else "0, 1 or nothing")
            s = np.array([trim(x) for x in cells], dtype=object)
            if kind == "flag":
                return (s == "1").astype(bool)
            return np.where(s == "1", 1.0, np.where(s == "0", 0.0, np.nan)).astype(float)
        if kind == "seed":
            ok = cells_match("seed", cells)
            vals = [int(x) if k else 1 << 64 for x, k in zip(cells, ok)]
            ok = np.array([x < (1 << 64) for x in vals], dtype=bool)
            if not ok.all():
                self.fail(c, ~ok, "an unsigned 64-bit integer")
            return np.array(vals, dtype=np.uint64)
        if kind in ("status", "outcome"):
            names = STATUSES if kind == "status" else OUTCOMES
            s = np.array([trim(x) for x in cells], dtype=object)
            bad = ~pd.Series(s, dtype=object).isin(names).to_numpy(dtype=bool)
            if bad.any():
                self.fail(c, bad, f"{'a status' if kind == 'status' else 'an outcome'} ({', '.join(names)})")
            return s
        if kind == "configuration":
            ok = cells_match("configuration", cells)
            if not ok.all():
                i = int(np.flatnonzero(~ok)[0])
                raise ResultsError(f"{_where(self.path, self.lines[i], c)}: '{_clip(_bad_token(cells[i]))}' is not a "
                                   "number (expected the configuration: numbers separated by spaces)")
            return raw if len(raw) else np.asarray([], dtype=object)
        vals = raw if len(raw) else np.asarray([], dtype=object)  # text stays Python strings (object)
        if kind == "name":
            bad = np.array([not trim(x) for x in cells], dtype=bool)
            if bad.any():
                self.fail(c, bad, "a non-empty name")
        return vals


def _check_unique(table, df, keys, what):
    dup = df.duplicated(keys).to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        desc = ", ".join(f"{k} '{df[k].iloc[i]}'" for k in keys)
        raise ResultsError(f"{table.path}:{table.lines[i]}: duplicate {what} ({desc})")


def _clip(text, n=60):
    text = str(text)
    return text if len(text) <= n else text[:n] + f"... ({len(text)} characters)"


def _q_tokens(text):
    """The numbers of a configuration text as strings, or None when the text is not numbers of the
    format separated by spaces (results_schema.NUMBER: no '1_0', non-ASCII digits or hexadecimal,
    and no separator but the space, as the C++ readers read it)."""
    if not cells_match("configuration", [text])[0]:
        return None
    return text.split()


def _bad_token(text):
    for tok in text.split(" "):
        if tok and not is_number(tok):
            return tok
    return text


def parse_q(text, where=None):
    """A configuration written as numbers separated by spaces -> numpy array."""
    tokens = _q_tokens(str(text))
    if tokens is None:
        raise ResultsError(f"{where or 'q'}: '{_clip(_bad_token(str(text)))}' is not a number (expected numbers "
                           f"separated by spaces, got '{_clip(text)}')")
    return np.array(tokens, dtype=float)


def _configuration_problem(vals, layout):
    """Why numbers are not a valid configuration of a model (the C++ isValidConfiguration): an
    entry that is not finite, or a ball or free joint's quaternion of a norm not within 1e-6 of
    1. `layout`: [(joint name, first q index, nq, quaternion index or None)]. None if valid."""
    if np.isfinite(vals).all() and not any(qi is not None for _, _, _, qi in layout):
        return None
    for name, iq, nq, qi in layout:
        for k in range(iq, iq + nq):
            if not math.isfinite(vals[k]):
                return f"configuration entry {k} (joint '{name}') is not finite"
        if qi is not None:
            norm = float(np.linalg.norm(vals[qi:qi + 4]))
            if not abs(norm - 1.0) <= TOLERANCES["unit_quaternion"]:
                return f"quaternion of joint '{name}' has norm {norm:.17g}, expected 1"
    return None


def _check_configurations(path, lines, families, problems, texts, nq_of, column="q", valid=None):
    """Every non-empty configuration of a file's column: numbers, and nq of them where the model
    of its (family, problem) is known (`nq_of`: {(family, problem): (model id, nq, layout)}). The
    rows of `valid` (a boolean mask; the answers verify checks: attempted solves and every extra
    solution) must moreover be valid configurations (finite, unit quaternions)."""
    for i, (f, p, t) in enumerate(zip(families, problems, texts)):
        t = str(t)
        if not t.strip(" "):
            continue
        tokens = _q_tokens(t)
        if tokens is None:
            raise ResultsError(f"{_where(path, lines[i], column)}: '{_clip(_bad_token(t))}' is not a number "
                               "(expected the configuration: nq numbers separated by spaces)")
        m = nq_of.get((f, int(p)))
        if m is None:
            continue
        if len(tokens) != m[1]:
            raise ResultsError(f"{_where(path, lines[i], column)}: {len(tokens)} number{'' if len(tokens) == 1 else 's'}, "
                               f"but problem {p} of family "
                               f"'{f}' is on model '{m[0]}' with nq {m[1]}")
        if valid is not None and valid[i]:
            why = _configuration_problem(np.array(tokens, dtype=float), m[2])
            if why:
                raise ResultsError(f"{_where(path, lines[i], column)}: {why} (an answer must be a configuration "
                                   f"of model '{m[0]}')")


def _nq_of_problems(run):
    if run.problems is None or run.models is None:
        return {}
    layouts = {mid: _configuration_layout(m) for mid, m in run.models.items()}
    return {(f, int(p)): (m, run.models[m]["nq"], layouts[m]) for f, p, m in
            zip(run.problems["family"], run.problems["problem"], run.problems["model"])}


def _configuration_layout(model):
    """[(joint name, first q index, nq, quaternion index or None)] of a models.json model."""
    out = []
    for j in model["joints"]:
        nq = JOINT_TYPES[j["type"]][0]
        qi = j["idx_q"] if j["type"] == "ball" else j["idx_q"] + 3 if j["type"] == "free" else None
        out.append((j["name"], j["idx_q"], nq, qi))
    return out


# ---------------------------------------------------------------- the run

class Run:
    """One results directory. DataFrames are typed: ints, floats (nan where not a number or
    empty), bools for converged/within_limits, strings (q as written, see `q_of`)."""

    def __init__(self, path, meta, version, solves, solve_lines, solves_path, *, problems=None, models=None,
                 solutions=None, traces_path=None, manifest=None, issues=(), notes=(), problem_lines=None):
        self.path = Path(path)
        self.meta = meta
        self.format_version = version
        self.solves = solves
        self.solve_lines = solve_lines
        self.solves_path = solves_path
        self.problems = problems
        self.problem_lines = problem_lines
        self.models = models
        self.solutions = solutions
        self.traces_path = traces_path
        self._manifest = manifest or {}
        self._traces = None
        self.issues = list(issues)   # why the run is incomplete or mixed (loaded with allow_incomplete)
        self.notes = list(notes)     # what a reader should know (e.g. no run.json)

    # -- identity ---------------------------------------------------------------------------
    @property
    def complete(self):
        return not self.issues

    @property
    def suite(self):
        s = self.meta.get("suite")
        if isinstance(s, dict) and isinstance(s.get("name"), str):
            return s["name"]
        if isinstance(s, str):
            return s
        vals = self.solves["suite"].unique() if len(self.solves) else []
        return vals[0] if len(vals) else "?"

    @property
    def seed(self):
        s = self.meta.get("seed")
        for parent, key in (("suite", "seed"), ("seeds", "suite")):
            if s is None and isinstance(self.meta.get(parent), dict):
                s = self.meta[parent].get(key)
        return s

    @property
    def threads(self):
        t = self.meta.get("threads")
        return t if isinstance(t, int) and not isinstance(t, bool) else None

    @property
    def cpu(self):
        """The CPU as run.json names it: machine.cpu (the model name), followed by the vendor,
        family, model and stepping where the run recorded them, since a virtual machine's model
        name ("AMD EPYC", "Intel(R) Xeon(R) Processor") can read alike on different hardware."""
        m = self.meta.get("machine")
        if isinstance(m, dict) and isinstance(m.get("cpu"), str):
            ident = [f"{k} {m[k]}" if k != "vendor" else str(m[k]) for k in ("vendor", "family", "model", "stepping")
                     if isinstance(m.get(k), (str, int)) and not isinstance(m.get(k), bool)]
            return m["cpu"] + (f" ({' '.join(ident)})" if ident else "")
        return self.meta.get("cpu") if isinstance(self.meta.get("cpu"), str) else None

    @property
    def families(self):
        """run.json's families (list of dicts; empty when run.json has none)."""
        f = self.meta.get("families")
        return [x for x in f if isinstance(x, dict)] if isinstance(f, list) else []

    @property
    def solver_specs(self):
        """Solver specs in run.json's order, then any others of solves.csv in file order."""
        specs = [s.get("spec") for s in self.meta.get("solvers", []) if isinstance(s, dict)
                 and isinstance(s.get("spec"), str)] if isinstance(self.meta.get("solvers"), list) else []
        for s in pd.unique(self.solves["solver"]):
            if s not in specs:
                specs.append(s)
        return specs

    @property
    def tolerances(self):
        """(position [m], orientation [rad]) from run.json's suite options: finite numbers > 0
        (ResultsError otherwise); 1e-5, 1e-5 when a version-1 run.json has none."""
        return _tolerances(self.meta, self.path / "run.json", required=self.format_version >= 2)

    @property
    def inputs(self):
        """The paths a reader of this run reads (the directory and its files that exist): what
        an output of a command over this run must not replace (ikbench.safe_io)."""
        return input_paths(self.path, self.solves_path)

    def describe(self):
        v = f"format {self.format_version}" + ("" if self.complete else ", INCOMPLETE")
        return f"{self.path} (suite {self.suite}, {len(self.solves)} solves, {v})"

    def require_version(self, version, what):
        if self.format_version < version:
            raise ResultsError(f"{what} needs a results directory of format version {version} (models.json, "
                               f"problems.jsonl, the q column of solves.csv); {self.path} is version "
                               f"{self.format_version}: rerun it with a current `ikbench run`")

    # -- lazily read files -------------------------------------------------------------------
    @property
    def traces(self):
        """traces.csv as a DataFrame (read and checked against the manifest on first use); an
        empty frame with the format's columns when the run has no traces.csv."""
        if self._traces is None:
            self._traces = self._read_traces()
        return self._traces

    def _read_traces(self):
        cols = TRACE_COLUMNS_BY_VERSION.get(min(self.format_version, LATEST_VERSION), TRACE_COLUMNS)
        path = self.traces_path
        if path is None or not _exists(path):
            return pd.DataFrame({c: pd.Series(dtype=object if c in ("family", "solver", "q") else float)
                                 for c in cols})
        raw, data = read_run_file(path, "traces.csv")
        self._check_manifest_file(path.name, raw, data)
        del raw
        df, lines = read_traces_bytes(path, data, cols, exact=self.format_version >= 2, with_lines=True)
        del data
        if self.format_version >= 2 and len(df):
            fam_problems, specs = getattr(self, "_run_keys", (None, None))
            _check_keys(path, lines, df, fam_problems, specs, "traces.csv")
            nq_of = _nq_of_problems(self)
            if nq_of:
                known = df["family"].combine(df["problem"], lambda f, p: (f, int(p)) in nq_of)
                if not known.all():
                    i = int(np.flatnonzero(~known.to_numpy(dtype=bool))[0])
                    raise ResultsError(f"{path}:{lines[i]}: problem {df['problem'].iat[i]} of family "
                                       f"'{_clip(df['family'].iat[i])}' is not in problems.jsonl")
            empty = df["q"].astype(str).str.strip(" ") == ""
            if empty.any():
                i = int(np.flatnonzero(empty.to_numpy())[0])
                raise ResultsError(f"{_where(path, lines[i], 'q')}: empty (expected the configuration after the "
                                   "iteration)")
            _check_configurations(path, lines, df["family"], df["problem"], df["q"], nq_of)
        return df

    def _check_manifest_file(self, name, data, content=None):
        entry = self._manifest.get(name)
        if entry is None:
            return
        problem = _manifest_mismatch(name, entry, data, content)
        if problem:
            msg = (f"{self.path}: mixed or modified run: {problem}; the files of a run must be the ones "
                   "its run.json lists (files of one run are never mixed with another's)")
            if self._allow_incomplete:
                self.issues.append(problem)
            else:
                raise ResultsError(msg)

    _allow_incomplete = False

    def q_of(self, i):
        """The returned configuration of solves row i (numpy array; empty when none)."""
        self.require_version(2, "the returned configuration q")
        text = self.solves["q"].iat[i]
        return parse_q(text, f"{self.solves_path}:{self.solve_lines[i]}: column 'q'")

    def problem(self, family, problem):
        """The problems.jsonl record of (family, problem) as a dict (version 2)."""
        self.require_version(2, "problem records")
        idx = self._problem_index()
        try:
            return self.problems.iloc[idx[(family, int(problem))]].to_dict()
        except KeyError:
            raise ResultsError(f"{self.path / 'problems.jsonl'}: no problem {problem} of family '{family}'") from None

    def _problem_index(self):
        if not hasattr(self, "_pidx"):
            self._pidx = {(f, int(p)): i for i, (f, p) in
                          enumerate(zip(self.problems["family"], self.problems["problem"]))}
        return self._pidx


def input_paths(directory, solves_path=None):
    """The paths a reader of the run in `directory` reads (the directory and its files that
    exist), known before the run is read: what an output of a command over it must not replace
    (ikbench.safe_io)."""
    directory = Path(directory)
    names = ("run.json", *MANIFEST_FILES, *(n + GZIP_SUFFIX for n in MANIFEST_FILES), "solves.partial.csv")
    out = [directory] + ([solves_path] if solves_path is not None else [])
    return out + [directory / n for n in names if _exists(directory / n)]


def read_traces_bytes(path, data, cols, exact=True, with_lines=False):
    """traces.csv as a typed DataFrame, split and checked as the C++ readers do (exactly the
    format's columns with `exact`, else at least `cols`); with `with_lines`, also the file line
    of every row."""
    if exact:
        table = _Table(path, data, "traces.csv", expected=cols)
    else:
        table = _Table(path, data, "traces.csv", required=cols)
    df = table.frame()
    for c in ("family", "solver"):
        df[c] = df[c].astype(str)
    return (df, table.lines) if with_lines else df


def _manifest_mismatch(name, entry, data, content=None):
    """Why `data` (the file's bytes; `content` its decompressed content for a NAME.gz file) does
    not match run.json's manifest entry for file `name` (None if it does): bytes and hash are
    the file's, rows its content's."""
    if not isinstance(entry, dict):
        return f"run.json 'files.{name}' is not an object"
    if "bytes" in entry and entry["bytes"] != len(data):
        return f"{name} has {len(data)} bytes, run.json's manifest says {entry['bytes']}"
    rows = entry.get("rows")
    if rows is not None:
        # As the writer counts them: newlines, after the header's of a CSV file; 0 for a JSON document.
        newlines = (data if content is None else content).count(b"\n")
        plain = manifest_file_of(name) or name
        found = max(newlines - 1, 0) if plain.endswith(".csv") else newlines if plain.endswith(".jsonl") else 0
        if found != rows:
            return f"{name} has {found} rows, run.json's manifest says {rows}"
    h = entry.get("fnv1a64")
    if h is not None:
        got = fnv1a64_hex(data)
        if str(h).lower() != got:
            return f"{name} has FNV-1a 64 hash {got}, run.json's manifest says {h}"
    return None


# ---------------------------------------------------------------- run.json

def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _field_error(path, field, what, value=None, show=True):
    got = f", got {_clip(json.dumps(value))}" if show else ""
    return ResultsError(f"{path}: field '{field}': {what}{got}")


def _tolerances(meta, path, required):
    """(position [m], orientation [rad]) of run.json's suite.options: finite numbers > 0. A
    version-1 run.json without them reads the defaults (1e-5, 1e-5)."""
    suite = meta.get("suite")
    opts = suite.get("options") if isinstance(suite, dict) else None
    if opts is None and not required:
        return 1e-5, 1e-5
    if not isinstance(opts, dict):
        raise _field_error(path, "suite.options", "expected an object with the solve options", opts)
    out = []
    for key in ("position_tolerance_m", "orientation_tolerance_rad"):
        if key not in opts and not required:
            out.append(1e-5)
            continue
        v = opts.get(key)
        if not _number(v) or not math.isfinite(v) or not v > 0:
            raise _field_error(path, f"suite.options.{key}", "expected a finite number > 0", v, key in opts)
        out.append(float(v))
    return tuple(out)


def _check_run_json(meta, path):
    """The fields of a version-2 run.json that readers rely on: their types and ranges (the same
    checks as the C++ readers). Returns ({family: problems}, {solver specs})."""
    if "complete" in meta and not isinstance(meta["complete"], bool):
        raise _field_error(path, "complete", "expected true or false", meta["complete"])
    fams = meta.get("families")
    if not isinstance(fams, list):
        raise _field_error(path, "families", "expected an array of families", fams, "families" in meta)
    problems = {}
    for i, f in enumerate(fams):
        name = f.get("name") if isinstance(f, dict) else None
        if not isinstance(name, str):
            raise _field_error(path, f"families[{i}].name", "expected a string", name)
        if name in problems:
            raise _field_error(path, f"families[{i}].name", f"a second family named '{_clip(name)}'", show=False)
        n = f.get("problems")
        if not _int(n) or not 0 <= n <= 1_000_000_000:
            raise _field_error(path, f"families[{i}].problems", "expected an integer in [0, 1e9]", n)
        problems[name] = n
    solvers = meta.get("solvers")
    if not isinstance(solvers, list):
        raise _field_error(path, "solvers", "expected an array of solvers", solvers, "solvers" in meta)
    specs = set()
    for i, s in enumerate(solvers):
        spec = s.get("spec") if isinstance(s, dict) else None
        if not isinstance(spec, str):
            raise _field_error(path, f"solvers[{i}].spec", "expected a string", spec)
        if spec in specs:
            raise _field_error(path, f"solvers[{i}].spec", f"a second solver '{_clip(spec)}'", show=False)
        specs.add(spec)
    _tolerances(meta, path, required=True)
    shard = meta.get("shard")
    if shard is not None:
        count = shard.get("count") if isinstance(shard, dict) else None
        if not _int(count) or not 1 <= count <= 100_000:
            raise _field_error(path, "shard.count", "expected an integer in [1, 100000]", count)
        index = shard.get("index")
        if not _int(index) or not 1 <= index <= count:
            raise _field_error(path, "shard.index", f"expected an integer in [1, {count}]", index)
    if "trace" in meta and not isinstance(meta["trace"], dict):
        raise _field_error(path, "trace", "expected an object", meta["trace"])
    return problems, specs


def _check_manifest_field(files, path):
    """run.json's "files": an object whose names are the run's own files (plain names of
    MANIFEST_FILES: never a path, so a reader never opens a file the manifest makes up), each
    with rows, bytes and fnv1a64."""
    if not isinstance(files, dict):
        raise _field_error(path, "files", "expected an object, the manifest {name: {rows, bytes, fnv1a64}}",
                           files)
    listed = set()
    for name, entry in files.items():
        plain = manifest_file_of(name)
        if plain is None:
            raise ResultsError(f"{path}: field 'files': names '{_clip(name)}', which is not a file of a run "
                               f"(expected exactly: {', '.join(MANIFEST_FILES)}; each may be compressed, NAME.gz)")
        if plain in listed:
            raise ResultsError(f"{path}: field 'files': lists {plain} twice (plain and compressed)")
        listed.add(plain)
        if not isinstance(entry, dict):
            raise _field_error(path, f"files.{name}", "expected an object {rows, bytes, fnv1a64}", entry)
        for key in ("rows", "bytes"):
            v = entry.get(key)
            if not _int(v) or v < 0:
                raise _field_error(path, f"files.{name}.{key}", "expected an integer >= 0", v, key in entry)
        h = entry.get("fnv1a64")
        if not isinstance(h, str):
            raise _field_error(path, f"files.{name}.fnv1a64", "expected 16 hexadecimal digits (a string)", h,
                               "fnv1a64" in entry)
    return files


def _check_keys(path, lines, df, fam_problems, specs, what):
    """Rows of a file of a version-2 run name a family and solver of run.json, and a problem
    below the family's count (the C++ readers key rows by them)."""
    if fam_problems is None or not len(df):
        return
    fam = df["family"]
    bad = ~fam.isin(list(fam_problems)).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ResultsError(f"{_where(path, lines[i], 'family')}: '{_clip(fam.iat[i])}' is not a family of run.json "
                           f"({what})")
    if specs is not None and "solver" in df:
        bad = ~df["solver"].isin(list(specs)).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ResultsError(f"{_where(path, lines[i], 'solver')}: '{_clip(df['solver'].iat[i])}' is not a solver "
                               f"spec of run.json ({what})")
    count = fam.map(fam_problems).to_numpy(dtype=np.int64)
    bad = df["problem"].to_numpy(dtype=np.int64) >= count
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ResultsError(f"{_where(path, lines[i], 'problem')}: {df['problem'].iat[i]} is not below run.json's "
                           f"count of problems of family '{_clip(fam.iat[i])}' ({count[i]})")


# ---------------------------------------------------------------- loading

def load(path, *, allow_incomplete=False, require_run_json=True):
    """Reads a results directory (or a solves.csv file: the other files are taken from its
    directory). Raises ResultsError on anything the format does not allow."""
    path = Path(path)
    if path.name.endswith((".csv", ".csv" + GZIP_SUFFIX)) and not path.is_dir():
        directory, solves_path = path.parent, path
    else:
        directory = path
        solves_path = run_file(path, "solves.csv") if path.is_dir() else path / "solves.csv"
    if not directory.exists():
        raise ResultsError(f"{solves_path}: no such file (expected a results directory written by `ikbench run`)")
    if not directory.is_dir():
        raise ResultsError(f"{path}: not a directory (expected a results directory written by `ikbench run`, "
                           "or its solves.csv)")
    issues, notes = [], []

    # run.json
    run_json = directory / "run.json"
    if run_json.exists() or run_json.is_symlink():
        meta, _ = read_json_file(run_json, "run.json", MAX_RUN_JSON_BYTES)
        if not isinstance(meta, dict):
            raise ResultsError(f"{run_json}:1: expected a JSON object")
    elif require_run_json:
        raise ResultsError(f"{run_json}: no such file (every results directory of `ikbench run` has one)")
    else:
        meta = {}
        notes.append("no run.json: read as format version 1 without run facts")
    rv = _read_version(meta, run_json)
    if meta and "format" not in meta and "format_version" not in meta:
        notes.append("run.json has no 'format': read as format version 1")
    _tolerances(meta, run_json, required=rv >= 2)

    # Completeness and the manifest (format version 2).
    manifest = {}
    fam_problems = specs = None
    if rv >= 2:
        fam_problems, specs = _check_run_json(meta, run_json)
        complete = meta.get("complete")
        if complete is not True:
            why = "run.json says \"complete\": " + json.dumps(complete)
            if meta.get("interrupted"):
                why += " and \"interrupted\": true (the run was stopped"
                prog = meta.get("progress")
                why += f"; progress: {_clip(json.dumps(prog))})" if prog is not None else ")"
            else:
                why += " (the run is still going on, or stopped before writing its last files)"
            issues.append(why)
        files = meta.get("files")
        if files is not None:
            manifest = _check_manifest_field(files, run_json)
        elif complete is True:
            issues.append("run.json has no 'files' manifest")
        for name, entry in manifest.items():
            p = directory / name
            try:
                size = stat_regular(p, f"{name}, a file of run.json's manifest").st_size
            except FileNotFoundError:
                issues.append(f"{name} is in run.json's manifest but not in the directory")
                continue
            if size != entry["bytes"]:
                issues.append(f"{name} has {size} bytes, run.json's manifest says {entry['bytes']}")
        if complete is True and files is not None:
            missing = [n for n in MANIFEST_FILES if n not in {manifest_file_of(k) for k in manifest}]
            if missing:
                issues.append(f"run.json's manifest does not list {', '.join(missing)} (a complete run's manifest "
                              f"lists exactly {', '.join(MANIFEST_FILES)})")
        if issues and not allow_incomplete:
            kind = "incomplete" if complete is not True else "mixed or modified"
            raise ResultsError(f"{directory}: {kind} run: " + "; ".join(issues) +
                               ". Refused: its figures would not describe one finished run "
                               "(pass allow_incomplete=True / --allow-incomplete to read it anyway)")

    def check_manifest(name, data, content=None):
        entry = manifest.get(name)
        if entry is None:
            return
        problem = _manifest_mismatch(name, entry, data, content)
        if problem and problem not in issues:
            if not allow_incomplete:
                raise ResultsError(f"{directory}: mixed or modified run: {problem}; the files of a run must be the "
                                   "ones its run.json lists (files of one run are never mixed with another's)")
            issues.append(problem)

    # solves.csv (or, for an incomplete run, the partial file written during the run)
    if not _exists(solves_path) and allow_incomplete and _exists(directory / "solves.partial.csv"):
        solves_path = directory / "solves.partial.csv"
        issues.append("solves.csv is missing: read solves.partial.csv (the solves finished so far)")
    raw, data = read_run_file(solves_path, "the solves.csv written by `ikbench run`")
    check_manifest(solves_path.name, raw, data)
    del raw
    if rv >= 2:
        table = _Table(solves_path, data, "solves.csv", expected=SOLVE_COLUMNS, optional=OPTIONAL_SOLVE_COLUMNS)
    else:
        table = _Table(solves_path, data, "solves.csv (format version 1)", required=LEADING_SOLVE_COLUMNS)
    del data
    known = [c for c in SOLVE_COLUMNS + OPTIONAL_SOLVE_COLUMNS if c in table.header]
    extra = [c for c in table.header if c not in known]
    solves = table.frame(known)
    for c in extra:  # format version 1: columns it does not know, kept as text
        solves[c] = table.columns[c]
    table.columns.clear()  # the text of the typed columns is not needed again
    _check_unique(table, solves, ["family", "problem", "solver"], "solve")
    suite_name = meta.get("suite", {}).get("name") if isinstance(meta.get("suite"), dict) else meta.get("suite")
    if isinstance(suite_name, str) and suite_name and len(solves):
        other = solves["suite"].map(trim) != suite_name
        if other.any():
            i = int(np.flatnonzero(other.to_numpy())[0])
            raise ResultsError(f"{solves_path}:{table.lines[i]}: column 'suite' is '{solves['suite'].iat[i]}', but "
                               f"{run_json} is suite '{suite_name}': files of different runs are mixed")
    if rv >= 2:
        _check_keys(solves_path, table.lines, solves, fam_problems, specs, "solves.csv")
        bad = (solves["q"].str.strip(" ") == "") & ~solves["status"].isin(NOT_ATTEMPTED)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ResultsError(f"{_where(solves_path, table.lines[i], 'q')}: empty, but status "
                               f"'{solves['status'].iat[i]}' returns a configuration (only unsupported and "
                               "invalid-input solves have none)")

    run = Run(directory, meta, rv, solves, table.lines, solves_path, notes=notes)
    run.issues = issues  # shared: the files read below add to it
    run._allow_incomplete = allow_incomplete
    run._manifest = manifest
    run._run_keys = (fam_problems, specs)
    run.traces_path = run_file(directory, "traces.csv")

    if rv >= 2:
        run.models = _load_models(run_file(directory, "models.json"), check_manifest, allow_incomplete, issues)
        run.problems, run.problem_lines = _load_problems(run_file(directory, "problems.jsonl"), check_manifest,
                                                         allow_incomplete, issues, run.models, fam_problems)
        if run.problems is not None and not allow_incomplete:
            _check_problems_complete(run, fam_problems)
        nq_of = _nq_of_problems(run)
        # The answers verify checks (attempted solves, every extra solution) must be configurations
        # of their model; an unsupported or invalid-input solve carries the start it was given.
        _check_configurations(solves_path, table.lines, solves["family"], solves["problem"], solves["q"], nq_of,
                              valid=~solves["status"].isin(NOT_ATTEMPTED).to_numpy())
        sp = run_file(directory, "solutions.csv")
        if _exists(sp):
            sraw, sdata = read_run_file(sp, "solutions.csv")
            check_manifest(sp.name, sraw, sdata)
            del sraw
            st = _Table(sp, sdata, "solutions.csv", expected=SOLUTION_COLUMNS)
            run.solutions = st.frame(SOLUTION_COLUMNS)
            st.columns.clear()
            del sdata
            _check_keys(sp, st.lines, run.solutions, fam_problems, specs, "solutions.csv")
            _check_unique(st, run.solutions, ["family", "problem", "solver", "solution"], "solution")
            empty = run.solutions["q"].astype(str).str.strip(" ") == ""
            if empty.any():
                i = int(np.flatnonzero(empty.to_numpy())[0])
                raise ResultsError(f"{_where(sp, st.lines[i], 'q')}: empty (expected a solution's configuration)")
            _check_configurations(sp, st.lines, run.solutions["family"], run.solutions["problem"],
                                  run.solutions["q"], nq_of, valid=np.ones(len(run.solutions), dtype=bool))
        elif allow_incomplete:
            run.solutions = pd.DataFrame({c: pd.Series(dtype=object) for c in SOLUTION_COLUMNS})
            issues.append("solutions.csv is missing")
        else:
            raise ResultsError(f"{sp}: no such file (format version 2 writes it, header only when no solve "
                               "returned several solutions)")
        if run.problems is not None and len(solves):
            _check_problems_cover(run, table)
        shard = meta.get("shard")
        if not allow_incomplete and (shard is None or shard["count"] == 1):
            _check_solves_complete(run, table, fam_problems, specs)
    return run


def _check_problems_complete(run, fam_problems):
    """problems.jsonl holds every problem of run.json's families (its lines were checked to be
    within the counts and never twice), as `ikbench verify` requires."""
    expected = sum(fam_problems.values())
    if len(run.problems) != expected:
        have = set(zip(run.problems["family"], run.problems["problem"].astype(int)))
        missing = next(((f, k) for f, n in fam_problems.items() for k in range(n) if (f, k) not in have), None)
        what = f" (problem {missing[1]} of family '{_clip(missing[0])}' is missing)" if missing else ""
        raise ResultsError(f"{run.path / 'problems.jsonl'}: {len(run.problems)} problems, run.json's families have "
                           f"{expected}{what}")


def _check_solves_complete(run, table, fam_problems, specs):
    """A complete run that is not a shard (or is the only shard, 1 of 1) holds every solve: each
    problem of run.json's families with each solver (rows were checked to be within the counts and
    never twice)."""
    expected = sum(fam_problems.values()) * len(specs)
    if len(run.solves) != expected:
        raise ResultsError(f"{table.path}: {len(run.solves)} solves, run.json's {sum(fam_problems.values())} problems "
                           f"x {len(specs)} solvers make {expected} (a complete run that is not one of several "
                           "shards holds every solve)")


def _check_problems_cover(run, table):
    keys = set(zip(run.problems["family"], run.problems["problem"].astype(int)))
    for i, (f, p) in enumerate(zip(run.solves["family"], run.solves["problem"])):
        if (f, int(p)) not in keys:
            raise ResultsError(f"{table.path}:{table.lines[i]}: problem {p} of family '{f}' is not in "
                               f"{run.path / 'problems.jsonl'}: files of different runs are mixed")


def _load_models(path, check_manifest, allow_incomplete, issues):
    if not _exists(path) and allow_incomplete:
        issues.append("models.json is missing")
        return None
    raw, data = read_run_file(path, "models.json (format version 2)", MAX_MODELS_JSON_BYTES)
    check_manifest(path.name, raw, data)
    del raw
    _check_json_nesting(data, path)
    doc = _parse_json_text(_decode(data, path), path)
    del data
    if not isinstance(doc, dict) or not isinstance(doc.get("models"), list):
        raise ResultsError(f"{path}: expected an object with a list 'models'")
    models = {}
    for k, m in enumerate(doc["models"]):
        where = f"{path}: models[{k}]"
        validate_model(m, where)
        if m["id"] in models:
            raise ResultsError(f"{where}: field 'id': '{m['id']}' appears twice")
        validate_scene(m, where)
        models[m["id"]] = m
    return models


_PROBLEM_FIELDS = {"family": str, "problem": int, "model": str, "q0": list, "goals": list}


def _load_problems(path, check_manifest, allow_incomplete, issues, models, fam_problems=None):
    if not _exists(path) and allow_incomplete:
        issues.append("problems.jsonl is missing")
        return None, None
    raw, data = read_run_file(path, "problems.jsonl (format version 2)")
    check_manifest(path.name, raw, data)
    del raw
    _check_line_lengths(data, path)
    _check_json_nesting(data, path)
    text = _decode(data, path)
    del data
    recs, lines = [], []
    for ln, line in enumerate(split_lines(text), 1):
        r = _parse_json_text(line, path, ln)
        where = f"{path}:{ln}"
        if not isinstance(r, dict):
            raise ResultsError(f"{where}: expected a JSON object" + (" (a blank line)" if not line.strip() else ""))
        for k, kind in _PROBLEM_FIELDS.items():
            if not isinstance(r.get(k), kind) or isinstance(r.get(k), bool):
                raise ResultsError(f"{where}: field '{k}': expected {'a string' if kind is str else 'an integer' if kind is int else 'a list'}, "
                                   f"got {_clip(json.dumps(r.get(k)))}")
        if fam_problems is not None and r["family"] not in fam_problems:
            raise ResultsError(f"{where}: field 'family': '{_clip(r['family'])}' is not a family of run.json")
        if fam_problems is not None and not 0 <= r["problem"] < fam_problems[r["family"]]:
            raise ResultsError(f"{where}: field 'problem': {_clip(r['problem'])} is outside [0, "
                               f"{fam_problems[r['family']]}) (run.json's count for family '{_clip(r['family'])}')")
        if not 0 <= r["problem"] <= MAX_PROBLEM_INDEX:
            raise ResultsError(f"{where}: field 'problem': {_clip(r['problem'])} is outside [0, 2^31)")
        if models is not None:
            if r["model"] not in models:
                raise ResultsError(f"{where}: field 'model': unknown model id '{_clip(r['model'])}' (not in "
                                   "models.json)")
            validate_problem(r, where, models)
        recs.append(r)
        lines.append(ln)
    cols = ["family", "problem", "name", "model", "sequential", "q0", "goals"]
    df = pd.DataFrame({c: [r.get(c) for r in recs] for c in cols}) if recs else \
        pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    if len(df):
        df["problem"] = df["problem"].astype(np.int64)
        dup = df.duplicated(["family", "problem"]).to_numpy()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise ResultsError(f"{path}:{lines[i]}: duplicate problem {df['problem'].iat[i]} of family "
                               f"'{df['family'].iat[i]}'")
    return df, np.asarray(lines, dtype=np.int64)


def version_note(run, what):
    """A one-line note for output that shows less for a version-1 run."""
    if run.format_version >= 2:
        return None
    return f"{run.path} is format version 1: {what} needs version 2 and is not shown"


__all__ = ["load", "Run", "ResultsError", "SOLVE_COLUMNS", "SOLVE_COLUMNS_V1", "LEADING_SOLVE_COLUMNS",
           "QUALITY_COLUMNS", "OUTCOMES",
           "TRACE_COLUMNS", "TRACE_COLUMNS_V1", "SOLUTION_COLUMNS", "SUMMARY_COLUMNS", "STATUSES", "NOT_ATTEMPTED",
           "parse_q", "count_lines", "format_version"]
