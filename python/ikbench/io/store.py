"""The history store: finished runs as rows of one versioned schema (docs/history.md).

    store = open_store("results/history.sqlite")           # or "postgresql://host/db", "postgresql:///db?host=/run/pg"
    run_id, added = store.add_record(record)              # a record of ikbench.analysis.record
    store.close()

Two backends behind one interface: SQLite (the standard library's sqlite3, one file, the default)
and PostgreSQL (python3-psycopg2, a store that a lab shares across machines), named by a
`postgresql://` URL or a libpq keyword/value string (`host=... dbname=...`). Both hold the same
tables; SQL is written once with `?` placeholders, which the PostgreSQL backend rewrites to
psycopg2's `%s`, and `{C}` after a text column of an ORDER BY, which each backend makes its byte
order (SQLite's BINARY, PostgreSQL's "C" collation): every query that returns rows orders them
completely, so both backends return them in one order. A PostgreSQL password belongs in PGPASSWORD
or ~/.pgpass; one given in the connection string anyway is removed from every message and name
(`describe_db`, ikbench.io.redact).

Every record is checked on its way in (ikbench.io.store_validate): a store holds only what its
readers can read.

The schema is versioned: table `schema_version` lists the migrations applied. Opening a store
applies, in one transaction, the migrations it lacks (an empty store gets them all); a store
written by a newer ikbench (a version above `SCHEMA_VERSION`) is refused rather than misread.
"""

import json
import math
import os
import re
import sqlite3
import stat
from datetime import datetime, timezone
from pathlib import Path

from .redact import redact_secrets, scrub
from .results import ResultsError, file_kind
from .store_validate import checked_record

DEFAULT_DB = "results/history.sqlite"


class HistoryError(ResultsError):
    """A store that cannot be opened or read, or a record it refuses; the message names the store."""


# Column types per backend: {ID} an integer key the database assigns, {REAL} a double, {INT} a
# 64-bit integer, {TEXT} text (JSON documents are stored as text in both backends).
_TYPES = {
    "sqlite": {"ID": "INTEGER PRIMARY KEY", "REAL": "REAL", "INT": "INTEGER", "TEXT": "TEXT"},
    "postgresql": {"ID": "BIGSERIAL PRIMARY KEY", "REAL": "DOUBLE PRECISION", "INT": "BIGINT", "TEXT": "TEXT"},
}

