#!/usr/bin/env python3
"""report.html in a real browser: writes the report of a small run of the harness, opens it in
headless Chromium through selenium and checks what the page does.

    IKBENCH_CLI=build/release/benchmarks/ikbench /usr/bin/python3 tests/report/browser_test.py [WORK_DIR]

Checks: the page reaches data-ikbench-ready="1" with no error in the browser's console log; the
solve viewer draws every joint of the model (joint markers = the model's joints, for a URDF arm,
a random chain, a tree and the BVH skeleton's clip); moving the slider changes the drawn
configuration; on converged solves the last frame's drawn effector is at the target of
problems.jsonl within 1e-6 m (a URDF arm, a chain, a tree, a clip frame of the BVH skeleton);
on a solve of `solutions=all` (ur5-pose), the viewer's selector lists solutions 0..k-1 and draws
each from its q (solutions.csv), and on every frame what the status line claims (converged, not
converged, in progress) agrees with the error of the drawn configuration; a skeleton's free root
is drawn without a bone from the world origin; a table's CSV button makes a CSV of the table's
figures; sorting the summary table by a column reorders it; the filter and the n/a switch work;
the headline of a synthetic run (tests/python/synth.py) in a 1280 px window shows two equal specs
as a tie, names no winner where nothing succeeded, and needs no sideways scroll. A
screenshot of the page and one of the viewer are saved in WORK_DIR (default: a directory beside
this file's build, see tests/report/report_tests.cmake).

Exit status: 0 passed, 1 failed (each failure printed), 77 skipped (ctest SKIP_RETURN_CODE) with
a line saying why: no harness binary, no selenium, no Chromium or chromedriver, or Chromium cannot
start here.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "python"))

SKIP = 77
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               # WebGL (plotly's scatter3d) on the software rasteriser without the deprecation warning
               "--enable-unsafe-swiftshader", "--window-size=1400,1000"]
ALL_SPEC = "auto:solutions=all:restarts=10:time_budget_us=0"   # several solutions per solve, and restarts
SOLVERS = "dls,sdls,lm,ccd,fabrik,kdl-lma," + ALL_SPEC
TRACE_PROBLEMS = 6
EFFECTOR_TOL = 1e-6      # m: drawn effector vs target on a converged solve
CONVERGED_BELOW = 1e-7   # m: solves picked for that check have a position error below this
TIMEOUT = 300          # s: the page's first drawing
STEP_TIMEOUT = 90      # s: one redraw of the viewer

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def skip(why):
    print(f"SKIP: {why}", flush=True)
    sys.exit(SKIP)


def make_report(cli, work):
    run_dir = work / "run"
    cmd = [cli, "run", "--suite", "quick", "--solvers", SOLVERS, "--threads", "2", "--trace-problems",
           str(TRACE_PROBLEMS), "--out", str(run_dir), "--force", "--progress", "none", "--no-summary"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        print(p.stdout + p.stderr)
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited with {p.returncode}")
    page = work / "report.html"
    t0 = time.monotonic()
    p = subprocess.run([cli, "report", str(run_dir), "--out", str(page), "--trace-problems", str(TRACE_PROBLEMS)],
                       capture_output=True, text=True,
                       timeout=1800)
    if p.returncode != 0 or not page.exists():
        print(p.stdout + p.stderr)
        raise SystemExit(f"FAIL: ikbench report exited with {p.returncode}")
    print(f"report: {page} ({page.stat().st_size / 1e6:.1f} MB in {time.monotonic() - t0:.1f} s)", flush=True)
    return run_dir, page


def start_browser(profile):
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError as e:
        skip(f"selenium is not installed ({e}); apt-get install python3-selenium")
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not os.access(exe, os.X_OK):
            skip(f"{exe} not found; apt-get install chromium chromium-driver")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in CHROME_ARGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    except WebDriverException as e:
        first = (getattr(e, "msg", None) or str(e)).strip().splitlines()[0]
        skip(f"Chromium cannot start here: {first[:300]}")


def severe(entries):
    return [e for e in entries if e.get("level") == "SEVERE"]


def wait(d, cond, what, timeout=TIMEOUT):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            v = cond()
            if v:
                return v
        except Exception:  # noqa: BLE001 (the page may be between states)
            pass
        time.sleep(0.2)
    check(False, f"timed out after {timeout} s waiting for {what}")
    return None


class Page:
    def __init__(self, d, data, models, problems):
        self.d, self.data, self.models, self.problems = d, data, models, problems

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def drawn(self):
        return self.js("return document.getElementById('solve-viewer').getAttribute('data-drawn')")

    def plot_traces(self):
        """The 3D plot's traces as drawn (plotly's gd.data): name, scene, x, y, z."""
        return self.js("""return document.getElementById('viewer-3d').data.map(function (t) {
            return {name: t.name, scene: t.scene, x: t.x, y: t.y, z: t.z}; });""")

    def select(self, element_id, value):
        from selenium.webdriver.support.ui import Select

        Select(self.d.find_element("id", element_id)).select_by_value(str(value))

    def state(self):
        return self.js("return window.ikbench.viewer.state()")

    def wait_drawn(self, family, problem, solvers, frame=None):
        key = f"{family}|{'' if problem is None else problem}|{','.join(solvers)}|"
        return wait(self.d, lambda: (self.drawn() or "").startswith(key) and
                    (frame is None or self.drawn() == key + str(frame)), f"the viewer to draw {key}{frame}",
                    timeout=STEP_TIMEOUT)

    def pick(self, family, problem, solvers):
        """Through the controls: the family, the problem (trace families), then exactly `solvers`."""
        self.select("viewer-family", family)
        if problem is not None:
            self.select("viewer-problem", problem)
        def boxes():  # the picker is rebuilt after each click: find the boxes again every time
            return {b.get_attribute("value"): b for b in
                    self.d.find_elements("css selector", "#viewer-solvers input[type=checkbox]")}

        for _ in range(8):
            extra = [v for v, b in boxes().items() if v not in solvers and b.is_selected()]
            if not extra:
                break
            boxes()[extra[0]].click()
        for s in solvers:
            b = boxes().get(s)
            if not check(b is not None, f"viewer offers solver {s} on {family}"):
                return False
            if not b.is_selected():
                b.click()
        st = self.state()
        return self.wait_drawn(family, problem, st["solvers"])

    def slider_key(self, key, times=1):
        s = self.d.find_element("id", "viewer-slider")
        for _ in range(times):
            s.send_keys(key)


def open_ready(d, page_path, width, height, what):
    """Opens the page in a window of width x height px and waits until it marks itself ready
    (data-ikbench-ready="1"); a failed check named `what` when it does not."""
    d.set_window_size(width, height)
    d.get(page_path.resolve().as_uri())
    if wait(d, lambda: d.find_element("tag name", "body").get_attribute("data-ikbench-ready") == "1", what):
        return True
    check(False, what)
    return False


def viewer_model(page, family, problem):
    rec = page.problems[(family, 0 if problem is None else problem)]
    return page.models[rec["model"]], rec


def check_joints(page, family, problem):
    st = page.state()
    model, _ = viewer_model(page, family, problem)
    joints = [t for t in page.plot_traces() if t["name"] == "joints"]
    check(len(joints) == len(st["solvers"]) and all(len(t["x"]) == len(model["joints"]) for t in joints),
          f"{family}: {len(joints)} views draw {[len(t['x']) for t in joints]} joint markers, the model has "
          f"{len(model['joints'])} joints ({len(st['solvers'])} views)")


def check_slider_moves(page, family):
    from selenium.webdriver.common.keys import Keys

    st = page.state()
    page.slider_key(Keys.HOME)
    page.wait_drawn(family, st["problem"], st["solvers"], 0)
    first = [t for t in page.plot_traces() if t["name"] == "joints"]
    page.slider_key(Keys.END)
    last_frame = len(st["frames"]) - 1
    page.wait_drawn(family, st["problem"], st["solvers"], last_frame)
    last = [t for t in page.plot_traces() if t["name"] == "joints"]
    moved = any(a["x"] != b["x"] or a["y"] != b["y"] or a["z"] != b["z"] for a, b in zip(first, last))
    check(last_frame > 0 and moved,
          f"{family}: moving the slider from frame 0 to {last_frame} changes the drawn joints")


def check_effector_at_target(page, family, problem, solver, frame_keys):
    """Drawn effectors of the only view vs problems.jsonl's targets."""
    _, rec = viewer_model(page, family, problem)
    eff = [t for t in page.plot_traces() if t["name"] == "effector"]
    if not check(len(eff) == 1, f"{family}/{problem} {solver}: one effector trace drawn"):
        return
    e = eff[0]
    worst = 0.0
    for i, g in enumerate(rec["goals"]):
        if g["kind"] == "orientation":
            continue
        for k, axis in enumerate("xyz"):
            worst = max(worst, abs(e[axis][i] - g["target_position"][k]))
    check(worst <= EFFECTOR_TOL, f"{family}/{problem} {solver} ({frame_keys}): drawn effector within "
                                 f"{worst:.2e} m of the target (<= {EFFECTOR_TOL:g})")


