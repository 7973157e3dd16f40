"""A run's solver specs as data: the one reader of a spec's backend, parameters and given keys.

The C++ `SolverSpec` (solvers/include/ikbench/solvers/solver_spec.h) is the only parser of a spec's
text; run.json records what it parsed, per spec in `solvers[]`: `name` (the backend), `preset`
(the preset the spec starts with, e.g. `auto`, when it does), `parameters` (every parameter's
value, defaults filled in) and `given` (the keys the spec or its preset sets itself)
(docs/results-format.md). Every module of the package takes a spec's settings from here:

    records = spec_records(run)              # {spec: SpecRecord}, run.json's order
    r = records["dls:lambda=0.1"]
    r.backend, r.name, r.parameters["lambda"], r.given_values   # 'dls', 'dls', 0.1, {'lambda': 0.1}
    named(run.solver_specs, "dls", records)  # the specs written as `dls` or `dls:...`

A spec's text is never split to find its settings, so a quoted value with separators in it
(`ext:cmd='python3 a:b.py'`) reads like any other. What is read from text here is only what
run.json cannot hold: the name a spec starts with when run.json does not list it (a run without
run.json, a row of the history store), which precedes the first ':' since a name has no quotes,
and a user's comma-separated list of specs (`--solvers`), split outside quotes and braces as the
C++ command line splits it.
"""

from dataclasses import dataclass, field
from types import MappingProxyType

from .results_schema import ResultsError


@dataclass(frozen=True)
class SpecRecord:
    spec: str                      # the spec's text, as solves.csv's solver column has it
    backend: str | None            # run.json `name`: the backend (None when not recorded)
    preset: str | None = None      # run.json `preset`: the preset the spec starts with, if any
    parameters: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    given: tuple = ()              # run.json `given`, sorted
    recorded: bool = False         # run.json lists the spec with its backend

    @property
    def name(self):
        """The name the spec is written with: its preset (`auto`) or its backend (`dls`)."""
        return self.preset or self.backend or head_name(self.spec)

    @property
    def given_values(self):
        """{key: value} of the keys the spec (or its preset) sets itself."""
        return {k: self.parameters.get(k) for k in self.given}


def head_name(spec):
    """The name a spec's text starts with (`dls:lambda=0.1` -> `dls`), for a spec run.json does
    not record: a backend or preset name holds neither ':' nor a quote, so it is the text before
    the first ':'."""
    return str(spec).partition(":")[0].strip()


def _record(entry):
    spec = entry["spec"]
    name = entry.get("name") if isinstance(entry.get("name"), str) and entry.get("name") else None
    preset = entry.get("preset") if isinstance(entry.get("preset"), str) and entry.get("preset") else None
    params = entry.get("parameters") if isinstance(entry.get("parameters"), dict) else {}
    given = entry.get("given") if isinstance(entry.get("given"), list) else []
    return SpecRecord(spec, name, preset, MappingProxyType(dict(params)),
                      tuple(sorted(str(k) for k in given if isinstance(k, str))), name is not None)


def spec_records(run_or_meta):
    """{spec: SpecRecord} of a run (or a run.json dict): run.json's solvers[] in its order, then
    (for a Run) any other spec of solves.csv, unrecorded (backend None, no parameters)."""
    meta = run_or_meta if isinstance(run_or_meta, dict) else getattr(run_or_meta, "meta", {})
    out = {}
    solvers = meta.get("solvers") if isinstance(meta, dict) else None
    for entry in solvers if isinstance(solvers, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("spec"), str) and entry["spec"] not in out:
            out[entry["spec"]] = _record(entry)
    if not isinstance(run_or_meta, dict):
        for spec in getattr(run_or_meta, "solver_specs", []):
            if spec not in out:
                out[spec] = SpecRecord(spec, None)
    return out


def spec_record(records, spec):
    """The record of `spec` in `records` (spec_records), or an unrecorded one."""
    return records.get(spec) or SpecRecord(spec, None)


def spec_name(spec, records=None):
    """The name `spec` is written with (its preset or backend), from its record when there is one."""
    return spec_record(records or {}, spec).name


def named(specs, name, records=None):
    """The specs of `specs` that `name` stands for, in their order: `name` itself when it is one of
    them, else every spec written with that name (a backend or preset name: `dls` stands for `dls`
    and `dls:lambda=0.1`)."""
    specs = list(specs)
    if name in specs:
        return [name]
    return [s for s in specs if spec_name(s, records) == name]


def split_spec_list(text, what="--solvers"):
    """A comma-separated list of specs as a user writes it, split at commas outside quotes and
    braces (`ext:cmd='a,b',dls:lambda={0.1,0.2}` is two specs), blanks dropped. ResultsError on
    an unterminated quote or unbalanced braces."""
    out, cur, depth, quote = [], [], 0, None
    for c in str(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                raise ResultsError(f"{what} '{text}': a '}}' without its '{{'")
        elif c == "," and depth == 0:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(c)
    if quote or depth:
        raise ResultsError(f"{what} '{text}': " + ("an unterminated quote" if quote else "a '{' without its '}'"))
    out.append("".join(cur))
    return [s.strip() for s in out if s.strip()]
