"""Models from URDF, BVH and the generators; forward kinematics checked
against the UR5's DH table, an independent numpy FK of the URDF files and a
C++ program that calls the library directly."""

import math
import os
import subprocess

import numpy as np
import pytest

from pyb_helpers import ARMS, ROBOTS, SKELETONS, UrdfChain, arm, ik, quat_to_matrix, rotation_angle

# UR's standard DH table (scenarios/data/robots/ur5.urdf): d, a, alpha.
UR5_DH = [
    (0.089159, 0.0, math.pi / 2),
    (0.0, -0.425, 0.0),
    (0.0, -0.39225, 0.0),
    (0.10915, 0.0, math.pi / 2),
    (0.09465, 0.0, -math.pi / 2),
    (0.0823, 0.0, 0.0),
]


def ur5_dh_fk(q):
    """frame_{i-1} -> frame_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)."""
    T = np.eye(4)
    for theta, (d, a, alpha) in zip(q, UR5_DH):
        ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
        T = T @ np.array([
            [ct, -st * ca, st * sa, a * ct],
            [st, ct * ca, -ct * sa, a * st],
            [0, sa, ca, d],
            [0, 0, 0, 1],
        ])
    return T


def test_ur5_tool0_at_zero_is_the_documented_point():
    model = ik.Model.from_urdf(ROBOTS / "ur5.urdf")
    pos, quat = model.fk(np.zeros(model.nq), "tool0")
    np.testing.assert_allclose(pos, [-0.81725, -0.19145, -0.005491], atol=1e-12)
    assert quat.shape == (4,)
    assert quat[3] >= 0


def test_ur5_fk_matches_the_dh_product():
    model = ik.Model.from_urdf(ROBOTS / "ur5.urdf")
    for seed in range(20):
        q = model.random_configuration(seed)
        pos, quat = model.fk(q, "tool0")
        T = ur5_dh_fk(q)
        np.testing.assert_allclose(pos, T[:3, 3], atol=1e-12)
        assert rotation_angle(quat_to_matrix(quat), T[:3, :3]) < 1e-12


@pytest.mark.parametrize("name", sorted(ARMS))
def test_fk_matches_an_independent_urdf_fk(name):
    model, chain, tip = arm(name)
    assert chain.dof == model.nv
    for seed in range(10):
        q = model.random_configuration(seed)
        pos, quat = model.fk(q, tip)
        T = chain.fk(q)
        np.testing.assert_allclose(pos, T[:3, 3], atol=1e-12)
        assert rotation_angle(quat_to_matrix(quat), T[:3, :3]) < 1e-12


@pytest.mark.parametrize("name", sorted(ARMS))
def test_fk_and_seeded_configurations_match_the_cxx_library(name):
    exe = os.environ.get("IKBENCH_PY_REFERENCE")
    if not exe or not os.path.exists(exe):
        pytest.skip("IKBENCH_PY_REFERENCE (the C++ helper ikbench_py_reference) is not set; ctest sets it")
    path, tip = ARMS[name]
    model = ik.Model.from_urdf(path)
    seed, count = 1000, 12
    out = subprocess.run([exe, "fk", str(path), "-", "-", tip, str(seed), str(count)], check=True,
                         capture_output=True, text=True).stdout.split("\n")
    rows = [np.array([float(v) for v in line.split()]) for line in out if line.strip()]
    assert len(rows) == count
    for k, row in enumerate(rows):
        q_cpp, p_cpp, R_cpp = row[:model.nq], row[model.nq:model.nq + 3], row[model.nq + 3:].reshape(3, 3)
        q = model.random_configuration(seed + k)
        np.testing.assert_array_equal(q, q_cpp)  # the same Rng stream, bit for bit
        pos, quat = model.fk(q, tip)
        np.testing.assert_allclose(pos, p_cpp, atol=1e-14)
        np.testing.assert_allclose(quat_to_matrix(quat), R_cpp, atol=1e-14)