def within(pe, oe, tol, slack):
    """Every error of the drawing within the tolerances, scaled by `slack` (1 +- 1e-9: the page's
    FK and the analysis library's round differently in the last bits)."""
    return (pe is None or pe <= tol[0] * slack) and (oe is None or oe <= tol[1] * slack)


def frame_states(page):
    """The first view's state on every frame of the viewer, moving the slider through them all."""
    page.d.set_script_timeout(STEP_TIMEOUT)
    return page.d.execute_async_script("""
        var done = arguments[arguments.length - 1], V = window.ikbench.viewer, n = V.state().frames.length, out = [];
        (function step(i) {
          if (i >= n) { done(out); return; }
          Promise.resolve(V.setFrame(i)).then(function () { out.push(V.state().views[0]); step(i + 1); },
                                              function (e) { done(String(e)); });
        })(0);""")


def check_viewer_truth(page, run, family, embedded):
    """The solve of ALL_SPEC with the most solutions among the embedded problems of `family`: the
    selector lists solutions 0..k-1, each drawn on the last frame from its q in solutions.csv
    (solution 0: solves.csv's q), converged, on the target; on every frame the status line's claim
    agrees with the drawing (converged <=> the drawn effector within tolerance) and no attempt
    that ended away from the target is labelled converged."""
    from selenium.webdriver.support.ui import Select

    from ikbench.io.results import parse_q

    s = run.solves
    c = s[(s["family"] == family) & (s["solver"] == ALL_SPEC) & s["problem"].isin(shown_problems(run, family, embedded))]
    if not check(not c.empty and int(c["solutions"].max()) > 1, f"{family}: a solve of {ALL_SPEC} with several solutions"):
        return
    r = c.sort_values(["solutions", "problem"], ascending=[False, True]).iloc[0]
    problem, k = int(r["problem"]), int(r["solutions"])
    page.pick(family, problem, [ALL_SPEC])
    tol = page.state()["tolerances"]
    opts = page.js("return Array.prototype.map.call(document.querySelectorAll("
                   "'#viewer-status select.viewer-solution option'), function (o) { return o.value; })")
    check(opts == [str(i) for i in range(k)], f"{family}/{problem}: the solution selector lists 0..{k - 1} ({opts})")
    sol = run.solutions
    rows = sol[(sol["family"] == family) & (sol["problem"] == problem) & (sol["solver"] == ALL_SPEC)]
    qs = {int(x["solution"]): parse_q(x["q"]) for _, x in rows.iterrows()}
    check(list(qs[0]) == list(parse_q(r["q"])), f"{family}/{problem}: solutions.csv's solution 0 is solves.csv's q")
    last = len(page.state()["frames"]) - 1
    for j in range(k):
        Select(page.d.find_element("css selector", "#viewer-status select.viewer-solution")).select_by_value(str(j))
        page.wait_drawn(family, problem, [ALL_SPEC], last)
        wait(page.d, lambda: page.state()["views"][0]["solution"] == j, f"solution {j} drawn", timeout=STEP_TIMEOUT)
        v = page.state()["views"][0]
        check(v["q"] == list(qs[j]), f"{family}/{problem}: solution {j} is drawn from its q in solutions.csv")
        check(v["claim"] == "converged" and within(v["position_error"], v["orientation_error"], tol, 1 + 1e-9),
              f"{family}/{problem}: solution {j} labelled {v['claim']!r}, drawn error {v['position_error']:.2e} m, "
              f"{v['orientation_error']:.2e} rad")
    Select(page.d.find_element("css selector", "#viewer-status select.viewer-solution")).select_by_value("0")
    wait(page.d, lambda: page.state()["views"][0]["solution"] == 0, "solution 0 drawn", timeout=STEP_TIMEOUT)
    states = frame_states(page)
    if not check(isinstance(states, list) and len(states) == last + 1, f"{family}/{problem}: every frame drawn"):
        return
    bad = []
    for n, v in enumerate(states):
        ok = within(v["position_error"], v["orientation_error"], tol, 1 + 1e-9)
        strict = within(v["position_error"], v["orientation_error"], tol, 1 - 1e-9)
        if (v["claim"] == "converged" and not ok) or (v["claim"] == "not converged" and strict) or \
                (v["claim"] != "converged" and ": converged" in v["label"].split(";")[0]):
            bad.append((n, v["claim"], v["label"], v["position_error"]))
    check(not bad, f"{family}/{problem}: on all {len(states)} frames the status line agrees with the drawing {bad[:3]}")
    ended = [v for v in states if v["claim"] == "not converged"]
    check(any("ended at" in v["label"] for v in ended) or not ended,
          f"{family}/{problem}: an attempt that did not converge says where it ended")
    check(states[-1]["drawn"] == "result" and states[-1]["solution"] == 0 and states[-1]["claim"] == "converged" and
          states[-1]["q"] == list(qs[0]),
          f"{family}/{problem}: the last frame draws the returned q, converged ({states[-1]['label']!r})")
    text = page.d.find_element("css selector", "#viewer-status div").text
    check(states[-1]["label"] in text, f"{family}/{problem}: the status line shows the label of the drawing")


