"""The checks of run.json and of how a run's files agree (docs/results-format.md): the format
version, tolerances, the manifest's fields, and the keys of the solves against the problems."""

import json
import math
import numpy as np

from .results_schema import ResultsError
from .results_files import _clip, _where, manifest_file_of
from .results_format import FORMAT_NAME, LATEST_VERSION, MANIFEST_FILES


def format_version(meta):
    """The format version a run.json declares: 'format_version', else the N of 'format':
    'ikbench-run/N', else 1 (run.json files written before the version field)."""
    v = meta.get("format_version")
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    fmt = meta.get("format")
    if isinstance(fmt, str) and fmt.startswith(FORMAT_NAME + "/"):
        try:
            return int(fmt.split("/", 1)[1])
        except ValueError:
            pass
    return 1


def _read_version(meta, path):
    """The format version of a run.json, as the readers take it: a run.json with a
    'format_version' must give the integer LATEST_VERSION (the C++ readers' rule: a newer
    version, whose files this library does not know, is refused, not guessed at); one without it
    is format version 1 (written before the field) when its 'format' is absent or
    'ikbench-run/1', and is refused otherwise."""
    if "format_version" in meta:
        v = meta["format_version"]
        if not _int(v) or v != LATEST_VERSION:
            raise _field_error(path, "format_version", f"expected {LATEST_VERSION}, the format version this ikbench "
                               f"reads" + (" (a newer ikbench wrote this run: read it with that one)"
                                           if _int(v) and v > LATEST_VERSION else ""), v)
        return v
    fmt = meta.get("format")
    if fmt is None or fmt == FORMAT_NAME + "/1":
        return 1
    raise _field_error(path, "format_version", f"missing, and 'format' is not '{FORMAT_NAME}/1' (a run.json of "
                       f"format version {LATEST_VERSION} has 'format_version': {LATEST_VERSION})", fmt)


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _field_error(path, field, what, value=None, show=True):
    got = f", got {_clip(json.dumps(value))}" if show else ""
    return ResultsError(f"{path}: field '{field}': {what}{got}")


def _tolerances(meta, path, required):
    """(position [m], orientation [rad]) of run.json's suite.options: finite numbers > 0. A
    version-1 run.json without them reads the defaults (1e-5, 1e-5)."""
    suite = meta.get("suite")
    opts = suite.get("options") if isinstance(suite, dict) else None
    if opts is None and not required:
        return 1e-5, 1e-5
    if not isinstance(opts, dict):
        raise _field_error(path, "suite.options", "expected an object with the solve options", opts)
    out = []
    for key in ("position_tolerance_m", "orientation_tolerance_rad"):
        if key not in opts and not required:
            out.append(1e-5)
            continue
        v = opts.get(key)
        if not _number(v) or not math.isfinite(v) or not v > 0:
            raise _field_error(path, f"suite.options.{key}", "expected a finite number > 0", v, key in opts)
        out.append(float(v))
    return tuple(out)


