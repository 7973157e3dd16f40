"""A loaded run (`Run`): its tables and documents, the traces read on first use, the input files an
output must not replace, and the manifest's check of one file."""

from pathlib import Path
import numpy as np
import pandas as pd

from .hashing import fnv1a64_hex
from .results_schema import ResultsError
from .results_checks import _check_keys, _tolerances
from .results_files import _clip, _exists, _where, manifest_file_of, read_run_file
from .results_format import GZIP_SUFFIX, LATEST_VERSION, MANIFEST_FILES, TRACE_COLUMNS, TRACE_COLUMNS_BY_VERSION
from .results_tables import _Table, _check_configurations, _nq_of_problems, parse_q


class Run:
    """One results directory. DataFrames are typed: ints, floats (nan where not a number or
    empty), bools for converged/within_limits, strings (q as written, see `q_of`)."""

    def __init__(self, path, meta, version, solves, solve_lines, solves_path, *, problems=None, models=None,
                 solutions=None, traces_path=None, manifest=None, issues=(), notes=(), problem_lines=None):
        self.path = Path(path)
        self.meta = meta
        self.format_version = version
        self.solves = solves
        self.solve_lines = solve_lines
        self.solves_path = solves_path
        self.problems = problems
        self.problem_lines = problem_lines
        self.models = models
        self.solutions = solutions
        self.traces_path = traces_path
        self._manifest = manifest or {}
        self._traces = None
        self.issues = list(issues)   # why the run is incomplete or mixed (loaded with allow_incomplete)
        self.notes = list(notes)     # what a reader should know (e.g. no run.json)

    # -- identity ---------------------------------------------------------------------------
    @property
    def complete(self):
        return not self.issues

    @property
    def suite(self):
        s = self.meta.get("suite")
        if isinstance(s, dict) and isinstance(s.get("name"), str):
            return s["name"]
        if isinstance(s, str):
            return s
        vals = self.solves["suite"].unique() if len(self.solves) else []
        return vals[0] if len(vals) else "?"

    @property
    def seed(self):
        s = self.meta.get("seed")
        for parent, key in (("suite", "seed"), ("seeds", "suite")):
            if s is None and isinstance(self.meta.get(parent), dict):
                s = self.meta[parent].get(key)
        return s

    @property
    def threads(self):
        t = self.meta.get("threads")
        return t if isinstance(t, int) and not isinstance(t, bool) else None

    @property
    def cpu(self):
        """The CPU as run.json names it: machine.cpu (the model name), followed by the vendor,
        family, model and stepping where the run recorded them, since a virtual machine's model
        name ("AMD EPYC", "Intel(R) Xeon(R) Processor") can read alike on different hardware."""
        m = self.meta.get("machine")
        if isinstance(m, dict) and isinstance(m.get("cpu"), str):
            ident = [f"{k} {m[k]}" if k != "vendor" else str(m[k]) for k in ("vendor", "family", "model", "stepping")
                     if isinstance(m.get(k), (str, int)) and not isinstance(m.get(k), bool)]
            return m["cpu"] + (f" ({' '.join(ident)})" if ident else "")
        return self.meta.get("cpu") if isinstance(self.meta.get("cpu"), str) else None

    @property
    def families(self):
        """run.json's families (list of dicts; empty when run.json has none)."""
        f = self.meta.get("families")
        return [x for x in f if isinstance(x, dict)] if isinstance(f, list) else []

    @property
    def solver_specs(self):
        """Solver specs in run.json's order, then any others of solves.csv in file order."""
        specs = [s.get("spec") for s in self.meta.get("solvers", []) if isinstance(s, dict)
                 and isinstance(s.get("spec"), str)] if isinstance(self.meta.get("solvers"), list) else []
        for s in pd.unique(self.solves["solver"]):
            if s not in specs:
                specs.append(s)
        return specs

    @property
    def tolerances(self):
        """(position [m], orientation [rad]) from run.json's suite options: finite numbers > 0
        (ResultsError otherwise); 1e-5, 1e-5 when a version-1 run.json has none."""
        return _tolerances(self.meta, self.path / "run.json", required=self.format_version >= 2)

    @property
    def inputs(self):
        """The paths a reader of this run reads (the directory and its files that exist): what
        an output of a command over this run must not replace (ikbench.io.safe_io)."""
        return input_paths(self.path, self.solves_path)

    def describe(self):
        v = f"format {self.format_version}" + ("" if self.complete else ", INCOMPLETE")
        return f"{self.path} (suite {self.suite}, {len(self.solves)} solves, {v})"

    def require_version(self, version, what):
        if self.format_version < version:
            raise ResultsError(f"{what} needs a results directory of format version {version} (models.json, "
                               f"problems.jsonl, the q column of solves.csv); {self.path} is version "
                               f"{self.format_version}: rerun it with a current `ikbench run`")

    # -- lazily read files -------------------------------------------------------------------
    @property
    def traces(self):
        """traces.csv as a DataFrame (read and checked against the manifest on first use); an
        empty frame with the format's columns when the run has no traces.csv."""
        if self._traces is None:
            self._traces = self._read_traces()
        return self._traces

    def _read_traces(self):
        cols = TRACE_COLUMNS_BY_VERSION.get(min(self.format_version, LATEST_VERSION), TRACE_COLUMNS)
        path = self.traces_path
        if path is None or not _exists(path):
            return pd.DataFrame({c: pd.Series(dtype=object if c in ("family", "solver", "q") else float)
                                 for c in cols})
        raw, data = read_run_file(path, "traces.csv")
        self._check_manifest_file(path.name, raw, data)
        del raw
        df, lines = read_traces_bytes(path, data, cols, exact=self.format_version >= 2, with_lines=True)
        del data
        if self.format_version >= 2 and len(df):
            fam_problems, specs = getattr(self, "_run_keys", (None, None))
            _check_keys(path, lines, df, fam_problems, specs, "traces.csv")
            nq_of = _nq_of_problems(self)
            if nq_of:
                known = df["family"].combine(df["problem"], lambda f, p: (f, int(p)) in nq_of)
                if not known.all():
                    i = int(np.flatnonzero(~known.to_numpy(dtype=bool))[0])
                    raise ResultsError(f"{path}:{lines[i]}: problem {df['problem'].iat[i]} of family "
                                       f"'{_clip(df['family'].iat[i])}' is not in problems.jsonl")
            empty = df["q"].astype(str).str.strip(" ") == ""
            if empty.any():
                i = int(np.flatnonzero(empty.to_numpy())[0])
                raise ResultsError(f"{_where(path, lines[i], 'q')}: empty (expected the configuration after the "
                                   "iteration)")
            _check_configurations(path, lines, df["family"], df["problem"], df["q"], nq_of)
        return df

    def _check_manifest_file(self, name, data, content=None):
        entry = self._manifest.get(name)
        if entry is None:
            return
        problem = _manifest_mismatch(name, entry, data, content)
        if problem:
            msg = (f"{self.path}: mixed or modified run: {problem}; the files of a run must be the ones "
                   "its run.json lists (files of one run are never mixed with another's)")
            if self._allow_incomplete:
                self.issues.append(problem)
            else:
                raise ResultsError(msg)

    _allow_incomplete = False

    def q_of(self, i):
        """The returned configuration of solves row i (numpy array; empty when none)."""
        self.require_version(2, "the returned configuration q")
        text = self.solves["q"].iat[i]
        return parse_q(text, f"{self.solves_path}:{self.solve_lines[i]}: column 'q'")

    def problem(self, family, problem):
        """The problems.jsonl record of (family, problem) as a dict (version 2)."""
        self.require_version(2, "problem records")
        idx = self._problem_index()
        try:
            return self.problems.iloc[idx[(family, int(problem))]].to_dict()
        except KeyError:
            raise ResultsError(f"{self.path / 'problems.jsonl'}: no problem {problem} of family '{family}'") from None

    def _problem_index(self):
        if not hasattr(self, "_pidx"):
            self._pidx = {(f, int(p)): i for i, (f, p) in
                          enumerate(zip(self.problems["family"], self.problems["problem"]))}
        return self._pidx


