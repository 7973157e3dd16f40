"""The data of report.html's 3D solve viewer (docs/report.md): thinned traces of the embedded
problems, each record's goal errors, the models and scenes slimmed to what the page's forward
kinematics draws, and the outcome of each solve as the analysis library decides it."""

import math
import os
import numpy as np
import pandas as pd

from ..analysis import curves, figures
from ..io.results import NOT_ATTEMPTED, ResultsError
from .report_values import embedded_problems, sig


def thin_indices(n, head, points, keep=()):
    """Indices of the records kept of a trace of n records: all of the first `head`, then at most
    `points` more at an even stride, always the last and every index in `keep` (the first and last
    record of each attempt, so that the viewer can draw where each attempt ended)."""
    keep = np.asarray(keep, dtype=int)
    if n <= head + points:
        return np.arange(n)
    if points == 0:  # the head and the last record only
        return np.unique(np.concatenate((np.arange(head), [n - 1], keep)))
    stride = int(math.ceil((n - head) / points))
    idx = np.concatenate((np.arange(head), np.arange(head, n, stride), [n - 1], keep))
    return np.unique(idx)


def attempt_starts(iterations):
    """Indices of the records of one solve's trace where an attempt starts: the first record, and
    every record whose iteration does not grow (an attempt after a restart opens with a record at
    the iteration count reached so far; docs/results-format.md "traces.csv")."""
    it = np.asarray(iterations)
    if not len(it):
        return np.zeros(0, dtype=int)
    return np.concatenate(([0], np.flatnonzero(it[1:] <= it[:-1]) + 1))


def goal_errors(model, goals, Q):
    """(position, orientation) errors of configurations Q (n, nq) against a problem's goals, by the
    numpy forward kinematics of ikbench.analysis.verify (independent of the page's JavaScript): the largest
    goal position error [m] and rotation angle [rad]; nan for a kind no goal has."""
    from ..analysis import verify

    Q = np.asarray(Q, dtype=float).reshape(-1, model.nq)
    R, p = model.fk(Q)
    n = Q.shape[0]
    pe, oe = np.full(n, np.nan), np.full(n, np.nan)
    for g in goals:
        b = g["body_index"]
        if g["kind"] != "orientation":
            world = p[:, b] + np.einsum("nab,b->na", R[:, b], np.asarray(g["point"], dtype=float))
            e = np.linalg.norm(np.asarray(g["target_position"], dtype=float) - world, axis=1)
            pe = np.fmax(pe, e)
        if g["kind"] != "position":
            Rt = verify.quat_to_matrix(np.asarray(g["target_quat_xyzw"], dtype=float))
            e = verify.rotation_angle(Rt @ np.swapaxes(R[:, b], -1, -2))
            oe = np.fmax(oe, e)
    return pe, oe


def within_tolerance(pe, oe, tolerances):
    """Converged by FK: every goal's errors within run.json's tolerances (nan: no goal of the kind)."""
    tp, to = tolerances
    pe, oe = np.asarray(pe, dtype=float), np.asarray(oe, dtype=float)
    return (np.isnan(pe) | (pe <= tp)) & (np.isnan(oe) | (oe <= to))


def _qlist(text):
    return [float(x) for x in str(text).split()]


def _slim_model(m):
    joints = []
    for j in m["joints"]:
        joints.append({"name": j.get("name"), "parent": j["parent"], "type": j["type"],
                       "xyz": j["parent_T_joint"]["xyz"], "quat": j["parent_T_joint"]["quat_xyzw"],
                       "axis": j.get("axis") or [0, 0, 1], "lower": j["lower"], "upper": j["upper"],
                       "iq": j["idx_q"]})
    src = m.get("source") or ""
    out = {"id": m["id"], "name": m.get("name"), "source": os.path.basename(src) if src else None,
           "nq": m["nq"], "nv": m["nv"], "up": "y" if src.lower().endswith(".bvh") else "z", "joints": joints}
    if isinstance(m.get("scene"), dict):
        out["scene"] = _slim_scene(m["scene"], {j["body"]: i for i, j in enumerate(m["joints"])})
    for j, mj in zip(joints, m["joints"]):
        j["body_name"] = mj.get("body")
    return out


