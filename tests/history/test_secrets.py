"""Secrets: a PostgreSQL password given on a command line, or recorded in a run's command line, is
never printed, stored or exported (docs/history.md "Storage"); libpq's keyword strings are
PostgreSQL stores as URLs are."""
import gzip
import json

import pytest

from conftest import one_line_error, run_cli, synthetic_run, write_throughput
from ikbench.io import store_exchange as exchange
from ikbench.io.store_open import open_history
from ikbench.io.store import describe_db, is_postgresql
from ikbench.io.store_validate import run_key
from ikbench.io.redact import redact_secrets

SECRET = "s3cret-Pw"


@pytest.mark.parametrize("db", [
    f"postgresql://bob:{SECRET}@/ikbench?host=/nonexistent-ikbench-socket-dir",
    f"host=/nonexistent-ikbench-socket-dir dbname=ikbench user=bob password={SECRET}",
    f"host=/nonexistent-ikbench-socket-dir password='{SECRET} with blanks' dbname=x",
    f"host=/nonexistent-ikbench-socket-dir password='{SECRET}",   # a quote left open: libpq cannot parse it
])
def test_password_of_a_connection_string_never_printed(db, capsys):
    pytest.importorskip("psycopg2")
    for argv in (["list"], ["show", "1"], ["add", "/nonexistent-run"], ["export", "--format", "csv"]):
        rc, out, err = run_cli(capsys, *argv, "--db", db)
        assert one_line_error(rc, err), err
        assert SECRET not in out + err and "***" in err and "SQLite" not in err, err


def test_keyword_strings_are_postgresql():
    assert is_postgresql("host=/run/postgresql dbname=ikbench")
    assert is_postgresql("  dbname = ikbench")
    assert is_postgresql("postgresql:///ikbench?host=/run/postgresql") and is_postgresql("postgres://h/db")
    assert not is_postgresql("results/history.sqlite")
    assert not is_postgresql("./host=x.sqlite") and not is_postgresql("notakeyword=1")


@pytest.mark.parametrize("text,expected", [
    # the cases of the harness's redactSecrets (core/src/redact.cpp)
    ("postgresql://bob:s3cret@host/db", "postgresql://bob:***@host/db"),
    ("postgresql://bob:p@ss@host:5432/db?sslmode=require", "postgresql://bob:***@host:5432/db?sslmode=require"),
    ("postgresql://bob@host/db", "postgresql://bob@host/db"),
    ("postgresql:///db?host=/tmp&password=s3cret&user=x", "postgresql:///db?host=/tmp&password=***&user=x"),
    ("host=h password=s3cret dbname=x", "host=h password=*** dbname=x"),
    ("host=h password = 'a b\\' c' dbname=x", "host=h password =*** dbname=x"),
    ("host=h PASSWORD=s3cret", "host=h PASSWORD=***"),
    ("sslpassword=s3cret", "sslpassword=***"),
    ("ikbench run --history postgresql://u:pw@h/db --out x", "ikbench run --history postgresql://u:***@h/db --out x"),
    ("mypassword=x passwords=y", "mypassword=x passwords=y"),
    ("results/history.sqlite", "results/history.sqlite"),
])
def test_redaction_rule(text, expected):
    assert redact_secrets(text) == expected
    assert describe_db(text) == expected


def secret_run(tmp_path, i=1):
    d = synthetic_run(tmp_path / f"run{i}", i)
    meta = json.loads((d / "run.json").read_text())
    meta["command_line"] = (f"ikbench run --suite quick --history postgresql://bob:{SECRET}@db.example/ikbench "
                            f"--note 'host=h password={SECRET}'")
    (d / "run.json").write_text(json.dumps(meta))
    write_throughput(d)
    tp = json.loads((d / "throughput.json").read_text())
    tp["command_line"] = f"ikbench throughput --history postgresql://bob:{SECRET}@db.example/ikbench"
    (d / "throughput.json").write_text(json.dumps(tp))
    return d


def every_file_text(root):
    out = {}
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            out[p] = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8", "replace")
    return out


def test_a_runs_command_line_redacted_in_store_export_and_site(db, tmp_path, capsys):
    d = secret_run(tmp_path)
    rc, out, err = run_cli(capsys, "add", str(d), "--db", db)
    assert rc == 0, err
    with open_history(db) as s:
        row = s.query("SELECT key, command_line, run_json FROM runs ORDER BY id")[0]
        docs = s.query("SELECT body FROM documents ORDER BY file")
    assert SECRET not in row["command_line"] + row["run_json"] + "".join(x["body"] for x in docs)
    assert "postgresql://bob:***@db.example/ikbench" in row["command_line"] and "password=***" in row["command_line"]
    assert row["key"] == run_key(row["run_json"])   # the key is the redacted run.json's, never a hash of a secret
    out_dir = tmp_path / "out"
    for argv in (["export", "--format", "json", "--out", str(out_dir / "h.json"), "--side-files", str(out_dir / "side")],
                 ["export", "--format", "csv", "--out", str(out_dir / "h.csv")], ["publish", str(out_dir / "site")]):
        rc, _, err = run_cli(capsys, *argv, "--db", db)
        assert rc == 0, err
    files = every_file_text(out_dir)
    assert files and not [p for p, text in files.items() if SECRET in text]
    assert any("bob:***@db.example" in text for p, text in files.items() if p.name == "throughput.json.gz")


def test_records_stored_with_a_secret_are_redacted_on_import_and_export(db, tmp_path, capsys):
    # an export written before redaction: the secret in run.json's command line, the key its hash
    d = synthetic_run(tmp_path / "run", 2)
    assert run_cli(capsys, "add", str(d), "--db", str(tmp_path / "a.sqlite"))[0] == 0
    with open_history(str(tmp_path / "a.sqlite")) as s:
        doc = exchange.export_json(s)
    rec = doc["records"][0]
    meta = json.loads(rec["run"]["run_json"])
    meta["command_line"] = f"ikbench run --history postgresql://bob:{SECRET}@h/db"
    rec["run"]["run_json"] = json.dumps(meta, sort_keys=True)
    rec["run"]["command_line"] = meta["command_line"]
    old_key = rec["run"]["key"] = run_key(rec["run"]["run_json"])
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    rc, _, err = run_cli(capsys, "import", str(old), "--db", db)
    assert rc == 0, err
    with open_history(db) as s:
        row = s.query("SELECT key, command_line, run_json FROM runs ORDER BY id")[0]
    assert SECRET not in row["command_line"] + row["run_json"] and "bob:***@h" in row["command_line"]
    assert row["key"] != old_key and row["key"] == run_key(row["run_json"])
    # a store that holds such a record (written before the check): its exports are redacted
    store = str(tmp_path / "legacy.sqlite")
    assert run_cli(capsys, "add", str(d), "--db", store)[0] == 0
    with open_history(store, create=True) as s:
        s.begin()
        s.execute("UPDATE runs SET command_line = ?, run_json = ?", (meta["command_line"], rec["run"]["run_json"]))
        s.commit()
    rc, text, _ = run_cli(capsys, "export", "--format", "json", "--db", store)
    assert rc == 0 and SECRET not in text and "bob:***@h" in text and old_key not in text
