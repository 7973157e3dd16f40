"""Reading a results directory written by `ikbench run` (docs/results-format.md).

    run = ikbench.io.results.load("results/20261123-default")
    run.solves        # pandas DataFrame, one row per solve (solves.csv)
    run.traces        # per-iteration records (traces.csv), read on first use
    run.problems      # problems.jsonl (format version 2; None for version 1)
    run.solutions     # solutions.csv (version 2; None for version 1)
    run.models        # {model id: model} from models.json (version 2; None for version 1)
    run.meta          # run.json

Every file is validated against the format: a missing file, column or field, or a value of the
wrong kind raises `ResultsError` with a message naming the file, the line and the column or
field. A version-2 run must be complete (`"complete": true` in run.json) and its files must match
run.json's manifest (rows, bytes, FNV-1a 64-bit hash); otherwise it is refused as incomplete or
mixed, unless `allow_incomplete=True`, which loads what is there and lists the reasons in
`run.issues`. Version-1 runs (format "ikbench-run/1") load with what they have; figures that need
version 2 raise `ResultsError` through `Run.require_version`.
"""

import json
from pathlib import Path
import numpy as np
import pandas as pd

from .results_models import validate_model, validate_problem, validate_scene
from .results_schema import ResultsError, split_lines, trim
from .results_checks import _check_keys, _check_manifest_field, _check_run_json, _read_version, _tolerances, format_version  # noqa: F401
from .results_files import _check_json_nesting, _check_line_lengths, _clip, _decode, _exists, _parse_json_text, _where, count_lines, file_kind, manifest_file_of, optional_json, read_json_file, read_run_file, run_file, stat_regular  # noqa: F401
from .results_format import COLLISION_COLUMNS, GZIP_SUFFIX, JOINT_TYPES, LEADING_SOLVE_COLUMNS, MANIFEST_FILES, MAX_JSON_NESTING, MAX_LINE_BYTES, MAX_MODELS_JSON_BYTES, MAX_PROBLEM_INDEX, MAX_RUN_JSON_BYTES, NOT_ATTEMPTED, OPTIONAL_SOLVE_COLUMNS, OUTCOMES, QUALITY_COLUMNS, SOLUTION_COLUMNS, SOLVE_COLUMNS, SOLVE_COLUMNS_BY_VERSION, SOLVE_COLUMNS_V1, STATUSES, SUMMARY_COLUMNS, TRACE_COLUMNS, TRACE_COLUMNS_BY_VERSION, TRACE_COLUMNS_V1  # noqa: F401
from .results_run import Run, _manifest_mismatch, input_paths  # noqa: F401
from .results_tables import _Table, _check_configurations, _check_unique, _nq_of_problems, parse_q  # noqa: F401


