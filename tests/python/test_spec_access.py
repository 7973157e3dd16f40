"""A run's solver specs are read from run.json through one accessor, ikbench.io.specs: no other module
of python/ikbench splits a spec's text on ':', ',' or '=' (the C++ SolverSpec is the spec's only parser,
run.json records its backend, parameters and given keys), and a spec with a quoted value holding those
characters goes through compare, report, coverage, sweep and the plots' --solvers like any other.

The splitting check parses every module with `ast` and lists each call that splits or searches a
text at one of the three characters (`str.split`, `rsplit`, `partition`, `rpartition`, `find`,
`rfind`, `index`, `rindex`, `re.split`). Only the accessor may do so freely; the other texts split
at those characters (a CSV line, a tune criterion, a benchmark's name, ...) are listed below with
how many such calls their module makes, so that one more call there fails too. The checker is run
first on a small package with one breach of each kind, so that a checker that finds nothing
cannot pass.
"""

import ast
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, harness_binary

from ikbench.analysis import compare, coverage, family_figures, sweep, timeunit
from ikbench.io import results
from ikbench.io.results_schema import ResultsError
from ikbench.io.specs import named, spec_name, spec_records, split_spec_list

PACKAGE = REPO / "python" / "ikbench"
SEPARATORS = (":", ",", "=")
SPLITTING = ("split", "rsplit", "partition", "rpartition", "find", "rfind", "index", "rindex")
ACCESSOR = "io/specs.py"
# Modules that split other texts at a separator: {module: (calls, what they split)}.
OTHER_TEXTS = {
    "io/results_schema.py": (2, "a CSV line of solves.csv at its commas"),
    "io/redact.py": (1, "a URL's user:password before the '@'"),
    "io/store_validate.py": (1, "a JSON error message after its location"),
    "analysis/tune_criterion.py": (4, "a tune criterion (`max:success,min:time`, docs/analysis.md)"),
    "analysis/tune_sets.py": (2, "a tune problem set (`SUITE[@SEED][:FAMILY,...]`)"),
    "analysis/family_figures.py": (1, "a recorded command line's `--option=value`"),
    "cli/plot_commands.py": (1, "--formats (`png,svg`)"),
    "render/plots.py": (2, "a Google Benchmark name's `dof:N` part; the family names curves.dof_sweeps joins"),
    "render/report_figures.py": (1, "the family names curves.dof_sweeps lists joined by ', '"),
    "render/gate_render.py": (1, "the gate's metric key `outcome:NAME`"),
    "analysis/levels.py": (1, "a level_errors cell's `position:orientation` pairs (docs/wholebody.md)"),
}


