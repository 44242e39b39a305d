"""unit.yaml and each topic's topic.yaml are read through a schema: an unknown key (a
misspelling) stops the grader with a message naming the key and the nearest valid one, and
AUTHORING's tables of keys are the schemas' own text. Topics are the folders under topics/,
in their `order`."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from helpers import REPO

from autograder.unit.load import load_unit
from autograder.unit.model import MANIFEST_KEYS, TOPIC_KEYS, UnitError

MANIFEST = """
    name: tiny_unit
    {extra}
    limits: {{call_cpu_s: 5{limit_extra}}}
"""
TOPIC = """
    order: 1
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
    (unit / "topics" / "doubling").mkdir(parents=True)
    (unit / "unit.yaml").write_text(textwrap.dedent(MANIFEST.format(extra=extra, limit_extra=limit_extra)))
    (unit / "topics" / "doubling" / "topic.yaml").write_text(textwrap.dedent(TOPIC.format(
        topic_extra=topic_extra, function_extra=function_extra)))
    (unit / "topics" / "doubling" / "rubric.yaml").write_text(textwrap.dedent(RUBRIC))
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


def test_topics_are_the_folders_in_their_order(tmp_path):
    """A second topic folder with a smaller `order` comes first; a folder without topic.yaml is no topic."""
    unit = write_unit(tmp_path)
    halving = unit / "topics" / "halving"
    halving.mkdir()
    (halving / "topic.yaml").write_text("order: 0\nfunctions: {half: {keep: [1]}}\n")
    (halving / "rubric.yaml").write_text(textwrap.dedent(RUBRIC).replace("doubling", "halving"))
    (unit / "topics" / "notes").mkdir()
    loaded = load_unit(unit)
    assert [(t.id, t.module) for t in loaded.topics] == [("halving", "halving"), ("doubling", "doubler")]
    assert loaded.topic("halving").functions == {"half": (1,)}
    assert [t.id for t in loaded.rubric.topics] == ["halving", "doubling"]
    assert loaded.test_file("halving", "hidden") == halving / "test_hidden.py"


def test_a_topic_without_its_rubric_is_refused(tmp_path):
    unit = write_unit(tmp_path)
    (unit / "topics" / "doubling" / "rubric.yaml").unlink()
    with pytest.raises(ValueError, match="no rubric file for the topic.*doubling"):
        load_unit(unit)


def test_a_key_unlike_any_lists_the_valid_ones(tmp_path):
    with pytest.raises(UnitError, match="valid keys: name, title"):
        load_unit(write_unit(tmp_path, extra="zzz: 1"))


def test_the_shipped_unit_uses_only_schema_keys():
    import yaml

    data = yaml.safe_load((load_unit().path / "unit.yaml").read_text(encoding="utf-8"))
    assert set(data) <= set(MANIFEST_KEYS)
    for topic in load_unit().topics:
        assert topic.folder is not None
        assert set(yaml.safe_load((topic.folder / "topic.yaml").read_text(encoding="utf-8"))) <= set(TOPIC_KEYS)


def test_authoring_table_is_generated_from_the_schema():
    result = subprocess.run([sys.executable, "scripts/make_authoring_table.py", "--check"], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (REPO / "docs" / "AUTHORING.md").read_text(encoding="utf-8")
    for key in (*MANIFEST_KEYS, *TOPIC_KEYS):
        assert f"| `{key}` |" in text


def test_a_file_the_release_does_not_have_is_tampering(tmp_path):
    """A pull request that adds a workflow, a conftest.py or a link is marked, as one that changes a
    protected file is; what the student repository's .gitignore keeps out of git is not."""
    from autograder.intake.manifest import IGNORED, tampered_files, write_manifest

    root = tmp_path / "checkout"
    for rel in ("Makefile", "assignments/u/tests/test_x.py", ".github/workflows/grade.yml", "assignments/u/x.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    manifest = dict(line.split("  ")[::-1] for line in write_manifest(
        root, ["Makefile", "assignments/u/tests/test_x.py", ".github/workflows/grade.yml"]).splitlines())
    editable = {"assignments/u/x.py"}
    assert tampered_files(root, manifest, editable) == []
    for rel in (".venv/bin/python", "reports/score.json", "assignments/u/__pycache__/x.pyc", ".git/config"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("ignored")
    assert tampered_files(root, manifest, editable) == []
    (root / ".github" / "workflows" / "x.yml").write_text("on: pull_request")
    (root / "conftest.py").write_text("")
    (root / "assignments" / "u" / "link.py").symlink_to(root / "Makefile")
    assert tampered_files(root, manifest, editable) == [
        ".github/workflows/x.yml (added)", "assignments/u/link.py (added)", "conftest.py (added)"]
    # The patterns are the student repository's .gitignore.
    gitignore = (REPO / "scripts" / "release" / "gitignore.student").read_text().split()
    assert sorted(p for p in IGNORED if p != ".git/") == sorted(gitignore)
