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

from autograder.authoring import unit_checks

TOPICS = sorted(MATRIX)


@pytest.mark.parametrize("topic", TOPICS)
def test_every_clause_has_a_test_and_a_mutant_it_catches_and_every_mutant_one_clause(topic):
    """The rules of `python -m autograder check` (autograder/authoring/unit_checks.py), which
    every unit gets: a clause for every function, a kind, a test of the rubric and mutants
    among whose killers the test is, and every mutant in exactly one clause."""
    assert unit_checks.clause_problems(UNIT, {topic: MATRIX[topic]}) == []


def test_the_clause_rules_fail_on_a_broken_table():
    topic = TOPICS[0]
    spec = MATRIX[topic]
    mutant = spec["mutants"][0]["name"]
    broken = {**spec, "clauses": [{**c, "mutants": [*c["mutants"], mutant]} if i == 1 else c
                                  for i, c in enumerate(spec["clauses"])]}
    assert any("claimed by two clauses" in p for p in unit_checks.clause_problems(UNIT, {topic: broken}))
    unclaimed = {**spec, "clauses": [{**c, "mutants": [m for m in c["mutants"] if m != mutant]}
                                     for c in spec["clauses"]]}
    assert any("break no clause" in p or "no mutant breaks it" in p
               for p in unit_checks.clause_problems(UNIT, {topic: unclaimed}))
    assert any("no clause for" in p for p in unit_checks.clause_problems(UNIT, {topic: {**spec, "clauses": []}}))


@pytest.mark.parametrize("topic", TOPICS)
def test_a_mutant_is_not_charged_in_the_tests_of_another_function(topic):
    """A mutant's own `not_charged_in` names tests of its topic where its mistake must cost
    nothing (a test of a relation between two functions compares with the student's own other
    function); test_kill_matrix.py grades the mutant on them and requires them passed."""
    tests = {str(t.id) for t in UNIT.rubric.topic(topic).tests}
    for m in MATRIX[topic]["mutants"]:
        spared = m.get("not_charged_in") or []
        assert isinstance(spared, list), f"{topic}: {m['name']}: not_charged_in is a list of tests"
        assert set(spared) <= tests, f"{topic}: {m['name']}: not_charged_in names unknown tests {sorted(set(spared) - tests)}"
        assert not set(spared) & set(m["killed_by"]), f"{topic}: {m['name']}: a test both catches it and spares it"
