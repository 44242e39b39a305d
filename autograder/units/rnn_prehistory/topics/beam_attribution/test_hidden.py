"""Hidden suite for beam_search.py [beam_attribution]: sequence scores, the shrinking-budget beam, error attribution.

Expected values come from direct computations in this file (a greedy loop, exhaustive
enumeration, sums read straight from the model's table) or from the reference solution,
never from the student's code. Models are tiny, so the whole suite is a few dozen calls.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from autograder.authoring.checks import CheckFailed, diagnose, every_case, shown_pair, variant_hypotheses
from autograder.i18n import N_, _
from autograder.isolation.sandbox import StudentCodeError
from autograder.units.rnn_prehistory.helpers.language_models import (
    BigramLM,
    NGramLM,
    dyadic_ngram_lm,
    random_ngram_lm,
    random_positional_lm,
)
from autograder.units.rnn_prehistory.oracles import ExactSequenceScore

# A score is a sum of at most ~10 log-probabilities, divided by L^alpha: any order of the sum (or
# the log of a product) is within ~gamma_{3L} (1 + sum |log p|) ~ 1e-14 of another; 1e-9, relative
# or absolute, is the documented looser tolerance (a mistaken normalisation is off by 1e-1).
# Scalar arithmetic only (no BLAS): the rankings do not move with the machine.
TOL = 1e-9


# ----------------------------------------------------------------------------- helpers
def direct_score(lm, tokens, alpha=0.0) -> float:
    """sum_t log p(y_t | bos, y_<t) / T**alpha, added left to right as beam_search.py's docstring does."""
    if not tokens:
        return 0.0
    total = 0.0
    for t, token in enumerate(tokens):
        total += float(lm((lm.bos,) + tuple(tokens[:t]))[token])
    return total / len(tokens) ** alpha


def complete_sequences(vocab_size, eos, max_len):
    """Everything the beam can return: eos-terminated sequences of length <= max_len
    (eos only at the end) and eos-free sequences of length exactly max_len."""
    others = [v for v in range(vocab_size) if v != eos]
    out = []
    for length in range(1, max_len + 1):
        out += [body + (eos,) for body in itertools.product(others, repeat=length - 1)]
    out += list(itertools.product(others, repeat=max_len))
    return out


def exhaustive_ranking(lm, eos, max_len, alpha):
    seqs = complete_sequences(lm.vocab_size, eos, max_len)
    return sorted(((s, direct_score(lm, s, alpha)) for s in seqs), key=lambda r: (-r[1], r[0]))


def greedy_decode(lm, eos, max_len):
    tokens = ()
    for _step in range(max_len):
        v = int(np.argmax(lm((lm.bos,) + tokens)))    # first maximum = smallest id on ties
        tokens += (v,)
        if v == eos:
            break
    return tokens


def with_eos_weight(lm, eos: int, weight: float):
    """The same model with p(eos | .) multiplied by `weight`, renormalised."""
    p = np.exp(lm.log_probs)
    p[..., eos] *= weight
    p /= p.sum(axis=-1, keepdims=True)
    return type(lm)(np.log(p), lm.bos)


def make_lm(rng, vocab, order, concentration=0.5):
    """order 2: a bigram table per position (no ties that only float rounding could break);
    order 3: a trigram model (kept to max_len <= 5, where reordered transitions cannot tie)."""
    if order == 2:
        return random_positional_lm(rng, vocab, concentration=concentration)
    return random_ngram_lm(rng, vocab, order=order, concentration=concentration)


def as_results(value, what):
    if not isinstance(value, (list, tuple)):
        raise CheckFailed(_("{what} should return a list of (tokens, score) pairs, got {type}").format(
            what=what, type=type(value).__name__))
    out = []
    for item in value:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise CheckFailed(_("{what}: each entry should be a (tokens, score) pair, got {item}").format(
                what=what, item=repr(item)))
        tokens, score = item
        try:
            out.append((tuple(int(t) for t in tokens), float(score)))
        except (TypeError, ValueError):
            raise CheckFailed(_("{what}: tokens must be a tuple of ints and score a float, got {item}").format(
                what=what, item=repr(item))) from None
    return out


