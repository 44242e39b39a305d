"""The fixtures of our suites in Otter's kernel, for the cases scripts/otter_course.py writes.

Shipped in the Otter autograder beside the test files; a case imports what its test function
asks for. They are what grading/plugin.py gives the same tests, with plain modules: `rng`
seeded as the grader seeds it (here from run seed 0), `reference` the reference solution's
modules (reference/ beside this file), `signals` and `report_extras` dicts of the run.
"""

import importlib
import sys
import zlib
from pathlib import Path

import numpy as np

REFERENCE = Path(__file__).resolve().parent / "reference"
run_seed = 0
signals: dict = {}
report_extras: dict = {}


def rng(key: str):
    """The grader's Generator of the test `key` ("hidden/test_bptt.py::test_name")."""
    return np.random.default_rng([run_seed, zlib.crc32(key.encode())])


def _load(folder: Path) -> dict:
    """The modules of `folder`, imported apart from the submission's modules of the same
    names: the reference imports its siblings by top-level name (`import bptt`), as the
    submission does, so those names point at the reference only while it is imported."""
    names = [path.stem for path in folder.glob("*.py")]
    submission = {name: sys.modules.pop(name) for name in names if name in sys.modules}
    sys.path.insert(0, str(folder))
    try:
        return {name: importlib.import_module(name) for name in names}
    finally:
        sys.path.remove(str(folder))
        for name in names:
            sys.modules.pop(name, None)
        sys.modules.update(submission)


class _Reference:
    """`reference.bptt`, ...: loaded on first use (a public-only run never needs them)."""

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if not self.__dict__:
            self.__dict__.update(_load(REFERENCE))
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(f"no reference module {name!r}") from None


reference = _Reference()
