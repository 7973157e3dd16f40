"""The one number formatter (ikbench.render.numbers): each style, the missing and infinite marks,
intervals, and the wrappers of the console tables, LaTeX and the doc tables that write through it."""

import math

import numpy as np
import pytest

from ikbench.render import doctables, latex, tables
from ikbench.render.numbers import interval, is_finite, number


@pytest.mark.parametrize("v,style,text", [
    (6.234, "fixed", "6.2"), (99999.94, "time", "99999.9"), (123456.0, "time", "1.23e+05"),
    (0.935, "percent", "93.5"), (12345.6, "grouped", "12,346"), (0.0123, "grouped", "0.0123"),
    (3, "int", "3"), (2.5e-7, "sci", "2.50e-07"), (0.0004, "p", "4e-04"), (0.25, "p", "0.250"),
    (np.float64(1.5), "fixed", "1.5"), (np.int64(7), "int", "7"), (1 / 3, "sig", "0.333"),
    (0.791, "compact", "0.791"), (456.2, "compact", "456"), (1234.0, "compact", "1.2k"),
    (9960.0, "compact", "10k"), (35400.0, "compact", "35k"), (1.5e6, "compact", "1.5M"),
])
def test_each_style(v, style, text):
    assert number(v, style) == text


def test_missing_and_infinite_values_take_the_outputs_mark():
    for v in (None, math.nan, np.nan, math.inf, True, "1.0"):
        assert number(v, "fixed", missing="--") == "--", v
    assert number(math.inf, "time", infinite="inf") == "inf"
    assert number(-math.inf, "time", infinite="inf") == "-inf"
    assert not is_finite(False) and is_finite(0) and not is_finite(np.inf)


def test_digits_and_scale():
    assert number(0.98765, "percent", digits=2) == "98.77"
    assert number(0.5, "fixed", scale=100, digits=0) == "50"
    assert number(1 / 3, "sig", digits=6) == "0.333333"


def test_interval_drops_a_non_finite_interval_and_keeps_the_unit_after_the_value():
    assert interval(6.2, 5.9, 6.6, "time") == "6.2 [5.9, 6.6]"
    assert interval(6.2, math.nan, 6.6, "time") == "6.2"
    assert interval(None, 1, 2, "time", missing="n/a") == "n/a"
    assert interval(0.935, 0.9, 0.96, "percent", unit=" %") == "93.5 % [90.0, 96.0]"


def test_an_unknown_style_is_refused_by_name():
    with pytest.raises(ValueError, match="'pct'.*expected one of"):
        number(1.0, "pct")


def test_the_outputs_write_through_it():
    assert tables.fmt_num(math.inf, "time") == "inf" and tables.fmt_num(math.nan, "int") == "-"
    assert tables.fmt_success(0.935, 0.901, 0.958) == "93.5% [90.1, 95.8]"
    assert tables.fmt_success(None, 0.1, 0.2) == tables.NA
    assert latex.fmt_interval(0.985, 0.971, 0.993, scale=100) == "98.5 [97.1, 99.3]"
    assert latex.fmt_value(math.nan) == "--"
    point = {"figure": "success_rate", "value": 0.5, "ci_low": 0.4, "ci_high": 0.6}
    assert doctables.fmt(point) == "50.0 % [40.0, 60.0]"
    assert doctables.fmt({"figure": "time_us_median", "value": 1234.5, "ci_low": 1200.0, "ci_high": None}) == "1,234"
