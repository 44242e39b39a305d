"""Known-broken versions of the fault-injection primitives (the third way fault_lab.py grades a signal).

The hidden suite re-runs the student's `run_fault_injection(seed)` in a fresh worker whose
copy of the module has one primitive's body replaced by one of these, e.g.

    fault_injection.run_fault_injection.replaced({"fault_injection.clip_grad_norm": PER_ARRAY_CLIP.body(seed)})(seed)

and checks that the matching signal turns false, with the figures the docstrings' procedure
measures through the same broken primitive on the same seed. The student's own `def` makes
the broken function (autograder/isolation/rewrite.py), or its own function runs and its result
is scaled (`ScaledPrimitive`). Student code can still tell such a run from its own (the source
on disk, the code objects, the line numbers differ: issue 37), so nothing rests on it not
knowing: what a broken run measures depends on the draws of the seed and on factors drawn per
grading, never a constant a lab could return once it has told the run apart. A lab earns the
signal only by measuring it.

Each body is one line of plain numpy (no docstring, no grader path: it is written into
the student's file in that worker) that keeps the primitive's signature and output shapes
and is wrong in one named way. Each one is checked to flip its signal on every seed of the
suite's pool (tests/content/test_fault_injection_seeds.py); `function(seed, original)` is the
same code, built in the grader for the grader's own run of the procedure.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from autograder.isolation.rewrite import Body, Scaled


def _drawn(name: str, seed: int, factors: tuple[float, float]) -> tuple[float, int]:
    """A factor in `factors` and a numpy seed, drawn for the run named `name` from the lab's seed."""
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    low, high = factors
    return float(low + (high - low) * rng.random()), int(rng.integers(2**31))


@dataclass(frozen=True)
class BrokenPrimitive:
    """A one-line body (`line`, after binding `params`, see rewrite.Body). Where the line names
    {factor} (a number in `factors`) or {draw} (a seed for numpy), both are drawn per grading
    from the lab's seed (`body(seed)`): what the broken run measures is then a number the lab
    can only get by measuring, never a constant a lab could return once it tells the run apart."""

    name: str           # how reports name the run
    params: tuple[tuple[str, str], ...]
    line: str
    factors: tuple[float, float] = (1.0, 1.0)

    def body(self, seed: int) -> Body:
        factor, draw = _drawn(self.name, seed, self.factors)
        return Body(self.params, self.line.replace("{factor}", repr(factor)).replace("{draw}", str(draw)))

    def function(self, seed: int, original=None):
        """The body on `seed` as a function of the grader's process (numpy as `np`)."""
        body = self.body(seed)
        names = ", ".join(f"{name}={default}" for name, default in body.params)
        namespace = {"np": np}
        exec(f"def {self.name}({names}):\n    {body.line}\n", namespace)   # noqa: S102 - our own text
        return namespace[self.name]


@dataclass(frozen=True)
class ScaledPrimitive:
    """The student's own primitive, its result times a factor in `factors` drawn per grading
    from the lab's seed (rewrite.Scaled): its effect on each figure is the procedure's with
    the same factor, whatever the lab can tell about the run."""

    name: str
    factors: tuple[float, float]

    def body(self, seed: int) -> Scaled:
        return Scaled(_drawn(self.name, seed, self.factors)[0])

    def function(self, seed: int, original):
        """`original` (the reference's primitive) with its result scaled the same way."""
        factor = self.body(seed).factor

        def scaled(value):
            if isinstance(value, dict):
                return {key: scaled(item) for key, item in value.items()}
            if isinstance(value, (tuple, list)):
                return type(value)(scaled(item) for item in value)
            return np.multiply(value, factor)

        return lambda *args, **kwargs: scaled(original(*args, **kwargs))


Broken = BrokenPrimitive | ScaledPrimitive


_NP = "np = __import__('numpy'); "      # the student's module may not have imported numpy as np

# log_abs_cumprod that forgets to accumulate: log|factor_t| instead of log|prod_{s<=t}|.
# Breaks near_one_product_stays_bounded (the below-one group ends near -1, not below -100).
LOG_ABS_NO_CUMSUM = BrokenPrimitive(
    "LogAbsNoCumsum", (("factors", "None"),),
    _NP + "return np.log(np.abs(np.asarray(factors, dtype=float)) + 1e-300)")

