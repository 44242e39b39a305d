"""The reference beam_search.py against exhaustive enumeration and explicit loops.

What must hold, with V tokens (eos among them) and max_len = L, under beam_search.py's
shrinking-budget beam:

- The beam can only ever return *complete* sequences: eos-terminated ones of length <= L
  (eos only at the end) and eos-free ones of length exactly L. There are
  N(V, L) = sum_{t=1..L} (V-1)**(t-1) + (V-1)**L of them.
- finished + live never holds more than beam_width sequences, and once a step prunes, it
  holds exactly beam_width from then on; so the result has exactly min(beam_width, N)
  entries.
- With beam_width >= N nothing is ever pruned (at step t the budget is at least the
  (V-1)**(t-1) * V candidates), so the beam returns *all* complete sequences ranked by
  (-score, tokens); its first entry is the exhaustive argmax of the length-normalised
  score. (With a narrower beam the argmax may be missed: that is what "search" errors are.)
- beam_width = 1 is greedy decoding.

Scores are checked against products of probabilities (exp, multiply, log), not against a
sum of the same log terms. No BLAS is involved (scalar arithmetic and libm): the two routes
differ by at most gamma_{3L+2} (1 + sum |log p|) / L^alpha (L <= 6 log terms, exps and logs
within an ulp each, L products), ~3e-14 on these models: below rtol 1e-12 with atol 1e-13.
The rankings compared exactly come from positional or dyadic models, whose near-ties are far
wider than that (the bigram test below shows what rounding-level ties do).
"""

import itertools
import math
import sys

import numpy as np
import pytest
from helpers import SOLUTIONS
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.units.rnn_prehistory.helpers.language_models import (
    BigramLM,
    dyadic_ngram_lm,
    random_ngram_lm,
    random_positional_lm,
)

sys.path.insert(0, str(SOLUTIONS))
import beam_search as bs  # noqa: E402  (the reference solution)

SEEDS = range(12)


def complete_sequences(V, eos, L):
    others = [v for v in range(V) if v != eos]
    seqs = [body + (eos,) for n in range(1, L + 1) for body in itertools.product(others, repeat=n - 1)]
    return seqs + list(itertools.product(others, repeat=L))


def n_complete(V, L):
    return sum((V - 1) ** (t - 1) for t in range(1, L + 1)) + (V - 1) ** L


def product_score(lm, tokens, alpha=0.0):
    """log of the product of the probabilities, normalised: an independent route to the score."""
    if not tokens:
        return 0.0
    prob = math.prod(math.exp(lm((lm.bos,) + tokens[:t])[tok]) for t, tok in enumerate(tokens))
    return math.log(prob) / len(tokens) ** alpha


def ranked(pairs):
    return sorted(pairs, key=lambda r: (-r[1], r[0]))


def spec_beam(lm, eos, width, max_len):
    """The pseudo-code of beam_search.py's docstring, written independently: a dict of live prefixes, heap-free,
    each step ranked with np.lexsort. Returns the finished token tuples (unordered)."""
    live, finished = {(): 0.0}, []
    for _ in range(max_len):
        budget = width - len(finished)
        if budget <= 0 or not live:
            break
        cands = [(p + (v,), c + lp) for p, c in live.items() for v, lp in enumerate(lm((lm.bos,) + p))]
        toks = np.array([c[0] for c in cands])
        order = np.lexsort([toks[:, j] for j in reversed(range(toks.shape[1]))] + [-np.array([c[1] for c in cands])])
        kept = [cands[i] for i in order[:budget]]
        finished += [p for p, _ in kept if p[-1] == eos]
        live = {p: c for p, c in kept if p[-1] != eos}
    return finished + list(live)


