# Generated from solutions/rnn_prehistory/gate_derivative.py by scripts/make_stubs.py.
# Students: fill in every TODO below. Instructors: edit the solution, then run `make stubs`.
# 同学们：请完成下面的每个 TODO（每条英文说明下面都有中文）。
"""The minimal forget-gate circuit: why a gate keeps the gradient alive.

The course notes (前沿专题·序列建模前史), stage three, section 4, strip the LSTM down
to one line,

    c_l = f_l * c_{l-1} + g_l              (* is the element-wise product)

where f_l in (0, 1)^H is a gate (a sigmoid output) and g_l is new content. Its one-line
derivative, dc_l/dc_{l-1} = diag(f_l), has no weight matrix in it: unlike the Elman RNN,
whose Jacobian diag(tanh') Wh^T multiplies the gradient by Wh at every step, the gradient
along the cell path is scaled by the gate values alone. Gates near 1 pass it on unchanged
over any distance ("all-remember"); gates near 0 cut it at once ("all-forget").

Every function here serves oral-exam question 5 of the course notes: derive
dc_l/dc_{l-1} = f_l; what is the Jacobian in the two extremes; which symbol makes the
difference with a plain RNN.

Conventions: batch-first, all arrays float64, no function modifies its inputs.
"""

import numpy as np


def forget_gate_forward(c_prev, f, g):
    """Forward pass of the gated cell update.
    门控细胞更新的前向传播。

        c = f * c_prev + g

    Inputs:
    - c_prev: previous cell state, of shape (N, H)
    - f: forget-gate values, of shape (N, H) (usually in (0, 1), but any real values work)
    - g: new content added to the cell, of shape (N, H)

    Returns a tuple of:
    - c: next cell state, of shape (N, H)
    - cache: what forget_gate_backward needs

    Oral-exam question 5 of the course notes.
    """
    c, cache = None, None
    # TODO: c = f * c_prev + g; keep in cache the two values the product rule will need.
    # TODO（中文）：c = f * c_prev + g；把乘积法则要用到的两个值存进 cache。
    raise NotImplementedError("forget_gate_forward: fill in the TODO above")
    return c, cache


def forget_gate_backward(dc, cache):
    """Backward pass of the gated cell update.
    门控细胞更新的反向传播。

    With c = f * c_prev + g and an upstream gradient dc = dL/dc, the product rule gives

        dL/dc_prev = dc * f        (the gate is the whole local Jacobian: diag(f))
        dL/df      = dc * c_prev
        dL/dg      = dc            (the addition passes the gradient on unchanged)

    Inputs:
    - dc: upstream gradient dL/dc, of shape (N, H)
    - cache: the cache returned by forget_gate_forward

    Returns a tuple of:
    - dc_prev: gradient w.r.t. c_prev, of shape (N, H)
    - df: gradient w.r.t. f, of shape (N, H)
    - dg: gradient w.r.t. g, of shape (N, H)

    Oral-exam question 5 of the course notes: note that no weight matrix appears in dc_prev.
    """
    dc_prev, df, dg = None, None, None
    # TODO: apply the product rule to c = f * c_prev + g for each of c_prev, f and g.
    # TODO（中文）：对 c = f * c_prev + g 分别就 c_prev、f 和 g 应用乘积法则。
    raise NotImplementedError("forget_gate_backward: fill in the TODO above")
    return dc_prev, df, dg


def forget_gate_jacobian(f):
    """The local Jacobian dc_l/dc_{l-1} of the gated update, one matrix per example.
    门控更新的局部雅可比 dc_l/dc_{l-1}，每个样本一个矩阵。

        J[n] = diag(f[n])        because dc[n, i]/dc_prev[n, j] = f[n, i] if i == j else 0

    Inputs:
    - f: forget-gate values, of shape (N, H)

    Returns:
    - J: array of shape (N, H, H) with J[n] = diag(f[n])

    Each output unit depends only on the same unit of c_prev (element-wise product), so
    every off-diagonal entry is exactly zero.

    Oral-exam question 5 of the course notes: f ~ 1 gives J ~ I (all-remember), f ~ 0
    gives J ~ 0 (all-forget).
    """
    J = None
    # TODO: build J of shape (N, H, H) with f[n] on the diagonal of J[n] and zeros elsewhere.
    # TODO（中文）：构造形状为 (N, H, H) 的 J：J[n] 的对角线是 f[n]，其余为零。
    raise NotImplementedError("forget_gate_jacobian: fill in the TODO above")
    return J


def cell_gradient_norms(fs):
    """How much gradient survives k steps back along the cell path, for k = 1..T.
    沿细胞路径往回 k 步后还剩多少梯度，k = 1..T。

        dc_T/dc_{T-k} = diag(f_T) diag(f_{T-1}) ... diag(f_{T-k+1})
        norms[k-1] = max_n || dc_T/dc_{T-k} ||_2 = max_n max_i | prod_{t=T-k+1..T} f_t[n, i] |

    Inputs:
    - fs: gate values of shape (T, N, H); fs[t-1] is f_t for N chains of H units. Any real
      values are allowed (a sigmoid gives (0, 1), but the norm takes |.| of any product)

    Returns:
    - norms: array of shape (T,), norms[k-1] for k = 1..T

    For a chain c_t = f_t * c_{t-1} + g_t, t = 1..T, the Jacobian over the last k steps is
    the product of diagonal matrices above, and the spectral norm of a diagonal matrix is
    its largest |entry|: hence the second line. fs[t-1] holds f_t: the last k gates are
    fs[T-k:]. With every gate ~ 1 the norms stay ~ 1 for any T; with every gate ~ 0 they
    vanish at k = 1 - the "all-remember" and "all-forget" rows of the course notes' table.

    Oral-exam question 5 of the course notes.
    """
    norms = None
    # TODO: multiply the gates from the last step backwards; after k of them record the
    # largest |product| over the batch and the units (the spectral norm of a diagonal matrix).
    # TODO（中文）：从最后一步开始往回连乘各门；乘了 k 个之后，记录在整批和各单元上的最大
    # |乘积|（即对角矩阵的谱范数）。
    raise NotImplementedError("cell_gradient_norms: fill in the TODO above")
    return norms
