"""The numeric options of `python3 -m ikbench`: a value outside the option's meaningful range
(0 where a count must be positive, a negative count, 2^63, nan, text) is refused before any
work with exit status 2 and a message naming the option and its range, never a traceback; the
edges of each range are taken."""
import json

import pytest
import synth
from conftest import cli

BIG = str(2**63)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A run whose first family is sequential (the report plays it as a clip), and a second run."""
    root = tmp_path_factory.mktemp("numbers")
    a = synth.make_run(root / "a", problems=8)
    meta = json.loads((a / "run.json").read_text())
    meta["families"][0]["sequential"] = True
    (a / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
    b = synth.make_run(root / "b", problems=8, seed=2)
    return a, b


# (command before the option, option, refused values, a value taken)
OPTIONS = [
    (["report", "A", "--out", "OUT"], "--clip-frames", ["0", "-1", str(2**31), BIG, "nan"], "1"),
    (["report", "A", "--out", "OUT"], "--trace-problems", ["-1", str(2**31), BIG, "nan"], "0"),
    (["report", "A", "--out", "OUT"], "--trace-head", ["-1", str(2**31), BIG, "nan"], "0"),
    (["report", "A", "--out", "OUT"], "--trace-points", ["-1", str(2**31), BIG, "nan"], "0"),
    (["summary", "A"], "--resamples", ["0", "-1", BIG, "nan"], "1"),
    (["summary", "A"], "--seed", ["-1", str(2**64), "nan", "1.5"], str(2**64 - 1)),
    (["verify", "A"], "--max-rows", ["-1", "nan"], "0"),
    (["compare", "A", "B"], "--alpha", ["0", "1", "-0.5", "nan", "inf"], "0.5"),
    (["tune", "--solvers", "dls", "--tune-on", "quick", "--evaluate-on", "quick"], "--threads", ["-1", BIG, "nan"],
     None),
    (["tune", "--solvers", "dls", "--tune-on", "quick", "--evaluate-on", "quick"], "--runner-ups", ["-1", "nan"],
     None),
]


def _args(words, runs, tmp_path):
    a, b = runs
    return [str(a) if w == "A" else str(b) if w == "B" else str(tmp_path / "out.html") if w == "OUT" else w
            for w in words]


@pytest.mark.parametrize("words,option,bad,good", OPTIONS, ids=[o[1] + "-" + o[0][0] for o in OPTIONS])
def test_out_of_range_values_are_refused_cleanly(words, option, bad, good, runs, tmp_path):
    for value in bad:
        p = cli(*_args(words, runs, tmp_path), f"{option}={value}")
        assert p.returncode == 2, f"{option} {value}: exit {p.returncode}\n{p.stdout}{p.stderr}"
        assert "Traceback" not in p.stderr and option in p.stderr, f"{option} {value}: {p.stderr}"
        assert not (tmp_path / "out.html").exists()
    if good is not None:
        p = cli(*_args(words, runs, tmp_path), f"{option}={good}")
        assert p.returncode in (0, 1) and "Traceback" not in p.stderr, f"{option} {good}: {p.stderr}"


def test_report_clip_frames_zero_is_refused_not_a_traceback(runs, tmp_path):
    """A sequential family's clip needs a frame: 0 is refused, naming the range."""
    p = cli("report", runs[0], "--out", tmp_path / "r.html", "--clip-frames", "0")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "--clip-frames 0: expected an integer in [1, 2147483647]" in p.stderr
    assert not (tmp_path / "r.html").exists()


def test_report_trace_points_zero_keeps_the_head_and_the_last_record(runs, tmp_path):
    """--trace-points 0: no records at a stride after the head, only the last (a trace longer than
    the head is thinned, not divided by zero)."""
    from ikbench.render import report

    assert list(report.thin_indices(6, 1, 0)) == [0, 5]
    assert list(report.thin_indices(6, 1, 0, keep=[3])) == [0, 3, 5]
    p = cli("report", runs[0], "--out", tmp_path / "r.html", "--trace-head", "1", "--trace-points", "0")
    assert p.returncode == 0, p.stderr
