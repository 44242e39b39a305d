"""Grade one submission: import probes, one pytest run over the selected suites, the score.

The score is computed here from the rubric and the outcomes the plugin collected; student
code only ever runs in the worker behind `Sandbox`.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograder import api, paths, rubric as rubric_mod
from autograder.plugin import Collector, TestResult, module_fixtures
from autograder.sandbox import Sandbox

SUITES = {"public": ("public",), "hidden": ("hidden",), "all": ("public", "hidden")}


class GraderError(RuntimeError):
    """The grader itself could not run (exit status 2): a broken suite or rubric, not the student."""


@dataclass
class Outcome:
    score: dict                     # the autograder.score/v1 document
    topic_messages: dict            # topic id -> one-line explanation of its status
    signals: dict
    extras: dict
    sandbox_info: dict = field(default_factory=dict)
    seed: int = 0
    durations: dict = field(default_factory=dict)   # (topic id, test id) -> seconds, for junit.xml


# Plugins the grader has no use for; unraisableexception and threadexception also run
# gc.collect() at the end of the session (~0.1 s each).
UNUSED_PLUGINS = ("cacheprovider", "terminal", "stepwise", "doctest", "junitxml", "pastebin",
                  "unraisableexception", "threadexception", "faulthandler", "tmpdir", "debugging")


def _pytest_args(files: list[Path]) -> list[str]:
    # --assert=plain: the suites raise CheckFailed with their own message, so pytest's
    # assertion rewriting (an AST pass over every test module, ~0.7 s) buys nothing.
    disabled = [arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")]
    return [*map(str, files), *disabled, "--assert=plain", "--noconftest", "--import-mode=importlib",
            "-c", str(paths.PACKAGE / "pytest.ini"), "--rootdir", str(paths.REPO)]


def grade(submission: Path, suite: str = "all", topics: list[str] | None = None,
          seed: int | None = None, the_rubric: rubric_mod.Rubric | None = None,
          sandbox: Sandbox | None = None, started: float | None = None) -> Outcome:
    """Grade `submission`. A caller may pass a `sandbox` it already started, so that the
    worker's start-up overlaps the grader's own imports (see cli.cmd_grade)."""
    started = started or time.perf_counter()
    the_rubric = the_rubric or rubric_mod.load()
    seed = secrets.randbelow(2**31) if seed is None else seed
    unknown = sorted(set(topics or []) - {t.id for t in the_rubric.topics})
    if unknown:
        raise GraderError(f"unknown topic(s) {unknown}; the rubric has {[t.id for t in the_rubric.topics]}")
    selected = [t for t in the_rubric.topics if topics is None or t.id in topics]
    sandbox = sandbox or Sandbox(Path(submission).resolve(), the_rubric.limits)
    sandbox.start()
    try:
        collector = Collector(sandbox, seed)
        statuses = {t.id: sandbox.probe(t.module) for t in selected}
        files = [f for t in selected for vis, f in t.test_files().items()
                 if vis in SUITES[suite] and any(x.visibility == vis for x in t.tests)]
        missing = [f for f in files if not f.exists()]
        if missing:
            raise GraderError(f"test file(s) listed by the rubric are missing: {missing}")
        if not files:   # with no file arguments pytest would collect whatever lies in the cwd
            raise GraderError("nothing to grade: no test file matches the selected topics and suite")
        code = pytest.main(_pytest_args(files), plugins=[collector, module_fixtures(collector)])
        if collector.collect_errors or code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            raise GraderError(f"pytest could not run the suites (exit {int(code)}): "
                              + "\n".join(collector.collect_errors))
    finally:
        sandbox.close()
    score_topics, messages = [], {}
    for topic in selected:
        entry, messages[topic.id] = _score_topic(topic, SUITES[suite], collector.results, statuses[topic.id])
        score_topics.append(entry)
    score = {
        "schema": "autograder.score/v1",
        "assignment": the_rubric.assignment,
        "submission": str(submission),
        "earned": round(sum(t["earned"] for t in score_topics), 6),
        "possible": round(sum(t["possible"] for t in score_topics), 6),
        "duration_s": round(time.perf_counter() - started, 3),
        "topics": score_topics,
        "signals": dict(collector.signal_values),
    }
    durations = {(r.topic, f"{r.visibility}::{r.test}"): r.duration_s for r in collector.results.values()}
    return Outcome(score, messages, dict(collector.signal_values), dict(collector.extra_values),
                   sandbox.sandbox_info or {}, seed, durations)


def _score_topic(topic: rubric_mod.RubricTopic, visibilities, results: dict, probe: tuple[str, str]):
    status, message = probe
    tests = []
    for rt in topic.tests:
        if rt.visibility not in visibilities:
            continue
        res: TestResult | None = results.get((topic.id, rt.visibility, rt.test))
        if res is None or res.instances == 0:
            raise GraderError(f"rubric test {topic.id}/{rt.id} was not run: is it in "
                              f"{topic.test_files()[rt.visibility].name}?")
        passed = res.outcome == "passed"
        tests.append({"id": rt.id, "earned": rt.points if passed else 0.0, "possible": rt.points,
                      "outcome": res.outcome, "message": res.message,
                      "hint": "" if passed else rt.hint, "_not_implemented": res.not_implemented})
    if status == "graded" and tests and all(t["_not_implemented"] for t in tests):
        status = "not_implemented"
        message = (f"nothing in {topic.module}.py is implemented yet: fill in the TODOs in "
                   f"assignments/{api.ASSIGNMENT}/{topic.module}.py")
    elif status == "graded":
        todo = sorted({t["message"].split(" is not implemented yet")[0] for t in tests if t["_not_implemented"]})
        message = f"still raising NotImplementedError: {', '.join(todo)}" if todo else ""
    for t in tests:
        del t["_not_implemented"]
    entry = {"id": topic.id, "earned": round(sum(t["earned"] for t in tests), 6),
             "possible": round(sum(t["possible"] for t in tests), 6), "status": status, "tests": tests}
    return entry, message
