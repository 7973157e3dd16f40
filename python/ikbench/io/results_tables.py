"""A run's CSV files as checked tables: the header against the format's columns, every cell against
its column's kind (exact floats kept as written), unique keys, and the configurations (q) of the
solves against their model's joint layout; every refusal names the file, line and column."""

import math
import numpy as np
import pandas as pd

from .results_schema import TOLERANCES, CsvLineError, ResultsError, cells_match, is_number, kind_of, parse_csv_line, split_lines, trim
from .results_files import _check_line_lengths, _clip, _decode, _where
from .results_format import JOINT_TYPES, OUTCOMES, STATUSES, _MAX_COUNT, _MAX_INDEX


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
    """A CSV file split as the C++ readers split it (ikbench.io.results_schema): header, columns of
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
