"""The reference fault_injection.py against oracles that share none of its code:
torch (autograd Jacobians, clip_grad_norm_, eigvals), exact decimal arithmetic, and
inequalities that hold for any matrix (||W^k||_2 >= rho(W)^k)."""

import math
import sys
from decimal import Decimal, getcontext

import numpy as np
import pytest
import torch
from helpers import SOLUTIONS

sys.path.insert(0, str(SOLUTIONS))
import fault_injection  # noqa: E402  (the reference solution)

torch.set_default_dtype(torch.float64)
SEEDS = range(10)


@pytest.mark.parametrize("seed", SEEDS)
def test_log_abs_cumprod_matches_exact_decimal_products(seed):
    rng = np.random.default_rng(seed)
    factors = rng.uniform(0.0, 0.8, 1000) * rng.choice([-1.0, 1.0], 1000)   # the product underflows float64
    getcontext().prec = 60
    product, expected = Decimal(1), []
    for f in factors:
        product *= Decimal(float(f))        # exact binary value of each factor
        expected.append(float(abs(product).ln()))
    got = fault_injection.log_abs_cumprod(factors)
    assert np.max(np.abs(got - expected) / np.abs(expected)) < 1e-12
    assert expected[-1] < -745.2, "the test must cover a product below the smallest float64"


@pytest.mark.parametrize("seed", SEEDS)
def test_scale_spectral_radius_matches_torch_eigvals(seed):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(7, 7)) + np.triu(rng.normal(size=(7, 7)) * 4, 1)
    for rho in (0.5, 1.0, 1.5):
        got = fault_injection.scale_spectral_radius(W, rho)
        radius = torch.linalg.eigvals(torch.tensor(got)).abs().max().item()
        assert abs(radius - rho) < 1e-10 * rho
        ratio = got / W
        assert np.allclose(ratio, ratio.flat[0], rtol=1e-12) and ratio.flat[0] > 0


def _torch_chain_norms(Wh, U, h0, activation):
    T = U.shape[0]
    Wt, Ut = torch.tensor(Wh), torch.tensor(U)
    act = torch.tanh if activation == "tanh" else (lambda a: a)
    hs = [torch.tensor(h0)]
    for t in range(T):
        hs.append(act(hs[-1] @ Wt + Ut[t]))
    norms = []
    for k in range(1, T + 1):
        start = T - k

        def roll(h, start=start):
            for t in range(start, T):
                h = act(h @ Wt + Ut[t])
            return h

        J = torch.autograd.functional.jacobian(roll, hs[start].detach())
        norms.append(torch.linalg.matrix_norm(J, ord=2).item())
    return np.stack([h.detach().numpy() for h in hs]), np.array(norms)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("activation", ["tanh", "linear"])
def test_jacobian_chain_norms_match_torch_autograd(seed, activation):
    rng = np.random.default_rng(seed)
    H, T = 6, 12
    Wh = rng.normal(size=(H, H)) * (1.8 if seed % 2 else 0.6) / math.sqrt(H)
    hs, expected = _torch_chain_norms(Wh, rng.normal(size=(T, H)), np.tanh(rng.normal(size=H)), activation)
    got = fault_injection.jacobian_chain_norms(Wh, hs, activation)
    assert got.shape == (T,)
    assert np.max(np.abs(got - expected) / expected) < 1e-10


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("factor", [0.2, 1e-6, 5.0])
def test_clip_grad_norm_matches_torch(seed, factor):
    rng = np.random.default_rng(seed)
    grads = {"Wx": rng.normal(size=(4, 3)), "Wh": rng.normal(size=(3, 3)) * 10, "b": rng.normal(size=3)}
    params = [torch.zeros(g.shape, requires_grad=True) for g in grads.values()]
    for p, g in zip(params, grads.values()):
        p.grad = torch.tensor(g)
    total = math.sqrt(sum(float(np.sum(g**2)) for g in grads.values()))
    max_norm = factor * total
    torch_total = torch.nn.utils.clip_grad_norm_(params, max_norm).item()
    clipped, got_total = fault_injection.clip_grad_norm(grads, max_norm)
    assert abs(got_total - torch_total) < 1e-12 * torch_total
    for (name, g), p in zip(grads.items(), params):
        # torch divides by total + 1e-6: equal to 1e-6 relative
        assert np.allclose(clipped[name], p.grad.numpy(), rtol=1e-6, atol=0), name
        assert clipped[name] is not g


@pytest.mark.parametrize("seed", [0, 1, 2, 42])
def test_lab_figures_obey_the_bounds_of_linear_algebra(seed):
    out = fault_injection.run_fault_injection(seed)
    # For any matrix, ||W^k||_2 >= rho(W)^k: the linear chain cannot fall below rho^T.
    assert out["rho1.5_linear_norm"] >= 1.5**100 * (1 - 1e-9)
    assert out["rho1.0_linear_norm"] >= 1.0 - 1e-9
    # tanh' <= 1 and ||diag(d) A|| <= ||A||: one tanh factor never exceeds ||W||_2, so the
    # tanh chain at rho = 0.5 is at most ||W||_2^100; with rho 0.5 it is far below 1e-10.
    assert out["rho0.5_tanh_norm"] < 1e-10
    # Clipping only scales down: the clipped first-step gradient is never larger.
    assert out["vanish_dx1_clip"] <= out["vanish_dx1_noclip"] * (1 + 1e-12)
    assert out["clip_max_update_norm"] <= 5.0 * (1 + 1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_grader_linear_rnn_matches_torch_autograd(seed):
    """The grader's own clipping experiment (lab/fault_lab.py) trains with `_linear_rnn`: its
    loss and gradients against torch autograd of the same recurrence."""
    from autograder.units.rnn_prehistory.lab.fault_lab import _linear_rnn

    rng = np.random.default_rng(seed)
    N, T, D, H = 4, 20, 4, 8
    x, y = rng.normal(size=(N, T, D)), rng.normal(size=(N, H))
    Wx, Wh, b = rng.normal(size=(D, H)) / 2, rng.normal(size=(H, H)) / math.sqrt(H), rng.normal(size=H)
    loss, grads = _linear_rnn(Wx, Wh, b, x, y)
    tWx, tWh, tb = (torch.tensor(a, requires_grad=True) for a in (Wx, Wh, b))
    h = torch.zeros(N, H)
    for t in range(T):
        h = torch.tensor(x[:, t]) @ tWx + h @ tWh + tb
    torch_loss = 0.5 * ((h - torch.tensor(y)) ** 2).sum() / N
    torch_loss.backward()
    assert abs(loss - torch_loss.item()) <= 1e-12 * abs(torch_loss.item())
    for name, t in (("Wx", tWx), ("Wh", tWh), ("b", tb)):
        expected = t.grad.numpy()
        assert np.max(np.abs(grads[name] - expected)) <= 1e-10 * np.max(np.abs(expected)), name
