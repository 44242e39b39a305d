"""The kill matrix under ten seeds (`make sweep`): scores do not depend on the draw.

Every mutant loses exactly the same points, test by test, under each of SEEDS, the tests
that must catch it fail under all of them, the tests of another function it names (its own
`not_charged_in`) pass under all of them, and no hidden test charges it again in the topics
that call its topic (the topic's `not_charged_in`); every valid alternative keeps full marks on every
topic under all of them. Two students with the same bug get the same mark, whatever seed their
files give.
"""

from __future__ import annotations

import pytest
from helpers import CASES, MATRIX, grade_class, kill_matrix_class

SEEDS = (1, 2, 3, 5, 8, 13, 21, 34, 55, 20261129)


@pytest.fixture(scope="module")
def graded_per_seed(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    plan = kill_matrix_class(root)
    return {seed: grade_class(root, tmp_path_factory.mktemp(f"seed{seed}"), plan, "--seed", str(seed))
            for seed in SEEDS}


def _points(score: dict) -> dict:
    return {f"{t['id']}::{test['id']}": (test["earned"], test["outcome"] == "passed")
            for t in score["topics"] for test in t["tests"]}


PARAMS = [pytest.param(t, k, n, id=f"{t}:{k}:{n}") for t, k, n in CASES]


@pytest.mark.sweep
@pytest.mark.parametrize("topic,kind,name", PARAMS)
def test_same_points_under_every_seed(graded_per_seed, topic, kind, name):
    per_seed = {seed: _points(scores[kind, name]) for seed, scores in graded_per_seed.items()}
    if kind == "alternative":
        assert all({t["id"] for t in scores[kind, name]["topics"]} == set(MATRIX)
                   for scores in graded_per_seed.values()), "an alternative is graded on every topic"
        lost = {seed: sorted(k for k, (_, ok) in pts.items() if not ok) for seed, pts in per_seed.items()}
        assert not any(lost.values()), f"a valid alternative lost points under some seeds: {lost}"
        return
    first_seed, first = next(iter(per_seed.items()))
    differ = {seed: sorted(k for k in pts if pts[k] != first.get(k)) for seed, pts in per_seed.items() if pts != first}
    assert not differ, f"mutant {name} scores differently under seed {first_seed} and under {differ}"
    mutant = next(m for m in MATRIX[topic]["mutants"] if m["name"] == name)
    for test_id in mutant["killed_by"]:
        assert not first[f"{topic}::{test_id}"][1], f"{test_id} does not catch {name} under every seed"
    for test_id in mutant.get("not_charged_in", []):
        assert first[f"{topic}::{test_id}"][1], f"{test_id}, a test of another function, charges {name} again"
    for other in MATRIX[topic].get("not_charged_in", []):
        charged = {seed: sorted(k for k, (_, ok) in pts.items() if k.startswith(f"{other}::hidden::") and not ok)
                   for seed, pts in per_seed.items()}
        assert not any(charged.values()), f"mutant {name} of {topic} is charged again in {other}: {charged}"
