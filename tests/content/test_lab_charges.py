"""One mistake, one charge: the fault-injection lab is graded on measuring faithfully with
the student's own primitives, so a primitive's mistake costs points in its own tests only."""

from __future__ import annotations

import shutil

from helpers import STUBS, grade, make_submission


def _hidden(score, topic="fault_injection"):
    return {t["id"]: t for x in score["topics"] if x["id"] == topic for t in x["tests"] if t["id"].startswith("hidden::")}


def test_a_lab_whose_bptt_is_not_written_yet_is_graded_with_a_correct_stand_in(tmp_path):
    """bptt.py still the stub: the student's lab raises NotImplementedError through it. The lab
    is graded with correct rnn_forward/rnn_backward in their place and loses no hidden point."""
    sub = make_submission(tmp_path / "sub")
    shutil.copyfile(STUBS / "bptt.py", sub / "bptt.py")
    proc, score = grade(sub, tmp_path / "out", "--topic", "fault_injection")
    assert proc.returncode == 0, proc.stderr
    hidden = _hidden(score)
    assert len(hidden) == 13
    failed = {k: t["message"] for k, t in hidden.items() if t["outcome"] != "passed"}
    assert not failed, failed


def test_a_wrong_radius_costs_its_own_tests_not_the_measured_signals(tmp_path):
    """scale_spectral_radius dividing by the largest singular value: its own tests fail; the
    lab measured faithfully with it, so its measured tests pass whatever the draw made the
    signals (the grader's probes find the wrong radius on any draw)."""
    sub = make_submission(tmp_path / "sub", replace={"fault_injection.py": [(
        "return W * (rho / np.max(np.abs(np.linalg.eigvals(W))))", "return W * (rho / np.linalg.norm(W, 2))")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "fault_injection")
    assert proc.returncode == 0, proc.stderr
    hidden = _hidden(score)
    assert hidden["hidden::test_scale_spectral_radius_uses_largest_eigenvalue_modulus"]["outcome"] == "failed"
    for key in ("rho_below_one_gradient_decays", "rho_above_one_gradient_explodes",
                "rho_one_tanh_saturation_still_decays"):
        test = hidden[f"hidden::test_{key}_measured"]
        assert test["outcome"] == "passed", test["message"]
