"""The reference solution, loaded into the grader process for the hidden suites.

Solution modules import each other by top-level name (`import bptt`), exactly like the
student's, so the solutions folder goes on sys.path. The grader process never imports
student code, so these top-level names are unambiguous here. Each module is imported on
first use, so a suite only depends on the solution modules it touches.
"""

from __future__ import annotations

import importlib
import sys

from autograder import api, paths


class ReferenceModules:
    """`reference.bptt`, `reference.gru_lstm`, ...: solution modules, imported on first access."""

    def __getattr__(self, name: str):
        if name not in api.MODULES:
            raise AttributeError(f"no reference module {name!r}")
        folder = str(paths.SOLUTIONS)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        module = importlib.import_module(name)
        setattr(self, name, module)
        return module


def load() -> ReferenceModules:
    return ReferenceModules()