def check_free_root(page, family):
    """A skeleton whose root is a free joint: the root is drawn where it is, and no bone starts at
    the world origin."""
    joints = [t for t in page.plot_traces() if t["name"] == "joints"]
    links = [t for t in page.plot_traces() if t["name"] == "links"]
    if not check(joints and links, f"{family}: joints and links drawn"):
        return
    root = [joints[0][a][0] for a in "xyz"]
    pts = [(x, y, z) for x, y, z in zip(links[0]["x"], links[0]["y"], links[0]["z"]) if x is not None]
    at_origin = [p for p in pts if max(abs(c) for c in p) < 1e-9]
    check(max(abs(c) for c in root) > 1e-3 and not at_origin,
          f"{family}: the free root is drawn at {[round(c, 3) for c in root]}, no bone from the world origin "
          f"({len(at_origin)} link points at it)")


def check_csv(page, data):
    """The summary table's CSV button: a Blob of text/csv whose rows are the table's figures."""
    import io

    import pandas as pd

    page.js("""window._csvBlobs = []; var f = URL.createObjectURL;
               URL.createObjectURL = function (b) { window._csvBlobs.push(b); return f.call(URL, b); };""")
    buttons = page.js("return Array.prototype.map.call(document.querySelectorAll('button.csv'),"
                      " function (b) { return b.getAttribute('data-table'); })")
    check({"headline", "summary", "families"} <= set(buttons), f"CSV buttons on the tables ({buttons})")
    b = page.d.find_element("css selector", "button.csv[data-table='summary']")
    page.d.execute_script("arguments[0].scrollIntoView()", b)
    b.click()
    page.d.set_script_timeout(STEP_TIMEOUT)
    got = page.d.execute_async_script("""var done = arguments[arguments.length - 1], b = window._csvBlobs[0];
        if (!b) { done(null); return; } b.text().then(function (t) { done([b.type, t]); });""")
    if not check(got is not None and got[0].startswith("text/csv"), f"the CSV button makes a text/csv Blob ({got and got[0]})"):
        return
    df = pd.read_csv(io.StringIO(got[1]), keep_default_na=False, na_values=[""], float_precision="round_trip")
    cols = data["summary"]["columns"]
    rows = data["summary"]["rows"]
    rate = [r[cols.index("success_rate")] for r in rows]
    same = len(df) == len(rows) and all((a is None and pd.isna(b)) or (a is not None and float(a) == float(b))
                                         for a, b in zip(rate, df["success_rate"]))
    check(same and list(df["family"]) == [r[0] for r in rows] and list(df["solver"]) == [r[1] for r in rows],
          f"the summary CSV has the table's {len(rows)} rows and exact success rates ({len(df)} rows)")
    head = page.js("return window.ikbench.csv('headline')")
    check(len(pd.read_csv(io.StringIO(head))) == len(data["headline"]), "the headline CSV has a row per family")


