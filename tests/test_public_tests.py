"""The public tests, run the way a student runs them (plain pytest, no grader)."""

import subprocess
import sys

from helpers import REPO, SOLUTIONS

PUBLIC = REPO / "assignments" / "rnn_prehistory" / "tests"


def run_public(*args):
    return subprocess.run([sys.executable, "-m", "pytest", str(PUBLIC), "-q", "-p", "no:cacheprovider", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)


def test_public_tests_pass_on_the_reference():
    proc = run_public("--submission", str(SOLUTIONS))
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


def test_every_public_test_fails_on_the_stubs():
    proc = run_public()
    assert proc.returncode == 1
    last = proc.stdout.strip().splitlines()[-1]
    assert "passed" not in last and "failed" in last, last
