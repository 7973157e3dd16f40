"""The package layout: the build tree (source and build halves of the
package) and an installed copy made by `cmake --install`."""

import os
import subprocess
import sys
import textwrap

import pytest

import ikbench
import ikbench._bindings as bindings
import ikbench._core as core


def test_bindings_re_export_the_extension():
    assert bindings.bindings_error is None
    public = [n for n in dir(core) if not n.startswith("_")]
    assert set(bindings.__all__) == set(public) | {"bindings_error"}
    for name in public:
        assert getattr(bindings, name) is getattr(core, name)
    assert {"Model", "Goal", "Solver", "Summary", "solve_batch", "solvers", "random_chain"} <= set(public)


def test_package_re_exports_the_bindings_when_its_init_imports_them():
    if not hasattr(ikbench, "Solver"):
        pytest.skip("the package's __init__ does not import ikbench._bindings: no top-level names to check")
    assert ikbench.Solver is core.Solver and ikbench.solve_batch is core.solve_batch


INIT_LINE = "from ._bindings import *  # noqa: F401,F403  (compiled bindings, when built)\n"


def test_a_package_init_with_the_import_line_joins_both_halves(tmp_path):
    # A regular package (with an __init__.py that has the one import line) in
    # one directory, the extension in another: _bindings joins them.
    pkg = tmp_path / "src" / "ikbench"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(INIT_LINE)
    (pkg / "_bindings.py").write_text(open(bindings.__file__).read())
    build_half = os.path.dirname(os.path.dirname(os.path.abspath(core.__file__)))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "src"), build_half])
    script = "import ikbench; print(ikbench.__file__); print(ikbench._core.__file__); print(ikbench.Solver('dls').spec)"
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True, env=env,
                         cwd=tmp_path).stdout.splitlines()
    assert out[0] == str(pkg / "__init__.py")
    assert out[1].startswith(os.path.join(build_half, "ikbench"))
    assert out[2] == "dls"
    # Without the build half the package still imports, with no bindings.
    env["PYTHONPATH"] = str(tmp_path / "src")
    out = subprocess.run([sys.executable, "-c", "import ikbench; print(ikbench.bindings_error is not None, "
                          "hasattr(ikbench, 'Solver'))"], check=True, capture_output=True, text=True, env=env,
                         cwd=tmp_path).stdout.split()
    assert out == ["True", "False"]


def test_without_the_extension_the_package_still_imports(tmp_path):
    # Only the source half of the package on the path: _bindings exports
    # nothing but the reason.
    source = os.path.dirname(os.path.dirname(os.path.abspath(bindings.__file__)))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = source
    out = subprocess.run([sys.executable, "-c", "import ikbench._bindings as b; print(b.__all__); print(b.bindings_error)"],
                         check=True, capture_output=True, text=True, env=env, cwd=tmp_path).stdout.splitlines()
    assert out[0] == "['bindings_error']"
    assert "ikbench._core was not found" in out[1]


def test_the_installed_package_works_on_its_own(tmp_path):
    build = os.environ.get("IKBENCH_BUILD_DIR")
    cmake = os.environ.get("IKBENCH_CMAKE", "cmake")
    if not build:
        pytest.skip("IKBENCH_BUILD_DIR (the CMake build directory) is not set; ctest sets it")
    prefix = tmp_path / "prefix"
    subprocess.run([cmake, "--install", build, "--prefix", str(prefix), "--component", "python"], check=True,
                   capture_output=True, text=True)
    site = prefix / "lib" / "python3" / "dist-packages"
    assert (site / "ikbench" / "_bindings.py").is_file()
    assert any(p.name.startswith("_core.") for p in (site / "ikbench").iterdir())
    script = textwrap.dedent("""
        import ikbench, ikbench._bindings as ik
        m = ik.random_chain(4, 1, limit=2.0)
        p, _ = m.fk(m.random_configuration(3))
        s = ik.Solver("dls").solve(m, ik.Goal.position("tip", p))
        print(ik.__file__, s.converged)
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True, env=env,
                         cwd=tmp_path).stdout.split()
    assert out[0].startswith(str(site)) and out[1] == "True"
