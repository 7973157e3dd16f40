#!/usr/bin/env python3
"""What calling ikbench from Python costs per solve.

The same solves three ways, in one run, interleaved over --repeats rounds:
  C++     a loop over Solver::solve in the C++ helper ikbench_py_reference
          (built with the tests: <build>/python/ikbench_py_reference),
  batch   ikbench.solve_batch(..., threads=1), timed around the Python call,
  loop    a Python loop of Solver.solve(model, goal, seed=...), goals built
          beforehand.
All three solve the same N reachable pose targets (ikbench.reachable_targets,
the C++ makeGoals) from the middle of the limits with the same per-solve
seeds (rng_mix(seed, i)); the script checks that they converge as often in
the same total number of iterations. It prints the per-solve thread CPU
time and wall time of each and their differences from C++: the binding's
overhead. CPU time does not count waiting for a core, so it is the figure to
read on a shared machine.

    PYTHONPATH=python:build/release/python /usr/bin/python3 examples/python/binding_overhead.py \\
        --reference build/release/python/ikbench_py_reference
"""

import argparse
import importlib
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from arm_table_row import import_bindings, machine  # noqa: E402

ik = import_bindings()


def cxx_round(reference, urdf, spec, samples, seed):
    """Per-solve thread CPU and wall time [us] of the C++ loop (the second of
    two passes, so caches are warm as in the Python process), converged count,
    iterations."""
    out = subprocess.run([reference, "solve", str(urdf), spec, str(samples), str(seed), "2"], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()
    r = json.loads(out[-1])
    return 1e6 * r["cpu_s"] / samples, 1e6 * r["wall_s"] / samples, r["converged"], r["iterations"]


def timed(fn, n):
    """fn() on this thread: per-solve thread CPU and wall time [us], and fn's result."""
    c0, w0 = time.thread_time(), time.perf_counter()
    result = fn()
    return 1e6 * (time.thread_time() - c0) / n, 1e6 * (time.perf_counter() - w0) / n, result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robot", default="ur5", choices=["ur5", "panda", "iiwa14"])
    parser.add_argument("--spec", default="auto:time_budget_us=0",
                        help="default: the arm preset without its time budget, so every way does the same work")
    parser.add_argument("--samples", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reference", default=str(REPO / "build" / "release" / "python" / "ikbench_py_reference"))
    args = parser.parse_args()
    if not os.path.exists(args.reference):
        sys.exit(f"no C++ helper at {args.reference}: build the target ikbench_py_reference, or give --reference")

    urdf = REPO / "scenarios" / "data" / "robots" / f"{args.robot}.urdf"
    model = ik.Model.from_urdf(urdf)
    n = args.samples
    targets = ik.reachable_targets(model, n, seed=args.seed)
    body = model.effectors[0]
    goals = [ik.Goal.pose(body, t[:3], t[3:]) for t in targets]
    seeds = [ik.rng_mix(args.seed, i) for i in range(n)]
    solver = ik.Solver(args.spec)

    def batch_round():
        # threads=1: every solve runs on this thread, so its CPU time counts them all.
        cpu, wall, r = timed(lambda: ik.solve_batch(model, args.spec, targets, threads=1, seed=args.seed), n)
        return cpu, wall, int(r.converged.sum()), int(r.iterations.sum())

    def loop():
        converged = iterations = 0
        for goal, s in zip(goals, seeds):
            summary = solver.solve(model, goal, seed=s)
            converged += summary.converged
            iterations += summary.iterations
        return converged, iterations

    def loop_round():
        cpu, wall, (converged, iterations) = timed(loop, n)
        return cpu, wall, converged, iterations

    batch_round()  # warm-up
    ways = ("C++", "batch", "loop")
    cpu = {w: [] for w in ways}
    wall = {w: [] for w in ways}
    work = set()
    for _ in range(args.repeats):
        for name, fn in (("C++", lambda: cxx_round(args.reference, urdf, args.spec, n, args.seed)),
                         ("batch", batch_round), ("loop", loop_round)):
            c, w, converged, iterations = fn()
            cpu[name].append(c)
            wall[name].append(w)
            work.add((converged, iterations))
    if len(work) != 1:
        sys.exit(f"the three ways did different work (converged, iterations): {sorted(work)}")
    converged, iterations = work.pop()

    print(f"{args.robot}, '{args.spec}', {n} reachable pose targets from the middle of the limits, 1 thread, "
          f"{args.repeats} interleaved rounds; {converged} / {n} converged, {iterations} iterations in every way")
    print(f"machine: {machine()}; Python {platform.python_version()}")
    print("per solve [us]: median of the rounds (min-max); 'minus C++': median over rounds of the difference")
    print(f"{'':7}{'thread CPU':>22}{'minus C++':>12}{'wall':>24}{'minus C++':>12}")
    for name in ways:
        cells = []
        for table in (cpu, wall):
            x, ref = np.array(table[name]), np.array(table["C++"])
            cells.append(f"{np.median(x):8.2f} ({x.min():.2f}-{x.max():.2f})")
            cells.append("" if name == "C++" else f"{np.median(x - ref):+.2f}")
        print(f"{name:7}{cells[0]:>22}{cells[1]:>12}{cells[2]:>24}{cells[3]:>12}")

if __name__ == "__main__":
    main()
