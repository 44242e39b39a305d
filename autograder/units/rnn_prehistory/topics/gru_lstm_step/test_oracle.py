"""Outside-oracle checks of the reference gru_lstm.py, with torch in float64.

- gru_step_forward/backward against torch autograd of the seeds' GRU equations;
- lstm_step_forward/backward against torch autograd, and against torch.nn.LSTMCell after
  reordering the gate blocks (i, f, o, g -> i, f, g, o) and transposing the weights
  (PyTorch stores (4H, D) for column vectors);
- lstm_forward/backward over a sequence against torch autograd of a step loop, and against
  torch.nn.LSTM(batch_first=True) with c0 = 0;
- the hidden suite's convention recognisers: its "PyTorch GRU" against torch.nn.GRUCell and
  its "PyTorch gate order" LSTM against torch.nn.LSTMCell with the weights NOT reordered, so
  that the feedback "your GRU matches PyTorch's convention" is itself checked, and the
  messages produced for nn.GRUCell, d2l's GRU and nn.LSTMCell outputs;
- the LSTM and GRU parameter counts at d_x = 128, d_h = 256, which the course notes get wrong.

Largest absolute differences measured when this file was written (200 random shapes and
seeds each; run with -s to print them): GRU step vs autograd 8.9e-16 forward, 1.9e-15
backward; LSTM step vs autograd 2.4e-15 and vs nn.LSTMCell 2.4e-15; sequence vs autograd
2.7e-15 and vs nn.LSTM 1.8e-15; the recognisers vs nn.GRUCell / nn.LSTMCell 8.9e-16.
Tolerances below, relative to the largest entry of the compared array (floor 1), hold for any
summation order, FMA or not: a step's value or gradient ends a chain of at most ~50 roundings
(a (D+H+1)-term pre-activation, the gates, the products and, backwards, sums over N, D and up
to 4H terms), each relative to a term no larger than ~50 times that entry (|W| sums of up to 10
normal entries): the first-order worst case 50 u 50 ~ 3e-13 is below TOL = 1e-12. A sequence
of T <= 7 steps chains 7 of them forwards and back, amplified by at most ~(1 + |Wh|)^T with
|Wh| ~ 2 at weights 0.5: ~1e-11, below SEQUENCE_TOL = 1e-10. Parameter counts: nn.LSTM(128, 256) 395,264 and nn.GRU 296,448
(two bias vectors each); with one bias, as here, 394,240 and 295,680, a ratio of 0.75.
"""

import importlib
import importlib.util
import sys

import numpy as np
import pytest
from helpers import SOLUTIONS, UNIT, torch  # torch: imported on first use

SEEDS = range(200)
TOL = 1e-12
SEQUENCE_TOL = 1e-10


@pytest.fixture(scope="module")
def gl():
    sys.path.insert(0, str(SOLUTIONS))
    try:
        return importlib.import_module("gru_lstm")
    finally:
        sys.path.remove(str(SOLUTIONS))


@pytest.fixture(scope="module")
def hidden():
    spec = importlib.util.spec_from_file_location("hidden_test_gru_lstm_step",
                                                  UNIT.test_file("gru_lstm_step", "hidden"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def t64(a, grad=False):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=grad)


def maxdiff(ours, theirs):
    """max |ours - theirs| relative to the largest |theirs| (floor 1): the scale its rounding is bounded at."""
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else theirs
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    return float(np.max(np.abs(ours - theirs)) / max(1.0, float(np.max(np.abs(theirs)))))


def sizes(rng):
    return int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(1, 6))


def cols(H, order):
    """Column indices of the blocks `order` (block k = columns k*H .. (k+1)*H)."""
    return np.concatenate([np.arange(k * H, (k + 1) * H) for k in order])


# ----------------------------------------------------------------------------- GRU
def torch_gru_step(x, h, Wx, Wh, b):
    """The seeds' GRU, written directly in torch (blocks u, r, c)."""
    H = h.shape[1]
    u = torch.sigmoid(x @ Wx[:, :H] + h @ Wh[:, :H] + b[:H])
    r = torch.sigmoid(x @ Wx[:, H:2 * H] + h @ Wh[:, H:2 * H] + b[H:2 * H])
    c = torch.tanh(x @ Wx[:, 2 * H:] + (r * h) @ Wh[:, 2 * H:] + b[2 * H:])
    return u * c + (1 - u) * h