def compare_results(got, expected, what, beam_width=None, search=None, passed=()):
    """`search` = (lm, eos, beam_width, max_len, alpha) of the call: a wrong result that one
    known wrong beam search gives on the same model is named, unless that mistake would have
    failed one of the `passed` searches (earlier calls of the test that the student got right)."""
    got = as_results(got, what)
    if search is not None and got != as_results(expected, what):
        known = diagnose_beam(got, *search, passed=passed)
        if known:
            raise CheckFailed(_("{what} returned {got}, expected {expected}: {diagnosis}").format(
                what=what, got=_shown(got), expected=_shown(expected), diagnosis=known), "diagnosed")
    if beam_width is not None and len(got) > beam_width:
        raise CheckFailed(_("{what} returned {count} sequences for beam_width={beam_width}: every finished "
                            "hypothesis uses up one slot (budget = beam_width - len(finished))").format(
            what=what, count=len(got), beam_width=beam_width))
    got_tokens, want_tokens = [t for t, _s in got], [t for t, _s in expected]
    if sorted(got_tokens) != sorted(want_tokens):
        missing = [t for t in want_tokens if t not in got_tokens][:3]
        extra = [t for t in got_tokens if t not in want_tokens][:3]
        if not missing:
            differ = _("nothing is missing, but it also returned {extra}").format(extra=_listed(extra))
        elif not extra:
            differ = _("it returned no unexpected sequence, but {missing} is missing").format(missing=_listed(missing))
        else:
            differ = _("{missing} is missing and {extra} should not be there").format(
                missing=_listed(missing), extra=_listed(extra))
        raise CheckFailed(_("{what} returned {count} sequences, expected {expected}: {differ}").format(
            what=what, count=len(got), expected=len(expected), differ=differ))
    if got_tokens != want_tokens:
        i = next(i for i, (a, b) in enumerate(zip(got_tokens, want_tokens)) if a != b)
        raise CheckFailed(_("{what} returned the right sequences in the wrong order: position {i} holds {got}, "
                            "expected {expected} (best score first, ties: the lexicographically smaller token tuple "
                            "first)").format(what=what, i=i, got=got_tokens[i], expected=want_tokens[i]))
    for (tokens, score), (_t, want) in zip(got, expected):
        if not math.isclose(score, want, rel_tol=TOL, abs_tol=TOL):
            raise CheckFailed(_("{what}: the score of {tokens} is {score}, expected {expected} (sequence_score with "
                                "the same alpha)").format(what=what, tokens=tokens,
                                                          **shown_pair(score, want, ("score", "expected"), 10)))


def _listed(sequences) -> str:
    return ", ".join(str(s) for s in sequences)


def _shown(results) -> str:
    return "[" + ", ".join(f"({tokens}, {score:.4g})" for tokens, score in results[:4]) + \
        (", ...]" if len(results) > 4 else "]")


# ------------------------------------------------------- wrong beam searches, grader side
# A diagnosis tests its hypothesis first: the suspected mistake is run here on the same model
# and named only when it returns exactly the student's result (and the right search does not).
def beam_variant(lm, eos, beam_width, max_len, alpha=0.0, fixed_budget=False, drops_live=False,
                 keeps_eos_live=False, one_step_short=False, final_raw=False, prune_ties_in_generation_order=False,
                 final_ties_in_finishing_order=False, ties_larger_first=False, final_ties_larger_first=False,
                 per_parent=False, raw_scores=False):
    """The beam search of beam_search's docstring, or with one known departure from it (per_parent:
    the budget best continuations of each live hypothesis all kept; raw_scores: each result scored
    by its raw log-probability cum, not cum / T**alpha)."""
    live, finished = [((), 0.0)], []
    for _step in range(max_len - 1 if one_step_short else max_len):
        budget = beam_width if fixed_budget else beam_width - len(finished)
        if budget <= 0 or not live:
            break
        candidates = [(tokens + (v,), cum + float(p)) for tokens, cum in live
                      for v, p in enumerate(lm((lm.bos,) + tokens))]
        if per_parent:
            candidates = [c for tokens, cum in live for c in sorted(
                ((tokens + (v,), cum + float(p)) for v, p in enumerate(lm((lm.bos,) + tokens))),
                key=lambda c: (-c[1], c[0]))[:budget]]
        if prune_ties_in_generation_order:
            candidates.sort(key=lambda c: -c[1])
        elif ties_larger_first:
            candidates.sort(key=lambda c: (c[1], c[0]), reverse=True)
        else:
            candidates.sort(key=lambda c: (-c[1], c[0]))
        live = []
        for tokens, cum in candidates if per_parent else candidates[:budget]:
            (finished if tokens[-1] == eos and not keeps_eos_live else live).append((tokens, cum))
    results = finished if drops_live else finished + live
    results = [(tokens, cum / len(tokens) ** alpha if tokens else 0.0, cum) for tokens, cum in results]
    if raw_scores:
        results = [(tokens, cum, cum) for tokens, _score, cum in results]
        results.sort(key=lambda r: (-r[1], r[0]))
    elif final_raw:
        results.sort(key=lambda r: (-r[2], r[0]))
    elif final_ties_in_finishing_order:
        results.sort(key=lambda r: -r[1])
    elif final_ties_larger_first:
        results.sort(key=lambda r: (r[1], r[0]), reverse=True)
    else:
        results.sort(key=lambda r: (-r[1], r[0]))
    return [(tokens, score) for tokens, score, _cum in results]


