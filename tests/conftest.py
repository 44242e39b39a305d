"""Fixtures shared by the repository's own tests."""

import subprocess
import sys

import pytest

from helpers import REPO, SOLUTIONS, grade


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
