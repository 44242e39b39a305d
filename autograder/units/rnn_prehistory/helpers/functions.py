"""Scalar test functions f(x) for `numerical_gradient`.

Not registered helpers: the grader never sends one to the worker. A test that passes one to
student code lends it (autograder.isolation.callbacks), so the student's function holds only
what the docstring of numerical_gradient promises, a callable f(x) -> float, and never the
analytic gradient, which the tests compute here, in the grader.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class CubicForm:
    """f(x) = sum(w * x**3) + sum(x @ A) ; gradient 3 w x**2 + A.sum(-1) (broadcast)."""

    w: np.ndarray
    A: np.ndarray

    def __call__(self, x: np.ndarray) -> float:
        return float(np.sum(self.w * x**3) + np.sum(x @ self.A))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return 3 * self.w * x**2 + np.broadcast_to(self.A.sum(axis=-1), x.shape)
