"""Public test for inference_cost.py: a small fixed case, token by token, with expected values.

The expected values were computed with PyTorch (float64: its RNN cell and its causal
scaled dot-product attention) and written below by the instructor's generator, to 13
significant digits.
"""

import numpy as np

from autograder.authoring.checks import expect_array, expect_close, expect_tuple, product_scale
from autograder.i18n import _

# Inputs: a seeded generator's draws (the same on every machine).
N, T, D, H, DK, DV = 2, 5, 3, 4, 2, 3
_draw = np.random.default_rng(3)
X, H0 = _draw.normal(size=(N, T, D)), _draw.normal(size=(N, H))
WX, WH, B = _draw.normal(size=(D, H)), _draw.normal(size=(H, H)) * 0.5, _draw.normal(size=H)
WQ, WK, WV = _draw.normal(size=(D, DK)), _draw.normal(size=(D, DK)), _draw.normal(size=(D, DV))

# BEGIN EXPECTED VALUES: PyTorch's (float64), as computed; generated, do not edit
RNN_H1 = np.array([[0.5529222166677641, 0.9442010334085584, -0.9965833964964288, 0.8850408179643815],
                   [-0.7676786815846615, 0.46103681015996567, -0.724692986151779, -0.9844678255629761]])
ATTENTION_Y = np.array([[[3.74448872003604, 3.7568884437281183, 2.5084449012046743],
                         [0.9864287861328134, 1.2975205027341257, 1.0457461991771009],
                         [0.5740984550358839, 1.3808264512016282, 1.1962746535528532],
                         [1.8741974396329792, 4.107891116780656, 1.1899168999228094],
                         [-1.763577098814574, -0.09185240506731929, 0.34668545998531936]],
                        [[-0.9294111384848283, -0.4819784745051265, -0.37986468005973645],
                         [-0.17696442634526138, 0.22236430810042335, -0.02286596792011028],
                         [0.23397875185796504, 1.6518166620189132, 0.36338306680984],
                         [0.4231855738171055, 1.108682220571304, 0.07699460519828247],
                         [0.26743470719988516, 0.07595166270191198, -0.17772333066658497]]])
KEYS = np.array([[[4.523973724692665, 4.6616526474276165],
                  [-0.9923608884998414, 0.6277311819840876],
                  [-4.208826138444383, -0.20907597894646235],
                  [3.9949015084391073, -0.7253430974919306],
                  [-1.92137820808124, 0.35962264890904205]],
                 [[-1.1300616842248463, -0.9991880398913399],
                  [1.4617500563180603, 0.3408224392868574],
                  [1.1207444016127166, -1.35038640301231],
                  [2.796204879702886, 0.531929389240447],
                  [1.3973052854890509, 1.1788366904455536]]])
VALUES = np.array([[[3.74448872003604, 3.7568884437281183, 2.5084449012046743],
                    [-0.4338798274728245, 0.031028274744024142, 0.29250529238524603],
                    [-2.559331018068458, -0.8493615975361573, -0.003853860058259495],
                    [1.8766292425552382, 4.115470499985647, 1.1901035617142413],
                    [-1.23055424995628, 1.7554485756503482, 1.0655972489253958]],
                   [[-0.9294111384848283, -0.4819784745051265, -0.37986468005973645],
                    [0.8826925165264362, 1.2142773668036468, 0.47988878907700927],
                    [0.12421791824558137, 2.0605712116973844, 0.4049513126467607],
                    [2.1679008958148875, -3.4665657249267294, -1.650407934849616],
                    [1.325760073985896, -1.5756501623110415, -0.49701220737173946]]])
# END EXPECTED VALUES


def test_inference_cost_fixed_vector(inference_cost):
    x, h0, Wx, Wh, b = (a.copy() for a in (X, H0, WX, WH, B))
    Dk, Dv = DK, DV

    h1 = expect_array(inference_cost.rnn_decode_step(x[:, 0], h0, Wx, Wh, b), (N, H), "rnn_decode_step")
    # The written values carry 5e-13 of rounding (relative); any correct summation order is within
    # ~1e-14 of the exact ones (a state absolutely, |h| <= 1: scale 1; a key or value relative to
    # |x||W|; an output relative to the values it averages): 1e-9 leaves a margin of 1e3 and more,
    # and 1e-12 for the keys and values, products of three terms, one of 1e0 over 5e-13 + 3e-16.
    expect_close(h1, RNN_H1, "rnn_decode_step", tol=1e-9, scale=1.0,
                 hint=_("h_t = tanh(x_t Wx + h_{t-1} Wh + b)"))
    h, held = expect_tuple(inference_cost.rnn_decode(x, h0, Wx, Wh, b), 2, "rnn_decode")
    expect_array(h, (N, T, H), "rnn_decode: h")
    expect_close(h[:, 0], h1, "rnn_decode: h[:, 0]", tol=1e-9, scale=1.0)
    assert list(np.asarray(held)) == [N * H * 8] * T, _(
        "rnn_decode: the state is one (N, H) float64 array, {n} bytes after every token; you returned "
        "{held}").format(n=N * H * 8, held=list(np.asarray(held)))

    Wq, Wk, Wv = WQ.copy(), WK.copy(), WV.copy()
    y0, first = expect_tuple(inference_cost.attention_decode_step(x[:, 0], None, Wq, Wk, Wv), 2,
                             "attention_decode_step")
    expect_close(y0, ATTENTION_Y[:, 0], "attention_decode_step: the first token's output", tol=1e-9,
                 scale=product_scale(x[:, 0], Wv),
                 hint=_("with one token in the cache its weight is 1: y_1 = v_1 = x_1 Wv"))
    K1, V1 = expect_tuple(first, 2, "attention_decode_step: cache")
    expect_array(K1, (N, 1, Dk), "attention_decode_step: K")
    expect_array(V1, (N, 1, Dv), "attention_decode_step: V")
    y, cache, held = expect_tuple(inference_cost.attention_decode(x, Wq, Wk, Wv), 3, "attention_decode")
    expect_array(y, (N, T, Dv), "attention_decode: y")
    for n in range(N):
        for t in range(T):
            expect_close(y[n, t], ATTENTION_Y[n, t], f"attention_decode: y[{n}, {t}]",
                         tol=1e-9, scale=np.abs(VALUES[n, : t + 1]).max(axis=0),
                         hint=_("token t attends over the keys and values of tokens 0..t (itself "
                                "included), scores scaled by 1/sqrt(Dk)"))
    K, V = expect_tuple(cache, 2, "attention_decode: cache")
    expect_close(K, KEYS, "attention_decode: the cached keys", tol=1e-12, scale=product_scale(x, Wk),
                 hint=_("the cache holds keys k_t = x_t Wk (not queries)"))
    expect_close(V, VALUES, "attention_decode: the cached values", tol=1e-12, scale=product_scale(x, Wv))
    want = [N * (t + 1) * (Dk + Dv) * 8 for t in range(T)]
    assert list(np.asarray(held)) == want, _(
        "attention_decode: after token t the cache holds t keys and t values, {want} bytes; you returned "
        "{held}").format(want=want, held=list(np.asarray(held)))

    assert int(inference_cost.rnn_macs_per_token(3, 4)) == 3 * 4 + 4 * 4, _(
        "rnn_macs_per_token(D=3, H=4): x_t Wx is D*H multiply-adds, h Wh is H*H")
    assert int(inference_cost.attention_macs_per_token(1, 3, 2, 5)) == 3 * (2 + 2 + 5) + 2 + 5, _(
        "attention_macs_per_token(t=1, D=3, Dk=2, Dv=5): three projections of x_t, one score and one value row")
