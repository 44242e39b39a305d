"""Fixtures shared by the repository's own tests."""

import pytest

from helpers import SOLUTIONS, grade


@pytest.fixture(scope="session")
def reference_score(tmp_path_factory):
    """One grading run of the reference solution, shared by the tests that read it."""
    out = tmp_path_factory.mktemp("reference-reports")
    proc, score = grade(SOLUTIONS, out)
    assert proc.returncode == 0, proc.stderr
    return score, out
