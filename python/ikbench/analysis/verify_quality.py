"""Re-verification of the outcome and answer-quality columns of a run (docs/protocols.md), with
numpy alone: the forward kinematics of verify.py, a geometric Jacobian written here, and the
definitions of outcomes.py.

    report = verify_quality(ikbench.io.results.load(RUN_DIR))   # None for a run without the columns
    print(format_quality(report))                           # ikbench.render.verify_render

Per solve: `outcome` (outcomes.outcome_of), `manipulability` (Yoshikawa 1985: the product of the
singular values of the goals' unweighted geometric Jacobian, orientation rows in rad),
`limit_margin` (the smallest (x - lower) / (upper - lower) or (upper - x) / (upper - lower) over the
tangent coordinates with two finite limits), and in sequential families, from the tangent
differences d_k = q_k (-) q_{k-1} of consecutive answers: `joint_jump` = max |d_k|, `branch_switch` =
joint_jump > the family's branch_jump, `joint_velocity` = |d_k| r, `joint_acceleration` =
|d_k - d_{k-1}| r^2, `joint_jerk` = |d_k - 2 d_{k-1} + d_{k-2}| r^3 (r the family's frame rate).
Figures agree within a relative 1e-6 (absolute 1e-9): the two implementations round differently.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import outcomes
from ..io.results import QUALITY_COLUMNS, parse_q
from .verify import Model, quat_to_matrix, quat_to_rotvec

RTOL, ATOL = 1e-6, 1e-9


def _skew_cross(a, b):
    return np.cross(a, b)


def jacobian(model, R, p, goals):
    """The goals' unweighted geometric Jacobian (m x nv) at one configuration, from its bodies'
    world rotations R (nj, 3, 3) and positions p (nj, 3). Ball and free rotations and free
    translations take world axes as their tangent basis (the singular values do not depend on it)."""
    blocks = []
    nv = model.nv
    for g in goals:
        b = g["body_index"]
        pe = p[b] + R[b] @ np.asarray(g["point"], dtype=float)
        rows_p, rows_o = np.zeros((3, nv)), np.zeros((3, nv))
        j = b
        chain = []
        while j >= 0:
            chain.append(j)
            j = model.joints[j]["parent"]
        col = 0
        cols = {}
        for i, jt in enumerate(model.joints):
            cols[i] = col
            col += {"revolute": 1, "prismatic": 1, "ball": 3, "free": 6}.get(jt["type"], 0)
        for i in chain:
            jt, c = model.joints[i], cols[i]
            t = jt["type"]
            if t == "revolute":
                a = R[i] @ (jt["axis"] / np.linalg.norm(jt["axis"]))
                rows_p[:, c] = _skew_cross(a, pe - p[i])
                rows_o[:, c] = a
            elif t == "prismatic":
                rows_p[:, c] = R[i] @ (jt["axis"] / np.linalg.norm(jt["axis"]))
            elif t == "ball":
                for k in range(3):
                    e = np.eye(3)[k]
                    rows_p[:, c + k] = _skew_cross(e, pe - p[i])
                    rows_o[:, c + k] = e
            elif t == "free":
                for k in range(3):
                    e = np.eye(3)[k]
                    rows_p[:, c + k] = e
                    rows_p[:, c + 3 + k] = _skew_cross(e, pe - p[i])
                    rows_o[:, c + 3 + k] = e
        if g["kind"] in ("position", "pose"):
            blocks.append(rows_p)
        if g["kind"] in ("orientation", "pose"):
            blocks.append(rows_o)
    return np.vstack(blocks) if blocks else np.zeros((0, nv))


def manipulability(J):
    """Product of the singular values of J (min(m, n) of them); 0 for an empty Jacobian."""
    if J.size == 0:
        return 0.0
    return float(np.prod(np.linalg.svd(J, compute_uv=False)))


def limit_margin(model, q):
    v, lo, up = model.limit_values(q[None, :])
    ok = np.isfinite(lo) & np.isfinite(up) & (up > lo)
    if not ok.any():
        return np.nan
    x, lo, up = v[0][ok], lo[ok], up[ok]
    return float(np.min(np.minimum(x - lo, up - x) / (up - lo)))


def difference(model, q1, q0):
    """Tangent difference q1 (-) q0: angles and displacements subtract, rotations log(R1 R0^T)."""
    out = []
    for j in model.joints:
        t, iq = j["type"], j["iq"]
        if t in ("revolute", "prismatic"):
            out.append([q1[iq] - q0[iq]])
        elif t == "ball":
            out.append(_log(q1[iq:iq + 4], q0[iq:iq + 4]))
        elif t == "free":
            out.append(q1[iq:iq + 3] - q0[iq:iq + 3])
            out.append(_log(q1[iq + 3:iq + 7], q0[iq + 3:iq + 7]))
    return np.concatenate(out) if out else np.zeros(0)


def _log(a, b):
    R = quat_to_matrix(a) @ quat_to_matrix(b).T
    w = np.sqrt(max(0.0, 1 + np.trace(R))) / 2
    # the rotation vector of R through its quaternion (w >= 0)
    if w > 1e-8:
        x = (R[2, 1] - R[1, 2]) / (4 * w)
        y = (R[0, 2] - R[2, 0]) / (4 * w)
        z = (R[1, 0] - R[0, 1]) / (4 * w)
        return quat_to_rotvec(np.array([x, y, z, w]))
    from scipy.spatial.transform import Rotation
    return Rotation.from_matrix(R).as_rotvec()


def motion(model, history, rate):
    """(jump, velocity, acceleration, jerk) from answers most recent first; nan where not defined."""
    nan = np.nan
    if len(history) < 2:
        return nan, nan, nan, nan
    d = [difference(model, history[i], history[i + 1]) for i in range(min(3, len(history) - 1))]
    jump = float(np.max(np.abs(d[0]))) if len(d[0]) else 0.0
    if not rate or rate <= 0:
        return jump, nan, nan, nan
    vel = float(np.linalg.norm(d[0]) * rate)
    acc = float(np.linalg.norm(d[0] - d[1]) * rate ** 2) if len(d) >= 2 else nan
    jerk = float(np.linalg.norm(d[0] - 2 * d[1] + d[2]) * rate ** 3) if len(d) >= 3 else nan
    return jump, vel, acc, jerk


@dataclass
class QualityReport:
    checked: int
    disagreements: pd.DataFrame


def verify_quality(run):
    """Recomputes the quality columns of every row; None when the run has none of them."""
    solves = run.solves
    if not all(c in solves for c in QUALITY_COLUMNS):
        return None
    fams = outcomes.family_info(run)
    expect_outcome = outcomes.outcomes(solves, fams)
    pidx = run._problem_index()
    compiled = {}
    qs = {}

    def q_of(i):
        if i not in qs:
            qs[i] = parse_q(solves["q"].iat[i], f"{run.solves_path}:{run.solve_lines[i]}: column 'q'")
        return qs[i]

    key = {(f, s, int(p)): i for i, (f, s, p) in enumerate(zip(solves["family"], solves["solver"], solves["problem"]))}
    found = []
    for i in range(len(solves)):
        fam, solver, prob = solves["family"].iat[i], solves["solver"].iat[i], int(solves["problem"].iat[i])
        info = fams.get(fam, {})
        got_outcome = str(solves["outcome"].iat[i]).strip()
        want = {"outcome": expect_outcome[i]}
        attempted = want["outcome"] != "not-attempted"
        prow = run.problems.iloc[pidx[(fam, prob)]]
        model = compiled.setdefault(prow["model"], Model(run.models[prow["model"]]))
        for c in QUALITY_COLUMNS[1:]:
            want[c] = np.nan
        if want["outcome"] == "converged":
            q = q_of(i)
            R, p = model.fk(q[None, :])
            want["manipulability"] = manipulability(jacobian(model, R[0], p[0], prow["goals"]))
            want["limit_margin"] = limit_margin(model, q)
        if attempted and info.get("sequential") and prob > 0:
            hist = [q_of(i)]
            for k in range(prob - 1, max(prob - 4, -1), -1):
                j = key.get((fam, solver, k))
                if j is None:
                    break
                hist.append(q_of(j))
            jump, vel, acc, jerk = motion(model, hist, info.get("frame_rate") or 0)
            bj = info.get("branch_jump") or 0
            want.update({"joint_jump": jump, "joint_velocity": vel, "joint_acceleration": acc, "joint_jerk": jerk,
                         "branch_switch": float(jump > bj) if bj and np.isfinite(jump) else np.nan})
        for c in QUALITY_COLUMNS:
            g = got_outcome if c == "outcome" else float(solves[c].iat[i])
            w = want[c]
            same = g == w if c == "outcome" else (np.isnan(g) and np.isnan(w)) or (
                not np.isnan(g) and not np.isnan(w) and np.isclose(g, w, rtol=RTOL, atol=ATOL))
            if not same:
                found.append({"line": int(run.solve_lines[i]), "family": fam, "problem": prob, "solver": solver,
                              "column": c, "value": g, "recomputed": w})
                break
    return QualityReport(len(solves), pd.DataFrame(found, columns=["line", "family", "problem", "solver", "column",
                                                                   "value", "recomputed"]))


__all__ = ["verify_quality", "jacobian", "manipulability", "limit_margin", "motion", "difference"]
