"""Containment, round four (issue 37, point 2): nothing the suite hands to student code knows the
answer, and nothing the suite does lets student code tell a test from a normal run.

- A sequence map handed to the student's `dependency_matrix` is lent (a callable f(x) -> y and
  nothing more): its exact Jacobian stays in the grader, like bptt's CubicForm.
- The measured causality test's probes vary (random steps, random order, several inputs moved at
  once, an input repeated): a map that spots one moved input and copies earlier outputs fails.
- attention_decode's cache is judged with the student's own step too (isolation/follow.py), so a
  loop that behaves only when its step is the grader's stand-in gains nothing.

Every case runs in both of the harness's modes (root, and `runuser -u nobody` over a copy),
through the `case` fixture (conftest.py): reports inert, nothing changed, no process left.
"""

from __future__ import annotations

from harness import expect_full_marks, payload, points, results_of, topic

# The tests of causality that call dependency_matrix on a sequence map and judge its values.
CALLS_DEPENDENCY_MATRIX = {"public::test_causality_fixed_vector", "hidden::test_dependency_matrix_and_first_leak"}


def test_dependency_matrix_cannot_read_the_maps_jacobian(case):
    """The issue's attack: a dependency_matrix that returns the map's own dependency (or computes it
    from the map's fields) earned both tests that judge it; the map is now a plain callable."""
    sub = case.submission("sub", append={"causality.py": payload("dependency_of_f")})
    graded = case.grade(sub, "causality", "attention")
    expect_full_marks(graded.score, "attention")
    results = results_of(graded.score, "causality")
    outcomes = {tid: results[tid]["outcome"] for tid in CALLS_DEPENDENCY_MATRIX}
    assert all(outcome != "passed" for outcome in outcomes.values()), outcomes
    assert topic(graded.score, "causality")["earned"] <= points("causality") - points("causality", CALLS_DEPENDENCY_MATRIX)


def test_measured_causality_cannot_be_faked_by_spotting_the_probes(case):
    """A self_attention with no mask that copies the outputs before s whenever an input it saw comes
    back with only x_s moved passed the measured causality test (one input moved at a time, by the
    same step, in order); the probes now move several inputs at once, by random steps, in a random
    order, and repeat inputs."""
    sub = case.submission("sub", append={"causality.py": payload("detect_probes")})
    graded = case.grade(sub, "causality", "attention")
    expect_full_marks(graded.score, "attention")
    measured = results_of(graded.score, "causality")["hidden::test_causal_maps_read_no_future_and_the_others_do"]
    assert measured["outcome"] != "passed", measured


def test_a_decoder_cannot_pass_its_cache_on_only_when_its_step_is_lent(case):
    """An attention_decode that rebuilds its cache except when the step it calls is the grader's
    stand-in earned 7/7 (6/7 without the detection): the loop is now also judged with the
    student's own step, by what that step is handed (the same arrays its previous call returned)."""
    sub = case.submission("sub", append={"inference_cost.py": payload("rebuild_unless_lent")})
    graded = case.grade(sub, "inference_cost", "attention")
    expect_full_marks(graded.score, "attention")
    judged = results_of(graded.score, "inference_cost")["hidden::test_the_cache_is_extended_not_rebuilt"]
    assert judged["outcome"] != "passed", judged
    assert topic(graded.score, "inference_cost")["earned"] == points("inference_cost") - points(
        "inference_cost", {"hidden::test_the_cache_is_extended_not_rebuilt"}), results_of(graded.score, "inference_cost")
