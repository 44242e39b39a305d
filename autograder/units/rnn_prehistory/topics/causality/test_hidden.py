"""Hidden suite for causality.py [causality]: who may see whom, measured (oral-exam question 7).

Expected values come from the reference solution (checked against torch autograd's
Jacobian in test_oracle.py beside this suite), from the helper maps' exact Jacobians (the
maps are lent to the student's dependency_matrix: it can call them, nothing more), or
from exact properties: a causal map's outputs do not move, bit for bit, when a future
input moves. The student's birnn_forward runs with a correct rnn_forward in place of
theirs (oracles.RNNForward), so a mistake in bptt.py is charged in bptt only.
"""

from __future__ import annotations

import numpy as np

from autograder.authoring.checks import (
    CheckFailed,
    MutationCheck,
    every_case,
    expect_array,
    expect_close,
    expect_not_mutated,
    expect_tuple,
    rel_error,
    shown_pair,
    variant_hypotheses,
)
from autograder.i18n import N_, _
from autograder.units.rnn_prehistory.helpers.sequence_maps import LookaheadMap
from autograder.units.rnn_prehistory.oracles import RNNForward

CAUSAL_TOL = 1e-8            # causality.py's documented default

STAND_IN = {"bptt.rnn_forward": RNNForward()}


def rnn_weights(rng, D, H):
    return rng.normal(size=(D, H)), rng.normal(size=(H, H)) * 0.5, rng.normal(size=H) * 0.1


# Student against reference (any summation order, bounds in checks.py): a state |h| <= 1 is within
# 2 d_t of tanh_recurrence_bound (~1e-13 here), absolutely, so it is compared at scale 1; an
# attention output within 2 dot_attention_bound (~1e-13, ~1e-10 with x scaled by 30) of the
# largest value it can see, so it is compared at that scale. 1e-8 is the documented looser
# tolerance; the mutants are off by 1e-2 and more. A causal map's outputs are compared exactly:
# they never read a later input, and a product's row t does not depend on the other rows' values.


def visible_values(x, Wv, causal):
    """max |v_s| over the positions s each output t can see: the scale of a weighted average of them."""
    v = np.abs(x @ Wv)
    return np.maximum.accumulate(v, axis=1) if causal else np.broadcast_to(v.max(axis=1, keepdims=True), v.shape)


def birnn(causality):
    return causality.birnn_forward.patched(STAND_IN)


def moved_outputs(function, x, extra_args, rng):
    """The outputs of `function(x, *extra_args)`, and for every position s with x[:, s] moved
    alone (`single`) and with x[:, s:] moved together (`suffix`), each by steps of random sizes,
    in one exchange with the worker: (y, single, suffix), lists over s = 0..T-1.

    The probes come in a random order and x itself twice, so a map that compares its inputs
    with earlier ones cannot tell which position moved or copy earlier outputs into a probe: a
    probe moving several positions differs from every other call in more than one place."""
    T = x.shape[1]
    probes = [x, x]
    for s in range(T):
        for moved in (slice(s, s + 1), slice(s, None)):
            probe = x.copy()
            probe[:, moved] += rng.normal(size=probe[:, moved].shape) * rng.uniform(0.3, 2.0)
            probes.append(probe)
    order = rng.permutation(len(probes))
    calls = getattr(function, "map", None)
    shuffled = [(probes[i], *extra_args) for i in order]
    replies = calls(shuffled) if calls else [function(*c) for c in shuffled]
    outputs = [np.asarray(y) for _i, y in sorted(zip(order, replies), key=lambda pair: pair[0])]
    if not np.array_equal(outputs[0], outputs[1]):
        raise CheckFailed(_("the same input gave two different outputs: a map's output must depend on its "
                            "input only, not on earlier calls (keep no state between calls)"))
    return outputs[0], outputs[2::2], outputs[3::2]