# Migration N brings a store from version N-1 to N. Never edit a released migration: add one.
MIGRATIONS = [
    # 1: the first schema (docs/history.md "Schema").
    [
        """CREATE TABLE machines (
            id {ID}, key {TEXT} NOT NULL UNIQUE, label {TEXT} NOT NULL,
            vendor {TEXT}, cpu {TEXT}, cpu_family {INT}, cpu_model {INT}, stepping {INT}, isa {TEXT},
            hardware_threads {INT}, compiler {TEXT}, flags {TEXT}, build_type {TEXT}, batch_kernel {TEXT},
            identity {TEXT} NOT NULL)""",
        """CREATE TABLE runs (
            id {ID}, key {TEXT} NOT NULL UNIQUE, source {TEXT},
            git_revision {TEXT}, git_commit {TEXT}, dirty {INT}, commit_date {TEXT}, subject {TEXT},
            suite {TEXT}, suite_seed {TEXT}, threads {INT}, format_version {INT},
            start_time {TEXT}, end_time {TEXT}, machine_id {INT} NOT NULL REFERENCES machines(id),
            noisy {INT}, load {TEXT}, throughput {TEXT}, build {TEXT}, command_line {TEXT}, run_json {TEXT},
            added {TEXT} NOT NULL)""",
        """CREATE TABLE specs (
            run_id {INT} NOT NULL REFERENCES runs(id) ON DELETE CASCADE, spec {TEXT} NOT NULL, name {TEXT},
            parameters {TEXT}, PRIMARY KEY (run_id, spec))""",
        """CREATE TABLE families (
            run_id {INT} NOT NULL REFERENCES runs(id) ON DELETE CASCADE, family {TEXT} NOT NULL, dof {INT},
            effectors {INT}, goal {TEXT}, problems {INT}, robot {TEXT}, description {TEXT},
            PRIMARY KEY (run_id, family))""",
        """CREATE TABLE cells (
            run_id {INT} NOT NULL REFERENCES runs(id) ON DELETE CASCADE, family {TEXT} NOT NULL,
            solver {TEXT} NOT NULL, solves {INT}, supported {INT}, converged {INT}, successes {INT},
            limit_violations {INT}, available {INT}, rank {REAL}, rank_of {INT}, tied_leader {INT},
            statuses {TEXT}, PRIMARY KEY (run_id, family, solver))""",
        """CREATE TABLE points (
            run_id {INT} NOT NULL REFERENCES runs(id) ON DELETE CASCADE, source {TEXT} NOT NULL,
            family {TEXT} NOT NULL, solver {TEXT} NOT NULL, figure {TEXT} NOT NULL,
            value {REAL}, ci_low {REAL}, ci_high {REAL}, n {INT}, successes {INT},
            PRIMARY KEY (run_id, source, family, solver, figure))""",
        "CREATE INDEX points_series ON points (figure, family, solver)",
        """CREATE TABLE gbench (
            run_id {INT} NOT NULL REFERENCES runs(id) ON DELETE CASCADE, file {TEXT} NOT NULL,
            seq {INT} NOT NULL, name {TEXT} NOT NULL, run_name {TEXT}, run_type {TEXT}, aggregate_name {TEXT},
            repetitions {INT}, repetition_index {INT}, threads {INT}, iterations {REAL}, real_time {REAL},
            cpu_time {REAL}, time_unit {TEXT}, extra {TEXT}, PRIMARY KEY (run_id, file, seq))""",
        """CREATE TABLE documents (
            run_id {INT} NOT NULL REFERENCES runs(id) ON DELETE CASCADE, file {TEXT} NOT NULL,
            kind {TEXT} NOT NULL, body {TEXT} NOT NULL, PRIMARY KEY (run_id, file))""",
        """CREATE TABLE skipped (
            id {ID}, git_commit {TEXT} NOT NULL, commit_date {TEXT}, subject {TEXT},
            machine_id {INT} REFERENCES machines(id), reason {TEXT} NOT NULL, detail {TEXT},
            recorded {TEXT} NOT NULL)""",
    ],
    # 2: each cell's outcome counts (ikbench.analysis.outcomes: {outcome: solves}) and its target kind
    # (`reachable`, `unreachable`), which the regression gate's history mode compares; NULL in the
    # cells of runs recorded before.
    [
        "ALTER TABLE cells ADD COLUMN outcomes {TEXT}",
        "ALTER TABLE cells ADD COLUMN targets {TEXT}",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)

# Figures of a family x solver cell (docs/analysis.md), with the interval each carries in the store.
CELL_FIGURES = [
    "success_rate", "time_us_median", "time_us_mean", "time_us_p90", "time_us_p99", "time_us_p999",
    "time_us_max", "iterations_median", "iterations_p90", "position_error_median", "orientation_error_median",
    "fk_evals_mean", "jacobian_evals_mean", "time_per_eval_median_us", "time_us_outliers_mild",
    "time_us_outliers_severe",
]

# libpq's connection keywords (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-PARAMKEYWORDS)
LIBPQ_KEYWORDS = {
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth", "channel_binding",
    "connect_timeout", "client_encoding", "options", "application_name", "fallback_application_name", "keepalives",
    "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "replication", "gssencmode",
    "sslmode", "requiressl", "sslcompression", "sslcert", "sslkey", "sslpassword", "sslcertmode", "sslrootcert",
    "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version",
    "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs", "load_balance_hosts",
}
_KEYWORD_START = re.compile(r"\s*([A-Za-z_]+)\s*=")


def describe_db(db):
    """The store's name for messages: its connection string with any password removed."""
    return redact_secrets(str(db))


def is_postgresql(db):
    """True for a PostgreSQL connection string: a postgresql:// or postgres:// URL, or libpq's
    keyword/value form (it starts with a libpq keyword and '=': `host=/run/postgresql dbname=ikbench`).
    Anything else names an SQLite file (`./host=x.sqlite` is one)."""
    s = str(db)
    if s.startswith(("postgresql://", "postgres://")):
        return True
    m = _KEYWORD_START.match(s)
    return bool(m) and m.group(1).lower() in LIBPQ_KEYWORDS


def _clean(v):
    """A value for a REAL/INT/TEXT column: nan is NULL in both backends; numpy scalars become
    Python numbers; dicts and lists become JSON text."""
    if v is None:
        return None
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, sort_keys=True)
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def now_text():
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class Store:
    """One interface over both backends. Subclasses set `kind` and `_connect`."""

    kind = None

    read_only = False

    def __init__(self, db, *, create=True, name=None):
        self.db = db
        self.name = name or describe_db(db)
        self.inputs = []   # the files the store is read from: what no output of a command may replace
        self.conn = self._connect(db, create)
        try:
            self._migrate()
        except Exception:
            self.close()
            raise

    # ---- SQL with `?` placeholders and `{C}` (byte order of text), one dialect for both backends
    collate = "COLLATE BINARY"

    def _sql(self, sql):
        return sql.replace("{C}", self.collate)

    def execute(self, sql, params=()):
        cur = self.conn.cursor()
        try:
            cur.execute(self._sql(sql), tuple(_clean(p) for p in params))
        except self._errors() as e:
            raise HistoryError(f"{self.name}: {self._message(e)}") from None
        return cur

    def executemany(self, sql, rows):
        cur = self.conn.cursor()
        try:
            cur.executemany(self._sql(sql), [tuple(_clean(p) for p in r) for r in rows])
        except self._errors() as e:
            raise HistoryError(f"{self.name}: {self._message(e)}") from None
        return cur

    def query(self, sql, params=()):
        """Rows as dicts (column name -> value)."""
        cur = self.execute(sql, params)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    def _message(self, e):
        return " ".join(str(e).split())

    def begin(self):
        """Starts a transaction (PostgreSQL starts one with the first statement)."""

    def commit(self):
        self.conn.commit()

    def rollback(self):
        self.conn.rollback()

    def close(self):
        if getattr(self, "conn", None) is not None:
            try:
                self.conn.close()
            finally:
                self.conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- schema
    def _ddl(self, statement):
        return statement.format(**_TYPES[self.kind])

    def version(self):
        if not self._has_table("schema_version"):
            return 0
        rows = self.query("SELECT version FROM schema_version ORDER BY version")
        versions = [r["version"] for r in rows]
        bad = [v for v in versions if not isinstance(v, int) or isinstance(v, bool) or v < 1]
        if bad:
            raise HistoryError(f"{self.name}: table schema_version: column version holds {redact_secrets(repr(bad[0]))[:60]}, "
                               "expected the integer of a migration (1, 2, ...): not a store this ikbench wrote")
        return max(versions, default=0)

    def _migrate(self, migrations=None):
        migrations = MIGRATIONS if migrations is None else migrations
        current = self.version()
        if current > len(migrations):
            raise HistoryError(f"{self.name}: the store has schema version {current}, newer than this ikbench's "
                               f"{len(migrations)}: use a newer ikbench (docs/history.md)")
        if current == len(migrations):
            return
        self.begin()
        try:
            current = self.version()  # again, inside the transaction: another process may have migrated
            if current >= len(migrations):
                self.rollback()
                return
            if current == 0 and not self._has_table("schema_version"):
                self.execute(self._ddl("CREATE TABLE schema_version (version {INT} NOT NULL PRIMARY KEY, "
                                       "applied {TEXT} NOT NULL)"))
            for v in range(current + 1, len(migrations) + 1):
                for statement in migrations[v - 1]:
                    self.execute(self._ddl(statement))
                self.execute("INSERT INTO schema_version (version, applied) VALUES (?, ?)", (v, now_text()))
            self.commit()
        except Exception:
            self.rollback()
            raise

    # ---- records
    def machine_id(self, machine):
        """The id of a machine identity (record.machine_identity), added when new."""
        rows = self.query("SELECT id FROM machines WHERE key = ?", (machine["key"],))
        if rows:
            return rows[0]["id"]
        cols = ["key", "label", "vendor", "cpu", "cpu_family", "cpu_model", "stepping", "isa", "hardware_threads",
                "compiler", "flags", "build_type", "batch_kernel", "identity"]
        cur = self.execute(f"INSERT INTO machines ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
                           "RETURNING id", [machine.get(c) for c in cols])
        return cur.fetchone()[0]

    def find_run(self, key):
        rows = self.query("SELECT id FROM runs WHERE key = ?", (key,))
        return rows[0]["id"] if rows else None

    def refuse_writes(self, what="write to it"):
        if self.read_only:
            raise HistoryError(f"{self.name}: a history export, which is read only: cannot {what} (import it into a "
                               f"store first: ikbench history import {self.name} --db STORE)")

    def add_record(self, record, *, replace=False, where=None):
        """Adds a run's record (ikbench.analysis.record, or one of an export) in one transaction, after
        checking it (ikbench.io.store_validate; `where` names it in a refusal). Returns (run id, added):
        a run already in the store (same key) is left as it is (added False) unless `replace`."""
        self.refuse_writes("add a run")
        run = record.get("run") if isinstance(record, dict) else None
        record = checked_record(record, where or (run.get("source") if isinstance(run, dict) else None) or "record")
        self.begin()
        try:
            old = self.find_run(record["run"]["key"])
            if old is not None:
                if not replace:
                    self.rollback()
                    return old, False
                self.delete_run(old, commit=False)
            mid = self.machine_id(record["machine"])
            r = record["run"]
            cols = ["key", "source", "git_revision", "git_commit", "dirty", "commit_date", "subject", "suite",
                    "suite_seed", "threads", "format_version", "start_time", "end_time", "noisy", "load",
                    "throughput", "build", "command_line", "run_json"]
            vals = [r.get(c) for c in cols] + [mid, now_text()]
            cur = self.execute(f"INSERT INTO runs ({', '.join(cols)}, machine_id, added) "
                               f"VALUES ({', '.join('?' * len(vals))}) RETURNING id", vals)
            rid = cur.fetchone()[0]
            self._insert(rid, "specs", ["spec", "name", "parameters"], record.get("specs", []))
            self._insert(rid, "families", ["family", "dof", "effectors", "goal", "problems", "robot", "description"],
                         record.get("families", []))
            self._insert(rid, "cells", ["family", "solver", "solves", "supported", "converged", "successes",
                                        "limit_violations", "available", "rank", "rank_of", "tied_leader",
                                        "statuses", "outcomes", "targets"], record.get("cells", []))
            self._insert(rid, "points", ["source", "family", "solver", "figure", "value", "ci_low", "ci_high", "n",
                                         "successes"], record.get("points", []))
            self._insert(rid, "gbench", ["file", "seq", "name", "run_name", "run_type", "aggregate_name",
                                         "repetitions", "repetition_index", "threads", "iterations", "real_time",
                                         "cpu_time", "time_unit", "extra"], record.get("gbench", []))
            self._insert(rid, "documents", ["file", "kind", "body"], record.get("documents", []))
            self.commit()
            return rid, True
        except Exception:
            self.rollback()
            raise

    def _insert(self, rid, table, cols, rows):
        if not rows:
            return
        self.executemany(f"INSERT INTO {table} (run_id, {', '.join(cols)}) VALUES (?{', ?' * len(cols)})",
                         [[rid] + [row.get(c) for c in cols] for row in rows])

    def delete_run(self, rid, commit=True):
        self.refuse_writes("delete a run")
        for t in ("specs", "families", "cells", "points", "gbench", "documents"):
            self.execute(f"DELETE FROM {t} WHERE run_id = ?", (rid,))
        self.execute("DELETE FROM runs WHERE id = ?", (rid,))
        if commit:
            self.commit()

    def add_skipped(self, git_commit, reason, *, commit_date=None, subject=None, machine=None, detail=None,
                    recorded=None):
        """Records a commit that gave no run (it did not build, or its run failed)."""
        self.refuse_writes("record a commit without a run")
        self.begin()
        try:
            mid = self.machine_id(machine) if machine else None
            self.execute("INSERT INTO skipped (git_commit, commit_date, subject, machine_id, reason, detail, recorded) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?)", (git_commit, commit_date, subject, mid, reason, detail,
                                                          recorded or now_text()))
            self.commit()
        except Exception:
            self.rollback()
            raise


