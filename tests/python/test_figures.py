"""ikbench.analysis.figures and ikbench.analysis.stats: the figure definitions, intervals and summary.csv."""
import csv
import math

import numpy as np
import pandas as pd
import pytest
import synth
from scipy.stats import norm

from ikbench.analysis import figures, stats
from ikbench.io import results
from ikbench.render import tables


def _wilson_by_formula(k, n, conf=0.95):
    z = norm.ppf(0.5 + conf / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_wilson_interval_against_the_formula_and_a_published_value():
    lo, hi = stats.wilson_interval(8, 10)
    elo, ehi = _wilson_by_formula(8, 10)
    assert lo == pytest.approx(elo, abs=1e-12) and hi == pytest.approx(ehi, abs=1e-12)
    # Newcombe (1998), table I, example 81/263: Wilson 0.2553 to 0.3662
    lo, hi = stats.wilson_interval(81, 263)
    assert (round(lo, 4), round(hi, 4)) == (0.2553, 0.3662)
    lo, hi = stats.wilson_interval(0, 20)
    assert lo == 0 and hi == pytest.approx(_wilson_by_formula(0, 20)[1], abs=1e-12)
    assert all(math.isnan(x) for x in stats.wilson_interval(0, 0))


def test_bootstrap_is_deterministic_for_a_seed():
    rng = np.random.default_rng(5)
    samples = [rng.lognormal(size=n) for n in (30, 30, 57, 1)]
    a = stats.bootstrap_intervals(samples, "median", seed=11, n_resamples=500)
    b = stats.bootstrap_intervals(samples, "median", seed=11, n_resamples=500)
    c = stats.bootstrap_intervals(samples, "median", seed=12, n_resamples=500)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0][:3], c[0][:3])
    # a sample's interval does not depend on what else is bootstrapped with it
    alone = stats.bootstrap_intervals(samples[2:3], "median", seed=11, n_resamples=500)
    assert alone[0][0] == a[0][2] and alone[1][0] == a[1][2]
    for s, lo, hi in zip(samples[:3], *a):
        assert lo <= np.median(s) <= hi and lo < hi
    assert math.isnan(a[0][3])  # one value: no interval
    # the percentile interval is the one scipy.stats.bootstrap gives for that seed (on the sample
    # in ascending order), for even and odd sizes, medians exactly
    from scipy.stats import bootstrap

    for n in (30, 57):
        x = rng.integers(0, 40, n).astype(float) if n == 30 else rng.lognormal(size=n)
        for name, f in (("median", np.median), ("mean", np.mean)):
            lo, hi = stats.bootstrap_intervals([x], name, seed=11, n_resamples=500)
            ref = bootstrap((np.sort(x),), f, n_resamples=500, method="percentile",
                            random_state=np.random.default_rng(11), vectorized=True).confidence_interval
            if name == "median":
                assert (lo[0], hi[0]) == (ref.low, ref.high)
            else:
                assert lo[0] == pytest.approx(ref.low, rel=1e-12) and hi[0] == pytest.approx(ref.high, rel=1e-12)
    # any other statistic goes through scipy.stats.bootstrap itself
    lo, hi = stats.bootstrap_intervals([samples[0]], lambda v, axis=-1: np.max(v, axis=axis), seed=11,
                                       n_resamples=500)
    assert lo[0] <= hi[0] == samples[0].max()


def test_group_quantiles_match_numpy():
    rng = np.random.default_rng(2)
    v = rng.normal(size=200)
    codes = rng.integers(0, 7, size=200)
    q = stats.group_quantiles(v, codes, 8, [0.5, 0.9, 0.99])
    for g in range(7):
        np.testing.assert_allclose(q[:, g], np.quantile(v[codes == g], [0.5, 0.9, 0.99]), rtol=1e-12)
    assert np.isnan(q[:, 7]).all()
    assert stats.group_quantiles([1, np.inf, np.inf], [0, 0, 0], 1, [0.9])[0, 0] == np.inf


