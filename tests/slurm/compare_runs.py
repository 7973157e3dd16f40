#!/usr/bin/python3
"""Checks that a merged results directory equals an unsharded run's.

    compare_runs.py REFERENCE_DIR MERGED_DIR
    compare_runs.py --self-test REFERENCE_DIR

solves.csv, solutions.csv and traces.csv must hold the same header and the
same rows in the same order, apart from the time columns (time_us,
time_per_iteration_us, elapsed_us); models.json and problems.jsonl must be
byte-identical; the merged run.json must be complete, not a shard, describe
the same run (suite, families, solvers, grid, seeds, build, trace settings)
and hold a manifest whose sizes and row counts match its files (the hashes
are `ikbench verify`'s to check). Exit status 0 when they are equal, 1 with
the first difference otherwise.

--self-test checks the comparison itself on REFERENCE_DIR: a copy with other
time columns compares equal, copies with one other non-time cell, one row
fewer or one other byte in problems.jsonl compare different.
"""

import csv
import gzip
import io
import json
import os
import sys

TIME_COLUMNS = {"time_us", "time_per_iteration_us", "elapsed_us"}
CSV_FILES = ["solves.csv", "solutions.csv", "traces.csv"]
BYTE_FILES = ["models.json", "problems.jsonl"]
RUN_KEYS = ["format_version", "suite", "families", "solvers", "grid", "seeds", "git_revision", "build"]


class Differ(Exception):
    pass


def read_bytes(directory, name):
    """The content of the run's file `name`: NAME.gz decompressed when the run wrote it compressed."""
    path = os.path.join(directory, name)
    try:
        if os.path.exists(path + ".gz"):
            with gzip.open(path + ".gz", "rb") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()
    except (OSError, EOFError) as e:
        raise Differ(f"cannot read {path}: {e}")


def load(directory):
    """The files of a results directory as {name: bytes}, run.json as JSON."""
    files = {name: read_bytes(directory, name) for name in CSV_FILES + BYTE_FILES + ["run.json"]}
    try:
        run = json.loads(files["run.json"])
    except ValueError as e:
        raise Differ(f"{directory}/run.json is not JSON: {e}")
    return files, run


def csv_rows(data, where):
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    if not rows:
        raise Differ(f"{where}: no header")
    return rows[0], rows[1:]


def compare_csv(name, ref_data, got_data):
    if ref_data == got_data:  # identical bytes: equal (the rows are counted, not parsed)
        return ref_data.count(b"\n") - 1
    ref_header, ref_rows = csv_rows(ref_data, f"reference {name}")
    got_header, got_rows = csv_rows(got_data, f"merged {name}")
    if ref_header != got_header:
        raise Differ(f"{name}: headers differ:\n  reference {ref_header}\n  merged    {got_header}")
    if len(ref_rows) != len(got_rows):
        raise Differ(f"{name}: {len(ref_rows)} rows in the reference, {len(got_rows)} merged")
    keep = [i for i, c in enumerate(ref_header) if c not in TIME_COLUMNS]
    for n, (a, b) in enumerate(zip(ref_rows, got_rows)):
        if len(a) != len(ref_header) or len(b) != len(ref_header):
            raise Differ(f"{name} row {n + 2}: expected {len(ref_header)} cells")
        for i in keep:
            if a[i] != b[i]:
                raise Differ(f"{name} row {n + 2}, column {ref_header[i]}: reference '{a[i]}', merged '{b[i]}'")
    return len(ref_rows)


