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

Printed, not asserted (the machine is shared): a 7-DOF pose `dls` solve in the page against the
native one (interleaved page, native, page, native), and the frames per second with four specs on
a 7-DOF arm in path mode. Exit status: 0 passed, 1 failed, 77 skipped with the reason printed.
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
sys.path.insert(0, str(HERE.parent / "report"))
import browser_test as rb  # noqa: E402  (the report's browser helpers: check, skip, start_browser, wait)

check, skip, severe = rb.check, rb.skip, rb.severe
POS_TOL, ORI_TOL = 1e-5, 1e-5
UR5_SPECS = ["dls", "lm", "auto", "analytic-6r"]
CHAIN_SPECS = ["dls", "dls-adaptive", "sdls", "auto"]
FPS_SPECS = ["dls", "sdls", "ccd", "auto"]
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
    field = pg.d.find_element("id", "spec-1-param-lambda")
    field.clear()
    field.send_keys("1")
    pg.frames_after(2)
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
    pg.js("window.ikbenchPlayground.setSpecs(arguments[0])", FPS_SPECS)
    pg.js("window.ikbenchPlayground.setMode('path')")
    time.sleep(6)
    fps = []
    for _ in range(4):
        time.sleep(1.1)
        fps.append(round(pg.state()["fps"], 1))
    st = pg.state()
    check(all(s["max_jump"] > 0 for s in st["specs"]), "path mode moves the arm (joint jumps recorded: "
          f"{[round(s['max_jump'], 4) for s in st['specs']]})")
    load = Path("/proc/loadavg").read_text().split()[0]
    print(f"7-DOF pose dls, us per solve ({count} problems x {repeats}, interleaved page/native): page {page}, "
          f"native with the portable kernel {native}, with this CPU's best kernel {native_auto}; best-of ratio "
          f"page/native portable {ratio:.2f}, page/native best {min(page) / min(native_auto):.2f} (load average {load}; "
          f"not asserted)")
    print(f"frames per second, 4 specs ({', '.join(FPS_SPECS)}) on a 7-DOF chain, path mode, headless Chromium "
          f"(software WebGL): {fps} (load average {load}; not asserted)")
    (work / "measure.json").write_text(json.dumps({"page_us": page, "native_portable_us": native,
                                                   "native_auto_us": native_auto, "fps": fps,
                                                   "specs": FPS_SPECS, "load1": load}) + "\n")
    pg.js("window.ikbenchPlayground.setMode('live')")


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
    p = subprocess.run([cli, "playground", "--out", str(page)], capture_output=True, text=True, timeout=600)
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
            print([e["message"][:300] for e in d.get_log("browser")])
            return 1
        pg = Playground(d, a.native, work)
        st = pg.state()
        check(st["model"]["key"] == "ur5" and st["kind"] == "pose",
              f"the first model is the UR5 with pose goals ({st['model']}, {st['kind']})")
        check(any(n.startswith("ceres") for n in st["absent"]) and any(n.startswith("kdl") for n in st["absent"]),
              f"the page names the backends it lacks: {st['absent']}")
        drag_and_check(pg, "UR5", UR5_SPECS, [(50, -30), (-40, 60)])
        check_lambda_step(pg)
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
            pg.js("window.ikbenchPlayground.setSpecs(['dls', 'ccd', 'fabrik', 'auto'])")
            pg.frames_after(2)
            pg.drag(0, 40, 30)
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
              f"({[e['message'][:200] for e in severe(log)]}, page errors {st['errors'][:2]})")
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