def input_paths(directory, solves_path=None):
    """The paths a reader of the run in `directory` reads (the directory and its files that
    exist), known before the run is read: what an output of a command over it must not replace
    (ikbench.io.safe_io)."""
    directory = Path(directory)
    names = ("run.json", *MANIFEST_FILES, *(n + GZIP_SUFFIX for n in MANIFEST_FILES), "solves.partial.csv")
    out = [directory] + ([solves_path] if solves_path is not None else [])
    return out + [directory / n for n in names if _exists(directory / n)]


def read_traces_bytes(path, data, cols, exact=True, with_lines=False):
    """traces.csv as a typed DataFrame, split and checked as the C++ readers do (exactly the
    format's columns with `exact`, else at least `cols`); with `with_lines`, also the file line
    of every row."""
    if exact:
        table = _Table(path, data, "traces.csv", expected=cols)
    else:
        table = _Table(path, data, "traces.csv", required=cols)
    df = table.frame()
    for c in ("family", "solver"):
        df[c] = df[c].astype(str)
    return (df, table.lines) if with_lines else df


def _manifest_mismatch(name, entry, data, content=None):
    """Why `data` (the file's bytes; `content` its decompressed content for a NAME.gz file) does
    not match run.json's manifest entry for file `name` (None if it does): bytes and hash are
    the file's, rows its content's."""
    if not isinstance(entry, dict):
        return f"run.json 'files.{name}' is not an object"
    if "bytes" in entry and entry["bytes"] != len(data):
        return f"{name} has {len(data)} bytes, run.json's manifest says {entry['bytes']}"
    rows = entry.get("rows")
    if rows is not None:
        # As the writer counts them: newlines, after the header's of a CSV file; 0 for a JSON document.
        newlines = (data if content is None else content).count(b"\n")
        plain = manifest_file_of(name) or name
        found = max(newlines - 1, 0) if plain.endswith(".csv") else newlines if plain.endswith(".jsonl") else 0
        if found != rows:
            return f"{name} has {found} rows, run.json's manifest says {rows}"
    h = entry.get("fnv1a64")
    if h is not None:
        got = fnv1a64_hex(data)
        if str(h).lower() != got:
            return f"{name} has FNV-1a 64 hash {got}, run.json's manifest says {h}"
    return None
