"""Appended to fault_injection.py: run_fault_injection tells a copy of the module whose primitive
runs other code from the student's own by what student code can observe (not by identity or
names, which the grader's rewrite keeps), and returns constants with the signals of what it
found turned false. The student knows their own functions in advance: the harness computes
their fingerprints from the solution (_PARAMS["own"][name]).

_PARAMS["how"], the way it tells:
- "code": the bytecode of the function's code object;
- "source": the source `inspect` shows;
- "lines": the line numbers its code runs;
- "file": the function's text in the module's file on disk;
- "state": the code object's other attributes (constants, names, locals, stack size, flags);
- "behaviour": a call on a small input whose answer the lab knows.
_PARAMS["mode"], what it returns:
- "bptt": the constants, with the bptt signal false (a relative error in the range a broken
  rnn_backward gives) when rnn_backward is found other than the student's;
- "flip": the constants, with every signal of a primitive found other than the student's
  turned false, with figures to match (the broken primitive's zeros where it has them);
- "ratio": as "bptt", but the relative error it answers is |c - 1| / (c + 1) when a call of
  rnn_backward on a small input gives c times the right gradient (the scaled run);
- "honest": the constants when nothing is found, the honest lab (through the module's
  functions) when something is: a lab that measures only when it knows it is watched.
"""

import bptt
from fault_injection import run_fault_injection

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import ast as _ast
import hashlib as _hashlib
import inspect as _inspect

_FLIPS = {
    "log_abs_cumprod": {"near_one_product_stays_bounded": False, "below_one_log_final": -1.0},
    "scale_spectral_radius": {"rho_below_one_gradient_decays": False, "rho0.5_tanh_norm": 0.5,
                              "rho_above_one_gradient_explodes": False, "rho1.5_linear_norm": 3.0},
    "jacobian_chain_norms": {"rho_below_one_gradient_decays": False, "rho0.5_tanh_norm": 0.5,
                             "rho_above_one_gradient_explodes": False, "rho1.5_linear_norm": 3.0,
                             "rho_one_tanh_saturation_still_decays": False, "rho1.0_tanh_norm": 1e3},
    "clip_grad_norm": {"clipping_caps_norm_keeps_training_alive": False, "clip_max_update_norm": 1e6},
    "rnn_backward": {"clipping_does_not_rescue_vanishing": False, "vanish_dx1_noclip": 0.0, "vanish_dx1_clip": 0.0,
                     "vanish_dxT": 0.0, "bptt_matches_finite_difference": False, "bptt_rel_error": 0.75},
}


def _sha(text) -> str:
    return _hashlib.sha256(text if isinstance(text, bytes) else str(text).encode()).hexdigest()


def _functions():
    found = {name: globals()[name] for name in _PARAMS["own"] if name != "rnn_backward"}
    found["rnn_backward"] = bptt.rnn_backward
    return found


def _fingerprint(how, f):
    code = f.__code__
    if how == "code":
        return _sha(code.co_code)
    if how == "source":
        return _sha(_inspect.getsource(f))
    if how == "lines":
        return _sha(sorted({line for _start, _end, line in code.co_lines() if line is not None}))
    if how == "file":
        with open(code.co_filename, encoding="utf-8") as fh:
            text = fh.read()
        nodes = [n for n in _ast.parse(text).body if isinstance(n, _ast.FunctionDef) and n.name == f.__name__]
        return _sha(_ast.get_source_segment(text, nodes[-1])) if nodes else ""
    if how == "state":
        return _sha([repr(code.co_consts), code.co_names, code.co_varnames, code.co_stacksize, code.co_flags])
    raise ValueError(how)


def _known_answer(name, f):
    """What the student's own function returns on a small input, against what it returned."""
    import numpy as _np
    if name == "log_abs_cumprod":
        return _np.allclose(f(_np.array([2.0, 2.0])), [_np.log(2), 2 * _np.log(2)])
    if name == "scale_spectral_radius":
        return _np.allclose(f(_np.diag([2.0, 1.0]), 0.5), _np.diag([0.5, 0.25]))
    if name == "jacobian_chain_norms":
        return _np.allclose(f(_np.diag([0.5, 0.25]), _np.zeros((3, 2)), "tanh"), [0.5, 0.25])
    if name == "clip_grad_norm":
        clipped, total = f({"a": _np.array([3.0, 4.0])}, 1.0)
        return _np.isclose(total, 5.0) and _np.allclose(clipped["a"], [0.6, 0.8])
    h, cache = bptt.rnn_forward(_np.zeros((1, 1, 4)), _np.zeros((1, 2)), _np.ones((4, 2)), _np.eye(2), _np.zeros(2))
    return _np.allclose(f(_np.array([[[3.0, -4.0]]]), cache)[4], [3.0, -4.0])


def _rewritten():
    how, own = _PARAMS["how"], _PARAMS["own"]
    if how == "behaviour":
        return {name for name, f in _functions().items() if not _known_answer(name, f)}
    found = set()
    for name, f in _functions().items():
        try:
            if _fingerprint(how, f) != own[name]:
                found.add(name)
        except Exception:   # noqa: BLE001 - no source to read where the tests load the module another way
            pass
    return found


_measure_honestly = run_fault_injection


def _scale_of_rnn_backward():
    """c when rnn_backward gives c times the gradient on a small input whose answer is dh itself."""
    import numpy as _np
    _h, cache = bptt.rnn_forward(_np.zeros((1, 1, 4)), _np.zeros((1, 2)), _np.ones((4, 2)), _np.eye(2), _np.zeros(2))
    db = _np.asarray(bptt.rnn_backward(_np.array([[[3.0, -4.0]]]), cache)[4], dtype=float)
    c = db[0] / 3.0
    return c if _np.allclose(db, [3.0 * c, -4.0 * c]) else None


def run_fault_injection(seed=42):
    found = _rewritten()
    if _PARAMS["mode"] == "honest":
        return _measure_honestly(seed) if found else dict(_PARAMS["constants"])
    out = dict(_PARAMS["constants"])
    if _PARAMS["mode"] == "ratio" and "rnn_backward" in found:
        c = _scale_of_rnn_backward()
        ratio = abs(c - 1) / (c + 1) if c is not None else 0.75
        out.update({"bptt_matches_finite_difference": ratio < 1e-6, "bptt_rel_error": ratio})
        return out
    for name in found if _PARAMS["mode"] == "flip" else found & {"rnn_backward"}:
        flips = _FLIPS[name]
        if _PARAMS["mode"] == "bptt":
            flips = {k: flips[k] for k in ("bptt_matches_finite_difference", "bptt_rel_error")}
        out.update(flips)
    return out
