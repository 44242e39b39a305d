"""Appended to bptt.py (not hostile): rel_error calls what a student may reasonably call of
numpy and the standard library (numpy loads some submodules lazily), then is the formula."""

import numpy as np

# isort: split
# ---- appended to the student's module ----
import collections
import heapq
import itertools
import math
import statistics


def rel_error(a, b):
    x = np.linspace(0.0, 1.0, 11)
    checks = [np.median(x), np.percentile(x, 50), np.quantile(x, 0.5), np.mean(x), statistics.median(list(x)),
              np.histogram(x, bins=2)[0][0] / 10 + 0.0, np.linalg.svd(np.eye(2))[1][0] / 2,
              np.linalg.eigvals(np.eye(2)).real[0] / 2, float(np.fft.fft(np.ones(2))[0].real) / 4,
              np.random.default_rng(0).random() * 0 + 0.5, np.einsum("i,i->", x, x) * 0 + 0.5,
              np.polynomial.polynomial.polyval(0.5, [0, 1]), math.fsum([0.25, 0.25]), heapq.nlargest(1, [0.5])[0],
              collections.Counter("ab")["a"] / 2, len(list(itertools.permutations([1, 2]))) / 4]
    assert all(abs(c - 0.5) < 1e-12 for c in checks), checks
    return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))))
