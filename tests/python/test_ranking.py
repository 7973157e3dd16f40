"""Ranks, ties and verdicts (figures.rank_cells, figures.family_leaders), Tukey outlier counts,
and the compact console table: who leads a family is decided by success first, then the median
time, and specs not significantly worse than the leader are tied with it."""
import math

import numpy as np
import pandas as pd
import pytest
import synth

from ikbench.analysis import figures, stats
from ikbench.io import results
from ikbench.render import tables


def solves_frame(cells, family="f"):
    """A solves frame of one family: cells = {spec: (successes list/array of bool, times)}."""
    parts = []
    for spec, (ok, times) in cells.items():
        ok = np.asarray(ok, dtype=bool)
        times = np.asarray(times, dtype=float)
        n = len(times)
        parts.append(pd.DataFrame({
            "family": family, "solver": spec,
            "status": np.where(ok, "converged", "numerical-failure"), "converged": ok, "within_limits": True,
            "iterations": np.where(ok, 5, 0), "position_error": np.where(ok, 1e-7, 1.0), "orientation_error": 0.0,
            "time_us": times, "fk_evals": 6, "jacobian_evals": 5, "dof": 7, "effectors": 1, "goal": "position"}))
        assert len(ok) == n
    return pd.concat(parts, ignore_index=True)


def ranked(frame, **kw):
    return figures.summarize(frame, n_resamples=200, **kw).set_index("solver", drop=False)


def rng(seed=3):
    return np.random.default_rng(seed)


def test_a_family_where_every_spec_fails_names_no_winner():
    r = rng()
    f = solves_frame({"gn": (np.zeros(200), r.uniform(0.5, 0.6, 200)),        # fails at once
                      "dls": (np.zeros(200), r.uniform(50, 60, 200)),
                      "ccd": (np.zeros(200), r.uniform(100, 120, 200))}, family="chain7-unreachable")
    s = ranked(f)
    assert s["rank"].isna().all() and not s["tied_leader"].any()
    assert set(s["rank_text"]) == {"no success"}
    v = figures.family_leaders(s).iloc[0]
    assert v["verdict"] == figures.VERDICT_NO_SUCCESS and v["leaders"] == () and v["ran"] == 3


def test_a_spec_that_fails_fast_never_wins_on_time():
    r = rng()
    ok = np.ones(200, dtype=bool)
    ok[:100] = False
    f = solves_frame({"gn": (np.zeros(200), r.uniform(0.5, 0.6, 200)),        # 0 %, fastest
                      "fast-half": (ok, r.uniform(1.0, 1.2, 200)),          # 50 %, fast
                      "slow-sure": (np.ones(200), r.uniform(80, 90, 200))})  # 100 %, slow
    s = ranked(f)
    assert s.loc["slow-sure", "rank_text"] == "1" and s.loc["slow-sure", "tied_leader"]
    assert s.loc["fast-half", "rank"] == 2 and not s.loc["fast-half", "tied_leader"]
    assert math.isnan(s.loc["gn", "rank"]) and s.loc["gn", "rank_text"] == "no success"
    assert figures.family_leaders(s).iloc[0]["leaders"] == ("slow-sure",)
    assert figures.family_leaders(s).iloc[0]["failed_most"] == "gn"  # its row label


def test_two_specs_at_full_success_with_overlapping_times_are_tied():
    r = rng()
    f = solves_frame({"analytic-6r": (np.ones(300), r.lognormal(np.log(6.0), 0.3, 300)),
                      "auto": (np.ones(300), r.lognormal(np.log(6.0), 0.3, 300)),
                      "kdl-lma": (np.ones(300) * (r.random(300) < 0.8), r.lognormal(np.log(130), 0.3, 300))})
    s = ranked(f)
    assert list(s.loc[["analytic-6r", "auto"], "rank_text"]) == ["=1", "=1"]
    assert s.loc["auto", "time_p_vs_leader"] >= 0.05 or s.loc["analytic-6r", "time_p_vs_leader"] >= 0.05
    assert s.loc["kdl-lma", "rank_text"] == "3" and not s.loc["kdl-lma", "tied_leader"]
    v = figures.family_leaders(s).iloc[0]
    assert v["verdict"] == figures.VERDICT_TIE and set(v["leaders"]) == {"analytic-6r", "auto"}
    assert v["peer"] == "kdl-lma"
    assert tables.fmt_rank(s.loc["auto"].to_dict()) == "=1 of 3"


def test_a_clearly_faster_spec_wins_alone():
    r = rng()
    f = solves_frame({"slow": (np.ones(300), r.lognormal(np.log(12.0), 0.2, 300)),
                      "fast": (np.ones(300), r.lognormal(np.log(6.0), 0.2, 300))})
    s = ranked(f)
    assert s.loc["fast", "rank_text"] == "1" and s.loc["slow", "rank_text"] == "2"
    assert s.loc["slow", "time_p_vs_leader"] < 1e-6
    v = figures.family_leaders(s).iloc[0]
    assert v["verdict"] == figures.VERDICT_WINNER and v["leaders"] == ("fast",)