def _is_separator_text(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and \
        any(c in node.value for c in SEPARATORS)


def splitting_calls(package_dir):
    """{module path relative to the package: [line, ...]} of every call that splits or searches a
    text at ':', ',' or '='."""
    found = {}
    for path in sorted(Path(package_dir).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args):
                continue
            f = node.func
            is_re = f.attr == "split" and isinstance(f.value, ast.Name) and f.value.id == "re"
            if (f.attr in SPLITTING and _is_separator_text(node.args[0])) or (is_re and _is_separator_text(node.args[0])):
                found.setdefault(path.relative_to(package_dir).as_posix(), []).append(node.lineno)
    return {m: sorted(lines) for m, lines in found.items()}


def test_checker_finds_each_kind_of_split(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "analysis").mkdir(parents=True)
    (pkg / "analysis" / "bad.py").write_text(textwrap.dedent("""\
        import re
        def name(spec):
            return spec.split(":", 1)[0]
        def value(part):
            k, _, v = part.partition("=")
            return v
        def items(text):
            return re.split(r"[:,]", text)
        def head(spec):
            return spec[:spec.find(":")]
        def last(spec):
            return spec.rsplit(",", 1)
        """))
    (pkg / "analysis" / "fine.py").write_text(textwrap.dedent("""\
        def words(text, path):
            return text.split(), path.split("/"), text.partition(" ")
        """))
    assert splitting_calls(pkg) == {"analysis/bad.py": [3, 5, 8, 10, 12]}


def test_no_module_but_the_accessor_splits_a_spec():
    found = splitting_calls(PACKAGE)
    assert ACCESSOR in found, "the accessor reads a spec's name before its first ':'"
    extra = {m: lines for m, lines in found.items() if m != ACCESSOR and m not in OTHER_TEXTS}
    assert not extra, f"splitting at ':' ',' '=' outside ikbench.io.specs (read run.json's records there): {extra}"
    for module, (count, what) in OTHER_TEXTS.items():
        assert len(found.get(module, [])) == count, \
            f"{module}: {len(found.get(module, []))} splitting calls, {count} expected (only {what})"


# ------------------------------------------------------------------------------- the accessor

QUOTED = "ext:cmd='python3 a:b,c=d.py'"


def _meta():
    return {"solvers": [
        {"spec": "dls:lambda=0.1", "name": "dls", "parameters": {"lambda": 0.1, "max_step": 0.5}, "given": ["lambda"]},
        {"spec": QUOTED, "name": "ext", "parameters": {"cmd": "python3 a:b,c=d.py", "restarts": 0}, "given": ["cmd"]},
        {"spec": "auto", "name": "dls-adaptive", "preset": "auto", "parameters": {"restarts": 4},
         "given": ["restarts"]}]}


def test_records_come_from_run_json_not_from_the_text():
    rec = spec_records(_meta())
    assert list(rec) == ["dls:lambda=0.1", QUOTED, "auto"]
    ext = rec[QUOTED]
    assert (ext.backend, ext.name, ext.recorded) == ("ext", "ext", True)
    assert ext.given_values == {"cmd": "python3 a:b,c=d.py"}
    assert dict(ext.parameters) == {"cmd": "python3 a:b,c=d.py", "restarts": 0}
    auto = rec["auto"]
    assert (auto.backend, auto.preset, auto.name) == ("dls-adaptive", "auto", "auto")
    assert named(list(rec), "ext", rec) == [QUOTED]
    assert named(list(rec), "dls", rec) == ["dls:lambda=0.1"]
    assert named(list(rec), "auto", rec) == ["auto"]
    assert named(list(rec), "dls-adaptive", rec) == []          # written as `auto`, not as its backend
    assert spec_name("kdl-lma:eps=1e-5") == "kdl-lma"           # a spec run.json does not list


def test_spec_list_split_outside_quotes_and_braces():
    assert split_spec_list(f"dls:lambda={{0.1,0.2}}, {QUOTED},ccd") == ["dls:lambda={0.1,0.2}", QUOTED, "ccd"]
    assert split_spec_list("ext:cmd=\"a,'b\",dls") == ["ext:cmd=\"a,'b\"", "dls"]
    with pytest.raises(ResultsError, match="unterminated quote"):
        split_spec_list("ext:cmd='a,b")
    with pytest.raises(ResultsError, match=r"a '\{' without"):
        split_spec_list("dls:lambda={0.1,0.2")


# ----------------------------------------------- a real run with quoted values, through every reader

@pytest.fixture(scope="module")
def quoted_run(tmp_path_factory):
    """A run of the harness with `dls` and three `ext` specs whose command names a script called
    `a:b,c=d.py` or `a:b,c=e.py` (the example DLS solver, linked), quoted in the spec: one plain,
    one with restarts=2 and solutions=all, one of the second script with restarts=1."""
    cli = harness_binary()
    d = tmp_path_factory.mktemp("quoted")
    scripts = [d / "a:b,c=d.py", d / "a:b,c=e.py"]
    for script in scripts:
        script.symlink_to(REPO / "examples" / "external" / "dls_solver.py")
    cmd, cmd2 = (f"ext:cmd='/usr/bin/python3 {script}'" for script in scripts)
    specs = ["dls", cmd, cmd + ":restarts=2:solutions=all", cmd2 + ":restarts=1"]
    out = d / "run"
    proc = subprocess.run([cli, "run", "--chain", "3", "--samples", "4", "--threads", "1", "--trace-problems", "1",
                           "--seed", "7", "--solvers", ",".join(specs), "--out", str(out)],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ, NO_COLOR="1"))
    assert proc.returncode == 0, proc.stderr
    return out, specs, [f"/usr/bin/python3 {script}" for script in scripts]