MAX_DRAWN_TRIANGLES = 20000   # a mesh obstacle with more is drawn as its bounding box


def _slim_scene(scene, body_index):
    """What the viewer draws of a scene: the obstacles (world frame) and every link shape the
    collision world checks, in its body frame: spheres, capsules, cylinders and boxes as primitives
    ("links": type, xyz, quat and radius, length or size) and meshes or hulls as triangles
    ("link_meshes", a mesh of more than MAX_DRAWN_TRIANGLES as its bounding box among "links")."""
    obstacles = []
    for o in scene.get("obstacles", []):
        d = {"name": o["name"], "type": o["type"], "xyz": o["xyz"], "quat": o["quat_xyzw"]}
        for k in ("size", "radius", "length"):
            if k in o:
                d[k] = o[k]
        if o["type"] == "mesh":
            v = np.asarray(o["vertices"], dtype=float).reshape(-1, 3)
            if len(o["triangles"]) <= MAX_DRAWN_TRIANGLES:
                d["vertices"], d["triangles"] = v.tolist(), o["triangles"]
            else:
                lo, hi = v.min(axis=0), v.max(axis=0)
                d["size"] = (hi - lo).tolist()
                d["xyz"] = (np.asarray(o["xyz"]) + verify_rotate(o["quat_xyzw"], (lo + hi) / 2)).tolist()
        obstacles.append(d)
    links, link_meshes = [], []
    for l in scene.get("links", []):
        if l.get("body") not in body_index:
            continue
        b = body_index[l["body"]]
        if l["type"] == "mesh":
            v = np.asarray(l["vertices"], dtype=float).reshape(-1, 3)
            if len(l["triangles"]) <= MAX_DRAWN_TRIANGLES:
                # A link's mesh (or hull), its vertices in the body frame.
                v = v @ quat_matrix(l["quat_xyzw"]).T + l["xyz"]
                link_meshes.append({"body": b, "name": l["name"], "vertices": v.tolist(), "triangles": l["triangles"]})
            else:
                lo, hi = v.min(axis=0), v.max(axis=0)
                links.append({"body": b, "name": l["name"], "type": "box", "size": (hi - lo).tolist(),
                              "xyz": (np.asarray(l["xyz"]) + verify_rotate(l["quat_xyzw"], (lo + hi) / 2)).tolist(),
                              "quat": l["quat_xyzw"]})
            continue
        d = {"body": b, "name": l["name"], "type": l["type"], "xyz": l["xyz"], "quat": l["quat_xyzw"]}
        for k in ("size", "radius", "length"):
            if k in l:
                d[k] = l[k]
        links.append(d)
    out = {"name": scene.get("name"), "obstacles": obstacles, "links": links, "link_meshes": link_meshes}
    if isinstance(scene.get("coverage"), dict) and scene["coverage"].get("flagged"):
        cov = scene["coverage"]
        out["coverage_warning"] = "; ".join(
            ([f"links without a covering shape: {', '.join(map(str, cov.get('uncovered', [])))}"]
             if cov.get("uncovered") else [])
            + ([f"pairs never checked (collide at rest): "
                f"{', '.join('~'.join(map(str, p)) for p in cov.get('overlap_at_rest', []))}"]
               if cov.get("overlap_at_rest") else []))
    return out


def quat_matrix(q):
    from ..analysis.verify import quat_to_matrix
    return quat_to_matrix(np.asarray(q, dtype=float))


def verify_rotate(q, x):
    return quat_matrix(q) @ np.asarray(x, dtype=float)


def _collision_info(r):
    """The exact check of a solve in a scene (collision_free 0/1, clearance, pair), else nothing."""
    free = r.get("collision_free")
    if free is None or (isinstance(free, float) and math.isnan(free)):
        return {}
    clear = r.get("min_clearance")
    return {"collision_free": int(free), "min_clearance": None if clear is None or math.isnan(clear) else float(clear),
            "collision_pair": r.get("collision_pair") or ""}


def _goals(goals):
    return [{"body": g.get("body"), "body_index": g["body_index"], "kind": g["kind"], "point": g["point"],
             "target_position": g["target_position"], "target_quat_xyzw": g["target_quat_xyzw"]} for g in goals]