def test_a_success_rate_not_significantly_lower_and_faster_is_tied():
    r = rng()
    ok = np.ones(300, dtype=bool)
    ok[:2] = False  # 99.3 % against 100 %: Fisher's exact test cannot tell them apart
    f = solves_frame({"sure": (np.ones(300), r.uniform(50, 60, 300)), "quick": (ok, r.uniform(5, 6, 300))})
    s = ranked(f)
    assert s.loc["sure", "rank_text"] == "=1" and s.loc["quick", "rank_text"] == "=1"
    assert s.loc["quick", "success_p_vs_leader"] > 0.05


def test_the_median_ranks_not_the_mean():
    r = rng()
    base = r.uniform(5.0, 5.5, 400)
    spiky = base.copy()
    spiky[:8] = 5000.0  # a few preempted solves: the mean is far above the other's, the median below
    f = solves_frame({"steady": (np.ones(400), r.uniform(6.0, 6.5, 400)), "spiky": (np.ones(400), spiky)})
    s = ranked(f)
    assert s.loc["spiky", "time_us_mean"] > 10 * s.loc["steady", "time_us_mean"]
    assert s.loc["spiky", "time_us_median"] < s.loc["steady", "time_us_median"]
    assert s.loc["spiky", "rank_text"] == "1" and s.loc["steady", "rank_text"] == "2"
    assert s.loc["spiky", "time_us_outliers_severe"] == 8


def test_tukey_counts_on_a_constructed_sample():
    x = np.arange(1.0, 101.0)
    assert stats.tukey_outliers(x) == (0, 0)
    # 1..100 and five more, 105 values: Q1 = x(26) = 25, Q3 = x(78) = 77 (0-based order statistics),
    # IQR 52; mild fences [-53, 155], severe fences [-131, 233]
    y = np.concatenate([x, [200.0, 230.0, 1000.0, -60.0, -140.0]])
    assert list(np.percentile(y, [25, 75])) == [25.0, 77.0]
    assert stats.tukey_outliers(y) == (3, 2)  # mild: 200, 230, -60; severe: 1000, -140
    # a value exactly on a fence is not beyond it: Q1 1, Q3 2, IQR 1, 3.5 = Q3 + 1.5 IQR
    z = np.array([0.0, 1.0, 1.0, 2.0, 3.5])
    assert stats.tukey_outliers(z) == (0, 0)
    # with 20 added: Q1 1, Q3 3.125, IQR 2.125, severe fence 9.5
    assert stats.tukey_outliers(np.append(z, 20.0)) == (0, 1)
    # per cell, in the summary
    f = solves_frame({"a": (np.ones(len(y)), y - y.min() + 1)})
    c = figures.cell_figures(f).iloc[0]
    assert (c["time_us_outliers_mild"], c["time_us_outliers_severe"]) == (3, 2)


def test_the_compact_table_of_24_families_stays_within_a_screen(tmp_path):
    fams = [f"fam{i:02d}-position" for i in range(24)]
    solvers = {"dls": (0.95, 1.0, (5, 30)), "dls:lambda=0.1": (0.95, 1.0, (5, 30)), "ccd": (0.5, 3.0, (20, 80)),
               "kdl-lma": (0.7, 6.0, (10, 60)), "gn": (0.0, 0.1, (1, 1))}
    d = synth.make_run(tmp_path / "r", problems=30, families=fams, solvers=solvers, traces=False, unsupported=())
    run = results.load(d)
    s = figures.summarize(run, n_resamples=100)
    text = tables.summary_table(run, s)
    assert len(text.splitlines()) <= 40
    verdicts = figures.family_leaders(s)
    lines = text.splitlines()
    for v in verdicts.to_dict("records"):
        row = next(x for x in lines if x.startswith(v["family"] + " "))
        for spec in v["leaders"][:tables.COMPACT_LEADERS]:
            assert spec in row
        assert "kdl-lma" in row  # the peer
    tied = verdicts[verdicts["verdict"] == figures.VERDICT_TIE]
    assert len(tied) > 0  # dls and dls:lambda=0.1 have the same distributions: tied somewhere
    assert any("=" + ", ".join(v[:2]) in text for v in tied["leaders"])
    full = tables.summary_table(run, s, table="full")
    assert len(full.splitlines()) > 24 * 5


def test_a_family_with_nothing_failed_has_no_failed_most_beside_one_that_has():
    r = rng()
    f = pd.concat([solves_frame({"a": (np.ones(50), r.uniform(1, 2, 50)), "b": (np.ones(50), r.uniform(5, 6, 50))},
                                family="all-good"),
                   solves_frame({"a": (np.ones(50), r.uniform(1, 2, 50)), "c": (np.zeros(50), r.uniform(5, 6, 50))},
                                family="one-fails")], ignore_index=True)
    s = figures.summarize(f, n_resamples=100)
    v = figures.family_leaders(s).set_index("family")
    assert v.loc["all-good", "failed_most"] is None and v.loc["all-good", "peer_row"] is None
    assert s.loc[v.loc["one-fails", "failed_most"], "solver"] == "c"
    assert v.loc["one-fails", "ran"] == 2
    rows = tables.compact_rows(s)
    assert [x[-2] for x in rows] == ["-", "c"]
