#!/usr/bin/python3
"""Writes a URDF robot with triangle-mesh collision geometry made from its own fitted capsules.

    capsule_meshes.py ROBOT.urdf OUT.urdf [--segments 16] [--rings 4]

Each link gets, as its <collision> mesh (an ASCII STL in meshes/<robot>/ beside OUT.urdf), the
capsules ikbench fits to a link without geometry (docs/collision.md, "The robot's geometry"): one
along each segment from the link's origin to a child joint's origin, of radius
clamp(0.15 L, 0.025 m, 0.06 m), tessellated with `segments` vertices around and `rings` latitude
rings per hemisphere, every vertex on the capsule's surface (the mesh is inscribed in it). The
same robot can then be checked as the meshes, their convex hulls or the fitted capsules
(`--geometry`), on the same shapes: the difference measured is the representation's, not the
shape's (scenarios/data/suites/meshes.json).
"""
import argparse
import math
import os
import xml.etree.ElementTree as ET

FRACTION, MIN_RADIUS, MAX_RADIUS, MIN_SEGMENT = 0.15, 0.025, 0.06, 1e-3


def capsule_triangles(a, b, r, segments, rings):
    """Triangles (three 3-tuples each, counter-clockwise seen from outside) of the capsule a-b, radius r."""
    d = [b[i] - a[i] for i in range(3)]
    length = math.sqrt(sum(x * x for x in d))
    z = [x / length for x in d]
    helper = [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0]
    x = [helper[1] * z[2] - helper[2] * z[1], helper[2] * z[0] - helper[0] * z[2], helper[0] * z[1] - helper[1] * z[0]]
    n = math.sqrt(sum(c * c for c in x))
    x = [c / n for c in x]
    y = [z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]]

    def point(centre, polar, k):
        # polar in [-pi/2, pi/2] from the centre's equator towards +z.
        phi = 2.0 * math.pi * k / segments
        c, s = math.cos(polar), math.sin(polar)
        return tuple(centre[i] + r * (c * (math.cos(phi) * x[i] + math.sin(phi) * y[i]) + s * z[i]) for i in range(3))

    # Latitude rings from the bottom pole (at a) to the top pole (at b).
    rows = [[tuple(a[i] - r * z[i] for i in range(3))]]
    for j in range(1, rings + 1):
        rows.append([point(a, -math.pi / 2 + math.pi / 2 * j / rings, k) for k in range(segments)])
    for j in range(0, rings):
        rows.append([point(b, math.pi / 2 * j / rings, k) for k in range(segments)])
    rows.append([tuple(b[i] + r * z[i] for i in range(3))])
    tris = []
    for lo, hi in zip(rows, rows[1:]):
        for k in range(segments):
            k1 = (k + 1) % segments
            if len(lo) == 1:
                tris.append((lo[0], hi[k1], hi[k]))
            elif len(hi) == 1:
                tris.append((lo[k], lo[k1], hi[0]))
            else:
                tris.append((lo[k], lo[k1], hi[k1]))
                tris.append((lo[k], hi[k1], hi[k]))
    return tris


def normal(t):
    u = [t[1][i] - t[0][i] for i in range(3)]
    v = [t[2][i] - t[0][i] for i in range(3)]
    n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
    m = math.sqrt(sum(c * c for c in n)) or 1.0
    return [c / m for c in n]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("urdf")
    ap.add_argument("out")
    ap.add_argument("--segments", type=int, default=16)
    ap.add_argument("--rings", type=int, default=4)
    args = ap.parse_args()
    tree = ET.parse(args.urdf)
    robot = tree.getroot()
    name = robot.get("name")
    children = {}
    for j in robot.findall("joint"):
        origin = j.find("origin")
        xyz = [float(v) for v in origin.get("xyz", "0 0 0").split()] if origin is not None else [0.0, 0.0, 0.0]
        children.setdefault(j.find("parent").get("link"), []).append(xyz)
    mesh_dir = os.path.join(os.path.dirname(os.path.abspath(args.out)), "meshes", name)
    os.makedirs(mesh_dir, exist_ok=True)
    for link in robot.findall("link"):
        segments = [c for c in children.get(link.get("name"), []) if math.sqrt(sum(v * v for v in c)) >= MIN_SEGMENT]
        if not segments:
            continue
        tris = []
        for end in segments:
            length = math.sqrt(sum(v * v for v in end))
            r = min(max(FRACTION * length, MIN_RADIUS), MAX_RADIUS)
            tris += capsule_triangles((0.0, 0.0, 0.0), tuple(end), r, args.segments, args.rings)
        stl = os.path.join(mesh_dir, link.get("name") + ".stl")
        with open(stl, "w") as f:
            f.write(f"solid {link.get('name')}\n")
            for t in tris:
                f.write("  facet normal {:.9g} {:.9g} {:.9g}\n    outer loop\n".format(*normal(t)))
                for p in t:
                    f.write("      vertex {:.9g} {:.9g} {:.9g}\n".format(*p))
                f.write("    endloop\n  endfacet\n")
            f.write(f"endsolid {link.get('name')}\n")
        col = ET.SubElement(link, "collision")
        geo = ET.SubElement(col, "geometry")
        ET.SubElement(geo, "mesh", filename=os.path.relpath(stl, os.path.dirname(os.path.abspath(args.out))))
    ET.indent(tree)
    comment = (f"\n  {name} with collision meshes: each link's fitted capsules tessellated by "
               f"scripts/capsule_meshes.py ({args.segments} segments, {args.rings} rings), from "
               f"{os.path.basename(args.urdf)}.\n")
    with open(args.out, "w") as f:
        f.write('<?xml version="1.0"?>\n<!--' + comment + "-->\n")
        f.write(ET.tostring(robot, encoding="unicode") + "\n")


if __name__ == "__main__":
    main()
