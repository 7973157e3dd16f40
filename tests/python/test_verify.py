"""ikbench.analysis.verify: the independent forward kinematics and the re-check of every solve."""
import json
import math

import numpy as np
import pytest
import synth
from conftest import cli
from scipy.spatial.transform import Rotation

from ikbench.io import results
from ikbench.analysis import verify


def test_planar_fk_matches_the_closed_form():
    m = verify.Model(synth.planar_model())
    rng = np.random.default_rng(4)
    Q = rng.uniform(-3, 3, size=(20, 2))
    R, p = m.fk(Q)
    for q, Rt, pt in zip(Q, R[:, 2], p[:, 2]):
        tip, ang = synth.planar_fk(q)
        np.testing.assert_allclose(pt, tip, atol=1e-14)
        np.testing.assert_allclose(Rt, Rotation.from_euler("z", ang).as_matrix(), atol=1e-14)


def _mixed_model():
    """free root, ball, prismatic, revolute with a rotated joint frame, fixed tip."""
    def pose(xyz, quat):
        return {"xyz": xyz, "quat_xyzw": quat}

    rq = Rotation.from_euler("xyz", [0.3, -0.2, 0.5]).as_quat().tolist()
    joints = [
        {"type": "free", "parent": -1, "parent_T_joint": pose([0.1, 0, 0], [0, 0, 0, 1]), "axis": None,
         "lower": [None] * 6, "upper": [None] * 6, "idx_q": 0, "idx_v": 0},
        {"type": "ball", "parent": 0, "parent_T_joint": pose([0, 0.5, 0], rq), "axis": None,
         "lower": [-1.0] * 3, "upper": [1.0] * 3, "idx_q": 7, "idx_v": 6},
        {"type": "prismatic", "parent": 1, "parent_T_joint": pose([0, 0, 0.3], [0, 0, 0, 1]), "axis": [0, 1, 1],
         "lower": [-0.2], "upper": [0.2], "idx_q": 11, "idx_v": 9},
        {"type": "revolute", "parent": 2, "parent_T_joint": pose([0.2, 0, 0], rq), "axis": [1, 0, 0],
         "lower": [-2.0], "upper": [2.0], "idx_q": 12, "idx_v": 10},
        {"type": "fixed", "parent": 3, "parent_T_joint": pose([0, 0, 0.4], [0, 0, 0, 1]), "axis": None,
         "lower": [], "upper": [], "idx_q": 13, "idx_v": 11},
    ]
    return {"id": "mx", "nq": 13, "nv": 11, "joints": joints}


def test_fk_of_every_joint_type_matches_scipy_composition():
    model = _mixed_model()
    m = verify.Model(model)
    rng = np.random.default_rng(9)
    for _ in range(10):
        q = np.concatenate([rng.normal(size=3), Rotation.random(random_state=rng).as_quat(),
                            Rotation.random(random_state=rng).as_quat(), [0.15], [1.1]])
        R, p = m.fk(q[None, :])
        # the same chain composed with scipy Rotation objects: world = parent * joint frame * motion
        rot, pos = Rotation.identity(), np.zeros(3)
        motions = [(Rotation.from_quat(q[3:7]), q[0:3]), (Rotation.from_quat(q[7:11]), np.zeros(3)),
                   (Rotation.identity(), 0.15 * np.array([0, 1, 1]) / math.sqrt(2)),
                   (Rotation.from_rotvec(1.1 * np.array([1.0, 0, 0])), np.zeros(3)), (Rotation.identity(), np.zeros(3))]
        for i, (j, (mr, mt)) in enumerate(zip(model["joints"], motions)):
            jr = Rotation.from_quat(j["parent_T_joint"]["quat_xyzw"])
            pos = pos + rot.apply(j["parent_T_joint"]["xyz"])
            rot = rot * jr
            pos = pos + rot.apply(mt)
            rot = rot * mr
            np.testing.assert_allclose(p[0, i], pos, atol=1e-12)
            np.testing.assert_allclose(R[0, i], rot.as_matrix(), atol=1e-12)
        vals, lo, up = m.limit_values(q[None, :])
        assert vals.shape == (1, 11) and lo.shape == (11,)
        np.testing.assert_allclose(vals[0, 6:9], Rotation.from_quat(q[7:11]).as_rotvec(), atol=1e-12)


