"""What a model of models.json, its scene and a problem of problems.jsonl must be, as the C++
readers require it (benchmarks/harness/results_format.cpp: modelFromJson, sceneFromJson,
problemFromJson; the kinematics' Model and Problem::isValid; the collision world), so that the
Python library accepts and refuses the same files. Every violation is a ResultsError naming the
file, the model or line, the field and what was expected.

A scene's checked pairs ("pairs") are what the verifiers check: each must name link shapes and
obstacles the scene has, and every pair of shapes a run can leave out (a link shape and an
obstacle, two link shapes of different links) that is not among them must be one the scene
records as left out: its disabled pairs (which hold the adjacent links, the pairs colliding at
the neutral configuration and the "always" colliding pairs of the run), two adjacent links, or
a link no joint moves with an obstacle (docs/collision.md "Which pairs are checked")."""

import math

import numpy as np

from .results_schema import LIMITS, SCHEMA, TOLERANCES, ResultsError

JOINT_TYPES = {k: tuple(v) for k, v in SCHEMA["joint_types"].items()}
GOAL_KINDS = tuple(SCHEMA["goal_kinds"])
BOUND_KINDS = tuple(SCHEMA["bound_kinds"])
SHAPE_TYPES = tuple(SCHEMA["shape_types"])
DISABLED_REASONS = tuple(SCHEMA["disabled_reasons"])
UNIT = TOLERANCES["unit_quaternion"]
MAX_EXTENT = LIMITS["max_shape_extent_m"]


def _err(where, field, what):
    return ResultsError(f"{where}: field '{field}': {what}")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _member(obj, key, where, field=None):
    if not isinstance(obj, dict):
        raise _err(where, field or key, "expected an object")
    if key not in obj:
        raise _err(where, field or key, "missing")
    return obj[key]


def _numbers(v, n, where, field, allow_null=False):
    """A list of n JSON numbers (null too with allow_null), as floats (null: None)."""
    if not isinstance(v, list) or len(v) != n:
        raise _err(where, field, f"expected an array of {n} numbers" + (" or null" if allow_null else ""))
    for k, x in enumerate(v):
        if x is None and allow_null:
            continue
        if not _is_number(x):
            raise _err(where, f"{field}[{k}]", f"expected a number, got {type(x).__name__}")
    return v


def _unit_quaternion(v, where, field):
    q = _numbers(v, 4, where, field)
    norm = math.sqrt(sum(float(x) * float(x) for x in q))
    if not abs(norm - 1.0) < UNIT:
        raise _err(where, field, f"quaternion of norm {norm:.9g} (expected 1)")
    return q


def body_index(model, name):
    """The index of the body (or, failing that, the joint) of this name, as the C++ Model's
    bodyIndex; -1 when there is none."""
    joints = model["joints"]
    for i, j in enumerate(joints):
        if (j["body"] or j["name"]) == name:
            return i
    for i, j in enumerate(joints):
        if j["name"] == name:
            return i
    return -1


# ---------------------------------------------------------------- models

