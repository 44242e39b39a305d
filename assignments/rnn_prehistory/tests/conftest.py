"""Fixtures for running the public tests yourself: `pytest assignments/rnn_prehistory/tests`
(add `--submission DIR` to test the modules of another folder).

Each topic module is a fixture named after it (`bptt`, `gru_lstm`, ...), imported from the
folder above. The grader runs these same test files with its own fixtures of the same
names, which call your code inside an isolated worker process.
"""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent

MODULES = ["bptt", "gate_derivative", "gru_lstm", "fault_injection", "beam_search", "bleu", "attention"]


def pytest_addoption(parser):
    parser.addoption("--submission", default=str(HERE.parent),
                     help="folder holding the topic modules (default: the stubs beside tests/)")


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
