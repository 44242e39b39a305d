"""Hidden suite of the fault-injection lab (SPEC §3.4 and §4).

Two kinds of tests:

- the primitives on inputs with a known answer (outside oracles: math.fsum of logs,
  eigenvalues of matrices built with known spectra, finite differences of the rollout,
  matrix powers, the global norm computed here);
- each of the seven signals of SPEC §4, graded three ways:
  (a) the student's `run_fault_injection(seed)`: the signal is true, its figures are in
      plausible ranges and agree with the signal's criterion;
  (c) the same run with one primitive replaced by a known-broken one
      (`autograder.models.broken_primitives`): the signal must turn false (and its figures
      must say so). (a) and (c) are one rubric entry, "measured": a lab that returns
      constants or recomputes a primitive inline earns nothing there;
  (b) the grader's own run of the experiment (code below, not the reference's) calling
      the student's primitives: the signal must hold ("rerun").

Seeds: every seed this suite uses comes from SEED_POOL (picked per grading run from the
run's seed), and tests/test_fault_injection_seeds.py checks, for every seed of the pool,
that the reference passes everything here and that every broken primitive flips its
signal. The ranges below are imported by that test, so they cannot drift.

The names at module level (SEED_POOL, RANGES, CRITERIA, BROKEN, Primitives, rerun_*)
are also used by that repository test with the reference's primitives.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from autograder.checks import CheckFailed, expect_array, expect_not_mutated, expect_tuple, finite_differences
from autograder.models.broken_primitives import (ChainWithoutActivation, ChainWithoutWeights, LogAbsNoCumsum,
                                                 NoClip, ScaleIgnoresRho, ZeroRNNBackward)

TOPIC = "fault_injection"
SEED_POOL = tuple(range(1000, 1064))

# The lab's settings (SPEC §4), restated here: the grader never reads the student's constants.
TAU = 5.0
RHOS = (0.5, 1.0, 1.5)
D_STATE, T_STEPS, N_INITIAL_STATES = 16, 100, 8

SIGNALS = (
    "near_one_product_stays_bounded",
    "rho_below_one_gradient_decays",
    "rho_above_one_gradient_explodes",
    "rho_one_tanh_saturation_still_decays",
    "clipping_caps_norm_keeps_training_alive",
    "clipping_does_not_rescue_vanishing",
    "bptt_matches_finite_difference",
)

# Evidence (learn-llm.evidence.v1): the expected value of each metric.
EXPECTED = {key: True for key in SIGNALS}
EXPECTED["bptt_matches_finite_difference"] = "relative-error-under-1e-6"

# Which figure keys each signal is judged on.
SIGNAL_FIGURES = {
    "near_one_product_stays_bounded": ("near_one_log_final", "below_one_log_final", "above_one_log_final"),
    "rho_below_one_gradient_decays": ("rho0.5_tanh_norm",),
    "rho_above_one_gradient_explodes": ("rho1.5_linear_norm", "rho1.5_tanh_norm"),
    "rho_one_tanh_saturation_still_decays": ("rho1.0_tanh_norm", "rho1.0_linear_norm"),
    "clipping_caps_norm_keeps_training_alive": ("noclip_first_nonfinite_step", "clip_loss_start", "clip_loss_end",
                                                "clip_max_update_norm"),
    "clipping_does_not_rescue_vanishing": ("vanish_dx1_noclip", "vanish_dx1_clip", "vanish_dxT"),
    "bptt_matches_finite_difference": ("bptt_rel_error",),
}
FIGURES = tuple(f for figs in SIGNAL_FIGURES.values() for f in figs)

# Plausible ranges (inclusive) of the figure keys a correct lab returns, whatever the order
# of its random draws. Measured on the reference over 2000 seeds (min ... max):
#   near_one_log_final -12.2 ... 5.7 (mean -3.4, sd 2.6); below_one -686 ... -534 (sd 22);
#   above_one 42.9 ... 50.9 (sd 1.1); rho0.5_tanh 6.8e-31 ... 3.1e-29; rho1.0_tanh 0.0038 ... 2.4;
#   rho1.0_linear 1.06 ... 43; rho1.5_tanh 1.9e-32 ... 1.2e6; rho1.5_linear 4.3e17 ... 1.7e19;
#   noclip step 1 ... 2; clip_loss_start 8.5e4 ... 1.4e9; clip_loss_end 1.4e-4 ... 2.6e3;
#   clip_max_update_norm 5 (to 1e-15); vanish_dx1 1e-63 ... 5e-39; vanish_dxT 0.22 ... 6.8;
#   bptt_rel_error 7.5e-11 ... 4.7e-10.
# The bounds are far outside those, or are theorems: ||W^k||_2 >= rho(W)^k makes
# rho1.0_linear_norm >= 1 and rho1.5_linear_norm >= 1.5**100 = 4.07e17. rho1.5_tanh_norm
# has an upper bound on purpose: a tanh RNN at rho = 1.5 does not explode (SPEC §4), so a
# "tanh" chain that reaches the explosion threshold is not a tanh chain.
RANGES = {
    "near_one_log_final": (-20.0, 20.0),
    "below_one_log_final": (-800.0, -420.0),
    "above_one_log_final": (35.0, 60.0),
    "rho0.5_tanh_norm": (0.0, 1e-20),
    "rho1.0_tanh_norm": (1e-6, 100.0),
    "rho1.0_linear_norm": (1.0 - 1e-6, 1e4),
    "rho1.5_tanh_norm": (0.0, 1e10),
    "rho1.5_linear_norm": (4.0e17, 1e22),
    "noclip_first_nonfinite_step": (1.0, 3.0),
    "clip_loss_start": (1e2, 1e12),
    "clip_loss_end": (0.0, 1e5),
    "clip_max_update_norm": (TAU * (1 - 1e-6), TAU * (1 + 1e-9)),
    "vanish_dx1_noclip": (0.0, 1e-20),
    "vanish_dx1_clip": (0.0, 1e-20),
    "vanish_dxT": (1e-3, 50.0),
    "bptt_rel_error": (0.0, 1e-6),
}


def _finite(*values) -> bool:
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in values)


# The criterion of each signal, as a function of the figure keys (SPEC §4).
CRITERIA = {
    "near_one_product_stays_bounded": lambda f: _finite(f["near_one_log_final"], f["below_one_log_final"],
                                                        f["above_one_log_final"])
    and abs(f["near_one_log_final"]) < 20 and f["below_one_log_final"] < -100 and f["above_one_log_final"] > 20,
    "rho_below_one_gradient_decays": lambda f: f["rho0.5_tanh_norm"] < 1e-10,
    "rho_above_one_gradient_explodes": lambda f: f["rho1.5_linear_norm"] > 1e10,
    "rho_one_tanh_saturation_still_decays": lambda f: f["rho1.0_tanh_norm"] < f["rho1.0_linear_norm"],
    "clipping_caps_norm_keeps_training_alive": lambda f: f["noclip_first_nonfinite_step"] <= 3
    and f["clip_max_update_norm"] <= TAU * (1 + 1e-9) and _finite(f["clip_loss_start"], f["clip_loss_end"])
    and f["clip_loss_end"] < 1e-2 * f["clip_loss_start"],
    "clipping_does_not_rescue_vanishing": lambda f: f["vanish_dx1_noclip"] < 1e-10 and f["vanish_dx1_clip"] < 1e-10
    and f["vanish_dxT"] > 1e-3,
    "bptt_matches_finite_difference": lambda f: f["bptt_rel_error"] < 1e-6,
}

# The known-broken primitives that must turn each signal false: (patch target, helper).
BROKEN = {
    "near_one_product_stays_bounded": [("fault_injection.log_abs_cumprod", LogAbsNoCumsum())],
    "rho_below_one_gradient_decays": [("fault_injection.scale_spectral_radius", ScaleIgnoresRho()),
                                      ("fault_injection.jacobian_chain_norms", ChainWithoutWeights())],
    # Not "divide by the largest singular value" here: for a 16 x 16 Gaussian W0 that leaves
    # an effective radius above 1.2 in 0.3 % of draws (measured on 20000), enough to explode.
    "rho_above_one_gradient_explodes": [("fault_injection.scale_spectral_radius", ScaleIgnoresRho()),
                                        ("fault_injection.jacobian_chain_norms", ChainWithoutWeights())],
    "rho_one_tanh_saturation_still_decays": [("fault_injection.jacobian_chain_norms", ChainWithoutActivation())],
    "clipping_caps_norm_keeps_training_alive": [("fault_injection.clip_grad_norm", NoClip())],
    # Not ScaleIgnoresRho here: at radius 1 the driven tanh RNN saturates and dL/dx_1 still
    # vanishes (~1e-23), which is the lab's point about saturation, not a missed break.
    "clipping_does_not_rescue_vanishing": [("bptt.rnn_backward", ZeroRNNBackward(D=4))],
    "bptt_matches_finite_difference": [("bptt.rnn_backward", ZeroRNNBackward(D=4))],
}

SIGNAL_HINTS = {
    "near_one_product_stays_bounded": "Log|product| must be the running sum of log|factor| (log_abs_cumprod)",
    "rho_below_one_gradient_decays": "W = scale_spectral_radius(W0, 0.5), tanh rollout, "
    "jacobian_chain_norms(W, hs, 'tanh')[-1]",
    "rho_above_one_gradient_explodes": "The explosion is measured on the linear chain (weight factor only) "
    "at rho = 1.5",
    "rho_one_tanh_saturation_still_decays": "The median over 8 initial states of the tanh chain vs the linear "
    "chain, rho = 1",
    "clipping_caps_norm_keeps_training_alive": "SGD on the linear RNN at rho = 1.5 with and without clip_grad_norm",
    "clipping_does_not_rescue_vanishing": "Use bptt.rnn_forward/rnn_backward at rho = 0.5, then clip_grad_norm",
    "bptt_matches_finite_difference": "Compare bptt.rnn_backward against central differences of bptt.rnn_forward",
}


def pool_seed(run_seed: int, what: str) -> int:
    """The seed of this grading run for one experiment, drawn from SEED_POOL."""
    rng = np.random.default_rng([int(run_seed) % (2**32), zlib.crc32(what.encode())])
    return int(SEED_POOL[int(rng.integers(len(SEED_POOL)))])


def _fmt(value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return repr(value)
    return f"{value:.3g}"


def _plain(value):
    """A JSON/YAML-safe copy (non-finite floats become strings)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else str(float(value))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    return repr(value)


