"""Every clause of every docstring is graded: the clause tables of topics/<topic>/mutants.yaml.

A topic's `clauses:` list what the docstrings of its functions promise (allowed inputs,
outputs, shapes, dtypes, mutation, identity, warnings, ties, errors), one entry per clause:

    clauses:
      - function: corpus_bleu
        kind: tie
        clause: of two equally close reference lengths the shorter is r, whichever is listed first
        test: hidden::test_closest_reference_length_tie_shorter
        mutants: [tie_by_list_order, closest_reference_tie_longer]

Each clause names the test that checks it and the mutants of the kill matrix that break it
(test_kill_matrix.py proves that the test catches them). A mutant breaks one clause only,
and every mutant breaks one: a mutant no clause claims is a clause the table forgot.
"""

from __future__ import annotations

import pytest
from helpers import MATRIX, UNIT

KINDS = {"input", "output", "shape", "dtype", "mutation", "identity", "warning", "tie", "error"}
TOPICS = sorted(MATRIX)


@pytest.mark.parametrize("topic", TOPICS)
def test_every_function_has_a_clause_table(topic):
    clauses = MATRIX[topic].get("clauses") or []
    functions = set(UNIT.topic(topic).functions)
    covered = {c.get("function") for c in clauses}
    assert functions <= covered, f"{topic}: no clause for {sorted(functions - covered)}"
    assert covered <= functions, f"{topic}: clauses of unknown functions {sorted(covered - functions)}"


@pytest.mark.parametrize("topic", TOPICS)
def test_every_clause_has_a_test_and_a_mutant_it_catches(topic):
    tests = {t.id for t in UNIT.rubric.topic(topic).tests}
    mutants = {m["name"]: m for m in MATRIX[topic]["mutants"]}
    for c in MATRIX[topic].get("clauses") or []:
        where = f"{topic}: {c.get('function')}: {c.get('clause')!r}"
        assert c.get("clause") and c.get("kind") in KINDS, f"{where}: a clause needs its text and a kind of {KINDS}"
        assert c.get("test") in tests, f"{where}: no test checks it (test {c.get('test')!r} is not in the rubric)"
        assert c.get("mutants"), f"{where}: no mutant breaks it"
        for name in c["mutants"]:
            assert name in mutants, f"{where}: unknown mutant {name}"
            assert c["test"] in mutants[name]["killed_by"], f"{where}: {c['test']} is not among {name}'s killers"


@pytest.mark.parametrize("topic", TOPICS)
def test_every_mutant_breaks_exactly_one_clause(topic):
    claimed = [name for c in MATRIX[topic].get("clauses") or [] for name in c.get("mutants") or []]
    twice = sorted({name for name in claimed if claimed.count(name) > 1})
    unclaimed = sorted({m["name"] for m in MATRIX[topic]["mutants"]} - set(claimed))
    assert not twice, f"{topic}: mutants claimed by two clauses: {twice}"
    assert not unclaimed, f"{topic}: mutants that break no clause of the table: {unclaimed}"


@pytest.mark.parametrize("topic", TOPICS)
def test_a_mutant_is_not_charged_in_the_tests_of_another_function(topic):
    """A mutant's own `not_charged_in` names tests of its topic where its mistake must cost
    nothing (a test of a relation between two functions compares with the student's own other
    function); test_kill_matrix.py grades the mutant on them and requires them passed."""
    tests = {t.id for t in UNIT.rubric.topic(topic).tests}
    for m in MATRIX[topic]["mutants"]:
        spared = m.get("not_charged_in") or []
        assert isinstance(spared, list), f"{topic}: {m['name']}: not_charged_in is a list of tests"
        assert set(spared) <= tests, f"{topic}: {m['name']}: not_charged_in names unknown tests {sorted(set(spared) - tests)}"
        assert not set(spared) & set(m["killed_by"]), f"{topic}: {m['name']}: a test both catches it and spares it"
