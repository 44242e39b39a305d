"""Small language models `log_prob_fn(prefix) -> (V,) log-probabilities` for beam search.

`beam_search.py` decodes with any callable that maps a prefix -- a tuple of
token ids starting with `bos` (any sequence of ints is accepted: the docstrings ask for a
tuple, and nothing grades the type) -- to the log-probabilities of the next token over a
vocabulary 0..V-1. The tests pass these models, so they are plain-data dataclasses
(registered for the worker, which rebuilds them from their fields), deterministic,
and cheap to call.

The `bos` symbol is a context only: it has its own row in the table (index V by
default), so it can never be generated. Each call returns a fresh copy of the row,
so code that adds to the returned array in place cannot corrupt the model.

    lm = BigramLM(np.log([[.1, .5, .4], [.4, .3, .3], [.9, .05, .05], [.1, .5, .4]]), bos=3)
    lm((3,))            # log p(next | bos): row 3
    lm((3, 1, 2))       # log p(next | bos, 1, 2): a bigram model reads only the last token

Helpers `random_ngram_lm`, `random_positional_lm` and `dyadic_ngram_lm` build random
models for the suites. In an n-gram model two sequences that use the same transitions in
another order have exactly the same probability, and only float rounding ranks them;
`PositionalBigramLM` (a table per position) has no such ties, so rankings are stable.
Dyadic models have log-scores that are multiples of -1/4: every sum of them is exact in
floating point, so ties between different sequences are real ties, whatever order a
student adds the terms in (their rows are not normalised: beam search never needs it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograder.isolation.registry import register


def _check_prefix(prefix, bos: int) -> tuple:
    try:
        prefix = tuple(int(t) for t in prefix)
    except TypeError:
        raise TypeError(f"a prefix must be a sequence of token ids, e.g. (bos,) + tokens[:t], got "
                        f"{type(prefix).__name__}") from None
    if not prefix or prefix[0] != bos:
        raise ValueError(f"a prefix must start with bos={bos} (got {prefix}): the model conditions on "
                         "(bos, y_1, ..., y_{t-1}), so pass (bos,) + tokens[:t]")
    return prefix


@register
@dataclass
class BigramLM:
    """log p(next | prefix) = log_probs[prefix[-1], next].

    log_probs: (C, V) with C >= V; row r is the distribution after token r (row `bos`
    after the start symbol). The vocabulary is 0..V-1.
    """

    log_probs: np.ndarray
    bos: int

    def __call__(self, prefix) -> np.ndarray:
        prefix = _check_prefix(prefix, self.bos)
        return np.array(self.log_probs[prefix[-1]], dtype=float)

    @property
    def vocab_size(self) -> int:
        return int(self.log_probs.shape[-1])


@register
@dataclass
class NGramLM:
    """log p(next | prefix) = log_probs[c_1, ..., c_k, next], the last k = order-1 tokens.

    log_probs: (C,)*k + (V,). A prefix shorter than k is padded on the left with bos,
    as n-gram models do at the start of a sentence. order 2 is a bigram model.
    """

    log_probs: np.ndarray
    bos: int

    def __call__(self, prefix) -> np.ndarray:
        prefix = _check_prefix(prefix, self.bos)
        k = self.log_probs.ndim - 1
        context = ((self.bos,) * k + prefix)[len(prefix):]   # the last k symbols
        return np.array(self.log_probs[context], dtype=float)

    @property
    def vocab_size(self) -> int:
        return int(self.log_probs.shape[-1])

    @property
    def order(self) -> int:
        return int(self.log_probs.ndim)


@register
@dataclass
class PositionalBigramLM:
    """log p(next | prefix) = log_probs[t, prefix[-1], next], t = len(prefix) - 1 tokens so far.

    log_probs: (P, C, V); positions beyond P - 1 reuse the last table. A bigram model whose
    table changes with time: two different sequences share no sum of terms by accident,
    so (unlike an n-gram model, where reordering the same transitions gives exactly the
    same probability) random tables have no ties that only float rounding would break.
    """

    log_probs: np.ndarray
    bos: int

    def __call__(self, prefix) -> np.ndarray:
        prefix = _check_prefix(prefix, self.bos)
        t = min(len(prefix) - 1, self.log_probs.shape[0] - 1)
        return np.array(self.log_probs[t, prefix[-1]], dtype=float)

    @property
    def vocab_size(self) -> int:
        return int(self.log_probs.shape[-1])


def random_positional_lm(rng: np.random.Generator, vocab_size: int, positions: int = 8,
                         concentration: float = 0.5) -> PositionalBigramLM:
    """A normalised random PositionalBigramLM; bos = vocab_size (a context-only symbol)."""
    probs = rng.dirichlet(np.full(vocab_size, concentration), size=(positions, vocab_size + 1))
    probs = np.maximum(probs, 1e-12)
    probs /= probs.sum(axis=-1, keepdims=True)
    return PositionalBigramLM(np.log(probs), bos=vocab_size)


def random_ngram_lm(rng: np.random.Generator, vocab_size: int, order: int = 2,
                    concentration: float = 0.5) -> NGramLM:
    """A normalised random n-gram model; bos = vocab_size (a context-only symbol).

    Rows are Dirichlet(concentration) draws: small concentrations give peaked rows, where
    greedy decoding falls into traps that a wider beam escapes.
    """
    contexts = vocab_size + 1
    shape = (contexts,) * (order - 1) + (vocab_size,)
    probs = rng.dirichlet(np.full(vocab_size, concentration), size=shape[:-1]).reshape(shape)
    probs = np.maximum(probs, 1e-12)   # no exact zeros: every sequence keeps a finite score
    probs /= probs.sum(axis=-1, keepdims=True)
    return NGramLM(np.log(probs), bos=vocab_size)


def dyadic_ngram_lm(rng: np.random.Generator, vocab_size: int, order: int = 2, levels: int = 4) -> NGramLM:
    """An n-gram model whose log-scores are drawn from {-1/4, -2/4, ..., -levels/4}.

    Sums of such numbers are exact in float64, so equal-scoring sequences tie exactly
    (tests of the lexicographic tie rule and of the strict inequality in the attribution).
    """
    contexts = vocab_size + 1
    shape = (contexts,) * (order - 1) + (vocab_size,)
    return NGramLM(-0.25 * rng.integers(1, levels + 1, size=shape).astype(float), bos=vocab_size)