# ============================================================== the grader's experiments
class Primitives:
    """The lab's primitives: the student's (worker proxies) or the reference's (modules)."""

    def __init__(self, fault_injection, bptt):
        self.log_abs_cumprod = fault_injection.log_abs_cumprod
        self.scale_spectral_radius = fault_injection.scale_spectral_radius
        self.jacobian_chain_norms = fault_injection.jacobian_chain_norms
        self.clip_grad_norm = fault_injection.clip_grad_norm
        self.rnn_forward = bptt.rnn_forward
        self.rnn_backward = bptt.rnn_backward


def _matrix(P, W, rho, what):
    W_rho = expect_array(P.scale_spectral_radius(W, rho), W.shape, what)
    if not np.all(np.isfinite(W_rho)):
        raise CheckFailed(f"{what} contains nan or inf")
    return W_rho


def _chain(P, W, hs, activation, what):
    norms = expect_array(P.jacobian_chain_norms(W, hs, activation), (hs.shape[0] - 1,), what)
    return norms.astype(float)


def _rollout(W, h0, activation, T=T_STEPS):
    """States h_0..h_T of h_t = act(h_{t-1} W); h0 may hold several initial states (rows)."""
    hs = [np.atleast_2d(h0)]
    for _ in range(T):
        a = hs[-1] @ W
        hs.append(np.tanh(a) if activation == "tanh" else a)
    return np.stack(hs, axis=1)   # (n, T+1, H)


