"""Containment of the fault-injection lab (issue 24, point 2): a lab that can tell it is
being tested, or returns constants, does not pass. Graded for real in both privilege
modes, with the cases and checks of tests/test_containment.py (root in `make sweep`).

The grader re-runs the student's run_fault_injection with one primitive broken, to see
the matching signal turn false. Those runs are fresh workers whose copy of the module
defines the broken primitive itself, at the lab's full size: a lab that compares its
module's functions with what it saw at import (identity, type, module, name, qualname,
docstring, file) or reads its size constants sees nothing. And the figures of every run
are compared with the docstrings' procedure on the same seed, so constants fail too.
"""

from __future__ import annotations

import ast

import test_containment
from helpers import SOLUTIONS
from test_containment import hostile, results_of, topic

copied_env, grader, case = test_containment.copied_env, test_containment.grader, test_containment.case

LAB_PRIMITIVES = ("log_abs_cumprod", "scale_spectral_radius", "jacobian_chain_norms", "clip_grad_norm")
SIGNAL_TESTS = {key: f"hidden::test_{key}_measured" for key in (
    "near_one_product_stays_bounded", "rho_below_one_gradient_decays", "rho_above_one_gradient_explodes",
    "rho_one_tanh_saturation_still_decays", "clipping_caps_norm_keeps_training_alive",
    "clipping_does_not_rescue_vanishing", "bptt_matches_finite_difference")}
# The signals measured through a primitive of fault_injection.py (the others through bptt.py).
THROUGH_LAB_PRIMITIVES = list(SIGNAL_TESTS)[:5]

# Appended to the reference's fault_injection.py: run_fault_injection looks for the grader's
# replacement of a primitive (every tell the old swap of module attributes left) and, when
# it finds one, reports the signal that primitive breaks as false, with a figure to match.
DETECTING_LAB = r'''
import types as _types

_OWN = {_name: globals()[_name] for _name in _CFG["primitives"]}
_OWN_BACKWARD = bptt.rnn_backward
_DOCS = {_name: _f.__doc__ for _name, _f in _OWN.items()}
_SIZES = (T_STEPS, N_INITIAL_STATES, CLIP_STEPS, CHECK_T)
_FLIPS = {
    "log_abs_cumprod": [("near_one_product_stays_bounded", "below_one_log_final", -1.0)],
    "scale_spectral_radius": [("rho_below_one_gradient_decays", "rho0.5_tanh_norm", 0.5),
                              ("rho_above_one_gradient_explodes", "rho1.5_linear_norm", 3.0)],
    "jacobian_chain_norms": [("rho_below_one_gradient_decays", "rho0.5_tanh_norm", 0.5),
                             ("rho_above_one_gradient_explodes", "rho1.5_linear_norm", 3.0),
                             ("rho_one_tanh_saturation_still_decays", "rho1.0_tanh_norm", 1e3)],
    "clip_grad_norm": [("clipping_caps_norm_keeps_training_alive", "clip_max_update_norm", 1e6)],
    "rnn_backward": [("clipping_does_not_rescue_vanishing", "vanish_dxT", 0.0),
                     ("bptt_matches_finite_difference", "bptt_rel_error", 1.0)],
}


def _replaced():
    found = set()
    for name, own in _OWN.items():
        f = globals()[name]
        if (f is not own or not isinstance(f, _types.FunctionType) or f.__module__ != __name__
                or f.__qualname__ != name or f.__doc__ != _DOCS[name] or f.__code__.co_filename != __file__):
            found.add(name)
    b = bptt.rnn_backward
    if b is not _OWN_BACKWARD or not isinstance(b, _types.FunctionType) or b.__module__ != "bptt":
        found.add("rnn_backward")
    if (T_STEPS, N_INITIAL_STATES, CLIP_STEPS, CHECK_T) != _SIZES:
        found.update(_FLIPS)
    return found


_measure_honestly = run_fault_injection


def _measure(seed):
    if _CFG["constants"]:
        return dict(_CFG["constants"])
    # The experiments, each primitive computed inline (private copies), never through the
    # module's names: nothing the grader replaces changes the figures.
    saved = {name: globals()[name] for name in _OWN}
    globals().update({name: globals()["_copy_" + name] for name in _OWN})
    try:
        return _measure_honestly(seed)
    finally:
        globals().update(saved)


def run_fault_injection(seed=42):
    out = _measure(seed)
    for name in _replaced():
        for key, figure, value in _FLIPS[name]:
            out[key], out[figure] = False, value
    return out
'''

# Plausible figures of a correct lab (SPEC §4), as a lab that measures nothing would return them.
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
    sub = case.submission("detecting-constants", append={"fault_injection.py": hostile(
        DETECTING_LAB, primitives=LAB_PRIMITIVES, constants=CONSTANTS)})
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
    two measured through bptt.py react honestly and keep theirs."""
    sub = case.submission("detecting-inline", append={"fault_injection.py": _private_copies() + hostile(
        DETECTING_LAB, primitives=LAB_PRIMITIVES, constants=None)})
    graded = case.grade(sub, "fault_injection")
    results = results_of(graded.score, "fault_injection")
    for key in THROUGH_LAB_PRIMITIVES:
        result = results[SIGNAL_TESTS[key]]
        assert result["outcome"] != "passed", f"{key}: the detection saw the broken primitive"
        assert "stayed True" in result["message"], result["message"]
    for key in set(SIGNAL_TESTS) - set(THROUGH_LAB_PRIMITIVES):
        assert results[SIGNAL_TESTS[key]]["outcome"] == "passed", results[SIGNAL_TESTS[key]]["message"]


# Appended to attention.py: whatever of the lab's broken primitives the worker holds (a
# module, a class or a function made from one) is found at import and when called, and then
# the attention weights come back wrong, so the attention topic loses points.
LOOK_FOR_BROKEN_PRIMITIVES = r'''
import gc as _gc
import sys as _sys


def _broken_primitives_found():
    names = [m for m in _sys.modules if "broken_primitives" in m or "fault_lab" in m]
    for obj in _gc.get_objects():
        module = getattr(type(obj), "__module__", "") if not isinstance(obj, type) else obj.__module__
        if isinstance(module, str) and "broken_primitives" in module:
            names.append(repr(type(obj)))
        if callable(obj) and getattr(obj, "__name__", "") in _CFG["names"]:
            names.append(obj.__name__)
    return names


_AT_IMPORT = _broken_primitives_found()
_honest_attention = additive_attention


def additive_attention(*args, **kwargs):
    context, weights = _honest_attention(*args, **kwargs)
    if _AT_IMPORT or _broken_primitives_found():
        weights = weights * 0 + 1.0
    return context, weights
'''


def test_no_broken_primitive_is_in_the_worker_of_a_hidden_grading(case):
    """The hidden suites' worker loads no broken primitive (they were a hidden helper,
    preloaded in every hidden grading): student code finds none by sys.modules or gc."""
    names = ["ChainWithoutActivation", "ChainWithoutWeights", "LogAbsNoCumsum", "NoClip", "ScaleIgnoresRho",
             "ZeroRNNBackward"]      # lab/broken_primitives.py (BrokenPrimitive.name; the old classes' names)
    sub = case.submission("look-for-broken", append={"attention.py": hostile(LOOK_FOR_BROKEN_PRIMITIVES, names=names)})
    graded = case.grade(sub, "attention")
    assert topic(graded.score, "attention")["earned"] == topic(graded.score, "attention")["possible"], \
        results_of(graded.score, "attention")
