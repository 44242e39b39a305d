"""Correct stand-ins for student functions, patched in for one call by hidden tests.

A test of one function must not charge a mistake made in another: `attribute_error`
calls the student's own `sequence_score`, so its test runs with

    beam_search.attribute_error.patched({"beam_search.sequence_score": ExactSequenceScore()})

and a wrong `sequence_score` costs points in its own tests only. These are solutions: they
run in the grader only, never in the worker (student code would find and alias them there).
The worker gets a proxy that calls back to the grader during the patched call and is revoked
after it (autograder.isolation.callbacks); so arguments and results are plain data, and the
cache RNNForward returns is a tuple of arrays. Secret in unit.yaml (never shipped to students).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ExactSequenceScore:
    """sequence_score(log_prob_fn, tokens, bos, alpha): sum_t log p(y_t | bos, y_<t) / T**alpha."""

    def __call__(self, log_prob_fn, tokens, bos, alpha=0.0):
        tokens = tuple(int(t) for t in tokens)
        if not tokens:
            return 0.0
        total = 0.0
        for t, token in enumerate(tokens):
            total += float(log_prob_fn((bos,) + tokens[:t])[token])
        return total / len(tokens) ** alpha


# The lab (fault_injection.run_fault_injection) calls bptt.rnn_forward and rnn_backward. When
# the student's raise, the lab is graded with these in their place, so that an unfinished
# bptt topic does not cost the lab's points too. They are always patched in together: the
# cache is theirs.
@dataclass
class RNNForward:
    """rnn_forward(x, h0, Wx, Wh, b) -> (h, cache): h_t = tanh(x_t Wx + h_{t-1} Wh + b), h (N, T, H)."""

    def __call__(self, x, h0, Wx, Wh, b):
        x, h0 = np.asarray(x, dtype=float), np.asarray(h0, dtype=float)
        states = [h0]
        for t in range(x.shape[1]):
            states.append(np.tanh(x[:, t] @ Wx + states[-1] @ Wh + b))
        h = np.stack(states[1:], axis=1)
        return h, (x, h0, np.array(Wx, dtype=float), np.array(Wh, dtype=float), h)


@dataclass
class RNNBackward:
    """rnn_backward(dh, cache) -> (dx, dh0, dWx, dWh, db) for RNNForward's cache."""

    def __call__(self, dh, cache):
        x, h0, Wx, Wh, h = cache
        dx, dWx, dWh, db = np.zeros_like(x), np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[0])
        carry = np.zeros_like(h0)
        for t in range(x.shape[1] - 1, -1, -1):
            da = (np.asarray(dh, dtype=float)[:, t] + carry) * (1.0 - h[:, t] ** 2)
            prev = h[:, t - 1] if t > 0 else h0
            dx[:, t], carry = da @ Wx.T, da @ Wh.T
            dWx += x[:, t].T @ da
            dWh += prev.T @ da
            db += da.sum(axis=0)
        return dx, carry, dWx, dWh, db


@dataclass
class NumericalGradient:
    """numerical_gradient(f, x, h=1e-6): central differences, one entry at a time, x restored."""

    def __call__(self, f, x, h=1e-6):
        grad = np.zeros_like(x, dtype=float)
        for i in np.ndindex(x.shape):
            old = x[i]
            x[i] = old + h
            plus = f(x)
            x[i] = old - h
            minus = f(x)
            x[i] = old
            grad[i] = (plus - minus) / (2 * h)
        return grad


@dataclass
class RelError:
    """rel_error(a, b): max |a - b| / max(1e-8, |a| + |b|), a float."""

    def __call__(self, a, b):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))))


# inference_cost.attention_decode passes each step the cache the previous step returned. A
# loop that rebuilds the cache from the inputs every step (x[:, :t] Wk: the keys recomputed)
# gives the same outputs, so the test runs it with this step in place of the student's: a
# correct step that keeps its cache doubled (exact in floating point) and halves what it is
# handed. A cache passed on comes back as it was; a rebuilt one is read at half its scale.
# Its outputs are negated (exact too): a loop that reaches some other step (a private alias,
# the step written inline, the whole attention at once) returns +y, not this step's -y.
@dataclass
class DoubledCacheStep:
    """attention_decode_step(x_t, cache, Wq, Wk, Wv) -> (-y_t, (2 K, 2 V))."""

    def __call__(self, x_t, cache, Wq, Wk, Wv):
        q, k, v = x_t @ Wq, x_t @ Wk, x_t @ Wv
        empty = cache is None or not np.size(cache[0])
        K = k[:, None] if empty else np.concatenate([np.asarray(cache[0]) / 2, k[:, None]], axis=1)
        V = v[:, None] if empty else np.concatenate([np.asarray(cache[1]) / 2, v[:, None]], axis=1)
        e = np.einsum("nk,ntk->nt", q, K) / np.sqrt(Wk.shape[1])
        w = np.exp(e - e.max(axis=1, keepdims=True))
        y_t = np.einsum("nt,ntv->nv", w / w.sum(axis=1, keepdims=True), V)
        return -y_t, (2 * K, 2 * V)


# inference_cost.rnn_decode calls rnn_decode_step through its module-level name: with this
# step in its place the states are this recurrence's, which no correct step of the student's gives.
@dataclass
class NegatedRNNStep:
    """rnn_decode_step(x_t, h, Wx, Wh, b) -> -tanh(x_t Wx + h Wh + b)."""

    def __call__(self, x_t, h, Wx, Wh, b):
        return -np.tanh(np.asarray(x_t) @ Wx + np.asarray(h) @ Wh + b)
