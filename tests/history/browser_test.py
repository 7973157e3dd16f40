#!/usr/bin/env python3
"""The published history site in a real browser: a store of 12 synthetic runs whose `dls` steps at
the 7th commit, published with `ikbench history publish`, opened in headless Chromium (selenium).

    /usr/bin/python3 tests/history/browser_test.py [WORK_DIR]

Checks: every page reaches data-ikbench-ready="1" with no error in the browser's console log and
loads nothing from the network; the index lists every series, its text filter, figure and machine
selects and "only series with a change point" switch narrow the rows; a spec page draws one plot
per family for the chosen figure, with the change point at the planted commit as a shape, and
redraws for another figure; a machine page lists the runs. A screenshot of each page is saved in
WORK_DIR.

Exit status: 0 passed, 1 failed (each failure printed), 77 skipped (ctest SKIP_RETURN_CODE) with a
line saying why: no selenium, no Chromium or chromedriver, or Chromium cannot start here.
"""

import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path[:0] = [str(HERE), str(REPO / "python"), str(REPO / "tests" / "python")]

SKIP = 77
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--window-size=1400,1000"]

failures = []


def external_refs(page):
    """Tags that load something from outside the site (an absolute URL): none may."""
    from html.parser import HTMLParser

    found = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            for k, v in attrs:
                if k in ("src", "href") and v and ("//" in v.split("#")[0] or v.startswith("data:") is False and
                                                   ":" in v.split("/")[0]):
                    found.append((tag, v))

    P().feed(page)
    return found


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def skip(why):
    print(f"SKIP: {why}", flush=True)
    sys.exit(SKIP)


def start_browser(profile):
    import os

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


def wait_ready(d, what, timeout=120):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if d.execute_script("return document.body && document.body.dataset.ikbenchReady") == "1":
            return True
        time.sleep(0.2)
    return check(False, f"{what}: ready within {timeout} s")


def console_errors(d):
    return [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]


def make_site(work):
    from conftest import sha, synthetic_run, write_gbench
    from ikbench.cli.main import main

    runs = []
    for i in range(12):
        dls = (0.95 if i < 6 else 0.5, 1.0 if i < 6 else 1.5, (5, 30))
        d = synthetic_run(work / "runs" / f"r{i:02d}", i, solvers={"dls": dls, "ccd": (0.6, 3.0, (20, 80))},
                          problems=40)
        write_gbench(d, 1.0 if i < 6 else 1.3)
        runs.append(str(d))
    db = work / "history.sqlite"
    db.unlink(missing_ok=True)   # a fresh store in a reused WORK_DIR
    db = str(db)
    if main(["history", "add", *runs, "--db", db]) != 0 or main(["history", "publish", str(work / "site"),
                                                                   "--db", db]) != 0:
        raise SystemExit("FAIL: ikbench history add / publish failed")
    return work / "site", sha(6)[:10]


def main(argv):
    work = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="ikbench-history-site-"))
    work.mkdir(parents=True, exist_ok=True)
    site, step_commit = make_site(work)
    data = json.loads((site / "series.json").read_text())
    n_series = len(data["series"])
    d = start_browser(work / "profile")
    try:
        pages = [site / "index.html", site / "changes.html"] + sorted((site / "spec").glob("*.html")) + \
            sorted((site / "machine").glob("*.html"))
        for page in pages:
            refs = external_refs(page.read_text())
            check(not refs, f"{page.relative_to(site)}: loads nothing from the network ({refs[:3]})")
        d.get(site.joinpath("index.html").as_uri())
        wait_ready(d, "index.html")
        rows = d.execute_script("return document.querySelectorAll('#series tbody tr').length")
        check(rows == n_series, f"index lists every series ({rows} rows, {n_series} series)")

        def shown():
            return d.execute_script("return [...document.querySelectorAll('#series tbody tr')]"
                                    ".filter(r => r.style.display !== 'none').length")

        def set_value(id_, value):
            d.execute_script("const e = document.getElementById(arguments[0]); "
                             "if (e.type === 'checkbox') e.checked = arguments[1]; else e.value = arguments[1]; "
                             "e.dispatchEvent(new Event('input'));", id_, value)

        set_value("filter", "ccd")
        n_ccd = sum(s["solver"] == "ccd" for s in data["series"])
        check(shown() == n_ccd, f"the filter 'ccd' shows the ccd series ({shown()} of {n_ccd})")
        set_value("filter", "")
        set_value("figure", "success_rate")
        n_sr = sum(s["figure"] == "success_rate" for s in data["series"])
        check(shown() == n_sr, f"the figure select shows the success-rate series ({shown()} of {n_sr})")
        set_value("figure", "")
        set_value("stepped", True)
        n_stepped = sum(bool(s["changes"]) for s in data["series"])
        check(0 < shown() == n_stepped, f"'only series with a change point' shows {shown()} of {n_stepped}")
        set_value("stepped", False)
        d.save_screenshot(str(work / "index.png"))
        check(not console_errors(d), f"index: no console error ({console_errors(d)[:2]})")

        dls = next(s for s in data["series"] if s["solver"] == "dls" and s["figure"] == "time_us_median")
        d.get(site.joinpath("spec", f"{dls['page']}.html").as_uri())
        wait_ready(d, "spec page of dls")
        plots = d.execute_script("return [...document.querySelectorAll('#plots > .trend')].map(p => "
                                 "[p.id, (p.layout && p.layout.shapes || []).length, p.data ? p.data.length : 0])")
        fams = sorted({s["family"] for s in data["series"] if s["solver"] == "dls" and s["figure"] == "time_us_median"})
        check(len(plots) == len(fams), f"dls page draws one time_us_median plot per family ({len(plots)} of {len(fams)})")
        check(all(shapes >= 1 for _, shapes, _ in plots), f"each dls plot marks its change point ({plots})")
        x = d.execute_script("const p = document.getElementById(arguments[0]); return p.layout.shapes[0].x0;", dls["id"])
        commits = dls["commits"]
        check(x is not None and commits[int(x + 0.5)] == step_commit,
              f"the change point is drawn at the planted commit {step_commit} (x = {x})")
        d.execute_script("const e = document.getElementById('figure'); e.value = 'success_rate'; "
                         "e.dispatchEvent(new Event('input'));")
        wait_ready(d, "redraw")
        ids = d.execute_script("return [...document.querySelectorAll('#plots > .trend')].map(p => p.id)")
        want = {s["id"] for s in data["series"] if s["solver"] == "dls" and s["figure"] == "success_rate"}
        check(set(ids) == want, "choosing success_rate redraws the success-rate plots")
        d.save_screenshot(str(work / "spec.png"))
        check(not console_errors(d), f"spec page: no console error ({console_errors(d)[:2]})")

        machine_page = next((site / "machine").glob("*.html"))
        d.get(machine_page.as_uri())
        wait_ready(d, "machine page")
        n_runs = d.execute_script("return document.querySelectorAll('table')[1].querySelectorAll('tr').length - 1")
        check(n_runs == 12, f"the machine page lists its 12 runs ({n_runs})")
        d.save_screenshot(str(work / "machine.png"))
        check(not console_errors(d), f"machine page: no console error ({console_errors(d)[:2]})")
    finally:
        d.quit()
    print(f"{len(failures)} failures; screenshots in {work}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
