"""Helpers of the binding tests: the module under test, the shipped robots,
an independent forward kinematics written from the URDF files in numpy, and
rotation helpers.

Run by ctest as `python_bindings` with PYTHONPATH=<source>/python:<build>/python
(see python/CMakeLists.txt); by hand:

    PYTHONPATH=python:build/release/python /usr/bin/python3 -m pytest tests/python_bindings
"""

import importlib
import math
import os
import pathlib
import xml.etree.ElementTree as ET

import numpy as np

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
ROBOTS = SOURCE_DIR / "scenarios" / "data" / "robots"
SKELETONS = SOURCE_DIR / "scenarios" / "data" / "skeletons"
# The shipped arms: file, tip body.
ARMS = {
    "ur5": (ROBOTS / "ur5.urdf", "tool0"),
    "panda": (ROBOTS / "panda.urdf", "panda_hand_tcp"),
    "iiwa14": (ROBOTS / "iiwa14.urdf", "tool0"),
}


def load_bindings():
    """The package's public names when its __init__ re-exports the bindings,
    else ikbench._bindings (the module that does the re-export)."""
    package = importlib.import_module("ikbench")
    if hasattr(package, "Solver"):
        return package
    bindings = importlib.import_module("ikbench._bindings")
    if bindings.bindings_error:
        raise ImportError(bindings.bindings_error)
    return bindings


ik = load_bindings()


def corpus_dir():
    """Real robot data: $IKBENCH_CORPUS_DIR, else shared/data beside the
    source tree (or beside its parent, for a worktree); None if absent."""
    env = os.environ.get("IKBENCH_CORPUS_DIR")
    candidates = [pathlib.Path(env)] if env else [
        SOURCE_DIR.parent / "shared" / "data",
        SOURCE_DIR.parent.parent / "shared" / "data",
    ]
    for c in candidates:
        if (c / "robots").is_dir():
            return c
    return None


# ---- rotations (numpy, independent of the bindings) ----

def quat_to_matrix(q):
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def rotation_angle(Ra, Rb):
    """Angle [rad] of Ra Rb^T, robust near 0."""
    D = Ra @ Rb.T
    s = np.linalg.norm([D[2, 1] - D[1, 2], D[0, 2] - D[2, 0], D[1, 0] - D[0, 1]]) / 2
    c = (np.trace(D) - 1) / 2
    return math.atan2(s, c)


def axis_rotation(axis, angle):
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def rpy_matrix(r, p, y):
    return axis_rotation([0, 0, 1], y) @ axis_rotation([0, 1, 0], p) @ axis_rotation([1, 0, 0], r)


# ---- an independent FK from the URDF text ----

class UrdfChain:
    """Forward kinematics of the chain base -> tip read from a URDF with
    ElementTree: origin (xyz, rpy), axis, revolute / continuous / prismatic /
    fixed. Used to check what the bindings return."""

    def __init__(self, path, base, tip):
        root = ET.parse(path).getroot()
        by_child = {}
        for j in root.findall("joint"):
            by_child[j.find("child").get("link")] = j
        chain = []
        link = tip
        while link != base:
            j = by_child[link]
            chain.append(j)
            link = j.find("parent").get("link")
        self.joints = []
        for j in reversed(chain):
            o = j.find("origin")
            xyz = [float(v) for v in (o.get("xyz", "0 0 0") if o is not None else "0 0 0").split()]
            rpy = [float(v) for v in (o.get("rpy", "0 0 0") if o is not None else "0 0 0").split()]
            a = j.find("axis")
            axis = [float(v) for v in (a.get("xyz") if a is not None else "1 0 0").split()]
            T = np.eye(4)
            T[:3, :3] = rpy_matrix(*rpy)
            T[:3, 3] = xyz
            self.joints.append((j.get("type"), T, np.array(axis)))
        self.dof = sum(1 for t, _, _ in self.joints if t != "fixed")

    def fk(self, q):
        """4x4 world_T_tip."""
        T = np.eye(4)
        k = 0
        for kind, origin, axis in self.joints:
            T = T @ origin
            if kind in ("revolute", "continuous"):
                M = np.eye(4)
                M[:3, :3] = axis_rotation(axis, q[k])
                T = T @ M
                k += 1
            elif kind == "prismatic":
                M = np.eye(4)
                M[:3, 3] = axis / np.linalg.norm(axis) * q[k]
                T = T @ M
                k += 1
        return T


def arm(name):
    """(Model, UrdfChain, tip) of a shipped arm (the whole file, root -> tip)."""
    path, tip = ARMS[name]
    model = ik.Model.from_urdf(path)
    return model, UrdfChain(path, model.body_names[0], tip), tip


def pose_errors(chain, q, target):
    """Position error [m] and rotation angle [rad] of the chain's tip at q
    against a target row (x, y, z, qx, qy, qz, qw), by the independent FK."""
    T = chain.fk(q)
    pos = np.linalg.norm(T[:3, 3] - target[:3])
    if len(target) == 3:
        return pos, 0.0
    return pos, rotation_angle(T[:3, :3], quat_to_matrix(target[3:]))


def loadavg_1min():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except OSError:
        return None
