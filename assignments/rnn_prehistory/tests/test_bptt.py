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
    # Any summation order is within a few ulps (~1e-16) of tanh of the exact pre-activation; allclose's
    # rtol 1e-5 with atol 1e-12 is far above that (a missing term is off by 0.1).
    assert np.allclose(next_h, EXPECTED_NEXT_H, atol=1e-12), _("next_h = tanh(x Wx + prev_h Wh + b)")


def test_rnn_forward_shapes_and_first_step(bptt):
    N, T, D, H = 2, 4, 2, 3
    x = np.zeros((N, T, D))
    x[:, 0] = X
    h, _cache = bptt.rnn_forward(x, PREV_H, WX, WH, B)
    assert np.asarray(h).shape == (N, T, H), _("h has shape (N, T, H) and excludes h0")
    assert np.allclose(h[:, 0], EXPECTED_NEXT_H, atol=1e-12), _("h[:, 0] is the first step from h0")


# The upstream gradient of the step above: a seeded generator's draws (the same on every machine).
STEP_DNEXT = np.random.default_rng(1).normal(size=(2, 3))

# BEGIN EXPECTED VALUES: PyTorch's (float64), as computed; generated, do not edit
STEP_DB = np.array([-0.8469831576480298, 1.5804177488244373, 0.7487697543373506])
# END EXPECTED VALUES


def test_rnn_step_backward_small_gradient_check(bptt):
    _next_h, cache = bptt.rnn_step_forward(X, PREV_H, WX, WH, B)
    dx, dprev_h, dWx, dWh, db = bptt.rnn_step_backward(STEP_DNEXT.copy(), cache)
    # STEP_DB is autograd's gradient of L = sum(STEP_DNEXT * next_h) with respect to b: a sum of
    # two products, within ~1e-16 of the exact value in any order, far below rtol 1e-6 and atol 1e-9
    # (a missing tanh' is off by 0.1).
    assert np.allclose(db, STEP_DB, rtol=1e-6, atol=1e-9), _("db = sum over the batch of dnext_h * (1 - next_h**2)")
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
    # truncation h^2 |w| ~ 1e-12 at h = 1e-6, roundoff ~1e-16 |f| / h ~ 1e-10: far below rtol 1e-6, atol 1e-8
    assert np.allclose(grad, expected, rtol=1e-6, atol=1e-8), _("central differences (f(x+h) - f(x-h)) / 2h")


# Two sequences of T = 3 steps (N = 2, D = 2, H = 2) and the loss L = sum(R * h), so dh = R.
# The expected gradients were computed with PyTorch's autograd (float64), to 12 decimals.
SEQ_X = np.array([[[1.0, -1.0], [0.5, 2.0], [-1.5, 0.0]], [[0.0, 0.5], [-1.0, 1.0], [2.0, -0.5]]])
SEQ_H0 = np.array([[0.2, -0.4], [0.0, 0.3]])
SEQ_WX = np.array([[0.3, -0.2], [0.1, 0.4]])
SEQ_WH = np.array([[0.5, 0.1], [-0.3, 0.6]])
SEQ_B = np.array([0.1, -0.2])
SEQ_R = np.array([[[1.0, 0.0], [0.0, -1.0], [2.0, 1.0]], [[-0.5, 1.0], [1.0, 0.0], [0.0, 0.5]]])
FULL_BPTT = {   # dx, dh0, dWx, dWh, db of rnn_backward(SEQ_R, cache)
    "dx": [[[0.330464875722, -0.035885771938], [0.359739491558, -0.356773971685], [0.409607738781, 0.580555594656]],
           [[-0.146265136135, 0.312850217808], [0.271102827226, 0.173608460462], [-0.076515441993, 0.153030883986]]],
    "dh0": [[0.415165543109, -0.455642644733], [0.092001088923, 0.456212504581]],
    "dWx": [[-2.870106054311, -1.664105592058], [1.180485901481, -1.35548158552]],
    "dWh": [[1.938763876045, 0.103733364844], [-0.394010231756, 1.437920506997]],
    "db": [4.462363033721, 0.952872774791],
}
TRUNCATED_K2 = {   # the same with k = 2: chunks [0, 2) and [2, 3), nothing flows from step 2 into step 1
    "dx": [[[0.257074736721, -0.027517536037], [0.198533165348, -0.397066330697], [0.409607738781, 0.580555594656]],
           [[-0.138692030726, 0.272121925916], [0.295473341172, 0.098491113724], [-0.076515441993, 0.153030883986]]],
    "dh0": [[0.323335144944, -0.354111120959], [0.064459746652, 0.411565690289]],
    "dWx": [[-3.289232095697, -1.400975573878], [0.285963986992, -1.592937223417]],
    "dWh": [[1.649439190959, 0.12087540276], [0.066314804626, 1.328031734427]],
    "db": [3.672255243079, 0.780975318101],
}


def _check_gradients(grads, expected, what):
    assert len(grads) == 5, _("{what} returns a tuple (dx, dh0, dWx, dWh, db)").format(what=what)
    for name, got in zip(expected, grads):
        want = np.array(expected[name])
        assert np.asarray(got).shape == want.shape, _("{what}: {name} must have shape {shape}").format(
            what=what, name=name, shape=want.shape)
        # The expected values carry 5e-13 of their 12 decimals, any summation order ~1e-15 more:
        # rtol 1e-8 and atol 1e-10 are far above both (truncating or not is off by 0.1).
        assert np.allclose(got, want, rtol=1e-8, atol=1e-10), _(
            "{what}: {name} differs from the gradient of L = sum(R * h) on two fixed sequences of 3 steps").format(
            what=what, name=name)


def test_rnn_backward_fixed_sequence(bptt):
    _h, cache = bptt.rnn_forward(SEQ_X, SEQ_H0, SEQ_WX, SEQ_WH, SEQ_B)
    _check_gradients(bptt.rnn_backward(SEQ_R.copy(), cache), FULL_BPTT, "rnn_backward")


def test_rnn_backward_truncated_fixed_sequence(bptt):
    _h, cache = bptt.rnn_forward(SEQ_X, SEQ_H0, SEQ_WX, SEQ_WH, SEQ_B)
    _check_gradients(bptt.rnn_backward_truncated(SEQ_R.copy(), cache, 2), TRUNCATED_K2, "rnn_backward_truncated")
