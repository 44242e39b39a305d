"""The exercises' forward passes over a stack of inputs, for finite differences in the grader.

A gradient check of the hidden suites probes every entry of every input at +h and -h: a
few hundred forward passes per check, which cost most of a grading's time one by one.
These are the reference's equations written over any leading axes (`...`), so that all
the probes of one check are one vectorised pass (`autograder.authoring.checks.finite_differences_stacked`):

    x (P, N, T, D), h0 (P, N, H), Wx (P, D, H), Wh (P, H, H), b (P, H) -> h (P, N, T, H)

Without a leading axis they are the plain forward passes. tests/content/test_oracle_stacked.py
checks them against the reference solution, slice by slice. Grader-side only: listed as
secret in unit.yaml (they are solutions).
"""

from __future__ import annotations

import numpy as np


def sigmoid(a):
    """1 / (1 + exp(-a)), as the reference computes it (exp only ever sees -|a|)."""
    z = np.exp(-np.abs(a))
    return np.where(a >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


def _bias(b):
    return b[..., None, :]          # (..., H) -> (..., 1, H): one bias for every row of the batch


def rnn_step(x, prev_h, Wx, Wh, b):
    """next_h = tanh(x Wx + prev_h Wh + b)."""
    return np.tanh(x @ Wx + prev_h @ Wh + _bias(b))


def rnn_forward(x, h0, Wx, Wh, b):
    """h[..., :, t] = rnn_step(x[..., :, t], h[..., :, t - 1]); h excludes h0."""
    states, h = [], h0
    for t in range(x.shape[-2]):
        h = rnn_step(x[..., t, :], h, Wx, Wh, b)
        states.append(h)
    return np.stack(states, axis=-2)


def gru_step(x, prev_h, Wx, Wh, b):
    """The course's GRU: blocks u, r, c; r filters prev_h before Wh_c; u weights the candidate."""
    H = prev_h.shape[-1]
    ax = x @ Wx + _bias(b)
    ah = prev_h @ Wh[..., :2 * H]
    u = sigmoid(ax[..., :H] + ah[..., :H])
    r = sigmoid(ax[..., H:2 * H] + ah[..., H:])
    c = np.tanh(ax[..., 2 * H:] + (r * prev_h) @ Wh[..., 2 * H:])
    return u * c + (1 - u) * prev_h


def lstm_step(x, prev_h, prev_c, Wx, Wh, b):
    """(next_h, next_c) of the LSTM with gate blocks i, f, o, g."""
    H = prev_h.shape[-1]
    a = x @ Wx + prev_h @ Wh + _bias(b)
    i, f, o = sigmoid(a[..., :H]), sigmoid(a[..., H:2 * H]), sigmoid(a[..., 2 * H:3 * H])
    next_c = f * prev_c + i * np.tanh(a[..., 3 * H:])
    return o * np.tanh(next_c), next_c


def lstm_forward(x, h0, Wx, Wh, b):
    """h of the LSTM over the sequence, c0 = 0; h excludes h0."""
    states, h, c = [], h0, np.zeros_like(h0)
    for t in range(x.shape[-2]):
        h, c = lstm_step(x[..., t, :], h, c, Wx, Wh, b)
        states.append(h)
    return np.stack(states, axis=-2)