BEAM_MISTAKES = (
    (dict(fixed_budget=True), N_("your result matches keeping beam_width candidates at every step: each finished "
                                 "hypothesis takes one slot away (budget = beam_width - len(finished))")),
    (dict(drops_live=True), N_("your result matches dropping the hypotheses still live after max_len steps: they "
                               "count as finished (finished += live)")),
    (dict(keeps_eos_live=True), N_("your result matches extending hypotheses past eos: one that ends in eos "
                                   "leaves the beam and joins the finished ones")),
    (dict(one_step_short=True), N_("your result matches max_len - 1 expansion steps: max_len counts the generated "
                                   "tokens, eos included")),
    (dict(final_raw=True), N_("your result matches a final ranking by the raw log-probability: the final ranking "
                              "uses sequence_score with alpha")),
    (dict(prune_ties_in_generation_order=True), N_("your result matches keeping tied candidates in the order they "
                                                   "were generated when pruning: on a tie the lexicographically "
                                                   "smaller token tuple goes first")),
    (dict(final_ties_in_finishing_order=True), N_("your result matches leaving tied results in the order they "
                                                  "finished: on a tie in the final ranking the lexicographically "
                                                  "smaller token tuple goes first")),
    (dict(ties_larger_first=True), N_("your result matches keeping the lexicographically larger token tuple on a "
                                      "tie when pruning (a reversed sort of (score, tokens)): the smaller one goes "
                                      "first")),
    (dict(final_ties_larger_first=True), N_("your result matches putting the lexicographically larger token tuple "
                                            "first on a tie in the final ranking (a reversed sort of (score, "
                                            "tokens)): the smaller one goes first")),
    (dict(per_parent=True), N_("your result matches keeping the budget best continuations of every live hypothesis: "
                               "the budget best of all the candidates together are kept, so at most beam_width "
                               "sequences come back")),
    (dict(raw_scores=True), N_("your result matches scores that are the raw log-probability of each sequence: the "
                               "score returned is sequence_score(tokens, alpha), cum / T**alpha")),
)


def _same(a, b) -> bool:
    return [t for t, _s in a] == [t for t, _s in b] and all(
        math.isclose(x, y, rel_tol=TOL, abs_tol=TOL) for (_t, x), (_u, y) in zip(a, b))


def diagnose_beam(got, lm, eos, beam_width, max_len, alpha, passed=()) -> str:
    search = (lm, eos, beam_width, max_len, alpha)
    # a mistake that would have failed one of the searches the student got right is not theirs
    rights = [beam_variant(*earlier) for earlier in passed]
    return diagnose(got, beam_variant(*search), ((_(text), beam_variant(*search, **mistake))
                                                 for mistake, text in BEAM_MISTAKES
                                                 if all(_same(beam_variant(*earlier, **mistake), right)
                                                        for earlier, right in zip(passed, rights))), _same)