def models(seed):
    """Models without rounding-decided ties (see test_bigram_ties_are_decided_by_rounding)."""
    rng = np.random.default_rng(seed)
    return [(random_positional_lm(rng, 3), 0), (random_ngram_lm(rng, 4, order=3, concentration=0.3), 2),
            (random_positional_lm(rng, 4, concentration=2.0), 3)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("alpha", [0.0, 0.7, 1.0])
def test_wide_beam_returns_every_complete_sequence(seed, alpha):
    for lm, eos in models(seed):
        V = lm.vocab_size
        L = 4 if V == 3 else 3
        exhaustive = ranked([(s, product_score(lm, s, alpha)) for s in complete_sequences(V, eos, L)])
        assert len(exhaustive) == n_complete(V, L)
        for width in (len(exhaustive), len(exhaustive) + 3):
            got = bs.beam_search(lm, lm.bos, eos, width, L, alpha)
            assert [s for s, _ in got] == [s for s, _ in exhaustive]
            np.testing.assert_allclose([x for _, x in got], [x for _, x in exhaustive], rtol=1e-12, atol=1e-13)
        # The exhaustive argmax, found by brute force alone:
        best = max(complete_sequences(V, eos, L), key=lambda s: product_score(lm, s, alpha))
        assert got[0][0] == best


@pytest.mark.parametrize("seed", SEEDS)
def test_result_size_is_min_of_width_and_complete_count(seed):
    for lm, eos in models(seed):
        V = lm.vocab_size
        for L in (1, 2, 3):
            N = n_complete(V, L)
            complete = set(complete_sequences(V, eos, L))
            for width in range(1, N + 3):
                got = bs.beam_search(lm, lm.bos, eos, width, L, 0.5)
                assert len(got) == min(width, N), (width, N)
                assert {s for s, _ in got} <= complete
                assert len({s for s, _ in got}) == len(got)
                assert got == ranked(got)


@pytest.mark.parametrize("seed", SEEDS)
def test_greedy_equals_explicit_argmax_loop(seed):
    for lm, eos in models(seed):
        for L in (1, 3, 6):
            tokens = ()
            for _ in range(L):
                v = int(np.argmax(lm((lm.bos,) + tokens)))
                tokens += (v,)
                if v == eos:
                    break
            for alpha in (0.0, 1.0):
                (got,) = bs.beam_search(lm, lm.bos, eos, 1, L, alpha)
                assert got[0] == tokens
                assert math.isclose(got[1], product_score(lm, tokens, alpha), rel_tol=1e-12, abs_tol=1e-13)


@pytest.mark.parametrize("seed", SEEDS)
def test_pruning_matches_independent_spec_implementation(seed):
    rng = np.random.default_rng(1000 + seed)
    for width, L, order, V in [(2, 5, 2, 4), (3, 6, 3, 4), (4, 4, 2, 5), (5, 5, 2, 3)]:
        eos = int(rng.integers(V))
        for alpha in (0.0, 0.8):
            lm = random_positional_lm(rng, V) if order == 2 else random_ngram_lm(rng, V, order=order)
            want = ranked([(s, product_score(lm, s, alpha)) for s in spec_beam(lm, eos, width, L)])
            got = bs.beam_search(lm, lm.bos, eos, width, L, alpha)
            assert [s for s, _ in got] == [s for s, _ in want]
            np.testing.assert_allclose([x for _, x in got], [x for _, x in want], rtol=1e-12, atol=1e-13)
        # Dyadic log-scores: sums are exact, so ties are real and the comparison is exact.
        lm = dyadic_ngram_lm(rng, V, order, levels=2)
        exact = {s: sum(lm((lm.bos,) + s[:t])[tok] for t, tok in enumerate(s)) for s in spec_beam(lm, eos, width, L)}
        assert bs.beam_search(lm, lm.bos, eos, width, L) == ranked(exact.items())


@pytest.mark.parametrize("seed", SEEDS)
def test_bigram_ties_are_decided_by_rounding(seed):
    """In a plain bigram model, (2, 2, 1, 2) and (2, 1, 2, 2) use the same four transitions, so
    their probabilities are equal in exact arithmetic and only float rounding orders them.
    The wide beam still returns every complete sequence, its order agrees with the exact
    scores up to 1e-12, and every score is right; only such rounding-level ties may differ
    from the lexicographic rule (the suites use positional models to avoid them)."""
    rng = np.random.default_rng(seed)
    lm, eos, L = random_ngram_lm(rng, 3, order=2), 0, 4
    seqs = complete_sequences(3, eos, L)
    got = bs.beam_search(lm, lm.bos, eos, len(seqs), L, 0.5)
    assert sorted(s for s, _ in got) == sorted(seqs)
    exact = [product_score(lm, s, 0.5) for s, _ in got]
    np.testing.assert_allclose([x for _, x in got], exact, rtol=1e-12, atol=1e-13)
    assert all(a >= b - 1e-12 for a, b in zip(exact, exact[1:]))


def test_tie_rule_hand_worked():
    # Uniform model: everything ties, so the lexicographic order alone decides.
    uniform = BigramLM(np.full((4, 3), math.log(1 / 3)), bos=3)
    assert [s for s, _ in bs.beam_search(uniform, 3, 0, 2, 3)] == [(0,), (1, 0)]
    assert [s for s, _ in bs.beam_search(uniform, 3, 2, 2, 2)] == [(0, 0), (0, 1)]
    # A three-way tie across parents for two slots: the smaller tuples (1, 1), (1, 2) win
    # over (2, 2), although (2, 2) descends from the better first step.
    cross = BigramLM(np.array([[-1.0, -1.0, -1.0], [-2.0, -0.25, -0.25], [-2.0, -2.0, -0.5], [-1.0, -0.5, -0.25]]),
                     bos=3)
    assert bs.beam_search(cross, 3, 0, 2, 2) == [((1, 1), -0.75), ((1, 2), -0.75)]


@pytest.mark.parametrize("seed", SEEDS)
def test_attribution_against_exhaustive_argmax(seed):
    for lm, eos in models(seed):
        for alpha in (0.0, 1.0):
            L = 3
            seqs = complete_sequences(lm.vocab_size, eos, L)
            scores = {s: product_score(lm, s, alpha) for s in seqs}
            best = max(seqs, key=scores.get)
            # A beam that saw everything never makes a search error: every reference is "model".
            assert all(bs.attribute_error(lm, s, best, lm.bos, alpha) == "model" for s in seqs)
            (greedy,) = bs.beam_search(lm, lm.bos, eos, 1, L, alpha)
            verdict = bs.attribute_error(lm, best, greedy[0], lm.bos, alpha)
            assert verdict == ("search" if scores[best] > scores[greedy[0]] + 1e-12 else "model")
            assert bs.attribute_error(lm, greedy[0], greedy[0], lm.bos, alpha) == "model"


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.integers(1, 2), st.integers(0, 4),
       st.integers(1, 6), st.sampled_from([0.0, 0.5, 1.0]))