def check_figures(d, data):
    """The heatmap, the per-family success bars and box plots, and the section per solver spec are
    drawn from the page's data."""
    d.execute_script("return window.ikbench.drawAll()")
    hm = d.execute_script("var p = document.getElementById('heatmap-plot'); return p.data && "
                          "p.data.map(function (t) { return [t.type, t.y.length, t.x.length]; })")
    cells = data["figures"]["heatmap"]["cells"]
    check(hm == [["heatmap", len(data["solvers"]), len(data["families"])], ["scatter", len(cells), len(cells)]],
          f"the solver x family heatmap is drawn with a text per cell ({hm})")
    fam = d.execute_script("return document.getElementById('family-select').value")
    boxes = d.execute_script("var p = document.getElementById('box-plot'); return p.data && "
                             "p.data.map(function (t) { return t.type + ':' + t.name; })")
    want = [f"box:{s}" for s in data["figures"]["boxes"][fam]["boxes"]["solver"]]
    check(boxes == want, f"{fam}: a box plot of the solve times per spec ({len(boxes or [])} boxes)")
    bars = d.execute_script("var p = document.getElementById('success-plot'); return p.data && p.data[0].x")
    check(bars == data["figures"]["success"][fam]["data"][0]["x"], f"{fam}: success bars per spec")
    sec = data["solver_sections"][-1]
    d.execute_script("var s = document.getElementById('solver-select'); s.value = arguments[0]; "
                     "s.dispatchEvent(new Event('change'))", sec["spec"])
    keys = d.execute_script("return Array.prototype.map.call(document.querySelectorAll('#solver-parameters tbody tr'),"
                            " function (r) { return r.getAttribute('data-key'); })")
    check(keys == [k for k, _ in sec["parameters"]] and len(keys) > 0,
          f"the section of {sec['spec']} lists its parameters ({keys})")
    values = d.execute_script("return Array.prototype.map.call(document.querySelectorAll('#solver-parameters tbody tr'),"
                              " function (r) { return r.children[1].textContent; })")
    check(values == sec["parameter_texts"] and "default (none)" not in values,
          f"the section of {sec['spec']} shows each setting's value in force ({values})")
    fams = d.execute_script("return Array.prototype.map.call(document.querySelectorAll('#solver-families tbody tr'),"
                            " function (r) { return r.getAttribute('data-family'); })")
    check(fams == [r["family"] for r in sec["families"]], f"the section of {sec['spec']} has a row per family")