def test_gru_step_matches_torch_autograd(gl):
    worst_f = worst_b = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        N, D, H = sizes(rng)
        x, h = rng.normal(size=(N, D)), rng.normal(size=(N, H))
        Wx, Wh, b = rng.normal(size=(D, 3 * H)), rng.normal(size=(H, 3 * H)), rng.normal(size=3 * H)
        dnext = rng.normal(size=(N, H))
        next_h, cache = gl.gru_step_forward(x, h, Wx, Wh, b)
        grads = gl.gru_step_backward(dnext, cache)

        leaves = [t64(a, True) for a in (x, h, Wx, Wh, b)]
        out = torch_gru_step(*leaves)
        out.backward(t64(dnext))
        worst_f = max(worst_f, maxdiff(next_h, out))
        for ours, leaf in zip(grads, leaves):
            worst_b = max(worst_b, maxdiff(ours, leaf.grad))
    print(f"GRU step vs torch autograd: forward {worst_f:.2e}, backward {worst_b:.2e}")
    assert worst_f <= TOL and worst_b <= TOL


def test_hidden_suite_pytorch_gru_convention_is_nn_GRUCell(hidden):
    """The recogniser's "PyTorch" variants are what torch.nn.GRUCell computes."""
    worst = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        N, D, H = sizes(rng)
        x, h = rng.normal(size=(N, D)), rng.normal(size=(N, H))
        Wx, Wh, b = rng.normal(size=(D, 3 * H)), rng.normal(size=(H, 3 * H)), rng.normal(size=3 * H)
        zero = np.zeros(H)
        for reset, order in [("after", "ruc"), ("after_bias", "ruc"), ("after", "urc")]:
            # nn.GRUCell's blocks are r, z, n; read ours in that order.
            perm = cols(H, (0, 1, 2) if order == "ruc" else (1, 0, 2))
            bb = b[perm]
            bias_ih = bb if reset == "after" else np.concatenate([bb[:2 * H], zero])
            bias_hh = np.zeros(3 * H) if reset == "after" else np.concatenate([zero, zero, bb[2 * H:]])
            cell = torch.nn.GRUCell(D, H).double()
            with torch.no_grad():
                cell.weight_ih.copy_(t64(Wx[:, perm].T))
                cell.weight_hh.copy_(t64(Wh[:, perm].T))
                cell.bias_ih.copy_(t64(bias_ih))
                cell.bias_hh.copy_(t64(bias_hh))
                expected = cell(t64(x), t64(h))
            ours = hidden.gru_variant(x, h, Wx, Wh, b, update="old", reset=reset, order=order)
            worst = max(worst, maxdiff(ours, expected))
    print(f"hidden-suite PyTorch GRU variants vs nn.GRUCell: {worst:.2e}")
    assert worst <= TOL


