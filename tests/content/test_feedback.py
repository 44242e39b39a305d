"""Feedback that names the real mistake, in the student's own terms."""

from __future__ import annotations

import re

from helpers import STUBS, grade, make_submission, results_by_id


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


def test_an_untouched_stub_is_one_line_per_topic(stubs_graded):
    score, out, _stdout = stubs_graded
    md = (out / "score.md").read_text()
    assert all(t["status"] == "not_implemented" for t in score["topics"])
    assert not re.search(r"^- \*\*", md, re.M), "no per-test list for a topic where nothing is implemented"
    for t in score["topics"]:
        assert md.count(f"### `{t['id']}`") == 1, t["id"]
    assert md.count("fill in the TODOs") == len(score["topics"])
    assert len(md.encode()) < 3000, f"score.md of untouched stubs is {len(md.encode())} bytes"


def test_one_message_shared_by_many_tests_is_shown_once(tmp_path):
    sub = make_submission(tmp_path / "sub", replace={"attention.py": [
        ("    ### BEGIN SOLUTION\n", "    ### BEGIN SOLUTION\n    raise ValueError('shapes: mine')\n")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "attention")
    assert proc.returncode == 0, proc.stderr
    (topic,) = score["topics"]
    assert all(t["outcome"] == "error" for t in topic["tests"]) and len(topic["tests"]) > 2
    md = (tmp_path / "out" / "score.md").read_text()
    assert md.count("raised ValueError: shapes: mine") == 1, md
    line = next(x for x in md.splitlines() if "raised ValueError" in x)
    assert all(f"**{t['id']}**" in line for t in topic["tests"]), line


def _failed(score):
    return [t for x in score["topics"] for t in x["tests"] if t["outcome"] != "passed"]


def test_a_crash_gets_a_hint_about_the_crash_not_the_math(tmp_path):
    """Python 2's / in a slice index: every attention test errors, and the hint says // (the
    rubric's hints are about softmax and masking, which the code never reached)."""
    from helpers import UNIT

    sub = make_submission(tmp_path / "sub", replace={"attention.py": [
        ("    ### BEGIN SOLUTION\n", "    ### BEGIN SOLUTION\n    half = H[:, : H.shape[1] / 2]\n")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "attention")
    assert proc.returncode == 0, proc.stderr
    failed = _failed(score)
    rubric_hints = {t.hint for t in UNIT.rubric.topic("attention").tests}
    assert failed and all(t["outcome"] == "error" for t in failed)
    assert all("use a // b for integer division" in t["hint"] for t in failed), [t["hint"] for t in failed]
    assert not any(t["hint"] in rubric_hints for t in failed)


def test_a_shape_error_gets_a_hint_about_shapes(tmp_path):
    """rnn_step_forward returning next_h flattened: the tests that check it fail on the shape,
    and the hint is about shapes (not about tanh or the recurrence)."""
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [
        ("    return next_h, cache\n", "    return next_h.reshape(-1), cache\n")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    assert proc.returncode == 0, proc.stderr
    shaped = [t for t in _failed(score) if "has shape" in t["message"]]
    assert shaped, _failed(score)
    assert all(t["hint"].startswith("The result has the wrong type, shape or structure") for t in shaped), shaped


# ------------------------------------------------- input mutation, one function at a time
BPTT_STEP_SCALES_DNEXT_H = ("    da = dnext_h * (1 - next_h**2)\n", "    dnext_h *= 1 - next_h**2\n    da = dnext_h\n")
BPTT_TRUNCATED_CRASHES = ("    T = dh.shape[1]\n    dx = dh0 = dWx = dWh = db = None\n",
                          "    T = dh.shape[1]\n    dx = dh0 = dWx = dWh = db = None\n    T = T / k * k\n"
                          "    range(T)\n")


def test_an_in_place_backward_step_is_named_and_a_crash_elsewhere_is_not_charged(tmp_path):
    """rnn_step_backward scales dnext_h in place (its results stay right, and rnn_backward
    passes it a temporary, so only the mutation check can see it), and rnn_backward_truncated
    crashes: the mutation test names rnn_step_backward's dnext_h, and says nothing of the crash."""
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [BPTT_STEP_SCALES_DNEXT_H, BPTT_TRUNCATED_CRASHES]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    assert proc.returncode == 0, proc.stderr
    tests = results_by_id(score, "bptt")
    test = tests["hidden::test_no_input_mutation"]
    assert test["outcome"] == "failed", test
    assert test["message"].startswith("rnn_step_backward modified its argument dnext_h in place"), test["message"]
    assert "truncated" not in test["message"] and "TypeError" not in test["message"], test["message"]
    assert tests["hidden::test_rnn_backward_truncated_matches_definition"]["outcome"] == "error"
    assert tests["hidden::test_rnn_step_backward_matches_finite_differences"]["outcome"] == "passed"


def test_a_crash_costs_its_own_tests_not_the_mutation_point(tmp_path):
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [BPTT_TRUNCATED_CRASHES]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    assert proc.returncode == 0, proc.stderr
    tests = results_by_id(score, "bptt")
    assert tests["hidden::test_rnn_backward_truncated_matches_definition"]["outcome"] == "error"
    assert tests["hidden::test_no_input_mutation"]["outcome"] == "passed", tests["hidden::test_no_input_mutation"]


def test_a_stub_topic_earns_no_mutation_point(tmp_path):
    """Every function of the topic still raises NotImplementedError: nothing was checked, so
    the mutation test is not passed for free."""
    proc, score = grade(STUBS, tmp_path / "out", "--topic", "gru_lstm_step")
    assert proc.returncode == 0, proc.stderr
    test = results_by_id(score, "gru_lstm_step")["hidden::test_gru_lstm_do_not_mutate_inputs"]
    assert test["outcome"] != "passed" and test["earned"] == 0, test


# ------------------------------------------------- misconceptions named on a wrong value
def _messages(score, topic):
    """Messages of the failed tests; each names only what the student has (their own functions
    and arguments), never material they do not have."""
    failed = {i: t for i, t in results_by_id(score, topic).items() if t["outcome"] != "passed"}
    for i, t in failed.items():
        for banned in ("the reference solution", "the reference implementation", "SPEC", "sacrebleu", "seed"):
            assert banned not in t["message"] and banned not in t["hint"], (i, banned, t["message"], t["hint"])
    return {i: t["message"] for i, t in failed.items()}


def test_attention_softmax_over_the_batch_axis_is_named(tmp_path):
    """A softmax over axis 0 used to be told to subtract the row maximum (the huge-scores
    test); every hidden test that sees it now says the weights sum to 1 over the batch axis."""
    sub = make_submission(tmp_path / "sub", replace={"attention.py": [
        ("    row_max = e.max(axis=1, keepdims=True)\n", "    row_max = e.max(axis=0, keepdims=True)\n"),
        ("    denom = w.sum(axis=1, keepdims=True)", "    denom = w.sum(axis=0, keepdims=True)")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "attention")
    assert proc.returncode == 0, proc.stderr
    failed = _messages(score, "attention")
    for test in ("test_additive_attention_matches_reference", "test_masked_positions_get_exactly_zero_weight",
                 "test_softmax_stable_for_huge_scores"):
        message = failed[f"hidden::{test}"]
        assert "must sum to 1 over the source positions" in message, message
        assert "a softmax over the batch axis (axis 0)" in message, message
        assert "subtract the row maximum" not in message, message
    assert "hidden::test_no_input_mutation" not in failed, "a wrong value is not an in-place change"


def test_bleu_phantom_ngram_of_a_short_hypothesis_is_named(tmp_path):
    """Pooling max(1, total) per sentence (nltk's corpus_bleu) used to be told it averaged
    sentence BLEUs; the report now names the phantom n-gram of a hypothesis shorter than n."""
    sub = make_submission(tmp_path / "sub", replace={"bleu.py": [
        ("            totals[n - 1] += t\n", "            totals[n - 1] += max(1, t)\n")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "bleu")
    assert proc.returncode == 0, proc.stderr
    failed = _messages(score, "bleu")
    for test in ("test_corpus_bleu_pools_statistics", "test_smoothing_modes_edge_cases"):
        message = failed[f"hidden::{test}"]
        assert "a hypothesis shorter than n has no n-gram of order n" in message, message
        assert "max(1, ...) on the precision's denominator" in message, message
    hint = results_by_id(score, "bleu")["hidden::test_corpus_bleu_pools_statistics"]["hint"]
    assert not hint.startswith("Corpus BLEU is not the mean of sentence BLEUs"), hint


def test_bleu_add_one_on_every_order_is_named(tmp_path):
    """Add-one smoothing of the unigrams too (TensorFlow NMT's compute_bleu) is named as such."""
    sub = make_submission(tmp_path / "sub", replace={"bleu.py": [
        ('if smooth == "add-k" and n > 1:', 'if smooth == "add-k":')]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "bleu")
    assert proc.returncode == 0, proc.stderr
    failed = _messages(score, "bleu")
    for test in ("test_smoothing_modes_edge_cases", "test_corpus_bleu_matches_reference_random"):
        message = failed[f"hidden::{test}"]
        assert "add-one smoothing on every order, (matches + 1) / (total + 1) for the unigrams too" in message, \
            message
