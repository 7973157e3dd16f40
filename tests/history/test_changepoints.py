"""Change-point detection on synthetic series (docs/history.md "Change points").

Noise model: run-to-run noise of a cell's median time on the 2-core shared VM the project is
measured on, as log ratios to the cell's median over repeated runs of one build, standardized per
cell by its robust spread, is fitted well by a Student t distribution with 2.5 degrees of freedom
(heavy tails: a preempted run lands far out). The series here draw log values from that t at a
scale of 1 % (a quieter quarter of cells); a series of 30 commits, seeded per series.
"""
import numpy as np
import pytest
from scipy import stats as sps

from ikbench.analysis import changepoints as cp

N, DF, SCALE, STEP = 30, 2.5, 0.01, 0.10


def series(seed, step_at=None, step=STEP, scale=SCALE, base=12.0):
    rng = np.random.default_rng(seed)
    noise = sps.t.rvs(DF, scale=scale, size=N, random_state=rng)
    tau = int(rng.integers(5, N - 4)) if step_at == "random" else step_at
    y = np.log(base) + noise
    if tau is not None:
        y[tau:] += np.log1p(step)
    return np.exp(y), tau


def test_planted_step_found_at_its_commit():
    found = 0
    for s in range(100):
        x, tau = series(1000 + s, "random")
        cps = cp.detect(x, key=f"s{s}")
        found += any(c.index == tau for c in cps)
    assert found >= 95, f"a planted 10 % step found at its commit in {found} of 100 series"


def test_planted_slowdown_and_speedup_reported_with_interval():
    for step in (0.10, -0.10):
        x, tau = series(7, 15, step=step)
        (c,) = cp.detect(x, key="k")
        assert c.index == 15 and c.scale == "log" and c.p_value < cp.ALPHA
        assert c.step_low < step < c.step_high, (c.step_low, step, c.step_high)
        assert abs(c.step - step) < 0.03


def test_pure_noise_few_false_alarms():
    alarms = sum(bool(cp.detect(series(5000 + s)[0], key=f"n{s}")) for s in range(100))
    assert alarms <= 5, f"{alarms} of 100 pure-noise series raised an alarm"


def test_deterministic_series_and_single_jump():
    assert cp.detect([7.0] * 30) == []
    x = [7.0] * 12 + [9.0] * 18
    (c,) = cp.detect(x)
    assert c.index == 12 and c.before == pytest.approx(7) and c.after == pytest.approx(9)


def test_two_steps_both_found():
    x, _ = series(11, None)
    x[10:] *= 1.2
    x[20:] *= 0.8
    assert [c.index for c in cp.detect(x, key="two")] == [10, 20]


def test_reproducible_for_a_key():
    x, _ = series(3, 14, step=0.04)
    a = cp.detect(x, key="same")
    b = cp.detect(x, key="same")
    assert [(c.index, c.p_value) for c in a] == [(c.index, c.p_value) for c in b]


def test_non_finite_points_are_skipped_with_original_indices():
    x, _ = series(21, 16)
    x[3] = np.nan
    (c,) = cp.detect(x, key="gap")
    assert c.index == 16


def test_success_rate_step_by_proportions():
    n = np.full(30, 200)
    k = np.r_[np.full(14, 190), np.full(16, 170)]       # 95 % -> 85 %
    (c,) = cp.detect_proportions(k, n)
    assert c.index == 14 and c.scale == "proportion" and c.p_value < 1e-6
    assert c.step == pytest.approx(-0.10)
    assert c.step_low < -0.10 < c.step_high < 0


def test_success_rate_binomial_noise_no_alarm():
    alarms = 0
    for s in range(100):
        rng = np.random.default_rng(9000 + s)
        n = np.full(30, 200)
        alarms += bool(cp.detect_proportions(rng.binomial(n, 0.9), n))
    assert alarms <= 5


def test_success_rate_planted_drop_found():
    found = 0
    for s in range(100):
        rng = np.random.default_rng(9500 + s)
        n = np.full(30, 200)
        tau = int(rng.integers(5, 26))
        p = np.where(np.arange(30) < tau, 0.9, 0.8)
        found += any(c.index == tau for c in cp.detect_proportions(rng.binomial(n, p), n))
    assert found >= 80, found


def test_hodges_lehmann_interval_covers():
    est, lo, hi = cp.hodges_lehmann([1, 2, 3, 4, 5], [11, 12, 13, 14, 15])
    assert est == 10 and lo <= 10 <= hi
    assert np.isnan(cp.hodges_lehmann([1, 2], [3, 4])[1])