def rnn_states(x, h0, Wx, Wh, b):
    """h_t = tanh(x_t Wx + h_{t-1} Wh + b) over t, written here: the states (N, T, H)."""
    h, states = h0, []
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] @ Wx + h @ Wh + b)
        states.append(h)
    return np.stack(states, axis=1)


def birnn_variant(x, h0, fwd, bwd, swapped=False, backward_in_order=False, not_reversed_back=False,
                  backward_from_zero=False):
    """birnn_forward of its docstring written here, or with one known mistake: swapped halves;
    the backward pass run left to right; its states left in reversed order; started from zeros."""
    forward = rnn_states(x, h0, *fwd)
    start = np.zeros_like(h0) if backward_from_zero else h0
    if backward_in_order:
        backward = rnn_states(x, start, *bwd)
    else:
        backward = rnn_states(x[:, ::-1], start, *bwd)
        backward = backward if not_reversed_back else backward[:, ::-1]
    return np.concatenate([backward, forward] if swapped else [forward, backward], axis=2)


BIRNN_MISTAKES = (
    (dict(swapped=True), N_("your y is the right states with the halves swapped: y[:, t, :H] must be the forward "
                            "(left-to-right) state and y[:, t, H:] the backward one")),
    (dict(backward_in_order=True), N_("your backward half matches a second pass from left to right: the backward "
                                      "pass reads x from the end, rnn_forward(x[:, ::-1], ...)")),
    (dict(not_reversed_back=True), N_("your backward half matches the backward pass's states in the order it "
                                      "computed them: reverse them again ([:, ::-1]) so that y[:, t] belongs to "
                                      "x[:, t]")),
    (dict(backward_from_zero=True), N_("your backward half matches a backward pass started from zeros: h0 is the "
                                       "initial state of both passes")),
)


def test_birnn_forward_matches_reference(causality, reference, rng):
    cases = []
    for N, T, D, H in [(1, 1, 2, 3), (3, 5, 4, 3), (2, 8, 3, 5)]:
        cases.append((rng.normal(size=(N, T, D)), rng.normal(size=(N, H)) * 0.5, rnn_weights(rng, D, H),
                      rnn_weights(rng, D, H)))

    def run_case(case, record):
        x, h0, fwd, bwd = case
        (N, T, D), H = x.shape, h0.shape[1]
        what = f"birnn_forward (N={N}, T={T}, D={D}, H={H})"
        y = birnn(causality)(x, h0, *fwd, *bwd)
        expect_not_mutated(causality, what)
        y = expect_array(y, (N, T, 2 * H), what)
        want = reference.causality.birnn_forward(x, h0, *fwd, *bwd)
        record(y, want, variant_hypotheses(birnn_variant, BIRNN_MISTAKES, x, h0, fwd, bwd))
        expect_close(y[:, :, :H], want[:, :, :H], f"{what}: y[:, :, :H]", tol=1e-8, scale=1.0,
                     hint=_("the first H features are the forward pass, rnn_forward(x, h0, Wx_f, Wh_f, b_f)"))
        expect_close(y[:, :, H:], want[:, :, H:], f"{what}: y[:, :, H:]", tol=1e-8, scale=1.0,
                     hint=_("the backward pass reads x from the end: rnn_forward(x[:, ::-1], h0, Wx_b, Wh_b, b_b), "
                            "and its output is reversed again so that y[:, t] belongs to x[:, t]"))

    # every case runs: a mistake is named only when it gives the student's states on all of them.
    # States |h| <= 1 are compared absolutely (scale 1): within ~1e-13 in any summation order.
    every_case(cases, run_case, same=lambda a, b: bool(np.all(np.isfinite(a)) and rel_error(a, b, 1.0) <= 1e-8))


