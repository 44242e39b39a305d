"""The fault-injection lab as the grader runs it: its settings, the seven signals and
their criteria, the plausible ranges of the figures, the known-broken primitives, and the
grader's own experiments (`rerun_*`), which call whatever primitives they are given.

The hidden suite (`topics/fault_injection/test_hidden.py`) grades each signal three ways with
these tables; tests/content/test_fault_injection_seeds.py checks them on every seed of SEED_POOL
with the reference's primitives, so the ranges and criteria cannot drift.

A rerun's "figure" entry (per-step curves) is drawn in reports/fault_injection.png and
judges nothing: the verdicts are its "holds".
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from contextlib import contextmanager

import numpy as np

from autograder.authoring.checks import CheckFailed, expect_array, expect_tuple, finite_differences_batched
from autograder.i18n import N_, _
from autograder.units.rnn_prehistory import stacked
from autograder.units.rnn_prehistory.helpers.functions import CubicForm
from autograder.units.rnn_prehistory.lab.broken_primitives import (
    CHAIN_WITHOUT_ACTIVATION,
    CHAIN_WITHOUT_WEIGHTS,
    LOG_ABS_NO_CUMSUM,
    NO_CLIP,
    SCALE_IGNORES_RHO,
    SCALED_RNN_BACKWARD,
    SPIKE_RNN_BACKWARD,
    BrokenPrimitive,
    ScaledPrimitive,
)
from autograder.units.rnn_prehistory.lab.record import whole_sentences
from autograder.units.rnn_prehistory.oracles import NumericalGradient, RelError, RNNBackward, RNNForward

TOPIC = "fault_injection"
SEED_POOL = tuple(range(1000, 1064))

# The lab's settings (the stub's constants), restated here: the grader never reads the student's constants.
TAU = 5.0
CLIP_LR = 0.05             # the clipping experiment's SGD step size
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
EXPECTED: dict[str, bool | str] = {key: True for key in SIGNALS}
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
# has an upper bound on purpose: a tanh RNN at rho = 1.5 does not explode (the stub tells students so), so a
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


# The criterion of each signal, as a function of the figure keys (thresholds measured on 50 to 2000 seeds).
# They judge phenomena orders of magnitude apart (1e-10 against 1e10), not roundings; the one
# rounding-level margin, TAU * (1 + 1e-9) for a clipped update's norm, is above its gamma_n
# (n ~ 100 entries: ~1e-14) on any machine.
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

# The known-broken primitives that must turn each signal false: (the function they replace, broken primitive).
BROKEN: dict[str, list[tuple[str, BrokenPrimitive | ScaledPrimitive]]] = {
    "near_one_product_stays_bounded": [("fault_injection.log_abs_cumprod", LOG_ABS_NO_CUMSUM)],
    "rho_below_one_gradient_decays": [("fault_injection.scale_spectral_radius", SCALE_IGNORES_RHO),
                                      ("fault_injection.jacobian_chain_norms", CHAIN_WITHOUT_WEIGHTS)],
    # Not "divide by the largest singular value" here: for a 16 x 16 Gaussian W0 that leaves
    # an effective radius above 1.2 in 0.3 % of draws (measured on 20000), enough to explode.
    "rho_above_one_gradient_explodes": [("fault_injection.scale_spectral_radius", SCALE_IGNORES_RHO),
                                        ("fault_injection.jacobian_chain_norms", CHAIN_WITHOUT_WEIGHTS)],
    "rho_one_tanh_saturation_still_decays": [("fault_injection.jacobian_chain_norms", CHAIN_WITHOUT_ACTIVATION)],
    "clipping_caps_norm_keeps_training_alive": [("fault_injection.clip_grad_norm", NO_CLIP)],
    # Not ScaleIgnoresRho here: at radius 1 the driven tanh RNN saturates and dL/dx_1 still
    # vanishes (~1e-23), which is the lab's point about saturation, not a missed break.
    "clipping_does_not_rescue_vanishing": [("bptt.rnn_backward", SPIKE_RNN_BACKWARD)],
    # The spike catches a ratio taken entry by entry (NOT_REPRODUCIBLE_BOUNDS); the scaled
    # gradient gives a ratio of this grading, compared with the procedure's (REPRODUCIBLE_IN).
    "bptt_matches_finite_difference": [("bptt.rnn_backward", SPIKE_RNN_BACKWARD),
                                       ("bptt.rnn_backward", SCALED_RNN_BACKWARD)],
}
# A run with broken primitives is the student's lab at its full size, in a fresh worker:
# nothing in it (no shrunk constant, no swapped attribute) may tell it from the student's
# own run (issue 24). Each costs a worker and a whole lab (~0.3 s), so the six broken
# primitives go in three runs. A run that raises loses every signal it checks, so no broken
# primitive of a run may hand a student primitive an input the normal run does not: the
# log product, the radius and the chain's factors feed none (the radius only makes the
# other experiments' matrices of radius 1); the spiked rnn_backward would hand the student's
# clip a gradient of zeros but one entry (the normal run never gives one), so it goes
# with the broken clip, and no student clip runs; the scaled rnn_backward hands it a gradient
# of the normal run times 1.5 ... 3. tests/content/test_fault_injection_seeds.py
# checks on every pool seed that each run turns every signal it checks false.
BROKEN_RUNS: tuple[dict[str, BrokenPrimitive | ScaledPrimitive], ...] = (
    {"fault_injection.log_abs_cumprod": LOG_ABS_NO_CUMSUM,
     "fault_injection.scale_spectral_radius": SCALE_IGNORES_RHO,
     "fault_injection.jacobian_chain_norms": CHAIN_WITHOUT_ACTIVATION},
    {"fault_injection.clip_grad_norm": NO_CLIP, "bptt.rnn_backward": SPIKE_RNN_BACKWARD},
    {"fault_injection.jacobian_chain_norms": CHAIN_WITHOUT_WEIGHTS, "bptt.rnn_backward": SCALED_RNN_BACKWARD},
)


def run_name(replacements: dict) -> str:
    return " + ".join(f"{target}={broken.name}" for target, broken in replacements.items())


def broken_runs() -> dict[str, tuple[dict, list[str]]]:
    """Each run: name -> (its replacements {target: BrokenPrimitive}, the signals it must turn false)."""
    return {run_name(run): (run, [key for key, entries in BROKEN.items()
                                  if any(run.get(target) is broken for target, broken in entries)])
            for run in BROKEN_RUNS}


def broken_run_of(target: str, broken: BrokenPrimitive | ScaledPrimitive) -> str:
    """The name of the run that replaces `target` by `broken`."""
    return next(run_name(run) for run in BROKEN_RUNS if run.get(target) is broken)


SIGNAL_HINTS = {
    "near_one_product_stays_bounded": N_("Log|product| must be the running sum of log|factor| (log_abs_cumprod)"),
    "rho_below_one_gradient_decays": N_("W = scale_spectral_radius(W0, 0.5), tanh rollout, "
                                        "jacobian_chain_norms(W, hs, 'tanh')[-1]"),
    "rho_above_one_gradient_explodes": N_("The explosion is measured on the linear chain (weight factor only) "
                                          "at rho = 1.5"),
    "rho_one_tanh_saturation_still_decays": N_("The median over 8 initial states of the tanh chain vs the linear "
                                               "chain, rho = 1"),
    "clipping_caps_norm_keeps_training_alive": N_("SGD on the linear RNN at rho = 1.5 with and without "
                                                  "clip_grad_norm"),
    "clipping_does_not_rescue_vanishing": N_("Use bptt.rnn_forward/rnn_backward at rho = 0.5, then clip_grad_norm"),
    "bptt_matches_finite_difference": N_("Compare bptt.rnn_backward against central differences of "
                                         "bptt.rnn_forward"),
}


def pool_seed(run_seed: int, what: str) -> int:
    """The seed of this grading run for one experiment, drawn from SEED_POOL."""
    rng = np.random.default_rng([int(run_seed) % (2**32), zlib.crc32(what.encode())])
    return int(SEED_POOL[int(rng.integers(len(SEED_POOL)))])


def _fmt(value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return repr(value)
    return f"{value:.3g}"


# ======================================== the student's figures against the procedure, same seed
# The docstrings fix the lab's procedure and its random draws (one Generator feeds the five
# experiments in order; each experiment's docstring lists its draws in order), so the
# student's figures must be those of the procedure run on the same seed: the reference's
# run_fault_injection in the grader's process, with the same broken primitive where one was
# put in. Plausible ranges alone let a wrong measurement through (h_0 = z instead of
# tanh(z); ||dh_0|| reported as ||dL/dx_1||): its figures stay in range, its signals true.
# Tolerance, relative: valid implementations differ from the reference by round-off (at
# most 1.3e-12 over the pool's 64 seeds, topics/fault_injection/alternatives/fault_injection_one_function.py)
# and by an epsilon added to the clipping norm as PyTorch does (max_norm / (total + 1e-6):
# at most 1.4e-7, in vanish_dx1_clip); the two wrong measurements are off by at least
# 1.8e-2 (||dh0|| for ||dx_1||) and 0.18 (h_0 = z) on every pool seed. 1e-5 sits 70 times
# above the first and 1800 times below the second (tests/content/test_fault_injection_seeds.py).
SAME_SEED_RTOL = 1e-5
# Figures that are not reproducible at that tolerance, checked by range and criterion only:
# bptt_rel_error is the round-off of a finite difference (it changes by 100 % with the
# order of a sum), and clip_loss_end ends 100 chaotic SGD steps (an epsilon of 1e-6 in the
# clipping norm moves it by up to 78 %).
NOT_REPRODUCIBLE = ("bptt_rel_error", "clip_loss_end")
# bptt_rel_error is round-off only where g and g_num agree. Where a broken rnn_backward makes
# them disagree (SPIKE_RNN_BACKWARD: zeros but one entry), the docstring's whole-vector ratio is
# well below 1 whatever loss the lab checks its gradient on (0.70 ... 0.84 over the pool for
# the docstring's loss, 0.64 ... 0.83 for 0.5 sum h^2), while a ratio taken entry by entry is 1
# from any entry where g is 0 (|0 - g_num| / |g_num|). For a spike c = r ||g_num|| on an entry
# holding a share cos of g_num, ratio^2 = (1 + r^2 - 2 r cos) / (1 + r)^2: below 0.98 for r in
# [0.05, 20] and cos >= -0.5 (the pool has r in 0.20 ... 0.67). So a figure the procedure keeps
# below its bound here must stay below it.
NOT_REPRODUCIBLE_BOUNDS = {"bptt_rel_error": 0.99}
# A figure not reproducible in general is in a run with these broken primitives: there it is a
# number of the grading's draws that no lab gets without measuring, compared like the others.
REPRODUCIBLE_IN = {"bptt_rel_error": SCALED_RNN_BACKWARD}

# What each figure measures, as its docstring fixes it: shown when a figure is not the procedure's.
FIGURE_PROCEDURE = {
    "near_one_log_final": N_("log_abs_cumprod(...)[-1] of the first 500 draws, U(0.8, 1.2)"),
    "below_one_log_final": N_("log_abs_cumprod(...)[-1] of the next 500 draws, U(0, 0.8)"),
    "above_one_log_final": N_("log_abs_cumprod(...)[-1] of the next 500 draws, U(1.0, 1.2)"),
    "rho0.5_tanh_norm": N_("||dh_T/dh_0|| of the tanh rollout from h_0 = tanh(z) at rho = 0.5"),
    "rho1.0_tanh_norm": N_("the median of ||dh_T/dh_0|| over the 8 tanh rollouts from h_0 = tanh(z) at rho = 1.0"),
    "rho1.0_linear_norm": N_("||dh_T/dh_0|| of the linear chain at rho = 1.0"),
    "rho1.5_tanh_norm": N_("||dh_T/dh_0|| of the tanh rollout from h_0 = tanh(z) at rho = 1.5"),
    "rho1.5_linear_norm": N_("||dh_T/dh_0|| of the linear chain at rho = 1.5"),
    "noclip_first_nonfinite_step": N_("the index of the first non-finite loss without clipping"),
    "clip_loss_start": N_("the starting loss of the clipped run"),
    "clip_max_update_norm": N_("the largest global norm of a clipped gradient"),
    "vanish_dx1_noclip": N_("||dx[:, 0]||, the gradient of the first input (not of the initial state h0)"),
    "vanish_dx1_clip": N_("||clipped['x'][:, 0]||, the first input's gradient after clipping"),
    "vanish_dxT": N_("||dx[:, T-1]||, the gradient of the last input"),
}


def check_norm_before_learning_rate(got: float, want: float) -> None:
    """clip_max_update_norm = `got` where the procedure measures `want`: named when it is lr
    times `want` (within SAME_SEED_RTOL), the norm of the update lr * clipped instead of the
    clipped gradient's -- a hypothesis checked on the numbers."""
    if abs(got - CLIP_LR * want) <= SAME_SEED_RTOL * CLIP_LR * abs(want):
        raise CheckFailed(_("clip_max_update_norm = {got}, expected {expected}: your figure is lr = {lr} times it, "
                            "the norm of the update lr * clipped; measure the norm of the clipped gradient itself, "
                            "before the learning rate multiplies it").format(
            got=f"{got:.6g}", expected=f"{want:.6g}", lr=CLIP_LR), "diagnosed")


