"""A valid gate_derivative.py written with explicit loops and other caches: the cache is a
dict, the Jacobian is built from an identity matrix, and cell_gradient_norms builds each
H x H Jacobian product and takes its spectral norm with np.linalg.norm(., 2)."""

import numpy as np


def forget_gate_forward(c_prev, f, g):
    c = np.add(np.multiply(c_prev, f), g)
    return c, {"c_prev": c_prev.copy(), "f": f.copy(), "g": g.copy()}


def forget_gate_backward(dc, cache):
    return cache["f"] * dc, cache["c_prev"] * dc, np.array(dc, copy=True)


def forget_gate_jacobian(f):
    N, H = f.shape
    return np.stack([np.eye(H) * f[n][:, None] for n in range(N)]) if N else np.zeros((0, H, H))


def cell_gradient_norms(fs):
    T, N, H = fs.shape
    norms = np.zeros(T)
    for n in range(N):
        jac = np.eye(H)
        for k in range(1, T + 1):
            jac = jac @ np.diag(fs[T - k, n])          # dc_T/dc_{T-k}
            norms[k - 1] = max(norms[k - 1], np.linalg.norm(jac, 2))
    return norms
