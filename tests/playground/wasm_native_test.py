#!/usr/bin/env python3
"""The playground's WebAssembly module against the native library: the same Session
(playground/session.h) runs natively (playground_session) and in node (session_cli.js), on
the same problems, and must return the same answers.

    wasm_native_test.py --native build/release/playground/playground_session \\
        --module build/release/wasm/playground/ikbench_playground.js --ikbench build/release/benchmarks/ikbench

Problems: 100 seeded reachable problems in each of four sets, generated natively: the UR5 (the
page's model) and a 7-DOF random chain with pose goals, the same chain and a 3-DOF planar chain
with position goals. Every backend of the WebAssembly build (its catalog: all but Ceres' and
KDL's) and the `auto` preset (with `time_budget_us=0`, so that restarts, not the clock, bound it)
solves each from its start. The native side runs the portable batch kernel
(IKBENCH_BATCH_ISA=portable), the one the page runs; neither build can fuse a multiply-add (no FMA
in WebAssembly or in the x86-64 baseline; -ffp-contract=off in the WebAssembly build). What still
differs, and what is checked:
  - position goals on the planar chain (coordinate axes): the same status and iterations, q
    identical or within 1e-12, on every problem;
  - position goals on the random chain: the same status and iterations on every problem, q within
    1e-9: Eigen's SSE2 packets (native) and WebAssembly's scalar code sum 3-vector products in
    different orders, a difference of an ulp that iterations carry along;
  - pose goals: the rotation error's log map calls libm's atan2, where glibc and musl may round
    apart by an ulp, and slowly converging methods (jt, lm) carry that along their paths: the same
    status on at least 95 of the 100 problems per backend.
The table printed says per backend and set how many answers are identical, within 1e-12 or not,
and how many statuses or iteration counts differ. Also: the chains and problems the module
generates from the same seeds equal the native ones to 1e-12, and a bad spec answers one error.

Scenes (docs/collision.md): the UR5 in the workcell and in a box field of another seed, the 7-DOF
chain in the workcell and the humanoid in its self-collision scene, built by each build's scene
reader (Session.setScene): the same obstacles, link shapes and checked pairs; at 100 seeded
configurations each (kinematics' randomConfiguration, drawn natively) the module's per-link
distances (every checked pair's inner-loop capsule/box distance, the smallest per link and
overall) equal the native library's, identical or within 1e-12, with the same collision flags;
against FCL's exact check (native only) they are the enclosing approximations': never farther
apart than FCL finds a clear configuration, and colliding wherever FCL finds a collision. The UR5 in the workcell solved with collision=reject (auto) and collision=avoid
(dls) by both builds: the same status on at least 95 of 100 problems (WebAssembly has no FCL, so
its reject check is the inner-loop one).

Speed (printed, never asserted: the machine is shared): the mean time of one 7-DOF pose `dls` solve
natively and in node's WebAssembly, interleaved native, wasm, native, wasm; the ratio of the medians.

Exit status: 0 passed, 1 failed, 77 skipped (no node, no module) with the reason printed.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "report"))
import browser_test as rb  # noqa: E402  (the tests' check(): prints ok / FAIL, collects failures)

SKIP = 77
PROBLEMS = 100
TOLERANCE = 1e-12
ORDER_TOLERANCE = 1e-9   # q of a random chain's position goals (summation order, below)
POSE_STATUS_DIFFER = 5    # problems of 100 whose pose-goal verdicts may differ (libm's atan2, below)
# (model, scene, box seed): the scenes the page offers, on an arm, a random chain and the humanoid.
SCENE_CASES = [("ur5", "workcell", None), ("ur5", "box-field", 11), ("chain7", "workcell", None),
               ("humanoid", "humanoid-self", None)]
SCENE_CONFIGS, SCENE_SEED = 100, 21
COLLISION_SPECS = ["auto", "dls:collision=avoid"]
APPROX_SLACK = 1e-6      # m: the inner loop's distance may exceed FCL's by the search's slack and FCL's tolerance
AUTO_SPEC = "auto:time_budget_us=0:restarts=20"
BENCH_PROBLEMS, BENCH_REPEATS, BENCH_ROUNDS = 20, 50, 2

check, failures = rb.check, rb.failures


def run_native(native, calls, work, name):
    f = work / f"{name}.json"
    f.write_text(json.dumps(calls))
    env = dict(os.environ, IKBENCH_BATCH_ISA="portable")
    p = subprocess.run([native, str(f)], capture_output=True, text=True, env=env, timeout=900)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: {native} {f} exited with {p.returncode}: {p.stderr[-2000:]}")
    return json.loads(p.stdout)


def run_wasm(node, module, calls, work, name):
    f = work / f"{name}.json"
    f.write_text(json.dumps(calls))
    env = dict(os.environ, NODE_PATH="/usr/share/nodejs")
    p = subprocess.run([node, str(HERE / "session_cli.js"), module, str(f)], capture_output=True, text=True,
                       env=env, timeout=1800)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: node session_cli.js {f} exited with {p.returncode}: {p.stderr[-2000:]}")
    return json.loads(p.stdout)


def max_difference(a, b):
    """Largest |x - y| over the numbers of two JSON values of one shape (inf where the shapes differ)."""
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) if isinstance(a, (int, float)) and isinstance(b, (int, float)) else math.inf
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return max((max_difference(x, y) for x, y in zip(a, b)), default=0.0)
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return max((max_difference(a[k], b[k]) for k in a), default=0.0)
    return 0.0 if a == b else math.inf


def page_data(ikbench, work):
    """The data the page embeds (ikbench playground's): models and scenes."""
    page = work / "playground.html"
    p = subprocess.run([ikbench, "playground", "--out", str(page)], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: ikbench playground exited with {p.returncode}: {p.stdout}{p.stderr}")
    text = page.read_text()
    start = text.index('<script id="playground-data" type="application/json">')
    start = text.index(">", start) + 1
    return json.loads(text[start:text.index("</script>", start)].replace("<\\/", "</"))


def scene_request(scenes, model, name, seed):
    scene = json.loads(json.dumps(scenes[name]["scene"]))
    if seed is not None:
        scene["random_boxes"]["seed"] = seed
    return {"model": model, "scene": scene, "source": scenes[name]["file"]}


def check_scenes(a, node, work, models_by_id, scenes):
    """The module's scene distances against the native library's (same code) and FCL's (exact)."""
    add = [["addModel", models_by_id[m]] for m in sorted({m for m, _, _ in SCENE_CASES})]
    calls = list(add)
    for mid, name, seed in SCENE_CASES:
        calls += [["setScene", scene_request(scenes, mid, name, seed)],
                  ["configurations", {"model": mid, "count": SCENE_CONFIGS, "seed": SCENE_SEED}]]
    native_setup = run_native(a.native, calls, work, "scenes-setup")[len(add):]
    calls, keys = list(add), []
    for k, (mid, name, seed) in enumerate(SCENE_CASES):
        calls.append(["setScene", scene_request(scenes, mid, name, seed)])
        keys.append((k, "scene", None))
        for i, q in enumerate(native_setup[2 * k + 1]):
            calls.append(["clearance", {"model": mid, "q": q}])
            keys.append((k, "clearance", i))
    # The collision keys in the page: the UR5 in the workcell, collision-free targets (REACH's).
    calls += [["setScene", scene_request(scenes, "ur5", "workcell", None)],
              ["problems", {"model": "ur5", "count": PROBLEMS, "seed": 15, "kind": "pose"}]]
    native = run_native(a.native, calls, work, "scenes")
    problems = native[-1]
    solves = [["solve", {"problem": line, "spec": spec}] for spec in COLLISION_SPECS for line in problems]
    native += run_native(a.native, calls + solves, work, "scenes-solve")[len(calls):]
    wasm = run_wasm(node, a.module, calls + solves, work, "scenes")
    n0 = len(add)
    print(f"{'model':<9} {'scene':<14} {'pairs':>5} {'identical':>9} {'<=1e-12':>8} {'differ':>6} {'colliding':>9} "
          f"{'FCL colliding':>13} {'flags as FCL':>12}")
    for k, (mid, name, seed) in enumerate(SCENE_CASES):
        label = f"{mid} in {name}" + (f" (seed {seed})" if seed is not None else "")
        rows = [(i, kind, j) for i, (c, kind, j) in enumerate(keys) if c == k]
        i_scene = n0 + rows[0][0]
        ns, ws = native[i_scene], wasm[i_scene]
        if not check("error" not in ns and "error" not in ws, f"{label}: both builds build the scene "
                     f"({ns.get('error') or ws.get('error') or 'ok'})"):
            continue
        d = max_difference(ns, ws)
        check(ns["scene"]["pairs"] == ws["scene"]["pairs"] and d <= TOLERANCE,
              f"{label}: the same obstacles, link shapes and {len(ns['scene']['pairs'])} checked pairs in both "
              f"builds (max difference {d:.2g})")
        identical = close = colliding = fcl_colliding = agree = ties = 0
        differ, wrong_side = [], []
        for i, _, j in rows[1:]:
            n, w = native[n0 + i], wasm[n0 + i]
            dd = max_difference([n["distances"], n["links"], n["min_clearance"]],
                                [w["distances"], w["links"], w["min_clearance"]])
            inner = ("distances", "links", "link_pairs", "min_clearance", "pair", "collision_free")
            if dd == 0.0 and all(n[x] == w[x] for x in inner):
                identical += 1
            elif dd <= TOLERANCE and n["collision_free"] == w["collision_free"]:
                close += 1
                # Every pair's distance agrees to rounding, so a closest pair named differently is a tie.
                ties += (n["pair"], n["link_pairs"]) != (w["pair"], w["link_pairs"])
            else:
                differ.append((j, dd, n["pair"], w["pair"]))
            colliding += not w["collision_free"]
            exact = n["exact"]
            fcl_colliding += not exact["collision_free"]
            agree += exact["collision_free"] == w["collision_free"]
            # The inner loop's shapes enclose the exact ones: where FCL finds the configuration clear, the
            # inner loop's clearance is never larger; where FCL finds a collision, so does the inner loop.
            # (Penetration depths are not compared: FCL's and the inner loop's overlap measures differ.)
            if (exact["collision_free"] and w["min_clearance"] > exact["min_clearance"] + APPROX_SLACK) or (
                    not exact["collision_free"] and w["collision_free"]):
                wrong_side.append((j, w["min_clearance"], exact["min_clearance"], exact["pair"]))
        print(f"{mid:<9} {name:<14} {len(ns['scene']['pairs']):>5} {identical:>9} {close:>8} {len(differ):>6} "
              f"{colliding:>9} {fcl_colliding:>13} {agree:>12}")
        check(not differ, f"{label}: the module's distances (every pair's, per link, smallest) at {SCENE_CONFIGS} seeded "
              f"configurations are the native library's: identical on {identical}, within {TOLERANCE:g} on {close} "
              f"(closest pair named differently at a tie: {ties}), the same collision flags"
              + (f"; first differences {differ[:3]}" if differ else ""))
        check(not wrong_side and native[n0 + rows[1][0]]["exact"]["method"] == "fcl",
              f"{label}: against FCL's exact check the module's clearance is never larger where FCL finds no collision "
              f"(+{APPROX_SLACK:g} m), and it collides wherever FCL does ({colliding} colliding by the inner loop, "
              f"{fcl_colliding} by FCL)"
              + (f"; first exceptions {wrong_side[:3]}" if wrong_side else ""))
    for s, spec in enumerate(COLLISION_SPECS):
        base = len(calls) + s * PROBLEMS
        pairs = [(native[base + k], wasm[base + k]) for k in range(PROBLEMS)]
        errors = [(n.get("error"), w.get("error")) for n, w in pairs if "error" in n or "error" in w]
        same = sum(n.get("status") == w.get("status") for n, w in pairs)
        free = sum(1 for n, _ in pairs if (n.get("collision") or {}).get("exact", {}).get("collision_free"))
        check(not errors and same >= PROBLEMS - POSE_STATUS_DIFFER,
              f"ur5 in workcell, {spec}: the same status in both builds on {same} of {PROBLEMS} problems "
              f"(native answers collision-free by FCL: {free})" + (f"; errors {errors[:2]}" if errors else ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--native", required=True)
    ap.add_argument("--module", required=True)
    ap.add_argument("--ikbench", required=True)
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    node = shutil.which("node")
    if not node:
        print("SKIP: node not found (Debian: nodejs; scripts/setup.sh installs emscripten, which needs it)")
        return SKIP
    if not Path(a.module).exists():
        print(f"SKIP: no WebAssembly module at {a.module} (this build has no emscripten)")
        return SKIP
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="ikbench-wasm-"))
    work.mkdir(parents=True, exist_ok=True)
    data = page_data(a.ikbench, work)
    models = {m["key"]: m for m in data["models"]}
    scenes = {sc["name"]: sc for sc in data["scenes"]}
    if not check("ur5" in models, f"the page embeds the UR5 (models: {sorted(models)})"):
        return 1

    # Phase 1, native: the models and the problems.
    setup = [["catalog", {}],
             ["randomChain", {"id": "chain7", "dof": 7, "seed": 3}],
             ["randomChain", {"id": "planar3", "dof": 3, "seed": 5, "axes": "planar"}]]
    native_setup = run_native(a.native, setup, work, "setup")
    _, chain7, planar3 = native_setup
    models_by_id = {"ur5": models["ur5"]["model"], "chain7": chain7, "planar3": planar3}
    sets = [("ur5-pose", "ur5", "pose", 11), ("chain7-pose", "chain7", "pose", 12),
            ("chain7-position", "chain7", "position", 14), ("planar3-position", "planar3", "position", 13)]
    # q tolerance of the position-goal sets: a planar chain's axes are coordinate axes, so Eigen's
    # SSE2 packets (native) and WebAssembly's scalar code meet the same exact zeros; a random
    # chain's axes are not, and the two sum 3-vector products in different orders.
    q_tolerance = {"planar3-position": TOLERANCE, "chain7-position": ORDER_TOLERANCE}
    gen = [["addModel", m] for m in models_by_id.values()]
    gen += [["problems", {"model": mid, "count": PROBLEMS, "seed": seed, "kind": kind, "name": name}]
            for name, mid, kind, seed in sets]
    native_gen = run_native(a.native, setup + gen, work, "generate")
    wasm_gen = run_wasm(node, a.module, setup + gen, work, "generate")
    # The generators draw Gaussian numbers through libm (log, sin, cos), where glibc and musl may
    # round apart by an ulp: equal to rounding, not to the bit.
    d = max_difference(native_gen[1:], wasm_gen[1:])
    check(d <= TOLERANCE, f"the module's chains and problems equal the native ones from the same seeds (max "
          f"difference {d:.2g})")
    catalog = wasm_gen[0]
    problems = {name: native_gen[len(setup) + len(models_by_id) + k] for k, (name, _, _, _) in enumerate(sets)}
    kinds = {name: kind for name, _, kind, _ in sets}
    for name, ps in problems.items():
        if not check(isinstance(ps, list) and len(ps) == PROBLEMS, f"{name}: {PROBLEMS} problems generated"):
            return 1

    # Phase 2: every backend of the module on every problem, both builds.
    specs = [s["name"] for s in catalog["solvers"]] + [AUTO_SPEC]
    check(not any(s.startswith(("ceres", "kdl")) for s in specs), f"the module has no Ceres or KDL backend: {specs}")
    solve = [["addModel", m] for m in models_by_id.values()]
    keys = []
    for spec in specs:
        for name, ps in problems.items():
            for k, line in enumerate(ps):
                solve.append(["solve", {"problem": line, "spec": spec}])
                keys.append((spec, name, k))
    solve.append(["solve", {"problem": problems["ur5-pose"][0], "spec": "dls:lambda=-1"}])
    native = run_native(a.native, solve, work, "solve")
    wasm = run_wasm(node, a.module, solve, work, "solve")
    n0 = len(models_by_id)
    check("error" in wasm[-1] and wasm[-1] == native[-1],
          f"a bad spec answers the same error in both: {wasm[-1].get('error', '')[:120]}")
    summary = {}
    for i, key in enumerate(keys):
        n, w = native[n0 + i], wasm[n0 + i]
        s = summary.setdefault(key[:2], {"identical": 0, "close": 0, "differ": [], "converged": 0, "status": [],
                                         "dq": []})
        if "error" in n or "error" in w:
            s["differ"].append((key[2], f"error: {n.get('error')} / {w.get('error')}"))
            s["dq"].append((key[2], math.inf))
            s["status"].append((key[2], n.get("error"), 0, w.get("error"), 0))
            continue
        if n["status"] != w["status"] or n["iterations"] != w["iterations"]:
            s["status"].append((key[2], n["status"], n["iterations"], w["status"], w["iterations"]))
        d = max((abs(x - y) for x, y in zip(n["q"], w["q"])), default=0.0)
        s["dq"].append((key[2], d))
        if n["q"] == w["q"]:
            s["identical"] += 1
        elif d <= TOLERANCE:
            s["close"] += 1
        else:
            s["differ"].append((key[2], f"max |dq| {d:.3g}"))
        s["converged"] += n["status"] == "converged"
    print(f"{'spec':<36} {'problems':<17} {'identical':>9} {'<=1e-12':>8} {'differ':>6} {'status/it differ':>16} "
          f"{'converged':>9}")
    for (spec, name), s in summary.items():
        print(f"{spec:<36} {name:<17} {s['identical']:>9} {s['close']:>8} {len(s['differ']):>6} "
              f"{len(s['status']):>16} {s['converged']:>9}")
    for (spec, name), s in summary.items():
        if kinds[name] == "position":
            # No libm on this path (FK and Jacobians use kinematics/sincos.h): the same iterations,
            # q to rounding.
            far = [(k, d) for k, d in s["dq"] if d > q_tolerance[name]]
            check(not s["status"] and not far,
                  f"{spec} on {name}: same status and iterations, q within {q_tolerance[name]:g}, on all {PROBLEMS} "
                  f"problems" + (f" (first differences: {(s['status'] + far)[:3]})" if s["status"] or far else ""))
        else:
            # Pose goals: the rotation error's log map calls libm's atan2 (kinematics/src/pose.cpp), where
            # musl and glibc may round apart by an ulp; a slowly converging method carries that along
            # its path. The verdict must still agree.
            same = PROBLEMS - len(s["status"])
            statuses = sum(1 for k, ns, _, ws, _ in s["status"] if ns != ws)
            check(statuses <= POSE_STATUS_DIFFER,
                  f"{spec} on {name}: the same status on at least {PROBLEMS - POSE_STATUS_DIFFER} of {PROBLEMS} problems "
                  f"({PROBLEMS - statuses}; q within {TOLERANCE:g} on {s['identical'] + s['close']}, "
                  f"iterations equal on {same})")

    check_scenes(a, node, work, dict(models_by_id, humanoid=models["humanoid"]["model"]), scenes)

    # Speed: one 7-DOF pose dls solve, native vs WebAssembly, interleaved.
    bench = [["addModel", chain7], ["bench", {"problems": problems["chain7-pose"][:BENCH_PROBLEMS], "spec": "dls",
                                              "repeats": BENCH_REPEATS}]]
    times = {"native": [], "wasm": []}
    for _ in range(BENCH_ROUNDS):
        times["native"].append(run_native(a.native, bench, work, "bench")[1]["us_per_solve"])
        times["wasm"].append(run_wasm(node, a.module, bench, work, "bench")[1]["us_per_solve"])
    nat, was = statistics.median(times["native"]), statistics.median(times["wasm"])
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"7-DOF pose dls, us per solve ({BENCH_PROBLEMS} problems x {BENCH_REPEATS}, interleaved): "
          f"native {times['native']} wasm (node) {times['wasm']}; median ratio wasm/native {was / nat:.2f} "
          f"(load average {load}; a benchmark figure, not asserted)")
    (work / "bench.json").write_text(json.dumps({"native_us": times["native"], "wasm_node_us": times["wasm"],
                                                 "load1": load}) + "\n")
    print(f"{len(failures)} failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
