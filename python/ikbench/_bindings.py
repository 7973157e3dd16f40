"""The compiled bindings (ikbench._core), re-exported for the package.

The package's __init__ imports them with

    from ._bindings import *  # noqa: F401,F403  (compiled bindings, when built)

In a build tree the extension lives in <build>/python/ikbench/ while the
Python modules stay in <source>/python/ikbench/: with both <source>/python
and <build>/python on sys.path, this module extends the package's path so
that `ikbench._core` is found in either half (pkgutil.extend_path). An
installed package holds both halves in one directory.

When the extension has not been built, nothing is exported and
`bindings_error` says why; the pure-Python modules keep working.
"""

import importlib as _importlib
import pkgutil as _pkgutil
import sys as _sys

_package = _sys.modules[__name__.rpartition(".")[0]]
if isinstance(getattr(_package, "__path__", None), list):
    _package.__path__[:] = _pkgutil.extend_path(_package.__path__, _package.__name__)

try:
    _core = _importlib.import_module(_package.__name__ + "._core")
except ModuleNotFoundError as _error:
    if _error.name != _package.__name__ + "._core":
        raise
    bindings_error = (
        "the compiled module ikbench._core was not found (build the CMake target "
        "ikbench_python and put <build>/python on PYTHONPATH; see docs/python.md)"
    )
    __all__ = ["bindings_error"]
else:
    bindings_error = None
    __all__ = ["bindings_error"] + [name for name in dir(_core) if not name.startswith("_")]
    globals().update({name: getattr(_core, name) for name in __all__ if name != "bindings_error"})
