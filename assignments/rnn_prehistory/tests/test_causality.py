"""Public test for causality.py: small fixed cases against plain loops and exact Jacobians."""

import math

import numpy as np

from autograder.authoring.checks import expect_array, expect_close, expect_tuple
from autograder.i18n import _
from autograder.units.rnn_prehistory.helpers.sequence_maps import LookaheadMap


def _loop_rnn(x, h0, Wx, Wh, b, reverse=False):
    """One Elman pass over one sequence x (T, D), one number at a time."""
    T, H = len(x), len(h0)
    h, prev = np.zeros((T, H)), list(h0)
    for t in (reversed(range(T)) if reverse else range(T)):
        prev = [math.tanh(sum(x[t, d] * Wx[d, j] for d in range(x.shape[1]))
                          + sum(prev[i] * Wh[i, j] for i in range(H)) + b[j]) for j in range(H)]
        h[t] = prev
    return h


def _loop_attention(x, Wq, Wk, Wv, causal):
    T = len(x)
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    y = np.zeros((T, v.shape[1]))
    for t in range(T):
        seen = range(t + 1) if causal else range(T)
        e = [float(q[t] @ k[s]) / math.sqrt(k.shape[1]) for s in seen]
        top = max(e)
        w = [math.exp(a - top) for a in e]
        for s, a in zip(seen, w):
            y[t] += a / sum(w) * v[s]
    return y


def test_causality_fixed_vector(causality):
    rng = np.random.default_rng(7)
    N, T, D, H = 2, 4, 3, 2
    x, h0 = rng.normal(size=(N, T, D)), rng.normal(size=(N, H))
    fwd = (rng.normal(size=(D, H)), rng.normal(size=(H, H)), rng.normal(size=H))
    bwd = (rng.normal(size=(D, H)), rng.normal(size=(H, H)), rng.normal(size=H))
    y = expect_array(causality.birnn_forward(x, h0, *fwd, *bwd), (N, T, 2 * H), "birnn_forward")
    # Any summation order is within ~1e-14 of these loops: states absolutely (|h| <= 1: scale 1),
    # attention outputs relative to the largest value they average. 1e-9 leaves a margin of 1e5.
    for n in range(N):
        expect_close(y[n, :, :H], _loop_rnn(x[n], h0[n], *fwd), _("birnn_forward: the forward half y[:, :, :H]"),
                     tol=1e-9, scale=1.0, hint=_("the first H features are rnn_forward over x with the forward weights"))
        expect_close(y[n, :, H:], _loop_rnn(x[n], h0[n], *bwd, reverse=True),
                     _("birnn_forward: the backward half y[:, :, H:]"), tol=1e-9, scale=1.0,
                     hint=_("run rnn_forward over x[:, ::-1] with the backward weights, then reverse its output "
                            "again so that y[:, t] belongs to x[:, t]"))

    Wq, Wk, Wv = rng.normal(size=(D, 2)), rng.normal(size=(D, 2)), rng.normal(size=(D, 3))
    for causal in (True, False):
        what = f"self_attention(causal={causal})"
        y = expect_array(causality.self_attention(x, Wq, Wk, Wv, causal=causal), (N, T, 3), what)
        for n in range(N):
            v = np.abs(x[n] @ Wv)
            seen = np.maximum.accumulate(v, axis=0) if causal else v.max(axis=0)
            expect_close(y[n], _loop_attention(x[n], Wq, Wk, Wv, causal), what, tol=1e-9, scale=seen,
                         hint=_("e = q k^T / sqrt(Dk); with causal=True set e[t, s] = -inf for s > t before the "
                                "softmax over s"))

    lookahead = LookaheadMap(A=rng.normal(size=(D, 2)), B=rng.normal(size=(D, 2)), lag=2, start=1)
    point = rng.normal(size=(5, D))
    measured = expect_array(causality.dependency_matrix(lookahead, point), (5, 5), "dependency_matrix")
    # central differences: truncation h^2 times a third derivative plus roundoff eps |y| / h, ~1e-10
    expect_close(measured, lookahead.dependency(point), "dependency_matrix", tol=1e-6,
                 hint=_("D[t, s] is the Frobenius norm of the block dy_t/dx_s, measured by central differences"))
    causal, leak = expect_tuple(causality.is_causal(measured), 2, "is_causal")
    assert not causal, _("is_causal: this map reads x_3 at t = 1, so it is not causal")
    assert leak is not None and tuple(int(i) for i in leak) == (1, 3), _(
        "is_causal: the first future position read is (t, s) = (1, 3); you returned {leak}").format(leak=leak)
    causal, leak = expect_tuple(causality.is_causal(np.tril(np.ones((4, 4)))), 2, "is_causal")
    assert causal and leak is None, _("is_causal: a lower-triangular matrix is causal, with no leak (None)")

    tokens = np.array([[0, 1, 2, 1], [2, 2, 0, 1], [1, 0, 0, 2], [0, 2, 1, 1]])
    cheat = np.zeros((4, 4, 3))
    cheat[:, :-1] = np.eye(3)[tokens[:, 1:]]                 # each state holds the next token
    error = causality.next_token_readout_error(cheat, tokens, 2)
    # an exact fit: the residual is rounding only, ~1e-15 (a wrong fit leaves O(1))
    assert abs(float(error)) < 1e-9, _(
        "next_token_readout_error: states that hold the next token must be read off exactly (error 0), you "
        "returned {error}").format(error=f"{float(error):.4g}")