class SQLiteStore(Store):
    kind = "sqlite"

    def _errors(self):
        return (sqlite3.Error,)

    def _connect(self, db, create):
        if str(db) == ":memory:":
            return self._open(":memory:")
        path = Path(db)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise HistoryError(f"{self.name}: cannot open: {e.strerror}") from None
        if st is None and not create:
            raise HistoryError(f"{self.name}: no such history store (ikbench history add RUN --db {self.name} "
                               "creates it)")
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise HistoryError(f"{self.name}: is {file_kind(st.st_mode)}, not a regular file (expected an SQLite "
                               "history store)")
        if create:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise HistoryError(f"{self.name}: cannot create its directory: {e.strerror}") from None
        self.inputs = [str(path)]
        if st is not None and st.st_size > 0:
            _, head = read_run_file_head(path)
            if head != b"SQLite format 3\x00":
                raise HistoryError(f"{self.name}: not an SQLite database (a history store is made by ikbench history "
                                   "add)")
        return self._open(str(path))

    def _open(self, path):
        try:
            conn = sqlite3.connect(path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA busy_timeout = 60000")
        except sqlite3.Error as e:
            raise HistoryError(f"{self.name}: cannot open: {e}") from None
        return conn

    def begin(self):
        # autocommit mode (isolation_level None) with explicit transactions, so that a migration's
        # CREATE TABLEs and its version row commit together or not at all
        self.execute("BEGIN IMMEDIATE")

    def commit(self):
        if self.conn.in_transaction:
            self.execute("COMMIT")

    def rollback(self):
        if self.conn is not None and self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def _has_table(self, name):
        return bool(self.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))


