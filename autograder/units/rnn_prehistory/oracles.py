"""Correct stand-ins for student functions, substituted inside the worker by hidden tests.

A test of one function must not charge a mistake made in another: `attribute_error`
calls the student's own `sequence_score`, so its test runs with

    beam_search.attribute_error.patched({"beam_search.sequence_score": ExactSequenceScore()})

and a wrong `sequence_score` costs points in its own tests only. These are solutions:
listed as hidden helpers and as secret in unit.yaml (never shipped to students).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.isolation.registry import register


@register
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