LAYOUT_FIGURES = ["headline-chart", "heatmap-plot", "success-plot", "box-plot", "convergence-plot", "ecdf-plot",
                  "iterations-plot", "dof-plot", "solver-convergence"]


def check_layout(d, page_path, data):
    """The page in a 1280 x 900 window: it is ready with the first screen drawn and the figures
    further down not yet (drawn when scrolled to); the heatmap draws each cell's median time (or
    n/a) as text; a long spec is drawn by its abbreviation with a key to the spec; in every figure
    no two texts (tick labels, axis titles, annotations) overlap and none is clipped; the box plot
    keeps more than half its height for the data."""
    if not open_ready(d, page_path, 1280, 900, "the page got ready in a 1280 x 900 window"):
        return
    lazy = d.execute_script("""var q = Array.from(document.querySelectorAll('[data-lazy="queued"]'));
      return [document.getElementById('headline-chart').getAttribute('data-lazy'),
              !!document.querySelector('#headline-chart .main-svg'), q.map(function (e) { return e.id; }),
              q.some(function (e) { return !!e.querySelector('.main-svg'); }), window.ikbenchTimes];""")
    check(lazy[0] is None and lazy[1] and len(lazy[2]) >= 3 and not lazy[3],
          f"ready with the first screen drawn, the figures further down queued until scrolled to ({lazy})")
    if lazy[2]:
        last = lazy[2][-1]
        d.execute_script("document.getElementById(arguments[0]).scrollIntoView()", last)
        drawn = wait(d, lambda: d.execute_script("var e = document.getElementById(arguments[0]); return "
                                                 "e.getAttribute('data-lazy') === 'drawn' && !!e.querySelector('.main-svg')",
                                                 last), f"{last} drawn after scrolling", timeout=STEP_TIMEOUT)
        check(bool(drawn), f"scrolling to the queued figure {last} draws it")
    d.execute_script("return window.ikbench.drawAll()")
    time.sleep(1)
    texts = d.execute_script("""var p = document.getElementById('heatmap-plot');
      return Array.from(p.querySelectorAll('.textpoint text')).map(function (t) { return t.textContent; });""")
    cells = data["figures"]["heatmap"]["cells"]
    want = sorted(c.get("text") or "n/a" for c in cells)
    check(sorted(texts) == want and any(t != "n/a" for t in texts),
          f"the heatmap draws the median time or n/a in each of its {len(cells)} cells ({len(texts)} texts)")
    long = [s for s in data["solvers"] if s["label"] != s["spec"]]
    ticks = d.execute_script("return Array.from(document.querySelectorAll('#heatmap-plot .ytick text'))"
                             ".map(function (t) { return t.textContent; })")
    key = d.execute_script("return Array.from(document.querySelectorAll('#heatmap-key .key')).map(function (k) "
                           "{ return [k.getAttribute('data-label'), k.getAttribute('data-spec')]; })")
    check(long and all(s["label"] in ticks and s["spec"] not in ticks for s in long) and
          sorted(key) == sorted([s["label"], s["spec"]] for s in long),
          f"long specs are drawn abbreviated, with the key beside the heatmap ({key})")
    boxes = Path(__file__).with_name("text_boxes.js").read_text(encoding="utf-8")
    for fam in (data["families"][0]["name"], data["families"][-1]["name"]):
        page_family(d, fam)
        time.sleep(1)
        found = d.execute_script(boxes, LAYOUT_FIGURES)
        for fig, r in found.items():
            if r is None or not r["texts"]:
                continue
            check(r["n_overlaps"] == 0 and not r["clipped"],
                  f"{fam}: {fig}: {r['texts']} texts, none overlapping ({r['overlaps']}) nor clipped ({r['clipped']})")
        share = d.execute_script("var l = document.getElementById('box-plot')._fullLayout; return l._size.h / l.height")
        check(share > 0.5, f"{fam}: the box plot keeps {share:.0%} of its height for the data")
    d.set_window_size(1400, 1000)


