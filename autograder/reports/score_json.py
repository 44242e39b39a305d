"""reports/score.json, schema autograder.score/v1 (field order as in the schema)."""

from __future__ import annotations

import json

from autograder.grading.score import SCHEMA, GradeResult


def document(result: GradeResult) -> dict:
    doc = {
        "schema": SCHEMA,
        "assignment": result.unit,            # the schema's name for the unit
        "submission": result.submission,
        "earned": result.earned,
        "possible": result.possible,
        "duration_s": result.duration_s,
        "topics": [{"id": t.id, "earned": t.earned, "possible": t.possible, "status": t.status,
                    "tests": [{"id": str(x.id), "earned": x.earned, "possible": x.possible, "outcome": x.outcome,
                               "message": x.message, "hint": x.hint,
                               # an addition: how it failed ("" when passed; "not_implemented": a stub)
                               "kind": "not_implemented" if x.not_implemented else x.kind}
                              for x in t.tests],
                    "message": t.message}   # an addition: what the status means, what is left to do
                   for t in result.topics],
        "signals": dict(result.signals),
        # additions to v1 (its fields above keep their meaning)
        "seed": result.seed,
        "seed_from": "--seed" if result.seed_given else "files",
        "lang": result.lang,
        "grader_version": result.grader_version,
    }
    if result.selected_tests:
        doc["selected_tests"] = [str(test) for test in result.selected_tests]
    if result.graded_later:
        doc["graded_later"] = {t.id: t.graded_later for t in result.topics if t.graded_later}
    if result.oral_exam:
        doc["oral_exam"] = [{**row, "tests": [str(t) for t in row["tests"]], "failing": [str(t) for t in row["failing"]]}
                            for row in result.oral_exam]
    if result.tampered is not None:
        doc["tampered"] = list(result.tampered)
    if result.refused:
        doc["refused"] = result.refused
    if result.pass_mark is not None:
        doc["pass_mark"] = {"percent": result.pass_mark, "reached": not result.below_pass_mark}
    return doc


def render(result: GradeResult) -> str:
    return json.dumps(document(result), indent=2) + "\n"
