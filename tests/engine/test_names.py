"""One name and one type per concept: test ids are read in one place (unit/test_ids.py), not
by prefix; class.csv's statuses have one list each; --unit names the unit, --assignment
still works."""

from __future__ import annotations

import pytest

from autograder import reports
from autograder.cli import _parser
from autograder.grading.score import GradeResult, TestOutcome, TopicResult
from autograder.reports import gradescope_results
from autograder.reports.submission_status import FAILED, GRADED, NOT_GRADED, SubmissionStatus
from autograder.unit.test_ids import TestId, TopicTestId, names_a_test


def test_ids_read_back_what_they_write():
    assert str(TopicTestId("bptt", TestId("hidden", "test_x"))) == "bptt::hidden::test_x"
    assert TopicTestId.parse("bptt::public::test_x") == TopicTestId("bptt", TestId("public", "test_x"))
    assert TestId.parse("hidden::test_x").hidden and not TestId.parse("public::test_x").hidden
    for wrong in ("test_x", "secret::test_x", "hidden::", "public:test_x"):
        with pytest.raises(ValueError, match="not a test id"):
            TestId.parse(wrong)
    with pytest.raises(ValueError, match="not a test id"):
        TopicTestId.parse("::hidden::test_x")
    assert names_a_test("bptt::hidden::test_x") and not names_a_test("bptt")


def _result() -> GradeResult:
    """Two topics whose names hold the word "hidden": a prefix reader took the public test of
    `hidden` for a hidden one, and cut `unhidden::hidden::t` to `unhidden::*`."""
    hidden_topic = TopicResult("hidden", "Hidden", "hidden", "graded", "",
                               [TestOutcome(TestId("public", "test_open"), 0.0, 1.0, "failed", "open message", "h")])
    unhidden = TopicResult("unhidden", "Unhidden", "unhidden", "graded", "",
                           [TestOutcome(TestId("hidden", "test_secret"), 0.0, 2.0, "failed", "secret", "h2")])
    selected = [TopicTestId("hidden", TestId("public", "test_open")),
                TopicTestId("unhidden", TestId("hidden", "test_secret"))]
    oral = [{"question": 1, "text": "q", "status": "not yet", "tests": selected, "failing": selected}]
    return GradeResult("unit", "sub", seed=1, duration_s=0.0, topics=[hidden_topic, unhidden],
                       selected_tests=selected, oral_exam=oral)


def test_a_topic_named_like_a_visibility_keeps_its_tests_apart():
    shown = reports.visible(_result(), "total")
    assert [str(x.id) for t in shown.topics for x in t.tests] == ["public::test_open", "hidden::*"]
    assert shown.topics[0].tests[0].message == "open message"        # a public test: shown whole
    expected = ["hidden::public::test_open", "unhidden::hidden::*"]
    assert [str(t) for t in shown.selected_tests] == expected
    assert [str(t) for t in shown.oral_exam[0]["failing"]] == expected
    visibility = [t["visibility"] for t in gradescope_results.document(_result())["tests"]]
    assert visibility == ["visible", "after_published"]


def test_class_statuses_have_one_list_each():
    assert set(GRADED) | set(NOT_GRADED) == set(SubmissionStatus) and not set(GRADED) & set(NOT_GRADED)
    assert SubmissionStatus.MISSING in NOT_GRADED and SubmissionStatus.MISSING not in FAILED
    assert set(FAILED) == {SubmissionStatus.NOT_A_SUBMISSION, SubmissionStatus.GRADER_ERROR,
                           SubmissionStatus.OVER_TIME_LIMIT}
    # class.csv keeps the word instructors' scripts read for a submission over batch --timeout
    assert SubmissionStatus.OVER_TIME_LIMIT == "timeout"


@pytest.mark.parametrize("verb", [["grade"], ["batch", "root", "--out", "o"], ["merge", "s", "--out", "o"],
                                  ["pr", "c", "--manifest", "m"], ["export", "d"], ["gradescope"]])
def test_unit_is_named_by_unit_and_by_its_former_name(verb):
    parser = _parser()
    assert parser.parse_args([*verb, "--unit", "u1"]).unit == "u1"
    assert parser.parse_args([*verb, "--assignment", "u2"]).unit == "u2"
    assert parser.parse_args(verb).unit is None
