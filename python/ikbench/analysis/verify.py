"""Re-verification of a run from its files alone, with an independent forward kinematics.

    report = verify_run(run, verdicts=ikbench.io.verdicts.from_harness(EXE, RUN_DIR))
    print(format_report(report))          # ikbench.render.verify_render: `python3 -m ikbench verify RUN_DIR`

The verdict on a solve is computed once, by the harness (`ikbench verify --verdicts`, read through
ikbench.io.verdicts): given its verdicts, the report's findings are the harness's, and the numpy
recomputation below is an independent cross-check held to them: every row where numpy's verdict,
away from its borderline band, differs from the harness's is listed in `cross_check` (a test
requires none on every shipped robot and scene). Without verdicts (no harness at hand) the numpy
recomputation is the verdict, and the report says so (`verdict_source`).

For every solve that returned a configuration `q` (solves.csv), the goals of its problem
(problems.jsonl) are evaluated on the model (models.json) with a forward kinematics written here
in numpy, following docs/results-format.md "Frames and conventions" and nothing of ikbench's C++:

    world_T_body[i] = world_T_body[parent] * parent_T_joint[i] * motion_i(q)

position error = |target - world_T_body * point|, orientation error = the angle of
R_target R_body^T; a solve is converged when every goal's errors are within run.json's
tolerances, within limits when every scalar DOF (and every ball/free rotation-vector component)
is inside its limits up to 1e-9. A row whose `converged` or `within_limits` differs from the
recomputation is reported: "false success" when the file claims 1 and the recomputation says 0,
"false failure" the other way round. The report counts as false successes the rows that claim a
success (converged, within limits and, in a scene, collision-free: figures.success_mask) that the
recomputation does not confirm.

In a run with a scene (docs/collision.md) a row's `collision_free` is re-checked too, with the
numpy distances of ikbench.analysis.collision (not FCL) over the scene's recorded checked pairs (the
reader refuses a list that names a shape the scene does not have, or leaves out a pair the scene
does not disable): free when every checked pair is more than 0 m
apart; a smallest distance within COLLISION_BORDERLINE of 0 is borderline.

Last bits: this FK and the C++ one round differently. A recomputed error within a relative 1e-9
of its tolerance (or a recomputed ball/free rotation-vector component within a relative 1e-12 of
its limit band's edge) is borderline: the row agrees whatever it claims, and the report counts
such rows.
"""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..io.results import JOINT_TYPES, NOT_ATTEMPTED, ResultsError, parse_q
from . import collision
from .rotations import axis_angle_matrix, quat_to_matrix, quat_to_rotvec, rotation_angle  # noqa: F401

LIMIT_SLACK = 1e-9       # the format's "inside its limits up to 1e-9"
BORDERLINE_RTOL = 1e-9   # recomputed errors this close (relative) to a tolerance agree either way
# Joint values are read exactly from q (a value clamped onto its limit is clearly inside, 1e-9 from
# the band's edge); only ball/free rotation vectors are recomputed, with rounding near 1e-15.
LIMIT_BORDERLINE_RTOL = 1e-12
# A pair closer to touching than this [m] (the golden-section search's and FCL's rounding) is
# borderline: the row's collision_free agrees either way.
COLLISION_BORDERLINE = 1e-6


# ---------------------------------------------------------------- the model

def bound_violation(bound, x):
    """The largest violation [m] of a goal's bound (problems.jsonl "bound") at position x:
    max(0, n_i . x - d_i) over half-spaces, |x - c| - r outside an inside_ball, r - |x - c| inside
    an outside_ball."""
    kind = bound["kind"]
    if kind == "half_spaces":
        n = np.asarray(bound["normals"], dtype=float).reshape(-1, 3)
        return float(max(0.0, np.max(n @ x - np.asarray(bound["offsets"], dtype=float))))
    dist = float(np.linalg.norm(x - np.asarray(bound["centre"], dtype=float)))
    r = float(bound["radius"])
    return max(0.0, dist - r) if kind == "inside_ball" else max(0.0, r - dist)


