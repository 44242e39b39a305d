"""Sequence maps f(x) -> y, x (T, D), y (T, K), for `causality.dependency_matrix`.

Not registered helpers: the grader never sends one to the worker. A test that passes one to
student code lends it (autograder.isolation.callbacks), so the student's dependency_matrix
holds only what its docstring promises, a callable f(x) -> y, and never the map's fields or
its exact Jacobian, which the tests compute here, in the grader, to compare with what was
measured.

    LookaheadMap(A, B, lag=2, start=1)    y_t = tanh(x_t A) + tanh(x_{t+lag} B)  for t >= start
                                          (and t + lag < T); y_t = tanh(x_t A) otherwise

With lag >= 1 the map reads the future: its first leak is (start, start + lag). With
lag = 0 it reads x_t only (a diagonal dependency matrix, causal); a negative lag reads
the past (causal too).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class LookaheadMap:
    A: np.ndarray           # (D, K)
    B: np.ndarray           # (D, K)
    lag: int = 1
    start: int = 0

    def reads(self, t: int, T: int) -> int | None:
        """The other position output t reads, or None."""
        s = t + self.lag
        return s if t >= self.start and 0 <= s < T and s != t else None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        y = np.tanh(x @ self.A)
        for t in range(len(x)):
            s = self.reads(t, len(x))
            if s is not None:
                y[t] += np.tanh(x[s] @ self.B)
        return y

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """dy_t[k] / dx_s[d] as an array (T, K, T, D)."""
        x = np.asarray(x, dtype=float)
        T, D = x.shape
        J = np.zeros((T, self.A.shape[1], T, D))
        for t in range(T):
            J[t, :, t, :] = ((1 - np.tanh(x[t] @ self.A) ** 2)[:, None] * self.A.T)
            s = self.reads(t, T)
            if s is not None:
                J[t, :, s, :] += (1 - np.tanh(x[s] @ self.B) ** 2)[:, None] * self.B.T
        return J

    def dependency(self, x: np.ndarray) -> np.ndarray:
        """The exact D[t, s] = ||dy_t/dx_s||_F, shape (T, T)."""
        return np.sqrt(np.sum(self.jacobian(x) ** 2, axis=(1, 3)))