def _outcomes(model, goals, tolerances, row, q, trace, several):
    """What the viewer may say about the configurations it draws of one solve, decided by FK of
    those very configurations (goal_errors):

    * `attempts`: per attempt of the trace (attempt_starts), where it ended: its last record's
      iteration, position and orientation error, and whether those are within the tolerances;
    * `solutions`: the configurations the solve returned, solution 0 the q of solves.csv (its
      verdict is solves.csv's `converged`, which `ikbench verify` checks), then solutions.csv's
      solutions 1..k-1 of a solve that returned several (each with its FK errors and verdict).

    The trace's private `_ends` (kept position of each attempt's last record) is consumed here."""
    out = {"attempts": [], "solutions": []}
    qs, kinds = [], []
    if trace is not None:
        for a, k in enumerate(trace.pop("_ends")):
            k = int(k)
            out["attempts"].append({"last": k, "iteration": int(trace["it"][k]), "position_error": None,
                                    "orientation_error": None, "converged": None})  # None: no q recorded
            if k < len(trace["q"]) and len(trace["q"][k]) == model.nq:
                qs.append(trace["q"][k])
                kinds.append(("attempt", a))
    if q is not None and len(q) == model.nq:
        qs.append(q)
        kinds.append(("solution", 0))
        for i, sq in enumerate((several or [])[1:], start=1):
            if len(sq) == model.nq:
                qs.append(sq)
                kinds.append(("solution", i))
    if not qs:
        return out
    pe, oe = goal_errors(model, goals, np.array(qs))
    ok = within_tolerance(pe, oe, tolerances)
    for (kind, k), e_p, e_o, c, qq in zip(kinds, pe, oe, ok, qs):
        if kind == "attempt":
            out["attempts"][k].update(position_error=e_p, orientation_error=e_o, converged=bool(c))
        else:
            out["solutions"].append({"solution": k, "q": qq, "position_error": e_p, "orientation_error": e_o,
                                     "converged": bool(row["converged"]) if k == 0 else bool(c)})
    return out


Q_UNIT = 1e-4   # rad or m: the step of a traced configuration that only animates the 3D view


def _slim(solve):
    """One solve of the viewer without what the page needs only once: solution 0's q is the
    solve's q (left out; the page takes it from there), and the traced configurations travel as
    `qd` (encode_trace_q): those that only animate the 3D view in steps of Q_UNIT (1e-4 rad turns a
    1 m link by 0.1 mm, below a pixel of the view), each as its change from the record before,
    which compresses to half; an attempt's last record, whose FK verdict the page states, exact."""
    sols = solve.get("solutions") or []
    if sols and sols[0].get("solution") == 0 and solve.get("q") is not None and sols[0]["q"] == solve["q"]:
        sols[0]["q"] = None
    tr = solve.get("trace")
    if tr is not None:
        q = tr.pop("q")
        tr["qd"] = encode_trace_q(q, [a["last"] for a in solve.get("attempts") or []]) if len(q) else None
    return solve


def encode_trace_q(q, exact_rows):
    """A trace's configurations (records x nq) as {"unit", "delta", "exact"}: row k of q is
    unit * (delta[0] + ... + delta[k]) (integers), except the rows listed in `exact`
    ([k, q_k] pairs), which are q's own."""
    q = np.asarray(q, dtype=float)
    steps = np.round(q / Q_UNIT).astype(np.int64)
    delta = np.vstack([steps[:1], np.diff(steps, axis=0)])
    exact = sorted({int(k) for k in exact_rows if 0 <= int(k) < len(q)})
    return {"unit": Q_UNIT, "delta": delta, "exact": [[k, q[k]] for k in exact]}


def trace_q(trace):
    """The configurations of a viewer trace (a list of lists; [] without q): encode_trace_q's
    inverse, as the page decodes them."""
    qd = trace.get("qd") if trace else None
    if not qd:
        return []
    rows = (np.cumsum(np.asarray(qd["delta"], dtype=np.int64), axis=0) * qd["unit"]).tolist()
    for k, row in qd["exact"]:
        rows[k] = list(row)
    return rows


