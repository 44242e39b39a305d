"""Oral-exam readiness: each of the course notes' ten questions, mapped to the tests that back
it (the unit's oral_exam.yaml), is "ready", "not yet", "not graded" or "no exercise"."""

from __future__ import annotations

import pytest
from helpers import UNIT, grade, make_submission

from autograder.grading.score import TestOutcome, TopicResult
from autograder.unit.load import load_unit
from autograder.unit.model import UnitError
from autograder.unit.oral_exam import readiness
from autograder.unit.test_ids import TestId, TopicTestId


def _results(failing=(), topics=None):
    """Every rubric test of `topics` (default all) passed, except the ids in `failing`."""
    out = []
    for t in UNIT.rubric.topics:
        if topics is not None and t.id not in topics:
            continue
        tests = [TestOutcome(x.id, 0.0 if f"{t.id}::{x.id}" in failing else x.points, x.points,
                             "failed" if f"{t.id}::{x.id}" in failing else "passed", "", "") for x in t.tests]
        assert all(isinstance(x.id, TestId) for x in tests)
        out.append(TopicResult(t.id, t.title, t.id, "graded", "", tests))
    return out


def test_the_unit_backs_all_ten_questions_with_exercises():
    exam = UNIT.oral_exam
    assert exam is not None and len(exam.questions) == 10
    assert all(q.text.get("en") and q.text.get("zh") for q in exam.questions)
    rows = readiness(exam, _results())
    assert [r["status"] for r in rows] == ["ready"] * 10
    assert all(r["tests"] for r in rows if r["status"] == "ready")


def test_a_failing_backing_test_makes_its_questions_not_yet():
    failing = {"fault_injection::hidden::test_clipping_does_not_rescue_vanishing_measured"}
    rows = {r["question"]: r for r in readiness(UNIT.oral_exam, _results(failing))}
    assert rows[3]["status"] == rows[4]["status"] == "not yet"
    assert rows[4]["failing"] == [TopicTestId.parse(t) for t in sorted(failing)]
    assert rows[2]["status"] == rows[5]["status"] == "ready"


def test_questions_whose_tests_did_not_run_are_not_graded():
    rows = {r["question"]: r for r in readiness(UNIT.oral_exam, _results(topics={"gate_derivative"}))}
    assert rows[5]["status"] == "ready"
    assert rows[1]["status"] == rows[6]["status"] == rows[9]["status"] == "not graded"
    assert rows[7]["status"] == rows[10]["status"] == "not graded"


def test_a_reference_to_a_test_not_in_the_rubric_fails_loudly(tmp_path):
    import shutil
    unit = shutil.copytree(UNIT.path, tmp_path / "rnn_prehistory", symlinks=True)
    text = (unit / "oral_exam.yaml").read_text().replace("test_attribute_error_strict_inequality", "test_no_such_test")
    (unit / "oral_exam.yaml").write_text(text)
    with pytest.raises(UnitError, match="test_no_such_test"):
        load_unit(unit)


def test_score_json_and_md_show_readiness(tmp_path):
    """A forget gate whose backward pass forgets f: question 5 is not yet, with the tests."""
    sub = make_submission(tmp_path / "sub", replace={"gate_derivative.py": [("    dc_prev = dc * f\n", "    dc_prev = dc * 1.0\n")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "gate_derivative")
    assert proc.returncode == 0, proc.stderr
    rows = {r["question"]: r for r in score["oral_exam"]}
    assert rows[5]["status"] == "not yet" and rows[5]["failing"]
    assert all(t.startswith("gate_derivative::") for t in rows[5]["failing"])
    assert rows[1]["status"] == rows[7]["status"] == rows[10]["status"] == "not graded"
    md = (tmp_path / "out" / "score.md").read_text()
    assert "none of the 10 questions" in md or "| 5 |" in md
