#!/usr/bin/env python3
"""playground.html in a real browser: writes the page with `ikbench playground`, opens it in
headless Chromium through selenium (the report's browser test's helpers, tests/report/browser_test.py)
and drags the target with synthetic mouse events.

    IKBENCH_CLI=build/release/benchmarks/ikbench /usr/bin/python3 tests/playground/browser_test.py \\
        --native build/release/playground/playground_session [WORK_DIR] [--screenshot docs/playground.png]

Checks: the page starts (data-playground-ready) and lists the backends it lacks (Ceres', KDL's);
on the shipped UR5 (pose goals) and on a 7-DOF random chain (position goals), a mouse drag of the target
moves it, and each chosen spec's answer puts the effector on the dragged target within the
tolerance (1e-5 m, 1e-5 rad), by forward kinematics of the page's q in the native library
(playground_session), not by the page's own status; in step mode, two `dls` specs with the same
lambda take the same step, and after lambda is changed in one spec's generated parameter field its
next step differs, and equals the native library's step with that lambda from the same q; path mode
moves the target and records joint jumps; no error in the browser console.

Scenes: the UR5 in the workcell, the `collision` key offered in the spec panels only then (and set
there to `reject`); a target under the table makes `dls` collide, the page's state says which links
collide with per-link clearances equal to the native library's for the same q (and FCL's exact check
agrees that it collides), those links are drawn red, the others not; with a larger margin (typed
into the margin field) the links within it are drawn orange, and clear ones only when asked for; a
"new target" puts the target at the native library's collision-free target of the same seed,
and the `collision=reject` spec reaches it collision-free (FCL); a box field of another seed holds the native library's boxes; without a
scene, no clearances and no `collision` key.

Printed, not asserted (the machine is shared): a 7-DOF pose `dls` solve in the page against the
native one (interleaved page, native, page, native), and with four specs on a 7-DOF arm in path mode
(a random chain; the iiwa14 in the workcell), the frames per second of requestAnimationFrame (vsync,
60 Hz in headless Chromium) and the work of a frame (mean, median, 95th percentile against the
16.7 ms budget; its solve, page and draw parts), with the load average. Exit status: 0 passed,
1 failed, 77 skipped with the reason printed.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent / "report"))
import browser_test as rb  # noqa: E402  (the report's browser helpers: check, skip, start_browser, wait)

check, skip, severe = rb.check, rb.skip, rb.severe
POS_TOL, ORI_TOL = 1e-5, 1e-5
UR5_SPECS = ["dls", "lm", "auto", "analytic-6r"]
CHAIN_SPECS = ["dls", "dls-adaptive", "sdls", "auto"]
FPS_SPECS = ["dls", "sdls", "ccd", "auto"]
FPS_SCENE_SPECS = ["dls", "sdls", "lm", "auto"]   # the iiwa14 in the workcell, pose goals
UNDER_TABLE = [0.35, 0.25, -0.12]                   # m: below the UR5's table top (z = 0)
RED, ORANGE = "#d62728", "#ff7f0e"
CHAIN_DOF, CHAIN_SEED = 7, 3
BENCH = ("dls", 20, 50)   # spec, problems, repeats


class Playground:
    def __init__(self, d, native, work):
        self.d, self.native, self.work = d, native, work

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def state(self):
        return self.js("return JSON.parse(JSON.stringify(window.ikbenchPlayground.state))")

    def frames_after(self, n):
        f0 = self.state()["frame"]
        rb.wait(self.d, lambda: self.state()["frame"] >= f0 + n, f"{n} more frames", timeout=60)

    def type_into(self, element_id, text):
        """Types text into a field of the page (replacing what it holds), as a user does; waits two frames."""
        field = self.d.find_element("id", element_id)
        field.clear()
        field.send_keys(text)
        self.frames_after(2)

    def native_calls(self, calls, isa="portable"):
        """The calls on the native Session; isa: the batch kernel (portable: the page's; auto: this CPU's best)."""
        f = self.work / "native-calls.json"
        f.write_text(json.dumps(calls))
        p = subprocess.run([self.native, str(f)], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, IKBENCH_BATCH_ISA=isa))
        if p.returncode != 0:
            raise SystemExit(f"FAIL: {self.native} exited with {p.returncode}: {p.stderr}")
        return json.loads(p.stdout)

    def drag(self, goal, dx, dy, steps=8):
        """Presses the mouse on goal's target, moves by (dx, dy) px in `steps` moves, releases."""
        from selenium.webdriver.common.actions.action_builder import ActionBuilder

        p = self.js("return window.ikbenchPlayground.screenOf(arguments[0], 0)", goal)
        x, y = int(round(p["x"])), int(round(p["y"]))
        r = self.js("var r = document.getElementById('view').getBoundingClientRect(); "
                    "return [r.left, r.top, r.right, r.bottom]")
        # A move that would leave the canvas goes the other way (the target may sit near an edge).
        if not r[0] + 20 <= x + dx <= r[2] - 20:
            dx = -dx
        if not r[1] + 20 <= y + dy <= r[3] - 20:
            dy = -dy
        ab = ActionBuilder(self.d)
        ab.pointer_action.move_to_location(x, y)
        ab.pointer_action.pointer_down()
        for k in range(1, steps + 1):
            ab.pointer_action.move_to_location(x + round(dx * k / steps), y + round(dy * k / steps))
            ab.pointer_action.pause(0.03)
        ab.pointer_action.pointer_up()
        ab.perform()


