"""The reference attention.py against a double loop over (batch, position) and against torch.

The loop evaluates attention.py's equations one number at a time with the math module; torch
computes the masked softmax its own way (masked_fill with -inf, torch.softmax). Rows whose
positions are all masked are compared with zeros (torch gives nan there by design).
"""

import math
import sys

import numpy as np
import pytest
import torch
from helpers import SOLUTIONS

sys.path.insert(0, str(SOLUTIONS))
import attention  # noqa: E402  (the reference solution)

torch.set_default_dtype(torch.float64)
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
    np.testing.assert_allclose(alpha, want_alpha, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(context, want_context, rtol=1e-12, atol=1e-14)
    assert np.all(alpha[~args[-1]] == 0.0)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("scale", [1.0, 1e4])
def test_matches_torch(seed, scale):
    args = inputs(seed, scale)
    mask = args[-1]
    context, alpha = attention.additive_attention(*args)
    want_context, want_alpha = torch_attention(*args)
    real = mask.any(axis=1)
    np.testing.assert_allclose(alpha[real], want_alpha[real], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(context[real], want_context[real], rtol=1e-9, atol=1e-12)
    assert np.all(alpha[~real] == 0.0) and np.all(context[~real] == 0.0)
    assert np.all(np.isfinite(alpha)) and np.all(np.isfinite(context))


def test_mask_none_equals_all_true_and_no_mutation():
    s_prev, H, Wa, Ua, va, _ = inputs(3)
    copies = [a.copy() for a in (s_prev, H, Wa, Ua, va)]
    full = np.ones(H.shape[:2], dtype=bool)
    c1, a1 = attention.additive_attention(s_prev, H, Wa, Ua, va)
    c2, a2 = torch_attention(s_prev, H, Wa, Ua, va, full)
    np.testing.assert_allclose(a1, a2, rtol=1e-12)
    np.testing.assert_allclose(c1, c2, rtol=1e-12, atol=1e-14)
    assert all(np.array_equal(a, b) for a, b in zip(copies, (s_prev, H, Wa, Ua, va)))
