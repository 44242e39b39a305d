"""Public test for inference_cost.py: a small fixed case, token by token, against plain loops."""

import math

import numpy as np

from autograder.authoring.checks import expect_array, expect_close, expect_tuple, product_scale
from autograder.i18n import _


def _causal_attention_row(x, Wq, Wk, Wv, t):
    """Row t of causal self-attention over one sequence x (T, D), from scratch."""
    q, k, v = x[t] @ Wq, x[: t + 1] @ Wk, x[: t + 1] @ Wv
    e = [float(q @ k[s]) / math.sqrt(len(q)) for s in range(t + 1)]
    w = [math.exp(a - max(e)) for a in e]
    return sum(w[s] / sum(w) * v[s] for s in range(t + 1))


def test_inference_cost_fixed_vector(inference_cost):
    rng = np.random.default_rng(3)
    N, T, D, H, Dk, Dv = 2, 5, 3, 4, 2, 3
    x, h0 = rng.normal(size=(N, T, D)), rng.normal(size=(N, H))
    Wx, Wh, b = rng.normal(size=(D, H)), rng.normal(size=(H, H)) * 0.5, rng.normal(size=H)

    h1 = expect_array(inference_cost.rnn_decode_step(x[:, 0], h0, Wx, Wh, b), (N, H), "rnn_decode_step")
    # Any correct summation order is within ~1e-14 of these (a state absolutely, |h| <= 1: scale 1;
    # a key or value relative to |x||W|; an output relative to the values it averages): 1e-9 and
    # 1e-12 leave margins of 1e5 and more.
    expect_close(h1, np.tanh(x[:, 0] @ Wx + h0 @ Wh + b), "rnn_decode_step", tol=1e-9, scale=1.0,
                 hint=_("h_t = tanh(x_t Wx + h_{t-1} Wh + b)"))
    h, held = expect_tuple(inference_cost.rnn_decode(x, h0, Wx, Wh, b), 2, "rnn_decode")
    expect_array(h, (N, T, H), "rnn_decode: h")
    expect_close(h[:, 0], h1, "rnn_decode: h[:, 0]", tol=1e-9, scale=1.0)
    assert list(np.asarray(held)) == [N * H * 8] * T, _(
        "rnn_decode: the state is one (N, H) float64 array, {n} bytes after every token; you returned "
        "{held}").format(n=N * H * 8, held=list(np.asarray(held)))

    Wq, Wk, Wv = rng.normal(size=(D, Dk)), rng.normal(size=(D, Dk)), rng.normal(size=(D, Dv))
    y0, first = expect_tuple(inference_cost.attention_decode_step(x[:, 0], None, Wq, Wk, Wv), 2,
                             "attention_decode_step")
    expect_close(y0, x[:, 0] @ Wv, "attention_decode_step: the first token's output", tol=1e-9,
                 scale=product_scale(x[:, 0], Wv),
                 hint=_("with one token in the cache its weight is 1: y_1 = v_1 = x_1 Wv"))
    K1, V1 = expect_tuple(first, 2, "attention_decode_step: cache")
    expect_array(K1, (N, 1, Dk), "attention_decode_step: K")
    expect_array(V1, (N, 1, Dv), "attention_decode_step: V")
    y, cache, held = expect_tuple(inference_cost.attention_decode(x, Wq, Wk, Wv), 3, "attention_decode")
    expect_array(y, (N, T, Dv), "attention_decode: y")
    for n in range(N):
        for t in range(T):
            expect_close(y[n, t], _causal_attention_row(x[n], Wq, Wk, Wv, t), f"attention_decode: y[{n}, {t}]",
                         tol=1e-9, scale=np.abs(x[n, : t + 1] @ Wv).max(axis=0),
                         hint=_("token t attends over the keys and values of tokens 0..t (itself "
                                "included), scores scaled by 1/sqrt(Dk)"))
    K, V = expect_tuple(cache, 2, "attention_decode: cache")
    expect_close(K, x @ Wk, "attention_decode: the cached keys", tol=1e-12, scale=product_scale(x, Wk),
                 hint=_("the cache holds keys k_t = x_t Wk (not queries)"))
    expect_close(V, x @ Wv, "attention_decode: the cached values", tol=1e-12, scale=product_scale(x, Wv))
    want = [N * (t + 1) * (Dk + Dv) * 8 for t in range(T)]
    assert list(np.asarray(held)) == want, _(
        "attention_decode: after token t the cache holds t keys and t values, {want} bytes; you returned "
        "{held}").format(want=want, held=list(np.asarray(held)))

    assert int(inference_cost.rnn_macs_per_token(3, 4)) == 3 * 4 + 4 * 4, _(
        "rnn_macs_per_token(D=3, H=4): x_t Wx is D*H multiply-adds, h Wh is H*H")
    assert int(inference_cost.attention_macs_per_token(1, 3, 2, 5)) == 3 * (2 + 2 + 5) + 2 + 5, _(
        "attention_macs_per_token(t=1, D=3, Dk=2, Dv=5): three projections of x_t, one score and one value row")