def rerun_products(P, seed):
    """Level 1 through P.log_abs_cumprod, plus its trap: 1500 factors below one, whose naive
    product underflows to 0 (np.log(np.cumprod(...)) = -inf; the log-sum is about -1835)."""
    rng = np.random.default_rng([seed, 1])
    groups = {"near_one": rng.uniform(0.8, 1.2, 500), "below_one": rng.uniform(0.0, 0.8, 500),
              "above_one": rng.uniform(1.0, 1.2, 500), "underflow_trap": rng.uniform(0.0, 0.8, 1500)}
    values, worst = {}, 0.0
    for name, factors in groups.items():
        got = expect_array(P.log_abs_cumprod(factors), factors.shape, f"log_abs_cumprod of the {name} factors")
        oracle = np.array([math.fsum(math.log(f) for f in factors[: t + 1]) for t in range(0, len(factors), 50)]
                          + [math.fsum(math.log(f) for f in factors)])
        picked = np.append(got[::50], got[-1])
        if not np.all(np.isfinite(picked)):
            worst = math.inf
        else:
            worst = max(worst, float(np.max(np.abs(picked - oracle) / (1 + np.abs(oracle)))))
        values[f"{name}_log_final"] = float(got[-1])
        if name == "near_one":
            values["near_one_log_max_abs"] = float(np.max(np.abs(got)))
    values["max_error_vs_log_sum"] = worst
    holds = (CRITERIA["near_one_product_stays_bounded"](values) and values["near_one_log_max_abs"] < 20
             and math.isfinite(values["underflow_trap_log_final"]) and worst < 1e-8)
    return {"holds": holds, "values": values}


def rerun_spectral(P, seed):
    """Level 2 through P.scale_spectral_radius and P.jacobian_chain_norms (rho 0.5, 1.0, 1.5)."""
    rng = np.random.default_rng([seed, 2])
    W0 = rng.normal(size=(D_STATE, D_STATE))
    h0s = np.tanh(rng.normal(size=(N_INITIAL_STATES, D_STATE)))
    values, curves = {}, {}
    for rho in RHOS:
        W = _matrix(P, W0, rho, f"scale_spectral_radius(W0, {rho})")
        states = h0s if rho == 1.0 else h0s[:1]
        tanh_hs = _rollout(W, states, "tanh")
        tanh_curves = np.array([_chain(P, W, hs, "tanh", f"jacobian_chain_norms(W, hs, 'tanh') at rho = {rho}")
                                for hs in tanh_hs])
        linear = _chain(P, W, _rollout(W, h0s[:1], "linear")[0], "linear",
                        f"jacobian_chain_norms(W, hs, 'linear') at rho = {rho}")
        curves[f"rho{rho}_tanh"] = np.median(tanh_curves, axis=0)
        curves[f"rho{rho}_linear"] = linear
        values[f"rho{rho}_tanh_norm"] = float(np.median(tanh_curves[:, -1]))
        values[f"rho{rho}_linear_norm"] = float(linear[-1])
    holds = {key: bool(CRITERIA[key](values)) for key in
             ("rho_below_one_gradient_decays", "rho_above_one_gradient_explodes",
              "rho_one_tanh_saturation_still_decays")}
    return {"holds": holds, "values": values, "curves": {k: v.tolist() for k, v in curves.items()}}


def _linear_rnn(Wx, Wh, b, x, y):
    """Loss 0.5/N sum_n ||h_T[n] - y[n]||^2 of h_t = x_t Wx + h_{t-1} Wh + b (h_0 = 0), and
    its gradients; x (N, T, D), y (N, H)."""
    N, T, _ = x.shape
    hs = [np.zeros((N, Wh.shape[0]))]
    for t in range(T):
        hs.append(x[:, t] @ Wx + hs[-1] @ Wh + b)
    r = hs[-1] - y
    loss = 0.5 * float(np.sum(r * r)) / N
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    delta = r / N
    for t in range(T - 1, -1, -1):
        dWx += x[:, t].T @ delta
        dWh += hs[t].T @ delta
        db += delta.sum(axis=0)
        delta = delta @ Wh.T
    return loss, {"Wx": dWx, "Wh": dWh, "b": db}


