"""Public test for causality.py: small fixed cases with expected values.

The expected values were computed with PyTorch (float64: its RNN, its scaled dot-product
attention and autograd's Jacobian) and written below by the instructor's generator, to 13
significant digits.
"""

import numpy as np

from autograder.authoring.checks import expect_array, expect_close, expect_tuple
from autograder.i18n import _
from autograder.units.rnn_prehistory.helpers.sequence_maps import LookaheadMap

# Inputs: a seeded generator's draws (the same on every machine). N = 2, T = 4, D = 3, H = 2.
N, T, D, H = 2, 4, 3, 2
_draw = np.random.default_rng(7)
X, H0 = _draw.normal(size=(N, T, D)), _draw.normal(size=(N, H))
FORWARD = (_draw.normal(size=(D, H)), _draw.normal(size=(H, H)), _draw.normal(size=H))     # Wx_f, Wh_f, b_f
BACKWARD = (_draw.normal(size=(D, H)), _draw.normal(size=(H, H)), _draw.normal(size=H))    # Wx_b, Wh_b, b_b
WQ, WK, WV = _draw.normal(size=(D, 2)), _draw.normal(size=(D, 2)), _draw.normal(size=(D, 3))
LOOKAHEAD = LookaheadMap(A=_draw.normal(size=(D, 2)), B=_draw.normal(size=(D, 2)), lag=2, start=1)
POINT = _draw.normal(size=(5, D))

# BEGIN EXPECTED VALUES: PyTorch's (float64), as computed; generated, do not edit
BIRNN_Y = np.array([[[-0.5371604795502521, -0.3135323663109794, 0.6730355035889941, -0.9892079234611204],
                     [0.5123942277555585, 0.7456910604287975, 0.21968132284839867, -0.9409173756847447],
                     [-0.9269462399207317, -0.10101320252184831, -0.32089588789196155, -0.975396288643694],
                     [-0.9897115856836514, -0.0454569512536655, 0.682191524337027, -0.9709687565400298]],
                    [[-0.9456395868493601, 0.9582777251296524, 0.9972192103747227, -0.9933619175033856],
                     [0.6925818010975784, 0.9888192091891251, 0.991820117055184, -0.8761177572187944],
                     [0.9993110225829119, 0.9700908394279113, 0.6951332802730829, -0.4461515425905999],
                     [0.9721678401692417, 0.2901575720838934, 0.685957049819497, -0.9960172469106393]]])
ATTENTION_CAUSAL = np.array([[[0.16407661748872457, 0.150558313707071, -0.10931784991250518],
                              [0.06636566617127447, 0.46426857271835376, -0.09370448401759703],
                              [-0.13525586830314515, 1.5371176275453422, -0.15557334206950005],
                              [0.3167013876395268, 0.540289364100923, -0.43054330231332394]],
                             [[-1.1455822288392659, 1.269100375859179, 0.8476804097861043],
                              [-1.6900775467034734, 1.9096150077089447, 1.3745807667410446],
                              [-1.5399707299424403, 1.7334082823819073, 1.2292234599451795],
                              [-1.502940661676953, 1.76717935247195, 1.1118086584665146]]])
ATTENTION_FULL = np.array([[[0.44372586185996543, 0.2571239272407966, -0.4884461368017473],
                            [0.8498118739224727, -0.60205145058848, -0.7080296007414004],
                            [0.08072360574927195, 1.0713021537930685, -0.3161688076046299],
                            [0.3167013876395268, 0.540289364100923, -0.43054330231332394]],
                           [[-1.5120531847362766, 1.8609647748261802, 1.0995693935353592],
                            [-1.523883495435288, 1.7661090420885814, 1.141965804596457],
                            [-1.3979123989819606, 1.5380523621401994, 1.030766909483837],
                            [-1.502940661676953, 1.76717935247195, 1.1118086584665146]]])
DEPENDENCY = np.array([[0.8139819307882808, 0.0, 0.0, 0.0, 0.0],
                       [0.0, 0.7904018413188877, 0.0, 1.628743125155205, 0.0],
                       [0.0, 0.0, 0.9915793166433335, 0.0, 0.6662030052064931],
                       [0.0, 0.0, 0.0, 1.3609613384042452, 0.0],
                       [0.0, 0.0, 0.0, 0.0, 0.6919773348213722]])
# END EXPECTED VALUES


def test_causality_fixed_vector(causality):
    x, h0, fwd, bwd = X.copy(), H0.copy(), [a.copy() for a in FORWARD], [a.copy() for a in BACKWARD]
    y = expect_array(causality.birnn_forward(x, h0, *fwd, *bwd), (N, T, 2 * H), "birnn_forward")
    # The written values carry 5e-13 of rounding (relative); any summation order is within ~1e-14
    # of the exact ones: states absolutely (|h| <= 1: scale 1), attention outputs relative to the
    # largest value they average. 1e-9 leaves a margin of 1e3 and more.
    for n in range(N):
        expect_close(y[n, :, :H], BIRNN_Y[n, :, :H], _("birnn_forward: the forward half y[:, :, :H]"),
                     tol=1e-9, scale=1.0, hint=_("the first H features are rnn_forward over x with the forward weights"))
        expect_close(y[n, :, H:], BIRNN_Y[n, :, H:],
                     _("birnn_forward: the backward half y[:, :, H:]"), tol=1e-9, scale=1.0,
                     hint=_("run rnn_forward over x[:, ::-1] with the backward weights, then reverse its output "
                            "again so that y[:, t] belongs to x[:, t]"))

    Wq, Wk, Wv = WQ.copy(), WK.copy(), WV.copy()
    for causal in (True, False):
        what = f"self_attention(causal={causal})"
        y = expect_array(causality.self_attention(x, Wq, Wk, Wv, causal=causal), (N, T, 3), what)
        for n in range(N):
            v = np.abs(x[n] @ Wv)
            seen = np.maximum.accumulate(v, axis=0) if causal else v.max(axis=0)
            expect_close(y[n], (ATTENTION_CAUSAL if causal else ATTENTION_FULL)[n], what, tol=1e-9, scale=seen,
                         hint=_("e = q k^T / sqrt(Dk); with causal=True set e[t, s] = -inf for s > t before the "
                                "softmax over s"))

    measured = expect_array(causality.dependency_matrix(LOOKAHEAD, POINT.copy()), (5, 5), "dependency_matrix")
    # central differences: truncation h^2 times a third derivative plus roundoff eps |y| / h, ~1e-10
    expect_close(measured, DEPENDENCY, "dependency_matrix", tol=1e-6,
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
