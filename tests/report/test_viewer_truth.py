"""The solve viewer tells the truth: on a real run of the harness (the quick suite with a
`solutions=all` spec, which restarts and returns several solutions), every configuration the
viewer can draw under a verdict reproduces that verdict by the analysis library's numpy forward
kinematics (ikbench.analysis.verify.Model): converged <=> every goal within run.json's tolerances.

What the page draws for a solve (report_assets/report.js drawnOf): each kept trace record, with the
end of each attempt labelled by `attempts[a].converged`, and on the last frame the returned q
(`solutions[0]`, solves.csv's q) or the solution picked (`solutions[j]`, solutions.csv's q). A
sequential family draws each problem's returned q under `converged[k]`. Skipped without the
built harness (IKBENCH_CLI or build/release/benchmarks/ikbench)."""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ikbench.render import report, report_viewer
from ikbench.io import results
from ikbench.analysis import verify

REPO = Path(__file__).resolve().parent.parent.parent
ALL_SPEC = "auto:solutions=all:restarts=10:time_budget_us=0"
SOLVERS = f"{ALL_SPEC},dls,kdl-lma,analytic-6r"
BORDER = 1e-9   # relative band around a tolerance where this FK and the C++ one may round apart


def harness():
    cli = os.environ.get("IKBENCH_CLI") or str(REPO / "build" / "release" / "benchmarks" / "ikbench")
    return cli if os.access(cli, os.X_OK) else None


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    cli = harness()
    if cli is None:
        pytest.skip("the harness is not built (IKBENCH_CLI or build/release/benchmarks/ikbench)")
    out = tmp_path_factory.mktemp("truth") / "run"
    p = subprocess.run([cli, "run", "--suite", "quick", "--solvers", SOLVERS, "--threads", "2", "--trace-problems",
                        "3", "--out", str(out), "--force", "--progress", "none", "--no-summary"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    run = results.load(out)
    return run, report.build(run)


def errors(model, goals, q):
    """Largest goal position error and rotation angle of q (numpy FK of ikbench.analysis.verify)."""
    R, p = model.fk(np.asarray(q, dtype=float)[None, :])
    pe = oe = None
    for g in goals:
        b = g["body_index"]
        if g["kind"] != "orientation":
            e = float(np.linalg.norm(np.asarray(g["target_position"]) - (p[0, b] + R[0, b] @ np.asarray(g["point"]))))
            pe = e if pe is None else max(pe, e)
        if g["kind"] != "position":
            Rt = verify.quat_to_matrix(np.asarray(g["target_quat_xyzw"], dtype=float))
            e = float(verify.rotation_angle(Rt @ R[0, b].T))
            oe = e if oe is None else max(oe, e)
    return pe, oe


def verdict(pe, oe, tol):
    """True / False by FK, None within the borderline band of a tolerance (either claim agrees)."""
    lo = all(e is None or e <= t * (1 - BORDER) for e, t in ((pe, tol[0]), (oe, tol[1])))
    hi = all(e is None or e <= t * (1 + BORDER) for e, t in ((pe, tol[0]), (oe, tol[1])))
    return lo if lo == hi else None


def agrees(claim, pe, oe, tol):
    v = verdict(pe, oe, tol)
    return v is None or v == claim


def trace_solves(data):
    for fam, fd in data["viewer"]["families"].items():
        if fd["mode"] != "trace":
            continue
        for p in fd["problems"]:
            for spec, v in p["solves"].items():
                yield fam, p, spec, v


def test_every_drawn_configuration_reproduces_its_label(real):
    run, data = real
    tol = run.tolerances
    models = {}
    checked = {"attempt": 0, "solution": 0, "clip": 0}
    unconverged_end_of_converged_solve = 0
    s = run.solves.set_index(["family", "problem", "solver"])
    for fam, p, spec, v in trace_solves(data):
        model = models.setdefault(p["model"], verify.Model(run.models[p["model"]]))
        row = s.loc[(fam, p["problem"], spec)]
        where = f"{fam}/{p['problem']} {spec}"
        # the last frame: solution 0 is the returned q of solves.csv, under solves.csv's verdict
        if v["q"] is not None:
            assert v["solutions"], where
            # solution 0 is the solve's q, embedded once (the page reads it from there)
            assert v["solutions"][0]["q"] is None and v["q"] == list(results.parse_q(row["q"])), where
            assert v["solutions"][0]["converged"] == bool(row["converged"]), where
            assert len(v["solutions"]) == max(int(row["solutions"]), 1), where
        for sol in v["solutions"]:
            pe, oe = errors(model, p["goals"], v["q"] if sol["q"] is None else sol["q"])
            assert agrees(sol["converged"], pe, oe, tol), f"{where} solution {sol['solution']}: {pe}, {oe}"
            checked["solution"] += 1
        tr = v["trace"]
        if tr is None:
            continue
        a = np.asarray(tr["a"])
        assert len(v["attempts"]) == int(row["restarts"]) + 1, where   # attempts = restarts + 1
        for k, att in enumerate(v["attempts"]):
            last = att["last"]
            # the record labelled with the attempt's end is that attempt's last record
            assert a[last] == k and (last + 1 == len(a) or a[last + 1] == k + 1), where
            pe, oe = errors(model, p["goals"], report_viewer.trace_q(tr)[last])
            assert agrees(att["converged"], pe, oe, tol), f"{where} attempt {k + 1}: {pe}, {oe}"
            checked["attempt"] += 1
            if row["converged"] and not att["converged"] and verdict(pe, oe, tol) is False:
                unconverged_end_of_converged_solve += 1
    for fam, fd in data["viewer"]["families"].items():
        if fd["mode"] != "clip":
            continue
        model = verify.Model(run.models[fd["model"]])
        for spec, c in fd["solves"].items():
            for k, frame in enumerate(fd["frames"]):
                if c["q"][k] is None:
                    continue
                pe, oe = errors(model, frame["goals"], c["q"][k])
                assert agrees(c["converged"][k], pe, oe, tol), f"{fam} {spec} problem {frame['problem']}"
                checked["clip"] += 1
    assert min(checked.values()) > 0, checked
    # the run has what the viewer used to draw wrongly: converged solves whose trace goes on to
    # restarts that end away from the target; those are labelled as not converged
    assert unconverged_end_of_converged_solve > 0


def test_thinning_keeps_every_attempt_end(real):
    """Each attempt's last record of traces.csv is among the embedded ones, at its iteration."""
    run, data = real
    tr = run.traces
    for fam, p, spec, v in trace_solves(data):
        if v["trace"] is None:
            continue
        raw = tr[(tr["family"] == fam) & (tr["problem"] == p["problem"]) & (tr["solver"] == spec)]
        it = raw["iteration"].to_numpy()
        starts = report.attempt_starts(it)
        ends = np.concatenate((starts[1:] - 1, [len(it) - 1]))
        assert [att["iteration"] for att in v["attempts"]] == it[ends].tolist()
        assert len(report_viewer.trace_q(v["trace"])) <= v["trace"]["records"]


def test_attempt_starts_and_thinning():
    assert report.attempt_starts([0, 1, 2, 2, 3, 3, 3, 4]).tolist() == [0, 3, 5, 6]
    assert report.attempt_starts([]).tolist() == []
    idx = report.thin_indices(1000, 10, 10, keep=[500, 501, 777])
    assert {0, 9, 500, 501, 777, 999} <= set(idx.tolist()) and len(idx) <= 10 + 11 + 4


NODE_FK = """
const K = require(process.argv[1]);
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(function (c) {
  const s = K.goalState(c.goals, K.fk(c.model, c.q));
  return [s.pe, s.oe];
});
process.stdout.write(JSON.stringify(out));
"""


def close(a, b):
    """Two error figures of one configuration by two implementations: equal to rounding."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def test_page_kinematics_match_the_harness_and_numpy(real):
    """The page's forward kinematics (report_assets/kinematics.js, run in node) gives, for every
    configuration the viewer draws, the goal errors of the numpy cross-check (ikbench.verify), and
    for each returned answer the errors the C++ harness wrote into solves.csv."""
    import json
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's kinematics are not run outside the browser")
    run, data = real
    s = run.solves.set_index(["family", "problem", "solver"])
    models, cases, expect, harness_rows = {}, [], [], []
    for fam, p, spec, v in trace_solves(data):
        model = models.setdefault(p["model"], verify.Model(run.models[p["model"]]))
        configurations = [v["q"] if sol["q"] is None else sol["q"] for sol in v["solutions"]]
        if v["trace"] is not None:
            configurations += report_viewer.trace_q(v["trace"])
        for k, q in enumerate(configurations):
            cases.append({"model": data["viewer"]["models"][p["model"]], "goals": p["goals"], "q": q})
            expect.append(errors(model, p["goals"], q))
            row = s.loc[(fam, p["problem"], spec)]
            harness_rows.append(row if k == 0 and v["q"] is not None else None)
    assert len(cases) > 100, len(cases)
    script = REPO / "python" / "ikbench" / "report_assets" / "kinematics.js"
    page_json = json.dumps(cases, default=lambda o: o.tolist())  # the page data holds numpy arrays
    p = subprocess.run([node, "-e", NODE_FK, str(script)], input=page_json, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert len(got) == len(cases)
    compared = {"numpy": 0, "harness": 0}
    far = 0
    for (pe, oe), (npe, noe), row, c in zip(got, expect, harness_rows, cases):
        assert close(pe, npe) and close(oe, noe), f"page {pe}, {oe} against numpy {npe}, {noe} at q {c['q']}"
        compared["numpy"] += 1
        far += (pe or 0) > 1e-3
        if row is not None:
            for mine, column in ((pe, "position_error"), (oe, "orientation_error")):
                theirs = row[column]
                if mine is None:  # no goal of the kind: solves.csv writes 0
                    assert theirs == 0 or np.isnan(theirs), (column, theirs)
                else:
                    # solves.csv keeps 6 significant digits of an error; two double-precision
                    # FKs of one arm round apart by about 1e-15 m
                    assert abs(mine - theirs) <= 1e-5 * abs(theirs) + 1e-12, (column, mine, theirs)
            compared["harness"] += 1
    assert compared["harness"] > 10, compared
    # configurations far from their targets, where a wrong joint transform could not hide
    assert far > 10, far


def test_trace_q_coding():
    """The viewer's delta coding of traced configurations: rows within half a step (1e-4 / 2) of
    the recorded ones, the exact rows (attempt ends) bit for bit; the JSON of the page round-trips."""
    import json

    rng = np.random.default_rng(7)
    q = np.cumsum(rng.normal(0, 0.05, size=(30, 7)), axis=0)
    enc = report_viewer.encode_trace_q(q, [12, 29, 99])     # 99: no such row, ignored
    assert [k for k, _ in enc["exact"]] == [12, 29]
    back = report_viewer.trace_q({"qd": json.loads(report.to_json(enc))})
    assert len(back) == 30
    assert np.max(np.abs(np.array(back) - q)) <= report_viewer.Q_UNIT / 2 + 1e-12
    assert back[12] == q[12].tolist() and back[29] == q[29].tolist()
    assert report_viewer.trace_q({"qd": None}) == [] and report_viewer.trace_q(None) == []