def validate_model(m, where):
    """A models.json model as modelFromJson and the kinematics' Model take it."""
    if not isinstance(m, dict):
        raise ResultsError(f"{where}: expected an object")
    if not isinstance(m.get("id"), str):
        raise _err(where, "id", "expected a string")
    joints = _member(m, "joints", where)
    if not isinstance(joints, list):
        raise _err(where, "joints", "expected an array")
    names, bodies = set(), set()
    nq = nv = 0
    for i, j in enumerate(joints):
        w = f"{where}.joints[{i}]"
        for k in ("name", "body", "type"):
            if not isinstance(_member(j, k, w), str):
                raise _err(w, k, "expected a string")
        t = j["type"]
        if t not in JOINT_TYPES:
            raise _err(w, "type", f"unknown joint type {t!r} (expected one of: {', '.join(JOINT_TYPES)})")
        parent = _member(j, "parent", w)
        if not _is_int(parent):
            raise _err(w, "parent", "expected an integer")
        rest = _member(j, "parent_T_joint", w)
        _numbers(_member(rest, "xyz", w, "parent_T_joint.xyz"), 3, w, "parent_T_joint.xyz")
        _unit_quaternion(_member(rest, "quat_xyzw", w, "parent_T_joint.quat_xyzw"), w, "parent_T_joint.quat_xyzw")
        axis = _numbers(_member(j, "axis", w), 3, w, "axis")
        jq, jv = JOINT_TYPES[t]
        lower = _numbers(_member(j, "lower", w), jv, w, "lower", allow_null=True)
        upper = _numbers(_member(j, "upper", w), jv, w, "upper", allow_null=True)
        weight = _numbers(_member(j, "weight", w), jv, w, "weight")
        # The kinematics' Model.
        if not j["name"]:
            raise _err(w, "name", "empty (every joint has a name)")
        if j["name"] in names:
            raise _err(w, "name", f"a second joint named '{j['name']}'")
        names.add(j["name"])
        body = j["body"] or j["name"]
        if body in bodies:
            raise _err(w, "body", f"a second body named '{body}'")
        bodies.add(body)
        if not -1 <= parent < i:
            raise _err(w, "parent", f"{parent} is not -1 or a joint before this one (topological order)")
        if t in ("revolute", "prismatic") and not max(abs(float(x)) for x in axis) >= TOLERANCES["zero_axis"]:
            raise _err(w, "axis", "zero (expected a non-zero direction)")
        for k in range(jv):
            lo = -math.inf if lower[k] is None else float(lower[k])
            up = math.inf if upper[k] is None else float(upper[k])
            if lo > up:
                raise _err(w, f"lower[{k}]", f"lower limit {lo:g} > upper limit {up:g}")
            if (t == "ball" or (t == "free" and k >= 3)) and not lo <= 0.0 <= up:
                raise _err(w, f"lower[{k}]", f"rotation limits [{lo:g}, {up:g}] do not contain 0 (a ball or free "
                           "joint's limits bound its rotation vector around the rest orientation)")
            if math.isfinite(lo) and math.isfinite(up) and not math.isfinite(up - lo):
                raise _err(w, f"lower[{k}]", f"limits [{lo:g}, {up:g}] are too far apart (upper - lower overflows)")
            if not float(weight[k]) > 0.0:
                raise _err(w, f"weight[{k}]", f"{weight[k]!r}, expected a finite value > 0")
        if "mass" in j:  # inertial data (docs/results-format.md), optional
            mass = j["mass"]
            if not _is_number(mass) or not mass >= 0:
                raise _err(w, "mass", f"{mass!r}, expected a finite mass >= 0 [kg]")
            _numbers(_member(j, "com", w), 3, w, "com")
        for k, expect in (("idx_q", nq), ("idx_v", nv)):
            v = _member(j, k, w)
            if not _is_int(v) or v != expect:
                raise _err(w, k, f"{v!r} does not match the joints (expected {expect})")
        nq += jq
        nv += jv
    _member(m, "name", where)
    for k, expect in (("nq", nq), ("nv", nv)):
        v = _member(m, k, where)
        if not _is_int(v) or v != expect:
            raise _err(where, k, f"{v!r} does not match the joints (expected {expect})")


# ---------------------------------------------------------------- scenes

