"""Oral-exam readiness: a unit's closed-book questions mapped to the graded tests that back
them (the unit's `oral_exam` file), and each question's status after one grading run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from autograder.unit.rubric import SafeLoader

READY, NOT_YET, NOT_GRADED, NO_EXERCISE = "ready", "not yet", "not graded", "no exercise"


@dataclass(frozen=True)
class Question:
    number: int
    text: dict[str, str]             # language -> the question, shortened
    backed_by: tuple[str, ...]       # "topic" or "topic::visibility::test"


@dataclass(frozen=True)
class OralExam:
    title: str
    questions: tuple[Question, ...]


def load(path: Path, rubric_tests: dict[str, set[str]]) -> OralExam:
    """Read and check the file: every reference names a topic or a rubric test of it."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=SafeLoader) or {}
    questions = []
    for number, entry in enumerate(data.get("questions") or [], start=1):
        backed = tuple(str(ref) for ref in entry.get("backed_by") or ())
        for ref in backed:
            topic, _, test = ref.partition("::")
            if topic not in rubric_tests or (test and test not in rubric_tests[topic]):
                raise ValueError(f"{path.name}: question {number} is backed by {ref!r}, which is not in the rubric")
        questions.append(Question(number, {k: str(entry[k]) for k in ("en", "zh") if k in entry}, backed))
    return OralExam(str(data.get("title", "Oral-exam readiness")), tuple(questions))


def readiness(exam: OralExam, topics, lang: str = "en") -> list[dict]:
    """Per question: its status and the backing tests (ids "topic::test") that ran and failed.
    `topics`: the TopicResults of this run; `lang`: the language of the question's text."""
    outcomes = {f"{t.id}::{x.id}": x.outcome for t in topics for x in t.tests}
    by_topic = {t.id: [f"{t.id}::{x.id}" for x in t.tests] for t in topics}
    rows = []
    for q in exam.questions:
        tests = [tid for ref in q.backed_by for tid in (by_topic.get(ref, []) if "::" not in ref else [ref])]
        ran = [tid for tid in tests if tid in outcomes]
        failing = [tid for tid in ran if outcomes[tid] != "passed"]
        missing = [ref for ref in q.backed_by if (ref not in outcomes if "::" in ref else ref not in by_topic)]
        if not q.backed_by:
            status = NO_EXERCISE
        elif failing:
            status = NOT_YET
        elif missing:
            status = NOT_GRADED
        else:
            status = READY
        rows.append({"question": q.number, "text": q.text.get(lang) or q.text.get("en", ""), "status": status,
                     "tests": ran, "failing": failing})
    return rows
