"""Hidden suite for bptt.py [bptt]: RNN steps, full and truncated BPTT, numerical_gradient, rel_error.

Inputs are random per run. Forward values are compared with the reference; every
gradient is compared with central finite differences of the reference's forward pass
(its equations over a stack of probes, `stacked.py`), computed here in the grader, so a
student's forward and backward cannot agree on a shared mistake.
"""

import numpy as np

from autograder.authoring.checks import (
    CheckFailed,
    MutationCheck,
    every_case,
    expect_array,
    expect_close,
    expect_gradients,
    expect_not_mutated,
    expect_tuple,
    finite_differences_stacked,
    norm_rel_error,
    rel_error,
    variant_hypotheses,
)
from autograder.i18n import N_, _
from autograder.isolation.sandbox import StudentCodeError
from autograder.units.rnn_prehistory import stacked
from autograder.units.rnn_prehistory.helpers.functions import CubicForm

# Gradients: checks.expect_gradients' default tolerance 1e-6 on ||g - g_num|| / (||g|| + ||g_num||);
# the reference reaches ~1e-10 here (as in the lab's finite-difference check). Central differences
# are off by their truncation O(h^2 times the third derivative) plus roundoff ~eps F / h (F the magnitude of the loss's
# terms, ~10 here): ~1e-9, so 1e-6 is the documented looser tolerance, with the mutants at 1e-2.
# States against the reference: |h| <= 1 and two computations differ by at most 2 d_t of
# checks.tanh_recurrence_bound (~1e-13 on these sizes), absolutely: compared at scale 1 (a state
# near 0 has no relative bound). Gradients against the reference: within ~1e-10 of their largest
# entry (test_oracle.py's bptt_bound), compared at that scale.


def rnn_params(rng, N=3, T=5, D=4, H=6):
    return (rng.normal(size=(N, T, D)), rng.normal(size=(N, H)), rng.normal(size=(D, H)) * 0.5,
            rng.normal(size=(H, H)) * 0.5, rng.normal(size=H) * 0.1)


def test_rnn_step_forward_matches_reference(bptt, reference, rng):
    for N, D, H in [(1, 1, 1), (3, 4, 5), (2, 7, 3)]:
        x, prev_h = rng.normal(size=(N, D)), rng.normal(size=(N, H))
        Wx, Wh, b = rng.normal(size=(D, H)), rng.normal(size=(H, H)), rng.normal(size=H)
        out = expect_tuple(bptt.rnn_step_forward(x, prev_h, Wx, Wh, b), 2, "rnn_step_forward")
        expected, _cache = reference.bptt.rnn_step_forward(x, prev_h, Wx, Wh, b)
        expect_close(out[0], expected, _("next_h for {sizes}").format(sizes=f"N={N}, D={D}, H={H}"), scale=1.0)


# A diagnosis tests its hypothesis first: the suspected backward step is computed here on the
# same inputs and named only when it gives every one of the student's gradients.
def step_backward_variant(dnext, x, prev_h, Wx, Wh, b, derivative="output", transposed_dWh=False, db_mean=False):
    """(dx, dprev_h, dWx, dWh, db) of rnn_step_backward's docstring, or with one known mistake:
    derivative "none" (no tanh') or "preactivation" (1 - a^2 with a the pre-activation)."""
    a = x @ Wx + prev_h @ Wh + b
    h = np.tanh(a)
    da = dnext * {"output": 1 - h ** 2, "none": 1.0, "preactivation": 1 - a ** 2}[derivative]
    dWh = da.T @ prev_h if transposed_dWh else prev_h.T @ da
    return da @ Wx.T, da @ Wh.T, x.T @ da, dWh, da.mean(axis=0) if db_mean else da.sum(axis=0)


STEP_BACKWARD_MISTAKES = (
    (dict(derivative="none"), N_("your gradients match a backward step without tanh': da = dnext_h * (1 - next_h^2)")),
    (dict(derivative="preactivation"), N_("your gradients match tanh' written as 1 - a^2 with the pre-activation a: "
                                          "tanh'(a) = 1 - tanh(a)^2 = 1 - next_h^2")),
    (dict(transposed_dWh=True), N_("your gradients match dWh = da^T prev_h: the row-vector convention gives "
                                   "dWh = prev_h^T da")),
    (dict(db_mean=True), N_("your gradients match db averaged over the batch: the loss sums over the batch, so "
                            "db = sum_n da")),
)