# scale_spectral_radius that normalises to radius 1 and forgets to multiply by rho. Breaks
# rho_below_one_gradient_decays (at radius 1 the undriven tanh chain stays far above 1e-10)
# and rho_above_one_gradient_explodes (the linear chain stays between 1 and ~1e2).
SCALE_IGNORES_RHO = BrokenPrimitive(
    "ScaleIgnoresRho", (("W", "None"), ("rho", "1.0")),
    _NP + "return np.asarray(W, dtype=float) / np.max(np.abs(np.linalg.eigvals(W)))")

# jacobian_chain_norms that multiplies only the activation factors diag(act'), not Wh^T (a
# product of diagonal matrices, whose 2-norm is the largest |entry|). Breaks
# rho_below_one_gradient_decays (no decay left) and rho_above_one_gradient_explodes.
CHAIN_WITHOUT_WEIGHTS = BrokenPrimitive(
    "ChainWithoutWeights", (("Wh", "None"), ("hs", "None"), ("activation", "'tanh'")),
    _NP + "hs = np.asarray(hs, dtype=float); "
    "dact = 1.0 - hs[1:] ** 2 if activation == 'tanh' else np.ones_like(hs[1:]); "
    "return np.max(np.abs(np.cumprod(dact[::-1], axis=0)), axis=1)")

# jacobian_chain_norms that treats every activation as linear (||(Wh^T)^k||_2). Breaks
# rho_one_tanh_saturation_still_decays: tanh and linear chains become equal.
CHAIN_WITHOUT_ACTIVATION = BrokenPrimitive(
    "ChainWithoutActivation", (("Wh", "None"), ("hs", "None"), ("activation", "'tanh'")),
    _NP + "Wt = np.asarray(Wh, dtype=float).T; T = np.shape(hs)[0] - 1; "
    "return np.array([np.linalg.norm(np.linalg.matrix_power(Wt, k), 2) for k in range(1, T + 1)])")

# clip_grad_norm that clips each array by its own norm (the classic mistake), at a threshold of
# c * max_norm, c drawn in [1.2, 2]: the clipped gradient's global norm exceeds max_norm (the
# first steps of the exploding run clip every array). Breaks clipping_caps_norm_keeps_training_alive;
# clip_max_update_norm is then c and the draws' own number, measured, not a constant.
PER_ARRAY_CLIP = BrokenPrimitive(
    "PerArrayClip", (("grads", "None"), ("max_norm", "None")),
    _NP + "err = np.seterr(over='ignore', invalid='ignore'); cap = {factor} * max_norm; "
    "norms = {k: float(np.sqrt(np.sum(np.square(g)))) for k, g in grads.items()}; "
    "total = float(np.sqrt(sum(n * n for n in norms.values()))); "
    "out = {k: np.array(g, dtype=float) * (cap / norms[k] if norms[k] > cap else 1.0) for k, g in grads.items()}; "
    "np.seterr(**err); return out, total",
    factors=(1.2, 2.0))

# bptt.rnn_backward that never reads the cache: its gradients are c times arrays drawn from a
# numpy Generator (seed and c drawn per grading, c in [0.5, 2]); the lab's RNNs have D = 4
# inputs in every experiment. Breaks clipping_does_not_rescue_vanishing (dL/dx_1 does not
# vanish: the figures are c and the draw's, measured, not constants).
RANDOM_RNN_BACKWARD = BrokenPrimitive(
    "RandomRNNBackward", (("dh", "None"), ("cache", "None")),
    _NP + "N, T, H = np.shape(dh); draw = np.random.default_rng({draw}); "
    "return tuple({factor} * draw.normal(size=shape) for shape in ((N, T, 4), (N, H), (4, H), (H, H), (H,)))",
    factors=(0.5, 2.0))

# The student's own bptt.rnn_backward, its gradients times c, c in [1.5, 3]: against finite
# differences of the forward the relative error is |c - 1| / (c + 1), whatever loss and
# difference the lab takes (0.2 ... 0.5, never a constant). Breaks bptt_matches_finite_difference.
SCALED_RNN_BACKWARD = ScaledPrimitive("ScaledRNNBackward", (1.5, 3.0))
