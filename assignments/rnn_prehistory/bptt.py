# Generated from solutions/rnn_prehistory/bptt.py by scripts/make_stubs.py.
# Students: fill in every TODO below. Instructors: edit the solution, then run `make stubs`.
# 同学们：请完成下面的每个 TODO（每条英文说明下面都有中文）。
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
    tanh RNN 的一个时间步。

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
    # TODO（中文）：next_h = tanh(x Wx + prev_h Wh + b)；把输入和 next_h 存进
    # cache。
    raise NotImplementedError("rnn_step_forward: fill in the TODO above")
    return next_h, cache


def rnn_step_backward(dnext_h, cache):
    """Backward pass of one RNN step.
    RNN 单步的反向传播。

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
    # TODO（中文）：da = dnext_h * (1 - next_h^2)；然后求仿射变换的五个梯度。
    raise NotImplementedError("rnn_step_backward: fill in the TODO above")
    return dx, dprev_h, dWx, dWh, db


def rnn_forward(x, h0, Wx, Wh, b):
    """Run the RNN over a whole sequence.
    在整条序列上运行 RNN。

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
    # TODO（中文）：用 rnn_step_forward 对 t 循环，收集 h[:, t] 和每一步的 cache。
    raise NotImplementedError("rnn_forward: fill in the TODO above")
    return h, cache


def rnn_backward(dh, cache):
    """Full backpropagation through time.
    完整的随时间反向传播 (BPTT)。

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
    # TODO（中文）：倒序遍历 t = T-1..0：把来自未来的梯度加到 dh[:, t] 上，调用
    # rnn_step_backward，并在各步上累加 dWx、dWh、db；到达 h0 的梯度就是 dh0。
    raise NotImplementedError("rnn_backward: fill in the TODO above")
    return dx, dh0, dWx, dWh, db


def rnn_backward_truncated(dh, cache, k):
    """Truncated BPTT with chunks [0, k), [k, 2k), ... of the time axis.
    截断 BPTT，把时间轴切成块 [0, k), [k, 2k), ...。

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
    # TODO（中文）：对每个块的起点 s = 0, k, 2k, ...：只在 [s, s+k) 上反向传播 dh，
    # 丢弃本应流入 h_{s-1} 的梯度；把各块的权重梯度相加。
    raise NotImplementedError("rnn_backward_truncated: fill in the TODO above")
    return dx, dh0, dWx, dWh, db


def numerical_gradient(f, x, h=1e-6):
    """Central-difference gradient of a scalar function.
    标量函数的中心差分梯度。

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
    # TODO（中文）：对 x 的每个下标 i：在 x[i] + h 和 x[i] - h 处计算 f，然后恢复 x[i]。
    raise NotImplementedError("numerical_gradient: fill in the TODO above")
    return grad


def rel_error(a, b):
    """CS231n's relative error: per element |a - b| / max(1e-8, |a| + |b|), then the maximum.
    CS231n 的相对误差：逐元素 |a - b| / max(1e-8, |a| + |b|)，再取最大值。

    Inputs:
    - a, b: arrays of the same shape

    Returns:
    - a float
    """
    # TODO: the element-wise ratio, then its maximum (as a Python float).
    # TODO（中文）：逐元素的比值，再取其最大值（作为 Python float）。
    raise NotImplementedError("rel_error: fill in the TODO above")
