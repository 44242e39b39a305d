"""The reference solution, loaded into the grader process for the hidden suites.

Solution modules import each other by top-level name (`import bptt`), exactly like the
student's, so the solutions folder goes on sys.path. The grader process never imports
student code, so these top-level names are unambiguous here.
"""

from __future__ import annotations

import importlib
import sys
from types import SimpleNamespace

from autograder import api, paths


def load() -> SimpleNamespace:
    folder = str(paths.SOLUTIONS)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    mods = {}
    for topic in api.TOPICS.values():
        if (paths.SOLUTIONS / f"{topic.module}.py").exists():
            mods[topic.module] = importlib.import_module(topic.module)
    return SimpleNamespace(**mods)
