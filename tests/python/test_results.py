"""ikbench.io.results: loading, the format's validation, the manifest, format version 1."""
import json
import os

import numpy as np
import pytest
import synth

from ikbench.io import hashing, results
from ikbench.io.results import ResultsError


def test_loads_a_version_2_run(run_dir):
    run = results.load(run_dir)
    assert run.format_version == 2 and run.complete and not run.issues
    assert list(run.solves.columns) == results.SOLVE_COLUMNS
    assert len(run.solves) == 2 * 40 * 3
    assert run.solves["converged"].dtype == bool and run.solves["iterations"].dtype == np.int64
    assert set(run.models) == {"m0"} and run.models["m0"]["nq"] == 2
    assert len(run.problems) == 80
    assert list(run.solutions.columns) == results.SOLUTION_COLUMNS and run.solutions.empty
    assert run.tolerances == (1e-5, 1e-5)
    # traces are read on first use, with the format's columns
    assert run._traces is None
    assert list(run.traces.columns) == results.TRACE_COLUMNS
    assert len(run.traces) > 0
    # floats read back exactly as written (shortest round-trip text)
    text = (run_dir / "solves.csv").read_text().splitlines()[1].split(",")
    assert run.solves["position_error"].iat[0] == float(text[11])
    q = run.q_of(0)
    assert q.shape == (2,)


def test_missing_column_names_file_line_and_column(run_dir):
    p = run_dir / "solves.csv"
    lines = p.read_text().splitlines()
    header = lines[0].split(",")
    i = header.index("within_limits")
    new = [",".join(x for j, x in enumerate(line.split(",")) if j != i) for line in lines]
    p.write_text("\n".join(new) + "\n")
    synth.rewrite_manifest(run_dir)
    with pytest.raises(ResultsError) as e:
        results.load(run_dir)
    msg = str(e.value)
    assert "solves.csv:1" in msg and "'within_limits'" in msg and "missing column" in msg


def test_bad_value_names_line_and_column(run_dir):
    p = run_dir / "solves.csv"
    lines = p.read_text().splitlines()
    f = lines[4].split(",")
    f[9] = "many"  # iterations
    lines[4] = ",".join(f)
    p.write_text("\n".join(lines) + "\n")
    synth.rewrite_manifest(run_dir)
    with pytest.raises(ResultsError) as e:
        results.load(run_dir)
    assert "solves.csv:5: column 'iterations': expected a non-negative integer, got 'many'" in str(e.value)


def test_short_line_is_named(run_dir):
    p = run_dir / "solves.csv"
    lines = p.read_text().splitlines()
    lines[7] = ",".join(lines[7].split(",")[:-2])
    p.write_text("\n".join(lines) + "\n")
    synth.rewrite_manifest(run_dir)
    with pytest.raises(ResultsError, match=r"solves.csv:8: 22 fields, but the header has 24"):
        results.load(run_dir)


def test_missing_files(tmp_path, run_dir):
    with pytest.raises(ResultsError, match="solves.csv: no such file"):
        results.load(tmp_path / "nothing")
    os.remove(run_dir / "problems.jsonl")
    with pytest.raises(ResultsError, match="problems.jsonl"):
        results.load(run_dir)


def test_incomplete_run_is_refused_unless_allowed(tmp_path):
    d = synth.make_run(tmp_path / "r", complete=False, run_json_extra={"interrupted": True, "progress": 17})
    with pytest.raises(ResultsError) as e:
        results.load(d)
    msg = str(e.value)
    assert "incomplete run" in msg and '"complete": false' in msg and "interrupted" in msg
    run = results.load(d, allow_incomplete=True)
    assert not run.complete and any("complete" in i for i in run.issues)
    assert len(run.solves) == 240


