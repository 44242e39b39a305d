"""The GitHub Actions workflows of both repositories (this one's, and the student
repository's from `make release`) pass actionlint, and zizmor finds nothing above low
severity even with its most thorough persona (both tools installed by the dev extra)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

BIN = Path(sys.executable).parent
SEVERITIES = ["Unknown", "Informational", "Low", "Medium", "High"]


@pytest.fixture(scope="module")
def student_workflows(dist):
    return dist / "student" / ".github" / "workflows"


def test_the_repositories_have_their_workflows(student_workflows):
    assert {p.name for p in (REPO / ".github" / "workflows").glob("*.yml")} == {"test.yml", "regrade.yml"}
    assert "make test" in (REPO / ".github" / "workflows" / "test.yml").read_text()
    assert {p.name for p in student_workflows.glob("*.yml")} == {"grade.yml"}


@pytest.mark.parametrize("which", ["instructor", "student"])
def test_actionlint(which, student_workflows):
    folder = REPO / ".github" / "workflows" if which == "instructor" else student_workflows
    proc = subprocess.run([str(BIN / "actionlint"), *map(str, sorted(folder.glob("*.yml")))],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("which", ["instructor", "student"])
def test_zizmor_finds_nothing_above_low(which, student_workflows):
    folder = REPO / ".github" / "workflows" if which == "instructor" else student_workflows
    proc = subprocess.run([str(BIN / "zizmor"), "--offline", "--persona=pedantic", "--format=json", str(folder)],
                          capture_output=True, text=True)
    findings = json.loads(proc.stdout)
    high = [(f["ident"], f["determinations"]["severity"]) for f in findings
            if SEVERITIES.index(f["determinations"]["severity"]) > SEVERITIES.index("Low")]
    assert not high, high
