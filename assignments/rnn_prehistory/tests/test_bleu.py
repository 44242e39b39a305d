"""Public tests for bleu.py: small cases whose numbers can be checked by hand."""

import math

from autograder.i18n import _


def _toks(text):
    return text.split()


def test_ngram_counts_fixed(bleu):
    counts = bleu.ngram_counts(_toks("a b a b"), 2)
    assert dict(counts) == {("a", "b"): 2, ("b", "a"): 1}, \
        _("bigrams of 'a b a b' should be {expected}, got {got}").format(
            expected="{('a','b'): 2, ('b','a'): 1}", got=dict(counts))
    assert dict(bleu.ngram_counts(_toks("a b a b"), 1)) == {("a",): 2, ("b",): 2}, \
        _("unigrams are 1-tuples: {expected}").format(expected="{('a',): 2, ('b',): 2}")
    assert not bleu.ngram_counts(_toks("a b a b"), 5), _("a 4-token list has no 5-grams: expected an empty Counter")


def test_modified_precision_clipping_fixed(bleu):
    # "the" appears once in the reference, so only one of the three counts.
    assert tuple(bleu.modified_precision(_toks("the the the"), [_toks("the cat")], 1)) == (1, 3), \
        _("'the the the' against 'the cat': clip each n-gram at its count in the reference -> (1, 3)")
    # Clipping uses the maximum count in any single reference (2 here), not the sum (3).
    refs = [_toks("the cat"), _toks("the the dog")]
    assert tuple(bleu.modified_precision(_toks("the the the"), refs, 1)) == (2, 3), \
        _("with references 'the cat' and 'the the dog' the clip is max(1, 2) = 2, not 1 + 2")
    assert tuple(bleu.modified_precision(_toks("the cat"), [_toks("the mat")], 2)) == (0, 1)


# BLEU here is counts, a few logs and an exp: any correct order is within ~1e-15 relative of these
# expressions (no matrix products), so rel_tol 1e-12 and 1e-9 leave margins of 1e3 and more.
def test_brevity_penalty_fixed(bleu):
    assert bleu.brevity_penalty(5, 5) == 1.0 and bleu.brevity_penalty(7, 5) == 1.0, \
        _("no penalty when the hypothesis is at least as long as the reference")
    assert math.isclose(bleu.brevity_penalty(4, 5), math.exp(1 - 5 / 4), rel_tol=1e-12), \
        _("BP = exp(1 - r/c) for c = 4 < r = 5")
    assert bleu.brevity_penalty(0, 3) == 0.0, _("an empty hypothesis gets BP = 0 (no division by zero)")


def test_corpus_bleu_fixed_corpus(bleu):
    hyp = _toks("the cat sat on the mat")
    ref = _toks("the cat is on the mat")
    # Clipped matches / totals: unigrams 5/6, bigrams 3/5 (the cat, on the, the mat),
    # trigrams 1/4 (on the mat), 4-grams 0/3. Same length: BP = 1.
    assert bleu.corpus_bleu([hyp], [[ref]]) == 0.0, _("without smoothing a zero 4-gram precision makes BLEU 0")
    expected_exp = (5 / 6 * 3 / 5 * 1 / 4 * 1 / 6) ** 0.25       # exp smoothing: p4 = 1 / (2 * 3)
    got = bleu.corpus_bleu([hyp], [[ref]], smooth="exp")
    assert math.isclose(got, expected_exp, rel_tol=1e-9), \
        _("corpus_bleu(smooth='exp') of 'the cat sat on the mat' is {got}, expected {expected}: BP = 1 and BLEU = "
          "(5/6 * 3/5 * 1/4 * 1/6) ** (1/4), the geometric mean of p_1..p_4 with p_4 = 1/(2*3)").format(
              got=f"{got:.10g}", expected=f"{expected_exp:.10g}")
    expected_bigram = (5 / 6 * 3 / 5) ** 0.5
    assert math.isclose(bleu.corpus_bleu([hyp], [[ref]], max_order=2), expected_bigram, rel_tol=1e-9), \
        _("max_order = 2 averages the logs of p_1 and p_2 only")
    assert math.isclose(bleu.sentence_bleu(hyp, [ref], smooth="exp"), expected_exp, rel_tol=1e-9), \
        _("sentence_bleu(h, refs) should equal corpus_bleu([h], [refs])")
    # Per-hypothesis layout: references[i] lists the references of hypothesis i; statistics
    # are pooled over the corpus: unigrams 5+4 / 6+4, bigrams 3+3 / 5+3, trigrams 1+2 / 4+2,
    # 4-grams 0+1 / 3+1; lengths c = 10, r = 6 + 4 (the closest of 2 and 4 is 4).
    two = bleu.corpus_bleu([hyp, _toks("a b c d")], [[ref], [_toks("x y"), _toks("a b c d")]])
    expected_two = (9 / 10 * 6 / 8 * 3 / 6 * 1 / 4) ** 0.25
    assert math.isclose(two, expected_two, rel_tol=1e-9), \
        _("two-sentence corpus: got {got}, expected {expected} = (9/10 * 6/8 * 3/6 * 1/4) ** (1/4), from the "
          "clipped matches and totals summed over both sentences and c = r = 10").format(
              got=f"{two:.6f}", expected=f"{expected_two:.6f}")
