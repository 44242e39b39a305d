"""Known-broken versions of the fault-injection primitives (the third way fault_lab.py grades a signal).

The hidden suite re-runs the student's `run_fault_injection(seed)` in a fresh worker whose
copy of the module has one primitive's body replaced by one of these, e.g.

    fault_injection.run_fault_injection.replaced({"fault_injection.clip_grad_norm": NO_CLIP.body})(seed)

and checks that the matching signal turns false. The student's own `def` makes the broken
function (autograder/isolation/rewrite.py), so identity, names and docstring are the
student's; or the student's own function runs and its result is scaled (`ScaledPrimitive`).
A lab can still tell such a run from its own (source, code objects, a call whose answer it
knows: issue 37), so nothing rests on it not knowing: the figures of every broken run are
compared with the docstrings' procedure through the same broken primitive, and where a
figure of the lab's own choosing (bptt_rel_error on its own loss) is not reproducible, the
scaled rnn_backward makes it so.

Each body is one line of plain numpy (no docstring, no grader path: it is written into
the student's file in that worker) that keeps the primitive's signature and output shapes
and is wrong in one named way. Each one is checked to flip its signal on every seed of the
suite's pool (tests/content/test_fault_injection_seeds.py); `function()` is the same code, built
in the grader for the grader's own run of the procedure.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from autograder.isolation.rewrite import Body, Scaled, scaled_result


@dataclass(frozen=True)
class BrokenPrimitive:
    name: str           # how reports name the run
    body: Body

    def function(self):
        """The body as a function of the grader's process (numpy as `np`)."""
        names = ", ".join(f"{name}={default}" for name, default in self.body.params)
        namespace = {"np": np}
        exec(f"def {self.name}({names}):\n    {self.body.line}\n", namespace)   # noqa: S102 - our own text
        return namespace[self.name]

    def body_for(self, seed: int) -> Body:
        """What the worker's copy of the module runs in the lab's run on `seed`."""
        return self.body

    def function_for(self, seed: int, original):
        """The same in the grader's process, in the place of `original` (unused here)."""
        return self.function()


@dataclass(frozen=True)
class ScaledPrimitive:
    """The student's own function, its result times a factor in `factors` drawn per grading
    from the lab's seed (rewrite.Scaled). A lab can tell the run apart (issue 37), but what the
    factor does to a figure it can only measure: nothing else gives that number."""

    name: str
    factors: tuple[float, float]

    def factor(self, seed: int) -> float:
        low, high = self.factors
        return float(low + (high - low) * np.random.default_rng([seed, zlib.crc32(self.name.encode())]).random())

    def body_for(self, seed: int) -> Scaled:
        return Scaled(self.factor(seed))

    def function_for(self, seed: int, original):
        """`original` (the reference's function, or a stand-in) with its result scaled the same way."""
        return ScaledFunction(original, self.factor(seed))


@dataclass(frozen=True)
class ScaledFunction:
    """A function whose result is scaled by `factor` as the worker's scaled copy scales it
    (rewrite.scaled_result: every number of it, through tuples, lists and dicts)."""

    function: object
    factor: float

    def __call__(self, *args):
        return scaled_result(self.function(*args), self.factor)   # type: ignore[operator]


_NP = "np = __import__('numpy'); "      # the student's module may not have imported numpy as np

# log_abs_cumprod that forgets to accumulate: log|factor_t| instead of log|prod_{s<=t}|.
# Breaks near_one_product_stays_bounded (the below-one group ends near -1, not below -100).
LOG_ABS_NO_CUMSUM = BrokenPrimitive("LogAbsNoCumsum", Body(
    (("factors", "None"),),
    _NP + "return np.log(np.abs(np.asarray(factors, dtype=float)) + 1e-300)"))

