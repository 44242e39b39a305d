"""The inference bill: what generating one more token costs an RNN and causal attention.

The course notes (前沿专题·序列建模前史), stage six, the lineage table's last row: at
inference time the RNN wins. Generating token t, an RNN updates one fixed-size state,
h_t = tanh(x_t Wx + h_{t-1} Wh + b): O(1) work and memory per token, whatever t is.
Causal attention must let token t read every earlier token: it keeps the keys and values of
the whole prefix (the KV cache), appends this token's pair, and reads all t of them, so the
memory held and the work per token grow linearly with t. Training bought full parallelism
with that bill; KV-cache engineering (paging, sharing, compressing the cache) is the work
of paying it.

Here the bill is measured: bytes held (`nbytes` of the state or the cache) after every
token, and multiply-adds per token, counted from the shapes.
Row-vector convention (batch first): x (N, T, D), weights multiply on the right.
Serves oral-exam question 10 of the course notes.
"""

import numpy as np


def rnn_decode_step(x_t, h, Wx, Wh, b):
    """One token of RNN decoding: the whole past is one state of fixed size.

        h_t = tanh(x_t Wx + h_{t-1} Wh + b)

    Inputs:
    - x_t: this token's input, shape (N, D)
    - h: the state after the previous token, shape (N, H)
    - Wx (D, H), Wh (H, H), b (H,)

    Returns:
    - h_next: the new state, shape (N, H): the same size at every t

    Oral-exam question 10: O(1) state update, memory that does not grow with T.
    """
    h_next = None
    # TODO: h_next = tanh(x_t Wx + h Wh + b).
    ### BEGIN SOLUTION
    h_next = np.tanh(x_t @ Wx + h @ Wh + b)
    ### END SOLUTION
    return h_next


def attention_decode_step(x_t, cache, Wq, Wk, Wv):
    """One token of causal attention decoding with a KV cache.

        q_t = x_t Wq,  k_t = x_t Wk,  v_t = x_t Wv
        K = [K_cache; k_t],  V = [V_cache; v_t]              (append this token's key and value)
        y_t = softmax( q_t K^T / sqrt(Dk) ) V                 (over the t cached positions)

    Inputs:
    - x_t: this token's input, shape (N, D)
    - cache: (K, V) of the previous tokens, shapes (N, t-1, Dk) and (N, t-1, Dv); None
      before the first token
    - Wq (D, Dk), Wk (D, Dk), Wv (D, Dv)

    Returns a tuple of:
    - y_t: this token's output, shape (N, Dv)
    - cache: (K, V) with this token appended, shapes (N, t, Dk) and (N, t, Dv)

    Extend the cache you were given (new arrays: never write into the old ones); never
    recompute the keys and values of earlier tokens, and keep keys, not queries: a query is
    used once, by its own token. Position t attending over positions 1..t is exactly causal
    attention's row t. Oral-exam question 10: reading a KV cache that grows with T.
    """
    y_t, new_cache = None, None
    # TODO: k_t, v_t, q_t from x_t; K, V = the cache with k_t, v_t appended (axis 1); y_t = softmax(q_t K^T / sqrt(Dk)) V.
    ### BEGIN SOLUTION
    q, k, v = x_t @ Wq, x_t @ Wk, x_t @ Wv
    if cache is None:
        K, V = k[:, None], v[:, None]
    else:
        K, V = np.concatenate([cache[0], k[:, None]], axis=1), np.concatenate([cache[1], v[:, None]], axis=1)
    e = np.einsum("nk,ntk->nt", q, K) / np.sqrt(Wk.shape[1])
    w = np.exp(e - e.max(axis=1, keepdims=True))
    y_t = np.einsum("nt,ntv->nv", w / w.sum(axis=1, keepdims=True), V)
    new_cache = (K, V)
    ### END SOLUTION
    return y_t, new_cache


