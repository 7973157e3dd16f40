"""Bad input: a Python exception of the right type whose message names the
argument and says what was expected (or carries the C++ message)."""

import numpy as np
import pytest

from pyb_helpers import ROBOTS, ik


@pytest.fixture(scope="module")
def ur5():
    return ik.Model.from_urdf(ROBOTS / "ur5.urdf")


@pytest.fixture(scope="module")
def targets(ur5):
    return ik.reachable_targets(ur5, 5, seed=1)


def test_wrong_shapes(ur5, targets):
    with pytest.raises(ValueError, match=r"q: expected shape \(6,\) or \(N, 6\) \(nq of model 'ur5'\), got shape \(7,\)"):
        ur5.fk(np.zeros(7))
    with pytest.raises(ValueError, match=r"targets: expected shape \(N, 7\) .* or \(N, 3\) .*got shape \(5, 6\)"):
        ik.solve_batch(ur5, "auto", targets[:, :6])
    with pytest.raises(ValueError, match=r"targets: .*got shape \(7,\)"):
        ik.solve_batch(ur5, "auto", targets[0])
    with pytest.raises(ValueError, match=r"q0: expected shape \(6,\) or \(5, 6\).*got shape \(4, 6\)"):
        ik.solve_batch(ur5, "auto", targets, q0=np.zeros((4, 6)))
    with pytest.raises(ValueError, match=r"q0: expected shape \(6,\).*got shape \(5,\)"):
        ik.Solver("dls").solve(ur5, ik.Goal.position("tool0", [0.3, 0, 0.3]), q0=np.zeros(5))
    with pytest.raises(ValueError, match=r"target: expected shape \(3,\)"):
        ik.Goal.position("tool0", [1, 2])
    with pytest.raises(ValueError, match=r"quaternion_xyzw: expected shape \(4,\)"):
        ik.Goal.orientation("tool0", [0, 0, 1])
    with pytest.raises(ValueError, match=r"seeds: expected shape \(5,\) \(one per target\)"):
        ik.solve_batch(ur5, "auto", targets, seeds=[1, 2])


def test_wrong_dtypes(ur5, targets):
    with pytest.raises(TypeError, match=r"targets: expected real numbers .*got dtype complex128"):
        ik.solve_batch(ur5, "auto", targets.astype(complex))
    with pytest.raises(TypeError, match=r"q: expected real numbers .*got dtype <U"):
        ur5.fk(["a"] * 6)
    with pytest.raises(TypeError, match=r"q: .*got dtype object"):
        ur5.fk(None)
    with pytest.raises(ValueError, match=r"q: expected an array of real numbers"):
        ur5.fk([[1, 2], [3]])
    with pytest.raises(TypeError, match=r"seeds: expected integers"):
        ik.solve_batch(ur5, "auto", targets, seeds=np.ones(5))
    # Integer and float32 data are converted.
    np.testing.assert_array_equal(ur5.fk(np.zeros(6, dtype=np.int32))[0], ur5.fk(np.zeros(6))[0])
    np.testing.assert_array_equal(ur5.fk(np.zeros(6, dtype=np.float32))[0], ur5.fk(np.zeros(6))[0])


def test_non_finite_values_name_the_row(ur5, targets):
    bad = targets.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match=r"targets: row 3 \(column 4\) is nan: expected finite values"):
        ik.solve_batch(ur5, "auto", bad)
    bad = targets.copy()
    bad[1, 0] = np.inf
    with pytest.raises(ValueError, match=r"targets: row 1 \(column 0\) is inf"):
        ik.solve_batch(ur5, "auto", bad)
    bad = targets.copy()
    bad[2, 3:] = 0
    with pytest.raises(ValueError, match=r"targets: row 2: quaternion .* has norm 0"):
        ik.solve_batch(ur5, "auto", bad)
    q0 = np.zeros((5, 6))
    q0[4, 2] = np.inf
    with pytest.raises(ValueError, match=r"q0: row 4: configuration entry 2 \(joint 'elbow_joint'\) is not finite"):
        ik.solve_batch(ur5, "auto", targets, q0=q0)
    with pytest.raises(ValueError, match=r"target: entry 2 is nan"):
        ik.Goal.position("tool0", [1, 2, np.nan])
    with pytest.raises(ValueError, match=r"q: row 1: configuration entry 0"):
        ur5.fk(np.array([np.zeros(6), [np.nan] + [0] * 5]))


