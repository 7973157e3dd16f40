"""Outcomes, seed regimes and answer quality (python/ikbench/analysis/outcomes.py, verify_quality.py,
docs/protocols.md), on constructed solves whose answers are known in closed form, and on runs of
the `ikbench` binary's protocols."""
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import synth
from conftest import REPO, cli, harness_binary

from ikbench.analysis import figures, outcomes, report_quality, stats, verify_quality
from ikbench.io import results


def _solves(rows):
    return pd.DataFrame(rows, columns=["family", "status", "converged", "within_limits"])


def test_each_outcome_on_constructed_solves():
    fams = {"reach": {"targets": "reachable"}, "far": {"targets": "unreachable"}}
    cases = [
        ("reach", "converged", True, True, "converged"),
        ("reach", "max-iterations", True, True, "converged"),        # FK decides, not the status
        ("reach", "false-convergence", False, True, "wrong"),        # claimed; FK disagrees
        ("reach", "converged", True, False, "wrong"),                # met, outside the limits
        ("reach", "stalled", False, True, "not-found"),
        ("reach", "time-limit", False, True, "timed-out"),
        ("far", "stalled", False, True, "refused"),
        ("far", "max-iterations", False, True, "refused"),
        ("far", "time-limit", False, True, "timed-out"),
        ("far", "false-convergence", False, True, "wrong"),
        ("reach", "unsupported", False, False, "not-attempted"),
        ("far", "invalid-input", False, False, "not-attempted"),
    ]
    got = outcomes.outcomes(_solves([c[:4] for c in cases]), fams)
    assert list(got) == [c[4] for c in cases]
    for fam, st, conv, lim, want in cases:
        assert outcomes.outcome_of(st, conv, lim, fams[fam]["targets"] == "unreachable") == want


def _reach_far_run(tmp_path, **kw):
    """The synthetic planar run with its pose family marked unreachable and regimes recorded: `ccd`
    never converges (so it refuses every pose target), `dls` mostly does."""
    solvers = {"dls": (0.8, 1.0, (5, 20)), "ccd": (0.0, 0.5, (10, 30)), "two-bone": (1.0, 0.2, (1, 1))}
    d = synth.make_run(tmp_path / "run", problems=30, solvers=solvers, **kw)
    meta = json.loads((d / "run.json").read_text())
    for f in meta["families"]:
        f["targets"] = "unreachable" if f["name"] == "planar-pose" else "reachable"
        f["start"] = "near:0.1" if f["name"] == "planar-pose" else "random"
    (d / "run.json").write_text(json.dumps(meta))
    return d


def test_summary_has_outcome_rates_with_wilson_intervals_and_the_regime(tmp_path):
    run = results.load(_reach_far_run(tmp_path))
    s = figures.summarize(run, n_resamples=100).set_index(["family", "solver"])
    cls = outcomes.outcomes(run)
    for (fam, solver), r in s.iterrows():
        if not r["supported"]:
            assert math.isnan(r["refused_rate"])
            continue
        mask = ((run.solves["family"] == fam) & (run.solves["solver"] == solver)).to_numpy()
        n = int(mask.sum())
        for o in outcomes.RATED:
            k = int((cls[mask] == o).sum())
            key = o.replace("-", "_")
            lo, hi = stats.wilson_intervals(np.array([k]), np.array([n]))
            assert r[f"{key}_rate"] == pytest.approx(k / n)
            assert (r[f"{key}_ci_low"], r[f"{key}_ci_high"]) == pytest.approx((lo[0], hi[0]))
        assert r["start"] == ("near:0.1" if fam == "planar-pose" else "random")
    pose = s.loc[("planar-pose", "ccd")]
    assert pose["refused_rate"] == 1.0 and pose["not_found_rate"] == 0.0 and pose["success_rate"] == 0.0
    assert s.loc[("planar-position", "ccd"), "not_found_rate"] == 1.0
    reg = outcomes.regime_figures(run).set_index(["regime", "solver"])
    assert reg.loc[("near:0.1", "ccd"), "success_rate"] == 0.0
    assert reg.loc[("random", "dls"), "solves"] == 30
    # The median time's interval: the seeded percentile bootstrap of the regime's attempted times.
    att = run.solves[(run.solves["family"] == "planar-position") & (run.solves["solver"] == "dls")]
    lo, hi = stats.bootstrap_intervals([att["time_us"].to_numpy(dtype=float)], "median")
    assert (reg.loc[("random", "dls"), "time_us_median_ci_low"],
            reg.loc[("random", "dls"), "time_us_median_ci_high"]) == pytest.approx((lo[0], hi[0]))
    assert lo[0] <= reg.loc[("random", "dls"), "time_us_median"] <= hi[0]
    text = figures.summary_csv_text(figures.summarize(run, n_resamples=100))
    head = text.splitlines()[0].split(",")
    assert head == figures.SUMMARY_CSV_COLUMNS and "near:0.1" in text


