"""`ikbench tune` (python/ikbench/analysis/tune.py) and scripts/arm_table.py.

Behaviour only, nothing timed: the criterion's syntax and errors, the point it picks on synthetic
figures, the sets and their overlap, and (with the harness binary: $IKBENCH_CLI, else this
repository's build/release/benchmarks/ikbench; skipped without) a tiny grid on a 3-DOF chain
suite: the chosen point is the criterion's choice recomputed from the tuning run's own files,
and the evaluation run ran that point only. The corpus tests skip when $IKBENCH_CORPUS_DIR
(default ../shared/data beside the source tree) is absent."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "python"))

from ikbench.analysis import figures, tune
from ikbench.io import results  # noqa: E402


def _binary():
    for p in (os.environ.get("IKBENCH_CLI"), REPO / "build" / "release" / "benchmarks" / "ikbench"):
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def _env():
    return dict(os.environ, PYTHONPATH=str(REPO / "python"), MPLBACKEND="Agg")


@pytest.fixture(scope="module")
def exe():
    e = _binary()
    if e is None:
        pytest.skip("no ikbench binary: set IKBENCH_CLI to the built harness (ctest does) or build "
                    "build/release/benchmarks/ikbench")
    return e


def _corpus():
    env = os.environ.get("IKBENCH_CORPUS_DIR")
    d = Path(env) if env else REPO.parent / "shared" / "data"
    if not (d / "robots").is_dir():
        pytest.skip(f"the shared corpus is absent ({d}; set IKBENCH_CORPUS_DIR): corpus test skipped")
    return d


# ---------------------------------------------------------------- the criterion

def test_default_criterion_is_success_then_median_time():
    c = tune.parse_criterion(tune.DEFAULT_CRITERION)
    assert [(k.kind, k.terms, k.direction) for k in c.clauses] == [
        ("objective", [(1.0, "success")], "max"), ("objective", [(1.0, "median_time")], "min")]


def test_constraints_weighted_scores_and_default_objectives():
    c = tune.parse_criterion("success>=0.999, mean_time")
    assert c.constraints[0].terms == [(1.0, "success")] and c.constraints[0].op == ">="
    assert c.constraints[0].bound == 0.999
    assert [k.text for k in c.objectives] == ["mean_time"]
    c = tune.parse_criterion("max:2*success - 0.001*mean_time")
    assert c.objectives[0].terms == [(2.0, "success"), (-0.001, "mean_time")]
    assert c.objectives[0].direction == "max"
    c = tune.parse_criterion("worst_success>0.9,p99_time<=4000")
    assert len(c.constraints) == 2
    assert [k.text for k in c.objectives] == ["success", "median_time"]  # the default objectives


@pytest.mark.parametrize("text, says", [
    ("", "empty"),
    ("speed", "unknown figure 'speed'"),
    ("success,,mean_time", "empty clause"),
    ("success>=high", "constraint"),
    ("max:", "empty expression"),
    ("max:success mean_time", "cannot read"),
    ("min:3*nosuch", "unknown figure 'nosuch'"),
])
def test_bad_criteria_are_refused_with_the_clause(text, says):
    with pytest.raises(tune.TuneError) as e:
        tune.parse_criterion(text)
    assert says in str(e.value)


def _points(rows):
    df = pd.DataFrame(rows).set_index("spec")
    if "available" not in df:
        df["available"] = True
    return df


def test_choose_is_lexicographic_with_ties_in_grid_order():
    pts = _points([{"spec": "a", "success": 1.0, "mean_time": 10.0},
                   {"spec": "b", "success": 1.0, "mean_time": 5.0},
                   {"spec": "c", "success": 0.9, "mean_time": 1.0},
                   {"spec": "d", "success": 1.0, "mean_time": 5.0}])
    ranking, excluded = tune.choose(pts, tune.parse_criterion("success,mean_time"))
    assert ranking == ["b", "d", "a", "c"] and excluded == {}
    ranking, _ = tune.choose(pts, tune.parse_criterion("success,mean_time"), order=["d", "c", "b", "a"])
    assert ranking[:2] == ["d", "b"]  # a tie keeps the given order


def test_choose_with_constraints_scores_and_missing_figures():
    pts = _points([{"spec": "a", "success": 1.0, "mean_time": 10.0},
                   {"spec": "b", "success": 0.99, "mean_time": 5.0},
                   {"spec": "c", "success": 0.9, "mean_time": 1.0},
                   {"spec": "n", "success": math.nan, "mean_time": math.nan, "available": False},
                   {"spec": "x", "success": 0.995, "mean_time": math.nan}])
    ranking, excluded = tune.choose(pts, tune.parse_criterion("success>=0.95,mean_time"))
    assert ranking == ["b", "a", "x"]  # x: no mean time, ranked last
    assert excluded["c"].startswith("fails success>=0.95 (value 0.9)") and excluded["n"].startswith("n/a")
    ranking, _ = tune.choose(pts, tune.parse_criterion("max:success-0.1*mean_time"))
    assert ranking[0] == "c"  # 0.9 - 0.1 beats 0.99 - 0.5 and 1 - 1
    ranking, excluded = tune.choose(pts, tune.parse_criterion("success>1"))
    assert ranking == [] and set(excluded) == {"a", "b", "c", "n", "x"}


def test_set_figures_pool_and_combine_families():
    rows = []
    for fam, n_ok, t in (("f1", 3, 10.0), ("f2", 4, 40.0)):
        for k in range(4):
            rows.append({"family": fam, "solver": "s", "status": "converged" if k < n_ok else "stalled",
                         "converged": k < n_ok, "within_limits": True, "iterations": 5, "time_us": t,
                         "fk_evals": 6, "jacobian_evals": 5, "position_error": 0.0, "orientation_error": 0.0,
                         "dof": 3, "effectors": 1, "goal": "position"})
    pts, fam = tune.set_figures(pd.DataFrame(rows), intervals=False)
    p = pts.loc["s"]
    assert p["success"] == 7 / 8 and p["worst_success"] == 3 / 4
    assert p["mean_time"] == 25.0 and p["worst_mean_time"] == 40.0
    assert p["geomean_time"] == pytest.approx(20.0) and p["mean_evals"] == 11.0
    assert set(fam["family"]) == {"f1", "f2"}


# ---------------------------------------------------------------- sets

def _suite(path, name, seed, families):
    path.write_text(json.dumps({"name": name, "seed": seed, "options": {"max_iterations": 100},
                                "families": families}))
    return path


def _chain(name, count=16):
    return {"name": name, "type": "random_chain", "count": count, "models": 4,
            "chain": {"joints": 3, "limits": "symmetric", "limit": 2.5},
            "goals": {"set": "reachable", "kind": "position", "start": "nominal"}}


def test_sets_select_families_and_refuse_what_they_cannot_run(tmp_path):
    s = _suite(tmp_path / "s.json", "s", 3, [_chain("a"), _chain("b")])
    items = tune.parse_set(f"{s}:b", "--tune-on")
    assert items[0].families == ["b"] and items[0].seed == 3 and items[0].selected
    items = tune.parse_set(f"{s}@9", "--tune-on")
    assert items[0].families == ["a", "b"] and items[0].seed == 9 and items[0].seed_given
    for bad, says in ((f"{s}:c", "no family 'c'"), (f"{s}:a+{s}:a", "unique within a set"),
                      (f"{s}@x", "seed"), (str(tmp_path / "none.json"), "not found"), ("", "empty"),
                      ("nosuchsuite", "unknown suite 'nosuchsuite'")):
        with pytest.raises(tune.TuneError) as e:
            tune.parse_set(bad, "--tune-on")
        assert says in str(e.value), (bad, str(e.value))
    # a selection is written as a copy with the same name and seed and absolute data files
    f = tune.item_suite_file(tune.parse_item(f"{s}:b", "x"), tmp_path / "copies")
    doc = json.loads(f.read_text())
    assert doc["name"] == "s" and doc["seed"] == 3 and [x["name"] for x in doc["families"]] == ["b"]
    q = tune.parse_item("quick:ur5-pose", "x")
    doc = json.loads(tune.item_suite_file(q, tmp_path / "copies").read_text())
    assert Path(doc["families"][0]["file"]).is_absolute() and Path(doc["families"][0]["file"]).is_file()


def test_the_same_family_and_seed_in_both_sets_is_refused(tmp_path):
    s = _suite(tmp_path / "s.json", "s", 3, [_chain("a"), _chain("b")])
    args = _args(tmp_path, f"{s}:a", f"{s}:a,b", ikbench=sys.executable)
    with pytest.raises(tune.TuneError) as e:
        tune.tune(args, log=lambda m: None)
    assert "same name and seed" in str(e.value) and "a (seed 3)" in str(e.value)
    # another seed gives other problems: accepted (up to running the harness)
    assert not (tune.family_keys(tune.parse_set(f"{s}:a", "t")) & tune.family_keys(tune.parse_set(f"{s}@4:a", "e")))


def _args(tmp_path, tune_on, evaluate_on, **kw):
    import argparse

    p = argparse.ArgumentParser()
    tune.add_arguments(p)
    a = p.parse_args(["--solvers", kw.pop("solvers", "dls:lambda={0.01,0.5}"), "--tune-on", tune_on,
                      "--evaluate-on", evaluate_on, "--out", str(tmp_path / "out")])
    a.command_line = "test"
    for k, v in kw.items():
        setattr(a, k, v)
    return a


# ---------------------------------------------------------------- with the harness

@pytest.fixture(scope="module")
def chain_suites(tmp_path_factory):
    d = tmp_path_factory.mktemp("suites")
    t = _suite(d / "chain3-tune.json", "chain3-tune", 11, [_chain("chain3-a"), _chain("chain3-b", 12)])
    e = _suite(d / "chain3-eval.json", "chain3-eval", 12, [_chain("chain3-c")])
    return t, e


def _tune_cli(exe, *args):
    return subprocess.run([exe, "tune", *map(str, args)], capture_output=True, text=True, env=_env(), timeout=600)


def test_the_chosen_point_is_the_criterions_choice_and_the_only_one_evaluated(exe, chain_suites, tmp_path):
    t, e = chain_suites
    out = tmp_path / "tuned"
    p = _tune_cli(exe, "--solvers", "dls:lambda={0.01,0.5}", "--tune-on", t, "--evaluate-on", e, "--out", out)
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((out / "tune.json").read_text())
    assert rep["points"] == ["dls:lambda=0.01", "dls:lambda=0.5"]
    # The criterion's choice, recomputed from the tuning run's files with the library's figures.
    run = results.load(rep["tuning_set"]["runs"][0]["results"])
    assert set(run.solves["solver"]) == set(rep["points"])
    cells = figures.cell_figures(run.solves, keys=("solver",)).set_index("solver")
    best = sorted(rep["points"], key=lambda s: (-cells.loc[s, "success_rate"], cells.loc[s, "time_us_mean"]))[0]
    assert rep["chosen"] == best
    assert rep["ranking"][0] == best and sorted(rep["ranking"]) == sorted(rep["points"])
    # The evaluation ran the chosen point only, on the evaluation suite's problems.
    ev = results.load(rep["evaluation_set"]["runs"][0]["results"])
    assert set(ev.solves["solver"]) == {best}
    assert [s["spec"] for s in ev.meta["solvers"]] == [best]
    assert set(ev.solves["family"]) == {"chain3-c"} and ev.meta["suite"]["seed"] == 12
    assert rep["evaluation"]["point"]["solves"] == 16
    ok = figures.success_mask(ev.solves)
    assert rep["evaluation"]["point"]["success"] == pytest.approx(ok.mean())
    md = (out / "tune.md").read_text()
    assert "on the tuning set" in md and "on the evaluation set" in md and f"`{best}`" in md
    assert "load average" in md
    assert p.stdout.startswith("# ikbench tune")


def test_a_machine_independent_criterion_and_family_selection(exe, chain_suites, tmp_path):
    t, e = chain_suites
    out = tmp_path / "evals"
    p = _tune_cli(exe, "--solvers", "dls:lambda={0.01,0.5},dls:lambda=0.1:max_step=0.2", "--tune-on",
                  f"{t}:chain3-b", "--evaluate-on", f"{e}:chain3-c", "--criterion", "success>=0.5,mean_evals",
                  "--out", out)
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((out / "tune.json").read_text())
    run = results.load(rep["tuning_set"]["runs"][0]["results"])
    assert set(run.solves["family"]) == {"chain3-b"}
    cells = figures.cell_figures(run.solves, keys=("solver",)).set_index("solver")
    evals = cells["fk_evals_mean"] + cells["jacobian_evals_mean"]
    ok = [s for s in rep["points"] if cells.loc[s, "success_rate"] >= 0.5]
    assert rep["chosen"] == min(ok, key=lambda s: (evals[s], rep["points"].index(s)))
    for s in set(rep["points"]) - set(ok):
        assert rep["excluded"][s].startswith("fails success>=0.5")
    ev = results.load(rep["evaluation_set"]["runs"][0]["results"])
    assert set(ev.solves["solver"]) == {rep["chosen"]}


def test_a_reference_gives_time_ratios_and_is_not_a_point(exe, chain_suites, tmp_path):
    t, e = chain_suites
    out = tmp_path / "ref"
    p = _tune_cli(exe, "--solvers", "dls:lambda={0.01,0.5}", "--tune-on", t, "--evaluate-on", e,
                  "--reference", "jt", "--criterion", "success>=0,worst_time_ratio", "--out", out)
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((out / "tune.json").read_text())
    assert "jt" not in rep["points"] and rep["reference"] == "jt"
    pts = rep["tuning"]["points"]
    assert rep["chosen"] == min(rep["points"], key=lambda s: (pts[s]["worst_time_ratio"], rep["points"].index(s)))
    ev = results.load(rep["evaluation_set"]["runs"][0]["results"])
    assert set(ev.solves["solver"]) == {rep["chosen"], "jt"}
    assert rep["evaluation"]["point"]["time_ratio"] > 0


def test_no_point_meets_the_constraints_nothing_is_evaluated(exe, chain_suites, tmp_path):
    t, e = chain_suites
    out = tmp_path / "none"
    p = _tune_cli(exe, "--solvers", "dls:lambda={0.01,0.5}", "--tune-on", t, "--evaluate-on", e,
                  "--criterion", "success>1", "--out", out)
    assert p.returncode == 1, p.stdout + p.stderr
    rep = json.loads((out / "tune.json").read_text())
    assert rep["chosen"] is None and rep["evaluation"] is None and not (out / "evaluate").exists()
    assert "nothing was evaluated" in (out / "tune.md").read_text()


def test_overlapping_sets_are_refused_or_flagged(exe, chain_suites, tmp_path):
    t, _ = chain_suites
    p = _tune_cli(exe, "--solvers", "dls:lambda={0.01,0.5}", "--tune-on", t, "--evaluate-on", f"{t}:chain3-a",
                  "--out", tmp_path / "o1")
    assert p.returncode == 2 and "same name and seed" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    p = _tune_cli(exe, "--solvers", "dls:lambda={0.01,0.5}", "--tune-on", t, "--evaluate-on", f"{t}:chain3-a",
                  "--allow-overlap", "--out", tmp_path / "o2")
    assert p.returncode == 0, p.stdout + p.stderr  # allowed: it runs, and the report flags it
    rep = json.loads((tmp_path / "o2" / "tune.json").read_text())
    assert any(n.startswith("OVERLAP: the sets share families") for n in rep["notes"])
    assert any("16 of the 16 evaluation problems are also in the tuning set" in n for n in rep["notes"])


def test_bad_commands_exit_2_with_one_line(exe, chain_suites, tmp_path):
    t, e = chain_suites
    for args, says in (((), "required"),
                       (("--solvers", "dls", "--tune-on", t, "--evaluate-on", e, "--criterion", "fast"),
                        "unknown figure 'fast'"),
                       (("--solvers", "nosuch:x={1,2}", "--tune-on", t, "--evaluate-on", e, "--out",
                         tmp_path / "b1"), "nosuch"),
                       (("--solvers", "dls", "--tune-on", t, "--evaluate-on", e, "--criterion", "time_ratio"),
                        "--reference")):
        p = _tune_cli(exe, *args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert says in p.stderr, (args, p.stderr)


# ---------------------------------------------------------------- the per-arm table

def _arm_table(*args):
    return subprocess.run([sys.executable, str(REPO / "scripts" / "arm_table.py"), *map(str, args)],
                          capture_output=True, text=True, env=_env(), timeout=600)


def test_arm_table_on_a_shipped_arm(exe, tmp_path):
    p = _arm_table("table", "--arms", "ur5", "--samples", "20", "--solver", "dls:restarts=3",
                   "--reference", "jt", "--out", tmp_path / "t", "--ikbench", exe)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = [x for x in p.stdout.splitlines() if x.startswith("| UR5 (shipped")]
    assert len(lines) == 1 and "tuning set" in lines[0]
    data = json.loads((tmp_path / "t" / "arm_table.json").read_text())
    row = data["rows"][0]
    run = results.load(row["results"])
    s = run.solves[run.solves["solver"] == "dls:restarts=3"]
    assert row["successes"] == int(figures.success_mask(s).sum()) and row["solves"] == 20
    assert row["mean_us"] == pytest.approx(s["time_us"].mean())


def test_arm_table_corpus_suites_load(exe, tmp_path):
    corpus = _corpus()
    p = _arm_table("suites", "--out", tmp_path / "s", "--count", "3")
    assert p.returncode == 0, p.stdout + p.stderr
    for name in ("corpus-tune", "corpus-eval"):
        doc = json.loads((tmp_path / "s" / f"{name}.json").read_text())
        for f in doc["families"]:
            assert Path(f["file"]).is_absolute() and Path(f["file"]).resolve().is_relative_to(corpus.resolve())
        q = subprocess.run([exe, "list", "scenarios", "--suite", str(tmp_path / "s" / f"{name}.json")],
                           capture_output=True, text=True, env=_env(), timeout=300)
        assert q.returncode == 0, q.stderr
    tuned = {f["name"] for f in json.loads((tmp_path / "s" / "corpus-tune.json").read_text())["families"]}
    evald = {f["name"] for f in json.loads((tmp_path / "s" / "corpus-eval.json").read_text())["families"]}
    assert tuned and evald and not (tuned & evald)


def test_arm_table_on_a_corpus_arm(exe, tmp_path):
    _corpus()
    p = _arm_table("table", "--arms", "corpus-abb-irb2400", "--samples", "10", "--solver", "dls:restarts=3",
                   "--reference", "jt", "--out", tmp_path / "c", "--ikbench", exe)
    assert p.returncode == 0, p.stdout + p.stderr
    assert any(x.startswith("| ABB IRB 2400 (corpus") and "evaluation only" in x for x in p.stdout.splitlines())


def test_runner_ups_say_which_intervals_overlap_the_chosen_points():
    c = {"success_ci_low": 0.99, "success_ci_high": 1.0, "time_us_mean_ci_low": 10.0, "time_us_mean_ci_high": 12.0}
    near = {"success_ci_low": 0.98, "success_ci_high": 0.995, "time_us_mean_ci_low": 11.5, "time_us_mean_ci_high": 13.0}
    far = {"success_ci_low": 0.5, "success_ci_high": 0.6, "time_us_mean_ci_low": 20.0, "time_us_mean_ci_high": 30.0}
    assert tune.overlapping(near, c) == ["success", "mean time"]
    assert tune.overlapping(far, c) == []