def check_same_procedure(key: str, run: dict, procedure: dict, replacements: Mapping | None = None) -> None:
    """The figures of signal `key` in `run` (the student's lab) are those of `procedure`
    (the docstrings' procedure on the same seed; with the broken primitives `replacements`,
    {target: broken}, in a broken run), within SAME_SEED_RTOL. Where the procedure itself
    blows up (a run with a broken clip), a lab may stop or go on: not compared."""
    for fig in SIGNAL_FIGURES[key]:
        if fig in NOT_REPRODUCIBLE:
            bound = NOT_REPRODUCIBLE_BOUNDS.get(fig)
            if bound is not None and float(procedure[fig]) < bound and not float(run[fig]) < bound:
                raise CheckFailed(_("{key} = {got}, but the lab as its docstrings describe it measures {expected} "
                                    "with seed {seed} in this run: the whole-vector ratio ||g - g_num|| / (||g|| + "
                                    "||g_num||), over all parameters together, is below 1 unless g is 0 or opposite "
                                    "to g_num. Take it over the whole gradient vector, not entry by entry").format(
                    key=fig, got=f"{float(run[fig]):.6g}", expected=f"{float(procedure[fig]):.6g}",
                    seed=procedure.get("_seed", "?")))
            if REPRODUCIBLE_IN.get(fig) not in (replacements or {}).values():
                continue
        got, want = float(run[fig]), float(procedure[fig])
        if got == want or not math.isfinite(want):    # a broken run's blown-up figure is not the point
            continue
        if math.isfinite(got) and math.isfinite(want) and abs(got - want) <= SAME_SEED_RTOL * abs(want):
            continue
        if fig == "clip_max_update_norm" and math.isfinite(got):
            check_norm_before_learning_rate(got, want)
        raise CheckFailed(_("{key} = {got}, but the lab as its docstrings describe it measures {expected} with "
                            "seed {seed} ({what}): follow the docstrings' procedure and their order of random "
                            "draws (one Generator, the five experiments in order)").format(
            key=fig, got=f"{got:.6g}", expected=f"{want:.6g}", seed=procedure.get("_seed", "?"),
            what=_(FIGURE_PROCEDURE[fig])))