def _add_quality(directory, tamper=None):
    """Appends the quality columns to a synthetic run's solves.csv, each computed in closed form for
    the unit two-link planar chain: position rows |det J| = |sin q1|; pose rows sqrt(det(J^T J)) of
    the position rows and the rotation row (1, 1); limit margin min(q + 2.5, 2.5 - q) / 5."""
    d = Path(directory)
    df = pd.read_csv(d / "solves.csv", dtype=str, keep_default_na=False)
    run = results.load(d)
    cls = outcomes.outcomes(run)
    cols = {c: [] for c in results.QUALITY_COLUMNS}
    for i, r in df.iterrows():
        cols["outcome"].append(cls[i])
        man = lim = ""
        if cls[i] == "converged":
            q = np.array([float(x) for x in r["q"].split()])
            s0, c0, s01, c01 = math.sin(q[0]), math.cos(q[0]), math.sin(q.sum()), math.cos(q.sum())
            Jp = np.array([[-s0 - s01, -s01], [c0 + c01, c01]])
            if r["goal"] == "position":
                man = repr(abs(math.sin(q[1])))
            else:
                J = np.vstack([Jp, [[1.0, 1.0]]])
                man = repr(math.sqrt(np.linalg.det(J.T @ J)))
            lim = repr(float(np.min(np.minimum(q + synth.LIMIT, synth.LIMIT - q) / (2 * synth.LIMIT))))
        cols["manipulability"].append(man)
        cols["limit_margin"].append(lim)
        for c in results.QUALITY_COLUMNS[3:]:
            cols[c].append("")  # independent problems: no motion between frames
    for c, v in cols.items():
        df[c] = v
    if tamper:
        tamper(df)
    df.to_csv(d / "solves.csv", index=False, lineterminator="\n")
    synth.rewrite_manifest(d)
    return d


def test_python_verifier_recomputes_every_quality_column(tmp_path):
    d = _add_quality(_reach_far_run(tmp_path))
    rep = verify_quality.verify_quality(results.load(d))
    assert rep.checked > 0 and rep.disagreements.empty, rep.disagreements
    assert cli("verify", d).returncode == 0


@pytest.mark.parametrize("column,change", [("manipulability", lambda v: repr(float(v) * 1.01)),
                                           ("limit_margin", lambda v: repr(float(v) + 0.01)),
                                           ("outcome", lambda v: "not-found")])
def test_python_verifier_finds_a_changed_quality_value(tmp_path, column, change):
    def tamper(df):
        i = int(np.flatnonzero((df["outcome"] == "converged").to_numpy())[3])
        df.loc[i, column] = change(df.loc[i, column])
    d = _add_quality(_reach_far_run(tmp_path), tamper)
    rep = verify_quality.verify_quality(results.load(d))
    assert list(rep.disagreements["column"]) == [column]
    p = cli("verify", d)
    assert p.returncode == 1 and f"column '{column}'" in p.stdout


def test_motion_figures_are_the_backward_differences():
    model = verify_quality.Model(synth.planar_model())
    r, c = 40.0, 1e-3
    hist = [np.array([c * k ** 3, -c * k ** 3]) for k in (5, 4, 3, 2)]
    jump, vel, acc, jerk = verify_quality.motion(model, hist, r)
    d = c * (125 - 64)
    assert jump == pytest.approx(d)
    assert vel == pytest.approx(math.sqrt(2) * d * r)
    assert acc == pytest.approx(math.sqrt(2) * 6 * c * 4 * r * r)
    assert jerk == pytest.approx(math.sqrt(2) * 6 * c * r ** 3)
    assert all(math.isnan(x) for x in verify_quality.motion(model, hist[:2], r)[2:])


def test_an_unknown_outcome_is_a_bad_input(tmp_path):
    d = _add_quality(_reach_far_run(tmp_path), lambda df: df.__setitem__("outcome", "maybe"))
    with pytest.raises(results.ResultsError, match="outcome"):
        results.load(d)


# ---------------------------------------------------------------- the binary's protocols


@pytest.mark.parametrize("protocol,samples", [("ikfast-test", 20), ("tracking", 12), ("seeds", 6), ("trac-ik", 6)])
def test_a_protocol_run_verifies_and_summarizes(tmp_path, protocol, samples):
    exe = harness_binary()
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    p = subprocess.run([exe, "run", "--protocol", protocol, "--urdf", str(REPO / "scenarios/data/robots/ur5.urdf"),
                        "--samples", str(samples), "--solvers", "auto,dls", "--threads", "1", "--out", str(out),
                        "--progress", "none", "--no-summary"], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    run = results.load(out)
    assert run.meta["protocol"] == protocol and all(c in run.solves for c in results.QUALITY_COLUMNS)
    rep = verify_quality.verify_quality(run)
    assert rep.disagreements.empty, rep.disagreements.head()
    v = cli("verify", out)
    assert v.returncode == 0, v.stdout
    table = subprocess.run([sys.executable, str(REPO / "scripts" / "protocol_table.py"), protocol, str(out)],
                           capture_output=True, text=True, timeout=300, env=env)
    assert table.returncode == 0, table.stderr
    assert "| auto" in table.stdout.replace("  ", " ") and "load average" in table.stdout
    if protocol == "seeds":  # median times with their bootstrap intervals
        assert re.search(r"\| \d+\.\d \[\d+\.\d, \d+\.\d\]", table.stdout), table.stdout
    if protocol == "trac-ik":  # the UR5 is in the published table
        assert "TRAC-IK (published) | 99.64%" in " ".join(table.stdout.split())
    s = figures.summarize(run, n_resamples=100)
    block = report_quality.quality_block(run, s, {})
    assert block["recorded"] and block["outcomes"]["rows"]
    if protocol == "tracking":
        assert s["joint_velocity_rms"].notna().all() and s["joint_jump_max"].notna().all()
        assert any(f["metric"] == "joint_jerk" for figs in block["figures"].values() for f in figs)
    if protocol == "ikfast-test":
        far = s[s["targets"] == "unreachable"]
        assert (far["not_found_rate"] == 0).all() and (far["refused_rate"] + far["timed_out_rate"] == 1).all()
    if protocol == "seeds":
        assert set(s["start"]) == {"nominal", "random", "near:0.1", "near:0.5"}
        assert s.loc[s["start"] == "random", "starts_per_target"].eq(10).all()
        assert s.loc[s["start"] == "random", "targets_solved_rate"].notna().all()
