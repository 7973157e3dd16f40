"""Text for a terminal: its width, and tables that fit it without cutting a name.

    width = terminal_width()                      # the terminal's columns; 100 off a terminal
    text = fit_table(header, rows, width, keys=2) # python3-tabulate's 'simple' table, fitted

A table too wide for the width is laid out again, in the first of these that fits:

1. the table as it is;
2. wrapped into blocks of columns, each block repeating the key columns (the names that identify
   a row: family, solver), as wide data frames are printed; when the key columns take at most
   KEY_SHARE of the width (with names_first, layout 3 is tried before this one);
3. names above the figures: each row's key cells on a line of their own ("family | solver"),
   the other columns as one table below, indented;
4. records: each row's key cells on a line, then "column: value" pairs flowed over lines.

A name is never shortened. A name or value longer than a line is broken after one of
CONTINUE_AFTER (or at the width) with a backslash at the end of the broken line, as in a shell:
`unwrap(text)` joins such lines back.
"""

import re
import shutil
import sys

DEFAULT_WIDTH = 100       # columns when stdout is not a terminal (a pipe, a file, a test)
MIN_WIDTH = 30            # narrower terminals are laid out for this width
KEY_SHARE = 0.6           # the most of the width the repeated key columns of layout 2 may take
KEY_SEPARATOR = " | "     # between the key cells of a row on a line of their own
INDENT = "  "             # figures under their names (layouts 3 and 4)
PAIR_SEPARATOR = "   "    # between "column: value" pairs of a record
CONTINUE_AFTER = ":,/=-. "  # a long name is broken after one of these when it can be

_ANSI = re.compile(r"\033\[[0-9;]*m")


def terminal_width(stream=None):
    """The width text is laid out for: the terminal's columns (shutil.get_terminal_size, which
    also honours $COLUMNS) when `stream` (default stdout) is a terminal, else DEFAULT_WIDTH."""
    stream = sys.stdout if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return DEFAULT_WIDTH
    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def visible_len(text):
    """Length of text as a terminal shows it (ANSI colour codes take no column)."""
    return len(_ANSI.sub("", text))


def width_of(text):
    """The longest line of text, in visible columns."""
    return max((visible_len(line) for line in text.split("\n")), default=0)