def quat_angle(a, b):
    """Rotation angle between two unit quaternions (x, y, z, w)."""
    dot = abs(sum(x * y for x, y in zip(a, b)))
    return 2 * math.acos(min(1.0, dot))


def quat_rotate(q, v):
    x, y, z, w = q
    # v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z)
    ux = (y * v[2] - z * v[1], z * v[0] - x * v[2], x * v[1] - y * v[0])
    uux = (y * ux[2] - z * ux[1], z * ux[0] - x * ux[2], x * ux[1] - y * ux[0])
    return [v[i] + 2 * w * ux[i] + 2 * uux[i] for i in range(3)]


def check_converged_by_fk(pg, label):
    """Each spec's q put every effector on its target, by the native library's FK."""
    st = pg.state()
    model = pg.js("return window.ikbenchPlayground.modelJson()")
    calls = [["addModel", model]] + [["frames", {"model": model["id"], "q": s["q"]}] for s in st["specs"]]
    answers = pg.native_calls(calls)[1:]
    bodies = {j["body"]: i for i, j in enumerate(model["joints"])}
    for s, fr in zip(st["specs"], answers):
        worst_p = worst_o = 0.0
        for t in st["targets"]:
            f = fr["frames"][bodies[t["body"]]]
            pos = [a + b for a, b in zip(f[:3], quat_rotate(f[3:7], t["point"]))]
            worst_p = max(worst_p, math.dist(pos, t["position"]))
            if st["kind"] != "position":
                worst_o = max(worst_o, quat_angle(f[3:7], t["quat_xyzw"]))
        check(worst_p <= POS_TOL and worst_o <= ORI_TOL,
              f"{label}: {s['spec']} converges to the dragged target by native FK: position error {worst_p:.2e} m, "
              f"rotation error {worst_o:.2e} rad (page says {s['status']}, {s['iterations']} iterations)")


def drag_and_check(pg, label, specs, moves):
    pg.js("window.ikbenchPlayground.setSpecs(arguments[0])", specs)
    pg.frames_after(3)
    for dx, dy in moves:
        before = pg.state()["targets"][0]["position"]
        pg.drag(0, dx, dy)
        pg.frames_after(3)
        after = pg.state()["targets"][0]["position"]
        moved = math.dist(before, after)
        check(moved > 1e-3, f"{label}: dragging the target by ({dx}, {dy}) px moved it by {moved:.3f} m")
        check_converged_by_fk(pg, f"{label} after a drag of ({dx}, {dy}) px")