def test_quoted_spec_records_and_resolution(quoted_run):
    out, specs, commands = quoted_run
    run = results.load(out)
    assert run.solver_specs == specs
    rec = spec_records(run)
    assert [(rec[s].backend, rec[s].parameters["cmd"]) for s in specs[1:]] == \
        [("ext", commands[0]), ("ext", commands[0]), ("ext", commands[1])]
    assert family_figures.resolve_solvers(run, family_figures._split([f"{specs[1]},dls"])) == [specs[1], "dls"]
    assert family_figures.resolve_solvers(run, ["ext"]) == specs[1:]
    assert timeunit.resolve_spec("dls", set(specs), rec) == "dls"
    assert timeunit.resolve_spec("ext", set(specs), rec) is None    # three specs are written `ext`


def test_quoted_spec_through_compare(quoted_run):
    out, specs, _ = quoted_run
    run = results.load(out)
    res = compare.compare_specs(run, "dls", specs[1])
    assert (res.label_a, res.label_b) == ("dls", specs[1])
    assert set(res.rows["solver"]) == {f"dls vs {specs[1]}"}
    assert res.rows["solves_b"].tolist() == [4] * len(res.rows)
    with pytest.raises(ResultsError, match="names several"):
        compare.compare_specs(run, "dls", "ext")
    proc = subprocess.run(["/usr/bin/python3", "-m", "ikbench", "compare", str(out), "--specs", "dls", specs[3],
                           "--all", "--width", "0"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "python"), MPLBACKEND="Agg"))
    assert proc.returncode == 0, proc.stderr
    assert f"B = spec {specs[3]}" in proc.stdout


def test_quoted_spec_through_coverage_and_sweep(quoted_run):
    out, specs, commands = quoted_run
    run = results.load(out)
    roles = coverage.solver_roles(run)
    assert roles.get(specs[2]) == "multi" and specs[1] not in roles and specs[3] not in roles
    groups = {g.name: g for g in sweep.sweep_groups([("run", run)])}
    assert set(groups) == {"ext"}                   # dls alone is no sweep
    g = groups["ext"]
    c1, c2 = commands
    assert dict(g.axes) == {"cmd": [c1, c2], "restarts": ["0", "1", "2"], "solutions": ["first", "all"]}
    assert {m[1]: m[2] for m in g.members} == {specs[1]: {"cmd": c1, "restarts": "0", "solutions": "first"},
                                                specs[2]: {"cmd": c1, "restarts": "2", "solutions": "all"},
                                                specs[3]: {"cmd": c2, "restarts": "1", "solutions": "first"}}


def test_quoted_spec_through_the_report(quoted_run, tmp_path):
    from ikbench.render import report

    out, specs, commands = quoted_run
    page = tmp_path / "report.html"
    proc = subprocess.run(["/usr/bin/python3", "-m", "ikbench", "report", str(out), "--out", str(page),
                           "--progress", "none"], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "python"), MPLBACKEND="Agg"))
    assert proc.returncode == 0, proc.stderr
    data = report.extract_data(page.read_text(encoding="utf-8"))
    assert [(s["spec"], s["name"]) for s in data["solvers"]] == list(zip(specs, ["dls", "ext", "ext", "ext"]))
    sections = {s["spec"]: dict(s["parameters"]) for s in data["solver_sections"]}
    assert sections[specs[2]]["cmd"] == commands[0] and sections[specs[3]]["cmd"] == commands[1]
    assert sections[specs[2]]["restarts"] == 2 and sections[specs[2]]["solutions"] == "all"
    assert json.dumps(data)  # the page's data is plain JSON
