"""Statistics behind the figures (definitions in docs/analysis.md).

* quantiles: linear interpolation between order statistics (Hyndman & Fan type 7, numpy's
  default), computed for many groups at once by `group_quantiles`;
* `wilson_interval`: the Wilson score interval of a binomial proportion (scipy.stats.binomtest);
* `bootstrap_intervals`: percentile bootstrap intervals for many samples at once, equal to
  scipy.stats.bootstrap's with a fixed seed;
* `two_proportion_test` (Fisher's exact test) and `mann_whitney` (Mann-Whitney U) for comparisons.
"""

import math

import numpy as np

BOOTSTRAP_SEED = 20240601
BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


def quantile(sorted_values, p):
    """Quantile of an ascending sequence, linear interpolation between order statistics:
    h = (n-1) p, x[floor h] + frac(h) (x[floor h + 1] - x[floor h]); None when empty. Equal
    neighbours (also +inf, +inf) give that value, never nan."""
    n = len(sorted_values)
    if n == 0:
        return None
    h = (n - 1) * p
    lo = math.floor(h)
    hi = min(lo + 1, n - 1)
    a, b = sorted_values[lo], sorted_values[hi]
    if h == lo or a == b:
        return a
    return a + (h - lo) * (b - a)


def group_quantiles(values, codes, ngroups, ps):
    """Quantiles of `values` per group (codes 0..ngroups-1), for each p in `ps`, by the formula
    of `quantile`. NaN values must be removed (or replaced) before. Returns an array of shape
    (len(ps), ngroups), nan for an empty group."""
    values = np.asarray(values, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    order = np.lexsort((values, codes))
    v, c = values[order], codes[order]
    counts = np.bincount(c, minlength=ngroups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    out = np.full((len(ps), ngroups), np.nan)
    has = counts > 0
    for k, p in enumerate(ps):
        h = (counts[has] - 1) * p
        lo = np.floor(h).astype(np.int64)
        hi = np.minimum(lo + 1, counts[has] - 1)
        a = v[starts[has] + lo]
        b = v[starts[has] + hi]
        frac = h - lo
        with np.errstate(invalid="ignore"):
            interp = a + frac * (b - a)
        out[k, has] = np.where((frac == 0) | (a == b), a, interp)
    return out


def wilson_interval(successes, n, confidence=CONFIDENCE):
    """Wilson score interval (low, high) of successes / n; (nan, nan) when n is 0."""
    from scipy.stats import binomtest

    if n <= 0:
        return math.nan, math.nan
    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def wilson_intervals(successes, ns, confidence=CONFIDENCE):
    lows, highs = [], []
    for k, n in zip(successes, ns):
        lo, hi = wilson_interval(k, n, confidence)
        lows.append(lo)
        highs.append(hi)
    return np.array(lows, dtype=float), np.array(highs, dtype=float)


def _median(x, axis=-1):
    return np.median(x, axis=axis)


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


STATISTICS = {"median": _median, "mean": _mean}
_ROWS_PER_DRAW = 256  # resamples drawn at once (the stream is the same as one draw of all)


def bootstrap_intervals(samples, statistic, *, seed=BOOTSTRAP_SEED, n_resamples=BOOTSTRAP_RESAMPLES,
                        confidence=CONFIDENCE):
    """Percentile bootstrap intervals of `statistic` ('median', 'mean' or a vectorised callable
    f(x, axis)) for each sample in `samples` (a list of 1-d arrays). Returns (low, high) arrays;
    nan for samples of fewer than 2 values.

    The interval is the one scipy.stats.bootstrap(method="percentile", n_resamples,
    random_state=numpy.random.default_rng(seed)) gives for the sample in ascending order (the
    order of a sample does not change its bootstrap distribution): resample i draws n indices with
    rng.integers(0, n, (n_resamples, n)), the bootstrap distribution is the statistic of each
    resample and the interval its (1 - confidence)/2 and (1 + confidence)/2 percentiles
    (numpy.percentile, linear). The indices come from a fresh default_rng(seed) for each sample
    size, so a sample's interval depends only on its values, the seed and the number of
    resamples: the same files give the same figures, whatever else is in the run.

    For the median and the mean the resamples are not gathered: all samples of one size share
    the drawn indices, so per resample the counts of each index suffice. The mean of a resample
    is counts @ values / n; its median is an order statistic of the sorted values, at the rank
    where the cumulative counts pass the middle (the average of the two middle ones for even n,
    as numpy.median). Other statistics go through scipy.stats.bootstrap (vectorised)."""
    low = np.full(len(samples), np.nan)
    high = np.full(len(samples), np.nan)
    by_size = {}
    for i, smp in enumerate(samples):
        if len(smp) >= 2:
            by_size.setdefault(len(smp), []).append(i)
    q = [100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2]
    for n, idx in sorted(by_size.items()):
        data = np.sort(np.stack([np.asarray(samples[i], dtype=float) for i in idx]), axis=1)
        if statistic in ("median", "mean"):
            theta = _resampled_statistic(data, statistic, n, seed, n_resamples)
            lo, hi = np.percentile(theta, q, axis=-1)
        else:
            from scipy.stats import bootstrap

            stat = STATISTICS.get(statistic, statistic)
            res = bootstrap((data,), stat, n_resamples=n_resamples, vectorized=True, axis=-1,
                            confidence_level=confidence, method="percentile",
                            random_state=np.random.default_rng(seed))
            lo, hi = res.confidence_interval.low, res.confidence_interval.high
        low[idx] = lo
        high[idx] = hi
    return low, high


def _resampled_statistic(data, statistic, n, seed, n_resamples):
    """The statistic of every resample of every row of `data` (m, n): an (m, n_resamples) array."""
    rng = np.random.default_rng(seed)
    out = np.empty((data.shape[0], n_resamples))
    ys = np.sort(data, axis=1)
    for start in range(0, n_resamples, _ROWS_PER_DRAW):
        rows = min(_ROWS_PER_DRAW, n_resamples - start)
        ind = rng.integers(0, n, (rows, n))
        counts = np.bincount((ind + n * np.arange(rows)[:, None]).ravel(), minlength=rows * n)
        counts = counts.reshape(rows, n)
        if statistic == "mean":
            out[:, start:start + rows] = (counts @ ys.T).T / n
            continue
        cum = np.cumsum(counts, axis=1)
        k_hi = n // 2                      # 0-based ranks of the middle order statistics
        r_hi = (cum <= k_hi).sum(axis=1)   # index (in sorted order) of the k-th smallest draw
        if n % 2:
            out[:, start:start + rows] = ys[:, r_hi]
        else:
            r_lo = (cum <= k_hi - 1).sum(axis=1)
            out[:, start:start + rows] = (ys[:, r_lo] + ys[:, r_hi]) / 2
    return out


def two_proportion_test(k1, n1, k2, n2):
    """Two-sided p-value of Fisher's exact test that k1/n1 and k2/n2 come from one proportion."""
    from scipy.stats import fisher_exact

    if n1 <= 0 or n2 <= 0:
        return math.nan
    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative="two-sided")[1])


