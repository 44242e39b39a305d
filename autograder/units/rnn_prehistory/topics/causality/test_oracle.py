"""The reference causality.py against torch: nn.RNN(bidirectional=True), scaled_dot_product_attention
(is_causal), autograd's Jacobian for the dependency matrices, and torch.linalg.lstsq for the readout."""

import sys

import numpy as np
import pytest
from helpers import SOLUTIONS, torch  # torch: imported on first use

from autograder.authoring.checks import dot_attention_bound, tanh_recurrence_bound

sys.path.insert(0, str(SOLUTIONS))
import causality  # noqa: E402  (the reference solution)

SEEDS = range(10)


def rnn_inputs(seed, N=3, T=6, D=3, H=4):
    rng = np.random.default_rng(seed)
    weights = [(rng.normal(size=(D, H)), rng.normal(size=(H, H)) * 0.5, rng.normal(size=H)) for _ in range(2)]
    return rng.normal(size=(N, T, D)), rng.normal(size=(N, H)), weights


def torch_birnn(x, h0, weights):
    N, T, D = x.shape
    H = h0.shape[1]
    rnn = torch.nn.RNN(D, H, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for suffix, (Wx, Wh, b) in zip(("", "_reverse"), weights):
            getattr(rnn, f"weight_ih_l0{suffix}").copy_(torch.tensor(Wx.T))
            getattr(rnn, f"weight_hh_l0{suffix}").copy_(torch.tensor(Wh.T))
            getattr(rnn, f"bias_ih_l0{suffix}").copy_(torch.tensor(b))
            getattr(rnn, f"bias_hh_l0{suffix}").zero_()
    return rnn


def attention_inputs(seed, N=2, T=7, D=3, Dk=4, Dv=2, scale=1.0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(N, T, D)), rng.normal(size=(D, Dk)) * scale, rng.normal(size=(D, Dk)) * scale,
            rng.normal(size=(D, Dv)))


def torch_attention(x, Wq, Wk, Wv, causal):
    x = torch.as_tensor(x)
    q, k, v = x @ torch.tensor(Wq), x @ torch.tensor(Wk), x @ torch.tensor(Wv)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def autograd_dependency(torch_map, x):
    """||dy_t/dx_s||_F from autograd's Jacobian of a map (T, D) -> (T, K)."""
    J = torch.autograd.functional.jacobian(torch_map, torch.tensor(x))          # (T, K, T, D)
    return torch.sqrt((J**2).sum(dim=(1, 3))).numpy()


@pytest.mark.parametrize("seed", SEEDS)
def test_birnn_matches_torch_bidirectional_rnn(seed):
    x, h0, weights = rnn_inputs(seed)
    y = causality.birnn_forward(x, h0, *weights[0], *weights[1])
    want, _ = torch_birnn(x, h0, weights)(torch.tensor(x), torch.tensor(np.stack([h0, h0])))
    H = h0.shape[1]
    # Each pass is a tanh recurrence (the backward one over x reversed in time): two computations
    # differ by twice its bound.
    bound = np.concatenate([tanh_recurrence_bound(x, h0, *weights[0], y[:, :, :H]),
                            tanh_recurrence_bound(x[:, ::-1], h0, *weights[1], y[:, ::-1, H:])[:, ::-1]], axis=2)
    assert np.all(np.abs(y - want.detach().numpy()) <= 2 * bound)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("causal", [True, False])
def test_self_attention_matches_torch_sdpa(seed, causal):
    x, Wq, Wk, Wv = attention_inputs(seed)
    diff = np.abs(causality.self_attention(x, Wq, Wk, Wv, causal) - torch_attention(x, Wq, Wk, Wv, causal).numpy())
    assert np.all(diff <= 2 * dot_attention_bound(x, Wq, Wk, Wv, causal))       # numpy's and torch's