class Model:
    """A models.json model compiled for batched FK."""

    def __init__(self, m):
        self.id, self.nq, self.nv = m["id"], m["nq"], m["nv"]
        self.joints = []
        for j in m["joints"]:
            pt = j["parent_T_joint"]
            self.joints.append({
                "type": j["type"], "parent": j["parent"], "R0": quat_to_matrix(pt["quat_xyzw"]),
                "t0": np.asarray(pt["xyz"], dtype=float), "axis": np.asarray(j.get("axis") or [0, 0, 1], dtype=float),
                "iq": j["idx_q"], "lower": np.array([-np.inf if x is None else x for x in j["lower"]], dtype=float),
                "upper": np.array([np.inf if x is None else x for x in j["upper"]], dtype=float),
            })
        # Inertial data (models.json "mass", "com"; 0 where absent) and the subtree of each body:
        # subtree[b, i] when body i is b or below it.
        nj = len(self.joints)
        self.mass = np.array([float(j.get("mass", 0.0)) for j in m["joints"]])
        self.com = np.array([j.get("com", [0.0, 0.0, 0.0]) for j in m["joints"]], dtype=float).reshape(nj, 3)
        self.subtree = np.eye(nj, dtype=bool)
        for i in range(nj):
            k = self.joints[i]["parent"]
            while k >= 0:
                self.subtree[k, i] = True
                k = self.joints[k]["parent"]

    def centre_of_mass(self, R, p):
        """Centre of mass (n, nj, 3) of the subtree of every body: sum m_i (p_i + R_i c_i) / sum m_i
        (docs/wholebody.md); NaN for a massless subtree."""
        world = p + np.einsum("nkab,kb->nka", R, self.com)
        moment = np.einsum("bk,k,nka->nba", self.subtree.astype(float), self.mass, world)
        total = self.subtree.astype(float) @ self.mass
        with np.errstate(invalid="ignore", divide="ignore"):
            return moment / total[None, :, None]

    def fk(self, Q):
        """World rotation (n, nj, 3, 3) and position (n, nj, 3) of every body for configurations Q (n, nq)."""
        n, nj = Q.shape[0], len(self.joints)
        R = np.empty((n, nj, 3, 3))
        p = np.empty((n, nj, 3))
        for i, j in enumerate(self.joints):
            t, iq = j["type"], j["iq"]
            if j["parent"] < 0:
                Rp, pp = np.broadcast_to(np.eye(3), (n, 3, 3)), np.zeros((n, 3))
            else:
                Rp, pp = R[:, j["parent"]], p[:, j["parent"]]
            Rj = Rp @ j["R0"]                         # world rotation of the joint frame
            pj = pp + np.einsum("nab,b->na", Rp, j["t0"])
            if t == "revolute":
                R[:, i] = Rj @ axis_angle_matrix(j["axis"], Q[:, iq])
                p[:, i] = pj
            elif t == "prismatic":
                a = j["axis"] / np.linalg.norm(j["axis"])
                R[:, i] = Rj
                p[:, i] = pj + np.einsum("nab,b->na", Rj, a) * Q[:, iq, None]
            elif t == "ball":
                R[:, i] = Rj @ quat_to_matrix(Q[:, iq:iq + 4])
                p[:, i] = pj
            elif t == "free":
                p[:, i] = pj + np.einsum("nab,nb->na", Rj, Q[:, iq:iq + 3])
                R[:, i] = Rj @ quat_to_matrix(Q[:, iq + 3:iq + 7])
            else:  # fixed
                R[:, i] = Rj
                p[:, i] = pj
        return R, p

    def limit_values(self, Q):
        """(values, lower, upper), each (n, nv): the scalar DOF values in the tangent order, with
        ball/free rotations as rotation vectors."""
        vals, lo, up = [], [], []
        for j in self.joints:
            t, iq = j["type"], j["iq"]
            if t in ("revolute", "prismatic"):
                vals.append(Q[:, iq:iq + 1])
            elif t == "ball":
                vals.append(quat_to_rotvec(Q[:, iq:iq + 4]))
            elif t == "free":
                vals.append(Q[:, iq:iq + 3])
                vals.append(quat_to_rotvec(Q[:, iq + 3:iq + 7]))
            else:
                continue
            lo.append(j["lower"])
            up.append(j["upper"])
        if not vals:
            z = np.zeros((Q.shape[0], 0))
            return z, np.zeros(0), np.zeros(0)
        return np.concatenate(vals, axis=1), np.concatenate(lo), np.concatenate(up)


# ---------------------------------------------------------------- verification