def test_unknown_spec_carries_the_registry_message(ur5, targets):
    with pytest.raises(ValueError, match=r"unknown solver 'autoo' in spec 'autoo' \(known: .*dls.*\)"):
        ik.Solver("autoo")
    with pytest.raises(ValueError, match=r"unknown solver 'nope'"):
        ik.solve_batch(ur5, "nope", targets)
    with pytest.raises(ValueError, match=r"solver 'dls' .* has no parameter 'lamda' \(known: lambda"):
        ik.Solver("dls:lamda=1")
    with pytest.raises(ValueError, match=r"parameter 'lambda=-1' is not a finite number in \[0, inf\)"):
        ik.Solver("dls:lambda=-1")
    with pytest.raises(TypeError, match=r"spec: expected a solver spec \(str\) or an ikbench.Solver, got int"):
        ik.solve_batch(ur5, 3, targets)


def test_unknown_body_lists_the_bodies(ur5, targets):
    listing = r"\(bodies of model 'ur5': base_link, shoulder_link, .*, tool0\)"
    with pytest.raises(ValueError, match=r"goal body: unknown body 'tol0' " + listing):
        ik.Solver("dls").solve(ur5, ik.Goal.position("tol0", [0.3, 0, 0.3]))
    with pytest.raises(ValueError, match=r"body: unknown body 'tol0' " + listing):
        ik.solve_batch(ur5, "auto", targets, body="tol0")
    with pytest.raises(ValueError, match=r"body: unknown body 'wrist' " + listing):
        ur5.fk(np.zeros(6), "wrist")
    with pytest.raises(ValueError, match=r"goals\[1\] body: body index 42 is out of range: model 'ur5' has bodies 0..7"):
        ik.Solver("dls").solve(ur5, [ik.Goal.position("tool0", [0.3, 0, 0.3]), ik.Goal.position(42, [0, 0, 0])])
    with pytest.raises(TypeError, match=r"body: expected a body name \(str\) or index \(int\), got float"):
        ik.Goal.position(1.5, [0, 0, 0])
    tree = ik.random_tree(1)
    with pytest.raises(ValueError, match=r"body: model '.*' has 3 effectors \(tip0, tip1, tip2\): name one"):
        ik.solve_batch(tree, "dls", np.zeros((2, 3)))