def rerun_clipping(P, seed, steps=100, lr=0.05):
    """Injection 1: SGD on a linear RNN at rho = 1.5, without and with P.clip_grad_norm."""
    rng = np.random.default_rng([seed, 3])
    x, y = rng.normal(size=(4, 20, 4)), rng.normal(size=(4, 8))
    start = {"Wh": _matrix(P, rng.normal(size=(8, 8)), 1.5, "scale_spectral_radius(W, 1.5)"),
             "Wx": rng.normal(size=(4, 8)) / 2.0, "b": np.zeros(8)}
    noclip, params = [], dict(start)
    with np.errstate(all="ignore"):
        for _ in range(steps):
            loss, grads = _linear_rnn(params["Wx"], params["Wh"], params["b"], x, y)
            noclip.append(loss)
            if not math.isfinite(loss):
                break
            params = {k: params[k] - lr * grads[k] for k in params}
    clip, update_norms, params = [], [], dict(start)
    for step in range(steps):
        loss, grads = _linear_rnn(params["Wx"], params["Wh"], params["b"], x, y)
        clip.append(loss)
        if not math.isfinite(loss):
            break
        clipped, total = expect_tuple(P.clip_grad_norm(grads, TAU), 2, "clip_grad_norm")
        if not isinstance(clipped, dict) or set(clipped) != set(grads):
            raise CheckFailed(f"clip_grad_norm should return a dict with the keys {sorted(grads)} first")
        for k in grads:
            expect_array(clipped[k], grads[k].shape, f"clip_grad_norm(...)[0][{k!r}]")
        update_norms.append(math.sqrt(math.fsum(float(np.sum(np.square(v))) for v in clipped.values())))
        params = {k: params[k] - lr * clipped[k] for k in params}
    else:
        clip.append(_linear_rnn(params["Wx"], params["Wh"], params["b"], x, y)[0])
    first = next((s for s, v in enumerate(noclip) if not math.isfinite(v)), math.inf)
    values = {"noclip_first_nonfinite_step": float(first), "clip_loss_start": clip[0],
              "clip_loss_end": clip[-1] if len(clip) == steps + 1 else math.nan,
              "clip_max_update_norm": max(update_norms) if update_norms else math.nan}
    holds = bool(CRITERIA["clipping_caps_norm_keeps_training_alive"](values))
    return {"holds": holds, "values": values,
            "losses": {"clip": [v for v in clip if math.isfinite(v)], "noclip": [v for v in noclip if math.isfinite(v)],
                       "noclip_first_nonfinite_step": first if math.isfinite(first) else None}}


def rerun_vanishing(P, seed):
    """Injection 2: tanh RNN at rho = 0.5 through P.rnn_forward/rnn_backward, then P.clip_grad_norm."""
    rng = np.random.default_rng([seed, 4])
    x = rng.normal(size=(1, T_STEPS, 4))
    Wx = rng.normal(size=(4, 16)) / 2.0
    Wh = _matrix(P, rng.normal(size=(16, 16)), 0.5, "scale_spectral_radius(W, 0.5)")
    h, cache = expect_tuple(P.rnn_forward(x, np.zeros((1, 16)), Wx, Wh, np.zeros(16)), 2, "bptt.rnn_forward")
    expect_array(h, (1, T_STEPS, 16), "bptt.rnn_forward's h")
    dh = np.zeros((1, T_STEPS, 16))
    dh[0, -1] = 1.0
    dx, dh0, dWx, dWh, db = expect_tuple(P.rnn_backward(dh, cache), 5, "bptt.rnn_backward")
    expect_array(dx, x.shape, "bptt.rnn_backward's dx")
    clipped, _ = expect_tuple(P.clip_grad_norm({"x": dx, "h0": dh0, "Wx": dWx, "Wh": dWh, "b": db}, TAU), 2,
                              "clip_grad_norm")
    dx_clip = expect_array(clipped.get("x") if isinstance(clipped, dict) else None, x.shape,
                           "clip_grad_norm(...)[0]['x']")
    values = {"vanish_dx1_noclip": float(np.linalg.norm(dx[:, 0])),
              "vanish_dx1_clip": float(np.linalg.norm(dx_clip[:, 0])),
              "vanish_dxT": float(np.linalg.norm(dx[:, -1]))}
    return {"holds": bool(CRITERIA["clipping_does_not_rescue_vanishing"](values)), "values": values}


def rerun_bptt(P, seed, step=1e-6):
    """Level 3: P.rnn_backward against central differences of P.rnn_forward (all of Wx, Wh, b)."""
    rng = np.random.default_rng([seed, 5])
    N, T, D, H = 2, 12, 4, 8
    x, h0 = rng.normal(size=(N, T, D)), rng.normal(size=(N, H))
    params = [rng.normal(size=(D, H)) / 2.0, rng.normal(size=(H, H)) / math.sqrt(H), 0.1 * rng.normal(size=H)]
    R = rng.normal(size=(N, T, H))

    def loss():
        h = expect_array(expect_tuple(P.rnn_forward(x, h0, *params), 2, "bptt.rnn_forward")[0], (N, T, H),
                         "bptt.rnn_forward's h")
        return math.fsum((R * h).ravel())

    _, cache = expect_tuple(P.rnn_forward(x, h0, *params), 2, "bptt.rnn_forward")
    grads = expect_tuple(P.rnn_backward(R, cache), 5, "bptt.rnn_backward")[2:]
    for g, p, name in zip(grads, params, ("dWx", "dWh", "db")):
        expect_array(g, p.shape, f"bptt.rnn_backward's {name}")
    numeric = finite_differences(loss, params, step)
    g = np.concatenate([np.ravel(v) for v in grads])
    g_num = np.concatenate([v.ravel() for v in numeric])
    denom = np.linalg.norm(g) + np.linalg.norm(g_num)
    err = float(np.linalg.norm(g - g_num) / denom) if denom > 0 else 0.0
    values = {"bptt_rel_error": err}
    return {"holds": bool(CRITERIA["bptt_matches_finite_difference"](values)), "values": values}


