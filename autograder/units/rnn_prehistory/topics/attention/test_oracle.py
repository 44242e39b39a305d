"""The reference attention.py against a double loop over (batch, position) and against torch.

The loop evaluates attention.py's equations one number at a time with the math module; torch
computes the masked softmax its own way (masked_fill with -inf, torch.softmax). Rows whose
positions are all masked are compared with zeros (torch gives nan there by design).
"""

import math
import sys

import numpy as np
import pytest
from helpers import SOLUTIONS, torch  # torch: imported on first use

from autograder.authoring.checks import UNIT_ROUNDOFF, gamma

sys.path.insert(0, str(SOLUTIONS))
import attention  # noqa: E402  (the reference solution)

SEEDS = range(20)


def loop_attention(s_prev, H, Wa, Ua, va, mask):
    N, Tx, Dh = H.shape
    S, A = Wa.shape
    alpha, context = np.zeros((N, Tx)), np.zeros((N, Dh))
    for n in range(N):
        e = {}
        for t in range(Tx):
            if not mask[n, t]:
                continue
            score = 0.0
            for a in range(A):
                pre = sum(s_prev[n, i] * Wa[i, a] for i in range(S)) + sum(H[n, t, d] * Ua[d, a] for d in range(Dh))
                score += va[a] * math.tanh(pre)
            e[t] = score
        if not e:
            continue                                    # all padding: zero weights, zero context
        top = max(e.values())
        z = math.fsum(math.exp(v - top) for v in e.values())
        for t, v in e.items():
            alpha[n, t] = math.exp(v - top) / z
        for d in range(Dh):
            context[n, d] = math.fsum(alpha[n, t] * H[n, t, d] for t in e)
    return context, alpha


def torch_attention(s_prev, H, Wa, Ua, va, mask):
    s, h, wa, ua, v = (torch.tensor(a) for a in (s_prev, H, Wa, Ua, va))
    e = torch.tanh((s @ wa).unsqueeze(1) + h @ ua) @ v
    alpha = torch.softmax(e.masked_fill(~torch.tensor(mask), float("-inf")), dim=1)
    return torch.einsum("nt,ntd->nd", alpha, h).numpy(), alpha.numpy()


def rounding_bounds(s_prev, H, Wa, Ua, va, alpha):
    """(relative bound per weight, absolute bound per context entry) on the difference of two
    correct computations of additive attention, in any summation order, FMA or not.

    pre = s Wa + h Ua is an (S+Dh)-term sum of products: off by gamma_{S+Dh} P with
    P = |s||Wa| + |h||Ua|. tanh is 1-Lipschitz and rounds to a few ulps; e = tanh(pre) . va adds
    gamma_A |va| |tanh| <= gamma_A |va|. So |de| <= gamma_{S+Dh+A+8} (P + 1) |va| (the 8 covers
    tanh's and exp's ulps and the O(u^2) terms). A softmax weight's relative change is at most
    twice the largest |de| of its row, plus the rounding of e - max (u |e - max| <= 2u |va|_1),
    of exp, of the Tx-term sum and of the division (gamma_{Tx+8}): all relative to the weight,
    never to the row, since weights are positive. context = alpha @ H is a Tx-term sum that can
    cancel: off by (that relative bound + gamma_Tx) alpha |H|. Two computations differ by twice
    each bound."""
    S, A = Wa.shape
    Tx, Dh = H.shape[1:]
    P = (np.abs(s_prev) @ np.abs(Wa))[:, None, :] + np.abs(H) @ np.abs(Ua)          # (N, Tx, A)
    de = gamma(S + Dh + A + 8) * ((P + 1) @ np.abs(va))                                 # (N, Tx)
    rel = 2 * de.max(axis=1, keepdims=True) + 2 * UNIT_ROUNDOFF * np.abs(va).sum() + gamma(Tx + 8)
    return 2 * rel, 2 * (rel + gamma(Tx)) * np.einsum("nt,ntd->nd", alpha, np.abs(H))


def expect_within_bounds(context, alpha, want_context, want_alpha, args):
    """Weights within their relative bound (masked ones exactly 0 == 0), context within its own."""
    rel, context_bound = rounding_bounds(*args[:5], want_alpha)
    assert np.all(np.abs(alpha - want_alpha) <= rel * want_alpha), np.max(np.abs(alpha - want_alpha))
    assert np.all(np.abs(context - want_context) <= context_bound), np.max(np.abs(context - want_context))


def inputs(seed, scale=1.0):
    rng = np.random.default_rng(seed)
    N, Tx, Dh, S, A = (int(x) for x in rng.integers(1, 7, size=5))
    mask = rng.random((N, Tx)) < 0.7
    if N > 1:
        mask[0] = False                                 # one row of padding only
    return (rng.normal(size=(N, S)), rng.normal(size=(N, Tx, Dh)), rng.normal(size=(S, A)),
            rng.normal(size=(Dh, A)), rng.normal(size=A) * scale, mask)


@pytest.mark.parametrize("seed", SEEDS)
def test_matches_double_loop(seed):
    args = inputs(seed)
    copies = [a.copy() for a in args]
    context, alpha = attention.additive_attention(*args)
    assert all(np.array_equal(a, b) for a, b in zip(copies, args)), "an input was modified in place"
    want_context, want_alpha = loop_attention(*args)
    expect_within_bounds(context, alpha, want_context, want_alpha, args)
    assert np.all(alpha[~args[-1]] == 0.0)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("scale", [1.0, 1e4])
def test_matches_torch(seed, scale):
    args = inputs(seed, scale)
    mask = args[-1]
    context, alpha = attention.additive_attention(*args)
    want_context, want_alpha = torch_attention(*args)
    real = mask.any(axis=1)
    # At scale 1e4 the scores' rounding is 1e4 times larger, and so is the bound (a fixed 1e-9
    # was below it: within it on one kernel, not on all).
    expect_within_bounds(context[real], alpha[real], want_context[real], want_alpha[real],
                         [a[real] for a in args[:2]] + list(args[2:5]))
    assert np.all(alpha[~real] == 0.0) and np.all(context[~real] == 0.0)
    assert np.all(np.isfinite(alpha)) and np.all(np.isfinite(context))


def test_mask_none_equals_all_true_and_no_mutation():
    s_prev, H, Wa, Ua, va, _ = inputs(3)
    copies = [a.copy() for a in (s_prev, H, Wa, Ua, va)]
    full = np.ones(H.shape[:2], dtype=bool)
    c1, a1 = attention.additive_attention(s_prev, H, Wa, Ua, va)
    c2, a2 = torch_attention(s_prev, H, Wa, Ua, va, full)
    expect_within_bounds(c1, a1, c2, a2, (s_prev, H, Wa, Ua, va))
    assert all(np.array_equal(a, b) for a, b in zip(copies, (s_prev, H, Wa, Ua, va)))