def page_family(d, fam):
    d.execute_script("var s = document.getElementById('family-select'); s.value = arguments[0]; "
                     "s.dispatchEvent(new Event('change')); return window.ikbench.drawAll()", fam)


def shown_problems(run, family, embedded):
    """The problems of `family` the viewer embeds: the first `embedded` of the run's traced sample
    (report.embedded_problems), or the first `embedded` problems of an untraced family."""
    from ikbench.render import report

    keys = run.traces[["family", "problem"]].drop_duplicates()
    shown = report.embedded_problems(run, zip(keys["family"].astype(str), keys["problem"]), embedded)
    return sorted(shown.get(family, set(range(embedded))))


def converged_solve(run, family, embedded, traced_only=True):
    """A converged solve of `family` among its embedded problems whose error is far below the
    tolerance in solves.csv and at the trace's last record."""
    s = run.solves
    c = s[(s["family"] == family) & s["problem"].isin(shown_problems(run, family, embedded)) & s["converged"] &
          s["within_limits"] &
          (s["position_error"] <= CONVERGED_BELOW)]
    tr = run.traces
    for r in c.itertuples():
        if r.solver not in SOLVERS.split(","):
            continue
        t = tr[(tr["family"] == family) & (tr["problem"] == r.problem) & (tr["solver"] == r.solver)]
        if traced_only and (t.empty or t["position_error"].iloc[-1] > CONVERGED_BELOW):
            continue
        return int(r.problem), r.solver
    return None