def break_long(text, width, indent="    "):
    """Lines of at most `width` columns holding `text`: broken after the last of CONTINUE_AFTER
    that fits (else at the width), each broken line ending in a backslash, each continuation line
    starting with `indent`. unwrap() gives the text back."""
    width = max(width, len(indent) + 4)
    lines, rest, first = [], text, True
    while True:
        room = width - (0 if first else len(indent))
        if visible_len(rest) <= room:
            lines.append(("" if first else indent) + rest)
            return lines
        cut = room - 1                     # the backslash takes a column
        plain = _ANSI.sub("", rest) == rest
        best = max((i + 1 for i in range(1, cut) if rest[i] in CONTINUE_AFTER), default=0) if plain else 0
        if best < max(1, cut // 3):        # no break point in the last two thirds: cut at the width
            best = cut
        lines.append(("" if first else indent) + rest[:best] + "\\")
        rest, first = rest[best:], False


def unwrap(text):
    """Joins the lines break_long broke: a line ending in a backslash continues on the next, whose
    leading spaces are not part of the text."""
    out, pending = [], None
    for line in text.split("\n"):
        if pending is not None:
            line = pending + line.lstrip(" ")
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        pending = None
        out.append(line)
    if pending is not None:
        out.append(pending)
    return "\n".join(out)


def _flow(items, width, sep, first="", rest=""):
    """`items` laid greedily on lines of at most `width` columns, joined by `sep`; the first line
    starts with `first`, the others with `rest`; an item longer than a line is broken by
    break_long. The lines, none empty."""
    lines, line = [], ""
    for it in items:
        cand = (first if not lines else rest) + it if not line else line + sep + it
        if visible_len(cand) <= width:
            line = cand
            continue
        if line:
            lines.append(line)
        start = rest if lines else first
        if visible_len(start + it) <= width:
            line = start + it
        else:
            parts = break_long(start + it, width, indent=rest + "    ")
            lines += parts[:-1]
            line = parts[-1]
    if line:
        lines.append(line)
    return lines


def wrap_text(text, width, indent=""):
    """A paragraph wrapped at spaces to `width` columns (continuation lines start with `indent`);
    a word longer than a line is broken by break_long, so no line is longer than `width`."""
    return _flow(text.split(" "), width, " ", rest=indent) or [""]


def _simple(header, rows, align, sep_before=()):
    """python3-tabulate's 'simple' table; a blank line before each row index in sep_before."""
    from tabulate import tabulate

    text = tabulate(rows, headers=header, tablefmt="simple", colalign=align, disable_numparse=True)
    lines = [line.rstrip() for line in text.split("\n")]
    if not sep_before:
        return "\n".join(lines)
    out = lines[:2]
    for i, line in enumerate(lines[2:]):
        if i in sep_before:
            out.append("")
        out.append(line)
    return "\n".join(out)


def _col_width(header, rows, j):
    return max([visible_len(header[j])] + [visible_len(r[j]) for r in rows])


def _blocks(header, rows, align, keys, width, sep_before):
    """Layout 2: blocks of columns that fit, each with the key columns first; None when the key
    columns take more than KEY_SHARE of the width or a column does not fit beside them."""
    key_w = sum(_col_width(header, rows, j) for j in range(keys)) + 2 * max(keys - 1, 0)
    if keys == 0 or key_w > KEY_SHARE * width:
        return None
    groups, cur, used = [], [], key_w
    for j in range(keys, len(header)):
        w = _col_width(header, rows, j) + 2
        if key_w + w > width:
            return None
        if used + w > width and cur:
            groups.append(cur)
            cur, used = [], key_w
        cur.append(j)
        used += w
    if cur:
        groups.append(cur)
    parts = []
    for g in groups:
        cols = list(range(keys)) + g
        parts.append(_simple([header[j] for j in cols], [[r[j] for j in cols] for r in rows],
                             [align[j] for j in cols], sep_before))
    return "\n\n".join(parts)


def _names_line(cells, width):
    return break_long(KEY_SEPARATOR.join(cells), width)


def _names_above(header, rows, align, keys, width):
    """Layout 3: each row's key cells on a line, the other columns as one table below them; None
    when that table does not fit."""
    body_h = header[keys:]
    body = [r[keys:] for r in rows]
    if not body_h:
        return None
    table = _simple(body_h, body, align[keys:]).split("\n")
    if width_of("\n".join(table)) + len(INDENT) > width:
        return None
    out = _names_line(header[:keys], width) + [INDENT + table[0], INDENT + table[1]]
    for r, line in zip(rows, table[2:]):
        out += _names_line(r[:keys], width) + [INDENT + line]
    return "\n".join(out)


def _records(header, rows, keys, width):
    """Layout 4: each row's key cells on a line, then "column: value" pairs flowed over lines of
    at most `width` columns."""
    out = []
    for r in rows:
        out += _names_line(r[:keys], width) if keys else []
        pairs = [f"{h}: {v}" if v != "" else f"{h}: -" for h, v in zip(header[keys:], r[keys:])]
        out += _flow(pairs, width, PAIR_SEPARATOR, first=INDENT, rest=INDENT)
    return "\n".join(out)


def fit_table(header, rows, width=None, keys=1, align=None, sep_before=(), names_first=False):
    """A text table of `header` and `rows` (lists of str) in at most `width` columns (None: no
    limit), laid out as the module's docstring says; `keys`: how many leading columns name a row;
    `align`: tabulate's colalign (default: key columns left, the rest right); `sep_before`: row
    indexes with a blank line before them (layouts 1 and 2); `names_first`: try layout 3 before
    layout 2 (a row's figures are read together, as a comparison's cells are)."""
    header = [str(h) for h in header]
    rows = [[str(c) for c in r] for r in rows]
    align = list(align) if align is not None else ["left" if j < keys else "right" for j in range(len(header))]
    whole = _simple(header, rows, align, sep_before)
    if width is None or width_of(whole) <= width:
        return whole
    width = max(width, MIN_WIDTH)
    layouts = [lambda: _blocks(header, rows, align, keys, width, sep_before),
               lambda: _names_above(header, rows, align, keys, width)]
    for layout in reversed(layouts) if names_first else layouts:
        text = layout()
        if text is not None:
            return text
    return _records(header, rows, keys, width)


def wrap_lines(lines, width=None, indent="  "):
    """Each line of `lines` wrapped to `width` (None: as they are); blank lines kept."""
    if width is None:
        return list(lines)
    out = []
    for line in lines:
        out += wrap_text(line, width, indent) if line else [""]
    return out


def command_lines(command, width=None, indent="    "):
    """A shell command in lines of at most `width` columns (None: one line), broken at spaces with a
    backslash at the end of each broken line, so that the lines pasted into a shell are the
    command. A word longer than a line is left whole on its own line."""
    if width is None or len(command) <= width:
        return [command]
    words = command.split(" ")
    lines, line = [], words[0]
    for w in words[1:]:
        if len(line) + 1 + len(w) + 2 <= width:
            line += " " + w
        else:
            lines.append(line + " \\")
            line = indent + w
    lines.append(line)
    return lines