RERUNS = {
    "near_one_product_stays_bounded": "products",
    "rho_below_one_gradient_decays": "spectral",
    "rho_above_one_gradient_explodes": "spectral",
    "rho_one_tanh_saturation_still_decays": "spectral",
    "clipping_caps_norm_keeps_training_alive": "clipping",
    "clipping_does_not_rescue_vanishing": "vanishing",
    "bptt_matches_finite_difference": "bptt",
}
RERUN_FUNCTIONS = {"products": rerun_products, "spectral": rerun_spectral, "clipping": rerun_clipping,
                   "vanishing": rerun_vanishing, "bptt": rerun_bptt}


def rerun_holds(key: str, result: dict) -> bool:
    holds = result["holds"]
    return bool(holds[key] if isinstance(holds, dict) else holds)


# ================================================== checks of a run_fault_injection result
def check_returned(key: str, run: dict, expect: bool) -> None:
    """The signal `key` in a dict returned by run_fault_injection: present, a bool equal to
    `expect`, its figures numbers that agree with it (and in RANGES when expected true)."""
    if not isinstance(run, dict):
        raise CheckFailed(f"run_fault_injection should return a dict, got {type(run).__name__}")
    missing = [k for k in (key, *SIGNAL_FIGURES[key]) if k not in run]
    if missing:
        raise CheckFailed(f"run_fault_injection's dict lacks the key(s) {', '.join(missing)} (SPEC §4)")
    if not isinstance(run[key], bool):
        raise CheckFailed(f"run_fault_injection()[{key!r}] should be a bool, got {type(run[key]).__name__}")
    figures = {}
    for fig in SIGNAL_FIGURES[key]:
        v = run[fig]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise CheckFailed(f"run_fault_injection()[{fig!r}] should be a float, got {type(v).__name__}")
        figures[fig] = float(v)
    criterion = bool(CRITERIA[key](figures))
    shown = ", ".join(f"{k} = {_fmt(v)}" for k, v in figures.items())
    if run[key] != criterion:
        raise CheckFailed(f"{key} = {run[key]} does not agree with its own figures ({shown}): the signal must be "
                          "computed from the measured values with the criterion of SPEC §4")
    if run[key] != expect:
        if expect:
            raise CheckFailed(f"{key} is False ({shown}); expected True. {SIGNAL_HINTS[key]}")
        raise CheckFailed(f"{key} stayed True ({shown}) although a primitive of its experiment was replaced "
                          f"by a broken one: the signal does not measure what it claims. {SIGNAL_HINTS[key]}")
    if expect:
        for fig, v in figures.items():
            lo, hi = RANGES[fig]
            if not lo <= v <= hi:
                raise CheckFailed(f"{fig} = {_fmt(v)} is outside the plausible range [{_fmt(lo)}, {_fmt(hi)}] "
                                  f"for this experiment (SPEC §4). {SIGNAL_HINTS[key]}")


# ================================================================== fixtures and records
def _record(signals, report_extras, key, way, ok, **fields):
    signals[key] = bool(signals.get(key, True) and ok)
    lab = report_extras.setdefault(TOPIC, {})
    entry = lab.setdefault("signals", {}).setdefault(key, {"expected": EXPECTED[key]})
    entry.setdefault("checks", {})[way] = bool(ok)
    entry.update({k: _plain(v) for k, v in fields.items()})


class _Graded:
    """Records one way of grading a signal, whether the test passes or raises."""

    def __init__(self, signals, report_extras, key, way):
        self.args, self.fields = (signals, report_extras, key, way), {}

    def __enter__(self):
        return self.fields

    def __exit__(self, exc_type, exc, tb):
        if exc is not None:
            self.fields[f"{self.args[3]}_message"] = str(getattr(exc, "message", exc))[:300]
        _record(*self.args, exc is None, **self.fields)
        return False


@pytest.fixture(scope="module")
def lab(fault_injection, run_seed, report_extras):
    """The student's run_fault_injection(seed), once per grading run, and a cache of patched runs."""
    seed = pool_seed(run_seed, "run_fault_injection")
    record = report_extras.setdefault(TOPIC, {})
    record["seed"] = seed
    state = {"seed": seed, "patched": {}}
    try:
        state["run"] = fault_injection.run_fault_injection(seed)
        record["returned"] = _plain(state["run"]) if isinstance(state["run"], dict) else repr(state["run"])[:200]
    except Exception as exc:  # noqa: BLE001 - re-raised in every test that needs it
        state["error"] = exc
        record["returned_error"] = str(getattr(exc, "message", exc))[:300]
    return state


def _lab_run(lab):
    if "error" in lab:
        raise lab["error"]
    return lab["run"]


def _patched_run(fault_injection, lab, target, helper):
    name = f"{target}={type(helper).__name__}"
    if name not in lab["patched"]:
        try:
            lab["patched"][name] = fault_injection.run_fault_injection.patched({target: helper})(lab["seed"])
        except Exception as exc:  # noqa: BLE001
            lab["patched"][name] = exc
    result = lab["patched"][name]
    if isinstance(result, Exception):
        message = getattr(result, "message", str(result))
        raise CheckFailed(f"run_fault_injection({lab['seed']}) failed when {target} was replaced by a broken version "
                          f"({type(helper).__name__}): {message[:400]}. The lab should measure and report, "
                          "not stop, when a primitive misbehaves") from None
    return name, result


