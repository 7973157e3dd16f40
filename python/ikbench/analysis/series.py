"""Series across commits made comparable on a shared machine, and their change points
(docs/history.md "Machine speed" and "Change points"). Data only: the command line, the site and
the report render it.

    speeds = Speeds.load(store)                   # every run's speed factor, and which runs are noisy
    s = analyse(key, rows, speeds)                # one series: points per commit, runs left out, change points
    found = find_changes(store)                   # every series of the store: change points, short series, runs left out

**Speed factor.** On a shared machine a run is slower or faster as a whole: with unchanged code,
the runs of a 2-core machine at a load of 2 to 3 differ by 0.85x to 1.28x, far more than the steps
worth finding. A run's speed factor is the median over its cells of the cell's time relative to
that cell's median over the runs of its machine identity, suite and thread count
(ikbench.analysis.speed.speed_factors, the normalisation the regression gate applies to repeats): per
evaluation time (`time_per_eval_median_us`) for a run's cells, a run without 3 such cells taking
`time_us_median`; real time for Google Benchmark files, time per solve (1 / solves_per_s) for
throughput points. The time figures of a run (TIME_FIGURES) are divided by its factor and its
rates (RATE_FIGURES) multiplied by it before runs of a commit are combined and change points are
searched; `raw` keeps the values as measured. A step of a few cells stays; a step of nearly every
cell reads as the machine's speed and is seen in raw values only. Where a group has no run with
3 timed cells (one Google Benchmark case in its file), its values stay raw.

**Noisy runs** are left out of the time and rate series (not of success, iterations or evaluations,
which do not depend on the machine's speed), and listed, unless `include_noisy`:
  * a run whose recorded load average beyond its own threads is above its cores (run.json `load`:
    `samples.max` (or the larger of `start` and `end`) - `threads` > `cores`): other work alone
    could keep every core busy, as a load of 6 to 10 does on 2 cores. (run.json's own `noisy` marks
    any competition, `samples.max` > `cores`: a load of 2 to 3 on a shared 2-core machine already,
    whose 0.85x to 1.28x the speed factor takes out);
  * a run whose speed factor is more than SPEED_OUTLIER (1.5) times away from the median factor
    of the other runs of its group: beyond the spread of unchanged code on a loaded machine;
  * a run without 3 timed cells in a group where the others have them (no factor to divide by).

**A step of the whole run**: the factors themselves are searched for change points across commits
(`Speeds`): machine speed varies from run to run, a step that stays is the code's (most cells
moved at once) or another machine's behind one identity. It is reported as the figure `run_speed`
of the group (family and solver `*`), and the factors are measured within the segments it
leaves, so that the step stays in the normalised values.

**How many commits**: a measured series needs `changepoints.min_commits(alpha)` commits of clean
work trees (12 for alpha = 0.01) for a verdict, a success rate 2 x MIN_SIZE (6); a shorter one is
reported as "not enough commits (N, need M)", never silently as "no change".
"""

import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .speed import MIN_CELLS, speed_factors
from . import changepoints as cp
from ..io import store_queries as queries

SPEED_OUTLIER = 1.5
TIME_FIGURES = {"time_us_median", "time_us_mean", "time_us_p90", "time_us_p99", "time_us_max",
                "time_per_eval_median_us", "real_time_ns", "cpu_time_ns"}
RATE_FIGURES = {"solves_per_s", "converged_per_s"}
# per source: the figures a run's speed is measured on, in order of preference
REFERENCE_FIGURES = {"cell": ("time_per_eval_median_us", "time_us_median"), "gbench": ("real_time_ns",),
                     "throughput": ("solves_per_s",)}


def load_reason(load, threads):
    """Why a run's recorded load makes it noisy ("load average 7.9 with 2 threads of its own on 2
    cores"), or None (module text). `load`: run.json's `load` object (or its JSON text); `threads`
    the run's threads (None: as many as its cores)."""
    if isinstance(load, str):
        try:
            load = json.loads(load)
        except ValueError:
            load = None
    load = load if isinstance(load, dict) else {}

    def num(v):
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None

    samples = load.get("samples") if isinstance(load.get("samples"), dict) else {}
    peak = num(samples.get("max"))
    if peak is None:
        ends = [x for x in (num(load.get("start")), num(load.get("end"))) if x is not None]
        peak = max(ends) if ends else None
    cores = num(load.get("cores"))
    if peak is None or cores is None:
        return None
    own = float(threads) if isinstance(threads, (int, float)) and threads and threads > 0 else cores
    if peak - own > cores:
        return f"load average {peak:.1f} with {own:.0f} threads of its own on {cores:.0f} cores"
    return None


