"""Public tests for gate_derivative.py: small fixed vectors you can check by hand.

Run them with `pytest assignments/rnn_prehistory/tests/test_gate_derivative.py`. The hidden
tests check the same functions on random inputs, the backward pass and the Jacobian with
finite differences, and the course notes' two extremes (all-remember, all-forget) over
100 steps.
"""

import numpy as np

from autograder.i18n import _

C_PREV = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]])
F = np.array([[0.5, 1.0, 0.0], [0.2, 0.3, 0.9]])
G = np.array([[0.1, 0.2, 0.3], [-1.0, 0.0, 1.0]])
DC = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])


def fresh(*arrays):
    """Copies of the inputs, so that a function that modifies its arguments cannot spoil other tests."""
    return [a.copy() for a in arrays]


# These values are sums and products of a few short decimals: any order is within a few ulps
# (~1e-16) of them; np.allclose's rtol 1e-5 with atol 1e-12 is far above that.
def test_forget_gate_forward_backward_fixed_vector(gate_derivative):
    c, cache = gate_derivative.forget_gate_forward(*fresh(C_PREV, F, G))
    # c = f * c_prev + g, element by element
    expected_c = np.array([[0.5 + 0.1, -2.0 + 0.2, 0.0 + 0.3], [0.0 - 1.0, 0.9 + 0.0, -0.9 + 1.0]])
    assert np.asarray(c).shape == (2, 3), _("c has shape (N, H)")
    assert np.allclose(c, expected_c, atol=1e-12), _("c = f * c_prev + g (element-wise, no matrix product)")

    dc_prev, df, dg = gate_derivative.forget_gate_backward(*fresh(DC), cache)
    assert np.allclose(dc_prev, [[0.5, 2.0, 0.0], [-0.2, 0.15, 1.8]], atol=1e-12), \
        _("dc_prev = dc * f: the gate alone is the local Jacobian (no weight matrix)")
    assert np.allclose(df, [[1.0, -4.0, 1.5], [0.0, 1.5, -2.0]], atol=1e-12), _("df = dc * c_prev")
    assert np.allclose(dg, DC, atol=1e-12), _("dg = dc: the addition passes the gradient on unchanged")


def test_jacobian_and_cell_gradient_norms_fixed(gate_derivative):
    J = np.asarray(gate_derivative.forget_gate_jacobian(*fresh(F)))
    assert J.shape == (2, 3, 3), _("J has shape (N, H, H)")
    assert np.allclose(J[0], np.diag([0.5, 1.0, 0.0]), atol=1e-12), _("J[n] = diag(f[n])")
    assert np.allclose(J[1], np.diag([0.2, 0.3, 0.9]), atol=1e-12), _("J[n] = diag(f[n])")

    # T = 3 steps, N = 2 chains, H = 2 units; fs[t-1] is f_t.
    fs = np.array([[[0.5, 0.5], [0.1, 0.1]],      # f_1
                   [[1.0, 0.5], [0.9, 0.2]],      # f_2
                   [[0.8, 0.9], [0.5, 0.5]]])     # f_3
    # k = 1: f_3                 -> chain 0 [0.8, 0.9],   chain 1 [0.5, 0.5]     -> 0.9
    # k = 2: f_3 * f_2           -> chain 0 [0.8, 0.45],  chain 1 [0.45, 0.1]    -> 0.8
    # k = 3: f_3 * f_2 * f_1     -> chain 0 [0.4, 0.225], chain 1 [0.045, 0.01]  -> 0.4
    norms = np.asarray(gate_derivative.cell_gradient_norms(fs))
    assert norms.shape == (3,), _("one norm per k = 1..T")
    assert np.allclose(norms, [0.9, 0.8, 0.4], atol=1e-12), \
        _("norms[k-1] = largest |product of the LAST k gates| over the batch and the units")
    assert np.allclose(gate_derivative.cell_gradient_norms(np.ones((50, 1, 4))), np.ones(50), atol=1e-12), \
        _("gates equal to 1 keep the gradient: every norm is 1")
