"""A run with a scene: the collision columns, and the numpy re-check (ikbench.analysis.collision) against
the harness's FCL figures. Skipped without the ikbench binary, saying so."""
import os
import subprocess

import numpy as np
import pytest
from conftest import REPO, harness_binary

from ikbench.analysis import figures, verify
from ikbench.render import verify_render
from ikbench.io import results


def _workcell_run(out, urdf, samples):
    """`ikbench run` of the shipped robot `urdf` (base -> tool0) in the workcell scene, auto and
    kdl-lma on one thread, into `out`; the finished process."""
    p = subprocess.run([harness_binary(), "run", "--urdf", str(REPO / "scenarios/data/robots" / urdf), "--tip", "tool0",
                        "--scene", str(REPO / "scenarios/data/scenes/workcell.json"), "--samples", str(samples),
                        "--solvers", "auto,kdl-lma", "--threads", "1", "--out", str(out), "--progress", "none",
                        "--no-trace"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO / "python")))
    assert p.returncode == 0, p.stdout + p.stderr
    return p


@pytest.fixture(scope="module")
def scene_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("scene") / "run"
    _workcell_run(out, "ur5.urdf", 40)
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
    assert rep.disagreements.empty, verify_render.format_report(rep)
    # The numpy clearance of each q equals FCL's where the pair is apart (exact shapes only here).
    from ikbench.analysis import collision
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


# ---------------------------------------------------------------- doctored scene runs

def _rewrite_run_file(run_dir, name, fn):
    """Replaces the content of the run's NAME.gz by fn(content) and run.json's manifest entry to
    match (an honest edit of the bytes: what the verifiers must see through is the content)."""
    import gzip
    import json

    import synth

    path = run_dir / (name + ".gz")
    content = fn(gzip.decompress(path.read_bytes()))
    data = gzip.compress(content, mtime=0)
    path.write_bytes(data)
    meta = json.loads((run_dir / "run.json").read_text())
    entry = synth.manifest_entry(name, content)
    entry.update(bytes=len(data), fnv1a64=synth.fnv1a64(data))
    meta["files"][name + ".gz"] = entry
    (run_dir / "run.json").write_text(json.dumps(meta, indent=2) + "\n")


def _enlarge_barrel(content):
    """models.json with the scene's barrel grown to a radius of 0.7 m: it now reaches links in
    every configuration the joints can take, and answers recorded as collision-free collide."""
    import json

    doc = json.loads(content)
    (barrel,) = [o for o in doc["models"][0]["scene"]["obstacles"] if o["name"] == "barrel"]
    barrel["radius"] = 0.7
    return (json.dumps(doc) + "\n").encode()


def _flip_collision_free(content):
    """solves.csv with collision_free claimed 1 where the exact check found a collision (on rows
    that claim convergence within the limits: false successes) and 0 on the first three rows
    found free (false failures)."""
    lines = content.decode().split("\n")
    header = lines[0].split(",")
    c_free, c_conv, c_lim = (header.index(c) for c in ("collision_free", "converged", "within_limits"))
    flipped_free = 0
    for k, line in enumerate(lines[1:], 1):
        cells = line.split(",")
        if len(cells) != len(header):
            continue
        if cells[c_free] == "0" and cells[c_conv] == cells[c_lim] == "1":
            cells[c_free] = "1"
        elif cells[c_free] == "1" and flipped_free < 3:
            cells[c_free], flipped_free = "0", flipped_free + 1
        lines[k] = ",".join(cells)
    return "\n".join(lines).encode()


@pytest.mark.parametrize("doctor", ["enlarged-obstacle", "flipped-collision-free"])
def test_both_verifiers_count_the_same_disagreements_on_a_doctored_scene_run(doctor, scene_run, tmp_path):
    """A scene run doctored after the fact (an obstacle grown onto answers recorded as
    collision-free, or collision_free flipped in solves.csv): `ikbench verify` (C++, FCL) and
    ikbench.analysis.verify (numpy) find the same rows disagreeing and the same false successes. Both
    check the pairs the run recorded as checked: a verifier that derived its pairs again from the
    doctored scene would drop the pairs the grown obstacle touches in every configuration (as
    "always colliding") and call those answers collision-free."""
    import re
    import shutil

    run_dir = tmp_path / "doctored"
    shutil.copytree(scene_run, run_dir)
    if doctor == "enlarged-obstacle":
        _rewrite_run_file(run_dir, "models.json", _enlarge_barrel)
    else:
        _rewrite_run_file(run_dir, "solves.csv", _flip_collision_free)
    rep = verify.verify_run(results.load(run_dir))
    p = subprocess.run([harness_binary(), "verify", str(run_dir)], capture_output=True, text=True, timeout=300)
    m = re.search(r"(\d+) disagree \((\d+) false successes\)", p.stdout)
    assert p.returncode == 1 and m, p.stdout + p.stderr
    assert len(rep.disagreements) > 0 and rep.false_successes > 0, verify_render.format_report(rep)
    assert (int(m.group(1)), int(m.group(2))) == (len(rep.disagreements), rep.false_successes), \
        p.stdout[-2000:] + "\n" + verify_render.format_report(rep)


