"""ikbench.external (python/ikbench/external.py) and the Node adapter (adapters/node): the
protocol loop over in-memory streams and real processes, the numpy kinematics against closed
forms and finite differences, and the examples' solvers on a seeded problem."""
import ast
import io
import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO

from ikbench import external

MODULE = REPO / "python" / "ikbench" / "external.py"
NODE_ADAPTER = REPO / "adapters" / "node" / "ikbench-external.js"


def planar_model(lengths=(0.5, 0.4, 0.3), limit=2.5):
    """A planar chain of revolute joints about z, links along x, a fixed tip: models.json's form."""
    joints = []
    for i, _ in enumerate(lengths):
        joints.append({"name": f"j{i}", "body": f"b{i}", "parent": i - 1, "type": "revolute",
                       "parent_T_joint": {"xyz": [lengths[i - 1] if i else 0.0, 0, 0], "quat_xyzw": [0, 0, 0, 1]},
                       "axis": [0, 0, 1], "lower": [-limit], "upper": [limit], "weight": [1],
                       "idx_q": i, "idx_v": i})
    n = len(lengths)
    joints.append({"name": "tip", "body": "tip", "parent": n - 1, "type": "fixed",
                   "parent_T_joint": {"xyz": [lengths[-1], 0, 0], "quat_xyzw": [0, 0, 0, 1]},
                   "axis": [0, 0, 1], "lower": [], "upper": [], "weight": [], "idx_q": n, "idx_v": n})
    return {"id": "m0", "name": "planar", "source": None, "nq": n, "nv": n, "joints": joints}


def problem_json(pid, q0, target, kind="position", quat=(0, 0, 0, 1), tip=3):
    return {"id": pid, "model_id": "m0", "name": f"p{pid}", "q0": list(q0),
            "goals": [{"body": "tip", "body_index": tip, "point": [0, 0, 0], "kind": kind,
                       "target_position": list(target), "target_quat_xyzw": list(quat), "weight": 1,
                       "orientation_scale": 1}],
            "position_tolerance": 1e-5, "orientation_tolerance": 1e-5, "max_iterations": 200,
            "time_budget_us": 0, "seed": 1}


def planar_tip(q, lengths=(0.5, 0.4, 0.3)):
    a = np.cumsum(q)
    return np.array([sum(l * math.cos(t) for l, t in zip(lengths, a)),
                     sum(l * math.sin(t) for l, t in zip(lengths, a)), 0.0])


def session(problems, model=None):
    lines = [{"type": "hello", "protocol": "ikbench-external", "version": 1},
             {"type": "model", "model_id": "m0", "model": model or planar_model()},
             {"type": "solve", "problems": problems}, {"type": "bye"}]
    return "".join(json.dumps(m) + "\n" for m in lines)


def replies(text):
    return [json.loads(line) for line in text.splitlines()]


