"""The reference fault_injection.py against oracles that share none of its code:
torch (autograd Jacobians, clip_grad_norm_, eigvals), exact decimal arithmetic, and
inequalities that hold for any matrix (||W^k||_2 >= rho(W)^k)."""

import math
import sys
from decimal import Decimal, getcontext

import numpy as np
import pytest
from helpers import SOLUTIONS, torch  # torch: imported on first use

from autograder.authoring.checks import gamma, product_scale

sys.path.insert(0, str(SOLUTIONS))
import fault_injection  # noqa: E402  (the reference solution)

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
    # A running sum of 1000 logs of one sign (no cancellation), each within an ulp or two:
    # gamma_1002 ~ 1.1e-13 relative in any order, below 1e-12.
    assert np.max(np.abs(got - expected) / np.abs(expected)) < 1e-12
    assert expected[-1] < -745.2, "the test must cover a product below the smallest float64"


@pytest.mark.parametrize("seed", SEEDS)
def test_scale_spectral_radius_matches_torch_eigvals(seed):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(7, 7)) + np.triu(rng.normal(size=(7, 7)) * 4, 1)
    for rho in (0.5, 1.0, 1.5):
        got = fault_injection.scale_spectral_radius(W, rho)
        radius = torch.linalg.eigvals(torch.tensor(got)).abs().max().item()
        # A backward-stable eigensolver moves an eigenvalue by at most its condition number (<= 3
        # for the largest one of these matrices) times ~n u ||W||_F: ~1e-14 relative, below 1e-10.
        assert abs(radius - rho) < 1e-10 * rho
        ratio = got / W                  # one product and one division per entry: within 2 ulps
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
    # A product of k <= 12 Jacobians (6x6) is off by gamma_{kH} || prod |J| ||, relative to the
    # norm || prod J || it is compared at: their ratio reaches 2e4 on these seeds, so the worst case
    # is ~1.5e-10 (measured: 1e-15); torch's recomputed states add ~1e-15 relative to 1 - h^2.
    # 1e-8 is above both; a chain off by one step is off by O(1).
    assert np.max(np.abs(got - expected) / expected) < 1e-8


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
    # a sum of 21 squares (one sign) and a square root: gamma_23 ~ 3e-15 relative, below 1e-12
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
    # (1 + 1e-12): the norm of a rescaled gradient is its target to gamma_n, n ~ 100 of its entries
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
    assert abs(loss - torch_loss.item()) <= 2 * linear_rnn_loss_bound(Wx, Wh, b, x, y)
    # The gradients run the same propagation backwards (through Wh^T, the same powers' norms):
    # ~1e-11 of the largest entry by the bound below, under 1e-10.
    for name, t in (("Wx", tWx), ("Wh", tWh), ("b", tb)):
        expected = t.grad.numpy()
        assert np.max(np.abs(grads[name] - expected)) <= 1e-10 * np.max(np.abs(expected)), name


def linear_rnn_loss_bound(Wx, Wh, b, x, y):
    """How far one correct computation of 0.5/N sum ||h_T - y||^2, h_t = x_t Wx + h_{t-1} Wh + b,
    can be from the exact loss, in any summation order, FMA or not (first order). Step t rounds
    by gamma_{D+H+1} P_t (P_t = |x_t||Wx| + |h_{t-1}||Wh| + |b|), and that error reaches h_T
    through Wh^{T-t}: norm-wise, ||dh_T|| <= sum_t ||Wh^{T-t}||_2 ||gamma P_t||. (Through |Wh|
    instead, entry by entry, the bound would be 1e5 times larger here: ||(|Wh|)^20|| ~ 1e7.) The
    loss then moves by sum_n ||h_T - y|| ||dh_T|| / N, plus its own (NH+2)-term rounding."""
    N, T, D = x.shape
    H = Wh.shape[0]
    powers = [np.linalg.norm(np.linalg.matrix_power(Wh, k), 2) for k in range(T)]     # ||Wh^k||_2
    h, dh = np.zeros((N, H)), np.zeros(N)
    for t in range(T):                      # step t's rounding reaches h_T through Wh^{T-1-t}
        P = product_scale(x[:, t], Wx) + product_scale(h, Wh) + np.abs(b)
        dh += powers[T - 1 - t] * gamma(D + H + 1) * np.linalg.norm(P, axis=1)
        h = x[:, t] @ Wx + h @ Wh + b
    r = h - y
    loss = 0.5 * np.sum(r * r) / N
    return float(np.sum(np.linalg.norm(r, axis=1) * dh) / N + gamma(N * H + 2) * loss)