def _shape(s, where, body=False):
    """One shape of a scene as sceneFromJson reads it and the collision world checks it."""
    name = _member(s, "name", where)
    kind = _member(s, "type", where)
    if not isinstance(name, str) or not isinstance(kind, str):
        raise _err(where, "name/type", "expected strings")
    if kind not in SHAPE_TYPES:
        raise _err(where, "type", f"expected one of: {', '.join(SHAPE_TYPES)}")
    xyz = _numbers(_member(s, "xyz", where), 3, where, "xyz")
    _unit_quaternion(_member(s, "quat_xyzw", where), where, "quat_xyzw")

    def real(key):
        v = _member(s, key, where)
        if not _is_number(v):
            raise _err(where, key, "expected a number")
        return float(v)

    sizes = []
    if kind == "box":
        size = [float(x) for x in _numbers(_member(s, "size", where), 3, where, "size")]
        sizes = size
        if not min(size) > 0.0:
            raise _err(where, "size", "box sizes must be finite and > 0")
    elif kind == "sphere":
        sizes = [real("radius")]
        if not sizes[0] > 0.0:
            raise _err(where, "radius", "must be finite and > 0")
    elif kind in ("capsule", "cylinder"):
        radius, length = real("radius"), real("length")
        sizes = [radius, length]
        if not radius > 0.0:
            raise _err(where, "radius", "must be finite and > 0")
        if not (length > 0.0 if kind == "cylinder" else length >= 0.0):
            raise _err(where, "length", "must be finite and >= 0 (> 0 for a cylinder)")
    else:
        vertices, triangles = _member(s, "vertices", where), _member(s, "triangles", where)
        if not isinstance(vertices, list) or not isinstance(triangles, list):
            raise _err(where, "vertices/triangles", "expected arrays")
        for k, v in enumerate(vertices):
            _numbers(v, 3, where, f"vertices[{k}]")
            if not max(abs(float(x)) for x in v) <= MAX_EXTENT:
                raise _err(where, f"vertices[{k}]", f"a vertex beyond {MAX_EXTENT:g} m")
        if not triangles:
            raise _err(where, "triangles", "the mesh has no triangles")
        for k, t in enumerate(triangles):
            if not isinstance(t, list) or len(t) != 3 or not all(_is_int(x) for x in t):
                raise _err(where, f"triangles[{k}]", "expected [i, j, k] vertex indices")
            if min(t) < 0 or max(t) >= len(vertices):
                raise _err(where, f"triangles[{k}]", "names a vertex the mesh does not have")
    if not max(abs(float(x)) for x in xyz) <= MAX_EXTENT:
        raise _err(where, "xyz", f"a position beyond {MAX_EXTENT:g} m from the origin")
    if sizes and not max(abs(x) for x in sizes) <= MAX_EXTENT:
        raise _err(where, "size", f"a size beyond {MAX_EXTENT:g} m")


def _moves(model, b):
    """True if some joint from body b to the root has a degree of freedom (the C++
    supportingJoints(b) is not empty)."""
    joints = model["joints"]
    while b >= 0:
        if JOINT_TYPES[joints[b]["type"]][1] > 0:
            return True
        b = joints[b]["parent"]
    return False


def validate_scene(m, where):
    """The "scene" of a models.json model (already validated by validate_model), if it has one:
    its shapes, links, disabled pairs and avoidance parameters as the collision world takes them,
    and its checked pairs (module text)."""
    if "scene" not in m:
        return
    sc = m["scene"]
    w = f"{where}: scene"
    if not isinstance(sc, dict):
        raise _err(where, "scene", "expected an object")
    if not isinstance(_member(sc, "name", w), str):
        raise _err(w, "name", "expected a string")
    obstacles, links, disabled = (_member(sc, k, w) for k in ("obstacles", "links", "disabled_pairs"))
    if not all(isinstance(x, list) for x in (obstacles, links, disabled)):
        raise _err(w, "obstacles/links/disabled_pairs", "expected arrays")
    obstacle_names = {}
    for i, o in enumerate(obstacles):
        ow = f"{w}: obstacles[{i}]"
        _shape(o, ow)
        if o["name"] in obstacle_names:
            raise _err(ow, "name", f"a second obstacle named '{o['name']}'")
        obstacle_names[o["name"]] = i
    link_body = []
    for i, lk in enumerate(links):
        lw = f"{w}: links[{i}]"
        _shape(lk, lw)
        body = _member(lk, "body", lw)
        b = body_index(m, body) if isinstance(body, str) else -1
        if b < 0:
            raise _err(lw, "body", "expected a body of the model")
        if "fitted" in lk and not isinstance(lk["fitted"], bool):
            raise _err(lw, "fitted", "expected true or false")
        link_body.append(b)
    off_self, off_obstacle = set(), set()
    for i, pair in enumerate(disabled):
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
            raise _err(w, f"disabled_pairs[{i}]", "expected a pair of names")
        bx, by = body_index(m, pair[0]), body_index(m, pair[1])
        ox, oy = obstacle_names.get(pair[0], -1), obstacle_names.get(pair[1], -1)
        if bx >= 0 and by >= 0:
            off_self.add((min(bx, by), max(bx, by)))
        elif bx >= 0 and oy >= 0:
            off_obstacle.add((bx, oy))
        elif by >= 0 and ox >= 0:
            off_obstacle.add((by, ox))
        else:
            raise _err(w, f"disabled_pairs[{i}]", f"{pair!r}: expected two links of the model or a link and an "
                       "obstacle of the scene")
    # Why each pair is left out, and what covers each moving link: optional (runs before them have neither).
    if "disabled_reasons" in sc:
        reasons = sc["disabled_reasons"]
        if not isinstance(reasons, list) or len(reasons) != len(disabled):
            raise _err(w, "disabled_reasons", f"expected an array of {len(disabled)} reasons, one per disabled pair")
        for i, r in enumerate(reasons):
            if r not in DISABLED_REASONS:
                raise _err(w, f"disabled_reasons[{i}]", f"{r!r}: expected one of {', '.join(DISABLED_REASONS)}")
    if "coverage" in sc:
        cov = sc["coverage"]
        if not isinstance(cov, dict):
            raise _err(w, "coverage", "expected an object")
        if "flagged" in cov and not isinstance(cov["flagged"], bool):
            raise _err(w, "coverage.flagged", "expected true or false")
        for k in ("uncovered", "overlap_at_rest"):
            if k in cov and not isinstance(cov[k], list):
                raise _err(w, f"coverage.{k}", "expected an array")
    avoid = {"influence_distance": 0.05, "security_distance": 0.002, "damper_gain": 0.5}
    if isinstance(sc.get("avoid"), dict):
        for k in avoid:
            if k in sc["avoid"]:
                if not _is_number(sc["avoid"][k]):
                    raise _err(w, f"avoid.{k}", "expected a number")
                avoid[k] = float(sc["avoid"][k])
    if not (avoid["security_distance"] >= 0.0 and avoid["influence_distance"] > avoid["security_distance"]
            and 0.0 < avoid["damper_gain"] <= 1.0):
        raise _err(w, "avoid", "expected 0 <= security_distance < influence_distance and damper_gain in (0, 1]")
    for b, j in enumerate(m["joints"]):  # adjacent links
        if j["parent"] >= 0:
            off_self.add((j["parent"], b))
    _check_pairs(sc, w, link_body, len(obstacles), off_self, off_obstacle, [_moves(m, b) for b in link_body])