def test_a_checked_pair_naming_a_missing_obstacle_is_refused(scene_run, tmp_path):
    """A scene whose checked pairs name an obstacle it does not have (obstacle 99999) is refused by
    the reader, naming models.json, the pair and what was expected; `python3 -m ikbench verify`
    exits 2 with that one line."""
    import json
    import shutil

    from conftest import cli

    run_dir = tmp_path / "doctored"
    shutil.copytree(scene_run, run_dir)

    def doctor(content):
        doc = json.loads(content)
        doc["models"][0]["scene"]["pairs"][0] = [0, 99999, "obstacle"]
        return (json.dumps(doc) + "\n").encode()

    _rewrite_run_file(run_dir, "models.json", doctor)
    with pytest.raises(results.ResultsError, match=r"models.json(.gz)?: models\[0\]: scene: field 'pairs\[0\]': obstacle "
                                                   r"99999 is not one of the scene's 8 obstacles"):
        results.load(run_dir)
    p = cli("verify", run_dir)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "models.json" in p.stderr and "pairs[0]" in p.stderr and "Traceback" not in p.stderr


@pytest.fixture(scope="module")
def mesh_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mesh") / "run"
    p = _workcell_run(out, "ur5-meshes.urdf", 20)
    assert "links checked as: mesh 6" in p.stdout
    return out


def test_a_mesh_run_records_its_geometry_and_both_verifiers_agree(mesh_run, tmp_path):
    from ikbench.render import report_viewer
    run = results.load(mesh_run)
    mid = run.problems["model"].iat[0]
    scene = run.models[mid]["scene"]
    assert scene["geometry"] == {"mesh": 6}
    assert all(lk["type"] == "mesh" and lk["file"].endswith(".stl") for lk in scene["links"])
    # numpy checks no mesh pair: a collision FCL found there stands, and nothing disagrees.
    rep = verify.verify_run(run)
    assert rep.disagreements.empty, verify.format_report(rep)
    p = subprocess.run([harness_binary(), "verify", str(mesh_run)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    # The report's viewer gets every link mesh in its body frame.
    slim = report_viewer._slim_scene(scene, {j["body"]: i for i, j in enumerate(run.models[mid]["joints"])})
    assert len(slim["link_meshes"]) == 6


def test_a_scene_run_records_coverage_and_reasons_and_the_viewer_draws_every_checked_shape(scene_run):
    """models.json's scene says why each pair is left out and what covers each moving link
    (docs/collision.md, Coverage); the UR5's fitted geometry in the workcell is not flagged, and the
    report's viewer gets exactly the link shapes the world checks."""
    from ikbench.render import report_viewer
    run = results.load(scene_run)
    mid = run.problems["model"].iat[0]
    model = run.models[mid]
    scene = model["scene"]
    assert len(scene["disabled_reasons"]) == len(scene["disabled_pairs"])
    assert set(scene["disabled_reasons"]) <= {"adjacent", "scene", "overlap_at_rest", "always_colliding"}
    assert "overlap_at_rest" not in scene["disabled_reasons"]
    cov = scene["coverage"]
    assert cov["flagged"] is False and cov["uncovered"] == [] and cov["overlap_at_rest"] == []
    # Every moving link is named, with a shape or the link whose shape holds it.
    moving = set()
    for i, j in enumerate(model["joints"]):
        if j["type"] != "fixed" or (j["parent"] >= 0 and model["joints"][j["parent"]]["body"] in moving):
            moving.add(j["body"])
    assert set(cov["links"]) == moving
    assert all(text != "none" and "not covered" not in text for text in cov["links"].values())
    body_index = {j["body"]: i for i, j in enumerate(model["joints"])}
    slim = report_viewer._slim_scene(scene, body_index)
    assert len(slim["links"]) + len(slim["link_meshes"]) == len(scene["links"])
    assert sorted(l["type"] for l in slim["links"]) == sorted(l["type"] for l in scene["links"])
    assert "coverage_warning" not in slim


def test_a_flagged_scene_is_drawn_with_its_warning():
    """The viewer writes a flagged scene's warning: the links without a shape and the pairs never
    checked because they collide at rest."""
    from ikbench.render import report_viewer
    scene = {"name": "s", "obstacles": [], "links": [
        {"name": "a", "type": "sphere", "xyz": [0, 0, 0], "quat_xyzw": [0, 0, 0, 1], "radius": 0.1, "body": "a"},
        {"name": "b", "type": "box", "xyz": [0, 0, 0], "quat_xyzw": [0, 0, 0, 1], "size": [1, 1, 1], "body": "b"},
        {"name": "c", "type": "cylinder", "xyz": [0, 0, 0], "quat_xyzw": [0, 0, 0, 1], "radius": 0.1,
         "length": 0.5, "body": "c"}],
        "coverage": {"links": {}, "uncovered": ["wrist"], "overlap_at_rest": [["a", "c"]], "flagged": True}}
    slim = report_viewer._slim_scene(scene, {"a": 0, "b": 1, "c": 2})
    assert [l["type"] for l in slim["links"]] == ["sphere", "box", "cylinder"]
    assert "wrist" in slim["coverage_warning"] and "a~c" in slim["coverage_warning"]


def test_list_collision_names_each_link_and_why_pairs_are_left_out():
    p = subprocess.run([harness_binary(), "list", "collision", "--suite", "clutter"], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert "scene 'workcell'" in p.stdout
    assert "    link " in p.stdout and "adjacent" in p.stdout
    assert "coverage: " in p.stdout
