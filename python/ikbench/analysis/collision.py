"""The exact collision check of a run's scene, re-done in numpy for `verify` (docs/collision.md).

A scene is the "scene" entry of a model in models.json: obstacles (world frame), link shapes (body
frames) and the checked "pairs" [link index, index, "obstacle" | "link"]. Every pair here has a
capsule (or a sphere, a capsule of length 0) on its link side, and its distance is

    d = min over t in [0, 1] of sd_b(a0 + t (a1 - a0)) - r_a

where a0-a1 is the capsule's segment and sd_b the signed distance to the other shape (box,
sphere, capsule or cylinder): a convex function of the point, hence of t, whose minimum a
golden-section search finds (Kiefer 1953). None of this shares code with the C++ side (FCL there).
Pairs with a mesh, or with a box or cylinder on the link side, are not checked here (counted as
unchecked)."""

import numpy as np

from .rotations import quat_to_matrix

GOLDEN = 0.6180339887498949
ITERATIONS = 60


def _box_sd(x, half):
    q = np.abs(x) - half
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=-1)
    inside = np.minimum(q.max(axis=-1), 0.0)
    return outside + inside


def _cylinder_sd(x, radius, half_length):
    d = np.stack([np.linalg.norm(x[..., :2], axis=-1) - radius, np.abs(x[..., 2]) - half_length], axis=-1)
    return np.minimum(d.max(axis=-1), 0.0) + np.linalg.norm(np.maximum(d, 0.0), axis=-1)


def _segment_sd(x, half_length, radius):
    z = np.clip(x[..., 2], -half_length, half_length)
    c = np.zeros_like(x)
    c[..., 2] = z
    return np.linalg.norm(x - c, axis=-1) - radius


def _shape_sd(shape):
    """sd(x) for points x (..., 3) in the shape's own frame."""
    kind = shape["type"]
    if kind == "box":
        half = 0.5 * np.asarray(shape["size"], dtype=float)
        return lambda x: _box_sd(x, half)
    if kind == "sphere":
        return lambda x: np.linalg.norm(x, axis=-1) - shape["radius"]
    if kind == "capsule":
        return lambda x: _segment_sd(x, 0.5 * shape["length"], shape["radius"])
    if kind == "cylinder":
        return lambda x: _cylinder_sd(x, shape["radius"], 0.5 * shape["length"])
    return None


def _pose(shape):
    return quat_to_matrix(np.asarray(shape["quat_xyzw"], dtype=float)), np.asarray(shape["xyz"], dtype=float)


def _link_segment(shape):
    """(a0, a1, r) in the body frame for a capsule or a sphere, else None."""
    if shape["type"] not in ("capsule", "sphere"):
        return None
    R, p = _pose(shape)
    h = 0.5 * shape.get("length", 0.0)
    return p - h * R[:, 2], p + h * R[:, 2], float(shape["radius"])


def pair_distances(scene, R, p):
    """Distances of every checked pair for rows of body poses R (n, bodies, 3, 3), p (n, bodies, 3).

    Returns (d (n, pairs) with nan for an unchecked pair, checked mask (pairs,))."""
    links, obstacles = scene["links"], scene["obstacles"]
    body_index = scene["_body_index"]
    n = R.shape[0]
    pairs = scene["pairs"]
    d = np.full((n, len(pairs)), np.nan)
    checked = np.zeros(len(pairs), dtype=bool)
    for k, (a, b, kind) in enumerate(pairs):
        seg = _link_segment(links[a])
        other = obstacles[b] if kind == "obstacle" else links[b]
        sd = _shape_sd(other)
        if seg is None or sd is None:
            continue
        ba = body_index[links[a]["body"]]
        a0 = p[:, ba] + np.einsum("nij,j->ni", R[:, ba], seg[0])
        a1 = p[:, ba] + np.einsum("nij,j->ni", R[:, ba], seg[1])
        Rs, ps = _pose(other)
        if kind == "obstacle":
            Rw, pw = np.broadcast_to(Rs, (n, 3, 3)), np.broadcast_to(ps, (n, 3))
        else:
            bb = body_index[other["body"]]
            Rw = np.einsum("nij,jk->nik", R[:, bb], Rs)
            pw = p[:, bb] + np.einsum("nij,j->ni", R[:, bb], ps)
        # The segment in the other shape's frame.
        s0 = np.einsum("nji,nj->ni", Rw, a0 - pw)
        s1 = np.einsum("nji,nj->ni", Rw, a1 - pw)
        f = lambda t: sd(s0 + t[:, None] * (s1 - s0))
        lo, hi = np.zeros(n), np.ones(n)
        for _ in range(ITERATIONS):
            x1, x2 = hi - GOLDEN * (hi - lo), lo + GOLDEN * (hi - lo)
            left = f(x1) <= f(x2)
            hi = np.where(left, x2, hi)
            lo = np.where(left, lo, x1)
        best = np.minimum(np.minimum(f(0.5 * (lo + hi)), f(np.zeros(n))), f(np.ones(n)))
        d[:, k] = best - seg[2]
        checked[k] = True
    return d, checked


def pair_name(scene, k):
    a, b, kind = scene["pairs"][k]
    name = lambda i: scene["_link_names"][i]
    return name(a) + "~" + (scene["obstacles"][b]["name"] if kind == "obstacle" else name(b))


def prepare(scene, body_names):
    """The scene with the lookups pair_distances needs: body index by name, link shape names."""
    scene = dict(scene)
    scene["_body_index"] = {n: i for i, n in enumerate(body_names)}
    seen, names = {}, []
    for l in scene["links"]:
        k = seen.get(l["body"], 0)
        seen[l["body"]] = k + 1
        names.append(l["body"] if k == 0 else f"{l['body']}#{k}")
    scene["_link_names"] = names
    return scene
