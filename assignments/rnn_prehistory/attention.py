# Generated from solutions/rnn_prehistory/attention.py by scripts/make_stubs.py.
# Students: fill in every TODO below. Instructors: edit the solution, then run `make stubs`.
# 同学们：请完成下面的每个 TODO（每条英文说明下面都有中文）。
"""Additive (Bahdanau) attention: the patch for seq2seq's fixed-vector bottleneck.

The course notes (前沿专题·序列建模前史), stage five, section 6: instead of squeezing the
whole source sentence into one vector c, the decoder takes, at every step, a fresh
weighted average of all the encoder states. Three parts, each removing one piece of the
bottleneck (oral-exam question 8): a score per source position, a softmax that turns
scores into weights, a weighted sum.
Row-vector convention (batch first), so the projections multiply on the right.
"""

import numpy as np


def additive_attention(s_prev, H, Wa, Ua, va, mask=None):
    """One decoder step of additive attention over Tx encoder states.
    加性注意力在 Tx 个编码器状态上的一个解码步。

        e[n, t]     = tanh( s_prev[n] Wa + H[n, t] Ua ) . va            (score)
        alpha[n, :] = softmax( e[n, :] ) over the real positions        (weights)
        context[n]  = sum_t alpha[n, t] H[n, t]                         (weighted sum)

    Inputs:
    - s_prev: (N, S) previous decoder states
    - H: (N, Tx, Dh) encoder states
    - Wa: (S, A), Ua: (Dh, A), va: (A,) score parameters
    - mask: (N, Tx) bool, True = real token; None = every position is real

    Returns a tuple of:
    - context: (N, Dh) context vectors
    - alpha: (N, Tx) attention weights; every row sums to 1 (or is all 0 if fully masked)

    The softmax subtracts the row maximum (over real positions only) before exp, so
    scores of any size stay finite. Masked positions (padding) get exactly zero weight;
    a row whose positions are all masked gets zero weights and a zero context (not nan).

    Serves oral-exam question 8 (score, softmax, weighted sum; additive vs dot-product).
    """
    context, alpha = None, None
    # TODO: e = tanh(s_prev Wa[:, None, :] + H Ua) va; alpha = stable softmax over unmasked positions; context = sum alpha H.
    # TODO（中文）：e = tanh(s_prev Wa[:, None, :] + H Ua) va；alpha =
    # 在未被掩码的位置上做数值稳定的 softmax；context = sum alpha H。
    raise NotImplementedError("additive_attention: fill in the TODO above")
    return context, alpha