def test_mixed_files_are_refused(tmp_path):
    a = synth.make_run(tmp_path / "a", seed=1)
    b = synth.make_run(tmp_path / "b", seed=2)
    # the same size but other bytes: only the hash tells
    data = bytearray((a / "problems.jsonl").read_bytes())
    i = data.index(b'"problem": 3')
    data[i + 11:i + 12] = b"4"
    data2 = bytes(data).replace(b'"problem": 4, "name": "planar-position/3"', b'"problem": 3, "name": "planar-position/4"', 1)
    assert len(data2) == len(data)
    (a / "problems.jsonl").write_bytes(data2)
    with pytest.raises(ResultsError) as e:
        results.load(a)
    assert "mixed or modified" in str(e.value) and "problems.jsonl" in str(e.value) and "FNV-1a" in str(e.value)
    run = results.load(a, allow_incomplete=True)
    assert any("problems.jsonl" in i for i in run.issues)
    # another run's solves.csv in this directory: bytes and rows differ from the manifest
    (a / "solves.csv").write_bytes((b / "solves.csv").read_bytes()[:-200])
    with pytest.raises(ResultsError, match="mixed or modified run: solves.csv has"):
        results.load(a)


def test_manifest_rows_checked(tmp_path):
    d = synth.make_run(tmp_path / "r")
    meta = json.loads((d / "run.json").read_text())
    meta["files"]["traces.csv"]["rows"] += 1
    (d / "run.json").write_text(json.dumps(meta))
    run = results.load(d)  # traces are read lazily: checked on first use
    with pytest.raises(ResultsError, match="traces.csv has .* rows, run.json's manifest says"):
        run.traces


def test_problem_and_model_fields_are_validated(tmp_path):
    d = synth.make_run(tmp_path / "r")
    lines = (d / "problems.jsonl").read_text().splitlines()
    rec = json.loads(lines[2])
    rec["goals"][0]["kind"] = "wish"
    lines[2] = json.dumps(rec)
    (d / "problems.jsonl").write_text("\n".join(lines) + "\n")
    synth.rewrite_manifest(d)
    with pytest.raises(ResultsError, match=r"problems.jsonl:3: field 'goals\[0\].kind': expected one of"):
        results.load(d)
    d = synth.make_run(tmp_path / "m")
    doc = json.loads((d / "models.json").read_text())
    doc["models"][0]["joints"][1]["parent"] = 5
    (d / "models.json").write_text(json.dumps(doc))
    synth.rewrite_manifest(d)
    with pytest.raises(ResultsError, match=r"models\[0\].joints\[1\]: field 'parent'"):
        results.load(d)


def test_solves_of_another_suite_are_refused(run_dir):
    p = run_dir / "solves.csv"
    p.write_text(p.read_text().replace("\nsynthetic,", "\nother,", 1))
    synth.rewrite_manifest(run_dir)
    with pytest.raises(ResultsError, match="column 'suite' is 'other'.*mixed"):
        results.load(run_dir)


def test_version_1_run_loads_with_what_it_has(tmp_path, run_dir):
    d = tmp_path / "v1"
    d.mkdir()
    lines = (run_dir / "solves.csv").read_text().splitlines()
    n = len(results.SOLVE_COLUMNS_V1)
    (d / "solves.csv").write_text("\n".join(",".join(x.split(",")[:n]) for x in lines) + "\n")
    meta = json.loads((run_dir / "run.json").read_text())
    for k in ("format_version", "complete", "files"):
        meta.pop(k)
    meta["format"] = "ikbench-run/1"
    (d / "run.json").write_text(json.dumps(meta))
    run = results.load(d)
    assert run.format_version == 1 and run.problems is None and run.models is None
    assert list(run.solves.columns) == results.SOLVE_COLUMNS_V1
    with pytest.raises(ResultsError, match="needs a results directory of format version 2"):
        run.require_version(2, "verify")


def test_fnv1a64():
    assert hashing.fnv1a64_hex(b"") == "cbf29ce484222325"
    assert hashing.fnv1a64_hex(b"foobar") == "85944171f73967e8"  # the FNV test vector
    rng = np.random.default_rng(3)
    for n in (1, 63, 64, 1000, (1 << 18) + 7, 700_001):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert hashing.fnv1a64(data) == hashing.fnv1a64_reference(data) == int(synth.fnv1a64(data), 16)