@pytest.mark.parametrize("seed", SEEDS)
def test_dependency_matrices_match_autograd_and_the_leaks_are_where_autograd_says(seed):
    x, h0, weights = rnn_inputs(seed, N=1)
    xa, Wq, Wk, Wv = attention_inputs(seed, N=1, scale=0.5)     # no saturated softmax: every future entry is clear
    rnn = torch_birnn(x, h0, weights)
    h0_pair = torch.tensor(np.stack([h0, h0]))
    H = h0.shape[1]
    maps = {   # name: (the reference as a map (T, D) -> (T, K), the same map in torch, its point, causal?)
        "rnn": (lambda z: causality.birnn_forward(z[None], h0, *weights[0], *weights[1])[0, :, :H],
                lambda z: rnn(z[None], h0_pair)[0][0, :, :H], x[0], True),
        "birnn": (lambda z: causality.birnn_forward(z[None], h0, *weights[0], *weights[1])[0],
                  lambda z: rnn(z[None], h0_pair)[0][0], x[0], False),
        "causal_attention": (lambda z: causality.self_attention(z[None], Wq, Wk, Wv, True)[0],
                             lambda z: torch_attention(z[None], Wq, Wk, Wv, True)[0], xa[0], True),
        "open_attention": (lambda z: causality.self_attention(z[None], Wq, Wk, Wv, False)[0],
                           lambda z: torch_attention(z[None], Wq, Wk, Wv, False)[0], xa[0], False),
    }
    for name, (ours, theirs, point, causal) in maps.items():
        D = causality.dependency_matrix(ours, point)
        exact = autograd_dependency(theirs, point)
        # Central differences at h = 1e-5: truncation h^2/6 times a third derivative (~1e-10 here) plus
        # roundoff eps |y| / h ~ 1e-11 per Jacobian entry; the largest error seen is 1% of rtol 1e-6
        # with atol 1e-9 (a map read the wrong way is off by O(1)).
        np.testing.assert_allclose(D, exact, rtol=1e-6, atol=1e-9, err_msg=name)
        future = np.triu(np.ones_like(exact, dtype=bool), k=1)
        if causal:
            # exact zeros, both: a causal map never reads x_s for s > t, and a matrix product's row t
            # does not depend on the values of the other rows, whatever the kernel
            assert np.all(exact[future] == 0.0) and np.all(D[future] == 0.0), name
            assert causality.is_causal(D) == (True, None), name
        else:
            first = tuple(int(i) for i in np.argwhere(future & (exact > causality.CAUSAL_TOL))[0])   # autograd's
            assert causality.is_causal(D) == (False, first), name
            assert first == (0, 1), name


def test_is_causal_tolerance_sits_between_round_off_and_the_measuring_error():
    """The docstring's claim, measured. A map that touches the next input but cancels it
    ((x_{t+1} + 1) - 1 - x_{t+1}: autograd says exactly zero) leaves finite-difference round-off
    (not zero: ~1e-11) far below CAUSAL_TOL, so it is causal; and where autograd's Jacobian block is
    zero the measured entry is exactly zero, elsewhere within CAUSAL_TOL of autograd's."""
    def cancelled(z, lib):
        following = lib.roll(z, -1, 0)
        return lib.tanh(z) + ((following + 1.0) - 1.0 - following)

    rng = np.random.default_rng(0)
    round_off = 0.0
    for _ in range(20):
        x = rng.normal(size=(6, 3))
        D = causality.dependency_matrix(lambda z: cancelled(z, np), x)
        exact = autograd_dependency(lambda z: cancelled(z, torch), x)
        assert np.all(exact[np.triu_indices(6, k=1)] == 0.0)
        round_off = max(round_off, np.max(D[np.triu_indices(6, k=1)]))
        assert causality.is_causal(D) == (True, None)
    assert 0.0 < round_off < causality.CAUSAL_TOL / 100
    for seed in SEEDS:
        xa, Wq, Wk, Wv = attention_inputs(seed, N=1)
        for causal in (True, False):
            def theirs(z, Wq=Wq, Wk=Wk, Wv=Wv, causal=causal):
                return torch_attention(z[None], Wq, Wk, Wv, causal)[0]

            def ours(z, Wq=Wq, Wk=Wk, Wv=Wv, causal=causal):
                return causality.self_attention(z[None], Wq, Wk, Wv, causal)[0]

            exact, D = autograd_dependency(theirs, xa[0]), causality.dependency_matrix(ours, xa[0])
            assert np.all(D[exact == 0.0] == 0.0)
            assert np.max(np.abs(D - exact)) < causality.CAUSAL_TOL


@pytest.mark.parametrize("seed", SEEDS)
def test_readout_error_matches_torch_lstsq(seed):
    rng = np.random.default_rng(seed)
    N, T, K, V, n_train = 20, 6, 5, 3, 12
    states, tokens = rng.normal(size=(N, T, K)), rng.integers(0, V, size=(N, T))
    features = torch.tensor(np.concatenate([states[:, :-1], np.ones((N, T - 1, 1))], axis=2))
    targets = torch.nn.functional.one_hot(torch.tensor(tokens[:, 1:]), V).double()
    W = torch.linalg.lstsq(features[:n_train].reshape(-1, K + 1), targets[:n_train].reshape(-1, V),
                           driver="gelsd").solution
    want = ((features[n_train:] @ W - targets[n_train:]) ** 2).sum(dim=2).mean().item()
    # A least-squares residual on well-conditioned random features (condition number ~5) is within
    # ~kappa^2 u ~ 1e-14 relative in any factorisation: 1e-10 is a margin of 1e4.
    assert causality.next_token_readout_error(states, tokens, n_train) == pytest.approx(want, rel=1e-10)