def same_gradients(grads, wrong) -> bool:
    """Whether the student's gradients are `wrong`'s: each of its shape, within 1e-6 of its largest entry."""
    return all(np.shape(g) == w.shape and rel_error(np.asarray(g, dtype=float), w, _largest(w)) <= 1e-6
               for g, w in zip(grads, wrong))


def _largest(values) -> float:
    """max |values|: a gradient's rounding is bounded relative to its largest entry, not to each one."""
    return float(np.max(np.abs(values))) if np.size(values) else 0.0


def test_rnn_step_backward_matches_finite_differences(bptt, rng):
    cases = []
    for N in (3, 1):          # a batch of one keeps its axis: (1, H), never (H,)
        x, prev_h = rng.normal(size=(N, 4)), rng.normal(size=(N, 5))
        Wx, Wh, b = rng.normal(size=(4, 5)) * 0.5, rng.normal(size=(5, 5)) * 0.5, rng.normal(size=5) * 0.1
        cases.append((rng.normal(size=(N, 5)), x, prev_h, Wx, Wh, b))

    def run_case(args, record):
        dnext, x, prev_h, Wx, Wh, b = args
        _h, cache = bptt.rnn_step_forward(x, prev_h, Wx, Wh, b)
        grads = expect_tuple(bptt.rnn_step_backward(dnext, cache), 5, "rnn_step_backward")
        record(grads, step_backward_variant(*args), variant_hypotheses(step_backward_variant, STEP_BACKWARD_MISTAKES, *args))

        def losses(*probes):
            return np.sum(dnext * stacked.rnn_step(*probes), axis=(1, 2))

        expect_gradients(grads, finite_differences_stacked(losses, [x, prev_h, Wx, Wh, b]),
                         ["dx", "dprev_h", "dWx", "dWh", "db"],
                         _("rnn_step_backward with {sizes}").format(sizes=f"N={len(x)}"))

    # every case runs: a mistake is named only when it gives the student's gradients on all of them
    every_case(cases, run_case, same_gradients)


def test_rnn_forward_matches_reference(bptt, reference, rng):
    for N, T, D, H in [(1, 1, 2, 3), (3, 7, 4, 5)]:
        x, h0, Wx, Wh, b = rnn_params(rng, N, T, D, H)
        out = expect_tuple(bptt.rnn_forward(x, h0, Wx, Wh, b), 2, "rnn_forward")
        expected, _cache = reference.bptt.rnn_forward(x, h0, Wx, Wh, b)
        expect_close(out[0], expected, _("h for {sizes}").format(sizes=f"N={N}, T={T}, D={D}, H={H}"), scale=1.0,
                     hint=_("h[:, t] is the state after step t; h0 is not part of h"))


def _full_losses(dh):
    """The loss sum(dh * h) of each probe (x, h0, Wx, Wh, b) of a stack."""
    return lambda *probes: np.sum(dh * stacked.rnn_forward(*probes), axis=(1, 2, 3))


def test_rnn_backward_matches_finite_differences(bptt, rng):
    for N, T in [(3, 5), (1, 4), (2, 1)]:      # and the edges: a batch of one, a sequence of one step
        x, h0, Wx, Wh, b = rnn_params(rng, N=N, T=T)
        dh = rng.normal(size=(N, T, 6))
        _h, cache = bptt.rnn_forward(x, h0, Wx, Wh, b)
        grads = expect_tuple(bptt.rnn_backward(dh, cache), 5, "rnn_backward")
        numeric = finite_differences_stacked(_full_losses(dh), [x, h0, Wx, Wh, b])
        expect_gradients(grads, numeric, ["dx", "dh0", "dWx", "dWh", "db"],
                         _("rnn_backward with {sizes}").format(sizes=f"N={N}, T={T}"),
                         _("the gradient reaching h_t is dh[:, t] plus what flows back from step t+1"))