def mann_whitney(a, b):
    """(p-value, probability that a value of b is below one of a, ties counted half) of the
    two-sided Mann-Whitney U test; (nan, nan) when either sample is empty."""
    from scipy.stats import mannwhitneyu

    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if len(a) == 0 or len(b) == 0:
        return math.nan, math.nan
    res = mannwhitneyu(a, b, alternative="two-sided", method="auto")
    # U of a: pairs (x in a, y in b) with x > y, plus half the ties.
    return float(res.pvalue), float(res.statistic) / (len(a) * len(b))


# Tukey's fences (Tukey 1977, "Exploratory Data Analysis"), as Criterion.rs classifies its
# samples: with the quartiles Q1, Q3 and IQR = Q3 - Q1, a value beyond Q1 - 1.5 IQR or Q3 + 1.5
# IQR is an outlier, *mild* up to 3 IQR from its quartile and *severe* beyond.
MILD_FENCE = 1.5
SEVERE_FENCE = 3.0


def tukey_outliers(sample):
    """(mild, severe) counts of Tukey outliers of a sample (both tails; quartiles by `quantile`).
    A value exactly on a fence is not beyond it. (0, 0) for an empty sample."""
    x = np.sort(np.asarray(sample, dtype=float))
    m, s = group_tukey_outliers(x, np.zeros(len(x), dtype=np.int64), 1)
    return int(m[0]), int(s[0])


def group_tukey_outliers(values, codes, ngroups):
    """Tukey outlier counts per group (codes 0..ngroups-1): two integer arrays (mild, severe).
    Mild: beyond 1.5 IQR from its quartile but not beyond 3 IQR; severe: beyond 3 IQR."""
    values = np.asarray(values, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    q1, q3 = group_quantiles(values, codes, ngroups, [0.25, 0.75])
    if len(values) == 0:
        return np.zeros(ngroups, dtype=np.int64), np.zeros(ngroups, dtype=np.int64)
    a, b, v = q1[codes], q3[codes], values
    iqr = b - a
    with np.errstate(invalid="ignore"):
        beyond_mild = (v < a - MILD_FENCE * iqr) | (v > b + MILD_FENCE * iqr)
        beyond_severe = (v < a - SEVERE_FENCE * iqr) | (v > b + SEVERE_FENCE * iqr)
    severe = np.bincount(codes[beyond_severe], minlength=ngroups)
    mild = np.bincount(codes[beyond_mild & ~beyond_severe], minlength=ngroups)
    return mild.astype(np.int64), severe.astype(np.int64)


def not_worse_in_success(k_leader, n_leader, k, n, alpha):
    """(tied, p): whether k/n is not significantly below the leader's k_leader/n_leader by
    Fisher's exact test (two-sided, `two_proportion_test`) at `alpha`. A rate at or above the
    leader's is never worse."""
    if n <= 0 or n_leader <= 0:
        return False, math.nan
    p = two_proportion_test(k_leader, n_leader, k, n)
    return bool(k / n >= k_leader / n_leader or not (p < alpha)), p


def not_slower(leader_times, times, alpha):
    """(tied, p): whether `times` are not significantly slower than `leader_times` by the
    two-sided Mann-Whitney U test (`mann_whitney`) at `alpha`: either the test finds no
    difference, or a solve of `times` tends to be faster. Two samples of one equal value are
    tied; an empty sample is not."""
    a = np.asarray(leader_times, dtype=float)
    b = np.asarray(times, dtype=float)
    if len(a) == 0 or len(b) == 0:
        return False, math.nan
    if np.all(a == a[0]) and np.all(b == a[0]):
        return True, 1.0
    p, leader_above = mann_whitney(a, b)
    return bool(leader_above >= 0.5 or not (p < alpha)), p
