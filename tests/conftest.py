"""Fixtures shared by the repository's own tests."""

import subprocess
import sys

import pytest
from helpers import REPO, SOLUTIONS, grade

# With pytest-xdist (`make test` runs `-n auto`), tests sharing a module or session fixture
# should run in one process, or every process computes it (the kill matrix's batch run
# takes half a minute). xdist's `--dist loadgroup` marks do not reach pytest 9's node ids,
# so this scheduler groups instead: the tests of a file stay together, except in the
# files of SPREAD, whose tests are independent and mostly wait (time limits, sleeps).
SPREAD = {"tests/test_containment.py", "tests/test_sandbox.py"}
# The files that take longest start first, so that no long one is left to run alone at the
# end (xdist would otherwise start the files with the most tests first: the oracle files,
# hundreds of tests in seconds). Seconds of one process, measured; the rest count as 0.
SLOW_FILES = {"tests/test_class_regrade.py": 48, "tests/test_kill_matrix.py": 45, "tests/test_batch_intake.py": 25,
              "tests/test_pr_grading.py": 24, "tests/test_grading.py": 11, "tests/test_nbgrader.py": 11,
              "tests/test_journey.py": 50, "tests/test_release.py": 30, "tests/test_seed.py": 10,
              "tests/test_feedback.py": 9, "tests/test_packaging.py": 8, "tests/test_evidence.py": 7}
SLOW_SPREAD_TEST_S = 5      # a test of a SPREAD file: most take a few seconds, of waiting


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _expected_s(scope: str) -> float:
    return SLOW_SPREAD_TEST_S if _file(scope) in SPREAD else SLOW_FILES.get(_file(scope), 0)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None                      # an explicit other --dist is respected
    from xdist.scheduler import LoadScopeScheduling

    class FilesTogether(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return nodeid if _file(nodeid) in SPREAD else _file(nodeid)

        def _assign_work_unit(self, node) -> None:
            # The queue is complete before the first unit is assigned: order it once, the
            # longest units first (a stable sort: xdist's order among equals).
            if not self.ordered:
                units = sorted(self.workqueue.items(), key=lambda unit: -_expected_s(unit[0]))
                self.workqueue.clear()
                self.workqueue.update(units)
                self.ordered = True
            super()._assign_work_unit(node)

    return FilesTogether(config, log)


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
