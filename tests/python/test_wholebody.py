"""Whole-body runs in the analysis library (docs/wholebody.md): the numpy centre of mass and bound
violations of the independent cross-check, the reader's checks of goal priorities and bounds, and
the per-level figures of the summary."""
import math
import subprocess

import numpy as np
import pandas as pd
import pytest

from ikbench.analysis import figures, levels, verify
from ikbench.io import results
from ikbench.io.results_models import validate_problem
from ikbench.io.results_schema import ResultsError

from conftest import cli


def _joint(name, parent, xyz, mass, com, idx):
    return {"name": name, "body": name, "parent": parent, "type": "revolute",
            "parent_T_joint": {"xyz": xyz, "quat_xyzw": [0, 0, 0, 1]}, "axis": [0, 0, 1],
            "lower": [None], "upper": [None], "weight": [1], "idx_q": idx, "idx_v": idx, "mass": mass, "com": com}


TWO_LINK = {"id": "m0", "name": "two-link", "nq": 2, "nv": 2,
            "joints": [_joint("a", -1, [0, 0, 0], 2.0, [0.5, 0, 0], 0), _joint("b", 0, [1, 0, 0], 1.0, [0.4, 0, 0], 1)]}


def test_centre_of_mass_matches_the_hand_computation():
    a, b = 0.7, -1.1
    m = verify.Model(TWO_LINK)
    R, p = m.fk(np.array([[a, b]]))
    com = m.centre_of_mass(R, p)[0]
    whole = np.array([2 * 0.5 * math.cos(a) + math.cos(a) + 0.4 * math.cos(a + b),
                      2 * 0.5 * math.sin(a) + math.sin(a) + 0.4 * math.sin(a + b), 0]) / 3
    np.testing.assert_allclose(com[0], whole, atol=1e-14)
    link2 = np.array([math.cos(a) + 0.4 * math.cos(a + b), math.sin(a) + 0.4 * math.sin(a + b), 0])
    np.testing.assert_allclose(com[1], link2, atol=1e-14)


def test_bound_violation_is_the_largest_violation():
    box = {"kind": "half_spaces", "normals": [[1, 0, 0], [-1, 0, 0]], "offsets": [1.0, 1.0]}
    assert verify.bound_violation(box, np.array([0.5, 0, 0])) == 0.0
    assert verify.bound_violation(box, np.array([1.25, 0, 0])) == pytest.approx(0.25)
    assert verify.bound_violation(box, np.array([-3.0, 7, 0])) == pytest.approx(2.0)
    ball = {"kind": "inside_ball", "centre": [0, 0, 1], "radius": 0.5}
    assert verify.bound_violation(ball, np.array([0, 0, 2.0])) == pytest.approx(0.5)
    assert verify.bound_violation(dict(ball, kind="outside_ball"), np.array([0, 0, 1.1])) == pytest.approx(0.4)
    assert verify.bound_violation(dict(ball, kind="outside_ball"), np.array([0, 0, 2.0])) == 0.0


def _problem(**goal):
    g = {"body": "b", "body_index": 1, "point": [0, 0, 0], "kind": "position", "target_position": [0, 0, 0],
         "target_quat_xyzw": [0, 0, 0, 1], "weight": 1, "orientation_scale": 1}
    g.update(goal)
    return {"model": "m0", "name": "p", "q0": [0, 0], "goals": [g]}


@pytest.mark.parametrize("goal,message", [
    ({"priority": -1}, "priority"),
    ({"priority": 1.5}, "priority"),
    ({"bound": {"kind": "box"}}, "bound.kind"),
    ({"kind": "pose", "bound": {"kind": "inside_ball", "centre": [0, 0, 0], "radius": 1}}, "needs a position or com"),
    ({"bound": {"kind": "half_spaces", "normals": [[2, 0, 0]], "offsets": [1]}}, "unit vector"),
    ({"bound": {"kind": "half_spaces", "normals": [[1, 0, 0]], "offsets": [1, 2]}}, "offsets"),
    ({"bound": {"kind": "outside_ball", "centre": [0, 0, 0], "radius": -1}}, "radius"),
])
def test_reader_refuses_bad_priorities_and_bounds(goal, message):
    with pytest.raises(ResultsError, match=message):
        validate_problem(_problem(**goal), "problems.jsonl:1", {"m0": TWO_LINK})


def test_reader_takes_priorities_and_bounds():
    validate_problem(_problem(priority=2, bound={"kind": "half_spaces", "normals": [[0, 0, 1]], "offsets": [1]}),
                     "problems.jsonl:1", {"m0": TWO_LINK})
    validate_problem(_problem(kind="com"), "problems.jsonl:1", {"m0": TWO_LINK})


def test_level_figures_count_levels_met_from_the_top():
    solves = pd.DataFrame({
        "family": ["f"] * 4 + ["plain"], "solver": ["dls"] * 5,
        "levels_met": [2, 1, 0, np.nan, np.nan],
        "level_errors": ["0:0 0:0", "0:0 0.5:0", "0.2:0 0:0", "", ""],
    })
    lv = levels.level_figures(solves).set_index("family")
    assert list(lv.index) == ["f"]  # a family without levels has no level figures
    assert lv.loc["f", "levels"] == 2
    assert lv.loc["f", "level_success"] == "0.5 0.25"  # of all 4 solves, the unattempted one meets none
    assert lv.loc["f", "levels_met_mean"] == pytest.approx(0.75)
    assert lv.loc["f", "level0_error_median"] == 0.0 and lv.loc["f", "level0_error_p90"] == pytest.approx(0.2)
    with pytest.raises(ValueError, match="position:orientation"):
        levels.parse_level_errors("0.1")


def test_shipped_wholebody_suite_is_cross_checked_and_summarised(tmp_path):
    from conftest import harness_binary

    out = tmp_path / "wb"
    subprocess.run([harness_binary(), "run", "--suite", "wholebody", "--threads", "1", "--out", str(out)],
                   check=True, capture_output=True, text=True, timeout=600)
    run = results.load(out)
    assert {"level_errors", "levels_met"} <= set(run.solves.columns)
    report = verify.verify_run(run)
    # numpy's centres of mass and bound violations give the harness's errors and verdicts.
    assert report.checked == len(run.solves) and report.disagreements.empty, report.disagreements
    assert max(report.max_error_difference) < 1e-9
    # A levels_met the recomputation does not give is a finding (tampered in memory).
    i = int(np.flatnonzero(run.solves["levels_met"].notna().to_numpy())[0])
    claimed = int(run.solves["levels_met"].iat[i])
    run.solves.loc[run.solves.index[i], "levels_met"] = claimed + 1
    tampered = verify.verify_run(run)
    assert list(tampered.disagreements["finding"]) == [f"levels_met {claimed + 1}, recomputed {claimed}"]
    run.solves.loc[run.solves.index[i], "levels_met"] = claimed
    summary = figures.summarize(run, intervals=False)
    assert summary["level_success"].notna().all()
    text = figures.summary_csv_text(summary)
    assert text.splitlines()[0].endswith(",".join(levels.LEVEL_SUMMARY_COLUMNS))
    p = cli("verify", out, "--ikbench", harness_binary(), check=0)
    assert "agrees with it on all" in p.stdout