# The procedure's experiments in the order the one Generator feeds them (run_fault_injection's
# docstring): the reference's function for each of the grader's experiments (RERUNS).
PROCEDURE = {"products": "product_stability", "spectral": "spectral_sweep", "clipping": "clipping_experiment",
             "vanishing": "vanishing_experiment", "bptt": "bptt_gradient_check"}


class Procedure:
    """The docstrings' procedure on one seed, run by the reference in the grader's process.
    Its draws do not depend on what the primitives return, so the generator's state before
    each experiment is kept, and a run with a broken primitive repeats only the experiments
    of the signals it checks (a full run costs ~0.15 s; six of them would double the lab's
    grading time)."""

    def __init__(self, reference, seed: int, through: Mapping | None = None):
        """`through` ({"module.function": function}): functions called in the reference's place,
        in every run (the student's primitives that disagree with the correct ones, so that the
        figures are what a lab measures with them)."""
        self.reference, self.seed = reference, seed
        self._through = dict(through or {})
        self._starts: dict[str, Mapping] = {}     # experiment -> the generator's state it starts from
        with self._set(self._through):
            self.figures = self._run(PROCEDURE.values())

    def _run(self, experiments, start_at_kept=False) -> dict:
        rng, figures = np.random.default_rng(self.seed), {"_seed": self.seed}
        with np.errstate(all="ignore"):
            for experiment in experiments:
                if start_at_kept:
                    rng.bit_generator.state = self._starts[experiment]
                else:
                    self._starts[experiment] = rng.bit_generator.state
                figures.update(getattr(self.reference.fault_injection, experiment)(rng))
        return figures

    def broken(self, replacements: dict, keys) -> dict:
        """The figures of the signals `keys` with each target ("module.function") of
        `replacements` replaced by its BrokenPrimitive."""
        with self._set(self._through):
            broken = {t: b.function_for(self.seed, self._function(t)) for t, b in replacements.items()}
            with self._set(broken):
                return self._run(dict.fromkeys(PROCEDURE[RERUNS[key]] for key in keys), start_at_kept=True)

    def _function(self, target: str):
        module_name, attr = target.rsplit(".", 1)
        return getattr(getattr(self.reference, module_name), attr)

    @contextmanager
    def _set(self, functions: Mapping):
        """Each target ("module.function") of the reference set to functions[target], for the block."""
        saved = []
        for target, function in functions.items():
            module_name, attr = target.rsplit(".", 1)
            module = getattr(self.reference, module_name)
            saved.append((module, attr, getattr(module, attr)))
            setattr(module, attr, function)
        try:
            yield
        finally:
            for module, attr, original in reversed(saved):
                setattr(module, attr, original)


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
        self.numerical_gradient = bptt.numerical_gradient