# ----------------------------------------------------------------------------- tests
def test_sequence_score_matches_direct_sum(beam_search, rng):
    cases = []
    for order, vocab in [(2, 4), (3, 5), (1, 3)]:
        lm = random_ngram_lm(rng, vocab, order=order) if order != 2 else random_positional_lm(rng, vocab)
        for alpha in (0.0, 0.6, 1.0):
            length = int(rng.integers(1, 7))
            cases.append((lm, tuple(int(t) for t in rng.integers(0, vocab, size=length)), alpha))

    def run_case(case, record):
        lm, tokens, alpha = case
        got = float(beam_search.sequence_score(lm, tokens, lm.bos, alpha))
        want = direct_score(lm, tokens, alpha)
        record(got, want, ((_(text), wrong(lm, tokens, alpha)) for wrong, text in SCORE_MISTAKES))
        if not math.isclose(got, want, rel_tol=TOL, abs_tol=TOL):
            what = _("sequence_score of a length-{length} sequence (random model, alpha={alpha}) is {got}, "
                     "expected {expected}").format(length=len(tokens), alpha=alpha, **shown_pair(got, want, least=8))
            raise CheckFailed(_("{what} (each term conditions on bos and the tokens before it, and the sum is "
                                "divided by T**alpha with T = len(tokens))").format(what=what), plain=what)

    # every case runs: a mistake is named only when it gives the student's score on all of them
    every_case(cases, run_case, same=lambda a, b: math.isclose(a, b, rel_tol=TOL, abs_tol=TOL))
    try:
        empty = beam_search.sequence_score(lm, (), lm.bos, 1.0)
    except StudentCodeError as problem:
        if problem.exc_type != "ZeroDivisionError":
            raise
        raise CheckFailed(_("sequence_score of the empty sequence () raised ZeroDivisionError: {diagnosis}").format(
            diagnosis=_(EMPTY_SEQUENCE)), "diagnosed") from None
    assert empty == 0.0, _("sequence_score of the empty sequence () is {got}: an empty sequence scores 0.0").format(
        got=empty)


EMPTY_SEQUENCE = N_("an empty sequence scores 0.0 (T = 0: return 0.0 before dividing the empty sum by T**alpha)")
SCORE_MISTAKES = (
    (lambda lm, tokens, alpha: direct_score(lm, tokens), N_("your value matches the plain sum of the log-"
                                                             "probabilities: divide it by T**alpha")),
    (lambda lm, tokens, alpha: direct_score(lm, tokens) / (len(tokens) + 1) ** alpha,
     N_("your value matches a division by (T + 1)**alpha: T = len(tokens) counts the generated tokens (eos "
        "included), not bos")),
    (lambda lm, tokens, alpha: sum(float(lm((lm.bos,) + tokens[:t + 1])[token]) for t, token in enumerate(tokens))
     / len(tokens) ** alpha, N_("your value matches conditioning token t on tokens[:t+1], a prefix that already "
                                "holds it: query log_prob_fn((bos,) + tokens[:t])")),
)


def _greedy_case(rng, vocab, order, max_len, reaches_eos: bool):
    """A random model and eos for which greedy decoding ends on eos (or runs to max_len
    without it), as asked: every seed then checks both endings."""
    for _attempt in range(200):
        lm = make_lm(rng, vocab, order, concentration=0.3)
        eos = int(rng.integers(vocab))
        tokens = greedy_decode(lm, eos, max_len)
        if (tokens[-1] == eos) == reaches_eos:
            return lm, eos, tokens
    raise AssertionError("no such model")   # never: about half of all draws qualify


def every_search(beam_search, cases) -> None:
    """Each case (search, expected, what, beam_width checked or None) run (`every_case`): the
    student's beam_search on `search` = (lm, eos, beam_width, max_len, alpha) compared with
    `expected`; a known wrong beam search is named only when it gives the student's result on
    every search of the test."""
    def run_case(case, record):
        search, expected, what, width = case
        lm, eos, beam_width, max_len, alpha = search
        got = as_results(beam_search.beam_search(lm, lm.bos, eos, beam_width, max_len, alpha), what)
        record(got, beam_variant(*search), variant_hypotheses(beam_variant, BEAM_MISTAKES, *search))
        compare_results(got, expected, what, beam_width=width)
    every_case(cases, run_case, _same)


