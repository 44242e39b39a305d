"""The order the repository's tests start in under pytest-xdist (tests/conftest.py's scheduler).

Tests sharing a module fixture should run in one process, or every process computes it
(the kill matrix's batch run takes half a minute): the tests of a file form one work unit,
except in the folders of SPREAD (tests/containment/), whose tests are independent and mostly
wait (time limits, sleeps): each of their tests is a unit of its own. (Their session
fixtures, the copy of the checkout that `nobody` grades, are made once per process anyway.)

The longest units start first, so that no long one is left to run alone at the end (xdist
would otherwise start the files with the most tests first: the oracle files, hundreds of
tests in seconds). How long a unit takes is what it took in the previous run, kept in
DURATIONS (git-ignored, rewritten after every run), or else what it took when the committed
SEED was recorded (`make durations`): a fresh clone, CI's, has no previous run, and would
otherwise start everything in folder order. A unit in
neither (a new file) is assumed long and starts first, in the order of FOLDERS: a
class-scale end-to-end file before a content sweep before a unit test.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

SPREAD = {"containment"}
FOLDERS = ("e2e", "content", "containment", "engine")
# Files that import one costly library when their tests run (torch ~2 s of CPU, nbgrader and
# nbformat ~3 s): one unit each, so that one process imports it rather than every process
# that happened to get one of the files. A group not yet measured starts first.
GROUPS = ("autograder/units/*/topics/*/test_oracle.py", "tests/*/test_nbgrader*.py")


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def work_unit(nodeid: str) -> str:
    """The unit a test runs in: the pattern of its GROUP, its file, or itself in a folder of SPREAD."""
    file = _file(nodeid)
    group = next((g for g in GROUPS if fnmatch.fnmatchcase(file, g)), None)
    if group is not None:
        return group
    return nodeid if SPREAD & set(Path(file).parent.parts) else file


def start_order(units, durations: dict[str, float]) -> list[str]:
    """`units` sorted to start: unknown ones first by folder, then the known ones longest
    first. Stable: xdist's order among equals."""
    def key(unit: str):
        parts = Path(_file(unit)).parts       # tests/<folder>/test_x.py
        folder = FOLDERS.index(parts[1]) if len(parts) > 2 and parts[1] in FOLDERS else len(FOLDERS)
        known = unit in durations
        return (known, -durations[unit] if known else -1 if unit in GROUPS else folder)
    return sorted(units, key=key)


def read_durations(path: Path) -> dict[str, float]:
    """The seconds each unit took in the previous run; {} when there is no usable file."""
    try:
        durations = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(durations, dict):
        return {}
    return {unit: float(s) for unit, s in durations.items() if isinstance(s, (int, float))}


def known_durations(local: Path, seed: Path) -> dict[str, float]:
    """The seconds each unit took: in the previous run of this checkout (`local`) where it
    ran, else in the run the committed `seed` recorded."""
    return {**read_durations(seed), **read_durations(local)}


def write_durations(path: Path, measured: dict[str, float], repo: Path | None = None) -> None:
    """Merge this run's `measured` seconds into the file: units not run keep theirs, units
    whose file is gone (relative to `repo`, by default the file's folder) are dropped."""
    repo = path.parent if repo is None else repo
    durations = {**read_durations(path), **{unit: round(s, 2) for unit, s in measured.items()}}
    durations = {unit: s for unit, s in durations.items()
                 if (repo / _file(unit)).is_file() or (unit in GROUPS and any(repo.glob(unit)))}
    try:
        path.write_text(json.dumps(dict(sorted(durations.items())), indent=0) + "\n")
    except OSError:
        pass                             # a read-only checkout runs in the default order


if __name__ == "__main__":      # make durations: this checkout's times become the committed seed
    import sys

    local, seed = Path(sys.argv[1]), Path(sys.argv[2])
    write_durations(seed, read_durations(local), repo=local.parent)     # merged into the seed's own
