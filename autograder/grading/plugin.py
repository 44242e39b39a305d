"""pytest plugin used by the grader: fixtures for the suites, and the outcome of every test.

Fixtures (the same names the public tests get, run by hand, from authoring/public_plugin.py):
- one per topic module of the unit (`bptt`, `gru_lstm`, ...): a `StudentModule` proxy, so
  every call runs in the worker;
- `reference`: the unit's reference solution modules (hidden suites only);
- `rng`: a numpy Generator seeded from this run's seed and the test's name, so a run can
  be replayed with `--seed`;
- `run_seed`, `signals` (a dict a suite fills with booleans for the report) and
  `report_extras` (a dict a suite fills with data for the unit's extra artefacts).

Outcomes are read from the exception a test raised, never from printed output.
"""

from __future__ import annotations

import importlib
import sys
import types
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from pytest import TestReport

from autograder.authoring.checks import CheckFailed
from autograder.grading.score import TestRecord
from autograder.i18n import _
from autograder.isolation.errors import NotImplementedYet, StudentProblem
from autograder.isolation.proxies import StudentModule
from autograder.isolation.sandbox import Sandbox
from autograder.unit.test_ids import TestId

MAX_MESSAGE_CHARS = 1200


def classify(excinfo) -> tuple[str, str, str | None, str]:
    """(outcome, student-facing message, "module.function" if it was the stub's
    NotImplementedError, failure kind). The kind chooses the hint (grading/score.py):
    "value" | "shape" | "exception" | "timeout" | "not_implemented"."""
    exc = excinfo.value
    if isinstance(exc, NotImplementedYet):
        return exc.outcome, exc.message, exc.function, "not_implemented"
    if isinstance(exc, StudentProblem):
        return exc.outcome, exc.message, None, "timeout" if exc.outcome == "timeout" else "exception"
    if isinstance(exc, AssertionError):
        text = str(exc)
        if not isinstance(exc, CheckFailed):
            # pytest's rewritten assert: "message\nassert <introspection>"; keep the message.
            text = text.split("\nassert ")[0] if "\nassert " in text else text
        return "failed", text.strip() or _("a check failed"), None, getattr(exc, "kind", "value")
    return "error", _("the grader could not check this result ({error}); check the types and shapes your "
                      "function returns").format(error=f"{type(exc).__name__}: {exc}"), None, "shape"


class ReferenceModules:
    """`reference.bptt`, `reference.gru_lstm`, ...: the unit's solution modules, imported on
    first access. They import each other by top-level name (`import bptt`), like the
    student's; the grader process never imports student code, so those names are free here."""

    def __init__(self, folder: Path, modules):
        self._folder, self._modules = str(folder), set(modules)

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in self._modules:
            raise AttributeError(f"no reference module {name!r}")
        if self._folder not in sys.path:
            sys.path.insert(0, self._folder)
        module = importlib.import_module(name)
        setattr(self, name, module)
        return module


@dataclass
class Collector:
    """The plugin object handed to pytest.main."""

    sandbox: Sandbox
    seed: int
    files: dict                                        # resolved test file -> (topic id, visibility)
    records: dict = field(default_factory=dict)        # (topic, visibility, test) -> TestRecord
    collect_errors: list = field(default_factory=list)
    signals: dict = field(default_factory=dict)        # the `signals` fixture
    report_extras: dict = field(default_factory=dict)  # the `report_extras` fixture
    topic_done: object = None        # called as topic_done(topic id, report_extras) when a topic's last test is over
    only: dict = field(default_factory=dict)           # topic -> {TestId}: its only tests to run

    # -------------------------------------------------------------- fixtures
    @pytest.fixture(scope="session")
    def reference(self):
        # Loaded on first use: a public-only run never needs the reference.
        unit = self.sandbox.unit
        return ReferenceModules(unit.dirs["reference"], unit.modules)

    @pytest.fixture
    def rng(self, request):
        topic, visibility, _test = self.key(request.node)
        return np.random.default_rng([self.seed, zlib.crc32(f"{visibility}/test_{topic}.py::{request.node.name}".encode())])

    @pytest.fixture(scope="session")
    def run_seed(self):
        return self.seed

    @pytest.fixture(scope="session", name="signals")
    def signals_fixture(self):
        return self.signals

    @pytest.fixture(scope="session", name="report_extras")
    def report_extras_fixture(self):
        return self.report_extras

    # ----------------------------------------------------------------- hooks
    def pytest_collection_modifyitems(self, config, items):
        """Deselect the tests a selection leaves out (run.selected_tests), as `pytest -k` would."""
        if not self.only:
            return
        keep, drop = [], []
        for item in items:
            topic, visibility, name = self.key(item)
            (drop if topic in self.only and TestId(visibility, name) not in self.only[topic] else keep).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors.append(f"{report.nodeid}: {report.longreprtext[-2000:]}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        """Record the outcome, and build the report ourselves: pytest's own report renders a
        source-annotated traceback for every failure, which nobody reads here and which
        costs ~60 ms per failed test."""
        failed = call.excinfo is not None
        if call.when in ("setup", "call"):
            rec = self.records.setdefault(self.key(item), TestRecord())
            rec.duration_s += call.duration
        if call.when == "call" or (call.when == "setup" and failed):
            rec.instances += 1
            if failed:
                outcome, message, not_impl, kind = classify(call.excinfo)
                if rec.outcome == "passed":   # the first failing instance explains the test
                    rec.outcome, rec.message, rec.kind = outcome, message[:MAX_MESSAGE_CHARS], kind
                    rec.not_implemented = not_impl
                elif not_impl is None:
                    rec.not_implemented = None
        return TestReport(item.nodeid, item.location, {}, "failed" if failed else "passed",
                          str(call.excinfo.value)[:MAX_MESSAGE_CHARS] if failed else None, call.when,
                          duration=call.duration, start=call.start, stop=call.stop)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """The calls a test makes spend its topic's budget (Sandbox.spent)."""
        self.sandbox.charged_to = self.key(item)[0]
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item, nextitem):
        yield      # after the teardown: a topic's module fixtures have finished too
        if self.topic_done is not None:
            topic = self.key(item)[0]
            if nextitem is None or self.key(nextitem)[0] != topic:
                try:
                    self.topic_done(topic, self.report_extras)
                except Exception:  # noqa: BLE001 - early work is an optimisation; the artefacts redo it
                    pass

    def key(self, item) -> tuple[str, str, str]:
        # item.path is what pytest made of the (resolved) file arguments; resolving it again
        # for every report and fixture costs ~0.1 s per grading.
        topic, visibility = self.files.get(item.path) or self.files[item.path.resolve()]
        name = getattr(item, "originalname", None) or item.name.split("[")[0]
        return topic, visibility, name


def module_fixtures(collector: Collector) -> types.ModuleType:
    """A plugin holding one session fixture per topic module, each a worker proxy."""
    plugin = types.ModuleType("autograder_student_modules")

    def make(module: str):
        @pytest.fixture(scope="session", name=module)
        def proxy():
            return StudentModule(collector.sandbox, module)

        return proxy

    for topic in collector.sandbox.unit.topics:
        setattr(plugin, f"student_{topic.module}", make(topic.module))
    return plugin