def test_greedy_is_beam_width_one(beam_search, rng):
    cases = []
    for order, vocab, max_len, alpha, reaches_eos in [(2, 4, 5, 0.0, False), (3, 4, 6, 0.7, True),
                                                      (2, 6, 4, 1.0, False), (3, 3, 1, 0.0, True)]:
        lm, eos, tokens = _greedy_case(rng, vocab, order, max_len, reaches_eos)
        cases.append(((lm, eos, 1, max_len, alpha), [(tokens, direct_score(lm, tokens, alpha))],
                      _("beam_search with beam_width=1 (greedy decoding, max_len={max_len})").format(max_len=max_len),
                      1))
    every_search(beam_search, cases)


def test_wide_beam_equals_exhaustive_enumeration(beam_search, rng):
    # With beam_width >= the number of complete sequences nothing is ever pruned, so the
    # beam returns every complete sequence, ranked; its first entry is the exhaustive argmax.
    cases = []
    for order, vocab, max_len, alpha in [(2, 3, 4, 0.0), (3, 4, 3, 1.0), (2, 4, 3, 0.5)]:
        lm = make_lm(rng, vocab, order)
        eos = int(rng.integers(vocab))
        expected = exhaustive_ranking(lm, eos, max_len, alpha)
        cases.append(((lm, eos, len(expected), max_len, alpha), expected,
                      _("beam_search with beam_width={width} = the number of complete sequences "
                        "(V={vocab}, max_len={max_len}, alpha={alpha})").format(
                          width=len(expected), vocab=vocab, max_len=max_len, alpha=alpha), None))
    every_search(beam_search, cases)


def test_beam_matches_reference_random_models(beam_search, reference, rng):
    configs = [  # (order, vocab, beam_width, max_len, alpha, eos weight)
        (2, 4, 2, 5, 0.0, 1.0), (2, 5, 3, 4, 0.7, 3.0), (3, 4, 3, 5, 1.0, 1.0), (2, 6, 4, 3, 0.0, 0.2),
        (3, 5, 2, 5, 0.5, 2.0), (2, 3, 5, 6, 1.0, 1.0), (2, 5, 4, 5, 0.0, 4.0), (3, 4, 4, 4, 0.8, 0.5),
    ]
    cases = []
    for order, vocab, width, max_len, alpha, eos_weight in configs:
        for _attempt in range(200):    # with alpha > 0, a model where normalising changes the final order
            eos = int(rng.integers(vocab))
            lm = with_eos_weight(make_lm(rng, vocab, order, concentration=0.4), eos, eos_weight)
            expected = reference.beam_search.beam_search(lm, lm.bos, eos, width, max_len, alpha)
            raw = sorted(expected, key=lambda r: (-direct_score(lm, r[0]), r[0]))
            if alpha == 0 or [t for t, _s in raw] != [t for t, _s in expected]:
                break
        cases.append(((lm, eos, width, max_len, alpha), expected,
                      _("beam_search(beam_width={width}, max_len={max_len}, alpha={alpha}) on a random model "
                        "with {vocab} tokens").format(width=width, max_len=max_len, alpha=alpha, vocab=vocab), width))
    every_search(beam_search, cases)


