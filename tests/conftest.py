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


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None                      # an explicit other --dist is respected
    from xdist.scheduler import LoadScopeScheduling

    class FilesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return nodeid if file in SPREAD else file

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
