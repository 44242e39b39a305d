"""A valid gru_lstm.py in the style of seed 004: gates computed from the concatenation
[x, h] with stacked weights, a naive sigmoid, dict caches holding pre-activations, the
interpolation written as prev_h + u * (c - prev_h), and an LSTM sequence whose cache is
stacked arrays (not a list of step caches) with the backward step inlined."""

import numpy as np


def _sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def gru_step_forward(x, prev_h, Wx, Wh, b):
    H = prev_h.shape[1]
    W_gates = np.vstack([Wx[:, :2 * H], Wh[:, :2 * H]])          # (D + H, 2H)
    z_gates = np.hstack([x, prev_h]) @ W_gates + b[:2 * H]
    u, r = _sig(z_gates[:, :H]), _sig(z_gates[:, H:])
    W_cand = np.vstack([Wx[:, 2 * H:], Wh[:, 2 * H:]])           # (D + H, H)
    xrh = np.hstack([x, r * prev_h])
    cand = np.tanh(xrh @ W_cand + b[2 * H:])
    next_h = prev_h + u * (cand - prev_h)
    return next_h, {"xh": np.hstack([x, prev_h]), "xrh": xrh, "u": u, "r": r, "cand": cand,
                    "W_gates": W_gates, "W_cand": W_cand, "D": x.shape[1]}


def gru_step_backward(dnext_h, cache):
    D, u, r, cand = cache["D"], cache["u"], cache["r"], cache["cand"]
    prev_h = cache["xh"][:, D:]
    d_cand_pre = dnext_h * u * (1.0 - cand * cand)
    d_xrh = d_cand_pre @ cache["W_cand"].T
    dr_pre = d_xrh[:, D:] * prev_h * r * (1.0 - r)
    du_pre = dnext_h * (cand - prev_h) * u * (1.0 - u)
    d_gates = np.hstack([du_pre, dr_pre])
    d_xh = d_gates @ cache["W_gates"].T
    dW_gates = cache["xh"].T @ d_gates
    dW_cand = cache["xrh"].T @ d_cand_pre
    dx = d_xh[:, :D] + d_xrh[:, :D]
    dprev_h = d_xh[:, D:] + d_xrh[:, D:] * r + dnext_h * (1.0 - u)
    dWx = np.hstack([dW_gates[:D], dW_cand[:D]])
    dWh = np.hstack([dW_gates[D:], dW_cand[D:]])
    db = np.concatenate([d_gates.sum(0), d_cand_pre.sum(0)])
    return dx, dprev_h, dWx, dWh, db


def _lstm_gates(x, prev_h, Wx, Wh, b):
    H = prev_h.shape[1]
    z = np.hstack([x, prev_h]) @ np.vstack([Wx, Wh]) + b
    return _sig(z[:, :H]), _sig(z[:, H:2 * H]), _sig(z[:, 2 * H:3 * H]), np.tanh(z[:, 3 * H:])


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    i, f, o, g = _lstm_gates(x, prev_h, Wx, Wh, b)
    next_c = prev_c * f + g * i
    next_h = np.tanh(next_c) * o
    return next_h, next_c, {"xh": np.hstack([x, prev_h]), "W": np.vstack([Wx, Wh]), "c_prev": prev_c,
                            "c": next_c, "gates": (i, f, o, g), "D": x.shape[1]}


def _lstm_step_back(dh, dc, xh, W, c_prev, c, gates, D):
    i, f, o, g = gates
    tc = np.tanh(c)
    dc = dc + dh * o * (1.0 - tc * tc)
    dz = np.hstack([dc * g * i * (1.0 - i), dc * c_prev * f * (1.0 - f), dh * tc * o * (1.0 - o),
                    dc * i * (1.0 - g * g)])
    dxh = dz @ W.T
    dW = xh.T @ dz
    return dxh[:, :D], dxh[:, D:], dc * f, dW[:D], dW[D:], dz.sum(0)


def lstm_step_backward(dnext_h, dnext_c, cache):
    return _lstm_step_back(dnext_h, dnext_c, cache["xh"], cache["W"], cache["c_prev"], cache["c"],
                           cache["gates"], cache["D"])


def lstm_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    H = h0.shape[1]
    hs = np.zeros((T + 1, N, H))
    cs = np.zeros((T + 1, N, H))
    gates = np.zeros((T, 4, N, H))
    hs[0] = h0
    for t in range(T):
        gates[t] = _lstm_gates(x[:, t], hs[t], Wx, Wh, b)
        i, f, o, g = gates[t]
        cs[t + 1] = f * cs[t] + i * g
        hs[t + 1] = o * np.tanh(cs[t + 1])
    return np.ascontiguousarray(hs[1:].swapaxes(0, 1)), {"x": x, "hs": hs, "cs": cs, "gates": gates,
                                                         "W": np.vstack([Wx, Wh])}


def lstm_backward(dh, cache):
    x, hs, cs, gates, W = cache["x"], cache["hs"], cache["cs"], cache["gates"], cache["W"]
    N, T, D = x.shape
    H = hs.shape[2]
    dx = np.zeros_like(x)
    dWx, dWh, db = np.zeros((D, 4 * H)), np.zeros((H, 4 * H)), np.zeros(4 * H)
    carry_h, carry_c = np.zeros((N, H)), np.zeros((N, H))
    for t in range(T - 1, -1, -1):
        xh = np.hstack([x[:, t], hs[t]])
        dx[:, t], carry_h, carry_c, a, bb, c = _lstm_step_back(dh[:, t] + carry_h, carry_c, xh, W, cs[t],
                                                                 cs[t + 1], tuple(gates[t]), D)
        dWx += a
        dWh += bb
        db += c
    return dx, carry_h, dWx, dWh, db