def test_update_conventions_are_the_same_family(gl, hidden):
    """The docstring's claim: z = 1 - u, i.e. negating the update block turns one convention into the other."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        N, D, H = sizes(rng)
        x, h = rng.normal(size=(N, D)), rng.normal(size=(N, H))
        Wx, Wh, b = rng.normal(size=(D, 3 * H)), rng.normal(size=(H, 3 * H)), rng.normal(size=3 * H)
        flip = np.ones(3 * H)
        flip[:H] = -1
        d2l = hidden.gru_variant(x, h, Wx * flip, Wh * flip, b * flip, update="old", reset="before")
        assert maxdiff(gl.gru_step_forward(x, h, Wx, Wh, b)[0], d2l) <= TOL
        other = hidden.gru_variant(x, h, Wx, Wh, b, update="old", reset="before")
        assert maxdiff(gl.gru_step_forward(x, h, Wx, Wh, b)[0], other) > 1e-3   # same weights: different numbers


def torch_d2l_gru_step(x, h, Wx, Wh, b):
    """d2l's from-scratch GRU (Dive into Deep Learning, "Gated Recurrent Units"): Z on the old state,
    R before the matmul; our blocks read as Z, R, H~."""
    H = h.shape[1]
    Z = torch.sigmoid(x @ Wx[:, :H] + h @ Wh[:, :H] + b[:H])
    R = torch.sigmoid(x @ Wx[:, H:2 * H] + h @ Wh[:, H:2 * H] + b[H:2 * H])
    H_tilde = torch.tanh(x @ Wx[:, 2 * H:] + (R * h) @ Wh[:, 2 * H:] + b[2 * H:])
    return Z * h + (1 - Z) * H_tilde


def test_hidden_suite_names_the_convention_a_student_used(hidden):
    """The feedback itself: outputs of nn.GRUCell, of d2l's GRU and of nn.LSTMCell (weights used as
    given) are recognised and named; the exercise's own convention is not flagged."""
    for seed in range(50):
        rng = np.random.default_rng(seed)
        N, D, H = int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(2, 6))
        x, h = rng.normal(size=(N, D)), rng.normal(size=(N, H))
        Wx, Wh, b = rng.normal(size=(D, 3 * H)), rng.normal(size=(H, 3 * H)), rng.normal(size=3 * H)
        cell = torch.nn.GRUCell(D, H).double()
        with torch.no_grad():
            cell.weight_ih.copy_(t64(Wx.T))
            cell.weight_hh.copy_(t64(Wh.T))
            cell.bias_ih.copy_(t64(b))
            cell.bias_hh.zero_()
            pytorch = cell(t64(x), t64(h)).numpy()
            d2l = torch_d2l_gru_step(t64(x), t64(h), t64(Wx), t64(Wh), t64(b)).numpy()
            seeds = torch_gru_step(t64(x), t64(h), t64(Wx), t64(Wh), t64(b)).numpy()
        assert "PyTorch's nn.GRU convention" in hidden.recognise_gru(pytorch, (x, h, Wx, Wh, b))
        assert "d2l" in hidden.recognise_gru(d2l, (x, h, Wx, Wh, b))
        assert hidden.recognise_gru(seeds, (x, h, Wx, Wh, b)) == ""

        (x, h, c, Wx, Wh, b), (N, D, H) = lstm_case(rng)
        lstm = lstm_cell(D, H, Wx, Wh, b, np.arange(4 * H))
        with torch.no_grad():
            out_h, out_c = lstm(t64(x), (t64(h), t64(c)))
        assert "PyTorch's gate order i, f, g, o" in hidden.recognise_lstm(out_h.numpy(), out_c.numpy(),
                                                                          (x, h, c, Wx, Wh, b))


# ----------------------------------------------------------------------------- LSTM step
def torch_lstm_step(x, h, c, Wx, Wh, b):
    H = h.shape[1]
    a = x @ Wx + h @ Wh + b
    i, f, o = torch.sigmoid(a[:, :H]), torch.sigmoid(a[:, H:2 * H]), torch.sigmoid(a[:, 2 * H:3 * H])
    g = torch.tanh(a[:, 3 * H:])
    next_c = f * c + i * g
    return o * torch.tanh(next_c), next_c


def lstm_case(rng):
    N, D, H = sizes(rng)
    return (rng.normal(size=(N, D)), rng.normal(size=(N, H)), rng.normal(size=(N, H)),
            rng.normal(size=(D, 4 * H)), rng.normal(size=(H, 4 * H)), rng.normal(size=4 * H)), (N, D, H)


def test_lstm_step_matches_torch_autograd(gl):
    worst = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        args, (N, D, H) = lstm_case(rng)
        dh, dc = rng.normal(size=(N, H)), rng.normal(size=(N, H))
        next_h, next_c, cache = gl.lstm_step_forward(*args)
        grads = gl.lstm_step_backward(dh, dc, cache)
        leaves = [t64(a, True) for a in args]
        th, tc = torch_lstm_step(*leaves)
        (torch.sum(th * t64(dh)) + torch.sum(tc * t64(dc))).backward()
        worst = max([worst, maxdiff(next_h, th), maxdiff(next_c, tc)]
                    + [maxdiff(g, leaf.grad) for g, leaf in zip(grads, leaves)])
    print(f"LSTM step vs torch autograd: {worst:.2e}")
    assert worst <= TOL


