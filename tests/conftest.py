"""Fixtures shared by the repository's own tests, and the order tests run in under xdist."""

import json
import os
import subprocess
import sys
from pathlib import Path

# One BLAS thread, as in the grader's own process (autograder/__main__.py): the tests grade in
# this process too (helpers.run_in_process). Set before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402
from helpers import REPO, SOLUTIONS, grade  # noqa: E402

# With pytest-xdist (`make test` runs `-n auto`), tests sharing a module or session fixture
# should run in one process, or every process computes it (the kill matrix's batch run
# takes half a minute). xdist's `--dist loadgroup` marks do not reach pytest 9's node ids,
# so this scheduler groups instead: the tests of a file stay together, except in the
# files of SPREAD (wherever they sit under tests/), whose tests are independent and mostly
# wait (time limits, sleeps): each of their tests is a unit of its own.
SPREAD = {"test_containment.py", "test_sandbox.py"}
# The longest units start first, so that no long one is left to run alone at the end (xdist
# would otherwise start the files with the most tests first: the oracle files, hundreds of
# tests in seconds). How long a unit takes is what it took in the previous run, kept in
# DURATIONS (git-ignored, rewritten after every run). A unit not in it (a new file, a fresh
# clone) is assumed long and starts first, in the order of FOLDERS: a class-scale end-to-end
# file before a content sweep before a unit test.
DURATIONS = REPO / ".pytest_durations"
FOLDERS = ("e2e", "content", "containment", "engine")


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def work_unit(nodeid: str) -> str:
    return nodeid if Path(_file(nodeid)).name in SPREAD else _file(nodeid)


def _read_durations() -> dict[str, float]:
    try:
        durations = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}
    return durations if isinstance(durations, dict) else {}


def start_order(units, durations: dict[str, float]) -> list:
    """`units` (work unit ids) sorted to start: unknown ones first by folder, then the known
    ones longest first. Stable: xdist's order among equals."""
    def key(unit: str):
        parts = Path(_file(unit)).parts
        folder = FOLDERS.index(parts[1]) if len(parts) > 2 and parts[1] in FOLDERS else len(FOLDERS)
        known = unit in durations
        return (known, -durations.get(unit, 0.0) if known else folder)
    return sorted(units, key=key)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None                      # an explicit other --dist is respected
    from xdist.scheduler import LoadScopeScheduling

    class LongestFirst(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node) -> None:
            # The queue is complete before the first unit is assigned: order it once.
            if not self.ordered:
                durations = _read_durations()
                units = dict(self.workqueue)
                self.workqueue.clear()
                self.workqueue.update((unit, units[unit]) for unit in start_order(units, durations))
                self.ordered = True
            super()._assign_work_unit(node)

    return LongestFirst(config, log)


# --------------------------------------------------- the durations of this run, for the next
_measured: dict[str, float] = {}


def pytest_runtest_logreport(report) -> None:
    # In the controller under xdist (the workers' reports arrive here), in the process itself without.
    _measured[work_unit(report.nodeid)] = _measured.get(work_unit(report.nodeid), 0.0) + report.duration


def pytest_sessionfinish(session) -> None:
    if hasattr(session.config, "workerinput") or not _measured:
        return                           # an xdist worker: the controller writes the file
    durations = {**_read_durations(), **{unit: round(s, 2) for unit, s in _measured.items()}}
    try:
        DURATIONS.write_text(json.dumps(dict(sorted(durations.items())), indent=0) + "\n")
    except OSError:
        pass                             # a read-only checkout runs in the default order


@pytest.fixture(scope="session")
def reference_score(tmp_path_factory):
    """One grading run of the reference solution, shared by the tests that read it."""
    out = tmp_path_factory.mktemp("reference-reports")
    proc, score = grade(SOLUTIONS, out)
    assert proc.returncode == 0, proc.stderr
    return score, out


@pytest.fixture(scope="session")
def dist(tmp_path_factory):
    """`make release` into a temporary folder: student/ and grader-bundle/ (leak check clean)."""
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "release.py"), "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "leak check clean" in proc.stdout
    return out