# scale_spectral_radius that normalises to radius 1 and forgets to multiply by rho. Breaks
# rho_below_one_gradient_decays (at radius 1 the undriven tanh chain stays far above 1e-10)
# and rho_above_one_gradient_explodes (the linear chain stays between 1 and ~1e2).
SCALE_IGNORES_RHO = BrokenPrimitive("ScaleIgnoresRho", Body(
    (("W", "None"), ("rho", "1.0")),
    _NP + "return np.asarray(W, dtype=float) / np.max(np.abs(np.linalg.eigvals(W)))"))

# jacobian_chain_norms that multiplies only the activation factors diag(act'), not Wh^T (a
# product of diagonal matrices, whose 2-norm is the largest |entry|). Breaks
# rho_below_one_gradient_decays (no decay left) and rho_above_one_gradient_explodes.
CHAIN_WITHOUT_WEIGHTS = BrokenPrimitive("ChainWithoutWeights", Body(
    (("Wh", "None"), ("hs", "None"), ("activation", "'tanh'")),
    _NP + "hs = np.asarray(hs, dtype=float); "
    "dact = 1.0 - hs[1:] ** 2 if activation == 'tanh' else np.ones_like(hs[1:]); "
    "return np.max(np.abs(np.cumprod(dact[::-1], axis=0)), axis=1)"))

# jacobian_chain_norms that treats every activation as linear (||(Wh^T)^k||_2). Breaks
# rho_one_tanh_saturation_still_decays: tanh and linear chains become equal.
CHAIN_WITHOUT_ACTIVATION = BrokenPrimitive("ChainWithoutActivation", Body(
    (("Wh", "None"), ("hs", "None"), ("activation", "'tanh'")),
    _NP + "Wt = np.asarray(Wh, dtype=float).T; T = np.shape(hs)[0] - 1; "
    "return np.array([np.linalg.norm(np.linalg.matrix_power(Wt, k), 2) for k in range(1, T + 1)])"))

# clip_grad_norm that measures the global norm but never rescales. Breaks
# clipping_caps_norm_keeps_training_alive (the clipped run blows up too).
NO_CLIP = BrokenPrimitive("NoClip", Body(
    (("grads", "None"), ("max_norm", "None")),
    _NP + "err = np.seterr(over='ignore', invalid='ignore'); "
    "total = float(np.sqrt(sum(float(np.sum(np.square(g))) for g in grads.values()))); np.seterr(**err); "
    "return {k: np.array(g, dtype=float) for k, g in grads.items()}, total"))

# bptt.rnn_backward that returns zero gradients but for one spike, db[0] = ||dh|| (it never
# reads the cache); the lab's RNNs have D = 4 inputs in every experiment. Breaks
# clipping_does_not_rescue_vanishing (dL/dx_T is 0, not > 1e-3) and
# bptt_matches_finite_difference: the whole-vector ratio of such a g is 0.70 ... 0.84 on the
# pool (the docstring's loss; 0.64 ... 0.83 with 0.5 sum h^2), far above 1e-6 and below 1,
# while an entry-by-entry ratio is 1 wherever g is 0 (fault_lab.BROKEN_RUN_BOUNDS).
SPIKE_RNN_BACKWARD = BrokenPrimitive("SpikeRNNBackward", Body(
    (("dh", "None"), ("cache", "None")),
    _NP + "N, T, H = np.shape(dh); db = np.zeros(H); db[0] = np.sqrt(np.sum(np.square(dh))); "
    "return np.zeros((N, T, 4)), np.zeros((N, H)), np.zeros((4, H)), np.zeros((H, H)), db"))

# bptt.rnn_backward that returns the student's own gradient times c, c in [1.5, 3] drawn per
# grading from the lab's seed. Breaks bptt_matches_finite_difference whatever loss the lab
# checks its gradient on: g = c g_num up to the finite differences' error, so the whole-vector
# ratio is |c - 1| / (c + 1) (0.2 ... 0.5) to ~1e-9, a number of this grading that only
# measuring gives. The spiked rnn_backward's ratio depends on the lab's loss (the topic's
# alternative takes another), so a lab that told that run apart could answer a constant there.
SCALED_RNN_BACKWARD = ScaledPrimitive("ScaledRNNBackward", (1.5, 3.0))