def far_below_zero(rng, N, T, D, Dk):
    """x and Wq, Wk = -Wq whose scores e[t, s] all lie between -2e4 and about -8e4: x_t runs along
    the first singular direction u of Wq (a_t u, a_t in [1, 2], plus 1e-4 of noise), so
    q_t . k_s = -a_t a_s |u Wq|^2 < 0, scaled until the largest is -2e4. exp of such a score is 0:
    only a softmax that subtracts the row's own maximum stays finite."""
    Wq = rng.normal(size=(D, Dk))
    u = np.linalg.svd(Wq)[0][:, 0]
    x = rng.uniform(1.0, 2.0, size=(N, T, 1)) * u + rng.normal(size=(N, T, D)) * 1e-4
    q = x @ Wq
    scores = -np.einsum("ntk,nsk->nts", q, q) / np.sqrt(Dk)
    return x * np.sqrt(2e4 / -scores.max()), Wq, -Wq


def attention_variant(x, Wq, Wk, Wv, causal, width="Dk", mask_from=1, mask_after=False, always_masked=False):
    """self_attention of its docstring written here, or with one known mistake: width "D", "Dv"
    or 1: the scores divided by the square root of x's width, v's, or not scaled; mask_from=2: the
    mask np.triu(..., k=2); mask_after: the future weights zeroed after a softmax over every
    position; always_masked: the mask applied whatever causal says."""
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    divisor = {"Dk": Wk.shape[1], "D": x.shape[2], "Dv": Wv.shape[1], 1: 1}[width]
    e = np.einsum("ntk,nsk->nts", q, k) / np.sqrt(divisor)
    future = np.triu(np.ones(e.shape[1:], dtype=bool), k=mask_from)
    masked = causal or always_masked
    if masked and not mask_after:
        e = np.where(future, -np.inf, e)
    w = np.exp(e - e.max(axis=2, keepdims=True))
    w = w / w.sum(axis=2, keepdims=True)
    return (np.where(future, 0.0, w) if masked and mask_after else w) @ v


SCALE_MISTAKES = (
    (dict(width="D"), N_("your outputs match scores divided by sqrt(D), the width of x: divide by sqrt(Dk), the "
                         "width of q and k (Wk.shape[1])")),
    (dict(width="Dv"), N_("your outputs match scores divided by sqrt(Dv), the width of v: divide by sqrt(Dk), the "
                          "width of q and k (Wk.shape[1])")),
    (dict(width=1), N_("your outputs match scores not scaled at all: e = q k^T / sqrt(Dk), with Dk the width of q "
                       "and k")),
    (dict(mask_after=True), N_("your outputs match a softmax over every position with the future weights zeroed "
                               "afterwards: the normaliser still reads the future. Mask the scores of s > t with -inf "
                               "before the softmax")),
    (dict(mask_from=2), N_("your outputs match a mask from s = t + 2 on (np.triu(..., k=2)): position t still sees "
                           "t + 1. The future is every s > t: np.triu(..., k=1)")),
    (dict(always_masked=True), N_("your outputs with causal=False match the causal mask: causal=False is an encoder, "
                                  "every position sees every position (no mask)")),
)