def test_module_is_a_leaf_importing_standard_library_and_numpy_only():
    tree = ast.parse(MODULE.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "external.py imports nothing relative (no other ikbench module)"
            names.add(node.module.split(".")[0])
    assert names <= {"json", "math", "sys", "time", "numpy"}, names


def test_forward_kinematics_and_errors_match_the_closed_form():
    m = external.KinematicModel(planar_model())
    q = np.array([0.3, -0.7, 1.1])
    rot, pos = m.fk(q)
    np.testing.assert_allclose(pos[3], planar_tip(q), atol=1e-12)
    angle = math.atan2(rot[3][1, 0], rot[3][0, 0])
    assert angle == pytest.approx(sum(q))
    goal = external.Goal(problem_json(0, q, planar_tip(q) + [0.03, 0.04, 0])["goals"][0])
    ep, eo = m.goal_errors(q, [goal])
    assert ep == pytest.approx(0.05) and eo == 0


def test_jacobian_matches_central_differences_and_a_wrong_one_is_caught():
    m = external.KinematicModel(planar_model())
    half = math.sin(0.4 / 2)
    p = external.Problem(problem_json(0, [0, 0, 0], [0.6, 0.5, 0], kind="pose", quat=(0, 0, half, math.cos(0.2))))
    q = np.array([0.2, 0.5, -0.4])
    e, jac = m.residual_and_jacobian(q, p.goals)
    h = 1e-6
    numeric = np.zeros_like(jac)
    for k in range(3):
        dq = np.zeros(3)
        dq[k] = h
        ep, _ = m.residual_and_jacobian(q + dq, p.goals)
        em, _ = m.residual_and_jacobian(q - dq, p.goals)
        numeric[:, k] = -(ep - em) / (2 * h)  # e = target - x: de/dq = -J
    np.testing.assert_allclose(jac, numeric, atol=1e-6)
    wrong = jac.copy()
    wrong[:, 1] *= 1.01
    assert not np.allclose(wrong, numeric, atol=1e-6)


def test_serve_answers_each_problem_with_time_and_survives_a_failing_solve():
    calls = []

    @external.solver(name="t")
    def solve(model, problem):
        calls.append(problem.id)
        if problem.id == 1:
            raise ValueError("boom")
        if problem.id == 2:
            return np.array([float("nan"), 0, 0])
        return external.Answer(problem.q0 + 1, "stalled", 3, "note")

    out = io.StringIO()
    solve.serve(io.StringIO(session([problem_json(i, [0.1, 0.2, 0.3], [0.5, 0.5, 0]) for i in range(3)])), out)
    hello, answers = replies(out.getvalue())
    assert hello == {"type": "hello", "protocol": "ikbench-external", "version": 1, "name": "t"}
    a = answers["answers"]
    assert [x["id"] for x in a] == [0, 1, 2] and calls == [0, 1, 2]
    assert a[0]["q"] == pytest.approx([1.1, 1.2, 1.3]) and a[0]["status"] == "stalled"
    assert a[0]["iterations"] == 3 and a[0]["message"] == "note" and a[0]["time_us"] >= 0
    assert a[1]["status"] == "numerical-failure" and "ValueError: boom" in a[1]["message"]
    assert a[1]["q"] == [0.1, 0.2, 0.3]
    assert a[2]["q"][0] is None  # NaN goes as null, which the harness refuses


def _load_example(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, REPO / "examples" / "external" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_dls_example_reaches_seeded_reachable_targets():
    dls = _load_example("dls_solver")
    m = external.KinematicModel(planar_model())
    rng = np.random.default_rng(5)
    converged = 0
    for i in range(10):
        target = planar_tip(rng.uniform(-2, 2, 3))
        p = external.Problem(problem_json(i, rng.uniform(-2, 2, 3), target))
        a = dls.solve(m, p)
        if a.status == "converged":
            converged += 1
            assert np.linalg.norm(planar_tip(a.q) - target) <= 1e-5
            assert np.all(np.abs(a.q) <= 2.5)
    # One attempt from a random start within limits of +-2.5 rad: a few stop against a limit.
    assert converged >= 6


def test_python_example_runs_as_a_process():
    text = session([problem_json(0, [0.0, 0.1, 0.2], planar_tip([0.5, 0.5, 0.5]))])
    r = subprocess.run(["/usr/bin/python3", str(REPO / "examples" / "external" / "dls_solver.py")], input=text,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    hello, answers = replies(r.stdout)
    assert hello["name"] == "numpy-dls"
    a = answers["answers"][0]
    assert a["status"] == "converged"
    assert np.linalg.norm(planar_tip(a["q"]) - planar_tip([0.5, 0.5, 0.5])) <= 1e-5


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the Node adapter is not tested")
def test_node_adapter_null_solver_and_kinematics():
    text = session([problem_json(i, [0.1 * i, 0.2, 0.3], [0.5, 0.5, 0]) for i in range(2)])
    r = subprocess.run(["node", str(REPO / "examples" / "external" / "null_solver.mjs")], input=text,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    hello, answers = replies(r.stdout)
    assert hello["name"] == "null-js" and hello["version"] == 1
    assert [a["q"] for a in answers["answers"]] == [[0.0, 0.2, 0.3], [0.1, 0.2, 0.3]]
    assert all(a["status"] == "max-iterations" and a["time_us"] >= 0 for a in answers["answers"])
    # The adapter's forward kinematics and errors agree with numpy's.
    q = [0.3, -0.7, 1.1]
    script = (f"const ext = require({json.dumps(str(NODE_ADAPTER))});"
              f"const m = new ext.Model({json.dumps(planar_model())});"
              f"const g = {json.dumps(problem_json(0, q, [0.2, 0.1, 0], kind='pose', quat=(0, 0, 0.1, 1))['goals'])};"
              f"console.log(JSON.stringify([m.fk({q}).pos[3], m.goalErrors({q}, g)]));")
    r = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    pos, errors = json.loads(r.stdout)
    m = external.KinematicModel(planar_model())
    np.testing.assert_allclose(pos, planar_tip(q), atol=1e-12)
    goals = [external.Goal(g) for g in problem_json(0, q, [0.2, 0.1, 0], kind="pose", quat=(0, 0, 0.1, 1))["goals"]]
    np.testing.assert_allclose(errors, m.goal_errors(q, goals), atol=1e-9)


def test_the_model_message_urdf_reaches_the_solver_as_model_urdf():
    seen = []

    @external.solver
    def solve(model, problem):
        seen.append((model.urdf, model.source))
        return problem.q0

    urdf = '<robot name="planar"><link name="b0"/></robot>'
    with_source = dict(planar_model(), source="robots/planar.urdf")
    lines = [{"type": "hello", "protocol": "ikbench-external", "version": 1},
             {"type": "model", "model_id": "m0", "model": with_source, "urdf": urdf},
             {"type": "solve", "problems": [problem_json(0, [0, 0, 0], [0.5, 0, 0])]},
             {"type": "model", "model_id": "m1", "model": planar_model()},
             {"type": "solve", "problems": [dict(problem_json(1, [0, 0, 0], [0.5, 0, 0]), model_id="m1")]}]
    solve.serve(io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), io.StringIO())
    assert seen == [(urdf, "robots/planar.urdf"), (None, None)]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the Node adapter is not tested")
def test_node_adapter_keeps_the_urdf_text():
    script = (f"const ext = require({json.dumps(str(NODE_ADAPTER))});"
              f"const a = new ext.Model({json.dumps(dict(planar_model(), source='r.urdf'))}, '<robot/>');"
              f"const b = new ext.Model({json.dumps(planar_model())});"
              "console.log(JSON.stringify([a.urdf, a.source, b.urdf, b.source]));")
    r = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == ["<robot/>", "r.urdf", None, None]


def _have_scipy():
    try:
        import scipy.optimize  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _have_scipy(), reason="scipy is not installed (python3-scipy): the SciPy example is not tested")
def test_scipy_example_reaches_seeded_targets_within_the_limits():
    sp = _load_example("scipy_solver")
    m = external.KinematicModel(planar_model())
    rng = np.random.default_rng(5)
    converged = 0
    for i in range(10):
        target = planar_tip(rng.uniform(-2, 2, 3))
        p = external.Problem(problem_json(i, rng.uniform(-2, 2, 3), target))
        a = sp.solve(m, p)
        assert np.all(np.abs(a.q) <= 2.5)  # the limits are least_squares' bounds
        assert 1 <= a.iterations <= p.max_iterations
        if a.status == "converged":
            converged += 1
            assert np.linalg.norm(planar_tip(a.q) - target) <= 1e-5
        else:
            assert a.status in ("stalled", "max-iterations")
            assert np.linalg.norm(planar_tip(a.q) - target) > 1e-5
    # One bounded attempt from a random start: a few end in a local minimum against a limit.
    assert converged >= 6
    # A pose goal (position and orientation) on the planar chain, from a start away from it.
    q_goal = np.array([0.4, -0.3, 0.8])
    half = sum(q_goal) / 2
    p = external.Problem(problem_json(10, [0.0, 0.0, 0.0], planar_tip(q_goal), kind="pose",
                                      quat=(0, 0, math.sin(half), math.cos(half))))
    a = sp.solve(m, p)
    assert a.status == "converged"
    assert p.within_tolerance(m, a.q)


def test_the_report_shows_an_external_solvers_own_time_and_the_overhead(tmp_path):
    """solver_time_us (an external solver's own reported time) gives each cell the median own time
    and the median of the rest of the wall time, the protocol's overhead; the report's summary rows
    carry both, and a cell of a built-in backend (no reported time) leaves them empty."""
    import synth
    from ikbench.analysis import figures
    from ikbench.io import results
    from ikbench.render import report_tables

    run = results.load(synth.make_run(tmp_path / "run", problems=20, unsupported=(),
                                      solvers={"dls": (1.0, 1.0, (5, 9)), "ccd": (1.0, 2.0, (5, 9))}))
    solves = run.solves.copy()
    ext = solves["solver"] == "ccd"   # stands for an external solver that reports 40 % of its wall time
    solves["solver_time_us"] = np.where(ext, 0.4 * solves["time_us"], np.nan)
    summary = figures.summarize(solves, intervals=False)
    for r in summary.to_dict("records"):
        cell = solves[(solves["family"] == r["family"]) & (solves["solver"] == r["solver"])]
        if r["solver"] == "ccd":
            assert r["solver_time_us_median"] == pytest.approx(np.median(0.4 * cell["time_us"]))
            assert r["overhead_us_median"] == pytest.approx(np.median(0.6 * cell["time_us"]))
        else:
            assert math.isnan(r["solver_time_us_median"]) and math.isnan(r["overhead_us_median"])
    table = report_tables.summary_rows(summary)
    cols = table["columns"]
    for row in table["rows"]:
        d = dict(zip(cols, row))
        assert (d["own_time_text"] != "") == (d["solver"] == "ccd")
        assert (d["overhead_text"] != "") == (d["solver"] == "ccd")
    # a run without the column has neither figure
    assert "solver_time_us_median" not in figures.summarize(run.solves, intervals=False).columns
