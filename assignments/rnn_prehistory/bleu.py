# Generated from solutions/rnn_prehistory/bleu.py by scripts/make_stubs.py.
# Students: fill in every TODO below. Instructors: edit the solution, then run `make stubs`.
# 同学们：请完成下面的每个 TODO（每条英文说明下面都有中文）。
"""BLEU: clipped n-gram precision with a brevity penalty (Papineni et al., 2002).

The course notes (前沿专题·序列建模前史), stage five, section 5, place BLEU next to
perplexity: perplexity scores the model's probabilities, BLEU scores how much of a
generated text's surface n-grams a reference contains (it cannot see paraphrases). The
course notes write BLEU = exp((1/n) sum_k p_k), which is wrong twice: the average is over
the *logs* of the precisions (a geometric mean), and the brevity penalty multiplies it:

    BLEU = BP * exp( (1/N) * sum_{n=1..N} log p_n )

This is the corpus BLEU of sacrebleu 2.x with tokenize="none" and effective_order=False:
our result times 100 is sacrebleu's score on the space-joined tokens.

Reference layout -- the classic bug. Here `references[i]` is the list of references of
hypothesis i (per hypothesis, as in nltk's corpus_bleu):

    hypotheses = [hyp_0, hyp_1]
    references = [[ref_0a, ref_0b], [ref_1a]]          # hypothesis 1 has one reference

sacrebleu takes reference *streams* instead, refs[k][i] = the k-th reference of
hypothesis i: [[ref_0a, ref_1a], [ref_0b, None]]. Passing one layout to code written for
the other often runs without error and silently scores hypotheses against the wrong
sentences; transpose (and pad with None for sacrebleu) when converting.

Tokens are lists of strings, already tokenised; no lower-casing, no tokenisation here.
"""

import math
from collections import Counter


def ngram_counts(tokens, n):
    """Count the n-grams of a token list.
    统计一个 token 列表中的 n-gram。

        counts[(w_i, ..., w_{i+n-1})] = number of positions i where that n-gram starts

    Inputs:
    - tokens: list of L strings
    - n: n-gram order >= 1

    Returns:
    - counts: collections.Counter mapping n-gram tuples (of n strings) to counts;
      empty when L < n (there are max(L - n + 1, 0) n-grams)
    """
    # TODO: Counter of the tuples tokens[i:i+n] for every start i = 0..L-n.
    # TODO（中文）：对每个起点 i = 0..L-n，统计元组 tokens[i:i+n] 的 Counter。
    raise NotImplementedError("ngram_counts: fill in the TODO above")


def modified_precision(hypothesis, references, n):
    """Clipped n-gram matches of one hypothesis against its references.
    一个候选译文相对其参考译文的裁剪后 n-gram 匹配数。

        clipped = sum_g min( count_hyp(g), max_r count_r(g) )      total = sum_g count_hyp(g)

    Inputs:
    - hypothesis: list of strings
    - references: list of references, each a list of strings
    - n: n-gram order

    Returns:
    - (clipped_matches, total): two ints; p_n = clipped_matches / total

    Each hypothesis n-gram g counts at most as often as it appears in any *single*
    reference (the maximum over references, not the sum): "the the the" against
    "the cat" has 1 clipped unigram match out of 3, not 3 -- repeating a correct word
    earns nothing.
    """
    # TODO: clip each hypothesis n-gram count by its maximum count in any single reference; return (clipped, total).
    # TODO（中文）：把候选译文中每个 n-gram 的计数截到它在任意单个参考译文中的最大计数；返回 (clipped,
    # total)。
    raise NotImplementedError("modified_precision: fill in the TODO above")


