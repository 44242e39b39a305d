"""A non-editable install grades: the wheel built from pyproject.toml carries the engine
and the unit (manifest, rubric, hidden suites, and through the unit's links the public
tests and the reference), so grading needs no source checkout.

The package goes into a fresh virtual environment with `pip install --no-deps .`; its
dependencies (numpy, pytest, PyYAML, matplotlib) are borrowed from the development venv
through a .pth file, which adds that folder's packages but not its editable install. The
wheel is built by the development venv's setuptools (`--no-build-isolation`: the same
backend pyproject.toml names, without installing it into a build environment first, which
took two thirds of the test's time).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, SOLUTIONS, borrowed_venv

# The scenarios of one delivery path run in `make sweep` (CI runs it after `make test`);
# `make test` sends half-finished work through every path once (test_journey.py).
pytestmark = pytest.mark.sweep


def test_a_wheel_install_grades_the_reference(tmp_path):
    python = borrowed_venv(tmp_path / "venv")
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
                           "--no-build-isolation", "--target", str(site), str(REPO)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    where = subprocess.run([str(python), "-c", "import autograder; print(autograder.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert where.stdout.startswith(str(site)), where.stdout + where.stderr
    out = tmp_path / "reports"
    proc = subprocess.run([str(python), "-m", "autograder", "grade", str(SOLUTIONS), "--out", str(out), "--quiet"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    score = json.loads((out / "score.json").read_text())
    assert score["earned"] == score["possible"] > 0, [(t["id"], t["earned"]) for t in score["topics"]]
    assert (out / "evidence.yaml").exists() and (out / "fault_injection.png").exists()
