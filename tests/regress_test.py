#!/usr/bin/python3
"""Tests of the regression gate (scripts/regress.py, python/ikbench/analysis/gate.py) on synthetic results.

Each test writes solves.csv / run.json files shaped like `ikbench run`'s into
a temporary directory, runs the gate as the user would (a subprocess of
/usr/bin/python3 scripts/regress.py) and checks its exit status and the rows
it marks. Synthetic data come from Python's random.Random with fixed seeds;
the "times" are made-up numbers, nothing here is timed.

Run: /usr/bin/python3 tests/regress_test.py  (ctest runs it as regress_gate).
"""

import contextlib
import csv
import functools
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "regress.py"
CONFIG = ROOT / "python" / "ikbench" / "data" / "regress_thresholds.json"
PYTHON = sys.executable or "/usr/bin/python3"
sys.path.insert(0, str(ROOT / "python"))
from ikbench.analysis import gate as regress  # noqa: E402
from ikbench.cli import gate_commands  # noqa: E402

COLUMNS = ["suite", "family", "problem", "dof", "effectors", "goal", "solver", "status", "converged",
           "iterations", "restarts", "position_error", "orientation_error", "time_us", "fk_evals",
           "jacobian_evals", "within_limits"]

# (family, problems, dof, goal); 200 problems: one solve is 0.5 points.
FAMILIES = [("chain7-position", 200, 7, "position"), ("chain7-pose", 200, 7, "pose"),
            ("tree12-multi", 100, 12, "position"), ("unreachable7", 50, 7, "position")]
# solver -> (success probability, per-evaluation cost in made-up microseconds)
SOLVERS = {"dls": (0.95, 1.0), "dls:lambda=0.2": (0.9, 1.0), "ccd": (0.85, 0.4), "ceres-lm": (0.97, 4.0)}
MAX_ITERS = 500


def synth_rows(seed=1, suite="quick"):
    """Deterministic synthetic solves: dict rows in (family, problem, solver) order."""
    return [dict(r) for r in _synth_rows(seed, suite)]


@functools.lru_cache(maxsize=None)
def _synth_rows(seed, suite):
    rows = []
    for fi, (family, n, dof, goal) in enumerate(FAMILIES):
        for p in range(n):
            for si, (solver, (p_success, cost)) in enumerate(SOLVERS.items()):
                rng = random.Random(seed * 1_000_003 + fi * 10_007 + p * 101 + si)
                reachable = not family.startswith("unreachable")
                ok = reachable and rng.random() < p_success
                its = rng.randint(4, 60) if ok else (MAX_ITERS if rng.random() < 0.5 else rng.randint(20, 120))
                status = "converged" if ok else ("max-iterations" if its == MAX_ITERS else "stalled")
                pos = rng.uniform(1e-9, 5e-6) if ok else (rng.uniform(0.05, 0.4) if not reachable
                                                          else rng.uniform(1e-3, 0.05))
                ori = (rng.uniform(1e-9, 5e-6) if ok else rng.uniform(1e-3, 0.3)) if goal == "pose" else 0.0
                fk, jac = its + 1, its
                rows.append({"suite": suite, "family": family, "problem": p, "dof": dof, "effectors": 1,
                             "goal": goal, "solver": solver, "status": status, "converged": int(ok),
                             "iterations": its, "restarts": 0, "position_error": f"{pos:.17g}",
                             "orientation_error": f"{ori:.17g}", "time_us": (fk + jac) * cost,
                             "fk_evals": fk, "jacobian_evals": jac, "within_limits": 1})
    return rows


def write_run(directory, rows, seed=1, suite="quick", run_json=True, columns=COLUMNS, families=None):
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "solves.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns + ["message"], extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(dict(r, message=""))
    if run_json:
        (directory / "run.json").write_text(json.dumps({
            "suite": suite, "seed": seed, "solvers": list(SOLVERS), "git_revision": "synthetic",
            "compiler": "none", "cpu": "none", "threads": 2, **({"families": families} if families else {})}))
    return directory


# One solve of each outcome (ikbench.analysis.outcomes' rule) as solves.csv fields.
OUTCOME_ROWS = {"converged": ("converged", 1), "not-found": ("stalled", 0), "refused": ("stalled", 0),
                "timed-out": ("time-limit", 0), "wrong": ("false-convergence", 0)}