def _measured(key, fault_injection, lab, signals, report_extras):
    with _Graded(signals, report_extras, key, "measured") as fields:
        run = _lab_run(lab)
        fields["actual"] = run.get("bptt_rel_error") if key == "bptt_matches_finite_difference" and isinstance(
            run, dict) else (run.get(key) if isinstance(run, dict) else None)
        fields["figures"] = {f: run.get(f) for f in SIGNAL_FIGURES[key]} if isinstance(run, dict) else {}
        check_returned(key, run, expect=True)
        fields["patched"] = {}
        for target, helper in BROKEN[key]:
            name, patched = _patched_run(fault_injection, lab, target, helper)
            fields["patched"][name] = patched.get(key) if isinstance(patched, dict) else None
            check_returned(key, patched, expect=False)


@pytest.fixture(scope="module")
def reruns(fault_injection, bptt, reference, run_seed, report_extras):
    """The grader's own experiments through the student's primitives, each once per run.
    The curves for reports/fault_injection.png are taken from here (or from the reference
    primitives when the student's failed, labelled so)."""
    student = Primitives(fault_injection, bptt)
    ref = Primitives(reference.fault_injection, reference.bptt)
    cache = {}

    def get(name):
        if name not in cache:
            seed = pool_seed(run_seed, f"rerun-{name}")
            try:
                cache[name] = {"seed": seed, "result": RERUN_FUNCTIONS[name](student, seed), "source": "student"}
            except Exception as exc:  # noqa: BLE001
                cache[name] = {"seed": seed, "error": exc}
                if name in ("spectral", "clipping"):
                    cache[name]["fallback"] = RERUN_FUNCTIONS[name](ref, seed)
            _store_figure_data(report_extras, name, cache[name])
        return cache[name]

    return get


def _store_figure_data(report_extras, name, entry):
    lab = report_extras.setdefault(TOPIC, {})
    result = entry.get("result") or entry.get("fallback")
    source = "student" if "result" in entry else "reference"
    if name == "spectral" and result:
        lab["curves"] = {"source": source, "seed": entry["seed"], "steps_back": list(range(1, T_STEPS + 1)),
                         "norms": _plain(result["curves"])}
    if name == "clipping" and result:
        lab["loss_curves"] = {"source": source, "seed": entry["seed"], **_plain(result["losses"])}


def _rerun(key, reruns, signals, report_extras):
    with _Graded(signals, report_extras, key, "rerun") as fields:
        entry = reruns(RERUNS[key])
        fields["rerun_seed"] = entry["seed"]
        if "error" in entry:
            raise entry["error"]
        result = entry["result"]
        fields["rerun_values"] = {k: v for k, v in result["values"].items()}
        if not rerun_holds(key, result):
            shown = ", ".join(f"{k} = {_fmt(v)}" for k, v in result["values"].items())
            raise CheckFailed(f"the grader's own run of the {key} experiment, calling your primitives, does not "
                              f"show the signal ({shown}). {SIGNAL_HINTS[key]}")


# ============================================================ primitives, known answers
def _running_log_sum(factors):
    out, acc = [], []
    for f in factors:
        if f == 0 or (out and out[-1] == -math.inf):
            out.append(-math.inf)
            continue
        acc.append(math.log(abs(f)))
        out.append(math.fsum(acc))
    return np.array(out)


def _expect_log_values(got, expected, what):
    got = expect_array(got, expected.shape, what)
    inf_expected = np.isneginf(expected)
    if not np.array_equal(np.isneginf(got), inf_expected):
        where = int(np.flatnonzero(np.isneginf(got) != inf_expected)[0])
        raise CheckFailed(f"{what}[{where}] = {_fmt(float(got[where]))}, expected {_fmt(float(expected[where]))} "
                          "(-inf from the first zero factor on, finite before it)")
    finite = ~inf_expected
    err = np.abs(got[finite] - expected[finite]) / (1 + np.abs(expected[finite]))
    if not np.all(np.isfinite(got[finite])) or (err.size and err.max() > 1e-9):
        where = int(np.flatnonzero(finite)[np.argmax(np.where(np.isfinite(err), err, np.inf))])
        raise CheckFailed(f"{what}[{where}] = {_fmt(float(got[where]))}, expected {_fmt(float(expected[where]))}")


def test_log_abs_cumprod_matches_running_log_sum(fault_injection, rng):
    signs = rng.choice([-1.0, 1.0], size=40)
    factors = signs * rng.uniform(0.2, 3.0, size=40)
    factors[29] = 0.0
    got = fault_injection.log_abs_cumprod(factors)
    expect_not_mutated(fault_injection, "log_abs_cumprod")
    _expect_log_values(got, _running_log_sum(factors), "log_abs_cumprod(factors) (signs mixed, a zero at index 29)")


def test_log_abs_cumprod_does_not_underflow_or_overflow(fault_injection, rng):
    for lo, hi, what in [(0.01, 0.3, "500 factors in [0.01, 0.3] (the product underflows to 0.0)"),
                         (4.0, 8.0, "500 factors in [4, 8] (the product overflows to inf)")]:
        factors = rng.uniform(lo, hi, size=500) * rng.choice([-1.0, 1.0], size=500)
        _expect_log_values(fault_injection.log_abs_cumprod(factors), _running_log_sum(factors),
                           f"log_abs_cumprod of {what}")


