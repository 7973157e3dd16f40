"""The values of report.html's data (docs/report.md): its options and defaults (traced problems,
clip frames, curve digits), numbers rounded to the digits a curve is drawn with, NaN and
infinities as JSON can hold them, and the page's compact JSON."""

import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis import figures, stats


REPORT_FORMAT = "ikbench-report/1"
HEADLINE_PEER = figures.PEER          # the reference peer beside the leaders
PLAYGROUND_PAGE = "playground.html"   # linked from the report when it is beside it

DEFAULT_TRACE_PROBLEMS = 3           # as `ikbench run --trace-problems` (RunConfig::kDefaultTraceProblems)
DEFAULT_TRACE_HEAD = 40
DEFAULT_TRACE_POINTS = 40
DEFAULT_CLIP_FRAMES = 300
CURVE_DIGITS = 4                      # significant digits of drawn curve values (not of table figures)
CURVE_TIME_POINTS = 120               # points of the time grid of the convergence curves


def trace_problems_arg(text):
    """--trace-problems: 'all' (None) or a count >= 0."""
    import argparse

    if text == "all":
        return None
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected 'all' or a count >= 0")
    return v


def embedded_problems(run, traced_keys, k):
    """{family: set of problems} whose traces the viewer embeds: the first `k` (None: all) of each
    family's traced sample in its order (run.json trace.problems), or, for a run that does not
    list it, the `k` lowest traced problems. `traced_keys`: the (family, problem) pairs of
    traces.csv."""
    traced = {}
    for f, p in traced_keys:
        traced.setdefault(f, set()).add(int(p))
    listed = (run.meta.get("trace") or {}).get("problems") if isinstance(run.meta.get("trace"), dict) else None
    out = {}
    for f, have in traced.items():
        order = listed.get(f) if isinstance(listed, dict) and isinstance(listed.get(f), list) else None
        order = [int(p) for p in order if isinstance(p, int) and p in have] if order is not None else sorted(have)
        out[f] = set(order if k is None else order[:k])
    return out


@dataclass
class Options:
    trace_problems: int = DEFAULT_TRACE_PROBLEMS   # None: every traced problem
    trace_head: int = DEFAULT_TRACE_HEAD
    trace_points: int = DEFAULT_TRACE_POINTS
    clip_frames: int = DEFAULT_CLIP_FRAMES
    seed: int = stats.BOOTSTRAP_SEED
    resamples: int = stats.BOOTSTRAP_RESAMPLES


def sig(a, digits=CURVE_DIGITS):
    """Values rounded to `digits` significant digits (for drawing; non-finite values kept)."""
    a = np.array(a, dtype=float, copy=True)
    m = np.isfinite(a) & (a != 0)
    if m.any():
        e = (digits - 1 - np.floor(np.log10(np.abs(a[m])))).astype(int)
        v = a[m]
        pos = e >= 0
        out = np.empty_like(v)
        out[pos] = np.round(v[pos] * 10.0 ** e[pos]) / 10.0 ** e[pos]
        out[~pos] = np.round(v[~pos] / 10.0 ** (-e[~pos])) * 10.0 ** (-e[~pos])
        a[m] = out
    return a


def clean(x):
    """JSON values: numpy scalars and arrays to Python, nan to null, +-inf to +-1e999 (which
    JSON.parse reads as Infinity)."""
    if isinstance(x, dict):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f":
            if np.isfinite(x).all():
                return x.tolist()
            o = x.astype(object)
            o[np.isnan(x)] = None
            o[x == np.inf] = _INF
            o[x == -np.inf] = _NEG_INF
            return o.tolist()
        if x.dtype.kind in "iub":
            return x.tolist()
        return clean(x.tolist())
    if isinstance(x, (list, tuple)):
        if x and all(type(v) is float for v in x):
            return x if all(map(math.isfinite, x)) else [_num(v) for v in x]
        return [clean(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return _num(float(x))
    if x is None or isinstance(x, str):
        return x
    if x is pd.NA:
        return None
    return str(x)


_INF = "\u0000inf\u0000"
_NEG_INF = "\u0000-inf\u0000"


def _num(v):
    if v != v:
        return None
    if v == math.inf:
        return _INF      # written as 1e999 by to_json
    if v == -math.inf:
        return _NEG_INF  # -1e999
    return v


def _json_one(obj):
    text = json.dumps(clean(obj), separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    text = text.replace(json.dumps(_INF), "1e999").replace(json.dumps(_NEG_INF), "-1e999")
    return text.replace("</", "<\\/").replace("<!--", "\\u003c!--")


def _json_pieces(obj, depth=0):
    """The JSON text of `obj` in pieces: the large dicts of the page's data (sections, families)
    are encoded member by member, so that only one member's clean() copy exists at a time."""
    if isinstance(obj, dict) and depth < 4 and len(obj) > 1:
        yield "{"
        for i, (k, v) in enumerate(obj.items()):
            yield ("," if i else "") + _json_one(str(k)) + ":"
            yield from _json_pieces(v, depth + 1)
        yield "}"
    else:
        yield _json_one(obj)


def to_json(obj):
    """Compact JSON of clean(obj); infinities as 1e999 / -1e999, safe inside <script> (no '</')."""
    return "".join(_json_pieces(obj))
