"""What `--db DB` names: a store to read and write, or a history export to read.

    with open_history(args.db) as store: ...                 # a read: show, list, changes, trend, export, publish, report
    with open_history(args.db, create=True) as store: ...    # a write: add, import, backfill

DB is an SQLite file, a PostgreSQL connection string (ikbench.io.store), or a json export
(`FILE.json` or `FILE.json.gz`, as `history export --format json` writes it and
results/history/history.json.gz is kept): an export is imported into an SQLite store in memory
and read from there, so that a clone's committed history can be queried without a store. A
command that writes is refused on an export, before it does any work.
"""

import os

from .store_exchange import import_json, read_export
from .store import DEFAULT_DB, HistoryError, SQLiteStore, is_postgresql, open_store

EXPORT_SUFFIXES = (".json", ".json.gz")


def is_export(db):
    """True when DB names a json export: by its name (.json, .json.gz), or, for an existing file of
    another name, by its first bytes (a gzip stream or a JSON object; an SQLite file starts with
    'SQLite format 3')."""
    s = str(db)
    if is_postgresql(s) or s == ":memory:":
        return False
    if s.lower().endswith(EXPORT_SUFFIXES):
        return True
    try:
        fd = os.open(s, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, 64)
    finally:
        os.close(fd)
    return head[:2] == b"\x1f\x8b" or head.lstrip()[:1] == b"{"


def open_history(db=DEFAULT_DB, *, create=False, what="write to it"):
    """The store DB names (module text). `create`: the command writes (a store is created when
    absent; an export is refused, `what` saying what the command would have done)."""
    if is_export(db):
        if create:
            raise HistoryError(f"{db}: a history export, which is read only: cannot {what} (import it into a store "
                               f"first: ikbench history import {db} --db STORE)")
        store = SQLiteStore(":memory:", name=str(db))
        try:
            import_json(store, read_export(db), source=str(db))
        except BaseException:
            store.close()
            raise
        store.read_only = True
        store.inputs = [str(db)]
        return store
    return open_store(db, create=create)


__all__ = ["open_history", "is_export", "EXPORT_SUFFIXES"]
