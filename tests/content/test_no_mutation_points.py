"""The hidden no-mutation tests pay only a function that computes its outputs (issue 24.4b):
a stub that returns zeros changes nothing either, and must not earn those points."""

from __future__ import annotations

import numpy as np
from helpers import grade, make_submission, results_by_id

from autograder.authoring.checks import _computes

ZEROS = '''import numpy as np


def additive_attention(s_prev, H, Wa, Ua, va, mask=None):
    return np.zeros((H.shape[0], H.shape[2])), np.zeros(H.shape[:2])
'''


def test_a_stub_returning_zeros_earns_no_no_mutation_point(tmp_path):
    sub = make_submission(tmp_path / "sub", files={"attention.py": ZEROS})
    _proc, score = grade(sub, tmp_path / "out", "--test", "attention::hidden::test_no_input_mutation")
    test = results_by_id(score, "attention")["hidden::test_no_input_mutation"]
    assert test["outcome"] == "failed" and "only zeros" in test["message"], test


def test_the_reference_keeps_its_no_mutation_point(tmp_path):
    sub = make_submission(tmp_path / "sub")
    _proc, score = grade(sub, tmp_path / "out", "--test", "attention::hidden::test_no_input_mutation")
    assert results_by_id(score, "attention")["hidden::test_no_input_mutation"]["outcome"] == "passed"


def test_what_counts_as_computed():
    x = np.arange(1.0, 5.0)
    assert _computes((x * 2, None), (x,))
    assert not _computes((np.zeros(3), 0.0), (x,))
    assert not _computes(x, (x,))                    # an argument handed back
    assert _computes(("opaque-handle",), (x,))     # nothing to judge: not charged here