def test_unknown_or_bad_keywords(ur5, targets):
    solver = ik.Solver("dls")
    goal = ik.Goal.pose("tool0", targets[0, :3], targets[0, 3:])
    with pytest.raises(TypeError, match=r"solve\(\) got an unexpected keyword argument 'max_iter' \(solver options: "
                                        r"position_tolerance, .*seed\)"):
        solver.solve(ur5, goal, max_iter=5)
    with pytest.raises(TypeError, match=r"solve_batch\(\) got an unexpected keyword argument 'tolerance'"):
        ik.solve_batch(ur5, "auto", targets, tolerance=1e-3)
    with pytest.raises(TypeError, match=r"max_iterations: expected an integer, got float 1.5"):
        solver.solve(ur5, goal, max_iterations=1.5)
    with pytest.raises(TypeError, match=r"position_tolerance: expected a number, got str"):
        solver.solve(ur5, goal, position_tolerance="1e-3")
    with pytest.raises(TypeError, match=r"record_trace: expected True or False"):
        solver.solve(ur5, goal, record_trace=1)
    with pytest.raises(ValueError, match=r"solve\(\): solver options: max_iterations = 0 must be in \[1, 100000000\]"):
        solver.solve(ur5, goal, max_iterations=0)
    with pytest.raises(ValueError, match=r"position_tolerance = -1 must be finite and > 0"):
        solver.solve(ur5, goal, position_tolerance=-1.0)
    with pytest.raises(ValueError, match=r"seed: 18446744073709551616 is out of range"):
        solver.solve(ur5, goal, seed=2**64)
    with pytest.raises(ValueError, match=r"record_trace is not available for batches"):
        ik.solve_batch(ur5, "auto", targets, record_trace=True)
    with pytest.raises(ValueError, match=r"threads: -1 is out of range"):
        ik.solve_batch(ur5, "auto", targets, threads=-1)
    with pytest.raises(ValueError, match=r"seed: -1 is out of range"):
        ik.solve_batch(ur5, "auto", targets, seed=-1)
    with pytest.raises(ValueError, match=r"seeds: expected integers in \[0, 2\^64 - 1\], got a negative seed"):
        ik.solve_batch(ur5, "auto", targets, seeds=[1, 2, 3, 4, -5])
    # numpy integers are integers.
    s = solver.solve(ur5, goal, max_iterations=np.int64(2), stall_iterations=np.int32(0), seed=np.uint64(3))
    assert s.status == "max-iterations" and s.iterations == 2


def test_goal_and_model_arguments():
    with pytest.raises(ValueError, match=r"quaternion_xyzw: quaternion \(x, y, z, w\) has norm 0"):
        ik.Goal.orientation("tool0", [0, 0, 0, 0])
    with pytest.raises(ValueError, match=r"weight: 0 is out of range: expected a finite number > 0"):
        ik.Goal.position("tool0", [0, 0, 0], weight=0)
    with pytest.raises(ValueError, match=r"body: index -1 is out of range"):
        ik.Goal.position(-1, [0, 0, 0])
    with pytest.raises(ValueError, match=r"goals: expected at least one ikbench.Goal"):
        ik.Solver("dls").solve(ik.random_chain(3, 1), [])
    with pytest.raises(TypeError, match=r"goals\[0\]: expected an ikbench.Goal, got str"):
        ik.Solver("dls").solve(ik.random_chain(3, 1), ["tip"])
    with pytest.raises(ValueError, match=r"joints: 0 is out of range"):
        ik.random_chain(0, 1)
    with pytest.raises(ValueError, match=r"axes: unknown axis style 'diagonal' \(expected one of: random, alternating, "
                                         r"planar\)"):
        ik.random_chain(3, 1, axes="diagonal")
    with pytest.raises(ValueError, match=r"min_length \(1\) <= max_length \(0.5\)"):
        ik.random_chain(3, 1, min_length=1.0, max_length=0.5)
    with pytest.raises(ValueError, match=r"kind: 'orientation' is not one of: pose, position"):
        ik.reachable_targets(ik.random_chain(3, 1), 5, 1, kind="orientation")


def test_files(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"path: no such file: '.*missing.urdf'"):
        ik.Model.from_urdf(tmp_path / "missing.urdf")
    with pytest.raises(FileNotFoundError):
        ik.Model.from_bvh(tmp_path / "missing.bvh")
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="x">\n<link name="a"/>\n'
                   '<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>\n</robot>\n')
    with pytest.raises(ValueError, match=r"bad.urdf:3: joint 'j': child link 'b' is not defined"):
        ik.Model.from_urdf(bad)
    with pytest.raises(ValueError, match=r"tip link 'nope' is not defined"):
        ik.Model.from_urdf(ROBOTS / "ur5.urdf", tip="nope")
    truncated = tmp_path / "cut.bvh"
    truncated.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n")
    with pytest.raises(ValueError, match=r"cut.bvh:\d+"):
        ik.Model.from_bvh(truncated)
    with pytest.raises(TypeError, match=r"path: expected a path \(str or os.PathLike\), got int"):
        ik.Model.from_urdf(3)
