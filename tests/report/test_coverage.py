"""ikbench.analysis.coverage: distinct solutions (2 pi wrapping, 1e-3 threshold) and coverage against a
closed-form count, on a synthetic two-link run whose two IK solutions are known in closed form:
elbow (a, b) and its mirror (a + b, -b)."""
import json
import math

import numpy as np
import pytest
import synth

from ikbench.analysis import coverage, stats
from ikbench.io import results

CLOSED, MULTI, SINGLE = "closed", "multi:restarts=5:solutions=all", "single"
TWO_PI = 2 * math.pi


def _mirror(q):
    return np.array([q[0] + q[1], -q[1]])


def _make(tmp_path, plan):
    """plan: problem -> list of the multi backend's solutions as functions of the true q."""
    solvers = {CLOSED: (1.0, 0.5, (1, 1)), MULTI: (1.0, 1.0, (5, 10)), SINGLE: (1.0, 1.0, (5, 10))}
    sols = []

    def edit(rows):
        for r in rows:
            if r["family"] != "planar-position":
                continue
            k = int(r["problem"])
            q = np.array([float(x) for x in r["q"].split()])
            if r["solver"] == CLOSED:
                qs = [q, _mirror(q)]
            elif r["solver"] == MULTI:
                qs = [f(q) for f in plan[k]]
            else:
                continue
            r["solutions"] = str(len(qs))
            if len(qs) >= 1:
                r["q"] = synth.qtext(qs[0])
            if len(qs) > 1:
                sols.extend([r["family"], str(k), r["solver"], str(i), synth.qtext(x)] for i, x in enumerate(qs))

    d = synth.make_run(tmp_path / "run", problems=len(plan), solvers=solvers, families=("planar-position",),
                       traces=False, edit_rows=edit, unsupported=(), run_json_extra={"solvers": [
                           {"spec": CLOSED, "name": "closed", "parameters": {"restarts": 0, "solutions": "first"}},
                           {"spec": MULTI, "name": "multi", "parameters": {"restarts": 5, "solutions": "all"}},
                           {"spec": SINGLE, "name": "single", "parameters": {"restarts": 0, "solutions": "first"}}]})
    (d / "solutions.csv").write_bytes(synth._csv(["family", "problem", "solver", "solution", "q"], sols))
    synth.rewrite_manifest(d)
    return results.load(d)


def test_distance_wraps_revolute_angles_and_uses_rotation_angles():
    m = synth.planar_model()
    assert coverage.configuration_distance(m, [0.1, 0.2], [0.1 + TWO_PI, 0.2 - 2 * TWO_PI]) < 1e-12
    assert coverage.configuration_distance(m, [math.pi - 1e-4, 0], [-math.pi + 1e-4, 0]) == pytest.approx(2e-4)
    assert coverage.configuration_distance(m, [0.0, 0.0], [0.3, 0.4]) == pytest.approx(0.5)
    ball = {"joints": [{"type": "ball", "idx_q": 0}, {"type": "prismatic", "idx_q": 4}]}
    qa = [0, 0, 0, 1, 0.0]
    qb = [0, 0, math.sin(0.3), math.cos(0.3), 0.1]  # 0.6 rad about z, 0.1 m along the slider
    assert coverage.configuration_distance(ball, qa, qb) == pytest.approx(math.hypot(0.6, 0.1))
    qc = [0, 0, -math.sin(0.3), -math.cos(0.3), 0.1]  # the same rotation, the other quaternion sign
    assert coverage.configuration_distance(ball, qb, qc) < 1e-7