@dataclass
class VerifyReport:
    run_path: str
    tolerances: tuple
    checked: int = 0
    skipped: int = 0                      # unsupported, invalid-input, or no configuration
    borderline: int = 0                   # rows with a recomputed value within the borderline band
    disagreements: pd.DataFrame = None
    max_error_difference: tuple = (0.0, 0.0)  # largest |reported - recomputed| position, orientation error
    recomputed: pd.DataFrame = field(default=None, repr=False)
    collision_checked: int = 0            # rows whose collision_free was re-checked in their scene
    false_successes: int = 0              # rows claiming a success the recomputation does not confirm
    verdict_source: str = "numpy"         # "ikbench verify" when the harness's verdicts were given
    cross_check: pd.DataFrame = None      # rows where numpy's verdict differs from the harness's
    cross_checked: int = 0                # rows held to the harness's verdict


def _decide(claimed, strict, loose):
    """(recomputed verdict, borderline) from a verdict at a slightly tighter (strict) and looser
    (loose) threshold: they differ only for borderline rows, which agree with their claim."""
    border = strict != loose
    return np.where(border, claimed, strict), border


CROSS_COLUMNS = ["line", "family", "problem", "solver", "what", "harness", "numpy", "position_error",
                 "numpy_position_error", "orientation_error", "numpy_orientation_error"]


