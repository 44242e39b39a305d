"""Known-broken replacements of the fault-injection primitives (SPEC §4, the third way of grading).

The hidden suite re-runs the student's `run_fault_injection(seed)` with one module-level
primitive replaced by one of these, e.g.

    fault_injection.run_fault_injection.patched({"fault_injection.clip_grad_norm": NoClip()})(seed)

and checks that the matching signal turns false. A lab that really measures its signal
through the primitive reacts; a lab that returns constants, or recomputes the primitive
inline, does not. Each helper keeps the primitive's signature and output shapes and is
wrong in one named way. Each one is checked to flip its signal on every seed of the
suite's pool (tests/test_fault_injection_seeds.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograder.isolation.registry import register


@register
@dataclass
class LogAbsNoCumsum:
    """log_abs_cumprod that forgets to accumulate: log|factor_t| instead of log|prod_{s<=t}|.

    Breaks `near_one_product_stays_bounded` (the below-one group ends near -1, not below -100).
    """

    def __call__(self, factors):
        with np.errstate(divide="ignore"):
            return np.log(np.abs(np.asarray(factors, dtype=float)))


@register
@dataclass
class ScaleIgnoresRho:
    """scale_spectral_radius that normalises to radius 1 and forgets to multiply by rho.

    Breaks `rho_below_one_gradient_decays` (at radius 1 the undriven tanh chain stays far
    above 1e-10) and `rho_above_one_gradient_explodes` (at radius 1 the linear chain
    ||(W^T)^100|| stays between 1 and ~1e2).
    """

    def __call__(self, W, rho):
        return W / np.max(np.abs(np.linalg.eigvals(W)))


@register
@dataclass
class ChainWithoutWeights:
    """jacobian_chain_norms that multiplies only the activation factors diag(act'), not Wh^T.

    Breaks `rho_below_one_gradient_decays` (no decay left) and
    `rho_above_one_gradient_explodes` (the linear chain is the identity).
    """

    def __call__(self, Wh, hs, activation="tanh"):
        hs = np.asarray(hs, dtype=float)
        dact = 1.0 - hs[1:] ** 2 if activation == "tanh" else np.ones_like(hs[1:])
        # The product of diagonal matrices is diagonal: its 2-norm is the largest |entry|.
        return np.max(np.abs(np.cumprod(dact[::-1], axis=0)), axis=1)


@register
@dataclass
class ChainWithoutActivation:
    """jacobian_chain_norms that drops diag(act') and treats every activation as linear.

    Breaks `rho_one_tanh_saturation_still_decays`: tanh and linear chains become equal.
    """

    def __call__(self, Wh, hs, activation="tanh"):
        T = np.asarray(hs).shape[0] - 1
        norms, power = np.empty(T), np.eye(Wh.shape[0])
        for k in range(T):
            power = power @ Wh.T
            norms[k] = np.linalg.norm(power, 2)
        return norms


@register
@dataclass
class NoClip:
    """clip_grad_norm that measures the global norm but never rescales.

    Breaks `clipping_caps_norm_keeps_training_alive` (the clipped run blows up too).
    """

    def __call__(self, grads, max_norm):
        with np.errstate(over="ignore", invalid="ignore"):
            total = float(np.sqrt(sum(float(np.sum(np.square(g))) for g in grads.values())))
        return {k: np.array(g, dtype=float) for k, g in grads.items()}, total


@register
@dataclass
class ZeroRNNBackward:
    """bptt.rnn_backward that returns all-zero gradients (it never reads the cache).

    `D` is the input size of the lab's RNNs (SPEC §4: D = 4). Breaks
    `bptt_matches_finite_difference` (relative error 1) and
    `clipping_does_not_rescue_vanishing` (dL/dx_T is 0, not > 1e-3).
    """

    D: int = 4

    def __call__(self, dh, cache):
        N, T, H = np.shape(dh)
        return (np.zeros((N, T, self.D)), np.zeros((N, H)), np.zeros((self.D, H)),
                np.zeros((H, H)), np.zeros(H))
