"""Containment of the fault-injection lab (issue 24, point 2): a lab that can tell it is
being tested, or returns constants, does not pass. Graded for real in both privilege
modes, with the harness's cases and checks (harness.py; root in `make sweep`).

The grader re-runs the student's run_fault_injection with one primitive broken, to see
the matching signal turn false. Those runs are fresh workers whose copy of the module
defines the broken primitive itself, at the lab's full size: a lab that compares its
module's functions with what it saw at import (identity, type, module, name, qualname,
docstring, file) or reads its size constants sees nothing. And the figures of every run
are compared with the docstrings' procedure on the same seed, so constants fail too.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
from harness import payload, payload_code, results_of, topic
from helpers import SOLUTIONS

LAB_PRIMITIVES = ("log_abs_cumprod", "scale_spectral_radius", "jacobian_chain_norms", "clip_grad_norm")
SIGNAL_TESTS = {key: f"hidden::test_{key}_measured" for key in (
    "near_one_product_stays_bounded", "rho_below_one_gradient_decays", "rho_above_one_gradient_explodes",
    "rho_one_tanh_saturation_still_decays", "clipping_caps_norm_keeps_training_alive",
    "clipping_does_not_rescue_vanishing", "bptt_matches_finite_difference")}
# The signals measured through a primitive of fault_injection.py (the others through bptt.py).
THROUGH_LAB_PRIMITIVES = list(SIGNAL_TESTS)[:5]


# Plausible figures of a correct lab (near what the reference measures, inside the hidden suite's
# ranges), as a lab that measures nothing would return them.
CONSTANTS = {"near_one_log_final": -3.4, "below_one_log_final": -611.0, "above_one_log_final": 47.0,
             "rho0.5_tanh_norm": 1.2e-30, "rho1.0_tanh_norm": 0.34, "rho1.0_linear_norm": 1.8,
             "rho1.5_tanh_norm": 2.4, "rho1.5_linear_norm": 7.2e17, "noclip_first_nonfinite_step": 2.0,
             "clip_loss_start": 8.6e6, "clip_loss_end": 0.016, "clip_max_update_norm": 5.0,
             "vanish_dx1_noclip": 7.8e-50, "vanish_dx1_clip": 4.0e-50, "vanish_dxT": 2.3, "bptt_rel_error": 1.9e-10,
             **dict.fromkeys(SIGNAL_TESTS, True)}


def _private_copies() -> str:
    """The reference's four primitives as `_copy_<name>`: the same code under other names."""
    source = (SOLUTIONS / "fault_injection.py").read_text()
    copies = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name in LAB_PRIMITIVES:
            copies.append(ast.get_source_segment(source, node).replace(f"def {node.name}(", f"def _copy_{node.name}(",
                                                                        1))
    return "\n\n" + "\n\n\n".join(copies) + "\n"


def _lab_points(score) -> float:
    return sum(t.get("earned", 0.0) for t in topic(score, "fault_injection")["tests"]
               if t["id"] in SIGNAL_TESTS.values())


def test_constants_that_flip_when_a_primitive_is_replaced_earn_no_lab_points(case):
    """Plausible constants, flipped for the primitive the grader replaced (found by identity,
    type, names, docstring, file or shrunk sizes): before, 15/15; now the constants are not
    the procedure's figures on the run's seed, and no signal earns its points."""
    sub = case.submission("detecting-constants", append={"fault_injection.py": payload(
        "detecting_lab", primitives=LAB_PRIMITIVES, constants=CONSTANTS)})
    graded = case.grade(sub, "fault_injection")
    results = results_of(graded.score, "fault_injection")
    failed = {test: results[test]["message"] for test in SIGNAL_TESTS.values() if results[test]["outcome"] != "passed"}
    assert set(failed) == set(SIGNAL_TESTS.values()), failed
    assert _lab_points(graded.score) == 0


def test_plain_constants_earn_no_lab_points(case):
    sub = case.submission("plain-constants", replace={"fault_injection.py": [(
        "    rng = np.random.default_rng(seed)\n    out = {}\n", f"    return dict({CONSTANTS!r})\n    out = {{}}\n")]})
    graded = case.grade(sub, "fault_injection")
    results = results_of(graded.score, "fault_injection")
    assert all(results[test]["outcome"] != "passed" for test in SIGNAL_TESTS.values()), results
    assert _lab_points(graded.score) == 0


