"""Bounded reads of a run's files: regular files only, sizes and gzip expansion capped, line lengths
and JSON nesting checked before parsing, every refusal a ResultsError naming the file (the limits
of ikbench.io.results_format)."""

import json
import math
import os
import re
import stat
import zlib
from pathlib import Path
import numpy as np

from .results_schema import ResultsError
from .results_format import GZIP_FLOOR_BYTES, GZIP_SUFFIX, MANIFEST_FILES, MAX_GZIP_RATIO, MAX_JSON_NESTING, MAX_LINE_BYTES, MAX_RUN_JSON_BYTES


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


def _parse_json_text(text, path, line=None, undefined_numbers=False):
    """JSON text -> value; ResultsError naming the file (and line) for malformed JSON, nesting
    deeper than MAX_JSON_NESTING, NaN/Infinity (not JSON; None with `undefined_numbers`) and
    integers Python will not read."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    constant = (lambda name: None) if undefined_numbers else _refuse_constant
    try:
        return json.loads(text, parse_constant=constant, parse_int=_parse_int, parse_float=_parse_float)
    except json.JSONDecodeError as e:
        ln = e.lineno if line is None else line
        raise ResultsError(f"{path}:{ln}: malformed JSON: {e.msg} (column {e.colno})") from None
    except RecursionError:
        raise ResultsError(f"{where}: JSON nested deeper than {MAX_JSON_NESTING} levels (arrays and objects)") from None
    except ValueError as e:  # NaN, Infinity, a number beyond a double's range
        raise ResultsError(f"{where}: malformed JSON: {e}") from None


def read_json_file(path, what, max_bytes=MAX_RUN_JSON_BYTES, undefined_numbers=False):
    """(value, bytes) of a JSON file. With `undefined_numbers` the tokens NaN, Infinity and -Infinity,
    which Google Benchmark writes for a statistic with no value (the coefficient of variation of a
    counter whose mean is 0), read as None: no value; otherwise they are malformed JSON."""
    data = _read_bytes(path, what, max_bytes)
    _check_json_nesting(data, path)
    return _parse_json_text(_decode(data, path), path, undefined_numbers=undefined_numbers), data


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


def _where(path, line, column):
    return f"{path}:{line}: column '{column}'"


def _clip(text, n=60):
    text = str(text)
    return text if len(text) <= n else text[:n] + f"... ({len(text)} characters)"
