# Generated from solutions/rnn_prehistory/gru_lstm.py by scripts/make_stubs.py.
# Students: fill in every TODO below. Instructors: edit the solution, then run `make stubs`.
# 同学们：请完成下面的每个 TODO（每条英文说明下面都有中文）。
"""Gated cells: one GRU step, one LSTM step, and an LSTM over a whole sequence.

The course notes (前沿专题·序列建模前史), stage four, put the two cells side by side.
Both update their state by a gated *addition*, so dc_t/dc_{t-1} is a diagonal matrix of
gate values (see gate_derivative.py), not a power of a weight matrix. They differ in how
the gates are tied:

- GRU: one update gate u decides both how much new content is written and how much old
  state is kept, through u and (1 - u): remembering and forgetting are complementary.
- LSTM: the input gate i and the forget gate f are independent, so the cell can keep all
  of its old content and add new content at the same time (or do neither); the output gate
  o and a final tanh decide what the cell exposes, because the cell itself is not squashed
  and may grow linearly over time (to count, to time).

All functions serve oral-exam question 6 of the course notes: what do the complementary
(1 - u) of the GRU and the decoupled f, i of the LSTM each buy, and why is there a tanh on
the LSTM's output?

Conventions: batch-first, row vectors, weights multiply on the right
(x @ Wx, h @ Wh); several gates share one weight matrix whose columns are split into
blocks of H; all arrays float64; no function modifies its inputs. A cache is whatever
the backward pass needs.
"""

import numpy as np


def sigmoid(x):
    """Numerically stable logistic function 1 / (1 + exp(-x)), element-wise.
    数值稳定的逻辑函数 1 / (1 + exp(-x))，逐元素计算。

    (Given, not a TODO.) The naive formula overflows in exp(-x) for x < -709; here exp only
    ever sees -|x| <= 0, and for x < 0 the equivalent form exp(x) / (1 + exp(x)) is used.
    """
    z = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


def gru_step_forward(x, prev_h, Wx, Wh, b):
    """Forward pass of one GRU step, in this course's convention.
    GRU 单步的前向传播，采用本课程的约定。

    The columns of Wx, Wh and b are three blocks of H, in the order update u, relevance r,
    candidate c (Wx_u = Wx[:, :H], Wx_r = Wx[:, H:2H], Wx_c = Wx[:, 2H:], same for Wh, b):

        u      = sigmoid(x Wx_u + prev_h Wh_u + b_u)          update gate
        r      = sigmoid(x Wx_r + prev_h Wh_r + b_r)          relevance (reset) gate
        c~     = tanh(x Wx_c + (r * prev_h) Wh_c + b_c)       candidate state
        next_h = u * c~ + (1 - u) * prev_h

    Inputs:
    - x: input data, of shape (N, D)
    - prev_h: previous hidden state, of shape (N, H)
    - Wx: input-to-hidden weights, of shape (D, 3H)
    - Wh: hidden-to-hidden weights, of shape (H, 3H)
    - b: biases, of shape (3H,)

    Returns a tuple of:
    - next_h: next hidden state, of shape (N, H)
    - cache: what gru_step_backward needs

    Conventions differ between sources; this exercise follows this course's convention
    (the course notes' table, Stanford CS230 / Coursera):
    - u weights the NEW candidate. Cho et al. (2014), d2l ("Dive into Deep Learning") and
      PyTorch weight the OLD state with their update gate z:
      h' = z * h + (1 - z) * c~, i.e. z = 1 - u. Both describe the same family of cells
      (flip the sign of the update weights and bias), but they give different numbers for
      the same weights, so the grader can tell which one you wrote.
    - r is applied to prev_h BEFORE the recurrent matmul: (r * prev_h) Wh_c, as in Cho et
      al. and d2l. PyTorch's nn.GRU applies it AFTER: n = tanh(W_in x + b_in +
      r * (W_hn h + b_hn)) (the cuDNN form, ONNX's linear_before_reset=1), which is a
      different cell, not a relabelling.
    - PyTorch also orders its blocks r, z, n, stores weights as (3H, D) for column
      vectors (weight_ih = Wx.T) and has two biases; here the order is u, r, c and there
      is one bias b.

    Oral-exam question 6 of the course notes: u and (1 - u) tie writing and forgetting
    together.
    """
    next_h, cache = None, None
    # TODO: compute u, r (sigmoid) and the candidate c~ = tanh(x Wx_c + (r * prev_h) Wh_c + b_c),
    # then next_h = u * c~ + (1 - u) * prev_h; keep what the backward pass needs in cache.
    # TODO（中文）：计算 u、r（sigmoid）以及候选状态 c~ = tanh(x Wx_c + (r *
    # prev_h) Wh_c + b_c)，然后 next_h = u * c~ + (1 - u) * prev_h；
    # 把反向传播需要的量存进 cache。
    raise NotImplementedError("gru_step_forward: fill in the TODO above")
    return next_h, cache


