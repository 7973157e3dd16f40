"""Your own IK solver as an ikbench external solver (docs/external-solvers.md).

A function ``solve(model, problem) -> q`` becomes a process that speaks the ikbench-external
protocol (JSON lines on stdin and stdout), which ``ikbench run --solvers "ext:cmd='...'"``
benchmarks beside the built-in backends, every answer checked by the harness's forward kinematics::

    from ikbench import external

    @external.solver(name="my-dls")
    def solve(model, problem):
        q = problem.q0.copy()
        ...                           # model.fk(q), model.goal_errors(q, problem.goals), ...
        return q                      # or external.Answer(q, status="converged", iterations=12)

    if __name__ == "__main__":
        solve.serve()

This module is a leaf: it imports the standard library and numpy only, so it can also be copied
beside a solver. ``KinematicModel`` is a small numpy forward kinematics of the model JSON the harness sends
(models.json's format, docs/results-format.md), enough for a Jacobian-transpose or
damped-least-squares solver; a solver with its own kinematics reads ``model.json`` (the JSON as
sent) or, for a model loaded from a URDF file, ``model.urdf`` (the file's text; ``model.source`` its
path).
"""

import json
import math
import sys
import time

import numpy as np

PROTOCOL = "ikbench-external"
VERSION = 1
STATUSES = ("converged", "max-iterations", "time-limit", "stalled", "numerical-failure", "unsupported")


# ---- rotations ---------------------------------------------------------------------------------

def quat_to_matrix(xyzw):
    """The rotation matrix of a quaternion (x, y, z, w); normalised first."""
    x, y, z, w = np.asarray(xyzw, dtype=float) / np.linalg.norm(xyzw)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def axis_angle_matrix(axis, angle):
    """Rodrigues' formula: the rotation by `angle` about the unit `axis`."""
    a = np.asarray(axis, dtype=float)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


def rotation_vector(r):
    """log(R) as a rotation vector (axis times angle), stable near 0 and pi."""
    c = max(-1.0, min(1.0, (np.trace(r) - 1) / 2))
    angle = math.acos(c)
    v = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    if angle < 1e-9:
        return 0.5 * v
    if math.pi - angle < 1e-6:
        # Near pi: the axis from the largest diagonal entry of (R + I) / 2.
        m = (r + np.eye(3)) / 2
        i = int(np.argmax(np.diag(m)))
        axis = m[:, i] / math.sqrt(max(m[i, i], 1e-300))
        axis /= np.linalg.norm(axis)
        if np.dot(axis, v) < 0:
            axis = -axis
        return angle * axis
    return angle / (2 * math.sin(angle)) * v


# ---- the model ---------------------------------------------------------------------------------