def test_self_attention_matches_reference(causality, reference, rng):
    inputs = []
    for N, T, D, Dk, Dv, scale in [(1, 1, 2, 2, 3, 1.0), (2, 6, 4, 3, 2, 1.0), (3, 5, 3, 4, 4, 1.0),
                                   (2, 7, 3, 2, 3, 30.0)]:
        x = rng.normal(size=(N, T, D)) * scale
        inputs.append((f"N={N}, T={T}, D={D}, Dk={Dk}, Dv={Dv}", x, rng.normal(size=(D, Dk)), rng.normal(size=(D, Dk)),
                       rng.normal(size=(D, Dv))))
    x, Wq, Wk = far_below_zero(rng, 2, 5, 3, 2)
    inputs.append(("N=2, T=5, D=3, Dk=2, Dv=3, " + _("every score below -20000"), x, Wq, Wk, rng.normal(size=(3, 3))))
    cases = [(*case, causal) for case in inputs for causal in (True, False)]

    def run_case(case, record):
        sizes, x, Wq, Wk, Wv, causal = case
        N, T, Dv = x.shape[0], x.shape[1], Wv.shape[1]
        what = f"self_attention ({sizes}, causal={causal})"
        y = expect_array(causality.self_attention(x, Wq, Wk, Wv, causal), (N, T, Dv), what)
        want = reference.causality.self_attention(x, Wq, Wk, Wv, causal)
        record(y, want, variant_hypotheses(attention_variant, SCALE_MISTAKES, x, Wq, Wk, Wv, causal))
        if not np.all(np.isfinite(y)):
            raise CheckFailed(_("{what}: the output contains nan or inf; subtract each row's maximum before exp "
                                "(masked entries are -inf, their exp is 0)").format(what=what))
        expect_close(y, want, what, tol=1e-8, scale=visible_values(x, Wv, causal),
                     hint=_("e = q k^T / sqrt(Dk) with Dk the width of q and k; with causal=True the future "
                            "(s > t) gets -inf before the softmax, so the visible weights still sum to 1; "
                            "subtract each row's own maximum, however far below zero the scores are"))

    def same(y, other):
        """Outputs compared at the scale of the largest (a weighted average of values is at most the
        largest |v_s| it sees): the rounding is ~1e-13 of it, a wrong scaling ~1e-2 and more."""
        return bool(np.all(np.isfinite(y)) and rel_error(y, other, np.abs(other).max()) <= 1e-8)

    # every case runs: a scaling is named only when it gives the student's outputs on all of them
    every_case(cases, run_case, same)


