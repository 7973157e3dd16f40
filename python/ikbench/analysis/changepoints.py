"""Change points: the commits where a figure stepped (docs/history.md "Change points").

    cps = detect(values)                                 # a series of one figure, in commit order
    cps = detect_proportions(successes, solves)          # a success rate (counts, not times)

Measured figures (times, iterations, evaluations, throughput, Google Benchmark times) go through
**E-Divisive means** (Matteson and James 2014, "A nonparametric approach for multiple change point
analysis of multivariate data", JASA 109(505)), as MongoDB's performance CI (Daly et al. 2020,
"The use of change point detection to identify software performance regressions in a continuous
integration system", ICPE) and Apache Otava use it, by binary segmentation: in a segment, the
split tau and a right end kappa maximise the scaled energy divergence of X = x[:tau] and
Y = x[tau:kappa] (m and k points)

    Q = m k / (m + k) * (2/(m k) sum_{i in X, j in Y} |x_i - x_j|
                         - 1/C(m,2) sum_{i<j in X} |x_i - x_j| - 1/C(k,2) sum_{i<j in Y} |x_i - x_j|)

(alpha = 1), and is kept when a permutation test finds it significant: p = (1 + #{permutations
of the segment whose largest Q is >= the observed one}) / (1 + permutations), kept when
p < `alpha` (0.01 by default). The permutations come from a generator seeded by the series key
and the segment, so the same store gives the same answer. Both sides of a kept split are searched
again. Positive figures are compared on a log scale, so that a step is a ratio (a 10 % slowdown
is the same step at 5 us as at 5 ms); E-Divisive with alpha = 1 only needs a first moment, which
suits timing noise with heavy tails (a preempted run is far out, never far in).

The size of a step is the Hodges-Lehmann estimate of the shift between the segments before and
after it (the median of all differences after - before) with its distribution-free interval from
the Mann-Whitney distribution (Lehmann 1963; normal approximation of U), reported as a ratio on
the log scale (`step` = exp(shift) - 1, "+10.0 %") and as a difference otherwise.

Success rates are counts: a split is chosen by the binomial likelihood ratio of the pooled
successes and solves before and after, its p-value is Fisher's exact test (two-sided) on that
2 x 2 table times the number of candidate splits (Bonferroni), and the step is the difference
of the two proportions with Newcombe's hybrid score interval (method 10 of Newcombe 1998).

How many commits a verdict needs (`min_commits`): a permutation test of n points cannot give a
p-value below that of the most extreme arrangement. For a step with t points before it and
n - t after, every point after above every point before, the permutations with as large a
divergence are those that keep the two groups apart, before/after or after/before:
2 t! (n - t)! of the n!, so the exact p-value is at least 2 / C(n, t), smallest at t = n/2. The
test estimates it from `permutations` draws: p = (1 + e) / (1 + permutations) with e ~
Binomial(permutations, 2 / C(n, n/2)), and a step is kept when p < alpha. `min_commits` is the
smallest n for which that happens with probability `power` (0.95) for the clearest possible step
in the middle of the series: 12 commits for alpha = 0.01 and 499 permutations (2 / C(12, 6) =
0.0022; 11 commits would find it 83 % of the time, 10 commits 44 %). A step nearer an end
needs more: with 12 commits one after the 4th is found 85 % of the time, one after the 3rd
a third of the time. Success rates need MIN_SIZE points on either side (6 commits): Fisher's test
on summed counts reaches any significance with enough solves.
"""

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

ALPHA = 0.01          # significance of a kept split
PERMUTATIONS = 499    # permutation test of a split: p-values down to 1/500
MIN_SIZE = 3          # points on either side of a split
CONFIDENCE = 0.95     # interval of a step's size


@dataclass
class ChangePoint:
    index: int             # first point after the step
    p_value: float
    before: float          # median (or pooled proportion) of the segment before
    after: float           # ... and after
    step: float            # relative (scale "log"): after/before - 1; else after - before
    step_low: float
    step_high: float
    scale: str             # "log", "linear" or "proportion"
    method: str
    extra: dict = field(default_factory=dict)


def _seed(key, a, b):
    h = hashlib.sha256(f"{key}|{a}|{b}".encode()).digest()
    return int.from_bytes(h[:8], "little")


