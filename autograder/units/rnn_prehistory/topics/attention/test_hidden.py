"""Hidden suite for attention.py [attention]: masked additive attention.

Expected values come from the reference solution (checked against a double loop and
torch in test_oracle.py beside this suite) or from exact properties (zeros, sums).
"""

from __future__ import annotations

import numpy as np

from autograder.authoring.checks import (
    CheckFailed,
    MutationCheck,
    diagnose,
    expect_array,
    expect_close,
    expect_tuple,
    first_difference,
    rel_error,
)
from autograder.i18n import N_, _


def params(rng, N, Tx, Dh, S, A, scale=1.0):
    return (rng.normal(size=(N, S)), rng.normal(size=(N, Tx, Dh)), rng.normal(size=(S, A)) * 0.5,
            rng.normal(size=(Dh, A)) * 0.5, rng.normal(size=A) * scale)


SUM_TOL = 1e-9      # a softmax's row sums are 1 to a few ulps, whatever the scores
# Student against reference: a score is a sum of S+Dh+A products, off by gamma_{S+Dh+A} (P+1)|va|
# in any order (P = |s||Wa| + |h||Ua|, see test_oracle.py's rounding_bounds); a weight moves by
# twice that relative to itself (~1e-13 at scale 1 on these sizes, ~1e-7 at scale 1e6). A
# context entry is a Tx-term sum that can cancel: its error is bounded relative to alpha |H|,
# not to itself, so it is compared at that scale. The tolerances (1e-8, or 1e-6 where va is
# scaled up to 1e6) are the documented looser ones: above the bound, with the mutants' errors
# (1e-2 and more) far outside.


def context_scale(alpha, H):
    """alpha |H|: the magnitude of the terms of context = sum_t alpha[n, t] H[n, t]."""
    return np.einsum("nt,ntd->nd", alpha, np.abs(H))