def _check_pairs(sc, w, link_body, n_obstacles, off_self, off_obstacle, moves):
    pairs = _member(sc, "pairs", w)
    if not isinstance(pairs, list):
        raise _err(w, "pairs", "expected an array of [link shape, link shape or obstacle, \"link\" | \"obstacle\"]")
    n_links = len(link_body)
    seen = set()
    for k, p in enumerate(pairs):
        f = f"pairs[{k}]"
        if (not isinstance(p, list) or len(p) != 3 or not _is_int(p[0]) or not _is_int(p[1])
                or p[2] not in ("link", "obstacle")):
            raise _err(w, f, f"{p!r}: expected [link shape index, index, \"link\" | \"obstacle\"]")
        a, b, kind = p
        if not 0 <= a < n_links:
            raise _err(w, f, f"link shape {a} is not one of the scene's {n_links} link shapes")
        if kind == "obstacle" and not 0 <= b < n_obstacles:
            raise _err(w, f, f"obstacle {b} is not one of the scene's {n_obstacles} obstacles")
        if kind == "link":
            if not a < b < n_links:
                raise _err(w, f, f"link shapes {a}, {b}: expected two link shapes, the first of lower index, "
                           f"of the scene's {n_links}")
            if link_body[a] == link_body[b]:
                raise _err(w, f, f"link shapes {a} and {b} are on the same link")
        if (a, b, kind) in seen:
            raise _err(w, f, f"{p!r} is listed twice")
        seen.add((a, b, kind))
    # Every pair left out is one the scene records as left out.
    for a in range(n_links):
        ba = link_body[a]
        for o in range(n_obstacles):
            if (a, o, "obstacle") not in seen and moves[a] and (ba, o) not in off_obstacle:
                raise _err(w, "pairs", f"leaves out link shape {a} with obstacle {o}, which the scene does not "
                           "disable (its disabled_pairs, a link no joint moves): not a record of a run")
        for b in range(a + 1, n_links):
            bb = link_body[b]
            if (a, b, "link") not in seen and ba != bb and (min(ba, bb), max(ba, bb)) not in off_self:
                raise _err(w, "pairs", f"leaves out link shapes {a} and {b}, which the scene does not disable (its "
                           "disabled_pairs, adjacent links): not a record of a run")


