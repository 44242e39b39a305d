"""`make literals`: the expected values of the public tests, computed by outside oracles.

    python scripts/make_public_literals.py [--unit NAME|PATH] [--check]

A public test compares the student's results with fixed numbers, as CS231n's notebooks
do, never with a computation of its own: a function in a public test that computes a
graded function's output is a working implementation handed out (the release's graft
check, scripts/graft_check.py, grades every such function). Each public test file named
in ORACLES holds a block between `# BEGIN EXPECTED VALUES` and `# END EXPECTED VALUES`;
its oracle (PyTorch, float64) reads the inputs, the file's module constants, and returns
the arrays this script writes into the block (each float as its shortest round-trip repr).

--check exits 1 when the block differs from what would be written: other names, shapes,
or a value off by more than what the oracle's own rounding moves on another BLAS kernel
(values are compared, not their text, whose last digits depend on the kernel).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BEGIN, END = "# BEGIN EXPECTED VALUES", "# END EXPECTED VALUES"
# How far a written value may be from a recomputed one: PyTorch's float64 on another kernel
# moves a result by a few ulps of the terms it sums (below 1e-14 relative to their scale here).
DRIFT_RTOL, DRIFT_ATOL = 1e-12, 1e-14


def _torch():
    import torch

    torch.set_default_dtype(torch.float64)
    return torch


def _t(a):
    return _torch().tensor(np.asarray(a, dtype=float))


def attention(m) -> dict:
    """Additive (Bahdanau) attention, e = tanh(s Wa + h Ua) va, a softmax over the real positions."""
    torch = _torch()
    s, H, Wa, Ua, va = map(_t, (m.S_PREV, m.STATES, m.WA, m.UA, m.VA))

    def attend(mask):
        e = torch.tanh((s @ Wa)[:, None, :] + H @ Ua) @ va
        alpha = torch.softmax(e.masked_fill(~torch.tensor(mask), float("-inf")), dim=1)
        return torch.bmm(alpha[:, None, :], H)[:, 0], alpha

    context, alpha = attend(m.MASK)
    return {"CONTEXT": context, "ALPHA": alpha, "ALPHA_NO_MASK": attend(np.ones_like(m.MASK))[1]}


def causality(m) -> dict:
    """torch.nn.RNN (bidirectional, both directions from h0), scaled dot-product attention, and
    the dependency matrix of the lookahead map from autograd's Jacobian."""
    torch = _torch()
    fn = torch.nn.functional
    x, h0 = _t(m.X), _t(m.H0)
    rnn = torch.nn.RNN(m.D, m.H, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for suffix, (Wx, Wh, b) in (("", m.FORWARD), ("_reverse", m.BACKWARD)):
            getattr(rnn, f"weight_ih_l0{suffix}").copy_(_t(Wx).T)
            getattr(rnn, f"weight_hh_l0{suffix}").copy_(_t(Wh).T)
            getattr(rnn, f"bias_ih_l0{suffix}").copy_(_t(b))
            getattr(rnn, f"bias_hh_l0{suffix}").zero_()
        y = rnn(x, torch.stack([h0, h0]))[0]
    q, k, v = x @ _t(m.WQ), x @ _t(m.WK), x @ _t(m.WV)
    lookahead = m.LOOKAHEAD
    A, B = _t(lookahead.A), _t(lookahead.B)

    def f(p):
        rows = []
        for t in range(len(p)):
            row, s = torch.tanh(p[t] @ A), t + lookahead.lag
            if t >= lookahead.start and 0 <= s < len(p) and s != t:
                row = row + torch.tanh(p[s] @ B)
            rows.append(row)
        return torch.stack(rows)

    jacobian = torch.autograd.functional.jacobian(f, _t(m.POINT))          # (T, K, T, D)
    return {"BIRNN_Y": y,
            "ATTENTION_CAUSAL": fn.scaled_dot_product_attention(q, k, v, is_causal=True),
            "ATTENTION_FULL": fn.scaled_dot_product_attention(q, k, v),
            "DEPENDENCY": jacobian.pow(2).sum(dim=(1, 3)).sqrt()}


def inference_cost(m) -> dict:
    """torch.nn.RNNCell's first step, and causal scaled dot-product attention with its keys and values."""
    torch = _torch()
    x = _t(m.X)
    cell = torch.nn.RNNCell(m.D, m.H)
    with torch.no_grad():
        cell.weight_ih.copy_(_t(m.WX).T)
        cell.weight_hh.copy_(_t(m.WH).T)
        cell.bias_ih.copy_(_t(m.B))
        cell.bias_hh.zero_()
        h1 = cell(x[:, 0], _t(m.H0))
    q, k, v = x @ _t(m.WQ), x @ _t(m.WK), x @ _t(m.WV)
    return {"RNN_H1": h1, "ATTENTION_Y": torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
            "KEYS": k, "VALUES": v}


def bptt(m) -> dict:
    """Autograd's db of L = sum(dnext * tanh(x Wx + prev_h Wh + b)) for the step of the file."""
    torch = _torch()
    b = _t(m.B).requires_grad_()
    loss = (_t(m.STEP_DNEXT) * torch.tanh(_t(m.X) @ _t(m.WX) + _t(m.PREV_H) @ _t(m.WH) + b)).sum()
    return {"STEP_DB": torch.autograd.grad(loss, b)[0]}


def gru_lstm_step(m) -> dict:
    """The GRU step written from its docstring's equations (PyTorch's GRUCell applies r after the
    recurrent matmul and lets u keep the old state: another GRU), autograd for its gradients;
    torch.nn.LSTMCell and torch.nn.LSTM (c0 = 0) for the LSTM, their i, f, g, o blocks taken
    from this exercise's i, f, o, g."""
    torch = _torch()
    x, prev_h, prev_c = (_t(a).requires_grad_() for a in (m.X, m.PREV_H, m.PREV_C))
    Wx, Wh, b = (_t(a).requires_grad_() for a in (m.GRU_WX, m.GRU_WH, m.GRU_B))
    H = m.H
    ax, ah = x @ Wx + b, prev_h @ Wh
    u, r = torch.sigmoid(ax[:, :H] + ah[:, :H]), torch.sigmoid(ax[:, H:2 * H] + ah[:, H:2 * H])
    candidate = torch.tanh(ax[:, 2 * H:] + (r * prev_h) @ Wh[:, 2 * H:])
    gru_h = u * candidate + (1 - u) * prev_h
    gru_grads = torch.autograd.grad((_t(m.DNEXT_H) * gru_h).sum(), (x, prev_h, Wx, Wh, b))

    def torch_blocks(w):                       # i, f, o, g -> PyTorch's i, f, g, o, for column vectors
        i, f, o, g = w.split(H, dim=-1)
        return torch.cat([i, f, g, o], dim=-1).T

    Wx, Wh, b = (_t(a).requires_grad_() for a in (m.LSTM_WX, m.LSTM_WH, m.LSTM_B))
    cell = torch.nn.LSTMCell(m.D, H)
    lstm = torch.nn.LSTM(m.D, H, batch_first=True)
    for module, ih, hh, bias in ((cell, "weight_ih", "weight_hh", "bias_ih"),
                                 (lstm, "weight_ih_l0", "weight_hh_l0", "bias_ih_l0")):
        for name in (ih, hh, bias, bias.replace("_ih", "_hh")):
            del module._parameters[name]       # the weights become functions of Wx, Wh, b (autograd reaches them)
        setattr(module, ih, torch_blocks(Wx))
        setattr(module, hh, torch_blocks(Wh))
        setattr(module, bias, torch_blocks(b[None])[:, 0])
        setattr(module, bias.replace("_ih", "_hh"), torch.zeros(4 * H))
    lstm_h, lstm_c = cell(x, (prev_h, prev_c))
    lstm_loss = (_t(m.DNEXT_H) * lstm_h).sum() + (_t(m.DNEXT_C) * lstm_c).sum()
    lstm_grads = torch.autograd.grad(lstm_loss, (x, prev_h, prev_c, Wx, Wh, b))
    seq_x, h0 = _t(m.SEQ_X).requires_grad_(), _t(m.SEQ_H0).requires_grad_()
    seq_h = lstm(seq_x, (h0[None], torch.zeros(1, len(h0), H)))[0]
    seq_grads = torch.autograd.grad((_t(m.SEQ_DH) * seq_h).sum(), (seq_x, h0, Wx, Wh, b))
    return {**dict(zip(("GRU_NEXT_H", "GRU_DX", "GRU_DPREV_H", "GRU_DWX", "GRU_DWH", "GRU_DB"),
                       (gru_h, *gru_grads))),
            **dict(zip(("LSTM_NEXT_H", "LSTM_NEXT_C", "LSTM_DX", "LSTM_DPREV_H", "LSTM_DPREV_C", "LSTM_DWX",
                        "LSTM_DWH", "LSTM_DB"), (lstm_h, lstm_c, *lstm_grads))),
            **dict(zip(("SEQ_H", "SEQ_DX", "SEQ_DH0", "SEQ_DWX", "SEQ_DWH", "SEQ_DB"), (seq_h, *seq_grads)))}


ORACLES = {"test_attention.py": attention, "test_causality.py": causality,
           "test_inference_cost.py": inference_cost, "test_bptt.py": bptt,
           "test_gru_lstm_step.py": gru_lstm_step}


def load(path: Path):
    """The public test file as a module (its inputs; the grader's package provides its imports)."""
    spec = importlib.util.spec_from_file_location(f"public_literals_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _nested(a: np.ndarray, indent: int) -> str:
    if a.ndim == 1:
        return "[" + ", ".join(repr(float(v)) for v in a) + "]"
    return "[" + f",\n{' ' * (indent + 1)}".join(_nested(row, indent + 1) for row in a) + "]"


def block(values: dict) -> str:
    """The lines of the block: `NAME = np.array(...)`, one innermost row per line."""
    lines = []
    for name, value in values.items():
        a = np.asarray(value.detach().numpy() if hasattr(value, "detach") else value, dtype=float)
        start = f"{name} = np.array("
        lines.append(f"{start}{_nested(a, len(start))})\n" if a.ndim else f"{name} = np.array({float(a)!r})\n")
    return "".join(lines)


def _split(text: str, path: Path) -> tuple[str, str, str]:
    """(the text up to the end of BEGIN's line, the block, the text from END on)."""
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        raise SystemExit(f"{path.name}: no '{BEGIN}' ... '{END}' block")
    head_end = text.index("\n", begin) + 1
    return text[:head_end], text[head_end:end], text[end:]


def drift(written: str, values: dict) -> list[str]:
    """How the written block differs from `values` (names, shapes, values beyond DRIFT_*)."""
    namespace: dict = {"np": np}
    exec(written, namespace)
    problems = []
    for name, value in values.items():
        want = np.asarray(value.detach().numpy() if hasattr(value, "detach") else value, dtype=float)
        got = namespace.pop(name, None)
        if got is None or np.shape(got) != want.shape:
            problems.append(f"{name}: missing or of another shape")
        elif not np.allclose(got, want, rtol=DRIFT_RTOL, atol=DRIFT_ATOL * max(float(np.abs(want).max()), 1.0)):
            problems.append(f"{name}: off by {float(np.max(np.abs(got - want))):.1e}")
    problems += [f"{name}: not an expected value any more" for name in namespace if name not in ("np", "__builtins__")]
    return problems


def run(public: Path, check: bool) -> int:
    status = 0
    for name, oracle in ORACLES.items():
        path = public / name
        head, written, tail = _split(path.read_text(encoding="utf-8"), path)
        values = oracle(load(path))
        if check:
            problems = drift(written, values)
            for problem in problems:
                print(f"{name}: {problem}")
            status |= bool(problems)
        else:
            path.write_text(head + block(values) + tail, encoding="utf-8")
    if status:
        print("the public tests' expected values are out of date: run `make literals`")
    return status


def main(argv=None) -> int:
    sys.path.insert(0, str(REPO))
    from autograder.unit.load import load_unit

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--unit", "--assignment", dest="unit", default=None)
    p.add_argument("--check", action="store_true", help="exit 1 when a block is out of date; write nothing")
    args = p.parse_args(argv)
    return run(load_unit(args.unit).dirs["public_tests"], args.check)


if __name__ == "__main__":
    sys.exit(main())
