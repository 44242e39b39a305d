"""A valid beam_search.py written differently from the reference (must get full marks).

- the beam is a 2-D array of tokens, expanded and ranked with numpy (np.lexsort), one
  array operation per step instead of a Python list of candidates;
- finished scores are recomputed from scratch with sequence_score, which sums the
  gathered log-probabilities with np.sum (pairwise summation: a different float order);
- the attribution compares the difference of the two scores with zero.
"""

import numpy as np


def sequence_score(log_prob_fn, tokens, bos, alpha=0.0):
    tokens = [int(t) for t in tokens]
    if len(tokens) == 0:
        return 0.0
    terms = np.array([log_prob_fn(tuple([bos] + tokens[:t]))[tok] for t, tok in enumerate(tokens)])
    return float(np.sum(terms) / np.power(float(len(tokens)), alpha))


def beam_search(log_prob_fn, bos, eos, beam_width, max_len, alpha=0.0):
    beam = np.zeros((1, 0), dtype=np.int64)     # live token rows
    cums = np.zeros(1)
    done = []
    for _ in range(max_len):
        budget = beam_width - len(done)
        if budget <= 0 or beam.shape[0] == 0:
            break
        rows = np.stack([np.asarray(log_prob_fn(tuple([bos] + row.tolist())), dtype=float) for row in beam])
        V = rows.shape[1]
        cand = np.concatenate([np.repeat(beam, V, axis=0), np.tile(np.arange(V), beam.shape[0])[:, None]], axis=1)
        cand_cum = (cums[:, None] + rows).ravel()
        # np.lexsort sorts by its last key first: score descending, then the tokens left to right.
        keys = [cand[:, j] for j in range(cand.shape[1] - 1, -1, -1)] + [-cand_cum]
        order = np.lexsort(keys)[:budget]
        cand, cand_cum = cand[order], cand_cum[order]
        ended = cand[:, -1] == eos
        done += [tuple(int(t) for t in row) for row in cand[ended]]
        beam, cums = cand[~ended], cand_cum[~ended]
    done += [tuple(int(t) for t in row) for row in beam]
    scored = [(tokens, sequence_score(log_prob_fn, tokens, bos, alpha)) for tokens in done]
    return sorted(scored, key=lambda r: (-r[1], r[0]))


def attribute_error(log_prob_fn, reference, hypothesis, bos, alpha=0.0):
    gap = sequence_score(log_prob_fn, reference, bos, alpha) - sequence_score(log_prob_fn, hypothesis, bos, alpha)
    return "search" if gap > 0 else "model"