def gru_step_backward(dnext_h, cache):
    """Backward pass of one GRU step (the convention of gru_step_forward).
    GRU 单步的反向传播（与 gru_step_forward 的约定一致）。

    With a_u, a_r, a_c the pre-activations of the three blocks:

        dc~ = dnext_h * u                 du = dnext_h * (c~ - prev_h)
        da_c = dc~ * (1 - c~^2)           d(r * prev_h) = da_c Wh_c^T
        dr = d(r * prev_h) * prev_h
        da_u = du * u (1 - u)             da_r = dr * r (1 - r)
        dprev_h = dnext_h * (1 - u) + d(r * prev_h) * r + da_u Wh_u^T + da_r Wh_r^T

    and, with da = [da_u, da_r, da_c] of shape (N, 3H): dx = da Wx^T, dWx = x^T da,
    db = sum_n da, dWh = [prev_h^T da_u, prev_h^T da_r, (r * prev_h)^T da_c].

    Inputs:
    - dnext_h: upstream gradient dL/dnext_h, of shape (N, H)
    - cache: the cache returned by gru_step_forward

    Returns a tuple of:
    - dx: gradient w.r.t. x, of shape (N, D)
    - dprev_h: gradient w.r.t. prev_h, of shape (N, H)
    - dWx: gradient w.r.t. Wx, of shape (D, 3H)
    - dWh: gradient w.r.t. Wh, of shape (H, 3H)
    - db: gradient w.r.t. b, of shape (3H,)

    Oral-exam question 6 of the course notes: prev_h reaches next_h by four paths (the
    (1 - u) shortcut, through r * prev_h, through u and through r); dprev_h sums all four.
    """
    dx, dprev_h, dWx, dWh, db = None, None, None, None, None
    # TODO: backpropagate through next_h = u * c~ + (1 - u) * prev_h, the tanh and the two
    # sigmoids; prev_h is used four times, so dprev_h sums four contributions.
    # TODO（中文）：反向传播经过 next_h = u * c~ + (1 - u) * prev_h、tanh
    # 以及两个 sigmoid；prev_h 被用了四次，所以 dprev_h 是四份贡献之和。
    raise NotImplementedError("gru_step_backward: fill in the TODO above")
    return dx, dprev_h, dWx, dWh, db


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    """Forward pass of one LSTM step (the standard form of Hochreiter & Schmidhuber / Gers).
    LSTM 单步的前向传播（Hochreiter & Schmidhuber / Gers 的标准形式）。

    The columns of Wx, Wh and b are four blocks of H in the order i, f, o, g:

        a      = x Wx + prev_h Wh + b                      shape (N, 4H)
        i, f, o = sigmoid(a_i), sigmoid(a_f), sigmoid(a_o)  input, forget, output gates
        g      = tanh(a_g)                                  candidate content
        next_c = f * prev_c + i * g
        next_h = o * tanh(next_c)

    Inputs:
    - x: input data, of shape (N, D)
    - prev_h: previous hidden state, of shape (N, H)
    - prev_c: previous cell state, of shape (N, H)
    - Wx: input-to-hidden weights, of shape (D, 4H)
    - Wh: hidden-to-hidden weights, of shape (H, 4H)
    - b: biases, of shape (4H,)

    Returns a tuple of:
    - next_h: next hidden state, of shape (N, H)
    - next_c: next cell state, of shape (N, H)
    - cache: what lstm_step_backward needs

    The block order i, f, o, g is CS231n's (and this course's); PyTorch's nn.LSTM orders
    them i, f, g, o. This is the standard cell, not the CS230-cheatsheet variant with a
    relevance gate in the candidate (see the errata box of the course notes). PyTorch also
    stores its weights as (4H, D) for column vectors (weight_ih = Wx.T with the blocks
    reordered) and adds two biases (bias_ih + bias_hh) where this exercise has one.

    Oral-exam question 6 of the course notes: f and i are independent gates; the tanh
    squashes only what the cell exposes.
    """
    next_h, next_c, cache = None, None, None
    # TODO: a = x Wx + prev_h Wh + b, split into the blocks i, f, o, g (in this order),
    # then next_c = f * prev_c + i * g and next_h = o * tanh(next_c).
    # TODO（中文）：a = x Wx + prev_h Wh + b，按 i、f、o、g 的顺序切分成块，然后
    # next_c = f * prev_c + i * g，next_h = o * tanh(next_c)。
    raise NotImplementedError("lstm_step_forward: fill in the TODO above")
    return next_h, next_c, cache