# ---------------------------------------------------------------- problems

def _validate_whole_body_goal(g, where, f):
    """The optional whole-body fields of a goal (docs/wholebody.md): an integer
    priority >= 0 and a bound (half-spaces with unit normals, or a ball) on a
    position or com goal, as problemFromJson and Problem::isValid take them."""
    if "priority" in g:
        p = g["priority"]
        if not _is_int(p) or p < 0:
            raise _err(where, f + "priority", f"{p!r}: expected an integer level >= 0")
    if "bound" not in g:
        return
    b = g["bound"]
    kind = _member(b, "kind", where, f + "bound.kind")
    if kind not in BOUND_KINDS:
        raise _err(where, f + "bound.kind", f"expected one of: {', '.join(BOUND_KINDS)}")
    if kind == "none":
        return
    if g["kind"] not in ("position", "com"):
        raise _err(where, f + "bound", f"a {kind} bound needs a position or com goal, not {g['kind']}")
    if kind == "half_spaces":
        normals = _member(b, "normals", where, f + "bound.normals")
        if not isinstance(normals, list) or not normals:
            raise _err(where, f + "bound.normals", "expected a non-empty array of [x, y, z]")
        for r, n in enumerate(normals):
            v = _numbers(n, 3, where, f + f"bound.normals[{r}]")
            if abs(float(np.linalg.norm(np.asarray(v, dtype=float))) - 1.0) > 1e-6:
                raise _err(where, f + f"bound.normals[{r}]", "expected a unit vector")
        _numbers(_member(b, "offsets", where, f + "bound.offsets"), len(normals), where, f + "bound.offsets")
    else:
        _numbers(_member(b, "centre", where, f + "bound.centre"), 3, where, f + "bound.centre")
        r = _member(b, "radius", where, f + "bound.radius")
        if not _is_number(r) or not r >= 0:
            raise _err(where, f + "bound.radius", f"{r!r}: expected a finite radius >= 0")


def validate_problem(r, where, models):
    """One line of problems.jsonl (its family, problem and model already found) as
    problemFromJson and Problem::isValid take it."""
    model = models[r["model"]]
    _member(r, "name", where)
    q0 = _numbers(r["q0"], model["nq"], where, "q0")
    goals = r["goals"]
    if not goals:
        raise _err(where, "goals", "the problem has no goals")
    for k, g in enumerate(goals):
        f = f"goals[{k}]."
        body = _member(g, "body", where, f + "body")
        if not isinstance(body, str):
            raise _err(where, f + "body", "expected a body name")
        b = body_index(model, body)
        if b < 0:
            raise _err(where, f + "body", f"no body '{body}' in model '{model['id']}'")
        bi = _member(g, "body_index", where, f + "body_index")
        if not _is_int(bi) or bi != b:
            raise _err(where, f + "body_index", f"{bi!r} is not the index of body '{body}' ({b})")
        _numbers(_member(g, "point", where, f + "point"), 3, where, f + "point")
        if _member(g, "kind", where, f + "kind") not in GOAL_KINDS:
            raise _err(where, f + "kind", f"expected one of: {', '.join(GOAL_KINDS)}")
        _numbers(_member(g, "target_position", where, f + "target_position"), 3, where, f + "target_position")
        _unit_quaternion(_member(g, "target_quat_xyzw", where, f + "target_quat_xyzw"), where, f + "target_quat_xyzw")
        for key in ("weight", "orientation_scale"):
            v = _member(g, key, where, f + key)
            if not _is_number(v):
                raise _err(where, f + key, "expected a number")
            if not v > 0:
                raise _err(where, f + key, f"{v!r} must be finite and > 0")
        _validate_whole_body_goal(g, where, f)
    # The start configuration: finite, unit quaternions (isValidConfiguration).
    for j in model["joints"]:
        iq = j["idx_q"]
        qi = iq if j["type"] == "ball" else iq + 3 if j["type"] == "free" else None
        if qi is not None:
            norm = float(np.linalg.norm(np.asarray(q0[qi:qi + 4], dtype=float)))
            if not abs(norm - 1.0) <= UNIT:
                raise _err(where, "q0", f"quaternion of joint '{j['name']}' has norm {norm:.9g}, expected 1")
