"""A run with a scene: the collision columns, and the numpy re-check (ikbench.collision) against
the harness's FCL figures. Skipped without the ikbench binary, saying so."""
import os
import subprocess

import numpy as np
import pytest
from conftest import REPO, harness_binary

from ikbench import figures, results, verify


@pytest.fixture(scope="module")
def scene_run(tmp_path_factory):
    exe = harness_binary()
    out = tmp_path_factory.mktemp("scene") / "run"
    p = subprocess.run([exe, "run", "--urdf", str(REPO / "scenarios/data/robots/ur5.urdf"), "--tip", "tool0",
                        "--scene", str(REPO / "scenarios/data/scenes/workcell.json"), "--samples", "40",
                        "--solvers", "auto,kdl-lma", "--threads", "1", "--out", str(out), "--progress", "none",
                        "--no-trace"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO / "python")))
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def test_columns_and_success_need_collision_free(scene_run):
    run = results.load(scene_run)
    s = run.solves
    assert list(s.columns[-3:]) == results.COLLISION_COLUMNS
    assert set(np.unique(s["collision_free"])) <= {0.0, 1.0}
    ok = figures.success_mask(s)
    assert not (ok & (s["collision_free"].to_numpy() == 0)).any()
    # kdl-lma (collision=off) answers some targets through an obstacle: the column is not constant.
    assert (s["collision_free"] == 0).any()


def test_numpy_distances_agree_with_fcl(scene_run):
    run = results.load(scene_run)
    rep = verify.verify_run(run)
    assert rep.collision_checked == len(run.solves)
    assert rep.disagreements.empty, verify.format_report(rep)
    # The numpy clearance of each q equals FCL's where the pair is apart (exact shapes only here).
    from ikbench import collision
    mid = run.problems["model"].iat[0]
    model = verify.Model(run.models[mid])
    scene = collision.prepare(run.models[mid]["scene"], [j["body"] for j in run.models[mid]["joints"]])
    Q = np.array([results.parse_q(q, "q") for q in run.solves["q"]])
    R, p = model.fk(Q)
    d, checked = collision.pair_distances(scene, R, p)
    assert checked.all()
    dmin = d.min(axis=1)
    fcl = run.solves["min_clearance"].to_numpy()
    apart = fcl > 1e-4
    assert apart.sum() > 20
    np.testing.assert_allclose(dmin[apart], fcl[apart], atol=1e-5)


def test_a_false_collision_free_claim_is_found(scene_run):
    run = results.load(scene_run)
    i = int(np.flatnonzero(run.solves["collision_free"].to_numpy() == 0)[0])
    run.solves.loc[run.solves.index[i], "collision_free"] = 1.0
    rep = verify.verify_run(run)
    assert len(rep.disagreements) == 1
    assert "false success (collision-free)" in rep.disagreements["finding"].iat[0]


def test_cpp_verify_rechecks_the_scene(scene_run):
    p = subprocess.run([harness_binary(), "verify", str(scene_run)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "80 of them checked for collisions in their scene: 0 disagree" in p.stdout