def check_run_json(ref_run, got_run, got_files):
    if got_run.get("complete") is not True:
        raise Differ("merged run.json: \"complete\" is not true")
    if got_run.get("shard") is not None:
        raise Differ(f"merged run.json: \"shard\" is {got_run.get('shard')}, expected null")
    for key in RUN_KEYS:
        if ref_run.get(key) != got_run.get(key):
            raise Differ(f"run.json '{key}' differs:\n  reference {ref_run.get(key)}\n  merged    {got_run.get(key)}")
    for key in ["enabled", "problems_per_family"]:
        if ref_run.get("trace", {}).get(key) != got_run.get("trace", {}).get(key):
            raise Differ(f"run.json trace.{key} differs")
    manifest = got_run.get("files", {})
    for name in CSV_FILES + BYTE_FILES:
        # A file written gzip-compressed is listed as NAME.gz with its compressed size; its rows are
        # the content's.
        compressed = name + ".gz" in manifest
        entry, data = manifest.get(name + ".gz" if compressed else name), got_files[name]
        if entry is None:
            raise Differ(f"merged run.json: no manifest entry for {name}")
        if not compressed and entry.get("bytes") != len(data):
            raise Differ(f"merged run.json: {name} has {len(data)} bytes, the manifest says {entry.get('bytes')}")
        rows = data.count(b"\n") - (1 if name.endswith(".csv") else 0)
        if name.endswith((".csv", ".jsonl")) and entry.get("rows") != rows:
            raise Differ(f"merged run.json: {name} has {rows} rows, the manifest says {entry.get('rows')}")


def compare(ref, got):
    """Raises Differ at the first difference; returns the number of rows per CSV file."""
    ref_files, ref_run = ref
    got_files, got_run = got
    counts = {name: compare_csv(name, ref_files[name], got_files[name]) for name in CSV_FILES}
    for name in BYTE_FILES:
        if ref_files[name] != got_files[name]:
            raise Differ(f"{name} differs (byte for byte)")
    check_run_json(ref_run, got_run, got_files)
    return counts


def replace_cell(data, column, row_index, new_value):
    header, rows = csv_rows(data, "self-test")
    rows[row_index][header.index(column)] = new_value
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows([header] + rows)
    return out.getvalue().encode("utf-8")


def self_test(ref_dir):
    files, run = load(ref_dir)
    if not csv_rows(files["solves.csv"], "solves.csv")[1]:
        raise Differ("self-test: the reference's solves.csv has no rows")

    def as_merged(changed_files):
        # A merged directory's run.json: its manifest describes its own files.
        got_run = json.loads(json.dumps(run))
        got_run["shard"] = None
        for name in CSV_FILES + BYTE_FILES:
            data = changed_files[name]
            rows = data.count(b"\n") - (1 if name.endswith(".csv") else 0)
            got_run["files"][name] = {"bytes": len(data), "rows": rows}
        return changed_files, got_run

    def expect(label, changed, equal):
        try:
            compare((files, run), as_merged(changed))
            outcome = None
        except Differ as e:
            outcome = str(e)
        if equal and outcome is not None:
            raise Differ(f"self-test: {label}: expected equal, got: {outcome}")
        if not equal and outcome is None:
            raise Differ(f"self-test: {label}: the difference was not found")
        print(f"self-test: {label}: {'equal' if equal else 'different (' + outcome.splitlines()[0] + ')'}")

    expect("unchanged", dict(files), True)
    expect("other time_us", {**files, "solves.csv": replace_cell(files["solves.csv"], "time_us", 0, "123456.789")}, True)
    expect("other iterations", {**files, "solves.csv": replace_cell(files["solves.csv"], "iterations", -1, "-7")}, False)
    expect("other q", {**files, "solves.csv": replace_cell(files["solves.csv"], "q", 0, "0.5")}, False)
    head, _, tail = files["solves.csv"].rstrip(b"\n").rpartition(b"\n")
    expect("one row fewer", {**files, "solves.csv": head + b"\n"}, False)
    problems = bytearray(files["problems.jsonl"])
    problems[len(problems) // 2] ^= 1
    expect("one byte of problems.jsonl", {**files, "problems.jsonl": bytes(problems)}, False)
    _, bad_run = as_merged(dict(files))
    bad_run["complete"] = False
    try:
        check_run_json(run, bad_run, files)
        raise Differ("self-test: an incomplete merged run.json was accepted")
    except Differ as e:
        if "self-test" in str(e):
            raise
        print("self-test: incomplete run.json: refused")


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "--self-test":
            self_test(argv[2])
            return 0
        if len(argv) != 3 or argv[1].startswith("-"):
            print(__doc__.strip(), file=sys.stderr)
            return 2
        counts = compare(load(argv[1]), load(argv[2]))
        print(f"equal apart from time columns: {', '.join(f'{n} ({c} rows)' for n, c in counts.items())}; "
              f"models.json and problems.jsonl identical; merged run.json complete")
        return 0
    except Differ as e:
        print(f"compare_runs: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