# The topic each primitive of the lab belongs to: a mistake in it is charged there.
PRIMITIVE_TOPIC = {"log_abs_cumprod": TOPIC, "scale_spectral_radius": TOPIC, "jacobian_chain_norms": TOPIC,
                   "clip_grad_norm": TOPIC, "rnn_forward": "bptt", "rnn_backward": "bptt",
                   "numerical_gradient": "bptt"}

# Correct stand-ins (hidden helpers, run in the worker) for the bptt functions a lab calls:
# when the student's raise, the lab is graded with these instead (all of them at once: the
# cache is theirs).
BPTT_STAND_INS = {"bptt.rnn_forward": RNNForward(), "bptt.rnn_backward": RNNBackward(),
                  "bptt.numerical_gradient": NumericalGradient(), "bptt.rel_error": RelError()}


def _first_difference(got, want, what: str, rel: float, floor: float) -> str | None:
    """Where `got` (the student's result) differs from `want` (the correct one), or None.
    Tuples and dicts are compared item by item; -inf must match -inf."""
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return _("{what} should be a dict with the keys {keys}").format(what=what, keys=sorted(want))
        return next((d for k in want if (d := _first_difference(got[k], want[k], f"{what}[{k!r}]", rel, floor))),
                    None)
    if isinstance(want, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return _("{what} should be a tuple of {n}").format(what=what, n=len(want))
        return next((d for i, (g, w) in enumerate(zip(got, want))
                     if (d := _first_difference(g, w, f"{what}[{i}]", rel, floor))), None)
    try:
        g, w = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    except (TypeError, ValueError):
        return _("{what} is not numeric").format(what=what)
    if g.shape != w.shape:
        return _("{what} has shape {got}, expected {expected}").format(what=what, got=g.shape, expected=w.shape)
    if np.array_equal(g, w):          # the common case (the same operations), cheaply
        return None
    scale = float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0))
    with np.errstate(invalid="ignore"):
        bad = ~((g == w) | (np.abs(g - w) <= rel * np.abs(w) + floor * scale))
    if not bad.any():
        return None
    i = tuple(int(v) for v in np.argwhere(bad)[0])
    return _("{what} = {got}, the correct value is {expected}").format(
        what=f"{what}{list(i) if i else ''}", got=_fmt(float(g[i])), expected=_fmt(float(w[i])))


# How closely each primitive must agree with the correct one: relative error per entry, and a
# floor relative to the largest entry. Chain norms span 1e-30 ... 1e19, so no floor there.
AGREEMENT = {"log_abs_cumprod": (1e-8, 1e-12), "scale_spectral_radius": (1e-8, 1e-12),
             "jacobian_chain_norms": (1e-6, 0.0), "clip_grad_norm": (1e-8, 1e-12),
             "rnn_forward": (1e-8, 1e-12), "rnn_backward": (1e-6, 1e-9), "numerical_gradient": (1e-6, 1e-9)}


class InPlace(str):
    """A deviation that is an argument changed in place: what it does to the student's own lab
    (the caller's arrays change) no call from the grader's process reproduces."""