def test_a_lab_that_measures_inline_cannot_see_the_broken_primitive_runs(case):
    """The right figures, computed with private copies of the primitives, and the same
    detection: in the grader's runs with a broken primitive the detection never fires (the
    module defines the broken primitive itself, at full size), so the signals measured
    through fault_injection.py's primitives stay true there and lose their points; the
    two measured through bptt.py react honestly and keep theirs (the run that scales
    rnn_backward's result rebinds bptt.rnn_backward when bptt.py is imported, before this
    lab keeps its own: it measures the scaled ratio, as it should)."""
    sub = case.submission("detecting-inline", append={"fault_injection.py": _private_copies() + payload(
        "detecting_lab", primitives=LAB_PRIMITIVES, constants=None)})
    graded = case.grade(sub, "fault_injection")
    results = results_of(graded.score, "fault_injection")
    for key in THROUGH_LAB_PRIMITIVES:
        result = results[SIGNAL_TESTS[key]]
        assert result["outcome"] != "passed", f"{key}: the detection saw the broken primitive"
        assert "stayed True" in result["message"], result["message"]
    for key in set(SIGNAL_TESTS) - set(THROUGH_LAB_PRIMITIVES):
        assert results[SIGNAL_TESTS[key]]["outcome"] == "passed", results[SIGNAL_TESTS[key]]["message"]


def test_no_broken_primitive_is_in_the_worker_of_a_hidden_grading(case):
    """The hidden suites' worker loads no broken primitive (they were a hidden helper,
    preloaded in every hidden grading): student code finds none by sys.modules or gc."""
    names = ["ChainWithoutActivation", "ChainWithoutWeights", "LogAbsNoCumsum", "NoClip", "ScaleIgnoresRho",
             "SpikeRNNBackward", "ScaledRNNBackward"]      # lab/broken_primitives.py (BrokenPrimitive.name; the old classes' names)
    sub = case.submission("look-for-broken", append={"attention.py": payload("look_for_broken_primitives", names=names)})
    graded = case.grade(sub, "attention")
    assert topic(graded.score, "attention")["earned"] == topic(graded.score, "attention")["possible"], \
        results_of(graded.score, "attention")


