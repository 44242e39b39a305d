"""The engine grades any unit folder: a second, tiny assignment written here from scratch
is graded through `python -m autograder grade --assignment PATH` with no engine change,
and no engine file names the course's own unit."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from helpers import REPO, grade

ENGINE = REPO / "autograder"

UNIT_FILES = {
    "unit.yaml": """
        name: tiny_unit
        title: A second unit
        stubs: assignments/tiny_unit
        limits: {call_timeout_s: 5, import_timeout_s: 10, memory_mb: 512, cpu_s: 60}
        preload: [math, numpy]
        topics:
          - id: doubling
            module: doubler
            functions:
              double: {}
    """,
    "rubric/doubling.yaml": """
        topic: doubling
        title: Doubling a number
        points: 3
        tests:
          - {test: test_double_of_two, visibility: public, points: 1, hint: "double(2) is 4."}
          - {test: test_double_matches_reference, visibility: hidden, points: 2, hint: "Multiply by two."}
    """,
    "public/test_doubling.py": """
        def test_double_of_two(doubler):
            assert doubler.double(2.0) == 4.0, "double(2) should be 4"
    """,
    "helpers/__init__.py": """
        SAMPLES = 5
    """,
    "hidden/test_doubling.py": """
        from autograder.units.tiny_unit.helpers import SAMPLES   # the unit's own code, by its package name


        def test_double_matches_reference(doubler, reference, rng):
            for x in rng.normal(size=SAMPLES):
                assert doubler.double(float(x)) == reference.doubler.double(float(x)), f"double({x:.3f}) is wrong"
    """,
    "reference/doubler.py": """
        def double(x):
            return 2 * x
    """,
}


def write_unit(root: Path) -> Path:
    for name, text in UNIT_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip())
    return root


def test_a_second_unit_is_graded_without_engine_changes(tmp_path):
    unit = write_unit(tmp_path / "tiny_unit")
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