def test_causal_maps_read_no_future_and_the_others_do(causality, rng, report_extras):
    """Move inputs from x_s on: a causal map's outputs before s do not move at all."""
    N, T, D, H = 3, 8, 3, 4
    x, h0 = rng.normal(size=(N, T, D)), rng.normal(size=(N, H)) * 0.5
    fwd, bwd = rnn_weights(rng, D, H), rnn_weights(rng, D, H)
    Wq, Wk, Wv = rng.normal(size=(D, 3)), rng.normal(size=(D, 3)), rng.normal(size=(D, 4))
    calls = {"birnn": (birnn(causality), (h0, *fwd, *bwd)),
             "causal_attention": (causality.self_attention, (Wq, Wk, Wv, True)),
             "open_attention": (causality.self_attention, (Wq, Wk, Wv, False))}
    # The forward half of birnn_forward is read off the same calls as the whole.
    maps = {"rnn": ("birnn", slice(0, H)), "birnn": ("birnn", slice(None)),
            "causal_attention": ("causal_attention", slice(None)), "open_attention": ("open_attention", slice(None))}
    # Each function is measured on its own: a self_attention still stubbed (or raising) must not
    # keep the RNN's maps out of the report (sequence_models.png draws each map it is given).
    # The probes are drawn before the calls, so the draws of rng do not depend on a failure.
    outputs, failure, unmeasured = {}, None, {}
    for name, (function, args) in calls.items():
        try:
            outputs[name] = moved_outputs(function, x, args, rng)
        except Exception as error:  # noqa: BLE001 - the student's exception, or a CheckFailed: raised below
            failure = failure or error
            student = "birnn_forward" if name == "birnn" else "self_attention"
            # why the map's panel is empty (the figure is in English, like its other text)
            unmeasured[name] = (f"{student} is not implemented yet" if getattr(error, "exc_type", "") ==
                                "NotImplementedError" else f"{student} failed: see score.md")
    measured, suffix_leaks = {}, {}
    for name, (source, features) in maps.items():
        if source not in outputs:
            continue
        y, single, suffix = outputs[source]
        y = y[:, :, features]
        D_map, suffix_leaks[name] = np.zeros((T, T)), []
        for s in range(T):
            D_map[:, s] = np.max(np.linalg.norm(single[s][:, :, features] - y, axis=2), axis=0)
            moved_before = np.any(suffix[s][:, :s, features] != y[:, :s], axis=(0, 2))
            suffix_leaks[name] += [(int(t), s) for t in np.flatnonzero(moved_before)]
        measured[name] = D_map
    # Six digits in the report: the last digits of a norm differ from one BLAS kernel to another.
    report_extras["causality"] = {name: [[float(f"{v:.6g}") for v in row] for row in D_map.tolist()]
                                  for name, D_map in measured.items()}
    if unmeasured:
        report_extras["causality_unmeasured"] = {name: unmeasured[source] for name, (source, _f) in maps.items()
                                                 if source in unmeasured}
    if failure is not None:
        raise failure

    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    for name, what in (("rnn", _("the forward half of birnn_forward (a unidirectional RNN)")),
                       ("causal_attention", _("self_attention with causal=True"))):
        leaks = np.argwhere(future & (measured[name] != 0.0))
        if suffix_leaks[name] and not leaks.size:
            t, s = suffix_leaks[name][0]
            raise CheckFailed(_("{what}: output {t} changed when only the inputs from {s} on (future positions) "
                                "moved together; a causal map's outputs before s must stay exactly the same, "
                                "whatever moves after them").format(what=what, t=t, s=s))
        if leaks.size:
            t, s = (int(i) for i in leaks[0])
            if name == "rnn":      # no scores, no mask: the advice is the RNN's own
                raise CheckFailed(_("{what}: output {t} changed when only input {s} (a future position) moved; "
                                    "y[:, t, :H] must be the left-to-right pass's state after x_0 ... x_t. Check "
                                    "that the halves are not swapped (the forward state first, then the backward "
                                    "one) and that the forward pass reads x in its own order").format(what=what, t=t, s=s))
            raise CheckFailed(_("{what}: output {t} changed when only input {s} (a future position) moved; a causal "
                                "map's outputs before s must stay exactly the same. Mask the scores of s > t with "
                                "-inf before the softmax (not after it: the normaliser would still read the "
                                "future), and check the mask is np.triu(..., k=1)").format(what=what, t=t, s=s))
        if np.any(np.diag(measured[name]) == 0.0):
            raise CheckFailed(_("{what}: some output does not read its own input x_t; the mask must leave the "
                                "diagonal open (s <= t is visible)").format(what=what))
    for name, what in (("birnn", "birnn_forward"), ("open_attention", _("self_attention with causal=False"))):
        if measured[name][0, 1] == 0.0 or np.any(measured[name][future] == 0.0):
            raise CheckFailed(_("{what}: some output did not change when a later input moved, but this map reads "
                                "the whole sequence: position 0 already reads position 1. For the bidirectional "
                                "RNN the backward pass must run from the end of the sequence; without the mask "
                                "every position sees every position").format(what=what))


def expect_dependency(D, want, what, rtol, atol, measured=""):
    if not np.allclose(D, want, rtol=rtol, atol=atol):
        worst = np.unravel_index(np.argmax(np.abs(D - want) - rtol * np.abs(want)), D.shape)
        raise CheckFailed(_("{what}: D[{t}, {s}] = {got}, {measured}{want}. D[t, s] is the Frobenius norm of "
                            "dy_t/dx_s: perturb x[s, d] (every d) by +h and -h on a float64 copy of x and divide the "
                            "change of y_t by 2h").format(
            what=what, t=worst[0], s=worst[1], **shown_pair(D[worst], want[worst], ("got", "want"), 10),
            measured=measured or _("the exact Jacobian block norm is ")))


