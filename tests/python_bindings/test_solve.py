"""Solver.solve on the shipped arms and on generated models; every success is
checked by forward kinematics of the returned q (an independent numpy FK for
the arms)."""

import json
import os
import subprocess

import numpy as np
import pytest

from pyb_helpers import ARMS, arm, ik, pose_errors, quat_to_matrix, rotation_angle

TOL = 1e-5
# The arm preset's numerical recipe without its time budget: iterations and
# restarts bound every solve, so the outcome does not depend on the machine's
# speed (closed_form=off: the 6R arms would otherwise be answered in closed form).
AUTO_NO_BUDGET = "auto:time_budget_us=0:closed_form=off"
DLS_RECIPE = "dls-adaptive:restarts=200:mode=error:err_gain=0.03:limits=freeze:max_step=1:max_iterations=20"


def check_solution(model, chain, q, target, tol=TOL):
    pos, ang = pose_errors(chain, q, target)
    assert pos <= tol * (1 + 1e-9), f"position error {pos}"
    assert ang <= tol * (1 + 1e-9), f"orientation error {ang}"
    lower, upper = model.limits
    assert np.all(q >= lower - 1e-9) and np.all(q <= upper + 1e-9)


@pytest.mark.parametrize("spec", [AUTO_NO_BUDGET, DLS_RECIPE])
@pytest.mark.parametrize("name", sorted(ARMS))
def test_pose_solves_on_the_arms_converge_by_fk(name, spec):
    model, chain, tip = arm(name)
    solver = ik.Solver(spec)
    targets = ik.reachable_targets(model, 25, seed=11)
    for i, t in enumerate(targets):
        s = solver.solve(model, ik.Goal.pose(tip, t[:3], t[3:]), seed=i)
        assert s.status == "converged" and s.converged and s.within_limits, s
        check_solution(model, chain, s.q, t)
        # The reported errors are the FK errors of the returned q.
        pos, ang = pose_errors(chain, s.q, t)
        assert s.position_error == pytest.approx(pos, abs=1e-12)
        assert s.orientation_error == pytest.approx(ang, abs=1e-9)
        assert s.iterations >= 1 and s.fk_evals >= s.iterations and s.time_us > 0


def test_the_arm_preset_with_its_time_budget():
    # `auto` stops at 5 ms, which a busy machine can reach: the solves that
    # converge are checked by FK, the others must have run out of time or of
    # restarts (also when the budget ended during the last attempt).
    model, chain, tip = arm("panda")
    solver = ik.Solver("auto")
    targets = ik.reachable_targets(model, 40, seed=12)
    converged = 0
    for i, t in enumerate(targets):
        s = solver.solve(model, ik.Goal.pose(tip, t[:3], t[3:]), seed=i)
        if s.converged:
            converged += 1
            check_solution(model, chain, s.q, t)
        else:
            assert s.status in ("time-limit", "max-iterations"), s
            assert s.status != "time-limit" or s.time_us >= 5000, s
    assert converged >= 36


def test_summary_fields_and_the_default_start():
    model, chain, tip = arm("ur5")
    t = ik.reachable_targets(model, 1, seed=3)[0]
    goal = ik.Goal.pose(tip, t[:3], t[3:])
    solver = ik.Solver(AUTO_NO_BUDGET)
    s = solver.solve(model, goal, seed=5)
    assert isinstance(s.q, np.ndarray) and s.q.shape == (model.nq,) and s.q.dtype == np.float64
    assert s.status in ik.STATUS_NAMES
    assert s.message == "" and s.solutions == [] and s.trace is None
    assert s.spec == AUTO_NO_BUDGET and bool(s)
    # q0 = None is the middle of the limits; body by index is the same body.
    s2 = solver.solve(model, ik.Goal.pose(model.body_index(tip), t[:3], t[3:]), q0=model.middle(), seed=5)
    np.testing.assert_array_equal(s.q, s2.q)
    assert s.iterations == s2.iterations
    # Starting at an answer needs no iteration.
    s3 = solver.solve(model, goal, q0=s.q, seed=5)
    assert s3.converged and s3.iterations == 0
    np.testing.assert_array_equal(s3.q, s.q)


