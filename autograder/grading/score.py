"""The result of one grading run, as typed objects, and the scoring that builds them.

`score(...)` turns the rubric, the import probes and the outcomes the pytest plugin
recorded into a `GradeResult`; every report format is an exporter of that one object
(`autograder.reports`). Student code never touches any of this: it runs in the worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from autograder.errors import GraderError
from autograder.i18n import N_, _
from autograder.unit.rubric import RubricTopic
from autograder.unit.test_ids import TestId, TopicTestId

SCHEMA = "autograder.score/v1"


class TopicStatus(StrEnum):
    """How a topic's grading went (score.json's topic "status"). TIMEOUT: the import of its
    module took longer than the import limit (a whole submission over `batch --timeout` is
    class.csv's `SubmissionStatus.OVER_TIME_LIMIT`, reports/submission_status.py)."""

    GRADED = "graded"
    NOT_IMPLEMENTED = "not_implemented"
    ERROR = "error"
    TIMEOUT = "timeout"
    CRASHED = "crashed"


class Outcome(StrEnum):
    """How one rubric test ended (score.json's test "outcome"). TIMEOUT: one call of the
    student's code took longer than its limit."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"


@dataclass
class TestRecord:
    """What the pytest plugin saw of one rubric entry (all its parametrised instances)."""

    __test__ = False           # a name pytest would otherwise try to collect

    outcome: str = Outcome.PASSED      # one of Outcome
    message: str = ""
    not_implemented: str | None = None  # "module.function" when every failure was the stub's NotImplementedError
    instances: int = 0
    duration_s: float = 0.0
    kind: str = "value"                # how the first failing instance failed (plugin.classify)


# The hint of a test that did not fail on a value: the rubric's hint diagnoses a wrong
# number, and would blame the math for a crash or a shape. A value whose message names its
# misconception ("diagnosed") gets no hint: the message is the diagnosis.
KIND_HINTS = {
    "shape": N_("The result has the wrong type, shape or structure, so its values were not compared yet: check "
                "every returned value against the function's docstring (batch dimensions stay, e.g. (1, H) when "
                "N = 1, never (H,))."),
    "exception": N_("Your code raised an exception before any value could be checked: fix the line the message "
                    "names first."),
    "timeout": N_("The call did not finish within the time limit: look for a loop that never ends, or far too "
                  "much work per call."),
}
EXCEPTION_HINTS = (   # (text in the message, hint): the commonest crashes, said precisely
    (("slice indices must be integers", "cannot be interpreted as an integer", "only integers, slices"),
     N_("An index or a size is a float: in Python 3, a / b is always a float; use a // b for integer division.")),
    (("could not be broadcast", "not aligned", "matmul: Input operand", "mismatch in its core dimension"),
     N_("Two arrays of incompatible shapes met on the line named: compare their shapes with the docstring's "
        "(which axis is the batch, which is time, which is the feature).")),
)


def hint_for(rec: TestRecord, rubric_hint: str) -> str:
    """The rubric's misconception hint for a wrong value; for any other failure, a hint
    about what actually happened. In the language of the run (rubric hints are msgids of
    the unit's catalogue)."""
    if rec.kind == "value":
        return _(rubric_hint)
    if rec.kind == "diagnosed":
        return ""
    if rec.kind == "exception":
        for needles, hint in EXCEPTION_HINTS:
            if any(n in rec.message for n in needles):
                return _(hint)
    return _(KIND_HINTS.get(rec.kind, rubric_hint))


@dataclass
class TestOutcome:
    __test__ = False

    id: TestId
    earned: float
    possible: float
    outcome: str            # one of Outcome
    message: str
    hint: str
    not_implemented: str | None = None
    duration_s: float = 0.0
    kind: str = ""          # how it failed (CheckFailed's kinds, "exception", "timeout"); "" when passed

    @property
    def passed(self) -> bool:
        return self.outcome == Outcome.PASSED


@dataclass
class TopicResult:
    id: str
    title: str
    module: str
    status: TopicStatus
    message: str            # one line explaining the status ("" when graded normally)
    tests: list[TestOutcome]
    graded_later: float = 0.0   # points of hidden tests this copy does not have

    @property
    def earned(self) -> float:
        return round(sum(t.earned for t in self.tests), 6)

    @property
    def possible(self) -> float:
        return round(sum(t.possible for t in self.tests), 6)


@dataclass
class GradeResult:
    unit: str                     # the unit's name (score.json's "assignment")
    submission: str
    seed: int
    duration_s: float
    topics: list[TopicResult]
    seed_given: bool = False      # True: --seed; False: derived from the submission's files
    signals: dict = field(default_factory=dict)       # metric key -> bool, recorded by the suites
    signals_title: str = "Signals"
    report_extras: dict = field(default_factory=dict)   # data the suites left for the unit's artefacts
    sandbox_info: dict = field(default_factory=dict)  # what isolation the worker applied
    tampered: list[str] | None = None   # protected files that differ from the instructor's copy (None: not checked)
    oral_exam: list[dict] = field(default_factory=list)   # unit/oral_exam.readiness, when the unit has questions
    oral_exam_title: str = "Oral-exam readiness"
    lang: str = "en"              # the language of messages, hints and reports
    grader_version: str = ""      # autograder/version.py: what a rerun compares before regrading
    selected_tests: list[TopicTestId] = field(default_factory=list)   # --test: the only tests run of their topics
    pass_mark: float | None = None  # --fail-under: the percentage below which the run fails (None: no mark)
    refused: str = ""             # why the grader refused the submission (every test at 0), "" when graded

    @property
    def below_pass_mark(self) -> bool:
        return self.pass_mark is not None and self.percent < self.pass_mark

    @property
    def graded_later(self) -> float:
        return round(sum(t.graded_later for t in self.topics), 6)

    @property
    def earned(self) -> float:
        return round(sum(t.earned for t in self.topics), 6)

    @property
    def possible(self) -> float:
        return round(sum(t.possible for t in self.topics), 6)

    @property
    def percent(self) -> float:
        return 100 * self.earned / self.possible if self.possible else 100.0


def score_topic(topic: RubricTopic, module: str, visibilities, records: dict, probe: tuple[str, str],
                stub_path: str, unfinished: Sequence[str] = (), only: frozenset[TestId] | None = None,
                functions: Sequence[str] = ()) -> TopicResult:
    """One topic's result from its rubric entries, the plugin's records and its import probe.
    `unfinished`: the module's functions that still raise NotImplementedError (grading/todo.py);
    `functions`: the topic's graded functions (topic.yaml): the topic is "not implemented" only
    while every one of them is unfinished, however its tests happened to meet the stubs;
    `only`: the tests run when the topic was graded on a selection of its tests."""
    status, message = TopicStatus(probe[0]), probe[1]
    tests = []
    for rt in topic.tests:
        if rt.visibility not in visibilities or (only is not None and rt.id not in only):
            continue
        rec: TestRecord | None = records.get((topic.id, rt.visibility, rt.test))
        if rec is None or rec.instances == 0:
            suite = f"test_{topic.id}.py" if rt.visibility == "public" else f"topics/{topic.id}/test_hidden.py"
            raise GraderError(f"rubric test {topic.id}/{rt.id} was not run: is it in the {rt.visibility} {suite}?")
        passed = rec.outcome == Outcome.PASSED
        tests.append(TestOutcome(rt.id, rt.points if passed else 0.0, rt.points, rec.outcome, rec.message,
                                 "" if passed else hint_for(rec, rt.hint), rec.not_implemented, rec.duration_s,
                                 "" if passed else rec.kind))
    every_function_stubbed = not functions or set(functions) <= set(unfinished)
    if status == TopicStatus.GRADED and tests and all(t.not_implemented for t in tests) and every_function_stubbed:
        status = TopicStatus.NOT_IMPLEMENTED
        message = _("nothing in {module}.py is implemented yet: fill in the TODOs in {stubs}").format(
            module=module, stubs=stub_path)
    elif status == TopicStatus.GRADED:
        # Every function of the module left to do, then the other modules' ones its tests met.
        todo = [f"{module}.{name}" for name in unfinished]
        todo += sorted({t.not_implemented for t in tests if t.not_implemented} - set(todo))
        message = _("still raising NotImplementedError: {functions}").format(functions=", ".join(todo)) if todo else ""
    return TopicResult(topic.id, topic.title, module, status, message, tests, topic.graded_later)
