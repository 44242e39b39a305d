"""unit.yaml is read through a schema: an unknown key (a misspelling) stops the grader with
a message naming the key and the nearest valid one, and AUTHORING's table of keys is the
schema's own text."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from helpers import REPO

from autograder.unit.load import load_unit
from autograder.unit.model import MANIFEST_KEYS, UnitError

MANIFEST = """
    name: tiny_unit
    {extra}
    limits: {{call_timeout_s: 5{limit_extra}}}
    topics:
      - id: doubling
        module: doubler
        {topic_extra}
        functions:
          double: {{{function_extra}}}
"""
RUBRIC = """
    topic: doubling
    title: Doubling
    points: 1
    tests:
      - {test: test_double, visibility: public, points: 1, hint: "Multiply by two."}
"""


def write_unit(tmp_path, extra="", limit_extra="", topic_extra="", function_extra=""):
    unit = tmp_path / "tiny_unit"
    (unit / "rubric").mkdir(parents=True)
    (unit / "unit.yaml").write_text(textwrap.dedent(MANIFEST.format(
        extra=extra, limit_extra=limit_extra, topic_extra=topic_extra, function_extra=function_extra)))
    (unit / "rubric" / "doubling.yaml").write_text(textwrap.dedent(RUBRIC))
    return unit


def test_a_valid_manifest_loads(tmp_path):
    unit = load_unit(write_unit(tmp_path, extra="hidden_helpers: [oracles]"))
    assert unit.hidden_helpers == ("oracles",) and unit.topics[0].module == "doubler"


@pytest.mark.parametrize("where, kwargs, key, nearest", [
    ("top level", {"extra": "hiden_helpers: [oracles]"}, "hiden_helpers", "hidden_helpers"),
    ("limits", {"limit_extra": ", memory_mbs: 10"}, "memory_mbs", "memory_mb"),
    ("a topic", {"topic_extra": "modul: doubler2"}, "modul", "module"),
    ("a function", {"function_extra": "kepp: [1]"}, "kepp", "keep"),
])
def test_an_unknown_key_is_refused_with_the_nearest_valid_one(tmp_path, where, kwargs, key, nearest):
    with pytest.raises(UnitError) as error:
        load_unit(write_unit(tmp_path, **kwargs))
    message = str(error.value)
    assert f"unknown key {key!r}" in message and f"did you mean {nearest!r}" in message, message


def test_a_key_unlike_any_lists_the_valid_ones(tmp_path):
    with pytest.raises(UnitError, match="valid keys: name, title"):
        load_unit(write_unit(tmp_path, extra="zzz: 1"))


def test_the_shipped_unit_uses_only_schema_keys():
    import yaml

    data = yaml.safe_load((load_unit().path / "unit.yaml").read_text(encoding="utf-8"))
    assert set(data) <= set(MANIFEST_KEYS)


def test_authoring_table_is_generated_from_the_schema():
    result = subprocess.run([sys.executable, "scripts/make_authoring_table.py", "--check"], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (REPO / "docs" / "AUTHORING.md").read_text(encoding="utf-8")
    for key in MANIFEST_KEYS:
        assert f"| `{key}` |" in text