def test_batch_fk_equals_row_by_row_and_point_offsets_move_with_the_body():
    model, _, tip = arm("panda")
    qs = np.array([model.random_configuration(s) for s in range(7)])
    P, Q = model.fk(qs, tip)
    assert P.shape == (7, 3) and Q.shape == (7, 4)
    point = np.array([0.1, -0.02, 0.05])
    P2, _ = model.fk(qs, tip, point=point)
    for i, q in enumerate(qs):
        p, quat = model.fk(q, tip)
        np.testing.assert_array_equal(P[i], p)
        np.testing.assert_array_equal(Q[i], quat)
        np.testing.assert_allclose(P2[i], p + quat_to_matrix(quat) @ point, atol=1e-14)
    # Body by index: the same body.
    np.testing.assert_array_equal(model.fk(qs[0], model.body_index(tip))[0], P[0])
    # body_poses holds every body's pose, the tip's among them.
    poses, quats = model.body_poses(qs[0])
    assert poses.shape == (model.num_bodies, 3)
    np.testing.assert_array_equal(poses[model.body_index(tip)], P[0])
    np.testing.assert_array_equal(quats[model.body_index(tip)], Q[0])


def test_ur5_model_description():
    model = ik.Model.from_urdf(ROBOTS / "ur5.urdf")
    assert (model.nq, model.nv) == (6, 6)
    assert model.name == "ur5"
    assert model.body_names[0] == "base_link" and model.body_names[-1] == "tool0"
    assert model.joint_names[1:7] == ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint",
                                      "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]
    assert model.dof_names == model.joint_names[1:7]
    assert model.joint_types[1:7] == ["revolute"] * 6 and model.joint_types[7] == "fixed"
    assert model.parents == list(range(-1, 7))
    assert model.effectors == ["tool0"]
    assert model.body_index("tool0") == 7
    lower, upper = model.limits
    assert lower.shape == (6,) and upper.shape == (6,)
    np.testing.assert_allclose(upper, [2 * math.pi] * 2 + [math.pi] + [2 * math.pi] * 3)
    np.testing.assert_allclose(lower, -upper)
    assert model.frames is None and model.frame_time == 0.0
    assert "ur5" in repr(model)


def test_configurations():
    model, _, _ = arm("panda")
    lower, upper = model.limits
    np.testing.assert_allclose(model.middle(), (lower + upper) / 2)
    neutral = model.neutral()
    assert np.all(neutral >= lower) and np.all(neutral <= upper)
    q1, q2 = model.random_configuration(5), model.random_configuration(5)
    np.testing.assert_array_equal(q1, q2)
    assert not np.array_equal(q1, model.random_configuration(6))
    for seed in range(50):
        q = model.random_configuration(seed)
        assert np.all(q >= lower) and np.all(q <= upper)
        assert model.within_limits(q)
    outside = model.middle()
    outside[3] = upper[3] + 0.1
    assert not model.within_limits(outside)


def test_random_chain_keyword_fields():
    model = ik.random_chain(5, seed=3)
    assert (model.nq, model.nv) == (5, 5)
    assert model.effectors == ["tip"]
    # The same seed gives the same chain, another seed another one.
    q = np.full(5, 0.3)
    np.testing.assert_array_equal(model.fk(q)[0], ik.random_chain(5, seed=3).fk(q)[0])
    assert not np.allclose(model.fk(q)[0], ik.random_chain(5, seed=4).fk(q)[0])
    # Planar chains (every axis y) stay in the x-z plane whatever q.
    planar = ik.random_chain(6, 1, axes="planar")
    for seed in range(10):
        assert abs(planar.fk(planar.random_configuration(seed))[0][1]) < 1e-12
    # Symmetric limits, and none.
    lower, upper = ik.random_chain(4, 1, limit=1.25).limits
    np.testing.assert_array_equal(upper, [1.25] * 4)
    np.testing.assert_array_equal(lower, [-1.25] * 4)
    assert np.all(np.isinf(ik.random_chain(4, 1).limits[1]))
    # Ball joints: quaternions in q, three DOF each.
    balls = ik.random_chain(3, 2, revolute=0, ball=1)
    assert (balls.nq, balls.nv) == (12, 9)
    assert balls.joint_types[:3] == ["ball"] * 3
    # Link lengths: a straight chain of equal links is joints * length long.
    straight = ik.random_chain(4, 9, min_length=0.25, max_length=0.25)
    np.testing.assert_allclose(np.linalg.norm(straight.fk(straight.neutral())[0]), 1.0, atol=1e-12)


