"""Hidden suite for attention.py [attention]: masked additive attention.

Expected values come from the reference solution (checked against a double loop and
torch in test_oracle.py beside this suite) or from exact properties (zeros, sums).
"""

from __future__ import annotations

import numpy as np

from autograder.authoring.checks import (
    CheckFailed,
    MutationCheck,
    every_case,
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
        (softmax_over(e, real, 0), _(SOFTMAX_OVER_BATCH)),
        (softmax_over(e, real, None), _(SOFTMAX_OVER_ARRAY)),
        (softmax_over(e, np.ones_like(real), 1) * real, _(PADDING_ZEROED_AFTER)),
    ]


SOFTMAX_OVER_BATCH = N_("your weights are a softmax over the batch axis (axis 0): alpha[:, t] sums to 1. The rows "
                        "are separate sentences, so the maximum and the sum of the softmax run over axis 1, e.g. "
                        "e.max(axis=1, keepdims=True) and w.sum(axis=1, keepdims=True)")
SOFTMAX_OVER_ARRAY = N_("your weights are one softmax over the whole (N, Tx) array: the maximum and the sum ran over "
                        "every entry (no axis), so all rows together sum to 1. Each row is its own distribution: use "
                        "axis=1, keepdims=True")
PADDING_ZEROED_AFTER = N_("your weights are a softmax over every position, padding included, with the padded weights "
                          "set to 0 afterwards, so the real positions no longer sum to 1: leave the padding out of the "
                          "softmax itself (np.where(mask, e, -np.inf) before the maximum and the exp)")


def real_positions(alpha, args):
    mask = args[5] if len(args) > 5 else None
    return np.ones(np.shape(alpha), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)


def normalisation_problem(alpha, args) -> tuple[str, bool]:
    """('', False) when every row of alpha with a real position sums to 1 over the source positions;
    otherwise what the sums are, and (then True) whether they sum to 1 over the batch axis instead.
    Which wrong softmax gave them is the Diagnosis's to say: it is tested on every case."""
    real = real_positions(alpha, args)
    sums = alpha.sum(axis=1)[real.any(axis=1)]
    if np.all(np.abs(sums - 1.0) <= SUM_TOL):
        return "", False
    low, high = f"{sums.min():.4g}", f"{sums.max():.4g}"
    amount = low if low == high else _("between {low} and {high}").format(low=low, high=high)
    text = _("the weights alpha[n, :] of each row must sum to 1 over the source positions (axis 1), but yours "
             "sum to {amount}").format(amount=amount)
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
    real = ~real if mask_inverted and mask is not None else real      # mask=None has no mask to misread
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


def same_attention(got, other) -> bool:
    """Whether the student's (alpha, context) are `other`'s (alpha, context or None: not compared,
    context's scale): the weights to 1e-6 relative (above the rounding of any order, at most ~1e-7
    at va's largest scale, far below the gap between two different softmaxes), nan and inf where
    theirs are; the context to 1e-6 of the magnitude of its terms."""
    alpha, context = got[:2]
    want_alpha, want_context, scale = other
    if not np.allclose(alpha, want_alpha, rtol=1e-6, atol=1e-9, equal_nan=True):
        return False
    if context is None or want_context is None:
        return True
    context, want_context = np.asarray(context, dtype=float), np.asarray(want_context, dtype=float)
    finite = np.isfinite(want_context)
    with np.errstate(invalid="ignore"):
        same_holes = np.array_equal(np.isfinite(context), finite) and np.array_equal(
            context[~finite], want_context[~finite], equal_nan=True)
    return bool(same_holes and rel_error(context[finite], want_context[finite],
                                         np.broadcast_to(scale, finite.shape)[finite]) <= 1e-6)


def attention_hypotheses(args, alpha, scale):
    """(message, (alpha, context or None, scale)) of every known mistake on these inputs: the wrong
    weights (their context is not compared), and the wrong contexts of the student's own weights."""
    for mistake, text in ATTENTION_MISTAKES:
        yield _(text), (attention_variant(*args, **mistake), None, scale)
    for weights, text in wrong_normalisations(*args[:5], real_positions(alpha, args)):
        yield text, (weights, None, scale)
    want_alpha = attention_variant(*args)
    for kind, text in CONTEXT_MISTAKES:
        yield _(text), (want_alpha, context_variant(*args[:5], args[5] if len(args) > 5 else None, alpha, kind), scale)


