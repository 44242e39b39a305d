"""The public tests' fixtures when a student runs them with plain pytest (no grader).

A unit's public tests ship with a conftest.py of a few lines that calls `install` from its
`pytest_addoption` hook (the first hook pytest gives a conftest):

    def pytest_addoption(parser, pluginmanager):
        public_plugin.install(parser, pluginmanager, unit="<name>", stubs=Path(__file__).resolve().parent.parent)

The fixtures are those the grader gives the same tests (grading/plugin.py): one per topic
module of the unit, named after it, here the module itself, imported from the submission
folder (`--submission=DIR`, default the stubs); `rng`, seeded; `report_extras`, a dict
nobody reads. The modules are the unit's topics (topics/*/topic.yaml), so the conftest lists none.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from autograder import i18n
from autograder.i18n import _
from autograder.unit.load import load_unit

# The grader's plugin of module fixtures (grading/plugin.py): where it is present, the grader
# runs these tests with its own fixtures (worker proxies) and language, and this plugin stays out.
GRADER_FIXTURES = "autograder_student_modules"


def install(parser, pluginmanager, unit: str | Path, stubs: Path) -> None:
    """Choose the language (the locale, with the unit's catalogue: --help speaks it too), add
    `--submission` (default `stubs`) and register the fixtures of the unit's modules."""
    if pluginmanager.has_plugin(GRADER_FIXTURES):
        return
    loaded = load_unit(unit)
    name = f"autograder_public_tests_{loaded.name}"
    if pluginmanager.has_plugin(name):       # this conftest read a second time (through a link to its folder)
        return
    i18n.activate(None, loaded.locale_dirs())
    parser.addoption("--submission", default=str(stubs),
                     help=_("folder holding the topic modules (default: the stubs beside tests/)"))
    pluginmanager.register(plugin(name, [topic.module for topic in loaded.topics]), name)


def plugin(name: str, modules) -> types.ModuleType:
    """A pytest plugin: the submission folder on sys.path, a session fixture per module, `rng`
    and `report_extras` (a module object, as pytest reads a plugin's hooks and fixtures by name)."""

    def pytest_configure(config):
        sys.path.insert(0, str(Path(config.getoption("--submission")).resolve()))

    def module_fixture(module: str):
        @pytest.fixture(scope="session", name=module)
        def student_module():
            return importlib.import_module(module)

        return student_module

    @pytest.fixture
    def rng():
        return np.random.default_rng(0)

    @pytest.fixture(scope="session")
    def report_extras():
        """Where a test leaves data for the grader's reports (unused when you run pytest yourself)."""
        return {}

    holder = types.ModuleType(name)
    members = {"pytest_configure": pytest_configure, "rng": rng, "report_extras": report_extras}
    members.update((f"student_{module}", module_fixture(module)) for module in modules)
    for member, value in members.items():
        setattr(holder, member, value)
    return holder
