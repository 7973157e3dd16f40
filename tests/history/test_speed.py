"""Change points on a noisy shared machine (docs/history.md "Machine speed"), on seeded simulated
histories: deterministic, not timed.

Noise model. A 2-core machine at a load of 2 to 3 runs unchanged code at a speed that differs from
run to run by 0.85x to 1.28x (the whole run alike: each run draws one machine factor, log-uniform
in [0.85, 1.28]); on top of it each cell's median time has its own noise, a Student t with 2.5
degrees of freedom at a scale of 2 % on the log scale (tests/history/test_changepoints.py: heavy
tails, a preempted run far out). A history is 12 commits of 12 cells; per evaluation times follow
the cell's time (its evaluations are fixed) with 0.5 % noise of their own. A loaded run (a load
average of 6 to 10 on the 2 cores, recorded in run.json `load`) is 3x to 5x slower and its cells
four times as noisy.
"""
import hashlib
import json

import numpy as np
import pandas as pd
from scipy import stats as sps

from ikbench.analysis import changepoints as cp
from ikbench.io import store_queries as queries
from ikbench.analysis import series
from ikbench.analysis.speed import speed_factors

MACHINE = "0123456789ab"
COMMITS, CELLS, AT = 12, 12, 6


def commit(i):
    return hashlib.sha1(f"simulated commit {i}".encode()).hexdigest()


def history(seed, *, commits=COMMITS, steps=None, at=AT, loaded=()):
    """(runs, points) frames as queries.runs and queries.points give them. `steps`: {cell: factor}
    from commit `at` on; `loaded`: the commits whose run was made under a load of 6 to 10."""
    rng = np.random.default_rng(seed)
    base = np.exp(rng.uniform(np.log(2), np.log(200), CELLS))
    evals = rng.integers(20, 200, CELLS)
    runs, pts = [], []
    for i in range(commits):
        machine = np.exp(rng.uniform(np.log(0.85), np.log(1.28)))
        scale, peak = 0.02, rng.uniform(2.0, 3.0)
        if i in loaded:
            machine *= rng.uniform(3, 5)
            scale, peak = 0.08, rng.uniform(6, 10)
        noise = sps.t.rvs(2.5, scale=scale, size=CELLS, random_state=rng)
        date = f"2026-01-{1 + i // 24:02d}T{i % 24:02d}:00:00Z"
        load = {"start": peak, "end": peak, "cores": 2, "samples": {"count": 3, "max": peak}, "noisy": peak > 2}
        runs.append({"run_id": i + 1, "git_commit": commit(i), "dirty": 0, "commit_date": date, "start_time": date,
                     "subject": f"commit {i}", "suite": "quick", "threads": 2, "noisy": int(peak > 2),
                     "load": json.dumps(load), "machine": MACHINE, "machine_label": "simulated"})
        for c in range(CELLS):
            t = base[c] * machine * np.exp(noise[c]) * ((steps or {}).get(c, 1.0) if i >= at else 1.0)
            per_eval = t / evals[c] * np.exp(rng.normal(0, 0.005))
            for fig, v in (("time_us_median", t), ("time_per_eval_median_us", per_eval)):
                pts.append({"run_id": i + 1, "source": "cell", "family": f"family-{c:02d}", "solver": "dls",
                            "figure": fig, "value": v, "ci_low": v * 0.95, "ci_high": v * 1.05, "n": 100,
                            "successes": None, "git_commit": commit(i), "dirty": 0, "commit_date": date,
                            "subject": f"commit {i}", "start_time": date, "suite": "quick", "threads": 2,
                            "noisy": int(peak > 2), "machine": MACHINE, "machine_label": "simulated"})
    return pd.DataFrame(runs), pd.DataFrame(pts)


def analyse(seed, cell=0, figure="time_us_median", **kw):
    """The Series of one cell's figure of history(seed, ...), analysed as the command line does."""
    opts = {k: kw.pop(k) for k in ("raw", "include_noisy") if k in kw}
    runs, pts = history(seed, **kw)
    speeds = series.Speeds(runs, pts)
    g = pts[(pts["family"] == f"family-{cell:02d}") & (pts["figure"] == figure)].reset_index(drop=True)
    key = tuple(g.iloc[0][queries.SERIES_KEY])
    return series.analyse(key, g, speeds, **opts)


def at_commit(s, i):
    return [c for c in s.changes if s.change_commit(c) == commit(i)[:10]]


def test_minimum_commits_for_a_verdict():
    # the exact permutation p-value of the clearest step in the middle of n points is 2 / C(n, n/2);
    # 499 permutations at alpha 0.01 find it with probability 0.95 from 12 commits on
    assert cp.min_commits() == 12
    assert cp.min_commits(alpha=0.05) < 12 and cp.min_commits(alpha=1 / 500) is None
    s = analyse(1, commits=11, steps={0: 2.0})
    assert not s.enough and s.changes == [] and (s.commits, s.need) == (11, 12)
    from ikbench.render.history_text import not_enough_text

    assert not_enough_text(s.commits, s.need) == "not enough commits (11, need 12)"


def test_planted_steps_found_at_their_commit():
    # one seeded history: a 1.3x step in one cell and a 2x step in another, from commit 6 on
    steps = {0: 1.3, 1: 2.0}
    for cell, step in steps.items():
        s = analyse(2024, cell=cell, steps=steps)
        (c,) = s.changes
        assert s.change_commit(c) == commit(AT)[:10] and s.normalised
        assert abs(np.log1p(c.step) - np.log(step)) < 0.1, c.step
        raw = analyse(2024, cell=cell, steps=steps, raw=True)
        assert not raw.normalised


