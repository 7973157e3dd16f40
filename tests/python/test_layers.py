"""The analysis package's layers: imports point only down, cli -> render -> analysis -> io, and no
module imports another in a cycle (docs/architecture.md, "The Python package").

Every module of python/ikbench is parsed with `ast` and every import statement is read, those inside
functions and `if TYPE_CHECKING:` blocks included, relative ones resolved against the importing
module's package. A module lies in the layer of the first folder under ikbench/; the leaves
(`_bindings`, the compiled `_core`, `external`) may be imported from any layer and import nothing
of ikbench themselves but each other. The package root (`ikbench/__init__.py`, `__main__.py`) is the
top and nothing imports it. `importlib.import_module` and `__import__` with an ikbench name are
refused outside `_bindings` (an import no parse could see). Every SQL statement lives in the io
layer (the history store): no text that starts with an SQL keyword and no `.query(...)` or
`.execute(...)` call elsewhere. The checker is tested first on small
packages written to a temporary folder, one of each kind of breach, so that a checker that finds
nothing cannot pass.
"""

import ast
import re
import textwrap
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "ikbench"

LAYERS = ("io", "analysis", "render", "cli")   # bottom to top
LEAVES = ("_bindings", "_core", "external")
TOP = len(LAYERS)                                # the package root and __main__
DYNAMIC_IMPORT_ALLOWED = ("_bindings",)


