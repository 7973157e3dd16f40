#!/usr/bin/env python3
"""One row of the arm table, from Python.

A solver spec on one of the shipped arms: N random reachable pose targets
(the TRAC-IK protocol: FK of a uniform random configuration within the
limits), each solved from the middle of the limits to 1e-5 m / 1e-5 rad per
goal norm on one thread with ikbench.solve_batch. Prints the success rate,
the mean and median solve time and the iterations, and writes a histogram of
the solve times (PNG).

The targets and the per-solve seeds are those of
`ikbench run --urdf scenarios/data/robots/<robot>.urdf --samples N --seed S --solvers SPEC`,
so the row can be compared with the harness's solves.csv: --harness runs the
ikbench binary on the same problems and prints its row beside this one.

    PYTHONPATH=python:build/release/python /usr/bin/python3 examples/python/arm_table_row.py \\
        --robot ur5 --spec auto --samples 10000 --harness build/release/benchmarks/ikbench

Without PYTHONPATH the script looks for the package in python/ and
build/release/python of the source tree it sits in.
"""

import argparse
import csv
import gzip
import importlib
import os
import pathlib
import platform
import subprocess
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]


def import_bindings():
    """ikbench's bindings: from the path as given, else from this source tree."""
    for attempt in range(2):
        try:
            bindings = importlib.import_module("ikbench._bindings")
            if bindings.bindings_error:
                raise ImportError(bindings.bindings_error)
            return bindings
        except ImportError:
            if attempt:
                raise
            sys.path[:0] = [str(REPO / "python"), str(REPO / "build" / "release" / "python")]
            for name in [n for n in sys.modules if n == "ikbench" or n.startswith("ikbench.")]:
                del sys.modules[name]
    raise AssertionError("unreachable")


ik = import_bindings()


def machine():
    """CPU model, cores and the 1-minute load average (Linux /proc)."""
    cpu = platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
    except OSError:
        load = "unknown"
    return f"{cpu}, {os.cpu_count()} cores, load average {load}"


def harness_seeds(seed, family, spec, count):
    """The harness's per-solve seeds: mix(mix(seed, hash(family)), mix(i, hash(spec)))."""
    fam = ik.rng_mix(seed, ik.rng_hash(family))
    h = ik.rng_hash(spec)
    return np.array([ik.rng_mix(fam, ik.rng_mix(i, h)) for i in range(count)], dtype=np.uint64)


def quaternion_angle(a, b):
    """Rotation angle [rad] between unit quaternions (x, y, z, w), row by row:
    2 atan2(|v|, |w|) of a b^-1, accurate near 0."""
    av, aw, bv, bw = a[:, :3], a[:, 3], b[:, :3], b[:, 3]
    w = aw * bw + np.sum(av * bv, axis=1)
    v = -aw[:, None] * bv + bw[:, None] * av - np.cross(av, bv)
    return 2 * np.arctan2(np.linalg.norm(v, axis=1), np.abs(w))


def row(success, time_us, iterations):
    return (f"success {100 * success.mean():.2f}% ({success.sum()} / {len(success)}), "
            f"median iterations {np.median(iterations):.0f}, "
            f"median / mean time {np.median(time_us):.1f} / {time_us.mean():.1f} us")


def misses(status, success, time_us):
    """The solves that failed, by status, with their time range."""
    if success.all():
        return "no misses"
    parts = []
    for name in sorted(set(status[~success])):
        t = time_us[~success & (status == name)]
        parts.append(f"{len(t)} {name} ({t.min() / 1000:.1f}-{t.max() / 1000:.1f} ms)")
    return "misses: " + ", ".join(parts)


def harness_row(cli, urdf, samples, seed, spec):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([cli, "run", "--urdf", str(urdf), "--samples", str(samples), "--seed", str(seed),
                        "--solvers", spec, "--threads", "1", "--no-trace", "--progress", "none",
                        "--out", str(pathlib.Path(tmp) / "run")], check=True, capture_output=True, text=True)
        run = pathlib.Path(tmp) / "run"    # the harness writes its files gzip-compressed (solves.csv.gz)
        with (gzip.open(run / "solves.csv.gz", "rt") if (run / "solves.csv.gz").exists()
              else open(run / "solves.csv")) as f:
            rows = list(csv.DictReader(f))
    status = np.array([r["status"] for r in rows])
    success = np.array([r["converged"] == "1" and r["within_limits"] == "1" for r in rows])
    time_us = np.array([float(r["time_us"]) for r in rows])
    iterations = np.array([int(r["iterations"]) for r in rows])
    return status, success, time_us, iterations


