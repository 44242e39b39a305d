"""A valid bleu.py written differently from the reference (must get full marks).

- n-grams with zip over shifted slices; clipping with Counter's & (min) and | (max);
- precisions as exact fractions.Fraction, BLEU = BP * (prod p_n) ** (1/N) (no logs);
- the closest reference length by sorting.
"""

import math
from collections import Counter
from fractions import Fraction


def ngram_counts(tokens, n):
    tokens = list(tokens)
    return Counter(zip(*[tokens[i:] for i in range(n)]))


def modified_precision(hypothesis, references, n):
    hyp = ngram_counts(hypothesis, n)
    best = Counter()
    for ref in references:
        best |= ngram_counts(ref, n)       # element-wise max over references
    return sum((hyp & best).values()), sum(hyp.values())


def brevity_penalty(hyp_len, ref_len):
    if hyp_len < ref_len:
        return math.exp(1 - ref_len / hyp_len) if hyp_len else 0.0
    return 1.0


def corpus_bleu(hypotheses, references, max_order=4, smooth="none"):
    assert smooth in ("none", "floor", "add-k", "exp")
    stats = [[0, 0] for _ in range(max_order)]
    c = r = 0
    for hyp, refs in zip(hypotheses, references):
        c += len(hyp)
        r += sorted((abs(len(ref) - len(hyp)), len(ref)) for ref in refs)[0][1]
        for n in range(1, max_order + 1):
            m, t = modified_precision(hyp, refs, n)
            stats[n - 1][0] += m
            stats[n - 1][1] += t
    if all(m == 0 for m, _ in stats):
        return 0.0
    product, zeros = Fraction(1), 0
    for n, (m, t) in enumerate(stats, start=1):
        k = 1 if smooth == "add-k" and n >= 2 else 0
        m, t = m + k, t + k
        if t == 0:
            return 0.0
        if m:
            product *= Fraction(m, t)
        elif smooth == "floor":
            product *= Fraction(1, 10) / t
        elif smooth == "exp":
            zeros += 1
            product *= Fraction(1, 2 ** zeros * t)
        else:
            return 0.0
    return brevity_penalty(c, r) * float(product) ** (1.0 / max_order)


def sentence_bleu(hypothesis, references, max_order=4, smooth="none"):
    return corpus_bleu([hypothesis], [references], max_order, smooth)
