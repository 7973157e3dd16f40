#!/usr/bin/env python3
"""Writes humanoid_walk_wave.bvh: a synthetic 19-joint humanoid (metres, Y-up,
facing +Z) walking forward while waving its right hand, 48 frames at 30 fps.

Generated (not captured) so that ikbench can ship a BVH with motion under its
own licence. The channel orders are deliberately mixed (root and legs ZXY,
arms ZYX, spine XYZ) so that tests exercise the loader's channel ordering.
Run: /usr/bin/python3 make_humanoid.py  (deterministic, no dependencies).
"""
import math
import os

ZXY = "Zrotation Xrotation Yrotation"
ZYX = "Zrotation Yrotation Xrotation"
XYZ = "Xrotation Yrotation Zrotation"

# name, parent, offset, rotation channel order, end site offset (or None)
SKELETON = [
    ("Hips", None, (0, 0, 0), ZXY, None),
    ("Spine", "Hips", (0, 0.10, 0), XYZ, None),
    ("Chest", "Spine", (0, 0.20, 0), XYZ, None),
    ("Neck", "Chest", (0, 0.22, 0), ZXY, None),
    ("Head", "Neck", (0, 0.10, 0), ZXY, (0, 0.18, 0.02)),
    ("LeftShoulder", "Chest", (0.05, 0.18, 0), ZYX, None),
    ("LeftArm", "LeftShoulder", (0.14, 0, 0), ZYX, None),
    ("LeftForeArm", "LeftArm", (0.28, 0, 0), ZYX, None),
    ("LeftHand", "LeftForeArm", (0.25, 0, 0), ZYX, (0.08, 0, 0)),
    ("RightShoulder", "Chest", (-0.05, 0.18, 0), ZYX, None),
    ("RightArm", "RightShoulder", (-0.14, 0, 0), ZYX, None),
    ("RightForeArm", "RightArm", (-0.28, 0, 0), ZYX, None),
    ("RightHand", "RightForeArm", (-0.25, 0, 0), ZYX, (-0.08, 0, 0)),
    ("LeftUpLeg", "Hips", (0.09, -0.05, 0), ZXY, None),
    ("LeftLeg", "LeftUpLeg", (0, -0.42, 0), ZXY, None),
    ("LeftFoot", "LeftLeg", (0, -0.42, 0), ZXY, (0, -0.06, 0.14)),
    ("RightUpLeg", "Hips", (-0.09, -0.05, 0), ZXY, None),
    ("RightLeg", "RightUpLeg", (0, -0.42, 0), ZXY, None),
    ("RightFoot", "RightLeg", (0, -0.42, 0), ZXY, (0, -0.06, 0.14)),
]
FRAMES, FPS, PERIOD = 48, 30.0, 1.2


def pose(t):
    """Joint angles in degrees per joint {axis: angle}, root position."""
    w = 2 * math.pi / PERIOD
    s, c = math.sin(w * t), math.cos(w * t)
    a = {}
    root = (0.02 * s, 0.93 + 0.015 * math.cos(2 * w * t), 1.1 * t)
    a["Hips"] = {"Z": 3 * s, "X": 4, "Y": 6 * s}
    a["Spine"] = {"X": -2, "Y": -4 * s, "Z": -2 * s}
    a["Chest"] = {"X": -2, "Y": -5 * s, "Z": 0}
    a["Neck"] = {"Z": 0, "X": 5, "Y": 3 * s}
    a["Head"] = {"Z": 2 * c, "X": -5 + 3 * math.sin(2 * w * t), "Y": 10 * math.sin(0.5 * w * t)}
    a["LeftShoulder"] = {"Z": 5, "Y": 0, "X": 0}
    a["LeftArm"] = {"Z": -72, "Y": -20 * s, "X": 5}
    a["LeftForeArm"] = {"Z": 0, "Y": -15 - 10 * s, "X": 0}
    a["LeftHand"] = {"Z": -10, "Y": 0, "X": 0}
    # Right arm raised and waving: the forearm swings about the raised arm.
    a["RightShoulder"] = {"Z": -10, "Y": 0, "X": 0}
    a["RightArm"] = {"Z": -120, "Y": 10, "X": 0}
    a["RightForeArm"] = {"Z": -20 + 25 * math.sin(2.5 * w * t), "Y": 0, "X": 10}
    a["RightHand"] = {"Z": 15 * math.sin(2.5 * w * t), "Y": 0, "X": 0}
    for side, sign in (("Left", 1), ("Right", -1)):
        ph = sign * s
        knee = 30 + 28 * math.sin(w * t + sign * math.pi / 2 + math.pi / 3)
        a[side + "UpLeg"] = {"Z": sign * 2, "X": -25 * ph, "Y": 0}
        a[side + "Leg"] = {"Z": 0, "X": max(knee, 2), "Y": 0}
        a[side + "Foot"] = {"Z": 0, "X": -10 * ph, "Y": 0}
    return root, a


def main():
    out = ["HIERARCHY"]
    children = {}
    for j in SKELETON:
        children.setdefault(j[1], []).append(j)

    def write(j, depth):
        name, parent, off, order, end = j
        ind = "  " * depth
        out.append(f"{ind}{'ROOT' if parent is None else 'JOINT'} {name}")
        out.append(f"{ind}{{")
        out.append(f"{ind}  OFFSET {off[0]:.6f} {off[1]:.6f} {off[2]:.6f}")
        chans = ("Xposition Yposition Zposition " if parent is None else "") + order
        out.append(f"{ind}  CHANNELS {len(chans.split())} {chans}")
        for ch in children.get(name, []):
            write(ch, depth + 1)
        if end is not None:
            out.append(f"{ind}  End Site")
            out.append(f"{ind}  {{")
            out.append(f"{ind}    OFFSET {end[0]:.6f} {end[1]:.6f} {end[2]:.6f}")
            out.append(f"{ind}  }}")
        out.append(f"{ind}}}")

    write(SKELETON[0], 0)
    out.append("MOTION")
    out.append(f"Frames: {FRAMES}")
    out.append(f"Frame Time: {1 / FPS:.7f}")
    order = []

    def collect(j):
        order.append(j)
        for ch in children.get(j[0], []):
            collect(ch)

    collect(SKELETON[0])
    for f in range(FRAMES):
        root, a = pose(f / FPS)
        vals = list(root)
        for name, parent, off, chans, end in order:
            vals += [a[name][c[0]] for c in chans.split()]
        out.append(" ".join(f"{v:.6f}" for v in vals))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "humanoid_walk_wave.bvh")
    with open(path, "w", newline="\n") as fh:
        fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