def test_the_seed_decides_the_restarts():
    model, _, tip = arm("panda")
    targets = ik.reachable_targets(model, 10, seed=4)
    solver = ik.Solver("dls:restarts=50:max_iterations=15")
    differ = 0
    for t in targets:
        goal = ik.Goal.pose(tip, t[:3], t[3:])
        a, b = solver.solve(model, goal, seed=1), solver.solve(model, goal, seed=1)
        np.testing.assert_array_equal(a.q, b.q)
        assert (a.iterations, a.restarts) == (b.iterations, b.restarts)
        c = solver.solve(model, goal, seed=2)
        differ += (a.restarts > 0 or c.restarts > 0) and not np.array_equal(a.q, c.q)
    assert differ > 0  # with restarts, another seed takes other random starts


def test_options_reach_the_solver():
    model, _, tip = arm("iiwa14")
    t = ik.reachable_targets(model, 1, seed=8)[0]
    goal = ik.Goal.pose(tip, t[:3], t[3:])
    solver = ik.Solver("dls")
    capped = solver.solve(model, goal, max_iterations=3, stall_iterations=0)
    assert capped.status == "max-iterations" and capped.iterations == 3
    loose = solver.solve(model, goal, position_tolerance=0.05, orientation_tolerance=0.5)
    strict = solver.solve(model, goal)
    assert loose.converged and strict.converged and loose.iterations < strict.iterations
    assert loose.position_error <= 0.05


def test_trace_records_every_iteration_with_its_configuration():
    model, chain, tip = arm("ur5")
    t = ik.reachable_targets(model, 1, seed=21)[0]
    s = ik.Solver("dls").solve(model, ik.Goal.pose(tip, t[:3], t[3:]), record_trace=True)
    tr = s.trace
    assert tr.dtype.names == ("iteration", "position_error", "orientation_error", "step_norm", "damping",
                              "elapsed_us", "q")
    assert len(tr) == s.iterations + 1
    np.testing.assert_array_equal(tr["iteration"], np.arange(len(tr)))
    np.testing.assert_array_equal(tr["q"][0], model.middle())
    assert np.all(np.diff(tr["elapsed_us"]) >= 0)
    # Each record's errors are those of its configuration, by the independent FK.
    for rec in tr:
        pos, ang = pose_errors(chain, rec["q"], t)
        assert rec["position_error"] == pytest.approx(pos, rel=1e-9, abs=1e-12)
        assert rec["orientation_error"] == pytest.approx(ang, rel=1e-6, abs=1e-9)
    assert tr["position_error"][-1] <= TOL


def test_several_solutions_each_reach_the_target():
    model, chain, tip = arm("ur5")
    t = ik.reachable_targets(model, 1, seed=5)[0]
    s = ik.Solver("auto:solutions=all:restarts=60:time_budget_us=0").solve(model, ik.Goal.pose(tip, t[:3], t[3:]), seed=3)
    assert s.converged and len(s.solutions) >= 2
    np.testing.assert_array_equal(s.solutions[0], s.q)
    for sol in s.solutions:
        check_solution(model, chain, sol, t)
    for i in range(len(s.solutions)):
        for j in range(i):
            assert np.linalg.norm(s.solutions[i] - s.solutions[j]) > 1e-3


