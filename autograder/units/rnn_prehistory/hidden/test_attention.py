"""Hidden suite for attention.py [attention] (SPEC §3.7).

Expected values come from the reference solution (checked against a double loop and
torch in tests/test_oracle_attention.py) or from exact properties (zeros, sums).
"""

from __future__ import annotations

import numpy as np

from autograder.checks import CheckFailed, MutationCheck, expect_array, expect_close, expect_tuple
from autograder.i18n import _


def params(rng, N, Tx, Dh, S, A, scale=1.0):
    return (rng.normal(size=(N, S)), rng.normal(size=(N, Tx, Dh)), rng.normal(size=(S, A)) * 0.5,
            rng.normal(size=(Dh, A)) * 0.5, rng.normal(size=A) * scale)


SUM_TOL = 1e-9      # a softmax's row sums are 1 to a few ulps, whatever the scores


def softmax_over(e, real, axis):
    """Softmax of the scores e over `axis` (None: every entry at once), real positions only, written
    here independently of the exercise's solution."""
    z = np.where(real, e, -np.inf)
    top = np.max(z, axis=axis, keepdims=True)
    w = np.where(real, np.exp(z - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = np.sum(w, axis=axis, keepdims=True)
    return np.divide(w, total, out=np.zeros_like(w), where=total > 0)


def wrong_normalisations(s_prev, H, Wa, Ua, va, real):
    """(weights, what the student did) for softmaxes over the wrong entries, on the same inputs."""
    e = np.einsum("nta,a->nt", np.tanh(np.einsum("ns,sa->na", s_prev, Wa)[:, None, :]
                                       + np.einsum("ntd,da->nta", H, Ua)), va)
    return [
        (softmax_over(e, real, 0),
         _("your weights are a softmax over the batch axis (axis 0): alpha[:, t] sums to 1. The rows are separate "
           "sentences, so the maximum and the sum of the softmax run over axis 1, e.g. "
           "e.max(axis=1, keepdims=True) and w.sum(axis=1, keepdims=True)")),
        (softmax_over(e, real, None),
         _("your weights are one softmax over the whole (N, Tx) array: the maximum and the sum ran over every "
           "entry (no axis), so all rows together sum to 1. Each row is its own distribution: use axis=1, "
           "keepdims=True")),
        (softmax_over(e, np.ones_like(real), 1) * real,
         _("your weights are a softmax over every position, padding included, with the padded weights set to 0 "
           "afterwards, so the real positions no longer sum to 1: leave the padding out of the softmax itself "
           "(np.where(mask, e, -np.inf) before the maximum and the exp)")),
    ]


def normalisation_problem(alpha, args) -> tuple[str, bool]:
    """('', False) when every row of alpha with a real position sums to 1 over the source positions;
    otherwise what the sums are, and which wrong softmax the weights match, if one does (then
    True: the message is the diagnosis)."""
    s_prev, H, Wa, Ua, va = args[:5]
    mask = args[5] if len(args) > 5 else None
    real = np.ones(alpha.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    sums = alpha.sum(axis=1)[real.any(axis=1)]
    if np.all(np.abs(sums - 1.0) <= SUM_TOL):
        return "", False
    low, high = f"{sums.min():.4g}", f"{sums.max():.4g}"
    amount = low if low == high else _("between {low} and {high}").format(low=low, high=high)
    text = _("the weights alpha[n, :] of each row must sum to 1 over the source positions (axis 1), but yours "
             "sum to {amount}").format(amount=amount)
    # Named only when exactly one fits: saturated scores can make two of them the same one-hot weights.
    fits = [diagnosis for weights, diagnosis in wrong_normalisations(s_prev, H, Wa, Ua, va, real)
            if np.allclose(alpha, weights, rtol=1e-6, atol=1e-9)]
    if len(fits) == 1:
        return f"{text}; {fits[0]}", True
    if np.all(np.abs(alpha.sum(axis=0)[real.any(axis=0)] - 1.0) <= SUM_TOL):
        return _("{text}; they sum to 1 over the batch axis instead (alpha[:, t] sums to 1): normalise over "
                 "axis 1").format(text=text), True
    return text, False


def call(attention, args, N, Tx, Dh, what):
    context, alpha = expect_tuple(attention.additive_attention(*args), 2, what)
    expect_array(context, (N, Dh), f"{what}: context")
    expect_array(alpha, (N, Tx), f"{what}: alpha")
    if not (np.all(np.isfinite(alpha)) and np.all(np.isfinite(context))):
        raise CheckFailed(_("{what}: alpha or context contains nan or inf; subtract the row maximum of the real "
                            "positions before exp, and avoid 0/0 in fully masked rows").format(what=what))
    problem, named = normalisation_problem(alpha, args)
    if problem:
        raise CheckFailed(f"{what}: {problem}", "diagnosed" if named else "value")
    return context, alpha


def random_mask(rng, N, Tx):
    mask = rng.random((N, Tx)) < 0.6
    mask[np.arange(N), rng.integers(0, Tx, size=N)] = True    # at least one real token per row
    return mask


def test_additive_attention_matches_reference(attention, reference, rng):
    for N, Tx, Dh, S, A, masked in [(1, 1, 2, 3, 2, False), (3, 5, 4, 3, 6, False), (4, 6, 3, 5, 4, True),
                                    (2, 7, 5, 2, 3, True)]:
        s_prev, H, Wa, Ua, va = params(rng, N, Tx, Dh, S, A)
        mask = random_mask(rng, N, Tx) if masked else None
        what = f"additive_attention (N={N}, Tx={Tx}, Dh={Dh}, S={S}, A={A}, mask={'random' if masked else None})"
        context, alpha = call(attention, (s_prev, H, Wa, Ua, va, mask), N, Tx, Dh, what)
        want_context, want_alpha = reference.attention.additive_attention(s_prev, H, Wa, Ua, va, mask)
        expect_close(alpha, want_alpha, f"{what}: alpha", tol=1e-8,
                     hint=_("e[n, t] = tanh(s_prev[n] Wa + H[n, t] Ua) . va; tanh comes before the product with va"))
        expect_close(context, want_context, f"{what}: context", tol=1e-8,
                     hint=_("context[n] = sum_t alpha[n, t] H[n, t]"))


def test_masked_positions_get_exactly_zero_weight(attention, reference, rng):
    N, Tx, Dh, A = 5, 6, 4, 4
    s_prev, _H, Wa, _Ua, va = params(rng, N, Tx, Dh, 3, A, scale=1e4)
    Ua = np.eye(Dh, A)
    mask = random_mask(rng, N, Tx)
    mask[-1] = False                                         # a row of padding only
    # Padding positions get the largest possible scores (tanh saturates towards sign(va)),
    # real positions the smallest: a softmax whose maximum includes the padded positions
    # underflows to 0/0 on the real ones.
    H = np.where(mask[:, :, None], -50.0, 50.0) * np.sign(va)[None, None, :Dh] + 0.01 * rng.normal(size=(N, Tx, Dh))
    what = _("additive_attention with padding")
    context, alpha = call(attention, (s_prev, H, Wa, Ua, va, mask), N, Tx, Dh, what)
    if np.any(alpha[~mask] != 0.0):
        raise CheckFailed(_("{what}: masked positions got weight up to {largest}; they must get exactly 0 (exclude "
                            "them from the softmax instead of subtracting a big number or rescaling "
                            "afterwards)").format(what=what, largest=f"{np.max(np.abs(alpha[~mask])):.2e}"))
    if np.any(alpha[-1] != 0.0) or np.any(context[-1] != 0.0):
        raise CheckFailed(_("{what}: a row whose positions are all masked must get zero weights and a zero "
                            "context (not a uniform distribution over the padding, not nan)").format(what=what))
    real_rows = slice(0, N - 1)
    if not np.allclose(alpha[real_rows].sum(axis=1), 1.0, atol=1e-12):
        raise CheckFailed(_("{what}: the weights of the real positions must sum to 1 in every row that has one "
                            "(renormalise over the real positions only)").format(what=what))
    want_context, want_alpha = reference.attention.additive_attention(s_prev, H, Wa, Ua, va, mask)
    expect_close(alpha, want_alpha, f"{what}: alpha", tol=1e-6,
                 hint=_("take the softmax over the real positions only, and subtract their maximum"))
    expect_close(context, want_context, f"{what}: context", tol=1e-6)


def test_softmax_stable_for_huge_scores(attention, reference, rng):
    N, Tx, Dh, S, A = 4, 5, 3, 4, 6
    for scale in (1e4, 1e6):
        s_prev, H, Wa, Ua, va = params(rng, N, Tx, Dh, S, A, scale=scale)   # |e| up to ~ scale * |va|_1
        mask = random_mask(rng, N, Tx)
        what = _("additive_attention with va scaled by {scale}").format(scale=f"{scale:g}")
        context, alpha = call(attention, (s_prev, H, Wa, Ua, va, mask), N, Tx, Dh, what)
        want_context, want_alpha = reference.attention.additive_attention(s_prev, H, Wa, Ua, va, mask)
        expect_close(alpha, want_alpha, f"{what}: alpha", tol=1e-6,
                     hint=_("exp(e) overflows for scores near 1e3; softmax(e) = softmax(e - max e), so subtract the "
                            "row maximum first"))
        expect_close(context, want_context, f"{what}: context", tol=1e-6)


def test_no_input_mutation(attention, rng):
    # Only in-place changes are charged here: a crash or a wrong value costs the other tests.
    N, Tx, Dh, S, A = 3, 4, 3, 2, 5
    check = MutationCheck(attention)
    check.call("additive_attention", *params(rng, N, Tx, Dh, S, A), random_mask(rng, N, Tx))
    check.finish()
