"""The grader's version names what can change a score: the engine and unit (a digest) and
the libraries that compute and collect (numpy, pytest)."""

from importlib import metadata

import numpy
import pytest

from autograder.unit.load import load_unit
from autograder.version import grader_version


def test_grader_version_names_numpy_and_pytest():
    version = grader_version(load_unit().path)
    assert f"numpy{numpy.__version__}" in version
    assert f"pytest{pytest.__version__}" in version
    assert version.startswith(metadata.version("autograder") + "+")


def test_grader_version_changes_with_a_scoring_library(monkeypatch):
    unit = load_unit().path
    before = grader_version(unit)
    grader_version.cache_clear()
    monkeypatch.setattr(numpy, "__version__", "0.0.1")      # what the grader reads of a loaded library
    try:
        assert grader_version(unit) != before
    finally:
        grader_version.cache_clear()