def test_point_orientation_and_multi_goal_problems():
    # A point offset on the tip of a random chain.
    chain7 = ik.random_chain(7, 5, limit=2.5)
    point = np.array([0.05, 0.0, 0.02])
    q_ref = chain7.random_configuration(1)
    target, quat = chain7.fk(q_ref, "tip", point=point)
    s = ik.Solver("dls").solve(chain7, ik.Goal.position("tip", target, point=point))
    assert s.converged
    assert np.linalg.norm(chain7.fk(s.q, "tip", point=point)[0] - target) <= TOL
    # An orientation goal alone.
    s = ik.Solver("dls").solve(chain7, ik.Goal.orientation("tip", quat))
    assert s.converged
    assert rotation_angle(quat_to_matrix(chain7.fk(s.q, "tip")[1]), quat_to_matrix(quat)) <= TOL
    # Position goals on the three tips of a tree at once.
    tree = ik.random_tree(3, limit=2.0)
    q_ref = tree.random_configuration(2)
    goals = [ik.Goal.position(tip, tree.fk(q_ref, tip)[0]) for tip in tree.effectors]
    s = ik.Solver("dls:restarts=20").solve(tree, goals, seed=1)
    assert s.converged
    for g in goals:
        assert np.linalg.norm(tree.fk(s.q, g.body)[0] - g.target_position) <= TOL


def test_goal_description():
    g = ik.Goal.pose("tool0", [1, 2, 3], [0, 0, 0, 2], point=[0, 0, 0.1], weight=2.0, orientation_scale=0.5)
    assert g.kind == "pose" and g.body == "tool0"
    np.testing.assert_array_equal(g.target_position, [1, 2, 3])
    np.testing.assert_array_equal(g.target_quaternion, [0, 0, 0, 1])  # normalised
    np.testing.assert_array_equal(g.point, [0, 0, 0.1])
    assert (g.weight, g.orientation_scale) == (2.0, 0.5)
    assert ik.Goal.position(3, [0, 0, 1]).target_quaternion is None
    assert ik.Goal.orientation("tip", [0, 0, 0, 1]).target_position is None
    assert "pose" in repr(g) and "tool0" in repr(g)


def test_solver_description():
    s = ik.Solver("auto")
    assert s.name == "dls-adaptive" and s.preset == "auto" and s.spec == "auto"
    assert s.parameters["mode"] == "error" and s.parameters["err_gain"] == "0.05"
    assert s.common["restarts"] == 5000 and s.common["time_budget_us"] == 5000.0 and s.common["max_iterations"] == 12
    assert s.common["stall_iterations"] == 4 and s.common["stall_relative_improvement"] == 0.35
    plain = ik.Solver("dls:lambda=0.2")
    assert plain.parameters["lambda"] == "0.2" and plain.preset == ""
    assert plain.common["time_budget_us"] is None and plain.common["solutions"] == "first"
    assert plain.common["stall_iterations"] is None and plain.common["stall_relative_improvement"] is None


def test_registry_listing():
    reg = ik.solvers()
    names = [b["name"] for b in reg["solvers"]]
    assert names == sorted(names) and {"dls", "ccd", "fabrik", "kdl-lma", "ceres-lm"} <= set(names)
    assert [p["name"] for p in reg["common_parameters"]] == ["restarts", "time_budget_us", "max_iterations", "stall_iterations",
                                                         "stall_relative_improvement", "solutions", "library", "start",
                                                         "closed_form", "closed_form_near", "collision"]
    assert any(p["name"] == "auto" for p in reg["presets"])
    for b in reg["solvers"]:
        assert ik.Solver(b["name"]).name == b["name"]
        for p in b["parameters"]:
            assert set(p) == {"name", "type", "default", "range", "unit", "help"}
            # Every default reads back as a value of its key.
            if p["default"]:
                solver = ik.Solver(f"{b['name']}:{p['name']}={p['default']}")
                assert solver.parameters[p["name"]] == p["default"]


def test_registry_listing_equals_the_command_line():
    cli = os.environ.get("IKBENCH_CLI")
    if not cli or not os.path.exists(cli):
        pytest.skip("IKBENCH_CLI (the ikbench binary) is not set; ctest sets it when the harness is built")
    out = subprocess.run([cli, "list", "solvers", "--format", "json"], check=True, capture_output=True, text=True)
    listed = json.loads(out.stdout)
    # The command line also has `ext`, the external-solver backend (docs/external-solvers.md), which
    # runs solver processes and is not part of the bindings.
    listed["solvers"] = [s for s in listed["solvers"] if s["name"] != "ext"]
    assert ik.solvers() == listed
