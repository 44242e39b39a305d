"""The grader never blocks on a worker, and what it computes for student code is bounded: a
worker that stops reading its pipe, and a lent stand-in handed huge inputs (both through the
causality suite, which lends the correct rnn_forward to birnn_forward's call). Only birnn's
tests lose points; the grading ends in seconds and the grader's memory stays small; in
`batch` (make sweep) the stalling row loses only that topic."""

from __future__ import annotations

import pytest
from harness import expect_full_marks, payload, points, results_of

BIRNN_CALLS = "birnn_forward"


def birnn_failures(score) -> dict:
    return {i: t for i, t in results_of(score, "causality").items()
            if t["outcome"] != "passed" and BIRNN_CALLS in t["message"]}


def test_a_worker_that_stops_reading_its_pipe_costs_its_test_not_the_grader(case):
    sub = case.submission("sub", append={"causality.py": payload("ask_and_never_read")})
    graded = case.grade(sub, "causality", "attention", within=40)
    expect_full_marks(graded.score, "attention")
    failed = birnn_failures(graded.score)      # (the public test lends nothing: no token, an error)
    assert any(t["outcome"] == "timeout" and "slept or waited" in t["message"] for t in failed.values()), \
        results_of(graded.score, "causality")


def test_a_stand_in_handed_huge_inputs_refuses_them(case):
    sub = case.submission("sub", append={"causality.py": payload("huge_stand_in_inputs")})
    graded = case.grade(sub, "causality", "attention", within=30)
    expect_full_marks(graded.score, "attention")
    failed = birnn_failures(graded.score)
    # every test that lends rnn_forward (the hidden ones) hears why, whatever the machine's load
    # (the payload attacks only where rnn_forward is lent: its own slow call timed out under load)
    assert failed and all("lent to your code was handed" in t["message"] for t in failed.values()), \
        results_of(graded.score, "causality")
    assert all(i.startswith("hidden::") for i in failed), sorted(failed)
    assert graded.run.maxrss_kb < 400 * 1024, f"peak memory {graded.run.maxrss_kb >> 10} MiB"


@pytest.mark.sweep
def test_a_batch_row_that_stalls_the_grader_loses_only_the_attacked_topic(case):
    """The same stall in `batch`: the row is graded (not a submission timeout that costs every
    topic), only causality loses points, and the classmate graded beside it is untouched."""
    root = case.dir / "class"
    case.submission("class/stall", append={"causality.py": payload("ask_and_never_read")})
    case.submission("class/honest")
    _, _, rows = case.batch(root, "--topic", "causality", "--topic", "attention", within=60)
    for name, causality in (("stall", lambda e: e < points("causality")), ("honest", lambda e: e == points("causality"))):
        row = rows[name]
        assert row["status"] == "graded" and row["causality_status"] == "graded", row
        assert float(row["attention"]) == points("attention") and causality(float(row["causality"])), row
