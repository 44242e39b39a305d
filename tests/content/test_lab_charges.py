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


def test_the_broken_runs_start_only_once_the_students_own_run_returned(tmp_path, monkeypatch):
    """Each run with a broken primitive costs a fresh worker and a whole lab. A lab whose own
    run raises is never judged on them (the measured tests stop at its error), so the grader
    starts them only after the student's run returned: none for a lab that is still the stub,
    three for the reference, whose scores are what they were."""
    from autograder.isolation.sandbox import Sandbox

    started = []
    call_replaced = Sandbox.call_replaced

    def counted(self, *args, **kwargs):
        started.append(args[1])
        return call_replaced(self, *args, **kwargs)

    monkeypatch.setattr(Sandbox, "call_replaced", counted)
    stub_lab = make_submission(tmp_path / "stub-lab")
    shutil.copyfile(STUBS / "fault_injection.py", stub_lab / "fault_injection.py")
    proc, score = grade(stub_lab, tmp_path / "out-stub", "--topic", "fault_injection", "--suite", "hidden")
    assert proc.returncode in (0, 1), proc.stderr
    assert started == []
    assert all(t["outcome"] != "passed" for t in _hidden(score).values())
    proc, score = grade(make_submission(tmp_path / "reference"), tmp_path / "out-ref", "--topic", "fault_injection",
                        "--suite", "hidden")
    assert proc.returncode == 0, proc.stderr
    assert started == ["run_fault_injection"] * 3
    assert all(t["outcome"] == "passed" for t in _hidden(score).values())