def test_rnn_backward_accumulates_over_time(bptt, rng):
    # Loss on the last state only: every step still contributes to the shared weights.
    x, h0, Wx, Wh, b = rnn_params(rng, N=2, T=6, D=3, H=4)
    dh = np.zeros((2, 6, 4))
    dh[:, -1] = rng.normal(size=(2, 4))
    _h, cache = bptt.rnn_forward(x, h0, Wx, Wh, b)
    grads = expect_tuple(bptt.rnn_backward(dh, cache), 5, "rnn_backward")
    numeric = finite_differences_stacked(_full_losses(dh), [x, h0, Wx, Wh, b])
    expect_gradients(grads, numeric, ["dx", "dh0", "dWx", "dWh", "db"],
                     _("rnn_backward with a loss on h_T only"),
                     _("dWx, dWh and db are sums over all time steps, not the last step's share"))


def _truncated_losses(dh, k, frozen):
    """The loss as truncated BPTT sees it, of each probe (x, h0, Wx, Wh, b) of a stack: each
    chunk starts from a constant state (`frozen`: the states of the unprobed forward pass)."""
    def losses(x, h0, Wx, Wh, b):
        total = 0.0
        for s in range(0, x.shape[2], k):
            start = h0 if s == 0 else frozen[:, s - 1]
            total = total + np.sum(dh[:, s:s + k] * stacked.rnn_forward(x[:, :, s:s + k], start, Wx, Wh, b),
                                   axis=(1, 2, 3))
        return total

    return losses


def test_rnn_backward_truncated_matches_definition(bptt, reference, rng):
    for k in (1, 3):
        x, h0, Wx, Wh, b = rnn_params(rng, N=2, T=7, D=3, H=4)
        dh = rng.normal(size=(2, 7, 4))
        frozen, _cache = reference.bptt.rnn_forward(x, h0, Wx, Wh, b)
        _h, cache = bptt.rnn_forward(x, h0, Wx, Wh, b)
        grads = expect_tuple(bptt.rnn_backward_truncated(dh, cache, k), 5, f"rnn_backward_truncated(k={k})")
        numeric = finite_differences_stacked(_truncated_losses(dh, k, frozen), [x, h0, Wx, Wh, b])
        expect_gradients(grads, numeric, ["dx", "dh0", "dWx", "dWh", "db"], f"rnn_backward_truncated(k={k}, T=7)",
                         _("no gradient crosses t = k, 2k, ...; the last chunk may be shorter; "
                           "dh0 only gets the first chunk's gradient"))


def test_rnn_backward_truncated_k_ge_T_equals_full(bptt, reference, rng):
    """A relation between two of the student's functions: with k >= T the truncated pass is the
    full one. It is judged against the student's own rnn_backward on the same cache, so a mistake
    made there (or in the step both call) is charged in rnn_backward's tests only; a truncated
    pass equal to the correct full gradient is right too, whatever the student's full pass gives."""
    x, h0, Wx, Wh, b = rnn_params(rng, N=2, T=5, D=3, H=4)
    dh = rng.normal(size=(2, 5, 4))
    _h, cache = bptt.rnn_forward(x, h0, Wx, Wh, b)
    _h, ref_cache = reference.bptt.rnn_forward(x, h0, Wx, Wh, b)
    names = ["dx", "dh0", "dWx", "dWh", "db"]
    try:
        own = [np.asarray(g, dtype=float) for g in expect_tuple(bptt.rnn_backward(dh, cache), 5, "rnn_backward")]
    except (StudentCodeError, CheckFailed, TypeError, ValueError):
        own = None                 # rnn_backward's own tests charge it; the definition still holds
    correct = reference.bptt.rnn_backward(dh, ref_cache)
    for k in (5, 9):
        grads = expect_tuple(bptt.rnn_backward_truncated(dh, cache, k), 5, f"rnn_backward_truncated(k={k})")
        failures = []
        for want, whose in ((own, _("your rnn_backward")), (correct, _("the full gradient"))):
            if want is None:
                continue
            try:
                for g, e, name in zip(grads, want, names):
                    expect_close(g, e, _("rnn_backward_truncated with k={k} >= T=5: {name}, against {whose}").format(
                        k=k, name=name, whose=whose), scale=_largest(e),
                        hint=_("with k >= T nothing is truncated: the result equals rnn_backward"))
            except CheckFailed as failure:
                failures.append(failure)
            else:
                break
        else:
            raise failures[0]