def expect_leak(causality, D, want_leak, what, *tol):
    """is_causal(D, *tol) must be (want_leak is None, want_leak)."""
    causal, leak = expect_tuple(causality.is_causal(D, *tol), 2, "is_causal")
    got_leak = None if leak is None else tuple(int(i) for i in leak)
    if bool(causal) != (want_leak is None) or got_leak != want_leak:
        raise CheckFailed(_("is_causal on {what}: returned ({causal}, {leak}), expected ({want_causal}, {want}). "
                            "Scan rows t in order and, in each, s = t+1, t+2, ...; the first D[t, s] over the "
                            "tolerance (D[t, s] > tol: an entry equal to tol is not a leak) is the leak; only "
                            "entries above the diagonal count").format(
            what=what, causal=causal, leak=got_leak, want_causal=want_leak is None, want=want_leak))


def central_differences(f, x, h):
    """D[t, s] as dependency_matrix's docstring defines it, measured with the step h: the norms of
    the blocks of (f(x + h e_sd) - f(x - h e_sd)) / 2h, in float64. Grader-side only (it is a
    working dependency_matrix, so it stays out of the helpers students receive). With h = 0.25 the
    truncation (h^2 / 6 times a third derivative, ~1e-2) shows in every entry the map reads."""
    x = np.asarray(x, dtype=np.float64)
    T, D = x.shape
    steps = np.eye(T * D).reshape(T * D, T, D) * h
    columns = np.stack([f(x + e) - f(x - e) for e in steps]) / (2 * h)     # (T*D, T, K)
    blocks = columns.reshape(T, D, T, -1)                                  # [s, d, t, k]
    return np.sqrt(np.einsum("sdtk,sdtk->ts", blocks, blocks))


def test_dependency_matrix_and_first_leak(causality, rng):
    T, Din, K = 6, 2, 3
    for lag, start in [(int(rng.integers(1, 4)), int(rng.integers(0, 3))), (0, 0), (-1, 1)]:
        lookahead = LookaheadMap(A=rng.normal(size=(Din, K)), B=rng.normal(size=(Din, K)), lag=lag, start=start)
        point = rng.normal(size=(T, Din))
        what = f"dependency_matrix (LookaheadMap lag={lag}, start={start})"
        D = causality.dependency_matrix(lookahead, point)
        expect_not_mutated(causality, what)
        D = expect_array(D, (T, T), what)
        exact = lookahead.dependency(point)
        # central differences: truncation h^2 times a third derivative plus roundoff eps |y| / h, ~1e-10
        expect_dependency(D, exact, what, rtol=1e-5, atol=1e-7)
        want_leak = (start, start + lag) if lag > 0 else None
        expect_leak(causality, exact, want_leak, _("a map whose first read of the future is {want}").format(
            want=want_leak))
    # The step is the caller's: with h = 0.25 the truncation error (~1e-2) shows in every entry the map
    # reads; D is compared with the central differences of that step (their round-off, ~1e-15).
    lookahead = LookaheadMap(A=rng.normal(size=(Din, K)), B=rng.normal(size=(Din, K)), lag=1)
    what = "dependency_matrix (LookaheadMap lag=1, h=0.25)"
    D = expect_array(causality.dependency_matrix(lookahead, point, 0.25), (T, T), what)
    expect_dependency(D, central_differences(lookahead, point, 0.25), what, rtol=1e-8, atol=1e-12,
                      measured=_("central differences with that step give "))
    # A float32 x is probed in float64: x + 1e-5 rounded to float32 moves by up to 6e-8 less or more,
    # an error of ~1e-3 in every entry (float64: ~1e-10).
    point32 = rng.normal(size=(T, Din)).astype(np.float32)
    what = "dependency_matrix (x of dtype float32)"
    D = expect_array(causality.dependency_matrix(lookahead, point32), (T, T), what)
    expect_dependency(D, lookahead.dependency(point32.astype(float)), what, rtol=1e-5, atol=1e-7)

    # Round-off sized entries above the diagonal are no dependence; clear ones are.
    noise = np.tril(np.ones((5, 5))) + np.triu(np.full((5, 5), 1e-12), k=1)
    causal, leak = expect_tuple(causality.is_causal(noise), 2, "is_causal")
    if not causal or leak is not None:
        raise CheckFailed(_("is_causal: entries of 1e-12 above the diagonal are finite-difference round-off, not a "
                            "dependence; compare with the tolerance (D[t, s] > tol), not with 0"))
    noise[3, 4] = 1e-3
    causal, leak = expect_tuple(causality.is_causal(noise), 2, "is_causal")
    if causal or leak is None or tuple(int(i) for i in leak) != (3, 4):
        raise CheckFailed(_("is_causal: an entry of 1e-3 at (3, 4) is a real dependence on the future; expected "
                            "(False, (3, 4))"))
    # The caller's tol, both ways; an entry equal to it is not over it (D[t, s] <= tol is causal).
    expect_leak(causality, noise, None, _("entries of 1e-12 and one of 1e-3 above the diagonal, with tol=1e-2"), 1e-2)
    expect_leak(causality, noise, (0, 1), _("entries of 1e-12 above the diagonal, with tol=1e-13"), 1e-13)
    at_tol = np.eye(4) + np.triu(np.full((4, 4), 0.25), k=1)
    expect_leak(causality, at_tol, None, _("entries of exactly 0.25 above the diagonal, with tol=0.25"), 0.25)
    expect_leak(causality, np.eye(4) + np.triu(np.full((4, 4), CAUSAL_TOL), k=1), None,
                _("entries of exactly 1e-8 above the diagonal (the default tol)"))
    # The order of the scan: row 0 before row 1 (a column scan finds (1, 2)), and in a row the
    # nearest future position (from the far end: (0, 4)).
    order = np.eye(5)
    order[1, 2] = order[0, 3] = 1.0
    expect_leak(causality, order, (0, 3), _("a matrix with leaks at (0, 3) and (1, 2)"))
    order = np.eye(5)
    order[0, 2] = order[0, 4] = 1.0
    expect_leak(causality, order, (0, 2), _("a matrix with leaks at (0, 2) and (0, 4)"))
    # One position: no entry above the diagonal at all.
    expect_leak(causality, np.array([[0.7]]), None, _("a 1 x 1 matrix (nothing above the diagonal)"))