def energy_q(x):
    """Q(tau) for a batch of segments x (P x n): an array P x (n + 1), -inf where tau leaves fewer
    than MIN_SIZE points on a side. As Matteson and James, the points after tau are those up to a
    right end kappa chosen to maximise Q (kappa = n is the plain two-sample split), so that a
    change that is undone later in the segment is still found."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    P, n = x.shape
    out = np.full((P, n + 1), -np.inf)
    if n < 2 * MIN_SIZE:
        return out
    D = np.abs(x[:, :, None] - x[:, None, :])
    S = np.zeros((P, n + 1, n + 1))
    S[:, 1:, 1:] = D.cumsum(1).cumsum(2)

    diag = S[:, np.arange(n + 1), np.arange(n + 1)]          # S[kappa, kappa]
    for t in range(MIN_SIZE, n - MIN_SIZE + 1):
        m = t
        kappa = np.arange(t + MIN_SIZE, n + 1)
        k = (kappa - t).astype(float)
        wl = S[:, t, t] / (m * (m - 1))
        between = (S[:, t, kappa] - S[:, t, t][:, None]) / (m * k)
        wr = (diag[:, kappa] - 2 * S[:, t, kappa] + S[:, t, t][:, None]) / (k * (k - 1))
        q = m * k / (m + k) * (2 * between - wl[:, None] - wr)
        out[:, t] = q.max(axis=1)
    return out


def _best_split(x, key, a, b, permutations, alpha):
    seg = x[a:b]
    q = energy_q(seg)[0]
    t = int(np.argmax(q))
    best = q[t]
    if not np.isfinite(best) or best <= 1e-12 * max(1.0, float(np.max(np.abs(seg)))):
        return None, 1.0
    # Permutations in batches, stopping once the p-value cannot fall below alpha (a sequential
    # permutation test, Besag and Clifford 1991): the verdict is the same, noise costs less.
    rng = np.random.default_rng(_seed(key, a, b))
    exceed, done = 0, 0
    while done < permutations:
        batch = min(100, permutations - done)
        perm = np.argsort(rng.random((batch, len(seg))), axis=1)
        exceed += int(np.sum(energy_q(seg[perm]).max(axis=1) >= best * (1 - 1e-12)))
        done += batch
        if (1 + exceed) / (permutations + 1) >= alpha:
            return a + t, (1 + exceed) / (done + 1)
    return a + t, (1 + exceed) / (permutations + 1)


def min_commits(alpha=ALPHA, permutations=PERMUTATIONS, power=0.95):
    """The fewest points of a series for which the permutation test keeps the clearest step (in
    the middle, the two sides apart) with probability `power` (module text); None when no number
    of points suffices (alpha at or below 1 / (1 + permutations), the smallest p-value the test
    can give)."""
    # largest count e of permutations at least as extreme for which (1 + e) / (1 + permutations) < alpha
    e_max = math.ceil(alpha * (permutations + 1)) - 2
    if e_max < 0:
        return None
    for n in range(2 * MIN_SIZE, 400):
        p_min = 2.0 / math.comb(n, n // 2)
        if sps.binom.cdf(e_max, permutations, p_min) >= power:
            return n
    return None


def hodges_lehmann(before, after, confidence=CONFIDENCE):
    """Shift after - before: (estimate, low, high); low/high nan when the samples are too small
    for an interval at this confidence."""
    before, after = np.asarray(before, float), np.asarray(after, float)
    d = np.sort((after[:, None] - before[None, :]).ravel())
    est = float(np.median(d))
    m, n = len(before), len(after)
    z = sps.norm.ppf(0.5 + confidence / 2)
    k = int(math.floor(m * n / 2 - z * math.sqrt(m * n * (m + n + 1) / 12)))
    if k < 1:
        return est, math.nan, math.nan
    return est, float(d[k - 1]), float(d[m * n - k])


def detect(values, *, key="", alpha=ALPHA, permutations=PERMUTATIONS, log=None):
    """Change points of a measured series (in commit order) by E-Divisive means with binary
    segmentation. `log`: compare on a log scale (default: when every value is > 0). Points that are
    not finite are left out (their indices are skipped). Returns ChangePoints sorted by index."""
    values = np.asarray(values, dtype=float)
    keep = np.flatnonzero(np.isfinite(values))
    x = values[keep]
    if log is None:
        log = len(x) > 0 and bool(np.all(x > 0))
    y = np.log(x) if log else x
    splits, stack = [], [(0, len(y))]
    while stack:
        a, b = stack.pop()
        if b - a < 2 * MIN_SIZE:
            continue
        t, p = _best_split(y, key, a, b, permutations, alpha)
        if t is None or p >= alpha:
            continue
        splits.append((t, p))
        stack += [(a, t), (t, b)]
    splits.sort()
    bounds = [0] + [t for t, _ in splits] + [len(y)]
    out = []
    for i, (t, p) in enumerate(splits):
        lo, hi = y[bounds[i]:t], y[t:bounds[i + 2]]
        est, s_lo, s_hi = hodges_lehmann(lo, hi)
        if log:
            step, s_lo, s_hi = math.expm1(est), math.expm1(s_lo), math.expm1(s_hi)
            before, after = float(np.exp(np.median(lo))), float(np.exp(np.median(hi)))
        else:
            step, before, after = est, float(np.median(lo)), float(np.median(hi))
        out.append(ChangePoint(index=int(keep[t]), p_value=p, before=before, after=after, step=step, step_low=s_lo,
                               step_high=s_hi, scale="log" if log else "linear", method="e-divisive"))
    return out


def newcombe_interval(k1, n1, k2, n2, confidence=CONFIDENCE):
    """Newcombe's hybrid score interval of p2 - p1 (Wilson intervals of each proportion)."""
    from .stats import wilson_interval

    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, confidence)
    l2, u2 = wilson_interval(k2, n2, confidence)
    d = p2 - p1
    return d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2), d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)


