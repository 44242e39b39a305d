"""Public test for attention.py: a small fixed case with expected values.

The expected values were computed with PyTorch (float64) from the equations in the
docstring and written below by the instructor's generator, to 13 significant digits.
"""

import numpy as np

from autograder.authoring.checks import expect_array, expect_close, expect_not_mutated, expect_tuple
from autograder.i18n import _

S_PREV = np.array([[0.5, -1.0], [1.5, 0.25]])
STATES = np.array([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
                   [[-1.0, 2.0], [0.5, 0.5], [3.0, -2.0]]])
WA = np.array([[0.2, -0.4, 0.1], [0.3, 0.5, -0.2]])
UA = np.array([[1.0, -0.5, 0.3], [0.2, 0.7, -1.1]])
VA = np.array([1.0, -2.0, 0.5])
MASK = np.array([[True, True, True], [True, True, False]])   # sentence 2 has 2 real tokens

# BEGIN EXPECTED VALUES: PyTorch's (float64), as computed; generated, do not edit
CONTEXT = np.array([[0.9609536106720233, 0.27084142378713894],
                    [0.4676986663778843, 0.5323013336221157]])
ALPHA = np.array([[0.7291585762128612, 0.0390463893279767, 0.23179503445916222],
                  [0.0215342224147438, 0.9784657775852562, 0.0]])
ALPHA_NO_MASK = np.array([[0.7291585762128612, 0.0390463893279767, 0.23179503445916222],
                          [0.002257290827597841, 0.10256612857074299, 0.8951765806016592]])
# END EXPECTED VALUES


def test_additive_attention_fixed_vector(attention):
    s_prev, H, Wa, Ua, va, mask = (a.copy() for a in (S_PREV, STATES, WA, UA, VA, MASK))
    args = [a.copy() for a in (s_prev, H, Wa, Ua, va, mask)]

    context, alpha = expect_tuple(attention.additive_attention(s_prev, H, Wa, Ua, va, mask), 2, "additive_attention")
    expect_not_mutated(attention, "additive_attention")
    expect_array(alpha, (2, 3), "alpha")
    assert alpha[1, 2] == 0.0, _("a masked position (mask False) must get exactly zero weight")
    assert np.allclose(alpha.sum(axis=1), 1.0), _("each row of alpha should sum to 1 (softmax over the real positions)")
    expect_close(alpha, ALPHA, "alpha", tol=1e-9,
                 hint=_("e = tanh(s_prev Wa + H Ua) va, then a softmax over the source positions of each row "
                        "(axis 1)"))
    # The written values carry 5e-13 of rounding; any summation order adds ~1e-15, relative to the
    # weights (positive) and to alpha |H| for the context (its entries can cancel): 1e-9 leaves a
    # margin of 1e3 and more.
    expect_close(context, CONTEXT, "context", tol=1e-9, hint=_("context[n] = sum_t alpha[n, t] H[n, t]"),
                 scale=np.einsum("nt,ntd->nd", ALPHA, np.abs(H)))
    for before, after in zip(args, (s_prev, H, Wa, Ua, va, mask)):
        assert np.array_equal(before, after), _("additive_attention modified one of its inputs in place")

    _context, alpha_none = attention.additive_attention(s_prev, H, Wa, Ua, va)
    expect_close(alpha_none, ALPHA_NO_MASK, _("alpha with mask=None"), tol=1e-9,
                 hint=_("mask=None means every position is real"))
