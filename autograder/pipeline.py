"""One submission, end to end: worker image -> grading (probe, suites, score) -> the unit's
artefacts -> reports. Every command that grades (`grade`, `batch`'s jobs, `pr`,
`gradescope`) calls `grade_and_report`; the exit statuses and the grader's own process
set-up (`limit_own_memory`, `stop_on_sigterm`) live here for the same reason.

Exit status: 0 graded; 1 graded but below --fail-under; 2 the grader could not run.
"""

from __future__ import annotations

import dataclasses
import resource
import signal
import time
from pathlib import Path
from typing import Any

from autograder import i18n, reports
from autograder.grading.run import SUITES, Options, grade, select_topics
from autograder.grading.score import GradeResult, Outcome, TestOutcome, TopicResult, TopicStatus
from autograder.i18n import _
from autograder.isolation.image import image_config, start_image
from autograder.isolation.redact import Redactor
from autograder.reports.markdown import pass_mark_note
from autograder.reports.text import terminal
from autograder.version import grader_version

EXIT_OK, EXIT_BELOW, EXIT_GRADER = 0, 1, 2
EXIT_INTERRUPTED = 130          # 128 + SIGINT, as a shell reports a process Ctrl-C ended
GRADER_ADDRESS_SPACE = 4 << 30


class ArtefactsHook:
    """The unit's extra report files (the `Artefacts` class of its `artefacts` module), or
    nothing. The hook is created before grading (so it can start slow work early) and asked
    to write after it."""

    def __init__(self, unit, topics, suite: str):
        self.hook: Any = None
        self.files: tuple[str, ...] = ()
        self.first_topics: tuple[str, ...] = ()
        if unit.artefacts:
            module = unit.import_module(unit.artefacts)
            self.hook = module.Artefacts(unit, [t.id for t in topics], suite)
            self.files = tuple(getattr(self.hook, "FILES", ()))
            # Topics whose data the hook can start working on before grading ends: run first.
            self.first_topics = tuple(getattr(self.hook, "FIRST_TOPICS", ()))

    def topic_done(self, topic: str, report_extras: dict) -> None:
        if hasattr(self.hook, "topic_done"):
            self.hook.topic_done(topic, report_extras)

    def write(self, out: Path, result, submission: Path, command: str) -> list[tuple[str, str]]:
        """Write the unit's artefacts; return the images to show in score.md as (name, caption),
        and the notes of files not written as ("", why) (the hook's (None, why), translated).
        A grading of selected tests (--test) writes none: they describe a whole grading."""
        written = self.hook.write(out, result, submission, command) if self.hook and not result.selected_tests else []
        names = {Path(path).name for path, _ in written if path is not None}
        for name in self.files:        # never leave a previous run's artefact beside a new score
            if name not in names and (out / name).exists():
                (out / name).unlink()
        return [(Path(path).name if path is not None else "", caption) for path, caption in written if caption]

    def close(self) -> None:
        if self.hook is not None:
            self.hook.close()


def grade_and_report(unit, submission: Path, out: Path, options: Options, command: str, started: float,
                     shown_as: str | None = None, tampered: list[str] | None = None, hidden_detail: str = "hints",
                     artefacts: ArtefactsHook | None = None, image=None, spare: bool = True,
                     pass_mark: float | None = None, source: Path | None = None):
    """The whole run: grading (probe, suites, score), then the unit's artefacts, then the
    reports. `shown_as` and `tampered` are what the reports say of the submission (a pull
    request's checkout), `pass_mark` the percentage --fail-under asks for, `source` the
    folder the submission's files were copied from (the artefacts describe it: its commit,
    the commands that replay the grading). A batch job passes the artefacts hook and the
    worker image it keeps for all its submissions, and whether its workers get a spare
    (`run.grade`).
    Returns the result and the images score.md shows."""
    own_image, own_artefacts = image is None, artefacts is None
    # The worker image first: its start-up (numpy, the preload list) overlaps everything below.
    image = image or start_image(image_config(unit, "hidden" in SUITES[options.suite], options.trusted))
    try:
        artefacts = artefacts or ArtefactsHook(unit, select_topics(unit, options.topics, options.tests), options.suite)
        try:
            result = grade(unit, submission, options, started, image=image, observer=artefacts, spare=spare)
            shown_text(result, Redactor({unit.path: "<unit>", Path(submission).resolve(): "<submission>"}))
            result.submission = shown_as or result.submission
            result.tampered = tampered
            result.pass_mark = pass_mark
            images = artefacts.write(out, result, source or submission, command)
        finally:
            if own_artefacts:
                artefacts.close()
    finally:
        if own_image:
            image.close()
    reports.write_all(out, result, images, hidden_detail)
    return result, images


def shown_text(result, redactor: Redactor) -> None:
    """Hold every text of `result` that student code could have written (messages, and what
    the suites left for the artefacts) to what a report may show (Redactor.report_text): no
    instructor folder in any encoding. Reports and artefacts are built from `result` only."""
    for topic in result.topics:
        topic.message = redactor.report_text(topic.message)
        for test in topic.tests:
            test.message = redactor.report_text(test.message)

    def walk(value):
        if isinstance(value, str):
            return redactor.report_text(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                object.__setattr__(value, f.name, walk(getattr(value, f.name)))
            return value
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(walk(v) for v in value)
        return value

    result.report_extras = walk(result.report_extras)


def refusal(unit, submission: str, reason: str, options: Options, started: float,
            tampered: list[str] | None = None, pass_mark: float | None = None) -> GradeResult:
    """The result of a submission the grader refuses to grade (its module folder is a link,
    nothing to grade in an upload): every test of the rubric at 0, each saying why, so that
    every report of the path says the score and the reason as a graded one would."""
    lang = i18n.activate(options.lang, unit.locale_dirs())
    visibilities = SUITES[options.suite]
    topics = [TopicResult(t.id, t.title, unit.topic(t.id).module, TopicStatus.ERROR, reason,
                          [TestOutcome(x.id, 0.0, x.points, Outcome.ERROR, reason, "", kind="exception")
                           for x in t.tests if x.visibility in visibilities], t.graded_later)
              for t in unit.rubric.topics if t.id in {x.id for x in select_topics(unit, options.topics)}]
    return GradeResult(unit=unit.name, submission=submission, seed=options.seed or 0,
                       seed_given=options.seed is not None, duration_s=round(time.perf_counter() - started, 3),
                       topics=topics, signals_title=unit.signals_title, lang=lang,
                       grader_version=grader_version(unit.path), tampered=tampered, pass_mark=pass_mark,
                       refused=reason)


def pass_mark_status(result) -> int:
    """Say whether the score reached the pass mark (if one was given), and the exit status for it."""
    if result.pass_mark is None:
        return EXIT_OK
    print(terminal(pass_mark_note(result)) + (_(" (--fail-under: exit status 1)") if result.below_pass_mark else ""))
    return EXIT_BELOW if result.below_pass_mark else EXIT_OK


def limit_own_memory() -> None:
    """A memory limit on the grader itself: a reply it cannot refuse in time must not take
    the machine down with it. Workers set their own, lower limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > GRADER_ADDRESS_SPACE:
        resource.setrlimit(resource.RLIMIT_AS, (GRADER_ADDRESS_SPACE, hard))


def stop_on_sigterm() -> None:
    """SIGTERM (batch's time limit) ends grading like Ctrl-C: pytest stops, and the
    Sandbox's `with` block kills the worker on the way out."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, interrupt)