def test_random_tree_has_one_tip_per_branch():
    tree = ik.random_tree(seed=2, branches=3, levels=1)
    assert sorted(tree.effectors) == ["tip0", "tip1", "tip2"]


def test_bvh_model_and_frames_view():
    model = ik.Model.from_bvh(SKELETONS / "humanoid_walk_wave.bvh")
    frames = model.frames
    assert frames.shape == (48, model.nq)
    assert model.frame_time == pytest.approx(1 / 30, rel=1e-3)
    assert len(model.effectors) == 5 and all(e.endswith("_end") for e in model.effectors)
    # A read-only view of the model's storage: no copy per access.
    assert not frames.flags.writeable
    assert np.shares_memory(frames, model.frames)
    with pytest.raises(ValueError):
        frames[0, 0] = 1.0
    # Every frame is a valid configuration; its end sites move over the clip.
    hand = model.effectors[0]
    P, _ = model.fk(frames, hand)
    assert np.all(np.isfinite(P))
    assert np.ptp(P, axis=0).max() > 0.05


def test_corpus_robots(corpus):
    # A real Kinova Gen3 (continuous joints: no limits) and the PR2 tree.
    gen3 = ik.Model.from_urdf(corpus / "robots" / "kinova_gen3_7dof.urdf", base="base_link", tip="end_effector_link")
    assert gen3.nv == 7
    lower, upper = gen3.limits
    assert np.isinf(upper).sum() == 4
    chain = UrdfChain(corpus / "robots" / "kinova_gen3_7dof.urdf", "base_link", "end_effector_link")
    for seed in range(5):
        q = gen3.random_configuration(seed)
        pos, quat = gen3.fk(q)
        T = chain.fk(q)
        np.testing.assert_allclose(pos, T[:3, 3], atol=1e-12)
        assert rotation_angle(quat_to_matrix(quat), T[:3, :3]) < 1e-12
    pr2 = ik.Model.from_urdf(corpus / "robots" / "pr2.urdf")
    assert len(pr2.effectors) > 2
    assert any("mimic" in w for w in pr2.warnings)
    cmu = ik.Model.from_bvh(corpus / "skeletons" / "cmu_131_01_walk.bvh")
    assert cmu.joint_types[0] == "free"
    assert cmu.frames.shape[1] == cmu.nq and cmu.frames.shape[0] > 100


def test_coordinate_names_of_a_free_root_and_ball_joints():
    """dof_names has one entry per tangent coordinate (nv: a ball joint's rotation vector), and
    configuration_names one per configuration entry (nq: its quaternion), a free root first."""
    model = ik.Model.from_bvh(SKELETONS / "humanoid_walk_wave.bvh")
    assert len(model.dof_names) == model.nv and len(model.configuration_names) == model.nq
    root = model.joint_names[0]
    assert model.joint_types[0] == "free"
    assert model.dof_names[:6] == [f"{root}:{s}" for s in ("x", "y", "z", "rx", "ry", "rz")]
    assert model.configuration_names[:7] == [f"{root}:{s}" for s in ("x", "y", "z", "qx", "qy", "qz", "qw")]
    ball = model.joint_types.index("ball")
    name = model.joint_names[ball]
    assert [n for n in model.dof_names if n.startswith(name + ":")] == [f"{name}:r{a}" for a in "xyz"]
    assert [n for n in model.configuration_names if n.startswith(name + ":")] == [f"{name}:q{a}" for a in "xyzw"]