class PostgresStore(Store):
    kind = "postgresql"

    def _errors(self):
        import psycopg2

        return (psycopg2.Error,)

    collate = 'COLLATE "C"'

    def _sql(self, sql):
        return super()._sql(sql).replace("%", "%%").replace("?", "%s")

    def _connect(self, db, create):
        try:
            import psycopg2
        except ImportError:
            raise HistoryError(f"{self.name}: a PostgreSQL store needs psycopg2 (apt-get install python3-psycopg2)") \
                from None
        try:
            conn = psycopg2.connect(str(db), connect_timeout=30)
        except psycopg2.ProgrammingError:
            # libpq's parser quotes what it could not read, which may be a piece of a password
            raise HistoryError(f"{self.name}: not a connection string libpq reads (a postgresql:// URL or "
                               "keyword=value pairs)") from None
        except psycopg2.Error as e:
            raise HistoryError(f"{self.name}: cannot connect: {scrub(self._message(e), db)}") from None
        return conn

    def _message(self, e):
        return scrub(super()._message(e), self.db)

    def _has_table(self, name):
        return bool(self.query("SELECT table_name FROM information_schema.tables WHERE table_schema = "
                               "current_schema() AND table_name = ?", (name,)))


def open_store(db=DEFAULT_DB, *, create=True):
    """A store by name: a PostgreSQL connection string (a postgresql:// or postgres:// URL or libpq
    keyword/value pairs; the password from PGPASSWORD or ~/.pgpass), else an SQLite file (created
    with its directory when `create`)."""
    if is_postgresql(db):
        return PostgresStore(db, create=create)
    if "://" in str(db):
        raise HistoryError(f"--db {describe_db(db)}: expected an SQLite file or a PostgreSQL connection string "
                           "(postgresql://... or host=... dbname=...)")
    return SQLiteStore(db, create=create)


def read_run_file_head(path, n=16):
    """(path, the first n bytes) of a regular file, opened without blocking (never a FIFO's reader)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise HistoryError(f"{describe_db(path)}: cannot read: {e.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise HistoryError(f"{describe_db(path)}: not a regular file")
        return path, os.read(fd, n)
    finally:
        os.close(fd)