def _edit(rows, family, solver, n, **values):
    k = 0
    for r in rows:
        if r["family"] == family and r["solver"] == solver and r["converged"] == "1" and k < n:
            r.update(values)
            k += 1
    assert k == n


def test_success_needs_convergence_within_limits(tmp_path):
    # Three converged dls solves end outside the joint limits: not successes.
    d = synth.make_run(tmp_path / "r", edit_rows=lambda rows: _edit(rows, "planar-position", "dls", 3,
                                                                   within_limits="0"))
    run = results.load(d)
    s = figures.summarize(run, intervals=False).set_index(["family", "solver"])
    cell = s.loc[("planar-position", "dls")]
    conv = int(run.solves.query("family == 'planar-position' and solver == 'dls'")["converged"].sum())
    assert cell["converged"] == conv
    assert cell["success_rate"] == pytest.approx((conv - 3) / 40)
    lo, hi = stats.wilson_interval(conv - 3, 40)
    assert (cell["success_ci_low"], cell["success_ci_high"]) == (lo, hi)


def test_unsupported_cell_is_na_and_never_ranked(run_dir):
    run = results.load(run_dir)
    s = figures.summarize(run, intervals=False)
    na = s[(s.family == "planar-pose") & (s.solver == "two-bone")].iloc[0]
    assert not na["available"] and math.isnan(na["success_rate"]) and math.isnan(na["time_us_median"])
    assert na["solves"] == 40 and na["supported"] == 0
    ok = s[(s.family == "planar-position") & (s.solver == "two-bone")].iloc[0]
    assert ok["success_rate"] == 1.0
    ranked = s  # summarize ranks within each family
    assert math.isnan(ranked.loc[na.name, "rank"])
    pose = ranked[ranked.family == "planar-pose"]
    assert sorted(pose["rank"].dropna()) == [1.0, 2.0]
    best = pose.loc[pose["rank"] == 1].iloc[0]
    assert best["solver"] == pose.loc[pose["available"]].sort_values("success_rate").iloc[-1]["solver"]
    text = tables.summary_table(run, figures.summarize(run, n_resamples=200), table="full")
    line = next(x for x in text.splitlines() if x.startswith("planar-pose") and "two-bone" in x)
    assert "n/a (unsupported)" in line and "0.0%" not in line


def test_partly_unsupported_cell_counts_all_solves(tmp_path):
    def edit(rows):
        k = 0
        for r in rows:
            if r["family"] == "planar-position" and r["solver"] == "ccd" and k < 10:
                r.update(status="unsupported", converged="0", q="", seed_distance="", solutions="0",
                         within_limits="0", iterations="0")
                k += 1

    d = synth.make_run(tmp_path / "r", edit_rows=edit)
    run = results.load(d)
    cell = figures.summarize(run, intervals=False).set_index(["family", "solver"]).loc[("planar-position", "ccd")]
    solves = run.solves.query("family == 'planar-position' and solver == 'ccd'")
    att = solves[solves.status != "unsupported"]
    assert cell["supported"] == 30 and cell["solves"] == 40
    assert cell["success_rate"] == pytest.approx((att.converged & att.within_limits).sum() / 40)
    assert cell["iterations_median"] == np.median(att["iterations"])
    assert cell["time_us_mean"] == pytest.approx(att["time_us"].mean())
    text = tables.summary_table(run, figures.summarize(run, n_resamples=100), table="full")
    assert "* partly unsupported" in text


