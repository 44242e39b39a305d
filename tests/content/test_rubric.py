"""The rubric matches the suites: every graded test exists, every test is graded, and the
README's points table is the rubric's (points are edited in the rubric only)."""

import ast
import re
import subprocess
import sys

import pytest
from helpers import REPO, UNIT

from autograder.unit import rubric as rubric_mod


def defined_tests(path):
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


RUBRIC = UNIT.rubric


@pytest.mark.parametrize("topic", RUBRIC.topics, ids=lambda t: t.id)
def test_rubric_and_suites_agree(topic):
    for visibility in ("public", "hidden"):
        path = UNIT.test_file(topic.id, visibility)
        listed = {t.test for t in topic.tests if t.visibility == visibility}
        present = defined_tests(path) if path.exists() else set()
        assert listed == present, (f"{topic.id}/{visibility}: in the rubric only {sorted(listed - present)}, "
                                   f"in {path.name} only {sorted(present - listed)}")
    assert topic.points > 0
    public = sum(t.points for t in topic.tests if t.visibility == "public")
    assert 0 < public < topic.points, "each topic has public and hidden points"


def test_every_topic_is_in_the_rubric():
    assert [t.id for t in RUBRIC.topics] == [t.id for t in UNIT.topics]
    assert RUBRIC.points > 0


def test_every_suite_file_belongs_to_a_topic():
    topics = {t.id for t in UNIT.topics}
    for path in UNIT.dirs["public_tests"].glob("test_*.py"):
        assert path.stem.removeprefix("test_") in topics, path
    for path in UNIT.dirs["topics"].glob("*/test_hidden.py"):
        assert path.parent.name in topics, path


def test_readme_points_table_is_the_rubrics():
    """The README's table (module | topic | points) lists every topic with its rubric points."""
    rows = re.findall(r"^\s*\| `(\w+)\.py` \| .*? \| ([\d.]+) \|$", (REPO / "README.md").read_text(), re.M)
    assert rows, "the README has no points table"
    assert [(m, float(p)) for m, p in rows] == [(t.module, RUBRIC.topic(t.id).points) for t in UNIT.topics]


def test_readme_table_of_topics_is_generated_from_the_topic_folders():
    """Adding a topic never means editing the README: its table is written from topic.yaml's
    `summary` and the rubric (scripts/make_readme_table.py), and this fails on drift."""
    proc = subprocess.run([sys.executable, "scripts/make_readme_table.py", "--check"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(t.summary for t in UNIT.topics), "every topic.yaml has a summary"


def test_rubric_errors_are_loud(tmp_path):
    (tmp_path / "bptt.yaml").write_text("topic: bptt\npoints: 3\ntests:\n"
                                        "  - {test: test_a, visibility: public, points: 1, hint: h}\n")
    with pytest.raises(rubric_mod.RubricError, match="!= sum"):
        rubric_mod.load_rubric({"bptt": tmp_path / "bptt.yaml"})
    (tmp_path / "bptt.yaml").write_text("topic: bptt\npoints: 1\ntests:\n"
                                        "  - {test: test_a, visibility: secret, points: 1, hint: h}\n")
    with pytest.raises(rubric_mod.RubricError, match="visibility"):
        rubric_mod.load_rubric({"bptt": tmp_path / "bptt.yaml"})
    (tmp_path / "bptt.yaml").write_text("topic: nope\npoints: 0\ntests: []\n")
    with pytest.raises(rubric_mod.RubricError, match="unknown topic"):
        rubric_mod.load_rubric({"bptt": tmp_path / "bptt.yaml"})
    (tmp_path / "bptt.yaml").unlink()
    with pytest.raises(rubric_mod.RubricError, match="no rubric file"):
        rubric_mod.load_rubric({"bptt": tmp_path / "bptt.yaml"})
