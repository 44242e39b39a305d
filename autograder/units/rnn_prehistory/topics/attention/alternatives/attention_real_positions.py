"""A valid attention.py written differently from the reference (must get full marks).

One batch row at a time: the softmax runs over the real positions only (picked by
index), the scores come from an explicit broadcast and sum, and the weights are
scattered back into a zero row.
"""

import numpy as np


def additive_attention(s_prev, H, Wa, Ua, va, mask=None):
    N, Tx, Dh = H.shape
    alpha = np.zeros((N, Tx))
    context = np.zeros((N, Dh))
    for n in range(N):
        real = np.arange(Tx) if mask is None else np.flatnonzero(mask[n])
        if real.size == 0:
            continue
        hidden = np.tanh(s_prev[n] @ Wa + H[n, real] @ Ua)          # (R, A)
        e = np.sum(hidden * va, axis=1)
        z = np.exp(e - e.max())
        alpha[n, real] = z / z.sum()
        context[n] = alpha[n, real] @ H[n, real]
    return context, alpha
