"""The one number formatter of the package's text: every figure a console table, markdown, LaTeX,
the generated doc tables or tune.md shows is written by `number` (a value) or `interval` (a value
with its 95 % interval), in one of a few named styles.

    number(6.234, "fixed")                 '6.2'       (one decimal)
    number(123456.0, "time")               '1.23e+05'  (one decimal below 1e5, else 3 significant digits)
    number(0.935, "percent")               '93.5'      (a proportion in percent, one decimal)
    number(12345.6, "grouped")             '12,346'    (3 significant digits, thousands separated from 1000)
    number(3, "int"), number(2.5e-7, "sci"), number(0.0004, "p")      '3', '2.50e-07', '4e-04'
    number(1234.0, "compact"), number(0.87, "compact")   '1.2k', '0.87'  (at most 4 characters: a chart cell)
    interval(6.2, 5.9, 6.6, "time")        '6.2 [5.9, 6.6]'
    interval(0.935, 0.9, 0.96, "percent", unit="%")   '93.5% [90.0, 96.0]'

A value that is None, NaN or infinite is written `missing` (each output keeps its own mark: '-' on
the console, '--' in LaTeX, 'n/a' in tune.md, '' in the doc tables), an infinity as `infinite`
when one is given. `digits` changes the digits of the fixed, percent, sig and sci styles.
"""

import math
import numbers as _numbers

def _compact(v, d):
    """3 significant digits below 1000, then thousands (k) and millions (M) with one decimal below
    10 of them, none above."""
    for scale, unit in ((1e6, "M"), (1e3, "k")):
        if abs(v) >= scale * 0.9995:
            x = v / scale
            return f"{x:.1f}{unit}" if abs(x) < 9.95 else f"{x:.0f}{unit}"
    return f"{v:.{d}g}"


# style -> (digits by default, writer of a finite value)
_STYLES = {
    "fixed": (1, lambda v, d: f"{v:.{d}f}"),
    "time": (1, lambda v, d: f"{v:.{d}f}" if abs(v) < 1e5 else f"{v:.3g}"),
    "int": (0, lambda v, d: f"{v:.0f}"),
    "sci": (2, lambda v, d: f"{v:.{d}e}"),
    "sig": (3, lambda v, d: f"{v:.{d}g}"),
    "percent": (1, lambda v, d: f"{100 * v:.{d}f}"),
    "grouped": (3, lambda v, d: f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.{d}g}"),
    "p": (3, lambda v, d: f"{v:.{d}f}" if v >= 0.001 else f"{v:.0e}"),
    "compact": (3, _compact),
}
STYLES = tuple(_STYLES)


def is_finite(v):
    """A real number (not a bool) that is neither NaN nor infinite."""
    return (v is not None and isinstance(v, _numbers.Real) and not isinstance(v, bool)
            and math.isfinite(v))


def number(v, style="fixed", *, digits=None, missing="-", infinite=None, scale=1.0):
    """One value as text in `style` (see the module's text), multiplied by `scale` first."""
    if style not in _STYLES:
        raise ValueError(f"number style {style!r}: expected one of {', '.join(STYLES)}")
    if infinite is not None and isinstance(v, _numbers.Real) and not isinstance(v, bool) and math.isinf(v):
        return infinite if v > 0 else "-" + infinite
    if not is_finite(v):
        return missing
    default, write = _STYLES[style]
    return write(v * scale, default if digits is None else digits)


def interval(v, lo, hi, style="fixed", *, unit="", digits=None, missing="-", scale=1.0):
    """'v [lo, hi]' in `style` (`unit` written after v, e.g. '%'); v alone when the interval is
    not finite; `missing` when v is not."""
    if not is_finite(v):
        return missing
    text = number(v, style, digits=digits, scale=scale) + unit
    if is_finite(lo) and is_finite(hi):
        text += (f" [{number(lo, style, digits=digits, scale=scale)}, "
                 f"{number(hi, style, digits=digits, scale=scale)}]")
    return text