def outcome_rows(cells):
    """Solves of the 1000-target families 'reach' (reachable) and 'far' (known unreachable, per
    OUTCOME_FAMILIES) x solver 'dls', with the given outcome counts: {family: {outcome: count}}, the
    rest of each family converged (reach) or refused (far)."""
    rows = []
    for family, counts in cells.items():
        rest = "converged" if family == "reach" else "refused"
        kinds = [o for o, k in counts.items() for _ in range(k)]
        kinds += [rest] * (1000 - len(kinds))
        for p, o in enumerate(kinds):
            status, conv = OUTCOME_ROWS[o]
            rows.append({"suite": "quick", "family": family, "problem": p, "dof": 6, "effectors": 1, "goal": "pose",
                         "solver": "dls", "status": status, "converged": conv, "iterations": 10, "restarts": 0,
                         "position_error": "1e-9" if conv else "0.1", "orientation_error": "1e-9" if conv else "0.1",
                         "time_us": 5.0, "fk_evals": 11, "jacobian_evals": 10, "within_limits": 1})
    return rows


OUTCOME_FAMILIES = [{"name": "reach", "targets": "reachable"}, {"name": "far", "targets": "unreachable"}]


def timed(rows, machine=1.0, noise=0.0, seed=7, slow=None):
    """Scales every time by `machine` (a faster or slower computer), by a
    per-solve factor in [1 - noise, 1 + noise], and the solver `slow` (a
    (solver, factor) pair) by its factor."""
    rng = random.Random(seed)
    out = []
    for r in rows:
        t = r["time_us"] * machine * (1 + rng.uniform(-noise, noise))
        if slow and r["solver"] == slow[0]:
            t *= slow[1]
        out.append(dict(r, time_us=f"{t:.3f}"))
    return out


def lose_successes(rows, family, solver, count):
    """Turns the first `count` converged solves of a cell into max-iteration failures."""
    out, left = [], count
    for r in rows:
        if left and r["family"] == family and r["solver"] == solver and r["converged"]:
            left -= 1
            r = dict(r, status="max-iterations", converged=0, iterations=MAX_ITERS, fk_evals=MAX_ITERS + 1,
                     jacobian_evals=MAX_ITERS, position_error="0.01",
                     time_us=(2 * MAX_ITERS + 1) * SOLVERS[solver][1])
        out.append(r)
    assert left == 0
    return out


def scale_iterations(rows, family, solver, factor):
    out = []
    for r in rows:
        if r["family"] == family and r["solver"] == solver and r["converged"]:
            its = max(r["iterations"] + 1, round(r["iterations"] * factor))
            r = dict(r, iterations=its, fk_evals=its + 1, jacobian_evals=its,
                     time_us=(2 * its + 1) * SOLVERS[solver][1])
        out.append(r)
    return out


