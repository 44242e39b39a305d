"""The kill matrix: every hidden suite catches known wrong implementations and passes valid
alternatives (topics/<topic>/mutants.yaml of the unit, format in docs/AUTHORING.md).

Mutants are graded on the tests of their topic that must catch them, and on the tests of a
relation between two of its functions where they must cost nothing (the mutant's own
`not_charged_in`: a mistake of rnn_backward is not charged again in the test that truncated
BPTT with k >= T equals the student's full pass); alternatives on their topic and the topics
that call it (the topic's `not_charged_in`: the lab calls bptt), all in one
real `python -m autograder batch --plan` run, so this exercises the class-grading path too.
test_kill_matrix_seeds.py (`make sweep`) grades mutants on their whole topic and on the
topics where they must cost nothing (`not_charged_in`), and alternatives on the whole unit,
under ten seeds: a mutant scores the same under each, is not charged again where its topic
is called, and an alternative keeps full marks on every topic.

A mutant's `diagnosis` (a phrase of the message that names its mistake) must be in the
message of one of its killing tests, and no killing test may name another mistake of its
topic: a diagnosis is said only when the suite checked it on the student's numbers.
"""

from __future__ import annotations

import ast

import pytest
from helpers import (
    CASES,
    KILL_MATRIX_TOPICS,
    MATRIX,
    SOLUTIONS,
    STUBS,
    UNIT,
    grade_class,
    graded_tests,
    kill_matrix_class,
)

from autograder.authoring import unit_checks


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(kind, name) -> score.json, from one batch run at the seed each submission's files give."""
    root = tmp_path_factory.mktemp("class")
    plan = kill_matrix_class(root, killing_tests_only=True)
    scores = grade_class(root, tmp_path_factory.mktemp("reports"), plan)
    assert len(scores) == len(CASES), f"graded {len(scores)} of {len(CASES)} submissions"
    return scores


def named_diagnoses(topic: str, mutant: dict, tests: list) -> list:
    """The diagnoses of `topic`'s mutants that the messages of `tests` name: the mutant's own
    only where a test classed its failure as diagnosed; another mutant's wherever it appears."""
    own = mutant.get("diagnosis")
    phrases = {m["diagnosis"] for m in MATRIX[topic]["mutants"] if m.get("diagnosis")} - {own}
    named = [p for p in sorted(phrases) if any(p in t["message"] for t in tests)]
    if own and any(own in t["message"] and t["kind"] == "diagnosed" for t in tests):
        named.insert(0, own)
    return named


def test_diagnosis_precision(graded, capsys):
    """The rate of catalogued mutants whose report names their own mistake and no other."""
    mutants = [(topic, m) for topic in KILL_MATRIX_TOPICS for m in MATRIX[topic]["mutants"]]
    right = [m["name"] for topic, m in mutants if "diagnosis" in m and named_diagnoses(
        topic, m, next(t for t in graded["mutant", m["name"]]["topics"] if t["id"] == topic)["tests"])
        == [m["diagnosis"]]]
    with capsys.disabled():
        print(f"\ndiagnosis precision: {len(right)} of {len(mutants)} catalogued mutants are told their own "
              f"mistake and no other ({100 * len(right) / len(mutants):.0f} %)")
    assert len(right) == sum("diagnosis" in m for _topic, m in mutants)


def test_every_topic_has_a_kill_matrix():
    """The rules of `python -m autograder check` (at least 3 mutants and one alternative per
    topic, edits that apply, known tests), which every unit gets."""
    topics = {t.id for t in UNIT.topics}
    assert set(MATRIX) == topics, f"missing: {sorted(topics - set(MATRIX))}"
    assert unit_checks.matrix_problems(UNIT, unit_checks.load_matrix(UNIT)) == []


@pytest.mark.parametrize("topic,kind,name", CASES, ids=[f"{t}:{k}:{n}" for t, k, n in CASES])
def test_kill_matrix(graded, topic, kind, name):
    score = graded[kind, name]
    if kind == "alternative":
        callers = MATRIX[topic].get("not_charged_in", [])
        assert {t["id"] for t in score["topics"]} == {topic, *callers}, "graded on its topic and those calling it"
        wrong = {f"{t['id']}: {test['id']}": test["message"] for t in score["topics"] for test in t["tests"]
                 if test["outcome"] != "passed"}
        assert not wrong, f"a valid alternative lost points: {wrong}"
        return
    entry = next(t for t in score["topics"] if t["id"] == topic)
    mutant = next(m for m in MATRIX[topic]["mutants"] if m["name"] == name)
    assert sorted(test["id"] for test in entry["tests"]) == sorted(graded_tests(mutant)), \
        "graded on its killing tests and its not_charged_in tests"
    tests = {t["id"]: t for t in entry["tests"]}
    charged = {test_id: tests[test_id]["message"] for test_id in mutant.get("not_charged_in", [])
               if tests[test_id]["outcome"] != "passed"}
    assert not charged, f"mutant {name} ({mutant['misconception']}) is charged again in a test of another function: {charged}"
    assert named_diagnoses(topic, mutant, entry["tests"]) == ([mutant["diagnosis"]] if "diagnosis" in mutant else []), \
        f"mutant {name} ({mutant['misconception']}) is told: {[t['message'] for t in entry['tests']]}"
    assert entry["earned"] < entry["possible"], f"mutant {name} got full marks"
    for test_id in mutant["killed_by"]:
        assert test_id in tests, f"killed_by names an unknown test {test_id}"
        assert tests[test_id]["outcome"] != "passed", f"{test_id} did not catch {name} ({mutant['misconception']})"
        assert tests[test_id]["hint"] or tests[test_id]["message"], f"{test_id} fails without a message or hint"


def _names_used(path) -> set[str]:
    """The fixtures a suite's functions ask for, and the modules a module imports."""
    tree = ast.parse(path.read_text())
    return {arg.arg for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) for arg in node.args.args} | \
        {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names} | \
        {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


def test_a_module_is_used_only_by_its_topic_and_the_topics_that_call_it():
    """Why an alternative need not be graded on every topic in `make test`: a topic's suites
    ask for another topic's module (a fixture named after it), and its module (the reference
    or the stub) imports one, only where that topic's `not_charged_in` names it as a caller."""
    modules = {UNIT.topic(topic).module: topic for topic in MATRIX}
    for topic in MATRIX:
        module = UNIT.topic(topic).module
        files = [UNIT.dirs["topics"] / topic / "test_hidden.py", UNIT.dirs["public_tests"] / f"test_{topic}.py",
                 SOLUTIONS / f"{module}.py", STUBS / f"{module}.py"]
        for path in files:
            for used in _names_used(path) & set(modules) - {module}:
                owner = modules[used]
                assert topic in MATRIX[owner].get("not_charged_in", []), \
                    f"{path.name} of {topic} uses {used}.py: add {topic} to {owner}'s not_charged_in"