def check_headline(d, work):
    """The headline of a run built to hold a tie and a family without a success (synthetic
    results, tests/python/synth.py), in a window 1280 px wide: the tied specs are named as a tie,
    the family where nothing succeeded names no winner, and the table needs no sideways scroll."""
    sys.path.insert(0, str(REPO / "tests" / "python"))
    import synth

    def nothing_on_pose(rows):
        for r in rows:
            if r["family"] == "planar-pose" and r["status"] == "converged":
                r["status"], r["converged"] = "max-iterations", "0"

    solvers = {"dls": (1.0, 1.0, (5, 9)), "dls:lambda=0.2": (1.0, 1.0, (5, 9)), "jt": (0.6, 9.0, (40, 90))}
    run_dir = synth.make_run(work / "headline-run", solvers=solvers, problems=40, unsupported=(),
                             edit_rows=nothing_on_pose)
    page_path = work / "headline.html"
    from ikbench import cli as ikb_cli
    rc = ikb_cli.main(["report", str(run_dir), "--out", str(page_path)])
    if not check(rc == 0 and page_path.exists(), f"ikbench report of the synthetic headline run (exit {rc})"):
        return
    if not open_ready(d, page_path, 1280, 1000, "the synthetic headline page got ready"):
        return
    rows = d.execute_script("""
      return Array.from(document.querySelectorAll('#headline-table tbody tr')).map(function (tr) {
        var lead = tr.querySelector('td.leaders');
        return {family: tr.getAttribute('data-family'), verdict: tr.getAttribute('data-verdict'), text: tr.innerText,
                leaders: lead ? Array.from(lead.querySelectorAll('.leader')).map(function (s) { return s.innerText.trim(); })
                              : []};
      });""")
    by = {r["family"]: r for r in rows}
    pos, pose = by.get("planar-position"), by.get("planar-pose")
    check(pos is not None and sorted(pos["leaders"]) == ["dls", "dls:lambda=0.2"] and "tie of 2" in pos["text"],
          f"headline: two specs at 100 % with the same times are a tie, the slower jt is not a leader "
          f"({pos and pos['leaders']}, {pos and pos['text'][:100]!r})")
    check(pose is not None and pose["verdict"] == "no success" and "no winner" in pose["text"] and not pose["leaders"],
          f"headline: a family where no spec succeeded names no winner ({pose and pose['text'][:120]!r})")
    widths = d.execute_script("""
      var t = document.getElementById('headline-table');
      return [t.scrollWidth, t.parentElement.clientWidth, document.documentElement.scrollWidth, window.innerWidth];""")
    check(widths[0] <= widths[1] + 1 and widths[2] <= widths[3] + 1,
          f"headline: fits a 1280 px window without sideways scrolling (table {widths[0]} in {widths[1]}, "
          f"page {widths[2]} in {widths[3]})")
    d.set_window_size(1400, 1000)


def main():
    cli = os.environ.get("IKBENCH_CLI")
    if not cli or not os.access(cli, os.X_OK):
        skip("IKBENCH_CLI does not name the built harness (ctest sets it when the ikbench target is built)")
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="ikbench-report-"))
    work.mkdir(parents=True, exist_ok=True)
    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
    d = start_browser(profile)  # skips (77) when Chromium cannot run, before the run is made
    try:
        run_dir, page_path = make_report(cli, work)
        return browse(d, run_dir, page_path, work)
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