class CheckedPrimitives:
    """The student's primitives, each call compared with the correct one on the same inputs.

    The experiment goes on with the student's results (the grader measures what the
    student's functions do); `deviations` maps each primitive that returned something else,
    or raised, to its first difference. A signal that fails can so be traced to its cause,
    and charged in the topic that holds it (PRIMITIVE_TOPIC), not again in the lab."""

    def __init__(self, student: Primitives, reference: Primitives):
        self.deviations: dict[str, str] = {}
        self._reference = reference
        self._forward_inputs: dict[int, tuple] = {}   # id(student cache) -> rnn_forward's inputs
        for name in PRIMITIVE_TOPIC:
            setattr(self, name, _Checked(self, name, getattr(student, name)))

    def _correct(self, name, args):
        if name == "rnn_backward":
            dh, cache = args
            forward = self._forward_inputs.get(id(cache))
            if forward is None:
                return None
            return self._reference.rnn_backward(dh, self._reference.rnn_forward(*forward)[1])
        result = getattr(self._reference, name)(*args)
        return result[0] if name == "rnn_forward" else result

    def _correct_many(self, name, calls) -> list:
        """`_correct` of each call. rnn_forward's (the probes of a finite-difference check,
        hundreds of them) are one pass over their stack: the reference's equations
        (stacked.py, bit-identical to the reference: tests/content/test_oracle_stacked.py)."""
        if (name == "rnn_forward" and all(len(args) == 5 for args in calls)
                and len({tuple(np.shape(a) for a in args) for args in calls}) == 1):
            try:
                inputs = [np.stack([np.asarray(args[i], dtype=float) for args in calls]) for i in range(5)]
            except (TypeError, ValueError):
                pass
            else:
                return list(stacked.rnn_forward(*inputs))
        return [self._correct(name, args) for args in calls]

    def _compare(self, name, args, got):
        self._compare_many(name, [args], [got])

    def _compare_many(self, name, calls, results):
        if name == "rnn_forward":
            outputs = []
            for args, got in zip(calls, results):
                if isinstance(got, (tuple, list)) and len(got) == 2:
                    self._forward_inputs[id(got[1])] = args
                    got = got[0]
                outputs.append(got)
            results = outputs
        if name in self.deviations:
            return
        with np.errstate(all="ignore"):
            wants = self._correct_many(name, calls)
            for got, want in zip(results, wants):
                difference = None if want is None else _first_difference(got, want, f"{name}(...)", *AGREEMENT[name])
                if difference:
                    self.deviations[name] = difference
                    return

    def probe(self, names) -> None:
        """Call each primitive of `names` on `probes()` (differences land in `deviations`),
        all of a primitive's cases in one exchange with the worker."""
        for name, cases in probes().items():
            if name in names:
                try:
                    getattr(self, name).map(cases)
                except Exception:  # noqa: BLE001 - recorded as a deviation by _Checked
                    pass

    def _failed(self, name, exc):
        self.deviations.setdefault(name, _("{name} raised {error}: {message}").format(
            name=name, error=type(exc).__name__, message=whole_sentences(getattr(exc, 'message', exc), 300)))


def probes() -> dict[str, list[tuple]]:
    """Fixed inputs on which each primitive is compared with the correct one before an
    experiment, so that a wrong primitive is found whatever the run's draw: matrices whose
    dominant eigenvalue is complex, negative, or far below the largest singular value;
    factors with signs and a zero; a clipping above and below the threshold."""
    rng = np.random.default_rng(20261130)
    rotation = np.array([[0.0, -2.0], [2.0, 0.0]])                    # eigenvalues +-2i
    complex_dominant = np.block([[rotation, rng.normal(size=(2, 2))], [np.zeros((2, 2)), np.diag([0.5, -0.3])]])
    negative_dominant = np.diag([-3.0, 1.0, 0.5]) + np.triu(rng.normal(size=(3, 3)), 1)
    W = rng.normal(size=(4, 4)) / 2
    hs = np.tanh(rng.normal(size=(6, 4)))
    grads = {"a": rng.normal(size=(3, 2)) * 4, "b": rng.normal(size=5)}
    return {
        "scale_spectral_radius": [(complex_dominant, 1.5), (negative_dominant, 0.5), (rng.normal(size=(5, 5)), 1.0)],
        "log_abs_cumprod": [(np.array([2.0, -0.5, 4.0, 0.3, -1.5, 0.0, 3.0]),), (rng.uniform(0.0, 0.8, 1200),)],
        "jacobian_chain_norms": [(W, hs, "tanh"), (W, hs, "linear")],
        "clip_grad_norm": [(grads, 1.0), (grads, 1e3)],
    }


class _Checked:
    def __init__(self, owner: CheckedPrimitives, name: str, function):
        self._owner, self._name, self._function = owner, name, function

    def __call__(self, *args):
        try:
            got = self._function(*args)
        except Exception as exc:
            self._owner._failed(self._name, exc)
            raise
        self._check_inputs_kept()
        self._owner._compare(self._name, args, got)
        return got

    def _check_inputs_kept(self):
        # In the worker, an argument changed in place changes the student's own lab (the
        # grader's copies stay as they were): that is a deviation too.
        mutated = getattr(getattr(self._function, "_module", None), "last_mutated", None)
        if mutated:
            self._owner.deviations.setdefault(self._name, InPlace(_("{name} modified its argument {names} in "
                                                                    "place").format(name=self._name,
                                                                                    names=', '.join(mutated))))

    def calls_cost_an_exchange(self) -> bool:
        """Whether each call crosses to the worker (the student's function, not the reference's)."""
        return hasattr(self._function, "map")

    def map(self, arg_lists):
        try:
            results = _map(self._function, arg_lists)
        except Exception as exc:
            self._owner._failed(self._name, exc)
            raise
        self._check_inputs_kept()
        self._owner._compare_many(self._name, [tuple(args) for args in arg_lists], results)
        return results


def _matrix(P, W, rho, what):
    W_rho = expect_array(P.scale_spectral_radius(W, rho), W.shape, what)
    if not np.all(np.isfinite(W_rho)):
        raise CheckFailed(_("{what} contains nan or inf").format(what=what))
    return W_rho


def _norms(answer, hs, what):
    """A jacobian_chain_norms answer for the states `hs`: one norm per step back."""
    return expect_array(answer, (hs.shape[0] - 1,), what).astype(float)


def _rollout(W, h0, activation, T=T_STEPS):
    """States h_0..h_T of h_t = act(h_{t-1} W); h0 may hold several initial states (rows)."""
    hs = [np.atleast_2d(h0)]
    for _t in range(T):
        a = hs[-1] @ W
        hs.append(np.tanh(a) if activation == "tanh" else a)
    return np.stack(hs, axis=1)   # (n, T+1, H)


FIGURE_STRIDE = 5      # the figure keeps every 5th value of a running log-product