def load(path, *, allow_incomplete=False, require_run_json=True):
    """Reads a results directory (or a solves.csv file: the other files are taken from its
    directory). Raises ResultsError on anything the format does not allow."""
    path = Path(path)
    if path.name.endswith((".csv", ".csv" + GZIP_SUFFIX)) and not path.is_dir():
        directory, solves_path = path.parent, path
    else:
        directory = path
        solves_path = run_file(path, "solves.csv") if path.is_dir() else path / "solves.csv"
    if not directory.exists():
        raise ResultsError(f"{solves_path}: no such file (expected a results directory written by `ikbench run`)")
    if not directory.is_dir():
        raise ResultsError(f"{path}: not a directory (expected a results directory written by `ikbench run`, "
                           "or its solves.csv)")
    issues, notes = [], []

    # run.json
    run_json = directory / "run.json"
    if run_json.exists() or run_json.is_symlink():
        meta, _ = read_json_file(run_json, "run.json", MAX_RUN_JSON_BYTES)
        if not isinstance(meta, dict):
            raise ResultsError(f"{run_json}:1: expected a JSON object")
    elif require_run_json:
        raise ResultsError(f"{run_json}: no such file (every results directory of `ikbench run` has one)")
    else:
        meta = {}
        notes.append("no run.json: read as format version 1 without run facts")
    rv = _read_version(meta, run_json)
    if meta and "format" not in meta and "format_version" not in meta:
        notes.append("run.json has no 'format': read as format version 1")
    _tolerances(meta, run_json, required=rv >= 2)

    # Completeness and the manifest (format version 2).
    manifest = {}
    fam_problems = specs = None
    if rv >= 2:
        fam_problems, specs = _check_run_json(meta, run_json)
        complete = meta.get("complete")
        if complete is not True:
            why = "run.json says \"complete\": " + json.dumps(complete)
            if meta.get("interrupted"):
                why += " and \"interrupted\": true (the run was stopped"
                prog = meta.get("progress")
                why += f"; progress: {_clip(json.dumps(prog))})" if prog is not None else ")"
            else:
                why += " (the run is still going on, or stopped before writing its last files)"
            issues.append(why)
        files = meta.get("files")
        if files is not None:
            manifest = _check_manifest_field(files, run_json)
        elif complete is True:
            issues.append("run.json has no 'files' manifest")
        for name, entry in manifest.items():
            p = directory / name
            try:
                size = stat_regular(p, f"{name}, a file of run.json's manifest").st_size
            except FileNotFoundError:
                issues.append(f"{name} is in run.json's manifest but not in the directory")
                continue
            if size != entry["bytes"]:
                issues.append(f"{name} has {size} bytes, run.json's manifest says {entry['bytes']}")
        if complete is True and files is not None:
            missing = [n for n in MANIFEST_FILES if n not in {manifest_file_of(k) for k in manifest}]
            if missing:
                issues.append(f"run.json's manifest does not list {', '.join(missing)} (a complete run's manifest "
                              f"lists exactly {', '.join(MANIFEST_FILES)})")
        if issues and not allow_incomplete:
            kind = "incomplete" if complete is not True else "mixed or modified"
            raise ResultsError(f"{directory}: {kind} run: " + "; ".join(issues) +
                               ". Refused: its figures would not describe one finished run "
                               "(pass allow_incomplete=True / --allow-incomplete to read it anyway)")

    def check_manifest(name, data, content=None):
        entry = manifest.get(name)
        if entry is None:
            return
        problem = _manifest_mismatch(name, entry, data, content)
        if problem and problem not in issues:
            if not allow_incomplete:
                raise ResultsError(f"{directory}: mixed or modified run: {problem}; the files of a run must be the "
                                   "ones its run.json lists (files of one run are never mixed with another's)")
            issues.append(problem)

    # solves.csv (or, for an incomplete run, the partial file written during the run)
    if not _exists(solves_path) and allow_incomplete and _exists(directory / "solves.partial.csv"):
        solves_path = directory / "solves.partial.csv"
        issues.append("solves.csv is missing: read solves.partial.csv (the solves finished so far)")
    raw, data = read_run_file(solves_path, "the solves.csv written by `ikbench run`")
    check_manifest(solves_path.name, raw, data)
    del raw
    if rv >= 2:
        table = _Table(solves_path, data, "solves.csv", expected=SOLVE_COLUMNS, optional=OPTIONAL_SOLVE_COLUMNS)
    else:
        table = _Table(solves_path, data, "solves.csv (format version 1)", required=LEADING_SOLVE_COLUMNS)
    del data
    known = [c for c in SOLVE_COLUMNS + OPTIONAL_SOLVE_COLUMNS if c in table.header]
    extra = [c for c in table.header if c not in known]
    solves = table.frame(known)
    for c in extra:  # format version 1: columns it does not know, kept as text
        solves[c] = table.columns[c]
    table.columns.clear()  # the text of the typed columns is not needed again
    _check_unique(table, solves, ["family", "problem", "solver"], "solve")
    suite_name = meta.get("suite", {}).get("name") if isinstance(meta.get("suite"), dict) else meta.get("suite")
    if isinstance(suite_name, str) and suite_name and len(solves):
        other = solves["suite"].map(trim) != suite_name
        if other.any():
            i = int(np.flatnonzero(other.to_numpy())[0])
            raise ResultsError(f"{solves_path}:{table.lines[i]}: column 'suite' is '{solves['suite'].iat[i]}', but "
                               f"{run_json} is suite '{suite_name}': files of different runs are mixed")
    if rv >= 2:
        _check_keys(solves_path, table.lines, solves, fam_problems, specs, "solves.csv")
        bad = (solves["q"].str.strip(" ") == "") & ~solves["status"].isin(NOT_ATTEMPTED)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ResultsError(f"{_where(solves_path, table.lines[i], 'q')}: empty, but status "
                               f"'{solves['status'].iat[i]}' returns a configuration (only unsupported and "
                               "invalid-input solves have none)")

    run = Run(directory, meta, rv, solves, table.lines, solves_path, notes=notes)
    run.issues = issues  # shared: the files read below add to it
    run._allow_incomplete = allow_incomplete
    run._manifest = manifest
    run._run_keys = (fam_problems, specs)
    run.traces_path = run_file(directory, "traces.csv")

    if rv >= 2:
        run.models = _load_models(run_file(directory, "models.json"), check_manifest, allow_incomplete, issues)
        run.problems, run.problem_lines = _load_problems(run_file(directory, "problems.jsonl"), check_manifest,
                                                         allow_incomplete, issues, run.models, fam_problems)
        if run.problems is not None and not allow_incomplete:
            _check_problems_complete(run, fam_problems)
        nq_of = _nq_of_problems(run)
        # The answers verify checks (attempted solves, every extra solution) must be configurations
        # of their model; an unsupported or invalid-input solve carries the start it was given.
        _check_configurations(solves_path, table.lines, solves["family"], solves["problem"], solves["q"], nq_of,
                              valid=~solves["status"].isin(NOT_ATTEMPTED).to_numpy())
        sp = run_file(directory, "solutions.csv")
        if _exists(sp):
            sraw, sdata = read_run_file(sp, "solutions.csv")
            check_manifest(sp.name, sraw, sdata)
            del sraw
            st = _Table(sp, sdata, "solutions.csv", expected=SOLUTION_COLUMNS)
            run.solutions = st.frame(SOLUTION_COLUMNS)
            st.columns.clear()
            del sdata
            _check_keys(sp, st.lines, run.solutions, fam_problems, specs, "solutions.csv")
            _check_unique(st, run.solutions, ["family", "problem", "solver", "solution"], "solution")
            empty = run.solutions["q"].astype(str).str.strip(" ") == ""
            if empty.any():
                i = int(np.flatnonzero(empty.to_numpy())[0])
                raise ResultsError(f"{_where(sp, st.lines[i], 'q')}: empty (expected a solution's configuration)")
            _check_configurations(sp, st.lines, run.solutions["family"], run.solutions["problem"],
                                  run.solutions["q"], nq_of, valid=np.ones(len(run.solutions), dtype=bool))
        elif allow_incomplete:
            run.solutions = pd.DataFrame({c: pd.Series(dtype=object) for c in SOLUTION_COLUMNS})
            issues.append("solutions.csv is missing")
        else:
            raise ResultsError(f"{sp}: no such file (format version 2 writes it, header only when no solve "
                               "returned several solutions)")
        if run.problems is not None and len(solves):
            _check_problems_cover(run, table)
        shard = meta.get("shard")
        if not allow_incomplete and (shard is None or shard["count"] == 1):
            _check_solves_complete(run, table, fam_problems, specs)
    return run


