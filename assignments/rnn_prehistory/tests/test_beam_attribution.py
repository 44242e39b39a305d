"""Public tests for beam_search.py: a hand-worked greedy trap.

The model below (vocabulary 0 = eos, 1 = "a", 2 = "b"; bos = 3 is a context only):

    p(. | bos) = [.1, .5, .4]     p(. | a) = [.4, .3, .3]     p(. | b) = [.9, .05, .05]

Greedy decoding takes "a" (0.5 > 0.4) and then stops: p(a eos) = .5 * .4 = .2. With two
beams, "b" survives the first step and "b eos" wins: .4 * .9 = .36. Every number
below follows from this table by hand.
"""

import math

import numpy as np

from autograder.i18n import _
from autograder.units.rnn_prehistory.helpers.language_models import BigramLM

EOS, A, B, BOS = 0, 1, 2, 3
TRAP = BigramLM(np.log(np.array([[0.1, 0.5, 0.4],      # after eos (never used)
                                 [0.4, 0.3, 0.3],      # after a
                                 [0.9, 0.05, 0.05],    # after b
                                 [0.1, 0.5, 0.4]])),   # after bos
                bos=BOS)


def _results(value, what="beam_search"):
    assert isinstance(value, list), \
        _("{what} should return a list of (tokens, score) pairs, got {type}").format(what=what, type=type(value).__name__)
    out = []
    for item in value:
        assert isinstance(item, (tuple, list)) and len(item) == 2, \
            _("{what}: every entry should be a (tokens, score) pair, got {item}").format(what=what, item=repr(item))
        tokens, score = item
        out.append((tuple(int(t) for t in tokens), float(score)))
    return out


def _expect_results(got, expected, what):
    got = _results(got, what)
    got_tokens, want_tokens = [t for t, _s in got], [t for t, _s in expected]
    assert got_tokens == want_tokens, \
        _("{what} returned the sequences {got}, expected {expected} (in this order)").format(
            what=what, got=got_tokens, expected=want_tokens)
    for (tokens, score), (_t, want) in zip(got, expected):
        assert math.isclose(score, want, rel_tol=1e-9, abs_tol=1e-12), \
            _("{what}: the score of {tokens} is {score}, expected {expected}").format(
                what=what, tokens=tokens, score=f"{score:.6f}", expected=f"{want:.6f}")


# A sum of three logs, or the log of their product, in any order: within ~1e-15 relative of these
# expressions, so rel_tol 1e-12 (and 1e-9 for the searches' scores) leaves a margin of 1e3.
def test_sequence_score_fixed_table(beam_search):
    log = math.log
    assert math.isclose(beam_search.sequence_score(TRAP, (B, EOS), BOS), log(0.4) + log(0.9), rel_tol=1e-12), \
        _("sequence_score((b, eos)) should be log p(b|bos) + log p(eos|b)")
    assert math.isclose(beam_search.sequence_score(TRAP, (A, A, EOS), BOS, alpha=1.0),
                        (log(0.5) + log(0.3) + log(0.4)) / 3, rel_tol=1e-12), \
        _("with alpha = 1 the summed log-probability is divided by T = len(tokens) (eos counts, bos does not)")
    assert math.isclose(beam_search.sequence_score(TRAP, (B, EOS), BOS, alpha=0.5),
                        (log(0.4) + log(0.9)) / math.sqrt(2), rel_tol=1e-12), \
        _("alpha = 0.5 divides by sqrt(T)")
    assert beam_search.sequence_score(TRAP, (), BOS, alpha=0.7) == 0.0, _("an empty sequence scores 0.0")


def test_beam_search_fixed_trap(beam_search):
    log = math.log
    _expect_results(beam_search.beam_search(TRAP, BOS, EOS, 1, 3), [((A, EOS), log(0.2))],
                    _("beam_search with beam_width=1 (greedy)"))
    _expect_results(beam_search.beam_search(TRAP, BOS, EOS, 2, 3),
                    [((B, EOS), log(0.36)), ((A, EOS), log(0.2))], _("beam_search with beam_width=2"))
    _expect_results(beam_search.beam_search(TRAP, BOS, EOS, 2, 3, alpha=1.0),
                    [((B, EOS), log(0.36) / 2), ((A, EOS), log(0.2) / 2)], _("beam_search with alpha=1"))


def test_beam_search_shrinking_budget(beam_search):
    log = math.log
    # Width 3: step 1 keeps eos, a, b; eos is finished, so step 2 has a budget of 2 only
    # (b eos .36 and a eos .2 beat a a, a b .15).
    _expect_results(beam_search.beam_search(TRAP, BOS, EOS, 3, 2),
                    [((B, EOS), log(0.36)), ((A, EOS), log(0.2)), ((EOS,), log(0.1))],
                    _("beam_search with beam_width=3, max_len=2"))
    # max_len = 1: a and b are still live after the last step, so they count as finished.
    _expect_results(beam_search.beam_search(TRAP, BOS, EOS, 2, 1), [((A,), log(0.5)), ((B,), log(0.4))],
                    _("beam_search with beam_width=2, max_len=1"))
    _expect_results(beam_search.beam_search(TRAP, BOS, EOS, 2, 0), [((), 0.0)], _("beam_search with max_len=0"))


def test_attribute_error_fixed(beam_search):
    # The greedy output (a eos) scores log .2; the reference (b eos) log .36: the beam missed it.
    assert beam_search.attribute_error(TRAP, (B, EOS), (A, EOS), BOS) == "search", \
        _("reference (b, eos) scores higher than the hypothesis (a, eos): that is a search error")
    # (a a eos) = .5 * .3 * .4 = .06 < .2: the model itself prefers the wrong output.
    assert beam_search.attribute_error(TRAP, (A, A, EOS), (A, EOS), BOS) == "model", \
        _("reference (a, a, eos) scores lower than the hypothesis (a, eos): that is a model error")
    assert beam_search.attribute_error(TRAP, (A, EOS), (A, EOS), BOS) == "model", \
        _("equal scores are a model error: 'search' needs the reference to score strictly higher")
