"""Public test for attention.py: a small fixed case against a plain loop."""

import math

import numpy as np

from autograder.authoring.checks import expect_array, expect_close, expect_not_mutated, expect_tuple
from autograder.i18n import _


def _loop_attention(s_prev, H, Wa, Ua, va, mask):
    """The equations one number at a time: e = va . tanh(s Wa + h Ua), softmax over real positions."""
    N, Tx, Dh = H.shape
    alpha, context = np.zeros((N, Tx)), np.zeros((N, Dh))
    for n in range(N):
        e = [sum(va[a] * math.tanh(s_prev[n] @ Wa[:, a] + H[n, t] @ Ua[:, a]) for a in range(len(va)))
             for t in range(Tx)]
        real = [t for t in range(Tx) if mask[n, t]]
        top = max(e[t] for t in real)
        z = sum(math.exp(e[t] - top) for t in real)
        for t in real:
            alpha[n, t] = math.exp(e[t] - top) / z
            context[n] += alpha[n, t] * H[n, t]
    return context, alpha


def test_additive_attention_fixed_vector(attention):
    s_prev = np.array([[0.5, -1.0], [1.5, 0.25]])
    H = np.array([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
                  [[-1.0, 2.0], [0.5, 0.5], [3.0, -2.0]]])
    Wa = np.array([[0.2, -0.4, 0.1], [0.3, 0.5, -0.2]])
    Ua = np.array([[1.0, -0.5, 0.3], [0.2, 0.7, -1.1]])
    va = np.array([1.0, -2.0, 0.5])
    mask = np.array([[True, True, True], [True, True, False]])   # sentence 2 has 2 real tokens
    args = [a.copy() for a in (s_prev, H, Wa, Ua, va, mask)]

    context, alpha = expect_tuple(attention.additive_attention(s_prev, H, Wa, Ua, va, mask), 2, "additive_attention")
    expect_not_mutated(attention, "additive_attention")
    want_context, want_alpha = _loop_attention(s_prev, H, Wa, Ua, va, mask)
    expect_array(alpha, (2, 3), "alpha")
    assert alpha[1, 2] == 0.0, _("a masked position (mask False) must get exactly zero weight")
    assert np.allclose(alpha.sum(axis=1), 1.0), _("each row of alpha should sum to 1 (softmax over the real positions)")
    expect_close(alpha, want_alpha, "alpha", tol=1e-9,
                 hint=_("e = tanh(s_prev Wa + H Ua) va, then a softmax over the source positions of each row "
                        "(axis 1)"))
    # Any summation order is within ~1e-15 of the loop, relative to the weights (positive) and to
    # alpha |H| for the context (its entries can cancel): 1e-9 leaves a margin of 1e6.
    expect_close(context, want_context, "context", tol=1e-9, hint=_("context[n] = sum_t alpha[n, t] H[n, t]"),
                 scale=np.einsum("nt,ntd->nd", want_alpha, np.abs(H)))
    for before, after in zip(args, (s_prev, H, Wa, Ua, va, mask)):
        assert np.array_equal(before, after), _("additive_attention modified one of its inputs in place")

    _context, alpha_none = attention.additive_attention(s_prev, H, Wa, Ua, va)
    _want, want_none = _loop_attention(s_prev, H, Wa, Ua, va, np.ones((2, 3), dtype=bool))
    expect_close(alpha_none, want_none, _("alpha with mask=None"), tol=1e-9,
                 hint=_("mask=None means every position is real"))