def check_lambda_step(pg):
    """Step mode: same lambda, same step; lambda changed in the UI, a different next step, the native one."""
    pg.js("window.ikbenchPlayground.setSpecs(['dls:lambda=0.01', 'dls:lambda=0.01'])")
    pg.js("window.ikbenchPlayground.setMode('step')")
    pg.frames_after(2)
    pg.drag(0, 60, 40)
    pg.frames_after(2)
    pg.d.find_element("id", "step").click()
    s = pg.state()["specs"]
    check(s[0]["q"] == s[1]["q"] and s[0]["steps"] == 1,
          f"step mode: two dls:lambda=0.01 specs take the same first step (iterations {s[0]['iterations']})")
    pg.type_into("spec-1-param-lambda", "1")
    st = pg.state()
    q_start = st["specs"][1]["q"]
    check(st["specs"][1]["spec"] == "dls:lambda=1", f"the lambda field makes spec 2 '{st['specs'][1]['spec']}'")
    pg.d.find_element("id", "step").click()
    st = pg.state()
    a, b = st["specs"]
    check(a["q"] != b["q"] and a["residuals"][-1] != b["residuals"][-1],
          f"after lambda 0.01 -> 1 the next step differs: residual {a['residuals'][-1]:.4g} vs {b['residuals'][-1]:.4g}")
    check(len(a["residuals"]) == 3, f"the residual curve grows one point per step ({len(a['residuals'])} points)")
    # The page's step is the library's: the same iteration natively, from the same q.
    model = pg.js("return window.ikbenchPlayground.modelJson()")
    t = st["targets"][0]
    body = next(i for i, j in enumerate(model["joints"]) if j["body"] == t["body"])
    problem = {"family": "playground", "problem": 0, "name": "playground", "model": model["id"],
               "sequential": False, "q0": q_start,
               "goals": [{"body": t["body"], "body_index": body, "point": t["point"], "kind": st["kind"],
                          "target_position": t["position"], "target_quat_xyzw": t["quat_xyzw"], "weight": 1,
                          "orientation_scale": 1}]}
    native = pg.native_calls([["addModel", model], ["solve", {
        "problem": problem, "spec": "dls:lambda=1:max_iterations=1:restarts=0:time_budget_us=0"}]])[1]
    d = max(abs(x - y) for x, y in zip(native["q"], b["q"]))
    check(d <= 1e-12, f"the page's step with lambda=1 is the native library's step (max |dq| {d:.2e})")
    pg.js("window.ikbenchPlayground.setMode('live')")


def scene_request(pg, model_id, name, seed=None):
    """The setScene call the page makes for a shipped scene (its file's JSON from the page's data)."""
    f = pg.js("var name = arguments[0]; return JSON.parse(document.getElementById('playground-data').textContent)"
              ".scenes.filter(function (s) { return s.name === name; })[0]", name)
    if seed is not None:
        f["scene"]["random_boxes"]["seed"] = seed
    return ["setScene", {"model": model_id, "scene": f["scene"], "source": f["file"]}]


def check_defaults_and_labels(pg):
    """The first specs apply to the model and goal kind; a backend that does not is shown unsupported and not
    drawn; side-by-side panes are labelled with their specs."""
    st = pg.state()
    specs = [s["spec"] for s in st["specs"]]
    check(len(specs) == 4 and specs[-1] == "auto" and "fabrik" not in specs and
          all(s["status"] not in (None, "unsupported") for s in st["specs"]),
          f"the first specs on the UR5's pose goals all apply to it: {[(s['spec'], s['status']) for s in st['specs']]}")
    pg.js("window.ikbenchPlayground.setSpecs(['fabrik', 'dls'])")
    pg.js("window.ikbenchPlayground.setLayout('side')")
    pg.frames_after(3)
    st = pg.state()
    fab, dls = st["specs"]
    check(fab["unsupported"] and fab["stats"].startswith("unsupported here") and not fab["drawn"] and dls["drawn"] and
          "pos 0 m" not in fab["stats"],
          f"fabrik on pose goals is shown unsupported, with no arm drawn and no error figures: '{fab['stats'][:90]}'")
    labels = st["labels"]
    apart = len(labels) == 2 and (labels[0]["right"] <= labels[1]["left"] or labels[0]["bottom"] <= labels[1]["top"])
    check(apart and labels[0]["text"].startswith("fabrik") and "unsupported" in labels[0]["text"] and
          labels[1]["text"] == "dls",
          f"side by side, each pane is labelled with its spec, the labels apart: {[l['text'] for l in labels]}")
    pg.js("window.ikbenchPlayground.setLayout('overlay')")
    pg.frames_after(2)