def test_planted_steps_found_in_most_histories():
    found, raw = {1.3: 0, 2.0: 0}, {1.3: 0, 2.0: 0}
    wrong = 0
    for step in found:
        for seed in range(40):
            s = analyse(5000 + seed, steps={0: step})
            found[step] += bool(at_commit(s, AT))
            wrong += sum(s.change_commit(c) != commit(AT)[:10] for c in s.changes)
            raw[step] += bool(at_commit(analyse(5000 + seed, steps={0: step}, raw=True), AT))
    # measured with these seeds: 39 and 40 of 40 (over 1000 other histories: 96 % and 99.8 %)
    assert found[1.3] >= 35 and found[2.0] >= 38, found
    assert wrong <= 2, wrong
    # as measured, the machine's speed hides the 1.3x step (3 of 40 with these seeds, 17 % of 1000)
    assert raw[1.3] <= 8, raw


def test_unchanged_code_few_false_change_points():
    # measured: 0 with these seeds; 45 in 4000 other histories (1.1 %, about alpha = 1 %)
    alarms = sum(len(analyse(9000 + seed).changes) for seed in range(100))
    assert alarms <= 1, alarms


def test_loaded_runs_left_out_and_listed():
    # 20 commits, the last six (14 to 19) run under a load of 6 to 10: raw and kept, they put a change
    # point at the load's edge; left out (the default), unchanged code has none
    loaded = tuple(range(14, 20))
    raw_alarms = alarms = 0
    for seed in range(30):
        s = analyse(7000 + seed, commits=20, loaded=loaded)
        alarms += len(s.changes)
        assert sorted(e["run_id"] for e in s.excluded) == [i + 1 for i in loaded]
        assert all("load average" in e["reason"] and "on 2 cores" in e["reason"] for e in s.excluded)
        assert s.commits == 14 and s.enough
        raw = analyse(7000 + seed, commits=20, loaded=loaded, raw=True, include_noisy=True)
        raw_alarms += bool(at_commit(raw, 14))
    assert alarms <= 1 and raw_alarms >= 25, (alarms, raw_alarms)


def test_speed_outlier_left_out_without_a_recorded_load():
    runs, pts = history(31)
    # run 5 was 2.5x slower as a whole, its load not recorded
    slow = pts["run_id"] == 5
    pts.loc[slow, ["value", "ci_low", "ci_high"]] *= 2.5
    runs.loc[runs["run_id"] == 5, "load"] = None
    speeds = series.Speeds(runs, pts)
    g = pts[(pts["family"] == "family-00") & (pts["figure"] == "time_us_median")].reset_index(drop=True)
    s = series.analyse(tuple(g.iloc[0][queries.SERIES_KEY]), g, speeds)
    assert [e["run_id"] for e in s.excluded] == [5] and "speed x2." in s.excluded[0]["reason"]
    assert s.commits == 11


def test_the_gate_and_the_history_share_one_speed_factor():
    # the gate's repeats: factors against the first repeat; the history: against each cell's median
    times = {"a": {1: 10.0, 2: 20.0, 3: 5.0}, "b": {1: 11.0, 2: 22.0, 3: 5.5}, "c": {1: 9.0, 2: 18.0, 3: 4.5}}
    assert speed_factors(times, reference="a") == {"a": 1.0, "b": 1.1, "c": 0.9}
    f = speed_factors(times)
    assert f["a"] == 1.0 and abs(f["b"] - 1.1) < 1e-12 and abs(f["c"] - 0.9) < 1e-12
    # a step of one cell of three leaves the factors as they were
    times["c"][1] *= 2
    assert speed_factors(times)["c"] == f["c"]
    assert speed_factors({"a": {1: 1.0}}, min_cells=3) == {"a": None}


def test_command_line_says_not_enough_commits_and_lists_noisy_runs(db, tmp_path, capsys):
    from conftest import run_cli, synthetic_run

    runs = [synthetic_run(tmp_path / f"r{i}", i) for i in range(5)]
    meta = json.loads((runs[2] / "run.json").read_text())
    meta["load"] = {"start": 7.5, "end": 8.0, "cores": 2, "samples": {"count": 2, "max": 8.0}, "noisy": True}
    (runs[2] / "run.json").write_text(json.dumps(meta))
    assert run_cli(capsys, "add", *map(str, runs), "--db", db)[0] == 0
    rc, out, err = run_cli(capsys, "trend", "--family", "planar-position", "--solver", "dls", "--db", db)
    assert rc == 0, err
    assert "change points: not enough commits (4, need 12)" in out
    assert "left out as noisy (1 runs" in out and "load average 8.0 with 2 threads of its own on 2 cores" in out
    assert "at the median speed of its runs" in out
    rc, out, _ = run_cli(capsys, "trend", "--family", "planar-position", "--solver", "dls", "--db", db, "--raw",
                         "--include-noisy")
    assert "not enough commits (5, need 12)" in out and "as measured" in out and "left out" not in out
    rc, out, _ = run_cli(capsys, "changes", "--db", db)
    assert rc == 0 and "series without a verdict, not enough commits (need 6 or 12)" in out
    assert "left out as noisy (1 runs" in out
