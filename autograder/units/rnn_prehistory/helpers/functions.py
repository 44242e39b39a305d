"""Scalar test functions f(x) for `numerical_gradient`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograder.isolation.registry import register


@register
@dataclass
class CubicForm:
    """f(x) = sum(w * x**3) + sum(x @ A) ; gradient 3 w x**2 + A.sum(-1) (broadcast)."""

    w: np.ndarray
    A: np.ndarray

    def __call__(self, x: np.ndarray) -> float:
        return float(np.sum(self.w * x**3) + np.sum(x @ self.A))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return 3 * self.w * x**2 + np.broadcast_to(self.A.sum(axis=-1), x.shape)
