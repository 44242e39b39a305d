"""pytest plugin used by the grader: fixtures for the suites, and the outcome of every test.

Fixtures (the same names the public tests get from their standalone conftest.py):
- one per topic module (`bptt`, `gru_lstm`, ...): a `StudentModule` proxy, so every call
  runs in the worker;
- `reference`: the reference solution's modules (hidden suites only);
- `rng`: a numpy Generator seeded from this run's seed and the test's name, so inputs
  change between runs but a run can be replayed with `--seed`;
- `signals`: a dict a suite fills with the fault-injection signals of the report.

Outcomes are read from the exception a test raised, never from printed output.
"""

from __future__ import annotations

import types
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from pytest import TestReport


from autograder import api, paths, reference
from autograder.checks import CheckFailed
from autograder.sandbox import NotImplementedYet, Sandbox, StudentModule, StudentProblem

MAX_MESSAGE_CHARS = 1200


@dataclass
class TestResult:
    topic: str
    visibility: str
    test: str
    outcome: str = "passed"
    message: str = ""
    not_implemented: bool = False
    instances: int = 0
    duration_s: float = 0.0        # setup + call, all instances (for `make bench`)


def classify(excinfo) -> tuple[str, str, bool]:
    """(outcome, student-facing message, raised NotImplementedError?) for a failed test."""
    exc = excinfo.value
    if isinstance(exc, StudentProblem):
        return exc.outcome, exc.message, isinstance(exc, NotImplementedYet)
    if isinstance(exc, AssertionError):
        text = str(exc)
        if not isinstance(exc, CheckFailed):
            # pytest's rewritten assert: "message\nassert <introspection>"; keep the message.
            text = text.split("\nassert ")[0] if "\nassert " in text else text
        return "failed", text.strip() or "a check failed", False
    return "error", (f"the grader could not check this result ({type(exc).__name__}: {exc}); "
                     "check the types and shapes your function returns"), False


@dataclass
class Collector:
    """The plugin object handed to pytest.main."""

    sandbox: Sandbox
    seed: int
    results: dict = field(default_factory=dict)     # (topic, visibility, test) -> TestResult
    collect_errors: list = field(default_factory=list)
    signal_values: dict = field(default_factory=dict)
    extra_values: dict = field(default_factory=dict)

    # -------------------------------------------------------------- fixtures
    @pytest.fixture(scope="session")
    def reference(self):
        # Loaded on first use: a public-only run (or a student release without
        # solutions/) never needs the reference.
        return reference.load()

    @pytest.fixture
    def rng(self, request):
        return np.random.default_rng([self.seed, zlib.crc32(request.node.nodeid.encode())])

    @pytest.fixture(scope="session")
    def run_seed(self):
        return self.seed

    @pytest.fixture(scope="session")
    def signals(self):
        return self.signal_values

    @pytest.fixture(scope="session")
    def report_extras(self):
        return self.extra_values

    # ----------------------------------------------------------------- hooks
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
            key = self.key(item)
            res = self.results.setdefault(key, TestResult(*key))
            res.duration_s += call.duration
        if call.when == "call" or (call.when == "setup" and failed):
            res.instances += 1
            if failed:
                kind, message, not_impl = classify(call.excinfo)
                if res.outcome == "passed":   # the first failing instance explains the test
                    res.outcome, res.message = kind, message[:MAX_MESSAGE_CHARS]
                    res.not_implemented = not_impl
                else:
                    res.not_implemented = res.not_implemented and not_impl
        return TestReport(item.nodeid, item.location, {}, "failed" if failed else "passed",
                          str(call.excinfo.value)[:MAX_MESSAGE_CHARS] if failed else None, call.when,
                          duration=call.duration, start=call.start, stop=call.stop)

    @staticmethod
    def key(item) -> tuple[str, str, str]:
        path = Path(str(item.fspath)).resolve()
        visibility = "hidden" if path.parent == paths.HIDDEN_TESTS.resolve() else "public"
        topic = path.stem.removeprefix("test_")
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

    for topic in api.TOPICS.values():
        setattr(plugin, f"student_{topic.module}", make(topic.module))
    return plugin
