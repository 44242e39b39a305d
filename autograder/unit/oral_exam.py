"""Oral-exam readiness: a unit's closed-book questions mapped to the graded tests that back
them (the unit's `oral_exam` file), and each question's status after one grading run."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import yaml

from autograder.unit.rubric import SafeLoader
from autograder.unit.test_ids import TestId, TopicTestId, names_a_test


class Readiness(StrEnum):
    """A question's status after one grading (score.json's oral_exam "status")."""

    READY = "ready"                  # every backing test ran and passed
    NOT_YET = "not yet"              # a backing test failed
    NOT_GRADED = "not graded"        # none failed, but some did not run (a selection of topics or tests)
    NO_EXERCISE = "no exercise"      # no test backs it


@dataclass(frozen=True)
class Question:
    number: int
    text: dict[str, str]             # language -> the question, shortened
    backed_by: tuple[str | TopicTestId, ...]       # a topic id (all its tests), or one test of a topic


@dataclass(frozen=True)
class OralExam:
    title: str
    questions: tuple[Question, ...]


def _reference(text: str, rubric_tests: dict[str, set[TestId]]) -> str | TopicTestId | None:
    """The topic or the test of it that `text` names, or None when the rubric has no such thing."""
    if not names_a_test(text):
        return text if text in rubric_tests else None
    try:
        test = TopicTestId.parse(text)
    except ValueError:
        return None
    return test if test.test in rubric_tests.get(test.topic, set()) else None


def load(path: Path, rubric_tests: dict[str, set[TestId]]) -> OralExam:
    """Read and check the file: every reference names a topic or a rubric test of it."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=SafeLoader) or {}
    questions = []
    for number, entry in enumerate(data.get("questions") or [], start=1):
        backed = []
        for text in (str(ref) for ref in entry.get("backed_by") or ()):
            ref = _reference(text, rubric_tests)
            if ref is None:
                raise ValueError(f"{path.name}: question {number} is backed by {text!r}, which is not in the rubric")
            backed.append(ref)
        questions.append(Question(number, {k: str(entry[k]) for k in ("en", "zh") if k in entry}, tuple(backed)))
    return OralExam(str(data.get("title", "Oral-exam readiness")), tuple(questions))


def readiness(exam: OralExam, topics, lang: str = "en") -> list[dict]:
    """Per question: its status and the backing tests (TopicTestIds) that ran and failed.
    `topics`: the TopicResults of this run; `lang`: the language of the question's text."""
    outcomes = {TopicTestId(t.id, x.id): x.outcome for t in topics for x in t.tests}
    by_topic = {t.id: [TopicTestId(t.id, x.id) for x in t.tests] for t in topics}
    rows = []
    for q in exam.questions:
        tests = [tid for ref in q.backed_by
                 for tid in ([ref] if isinstance(ref, TopicTestId) else by_topic.get(ref, []))]
        ran = [tid for tid in tests if tid in outcomes]
        failing = [tid for tid in ran if outcomes[tid] != "passed"]
        missing = [ref for ref in q.backed_by if ref not in (outcomes if isinstance(ref, TopicTestId) else by_topic)]
        if not q.backed_by:
            status = Readiness.NO_EXERCISE
        elif failing:
            status = Readiness.NOT_YET
        elif missing:
            status = Readiness.NOT_GRADED
        else:
            status = Readiness.READY
        rows.append({"question": q.number, "text": q.text.get(lang) or q.text.get("en", ""), "status": status,
                     "tests": ran, "failing": failing})
    return rows