def test_beam_ties_lexicographic(beam_search, reference, rng):
    # Uniform model: every step is a tie, so the token order alone decides.
    v = 3
    uniform = BigramLM(np.full((v + 1, v), np.log(1.0 / v)), bos=v)
    third = math.log(1.0 / v)
    compare_results(beam_search.beam_search(uniform, v, 0, 2, 3), [((0,), third), ((1, 0), third + third)],
                    _("beam_search(beam_width=2) on a uniform model with eos=0: (0,) and (1,) tie with (2,) at "
                      "step 1 and win as the smaller tuples; then (1, 0) beats (1, 1), (1, 2)"),
                    search=(uniform, 0, 2, 3, 0.0))
    # A tie across parents: after step 1 the beam holds (2,) at -0.25 and (1,) at -0.5; then
    # (1, 1), (1, 2) and (2, 2) all reach -0.75 for 2 slots. The smaller tuples win, although
    # (2, 2) is generated first (its parent ranks higher).
    cross = BigramLM(np.array([[-1.0, -1.0, -1.0], [-2.0, -0.25, -0.25], [-2.0, -2.0, -0.5],
                               [-1.0, -0.5, -0.25]]), bos=3)
    compare_results(beam_search.beam_search(cross, 3, 0, 2, 2), [((1, 1), -0.75), ((1, 2), -0.75)],
                    _("beam_search(beam_width=2, max_len=2) with a three-way tie at -0.75 between (2, 2), (1, 1) "
                      "and (1, 2) for two slots"), beam_width=2, search=(cross, 0, 2, 2, 0.0))
    # Ties in the final ranking, both ways round: a finished and a live hypothesis at -0.75
    # when max_len runs out; the smaller tuple ranks first whichever finished first.
    passed = []
    for table, want in (([[-1.0, -1.0, -1.0], [-0.5, -4.0, -4.0], [-4.0, -4.0, -0.25], [-4.0, -0.25, -0.5]],
                         [((1, 0), -0.75), ((2, 2), -0.75)]),
                        ([[-1.0, -1.0, -1.0], [-4.0, -0.25, -4.0], [-0.5, -4.0, -4.0], [-4.0, -0.5, -0.25]],
                         [((1, 1), -0.75), ((2, 0), -0.75)])):
        final = BigramLM(np.array(table), bos=3)
        compare_results(beam_search.beam_search(final, 3, 0, 2, 2), want,
                        _("beam_search(beam_width=2, max_len=2) where {ended} ends in eos and {live} is still live, "
                          "both at -0.75 (the final ranking breaks the tie: the smaller token tuple first)").format(
                            ended=[t for t, _s in want if t[-1] == 0][0], live=[t for t, _s in want if t[-1] != 0][0]),
                        beam_width=2, search=(final, 0, 2, 2, 0.0), passed=passed)
        passed.append((final, 0, 2, 2, 0.0))
    # The same tie under length normalisation: (1, 1, 1) live at max_len, -1.5 / 3, and (2, 0)
    # finished at -1.0 / 2, with alpha = 1.
    final3 = BigramLM(np.array([[-1.0, -1.0, -1.0], [-4.0, -0.5, -4.0], [-0.5, -4.0, -0.5],
                                [-4.0, -0.5, -0.5]]), bos=3)
    compare_results(beam_search.beam_search(final3, 3, 0, 2, 3, 1.0),
                    reference.beam_search.beam_search(final3, 3, 0, 2, 3, 1.0),
                    _("beam_search(beam_width=2, max_len=3, alpha=1) with a tie in the final ranking between a "
                      "finished and a live hypothesis"), beam_width=2, search=(final3, 0, 2, 3, 1.0))
    # Dyadic scores: exact ties between different parents and lengths.
    for order, vocab, width, max_len in [(2, 3, 3, 4), (2, 4, 2, 4), (3, 3, 4, 3), (2, 4, 5, 3)]:
        lm = dyadic_ngram_lm(rng, vocab, order=order, levels=2)
        eos = int(rng.integers(vocab))
        compare_results(beam_search.beam_search(lm, lm.bos, eos, width, max_len),
                        reference.beam_search.beam_search(lm, lm.bos, eos, width, max_len),
                        _("beam_search(beam_width={width}, max_len={max_len}) on a model with many exactly tied "
                          "scores (ties: the lexicographically smaller token tuple first, both when pruning and "
                          "in the final ranking)").format(width=width, max_len=max_len), beam_width=width,
                        search=(lm, eos, width, max_len, 0.0))


def test_beam_edge_cases(beam_search, reference, rng):
    lm = random_positional_lm(rng, 4)
    compare_results(beam_search.beam_search(lm, lm.bos, 0, 3, 0), [((), 0.0)], _("beam_search with max_len=0"),
                    search=(lm, 0, 3, 0, 0.0))
    # Width larger than the vocabulary, one step: every single token comes back, ranked.
    compare_results(beam_search.beam_search(lm, lm.bos, 0, 6, 1),
                    sorted((((t,), direct_score(lm, (t,))) for t in range(4)), key=lambda r: (-r[1], r[0])),
                    "beam_search(beam_width=6, max_len=1)", search=(lm, 0, 6, 1, 0.0))
    # eos almost never: the live hypotheses after max_len are the result.
    rare = with_eos_weight(lm, 0, 1e-6)
    compare_results(beam_search.beam_search(rare, rare.bos, 0, 3, 4),
                    reference.beam_search.beam_search(rare, rare.bos, 0, 3, 4),
                    _("beam_search when no hypothesis ends in eos within max_len (the live ones count as "
                      "finished)"),
                    beam_width=3, search=(rare, 0, 3, 4, 0.0))
    # eos almost always: the beam fills with finished hypotheses and stops early.
    eager = with_eos_weight(lm, 0, 1e6)
    compare_results(beam_search.beam_search(eager, eager.bos, 0, 3, 5),
                    reference.beam_search.beam_search(eager, eager.bos, 0, 3, 5),
                    _("beam_search when eos is the likeliest token everywhere"), beam_width=3,
                    search=(eager, 0, 3, 5, 0.0))