def test_vectorised_distances_equal_the_per_joint_sum():
    """configuration_distances (one q against many) against the definition written out joint by
    joint, on a free root, a ball, a hinge and a slider."""
    m = {"joints": [{"type": "free", "idx_q": 0}, {"type": "ball", "idx_q": 7},
                    {"type": "revolute", "idx_q": 11}, {"type": "prismatic", "idx_q": 12}]}
    rng = np.random.default_rng(5)

    def random_q():
        q = rng.normal(size=13)
        q[11] *= 4  # angles beyond pi: the wrap matters
        return q

    def angle_between(a, b):  # quaternions x, y, z, w: the relative rotation's angle
        d = abs(float(np.dot(a / np.linalg.norm(a), b / np.linalg.norm(b))))
        return 2 * math.acos(min(1.0, d))

    q, others = random_q(), [random_q() for _ in range(6)]
    got = coverage.configuration_distances(m, q, np.array(others))
    for o, g in zip(others, got):
        w = (q[11] - o[11] + math.pi) % TWO_PI - math.pi
        want = math.sqrt(np.sum((q[0:3] - o[0:3]) ** 2) + angle_between(q[3:7], o[3:7]) ** 2
                         + angle_between(q[7:11], o[7:11]) ** 2 + w ** 2 + (q[12] - o[12]) ** 2)
        assert g == pytest.approx(want, rel=1e-9, abs=1e-9)
        assert coverage.configuration_distance(m, q, o) == pytest.approx(g, rel=1e-12, abs=1e-12)


def test_distinct_uses_the_threshold():
    m = synth.planar_model()
    qs = [np.array([0.0, 0.0]), np.array([5e-4, 0.0]), np.array([2e-3, 0.0]), np.array([TWO_PI, 0.0])]
    assert len(coverage.distinct(m, qs)) == 2  # 5e-4 and 2 pi are the first; 2e-3 is another


def test_coverage_against_the_closed_form_count(tmp_path):
    same = lambda q: q  # noqa: E731
    plan = {
        0: [same, _mirror],                                           # both: 1
        1: [same],                                                    # one of two: 0.5
        2: [same, lambda q: q + [TWO_PI, 0], _mirror],                # a 2 pi copy is not another: 1
        3: [same, lambda q: q + [4e-4, 0], lambda q: q - [2 * TWO_PI, 0]],  # all the same solution: 0.5
        4: [same, _mirror, lambda q: q + [0.5, 0]],                   # 3 distinct > 2: capped at 1, counted above
    }
    run = _make(tmp_path, plan)
    assert coverage.solver_roles(run) == {CLOSED: "reference", MULTI: "multi"}
    df = coverage.solution_coverage(run).set_index("solver")
    m = df.loc[MULTI]
    per_problem = np.array([1.0, 0.5, 1.0, 0.5, 1.0])
    assert m["reference"] == CLOSED and m["problems"] == 5
    assert m["coverage_mean"] == pytest.approx(per_problem.mean())
    assert m["found_mean"] == pytest.approx(np.mean([2, 1, 2, 1, 3]))
    assert m["reference_mean"] == 2.0
    assert m["problems_above"] == 1
    lo, hi = stats.bootstrap_intervals([per_problem], "mean")
    assert (m["coverage_ci_low"], m["coverage_ci_high"]) == (lo[0], hi[0])
    r = df.loc[CLOSED]
    assert r["role"] == "reference" and r["found_mean"] == 2.0 and math.isnan(r["coverage_mean"])
    assert SINGLE not in df.index  # a single-answer backend has no coverage


def test_no_reference_gives_found_only(tmp_path):
    run = _make(tmp_path, {0: [lambda q: q, _mirror], 1: [lambda q: q]})
    meta = run.meta
    # without the closed form's several solutions there is no reference count
    run.solves.loc[run.solves["solver"] == CLOSED, "solutions"] = 1
    df = coverage.solution_coverage(run).set_index("solver")
    assert list(df.index) == [MULTI]
    assert df.loc[MULTI, "found_mean"] == 1.5 and math.isnan(df.loc[MULTI, "coverage_mean"])
    assert json.dumps(meta)  # run.json untouched


def test_no_multi_solution_backend_gives_nothing(tmp_path):
    run = results.load(synth.make_run(tmp_path / "r", problems=4))
    assert coverage.solver_roles(run) == {}
    assert coverage.solution_coverage(run).empty