def lstm_cell(D, H, Wx, Wh, b, perm):
    cell = torch.nn.LSTMCell(D, H).double()
    with torch.no_grad():
        cell.weight_ih.copy_(t64(Wx[:, perm].T))
        cell.weight_hh.copy_(t64(Wh[:, perm].T))
        cell.bias_ih.copy_(t64(b[perm]))
        cell.bias_hh.zero_()
    return cell


def test_lstm_step_matches_nn_LSTMCell(gl):
    worst = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        (x, h, c, Wx, Wh, b), (N, D, H) = lstm_case(rng)
        dh, dc = rng.normal(size=(N, H)), rng.normal(size=(N, H))
        next_h, next_c, cache = gl.lstm_step_forward(x, h, c, Wx, Wh, b)
        dx, dprev_h, dprev_c, dWx, dWh, db = gl.lstm_step_backward(dh, dc, cache)

        perm = cols(H, (0, 1, 3, 2))          # ours i, f, o, g -> PyTorch's i, f, g, o (its own inverse)
        cell = lstm_cell(D, H, Wx, Wh, b, perm)
        tx, th, tc = t64(x, True), t64(h, True), t64(c, True)
        out_h, out_c = cell(tx, (th, tc))
        (torch.sum(out_h * t64(dh)) + torch.sum(out_c * t64(dc))).backward()
        worst = max([worst, maxdiff(next_h, out_h), maxdiff(next_c, out_c),
                     maxdiff(dx, tx.grad), maxdiff(dprev_h, th.grad), maxdiff(dprev_c, tc.grad),
                     maxdiff(dWx, cell.weight_ih.grad.T.numpy()[:, perm]),
                     maxdiff(dWh, cell.weight_hh.grad.T.numpy()[:, perm]),
                     maxdiff(db, cell.bias_ih.grad.numpy()[perm])])
    print(f"LSTM step vs nn.LSTMCell (blocks reordered, weights transposed): {worst:.2e}")
    assert worst <= TOL


def test_hidden_suite_pytorch_lstm_order_is_nn_LSTMCell(hidden):
    worst = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        (x, h, c, Wx, Wh, b), (N, D, H) = lstm_case(rng)
        cell = lstm_cell(D, H, Wx, Wh, b, np.arange(4 * H))     # weights NOT reordered
        with torch.no_grad():
            out_h, out_c = cell(t64(x), (t64(h), t64(c)))
        ours_h, ours_c = hidden.lstm_variant(x, h, c, Wx, Wh, b, order=hidden.PYTORCH_ORDER)
        worst = max(worst, maxdiff(ours_h, out_h), maxdiff(ours_c, out_c))
    print(f"hidden-suite PyTorch-order LSTM vs nn.LSTMCell: {worst:.2e}")
    assert worst <= TOL


# ----------------------------------------------------------------------------- LSTM sequence
def test_lstm_sequence_matches_torch_autograd_and_nn_LSTM(gl):
    worst_loop = worst_module = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        N, D, H = sizes(rng)
        T = int(rng.integers(1, 8))
        x, h0 = rng.normal(size=(N, T, D)), rng.normal(size=(N, H))
        Wx, Wh, b = rng.normal(size=(D, 4 * H)) * 0.5, rng.normal(size=(H, 4 * H)) * 0.5, rng.normal(size=4 * H)
        dh = rng.normal(size=(N, T, H))
        hs, cache = gl.lstm_forward(x, h0, Wx, Wh, b)
        grads = gl.lstm_backward(dh, cache)

        # (1) autograd through a step loop written here
        leaves = [t64(a, True) for a in (x, h0, Wx, Wh, b)]
        tx, th0, tWx, tWh, tb = leaves
        h, c, outs = th0, torch.zeros(N, H, dtype=torch.float64), []
        for t in range(T):
            h, c = torch_lstm_step(tx[:, t], h, c, tWx, tWh, tb)
            outs.append(h)
        out = torch.stack(outs, dim=1)
        torch.sum(out * t64(dh)).backward()
        worst_loop = max([worst_loop, maxdiff(hs, out)] + [maxdiff(g, leaf.grad) for g, leaf in zip(grads, leaves)])

        # (2) torch.nn.LSTM, batch-first, one layer, c0 = 0
        perm = cols(H, (0, 1, 3, 2))
        lstm = torch.nn.LSTM(D, H, batch_first=True).double()
        with torch.no_grad():
            lstm.weight_ih_l0.copy_(t64(Wx[:, perm].T))
            lstm.weight_hh_l0.copy_(t64(Wh[:, perm].T))
            lstm.bias_ih_l0.copy_(t64(b[perm]))
            lstm.bias_hh_l0.zero_()
        tx, th0 = t64(x, True), t64(h0, True)
        out, _ = lstm(tx, (th0[None], torch.zeros(1, N, H, dtype=torch.float64)))
        torch.sum(out * t64(dh)).backward()
        dx, dh0, dWx, dWh, db = grads
        worst_module = max([worst_module, maxdiff(hs, out), maxdiff(dx, tx.grad), maxdiff(dh0, th0.grad),
                            maxdiff(dWx, lstm.weight_ih_l0.grad.T.numpy()[:, perm]),
                            maxdiff(dWh, lstm.weight_hh_l0.grad.T.numpy()[:, perm]),
                            maxdiff(db, lstm.bias_ih_l0.grad.numpy()[perm])])
    print(f"lstm_forward/backward vs torch autograd loop: {worst_loop:.2e}; vs nn.LSTM: {worst_module:.2e}")
    assert worst_loop <= SEQUENCE_TOL and worst_module <= SEQUENCE_TOL


