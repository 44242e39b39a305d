"""The reference bptt.py against torch autograd, an oracle that shares none of its code."""

import sys

import numpy as np
import pytest
import torch
from helpers import SOLUTIONS

sys.path.insert(0, str(SOLUTIONS))
import bptt  # noqa: E402  (the reference solution)

torch.set_default_dtype(torch.float64)
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


def compare(ours, theirs, label):
    for name, a, b in zip(NAMES, ours, theirs):
        err = float(np.max(np.abs(a - b)))
        assert err < 1e-12 * max(1.0, float(np.max(np.abs(b)))), f"{label} {name}: max |diff| {err:.2e}"


@pytest.mark.parametrize("seed", SEEDS)
def test_forward_and_full_bptt_match_torch(seed):
    arrays, dh = inputs(seed)
    h_torch, g_torch = torch_grads(arrays, dh)
    h, cache = bptt.rnn_forward(*arrays)
    assert np.max(np.abs(h - h_torch)) < 1e-13
    compare(bptt.rnn_backward(dh, cache), g_torch, "rnn_backward")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [1, 2, 3, 7, 10])
def test_truncated_bptt_matches_torch_detach(seed, k):
    arrays, dh = inputs(seed)
    _, g_torch = torch_grads(arrays, dh, detach_every=k)
    _, cache = bptt.rnn_forward(*arrays)
    compare(bptt.rnn_backward_truncated(dh, cache, k), g_torch, f"rnn_backward_truncated k={k}")


@pytest.mark.parametrize("seed", SEEDS)
def test_step_backward_matches_torch(seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=s) for s in [(2, 3), (2, 4), (3, 4), (4, 4), (4,)]]
    dnext = rng.normal(size=(2, 4))
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = torch.tanh(ts[0] @ ts[2] + ts[1] @ ts[3] + ts[4])
    (out * torch.tensor(dnext)).sum().backward()
    nh, cache = bptt.rnn_step_forward(*arrays)
    assert np.max(np.abs(nh - out.detach().numpy())) < 1e-14
    compare(bptt.rnn_step_backward(dnext, cache), [t.grad.numpy() for t in ts], "rnn_step_backward")


def test_numerical_gradient_and_rel_error_agree_with_torch():
    """numerical_gradient of the lab's summed loss vs torch's exact gradient, by the lab's measure."""
    arrays, dh = inputs(0, N=1, T=12, D=4, H=8)
    _, g_torch = torch_grads(arrays, dh)
    Wh = arrays[3]
    num = bptt.numerical_gradient(lambda W: float(np.sum(dh * bptt.rnn_forward(arrays[0], arrays[1], arrays[2], W, arrays[4])[0])), Wh.copy())
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
    assert np.max(np.abs(h - h_torch)) < 1e-13
    compare(RNNBackward()(dh, cache), g_torch, "RNNBackward")


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
    assert np.max(np.abs(grad - xt.grad.numpy())) < 1e-6
    a, b = np.array([1.0, 0.0, -2.0]), np.array([1.5, 0.0, -2.0])
    assert RelError()(a, b) == 0.5 / 2.5
