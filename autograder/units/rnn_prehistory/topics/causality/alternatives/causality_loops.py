"""A valid causality.py written differently: explicit loops over positions, attention that
only ever looks at the visible prefix (no mask array), a leak scan in Python, and the
readout by the pseudo-inverse instead of lstsq."""

import bptt
import numpy as np

CAUSAL_TOL = 1e-8


def birnn_forward(x, h0, Wx_f, Wh_f, b_f, Wx_b, Wh_b, b_b):
    hf, _ = bptt.rnn_forward(x, h0, Wx_f, Wh_f, b_f)
    hb, _ = bptt.rnn_forward(np.flip(x, axis=1), h0, Wx_b, Wh_b, b_b)
    return np.dstack([hf, np.flip(hb, axis=1)])


def self_attention(x, Wq, Wk, Wv, causal=True):
    N, T, _ = x.shape
    q, k, v = np.einsum("ntd,dk->ntk", x, Wq), np.einsum("ntd,dk->ntk", x, Wk), np.einsum("ntd,dk->ntk", x, Wv)
    y = np.zeros((N, T, Wv.shape[1]))
    for t in range(T):
        seen = t + 1 if causal else T
        e = np.einsum("nk,nsk->ns", q[:, t], k[:, :seen]) / np.sqrt(q.shape[2])
        w = np.exp(e - e.max(axis=1, keepdims=True))
        y[:, t] = np.einsum("ns,nsv->nv", w / w.sum(axis=1, keepdims=True), v[:, :seen])
    return y


def dependency_matrix(f, x, h=1e-5):
    x = np.array(x, dtype=float)
    T = x.shape[0]
    D = np.zeros((T, T))
    for s in range(T):
        blocks = []
        for d in range(x.shape[1]):
            up, down = x.copy(), x.copy()
            up[s, d], down[s, d] = x[s, d] + h, x[s, d] - h
            blocks.append((np.asarray(f(up)) - np.asarray(f(down))) / (2 * h))      # (T, K)
        D[:, s] = np.linalg.norm(np.stack(blocks, axis=2).reshape(T, -1), axis=1)
    return D


def is_causal(D, tol=CAUSAL_TOL):
    D = np.asarray(D)
    for t in range(D.shape[0]):
        for s in range(t + 1, D.shape[1]):
            if D[t, s] > tol:
                return False, (t, s)
    return True, None


def next_token_readout_error(states, tokens, n_train):
    V = int(tokens.max()) + 1

    def features_and_targets(sequences):
        rows = [np.append(states[n, t], 1.0) for n in sequences for t in range(states.shape[1] - 1)]
        return np.array(rows), np.eye(V)[[tokens[n, t + 1] for n in sequences for t in range(states.shape[1] - 1)]]

    train_x, train_y = features_and_targets(range(n_train))
    test_x, test_y = features_and_targets(range(n_train, len(states)))
    W = np.linalg.pinv(train_x) @ train_y
    return float(np.mean(np.sum((test_x @ W - test_y) ** 2, axis=1)))