def modules(package_dir):
    """{dotted name: (path, is_package)} of every .py file under package_dir (a package named by
    its folder)."""
    package_dir = Path(package_dir)
    root = package_dir.name
    found = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = [root, *path.relative_to(package_dir).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


def _resolve(name, known):
    """The module an import of `name` loads last: name itself, or the nearest package above it
    (`from pkg.mod import attr` names pkg.mod.attr)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def imports(package_dir):
    """{module: {imported module: first line}} over the package, and the list of dynamic imports
    (module, line, text) of a package name."""
    known = modules(package_dir)
    root = Path(package_dir).name
    graph, dynamic = {}, []
    for name, (path, is_package) in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = name if is_package else name.rpartition(".")[0]
        edges = {}

        def add(target, line):
            if target and target != name:
                edges.setdefault(target, line)

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == root or alias.name.startswith(root + "."):
                        add(_resolve(alias.name, known), node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    if node.level - 1 >= len(base):
                        raise AssertionError(f"{path}:{node.lineno}: relative import beyond the package")
                    base = base[:len(base) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if not (source == root or source.startswith(root + ".")):
                    continue
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    add(full if full in known else _resolve(source, known), node.lineno)
            elif isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called in ("import_module", "__import__"):
                    leaf = name.rpartition(".")[2]
                    if leaf not in DYNAMIC_IMPORT_ALLOWED:
                        dynamic.append((name, node.lineno, ast.unparse(node)))
        graph[name] = edges
    return graph, dynamic


def layer_of(name):
    """The layer index of a dotted module name (ikbench.render.report -> 2), TOP for the root and
    __main__, None for a leaf, and "outside" for a module in no layer."""
    parts = name.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return TOP
    if parts[1] in LEAVES:
        return None
    if parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    return "outside"


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm), each as a
    sorted list."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def violations(package_dir):
    """Every breach of the layering as a line of text (empty: none)."""
    graph, dynamic = imports(package_dir)
    known = modules(package_dir)
    out = []
    for name in sorted(graph):
        mine = layer_of(name)
        if mine == "outside":
            out.append(f"{name}: in no layer (expected under one of {', '.join(LAYERS)} or a leaf)")
            continue
        for target, line in sorted(graph[name].items()):
            theirs = layer_of(target)
            path = known[name][0]
            if mine is None and theirs is not None:
                out.append(f"{path}:{line}: leaf {name} imports {target}")
            elif theirs == "outside":
                continue   # reported once for the module itself
            elif theirs == TOP:
                out.append(f"{path}:{line}: {name} imports the package root ({target})")
            elif theirs is not None and mine is not None and theirs > mine:
                out.append(f"{path}:{line}: {name} ({LAYERS[mine]}) imports {target} "
                           f"({LAYERS[theirs]}), a layer above it")
    for component in cycles(graph):
        out.append("import cycle: " + " <-> ".join(component))
    for name, line, text in dynamic:
        out.append(f"{known[name][0]}:{line}: {name} imports by name at run time ({text})")
    return out


SQL = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|WITH)\s", re.ASCII)
SQL_CALLS = ("query", "execute", "executemany", "executescript", "read_sql", "read_sql_query")


def sql_outside_store(package_dir):
    """Every SQL text (a string that starts with a statement's keyword) and every call of a
    database's query method in a module outside the io layer, as lines of text: the history store
    (ikbench.io) holds every SQL statement of the package."""
    out = []
    for name, (path, _) in modules(package_dir).items():
        if layer_of(name) == 0:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.match(node.value):
                out.append(f"{path}:{node.lineno}: SQL outside ikbench.io: {node.value[:40]!r}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in SQL_CALLS):
                out.append(f"{path}:{node.lineno}: a database call outside ikbench.io: .{node.func.attr}(...)")
    return out


def _write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


CLEAN = {
    "__init__.py": "from .io.results import load\nfrom ._bindings import *\n",
    "__main__.py": "from .cli import main\n",
    "_bindings.py": "import importlib\n_core = importlib.import_module(__package__ + '._core')\n",
    "external.py": "import math\n",
    "io/__init__.py": "",
    "io/results.py": "from . import schema\nfrom .schema import COLUMNS\n",
    "io/schema.py": "COLUMNS = ()\n",
    "analysis/__init__.py": "",
    "analysis/figures.py": "from ..io.results import load\nfrom .. import external\nfrom .._bindings import *\n",
    "analysis/verify.py": "import ikbench.io.results\nfrom . import figures\n",
    "render/__init__.py": "",
    "render/report.py": "from ..analysis import figures, verify\n\ndef page():\n    from ..io import schema\n",
    "cli/__init__.py": "from .main import main\n",
    "cli/main.py": "def main():\n    from ..render import report\n    from ikbench.analysis.verify import verify\n",
}


def _package(tmp_path, **changes):
    files = dict(CLEAN)
    for rel, text in changes.items():
        if text is None:
            files.pop(rel)
        else:
            files[rel] = text
    return _write(tmp_path / "ikbench", files)


def test_checker_passes_a_layered_package(tmp_path):
    assert violations(_package(tmp_path)) == []


@pytest.mark.parametrize("rel,text,expected", [
    # an upward import at module level, and one hidden in a function
    ("io/results.py", "from ..analysis import figures\n", "imports ikbench.analysis.figures (analysis), a layer above"),
    ("analysis/figures.py", "def f():\n    from ..render.report import page\n",
     "imports ikbench.render.report (render), a layer above"),
    ("render/report.py", "import ikbench.cli.main as m\n", "imports ikbench.cli.main (cli), a layer above"),
    # a cycle inside one layer, two deep
    ("analysis/figures.py", "def f():\n    from . import verify\n", "import cycle: ikbench.analysis.figures <-> ikbench.analysis.verify"),
    # a module outside every layer, the root imported from below, a leaf that reaches into a layer
    ("gate.py", "x = 1\n", "ikbench.gate: in no layer"),
    ("analysis/verify.py", "from .. import load\n", "imports the package root"),
    ("external.py", "from .io import results\n", "leaf ikbench.external imports ikbench.io.results"),
    # an import by name at run time, which no parse could follow
    ("render/report.py", "import importlib\nm = importlib.import_module('ikbench.cli.main')\n", "imports by name at run time"),
])
def test_checker_finds_each_breach(tmp_path, rel, text, expected):
    found = violations(_package(tmp_path, **{rel: text}))
    assert any(expected in line for line in found), found


def test_checker_finds_a_three_module_cycle_across_functions(tmp_path):
    found = violations(_package(
        tmp_path,
        **{"io/a.py": "def f():\n    from . import b\n", "io/b.py": "from .c import x\n",
           "io/c.py": "x = 1\ndef g():\n    import ikbench.io.a\n"}))
    assert "import cycle: ikbench.io.a <-> ikbench.io.b <-> ikbench.io.c" in found, found


def test_package_is_layered():
    assert PACKAGE.is_dir(), PACKAGE
    found = violations(PACKAGE)
    assert found == [], "the layering of python/ikbench is broken:\n" + "\n".join(found)


def test_checker_finds_sql_outside_the_store(tmp_path):
    assert sql_outside_store(_package(tmp_path)) == []
    found = sql_outside_store(_package(
        tmp_path, **{"io/store.py": "def runs(db):\n    return db.query('SELECT id FROM runs')\n",
                     "render/site.py": "def page(db):\n    return db.query('SELECT id FROM runs')\n",
                     "analysis/series.py": "Q = '  WITH x AS (SELECT 1) SELECT * FROM x'\n"}))
    assert len(found) == 3, found    # the render module's text and call, the analysis module's text
    assert not any("io/store.py" in line for line in found), found


def test_every_sql_statement_lives_in_the_io_layer():
    found = sql_outside_store(PACKAGE)
    assert found == [], "\n".join(found)


def test_every_layer_holds_modules():
    graph, _ = imports(PACKAGE)
    for layer in LAYERS:
        assert any(m.startswith(f"ikbench.{layer}.") for m in graph), layer