# ------------------------------------------------- parameter counts (the course notes' are wrong)
def test_parameter_counts_of_spec_erratum_3():
    d_x, d_h = 128, 256
    lstm = sum(p.numel() for p in torch.nn.LSTM(d_x, d_h).parameters())
    gru = sum(p.numel() for p in torch.nn.GRU(d_x, d_h).parameters())
    # PyTorch keeps two bias vectors (b_ih and b_hh); this exercise (and the corrected count) one.
    assert lstm == 4 * (d_x * d_h + d_h * d_h + 2 * d_h) == 395_264
    assert gru == 3 * (d_x * d_h + d_h * d_h + 2 * d_h) == 296_448
    lstm_one_bias, gru_one_bias = lstm - 4 * d_h, gru - 3 * d_h
    assert lstm_one_bias == 394_240 and gru_one_bias == 295_680        # not the notes' ~397K and ~265K
    # the exercise's own arrays: Wx (D, 4H) + Wh (H, 4H) + b (4H,), and 3H for the GRU
    assert d_x * 4 * d_h + d_h * 4 * d_h + 4 * d_h == lstm_one_bias
    assert d_x * 3 * d_h + d_h * 3 * d_h + 3 * d_h == gru_one_bias
    assert gru_one_bias / lstm_one_bias == gru / lstm == 0.75         # 25 % fewer, not 33 %
    print(f"nn.LSTM(128, 256): {lstm} parameters, nn.GRU: {gru}; with one bias: {lstm_one_bias}, {gru_one_bias}")


def test_hidden_suite_backward_variants_without_a_mistake_are_torch_autograd(hidden):
    """The grader-side backward passes the diagnoses test their hypotheses with
    (gru_backward_variant, lstm_backward_variant) are torch's gradients when no mistake is asked."""
    worst = 0.0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        N, D, H = sizes(rng)
        gru_args = (rng.normal(size=(N, D)), rng.normal(size=(N, H)), rng.normal(size=(D, 3 * H)),
                    rng.normal(size=(H, 3 * H)), rng.normal(size=3 * H))
        dnext = rng.normal(size=(N, H))
        leaves = [t64(a, True) for a in gru_args]
        torch_gru_step(*leaves).backward(t64(dnext))
        worst = max([worst] + [maxdiff(g, leaf.grad) for g, leaf in
                               zip(hidden.gru_backward_variant(dnext, *gru_args), leaves)])
        args, (N, D, H) = lstm_case(rng)
        dh, dc = rng.normal(size=(N, H)), rng.normal(size=(N, H))
        leaves = [t64(a, True) for a in args]
        th, tc = torch_lstm_step(*leaves)
        (torch.sum(th * t64(dh)) + torch.sum(tc * t64(dc))).backward()
        worst = max([worst] + [maxdiff(g, leaf.grad) for g, leaf in
                               zip(hidden.lstm_backward_variant(dh, dc, *args), leaves)])
    assert worst <= TOL, worst
