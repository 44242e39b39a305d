"""How much of the hidden tests a student sees, applied once to the result every format
renders (score.md, score.json, junit.xml, results.json, the pull-request comment), so
that no format shows more than the instructor chose:

- "hints": every name, message and hint;
- "tests": names and messages, no hint of a hidden test;
- "total": per topic, one entry `hidden::*` with the points of all its hidden tests and
  how many failed; no hidden test's name, message or hint.
"""

from __future__ import annotations

import dataclasses

from autograder.grading.score import GradeResult, Outcome, TestOutcome
from autograder.i18n import _
from autograder.unit.test_ids import HIDDEN_TOTAL, TopicTestId

HIDDEN_DETAIL = ("hints", "tests", "total")


def _hidden_total(tests: list[TestOutcome]) -> TestOutcome:
    """One entry for all of a topic's hidden tests: their points, and how they failed when
    they all failed alike (still a stub, all errors, all timeouts)."""
    failed = [x for x in tests if not x.passed]
    message = _("{failed} of {n} hidden tests failed").format(failed=len(failed), n=len(tests)) if failed else ""
    outcomes, kinds = {x.outcome for x in failed}, {x.kind for x in failed}
    stub = failed[0].not_implemented if failed and all(x.not_implemented for x in failed) else None
    return TestOutcome(HIDDEN_TOTAL, round(sum(x.earned for x in tests), 6), round(sum(x.possible for x in tests), 6),
                       outcomes.pop() if len(outcomes) == 1 else Outcome.FAILED if failed else Outcome.PASSED, message, "",
                       not_implemented=stub, duration_s=round(sum(x.duration_s for x in tests), 6),
                       kind=kinds.pop() if len(kinds) == 1 else "")


def shown_tests(tests: list[TestOutcome], detail: str) -> list[TestOutcome]:
    """A topic's tests as `detail` shows them (the notebooks' test cells cut them so too)."""
    if detail == "hints":
        return tests
    if detail == "tests":
        return [dataclasses.replace(x, hint="") if x.id.hidden else x for x in tests]
    hidden = [x for x in tests if x.id.hidden]
    if any(x.id == HIDDEN_TOTAL for x in hidden):      # shown at "total" already
        return tests
    shown = [x for x in tests if not x.id.hidden]
    return shown + [_hidden_total(hidden)] if hidden else shown


def _names_shown(names: list[TopicTestId]) -> list[TopicTestId]:
    """Test ids with each hidden test's name replaced by `*` (topic::hidden::*)."""
    return [TopicTestId(n.topic, HIDDEN_TOTAL) if n.test.hidden else n for n in names]


def visible(result: GradeResult, detail: str) -> GradeResult:
    """A copy of `result` holding only what `detail` lets a student see (`result` itself at "hints")."""
    if detail not in HIDDEN_DETAIL:
        raise ValueError(f"hidden detail {detail!r}: one of {', '.join(HIDDEN_DETAIL)}")
    if detail == "hints":
        return result
    topics = [dataclasses.replace(t, tests=shown_tests(t.tests, detail)) for t in result.topics]
    oral_exam = result.oral_exam
    if detail == "total":     # each question keeps its counts; a hidden test's name becomes hidden::*
        oral_exam = [{**row, "tests": _names_shown(row["tests"]), "failing": _names_shown(row["failing"])}
                     for row in result.oral_exam]
    return dataclasses.replace(result, topics=topics, oral_exam=oral_exam,
                               selected_tests=_names_shown(result.selected_tests) if detail == "total"
                               else result.selected_tests)