class KinematicModel:
    """A model of models.json's format: joints in topological order (parent < index), each moving
    its body: world_T_body[i] = world_T_body[parent] * parent_T_joint[i] * motion_i(q)."""

    def __init__(self, model_json, urdf=None):
        self.json = model_json
        self.name = model_json.get("name", "")
        # The URDF file's text and path when the model was loaded from one (the model message's
        # `urdf`, the model's `source`), for a solver that builds its own kinematics from URDF; else
        # None. The joints above are the chain the harness solves, which may be part of the file's tree.
        self.urdf = urdf if isinstance(urdf, str) else None
        self.source = model_json.get("source") if isinstance(model_json.get("source"), str) else None
        self.nq = int(model_json["nq"])
        self.nv = int(model_json["nv"])
        self.joints = model_json["joints"]
        self.n = len(self.joints)
        self.parent = [int(j["parent"]) for j in self.joints]
        self.types = [j["type"] for j in self.joints]
        self.axis = [np.asarray(j["axis"], dtype=float) for j in self.joints]
        self.rest_p = [np.asarray(j["parent_T_joint"]["xyz"], dtype=float) for j in self.joints]
        self.rest_r = [quat_to_matrix(j["parent_T_joint"]["quat_xyzw"]) for j in self.joints]
        self.idx_q = [int(j["idx_q"]) for j in self.joints]
        self.idx_v = [int(j["idx_v"]) for j in self.joints]
        self.body_names = [j.get("body", "") for j in self.joints]
        lower, upper = [], []
        for j in self.joints:
            lower += [-math.inf if v is None else float(v) for v in j["lower"]]
            upper += [math.inf if v is None else float(v) for v in j["upper"]]
        self.lower = np.asarray(lower, dtype=float)  # per tangent DOF (nv)
        self.upper = np.asarray(upper, dtype=float)
        self.simple = all(t in ("revolute", "prismatic", "fixed") for t in self.types)

    def fk(self, q):
        """World rotation and position of every body: lists of (3x3, 3) arrays."""
        q = np.asarray(q, dtype=float)
        rot, pos = [None] * self.n, [None] * self.n
        for i in range(self.n):
            p = self.parent[i]
            r0 = self.rest_r[i] if p < 0 else rot[p] @ self.rest_r[i]
            p0 = self.rest_p[i] if p < 0 else pos[p] + rot[p] @ self.rest_p[i]
            t, k = self.types[i], self.idx_q[i]
            if t == "revolute":
                r0 = r0 @ axis_angle_matrix(self.axis[i], q[k])
            elif t == "prismatic":
                p0 = p0 + r0 @ (self.axis[i] * q[k])
            elif t == "ball":
                r0 = r0 @ quat_to_matrix(q[k:k + 4])
            elif t == "free":
                p0 = p0 + r0 @ q[k:k + 3]
                r0 = r0 @ quat_to_matrix(q[k + 3:k + 7])
            rot[i], pos[i] = r0, p0
        return rot, pos

    def goal_errors(self, q, goals):
        """(largest position error [m], largest orientation error [rad]) of q over the goals,
        as the harness measures them."""
        rot, pos = self.fk(q)
        ep = eo = 0.0
        for g in goals:
            b = g.body
            if g.kind in ("position", "pose"):
                ep = max(ep, float(np.linalg.norm(g.target_position - (pos[b] + rot[b] @ g.point))))
            if g.kind in ("orientation", "pose"):
                eo = max(eo, float(np.linalg.norm(rotation_vector(g.target_rotation @ rot[b].T))))
        return ep, eo

    def residual_and_jacobian(self, q, goals):
        """The stacked weighted residual e (position rows: target - point; orientation rows:
        log(R_target R^T), scaled by the goal's orientation_scale) and the geometric Jacobian
        de/dq of revolute and prismatic joints (nv columns). Needs a model of revolute,
        prismatic and fixed joints (self.simple)."""
        if not self.simple:
            raise ValueError("residual_and_jacobian: ball and free joints are not handled here")
        rot, pos = self.fk(q)
        rows_e, rows_j = [], []
        for g in goals:
            b = g.body
            chain = []
            i = b
            while i >= 0:
                chain.append(i)
                i = self.parent[i]
            x = pos[b] + rot[b] @ g.point
            parts = []
            if g.kind in ("position", "pose"):
                parts.append(("p", g.target_position - x, g.weight))
            if g.kind in ("orientation", "pose"):
                parts.append(("o", rotation_vector(g.target_rotation @ rot[b].T), g.weight * g.orientation_scale))
            for kind, e, w in parts:
                jac = np.zeros((3, self.nv))
                for i in chain:
                    if self.types[i] == "fixed":
                        continue
                    a = rot[i] @ self.axis[i]  # the joint's axis in the world (after its own motion)
                    v = self.idx_v[i]
                    if self.types[i] == "revolute":
                        jac[:, v] = np.cross(a, x - pos[i]) if kind == "p" else a
                    elif kind == "p":
                        jac[:, v] = a
                rows_e.append(w * e)
                rows_j.append(w * jac)
        return np.concatenate(rows_e), np.vstack(rows_j)

    def clamp(self, q):
        """q with revolute and prismatic entries clamped into their limits."""
        q = np.array(q, dtype=float)
        for i in range(self.n):
            if self.types[i] in ("revolute", "prismatic"):
                v, k = self.idx_v[i], self.idx_q[i]
                q[k] = min(max(q[k], self.lower[v]), self.upper[v])
        return q


class Goal:
    """One goal of a problem: a point fixed in a body reaches a target position and/or a body
    reaches a target orientation (kind: position, orientation or pose)."""

    def __init__(self, g):
        self.body = int(g["body_index"])
        self.body_name = g.get("body", "")
        self.point = np.asarray(g["point"], dtype=float)
        self.kind = g["kind"]
        self.target_position = np.asarray(g["target_position"], dtype=float)
        self.target_quat_xyzw = np.asarray(g["target_quat_xyzw"], dtype=float)
        self.target_rotation = quat_to_matrix(self.target_quat_xyzw)
        self.weight = float(g.get("weight", 1.0))
        self.orientation_scale = float(g.get("orientation_scale", 1.0))