def _check_problems_complete(run, fam_problems):
    """problems.jsonl holds every problem of run.json's families (its lines were checked to be
    within the counts and never twice), as `ikbench verify` requires."""
    expected = sum(fam_problems.values())
    if len(run.problems) != expected:
        have = set(zip(run.problems["family"], run.problems["problem"].astype(int)))
        missing = next(((f, k) for f, n in fam_problems.items() for k in range(n) if (f, k) not in have), None)
        what = f" (problem {missing[1]} of family '{_clip(missing[0])}' is missing)" if missing else ""
        raise ResultsError(f"{run.path / 'problems.jsonl'}: {len(run.problems)} problems, run.json's families have "
                           f"{expected}{what}")


def _check_solves_complete(run, table, fam_problems, specs):
    """A complete run that is not a shard (or is the only shard, 1 of 1) holds every solve: each
    problem of run.json's families with each solver (rows were checked to be within the counts and
    never twice)."""
    expected = sum(fam_problems.values()) * len(specs)
    if len(run.solves) != expected:
        raise ResultsError(f"{table.path}: {len(run.solves)} solves, run.json's {sum(fam_problems.values())} problems "
                           f"x {len(specs)} solvers make {expected} (a complete run that is not one of several "
                           "shards holds every solve)")


def _check_problems_cover(run, table):
    keys = set(zip(run.problems["family"], run.problems["problem"].astype(int)))
    for i, (f, p) in enumerate(zip(run.solves["family"], run.solves["problem"])):
        if (f, int(p)) not in keys:
            raise ResultsError(f"{table.path}:{table.lines[i]}: problem {p} of family '{f}' is not in "
                               f"{run.path / 'problems.jsonl'}: files of different runs are mixed")


