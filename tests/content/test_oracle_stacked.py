"""The stacked forward passes of the hidden suites' gradient checks (the unit's stacked.py)
are the reference solution's forward passes, and finite differences over a stack of
probes are the differences taken one probe at a time.

- each stacked function, on a stack of random inputs, equals the reference function on
  every slice of the stack (and on unstacked inputs: no leading axis at all);
- `checks.finite_differences_stacked` equals central differences taken entry by entry with
  the reference forward, and both match the reference's analytic backward pass (which
  the topics' test_oracle.py check against torch autograd).

Largest differences measured when this file was written (100 seeds; run with -s to print
them): stacked vs reference forward 0 and the two finite differences 0 (bit-identical: the
same float operations), finite differences vs the analytic backward 8.5e-9 (relative to the
largest gradient entry).
"""

import importlib
import sys

import numpy as np
import pytest
from helpers import SOLUTIONS

from autograder.authoring.checks import finite_differences_stacked
from autograder.units.rnn_prehistory import stacked

SEEDS = range(100)
P = 5                                       # probes in a stack


@pytest.fixture(scope="module")
def ref():
    sys.path.insert(0, str(SOLUTIONS))
    try:
        return {name: importlib.import_module(name) for name in ("bptt", "gru_lstm", "gate_derivative")}
    finally:
        sys.path.remove(str(SOLUTIONS))


def _inputs(rng, N, D, H, blocks, T=None, cell=False):
    x = rng.normal(size=(N, D) if T is None else (N, T, D))
    h = rng.normal(size=(N, H))
    args = [x, h] + ([rng.normal(size=(N, H))] if cell else [])
    return args + [rng.normal(size=(D, blocks * H)), rng.normal(size=(H, blocks * H)) / 2, rng.normal(size=blocks * H)]


CASES = {
    # stacked function, reference (module, function), the reference's output used, inputs
    "rnn_step": (stacked.rnn_step, ("bptt", "rnn_step_forward"), lambda out: out[0],
                 lambda rng: _inputs(rng, 3, 4, 5, 1)),
    "rnn_forward": (stacked.rnn_forward, ("bptt", "rnn_forward"), lambda out: out[0],
                    lambda rng: _inputs(rng, 2, 3, 4, 1, T=6)),
    "gru_step": (stacked.gru_step, ("gru_lstm", "gru_step_forward"), lambda out: out[0],
                 lambda rng: _inputs(rng, 3, 2, 4, 3)),
    "lstm_step": (stacked.lstm_step, ("gru_lstm", "lstm_step_forward"), lambda out: out[:2],
                  lambda rng: _inputs(rng, 2, 3, 4, 4, cell=True)),
    "lstm_forward": (stacked.lstm_forward, ("gru_lstm", "lstm_forward"), lambda out: out[0],
                     lambda rng: _inputs(rng, 2, 3, 2, 4, T=5)),
}


@pytest.mark.parametrize("name", CASES)
def test_stacked_forward_is_the_reference_on_every_slice(ref, name):
    function, (module, reference_name), output, inputs = CASES[name]
    reference = getattr(ref[module], reference_name)
    worst = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        probes = [inputs(rng) for _ in range(P)]
        expected = [output(reference(*args)) for args in probes]
        got = function(*(np.stack(column) for column in zip(*probes)))
        for p, want in enumerate(expected):
            for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                worst = max(worst, float(np.max(np.abs(g[p] - w))))
        plain = function(*probes[0])            # no leading axis: the plain forward pass
        for g, w in zip(plain if isinstance(plain, tuple) else (plain,),
                        expected[0] if isinstance(expected[0], tuple) else (expected[0],)):
            worst = max(worst, float(np.max(np.abs(g - w))))
    print(f"{name}: largest difference {worst:.1e}")
    # Bit-identical on one machine, but a stacked (batched) product may take another kernel than
    # the reference's 2-D one: the two are then within the forward passes' rounding bounds (a step:
    # ~50 roundings of terms <= ~20, ~3e-13; a sequence of <= 6 steps amplified by |Wh|: ~1e-11,
    # see gru_lstm_step/test_oracle.py and checks.tanh_recurrence_bound), below 1e-10.
    assert worst < 1e-10


def _one_by_one(loss, arrays, h=1e-6):
    """Central differences entry by entry, the arrays probed in place (the textbook loop)."""
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            old = a[i]
            a[i] = old + h
            plus = loss()
            a[i] = old - h
            minus = loss()
            a[i] = old
            g[i] = (plus - minus) / (2 * h)
        grads.append(g)
    return grads


def test_stacked_finite_differences_match_one_probe_at_a_time(ref):
    worst_pair = worst_backward = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        x, h0, Wx, Wh, b = _inputs(rng, 2, 3, 4, 1, T=4)
        dh = rng.normal(size=(2, 4, 4))
        arrays = [x, h0, Wx, Wh, b]
        stacked_fd = finite_differences_stacked(
            lambda *probes, dh=dh: np.sum(dh * stacked.rnn_forward(*probes), axis=(1, 2, 3)), arrays)
        loop_fd = _one_by_one(lambda dh=dh, x=x, h0=h0, Wx=Wx, Wh=Wh, b=b: float(np.sum(dh * ref["bptt"].rnn_forward(x, h0, Wx, Wh, b)[0])), arrays)
        _h, cache = ref["bptt"].rnn_forward(x, h0, Wx, Wh, b)
        analytic = ref["bptt"].rnn_backward(dh, cache)
        for s, lp, an in zip(stacked_fd, loop_fd, analytic):
            scale = max(float(np.max(np.abs(an))), 1e-12)
            worst_pair = max(worst_pair, float(np.max(np.abs(s - lp))) / scale)
            worst_backward = max(worst_backward, float(np.max(np.abs(s - an))) / scale)
    print(f"stacked vs one by one {worst_pair:.1e}, stacked vs the analytic backward {worst_backward:.1e}")
    # Two central differences of the same loss computed two ways differ by their roundoff,
    # ~2 eps F / h with F = sum |dh| |h| ~ 20 the loss's terms: ~4e-9 absolute, ~1.5e-9 of the
    # largest gradient (under 1e-8); against the analytic gradient the truncation h^2 times a third
    # derivative (~1e-12) adds little, and 1e-7 is above both.
    assert worst_pair < 1e-8 and worst_backward < 1e-7


def test_stacked_finite_differences_leave_the_arrays_alone():
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(2, 3)), rng.normal(size=4)]
    copies = [a.copy() for a in arrays]
    grads = finite_differences_stacked(lambda a, b: np.sum(a ** 2, axis=(1, 2)) + np.sum(3 * b, axis=1), arrays)
    assert all(np.array_equal(a, c) for a, c in zip(arrays, copies))
    # a quadratic and a linear map: central differences are exact but for roundoff eps |f| / h ~ 1e-9
    assert np.allclose(grads[0], 2 * arrays[0], atol=1e-8) and np.allclose(grads[1], 3.0, atol=1e-8)