def check_scene(pg):
    """The UR5 in the workcell: collisions drawn, clearances as the native library's, collision= set in the page."""
    pg.js("window.ikbenchPlayground.loadModel('ur5')")
    pg.js("window.ikbenchPlayground.setKind('position')")
    pg.js("window.ikbenchPlayground.setSpecs(['dls', 'dls:restarts=50'])")
    pg.frames_after(2)
    st = pg.state()
    check(st["scene"] is None and st["specs"][0]["collision"] is None and
          not pg.d.find_elements("id", "spec-0-param-collision"),
          "without a scene: no clearances, and the spec panels offer no collision key")
    pg.d.find_element("css selector", "#scene option[value='workcell']").click()
    pg.frames_after(2)
    field = pg.d.find_elements("id", "spec-1-param-collision")
    if check(len(field) == 1, "with the workcell chosen in the scene menu, the spec panels offer the collision key"):
        field[0].find_element("css selector", "option[value='reject']").click()
    pg.js("window.ikbenchPlayground.setTarget(0, arguments[0])", UNDER_TABLE)
    pg.frames_after(3)
    st = pg.state()
    sc = st["scene"]
    check(sc and sc["name"] == "workcell" and sc["obstacles"] == 8 and
          st["specs"][1]["spec"] == "dls:restarts=50:collision=reject",
          f"the UR5 in the workcell ({sc and sc['obstacles']} obstacles, {sc and sc['pairs']} pairs), spec 2 "
          f"'{st['specs'][1]['spec']}'")
    model = pg.js("return window.ikbenchPlayground.modelJson()")
    set_scene = scene_request(pg, model["id"], "workcell")
    native = pg.native_calls([["addModel", model], set_scene] +
                             [["clearance", {"model": model["id"], "q": s["q"]}] for s in st["specs"]])[2:]
    off, rej = st["specs"]
    c = off["collision"]
    links = sc["links"]
    colliding = [links[k] for k, d in enumerate(c["links"]) if d is not None and d <= 0]
    n = native[0]
    d = max(abs(x - y) for x, y in zip(c["links"], n["links"]) if x is not None) if c["links"] else math.inf
    check(off["status"] == "converged" and not c["collision_free"] and colliding,
          f"dls reaches the target under the table ({off['status']}, {off['position_error']:.1e} m) and collides: "
          f"{c['pair']}, {-c['min_clearance'] * 1000:.1f} mm deep; colliding links {colliding}")
    check(d <= 1e-12 and n["collision_free"] == c["collision_free"] and n["pair"] == c["pair"],
          f"the page's per-link clearances are the native library's for the same q (max difference {d:.1e}), "
          f"the same flag and pair ({n['pair']})")
    exact = n["exact"]
    check(exact["method"] == "fcl" and not exact["collision_free"] and exact["pair"].split("~")[0].split("#")[0] in colliding,
          f"FCL's exact check (native) agrees: it collides, {exact['pair']}, {-exact['min_clearance'] * 1000:.1f} mm deep")
    drawn = c["drawn"]
    check(all((x["color"] == RED) == (x["name"].split("#")[0] in colliding) for x in drawn),
          f"the colliding links are drawn red, the others not: {[(x['name'], x['color']) for x in drawn]}")
    check(rej["collision"]["collision_free"] == native[1]["exact"]["collision_free"] and
          (rej["status"] != "converged" or not rej["collision"]["collision_free"] or native[1]["exact"]["collision_free"]),
          f"dls:restarts=50:collision=reject under the table: {rej['status']}, collision-free by the page "
          f"{rej['collision']['collision_free']}, by FCL {native[1]['exact']['collision_free']}")
    # The margin, typed into its field: links within it are drawn orange.
    pg.type_into("scene-margin", "0.2")
    st = pg.state()
    c = st["specs"][0]["collision"]
    want = ["collides" if d is not None and d <= 0 else "near" if d is not None and d < 0.2 else "clear"
            for d in c["links"]]
    got = [x["state"] for x in c["drawn"]]
    colours = {"collides": RED, "near": ORANGE}
    check(st["scene"]["margin"] == 0.2 and got == want and "near" in got and
          all(colours.get(s, x["color"]) == x["color"] and (s in colours or x["color"] not in (RED, ORANGE))
              for s, x in zip(got, c["drawn"])),
          f"with a margin of 0.2 m the links within it are drawn orange: {list(zip(sc['links'], got))}")
    clear = [x["color"] for x in c["drawn"] if x["state"] == "clear"]
    pg.d.find_element("id", "scene-shapes").click()
    pg.frames_after(2)
    shown = [x["color"] for x in pg.state()["specs"][0]["collision"]["drawn"] if x["state"] == "clear"]
    check(all(x is None for x in clear) and shown and all(x not in (None, RED, ORANGE) for x in shown),
          f"clear collision shapes are drawn only with 'draw every collision shape' ticked, in the spec's colour "
          f"({shown})")
    # "new target": the effector at a collision-free configuration (REACH's targets), the native library's for the
    # same seed; the reject spec reaches it collision-free.
    pg.d.find_element("id", "new-target").click()
    pg.frames_after(3)
    st = pg.state()
    p = pg.native_calls([["addModel", model], set_scene, ["problems", {
        "model": model["id"], "count": 1, "seed": st["target_seed"], "kind": "position",
        "effectors": [t["body"] for t in st["targets"]]}]])[2][0]
    d = math.dist(p["goals"][0]["target_position"], st["targets"][0]["position"])
    check(d <= 1e-12, f"'new target' puts the target where the native library's collision-free target of seed "
          f"{st['target_seed']} is (distance {d:.1e} m)")
    rej = st["specs"][1]
    exact = pg.native_calls([["addModel", model], set_scene, ["clearance", {"model": model["id"], "q": rej["q"]}]])[2]["exact"]
    check(rej["status"] == "converged" and rej["collision"]["collision_free"] and exact["collision_free"],
          f"dls:restarts=50:collision=reject reaches a target of a collision-free configuration collision-free "
          f"({rej['status']}, "
          f"clearance {rej['collision']['min_clearance'] * 1000:.1f} mm; FCL: {exact['min_clearance'] * 1000:.1f} mm)")
    # A box field of another seed: the native library's boxes.
    pg.js("window.ikbenchPlayground.setScene('box-field', 3)")
    pg.frames_after(2)
    page_scene = pg.js("return window.ikbenchPlayground.sceneJson()")
    ns = pg.native_calls([["addModel", model], scene_request(pg, model["id"], "box-field", 3)])[1]["scene"]
    st = pg.state()
    check(st["scene"]["seed"] == 3 and page_scene["obstacles"] == ns["obstacles"] and len(ns["obstacles"]) == 17,
          f"the box field of seed 3: the native library's {len(ns['obstacles'])} obstacles")
    pg.js("window.ikbenchPlayground.setScene('')")
    pg.js("window.ikbenchPlayground.setMargin(0.01)")