def _load_models(path, check_manifest, allow_incomplete, issues):
    if not _exists(path) and allow_incomplete:
        issues.append("models.json is missing")
        return None
    raw, data = read_run_file(path, "models.json (format version 2)", MAX_MODELS_JSON_BYTES)
    check_manifest(path.name, raw, data)
    del raw
    _check_json_nesting(data, path)
    doc = _parse_json_text(_decode(data, path), path)
    del data
    if not isinstance(doc, dict) or not isinstance(doc.get("models"), list):
        raise ResultsError(f"{path}: expected an object with a list 'models'")
    models = {}
    for k, m in enumerate(doc["models"]):
        where = f"{path}: models[{k}]"
        validate_model(m, where)
        if m["id"] in models:
            raise ResultsError(f"{where}: field 'id': '{m['id']}' appears twice")
        validate_scene(m, where)
        models[m["id"]] = m
    return models


_PROBLEM_FIELDS = {"family": str, "problem": int, "model": str, "q0": list, "goals": list}


def _load_problems(path, check_manifest, allow_incomplete, issues, models, fam_problems=None):
    if not _exists(path) and allow_incomplete:
        issues.append("problems.jsonl is missing")
        return None, None
    raw, data = read_run_file(path, "problems.jsonl (format version 2)")
    check_manifest(path.name, raw, data)
    del raw
    _check_line_lengths(data, path)
    _check_json_nesting(data, path)
    text = _decode(data, path)
    del data
    recs, lines = [], []
    for ln, line in enumerate(split_lines(text), 1):
        r = _parse_json_text(line, path, ln)
        where = f"{path}:{ln}"
        if not isinstance(r, dict):
            raise ResultsError(f"{where}: expected a JSON object" + (" (a blank line)" if not line.strip() else ""))
        for k, kind in _PROBLEM_FIELDS.items():
            if not isinstance(r.get(k), kind) or isinstance(r.get(k), bool):
                raise ResultsError(f"{where}: field '{k}': expected {'a string' if kind is str else 'an integer' if kind is int else 'a list'}, "
                                   f"got {_clip(json.dumps(r.get(k)))}")
        if fam_problems is not None and r["family"] not in fam_problems:
            raise ResultsError(f"{where}: field 'family': '{_clip(r['family'])}' is not a family of run.json")
        if fam_problems is not None and not 0 <= r["problem"] < fam_problems[r["family"]]:
            raise ResultsError(f"{where}: field 'problem': {_clip(r['problem'])} is outside [0, "
                               f"{fam_problems[r['family']]}) (run.json's count for family '{_clip(r['family'])}')")
        if not 0 <= r["problem"] <= MAX_PROBLEM_INDEX:
            raise ResultsError(f"{where}: field 'problem': {_clip(r['problem'])} is outside [0, 2^31)")
        if models is not None:
            if r["model"] not in models:
                raise ResultsError(f"{where}: field 'model': unknown model id '{_clip(r['model'])}' (not in "
                                   "models.json)")
            validate_problem(r, where, models)
        recs.append(r)
        lines.append(ln)
    cols = ["family", "problem", "name", "model", "sequential", "q0", "goals"]
    df = pd.DataFrame({c: [r.get(c) for r in recs] for c in cols}) if recs else \
        pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    if len(df):
        df["problem"] = df["problem"].astype(np.int64)
        dup = df.duplicated(["family", "problem"]).to_numpy()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise ResultsError(f"{path}:{lines[i]}: duplicate problem {df['problem'].iat[i]} of family "
                               f"'{df['family'].iat[i]}'")
    return df, np.asarray(lines, dtype=np.int64)


def version_note(run, what):
    """A one-line note for output that shows less for a version-1 run."""
    if run.format_version >= 2:
        return None
    return f"{run.path} is format version 1: {what} needs version 2 and is not shown"


__all__ = ["load", "Run", "ResultsError", "SOLVE_COLUMNS", "SOLVE_COLUMNS_V1", "LEADING_SOLVE_COLUMNS",
           "QUALITY_COLUMNS", "OUTCOMES",
           "TRACE_COLUMNS", "TRACE_COLUMNS_V1", "SOLUTION_COLUMNS", "SUMMARY_COLUMNS", "STATUSES", "NOT_ATTEMPTED",
           "parse_q", "count_lines", "format_version"]