class Problem:
    """One problem: the start q0 (nq), the goals, the tolerances and budgets of the run."""

    def __init__(self, p):
        self.json = p
        self.id = p["id"]
        self.name = p.get("name", "")
        self.q0 = np.asarray(p["q0"], dtype=float)
        self.goals = [Goal(g) for g in p["goals"]]
        self.position_tolerance = float(p["position_tolerance"])
        self.orientation_tolerance = float(p["orientation_tolerance"])
        self.max_iterations = int(p["max_iterations"])
        self.time_budget_us = float(p.get("time_budget_us", 0.0))  # 0: none
        self.seed = int(p.get("seed", 0))

    def within_tolerance(self, model, q):
        ep, eo = model.goal_errors(q, self.goals)
        return ep <= self.position_tolerance and eo <= self.orientation_tolerance


class Answer:
    """A solver's answer: q (nq numbers) and, optionally, its status (one of STATUSES), its
    iteration count and a message. The adapter adds the time of the call (time_us)."""

    def __init__(self, q, status=None, iterations=None, message=None):
        self.q = q
        self.status = status
        self.iterations = iterations
        self.message = message


# ---- the protocol loop ---------------------------------------------------------------------------

def _number(x):
    """A finite float, or None (JSON null) for NaN and infinities, which JSON cannot hold."""
    x = float(x)
    return x if math.isfinite(x) else None


def _answer_json(pid, result, elapsed_us):
    if not isinstance(result, Answer):
        result = Answer(result)
    out = {"id": pid, "q": [_number(v) for v in np.asarray(result.q, dtype=float).ravel()],
           "time_us": elapsed_us}
    if result.status is not None:
        out["status"] = result.status
    if result.iterations is not None:
        out["iterations"] = int(result.iterations)
    if result.message:
        out["message"] = str(result.message)
    return out


def serve(solve, name=None, stdin=None, stdout=None):
    """Answers the harness's messages on stdin with solve(model, problem) until stdin ends or a
    "bye" arrives. An exception in solve answers that problem with the start configuration and
    status numerical-failure (the message says which exception), and the process goes on."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    models = {}

    def send(obj):
        stdout.write(json.dumps(obj, allow_nan=False) + "\n")
        stdout.flush()

    for line in stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            if msg.get("version") != VERSION:
                sys.stderr.write(f"ikbench.external: harness speaks protocol version {msg.get('version')}, "
                                 f"this adapter {VERSION}\n")
            send({"type": "hello", "protocol": PROTOCOL, "version": VERSION, "name": name or solve.__name__})
        elif kind == "model":
            models[msg["model_id"]] = KinematicModel(msg["model"], msg.get("urdf"))
        elif kind == "solve":
            answers = []
            for p in msg["problems"]:
                problem = Problem(p)
                model = models[p["model_id"]]
                t0 = time.perf_counter()
                try:
                    result = solve(model, problem)
                except Exception as e:  # the solver's own failure is this problem's answer
                    result = Answer(problem.q0, "numerical-failure", message=f"{type(e).__name__}: {e}")
                elapsed = (time.perf_counter() - t0) * 1e6
                answers.append(_answer_json(problem.id, result, elapsed))
            send({"type": "answers", "answers": answers})
        elif kind == "bye":
            return
        else:
            sys.stderr.write(f"ikbench.external: unknown message type {kind!r}\n")


class _Solver:
    def __init__(self, fn, name):
        self.fn = fn
        self.name = name or fn.__name__
        self.__doc__ = fn.__doc__

    def __call__(self, model, problem):
        return self.fn(model, problem)

    def serve(self, stdin=None, stdout=None):
        serve(self.fn, self.name, stdin, stdout)


def solver(fn=None, *, name=None):
    """Decorator: `@solver` or `@solver(name="x")` on solve(model, problem) -> q or Answer. The
    result is still callable, and `.serve()` runs it as a protocol process."""
    if fn is None:
        return lambda f: _Solver(f, name)
    return _Solver(fn, name)
