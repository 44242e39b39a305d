"""Fixtures for running the public tests yourself: `pytest` at the root of your repository,
with its venv active (`source .venv/bin/activate`; `make grade` creates .venv), or
`.venv/bin/python -m pytest` (add `--submission=DIR` to test the modules of another folder).

Each topic module is a fixture named after it (`bptt`, `gru_lstm`, ...), imported from the
folder above. The grader runs these same test files with its own fixtures of the same
names, which call your code inside an isolated worker process.

Messages are in English or Chinese: when you run pytest yourself, the language follows your
locale (LANGUAGE, LC_ALL, LC_MESSAGES or LANG; e.g. `LANG=zh_CN.UTF-8 pytest ...`).
"""

from pathlib import Path

import pytest

try:
    from autograder.authoring import public_plugin
except ImportError as missing:
    # pytest of another Python (not the repository's venv): the grader and its translations are
    # out of reach, so this one message says what to do in both languages.
    raise pytest.UsageError(
        f"these tests need this repository's grader and numpy ({missing}). Run `make grade` once "
        "(it creates .venv/), then `source .venv/bin/activate` and `pytest`, or `.venv/bin/python -m pytest`.\n"
        f"这些测试需要本仓库的评分器和 numpy（{missing}）。请先运行一次 `make grade`（它会创建 .venv/），"
        "然后运行 `source .venv/bin/activate` 和 `pytest`，或 `.venv/bin/python -m pytest`。") from None


def pytest_addoption(parser, pluginmanager):
    # The first hook pytest calls here: the module fixtures, --submission and the language.
    public_plugin.install(parser, pluginmanager, unit="rnn_prehistory", stubs=Path(__file__).resolve().parent.parent)
