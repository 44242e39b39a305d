"""The reference bptt.py against torch autograd, an oracle that shares none of its code."""

import sys

import numpy as np
import pytest
from helpers import SOLUTIONS, torch  # torch: imported on first use

from autograder.authoring.checks import gamma, tanh_recurrence_bound

sys.path.insert(0, str(SOLUTIONS))
import bptt  # noqa: E402  (the reference solution)

SEEDS = range(20)
NAMES = ["dx", "dh0", "dWx", "dWh", "db"]


def torch_rnn(x, h0, Wx, Wh, b, detach_every=None):
    """The same recurrence in torch; `detach_every=k` cuts the graph at t = k, 2k, ..."""
    h, hs = h0, []
    for t in range(x.shape[1]):
        if detach_every and t > 0 and t % detach_every == 0:
            h = h.detach()
        h = torch.tanh(x[:, t] @ Wx + h @ Wh + b)
        hs.append(h)
    return torch.stack(hs, dim=1)


def inputs(seed, N=3, T=7, D=4, H=5):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) * sc for s, sc in [((N, T, D), 1), ((N, H), 1), ((D, H), .5), ((H, H), .5), ((H,), .1)]], \
        rng.normal(size=(N, T, H))


def torch_grads(arrays, dh, detach_every=None):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    h = torch_rnn(*ts, detach_every=detach_every)
    (h * torch.tensor(dh)).sum().backward()
    return h.detach().numpy(), [t.grad.numpy() if t.grad is not None else np.zeros_like(a) for t, a in zip(ts, arrays)]


def bptt_bound(x, h0, Wx, Wh, b, dh, k=None):
    """(dx, dh0, dWx, dWh, db): how far one correct BPTT (cut every k steps, or not) can be from
    the exact gradients, in any summation order, FMA or not, first order in the unit roundoff.

    Walking back, g_t = dh_t + dnext is off by E (its own rounding included); s = 1 - h_t^2 by
    2|h_t| dh_t (the forward error, checks.tanh_recurrence_bound) plus its rounding; so
    da = g s is off by E s + |g| ds + u|g| s. Every product or sum over steps, batch rows or
    hidden units rounds by at most gamma_m of its terms' magnitude, m = NT + D + H + 8 the
    longest of them: dx = da Wx^T, dnext = da Wh^T (the next step's E), dWx = sum_t x_t^T da,
    dWh = sum_t h_{t-1}^T da (plus the forward error of h_{t-1}), db = sum da. Two computations
    differ by twice this."""
    N, T, D = x.shape
    H = Wh.shape[0]
    g = gamma(N * T + D + H + 8)
    h, state = np.zeros((N, T, H)), h0
    for t in range(T):
        state = np.tanh(x[:, t] @ Wx + state @ Wh + b)
        h[:, t] = state
    dh_fwd = tanh_recurrence_bound(x, h0, Wx, Wh, b, h)
    bdx, bdWx, bdWh, bdb = np.zeros(x.shape), np.zeros(Wx.shape), np.zeros(Wh.shape), np.zeros(H)
    dnext, E = np.zeros((N, H)), np.zeros((N, H))
    for t in reversed(range(T)):
        if k and (t + 1) % k == 0:                   # the top of a chunk: nothing flows in from above
            dnext, E = np.zeros((N, H)), np.zeros((N, H))
        prev, dprev = (h[:, t - 1], dh_fwd[:, t - 1]) if t else (h0, np.zeros_like(h0))
        G = np.abs(dh[:, t] + dnext)
        E = E + g * (np.abs(dh[:, t]) + np.abs(dnext))
        s = 1 - h[:, t] ** 2
        A = G * s                                    # |da|
        dda = E * s + G * (2 * np.abs(h[:, t]) * dh_fwd[:, t] + g) + g * A
        bdx[:, t] = (dda + g * A) @ np.abs(Wx).T
        bdWx += np.abs(x[:, t]).T @ (dda + g * A)
        bdWh += np.abs(prev).T @ (dda + g * A) + dprev.T @ A
        bdb += (dda + g * A).sum(axis=0)
        dnext = ((dh[:, t] + dnext) * s) @ Wh.T
        E = (dda + g * A) @ np.abs(Wh).T
    return bdx, E, bdWx, bdWh, bdb


def compare(ours, theirs, bounds, label):
    """Each gradient within twice its bound (two computations: numpy's and torch's)."""
    for name, a, b, bound in zip(NAMES, ours, theirs, bounds):
        excess = float(np.max(np.abs(a - b) - 2 * bound))
        assert excess <= 0, f"{label} {name}: max |diff| {np.max(np.abs(a - b)):.2e} exceeds its bound"