def mesh_run(cli, work):
    """A small run of the shipped UR5 with its mesh collision geometry in the workcell: the run whose model
    the page offers with `--run`."""
    out = work / "mesh-run"
    p = subprocess.run([cli, "run", "--urdf", str(REPO / "scenarios/data/robots/ur5-meshes.urdf"), "--tip", "tool0",
                        "--scene", str(REPO / "scenarios/data/scenes/workcell.json"), "--samples", "3",
                        "--solvers", "dls", "--seed", "5", "--force", "--out", str(out)],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: the mesh run: {p.stdout}{p.stderr}")
    return out


def check_run_model(pg, run):
    """A run's model (ikbench playground --run): offered with the scene it was checked in, its meshes drawn as
    triangles, the page's clearances the native library's on the same recorded scene."""
    data = pg.js("return JSON.parse(document.getElementById('playground-data').textContent).models"
                 ".filter(function (m) { return m.key.indexOf('run:') === 0; })")
    if not check(len(data) == 1 and data[0]["key"].startswith(f"run:{run.name}/") and
                 data[0]["label"].startswith("ur5, ur5-meshes.urdf (run mesh-run") and "workcell" in data[0]["label"],
                 f"the page offers the run's model ({[(m['key'], m['label']) for m in data]})"):
        return
    entry = data[0]["model"]
    meshes = [l["name"] for l in entry["scene"]["links"] if l["type"] == "mesh"]
    pg.js("window.ikbenchPlayground.loadModel(arguments[0])", data[0]["key"])
    pg.js("window.ikbenchPlayground.setSpecs(['dls'])")
    pg.js("window.ikbenchPlayground.setShowShapes(true)")
    pg.frames_after(3)
    st = pg.state()
    sc = st["scene"]
    check(sc and sc["name"] == "@recorded" and sc["obstacles"] == len(entry["scene"]["obstacles"]) and
          sc["pairs"] == len(entry["scene"]["pairs"]),
          f"the run's model comes in its recorded scene ({sc and sc['obstacles']} obstacles, "
          f"{sc and sc['pairs']} checked pairs as recorded)")
    c = st["specs"][0]["collision"]
    drawn = [x for x in c["drawn"] if x["as"] == "mesh"]
    triangles = {l["name"]: len(l["triangles"]) for l in entry["scene"]["links"] if l["type"] == "mesh"}
    check(meshes and len(drawn) == len(meshes) and all(x["color"] is not None for x in drawn) and
          all(x["triangles"] == triangles[x["name"]] for x in drawn),
          f"its {len(meshes)} mesh link shapes are drawn as their triangles "
          f"({[(x['name'], x['triangles']) for x in drawn]})")
    native = pg.native_calls([["addModel", entry], ["setScene", {"model": entry["id"], "scene": "recorded"}],
                              ["clearance", {"model": entry["id"], "q": st["specs"][0]["q"]}]])
    n = native[2]
    d = max(abs(x - y) for x, y in zip(c["links"], n["links"]) if x is not None)
    check(d <= 1e-12 and n["pair"] == c["pair"] and native[1]["scene"]["pairs"] == entry["scene"]["pairs"],
          f"the page's per-link clearances on the recorded scene are the native library's (max difference {d:.1e})")
    pg.js("window.ikbenchPlayground.setShowShapes(false)")


def frame_rate(pg, label, specs, seconds=6):
    """Path mode with four specs: frames per second and the work of a frame, printed."""
    pg.js("window.ikbenchPlayground.setSpecs(arguments[0])", specs)
    pg.js("window.ikbenchPlayground.setMode('path')")
    time.sleep(seconds)   # the perf window (240 frames) holds path-mode frames only
    fps = []
    for _ in range(3):
        time.sleep(1.1)
        fps.append(round(pg.state()["fps"], 1))
    st = pg.state()
    p = st["perf"]
    check(all(s["max_jump"] > 0 for s in st["specs"]), f"{label}: path mode moves the arm (joint jumps recorded: "
          f"{[round(s['max_jump'], 4) for s in st['specs']]})")
    load = Path("/proc/loadavg").read_text().split()[0]
    ms = lambda k: f"{p[k]['mean']:.1f}"  # noqa: E731
    print(f"{label}, 4 specs ({', '.join(specs)}), path mode, headless Chromium ({st['renderer']['name']}, antialias "
          f"{st['renderer']['antialias']}): {fps} frames/s; work per frame mean {p['work_ms']['mean']:.1f} ms, median "
          f"{p['work_ms']['p50']:.1f}, p95 {p['work_ms']['p95']:.1f} (budget {p['budget_ms']:.1f} ms, "
          f"{100 * p['over_budget']:.0f}% of {p['frames']} frames over): solve {ms('module_ms')}, page {ms('glue_ms')}, "
          f"draw {ms('render_ms')} (load average {load}; not asserted)")
    pg.js("window.ikbenchPlayground.setMode('live')")
    return {"label": label, "specs": specs, "fps": fps, "perf": p, "renderer": st["renderer"], "load1": load}


def measure(pg, work):
    """The page's 7-DOF pose dls solve against the native one, and frames per second with 4 specs."""
    spec, count, repeats = BENCH
    model = pg.js("return window.ikbenchPlayground.modelJson()")
    native_calls = [["addModel", model],
                    ["problems", {"model": model["id"], "count": count, "seed": 7, "kind": "pose",
                                  "effectors": ["tip"]}]]
    problems = pg.native_calls(native_calls)[1]
    page, native, native_auto = [], [], []
    for _ in range(2):
        r = pg.js("return window.ikbenchPlayground.bench(arguments[0], arguments[1], arguments[2], 'pose')",
                  spec, count, repeats)
        page.append(r["us_per_solve"])
        check(r["solves"] == count * repeats, f"the page's bench ran {r['solves']} solves, {r['converged']} converged")
        n = pg.native_calls([["addModel", model], ["bench", {"problems": problems, "spec": spec,
                                                             "repeats": repeats}]])[1]
        native.append(n["us_per_solve"])
        native_auto.append(pg.native_calls([["addModel", model], ["bench", {
            "problems": problems, "spec": spec, "repeats": repeats}]], isa="auto")[1]["us_per_solve"])
        check(n["converged"] == r["converged"], f"the native bench converged as often ({n['converged']})")
    ratio = sorted(page)[0] / sorted(native)[0]
    rates = [frame_rate(pg, f"random {CHAIN_DOF}-DOF chain, position goals", FPS_SPECS)]
    pg.js("window.ikbenchPlayground.loadModel('iiwa14')")
    pg.js("window.ikbenchPlayground.setScene('workcell')")
    rates.append(frame_rate(pg, "iiwa14 in the workcell, pose goals", FPS_SCENE_SPECS))
    pg.js("window.ikbenchPlayground.setScene('')")
    load = Path("/proc/loadavg").read_text().split()[0]
    print(f"7-DOF pose dls, us per solve ({count} problems x {repeats}, interleaved page/native): page {page}, "
          f"native with the portable kernel {native}, with this CPU's best kernel {native_auto}; best-of ratio "
          f"page/native portable {ratio:.2f}, page/native best {min(page) / min(native_auto):.2f} (load average {load}; "
          f"not asserted)")
    (work / "measure.json").write_text(json.dumps({"page_us": page, "native_portable_us": native,
                                                   "native_auto_us": native_auto, "frame_rates": rates,
                                                   "load1": load}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work", nargs="?", default=None)
    ap.add_argument("--native", required=True)
    ap.add_argument("--screenshot", default=None, help="also save a small screenshot here (docs/playground.png)")
    a = ap.parse_args()
    cli = os.environ.get("IKBENCH_CLI")
    if not cli or not os.access(cli, os.X_OK):
        skip("IKBENCH_CLI does not name the ikbench binary")
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="ikbench-playground-"))
    work.mkdir(parents=True, exist_ok=True)
    page = work / "playground.html"
    run = mesh_run(cli, work)
    p = subprocess.run([cli, "playground", "--out", str(page), "--run", str(run)], capture_output=True, text=True,
                       timeout=600)
    if p.returncode == 2 and "WebAssembly module" in p.stderr + p.stdout:
        skip(f"this build has no playground module: {(p.stderr + p.stdout).strip()[:300]}")
    if p.returncode != 0:
        print(p.stdout + p.stderr)
        return 1
    print(f"page: {page} ({page.stat().st_size / 1e6:.1f} MB)")
    d = rb.start_browser(work / "profile")
    try:
        d.set_window_size(1400, 900)
        d.get(page.as_uri())
        ready = rb.wait(d, lambda: d.execute_script(
            "return document.body.getAttribute('data-playground-ready') === '1' && window.ikbenchPlayground.state.frame > 2"),
            "the page to start", timeout=120)
        if not check(bool(ready), "the page starts (the WebAssembly module loads, frames are drawn)"):
            print([e["message"][:300] for e in d.get_log("browser")][:5])
            return 1
        pg = Playground(d, a.native, work)
        st = pg.state()
        check(st["model"]["key"] == "ur5" and st["kind"] == "pose",
              f"the first model is the UR5 with pose goals ({st['model']}, {st['kind']})")
        check(any(n.startswith("ceres") for n in st["absent"]) and any(n.startswith("kdl") for n in st["absent"]),
              f"the page names the backends it lacks: {st['absent']}")
        check_defaults_and_labels(pg)
        drag_and_check(pg, "UR5", UR5_SPECS, [(50, -30), (-40, 60)])
        check_lambda_step(pg)
        check_scene(pg)
        check_run_model(pg, run)
        # The chain with position goals: a dragged pose target of a random 7R chain (random axes, a
        # fixed orientation) often leaves its dexterous workspace; a position target within reach
        # does not.
        pg.js("window.ikbenchPlayground.loadModel('random-chain', arguments[0], arguments[1])", CHAIN_DOF, CHAIN_SEED)
        pg.js("window.ikbenchPlayground.setKind('position')")
        pg.frames_after(3)
        st = pg.state()
        check(st["model"]["nv"] == CHAIN_DOF and st["kind"] == "position",
              f"a {CHAIN_DOF}-DOF random chain with position goals ({st['model']}, {st['kind']})")
        drag_and_check(pg, f"random {CHAIN_DOF}-DOF chain", CHAIN_SPECS, [(60, 30), (-30, -70)])
        measure(pg, work)
        if a.screenshot:
            d.set_window_size(1200, 760)
            time.sleep(0.5)
            pg.js("window.ikbenchPlayground.loadModel('ur5')")
            pg.js("window.ikbenchPlayground.setScene('workcell')")
            pg.js("window.ikbenchPlayground.setShowShapes(false)")
            pg.js("window.ikbenchPlayground.setMargin(0.01)")
            pg.js("window.ikbenchPlayground.setSpecs(['dls', 'ccd', 'fabrik', 'auto'])")
            pg.js("window.ikbenchPlayground.newTarget(3)")
            pg.frames_after(2)
            pg.drag(0, 30, -20)
            pg.frames_after(3)
            pg.js("document.querySelector('aside').scrollTop = 0")
            time.sleep(1)
            shot = work / "playground-full.png"
            d.save_screenshot(str(shot))
            from PIL import Image

            Image.open(shot).convert("RGB").quantize(colors=128).save(a.screenshot, optimize=True)
            print(f"screenshot: {a.screenshot}")
        st = pg.state()
        log = d.get_log("browser")
        check(not severe(log) and not st["errors"], f"no errors in the browser console "
              f"({len(severe(log))} errors, the first {[e['message'][:200] for e in severe(log)[:3]]}; "
              f"page errors {st['errors'][:2]})")
        d.save_screenshot(str(work / "playground.png"))
    finally:
        d.quit()
    if rb.failures:
        print(f"{len(rb.failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