def test_random_models_properties(seed, V, k, L, width, alpha):
    rng = np.random.default_rng(seed)
    lm = random_ngram_lm(rng, V, order=k + 1, concentration=float(rng.uniform(0.2, 2.0)))
    eos = int(rng.integers(V))
    got = bs.beam_search(lm, lm.bos, eos, width, L, alpha)
    if L == 0:
        assert got == [((), 0.0)]
        return
    complete = complete_sequences(V, eos, L)
    assert len(got) == min(width, len(complete))
    assert {s for s, _ in got} <= set(complete)
    for s, score in got:
        assert math.isclose(score, product_score(lm, s, alpha), rel_tol=1e-12, abs_tol=1e-13)
        assert score == bs.sequence_score(lm, s, lm.bos, alpha)
    assert {s for s, _ in got} == set(spec_beam(lm, eos, width, L))
    if width >= len(complete):   # the exhaustive maximum (up to rounding-level ties, see above)
        assert product_score(lm, got[0][0], alpha) >= max(product_score(lm, s, alpha) for s in complete) - 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_the_hidden_suites_exact_sequence_score_stand_in_is_exact(seed):
    """The stand-in the hidden attribute_error tests put in place of the student's
    sequence_score (oracles.ExactSequenceScore) against products of probabilities."""
    from autograder.units.rnn_prehistory.oracles import ExactSequenceScore

    rng = np.random.default_rng(seed)
    lm = random_ngram_lm(rng, 4, order=3)
    exact = ExactSequenceScore()
    for length in range(0, 6):
        tokens = tuple(int(t) for t in rng.integers(0, 4, size=length))
        for alpha in (0.0, 0.5, 1.0):
            assert math.isclose(exact(lm, tokens, lm.bos, alpha), product_score(lm, tokens, alpha),
                                rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_hidden_suites_beam_variant_without_a_mistake_is_the_reference(seed):
    """The grader-side beam search that diagnoses test their hypotheses with (hidden suite,
    beam_variant) is the reference when no mistake is asked for."""
    from autograder.units.rnn_prehistory.topics.beam_attribution import test_hidden as suite

    rng = np.random.default_rng(seed)
    for V, width, L, alpha in [(3, 2, 4, 0.0), (4, 3, 3, 1.0), (3, 5, 3, 0.5)]:
        lm = dyadic_ngram_lm(rng, V, order=2, levels=2)
        eos = int(rng.integers(V))
        assert suite.beam_variant(lm, eos, width, L, alpha) == bs.beam_search(lm, lm.bos, eos, width, L, alpha)


def test_models_accept_a_prefix_of_any_sequence_type():
    """The decision the docstrings document: a prefix should be a tuple, but the models grade
    no type, so a list or an array gives the same row; what is not a sequence is refused."""
    lm = BigramLM(np.log(np.array([[.1, .5, .4], [.4, .3, .3], [.9, .05, .05], [.1, .5, .4]])), bos=3)
    row = lm((3, 1))
    assert np.array_equal(lm([3, 1]), row) and np.array_equal(lm(np.array([3, 1])), row)
    with pytest.raises(TypeError, match="sequence of token ids"):
        lm(3)