def lstm_step_backward(dnext_h, dnext_c, cache):
    """Backward pass of one LSTM step.
    LSTM 单步的反向传播。

    The cell receives gradient from two places: directly from the next step (dnext_c) and
    through next_h = o * tanh(next_c):

        dc    = dnext_c + dnext_h * o * (1 - tanh(next_c)^2)
        do    = dnext_h * tanh(next_c)
        di, df, dg = dc * g, dc * prev_c, dc * i
        dprev_c = dc * f                   (the gated shortcut of gate_derivative.py)
        da    = [di * i(1-i), df * f(1-f), do * o(1-o), dg * (1-g^2)]     shape (N, 4H)
        dx = da Wx^T, dprev_h = da Wh^T, dWx = x^T da, dWh = prev_h^T da, db = sum_n da

    Inputs:
    - dnext_h: upstream gradient w.r.t. next_h, of shape (N, H)
    - dnext_c: upstream gradient w.r.t. next_c, of shape (N, H)
    - cache: the cache returned by lstm_step_forward

    Returns a tuple of:
    - dx: gradient w.r.t. x, of shape (N, D)
    - dprev_h: gradient w.r.t. prev_h, of shape (N, H)
    - dprev_c: gradient w.r.t. prev_c, of shape (N, H)
    - dWx: gradient w.r.t. Wx, of shape (D, 4H)
    - dWh: gradient w.r.t. Wh, of shape (H, 4H)
    - db: gradient w.r.t. b, of shape (4H,)

    Oral-exam question 6 of the course notes.
    """
    dx, dprev_h, dprev_c, dWx, dWh, db = None, None, None, None, None, None
    # TODO: add the two gradients that reach next_c, backpropagate through the four
    # gates (blocks i, f, o, g) and the shared affine map a = x Wx + prev_h Wh + b.
    # TODO（中文）：把到达 next_c 的两份梯度相加，再反向传播经过四个门（块 i、f、o、g）和共享的仿射变换 a
    # = x Wx + prev_h Wh + b。
    raise NotImplementedError("lstm_step_backward: fill in the TODO above")
    return dx, dprev_h, dprev_c, dWx, dWh, db


def lstm_forward(x, h0, Wx, Wh, b):
    """Run an LSTM over a whole sequence; the cell starts at c0 = 0.
    在整条序列上运行 LSTM；细胞状态从 c0 = 0 开始。

        h_t, c_t = lstm_step_forward(x_t, h_{t-1}, c_{t-1}, Wx, Wh, b),  t = 1..T

    Inputs:
    - x: input data, of shape (N, T, D)
    - h0: initial hidden state, of shape (N, H)
    - Wx: input-to-hidden weights, of shape (D, 4H)
    - Wh: hidden-to-hidden weights, of shape (H, 4H)
    - b: biases, of shape (4H,)

    Returns a tuple of:
    - h: hidden states h_1..h_T, of shape (N, T, H) (h0 excluded; the cells are not returned)
    - cache: what lstm_backward needs

    Oral-exam question 6 of the course notes.
    """
    h, cache = None, None
    # TODO: loop over time with lstm_step_forward, starting from h0 and c0 = 0; keep
    # every step's cache.
    # TODO（中文）：用 lstm_step_forward 对时间循环，从 h0 和 c0 = 0 开始；保留每一步的
    # cache。
    raise NotImplementedError("lstm_forward: fill in the TODO above")
    return h, cache


def lstm_backward(dh, cache):
    """Backward pass of an LSTM over a whole sequence (full BPTT).
    整条序列上 LSTM 的反向传播（完整 BPTT）。

    Inputs:
    - dh: upstream gradients of all hidden states, of shape (N, T, H)
    - cache: the cache returned by lstm_forward

    Returns a tuple of:
    - dx: gradient w.r.t. the inputs x, of shape (N, T, D)
    - dh0: gradient w.r.t. the initial hidden state h0, of shape (N, H)
    - dWx: gradient w.r.t. Wx, of shape (D, 4H)
    - dWh: gradient w.r.t. Wh, of shape (H, 4H)
    - db: gradient w.r.t. b, of shape (4H,)

    dh[:, t] is the gradient of the loss w.r.t. h_t coming from above (e.g. from the
    output layer at step t). Walking back from t = T, step t receives dh[:, t] plus the
    gradient flowing back from step t+1 into h_t, and the cell gradient from step t+1
    (zero at t = T: nothing uses c_T). The shared weights accumulate over all steps.

    Oral-exam question 6 of the course notes.
    """
    dx, dh0, dWx, dWh, db = None, None, None, None, None
    # TODO: walk back over time with lstm_step_backward, carrying dprev_h and dprev_c from
    # step to step and summing the weight gradients.
    # TODO（中文）：用 lstm_step_backward 沿时间往回走，逐步传递 dprev_h 和 dprev_c，
    # 并累加权重梯度。
    raise NotImplementedError("lstm_backward: fill in the TODO above")
    return dx, dh0, dWx, dWh, db