def test_summary_csv_columns_and_values(run_dir):
    run = results.load(run_dir)
    path = figures.write_summary(run, n_resamples=300)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == results.SUMMARY_COLUMNS + figures.SUMMARY_EXTRA_COLUMNS
    assert rows[0][:15] == ["family", "solver", "solves", "supported", "converged", "success_rate",
                            "iterations_median", "iterations_p90", "position_error_median",
                            "orientation_error_median", "time_us_median", "time_us_p90", "fk_evals_mean",
                            "jacobian_evals_mean", "time_us_mean"]
    assert len(rows) == 1 + 6
    na = next(r for r in rows if r[0] == "planar-pose" and r[1] == "two-bone")
    at = rows[0].index("rank_of")
    assert na[2:5] == ["40", "0", "0"] and all(x == "" for x in na[5:at])
    assert na[at:at + 3] == ["2", "", ""]  # of 2 cells that ran; the load is unknown (no load in run.json)
    # the family's regime and targets are the family's (shown for an n/a cell too), its figures empty
    assert na[at + 3:at + 5] == ["unknown", "unknown"] and all(x == "" for x in na[at + 5:])
    df = pd.read_csv(path, float_precision="round_trip")
    s = figures.summarize(run, n_resamples=300)
    for c in results.SUMMARY_COLUMNS[2:] + ["time_us_outliers_mild", "time_us_outliers_severe", "rank"]:
        np.testing.assert_allclose(df[c].to_numpy(float), s[c].to_numpy(float), rtol=0, equal_nan=True)
    dls = df[(df.family == "planar-position") & (df.solver == "dls")].iloc[0]
    assert dls.time_us_median_ci_low <= dls.time_us_median <= dls.time_us_median_ci_high
    assert dls.success_ci_low <= dls.success_rate <= dls.success_ci_high
    assert dls.time_us_p99 <= dls.time_us_max
    again = figures.write_summary(run, path=run_dir / "again.csv", n_resamples=300)
    assert again.read_bytes() == path.read_bytes()  # same files, same figures


def test_error_medians_count_nan_as_worst():
    df = pd.DataFrame({"family": ["f"] * 3, "solver": ["s"] * 3, "status": ["stalled"] * 3,
                       "converged": [False] * 3, "within_limits": [True] * 3, "iterations": [1, 2, 3],
                       "position_error": [0.1, np.nan, np.nan], "orientation_error": [0.0, 0.0, 0.0],
                       "time_us": [1.0, 2.0, 3.0], "fk_evals": [1, 1, 1], "jacobian_evals": [1, 1, 1],
                       "dof": [2] * 3, "effectors": [1] * 3, "goal": ["position"] * 3})
    c = figures.cell_figures(df).iloc[0]
    assert c["position_error_median"] == np.inf and c["time_us_median"] == 2.0


def test_robot_families_of_a_version_1_urdf_run(tmp_path):
    class FakeRun:
        format_version = 1
        meta = {"suite": {"name": "ur5", "source": "/x/robots/ur5.urdf"}}
        families = [{"name": "ur5-pose", "description": "/x/robots/ur5.urdf: 5 random reachable pose targets"}]

    assert figures.robot_families(FakeRun()) == {"ur5-pose": "ur5"}
    FakeRun.meta = {"suite": {"name": "s", "source": "/nonexistent/suite.json"}}
    FakeRun.families = [{"name": "a-pose", "description": "targets for robots/panda.urdf"},
                        {"name": "chain7-pose", "description": "random chains"}]
    assert figures.robot_families(FakeRun()) == {"a-pose": "panda"}


def test_robot_table_of_a_version_2_run(tmp_path):
    import json

    d = synth.make_run(tmp_path / "r")
    meta = json.loads((d / "run.json").read_text())
    meta["families"][1]["robot"] = "planar-arm"
    (d / "run.json").write_text(json.dumps(meta))
    run = results.load(d)
    rob = figures.robot_summary(run)
    assert set(rob["robot"]) == {"planar-arm"} and set(rob["solver"]) == {"dls", "ccd", "two-bone"}
    na = rob[rob.solver == "two-bone"].iloc[0]
    assert not na["available"] and math.isnan(na["rank"])
    text = tables.robot_table(run, rob, table="full")
    assert "planar-arm" in text and "n/a (unsupported)" in text