def rerun_products(P, seed):
    """Level 1 through P.log_abs_cumprod, plus its trap: 1500 factors below one, whose naive
    product underflows to 0 (np.log(np.cumprod(...)) = -inf; the log-sum is about -1835)."""
    rng = np.random.default_rng([seed, 1])
    groups = {"near_one": rng.uniform(0.8, 1.2, 500), "below_one": rng.uniform(0.0, 0.8, 500),
              "above_one": rng.uniform(1.0, 1.2, 500), "underflow_trap": rng.uniform(0.0, 0.8, 1500)}
    values, worst, figure = {}, 0.0, {"stride": FIGURE_STRIDE}
    answers = _map(P.log_abs_cumprod, [(factors,) for factors in groups.values()])
    for (name, factors), answer in zip(groups.items(), answers):
        got = expect_array(answer, factors.shape, _("log_abs_cumprod of the {name} factors").format(name=name))
        if name != "underflow_trap":
            figure[name] = [float(v) for v in got[FIGURE_STRIDE - 1::FIGURE_STRIDE]]
        logs = [math.log(f) for f in factors]
        oracle = np.array([math.fsum(logs[: t + 1]) for t in range(0, len(factors), 50)] + [math.fsum(logs)])
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
             # a running sum of 1000 logs in any order is within gamma_1000 sum|log f| (<= ~1e-12 of
             # 1 + |sum| here, the near-one factors' logs cancelling included): 1e-8 is far above
             and math.isfinite(values["underflow_trap_log_final"]) and worst < 1e-8)
    return {"holds": holds, "values": values, "figure": figure}