def rnn_decode(x, h0, Wx, Wh, b):
    """Decode a sequence token by token with rnn_decode_step; measure the memory held.

        h_t = rnn_decode_step(x_t, h_{t-1}),   held_bytes[t-1] = nbytes of h_t

    Inputs:
    - x: inputs, shape (N, T, D)
    - h0: initial state, shape (N, H)
    - Wx (D, H), Wh (H, H), b (H,)

    Returns a tuple of:
    - h: the states after every token, shape (N, T, H)
    - held_bytes: shape (T,) integers: the bytes of what the decoder carries from token t to
      token t+1 (the state alone: the outputs it already returned are not its memory)

    Call rnn_decode_step through its module-level name. Oral-exam question 10.
    """
    h, held_bytes = None, None
    # TODO: loop over t: state = rnn_decode_step(x[:, t], state, ...); h[:, t] = state; held_bytes[t] = state.nbytes.
    ### BEGIN SOLUTION
    N, T, _ = x.shape
    h = np.zeros((N, T, h0.shape[1]))
    held_bytes = np.zeros(T, dtype=np.int64)
    state = h0
    for t in range(T):
        state = rnn_decode_step(x[:, t], state, Wx, Wh, b)
        h[:, t] = state
        held_bytes[t] = state.nbytes
    ### END SOLUTION
    return h, held_bytes


def attention_decode(x, Wq, Wk, Wv):
    """Decode a sequence token by token with attention_decode_step; measure the cache held.

        y_t, cache = attention_decode_step(x_t, cache),   held_bytes[t-1] = K.nbytes + V.nbytes

    Inputs:
    - x: inputs, shape (N, T, D)
    - Wq (D, Dk), Wk (D, Dk), Wv (D, Dv)

    Returns a tuple of:
    - y: the outputs, shape (N, T, Dv); equal to causal self-attention over the whole
      sequence (each row computed when its token arrives)
    - cache: the final (K, V), shapes (N, T, Dk) and (N, T, Dv)
    - held_bytes: shape (T,) integers: the cache's bytes after each token

    Start from cache = None and pass each step the cache the previous step returned: that
    is what makes it a cache. Call attention_decode_step through its module-level name.
    Oral-exam question 10.
    """
    y, cache, held_bytes = None, None, None
    # TODO: loop over t: y[:, t], cache = attention_decode_step(x[:, t], cache, ...); held_bytes[t] = bytes of K and V.
    ### BEGIN SOLUTION
    N, T, _ = x.shape
    y = np.zeros((N, T, Wv.shape[1]))
    held_bytes = np.zeros(T, dtype=np.int64)
    for t in range(T):
        y[:, t], cache = attention_decode_step(x[:, t], cache, Wq, Wk, Wv)
        held_bytes[t] = cache[0].nbytes + cache[1].nbytes
    ### END SOLUTION
    return y, cache, held_bytes


def rnn_macs_per_token(D, H):
    """Multiply-adds one RNN token costs, for one sequence, counted from the shapes.

        macs = (multiply-adds of x_t Wx) + (multiply-adds of h_{t-1} Wh)

    A (1, a) @ (a, b) product is a * b multiply-adds; the bias and tanh are not counted.

    Inputs:
    - D: input width, H: state width (ints)

    Returns:
    - macs: int, the same for every token. Oral-exam question 10.
    """
    macs = None
    # TODO: count the multiply-adds of the two matrix products of one step.
    ### BEGIN SOLUTION
    macs = D * H + H * H
    ### END SOLUTION
    return macs


def attention_macs_per_token(t, D, Dk, Dv):
    """Multiply-adds the t-th token (t = 1, 2, ...) of cached attention costs, for one sequence.

        macs = (projections q_t, k_t, v_t) + (scores q_t . k_s, s = 1..t) + (sum_s a_s v_s)

    A (1, a) @ (a, b) product is a * b multiply-adds; the scaling, exp and normalisation of
    the softmax are not counted. The keys and values of earlier tokens come from the cache:
    they cost nothing now.

    Inputs:
    - t: the token's position, 1-based (the cache holds t keys once it is appended)
    - D: input width, Dk: width of queries and keys, Dv: width of values (ints)

    Returns:
    - macs: int, growing linearly with t. Oral-exam question 10.
    """
    macs = None
    # TODO: the three projections of x_t, t dot products of width Dk, and a weighted sum of t value rows.
    ### BEGIN SOLUTION
    macs = D * (2 * Dk + Dv) + t * Dk + t * Dv
    ### END SOLUTION
    return macs
