"""The GitHub Actions workflows pass actionlint and zizmor (both installed by the dev extra)."""

import subprocess
import sys
from pathlib import Path

from helpers import REPO

BIN = Path(sys.executable).parent
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def test_there_are_workflows_for_tests_and_grading():
    assert {p.name for p in WORKFLOWS} >= {"test.yml", "grade.yml"}
    assert "make test" in (REPO / ".github" / "workflows" / "test.yml").read_text()


def test_actionlint():
    proc = subprocess.run([str(BIN / "actionlint"), *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor():
    proc = subprocess.run([str(BIN / "zizmor"), "--offline", str(REPO / ".github" / "workflows")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout, proc.stdout