def viewer_data(run, opts, sequential, traces_table=None):
    """The solve viewer's data: the models used, and per family either the first
    `trace_problems` problems with each solver's outcome (solves.csv), thinned trace (traces.csv:
    iteration, errors, honest time, q, attempt `a` of each record), where each attempt ended and
    the solutions returned (_outcomes), or, for a sequential family, a clip of its first
    `clip_frames` problems with each solver's returned q, errors and verdict per problem.
    `traces_table`: curves.read_traces(run) when already read."""
    if run.problems is None or run.models is None:
        return None
    solves = run.solves
    problems = run.problems
    table = traces_table if traces_table is not None else curves.read_traces(run)
    tr = table.frame
    K = opts.trace_problems
    fams = list(dict.fromkeys(problems["family"]))
    models_used = set()
    out = {}
    # traces of the embedded problems, thinned; q is read for the kept records only
    traces = {}
    thinned_records = total_records = 0
    chosen = {}   # the embedded problems of the traced families (others: the first K problems)
    if tr is not None and not tr.empty and K != 0:
        seq = [f for f in fams if sequential.get(f)]
        keys = tr[["family", "problem"]].drop_duplicates()
        chosen = embedded_problems(run, zip(keys["family"].astype(str), keys["problem"]), K)
        mask = np.zeros(len(tr), dtype=bool)
        fam_col = tr["family"].astype(str).to_numpy()
        for f, ps in chosen.items():
            if f not in seq:
                mask |= (fam_col == f) & tr["problem"].isin(list(ps)).to_numpy()
        rows = np.flatnonzero(mask)
        t = tr.iloc[rows]
        tcol = curves.time_column(t) if len(t) else "time_us"
        if len(t):
            order, starts, ends = curves.solve_order(t)
            rows = rows[order]
            fam = t["family"].to_numpy()[order]
            prob = t["problem"].to_numpy()[order]
            spec = t["solver"].to_numpy()[order]
            it = t["iteration"].to_numpy()[order]
            pe = t["position_error"].to_numpy(dtype=float)[order]
            oe = t["orientation_error"].to_numpy(dtype=float)[order]
            tt = t[tcol].to_numpy(dtype=float)[order]
            kept = []
            for s, e in zip(starts, ends):
                first = attempt_starts(it[s:e])
                last = np.concatenate((first[1:] - 1, [e - s - 1]))
                rel = thin_indices(e - s, opts.trace_head, opts.trace_points, keep=np.concatenate((first, last)))
                idx = s + rel
                kept.append(idx)
                total_records += e - s
                thinned_records += len(idx)
                # attempt of every kept record, and the kept position of each attempt's last record
                traces[(fam[s], int(prob[s]), spec[s])] = {
                    "it": it[idx], "pe": sig(pe[idx], 6), "oe": sig(oe[idx], 6), "t": sig(tt[idx], 4),
                    "q": idx, "records": int(e - s),
                    "a": np.searchsorted(first, rel, side="right") - 1,
                    "_ends": np.searchsorted(rel, last)}
            want = np.unique(rows[np.concatenate(kept)]) if kept else np.zeros(0, np.int64)
            texts = dict(zip(want.tolist(), table.q_texts(want)))
            has_q = table.line_starts is not None or "q" in tr
            model_of = dict(zip(zip(problems["family"], problems["problem"].astype(int)), problems["model"]))
            for key, d in traces.items():
                qs = []
                for i in rows[d["q"]].tolist() if has_q else []:
                    try:
                        qs.append(_qlist(texts[i]))
                    except ValueError:
                        raise ResultsError(f"{table.path or 'traces.csv'}:{i + 2}: column 'q': expected numbers "
                                           f"separated by spaces, got '{texts[i][:60]}'") from None
                nq = run.models.get(model_of.get((key[0], key[1])), {}).get("nq") if qs else None
                if qs and nq is not None and any(len(q) != nq for q in qs):
                    i = rows[d["q"]][[len(q) != nq for q in qs].index(True)]
                    raise ResultsError(f"{table.path or 'traces.csv'}:{i + 2}: column 'q': expected {nq} numbers "
                                       f"(the model's nq)")
                d["q"] = np.array(qs, dtype=float) if qs else []   # (records, nq): 8 bytes a number
    scols = ["family", "problem", "solver", "status", "converged", "within_limits", "iterations", "position_error",
             "orientation_error", "time_us", "message", "q"] + (["restarts"] if "restarts" in solves else []) + \
        (["solutions"] if "solutions" in solves else []) + \
        [c for c in ("collision_free", "min_clearance", "collision_pair") if c in solves]
    # solutions.csv rows of the embedded problems: {(family, problem, solver): [q of solution 0, 1, ...]}
    several = {}
    sol = getattr(run, "solutions", None)
    def embedded(fam, problem):
        """Mask of the embedded problems among `problem` (a Series) of family `fam`."""
        if fam in chosen:
            return problem.isin(list(chosen[fam]))
        return problem >= 0 if K is None else problem < K

    if sol is not None and len(sol) and K != 0:
        keep = np.zeros(len(sol), dtype=bool)
        for f in fams:
            if not sequential.get(f):
                keep |= ((sol["family"] == f) & embedded(f, sol["problem"])).to_numpy()
        part = sol[keep]
        for key, g in part.sort_values("solution", kind="stable").groupby(["family", "problem", "solver"], sort=False):
            several[(key[0], int(key[1]), key[2])] = [_qlist(x) for x in g["q"]]
    compiled = {}
    for fam in fams:
        fp = problems[problems["family"] == fam]
        fs = solves[solves["family"] == fam]
        if sequential.get(fam):
            fp = fp[fp["problem"] < opts.clip_frames].sort_values("problem")
            nums = fp["problem"].tolist()
            m = fp["model"].iloc[0]
            models_used.add(m)
            per = {}
            for spec, part in fs[fs["problem"].isin(nums)].groupby("solver", sort=False):
                part = part.sort_values("problem")
                per[spec] = {"q": [_qlist(x) if x.strip() else None for x in part["q"]],
                             "pe": sig(part["position_error"].to_numpy(dtype=float), 6),
                             "oe": sig(part["orientation_error"].to_numpy(dtype=float), 6),
                             "status": part["status"].tolist(), "converged": part["converged"].astype(bool).tolist(),
                             "success": figures.success_mask(part).tolist()}
            out[fam] = {"mode": "clip", "model": m, "q0": fp["q0"].iloc[0],
                        "frames": [{"problem": int(p), "goals": _goals(g)} for p, g in zip(fp["problem"], fp["goals"])],
                        "solves": per, "problems": int((problems["family"] == fam).sum())}
            continue
        fp = fp[embedded(fam, fp["problem"])].sort_values("problem")
        plist = []
        for rec in fp.to_dict("records"):
            models_used.add(rec["model"])
            ps = fs[fs["problem"] == rec["problem"]][scols]
            model = compiled.get(rec["model"])
            if model is None:
                from ..analysis import verify

                model = compiled[rec["model"]] = verify.Model(run.models[rec["model"]])
            sv = {}
            for r in ps.to_dict("records"):
                att = r["status"] not in NOT_ATTEMPTED
                key = (fam, int(rec["problem"]), r["solver"])
                q = _qlist(r["q"]) if att and str(r["q"]).strip() else None
                trace = traces.get(key)
                sv[r["solver"]] = {
                    "status": r["status"], "converged": bool(r["converged"]),
                    "success": bool(figures.success_mask(pd.DataFrame([r]))[0]), "iterations": r["iterations"],
                    "restarts": r.get("restarts"),
                    "position_error": r["position_error"], "orientation_error": r["orientation_error"],
                    "time_us": r["time_us"], "message": r["message"] or "", "q": q,
                    **_collision_info(r),
                    "trace": trace, **_outcomes(model, rec["goals"], run.tolerances, r, q, trace, several.get(key))}
                _slim(sv[r["solver"]])
            plist.append({"problem": int(rec["problem"]), "name": rec.get("name"), "model": rec["model"],
                          "q0": rec["q0"], "goals": _goals(rec["goals"]), "solves": sv})
        out[fam] = {"mode": "trace", "problems": plist}
    models = {m: _slim_model(run.models[m]) for m in sorted(models_used, key=lambda x: int(x[1:]) if x[1:].isdigit()
                                                              else 0)}
    return {"models": models, "families": out, "records": {"total": int(total_records),
                                                           "embedded": int(thinned_records)}}
