"""Synthetic results directories of format version 2, written exactly as docs/results-format.md
says, for the tests of the analysis library.

The model is a planar chain of two revolute joints about z with unit links (joint 0 at the
origin, joint 1 at x = 1, a fixed tip frame at x = 1 of link 2), whose forward kinematics is
known in closed form:

    tip(q) = (cos q0 + cos(q0 + q1), sin q0 + sin(q0 + q1), 0),   R_tip = Rz(q0 + q1)

Families: `planar-position` (position goals on the tip) and `planar-pose` (pose goals). Solvers:
`dls` (solves most problems: returns the target configuration), `ccd` (solves fewer), and
`two-bone`, unsupported on every pose problem. Every random choice comes from
numpy.random.default_rng(seed). The FNV-1a hash of the manifest is the plain byte loop of its
definition, written here independently of ikbench.io.hashing.
"""

import json
import math
from pathlib import Path

import numpy as np

SOLVE_HEADER = ["suite", "family", "problem", "dof", "effectors", "goal", "solver", "status", "converged",
                "iterations", "restarts", "position_error", "orientation_error", "time_us", "fk_evals",
                "jacobian_evals", "within_limits", "time_per_iteration_us", "seed", "problem_name", "message", "q",
                "seed_distance", "solutions"]
TRACE_HEADER = ["family", "problem", "solver", "iteration", "position_error", "orientation_error", "step_norm",
                "damping", "elapsed_us", "time_us", "q"]
LIMIT = 2.5
TOL = 1e-5


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) % (1 << 64)
    return f"{h:016x}"


def planar_fk(q):
    """Tip position and tip angle of the two-link planar chain."""
    a, b = q[0], q[0] + q[1]
    return np.array([math.cos(a) + math.cos(b), math.sin(a) + math.sin(b), 0.0]), b


def quat_z(angle):
    return [0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)]


def planar_model():
    ident = [0.0, 0.0, 0.0, 1.0]
    return {"id": "m0", "name": "planar2", "source": None, "nq": 2, "nv": 2, "joints": [
        {"name": "j0", "body": "link1", "parent": -1, "type": "revolute",
         "parent_T_joint": {"xyz": [0, 0, 0], "quat_xyzw": ident}, "axis": [0, 0, 1],
         "lower": [-LIMIT], "upper": [LIMIT], "weight": [1], "idx_q": 0, "idx_v": 0},
        {"name": "j1", "body": "link2", "parent": 0, "type": "revolute",
         "parent_T_joint": {"xyz": [1, 0, 0], "quat_xyzw": ident}, "axis": [0, 0, 1],
         "lower": [-LIMIT], "upper": [LIMIT], "weight": [1], "idx_q": 1, "idx_v": 1},
        {"name": "tip", "body": "tip", "parent": 1, "type": "fixed",
         "parent_T_joint": {"xyz": [1, 0, 0], "quat_xyzw": ident}, "axis": [0, 0, 1],
         "lower": [], "upper": [], "weight": [], "idx_q": 2, "idx_v": 2},
    ]}


SCENE_NAME = "far-ball"
SCENE_CLEARANCE = 2.75   # the capsules (z = 0, radius 0.05) and the ball (z = 3, radius 0.2)


def planar_scene():
    """A scene for the planar chain that no configuration touches: a capsule along each link
    (radius 0.05, over x in [0.1, 0.9] of the link) and a ball of radius 0.2 at z = 3, recorded as
    the harness records a scene (docs/results-format.md): the adjacent links disabled, the checked
    pairs each link with the ball."""
    along_x = [0.0, math.sqrt(0.5), 0.0, math.sqrt(0.5)]  # the capsule's z axis turned onto x

    def capsule(body):
        return {"name": body + "_capsule", "type": "capsule", "xyz": [0.5, 0.0, 0.0], "quat_xyzw": along_x,
                "radius": 0.05, "length": 0.8, "body": body, "fitted": True}

    return {"name": SCENE_NAME,
            "obstacles": [{"name": "ball", "type": "sphere", "xyz": [0.0, 0.0, 3.0], "quat_xyzw": [0.0, 0.0, 0.0, 1.0],
                           "radius": 0.2}],
            "links": [capsule("link1"), capsule("link2")],
            "disabled_pairs": [["link1", "link2"], ["link2", "tip"]],
            "pairs": [[0, 0, "obstacle"], [1, 0, "obstacle"]],
            "avoid": {"influence_distance": 0.05, "security_distance": 0.002, "damper_gain": 0.5}}


