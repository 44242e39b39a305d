"""Feedback that names the real mistake, in the student's own terms."""

from __future__ import annotations

from helpers import grade, make_submission


def test_an_input_changed_in_place_is_named_as_the_student_named_it(tmp_path):
    """lstm_step_backward(dnext_h, dnext_c, cache) that scales dnext_c in place: the message
    names dnext_c (not a position, which read as dnext_h)."""
    sub = make_submission(tmp_path / "sub", replace={"gru_lstm.py": [(
        "    x, prev_h, prev_c, Wx, Wh, i, f, o, g, tanh_c = cache\n    dc = dnext_c + ",
        "    x, prev_h, prev_c, Wx, Wh, i, f, o, g, tanh_c = cache\n    dnext_c *= 1.5\n    dc = dnext_c + ")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "gru_lstm_step")
    assert proc.returncode == 0, proc.stderr
    test = next(t for x in score["topics"] for t in x["tests"] if t["id"] == "hidden::test_gru_lstm_do_not_mutate_inputs")
    assert test["outcome"] == "failed"
    assert "lstm_step_backward modified its argument dnext_c in place" in test["message"], test["message"]
