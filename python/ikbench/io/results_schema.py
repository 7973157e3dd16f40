"""The shared facts of the results format and the grammar of its cells, as the C++ readers apply
them (benchmarks/harness/results_format.cpp, results_reader.cpp).

The facts (format version, files, columns and their kinds, statuses, outcomes, limits) come from
one file, python/ikbench/data/results_format.json; tests/python/test_results_schema.py checks that
the C++ constants hold the same. What a reader accepts is decided here once, so that the Python
library and the C++ harness accept and refuse the same directories:

* a CSV or JSON Lines file is split into lines at every '\\n' and nothing else (a '\\r' stays in
  the line: a file with CRLF line ends has a header that is not the format's); a blank line is a
  line (of one empty field), a last line without '\\n' is a line;
* a CSV line is split as RFC 4180 says within the line: a field that starts with '"' is quoted
  (a doubled quote inside stands for one; the closing quote must be followed by ',' or the end
  of the line), any other field runs to the next ','; a quoted field never spans lines;
* a cell is read without the spaces around it (spaces only: a tab or '\\r' is part of it) and
  must be of its column's kind (`column_kinds`); numbers have one syntax (NUMBER below).
"""

import json
import re
from pathlib import Path

import numpy as np

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "data" / "results_format.json"


def _load_schema():
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


SCHEMA = _load_schema()
LIMITS = SCHEMA["limits"]
TOLERANCES = SCHEMA["tolerances"]
COLUMN_KINDS = SCHEMA["column_kinds"]

# A number as the results files write it, the C++ readers' parseResultNumber: an optional sign,
# then nan, inf or infinity in any case, or decimal digits with an optional point and exponent.
# Atomic groups, so that a cell, a column or a line of 64 MiB is matched in linear time (and no
# possessive quantifiers: Python 3.11's re mismatches an optional group made possessive).
NUMBER = (r"[+-]?(?>[nN][aA][nN]|[iI][nN][fF](?>[iI][nN][iI][tT][yY])?"
          r"|(?>[0-9]+(?>\.[0-9]*)?|\.[0-9]+)(?>[eE][+-]?[0-9]+)?)")
_CELL = {
    "number": rf" *(?>{NUMBER}) *",
    "number_or_empty": rf" *(?>{NUMBER})? *",
    "count": rf" *(?>{NUMBER}) *",
    "configuration": rf" *(?>(?>{NUMBER})(?> +(?>{NUMBER}))*)? *",
    "index": r"[0-9]{1,10}",
    "seed": r" *[0-9]+ *",
    "flag": r" *[01] *",
    "flag_or_empty": r" *[01]? *",
}
_CELL["non_negative"] = _CELL["number"]
_CELL["non_negative_or_empty"] = _CELL["number_or_empty"]
_CELL_RE = {k: re.compile(rf"(?>{v})", re.ASCII) for k, v in _CELL.items()}
_COLUMN_RE = {k: re.compile(rf"(?:(?>{v})\n)*(?>{v})", re.ASCII) for k, v in _CELL.items()}
NUMBER_RE = re.compile(rf"(?>{NUMBER})", re.ASCII)


class ResultsError(Exception):
    """A results directory that cannot be read as the format says; the message names the file,
    the line and the column or field, and what was expected."""


def kind_of(column):
    """The kind of a CSV column (its name's kind in the schema; text for any other)."""
    return COLUMN_KINDS.get(column, "text")


def trim(cell):
    """A cell without the spaces around it (only spaces, as the C++ readers trim)."""
    return cell.strip(" ")


def is_number(text):
    """True if `text` (already trimmed) is a number of the format."""
    return NUMBER_RE.fullmatch(text) is not None


def cells_match(kind, cells):
    """A boolean array: which cells (strings without '\\n') are of the syntax of `kind`. Checked
    for the whole column in one match first (a column of a valid file costs one pass)."""
    n = len(cells)
    if n == 0 or kind not in _CELL_RE:
        return np.ones(n, dtype=bool)
    if _COLUMN_RE[kind].fullmatch("\n".join(cells)) is not None:
        return np.ones(n, dtype=bool)
    rx = _CELL_RE[kind]
    return np.fromiter((rx.fullmatch(c) is not None for c in cells), dtype=bool, count=n)


class CsvLineError(ValueError):
    """A CSV line that does not split (an unterminated quoted field, text after a closing quote)."""


def parse_csv_line(line):
    """The fields of one CSV line, as the C++ readers' parseCsvLine splits it."""
    if '"' not in line:
        return line.split(",")
    out, i, n = [], 0, len(line)
    while True:
        if i < n and line[i] == '"':
            i += 1
            field = []
            while True:
                if i >= n:
                    raise CsvLineError("unterminated quoted field")
                c = line[i]
                if c == '"':
                    if i + 1 < n and line[i + 1] == '"':
                        field.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                field.append(c)
                i += 1
            if i < n and line[i] != ",":
                raise CsvLineError("text after a quoted field")
            out.append("".join(field))
        else:
            j = line.find(",", i)
            j = n if j < 0 else j
            out.append(line[i:j])
            i = j
        if i >= n:
            return out
        i += 1  # the comma


def split_lines(text):
    """The lines of a file's text as the C++ readers take them: split at '\\n' only; a last line
    without '\\n' counts, the empty text after a final '\\n' does not."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