def table_rows(stdout):
    """The rows of the gate's text table (between its dashed rule and the next blank line)."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("family ")) + 2
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def marked_cells(stdout, tag):
    """(family, solver) of the table rows whose verdict column is `tag`."""
    return {(p[0], p[1]) for p in (row.split() for row in table_rows(stdout)) if p[-1] == tag}


def marks(stdout, mark):
    return sum(row.count(mark) for row in table_rows(stdout))


class GateTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="regress_test."))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def gate(self, *args):
        """Runs the gate in this process (fast); returns (exit status, stdout, stderr)."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = gate_commands.main([str(a) for a in args])
            except SystemExit as e:  # argparse usage errors
                rc = e.code
        return rc, out.getvalue(), err.getvalue()

    def gate_process(self, *args):
        """Runs the gate as users and CI do: /usr/bin/python3 scripts/regress.py ..."""
        p = subprocess.run([PYTHON, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def compare(self, base, *runs_and_options):
        """compare BASE RUN... [options], with the shipped thresholds unless --config is given."""
        default = () if "--config" in runs_and_options else ("--config", CONFIG)
        return self.gate("compare", base, *runs_and_options, *default)

    def baseline(self):
        return write_run(self.tmp / "base", timed(synth_rows()))

    def test_baseline_and_thresholds_that_are_not_regular_files_are_refused(self):
        # A FIFO (or a device) as the baseline or the thresholds file: exit 2 naming it, no hang.
        run = self.baseline()
        fifo = self.tmp / "baseline.json"
        os.mkfifo(fifo)
        rc, out, err = self.gate_process("compare", fifo, run)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("not a regular file", err)
        self.assertIn(str(fifo), err)
        rc, out, err = self.gate_process("compare", run, run, "--config", fifo)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("not a regular file", err)

    # -- unchanged code passes ------------------------------------------------

    def test_identical_runs_pass(self):
        base = self.baseline()
        run = write_run(self.tmp / "run", timed(synth_rows()))
        rc, out, err = self.gate_process("compare", base, run)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("PASS", out)
        self.assertIn("0 regression(s)", out)
        self.assertEqual(marked_cells(out, "same"), {(f[0], s) for f in FAMILIES for s in SOLVERS})
        self.assertEqual(marks(out, "[R]"), 0)
        self.assertEqual(marks(out, "[I]"), 0)

    def test_compact_baseline_round_trip(self):
        # update writes a baseline that the same run then passes, cell for cell.
        run = self.baseline()
        bdir = self.tmp / "baseline" / "quick"
        rc, out, err = self.gate("update", run, "--baseline", bdir)
        self.assertEqual(rc, 0, out + err)
        data = json.loads((bdir / "baseline.json").read_text())
        self.assertEqual(data["suite"], "quick")
        self.assertEqual(len(data["cells"]), len(FAMILIES) * len(SOLVERS))
        rc, out, err = self.compare(bdir, run)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(len(marked_cells(out, "same")), len(FAMILIES) * len(SOLVERS))
        # A second update from the same run leaves the figures unchanged.
        before = [c for c in data["cells"]]
        rc, out, err = self.gate("update", run, "--baseline", bdir)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(json.loads((bdir / "baseline.json").read_text())["cells"], before)
        rc, out, err = self.gate("show", bdir)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("chain7-pose", out)

    def test_compact_baseline_detects_regression(self):
        run = self.baseline()
        bdir = self.tmp / "b"
        self.assertEqual(self.gate("update", run, "--baseline", bdir)[0], 0)
        bad = write_run(self.tmp / "bad", timed(lose_successes(synth_rows(), "chain7-pose", "ccd", 4)))
        rc, out, err = self.compare(bdir, bad)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(marked_cells(out, "REGRESSION"), {("chain7-pose", "ccd")})

    # -- outcome rates ----------------------------------------------------------

    def outcome_gate(self, base_counts, run_counts, *options):
        base = write_run(self.tmp / "obase", outcome_rows(base_counts), families=OUTCOME_FAMILIES)
        run = write_run(self.tmp / "orun", outcome_rows(run_counts), families=OUTCOME_FAMILIES)
        return self.compare(base, run, "--no-time", *options)

    def test_a_significant_rise_of_a_bad_outcome_is_a_regression(self):
        # not found: 0 -> 30 of 1000 reachable targets (Fisher p ~ 1e-9) fails; 1 -> 2 does not.
        rc, out, err = self.outcome_gate({"reach": {}, "far": {}}, {"reach": {"not-found": 30}, "far": {}})
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(marked_cells(out, "REGRESSION"), {("reach", "dls")})
        self.assertIn("reach x dls: not-found rate (reachable targets) 0.00% [0.00, 0.38] -> 3.00% [2.11, 4.25] "
                      "(0 of 1000 -> 30 of 1000 solves; Fisher's exact test p = ", out)
        self.assertIn("not-found 3.0% [R]", out)
        rc, out, err = self.outcome_gate({"reach": {"not-found": 1}, "far": {}},
                                         {"reach": {"not-found": 2}, "far": {}})
        self.assertEqual(rc, 0, out + err)
        self.assertIn("not-found 0.2%", out)
        self.assertEqual(marks(out, "[R]") + marks(out, "[I]"), 0)
        # Timed out alike; its fall is an improvement.
        rc, out, err = self.outcome_gate({"reach": {}, "far": {}}, {"reach": {"timed-out": 30}, "far": {}})
        self.assertEqual(rc, 1, out + err)
        self.assertIn("timed-out 3.0% [R]", out)
        rc, out, err = self.outcome_gate({"reach": {"timed-out": 30}, "far": {}}, {"reach": {}, "far": {}})
        self.assertEqual(rc, 0, out + err)
        self.assertIn("timed-out 0.0% [I]", out)
        # One more wrong answer fails by the count rule, whatever the test says.
        rc, out, err = self.outcome_gate({"reach": {}, "far": {}}, {"reach": {"wrong": 1}, "far": {}})
        self.assertEqual(rc, 1, out + err)
        self.assertIn("[R wrong]", out)
        self.assertNotIn("wrong 0.1% [R]", out)

    def test_unreachable_targets_regress_when_fewer_are_refused(self):
        # Known unreachable: refused 1000 -> 960 (40 timed out) is a regression of both rates; the
        # success rate there is not an improvement when it rises (answers to targets without one).
        rc, out, err = self.outcome_gate({"reach": {}, "far": {}}, {"reach": {}, "far": {"timed-out": 40}})
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(marked_cells(out, "REGRESSION"), {("far", "dls")})
        self.assertIn("refused 96.0% [R]", out)
        self.assertIn("timed-out 4.0% [R]", out)
        rc, out, err = self.outcome_gate({"reach": {}, "far": {}}, {"reach": {}, "far": {"converged": 40}})
        self.assertEqual(rc, 1, out + err)
        self.assertIn("answered 4.0% [R]", out)
        self.assertIn("far x dls: answered rate (unreachable targets) 0.00%", out)
        self.assertNotIn("success rate", out.split("REGRESSIONS:")[1])
        self.assertNotIn("improvements:", out)

    def test_outcome_counts_round_trip_and_old_baselines(self):
        run = write_run(self.tmp / "run", outcome_rows({"reach": {"not-found": 5, "wrong": 1}, "far": {}}),
                        families=OUTCOME_FAMILIES)
        bdir = self.tmp / "b"
        self.assertEqual(self.gate("update", run, "--baseline", bdir)[0], 0)
        data = json.loads((bdir / "baseline.json").read_text())
        cells = {c["family"]: c for c in data["cells"]}
        self.assertEqual(cells["reach"]["outcomes"], {"converged": 994, "not-found": 5, "wrong": 1})
        self.assertEqual(cells["far"]["outcomes"], {"refused": 1000})
        self.assertEqual(cells["far"]["targets"], "unreachable")
        rc, out, err = self.compare(bdir, run, "--no-time")
        self.assertEqual(rc, 0, out + err)
        rc, out, err = self.gate("show", bdir)
        self.assertIn("converged:994,not-found:5,wrong:1", out)
        # A baseline written before the outcome counts: compared without them, and said so.
        for c in data["cells"]:
            del c["outcomes"], c["targets"]
        (bdir / "baseline.json").write_text(json.dumps(data))
        worse = write_run(self.tmp / "worse", outcome_rows({"reach": {"not-found": 5, "wrong": 1}, "far": {}}),
                          families=OUTCOME_FAMILIES)
        rc, out, err = self.compare(bdir, worse, "--no-time")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("outcome rates not compared: " + str(bdir / "baseline.json"), out)
        # Malformed counts are bad input naming the field.
        data["cells"][0]["outcomes"] = {"converged": -1}
        (bdir / "baseline.json").write_text(json.dumps(data))
        rc, out, err = self.compare(bdir, worse, "--no-time")
        self.assertEqual(rc, 2, out + err)
        self.assertIn("cells[0]: field 'outcomes' must map outcomes", err)

    # -- injected regressions fail, with exactly those rows marked -------------

    def test_doctored_run_fails_on_exactly_the_doctored_rows(self):
        base = self.baseline()
        rows = synth_rows()
        # Success down 2 points (4 of 200 solves) in one cell ...
        rows = lose_successes(rows, "chain7-position", "dls", 4)
        # ... and iterations up 20 % in another.
        rows = scale_iterations(rows, "tree12-multi", "ccd", 1.2)
        run = write_run(self.tmp / "run", timed(rows))
        md = self.tmp / "report.md"
        rc, out, err = self.gate_process("compare", base, run, "--config", CONFIG, "--markdown", md)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("FAIL", out)
        self.assertEqual(marked_cells(out, "REGRESSION"), {("chain7-position", "dls"), ("tree12-multi", "ccd")})
        regressions = out.split("REGRESSIONS:")[1].split("\n\n")[0]
        self.assertRegex(regressions, r"chain7-position x dls: success rate .*-2\.0 pp, 4 of 200 solves lost")
        self.assertRegex(regressions, r"tree12-multi x ccd: median iterations")
        self.assertNotRegex(regressions, r"tree12-multi x ccd: success")
        self.assertNotRegex(regressions, r"chain7-position x dls: (median|p90) iterations")
        # Every other cell is untouched.
        self.assertEqual(len(marked_cells(out, "same")), len(FAMILIES) * len(SOLVERS) - 2)
        rc, out, _ = self.compare(base, run, "--only-changes")
        self.assertEqual(rc, 1)
        self.assertEqual(len(table_rows(out)), 2)
        text = md.read_text()
        self.assertIn("# Regression gate: FAIL", text)
        self.assertIn("**REGRESSION**", text)
        self.assertIn("## Regressions", text)

    def test_success_drop_within_threshold_is_marked_changed_not_failed(self):
        # One lost solve of 200 is 0.5 points: not more than the 0.5-point threshold.
        base = self.baseline()
        run = write_run(self.tmp / "run", timed(lose_successes(synth_rows(), "chain7-pose", "dls", 1)))
        rc, out, err = self.compare(base, run, "--config", self.write_config(evals_increase=1.0,
                                                                              iterations_p90_increase=5.0))
        self.assertEqual(rc, 0, out + err)
        self.assertIn(("chain7-pose", "dls"), marked_cells(out, "changed"))

    def test_small_family_flip_guard(self):
        # In the 50-problem family one flip is 2 points; success_min_flips = 2
        # tolerates it, the default (1) does not.
        base = self.baseline()
        rows = synth_rows()
        for r in rows:  # give the unreachable family some successes to lose
            if r["family"] == "unreachable7" and r["problem"] < 10:
                r.update(status="converged", converged=1, position_error="1e-7")
        base = write_run(self.tmp / "base2", timed(rows))
        run = write_run(self.tmp / "run", timed(lose_successes(rows, "unreachable7", "ceres-lm", 1)))
        rc, out, _ = self.compare(base, run)
        self.assertEqual(rc, 1, out)
        self.assertEqual(marked_cells(out, "REGRESSION"), {("unreachable7", "ceres-lm")})
        relaxed = self.write_config(success_min_flips=2, evals_increase=1.0, iterations_p90_increase=5.0,
                                    iterations_median_increase=5.0)
        rc, out, _ = self.compare(base, run, "--config", relaxed)
        self.assertEqual(rc, 0, out)

    def test_improvements_are_marked_and_pass(self):
        base = write_run(self.tmp / "base", timed(lose_successes(scale_iterations(
            synth_rows(), "chain7-pose", "ceres-lm", 1.5), "tree12-multi", "dls", 6)))
        run = write_run(self.tmp / "run", timed(synth_rows()))
        rc, out, err = self.compare(base, run)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(marked_cells(out, "improved"), {("chain7-pose", "ceres-lm"), ("tree12-multi", "dls")})
        # 7 marks: ceres-lm's time fell 32 % in one family only, which is not
        # enough for its geometric mean over 4 families to count as faster.
        self.assertEqual(marks(out, "[I]"), 7)
        self.assertEqual(marks(out, "[R]"), 0)
        self.assertIn("improvements:", out)

    def test_error_regression_above_floor(self):
        base = self.baseline()
        rows = [dict(r, position_error=f"{float(r['position_error']) * 3:.17g}")
                if r["family"] == "unreachable7" and r["solver"] == "dls" else r for r in synth_rows()]
        run = write_run(self.tmp / "run", timed(rows))
        rc, out, _ = self.compare(base, run)
        self.assertEqual(rc, 1, out)
        self.assertEqual(marked_cells(out, "REGRESSION"), {("unreachable7", "dls")})
        self.assertIn("median position error", out)
        # Errors of converged solves grow 3x too, but stay below the 1e-5 m floor.
        rows = [dict(r, position_error=f"{float(r['position_error']) * 3:.17g}") if r["converged"] else r
                for r in synth_rows()]
        run = write_run(self.tmp / "run2", timed(rows))
        rc, out, _ = self.compare(base, run)
        self.assertEqual(rc, 0, out)

    def test_limit_violation_is_a_regression(self):
        base = self.baseline()
        rows = synth_rows()
        victim = next(r for r in rows if r["family"] == "chain7-pose" and r["solver"] == "dls" and not r["converged"])
        victim["within_limits"] = 0
        rc, out, _ = self.compare(base, write_run(self.tmp / "run", timed(rows)))
        self.assertEqual(rc, 1, out)
        self.assertEqual(marked_cells(out, "REGRESSION"), {("chain7-pose", "dls")})
        self.assertIn("outside the joint limits", out)

    # -- time: only normalised within a run ------------------------------------

    def test_time_noise_and_other_machine_pass(self):
        base = self.baseline()
        # A machine 2.5x slower with +-20 % per-solve noise: normalised times
        # stay within the 25 % threshold.
        run = write_run(self.tmp / "run", timed(synth_rows(), machine=2.5, noise=0.2, seed=99))
        rc, out, err = self.compare(base, run)
        self.assertEqual(rc, 0, out + err)
        self.assertRegex(out, r"this run at x2\.[45]\d* the baseline's speed")  # the measured factor

    def test_two_x_slowdown_of_one_solver_fails(self):
        base = self.baseline()
        run = write_run(self.tmp / "run", timed(synth_rows(), machine=0.7, noise=0.1, slow=("ccd", 2.0)))
        rc, out, _ = self.compare(base, run)
        self.assertEqual(rc, 1, out)
        self.assertEqual(marked_cells(out, "REGRESSION"), {(f[0], "ccd") for f in FAMILIES})
        self.assertIn("normalised median time", out)
        # Nothing else is mistaken for faster or slower.
        self.assertEqual(marked_cells(out, "improved"), set())
        # --no-time: the same run passes (iterations and success are unchanged).
        rc, out, _ = self.compare(base, run, "--no-time")
        self.assertEqual(rc, 0, out)

    def test_slowdown_of_the_reference_solver_is_caught_with_median_ratio(self):
        # dls is 2 of the 4 solvers' names but 1 of 4 specs here (dls, dls:lambda=0.2
        # are both "dls" backends); slowing the plain `dls` spec must show on it alone.
        base = self.baseline()
        run = write_run(self.tmp / "run", timed(synth_rows(), slow=("dls", 2.0)))
        rc, out, _ = self.compare(base, run)
        self.assertEqual(rc, 1, out)
        self.assertEqual(marked_cells(out, "REGRESSION"), {(f[0], "dls") for f in FAMILIES})

    def test_solver_reference_unit_and_missing_reference(self):
        base = self.baseline()
        run = write_run(self.tmp / "run", timed(synth_rows(), machine=3.0, slow=("ccd", 2.0)))
        cfg = self.write_config(time_reference=["solver:dls"])
        rc, out, _ = self.compare(base, run, "--config", cfg)
        self.assertEqual(rc, 1, out)
        self.assertIn("of 'dls' in the same run", out)
        self.assertEqual(marked_cells(out, "REGRESSION"), {(f[0], "ccd") for f in FAMILIES})
        # A reference that is not in the runs: time is skipped with a note, not failed.
        cfg = self.write_config(time_reference=["solver:nosuch"])
        rc, out, _ = self.compare(base, run, "--config", cfg)
        self.assertEqual(rc, 0, out)
        self.assertIn("time not compared", out)
        # ... or the next listed reference is used.
        cfg = self.write_config(time_reference=["solver:nosuch", "pooled"])
        rc, out, _ = self.compare(base, run, "--config", cfg)
        self.assertEqual(rc, 1, out)
        self.assertIn("pooled", out)

    def test_overrides_loosen_or_skip_a_cell(self):
        base = self.baseline()
        run = write_run(self.tmp / "run", timed(synth_rows(), slow=("ccd", 2.0)))
        cfg = self.write_config(overrides=[{"solver": "ccd", "time_increase": 1.5, "note": "noisy"}])
        rc, out, _ = self.compare(base, run, "--config", cfg)
        self.assertEqual(rc, 0, out)
        cfg = self.write_config(overrides=[{"family": "chain7-*", "solver": "cc?", "skip": True}])
        rc, out, _ = self.compare(base, run, "--config", cfg)
        self.assertEqual(rc, 1, out)
        self.assertEqual(marked_cells(out, "REGRESSION"), {("tree12-multi", "ccd"), ("unreachable7", "ccd")})
        self.assertEqual(marked_cells(out, "skipped"), {("chain7-position", "ccd"), ("chain7-pose", "ccd")})

    def test_time_needs_the_same_thread_count_and_two_families(self):
        base = self.baseline()
        run = write_run(self.tmp / "run", timed(synth_rows(), slow=("ccd", 2.0)))
        data = json.loads((run / "run.json").read_text())
        (run / "run.json").write_text(json.dumps(dict(data, threads=1)))
        rc, out, _ = self.compare(base, run)
        self.assertEqual(rc, 0, out)
        self.assertIn("time not compared: the baseline ran on 2 thread(s), the run on 1", out)
        # ccd timed in one family only (the others too short to time): not gated.
        rows = [dict(r, time_us=r["time_us"] / 100) if r["solver"] == "ccd" and r["family"] != "chain7-pose" else r
                for r in synth_rows()]
        base = write_run(self.tmp / "base2", timed(rows))
        run = write_run(self.tmp / "run2", timed(rows, slow=("ccd", 2.0)))
        rc, out, _ = self.compare(base, run)
        self.assertEqual(rc, 0, out)
        row = next(r for r in table_rows(out) if r.startswith("chain7-pose ") and " ccd " in r)
        self.assertIn("(~)", row)

    # -- repeats and time budgets ------------------------------------------------

    def test_repeats_keep_the_fastest_time_and_the_best_repeat(self):
        base = self.baseline()
        # Three repeats: in each, load slowed a different solver 2.5x; in one,
        # two solves hit the time budget. Combined: nothing to report.
        rows = synth_rows()
        hit = [r for r in rows if r["family"] == "chain7-pose" and r["solver"] == "dls" and r["converged"]][:2]
        for r in hit:
            r.update(status="time-limit", converged=0, iterations=r["iterations"] // 2)
        runs = [write_run(self.tmp / "r0", timed(synth_rows(), machine=1.3, slow=("ccd", 2.5))),
                write_run(self.tmp / "r1", timed(rows, machine=1.1, slow=("dls", 2.5))),
                write_run(self.tmp / "r2", timed(synth_rows(), machine=1.2, slow=("ceres-lm", 2.5)))]
        rc, out, _ = self.compare(base, *runs)
        self.assertEqual(rc, 0, out)
        self.assertIn("fastest of 1 (baseline) and 3 (run) repeats", out)
        self.assertIn("chain7-pose x dls: deterministic figures differ between repeats", out)
        self.assertEqual(marked_cells(out, "same"), {(f[0], s) for f in FAMILIES for s in SOLVERS})
        # One of those runs alone fails on time (ccd 2.5x slower).
        rc, out, _ = self.compare(base, runs[0])
        self.assertEqual(rc, 1, out)
        # update accepts repeats too, and records them.
        rc, out, _ = self.gate("update", *runs, "--baseline", self.tmp / "bl")
        self.assertEqual(rc, 0, out)
        self.assertEqual(json.loads((self.tmp / "bl" / "baseline.json").read_text())["repeats"], 3)
        rc, out, _ = self.compare(self.tmp / "bl", *runs)
        self.assertEqual(rc, 0, out)
        # Repeats of different suites are bad input.
        other = write_run(self.tmp / "r3", timed(synth_rows(suite="default")), suite="default")
        rc, _, err = self.compare(base, runs[0], other)
        self.assertEqual(rc, 2)
        self.assertIn("repeats differ", err)

    def test_time_budget_allowance(self):
        base = self.baseline()
        rows = synth_rows()
        cell = [r for r in rows if r["family"] == "tree12-multi" and r["solver"] == "dls" and r["converged"]]
        for r in cell[:2]:  # two solves cut short by the budget on a loaded machine: excused
            r.update(status="time-limit", converged=0, iterations=MAX_ITERS, fk_evals=MAX_ITERS + 1,
                     jacobian_evals=MAX_ITERS)
        rc, out, _ = self.compare(base, write_run(self.tmp / "run", timed(rows)))
        self.assertEqual(rc, 0, out)
        self.assertIn("tree12-multi x dls: 0 solve(s) of the baseline and 2 of the run ended at the time budget", out)
        self.assertIn("(budget)", out)
        # The other way round (the baseline was the loaded run) passes as well.
        rc, out, _ = self.compare(write_run(self.tmp / "loaded", timed(rows)), base)
        self.assertEqual(rc, 0, out)
        for r in cell[2:5]:  # five: more than the allowance, a regression
            r.update(status="time-limit", converged=0)
        rc, out, _ = self.compare(base, write_run(self.tmp / "run2", timed(rows)))
        self.assertEqual(rc, 1, out)
        self.assertEqual(marked_cells(out, "REGRESSION"), {("tree12-multi", "dls")})

    # -- bad input: exit 2 with a message naming the file / column -------------

    def test_missing_files(self):
        base = self.baseline()
        rc, _, err = self.gate_process("compare", base, self.tmp / "nosuch")
        self.assertEqual(rc, 2)
        self.assertIn(str(self.tmp / "nosuch" / "solves.csv"), err)
        rc, _, err = self.compare(self.tmp / "nobase", base)
        self.assertEqual(rc, 2)
        self.assertIn("nobase", err)
        empty = self.tmp / "empty"
        empty.mkdir()
        rc, _, err = self.compare(empty, base)
        self.assertEqual(rc, 2)
        self.assertIn("neither baseline.json nor solves.csv", err)
        rc, _, err = self.compare(base, base, "--config", self.tmp / "nosuch.json")
        self.assertEqual(rc, 2)
        self.assertIn("nosuch.json", err)

    def test_missing_column(self):
        base = self.baseline()
        cols = [c for c in COLUMNS if c != "jacobian_evals"]
        run = write_run(self.tmp / "run", timed(synth_rows()), columns=cols)
        rc, _, err = self.compare(base, run)
        self.assertEqual(rc, 2)
        self.assertIn("solves.csv:1", err)
        self.assertIn("'jacobian_evals'", err)

    def test_malformed_csv(self):
        base = self.baseline()
        run = write_run(self.tmp / "run", timed(synth_rows()))
        lines = (run / "solves.csv").read_text().splitlines()
        for line_no, edit, expect in [
            (5, lambda l: l.replace(",converged,1,", ",converged,yes,"), "column 'converged'"),
            (7, lambda l: l.rsplit(",", 3)[0], "fields, but the header has"),
            (9, lambda l: l.replace(",converged,", ",exploded,"), "expected a status (converged, "),
            (11, lambda l: l.replace(",quick,", ",quick,", 1).replace(",1,0,", ",1,x,", 1), "column"),
        ]:
            bad = list(lines)
            bad[line_no - 1] = edit(bad[line_no - 1])
            if bad[line_no - 1] == lines[line_no - 1]:
                continue  # this synthetic line has no such field; the others cover it
            (run / "solves.csv").write_text("\n".join(bad) + "\n")
            rc, _, err = self.compare(base, run)
            self.assertEqual(rc, 2, err)
            self.assertIn(f"solves.csv:{line_no}", err)
            self.assertIn(expect, err)
        (run / "solves.csv").write_text("")
        rc, _, err = self.compare(base, run)
        self.assertEqual(rc, 2)
        self.assertIn("empty file", err)
        (run / "solves.csv").write_text(",".join(COLUMNS) + "\n")
        rc, _, err = self.compare(base, run)
        self.assertEqual(rc, 2)
        self.assertIn("no solves", err)

    def test_malformed_json(self):
        base = self.baseline()
        run = write_run(self.tmp / "run", timed(synth_rows()))
        (run / "run.json").write_text("{\"suite\": ")
        rc, _, err = self.compare(base, run)
        self.assertEqual(rc, 2)
        self.assertIn("run.json:1: malformed JSON", err)
        bdir = self.tmp / "b"
        bdir.mkdir()
        (bdir / "baseline.json").write_text(json.dumps({"format": "ikbench-baseline", "version": 1, "suite": "quick",
                                                        "cells": [{"family": "f", "solver": "dls"}]}))
        rc, _, err = self.compare(bdir, base)
        self.assertEqual(rc, 2)
        self.assertIn("cells[0]: missing field", err)
        cfg = self.write_config(succes_drop_pp=1)
        rc, _, err = self.compare(base, base, "--config", cfg)
        self.assertEqual(rc, 2)
        self.assertIn("unknown key 'succes_drop_pp'", err)

    def test_mismatched_suites_and_seeds(self):
        base = self.baseline()
        run = write_run(self.tmp / "run", timed(synth_rows(suite="default")), suite="default")
        rc, _, err = self.compare(base, run)
        self.assertEqual(rc, 2)
        self.assertIn("suites differ", err)
        run = write_run(self.tmp / "run2", timed(synth_rows()), seed=2)
        rc, _, err = self.compare(base, run)
        self.assertEqual(rc, 2)
        self.assertIn("seeds differ", err)

    def test_missing_cell_is_bad_input_unless_allowed(self):
        base = self.baseline()
        rows = [r for r in synth_rows() if not (r["solver"] == "ccd" and r["family"] == "chain7-pose")]
        run = write_run(self.tmp / "run", timed(rows))
        rc, _, err = self.compare(base, run)
        self.assertEqual(rc, 2)
        self.assertIn("family 'chain7-pose' x solver 'ccd' is in the baseline but not in the run", err)
        rc, out, _ = self.compare(base, run, "--allow-missing")
        self.assertEqual(rc, 0, out)
        self.assertEqual(marked_cells(out, "MISSING"), {("chain7-pose", "ccd")})
        # A new cell in the run (not in the baseline) is reported, never a failure.
        rc, out, _ = self.compare(run, base)
        self.assertEqual(rc, 0, out)
        self.assertEqual(marked_cells(out, "new"), {("chain7-pose", "ccd")})

    def test_changed_family_size_is_bad_input(self):
        base = self.baseline()
        rows = [r for r in synth_rows() if not (r["family"] == "tree12-multi" and r["problem"] >= 90)]
        rc, _, err = self.compare(base, write_run(self.tmp / "run", timed(rows)))
        self.assertEqual(rc, 2)
        self.assertIn("family 'tree12-multi' x solver 'dls': n is 100 in the baseline but 90 in the run", err)

    def test_usage_error(self):
        rc, _, err = self.gate_process("compare", self.tmp)
        self.assertEqual(rc, 2)
        self.assertIn("usage", err)

    # -- helpers ----------------------------------------------------------------

    def write_config(self, **changes):
        cfg = json.loads(CONFIG.read_text())
        cfg.update(changes)
        path = self.tmp / f"cfg{len(list(self.tmp.glob('cfg*')))}.json"
        path.write_text(json.dumps(cfg))
        return path


class StatisticsTest(unittest.TestCase):
    def test_quantiles(self):
        self.assertEqual(regress.quantile([], 0.5), None)
        self.assertEqual(regress.quantile([3], 0.9), 3)
        self.assertEqual(regress.quantile([1, 2, 3, 4], 0.5), 2.5)
        self.assertAlmostEqual(regress.quantile(list(range(1, 11)), 0.9), 9.1)
        self.assertEqual(regress.quantile([1, float("inf"), float("inf")], 0.9), float("inf"))
        self.assertEqual(regress.compare_value(10, 11, 0.10, 1), "changed")
        self.assertEqual(regress.compare_value(10, 11.5, 0.10, 1), "regression")
        self.assertEqual(regress.compare_value(10, 10.5, 0.01, 1), "changed")  # under min_delta
        self.assertEqual(regress.compare_value(10, 8, 0.10, 1), "improvement")
        self.assertEqual(regress.compare_value(1e-7, 9e-6, 0.5, 0, 1e-5), "changed")  # below the floor
        self.assertEqual(regress.compare_value(0.01, float("inf"), 0.5), "regression")
        self.assertEqual(regress.compare_value(float("inf"), float("inf"), 0.5), "same")


if __name__ == "__main__":
    unittest.main(verbosity=2)
