"""A valid inference_cost.py written differently: the cache grows with np.append, an empty
cache is a pair of (N, 0, .) arrays rather than None, the softmax is written out, the loops
collect lists, and the multiply-adds are factored."""

import numpy as np


def rnn_decode_step(x_t, h, Wx, Wh, b):
    return np.tanh(np.dot(x_t, Wx) + np.dot(h, Wh) + b)


def attention_decode_step(x_t, cache, Wq, Wk, Wv):
    N = x_t.shape[0]
    if cache is None:
        cache = (np.zeros((N, 0, Wk.shape[1])), np.zeros((N, 0, Wv.shape[1])))
    K = np.append(cache[0], (x_t @ Wk)[:, None, :], axis=1)
    V = np.append(cache[1], (x_t @ Wv)[:, None, :], axis=1)
    scores = np.matmul(K, (x_t @ Wq)[:, :, None])[:, :, 0] / np.sqrt(K.shape[2])
    weights = np.exp(scores - np.max(scores, axis=1, keepdims=True))
    weights /= np.sum(weights, axis=1, keepdims=True)
    return np.matmul(weights[:, None, :], V)[:, 0, :], (K, V)


def rnn_decode(x, h0, Wx, Wh, b):
    states, held = [], []
    state = h0
    for t in range(x.shape[1]):
        state = rnn_decode_step(x[:, t], state, Wx, Wh, b)
        states.append(state)
        held.append(state.nbytes)
    return np.stack(states, axis=1), np.array(held)


def attention_decode(x, Wq, Wk, Wv):
    outputs, held, cache = [], [], None
    for t in range(x.shape[1]):
        y_t, cache = attention_decode_step(x[:, t], cache, Wq, Wk, Wv)
        outputs.append(y_t)
        held.append(sum(part.nbytes for part in cache))
    return np.stack(outputs, axis=1), cache, np.array(held)


def rnn_macs_per_token(D, H):
    return (D + H) * H


def attention_macs_per_token(t, D, Dk, Dv):
    return D * (2 * Dk + Dv) + t * (Dk + Dv)
