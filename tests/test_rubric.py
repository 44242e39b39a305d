"""The rubric matches the suites: every graded test exists, every test is graded."""

import ast

import pytest

from autograder import api, paths
from autograder import rubric as rubric_mod

SPEC_POINTS = {"bptt": 20, "gate_derivative": 10, "gru_lstm_step": 20, "fault_injection": 15,
               "beam_attribution": 15, "bleu": 15, "attention": 5}


def defined_tests(path):
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


RUBRIC = rubric_mod.load()


@pytest.mark.parametrize("topic", RUBRIC.topics, ids=lambda t: t.id)
def test_rubric_and_suites_agree(topic):
    for visibility, path in topic.test_files().items():
        listed = {t.test for t in topic.tests if t.visibility == visibility}
        present = defined_tests(path) if path.exists() else set()
        assert listed == present, (f"{topic.id}/{visibility}: in the rubric only {sorted(listed - present)}, "
                                   f"in {path.name} only {sorted(present - listed)}")
    assert topic.points == SPEC_POINTS[topic.id]
    public = sum(t.points for t in topic.tests if t.visibility == "public")
    assert 0 < public < topic.points, "each topic has public and hidden points"


def test_every_topic_is_in_the_rubric_and_totals_100():
    assert [t.id for t in RUBRIC.topics] == list(api.TOPICS)
    assert RUBRIC.points == 100


def test_every_suite_file_belongs_to_a_topic():
    for folder in (paths.HIDDEN_TESTS, paths.PUBLIC_TESTS):
        for path in folder.glob("test_*.py"):
            assert path.stem.removeprefix("test_") in api.TOPICS, path


def test_rubric_errors_are_loud(tmp_path):
    (tmp_path / "_assignment.yaml").write_text("assignment: x\ntopics: [bptt]\n")
    (tmp_path / "bptt.yaml").write_text("topic: bptt\npoints: 3\ntests:\n"
                                        "  - {test: test_a, visibility: public, points: 1, hint: h}\n")
    with pytest.raises(rubric_mod.RubricError, match="!= sum"):
        rubric_mod.load(tmp_path)
    (tmp_path / "bptt.yaml").write_text("topic: bptt\npoints: 1\ntests:\n"
                                        "  - {test: test_a, visibility: secret, points: 1, hint: h}\n")
    with pytest.raises(rubric_mod.RubricError, match="visibility"):
        rubric_mod.load(tmp_path)
    (tmp_path / "bptt.yaml").write_text("topic: nope\npoints: 0\ntests: []\n")
    with pytest.raises(rubric_mod.RubricError, match="unknown topic"):
        rubric_mod.load(tmp_path)
