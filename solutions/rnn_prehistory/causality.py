"""Causality: who may see whom. A bidirectional RNN against causal self-attention, measured.

The course notes (前沿专题·序列建模前史), stage four: a bidirectional RNN runs one Elman pass
left to right and one right to left and concatenates them, so the output at position t
has read the whole sentence, the future included. A language model that predicts token
t+1 from position t must not: at generation time the future does not exist yet. Attention
turns "who sees whom" into an explicit matrix: the same scaled dot-product attention with a
lower-triangular (causal) mask generates (GPT-style), with the mask open it understands
(BERT-style). One mechanism, two configurations; the RNN side needs two networks.

Here causality is measured, not asserted: the dependency matrix D[t, s] = ||dy_t / dx_s||
of a sequence map says which inputs each output has read; a map is causal when every
entry above the diagonal (s > t, the future) is zero.
Row-vector convention (batch first): x (N, T, D), weights multiply on the right.
Serves oral-exam question 7 of the course notes.
"""

import numpy as np

import bptt

# Above this an entry of a dependency matrix is a dependence, below it is nothing. A causal
# map never reads x_s for s > t, so perturbing x_s leaves y_t bit for bit the same and the
# finite difference is exactly 0.0. A map that touches x_s but cancels it, as in
# (x_s + 1) - 1 - x_s, leaves round-off of about eps |y| / h = 1e-16 / 1e-5 ~ 1e-11 for outputs
# of order 1: no dependence, and far below the tolerance. The measuring error of a real entry
# (h^2 times a third derivative) stays below it too. A dependence weaker than 1e-8 (a softmax
# weight of e^-20) does not show in the outputs' first eight digits and is not counted.
CAUSAL_TOL = 1e-8


def birnn_forward(x, h0, Wx_f, Wh_f, b_f, Wx_b, Wh_b, b_b):
    """Bidirectional Elman RNN: a forward pass, a backward pass, outputs concatenated.

        hf_t = tanh(x_t Wx_f + hf_{t-1} Wh_f + b_f),   t = 1..T, hf_0 = h0   (left to right)
        hb_t = tanh(x_t Wx_b + hb_{t+1} Wh_b + b_b),   t = T..1, hb_{T+1} = h0 (right to left)
        y_t  = [hf_t, hb_t]

    Inputs:
    - x: inputs, shape (N, T, D)
    - h0: initial state of both passes, shape (N, H)
    - Wx_f (D, H), Wh_f (H, H), b_f (H,): weights of the forward pass
    - Wx_b (D, H), Wh_b (H, H), b_b (H,): weights of the backward pass

    Returns:
    - y: shape (N, T, 2H); y[:, t, :H] is the forward state, y[:, t, H:] the backward state
      of position t (aligned with x[:, t], not with the reversed sequence)

    Use your rnn_forward from bptt.py for both passes. y_t depends on every x_s: the
    backward state of position t has read x_t ... x_T. Oral-exam question 7: why such a
    network cannot be a causal language model.
    """
    y = None
    # TODO: hf = rnn_forward(x); hb = rnn_forward(x reversed in time), reversed back; y = [hf, hb] on the last axis.
    ### BEGIN SOLUTION
    hf, _ = bptt.rnn_forward(x, h0, Wx_f, Wh_f, b_f)
    hb_reversed, _ = bptt.rnn_forward(x[:, ::-1], h0, Wx_b, Wh_b, b_b)
    y = np.concatenate([hf, hb_reversed[:, ::-1]], axis=2)
    ### END SOLUTION
    return y


def self_attention(x, Wq, Wk, Wv, causal=True):
    """Scaled dot-product self-attention, with or without the causal mask.

        q_t = x_t Wq,  k_s = x_s Wk,  v_s = x_s Wv
        e[t, s] = q_t . k_s / sqrt(Dk),   e[t, s] = -inf where s > t   (causal only)
        a[t, :] = softmax(e[t, :])  over s,      y_t = sum_s a[t, s] v_s

    Inputs:
    - x: inputs, shape (N, T, D)
    - Wq (D, Dk), Wk (D, Dk), Wv (D, Dv): projections
    - causal: True masks every future position s > t before the softmax (a generator:
      position t reads positions 1..t); False lets every position see every position (an
      encoder)

    Returns:
    - y: shape (N, T, Dv)

    The mask goes on the scores, before the softmax: a masked position then gets weight
    exactly 0 and the weights of the visible ones still sum to 1. Subtract each row's
    maximum before exp. Oral-exam question 7: the causal mask as an explicit switch.
    """
    y = None
    # TODO: e = q k^T / sqrt(Dk); if causal, e[t, s] = -inf for s > t; a = stable softmax over s; y = a v.
    ### BEGIN SOLUTION
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    e = q @ k.transpose(0, 2, 1) / np.sqrt(Wk.shape[1])                 # (N, T, T)
    if causal:
        T = x.shape[1]
        future = np.triu(np.ones((T, T), dtype=bool), k=1)             # s > t
        e = np.where(future, -np.inf, e)
    w = np.exp(e - e.max(axis=2, keepdims=True))                        # the diagonal is never masked
    y = (w / w.sum(axis=2, keepdims=True)) @ v
    ### END SOLUTION
    return y