def test_rotation_angle_is_accurate_near_zero_and_pi():
    for a in (1e-9, 1e-5, 0.3, math.pi - 1e-7):
        R = Rotation.from_rotvec(a * np.array([0.6, 0.0, 0.8])).as_matrix()
        assert verify.rotation_angle(R) == pytest.approx(a, rel=1e-9)


def test_honest_run_passes(run_dir):
    report = verify.verify_run(results.load(run_dir))
    assert report.disagreements.empty
    assert report.checked == 200 and report.skipped == 40
    assert report.max_error_difference[0] < 1e-12
    p = cli("verify", run_dir, check=0)
    assert "OK" in p.stdout


def _tamper(rows):
    """Row of problem 2 of planar-position x dls claims convergence with a configuration that
    misses the target by about 1 mm; problem 4's honest success is written as a failure."""
    for r in rows:
        if r["family"] == "planar-position" and r["solver"] == "dls" and r["problem"] in ("2", "4"):
            q = np.array([float(x) for x in r["q"].split()])
            if r["problem"] == "2":
                r.update(q=synth.qtext(q + [1e-3, 0]), converged="1", within_limits="1", status="converged",
                         position_error="1e-07")
            else:
                assert r["converged"] == "1"
                r.update(converged="0", status="stalled")


def test_false_success_and_false_failure_are_reported(tmp_path):
    d = synth.make_run(tmp_path / "r", edit_rows=_tamper)
    run = results.load(d)
    report = verify.verify_run(run)
    dis = report.disagreements.set_index("problem")
    assert sorted(dis.index) == [2, 4]
    assert dis.loc[2, "finding"] == "false success (converged)"
    row = run.solves.query("family == 'planar-position' and solver == 'dls' and problem == 2").iloc[0]
    goal = run.problem("planar-position", 2)["goals"][0]
    expected = synth.errors([float(x) for x in row["q"].split()], goal)[0]
    assert expected > 1e-4
    assert dis.loc[2, "recomputed_position_error"] == pytest.approx(expected, rel=1e-9)
    assert dis.loc[4, "finding"] == "false failure (converged)"
    assert (dis["family"] == "planar-position").all() and (dis["solver"] == "dls").all()
    p = cli("verify", d, check=1)
    assert "false success" in p.stdout and "solves.csv:" in p.stdout


def test_limits_are_recomputed(tmp_path):
    def edit(rows):
        r = next(r for r in rows if r["family"] == "planar-pose" and r["solver"] == "dls" and r["converged"] == "1")
        r["q"] = synth.qtext([float(x) for x in r["q"].split()][:1] + [3.0])  # outside +-2.5, claims within
        r["converged"] = "0"

    d = synth.make_run(tmp_path / "r", edit_rows=edit)
    dis = verify.verify_run(results.load(d)).disagreements
    assert len(dis) == 1 and dis.iloc[0]["finding"] == "false success (within limits)"


def test_borderline_rows_agree(tmp_path):
    # A solve whose recomputed error is within a relative 1e-9 of the tolerance agrees whatever
    # it claims; just outside that band it is a disagreement. The target of problem 0 of
    # planar-position is moved to `factor` tolerances from the tip that dls returned.
    for factor, claim, expect in ((1 + 1e-11, "1", 0), (1 - 1e-11, "0", 0), (1.001, "1", 1), (0.999, "0", 1)):
        d = synth.make_run(tmp_path / f"r{factor}-{claim}", solvers={"dls": (1.0, 1.0, (5, 10))})
        run = results.load(d)
        row = run.solves.query("family == 'planar-position' and problem == 0").iloc[0]
        tip, _ = synth.planar_fk([float(x) for x in row["q"].split()])
        lines = (d / "problems.jsonl").read_text().splitlines()
        rec = json.loads(lines[0])
        assert (rec["family"], rec["problem"]) == ("planar-position", 0)
        rec["goals"][0]["target_position"] = [tip[0] + factor * synth.TOL, tip[1], tip[2]]
        lines[0] = json.dumps(rec)
        (d / "problems.jsonl").write_text("\n".join(lines) + "\n")
        solves = (d / "solves.csv").read_text().splitlines()
        f = solves[1].split(",")
        f[8] = claim
        solves[1] = ",".join(f)
        (d / "solves.csv").write_text("\n".join(solves) + "\n")
        synth.rewrite_manifest(d)
        report = verify.verify_run(results.load(d))
        assert len(report.disagreements) == expect, (factor, claim, report.disagreements)
        assert report.borderline == 1 - expect


