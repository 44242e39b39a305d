"""The engine grades any unit folder: a second, tiny assignment written here from scratch
is graded through `python -m autograder grade --assignment PATH` with no engine change,
and no engine file names the course's own unit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import REPO, grade

ENGINE = REPO / "autograder"



def scaffold(root: Path) -> Path:
    """The unit `python -m autograder new-unit` writes: the smallest complete example, laid out as
    the shipped unit (root/tiny_unit, root/solutions/tiny_unit, root/assignments/tiny_unit)."""
    proc = subprocess.run([sys.executable, "-m", "autograder", "new-unit", "tiny_unit", "--dest", str(root)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return root / "tiny_unit"


def test_a_second_unit_is_graded_without_engine_changes(tmp_path):
    unit = scaffold(tmp_path)
    right, wrong = tmp_path / "right", tmp_path / "wrong"
    right.mkdir()
    wrong.mkdir()
    (right / "doubler.py").write_text("def double(x):\n    return x + x\n")
    (wrong / "doubler.py").write_text("def double(x):\n    return 2 * x if x == 2 else x * x\n")
    proc, score = grade(right, tmp_path / "out-right", "--assignment", unit)
    assert proc.returncode == 0, proc.stderr
    assert score["assignment"] == "tiny_unit" and score["earned"] == score["possible"] == 3.0
    proc, score = grade(wrong, tmp_path / "out-wrong", "--assignment", unit)
    assert proc.returncode == 0, proc.stderr
    tests = {t["id"]: t for t in score["topics"][0]["tests"]}
    assert tests["public::test_double_of_two"]["outcome"] == "passed"
    assert tests["hidden::test_double_matches_reference"]["outcome"] == "failed"
    assert tests["hidden::test_double_matches_reference"]["hint"] == "Multiply by two."
    assert score["earned"] == 1.0
    # the stub folder the unit names appears in the "missing module" message
    empty = tmp_path / "empty"
    empty.mkdir()
    proc, score = grade(empty, tmp_path / "out-empty", "--assignment", unit)
    assert score["topics"][0]["status"] == "not_implemented"
    assert "assignments/tiny_unit/doubler.py" in score["topics"][0]["tests"][0]["message"]


def test_the_engine_never_names_a_unit():
    engine_files = [p for p in ENGINE.rglob("*") if p.is_file() and "units" not in p.relative_to(ENGINE).parts
                    and p.suffix in {".py", ".yaml", ".ini", ".cfg", ".txt"}]
    assert engine_files
    named = [f"{p.relative_to(REPO)}:{i}" for p in engine_files
             for i, line in enumerate(p.read_text().splitlines(), 1) if "rnn_prehistory" in line]
    assert not named, named
    proc = subprocess.run(["grep", "-rn", "--exclude-dir=units", "rnn_prehistory", str(ENGINE)],
                          capture_output=True, text=True)
    assert proc.stdout == "", proc.stdout


def test_the_scaffold_grades_its_reference_fully_and_its_stub_as_unwritten(tmp_path):
    unit = scaffold(tmp_path)
    proc, score = grade(tmp_path / "solutions" / "tiny_unit", tmp_path / "out-ref", "--assignment", unit)
    assert proc.returncode == 0, proc.stderr
    assert score["earned"] == score["possible"] == 3.0
    proc, score = grade(tmp_path / "assignments" / "tiny_unit", tmp_path / "out-stub", "--assignment", unit)
    assert proc.returncode == 0, proc.stderr
    assert score["earned"] == 0 and score["topics"][0]["status"] == "not_implemented"


def test_new_unit_refuses_an_existing_folder_and_a_bad_name(tmp_path):
    scaffold(tmp_path)
    again = subprocess.run([sys.executable, "-m", "autograder", "new-unit", "tiny_unit", "--dest", str(tmp_path)],
                           capture_output=True, text=True, cwd=REPO)
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = subprocess.run([sys.executable, "-m", "autograder", "new-unit", "tiny-unit", "--dest", str(tmp_path)],
                         capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 2 and "Python identifier" in bad.stderr