def brevity_penalty(hyp_len, ref_len):
    """The brevity penalty: precision alone rewards saying little, so short output pays.
    简短惩罚：只看精确率会奖励少说，所以过短的输出要付出代价。

        BP = 1                          if c >= r
             exp(1 - r / c)             if 0 < c < r
             0                          if c = 0 < r

    with c = hyp_len and r = ref_len (corpus totals in corpus_bleu), as in sacrebleu.

    Inputs:
    - hyp_len: int c >= 0
    - ref_len: int r >= 0

    Returns:
    - bp: float in [0, 1]
    """
    # TODO: 1 when c >= r, else exp(1 - r/c), and 0 for an empty hypothesis (no division by zero).
    # TODO（中文）：c >= r 时为 1，否则为 exp(1 - r/c)；候选译文为空时为 0（不做除零）。
    raise NotImplementedError("brevity_penalty: fill in the TODO above")


def corpus_bleu(hypotheses, references, max_order=4, smooth="none"):
    """Corpus BLEU (sacrebleu 2.x definitions; tokenize="none", effective_order=False).
    语料级 BLEU（sacrebleu 2.x 的定义；tokenize="none"，effective_order=False）。

        m_n, t_n = sum over sentences of modified_precision(hyp_i, references[i], n)
        c = sum_i len(hyp_i);   r = sum_i (the reference length closest to len(hyp_i);
                                          ties: the shorter one)
        BLEU = brevity_penalty(c, r) * exp( (1/N) * sum_{n=1..N} log p_n ),  N = max_order

    Inputs:
    - hypotheses: list of M hypotheses, each a list of strings
    - references: list of M lists; references[i] = the references of hypothesis i
      (at least one each; the count may differ between hypotheses)
    - max_order: N, the largest n-gram order
    - smooth: "none" | "floor" | "add-k" | "exp"

    Returns:
    - bleu: float in [0, 1] (sacrebleu's score / 100)

    Statistics are pooled over the corpus before dividing (not an average of sentence
    scores). p_n = m_n / t_n, except, with smooth:
    - "none":  no smoothing; any m_n = 0 makes BLEU 0;
    - "floor": p_n = 0.1 / t_n where m_n = 0;
    - "add-k": for every order n >= 2, m_n += 1 and t_n += 1 (k = 1) before dividing;
    - "exp":   the i-th order with m_n = 0 gets p_n = 1 / (2**i * t_n) (i = 1, 2, ...).
    Edge cases, all smoothing modes: if no n-gram of any order matches, BLEU = 0; if some
    order has t_n = 0 (every hypothesis shorter than n) BLEU = 0 -- "add-k" avoids that
    for n >= 2, since it adds 1 to t_n.

    See the module docstring for the reference layout (per hypothesis, not sacrebleu's
    streams) and for the course notes' erroneous formula.

    No oral-exam question of the course notes asks for BLEU itself; it is the external
    measure of their stage five, section 5 -- the low score whose cause the attribution
    table of question 9 then assigns to the search or to the model.
    """
    # TODO: pool clipped matches, totals and lengths over the corpus; BP * exp(mean log p_n) with the smoothing above.
    # TODO（中文）：在整个语料上汇总裁剪后的匹配数、总数和长度；BP * exp(mean log p_n)，
    # 按上面的方式平滑。
    raise NotImplementedError("corpus_bleu: fill in the TODO above")


def sentence_bleu(hypothesis, references, max_order=4, smooth="none"):
    """BLEU of one sentence: corpus_bleu on a one-sentence corpus.
    单个句子的 BLEU：在只有一个句子的语料上调用 corpus_bleu。

    Inputs:
    - hypothesis: list of strings
    - references: list of references (lists of strings) of this hypothesis
    - max_order, smooth: as in corpus_bleu

    Returns:
    - bleu: float in [0, 1]

    Without smoothing most sentences score 0 (one order without a match is enough);
    use smooth="exp" or "floor" for sentence-level scores.
    """
    # TODO: call corpus_bleu with a corpus of one hypothesis and its reference list.
    # TODO（中文）：用只含一个候选译文及其参考译文列表的语料调用 corpus_bleu。
    raise NotImplementedError("sentence_bleu: fill in the TODO above")