def _check_run_json(meta, path):
    """The fields of a version-2 run.json that readers rely on: their types and ranges (the same
    checks as the C++ readers). Returns ({family: problems}, {solver specs})."""
    if "complete" in meta and not isinstance(meta["complete"], bool):
        raise _field_error(path, "complete", "expected true or false", meta["complete"])
    fams = meta.get("families")
    if not isinstance(fams, list):
        raise _field_error(path, "families", "expected an array of families", fams, "families" in meta)
    problems = {}
    for i, f in enumerate(fams):
        name = f.get("name") if isinstance(f, dict) else None
        if not isinstance(name, str):
            raise _field_error(path, f"families[{i}].name", "expected a string", name)
        if name in problems:
            raise _field_error(path, f"families[{i}].name", f"a second family named '{_clip(name)}'", show=False)
        n = f.get("problems")
        if not _int(n) or not 0 <= n <= 1_000_000_000:
            raise _field_error(path, f"families[{i}].problems", "expected an integer in [0, 1e9]", n)
        problems[name] = n
    solvers = meta.get("solvers")
    if not isinstance(solvers, list):
        raise _field_error(path, "solvers", "expected an array of solvers", solvers, "solvers" in meta)
    specs = set()
    for i, s in enumerate(solvers):
        spec = s.get("spec") if isinstance(s, dict) else None
        if not isinstance(spec, str):
            raise _field_error(path, f"solvers[{i}].spec", "expected a string", spec)
        if spec in specs:
            raise _field_error(path, f"solvers[{i}].spec", f"a second solver '{_clip(spec)}'", show=False)
        specs.add(spec)
    _tolerances(meta, path, required=True)
    shard = meta.get("shard")
    if shard is not None:
        count = shard.get("count") if isinstance(shard, dict) else None
        if not _int(count) or not 1 <= count <= 100_000:
            raise _field_error(path, "shard.count", "expected an integer in [1, 100000]", count)
        index = shard.get("index")
        if not _int(index) or not 1 <= index <= count:
            raise _field_error(path, "shard.index", f"expected an integer in [1, {count}]", index)
    if "trace" in meta and not isinstance(meta["trace"], dict):
        raise _field_error(path, "trace", "expected an object", meta["trace"])
    return problems, specs


def _check_manifest_field(files, path):
    """run.json's "files": an object whose names are the run's own files (plain names of
    MANIFEST_FILES: never a path, so a reader never opens a file the manifest makes up), each
    with rows, bytes and fnv1a64."""
    if not isinstance(files, dict):
        raise _field_error(path, "files", "expected an object, the manifest {name: {rows, bytes, fnv1a64}}",
                           files)
    listed = set()
    for name, entry in files.items():
        plain = manifest_file_of(name)
        if plain is None:
            raise ResultsError(f"{path}: field 'files': names '{_clip(name)}', which is not a file of a run "
                               f"(expected exactly: {', '.join(MANIFEST_FILES)}; each may be compressed, NAME.gz)")
        if plain in listed:
            raise ResultsError(f"{path}: field 'files': lists {plain} twice (plain and compressed)")
        listed.add(plain)
        if not isinstance(entry, dict):
            raise _field_error(path, f"files.{name}", "expected an object {rows, bytes, fnv1a64}", entry)
        for key in ("rows", "bytes"):
            v = entry.get(key)
            if not _int(v) or v < 0:
                raise _field_error(path, f"files.{name}.{key}", "expected an integer >= 0", v, key in entry)
        h = entry.get("fnv1a64")
        if not isinstance(h, str):
            raise _field_error(path, f"files.{name}.fnv1a64", "expected 16 hexadecimal digits (a string)", h,
                               "fnv1a64" in entry)
    return files


def _check_keys(path, lines, df, fam_problems, specs, what):
    """Rows of a file of a version-2 run name a family and solver of run.json, and a problem
    below the family's count (the C++ readers key rows by them)."""
    if fam_problems is None or not len(df):
        return
    fam = df["family"]
    bad = ~fam.isin(list(fam_problems)).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ResultsError(f"{_where(path, lines[i], 'family')}: '{_clip(fam.iat[i])}' is not a family of run.json "
                           f"({what})")
    if specs is not None and "solver" in df:
        bad = ~df["solver"].isin(list(specs)).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ResultsError(f"{_where(path, lines[i], 'solver')}: '{_clip(df['solver'].iat[i])}' is not a solver "
                               f"spec of run.json ({what})")
    count = fam.map(fam_problems).to_numpy(dtype=np.int64)
    bad = df["problem"].to_numpy(dtype=np.int64) >= count
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ResultsError(f"{_where(path, lines[i], 'problem')}: {df['problem'].iat[i]} is not below run.json's "
                           f"count of problems of family '{_clip(fam.iat[i])}' ({count[i]})")
