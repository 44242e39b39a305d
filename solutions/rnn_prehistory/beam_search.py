"""Beam search with length normalisation, and the search-vs-model error attribution.

The course notes (前沿专题·序列建模前史), stage five, sections 3 and 4: a decoder cannot
enumerate the exponentially many outputs, so it keeps the B best partial outputs (the
beam) at every step; B = 1 is greedy decoding. When the decoder's output y_hat is worse
than a reference y*, one computable test decides who is to blame (the attribution table,
oral-exam question 9: locate the responsible layer with a measurable criterion, then
pick the fix):

    score(y*) >  score(y_hat)   ->  "search": a better output exists and the beam missed it
                                    (fix: a wider beam)
    score(y*) <= score(y_hat)   ->  "model":  the model really prefers the wrong output
                                    (fix: architecture, data, regularisation)

A language model is a callable `log_prob_fn(prefix) -> (V,)` array of next-token
log-probabilities over the vocabulary 0..V-1, where `prefix` is a tuple of token ids that
starts with `bos`: log p(v | bos, y_1, ..., y_{t-1}) = log_prob_fn((bos, y_1, ..., y_{t-1}))[v].
Build it as (bos,) + tokens[:t]; the models of this course also accept any other sequence
of ints (a list, an array), so the type of the prefix is never graded, only its contents.
Token sequences (`tokens`) never contain bos; they end with eos when the decoder stopped.
"""

import numpy as np


def sequence_score(log_prob_fn, tokens, bos, alpha=0.0):
    """The beam's objective: the length-normalised log-probability of a token sequence.

        score(y) = (1 / T**alpha) * sum_{t=1..T} log p(y_t | bos, y_1, ..., y_{t-1}),  T = len(y)

    Inputs:
    - log_prob_fn: language model, log_prob_fn(prefix) -> (V,) log-probabilities
    - tokens: tuple of T token ids, without bos, with eos at the end if present
    - bos: start symbol; every prefix passed to log_prob_fn starts with it
    - alpha: length-normalisation exponent (float >= 0)

    Returns:
    - score: float

    alpha = 0 is the plain log-probability, which favours short outputs (every term is
    negative); alpha in [0.5, 1] softens that bias (course notes, stage five, section 3).
    An empty sequence scores 0.0.

    Serves oral-exam question 9 (the attribution compares two such scores).
    """
    # TODO: sum log p(y_t | bos, y_<t) over t, querying log_prob_fn((bos,) + y_<t); divide by T**alpha.
    ### BEGIN SOLUTION
    tokens = tuple(int(t) for t in tokens)
    if not tokens:
        return 0.0
    total = 0.0
    for t, token in enumerate(tokens):
        # Accumulate left to right, like the beam does, so that both give the same float.
        total += float(log_prob_fn((bos,) + tokens[:t])[token])
    return total / len(tokens) ** alpha
    ### END SOLUTION


def beam_search(log_prob_fn, bos, eos, beam_width, max_len, alpha=0.0):
    """Shrinking-budget beam search (as in CS224n's NMT decoder).

        live = [((), 0.0)]; finished = []
        repeat at most max_len times:
            budget = beam_width - len(finished)
            stop if budget <= 0 or live is empty
            candidates = (tokens + (v,), cum + log p(v | bos, tokens)) for live x vocabulary
            keep the `budget` best by cumulative log-probability cum
                 (ties: the lexicographically smaller token tuple first)
            kept ones ending in eos join `finished`; the others are the new `live`
        finished += live        # still live after max_len steps: they count as finished
        return [(tokens, sequence_score(tokens, alpha)) for each finished], best score first

    Inputs:
    - log_prob_fn: language model, log_prob_fn(prefix) -> (V,) log-probabilities
    - bos, eos: start and end symbols (ints); eos is in the vocabulary, bos need not be
    - beam_width: B >= 1
    - max_len: maximum number of generated tokens (eos included)
    - alpha: length-normalisation exponent of the final ranking

    Returns:
    - results: list of (tokens, score), tokens a tuple of ints without bos, sorted by
      score descending (ties: lexicographically smaller tokens first); len <= beam_width

    Pruning uses the raw cumulative log-probability (the candidates of one step all have
    the same length, so alpha could not change their order anyway); alpha matters in the
    final ranking, where lengths differ. Every finished hypothesis takes one slot of the
    beam away, so at most beam_width sequences come back. beam_width = 1 is greedy
    decoding; max_len = 0 returns [((), 0.0)]. Accumulate cum left to right as written
    (cum + log p): equal scores must come out exactly equal for the tie rule to apply.

    Serves oral-exam question 9 (a wider beam is the fix for a "search" error).
    """
    results = None
    # TODO: implement the pseudo-code above: expand live x vocabulary, keep the budget best, move eos-ended ones to finished.
    ### BEGIN SOLUTION
    live = [((), 0.0)]
    finished = []
    for _ in range(max_len):
        budget = beam_width - len(finished)
        if budget <= 0 or not live:
            break
        candidates = []
        for tokens, cum in live:
            log_p = np.asarray(log_prob_fn((bos,) + tokens), dtype=float)
            for v in range(log_p.shape[0]):
                candidates.append((tokens + (v,), cum + float(log_p[v])))
        # Best cumulative log-probability first; equal scores: smaller token tuple first.
        candidates.sort(key=lambda c: (-c[1], c[0]))
        live = []
        for tokens, cum in candidates[:budget]:
            (finished if tokens[-1] == eos else live).append((tokens, cum))
    finished += live
    # cum is the same left-to-right sum sequence_score computes, so reuse it.
    results = [(tokens, cum / len(tokens) ** alpha if tokens else 0.0) for tokens, cum in finished]
    results.sort(key=lambda r: (-r[1], r[0]))
    ### END SOLUTION
    return results


def attribute_error(log_prob_fn, reference, hypothesis, bos, alpha=0.0):
    """Blame a decoding error on the search or on the model (attribution table of the course notes).

        "search"  if score(reference) >  score(hypothesis)
        "model"   if score(reference) <= score(hypothesis)

    with score = sequence_score(..., alpha), the beam's own objective.

    Inputs:
    - log_prob_fn: language model, log_prob_fn(prefix) -> (V,) log-probabilities
    - reference: tuple of token ids of the correct output y* (without bos)
    - hypothesis: tuple of token ids the decoder produced, y_hat (without bos)
    - bos: start symbol
    - alpha: the length-normalisation exponent the beam used

    Returns:
    - "search" or "model"

    The inequality is strict: when the model scores both equally, a wider beam could not
    have preferred the reference, so the model is to blame.

    Serves oral-exam question 9.
    """
    # TODO: compare sequence_score of the reference and of the hypothesis; strictly higher reference -> "search".
    ### BEGIN SOLUTION
    ref_score = sequence_score(log_prob_fn, reference, bos, alpha)
    hyp_score = sequence_score(log_prob_fn, hypothesis, bos, alpha)
    return "search" if ref_score > hyp_score else "model"
    ### END SOLUTION
