"""A valid bptt.py that shares nothing with the reference's structure: the forward cache is
one stacked array of states, the backward pass inlines the step, truncation is written
with an explicit boundary test, and numerical_gradient walks a flat view."""

import numpy as np


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x.dot(Wx) + prev_h.dot(Wh) + b[None, :])
    return next_h, {"x": x, "h_prev": prev_h, "h": next_h, "Wx": Wx, "Wh": Wh}


def rnn_step_backward(dnext_h, cache):
    dz = (1.0 - cache["h"] * cache["h"]) * dnext_h
    return (dz.dot(cache["Wx"].T), dz.dot(cache["Wh"].T), cache["x"].T.dot(dz),
            cache["h_prev"].T.dot(dz), np.einsum("nh->h", dz))


def rnn_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    H = h0.shape[1]
    states = np.empty((T + 1, N, H))
    states[0] = h0
    for t in range(T):
        states[t + 1] = np.tanh(x[:, t, :] @ Wx + states[t] @ Wh + b)
    return states[1:].transpose(1, 0, 2).copy(), {"x": x, "states": states, "Wx": Wx, "Wh": Wh}


def _bptt(dh, cache, k):
    x, states, Wx, Wh = cache["x"], cache["states"], cache["Wx"], cache["Wh"]
    N, T, D = x.shape
    dx = np.zeros_like(x)
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[0])
    carry = np.zeros_like(states[0])
    dh0 = None
    for t in range(T - 1, -1, -1):
        g = dh[:, t, :] + carry
        dz = g * (1.0 - states[t + 1] ** 2)
        dx[:, t, :] = dz @ Wx.T
        dWx += x[:, t, :].T @ dz
        dWh += states[t].T @ dz
        db += dz.sum(0)
        carry = dz @ Wh.T
        if t == 0:
            dh0 = carry
        elif t % k == 0:        # t starts a chunk: nothing flows into the previous one
            carry = np.zeros_like(carry)
    return dx, dh0, dWx, dWh, db


def rnn_backward(dh, cache):
    return _bptt(dh, cache, dh.shape[1] + 1)


def rnn_backward_truncated(dh, cache, k):
    return _bptt(dh, cache, k)


def numerical_gradient(f, x, h=1e-6):
    grad = np.zeros(x.shape)
    for i in np.ndindex(x.shape):       # x itself: x.reshape(-1) would be a copy of a transposed x
        keep = x[i]
        x[i] = keep + h
        up = f(x)
        x[i] = keep - h
        down = f(x)
        x[i] = keep
        grad[i] = (up - down) / (2 * h)
    return grad


def rel_error(a, b):
    return float((np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))).max())