def _with_spectrum(rng, eigenvalues):
    """A non-normal real matrix with the given eigenvalues (complex ones as 2x2 rotation blocks)."""
    blocks = []
    for ev in eigenvalues:
        if isinstance(ev, complex):
            blocks.append(np.array([[ev.real, -ev.imag], [ev.imag, ev.real]]))
        else:
            blocks.append(np.array([[ev]]))
    n = sum(b.shape[0] for b in blocks)
    A, i = np.zeros((n, n)), 0
    for b in blocks:
        A[i:i + b.shape[0], i:i + b.shape[0]] = b
        i += b.shape[0]
    Q = np.eye(n) + np.triu(rng.normal(size=(n, n)), 1)    # det 1, well conditioned, not orthogonal
    return Q @ A @ np.linalg.inv(Q)


def test_scale_spectral_radius_uses_largest_eigenvalue_modulus(fault_injection, rng):
    cases = [
        ("a matrix whose dominant eigenvalue is -3 (largest real part 2)", [-3.0, 2.0, 1.0, 0.5], 3.0),
        ("a matrix with eigenvalues 0.4 +- 2i (modulus 2.04) and 1.5", [complex(0.4, 2.0), 1.5, -0.2],
         math.hypot(0.4, 2.0)),
        ("a strongly non-normal matrix (largest singular value >> spectral radius)", None, 1.0),
    ]
    for what, spectrum, radius in cases:
        if spectrum is None:
            W = np.triu(rng.normal(size=(5, 5)) * 6.0, 1) + np.diag([1.0, -0.5, 0.25, 0.8, -0.9])
        else:
            W = _with_spectrum(rng, spectrum)
        for rho in (0.5, 1.5):
            got = expect_array(fault_injection.scale_spectral_radius(W, rho), W.shape,
                               f"scale_spectral_radius on {what}")
            expect_not_mutated(fault_injection, "scale_spectral_radius")
            expected = W * (rho / radius)
            err = np.max(np.abs(got - expected)) / np.max(np.abs(expected))
            if not err < 1e-8:
                measured = float(np.max(np.abs(np.linalg.eigvals(got)))) if np.all(np.isfinite(got)) else math.nan
                raise CheckFailed(f"scale_spectral_radius(W, {rho}) on {what}: the result has spectral radius "
                                  f"{_fmt(measured)}, expected {rho} (and it must be a positive multiple of W)")


def _fd_chain_norms(Wh, U, h0, step=1e-6):
    """||dh_T/dh_{T-k}||_2 by central differences of the rollout h_t = tanh(h_{t-1} Wh + U[t-1])."""
    T, H = U.shape
    hs = [h0]
    for t in range(T):
        hs.append(np.tanh(hs[-1] @ Wh + U[t]))

    def roll(h, start):
        for t in range(start, T):
            h = np.tanh(h @ Wh + U[t])
        return h

    norms = np.empty(T)
    for k in range(1, T + 1):
        start = T - k
        J = np.empty((H, H))
        for j in range(H):
            e = np.zeros(H)
            e[j] = step
            J[:, j] = (roll(hs[start] + e, start) - roll(hs[start] - e, start)) / (2 * step)
        norms[k - 1] = np.linalg.norm(J, 2)
    return np.array(hs), norms


def test_jacobian_chain_norms_tanh_matches_finite_differences(fault_injection, rng):
    for scale, what in [(0.7, "small states"), (2.5, "saturating states")]:
        H, T = 5, 7
        Wh = rng.normal(size=(H, H)) * scale / math.sqrt(H)
        hs, expected = _fd_chain_norms(Wh, rng.normal(size=(T, H)) * 0.8, np.tanh(rng.normal(size=H)))
        got = expect_array(fault_injection.jacobian_chain_norms(Wh, hs, "tanh"), (T,),
                           f"jacobian_chain_norms(Wh, hs, 'tanh') with {what}")
        expect_not_mutated(fault_injection, "jacobian_chain_norms")
        # finite differences carry an absolute error ~1e-10 (the smallest norms here are ~1e-9)
        excess = np.abs(got - expected) / (1e-6 * expected + 1e-8)
        if not np.max(excess) <= 1.0:
            k = int(np.argmax(excess)) + 1
            raise CheckFailed(f"jacobian_chain_norms(Wh, hs, 'tanh') with {what}: ||dh_T/dh_(T-{k})|| = "
                              f"{_fmt(float(got[k - 1]))}, finite differences give {_fmt(float(expected[k - 1]))}")


def test_jacobian_chain_norms_linear_is_the_weight_factor(fault_injection, rng):
    H, T = 6, 9
    Wh = rng.normal(size=(H, H)) / math.sqrt(H) * 1.3
    hs = np.tanh(rng.normal(size=(T + 1, H)))          # not a linear rollout: the states must not matter
    expected = np.array([np.linalg.norm(np.linalg.matrix_power(Wh, k), 2) for k in range(1, T + 1)])
    got = expect_array(fault_injection.jacobian_chain_norms(Wh, hs, "linear"), (T,),
                       "jacobian_chain_norms(Wh, hs, 'linear')")
    err = np.abs(got - expected) / expected
    if not np.max(err) < 1e-8:
        k = int(np.argmax(err)) + 1
        raise CheckFailed(f"jacobian_chain_norms(Wh, hs, 'linear')[{k - 1}] = {_fmt(float(got[k - 1]))}, expected "
                          f"||Wh^{k}||_2 = {_fmt(float(expected[k - 1]))} (no activation factor in the linear chain)")