def dependency_matrix(f, x, h=1e-5):
    """Measure which inputs each output of a sequence map reads, by central differences.

        D[t, s] = || dy_t / dx_s ||_F ,   dy_t/dx_s[k, d] ~ (y_t(x_s,d + h) - y_t(x_s,d - h))[k] / 2h

    Inputs:
    - f: a sequence map, f(x) -> y with x of shape (T, D) and y of shape (T, K)
    - x: the point to measure at, shape (T, D)
    - h: finite-difference step

    Returns:
    - D: shape (T, T), D[t, s] >= 0; row t lists what output t read, column s what input s
      reached. Entries above the diagonal (s > t) are the future.

    Perturb one entry of x at a time (on a copy: never modify x), and take the Frobenius
    norm of each (K, D) block. Oral-exam question 7: the causal mask, seen as this matrix.
    """
    D = None
    # TODO: for every input entry x[s, d]: y+ = f(x with x[s, d] + h), y- = f(... - h); J[:, :, s, d] = (y+ - y-) / 2h; D = block norms.
    ### BEGIN SOLUTION
    x = np.array(x, dtype=float)
    T, Din = x.shape
    jacobian = None                                                     # (T, K, T, D)
    for s in range(T):
        for d in range(Din):
            up, down = x.copy(), x.copy()
            up[s, d] += h
            down[s, d] -= h
            column = (np.asarray(f(up), dtype=float) - np.asarray(f(down), dtype=float)) / (2 * h)
            if jacobian is None:
                jacobian = np.zeros((T, column.shape[1], T, Din))
            jacobian[:, :, s, d] = column
    D = np.sqrt(np.sum(jacobian**2, axis=(1, 3)))
    ### END SOLUTION
    return D


def is_causal(D, tol=CAUSAL_TOL):
    """Whether a dependency matrix is causal, and where it first reads the future.

        causal  <=>  D[t, s] <= tol for every s > t

    Inputs:
    - D: a dependency matrix, shape (T, T) (from dependency_matrix)
    - tol: the threshold of a dependence. CAUSAL_TOL = 1e-8: a causal map's entries above
      the diagonal are exactly 0.0, finite-difference round-off (h = 1e-5, outputs of order
      1) is about 1e-11, so anything over 1e-8 is the map reading the future

    Returns a tuple of:
    - causal: bool
    - leak: None when causal, else (t, s) as ints: the first entry above the diagonal over
      tol, rows in order and, within the row, the nearest future position first

    Oral-exam question 7: a bidirectional RNN leaks at once (t = 0 reads s = 1).
    """
    causal, leak = None, None
    # TODO: scan t = 0..T-1, then s = t+1..T-1; the first D[t, s] > tol is the leak.
    ### BEGIN SOLUTION
    rows, cols = np.nonzero(np.triu(np.asarray(D) > tol, k=1))       # row-major order
    causal = rows.size == 0
    leak = None if causal else (int(rows[0]), int(cols[0]))
    ### END SOLUTION
    return causal, leak


def next_token_readout_error(states, tokens, n_train):
    """How well the next token can be read off each position's output: a language model's leak.

        fit W by least squares:  [y_t, 1] W ~ onehot(token_{t+1})   on sequences 0..n_train-1
        error = mean over the other sequences, t = 1..T-1, of || [y_t, 1] W - onehot(token_{t+1}) ||^2

    Inputs:
    - states: outputs y of a sequence model, shape (N, T, K)
    - tokens: the token ids the model read, shape (N, T), values 0..V-1 (V = tokens.max() + 1)
    - n_train: the first n_train sequences fit the readout, the others measure it

    Returns:
    - error: float, the held-out squared error (positions 0..T-2 predict tokens 1..T-1)

    With tokens drawn independently, the past says nothing about the next token: a causal
    model cannot beat guessing the average (error ~ 1 - 1/V); a bidirectional one read the
    answer and gets far lower. Use np.linalg.lstsq. Oral-exam question 7.
    """
    error = None
    # TODO: features [y_t, 1] of t = 0..T-2, targets onehot(tokens[:, t+1]); lstsq on the first n_train sequences; held-out mean squared error.
    ### BEGIN SOLUTION
    N, T, K = states.shape
    V = int(np.max(tokens)) + 1
    features = np.concatenate([states[:, :-1], np.ones((N, T - 1, 1))], axis=2)
    targets = np.eye(V)[tokens[:, 1:]]
    W, *_ = np.linalg.lstsq(features[:n_train].reshape(-1, K + 1), targets[:n_train].reshape(-1, V), rcond=None)
    residual = features[n_train:] @ W - targets[n_train:]
    error = float(np.mean(np.sum(residual**2, axis=2)))
    ### END SOLUTION
    return error