@pytest.mark.parametrize("seed", SEEDS)
def test_forward_and_full_bptt_match_torch(seed):
    arrays, dh = inputs(seed)
    h_torch, g_torch = torch_grads(arrays, dh)
    h, cache = bptt.rnn_forward(*arrays)
    assert np.all(np.abs(h - h_torch) <= 2 * tanh_recurrence_bound(*arrays, h))
    compare(bptt.rnn_backward(dh, cache), g_torch, bptt_bound(*arrays, dh), "rnn_backward")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [1, 2, 3, 7, 10])
def test_truncated_bptt_matches_torch_detach(seed, k):
    arrays, dh = inputs(seed)
    _, g_torch = torch_grads(arrays, dh, detach_every=k)
    _, cache = bptt.rnn_forward(*arrays)
    compare(bptt.rnn_backward_truncated(dh, cache, k), g_torch, bptt_bound(*arrays, dh, k),
            f"rnn_backward_truncated k={k}")


@pytest.mark.parametrize("seed", SEEDS)
def test_step_backward_matches_torch(seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=s) for s in [(2, 3), (2, 4), (3, 4), (4, 4), (4,)]]
    dnext = rng.normal(size=(2, 4))
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = torch.tanh(ts[0] @ ts[2] + ts[1] @ ts[3] + ts[4])
    (out * torch.tensor(dnext)).sum().backward()
    nh, cache = bptt.rnn_step_forward(*arrays)
    x, prev_h, Wx, Wh, b = arrays
    step = (x[:, None], prev_h, Wx, Wh, b)                             # one step of a sequence
    assert np.all(np.abs(nh - out.detach().numpy()) <= 2 * tanh_recurrence_bound(*step, nh[:, None])[:, 0])
    dx, dprev, dWx, dWh, db = bptt_bound(*step, dnext[:, None])
    compare(bptt.rnn_step_backward(dnext, cache), [t.grad.numpy() for t in ts], (dx[:, 0], dprev, dWx, dWh, db),
            "rnn_step_backward")


def test_numerical_gradient_and_rel_error_agree_with_torch():
    """numerical_gradient of the lab's summed loss vs torch's exact gradient, by the lab's measure."""
    arrays, dh = inputs(0, N=1, T=12, D=4, H=8)
    _, g_torch = torch_grads(arrays, dh)
    Wh = arrays[3]
    num = bptt.numerical_gradient(lambda W: float(np.sum(dh * bptt.rnn_forward(arrays[0], arrays[1], arrays[2], W, arrays[4])[0])), Wh.copy())
    # Central differences at h = 1e-6: truncation h^2/6 times the third derivative (~1e-12 |f|),
    # roundoff eps F / h with F = sum |dh| |h| ~ 45 the magnitude of the loss's terms: ~5e-9 per
    # entry, ~2e-9 relative to the gradient's norm (~20). 1e-8 is above both; a wrong gradient is
    # off by O(1).
    err = np.linalg.norm(num - g_torch[3]) / (np.linalg.norm(num) + np.linalg.norm(g_torch[3]))
    assert err < 1e-8, err
    a, b = np.array([1.0, 0.0, 2.0]), np.array([1.0, 0.0, 1.0])
    assert bptt.rel_error(a, b) == pytest.approx(1 / 3)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("N,T", [(3, 7), (1, 1)])
def test_lab_stand_ins_match_torch(seed, N, T):
    """oracles.RNNForward/RNNBackward, the correct bptt the lab is graded with when the
    student's raises: the same recurrence and gradients as torch autograd."""
    from autograder.units.rnn_prehistory.oracles import RNNBackward, RNNForward

    arrays, dh = inputs(seed, N=N, T=T)
    h_torch, g_torch = torch_grads(arrays, dh)
    h, cache = RNNForward()(*arrays)
    assert np.all(np.abs(h - h_torch) <= 2 * tanh_recurrence_bound(*arrays, h))
    compare(RNNBackward()(dh, cache), g_torch, bptt_bound(*arrays, dh), "RNNBackward")


def test_lab_stand_ins_for_the_gradient_check():
    """oracles.NumericalGradient against torch's gradient of a cubic (x restored after the
    probes), and oracles.RelError against its formula written out element by element."""
    from autograder.units.rnn_prehistory.oracles import NumericalGradient, RelError

    rng = np.random.default_rng(7)
    w, x = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    xt = torch.tensor(x, requires_grad=True)
    (torch.tensor(w) * xt**3).sum().backward()
    before = x.copy()
    grad = NumericalGradient()(lambda v: float(np.sum(w * v**3)), x)
    assert np.array_equal(x, before)
    # truncation h^2 |w| (the third derivative is 6w; h = 1e-6) ~ 1e-12, roundoff eps sum |w x^3| / h ~ 1e-9
    assert np.max(np.abs(grad - xt.grad.numpy())) < 1e-6
    a, b = np.array([1.0, 0.0, -2.0]), np.array([1.5, 0.0, -2.0])
    assert RelError()(a, b) == 0.5 / 2.5