def test_clip_grad_norm_global_scaling_keeps_direction(fault_injection, rng):
    def call(grads, max_norm, what):
        clipped, total = expect_tuple(fault_injection.clip_grad_norm(grads, max_norm), 2, "clip_grad_norm")
        expect_not_mutated(fault_injection, "clip_grad_norm")
        if not isinstance(clipped, dict) or set(clipped) != set(grads):
            raise CheckFailed(f"clip_grad_norm({what})[0] should be a dict with the keys {sorted(grads)}")
        oracle = math.sqrt(math.fsum(float(v) ** 2 for g in grads.values() for v in np.ravel(g)))
        try:
            total = float(total)
        except (TypeError, ValueError):
            raise CheckFailed(f"clip_grad_norm({what})[1] should be a number, got {type(total).__name__}") from None
        if not abs(total - oracle) <= 1e-9 * oracle:
            raise CheckFailed(f"clip_grad_norm({what}) returned total_norm {_fmt(total)}, expected the global L2 "
                              f"norm over all arrays {_fmt(oracle)}")
        return clipped, oracle

    grads = {"Wx": rng.normal(size=(4, 3)) * 3.0, "b": rng.normal(size=3) * 0.05, "Wh": rng.normal(size=(2, 2, 2)) * 5}
    for factor, what in [(0.3, "a total norm above max_norm"), (1e-7, "a total norm 1e7 times max_norm")]:
        total = math.sqrt(sum(float(np.sum(g**2)) for g in grads.values()))
        max_norm = factor * total
        clipped, oracle = call(grads, max_norm, what)
        for k, g in grads.items():
            c = expect_array(clipped[k], g.shape, f"clip_grad_norm({what})[0][{k!r}]")
            ratio = np.linalg.norm(c - g * (max_norm / oracle)) / np.linalg.norm(g * (max_norm / oracle))
            if not ratio < 1e-6:
                raise CheckFailed(f"clip_grad_norm with {what}: {k!r} is not grads[{k!r}] * max_norm / total_norm "
                                  "(every array must be scaled by the same factor, computed from the global norm)")
    small = {"a": rng.normal(size=(3, 2)), "b": rng.normal(size=4)}
    for max_norm, grads2, what in [(100.0, small, "a total norm below max_norm"),
                                   (1.0, {"a": np.zeros((2, 2)), "b": np.zeros(3)}, "all-zero gradients")]:
        clipped, _ = call(grads2, max_norm, what)
        for k, g in grads2.items():
            c = expect_array(clipped[k], g.shape, f"clip_grad_norm({what})[0][{k!r}]")
            if not (np.all(np.isfinite(c)) and np.allclose(c, g, rtol=1e-12, atol=0)):
                raise CheckFailed(f"clip_grad_norm with {what} changed {k!r}: below the threshold the gradients "
                                  "must stay as they are (clipping only ever scales down)")


# ================================================================= the seven signals
def test_near_one_product_stays_bounded_measured(fault_injection, lab, signals, report_extras):
    _measured("near_one_product_stays_bounded", fault_injection, lab, signals, report_extras)


def test_near_one_product_stays_bounded_rerun(reruns, signals, report_extras):
    _rerun("near_one_product_stays_bounded", reruns, signals, report_extras)


def test_rho_below_one_gradient_decays_measured(fault_injection, lab, signals, report_extras):
    _measured("rho_below_one_gradient_decays", fault_injection, lab, signals, report_extras)


def test_rho_below_one_gradient_decays_rerun(reruns, signals, report_extras):
    _rerun("rho_below_one_gradient_decays", reruns, signals, report_extras)


def test_rho_above_one_gradient_explodes_measured(fault_injection, lab, signals, report_extras):
    _measured("rho_above_one_gradient_explodes", fault_injection, lab, signals, report_extras)


def test_rho_above_one_gradient_explodes_rerun(reruns, signals, report_extras):
    _rerun("rho_above_one_gradient_explodes", reruns, signals, report_extras)


def test_rho_one_tanh_saturation_still_decays_measured(fault_injection, lab, signals, report_extras):
    _measured("rho_one_tanh_saturation_still_decays", fault_injection, lab, signals, report_extras)


def test_rho_one_tanh_saturation_still_decays_rerun(reruns, signals, report_extras):
    _rerun("rho_one_tanh_saturation_still_decays", reruns, signals, report_extras)


def test_clipping_caps_norm_keeps_training_alive_measured(fault_injection, lab, signals, report_extras):
    _measured("clipping_caps_norm_keeps_training_alive", fault_injection, lab, signals, report_extras)


def test_clipping_caps_norm_keeps_training_alive_rerun(reruns, signals, report_extras):
    _rerun("clipping_caps_norm_keeps_training_alive", reruns, signals, report_extras)


def test_clipping_does_not_rescue_vanishing_measured(fault_injection, lab, signals, report_extras):
    _measured("clipping_does_not_rescue_vanishing", fault_injection, lab, signals, report_extras)


def test_clipping_does_not_rescue_vanishing_rerun(reruns, signals, report_extras):
    _rerun("clipping_does_not_rescue_vanishing", reruns, signals, report_extras)


def test_bptt_matches_finite_difference_measured(fault_injection, lab, signals, report_extras):
    _measured("bptt_matches_finite_difference", fault_injection, lab, signals, report_extras)


def test_bptt_matches_finite_difference_rerun(reruns, signals, report_extras):
    _rerun("bptt_matches_finite_difference", reruns, signals, report_extras)
