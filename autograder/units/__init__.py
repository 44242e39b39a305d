"""Course units, one folder each; a unit's Python code is importable as `autograder.units.<name>`.

A unit shipped inside this folder is an ordinary subpackage. A unit elsewhere (given to
the grader by path) is registered under the same name by `register`, in the grader and
in the worker alike, so hidden suites, helpers and the worker import it by one name.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path


def register(path, name: str) -> str:
    """Make the unit folder `path` importable as `autograder.units.<name>`; returns that name."""
    path = Path(path).resolve()
    package = f"{__name__}.{name}"
    known = sys.modules.get(package)
    if known is None and (Path(__file__).parent / name).resolve() == path:
        known = importlib.import_module(package)
    if known is not None:
        where = Path(next(iter(getattr(known, "__path__", [])), "")).resolve()
        if where != path:
            raise ImportError(f"two units are named {name!r}: {where} and {path}")
        return package
    init = path / "__init__.py"
    if init.exists():
        spec = importlib.util.spec_from_file_location(package, init, submodule_search_locations=[str(path)])
        assert spec is not None      # a .py file's location always gives a spec
    else:
        spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
        spec.submodule_search_locations = [str(path)]
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    if spec.loader is not None:
        spec.loader.exec_module(module)
    return package
