"""The regression gate's history mode: a run against the recent history of its machine identity."""
import synth

from conftest import sha
from ikbench.cli import gate_commands
from ikbench.cli.main import main as ikbench_main

SOLVERS = {"dls": (0.9, 3.0, (5, 30)), "ccd": (0.6, 3.0, (20, 80)), "sdls": (0.8, 3.0, (8, 40)),
           "two-bone": (1.0, 3.0, (1, 1))}


def build(directory, i, *, slow=None, cpu="Synthetic CPU 1", seed=7, jitter=1.0):
    """Run i of one build (same seed: the same deterministic figures), commit sha(i); `slow`
    multiplies that spec's times; `jitter` all times (another load)."""
    def edit(rows):
        for r in rows:
            f = jitter * (3.0 if slow and r["solver"] == slow else 1.0)
            r["time_us"] = synth.num(float(r["time_us"]) * f)
    return synth.make_run(directory, seed=seed, problems=30, solvers=SOLVERS, cpu=cpu, edit_rows=edit,
                          run_json_extra={"git_revision": sha(i), "start_time": f"2026-01-01T00:{i:02d}:00Z"})


def history(db, tmp_path, n=6):
    runs = [str(build(tmp_path / f"h{i}", i, jitter=1.0 + 0.05 * (i % 3))) for i in range(n)]
    assert ikbench_main(["history", "add", *runs, "--db", db]) == 0


def test_unchanged_build_passes(db, tmp_path, capsys):
    history(db, tmp_path)
    run = build(tmp_path / "new", 20, jitter=1.1)
    assert gate_commands.main(["history", str(run), "--db", db]) == 0
    out = capsys.readouterr().out
    assert "last 5 runs of machine" in out
    assert gate_commands.main(["history", str(run), "--db", db, "--segment"]) == 0


def test_slower_solver_fails_against_history(db, tmp_path, capsys):
    history(db, tmp_path)
    run = build(tmp_path / "slow", 21, slow="dls")
    assert gate_commands.main(["history", str(run), "--db", db, "--last", "3"]) == 1
    out = capsys.readouterr().out
    assert "dls" in out and "[R]" in out


def test_success_drop_fails_against_history(db, tmp_path, capsys):
    history(db, tmp_path)
    worse = dict(SOLVERS, dls=(0.5, 3.0, (5, 30)))
    run = synth.make_run(tmp_path / "worse", seed=7, problems=30, solvers=worse,
                         run_json_extra={"git_revision": sha(22), "start_time": "2026-01-01T01:00:00Z"})
    assert gate_commands.main(["history", str(run), "--db", db, "--no-time"]) == 1
    assert "success" in capsys.readouterr().out


def test_other_machine_has_no_history(db, tmp_path, capsys):
    history(db, tmp_path, n=2)
    run = build(tmp_path / "other", 23, cpu="Another CPU")
    assert gate_commands.main(["history", str(run), "--db", db]) == 2
    err = capsys.readouterr().err
    assert "no history of machine" in err and "Another CPU" in err


def test_run_already_in_the_store_is_left_out(db, tmp_path, capsys):
    history(db, tmp_path, n=3)
    run = build(tmp_path / "again", 24, slow="dls")
    assert ikbench_main(["history", "add", str(run), "--db", db]) == 0
    capsys.readouterr()
    # the slow run is in the store but is never its own reference: still a regression
    assert gate_commands.main(["history", str(run), "--db", db, "--last", "3"]) == 1


def failing_as(directory, i, status, spec="ccd"):
    """Run i of the same build as build(), except that `spec`'s failures end with `status`: the
    same success rate, another outcome of the failures."""
    def edit(rows):
        for r in rows:
            if r["solver"] == spec and r["status"] == "max-iterations":
                r["status"] = status
    return synth.make_run(directory, seed=7, problems=30, solvers=SOLVERS, edit_rows=edit,
                          run_json_extra={"git_revision": sha(i), "start_time": f"2026-01-01T00:{i:02d}:00Z"})


def test_outcome_rates_fail_against_history(db, tmp_path, capsys):
    # the history's cells carry their outcome counts: failures that now end at the time budget
    # (the success rate unchanged) raise the timed-out rate, which only the outcome rates show
    history(db, tmp_path)
    run = failing_as(tmp_path / "budget", 25, "time-limit")
    assert gate_commands.main(["history", str(run), "--db", db, "--no-time"]) == 1
    out = capsys.readouterr().out
    assert "timed-out rate" in out and "outcome rates not compared" not in out
    # the same build without the failures at the budget passes: the rates are the history's
    assert gate_commands.main(["history", str(build(tmp_path / "same", 26)), "--db", db, "--no-time"]) == 0


def test_history_without_outcome_counts_says_so(db, tmp_path, capsys):
    # runs recorded before the store kept outcome counts (NULL): compared without the outcome
    # rates, and the report says why and what to do
    history(db, tmp_path, n=3)
    from ikbench.io.store import open_store
    with open_store(db, create=False) as store:
        store.begin()
        store.execute("UPDATE cells SET outcomes = NULL, targets = NULL")
        store.commit()
    run = failing_as(tmp_path / "budget", 27, "time-limit")
    assert gate_commands.main(["history", str(run), "--db", db, "--no-time"]) == 0
    out = capsys.readouterr().out
    assert "outcome rates not compared" in out and "ikbench history add" in out


def loaded_build(directory, i, peak, jitter):
    """Run i of the same build as build(), `jitter` times slower, with a recorded load of `peak` on 2 cores."""
    def edit(rows):
        for r in rows:
            r["time_us"] = synth.num(float(r["time_us"]) * jitter)
    return synth.make_run(directory, seed=7, problems=30, solvers=SOLVERS, edit_rows=edit, run_json_extra={
        "git_revision": sha(i), "start_time": f"2026-01-01T00:{i:02d}:00Z",
        "load": {"start": peak, "end": peak, "cores": 2, "samples": {"count": 2, "max": peak}, "noisy": peak > 2}})


def test_noisy_history_runs_left_out_and_named(db, tmp_path, capsys):
    # six runs at a load of 2 to 3 whose speeds differ by 0.85x to 1.28x, then two under a load of 8
    # and 4x slower: the window leaves those out (named), and an unchanged build passes
    runs = [str(loaded_build(tmp_path / f"h{i}", i, 2.5, f)) for i, f in enumerate((0.85, 1.0, 1.28, 0.9, 1.2, 1.05))]
    runs += [str(loaded_build(tmp_path / f"l{i}", i, 8.0, 4.0)) for i in (6, 7)]
    assert ikbench_main(["history", "add", *runs, "--db", db]) == 0
    capsys.readouterr()
    run = build(tmp_path / "new", 30)
    assert gate_commands.main(["history", str(run), "--db", db]) == 0
    out = capsys.readouterr().out
    assert "left out as noisy" in out and sha(6)[:10] in out and sha(7)[:10] in out and "load average 8.0" in out
    assert "times at the median speed of the window's runs" in out
    # kept, the loaded runs are the latest of the window and its reference is theirs
    gate_commands.main(["history", str(run), "--db", db, "--include-noisy", "--last", "2"])
    out = capsys.readouterr().out
    assert "left out as noisy" not in out