def browse(d, run_dir, page_path, work):
    from selenium.webdriver.common.keys import Keys

    from ikbench.render import report
    from ikbench.io import results

    run = results.load(run_dir)
    data = report.extract_data(page_path.read_text(encoding="utf-8"))
    def text(name):  # a file of the run, NAME.gz (as the harness writes it) or NAME
        return results.read_run_file(results.run_file(run_dir, name), name)[1].decode("utf-8")

    models = json.loads(text("models.json"))["models"]
    models = {m["id"]: m for m in models}
    problems = {}
    for line in text("problems.jsonl").splitlines():
        r = json.loads(line)
        problems[(r["family"], r["problem"])] = r

    t0 = time.monotonic()
    d.get(page_path.resolve().as_uri())
    ready = wait(d, lambda: d.find_element("tag name", "body").get_attribute("data-ikbench-ready") != "0",
                 "data-ikbench-ready")
    state = d.find_element("tag name", "body").get_attribute("data-ikbench-ready")
    check(state == "1", f"page ready (data-ikbench-ready={state!r}) after {time.monotonic() - t0:.1f} s")
    if not ready:
        return 1
    log = d.get_log("browser")
    check(not severe(log), f"no errors in the browser console ({[e['message'][:200] for e in severe(log)]})")
    check(d.execute_script("return window.ikbenchErrors.length") == 0, "no script errors caught by the page")
    page = Page(d, data, models, problems)
    d.execute_script("document.getElementById('solve-viewer').scrollIntoView()")

    # the viewer on each kind of model: URDF arm, random chain, tree (trace mode), BVH skeleton (clip)
    fams = {f["name"]: f for f in data["families"]}
    embedded = data["embedding"]["trace_problems"]
    for family in ("ur5-pose", "chain6-position", "chain7-pose", "tree3-position", "humanoid-tracking"):
        if not check(family in fams and family in data["viewer"]["families"], f"viewer has family {family}"):
            continue
        clip = data["viewer"]["families"][family]["mode"] == "clip"
        page.select("viewer-family", family)
        st = wait(d, lambda: page.state() if page.state()["family"] == family else None, f"family {family}",
                  timeout=STEP_TIMEOUT)
        page.wait_drawn(family, st["problem"], st["solvers"])
        check_joints(page, family, None if clip else st["problem"])
        check_slider_moves(page, family)
        if clip:
            s = run.solves
            c = s[(s["family"] == family) & s["converged"] & (s["position_error"] <= CONVERGED_BELOW) &
                  (s["problem"] > 0) & (s["problem"] < data["embedding"]["clip_frames"])]
            if not check(not c.empty, f"{family}: a clip frame converged below {CONVERGED_BELOW:g} m"):
                continue
            r = c.iloc[0]
            page.pick(family, None, [r["solver"]])
            page.slider_key(Keys.HOME)
            page.wait_drawn(family, None, [r["solver"]], 0)
            frame = int(r["problem"])  # frames are the problems in order
            page.slider_key(Keys.ARROW_RIGHT, frame)
            page.wait_drawn(family, None, [r["solver"]], frame)
            check_effector_at_target(page, family, frame, r["solver"], f"clip frame {frame}")
            check_free_root(page, family)
            continue
        pick = converged_solve(run, family, embedded)
        if not check(pick is not None, f"{family}: a traced solve converged below {CONVERGED_BELOW:g} m"):
            continue
        problem, solver = pick
        page.pick(family, problem, [solver])
        check_joints(page, family, problem)
        page.slider_key(Keys.END)
        st = page.state()
        page.wait_drawn(family, problem, [solver], len(st["frames"]) - 1)
        check_effector_at_target(page, family, problem, solver, f"last frame, iteration {st['frames'][-1]}")
    check_viewer_truth(page, run, "ur5-pose", embedded)
    d.find_element("id", "viewer").screenshot(str(work / "report-viewer.png"))
    check_csv(page, data)

    # the summary table: sort, filter, n/a switch
    d.execute_script("document.getElementById('summary').scrollIntoView()")
    def table_rows():
        return d.execute_script("""return Array.prototype.map.call(
            document.querySelectorAll('#summary-table tbody tr'), function (tr) {
              var td = tr.querySelector("td[data-key='time_us_mean']");
              return {family: tr.dataset.family, solver: tr.dataset.solver, hidden: tr.hidden,
                      available: tr.dataset.available, mean: td ? td.getAttribute('data-value') : null}; });""")

    header = d.find_element("css selector", "#summary-table th[data-key='time_us_mean']")
    before = [(r["family"], r["solver"]) for r in table_rows() if not r["hidden"]]
    header.click()
    after = [r for r in table_rows() if not r["hidden"]]
    means = [float(r["mean"]) for r in after if r["mean"]]
    check(means == sorted(means) and len(means) > 10, f"sorted by mean time, ascending ({len(means)} rows)")
    check([(r["family"], r["solver"]) for r in after] != before, "sorting reordered the table")
    check(header.get_attribute("aria-sort") == "ascending", "the header shows the sort direction")
    header.click()
    means = [float(r["mean"]) for r in table_rows() if not r["hidden"] and r["mean"]]
    check(means == sorted(means, reverse=True), "a second click sorts descending")
    hidden_na = [r for r in table_rows() if r["available"] == "0"]
    check(hidden_na and all(r["hidden"] for r in hidden_na), f"{len(hidden_na)} n/a cells hidden by default")
    d.find_element("id", "summary-show-na").click()
    check(all(not r["hidden"] for r in table_rows() if r["available"] == "0"), "the switch shows the n/a cells")
    d.find_element("id", "summary-filter").send_keys("ur5 kdl")
    shown = [r for r in table_rows() if not r["hidden"]]
    check(len(shown) >= 1 and all("ur5" in r["family"] and "kdl" in r["solver"] for r in shown),
          f"the filter 'ur5 kdl' keeps {[(r['family'], r['solver']) for r in shown]}")

    check_figures(d, data)
    check_layout(d, page_path, data)
    check_headline(d, work)

    log = d.get_log("browser")
    check(not severe(log), f"no errors in the browser console after the interactions "
                           f"({[e['message'][:200] for e in severe(log)]})")
    height = d.execute_script("return document.body.scrollHeight")
    d.set_window_size(1400, min(int(height), 14000))
    time.sleep(1)
    d.save_screenshot(str(work / "report.png"))
    print(f"screenshots: {work / 'report.png'}, {work / 'report-viewer.png'}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
