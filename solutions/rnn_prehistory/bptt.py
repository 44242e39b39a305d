"""The Elman RNN and backpropagation through time (BPTT), in the CS231n row-vector convention.

    h_t = tanh(x_t Wx + h_{t-1} Wh + b)

Shapes: x (N, T, D), hidden states (N, T, H), Wx (D, H), Wh (H, H), b (H,).
Serves oral-exam questions 1-3 of the course notes (前沿专题·序列建模前史): weight sharing
across time, the Jacobian chain dh_T/dh_1 = prod_t diag(1 - h_t^2) Wh^T, and why the
shared weights' gradient is a sum over time steps.
"""

import numpy as np


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    """One time step of a tanh RNN.

        next_h = tanh(x Wx + prev_h Wh + b)

    Inputs:
    - x: input of this step, shape (N, D)
    - prev_h: hidden state of the previous step, shape (N, H)
    - Wx: input-to-hidden weights, shape (D, H)
    - Wh: hidden-to-hidden weights, shape (H, H)
    - b: bias, shape (H,)

    Returns a tuple of:
    - next_h: next hidden state, shape (N, H)
    - cache: whatever rnn_step_backward needs (a tuple of arrays)

    Oral-exam question 1: the same Wx, Wh, b serve every time step.
    """
    next_h, cache = None, None
    # TODO: next_h = tanh(x Wx + prev_h Wh + b); keep the inputs and next_h in cache.
    ### BEGIN SOLUTION
    next_h = np.tanh(x @ Wx + prev_h @ Wh + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    ### END SOLUTION
    return next_h, cache


def rnn_step_backward(dnext_h, cache):
    """Backward pass of one RNN step.

    With a = x Wx + prev_h Wh + b and next_h = tanh(a):
        da = dnext_h * (1 - next_h**2)        (tanh'(a) = 1 - tanh(a)^2)
        dx = da Wx^T,  dprev_h = da Wh^T,  dWx = x^T da,  dWh = prev_h^T da,  db = sum_n da

    Inputs:
    - dnext_h: upstream gradient of the loss w.r.t. next_h, shape (N, H)
    - cache: from rnn_step_forward

    Returns a tuple of:
    - dx: (N, D)
    - dprev_h: (N, H)
    - dWx: (D, H)
    - dWh: (H, H)
    - db: (H,)

    Oral-exam question 2: dprev_h = (dnext_h * tanh') Wh^T is one factor of the chain.
    """
    dx, dprev_h, dWx, dWh, db = None, None, None, None, None
    # TODO: da = dnext_h * (1 - next_h^2); then the five gradients of the affine map.
    ### BEGIN SOLUTION
    x, prev_h, Wx, Wh, next_h = cache
    da = dnext_h * (1 - next_h**2)
    dx = da @ Wx.T
    dprev_h = da @ Wh.T
    dWx = x.T @ da
    dWh = prev_h.T @ da
    db = da.sum(axis=0)
    ### END SOLUTION
    return dx, dprev_h, dWx, dWh, db


def rnn_forward(x, h0, Wx, Wh, b):
    """Run the RNN over a whole sequence.

        h_t = tanh(x_t Wx + h_{t-1} Wh + b),  t = 1..T, starting from h0

    Inputs:
    - x: inputs, shape (N, T, D)
    - h0: initial hidden state, shape (N, H)
    - Wx (D, H), Wh (H, H), b (H,)

    Returns a tuple of:
    - h: hidden states of steps 1..T (h0 excluded), shape (N, T, H)
    - cache: whatever rnn_backward needs

    Oral-exam question 1: unrolled in time the RNN is a T-layer network with tied weights.
    """
    h, cache = None, None
    # TODO: loop over t with rnn_step_forward, collecting h[:, t] and each step's cache.
    ### BEGIN SOLUTION
    N, T, _ = x.shape
    h = np.zeros((N, T, h0.shape[1]))
    caches = []
    prev_h = h0
    for t in range(T):
        prev_h, step_cache = rnn_step_forward(x[:, t], prev_h, Wx, Wh, b)
        h[:, t] = prev_h
        caches.append(step_cache)
    cache = (caches, x.shape[2])
    ### END SOLUTION
    return h, cache


def rnn_backward(dh, cache):
    """Full backpropagation through time.

        gradient reaching h_t = dh[:, t] + (what flows back from h_{t+1}),   t = T..1
        dWh = sum_t h_{t-1}^T da_t   (and likewise dWx, db)

    Inputs:
    - dh: upstream gradients of all hidden states, shape (N, T, H)
    - cache: from rnn_forward

    Returns a tuple of:
    - dx: (N, T, D)
    - dh0: gradient w.r.t. the initial state, (N, H)
    - dWx (D, H), dWh (H, H), db (H,)

    dh[:, t] is the gradient of the loss w.r.t. h_t coming from the loss at step t only;
    walking back from t = T, what flows back from h_{t+1} is added to it. The shared
    weights' gradients are sums over all steps.

    Oral-exam questions 2-3: the product of step Jacobians, and why the gradient of an
    early input can vanish while the loss's gradient w.r.t. late states is large.
    """
    dx, dh0, dWx, dWh, db = None, None, None, None, None
    # TODO: walk t = T-1..0: add the gradient from the future to dh[:, t], call
    # rnn_step_backward, accumulate dWx, dWh, db over steps; what reaches h0 is dh0.
    ### BEGIN SOLUTION
    dx, dh0, dWx, dWh, db = _backward_range(dh, cache, 0, dh.shape[1])
    ### END SOLUTION
    return dx, dh0, dWx, dWh, db


def rnn_backward_truncated(dh, cache, k):
    """Truncated BPTT with chunks [0, k), [k, 2k), ... of the time axis.

    Inputs:
    - dh: (N, T, H); cache: from rnn_forward; k: chunk length, an int >= 1

    Returns a tuple (dx, dh0, dWx, dWh, db) with the shapes of rnn_backward.

    The forward pass carried the hidden state across chunk boundaries, but no gradient
    crosses them (like `h = h.detach()` at t = k, 2k, ... in PyTorch). Each chunk is
    back-propagated on its own with the same cached forward values; weight gradients
    of all chunks are summed. h0 starts the first chunk, so dh0 only collects the
    gradient of the first chunk's losses. With k >= T this equals rnn_backward.

    Oral-exam question 3: what truncation throws away is exactly the long-range part
    of the gradient.
    """
    dx, dh0, dWx, dWh, db = None, None, None, None, None
    # TODO: for each chunk start s = 0, k, 2k, ...: back-propagate dh over [s, s+k) only,
    # dropping the gradient that would flow into h_{s-1}; sum the weight gradients.
    ### BEGIN SOLUTION
    T = dh.shape[1]
    dx = dh0 = dWx = dWh = db = None
    for start in range(0, T, k):
        cdx, cdh_in, cdWx, cdWh, cdb = _backward_range(dh, cache, start, min(start + k, T))
        if start == 0:
            dx, dh0, dWx, dWh, db = cdx, cdh_in, cdWx, cdWh, cdb
        else:
            dx += cdx
            dWx += cdWx
            dWh += cdWh
            db += cdb
    ### END SOLUTION
    return dx, dh0, dWx, dWh, db


### BEGIN SOLUTION
def _backward_range(dh, cache, start, stop):
    """BPTT over steps [start, stop) only; returns the gradient reaching h_{start-1}."""
    caches, D = cache
    N, T, H = dh.shape
    dx = np.zeros((N, T, D))
    dWx, dWh, db = np.zeros((D, H)), np.zeros((H, H)), np.zeros(H)
    dnext = np.zeros((N, H))            # gradient flowing back from step t+1
    for t in reversed(range(start, stop)):
        dx[:, t], dnext, sdWx, sdWh, sdb = rnn_step_backward(dh[:, t] + dnext, caches[t])
        dWx += sdWx
        dWh += sdWh
        db += sdb
    return dx, dnext, dWx, dWh, db
### END SOLUTION


def numerical_gradient(f, x, h=1e-6):
    """Central-difference gradient of a scalar function.

        grad[i] = (f(x + h e_i) - f(x - h e_i)) / (2 h)

    Inputs:
    - f: a function of one array returning a float
    - x: the point, any shape and memory layout (a transposed matrix too); probed in place
      and restored after each probe
    - h: the step

    Returns:
    - grad: same shape as x

    Oral-exam question 3 (and the lab's level 3): the gradient check that validates BPTT.
    """
    grad = None
    # TODO: for each index i of x: evaluate f at x[i] + h and x[i] - h, restore x[i].
    ### BEGIN SOLUTION
    grad = np.zeros_like(x, dtype=float)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        old = x[i]
        x[i] = old + h
        fplus = f(x)
        x[i] = old - h
        fminus = f(x)
        x[i] = old
        grad[i] = (fplus - fminus) / (2 * h)
    ### END SOLUTION
    return grad


def rel_error(a, b):
    """CS231n's relative error: per element |a - b| / max(1e-8, |a| + |b|), then the maximum.

    Inputs:
    - a, b: arrays of the same shape

    Returns:
    - a float
    """
    # TODO: the element-wise ratio, then its maximum (as a Python float).
    ### BEGIN SOLUTION
    return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))))
    ### END SOLUTION