def _attribute_error(beam_search):
    """The student's attribute_error with an exact sequence_score in place of theirs: a
    mistake in sequence_score is charged in its own tests, not again here."""
    return beam_search.attribute_error.patched({"beam_search.sequence_score": ExactSequenceScore()})


def test_attribute_error_strict_inequality(beam_search, rng):
    attribute_error = _attribute_error(beam_search)
    lm = random_ngram_lm(rng, 4)
    seqs = complete_sequences(4, 0, 3)
    picks = [seqs[i] for i in rng.choice(len(seqs), size=6, replace=False)]
    for ref, hyp in zip(picks[::2], picks[1::2]):
        for a, b in ((ref, hyp), (hyp, ref)):
            want = "search" if direct_score(lm, a) > direct_score(lm, b) else "model"
            got = attribute_error(lm, a, b, lm.bos)
            if got != want:
                raise CheckFailed(_("attribute_error returned {got}, expected {expected}: 'search' exactly when the "
                                    "reference scores strictly higher than the hypothesis").format(
                    got=repr(got), expected=repr(want)))
    same = picks[0]
    got = attribute_error(lm, same, same, lm.bos, 0.5)
    assert got == "model", _("reference == hypothesis gave {got}: equal scores are a model error (strict >)").format(
        got=repr(got))
    # Two different sequences with exactly equal scores (dyadic log-scores are exact).
    dy = NGramLM(np.array([[-0.5, -0.25, -0.75], [-0.5, -0.25, -0.75], [-0.25, -0.25, -0.75],
                           [-0.5, -0.25, -0.5]]), bos=3)
    ref, hyp = (1, 2, 0), (2, 1, 0)     # -0.25 - 0.75 - 0.25 = -1.25 and -0.5 - 0.25 - 0.5 = -1.25
    assert direct_score(dy, ref) == direct_score(dy, hyp)
    for a, b in ((ref, hyp), (hyp, ref)):
        got = attribute_error(dy, a, b, dy.bos)
        assert got == "model", _("two different sequences with exactly equal scores gave {got}: only a strictly "
                                 "higher reference score is a search error").format(got=repr(got))


def test_attribute_error_uses_length_normalisation(beam_search, rng):
    # The public trap model: hypothesis (eos,) scores log .1 = -2.30; reference (a, a, eos)
    # scores log .06 = -2.81 in total but -0.94 per token.
    trap = BigramLM(np.log(np.array([[0.1, 0.5, 0.4], [0.4, 0.3, 0.3], [0.9, 0.05, 0.05], [0.1, 0.5, 0.4]])), bos=3)
    cases = [(trap, (1, 1, 0), (0,))]
    # And a random model: a pair whose verdict flips between alpha = 0 and alpha = 1.
    lm = random_ngram_lm(rng, 4)
    scores = {s: (direct_score(lm, s), direct_score(lm, s, 1.0)) for s in complete_sequences(4, 0, 3)}
    for a, b in itertools.combinations(scores, 2):
        if (scores[a][0] > scores[b][0]) != (scores[a][1] > scores[b][1]):
            cases.append((lm, a, b))
            break
    attribute = _attribute_error(beam_search)
    for model, ref, hyp in cases:
        for alpha in (0.0, 1.0):
            want = "search" if direct_score(model, ref, alpha) > direct_score(model, hyp, alpha) else "model"
            got = attribute(model, ref, hyp, model.bos, alpha)
            if got != want:
                raise CheckFailed(_("attribute_error(alpha={alpha}) returned {got}, expected {expected}: compare "
                                    "the scores under the beam's own objective, sequence_score(..., alpha)").format(
                    alpha=alpha, got=repr(got), expected=repr(want)))
