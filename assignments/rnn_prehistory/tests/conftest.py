"""Fixtures for running the public tests yourself: `pytest` at the root of your repository,
with its venv active (`source .venv/bin/activate`; `make grade` creates .venv), or
`.venv/bin/python -m pytest` (add `--submission=DIR` to test the modules of another folder).

Each topic module is a fixture named after it (`bptt`, `gru_lstm`, ...), imported from the
folder above. The grader runs these same test files with its own fixtures of the same
names, which call your code inside an isolated worker process.

Messages are in English or Chinese: when you run pytest yourself, the language follows your
locale (LANGUAGE, LC_ALL, LC_MESSAGES or LANG; e.g. `LANG=zh_CN.UTF-8 pytest ...`).
"""

import importlib
import sys
from pathlib import Path

import pytest

try:
    import numpy as np

    from autograder import i18n
    from autograder.i18n import _
    from autograder.unit.load import find_unit
except ImportError as missing:
    # pytest of another Python (not the repository's venv): the grader and its translations are
    # out of reach, so this one message says what to do in both languages.
    raise pytest.UsageError(
        f"these tests need this repository's grader and numpy ({missing}). Run `make grade` once "
        "(it creates .venv/), then `source .venv/bin/activate` and `pytest`, or `.venv/bin/python -m pytest`.\n"
        f"这些测试需要本仓库的评分器和 numpy（{missing}）。请先运行一次 `make grade`（它会创建 .venv/），"
        "然后运行 `source .venv/bin/activate` 和 `pytest`，或 `.venv/bin/python -m pytest`。") from None

HERE = Path(__file__).resolve().parent
UNIT = "rnn_prehistory"     # the unit these tests belong to (their helpers are autograder.units.rnn_prehistory)
GRADER_FIXTURES = "autograder_student_modules"     # the grader's plugin of module fixtures (grading/plugin.py)

MODULES = ["bptt", "gate_derivative", "gru_lstm", "fault_injection", "beam_search", "bleu", "attention", "causality",
           "inference_cost"]


def pytest_addoption(parser, pluginmanager):
    # The first hook this file gets: choose the language here, so that --help speaks it too.
    # Inside the grader the language is already chosen (--lang or the locale) before pytest
    # starts, and the grader brings its own module fixtures (and passes --noconftest): leave
    # it alone there. Run by hand, the language follows the locale, with the unit's catalogue.
    if not pluginmanager.has_plugin(GRADER_FIXTURES):
        i18n.activate(None, find_unit(UNIT) / "locale")
    parser.addoption("--submission", default=str(HERE.parent),
                     help=_("folder holding the topic modules (default: the stubs beside tests/)"))


def pytest_configure(config):
    sys.path.insert(0, str(Path(config.getoption("--submission")).resolve()))


def _module_fixture(name):
    @pytest.fixture(scope="session", name=name)
    def fixture():
        return importlib.import_module(name)

    return fixture


for _name in MODULES:
    globals()[f"student_{_name}"] = _module_fixture(_name)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="session")
def report_extras():
    """Where a test leaves data for the grader's reports (unused when you run pytest yourself)."""
    return {}