def softmax_over(e, real, axis):
    """Softmax of the scores e over `axis` (None: every entry at once), real positions only, written
    here independently of the exercise's solution."""
    z = np.where(real, e, -np.inf)
    top = np.max(z, axis=axis, keepdims=True)
    w = np.where(real, np.exp(z - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = np.sum(w, axis=axis, keepdims=True)
    return np.divide(w, total, out=np.zeros_like(w), where=total > 0)


def scores(s_prev, H, Wa, Ua, va):
    """e[n, t] = tanh(s_prev[n] Wa + H[n, t] Ua) . va, written here from the definition."""
    return np.einsum("nta,a->nt", np.tanh(np.einsum("ns,sa->na", s_prev, Wa)[:, None, :]
                                          + np.einsum("ntd,da->nta", H, Ua)), va)


def wrong_normalisations(s_prev, H, Wa, Ua, va, real):
    """(weights, what the student did) for softmaxes over the wrong entries, on the same inputs."""
    e = scores(s_prev, H, Wa, Ua, va)
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
    # A diagnosis matches weights to 1e-6 relative: above the rounding of any order (at most
    # ~1e-7 at va's largest scale, 1e6), and far below the gap between two different softmaxes.
    # Named only when exactly one fits: saturated scores can make two of them the same one-hot weights.
    fits = [diagnosis for weights, diagnosis in wrong_normalisations(s_prev, H, Wa, Ua, va, real)
            if np.allclose(alpha, weights, rtol=1e-6, atol=1e-9, equal_nan=True)]
    other = diagnose_attention(alpha, args)
    if len(fits) == 1 and not other and not any(
            np.allclose(attention_variant(*args[:6], **mistake), alpha, rtol=1e-6, atol=1e-9, equal_nan=True)
            for mistake, _text in ATTENTION_MISTAKES):
        return f"{text}; {fits[0]}", True
    if other and not fits:      # not a wrong softmax, another known mistake (e.g. the mask read backwards)
        return f"{text}; {other}", True
    if np.all(np.abs(alpha.sum(axis=0)[real.any(axis=0)] - 1.0) <= SUM_TOL):
        return _("{text}; they sum to 1 over the batch axis instead (alpha[:, t] sums to 1): normalise over "
                 "axis 1").format(text=text), True
    return text, False


# A diagnosis tests its hypothesis first: the suspected mistake is computed here on the same
# inputs and named only when it gives the student's weights (and the right attention does not).
def attention_variant(s_prev, H, Wa, Ua, va, mask=None, tanh_after_va=False, mask_inverted=False, fill=None,
                      offset=None, no_max=False, max_includes_padding=False):
    """alpha of additive attention written from its definition, or with one known mistake:
    tanh_after_va: e = tanh((s_prev Wa + H Ua) . va); mask_inverted: mask True read as padding;
    fill: padded scores set to `fill` (e.g. -1e9) instead of being left out of the softmax;
    offset: `offset` (e.g. -1e9) added to the padded scores instead;
    no_max: exp(e) without subtracting the row maximum; max_includes_padding: the maximum
    taken over every position, padding included."""
    pre = np.einsum("ns,sa->na", s_prev, Wa)[:, None, :] + np.einsum("ntd,da->nta", H, Ua)
    e = np.tanh(np.einsum("nta,a->nt", pre, va)) if tanh_after_va else np.einsum("nta,a->nt", np.tanh(pre), va)
    real = np.ones(e.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    real = ~real if mask_inverted else real
    with np.errstate(all="ignore"):
        if fill is not None or offset is not None:
            z = np.where(real, e, fill if fill is not None else e + offset)
            w = np.exp(z - z.max(axis=1, keepdims=True))
            return w / w.sum(axis=1, keepdims=True)
        z = np.where(real, e, -np.inf)
        top = e.max(axis=1, keepdims=True) if max_includes_padding else z.max(axis=1, keepdims=True)
        w = np.exp(z) if no_max else np.exp(z - np.where(np.isfinite(top), top, 0.0))
        total = w.sum(axis=1, keepdims=True)
        return np.divide(w, total, out=np.zeros_like(w), where=total > 0)


BIG_NEGATIVE = N_("your weights match padded scores filled with a big negative number (e.g. -1e9): a row "
                  "whose positions are all masked then gets uniform weights over the padding; leave the "
                  "padding out of the softmax (np.where(mask, e, -np.inf)) and give such a row zero weights")
ATTENTION_MISTAKES = (
    (dict(tanh_after_va=True), N_("your weights match scores computed as tanh((s_prev Wa + H Ua) . va): tanh comes "
                                  "first, e = tanh(s_prev Wa + H Ua) . va")),
    (dict(mask_inverted=True), N_("your weights match reading mask True as padding: True marks a real token")),
    (dict(offset=-1e9), BIG_NEGATIVE),
    (dict(fill=-1e9), BIG_NEGATIVE),
    (dict(no_max=True), N_("your weights match exp(e) without subtracting the row maximum: exp overflows to inf for "
                           "scores above ~709; softmax(e) = softmax(e - max e)")),
    (dict(max_includes_padding=True), N_("your weights match a row maximum taken over the padding too: the real "
                                         "positions then underflow to 0/0; take the maximum over the real "
                                         "positions only")),
)


def diagnose_attention(alpha, args) -> str:
    """The one known mistake whose weights on these inputs are the student's `alpha` (nan and
    inf where theirs are), or ''."""
    return diagnose(alpha, attention_variant(*args),
                    ((_(text), attention_variant(*args, **mistake)) for mistake, text in ATTENTION_MISTAKES),
                    same=lambda a, b: np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True))


def expect_weights(alpha, want, args, what, tol):
    """alpha must be the reference's weights `want`; a wrong one is named when a known mistake gives it."""
    if np.all(np.isfinite(alpha)) and rel_error(alpha, want) <= tol:
        return
    known = diagnose_attention(alpha, args)
    if known:
        raise CheckFailed(_("{what}: alpha is wrong: {diagnosis}").format(what=what, diagnosis=known), "diagnosed")
    expect_close(alpha, want, f"{what}: alpha", tol=tol)


def where_not_finite(alpha, context, args) -> tuple[str, bool]:
    """Where the first nan or inf is, and what its row holds that could make one: every position
    masked (a softmax over nothing: named, True), or its largest score (exp overflows past ~709)."""
    label, values = next((label, v) for label, v in (("alpha", np.asarray(alpha, dtype=float)),
                                                     ("context", np.asarray(context, dtype=float)))
                         if not np.all(np.isfinite(v)))
    n, j = (int(i) for i in np.argwhere(~np.isfinite(values))[0])
    name = f"{label}[{n}, {j}] = {values[n, j]}"
    s_prev, H, Wa, Ua, va, *rest = args
    mask = np.asarray(rest[0], dtype=bool) if rest and rest[0] is not None else np.ones(np.shape(alpha), dtype=bool)
    if not mask[n].any():
        row = _("row {n} has every position masked: its weights are all 0 (nothing to normalise), not 0 / 0").format(n=n)
    else:
        top = float(scores(s_prev, H, Wa, Ua, va)[n][mask[n]].max())
        row = _("row {n}'s largest real score is {top}").format(n=n, top=f"{top:.4g}")
        if top > 709:
            row += _(" (exp of a number above about 709 is inf in float64)")
    return f"{name}; {row}", not mask[n].any()


def call(attention, args, N, Tx, Dh, what):
    context, alpha = expect_tuple(attention.additive_attention(*args), 2, what)
    expect_array(context, (N, Dh), f"{what}: context")
    expect_array(alpha, (N, Tx), f"{what}: alpha")
    if not (np.all(np.isfinite(alpha)) and np.all(np.isfinite(context))):
        known = diagnose_attention(alpha, args)
        if known:
            raise CheckFailed(_("{what}: alpha or context contains nan or inf: {diagnosis}").format(
                what=what, diagnosis=known), "diagnosed")
        where, named = where_not_finite(alpha, context, args)
        raise CheckFailed(_("{what}: alpha or context contains nan or inf (the softmax's weights are finite for "
                            "scores of any size, and a fully masked row gets zero weights): {where}").format(
            what=what, where=where), "diagnosed" if named else "value")
    problem, named = normalisation_problem(alpha, args)
    if problem:
        raise CheckFailed(f"{what}: {problem}", "diagnosed" if named else "value")
    return context, alpha


def random_mask(rng, N, Tx):
    mask = rng.random((N, Tx)) < 0.6
    mask[np.arange(N), rng.integers(0, Tx, size=N)] = True    # at least one real token per row
    return mask


CONTEXT_MISTAKES = (
    ("mean", N_("your context is the plain mean of H over the source positions: it is the weighted sum "
                "context[n] = sum_t alpha[n, t] H[n, t], with the weights alpha your code returns")),
    ("scores", N_("your context weights H by the scores e instead of the softmax weights alpha: "
                  "context[n] = sum_t alpha[n, t] H[n, t]")),
)


def context_variant(s_prev, H, Wa, Ua, va, mask, alpha, kind):
    """context of the student's own weights `alpha` under one known mistake: "mean" averages H
    over the real positions, "scores" weights H by the scores e (0 at the padding)."""
    real = np.ones(alpha.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if kind == "mean":
        count = real.sum(axis=1, keepdims=True)
        return np.einsum("nt,ntd->nd", np.divide(real, count, out=np.zeros(real.shape), where=count > 0), H)
    return np.einsum("nt,ntd->nd", np.where(real, scores(s_prev, H, Wa, Ua, va), 0.0), H)


def test_additive_attention_matches_reference(attention, reference, rng):
    for N, Tx, Dh, S, A, masked in [(1, 1, 2, 3, 2, False), (3, 5, 4, 3, 6, False), (4, 6, 3, 5, 4, True),
                                    (2, 7, 5, 2, 3, True)]:
        s_prev, H, Wa, Ua, va = params(rng, N, Tx, Dh, S, A)
        mask = random_mask(rng, N, Tx) if masked else None
        what = f"additive_attention (N={N}, Tx={Tx}, Dh={Dh}, S={S}, A={A}, mask={'random' if masked else None})"
        context, alpha = call(attention, (s_prev, H, Wa, Ua, va, mask), N, Tx, Dh, what)
        want_context, want_alpha = reference.attention.additive_attention(s_prev, H, Wa, Ua, va, mask)
        expect_weights(alpha, want_alpha, (s_prev, H, Wa, Ua, va, mask), what, tol=1e-8)
        # The weights are right here: a context that is not their weighted sum is named when a
        # known mistake, recomputed on these inputs, gives it (and the right sum does not).
        scale = context_scale(want_alpha, H)
        known = diagnose(context, want_context,
                         ((_(text), context_variant(s_prev, H, Wa, Ua, va, mask, alpha, kind))
                          for kind, text in CONTEXT_MISTAKES),
                         same=lambda a, b, scale=scale: rel_error(a, b, scale) <= 1e-8)
        if known:
            raise CheckFailed(_("{what}: context is wrong: {diagnosis}").format(what=what, diagnosis=known),
                              "diagnosed")
        expect_close(context, want_context, f"{what}: context", tol=1e-8, scale=scale,
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
        known = diagnose_attention(alpha, (s_prev, H, Wa, Ua, va, mask))
        if known:
            raise CheckFailed(_("{what}: masked positions got weight up to {largest}: {diagnosis}").format(
                what=what, largest=f"{np.max(np.abs(alpha[~mask])):.2e}", diagnosis=known), "diagnosed")
        raise CheckFailed(_("{what}: masked positions got weight up to {largest}; they must get exactly 0 (exclude "
                            "them from the softmax)").format(what=what, largest=f"{np.max(np.abs(alpha[~mask])):.2e}"))
    if np.any(alpha[-1] != 0.0) or np.any(context[-1] != 0.0):
        known = diagnose_attention(alpha, (s_prev, H, Wa, Ua, va, mask))
        if known:
            raise CheckFailed(_("{what}: a row whose positions are all masked got weights {weights}: {diagnosis}").format(
                what=what, weights=np.array2string(alpha[-1], precision=3), diagnosis=known), "diagnosed")
        raise CheckFailed(_("{what}: a row whose positions are all masked got weights {weights}; it must get zero "
                            "weights and a zero context").format(what=what,
                                                                 weights=np.array2string(alpha[-1], precision=3)))
    real_rows = slice(0, N - 1)
    # A row sum of Tx weights is 1 within gamma_{Tx+2} (~1e-15): 1e-12 is that with a margin of 1e3.
    if not np.allclose(alpha[real_rows].sum(axis=1), 1.0, atol=1e-12):
        raise CheckFailed(_("{what}: the weights of the real positions must sum to 1 in every row that has one "
                            "(renormalise over the real positions only)").format(what=what))
    want_context, want_alpha = reference.attention.additive_attention(s_prev, H, Wa, Ua, va, mask)
    expect_weights(alpha, want_alpha, (s_prev, H, Wa, Ua, va, mask), what, tol=1e-6)
    expect_close(context, want_context, f"{what}: context", tol=1e-6, scale=context_scale(want_alpha, H))


def test_softmax_stable_for_huge_scores(attention, reference, rng):
    N, Tx, Dh, S, A = 4, 5, 3, 4, 6
    # mask=None: "every position is real", at any size of the scores, so the weights of an
    # all-True mask. Both calls are the student's: a mask=None that differs from their own
    # (right) all-True mask is the None case handled apart.
    s_prev, H, Wa, Ua, va = params(rng, N, Tx, Dh, S, A, scale=1e6)
    every = np.ones((N, Tx), dtype=bool)
    what = _("additive_attention with va scaled by {scale} and mask=None").format(scale="1e+06")
    want_context, want_alpha = reference.attention.additive_attention(s_prev, H, Wa, Ua, va, None)
    none_alpha = expect_array(expect_tuple(attention.additive_attention(s_prev, H, Wa, Ua, va, None), 2, what)[1],
                              (N, Tx), f"{what}: alpha")
    with_mask = _("additive_attention with va scaled by {scale} and an all-True mask").format(scale="1e+06")
    every_alpha = expect_array(expect_tuple(attention.additive_attention(s_prev, H, Wa, Ua, va, every), 2,
                                            with_mask)[1], (N, Tx), f"{with_mask}: alpha")
    if (np.all(np.isfinite(every_alpha)) and rel_error(every_alpha, want_alpha) <= 1e-6
            and not (np.all(np.isfinite(none_alpha)) and rel_error(none_alpha, want_alpha) <= 1e-6)):
        raise CheckFailed(_("{what}: your weights are not those your code returns for an all-True mask, which are "
                            "right ({difference}): mask=None means every position is real, the same softmax as "
                            "a mask of all True").format(
            what=what, difference=first_difference(none_alpha, every_alpha, "alpha")), "diagnosed")
    context, alpha = call(attention, (s_prev, H, Wa, Ua, va, None), N, Tx, Dh, what)
    expect_weights(alpha, want_alpha, (s_prev, H, Wa, Ua, va, None), what, tol=1e-6)
    expect_close(context, want_context, f"{what}: context", tol=1e-6, scale=context_scale(want_alpha, H))
    for scale in (1e4, 1e6):
        s_prev, H, Wa, Ua, va = params(rng, N, Tx, Dh, S, A, scale=scale)   # |e| up to ~ scale * |va|_1
        mask = random_mask(rng, N, Tx)
        what = _("additive_attention with va scaled by {scale}").format(scale=f"{scale:g}")
        context, alpha = call(attention, (s_prev, H, Wa, Ua, va, mask), N, Tx, Dh, what)
        want_context, want_alpha = reference.attention.additive_attention(s_prev, H, Wa, Ua, va, mask)
        expect_weights(alpha, want_alpha, (s_prev, H, Wa, Ua, va, mask), what, tol=1e-6)
        expect_close(context, want_context, f"{what}: context", tol=1e-6, scale=context_scale(want_alpha, H))


def test_no_input_mutation(attention, rng):
    # Only in-place changes are charged here: a crash or a wrong value costs the other tests.
    N, Tx, Dh, S, A = 3, 4, 3, 2, 5
    check = MutationCheck(attention)
    check.call("additive_attention", *params(rng, N, Tx, Dh, S, A), random_mask(rng, N, Tx))
    check.finish()
