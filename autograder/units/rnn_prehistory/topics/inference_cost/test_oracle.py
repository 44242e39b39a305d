"""The reference inference_cost.py against torch: scaled_dot_product_attention (is_causal) recomputed
over every prefix, nn.RNNCell, the bytes of torch's own growing cache, and torch's FLOP counter
(FlopCounterMode counts 2 FLOPs per multiply-add of a matrix product) for the per-token formulas."""

import sys

import numpy as np
import pytest
from helpers import SOLUTIONS, torch  # torch: imported on first use

from autograder.authoring.checks import dot_attention_bound, gamma, product_scale, tanh_recurrence_bound

sys.path.insert(0, str(SOLUTIONS))
import inference_cost  # noqa: E402  (the reference solution)

SEEDS = range(10)


def attention_inputs(seed, N=2, T=9, D=3, Dk=4, Dv=5):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(N, T, D)), rng.normal(size=(D, Dk)), rng.normal(size=(D, Dk)), rng.normal(size=(D, Dv))


@pytest.mark.parametrize("seed", SEEDS)
def test_cached_decoding_equals_torch_causal_attention_over_every_prefix(seed):
    x, Wq, Wk, Wv = attention_inputs(seed)
    y, (K, V), held = inference_cost.attention_decode(x, Wq, Wk, Wv)
    xt = torch.tensor(x)
    q, k, v = xt @ torch.tensor(Wq), xt @ torch.tensor(Wk), xt @ torch.tensor(Wv)
    for t in range(x.shape[1]):     # from scratch at every step: the prefix 0..t, its last row
        full = torch.nn.functional.scaled_dot_product_attention(q[:, : t + 1], k[:, : t + 1], v[:, : t + 1],
                                                                is_causal=True)
        # y is a softmax-weighted sum of the values, its scores D- and Dk-term products: numpy's and
        # torch's are each within checks.dot_attention_bound of the exact row (any order, FMA or not).
        bound = dot_attention_bound(x[:, : t + 1], Wq, Wk, Wv, causal=True)[:, -1]
        assert np.all(np.abs(y[:, t] - full[:, -1].numpy()) <= 2 * bound)
    # |K - k| <= 2 gamma_D |x| |Wk|: two D-term products (numpy's and torch's), each within gamma_D
    # of the exact one, in any summation order and with or without fused multiply-adds.
    assert np.all(np.abs(K - k.numpy()) <= 2 * gamma(x.shape[2]) * product_scale(x, Wk))
    assert np.all(np.abs(V - v.numpy()) <= 2 * gamma(x.shape[2]) * product_scale(x, Wv))


@pytest.mark.parametrize("seed", SEEDS)
def test_rnn_decoding_equals_torch_rnn_cell(seed):
    rng = np.random.default_rng(seed)
    N, T, D, H = 3, 8, 4, 5
    x, h0 = rng.normal(size=(N, T, D)), rng.normal(size=(N, H))
    Wx, Wh, b = rng.normal(size=(D, H)), rng.normal(size=(H, H)) * 0.5, rng.normal(size=H)
    cell = torch.nn.RNNCell(D, H)
    with torch.no_grad():
        cell.weight_ih.copy_(torch.tensor(Wx.T))
        cell.weight_hh.copy_(torch.tensor(Wh.T))
        cell.bias_ih.copy_(torch.tensor(b))
        cell.bias_hh.zero_()
    h, held = inference_cost.rnn_decode(x, h0, Wx, Wh, b)
    bound = 2 * tanh_recurrence_bound(x, h0, Wx, Wh, b, h)      # two computations: numpy's and torch's
    state = torch.tensor(h0)
    for t in range(T):
        state = cell(torch.tensor(x[:, t]), state)
        assert np.all(np.abs(h[:, t] - state.detach().numpy()) <= bound[:, t])
        assert held[t] == state.element_size() * state.nelement()


def test_held_bytes_match_torch_tensors_constant_and_linear():
    N, D, H, Dk, Dv = 1, 8, 16, 8, 8
    rng = np.random.default_rng(0)
    lengths = (16, 64, 256, 1024)
    x = rng.normal(size=(N, max(lengths), D))
    rnn_bytes, cache_bytes = [], []
    for T in lengths:
        _h, held = inference_cost.rnn_decode(x[:, :T], np.zeros((N, H)), rng.normal(size=(D, H)),
                                             rng.normal(size=(H, H)) * 0.3, np.zeros(H))
        rnn_bytes.append(int(held[-1]))
        _y, _cache, held = inference_cost.attention_decode(x[:, :T], *(rng.normal(size=(D, w)) for w in (Dk, Dk, Dv)))
        cache_bytes.append(int(held[-1]))
        torch_cache = (torch.zeros(N, T, Dk), torch.zeros(N, T, Dv))
        assert cache_bytes[-1] == sum(c.element_size() * c.nelement() for c in torch_cache)
    assert rnn_bytes == [torch.zeros(N, H).element_size() * N * H] * len(lengths)
    slope, intercept = np.polyfit(lengths, cache_bytes, 1)
    assert slope == pytest.approx(N * (Dk + Dv) * 8, rel=1e-9) and abs(intercept) < 1e-6


def torch_flops(step):
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        step()
    return counter.get_total_flops()


@pytest.mark.parametrize("D,H", [(3, 4), (16, 32), (128, 256)])
def test_rnn_macs_are_half_of_torch_flops(D, H):
    x, h = torch.randn(1, D), torch.randn(1, H)
    Wx, Wh, b = torch.randn(D, H), torch.randn(H, H), torch.randn(H)
    flops = torch_flops(lambda: torch.tanh(x @ Wx + h @ Wh + b))
    assert 2 * inference_cost.rnn_macs_per_token(D, H) == flops


@pytest.mark.parametrize("t,D,Dk,Dv", [(1, 3, 2, 5), (7, 16, 8, 4), (1024, 64, 32, 32)])
def test_attention_macs_are_half_of_torch_flops(t, D, Dk, Dv):
    x_t = torch.randn(1, D)
    Wq, Wk, Wv = torch.randn(D, Dk), torch.randn(D, Dk), torch.randn(D, Dv)
    K_cache, V_cache = torch.randn(1, t - 1, Dk), torch.randn(1, t - 1, Dv)

    def step():
        q, k, v = x_t @ Wq, x_t @ Wk, x_t @ Wv
        K, V = torch.cat([K_cache, k[:, None]], dim=1), torch.cat([V_cache, v[:, None]], dim=1)
        w = torch.softmax(torch.bmm(K, q[:, :, None])[:, :, 0] / Dk**0.5, dim=1)
        return torch.bmm(w[:, None], V)

    assert 2 * inference_cost.attention_macs_per_token(t, D, Dk, Dv) == torch_flops(step)