READOUT_MISTAKES = (
    (dict(summed=True), N_("your error matches the squared errors summed over the T-1 positions of each sequence: "
                           "the error is a mean over the held-out sequences AND over the positions t = 1..T-1")),
    (dict(current_token=True), N_("your error matches position t predicting token t, the one it has just read: the "
                                  "target of [y_t, 1] is onehot(token_{t+1}), tokens[:, 1:]")),
    (dict(fit_on_all=True), N_("your error matches a readout fitted on every sequence, the held-out ones too: fit W "
                               "on the first n_train sequences only")),
)


def readout_variant(states, tokens, n_train, current_token=False, fit_on_all=False, summed=False) -> float:
    """The readout error of the docstring, or with one known mistake, written here: current_token:
    the target of position t is token t; fit_on_all: W fitted on every sequence, the held-out ones
    too; summed: the squared errors summed over the T-1 positions of a sequence, not averaged."""
    N, T, K = states.shape
    features = np.concatenate([states[:, :-1], np.ones((N, T - 1, 1))], axis=2)
    targets = np.eye(int(np.max(tokens)) + 1)[tokens[:, :-1] if current_token else tokens[:, 1:]]
    fit = N if fit_on_all else n_train
    W = np.linalg.lstsq(features[:fit].reshape(fit * (T - 1), K + 1), targets[:fit].reshape(fit * (T - 1), -1),
                        rcond=None)[0]
    squared = np.sum((features[n_train:] @ W - targets[n_train:]) ** 2, axis=2)
    return float(np.mean(np.sum(squared, axis=1)) if summed else np.mean(squared))


