"""Public tests for bptt.py: small fixed vectors you can check by hand, and shapes.

Run them with `pytest assignments/rnn_prehistory/tests/test_bptt.py`. The hidden tests
check the same functions on random inputs and every gradient with finite differences.
"""

import numpy as np

from autograder.i18n import _
from autograder.units.rnn_prehistory.helpers.functions import CubicForm

# One step by hand: x @ Wx + prev_h @ Wh + b for N = 2, D = 2, H = 3.
X = np.array([[1.0, 2.0], [0.0, -1.0]])
PREV_H = np.array([[0.5, 0.0, -0.5], [1.0, 1.0, 1.0]])
WX = np.array([[0.1, 0.2, 0.3], [-0.1, 0.0, 0.1]])
WH = np.array([[0.2, 0.0, 0.0], [0.0, 0.2, 0.0], [0.0, 0.0, 0.2]])
B = np.array([0.0, 0.1, -0.1])
# Row 0: [0.1-0.2, 0.2, 0.3+0.2] + [0.1, 0, -0.1] + b = [0.0, 0.3, 0.3]
# Row 1: [0.1, 0.0, -0.1] + [0.2, 0.2, 0.2] + b = [0.3, 0.3, 0.0]
EXPECTED_NEXT_H = np.tanh(np.array([[0.0, 0.3, 0.3], [0.3, 0.3, 0.0]]))


def test_rnn_step_forward_fixed_vector(bptt):
    next_h, _cache = bptt.rnn_step_forward(X, PREV_H, WX, WH, B)
    assert np.asarray(next_h).shape == (2, 3), _("next_h must have shape (N, H)")
    assert np.allclose(next_h, EXPECTED_NEXT_H, atol=1e-12), _("next_h = tanh(x Wx + prev_h Wh + b)")


def test_rnn_forward_shapes_and_first_step(bptt):
    N, T, D, H = 2, 4, 2, 3
    x = np.zeros((N, T, D))
    x[:, 0] = X
    h, _cache = bptt.rnn_forward(x, PREV_H, WX, WH, B)
    assert np.asarray(h).shape == (N, T, H), _("h has shape (N, T, H) and excludes h0")
    assert np.allclose(h[:, 0], EXPECTED_NEXT_H, atol=1e-12), _("h[:, 0] is the first step from h0")


def test_rnn_step_backward_small_gradient_check(bptt):
    rng = np.random.default_rng(1)
    dnext = rng.normal(size=(2, 3))
    _next_h, cache = bptt.rnn_step_forward(X, PREV_H, WX, WH, B)
    dx, dprev_h, dWx, dWh, db = bptt.rnn_step_backward(dnext, cache)
    # Check db by central differences of L = sum(dnext * next_h), written out here.
    eps = 1e-6
    num_db = np.zeros(3)
    for j in range(3):
        bp, bm = B.copy(), B.copy()
        bp[j] += eps
        bm[j] -= eps
        num_db[j] = np.sum(dnext * (np.tanh(X @ WX + PREV_H @ WH + bp) - np.tanh(X @ WX + PREV_H @ WH + bm))) / (2 * eps)
    assert np.allclose(db, num_db, rtol=1e-6, atol=1e-9), _("db = sum over the batch of dnext_h * (1 - next_h**2)")
    assert np.asarray(dx).shape == (2, 2) and np.asarray(dprev_h).shape == (2, 3)
    assert np.asarray(dWx).shape == (2, 3) and np.asarray(dWh).shape == (3, 3)


def test_rel_error_formula(bptt):
    a = np.array([1.0, 0.0, 3.0])
    b = np.array([1.0, 0.0, 1.0])
    # per element: 0/2, 0/max(1e-8, 0), 2/4 -> max 0.5
    assert abs(bptt.rel_error(a, b) - 0.5) < 1e-12


def test_numerical_gradient_of_a_cubic(bptt):
    f = CubicForm(w=np.array([[1.0, -2.0]]), A=np.array([[0.5], [1.5]]))
    x = np.array([[0.3, -1.0]])
    # d/dx [sum(w x^3) + sum(x A)] = 3 w x^2 + A.sum(axis=1)
    expected = 3 * np.array([[1.0, -2.0]]) * x**2 + np.array([[0.5, 1.5]])
    grad = bptt.numerical_gradient(f, x.copy())
    assert np.allclose(grad, expected, rtol=1e-6, atol=1e-8), _("central differences (f(x+h) - f(x-h)) / 2h")