def test_numerical_gradient_matches_analytic(bptt, rng):
    w, A = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    f = CubicForm(w=w, A=A)
    x = rng.normal(size=(3, 4))
    grad = expect_array(bptt.numerical_gradient(f, x.copy()), x.shape, "numerical_gradient")
    # Whole-array error: central differences carry ~1e-9 of round-off, which the element-wise
    # ratio turns into 1e-6 on entries near zero (1 reference run in 1000 failed that way).
    # The reference stays below 3e-10 here (3000 draws); a one-sided 1/h is off by 0.3.
    err = norm_rel_error(grad, f.gradient(x))
    if not err < 1e-8:
        raise CheckFailed(_("numerical_gradient of sum(w x^3) + sum(x A) is wrong: relative error {error}; "
                            "use central differences (f(x+h) - f(x-h)) / 2h for each entry").format(error=f"{err:.1e}"))
    x2 = rng.normal(size=(5,))
    f2 = CubicForm(w=rng.normal(size=5), A=rng.normal(size=(5, 1)))
    bptt.numerical_gradient(f2, x2)
    expect_not_mutated(bptt, _("numerical_gradient (restore x[i] after each probe)"))
    # "x: the point, any shape": a transposed matrix too (the worker receives it transposed).
    # Probing through x.reshape(-1) or x.ravel() then changes a copy, and f never sees the probe.
    xt = rng.normal(size=(4, 3)).T
    grad = expect_array(bptt.numerical_gradient(f, xt.copy(order="F")), xt.shape, "numerical_gradient")
    err = norm_rel_error(grad, f.gradient(xt))
    if not err < 1e-8 and not np.any(grad):     # every probe missed f: they went to a copy of x
        raise CheckFailed(_("numerical_gradient at a transposed (non-contiguous) x returned zeros: the probes never "
                            "reached f; x.reshape(-1) and x.ravel() are copies of such an x, so probe x itself, "
                            "x[i] for every index i (np.ndindex(x.shape))"), "diagnosed")
    if not err < 1e-8:
        raise CheckFailed(_("numerical_gradient at a transposed (non-contiguous) x is wrong: relative error "
                            "{error}").format(error=f"{err:.1e}"))
    # "h: the step" is the caller's. For the cubic a central difference is off by exactly w h^2
    # (its linear part is exact), so at h = 0.1 it is 3 w x^2 + w h^2 + A's row sums, 1e-2 |w| from
    # the gradient a step of 1e-6 gives; the round-off at h = 0.1 is ~1e-14.
    step = 0.1
    grad = expect_array(bptt.numerical_gradient(f, x.copy(), step), x.shape, "numerical_gradient")
    err = norm_rel_error(grad, f.gradient(x) + f.w * step**2)
    if not err < 1e-8:
        raise CheckFailed(_("numerical_gradient(f, x, h=0.1) of sum(w x^3) + sum(x A) is not the central difference "
                            "with that step: relative error {error} from 3 w x^2 + w h^2 + (the row sums of A). Use "
                            "the caller's step h").format(error=f"{err:.1e}"))


def test_rel_error_matches_formula(bptt, rng):
    a = rng.normal(size=(4, 5))
    b = a + rng.normal(size=(4, 5)) * 1e-3
    a[0, 0] = b[0, 0] = 0.0              # 0/0 must use the 1e-8 floor, not give nan
    expected = np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b)))
    got = bptt.rel_error(a, b)
    if not isinstance(got, (float, int)) or not abs(got - expected) <= 1e-12 * max(1.0, abs(expected)):
        raise CheckFailed(_("rel_error returned {got}, expected {expected}: the ratio is taken per element with "
                            "the denominator max(1e-8, |a| + |b|), then the maximum (a float)").format(
                                got=repr(got), expected=repr(float(expected))))


def test_no_input_mutation(bptt, rng):
    # Each function on its own: one that raises is charged by its own tests, not here.
    x, h0, Wx, Wh, b = rnn_params(rng, N=2, T=4, D=3, H=4)
    check = MutationCheck(bptt)
    step = check.call("rnn_step_forward", x[:, 0], h0, Wx, Wh, b)
    step_cache = check.part(step, 2, 1)
    if step_cache is not None:
        check.call("rnn_step_backward", rng.normal(size=(2, 4)), step_cache)
    cache = check.part(check.call("rnn_forward", x, h0, Wx, Wh, b), 2, 1)
    if cache is not None:
        dh = rng.normal(size=(2, 4, 4))
        check.call("rnn_backward", dh, cache)
        check.call("rnn_backward_truncated", dh, cache, 2)
    check.finish()
