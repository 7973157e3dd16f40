"""Hostile input: refused with exit status 2 and one line naming the file and field and what was
expected, never a traceback, and nothing of it stored (one check for add and import,
ikbench.io.store_validate)."""
import copy
import json

import pytest

from conftest import one_line_error, run_cli, synthetic_run
from ikbench.io import store_exchange as exchange
from ikbench.io.store_open import open_history


@pytest.fixture(scope="module")
def export_doc(tmp_path_factory, step_runs):
    """A valid json export of three runs."""
    from ikbench.cli.main import main

    db = str(tmp_path_factory.mktemp("export") / "h.sqlite")
    assert main(["history", "add", *map(str, step_runs[:3]), "--db", db]) == 0
    with open_history(db) as s:
        return exchange.export_json(s)


def write(tmp_path, doc, name="bad.json"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


def runs_in(db):
    try:
        with open_history(db) as s:
            return len(s.query("SELECT id FROM runs ORDER BY id"))
    except Exception:
        return 0


def edited(doc, edit):
    d = copy.deepcopy(doc)
    edit(d)
    return d


@pytest.mark.parametrize("what,edit,expected", [
    ("threads as text", lambda d: d["records"][1]["run"].update(threads="many"), "records[1]: run.threads: expected an integer"),
    ("threads 2**63", lambda d: d["records"][0]["run"].update(threads=2**63), "run.threads: expected an integer from 1 to"),
    ("no machine key", lambda d: d["records"][0]["machine"].pop("key"), "records[0]: machine.key: expected a key"),
    ("a cell's count as a list", lambda d: d["records"][2]["cells"][0].update(solves=[1]),
     "records[2]: cells[0].solves: expected an integer"),
    ("a value that is not a number", lambda d: d["records"][0]["points"][3].update(value="fast"),
     "points[3].value: expected a number"),
    ("an infinite value", lambda d: d["records"][0]["points"][0].update(value=1e308 * 10),
     "malformed JSON: 'Infinity' is not a JSON number"),
    ("a record that is a list", lambda d: d["records"].__setitem__(0, [1, 2]), "records[0]: record: expected an object"),
    ("a side file's name with a slash", lambda d: d["records"][0]["documents"].append(
        {"file": "../../x.json", "kind": "gbench", "body": "{}"}), "].file: expected a file name (one path component"),
    ("a skipped entry without a commit", lambda d: d["skipped"].append({"reason": "build failed"}),
     "skipped[0]: skipped.git_commit: expected a non-empty string"),
    ("NUL in a subject", lambda d: d["records"][0]["run"].update(subject="a\x00b"), "run.subject: expected text without a NUL"),
])
def test_import_refuses_a_bad_record(what, edit, expected, export_doc, db, tmp_path, capsys):
    bad = write(tmp_path, edited(export_doc, edit))
    rc, out, err = run_cli(capsys, "import", str(bad), "--db", db)
    assert one_line_error(rc, err) and str(bad) in err and expected in err, (what, err)
    assert runs_in(db) == 0   # nothing of it stored


def test_import_refuses_a_lone_surrogate(export_doc, db, tmp_path, capsys):
    text = json.dumps(export_doc).replace('"suite": "synthetic"', '"suite": "synth\\ud800etic"', 1)
    bad = write(tmp_path, text)
    rc, _, err = run_cli(capsys, "import", str(bad), "--db", db)
    assert one_line_error(rc, err) and "run.suite: expected text of Unicode characters" in err, err
    assert runs_in(db) == 0


def test_import_refuses_deep_nesting(db, tmp_path, capsys):
    bad = write(tmp_path, '{"format": "ikbench-history/1", "records": ' + "[" * 100_000 + "]" * 100_000 + "}")
    rc, _, err = run_cli(capsys, "import", str(bad), "--db", db)
    assert one_line_error(rc, err) and "nested deeper than 64" in err and str(bad) in err, err


def test_a_bad_import_does_not_break_later_commands(export_doc, db, tmp_path, capsys):
    bad = write(tmp_path, edited(export_doc, lambda d: d["records"][1]["run"].update(threads="many")))
    assert run_cli(capsys, "import", str(bad), "--db", db)[0] == 2
    good = write(tmp_path, export_doc, "good.json")
    assert run_cli(capsys, "import", str(good), "--db", db)[0] == 0
    rc, _, err = run_cli(capsys, "publish", str(tmp_path / "site"), "--db", db)
    assert rc == 0, err


def test_add_refuses_a_deeply_nested_run_json(db, tmp_path, capsys):
    d = synthetic_run(tmp_path / "run", 1)
    (d / "run.json").write_text('{"a": ' + "[" * 200_000 + "]" * 200_000 + "}")
    rc, _, err = run_cli(capsys, "add", str(d), "--db", db)
    assert one_line_error(rc, err) and "run.json" in err and "nested deeper than 64" in err, err


def test_add_refuses_a_run_json_of_wrong_types(db, tmp_path, capsys):
    d = synthetic_run(tmp_path / "run", 1)
    meta = json.loads((d / "run.json").read_text())
    meta["families"][0]["dof"] = "seven"
    (d / "run.json").write_text(json.dumps(meta))
    rc, _, err = run_cli(capsys, "add", str(d), "--db", db)
    assert one_line_error(rc, err) and str(d) in err and "families[0].dof: expected an integer" in err, err
    assert runs_in(db) == 0


def test_store_with_a_schema_version_of_text(sqlite_db, tmp_path, capsys):
    d = synthetic_run(tmp_path / "run", 1)
    assert run_cli(capsys, "add", str(d), "--db", sqlite_db)[0] == 0
    import sqlite3

    con = sqlite3.connect(sqlite_db)
    con.execute("DROP TABLE schema_version")
    con.execute("CREATE TABLE schema_version (version TEXT, applied TEXT)")
    con.execute("INSERT INTO schema_version VALUES ('two', 'x')")
    con.commit()
    con.close()
    for argv in (["list"], ["add", str(d)]):
        rc, _, err = run_cli(capsys, *argv, "--db", sqlite_db)
        assert one_line_error(rc, err) and "schema_version" in err and "'two'" in err, err


@pytest.mark.parametrize("argv", [["trend", "--family", "f", "--solver", "s", "--threads", str(2**63)],
                                  ["list", "--limit", str(2**63)], ["list", "--limit", "-1"],
                                  ["backfill", "--commits", str(2**63)], ["changes", "--alpha", "0.001"]])
def test_numbers_out_of_range(argv, db, capsys):
    rc, _, err = run_cli(capsys, *argv, "--db", db)
    assert rc == 2 and "expected" in err and "Traceback" not in err, err