def check_attention(context, alpha, want, args, what, tol, record) -> None:
    """Record the case (`every_case`), then check it: nan, the row sums, the weights, the context.
    Each failure's `plain` text is what a named mistake follows."""
    want_context, want_alpha = want
    scale = context_scale(want_alpha, args[1])
    record((alpha, context), (want_alpha, want_context, scale), attention_hypotheses(args, alpha, scale))
    expect_finite_and_normalised(alpha, context, args, what)
    if not (np.all(np.isfinite(alpha)) and rel_error(alpha, want_alpha) <= tol):
        plain = _("{what}: alpha is wrong").format(what=what)
        try:
            expect_close(alpha, want_alpha, f"{what}: alpha", tol=tol)
        except CheckFailed as failure:
            raise CheckFailed(str(failure), failure.kind, plain=plain) from None
    try:
        expect_close(context, want_context, f"{what}: context", tol=tol, scale=scale,
                     hint=_("context[n] = sum_t alpha[n, t] H[n, t]"))
    except CheckFailed as failure:
        raise CheckFailed(str(failure), failure.kind, plain=_("{what}: context is wrong").format(what=what)) from None


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


def read(attention, args, N, Tx, Dh, what):
    context, alpha = expect_tuple(attention.additive_attention(*args), 2, what)
    return expect_array(context, (N, Dh), f"{what}: context"), expect_array(alpha, (N, Tx), f"{what}: alpha")


def expect_finite_and_normalised(alpha, context, args, what) -> None:
    if not (np.all(np.isfinite(alpha)) and np.all(np.isfinite(context))):
        where, named = where_not_finite(alpha, context, args)
        raise CheckFailed(_("{what}: alpha or context contains nan or inf (the softmax's weights are finite for "
                            "scores of any size, and a fully masked row gets zero weights): {where}").format(
            what=what, where=where), "diagnosed" if named else "value",
            plain=_("{what}: alpha or context contains nan or inf").format(what=what))
    problem, named = normalisation_problem(alpha, args)
    if problem:
        raise CheckFailed(f"{what}: {problem}", "diagnosed" if named else "value")


def random_mask(rng, N, Tx):
    mask = rng.random((N, Tx)) < 0.6
    mask[np.arange(N), rng.integers(0, Tx, size=N)] = True    # at least one real token per row
    return mask


MEAN_CONTEXT = N_("your context is the plain mean of H over the source positions: it is the weighted sum "
                  "context[n] = sum_t alpha[n, t] H[n, t], with the weights alpha your code returns")
SCORES_CONTEXT = N_("your context weights H by the scores e instead of the softmax weights alpha: "
                    "context[n] = sum_t alpha[n, t] H[n, t]")
CONTEXT_MISTAKES = (                # a mean over every position or over the real ones: one misconception
    ("mean_all", MEAN_CONTEXT),
    ("mean", MEAN_CONTEXT),
    ("scores", SCORES_CONTEXT),
    ("masked_scores", SCORES_CONTEXT),
)