def _loglik(k, n):
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n > 0, k / np.maximum(n, 1), 0.0)
        a = np.where(k > 0, k * np.log(np.where(p > 0, p, 1)), 0.0)
        b = np.where(n - k > 0, (n - k) * np.log(np.where(p < 1, 1 - p, 1)), 0.0)
    return a + b


def detect_proportions(successes, solves, *, alpha=ALPHA):
    """Change points of a success-rate series from its counts (successes, solves per point)."""
    k_all = np.asarray(successes, dtype=float)
    n_all = np.asarray(solves, dtype=float)
    keep = np.flatnonzero(np.isfinite(k_all) & np.isfinite(n_all) & (n_all > 0))
    k, n = k_all[keep], n_all[keep]
    splits, stack = [], [(0, len(k))]
    while stack:
        a, b = stack.pop()
        if b - a < 2 * MIN_SIZE:
            continue
        ck, cn = np.cumsum(k[a:b]), np.cumsum(n[a:b])
        K, N = ck[-1], cn[-1]
        ts = np.arange(MIN_SIZE, b - a - MIN_SIZE + 1)
        kl, nl = ck[ts - 1], cn[ts - 1]
        g = _loglik(kl, nl) + _loglik(K - kl, N - nl) - _loglik(np.array(K), np.array(N))
        i = int(np.argmax(g))
        if not g[i] > 1e-12:
            continue
        t = int(ts[i])
        table = [[int(kl[i]), int(nl[i] - kl[i])], [int(K - kl[i]), int(N - nl[i] - (K - kl[i]))]]
        p = min(1.0, sps.fisher_exact(table)[1] * len(ts))
        if p >= alpha:
            continue
        splits.append((a + t, p))
        stack += [(a, a + t), (a + t, b)]
    splits.sort()
    bounds = [0] + [t for t, _ in splits] + [len(k)]
    out = []
    for i, (t, p) in enumerate(splits):
        k1, n1 = k[bounds[i]:t].sum(), n[bounds[i]:t].sum()
        k2, n2 = k[t:bounds[i + 2]].sum(), n[t:bounds[i + 2]].sum()
        lo, hi = newcombe_interval(int(k1), int(n1), int(k2), int(n2))
        out.append(ChangePoint(index=int(keep[t]), p_value=p, before=k1 / n1, after=k2 / n2, step=k2 / n2 - k1 / n1,
                               step_low=lo, step_high=hi, scale="proportion", method="proportions",
                               extra={"before_counts": [int(k1), int(n1)], "after_counts": [int(k2), int(n2)]}))
    return out


def segments(n, cps):
    """[(start, end)] of the segments between change points of a series of n points."""
    b = [0] + [c.index for c in cps] + [n]
    return list(zip(b[:-1], b[1:]))