def speed_outliers(factors, limit=SPEED_OUTLIER):
    """{run: reason} of the runs whose factor is more than `limit` times away from the median of
    the others ({run: factor}, None left out)."""
    have = {r: f for r, f in factors.items() if f is not None}
    n = len(have)
    if n < 3:
        return {}
    order = sorted(have, key=lambda r: have[r])
    a = [have[r] for r in order]
    out = {}
    for i, r in enumerate(order):
        def rest(j):   # the j-th smallest of the others
            return a[j] if j < i else a[j + 1]
        k = n - 1
        med = rest(k // 2) if k % 2 else (rest(k // 2 - 1) + rest(k // 2)) / 2
        ratio = a[i] / med
        if ratio > limit or ratio < 1 / limit:
            out[r] = f"speed x{ratio:.2f} the median of the other {k} runs"
    return out


def _times(rows, source):
    out = {}
    for run_id, fam, solver, v in zip(rows["run_id"], rows["family"], rows["solver"], rows["value"]):
        if v is None or not math.isfinite(v) or v <= 0:
            continue
        out.setdefault(int(run_id), {})[(fam, solver)] = 1.0 / v if source == "throughput" else float(v)
    return out


def group_factors(ref, source, run_ids):
    """{run: factor or None} of one group's runs from its reference points (module text)."""
    factors = {int(r): None for r in run_ids}
    for fig in REFERENCE_FIGURES[source]:
        todo = [r for r, f in factors.items() if f is None]
        if not todo:
            break
        got = speed_factors(_times(ref[ref["figure"] == fig], source), min_cells=MIN_CELLS)
        for r in todo:
            factors[r] = got.get(r)
    return factors


class Speeds:
    """Every run's speed factor within its group (machine, suite, threads, source) and the reasons
    that make a run noisy, for the runs of `store` (of one machine and suite when given).

    A machine's speed varies from run to run; a step that stays (most cells slower from one commit
    on, or another machine behind the same identity) is not noise. So the factors, in commit order
    (per commit the median over its clean, quiet runs), are searched for change points as any
    series is (`steps`: the figure `run_speed`), and where they step, each segment's factors are
    measured against the cells' medians within that segment: the step stays in the normalised
    values and is reported as the whole run's."""

    @classmethod
    def load(cls, store, *, machine_key=None, suite=None, alpha=cp.ALPHA):
        """The speeds of the runs of `store` (of one machine identity and suite when given)."""
        figs = sorted({f for v in REFERENCE_FIGURES.values() for f in v})
        return cls(queries.runs(store, machine_key=machine_key, suite=suite),
                   queries.points(store, figures=figs, machine_key=machine_key, suite=suite), alpha=alpha)

    def __init__(self, runs, ref, *, alpha=cp.ALPHA):
        """`runs`: queries.runs' frame (commit order); `ref`: queries.points' frame of the
        REFERENCE_FIGURES of those runs."""
        self.commit = {int(r): queries.commit_label(c, d) for r, c, d in
                       zip(runs["run_id"], runs["git_commit"], runs["dirty"])}
        self.dirty = {int(r): bool(d) for r, d in zip(runs["run_id"], runs["dirty"].fillna(False))}
        self.date = {int(r): (d or st) for r, d, st in zip(runs["run_id"], runs["commit_date"], runs["start_time"])}
        self.subject = {int(r): sj for r, sj in zip(runs["run_id"], runs["subject"])}
        self.load = {int(r): load_reason(ld, t) for r, ld, t in zip(runs["run_id"], runs["load"], runs["threads"])}
        order = [int(r) for r in runs["run_id"]]
        self.factor, self.speed, self.steps = {}, {}, {}
        self.normalisable = set()
        for (machine, s, threads, source), g in ref.groupby(["machine", "suite", "threads", "source"], sort=False):
            group = (machine, s, int(threads), source)
            present = set(int(r) for r in g["run_id"].unique())
            run_ids = [r for r in order if r in present]
            f = group_factors(g, source, run_ids)
            segments, steps = self._segments(group, run_ids, f, alpha)
            if steps:
                self.steps[group] = steps
                for seg in segments:
                    f.update(group_factors(g[g["run_id"].isin(seg)], source, seg))
            if any(v is not None for v in f.values()):
                self.normalisable.add(group)
            for r, v in f.items():
                self.factor[(group, r)] = v
            for seg in segments:
                quiet = {r: f[r] for r in seg if self.load.get(r) is None}
                for r, why in speed_outliers(quiet).items():
                    self.speed[(group, r)] = why

    def _segments(self, group, run_ids, f, alpha):
        """(the group's runs split where the factor steps, [(run id of the first run after a step,
        ChangePoint)]) (class text)."""
        per_commit, first = {}, {}
        for pos, r in enumerate(run_ids):
            if f.get(r) is None or self.dirty.get(r) or self.load.get(r):
                continue
            c = self.commit[r]
            per_commit.setdefault(c, []).append(f[r])
            first.setdefault(c, pos)
        commits = list(per_commit)
        need = cp.min_commits(alpha)
        if need is None or len(commits) < need:
            return [run_ids], []
        values = np.array([np.median(per_commit[c]) for c in commits])
        found = cp.detect(values, key=json.dumps(["run_speed", *[str(x) for x in group]]), alpha=alpha)
        if not found:
            return [run_ids], []
        cuts = [first[commits[c.index]] for c in found]
        bounds = [0] + cuts + [len(run_ids)]
        segments = [run_ids[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        return segments, [(run_ids[first[commits[c.index]]], c) for c in found]

    def factor_of(self, group, run_id):
        return self.factor.get((group, int(run_id)))

    def noisy(self, group, run_id):
        """Why a run is left out of its group's time series, or None."""
        run_id = int(run_id)
        why = self.load.get(run_id) or self.speed.get((group, run_id))
        if why is None and group in self.normalisable and self.factor.get((group, run_id)) is None:
            why = f"fewer than {MIN_CELLS} timed cells: no speed factor"
        return why


@dataclass
class Series:
    """One series, analysed: `pc` its points per commit (dirty commits included) in commit order,
    `clean` those change points are searched on, `changes` their ChangePoints (indices into
    `clean`), `need` the commits a verdict needs, `excluded` the runs left out
    [{"run_id", "commit", "reason"}], `normalised` whether values are divided by the runs' speed."""
    key: tuple
    pc: pd.DataFrame
    clean: pd.DataFrame
    changes: list
    need: int
    excluded: list = field(default_factory=list)
    normalised: bool = False

    @property
    def enough(self):
        return self.need is not None and len(self.clean) >= self.need

    @property
    def commits(self):
        return len(self.clean)

    def change_commit(self, c):
        return self.clean["commit"].iloc[c.index]


def needed_commits(figure, alpha=cp.ALPHA):
    """Commits of clean work trees a verdict on a series of `figure` needs (module text)."""
    if figure == "success_rate":
        return 2 * cp.MIN_SIZE
    return cp.min_commits(alpha)


def group_of(key):
    source, _, _, _, machine, suite, threads = key
    return (machine, suite, int(threads), source)


def analyse(key, rows, speeds, *, alpha=cp.ALPHA, raw=False, include_noisy=False, include_dirty=False):
    """One series (its points' rows in commit order, `key` as queries.SERIES_KEY) analysed: noisy
    runs left out and values divided by each run's speed factor (module text), then combined per
    commit and searched for change points when there are enough commits."""
    fig = key[3]
    group = group_of(key)
    timed = fig in TIME_FIGURES or fig in RATE_FIGURES
    normalised = timed and not raw and group in speeds.normalisable
    excluded, keep, scale = [], [], []
    for i, run_id in enumerate(rows["run_id"]):
        if timed:
            why = speeds.noisy(group, run_id)
            if why is not None and (not include_noisy or (normalised and speeds.factor_of(group, run_id) is None)):
                excluded.append({"run_id": int(run_id), "commit": speeds.commit.get(int(run_id), "?"), "reason": why})
                continue
        keep.append(i)
        f = speeds.factor_of(group, run_id) if normalised else None
        scale.append(1.0 if f is None else (f if fig in RATE_FIGURES else 1.0 / f))
    kept = rows.iloc[keep].copy()
    if len(kept):
        s = np.asarray(scale, dtype=float)
        for col in ("value", "ci_low", "ci_high"):
            kept[col] = kept[col].to_numpy(float) * s
    pc = queries.per_commit(kept) if len(kept) else pd.DataFrame(columns=list(rows.columns) + ["commit", "runs"])
    dirty = pc["dirty"].fillna(False).astype(bool).to_numpy() if len(pc) else np.zeros(0, bool)
    clean = pc if include_dirty else pc[~dirty].reset_index(drop=True)
    need = needed_commits(fig, alpha)
    found = []
    if need is not None and len(clean) >= need:
        found = _detect(clean, fig, json.dumps([str(k) for k in key]), alpha)
    return Series(key=key, pc=pc.reset_index(drop=True), clean=clean, changes=found, need=need, excluded=excluded,
                  normalised=normalised)


def _detect(pc, fig, key, alpha):
    if fig == "success_rate" and pc["successes"].notna().all():
        return cp.detect_proportions(pc["successes"].to_numpy(float), pc["n"].to_numpy(float), alpha=alpha)
    v = pc["value"].to_numpy(float)
    finite = v[np.isfinite(v)]
    if len(finite) < 2 * cp.MIN_SIZE or np.ptp(finite) == 0:
        return []
    return cp.detect(v, key=key, alpha=alpha)


def series_of(store, pts, *, alpha=cp.ALPHA, raw=False, include_noisy=False, include_dirty=False, speeds=None):
    """[Series] of the points `pts` (queries.points), grouped into series."""
    speeds = speeds or Speeds.load(store)
    return [analyse(key, g, speeds, alpha=alpha, raw=raw, include_noisy=include_noisy, include_dirty=include_dirty)
            for key, g in queries.group_series(pts)]


@dataclass
class Changes:
    """find_changes' answer: `table` one row per change point, most recent first; `short` the
    series without enough commits [(key, commits, need)]; `excluded` the runs left out as noisy
    (a DataFrame: run_id, commit, reason, series)."""
    table: pd.DataFrame
    short: list
    excluded: pd.DataFrame
    series: int


CHANGE_COLUMNS = queries.SERIES_KEY + ["machine_label", "commit", "commit_date", "subject", "previous", "position",
                                       "points", "before", "after", "step", "step_low", "step_high", "scale",
                                       "p_value", "method", "regression"]


def is_regression(figure, step):
    return bool(step < 0) if figure in queries.HIGHER_IS_BETTER else bool(step > 0)


def find_changes(store, *, figures=None, include_dirty=False, alpha=cp.ALPHA, raw=False, include_noisy=False,
                 **filters):
    """Change points of every series of the store (or of those the filters select: family, solver,
    machine, suite, source, threads), with the series that have too few commits and the runs left
    out (module text)."""
    pts = queries.points(store, figures=figures or queries.CHANGE_FIGURES, include_dirty=include_dirty, **filters)
    speeds = Speeds.load(store, suite=filters.get("suite"), alpha=alpha)
    rows, short, excluded, n = [], [], {}, 0
    groups = {}
    for key, g in queries.group_series(pts):
        groups.setdefault(group_of(key), g["machine_label"].iloc[0])
        n += 1
        s = analyse(key, g, speeds, alpha=alpha, raw=raw, include_noisy=include_noisy, include_dirty=include_dirty)
        for e in s.excluded:
            excluded.setdefault((e["run_id"], e["commit"], e["reason"]), 0)
            excluded[(e["run_id"], e["commit"], e["reason"])] += 1
        if not s.enough:
            short.append((key, s.commits, s.need))
        for c in s.changes:
            after, before = s.clean.iloc[c.index], s.clean.iloc[c.index - 1]
            rows.append(dict(zip(queries.SERIES_KEY, key), machine_label=g["machine_label"].iloc[0],
                             commit=after["commit"], commit_date=after["commit_date"], subject=after["subject"],
                             previous=before["commit"], position=c.index, points=len(s.clean), before=c.before,
                             after=c.after, step=c.step, step_low=c.step_low, step_high=c.step_high, scale=c.scale,
                             p_value=c.p_value, method=c.method, regression=is_regression(key[3], c.step)))
    if (figures is None or "run_speed" in figures) and not filters.get("family") and not filters.get("solver"):
        for group, label in groups.items():
            for run_id, c in speeds.steps.get(group, []):
                machine, suite, threads, source = group
                rows.append(dict(source=source, family="*", solver="*", figure="run_speed", machine=machine, suite=suite,
                                 threads=threads, machine_label=label, commit=speeds.commit[run_id],
                                 commit_date=speeds.date.get(run_id), subject=speeds.subject.get(run_id), previous="",
                                 position=c.index, points=None, before=c.before, after=c.after, step=c.step,
                                 step_low=c.step_low, step_high=c.step_high, scale=c.scale, p_value=c.p_value,
                                 method=c.method, regression=bool(c.step > 0)))
    df = pd.DataFrame(rows, columns=CHANGE_COLUMNS)
    if not df.empty:
        df = df.assign(_d=df["commit_date"].fillna("")).sort_values(["_d", "p_value"], ascending=[False, True],
                                                                    kind="stable").drop(columns="_d")
    ex = pd.DataFrame([{"run_id": r, "commit": c, "reason": why, "series": k} for (r, c, why), k in excluded.items()],
                      columns=["run_id", "commit", "reason", "series"]).sort_values("run_id", kind="stable")
    return Changes(table=df.reset_index(drop=True), short=short, excluded=ex.reset_index(drop=True), series=n)


def changes(store, **kw):
    """find_changes' table alone."""
    return find_changes(store, **kw).table


__all__ = ["SPEED_OUTLIER", "TIME_FIGURES", "RATE_FIGURES", "Speeds", "Series", "Changes", "analyse", "series_of",
           "find_changes", "changes", "needed_commits", "load_reason", "speed_outliers", "is_regression"]