def same_error(a, b) -> bool:
    """Least squares on well-conditioned features: any factorisation within ~1e-13; 1e-6 is far above."""
    a = float(a)
    return bool(np.isfinite(a) and abs(a - b) <= 1e-6 * max(abs(a) + abs(b), 1e-8))


def test_bidirectional_lm_reads_the_next_token(causality, reference, rng, report_extras):
    """Random tokens: the past says nothing about the next one, the bidirectional states do."""
    # Over 300 seeds the reference's ratio of the two errors is at most 0.67 (median 0.44).
    N, T, V, E, H, n_train = 64, 12, 4, 4, 12, 40
    tokens = rng.integers(0, V, size=(N, T))
    x = rng.normal(size=(V, E))[tokens]
    fwd, bwd = rnn_weights(rng, E, H), rnn_weights(rng, E, H)
    states = reference.causality.birnn_forward(x, np.zeros((N, H)), *fwd, *bwd)
    # V = tokens.max() + 1 when some id never occurs: here 2 (its one-hot column is all zeros).
    gaps = np.where(tokens == 2, 3, tokens)
    gaps[0, 0] = 3
    hint = _("fit [y_t, 1] -> onehot(token t+1) on the first n_train sequences with np.linalg.lstsq (positions "
             "0..T-2), then the mean over the other sequences and positions of the squared error summed over the V "
             "outputs")
    cases = [("birnn", states, tokens, _("next_token_readout_error on the {name} states").format(name="birnn"), hint),
             ("rnn", states[:, :, :H], tokens, _("next_token_readout_error on the {name} states").format(name="rnn"),
              hint),
             ("gaps", states[:, :, :H], gaps,
              _("next_token_readout_error on tokens of ids 0, 1 and 3 (2 never occurs)"),
              _("the one-hot targets have V = tokens.max() + 1 columns, one per id up to the largest, whether or "
                "not each id occurs"))]
    errors = {}

    def run_case(case, record):
        name, features, ids, what, why = case
        error = causality.next_token_readout_error(features, ids, n_train)
        want = reference.causality.next_token_readout_error(features, ids, n_train)
        record(error, want, variant_hypotheses(readout_variant, READOUT_MISTAKES, features, ids, n_train))
        try:
            error = float(error)
        except (TypeError, ValueError):
            raise CheckFailed(_("{what} should be a number, got {type}").format(
                what=what, type=type(error).__name__), "shape") from None
        if not same_error(error, want):
            plain = _("{what} is {error}, expected {expected}").format(
                what=what, **shown_pair(error, want, ("error", "expected")))
            raise CheckFailed(_("{message}. {hint}").format(message=plain, hint=why), plain=plain)
        errors[name] = error

    # every case runs: a mistake is named only when it gives the student's error on all of them
    every_case(cases, run_case, same_error)
    errors.pop("gaps")
    report_extras["causality_readout"] = {name: float(f"{e:.6g}") for name, e in errors.items()}   # as above
    if not errors["birnn"] < 0.8 * errors["rnn"]:
        raise CheckFailed(_("the bidirectional states should read the next token far better than the forward ones "
                            "(they saw it); your errors: {bi} against {uni}").format(
            bi=f"{errors['birnn']:.3f}", uni=f"{errors['rnn']:.3f}"))


def test_no_input_mutation(causality, rng):
    N, T, D = 2, 4, 3
    check = MutationCheck(causality)
    x = rng.normal(size=(N, T, D))     # birnn_forward: in test_birnn_forward_matches_reference (bptt's stand-in)
    check.call("self_attention", x, rng.normal(size=(D, 2)), rng.normal(size=(D, 2)), rng.normal(size=(D, 2)), True)
    # The map is lent (each of the 2 T D probes a callback to the grader): a small point will do.
    check.call("dependency_matrix", LookaheadMap(A=rng.normal(size=(2, 2)), B=rng.normal(size=(2, 2))), x[0, :3, :2])
    check.finish()