def verify_run(run, verdicts=None):
    """Recomputes errors and limits of every solve with a configuration; see the module text.
    `verdicts`: the harness's (ikbench.io.verdicts), which then decide and numpy cross-checks."""
    run.require_version(2, "verify")
    if run.models is None or run.problems is None:
        raise ResultsError(f"{run.path}: verify needs models.json and problems.jsonl")
    tol_p, tol_o = run.tolerances
    solves = run.solves
    n = len(solves)
    # Rows the backend attempted and that returned a configuration. Unsupported and invalid-input
    # solves claim nothing about a configuration (whatever q they carry): they are skipped.
    attempted = ~solves["status"].isin(NOT_ATTEMPTED).to_numpy()
    has_q = (solves["q"].astype(str).str.strip() != "").to_numpy() & attempted
    pidx = run._problem_index()
    rec_pos = np.full(n, np.nan)
    rec_ori = np.full(n, np.nan)
    conv = np.zeros(n, dtype=bool)
    within = np.zeros(n, dtype=bool)
    border = np.zeros(n, dtype=bool)
    claimed_conv = solves["converged"].to_numpy(dtype=bool)
    claimed_within = solves["within_limits"].to_numpy(dtype=bool)
    # Rows grouped by model.
    prob_rows = np.array([pidx.get((f, int(p)), -1) for f, p in zip(solves["family"], solves["problem"])])
    for i in np.flatnonzero(prob_rows < 0):
        raise ResultsError(f"{run.solves_path}:{run.solve_lines[i]}: problem {solves['problem'].iat[i]} of family "
                           f"'{solves['family'].iat[i]}' is not in problems.jsonl")
    model_of = run.problems["model"].to_numpy()[prob_rows] if n else np.zeros(0, dtype=object)
    compiled = {}
    has_free = "collision_free" in solves
    claimed_free = solves["collision_free"].to_numpy(dtype=float) if has_free else np.full(n, np.nan)
    free = claimed_free == 1.0
    scene_rows = np.zeros(n, dtype=bool)
    # numpy's own decisions at the strict and loose thresholds (equal away from the borderline band),
    # and whether it could check every pair of the row's scene.
    np_conv = np.zeros((2, n), dtype=bool)
    np_within = np.zeros((2, n), dtype=bool)
    np_free = np.zeros((2, n), dtype=bool)
    np_all_pairs = np.zeros(n, dtype=bool)
    # Whole-body runs (docs/wholebody.md): levels met from the top, recomputed at the strict and the
    # loose threshold (they differ only for a row with a level error in the borderline band).
    has_levels = "levels_met" in solves
    claimed_levels = pd.to_numeric(solves["levels_met"], errors="coerce").to_numpy(dtype=float) if has_levels \
        else np.full(n, np.nan)
    np_levels = np.full((2, n), np.nan)
    for mid in pd.unique(model_of[has_q]):
        rows = np.flatnonzero(has_q & (model_of == mid))
        model = compiled.setdefault(mid, Model(run.models[mid]))
        Q = np.empty((len(rows), model.nq))
        for k, i in enumerate(rows):
            q = parse_q(solves["q"].iat[i], f"{run.solves_path}:{run.solve_lines[i]}: column 'q'")
            if len(q) != model.nq:
                raise ResultsError(f"{run.solves_path}:{run.solve_lines[i]}: column 'q': {len(q)} numbers, model "
                                   f"'{mid}' has nq {model.nq}")
            Q[k] = q
        R, p = model.fk(Q)
        # Goals, flattened over the rows of this model.
        gr, gb, gpt, gtp, gtq, gkind, gbound, glevel = [], [], [], [], [], [], [], []
        goals_col = run.problems["goals"].to_numpy()
        for k, i in enumerate(rows):
            for g in goals_col[prob_rows[i]]:
                gr.append(k)
                gb.append(g["body_index"])
                gpt.append(g["point"])
                gtp.append(g["target_position"])
                gtq.append(g["target_quat_xyzw"])
                gkind.append(g["kind"])
                gbound.append(g.get("bound"))
                glevel.append(int(g.get("priority", 0)))
        gr, gb = np.asarray(gr, dtype=np.int64), np.asarray(gb, dtype=np.int64)
        pos_part = np.isin(gkind, ["position", "pose", "com"])
        ori_part = np.isin(gkind, ["orientation", "pose"])
        Rb, pb = R[gr, gb], p[gr, gb]
        world = pb + np.einsum("nab,nb->na", Rb, np.asarray(gpt, dtype=float).reshape(-1, 3))
        com_goal = np.asarray(gkind) == "com"
        if com_goal.any():  # a centre-of-mass goal's position is its subtree's centre of mass
            world[com_goal] = model.centre_of_mass(R, p)[gr[com_goal], gb[com_goal]]
        perr = np.linalg.norm(np.asarray(gtp, dtype=float).reshape(-1, 3) - world, axis=1)
        for k, b in enumerate(gbound):  # a bounded goal's error is its largest violation
            if b is not None and b.get("kind", "none") != "none":
                perr[k] = bound_violation(b, world[k])
        Rt = quat_to_matrix(np.asarray(gtq, dtype=float).reshape(-1, 4))
        oerr = rotation_angle(Rt @ np.swapaxes(Rb, -1, -2))
        m = len(rows)
        maxp, maxo = np.zeros(m), np.zeros(m)
        np.maximum.at(maxp, gr[pos_part], perr[pos_part])
        np.maximum.at(maxo, gr[ori_part], oerr[ori_part])
        # converged: every goal within tolerance; borderline within a relative 1e-9 of it.
        ok_strict, ok_loose = np.ones(m, dtype=bool), np.ones(m, dtype=bool)
        for part, err, tol in ((pos_part, perr, tol_p), (ori_part, oerr, tol_o)):
            bad_s = part & ~(err <= tol * (1 - BORDERLINE_RTOL))
            bad_l = part & ~(err <= tol * (1 + BORDERLINE_RTOL))
            ok_strict &= ~np.bincount(gr[bad_s], minlength=m).astype(bool)
            ok_loose &= ~np.bincount(gr[bad_l], minlength=m).astype(bool)
        if has_levels:
            # Per row: each distinct priority in ascending order is a level; count the levels met
            # from the top (a level's goals all within tolerance, every level above met).
            glevel_a = np.asarray(glevel, dtype=np.int64)
            for k in range(m):
                mine = gr == k
                for t, factor in enumerate((1 - BORDERLINE_RTOL, 1 + BORDERLINE_RTOL)):
                    met = 0
                    for lv in np.unique(glevel_a[mine]):
                        sel = mine & (glevel_a == lv)
                        ok = np.all(~pos_part[sel] | (perr[sel] <= tol_p * factor)) and \
                            np.all(~ori_part[sel] | (oerr[sel] <= tol_o * factor))
                        if not ok:
                            break
                        met += 1
                    np_levels[t, rows[k]] = met
        c, bc = _decide(claimed_conv[rows], ok_strict, ok_loose)
        np_conv[0, rows], np_conv[1, rows] = ok_strict, ok_loose
        # within limits, up to LIMIT_SLACK; borderline within a relative 1e-12 of the band's edge.
        v, lo, up = model.limit_values(Q)
        band = LIMIT_BORDERLINE_RTOL * np.maximum(1.0, np.maximum(np.abs(np.where(np.isfinite(lo), lo, 0)),
                                                            np.abs(np.where(np.isfinite(up), up, 0))))
        in_strict = np.all((v >= lo - LIMIT_SLACK + band) & (v <= up + LIMIT_SLACK - band), axis=1)
        in_loose = np.all((v >= lo - LIMIT_SLACK - band) & (v <= up + LIMIT_SLACK + band), axis=1)
        w, bw = _decide(claimed_within[rows], in_strict, in_loose)
        np_within[0, rows], np_within[1, rows] = in_strict, in_loose
        rec_pos[rows], rec_ori[rows] = maxp, maxo
        conv[rows], within[rows], border[rows] = c, w, bc | bw
        if has_free and "scene" in run.models[mid]:
            scene = collision.prepare(run.models[mid]["scene"], [j["body"] for j in run.models[mid]["joints"]])
            d, chk = collision.pair_distances(scene, R, p)
            dmin = np.min(np.where(chk, d, np.inf), axis=1)
            fr, bf = _decide(claimed_free[rows] == 1.0, dmin > COLLISION_BORDERLINE, dmin > -COLLISION_BORDERLINE)
            np_free[0, rows], np_free[1, rows] = dmin > COLLISION_BORDERLINE, dmin > -COLLISION_BORDERLINE
            np_all_pairs[rows] = chk.all()
            if not chk.all():
                # A collision on a pair numpy does not check (a mesh, a box or cylinder link) can be
                # neither confirmed nor refuted here: a claimed collision the checked pairs do not
                # show stands (a claimed success is still checked on every pair numpy can check).
                fr = np.where(claimed_free[rows] == 0.0, False, fr)
            free[rows], scene_rows[rows] = fr, True
            border[rows] |= bf
    cross, source = None, "numpy"
    if verdicts is not None:
        source = "ikbench verify"
        v = verdicts[verdicts["file"] == "solves.csv"]
        at = {(f, int(p), s): k for k, (f, p, s) in enumerate(zip(v["family"], v["problem"], v["solver"]))}
        idx = np.array([at.get((f, int(p), s), -1) for f, p, s in zip(solves["family"], solves["problem"],
                                                                      solves["solver"])], dtype=np.int64)
        for i in np.flatnonzero(has_q & (idx < 0)):
            raise ResultsError(f"{run.solves_path}:{run.solve_lines[i]}: the harness's verdicts have no row for "
                               f"{solves['family'].iat[i]} #{solves['problem'].iat[i]} {solves['solver'].iat[i]}")
        q_rows = np.flatnonzero(has_q)
        k = idx[q_rows]
        h_conv, h_within = v["converged"].to_numpy()[k], v["within_limits"].to_numpy()[k]
        h_free, h_border = v["collision_free"].to_numpy(dtype=float)[k], v["borderline"].to_numpy()[k]
        # The cross-check: numpy away from its borderline band against the harness's verdict.
        sure = lambda a: a[0, q_rows] == a[1, q_rows]  # noqa: E731
        d_conv = sure(np_conv) & (np_conv[0, q_rows] != h_conv) & ~h_border
        d_within = sure(np_within) & (np_within[0, q_rows] != h_within)
        # numpy sees a collision on a pair it checks that the harness's exact check does not, or finds every
        # pair clear where it can check them all and the harness finds a collision.
        in_scene = scene_rows[q_rows]
        d_free = in_scene & sure(np_free) & ((~np_free[0, q_rows] & (h_free == 1.0)) |
                                             (np_free[0, q_rows] & np_all_pairs[q_rows] & (h_free == 0.0)))
        found = []
        for j in np.flatnonzero(d_conv | d_within | d_free):
            i = q_rows[j]
            for what, bad, h, mine in (("converged", d_conv, h_conv, np_conv[0]),
                                       ("within_limits", d_within, h_within, np_within[0]),
                                       ("collision_free", d_free, h_free == 1.0, np_free[0])):
                if bad[j]:
                    found.append({"line": int(run.solve_lines[i]), "family": solves["family"].iat[i],
                                  "problem": int(solves["problem"].iat[i]), "solver": solves["solver"].iat[i],
                                  "what": what, "harness": int(h[j]), "numpy": int(mine[i]),
                                  "position_error": float(v["position_error"].iat[k[j]]),
                                  "numpy_position_error": rec_pos[i],
                                  "orientation_error": float(v["orientation_error"].iat[k[j]]),
                                  "numpy_orientation_error": rec_ori[i]})
        cross = pd.DataFrame(found, columns=CROSS_COLUMNS)
        # The verdict is the harness's.
        conv[q_rows], within[q_rows], border[q_rows] = h_conv, h_within, h_border
        free[q_rows] = np.where(in_scene, h_free == 1.0, free[q_rows])
        rec_pos[q_rows] = v["position_error"].to_numpy(dtype=float)[k]
        rec_ori[q_rows] = v["orientation_error"].to_numpy(dtype=float)[k]
    # Rows without a configuration: nothing to recompute; they must not claim anything.
    conv[~has_q] = False
    within[~has_q] = claimed_within[~has_q]  # no configuration: nothing to check the limits of
    no_q_claims = ~has_q & claimed_conv
    recomputed = pd.DataFrame({"position_error": rec_pos, "orientation_error": rec_ori, "converged": conv,
                               "within_limits": within, "borderline": border})
    bad_c = has_q & (conv != claimed_conv) | no_q_claims
    bad_w = has_q & (within != claimed_within)
    # A row of a scene family claims collision_free 0 or 1; others claim nothing.
    bad_f = scene_rows & (free != (claimed_free == 1.0)) | (~scene_rows & has_q & ~np.isnan(claimed_free))
    # A false success: a row that claims a success (figures.success_mask: converged, within limits
    # and, in a scene, collision-free) that the recomputation does not confirm.
    claimed_success = claimed_conv & claimed_within & (claimed_free != 0.0)
    recomputed_success = conv & within & np.where(scene_rows, free, True)
    false_successes = claimed_success & ~recomputed_success & (bad_c | bad_w | bad_f)
    # levels_met that neither threshold's recomputation gives (rows of whole-body families).
    bad_l = has_q & ~np.isnan(claimed_levels) & (claimed_levels != np_levels[0]) & (claimed_levels != np_levels[1])
    rows = []
    for i in np.flatnonzero(bad_c | bad_w | bad_f | bad_l):
        what = []
        if bad_f[i]:
            what.append((("false success" if claimed_free[i] == 1.0 else "false failure") + " (collision-free)")
                        if scene_rows[i] else "collision_free claimed without a scene")
        if bad_c[i]:
            what.append(("false success" if claimed_conv[i] else "false failure") + " (converged)")
        if bad_w[i]:
            what.append(("false success" if claimed_within[i] else "false failure") + " (within limits)")
        if bad_l[i]:
            what.append(f"levels_met {int(claimed_levels[i])}, recomputed {int(np_levels[0, i])}")
        rows.append({"line": int(run.solve_lines[i]), "family": solves["family"].iat[i],
                     "problem": int(solves["problem"].iat[i]), "solver": solves["solver"].iat[i],
                     "converged": int(claimed_conv[i]), "within_limits": int(claimed_within[i]),
                     "recomputed_converged": int(conv[i]), "recomputed_within_limits": int(within[i]),
                     "position_error": solves["position_error"].iat[i], "recomputed_position_error": rec_pos[i],
                     "orientation_error": solves["orientation_error"].iat[i],
                     "recomputed_orientation_error": rec_ori[i],
                     "finding": "; ".join(what) if has_q[i] else
                     f"false success (converged, but status '{solves['status'].iat[i]}')" if not attempted[i] else
                     "false success (converged without a configuration q)"})
    dis = pd.DataFrame(rows, columns=["line", "family", "problem", "solver", "converged", "within_limits",
                                      "recomputed_converged", "recomputed_within_limits", "position_error",
                                      "recomputed_position_error", "orientation_error",
                                      "recomputed_orientation_error", "finding"])
    with np.errstate(invalid="ignore"):
        dp = np.abs(solves["position_error"].to_numpy(dtype=float) - rec_pos)[has_q]
        do = np.abs(solves["orientation_error"].to_numpy(dtype=float) - rec_ori)[has_q]
    maxdiff = (float(np.nanmax(dp)) if np.isfinite(dp).any() else 0.0,
               float(np.nanmax(do)) if np.isfinite(do).any() else 0.0)
    return VerifyReport(str(run.path), (tol_p, tol_o), checked=int(has_q.sum()), skipped=int((~has_q).sum()),
                        borderline=int(border.sum()), disagreements=dis, max_error_difference=maxdiff,
                        recomputed=recomputed, collision_checked=int(scene_rows.sum()),
                        false_successes=int(false_successes.sum()), verdict_source=source, cross_check=cross,
                        cross_checked=int(has_q.sum()) if cross is not None else 0)


__all__ = ["verify_run", "VerifyReport", "Model", "JOINT_TYPES"]
