"""Outside-oracle checks of the reference gate_derivative.py, with torch in float64.

- forget_gate_forward / forget_gate_backward against torch autograd;
- forget_gate_jacobian against torch.autograd.functional.jacobian of c w.r.t. c_prev;
- cell_gradient_norms against the spectral norms (torch.linalg.matrix_norm(ord=2)) of
  torch Jacobians of the whole chain c_T(c_{T-k}), and, over T = 100 steps, against a direct
  product of diagonal matrices.

Bounds: c = f c_prev + g is one product and one sum, within gamma_2 (|f c_prev| + |g|) of the
exact value with or without a fused multiply-add; the backward pass and the Jacobian are single
products or copies, which IEEE-754 rounds the same on every machine: they are compared exactly.
A chain norm is a product of k <= T gates (relative error gamma_T) or the spectral norm of a
diagonal matrix (LAPACK's SVD: a few ulps relative to the largest singular value, the one the
norm is): ~1e-14 relative for T = 100, below the tolerances 1e-13 and 1e-12.

Largest differences measured when this file was written (200 seeds; run with -s to print
them): forward and backward 0 (bit-identical: the circuit is one multiply-add), Jacobian 0,
chain norms 1.4e-16 (relative), 100-step products 1.1e-16 (relative).
"""

import importlib
import sys

import numpy as np
import pytest
from helpers import SOLUTIONS, torch  # torch: imported on first use

from autograder.authoring.checks import gamma

SEEDS = range(200)


@pytest.fixture(scope="module")
def gd():
    sys.path.insert(0, str(SOLUTIONS))
    try:
        return importlib.import_module("gate_derivative")
    finally:
        sys.path.remove(str(SOLUTIONS))


def t64(a, grad=False):
    return torch.tensor(a, dtype=torch.float64, requires_grad=grad)


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(1e-300, np.abs(a) + np.abs(b)))) if np.any(a != b) else 0.0


def test_forward_backward_match_torch_autograd(gd):
    worst = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        N, H = rng.integers(1, 6), rng.integers(1, 7)
        c_prev, g, dc = rng.normal(size=(3, N, H))
        f = rng.uniform(size=(N, H))
        c, cache = gd.forget_gate_forward(c_prev, f, g)
        dc_prev, df, dg = gd.forget_gate_backward(dc, cache)

        tc, tf, tg = t64(c_prev, True), t64(f, True), t64(g, True)
        out = tf * tc + tg
        out.backward(t64(dc))
        bound = 2 * gamma(2) * (np.abs(f * c_prev) + np.abs(g))       # numpy's and torch's, FMA or not
        assert np.all(np.abs(c - out.detach().numpy()) <= bound)
        for ours, theirs in [(dc_prev, tc.grad), (df, tf.grad), (dg, tg.grad)]:
            assert np.array_equal(ours, theirs.numpy())                 # one product each: rounded alike
        worst = max(worst, float(np.max(np.abs(c - out.detach().numpy()))))
    print(f"forget gate forward vs torch autograd: max |diff| = {worst:.2e}")


def test_jacobian_matches_torch_functional_jacobian(gd):
    worst = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        N, H = rng.integers(1, 5), rng.integers(1, 6)
        c_prev, g = rng.normal(size=(2, N, H))
        f = rng.uniform(size=(N, H))
        J = gd.forget_gate_jacobian(f)
        assert J.shape == (N, H, H)
        for n in range(N):
            jac = torch.autograd.functional.jacobian(lambda c, f=f, g=g, n=n: t64(f[n]) * c + t64(g[n]), t64(c_prev[n]))
            worst = max(worst, float(np.max(np.abs(J[n] - jac.numpy()))))
    print(f"forget_gate_jacobian vs torch.autograd.functional.jacobian: max |diff| = {worst:.2e}")
    assert worst == 0.0             # diag(f): copies of f (autograd's 1.0 * f), exact on every machine


def chain_norms_torch(fs, gs):
    """norms[k-1] = max_n ||dc_T/dc_{T-k}||_2, each Jacobian taken by torch through the whole chain."""
    T, N, H = fs.shape
    norms = np.zeros(T)
    for n in range(N):
        for k in range(1, T + 1):
            def tail(c, n=n, k=k):
                for t in range(T - k, T):           # apply f_{T-k+1} .. f_T (0-based rows T-k .. T-1)
                    c = t64(fs[t, n]) * c + t64(gs[t, n])
                return c
            jac = torch.autograd.functional.jacobian(tail, torch.zeros(H, dtype=torch.float64))
            norms[k - 1] = max(norms[k - 1], float(torch.linalg.matrix_norm(jac, ord=2)))
    return norms


def test_cell_gradient_norms_match_torch_chain_jacobians(gd):
    worst = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        T, N, H = rng.integers(1, 7), rng.integers(1, 4), rng.integers(1, 5)
        fs = rng.uniform(size=(T, N, H))
        if seed % 4 == 0:
            fs = rng.normal(size=(T, N, H))      # any real gate values: the norm takes |.|
        norms = gd.cell_gradient_norms(fs)
        assert norms.shape == (T,)
        worst = max(worst, rel(norms, chain_norms_torch(fs, rng.normal(size=(T, N, H)))))
    print(f"cell_gradient_norms vs spectral norms of torch chain Jacobians: max rel diff = {worst:.2e}")
    assert worst <= 1e-13


def test_cell_gradient_norms_over_100_steps_match_direct_matrix_product(gd):
    worst = 0.0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        T, N, H = 100, 3, 4
        for fs in (1 - rng.uniform(0, 1e-4, size=(T, N, H)),      # all-remember
                   rng.uniform(0.5, 1.0, size=(T, N, H)),          # in between
                   rng.uniform(0, 1e-2, size=(T, N, H))):          # all-forget
            expected = np.zeros(T)
            for n in range(N):
                product = np.eye(H)
                for k in range(1, T + 1):
                    product = product @ np.diag(fs[T - k, n])
                    expected[k - 1] = max(expected[k - 1], np.linalg.norm(product, 2))
            worst = max(worst, rel(gd.cell_gradient_norms(fs), expected))
        remember = gd.cell_gradient_norms(1 - rng.uniform(0, 1e-4, size=(T, N, H)))
        assert remember.min() >= 1 - 1e-2 and remember.max() <= 1        # the seed's "all-remember" row
        forget = gd.cell_gradient_norms(rng.uniform(0, 1e-2, size=(T, N, H)))
        assert forget[0] <= 1e-2 and forget[1] <= 1e-4                    # the "all-forget" row
    print(f"cell_gradient_norms over T = 100 vs direct diagonal-matrix product: max rel diff = {worst:.2e}")
    assert worst <= 1e-12