def plot(path, time_us, success, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    bins = np.logspace(np.log10(max(time_us.min(), 0.1)), np.log10(time_us.max()) + 1e-9, 60)
    ax.hist(time_us[success], bins=bins, color="tab:blue", label=f"converged ({success.sum()})")
    if (~success).any():
        ax.hist(time_us[~success], bins=bins, color="tab:red", label=f"not converged ({(~success).sum()})")
    for value, style, name in ((np.median(time_us), "--", "median"), (time_us.mean(), ":", "mean")):
        ax.axvline(value, color="black", linestyle=style, label=f"{name} {value:.1f} us")
    ax.set_xscale("log")
    ax.set_xlabel("solve time [us] (Summary.time_us)")
    ax.set_ylabel("solves")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robot", default="ur5", choices=["ur5", "panda", "iiwa14"])
    parser.add_argument("--spec", default="auto")
    parser.add_argument("--samples", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1, help="as `ikbench run --seed` (default 1, the harness's)")
    parser.add_argument("--out", default=None, help="PNG file (default: arm_row_<robot>.png here)")
    parser.add_argument("--harness", default=None, help="the ikbench binary: run the same problems through it")
    parser.add_argument("--simd", action="store_true",
                        help="solve through the SIMD batch kernel (faster; agrees with the harness's scalar solves to "
                             "rounding, not bit for bit: a few iteration counts may differ)")
    args = parser.parse_args()

    urdf = REPO / "scenarios" / "data" / "robots" / f"{args.robot}.urdf"
    model = ik.Model.from_urdf(urdf)
    targets = ik.reachable_targets(model, args.samples, seed=args.seed)
    seeds = harness_seeds(args.seed, f"{args.robot}-pose", args.spec, args.samples)
    r = ik.solve_batch(model, args.spec, targets, threads=1, seeds=seeds, simd=args.simd)
    success = r.converged & r.within_limits

    # Every success re-checked here by forward kinematics of the returned q.
    pos, quat = model.fk(r.q)
    pos_err = np.linalg.norm(pos - targets[:, :3], axis=1)
    ang_err = quaternion_angle(quat, targets[:, 3:] / np.linalg.norm(targets[:, 3:], axis=1, keepdims=True))
    fk_ok = (pos_err <= 1e-5) & (ang_err <= 1e-5)
    assert np.all(fk_ok[success]), "a reported success fails the FK check"

    print(f"{args.robot}: {model.nv} DOF, body '{r.body}', {args.samples} reachable pose targets (seed {args.seed}), "
          f"start at the middle of the limits, tolerance 1e-5 m / 1e-5 rad, 1 thread")
    print(f"machine: {machine()}; Python {platform.python_version()}, numpy {np.__version__}")
    print(f"python  {args.spec}: {row(success, r.time_us, r.iterations)}; batch wall {r.wall_time_s:.3f} s")
    print(f"        successes re-checked by FK: {fk_ok[success].sum()} / {success.sum()}")
    print(f"        {misses(r.status_text, success, r.time_us)}")
    if args.harness:
        status, h_success, h_time, h_iter = harness_row(args.harness, urdf, args.samples, args.seed, args.spec)
        print(f"harness {args.spec}: {row(h_success, h_time, h_iter)}")
        print(f"        {misses(status, h_success, h_time)}")
        same = (status == r.status_text) & (h_iter == r.iterations)
        print(f"        same status and iterations as the harness on {same.sum()} / {args.samples} problems")
    out = pathlib.Path(args.out or f"arm_row_{args.robot}.png")
    plot(out, r.time_us, success,
         f"'{args.spec}' on {args.robot}, {args.samples} reachable pose targets, 1 thread: "
         f"{100 * success.mean():.2f}% converged")
    print(f"plot: {out}")


if __name__ == "__main__":
    main()
