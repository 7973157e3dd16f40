"""argparse types of the history's command lines: numbers refused with their range, never a traceback."""

import argparse
import math

INT32 = (1 << 31) - 1


def int_in(lo, hi):
    """An argparse type: an integer from lo to hi (a message naming the range otherwise)."""
    def parse(text):
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected an integer from {lo} to {hi}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{v}: expected an integer from {lo} to {hi}")
        return v
    parse.__name__ = "integer"
    return parse


def seconds(text):
    """An argparse type: a finite number of seconds above 0."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of seconds > 0")
    return v


__all__ = ["INT32", "int_in", "seconds"]