def rerun_spectral(P, seed):
    """Level 2 through P.scale_spectral_radius and P.jacobian_chain_norms (rho 0.5, 1.0, 1.5)."""
    rng = np.random.default_rng([seed, 2])
    W0 = rng.normal(size=(D_STATE, D_STATE))
    h0s = np.tanh(rng.normal(size=(N_INITIAL_STATES, D_STATE)))
    values, curves = {}, {}
    for rho in RHOS:
        W = _matrix(P, W0, rho, f"scale_spectral_radius(W0, {rho})")
        tanh_states = _rollout(W, h0s if rho == 1.0 else h0s[:1], "tanh")
        linear_states = _rollout(W, h0s[:1], "linear")[0]
        # the tanh chain of every initial state and the linear chain, in one exchange
        answers = _map(P.jacobian_chain_norms, [(W, hs, "tanh") for hs in tanh_states] + [(W, linear_states, "linear")])
        what = _("jacobian_chain_norms(W, hs, 'tanh') at rho = {rho}").format(rho=rho)
        tanh_curves = np.array([_norms(answer, hs, what) for answer, hs in zip(answers, tanh_states)])
        linear = _norms(answers[-1], linear_states,
                        _("jacobian_chain_norms(W, hs, 'linear') at rho = {rho}").format(rho=rho))
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
    its gradients; x (N, T, D), y (N, H). Only the recurrences loop: the input terms of all
    steps are one product, and so is each weight gradient (a sum over steps and the batch).
    topics/fault_injection/test_oracle.py checks it against torch autograd."""
    N, T, D = x.shape
    H = Wh.shape[0]
    drive = x @ Wx + b                          # (N, T, H)
    hs = np.zeros((N, T + 1, H))                # h_0 .. h_T
    for t in range(T):
        hs[:, t + 1] = drive[:, t] + hs[:, t] @ Wh
    r = hs[:, T] - y
    loss = 0.5 * float(np.sum(r * r)) / N
    deltas = np.empty((N, T, H))                # dL/da_t, a_t the pre-state of step t
    delta = r / N
    for t in range(T - 1, -1, -1):
        deltas[:, t] = delta
        delta = delta @ Wh.T
    flat = deltas.reshape(N * T, H)
    return loss, {"Wx": x.reshape(N * T, D).T @ flat, "Wh": hs[:, :T].reshape(N * T, H).T @ flat,
                  "b": flat.sum(axis=0)}


def _guessed_run(P, start, x, y, steps, lr) -> list[tuple]:
    """The clipped run, guessed, and P's clip answers to it, fetched in one exchange with the
    worker instead of one per step: [(params, loss, grads, P's answer to grads)] per step.

    Each step depends on the previous answer, so the run is guessed with the correct clip
    (P's reference) and all its gradients are sent at once. `rerun_clipping` follows the
    guess while the student's answers keep its parameters within 1e-9 (relative) of the
    guessed ones (a clip written another way differs in the last bits); from the first
    step where they do not, it computes and calls step by step, as without the guess. No
    guess where calls cost nothing (the reference's own primitives), nor when an answer
    raises (the run step by step then raises at its step)."""
    reference = getattr(getattr(P, "_reference", None), "clip_grad_norm", None)
    if reference is None or not P.clip_grad_norm.calls_cost_an_exchange():
        return []
    guess, params = [], dict(start)
    with np.errstate(all="ignore"):
        for _step in range(steps):
            loss, grads = _linear_rnn(params["Wx"], params["Wh"], params["b"], x, y)
            if not math.isfinite(loss):
                break
            guess.append((params, loss, grads))
            clipped, _total = reference(grads, TAU)
            params = {k: params[k] - lr * clipped[k] for k in params}
    try:
        answers = P.clip_grad_norm.map([(grads, TAU) for _params, _loss, grads in guess])
    except Exception:  # noqa: BLE001 - met again, at its step, in the run step by step
        return []
    return [(*step, answer) for step, answer in zip(guess, answers)]


def _near(a, b) -> bool:
    """Within 1e-9 (relative) of each other, entry by entry; equal floats, cheaply."""
    return np.array_equal(a, b) or np.allclose(a, b, rtol=1e-9, atol=0)


def rerun_clipping(P, seed, steps=100, lr=0.05):
    """Injection 1: SGD on a linear RNN at rho = 1.5, without and with P.clip_grad_norm."""
    rng = np.random.default_rng([seed, 3])
    x, y = rng.normal(size=(4, 20, 4)), rng.normal(size=(4, 8))
    start = {"Wh": _matrix(P, rng.normal(size=(8, 8)), 1.5, "scale_spectral_radius(W, 1.5)"),
             "Wx": rng.normal(size=(4, 8)) / 2.0, "b": np.zeros(8)}
    noclip, params = [], dict(start)
    with np.errstate(all="ignore"):
        for _step in range(steps):
            loss, grads = _linear_rnn(params["Wx"], params["Wh"], params["b"], x, y)
            noclip.append(loss)
            if not math.isfinite(loss):
                break
            params = {k: params[k] - lr * grads[k] for k in params}
    clip, update_norms, grad_norms, params = [], [], [], dict(start)
    guess = _guessed_run(P, start, x, y, steps, lr)
    for step in range(steps):
        on_guess = step < len(guess) and all(_near(params[k], guess[step][0][k]) for k in params)
        if on_guess:
            _params, loss, grads, answer = guess[step]
        else:                        # off the guessed run: step by step from here
            guess = []
            loss, grads = _linear_rnn(params["Wx"], params["Wh"], params["b"], x, y)
        clip.append(loss)
        if not math.isfinite(loss):
            break
        clipped, total = expect_tuple(answer if on_guess else P.clip_grad_norm(grads, TAU), 2, "clip_grad_norm")
        if not isinstance(clipped, dict) or set(clipped) != set(grads):
            raise CheckFailed(_("clip_grad_norm should return a dict with the keys {keys} first").format(
                keys=sorted(grads)))
        for k in grads:
            expect_array(clipped[k], grads[k].shape, f"clip_grad_norm(...)[0][{k!r}]")
        update_norms.append(math.sqrt(math.fsum(float(np.sum(np.square(v))) for v in clipped.values())))
        grad_norms.append(math.sqrt(math.fsum(float(np.sum(np.square(v))) for v in grads.values())))
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
                       "noclip_first_nonfinite_step": first if math.isfinite(first) else None},
            # per clipped step: the norm of the update clip_grad_norm returned (global, over all
            # arrays) and of the gradient it was given
            "figure": {"update_norms": update_norms, "grad_norms": grad_norms}}


def rerun_vanishing(P, seed):
    """Injection 2: tanh RNN at rho = 0.5 through P.rnn_forward/rnn_backward, then P.clip_grad_norm."""
    rng = np.random.default_rng([seed, 4])
    x = rng.normal(size=(1, T_STEPS, 4))
    Wx = rng.normal(size=(4, 16)) / 2.0
    Wh = _matrix(P, rng.normal(size=(16, 16)), 0.5, "scale_spectral_radius(W, 0.5)")
    h, cache = expect_tuple(P.rnn_forward(x, np.zeros((1, 16)), Wx, Wh, np.zeros(16)), 2, "bptt.rnn_forward")
    expect_array(h, (1, T_STEPS, 16), _("bptt.rnn_forward's h"))
    dh = np.zeros((1, T_STEPS, 16))
    dh[0, -1] = 1.0
    dx, dh0, dWx, dWh, db = expect_tuple(P.rnn_backward(dh, cache), 5, "bptt.rnn_backward")
    expect_array(dx, x.shape, _("bptt.rnn_backward's dx"))
    clipped, _total = expect_tuple(P.clip_grad_norm({"x": dx, "h0": dh0, "Wx": dWx, "Wh": dWh, "b": db}, TAU), 2,
                              "clip_grad_norm")
    dx_clip = expect_array(clipped.get("x") if isinstance(clipped, dict) else None, x.shape,
                           "clip_grad_norm(...)[0]['x']")
    values = {"vanish_dx1_noclip": float(np.linalg.norm(dx[:, 0])),
              "vanish_dx1_clip": float(np.linalg.norm(dx_clip[:, 0])),
              "vanish_dxT": float(np.linalg.norm(dx[:, -1]))}
    figure = {"dx_noclip": np.linalg.norm(dx[0], axis=-1).tolist(),       # ||dL/dx_t||, t = 1..T
              "dx_clip": np.linalg.norm(dx_clip[0], axis=-1).tolist()}
    return {"holds": bool(CRITERIA["clipping_does_not_rescue_vanishing"](values)), "values": values, "figure": figure}


def _map(function, arg_lists):
    """[function(*args) ...]: in one exchange when `function` is a student function in the
    worker, a plain loop for the reference's."""
    many = getattr(function, "map", None)
    return many(arg_lists) if many is not None else [function(*args) for args in arg_lists]


def rerun_bptt(P, seed, step=1e-6):
    """Level 3: P.rnn_backward against central differences of P.rnn_forward (all of Wx, Wh, b)."""
    rng = np.random.default_rng([seed, 5])
    N, T, D, H = 2, 12, 4, 8
    x, h0 = rng.normal(size=(N, T, D)), rng.normal(size=(N, H))
    params = [rng.normal(size=(D, H)) / 2.0, rng.normal(size=(H, H)) / math.sqrt(H), 0.1 * rng.normal(size=H)]
    R = rng.normal(size=(N, T, H))

    def losses(probes):
        outputs = _map(P.rnn_forward, [(x, h0, *probe) for probe in probes])
        return [math.fsum((R * expect_array(expect_tuple(out, 2, "bptt.rnn_forward")[0], (N, T, H),
                                            _("bptt.rnn_forward's h"))).ravel()) for out in outputs]

    _h, cache = expect_tuple(P.rnn_forward(x, h0, *params), 2, "bptt.rnn_forward")
    grads = expect_tuple(P.rnn_backward(R, cache), 5, "bptt.rnn_backward")[2:]
    for g, p, name in zip(grads, params, ("dWx", "dWh", "db")):
        expect_array(g, p.shape, _("bptt.rnn_backward's {name}").format(name=name))
    numeric = finite_differences_batched(losses, params, step)
    # The student's lab may take its differences with bptt.numerical_gradient: one call on a
    # known function lets CheckedPrimitives compare it with a correct one.
    probe = rng.normal(size=(2, 3))
    try:
        P.numerical_gradient(CubicForm(rng.normal(size=(2, 3)), rng.normal(size=(3, 2))), probe, 1e-5)
    except Exception:  # noqa: BLE001 - recorded by CheckedPrimitives; this experiment does not need it
        pass
    g = np.concatenate([np.ravel(v) for v in grads])
    g_num = np.concatenate([v.ravel() for v in numeric])
    denom = np.linalg.norm(g) + np.linalg.norm(g_num)
    err = float(np.linalg.norm(g - g_num) / denom) if denom > 0 else 0.0
    values = {"bptt_rel_error": err}
    figure = {"all": err}
    for a, b, name in zip(grads, numeric, ("dWx", "dWh", "db")):
        d = np.linalg.norm(np.ravel(a)) + np.linalg.norm(b)
        figure[name] = float(np.linalg.norm(np.ravel(a) - b.ravel()) / d) if d > 0 else 0.0
    return {"holds": bool(CRITERIA["bptt_matches_finite_difference"](values)), "values": values, "figure": figure}


RERUNS = {
    "near_one_product_stays_bounded": "products",
    "rho_below_one_gradient_decays": "spectral",
    "rho_above_one_gradient_explodes": "spectral",
    "rho_one_tanh_saturation_still_decays": "spectral",
    "clipping_caps_norm_keeps_training_alive": "clipping",
    "clipping_does_not_rescue_vanishing": "vanishing",
    "bptt_matches_finite_difference": "bptt",
}
# The primitives each experiment calls (probed before it runs).
EXPERIMENT_PRIMITIVES = {"products": ("log_abs_cumprod",),
                         "spectral": ("scale_spectral_radius", "jacobian_chain_norms"),
                         "clipping": ("scale_spectral_radius", "clip_grad_norm"),
                         "vanishing": ("scale_spectral_radius", "rnn_forward", "rnn_backward", "clip_grad_norm"),
                         "bptt": ("rnn_forward", "rnn_backward", "numerical_gradient")}
RERUN_FUNCTIONS = {"products": rerun_products, "spectral": rerun_spectral, "clipping": rerun_clipping,
                   "vanishing": rerun_vanishing, "bptt": rerun_bptt}


def rerun_holds(key: str, result: dict) -> bool:
    holds = result["holds"]
    return bool(holds[key] if isinstance(holds, dict) else holds)


# ================================================== checks of a run_fault_injection result
def check_returned(key: str, run: dict, expect: bool | None) -> None:
    """The signal `key` in a dict returned by run_fault_injection: present, a bool equal to
    `expect` (either, for None), its figures numbers that agree with it (and in RANGES when
    expected true)."""
    if not isinstance(run, dict):
        raise CheckFailed(_("run_fault_injection should return a dict, got {type}").format(type=type(run).__name__))
    missing = [k for k in (key, *SIGNAL_FIGURES[key]) if k not in run]
    if missing:
        raise CheckFailed(_("run_fault_injection's dict lacks the key(s) {keys} (see the docstring of "
                            "run_fault_injection)").format(keys=', '.join(missing)))
    if not isinstance(run[key], bool):
        raise CheckFailed(_("run_fault_injection()[{key}] should be a bool, got {type}").format(
            key=repr(key), type=type(run[key]).__name__))
    figures = {}
    for fig in SIGNAL_FIGURES[key]:
        v = run[fig]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise CheckFailed(_("run_fault_injection()[{key}] should be a float, got {type}").format(
                key=repr(fig), type=type(v).__name__))
        figures[fig] = float(v)
    criterion = bool(CRITERIA[key](figures))
    shown = ", ".join(f"{k} = {_fmt(v)}" for k, v in figures.items())
    if run[key] != criterion:
        raise CheckFailed(_("{key} = {value} does not agree with its own figures ({shown}): the signal must be "
                            "computed from the measured values with the criterion in run_fault_injection's docstring"
                            ).format(key=key, value=run[key], shown=shown))
    if expect is not None and run[key] != expect:
        if expect:
            raise CheckFailed(_("{key} is False ({shown}); expected True. {hint}").format(
                key=key, shown=shown, hint=_(SIGNAL_HINTS[key])))
        raise CheckFailed(_("{key} stayed True ({shown}) although a primitive of its experiment was replaced "
                            "by a broken one: the signal does not measure what it claims. {hint}").format(
            key=key, shown=shown, hint=_(SIGNAL_HINTS[key])))
    if expect:
        for fig, v in figures.items():
            lo, hi = RANGES[fig]
            if fig == "clip_max_update_norm" and not lo <= v <= hi:
                check_norm_before_learning_rate(v, TAU)      # the first clipped gradient's norm is TAU
            if not lo <= v <= hi:
                raise CheckFailed(_("{key} = {value} is outside the plausible range [{low}, {high}] for this "
                                    "experiment. {hint}").format(key=fig, value=_fmt(v), low=_fmt(lo), high=_fmt(hi),
                                                                 hint=_(SIGNAL_HINTS[key])))
