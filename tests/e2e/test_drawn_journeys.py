"""Students drawn at function granularity (tests/drawn_students.py) through `grade` and
`batch` (a folder of folders, a zip, a tar.gz): properties, not a table.

- every path gives each topic the score `grade` gives it;
- a topic is `not_implemented` exactly when every function its stub leaves to do is still
  the stub's, and otherwise its message names every one of them still left;
- a topic whose every function is the reference, as are those of the modules it imports,
  loses no point, whatever the other topics hold
  (causality and fault_injection import the student's bptt).

`make test` draws DRAWN_STUDENTS (seeds from 0, default 1: each costs make test ~4 s of CPU);
`make sweep` draws DRAWN_STUDENTS_SWEEP of its own (default 30, seeds from 100)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
from drawn_students import REFERENCE, STUB, draw, modules
from helpers import UNIT, grade, per_topic, run_grader

FEW = int(os.environ.get("DRAWN_STUDENTS", "1"))
MANY = int(os.environ.get("DRAWN_STUDENTS_SWEEP", "30"))


def uses(module) -> set[str]:
    """The student's other modules a module imports (causality and fault_injection run the
    student's bptt): a mistake or a stub there may cost points, and be named, here."""
    return set(re.findall(r"^import (\w+)$", module.stub, re.M)) & set(modules())


def check_topic_properties(student, score: dict) -> None:
    mods = modules()
    for topic in score["topics"]:
        module = next(m for m in mods.values() if m.topic == topic["id"])
        left = student.stubbed(module.name)
        where = f"{student.describe()}\n{topic['id']}: {topic['status']} {topic['message']!r}"
        if left and set(left) == set(module.todo):
            assert topic["status"] == "not_implemented", where
            continue
        assert topic["status"] == "graded", where
        others = uses(module)
        named = set(re.findall(r"\b(\w+)\.(\w+)\b", topic["message"].partition("NotImplementedError:")[2]))
        assert {f for m, f in named if m == module.name} == set(left), where          # every one left, named
        assert named <= {(m, f) for m in {module.name, *others} for f in student.stubbed(m)}, where
        clean = all(v == REFERENCE for m in {module.name, *others} for v in student.choices[m].values())
        if clean:
            assert topic["earned"] == topic["possible"], where + "\n" + "\n".join(
                f"  {t['id']}: {t['message']}" for t in topic["tests"] if t["outcome"] != "passed")


def _zip(folder: Path, to: Path, sep: str) -> None:
    with zipfile.ZipFile(to, "w") as z:
        for p in sorted(folder.iterdir()):
            z.write(p, f"{folder.name}{sep}{p.name}")        # '\\': as some Windows tools write


def journeys(seeds, tmp_path: Path) -> None:
    students = [draw(s) for s in seeds]
    root = tmp_path / "class"
    alone = {}
    for k, student in enumerate(students):
        sub = student.write(tmp_path / "subs" / student.name)
        proc, score = grade(sub, tmp_path / "grade" / student.name)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        check_topic_properties(student, score)
        alone[student.name] = per_topic(score)
        # the class: each student in one of the shapes instructors receive
        root.mkdir(parents=True, exist_ok=True)
        shape = k % 4           # the first (make test's one) a zip with Windows separators: the trickiest
        if shape == 1:
            shutil.copytree(sub, root / student.name)
        elif shape in (0, 2):
            _zip(sub, root / f"{student.name}.zip", "\\" if shape == 0 else "/")
        else:
            with tarfile.open(root / f"{student.name}.tar.gz", "w:gz") as t:
                t.add(sub, arcname=student.name)
    out = tmp_path / "batch"
    proc = run_grader("batch", root, "--out", out, "--jobs", "2", timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for student in students:
        score = json.loads((out / "students" / student.name / "score.json").read_text())
        assert per_topic(score) == alone[student.name], student.describe()


def test_a_few_drawn_students_score_alike_on_grade_and_batch(tmp_path):
    journeys(range(FEW), tmp_path)


@pytest.mark.sweep
def test_thirty_drawn_students_score_alike_on_grade_and_batch(tmp_path):
    journeys(range(100, 100 + MANY), tmp_path)


def test_the_draw_is_the_same_student_on_every_call():
    assert draw(7).files() == draw(7).files()
    assert draw(7).files() != draw(8).files()
    kinds = {v.split(":")[0] for s in range(40) for chosen in draw(s).choices.values() for v in chosen.values()}
    assert kinds == {REFERENCE, STUB, "mutant"}
    assert {m.topic for m in modules().values()} == {t.id for t in UNIT.topics}