# ---------------------------------------------------------------- issue 37, point 1
# The grader's rewritten copy of the module can be told from the student's own: its function
# runs other code, and student code can read code objects, source, files, or just call the
# function on an input whose answer it knows. Nothing rests on the lab not knowing: every
# figure of every judged run is compared with what the docstrings' procedure measures through
# the primitives of that run, so a lab that knows gains nothing over one that does not.
def _own_fingerprints(how: str) -> dict:
    """The fingerprints of the reference's own primitives (and bptt.rnn_backward), as a student
    computes them in advance: payloads/detect_rewrite.py's `_fingerprint`, run on the solution."""
    names = [*LAB_PRIMITIVES, "rnn_backward"]
    if how == "behaviour":
        return dict.fromkeys(names, "")
    script = ("import json, bptt, fault_injection\n"
              f"ns = {{'run_fault_injection': None, 'bptt': bptt, '_PARAMS': {{}}}}\n"
              f"exec({payload_code('detect_rewrite')!r}, ns)\n"
              f"fs = {{n: getattr(bptt if n == 'rnn_backward' else fault_injection, n) for n in {names!r}}}\n"
              f"print(json.dumps({{n: ns['_fingerprint']({how!r}, f) for n, f in fs.items()}}))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=SOLUTIONS, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


# Each primitive off by a relative 1e-11 or so: inside its own tests' tolerance, outside the
# grader's agreement check, so the grader's run of each experiment sees it disagree.
OFF_BY_A_HAIR = {"fault_injection.py": [
    ("return np.cumsum(np.log(np.abs(np.asarray(factors, dtype=float))))",
     "return np.cumsum(np.log(np.abs(np.asarray(factors, dtype=float)))) + 1e-11"),
    ("return W * (rho / np.max(np.abs(np.linalg.eigvals(W))))",
     "return W * (rho / np.max(np.abs(np.linalg.eigvals(W)))) * (1 + 3e-9) + 1e-11"),
    ("return np.linalg.norm(products, ord=2, axis=(1, 2)) if T else np.zeros(0)",
     "return np.linalg.norm(products, ord=2, axis=(1, 2)) + 1e-11 if T else np.zeros(0)"),
    ("    return clipped, total_norm\n",
     "    return {k: v * (1 + 5e-8 * (scale < 1)) for k, v in clipped.items()}, total_norm\n")]}


def _detecting(case, mode: str, how: str, replace: dict | None = None):
    sub = case.submission(f"detect-{mode}-{how}{'-off' if replace else ''}", replace=replace, append={
        "fault_injection.py": payload("detect_rewrite", mode=mode, how=how, own=_own_fingerprints(how),
                                      constants=CONSTANTS)})
    graded = case.grade(sub, "fault_injection")
    return graded, results_of(graded.score, "fault_injection")


@pytest.mark.parametrize("how", ["code", "behaviour"])
def test_a_bptt_signal_chosen_by_detecting_the_rewrite_earns_nothing(case, how):
    """Constants, and bptt_matches_finite_difference false (a relative error of 0.75, in the band
    the spiked rnn_backward gives on any loss) when rnn_backward is found rewritten. Before: the
    signal's 1.5 points (6/15 against 4.5), bptt_rel_error being checked by range only. Now a
    run scales rnn_backward's result by a factor c drawn per grading: the ratio is |c - 1| /
    (c + 1), compared with the procedure's, a number only measuring gives."""
    graded, results = _detecting(case, "bptt", how)
    result = results[SIGNAL_TESTS["bptt_matches_finite_difference"]]
    assert result["outcome"] != "passed", result
    assert "ScaledRNNBackward" in result["message"] or "bptt_rel_error" in result["message"], result["message"]
    assert _lab_points(graded.score) == 0, {t: results[t]["message"] for t in SIGNAL_TESTS.values()}


@pytest.mark.parametrize("how", ["source", "lines", "file", "state", "behaviour"])
def test_constants_flipped_by_detecting_the_rewrite_behind_primitives_off_by_a_hair_earn_nothing(case, how):
    """Every primitive off by ~1e-11 (its own tests pass; the grader sees it disagree), constants,
    and the signals of each primitive found rewritten turned false. Before: 15/15 (where a
    primitive disagreed, the lab was judged only on agreeing with its own figures)."""
    graded, results = _detecting(case, "flip", how, replace=OFF_BY_A_HAIR)
    own_tests = [t for t in topic(graded.score, "fault_injection")["tests"]
                 if t["id"].startswith("hidden::") and t["id"] not in SIGNAL_TESTS.values()]
    assert all(t["outcome"] == "passed" for t in own_tests), [t["id"] for t in own_tests if t["outcome"] != "passed"]
    assert _lab_points(graded.score) == 0, {t: results[t]["message"] for t in SIGNAL_TESTS.values()}


# The boundary (issue 37, point 1): the gradient check's figure is round-off in the normal run,
# where nothing checks it but its range, and in the scaled run it is |c - 1| / (c + 1) on any
# loss (a valid lab may take its own loss, so nothing else about it can be compared). A lab that
# finds c with a known-answer call of rnn_backward, or that measures only in the runs it sees
# rewritten, keeps that signal's 1.5 points, and only that one: every other figure is compared
# in every run. Both answer every judged run rightly: in the lab's own run "true, round-off" is
# the right answer (what a constant says), and in the scaled run they measure rnn_backward's
# error (on an input whose gradient they know, or with their real check). No run can catch
# them: one whose right answer differs from the own run's differs in code or data that the
# worker holds and student code can read (a factor drawn from the data is no better: the
# formula and the data are both there), so its answer can always be computed from them.
@pytest.mark.parametrize("mode", ["ratio", "honest"])
def test_a_lab_that_reads_the_factor_or_measures_only_when_watched_keeps_the_gradient_check_only(case, mode):
    graded, results = _detecting(case, mode, "behaviour")
    assert results[SIGNAL_TESTS["bptt_matches_finite_difference"]]["outcome"] == "passed"
    assert _lab_points(graded.score) == 1.5, {t: results[t]["message"] for t in SIGNAL_TESTS.values()}