def num(v):
    """Shortest text that reads back as the same double; nan, inf as such."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def qtext(q):
    return " ".join(num(x) for x in q)


def errors(q, goal):
    """(position error, orientation error) of configuration q for a goal dict."""
    p, ang = planar_fk(q)
    pe = float(np.linalg.norm(np.array(goal["target_position"]) - p)) if goal["kind"] != "orientation" else 0.0
    if goal["kind"] == "position":
        return pe, 0.0
    tgt = 2 * math.atan2(goal["target_quat_xyzw"][2], goal["target_quat_xyzw"][3])
    d = (tgt - ang + math.pi) % (2 * math.pi) - math.pi
    return pe, abs(d)


DEFAULT_SOLVERS = {  # spec -> (success probability, time per iteration [us], iterations when solved)
    "dls": (0.9, 1.0, (5, 30)),
    "ccd": (0.6, 3.0, (20, 80)),
    "two-bone": (1.0, 0.5, (1, 1)),
}


def make_run(directory, *, seed=1, problems=40, solvers=None, time_scale=1.0, cpu="Synthetic CPU 1", threads=2,
             suite="synthetic", families=("planar-position", "planar-pose"), complete=True, edit_rows=None,
             traces=True, write_manifest=True, unsupported=(("planar-pose", "two-bone"),), run_json_extra=None,
             scene=False):
    """Writes a version-2 results directory; returns its Path.

    solvers: {spec: (p_success, us_per_iteration, (min_its, max_its))}; time_scale multiplies
    every time (another machine's speed); edit_rows(rows) may change the solve rows (dicts of
    SOLVE_HEADER strings) before they are written; unsupported lists (family, spec) cells whose
    every solve is unsupported; with `scene`, the model is posed in planar_scene() (every answer is
    collision-free) and solves.csv has the collision columns."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    solvers = dict(DEFAULT_SOLVERS if solvers is None else solvers)
    rng = np.random.default_rng(seed)
    model = planar_model()
    probs, rows, trace_rows = [], [], []
    for fam in families:
        kind = "pose" if fam.endswith("pose") else "position"
        for k in range(problems):
            q_true = rng.uniform(-2.0, 2.0, size=2)
            p, ang = planar_fk(q_true)
            goal = {"body": "tip", "body_index": 2, "point": [0.0, 0.0, 0.0], "kind": kind,
                    "target_position": [float(x) for x in p], "target_quat_xyzw": quat_z(ang), "weight": 1.0,
                    "orientation_scale": 1.0}
            q0 = [0.0, 0.0]
            probs.append({"family": fam, "problem": k, "name": f"{fam}/{k}", "model": "m0", "sequential": False,
                          "q0": q0, "goals": [goal]})
            if scene:
                probs[-1]["scene"] = SCENE_NAME
            for spec, (ps, per_it, (lo_it, hi_it)) in solvers.items():
                if (fam, spec) in unsupported:
                    rows.append(_row(suite, fam, k, kind, spec, "unsupported", 0, 0, math.nan, math.nan, 0.4, 0, 0, 0,
                                     "", f"{spec}: not a two-link position problem", 0, math.nan))
                    continue
                solved = rng.random() < ps
                if solved:
                    q = q_true + rng.normal(0, 1e-9, size=2)
                    its = int(rng.integers(lo_it, hi_it + 1))
                    status = "converged"
                else:
                    q = q_true * 0.5
                    its = 100
                    status = "max-iterations"
                pe, oe = errors(q, goal)
                conv = int(pe <= TOL and oe <= TOL)
                within = int(bool(np.all(np.abs(q) <= LIMIT + 1e-9)))
                t = time_scale * per_it * (its + 1) * float(rng.uniform(0.8, 1.25))
                rows.append(_row(suite, fam, k, kind, spec, status, conv, its, pe, oe, t, its + 1, its, within,
                                 qtext(q), "", 1, float(np.linalg.norm(q - np.array(q0)))))
                if traces and k < 3:
                    for it in range(min(its, 5) + 1):
                        f = 0.5 ** it
                        qi = q * (1 - f) + np.array(q0) * f
                        e_p, e_o = errors(qi, goal)
                        trace_rows.append([fam, str(k), spec, str(it), num(e_p), num(e_o), num(0.1 * f), "0.05",
                                           num(1.5 * it + 1), num(time_scale * (it + 1)), qtext(qi)])
    header = SOLVE_HEADER
    if scene:
        model["scene"] = planar_scene()
        header = SOLVE_HEADER + ["collision_free", "min_clearance", "collision_pair"]
        for r in rows:
            attempted = r["status"] not in ("unsupported", "invalid-input")
            r.update(collision_free="1" if attempted else "", min_clearance=num(SCENE_CLEARANCE) if attempted else "",
                     collision_pair="link1~ball" if attempted else "")
    if edit_rows:
        edit_rows(rows)
    files = {}
    files["models.json"] = (json.dumps({"format_version": 2, "models": [model]}, indent=1) + "\n").encode()
    files["problems.jsonl"] = "".join(json.dumps(p) + "\n" for p in probs).encode()
    files["solves.csv"] = _csv(header, [[r[c] for c in header] for r in rows])
    files["solutions.csv"] = _csv(["family", "problem", "solver", "solution", "q"], [])
    files["traces.csv"] = _csv(TRACE_HEADER, trace_rows)
    for name, data in files.items():
        (directory / name).write_bytes(data)
    manifest = {name: manifest_entry(name, data) for name, data in files.items()}
    n = len(rows)
    meta = {
        "format": "ikbench-run/2", "format_version": 2, "complete": complete, "interrupted": False,
        "run_id": f"synthetic-{seed}",
        "suite": {"name": suite, "source": "synthetic", "seed": seed,
                  "options": {"position_tolerance_m": TOL, "orientation_tolerance_rad": TOL, "max_iterations": 100,
                              "time_budget_us": 0, "stall_iterations": 20, "stall_relative_improvement": 1e-4}},
        "families": [{"name": f, "description": "two-link planar chain", "problems": problems, "dof": 2,
                      "effectors": 1, "goal": "pose" if f.endswith("pose") else "position", "sequential": False,
                      "source": None, "robot": None, "models": ["m0"]} for f in families],
        "solvers": [solver_record(s) for s in solvers],
        "grid": None, "shard": None, "seeds": {"suite": seed, "per_solve": "synthetic"},
        "git_revision": "synthetic", "build": {"compiler": "none", "build_type": "Release", "flags": ""},
        "machine": {"cpu": cpu, "hardware_threads": threads}, "threads": threads,
        "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:00:01Z",
        "command_line": "synthetic",
        "throughput": {"solves": n, "wall_s": 0.5, "solves_per_s": n / 0.5, "sum_solve_time_s": 0.9,
                       "parallel_efficiency": 0.9},
        "trace": {"enabled": traces, "problems_per_family": 3, "rows": len(trace_rows), "wall_s": 0.1, "note": ""},
    }
    if write_manifest:
        meta["files"] = manifest
    meta.update(run_json_extra or {})
    (directory / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
    return directory


def solver_record(spec):
    """run.json's record of a synthetic spec, as the harness writes one: the backend `name`, the
    spec's own keys in `parameters` (numbers as JSON numbers) and `given`. The synthetic specs are
    plain `name:key=value:...` texts without quotes; the harness records every parameter of the
    backend, the synthetic backends have only the ones their specs give."""
    name, *items = spec.split(":")
    params = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            params[key] = int(value) if value.lstrip("-").isdigit() else float(value)
        except ValueError:
            params[key] = value
    return {"spec": spec, "name": name, "description": "", "parameters": params, "given": sorted(params)}


def _row(suite, fam, k, kind, spec, status, conv, its, pe, oe, t, fk, jac, within, q, msg, nsol, dist):
    return {"suite": suite, "family": fam, "problem": str(k), "dof": "2", "effectors": "1", "goal": kind,
            "solver": spec, "status": status, "converged": str(conv), "iterations": str(its), "restarts": "0",
            "position_error": num(pe), "orientation_error": num(oe), "time_us": num(t), "fk_evals": str(fk),
            "jacobian_evals": str(jac), "within_limits": str(within),
            "time_per_iteration_us": num(t / its) if its else "", "seed": str(1000 + k), "problem_name": f"{fam}/{k}",
            "message": msg, "q": q, "seed_distance": "" if not q else num(dist), "solutions": str(nsol)}


def _csv(header, rows):
    def field(s):
        s = str(s)
        return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n') else s

    return ("\n".join([",".join(header)] + [",".join(field(x) for x in r) for r in rows]) + "\n").encode()


def manifest_entry(name, data):
    """run.json's entry of a file: rows (lines after the header of a CSV file, lines of a JSON
    Lines file, 0 for a JSON document), bytes and the FNV-1a 64-bit hash."""
    rows = max(data.count(b"\n") - 1, 0) if name.endswith(".csv") else data.count(b"\n") if name.endswith(".jsonl") else 0
    return {"rows": rows, "bytes": len(data), "fnv1a64": fnv1a64(data)}


def rewrite_manifest(directory):
    """Recomputes run.json's manifest after a test changed a file on purpose (an honest edit)."""
    directory = Path(directory)
    meta = json.loads((directory / "run.json").read_text())
    for name in meta["files"]:
        data = (directory / name).read_bytes()
        meta["files"][name] = manifest_entry(name, data)
    (directory / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