def test_version_1_run_is_bad_input_for_verify(tmp_path, run_dir):
    meta = json.loads((run_dir / "run.json").read_text())
    for k in ("format_version", "complete", "files"):
        meta.pop(k)
    meta["format"] = "ikbench-run/1"
    (run_dir / "run.json").write_text(json.dumps(meta))
    p = cli("verify", run_dir, check=2)
    assert "format version 2" in p.stderr and len(p.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- the harness's verdict

def test_harness_verdicts_decide_and_numpy_agrees_with_them(tmp_path):
    """With the harness's verdicts (`ikbench verify --verdicts`) the findings are the harness's, and
    the numpy recomputation, held to them, agrees on every row of a tampered run."""
    from ikbench.io import verdicts

    from conftest import harness_binary

    d = synth.make_run(tmp_path / "r", edit_rows=_tamper)
    v = verdicts.from_harness(harness_binary(), d)
    assert len(v) == 200 and set(v["file"]) == {"solves.csv"}
    report = verify.verify_run(results.load(d), verdicts=v)
    assert report.verdict_source == "ikbench verify" and report.cross_checked == 200
    assert report.cross_check.empty, report.cross_check
    dis = report.disagreements.set_index("problem")
    assert sorted(dis.index) == [2, 4] and report.false_successes == 1
    assert dis.loc[2, "finding"] == "false success (converged)"
    # A verdict the harness did not give (one flipped in its file) is a cross-check finding.
    v.loc[(v["family"] == "planar-position") & (v["problem"] == 7) & (v["solver"] == "dls"), "converged"] ^= True
    flipped = verify.verify_run(results.load(d), verdicts=v)
    assert list(flipped.cross_check["what"]) == ["converged"] and list(flipped.cross_check["problem"]) == [7]
    # The command line: the harness decides, numpy cross-checks, exit 1 for the findings.
    p = cli("verify", d, "--ikbench", harness_binary(), check=1)
    assert "verdict: the harness's" in p.stdout and "agrees with it on all 200 solves" in p.stdout


@pytest.mark.parametrize("robot,scene", [("ur5.urdf", "workcell"), ("irb2400.urdf", "workcell"),
                                         ("panda.urdf", "workcell"), ("iiwa14.urdf", "workcell"),
                                         ("ur5-meshes.urdf", "workcell"),
                                         ("ur5.urdf", "box-field")])
def test_numpy_cross_check_agrees_with_the_harness_on_shipped_robots_and_scenes(robot, scene, tmp_path):
    """Every shipped arm a shipped scene admits (the Puma's second link turns through the table of
    both arm scenes: a scene the run refuses) in it: numpy's forward kinematics, limits and distances agree
    with the harness's verdict (FCL's exact check) on every answer of auto and dls."""
    import subprocess

    from ikbench.io import verdicts

    from conftest import REPO, harness_binary

    out = tmp_path / "run"
    p = subprocess.run([harness_binary(), "run", "--urdf", str(REPO / "scenarios/data/robots" / robot),
                        "--scene", str(REPO / "scenarios/data/scenes" / f"{scene}.json"), "--samples", "12",
                        "--solvers", "auto,dls", "--seed", "4", "--progress", "none", "--no-summary",
                        "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    v = verdicts.from_harness(harness_binary(), out)
    report = verify.verify_run(results.load(out), verdicts=v)
    assert report.cross_checked == 24 and report.collision_checked == 24
    assert report.cross_check.empty, report.cross_check.to_string()
    assert report.disagreements.empty, report.disagreements.to_string()