def context_variant(s_prev, H, Wa, Ua, va, mask, alpha, kind):
    """context of the student's own weights `alpha` under one known mistake: "mean" averages H
    over the real positions, "mean_all" over every position, padding included, "scores" weights
    H by the scores e (0 at the padding), "masked_scores" by the scores with -inf at the padding."""
    real = np.ones(alpha.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if kind == "mean_all":
        return H.mean(axis=1)
    if kind == "mean":
        count = real.sum(axis=1, keepdims=True)
        return np.einsum("nt,ntd->nd", np.divide(real, count, out=np.zeros(real.shape), where=count > 0), H)
    with np.errstate(invalid="ignore"):
        return np.einsum("nt,ntd->nd", np.where(real, scores(s_prev, H, Wa, Ua, va),
                                                -np.inf if kind == "masked_scores" else 0.0), H)


def test_additive_attention_matches_reference(attention, reference, rng):
    cases = []
    for N, Tx, Dh, S, A, masked in [(1, 1, 2, 3, 2, False), (3, 5, 4, 3, 6, False), (4, 6, 3, 5, 4, True),
                                    (2, 7, 5, 2, 3, True)]:
        s_prev, H, Wa, Ua, va = params(rng, N, Tx, Dh, S, A)
        mask = random_mask(rng, N, Tx) if masked else None
        what = f"additive_attention (N={N}, Tx={Tx}, Dh={Dh}, S={S}, A={A}, mask={'random' if masked else None})"
        cases.append(((s_prev, H, Wa, Ua, va, mask), what))

    def run_case(case, record):
        args, what = case
        N, Tx, Dh = args[1].shape
        context, alpha = read(attention, args, N, Tx, Dh, what)
        check_attention(context, alpha, reference.attention.additive_attention(*args), args, what, 1e-8, record)

    # every case runs: a mistake is named only when it gives the student's weights (or context) on all of them
    every_case(cases, run_case, same_attention)


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
    args = (s_prev, H, Wa, Ua, va, mask)
    what = _("additive_attention with padding")

    def run_case(_case, record):
        context, alpha = read(attention, args, N, Tx, Dh, what)
        want_context, want_alpha = reference.attention.additive_attention(*args)
        scale = context_scale(want_alpha, H)
        record((alpha, context), (want_alpha, want_context, scale), attention_hypotheses(args, alpha, scale))
        expect_finite_and_normalised(alpha, context, args, what)
        if np.any(alpha[~mask] != 0.0):
            plain = _("{what}: masked positions got weight up to {largest}").format(
                what=what, largest=f"{np.max(np.abs(alpha[~mask])):.2e}")
            raise CheckFailed(_("{what}: masked positions got weight up to {largest}; they must get exactly 0 (exclude "
                                "them from the softmax)").format(what=what,
                                                                 largest=f"{np.max(np.abs(alpha[~mask])):.2e}"),
                              plain=plain)
        if np.any(alpha[-1] != 0.0) or np.any(context[-1] != 0.0):
            weights = np.array2string(alpha[-1], precision=3)
            raise CheckFailed(_("{what}: a row whose positions are all masked got weights {weights}; it must get zero "
                                "weights and a zero context").format(what=what, weights=weights),
                              plain=_("{what}: a row whose positions are all masked got weights {weights}").format(
                                  what=what, weights=weights))
        # A row sum of Tx weights is 1 within gamma_{Tx+2} (~1e-15): 1e-12 is that with a margin of 1e3.
        if not np.allclose(alpha[:N - 1].sum(axis=1), 1.0, atol=1e-12):
            raise CheckFailed(_("{what}: the weights of the real positions must sum to 1 in every row that has one "
                                "(renormalise over the real positions only)").format(what=what))
        check_attention(context, alpha, (want_context, want_alpha), args, what, 1e-6, lambda *recorded: None)

    every_case([args], run_case, same_attention)


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
    cases = [((s_prev, H, Wa, Ua, va, None), what)]
    for scale in (1e4, 1e6):
        s_prev, H, Wa, Ua, va = params(rng, N, Tx, Dh, S, A, scale=scale)   # |e| up to ~ scale * |va|_1
        cases.append(((s_prev, H, Wa, Ua, va, random_mask(rng, N, Tx)),
                      _("additive_attention with va scaled by {scale}").format(scale=f"{scale:g}")))

    def run_case(case, record):
        args, what = case
        context, alpha = read(attention, args, N, Tx, Dh, what)
        check_attention(context, alpha, reference.attention.additive_attention(*args), args, what, 1e-6, record)

    # every case runs: a mistake is named only when it gives the student's weights on all of them
    every_case(cases, run_case, same_attention)


def test_no_input_mutation(attention, rng):
    # Only in-place changes are charged here: a crash or a wrong value costs the other tests.
    N, Tx, Dh, S, A = 3, 4, 3, 2, 5
    check = MutationCheck(attention)
    check.call("additive_attention", *params(rng, N, Tx, Dh, S, A), random_mask(rng, N, Tx))
    check.finish()
