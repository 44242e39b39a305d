"""Grade one submission, in named stages:

    probe -> run suites -> collect outcomes -> score      (this module)
    -> the unit's artefacts -> reports                     (autograder.pipeline)

`grade()` owns the Sandbox: it starts the worker first, so that the worker's start-up
overlaps the import of pytest and the suites, and closes it when the suites are done.
Student code only ever runs in that worker.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from autograder import i18n
from autograder.errors import GraderError
from autograder.grading.score import GradeResult, score_topic
from autograder.grading.seed import submission_seed
from autograder.grading.todo import unfinished
from autograder.unit.model import Unit, register_package
from autograder.unit.oral_exam import readiness
from autograder.unit.test_ids import TestId, TopicTestId
from autograder.version import grader_version

if TYPE_CHECKING:          # imported when grading starts: the worker image starts before numpy loads here
    from autograder.isolation.sandbox import Sandbox

SUITES = {"public": ("public",), "hidden": ("hidden",), "all": ("public", "hidden")}

# Plugins the grader has no use for; unraisableexception and threadexception also run
# gc.collect() at the end of the session (~0.1 s each), logging wraps every test phase.
UNUSED_PLUGINS = ("cacheprovider", "terminal", "stepwise", "doctest", "junitxml", "pastebin",
                  "unraisableexception", "threadexception", "faulthandler", "tmpdir", "debugging", "logging")


@dataclass(frozen=True)
class Options:
    suite: str = "all"
    topics: tuple[str, ...] | None = None
    seed: int | None = None
    trusted: bool = False      # run without isolation where none can be had (e.g. the reference)
    lang: str | None = None    # "en" or "zh" for messages, hints and reports; None: from the locale
    shown_folder: str | None = None   # where messages say the module files are (batch: the student's own path)
    # "topic::visibility::test" (TopicTestId's text: the rubric's test ids, prefixed by their topic): those tests
    # only, for topics not also named in `topics`; e.g. a mutant graded on the tests that must catch it
    tests: tuple[str, ...] | None = None


def parse_test(unit: Unit, selector: str) -> TopicTestId:
    """The test a `--test` selector names, checked against the rubric."""
    test = unit.rubric.find_test(selector)
    if test is None:
        raise GraderError(f"--test {selector}: no such test in the rubric (a test is named "
                          "topic::public::test_name or topic::hidden::test_name)")
    return test


def select_topics(unit: Unit, topics, tests=None) -> list:
    """The topics to grade: those named, and those of the selected tests; all when neither is given."""
    wanted = set(topics or []) | {parse_test(unit, selector).topic for selector in tests or ()}
    unknown = sorted(wanted - {t.id for t in unit.topics})
    if unknown:
        raise GraderError(f"unknown topic(s) {unknown}; the unit has {[t.id for t in unit.topics]}")
    return [t for t in unit.topics if not wanted or t.id in wanted]


def selected_tests(unit: Unit, options: Options) -> dict[str, frozenset[TestId]]:
    """topic id -> the tests to run, for each topic graded on a selection of its tests (a
    topic named in `options.topics` is graded whole)."""
    only: dict[str, set[TestId]] = {}
    for selector in options.tests or ():
        selected = parse_test(unit, selector)
        if selected.test.visibility not in SUITES[options.suite]:
            raise GraderError(f"--test {selector} is not in the {options.suite} suite")
        if selected.topic not in (options.topics or ()):
            only.setdefault(selected.topic, set()).add(selected.test)
    return {topic: frozenset(tests) for topic, tests in only.items()}


def suite_files(unit: Unit, topics, suite: str, only: dict | None = None) -> dict[Path, tuple[str, str]]:
    """The test files to run: resolved path -> (topic id, visibility). `only`: see `selected_tests`."""
    files = {}
    for topic in topics:
        graded = {t.visibility for t in unit.rubric.topic(topic.id).tests}
        if only and topic.id in only:
            graded &= {test.visibility for test in only[topic.id]}
        for visibility in SUITES[suite]:
            if visibility in graded:
                path = unit.test_file(topic.id, visibility)
                if not path.is_file():
                    raise GraderError(f"the {visibility} test file of topic {topic.id} is missing "
                                      f"({path.relative_to(unit.path)}), although the rubric grades it")
                files[path.resolve()] = (topic.id, visibility)
    if not files:   # with no file arguments pytest would collect whatever lies in the cwd
        raise GraderError("nothing to grade: no test file matches the selected topics and suite")
    return files


def _pytest_args(files, rootdir: Path) -> list[str]:
    # --assert=plain: the suites raise CheckFailed with their own message, so pytest's
    # assertion rewriting (an AST pass over every test module, ~0.7 s) buys nothing.
    # -c /dev/null-like: an empty inline config keeps any project's pytest settings out.
    # --disable-plugin-autoload: no third-party plugin of the environment runs in the grader
    # (and hypothesis's alone costs ~1 s in a development venv).
    # --capture=no: the suites print nothing and student code prints in the worker, so
    # redirecting the grader's own file descriptors around every test phase (~0.1 s) buys nothing.
    disabled = [arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")]
    return [*map(str, files), *disabled, "--disable-plugin-autoload", "--assert=plain", "--noconftest",
            "--capture=no",
            "--import-mode=importlib",
            "-o", "addopts=", "-o", "python_files=test_*.py", "--rootdir", str(rootdir), "-c", "/dev/null"]


# What pytest reads from the environment besides its arguments: an instructor's shell (or a
# test run, whose PYTEST_ADDOPTS reaches the graders it starts) must not change a grading:
# PYTEST_ADDOPTS="-x" stopped the suites at the first failing test, and every later rubric
# test was "not run" (a grader error for every student).
PYTEST_ENVIRONMENT = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DEBUG", "PYTEST_THEME", "PYTEST_THEME_MODE")


@contextlib.contextmanager
def _without_pytest_settings_of_the_environment():
    kept = {name: os.environ.pop(name) for name in PYTEST_ENVIRONMENT if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(kept)


def run_suites(sandbox: Sandbox, files: dict, seed: int, observer=None, only: dict | None = None):
    """One pytest run over the selected suites; returns the plugin holding the outcomes.
    `observer` (the unit's artefacts): its `first_topics` run first, and its
    `topic_done(topic, report_extras)` hears when each topic's last test is over. `only`: the
    topics graded on a selection of their tests (`selected_tests`); their others are deselected."""
    # Imported here for start-up speed: pytest and the plugin (numpy) load while the worker starts.
    import pytest

    from autograder.grading.plugin import Collector, module_fixtures

    register_package(sandbox.unit)     # the suites import the unit's own code by its package name
    first = tuple(getattr(observer, "first_topics", ()))
    files = dict(sorted(files.items(), key=lambda kv: kv[1][0] not in first))    # stable: topics stay together
    collector = Collector(sandbox, seed, files, topic_done=getattr(observer, "topic_done", None), only=only or {})
    with _without_pytest_settings_of_the_environment():
        code = pytest.main(_pytest_args(files, sandbox.unit.path), plugins=[collector, module_fixtures(collector)])
    if code == pytest.ExitCode.INTERRUPTED:      # Ctrl-C (or batch's SIGTERM): pytest caught it, pass it on
        raise KeyboardInterrupt
    if collector.collect_errors or code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise GraderError(f"pytest could not run the suites (exit {int(code)}): " + "\n".join(collector.collect_errors))
    return collector


def grade(unit: Unit, submission: Path, options: Options = Options(), started: float | None = None,
          image=None, observer=None, spare: bool = True) -> GradeResult:
    """Grade one submission. `image`: a worker image to fork the workers from (a batch
    job's); by default the Sandbox starts its own. `observer`: see `run_suites`. `spare`:
    whether background calls get a second worker (see `Sandbox`)."""
    # Imported here for start-up speed: the sandbox loads numpy, which the worker image must not wait for.
    from autograder.isolation.errors import IsolationError
    from autograder.isolation.sandbox import Sandbox

    started = started or time.perf_counter()
    lang = i18n.activate(options.lang, unit.locale_dirs())
    seed = submission_seed(unit, submission) if options.seed is None else options.seed
    topics = select_topics(unit, options.topics, options.tests)
    only = selected_tests(unit, options)
    visibilities = SUITES[options.suite]
    with Sandbox(unit, submission, hidden="hidden" in visibilities, trusted=options.trusted, image=image,
                 spare=spare) as sandbox:
        # Imported here for start-up speed: the worker starts in the background, pytest and the plugin load meanwhile.
        import pytest  # noqa: F401

        from autograder.grading import plugin  # noqa: F401
        try:
            sandbox_info = sandbox.start()
        except IsolationError as exc:
            raise GraderError(f"{exc}. Student code is not run beside hidden tests without isolation; "
                              "grade only the public tests (--suite public), or pass --trust-submission "
                              "for code you trust (e.g. the reference)") from None
        probes = {t.id: sandbox.probe(t.module) for t in topics}                 # stage: probe
        # A selection of tests writes no artefacts (pipeline.ArtefactsHook.write): no early work for them.
        collector = run_suites(sandbox, suite_files(unit, topics, options.suite, only), seed,   # stage: run suites
                               None if only else observer, only)
        if sandbox.failure is not None:
            raise GraderError(f"a replacement worker could not start: {sandbox.failure}")
    results = [score_topic(unit.rubric.topic(t.id), t.module, visibilities, collector.records,   # stage: score
                           probes[t.id], f"{options.shown_folder}/{t.module}.py" if options.shown_folder
                           else unit.stub_path(t.module), unfinished(submission / f"{t.module}.py"), only.get(t.id),
                           tuple(t.functions))
               for t in topics]
    exam = unit.oral_exam
    return GradeResult(unit=unit.name, submission=str(submission), seed=seed, seed_given=options.seed is not None,
                       duration_s=round(time.perf_counter() - started, 3), topics=results,
                       signals=dict(collector.signals), signals_title=unit.signals_title,
                       report_extras=dict(collector.report_extras), sandbox_info=sandbox_info,
                       oral_exam=readiness(exam, results, lang) if exam else [],
                       oral_exam_title=exam.title if exam else "", lang=lang,
                       grader_version=grader_version(unit.path),
                       selected_tests=sorted((TopicTestId(topic, test) for topic, tests in only.items()
                                              for test in tests), key=str))
