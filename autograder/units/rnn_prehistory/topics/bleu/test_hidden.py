"""Hidden suite for bleu.py [bleu]: n-gram counts, clipped precisions, brevity penalty, corpus BLEU, smoothing.

Expected values are worked out by hand in this file (small corpora, exact fractions) or
come from the reference solution on random corpora; the reference itself is checked
against sacrebleu in test_oracle.py beside this suite.

When a corpus BLEU value is wrong, the grader computes known wrong formulas on the same
corpus (bleu_variant, below: nltk's phantom n-gram of a hypothesis shorter than n,
TensorFlow NMT's add-one smoothing of every order) and, if the student's value is one of
them, says which.
"""

from __future__ import annotations

import math
from collections import Counter

from autograder.authoring.checks import CheckFailed, Diagnosis, shown_pair
from autograder.i18n import N_, _
from autograder.isolation.sandbox import StudentCodeError

MODES = ("none", "floor", "add-k", "exp")
WORDS = "the cat sat on a mat dog ran".split()


def toks(text):
    return text.split()


def close(a, b) -> bool:
    """Two BLEU scores alike: counts, a few logs and an exp (no BLAS) round to ~1e-15 in any order;
    1e-9 is far above that and far below a mistake (a smoothing off by one count moves it 1e-3)."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def expect_bleu(got, want, what, hint=""):
    """A BLEU value (a brevity penalty) `got` must be `want`; corpus values go through BleuCases."""
    try:
        got = float(got)
    except (TypeError, ValueError):
        raise CheckFailed(_("{what} should be a float, got {type}").format(
            what=what, type=type(got).__name__)) from None
    if not close(got, want):
        message = _("{what} is {got}, expected {expected}").format(
            what=what, **shown_pair(got, want, least=10))
        raise CheckFailed(_("{message} ({why})").format(message=message, why=hint) if hint else message)


class BleuCases:
    """The corpus_bleu and sentence_bleu calls of one test, all run, then judged (`check`): the
    first wrong one fails the test, and a known mistake is named only when recomputing under it
    gives the student's value on every call (checks.Diagnosis), the calls the student got right
    and those after the first wrong one too.

        cases = BleuCases(bleu)
        cases.corpus(hyps, refs, {"smooth": "exp"}, want, what, hint)
        cases.sentence(hyp, refs, {"smooth": "add-k"}, want, what, hint)
        cases.check()
    """

    def __init__(self, bleu):
        self.bleu, self.cases = bleu, []

    def corpus(self, hyps, refs, options, want, what, hint=""):
        self.cases.append(("corpus", hyps, refs, options, want, what, hint))

    def sentence(self, hyp, refs, options, want, what, hint=""):
        self.cases.append(("sentence", [hyp], [refs], options, want, what, hint))

    def check(self):
        diagnosis = Diagnosis(same_bleu, differs=lambda wrong, right: isinstance(wrong, Rounded) or not close(wrong, right))
        # Each call's (got, want, corpus) is kept and the mistakes are recomputed only when a call
        # failed: a right submission never pays for them (about 1,000 wrong BLEUs per grading).
        recorded = []

        def record(got, want, hyps, refs, order, smooth):
            recorded.append((got, want, (hyps, refs, order, smooth, want)))

        first, first_got, first_want, first_smooth, first_what = None, None, None, None, ""
        for kind, hyps, refs, options, want, what, hint in self.cases:
            order, smooth = options.get("max_order", 4), options.get("smooth", "none")
            try:
                got = self.bleu.corpus_bleu(hyps, refs, **options) if kind == "corpus" else \
                    self.bleu.sentence_bleu(hyps[0], refs[0], **options)
            except StudentCodeError as problem:
                if problem.exc_type != "ValueError":          # an error is reported as it is
                    if first is None:
                        raise
                    # after a wrong value: consistent with the mistakes that fail on this input
                    record(RAISED, want, hyps, refs, order, smooth)
                    continue
                record(LOG_OF_ZERO, want, hyps, refs, order, smooth)
                if first is None:
                    first, first_got, first_want, first_smooth, first_what = problem, LOG_OF_ZERO, want, smooth, what
                continue
            try:
                got = float(got)
            except (TypeError, ValueError):
                failure = CheckFailed(_("{what} should be a float, got {type}").format(
                    what=what, type=type(got).__name__))
                if first is None:
                    raise failure from None
                diagnosis.unreadable = True
                break
            record(got, want, hyps, refs, order, smooth)
            if first is None and not close(got, want):
                message = _("{what} is {got}, expected {expected}").format(
                    what=what, **shown_pair(got, want, least=10))
                first = CheckFailed(_("{message} ({why})").format(message=message, why=hint) if hint else message,
                                    plain=message)
                first_got, first_want, first_smooth = got, want, smooth
        if first is None:
            return
        for got, want, corpus in recorded:
            diagnosis.case(got, want, bleu_hypotheses(*corpus))
        known = bleu_mistake(diagnosis.named(), first_got, first_want, first_smooth, self.cases)
        if isinstance(first, StudentCodeError):
            if known:
                raise CheckFailed(_("{what} raised ValueError: {diagnosis}").format(what=first_what, diagnosis=known),
                                  "diagnosed") from None
            raise first
        if known:
            raise CheckFailed(_("{failure}: {diagnosis}").format(failure=first.plain, diagnosis=known),
                              "diagnosed") from None
        raise first


# ------------------------------------------------------------ wrong formulas, grader side
# A diagnosis tests a hypothesis before it speaks: the suspected mistake is recomputed here,
# on the same corpus, and named only when it reproduces the student's value (and the right
# formula does not). Otherwise the message shows the case and both values, and claims nothing.
def grams(tokens, n) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def bleu_variant(hyps, refs, max_order=4, smooth="none", phantom=False, add_one_everywhere=False,
                 no_brevity_penalty=False, first_reference_only=False, tie_by_list_order=False,
                 best_single_reference=False, tie_longer=False, shortest_reference=False, add_k_per_sentence=False, inverted_ratio=False, arithmetic_mean=False,
                 smoothed_penalty=False, int_precision=False, floor_without_total=False, exp_not_compounding=False,
                 smooth_when_nothing_matches=False):
    """Corpus BLEU written here from its definition (pooled clipped counts, closest reference
    length, the four smoothing modes), or with one known departure from it:
    phantom: each sentence adds max(1, its n-gram count) to the total of order n (nltk's corpus_bleu);
    add_one_everywhere: "add-k" smooths the unigrams too (TensorFlow NMT's compute_bleu);
    no_brevity_penalty: BP is left out (the course notes' formula);
    first_reference_only: each hypothesis is scored against references[i][0] alone;
    best_single_reference: clipped against whichever single reference gives the most matches;
    tie_by_list_order: of two equally close reference lengths the one listed first wins (torchtext);
    tie_longer: of two equally close reference lengths the longer one wins;
    shortest_reference: r is the shortest reference length, not the closest;
    inverted_ratio: BP = exp(1 - c/r);
    add_k_per_sentence: "add-k" adds 1 to each sentence's m_n and t_n (n >= 2) before pooling;
    arithmetic_mean: exp of the mean of the precisions (no log, the course notes' formula);
    smoothed_penalty: BP = exp(1 - (r + 1)/(c + 1)), add-one in the length ratio;
    int_precision: each precision truncated to an int (m // t, int(m / t), a numpy int array), so a
    precision below 1 becomes 0 and BLEU 0 (log 0: math.log raises, np.log gives -inf);
    floor_without_total: "floor" gives p_n = 0.1, not 0.1 / t_n;
    exp_not_compounding: "exp" gives every zero order 1 / (2 t_n), not 1 / (2**i t_n);
    smooth_when_nothing_matches: no early 0 when nothing matches at all (smoothing goes on)."""
    if first_reference_only:
        refs = [rs[:1] for rs in refs]
    matches, totals, c, r = [0] * max_order, [0] * max_order, 0, 0
    for hyp, rs in zip(hyps, refs):
        c += len(hyp)
        lengths = [len(x) for x in rs]
        r += (min(lengths) if shortest_reference else
              min(lengths, key=lambda n: abs(n - len(hyp))) if tie_by_list_order else
              min(lengths, key=lambda n: (abs(n - len(hyp)), -n)) if tie_longer else _closest_length(hyp, rs))
        for n in range(1, max_order + 1):
            best = Counter()
            for ref in rs:
                best |= grams(ref, n)                     # | keeps the larger count: max over references
            own = grams(hyp, n)
            if best_single_reference:
                best = max((grams(ref, n) for ref in rs), key=lambda counts: sum((own & counts).values()))
            per_sentence = add_k_per_sentence and smooth == "add-k" and n > 1
            matches[n - 1] += sum((own & best).values()) + per_sentence  # & keeps the smaller count: the clip
            totals[n - 1] += (max(1, sum(own.values())) if phantom else sum(own.values())) + per_sentence
    if not any(matches) and not smooth_when_nothing_matches:
        return 0.0
    log_sum, zeros = 0.0, 0
    for n in range(1, max_order + 1):
        m, t = matches[n - 1], totals[n - 1]
        if smooth == "add-k" and (n > 1 or add_one_everywhere) and not add_k_per_sentence:
            m, t = m + 1, t + 1
        if t == 0:
            return 0.0
        if m == 0 and smooth == "floor":
            m = 0.1 * t if floor_without_total else 0.1
        elif m == 0 and smooth == "exp":
            zeros = 1 if exp_not_compounding else zeros + 1
            m = 1 / 2 ** zeros
        elif m == 0:
            return 0.0
        p = m // t if int_precision else m / t
        if p == 0:
            return 0.0
        log_sum += p if arithmetic_mean else math.log(p)
    ratio = c / r if inverted_ratio and r else (r + 1) / (c + 1) if smoothed_penalty else r / c if c else 0.0
    bp = 1.0 if no_brevity_penalty or c >= r else 0.0 if c == 0 else math.exp(1 - ratio)
    return bp * math.exp(log_sum / max_order)


def average_of_sentences(hyps, refs, max_order=4, smooth="none"):
    """The mean of the sentences' BLEU scores instead of one score of the pooled statistics."""
    return sum(bleu_variant([h], [r], max_order, smooth) for h, r in zip(hyps, refs)) / len(hyps)


PHANTOM = N_("your value matches a total of at least 1 n-gram per sentence and order: a hypothesis shorter than n "
             "has no n-gram of order n and adds 0 to that order's total, not 1 (a max(1, ...) on the precision's "
             "denominator, as in nltk's corpus_bleu, counts an n-gram that is not there)")
ADD_ONE_EVERYWHERE = N_("your value matches add-one smoothing on every order, (matches + 1) / (total + 1) for the "
                        "unigrams too (as in TensorFlow NMT's compute_bleu); the add-k of corpus_bleu's docstring "
                        "adds 1 to the matches and the total of the orders n >= 2 only: p_1 stays matches / total")
NO_BREVITY_PENALTY = N_("your value matches BLEU without the brevity penalty: here the hypotheses are shorter than "
                        "their references, so BP = exp(1 - r/c) < 1 multiplies the geometric mean")
FIRST_REFERENCE_ONLY = N_("your value matches scoring each hypothesis against its first reference only: clip against "
                          "every reference of references[i] and take the closest of all their lengths")
BEST_SINGLE_REFERENCE = N_("your value matches clipping against the one reference that matches best: clip each n-gram "
                           "at its largest count in any reference, whichever reference that is for each n-gram")
TIE_LONGER = N_("your value matches breaking a tie between two equally close reference lengths towards the longer "
                "one: the shorter length wins")
TIE_BY_LIST_ORDER = N_("your value matches breaking a tie between two equally close reference lengths by the order "
                       "the references are listed in: the shorter length wins whichever reference comes first")
SHORTEST_REFERENCE = N_("your value matches the shortest reference length as r: the effective reference length of a "
                        "sentence is the one closest to the hypothesis length")
INVERTED_RATIO = N_("your value matches a brevity penalty of exp(1 - c/r): the ratio is the reference length over the "
                    "hypothesis length, exp(1 - r/c)")
SMOOTHED_PENALTY = N_("your value matches a brevity penalty of exp(1 - (r + 1)/(c + 1)): the penalty has no "
                      "smoothing, BP = exp(1 - r/c) with the lengths themselves")
FLOOR_WITHOUT_TOTAL = N_("your value matches floor smoothing with p_n = 0.1 for an order without matches: the "
                        "floor is 0.1 / t_n, divided by that order's total")
EXP_NOT_COMPOUNDING = N_("your value matches exp smoothing that gives every zero order 1 / (2 t_n): the i-th zero order "
                         "gets 1 / (2**i t_n), the divisor doubling from one zero order to the next")
SMOOTHING_NOTHING_MATCHES = N_("your value matches smoothing applied although no n-gram of any order matches: BLEU is "
                               "0 then, whatever the smoothing")
INT_PRECISION = N_("your value matches precisions truncated to integers (m // t, int(m / t) or a numpy int array): "
                   "a precision below 1 becomes 0, so BLEU is 0 (or log 0 fails); divide with / and keep p_n a float")
ARITHMETIC_MEAN = N_("your value matches exp of the mean of the precisions themselves: BLEU averages their logs, "
                     "exp((1/N) sum log p_n), a geometric mean")
ADD_K_PER_SENTENCE = N_("your value matches add-k applied to every sentence before pooling: add 1 to the pooled "
                        "matches and the pooled total of each order n >= 2, once for the corpus")
SENTENCE_AVERAGE = N_("your value matches the mean of the sentences' BLEU scores: corpus BLEU pools the matches, "
                      "totals and lengths over all sentences first and computes one score")
STREAMS = N_("your value matches reading the references as streams, refs[k][i] = the k-th reference of hypothesis "
             "i (zip(*references)): here references[i] is the list of references of hypothesis i")
SMOOTHING_MODE = N_("your value matches smooth={used} where smooth={asked} was asked: check how your code reads the "
                    "smooth argument and applies the rule of each mode")
ROUNDING = N_("your value agrees with the expected one to {digits} significant digits only: compute in float64 "
              "(Python floats, or numpy's default dtype), not float32")
WRONG_FORMULAS = ((dict(phantom=True), PHANTOM), (dict(add_one_everywhere=True), ADD_ONE_EVERYWHERE),
                  (dict(no_brevity_penalty=True), NO_BREVITY_PENALTY),
                  (dict(first_reference_only=True), FIRST_REFERENCE_ONLY),
                  (dict(best_single_reference=True), BEST_SINGLE_REFERENCE),
                  (dict(tie_by_list_order=True), TIE_BY_LIST_ORDER), (dict(tie_longer=True), TIE_LONGER),
                  (dict(shortest_reference=True), SHORTEST_REFERENCE), (dict(inverted_ratio=True), INVERTED_RATIO),
                  (dict(arithmetic_mean=True), ARITHMETIC_MEAN), (dict(add_k_per_sentence=True), ADD_K_PER_SENTENCE),
                  (dict(smoothed_penalty=True), SMOOTHED_PENALTY),
                  (dict(floor_without_total=True), FLOOR_WITHOUT_TOTAL),
                  (dict(exp_not_compounding=True), EXP_NOT_COMPOUNDING),
                  (dict(smooth_when_nothing_matches=True), SMOOTHING_NOTHING_MATCHES))


LOG_OF_ZERO = "log(0)"          # a student's ValueError from math.log(0): BLEU 0 with an order at 0
RAISED = "raised"               # another error of the student's, on an input where a mistake fails (nan)
INT_TRUNCATION = "int"          # the keys of the hypotheses named by a message with a parameter
OTHER_MODE = "mode {}"


class Rounded:
    """A hypothesis that the student computed `value` in float32: it fits what agrees with it to
    float32's precision (~1e-7, 1e-6 allowed) and not to 1e-9."""

    def __init__(self, value):
        self.value = value


def same_bleu(got, hypothesis) -> bool:
    if isinstance(hypothesis, Rounded):
        return got not in (LOG_OF_ZERO, RAISED) and abs(got - hypothesis.value) <= 1e-6 * abs(hypothesis.value)
    if got is LOG_OF_ZERO:
        return hypothesis == 0
    if got is RAISED:
        return math.isnan(hypothesis)
    return not math.isnan(hypothesis) and close(got, hypothesis)


def bleu_hypotheses(hyps, refs, max_order, smooth, right):
    """(key, value on this corpus) of every known mistake, the same keys on every corpus: the wrong
    formulas, the sentence average, the streams layout, int-truncated precisions, a float32
    computation, and each smoothing mode in place of `smooth` (the asked one included: a student
    who ignores the argument gives it where it was asked)."""
    for variant, text in WRONG_FORMULAS:
        yield _(text), bleu_variant(hyps, refs, max_order, smooth, **variant)
    yield _(SENTENCE_AVERAGE), average_of_sentences(hyps, refs, max_order, smooth)
    # Read as streams, a layout passes silently only where it is square (as many references per
    # hypothesis as hypotheses); any other shape fails on an index or a length instead.
    yield _(STREAMS), (bleu_variant(hyps, [list(s) for s in zip(*refs)], max_order, smooth)
                       if all(len(rs) == len(hyps) for rs in refs) else math.nan)
    yield INT_TRUNCATION, bleu_variant(hyps, refs, max_order, smooth, int_precision=True)
    yield ROUNDING, Rounded(right)
    for mode in MODES:
        yield OTHER_MODE.format(mode), bleu_variant(hyps, refs, max_order, mode)


def bleu_mistake(named, got, want, asked, cases) -> str:
    """The message of the known mistake that every case fits (`named`, keys of bleu_hypotheses), or
    ''; `got`, `want` and `asked` (the smoothing) are the first wrong call's. Smoothing modes that all fit are one mistake (the argument misread); a wrong 0 is named only
    as int truncation (too many mistakes end in a zero precision), and that only when every order
    has matches somewhere, so that no smoothing rule is involved."""
    if got == 0 or got is LOG_OF_ZERO:
        return _(INT_PRECISION) if named == [INT_TRUNCATION] and truncated_somewhere(cases) else ""
    modes = [key[len(OTHER_MODE.format("")):] for key in named if key.startswith(OTHER_MODE.format(""))]
    if modes and len(modes) == len(named):
        return _(SMOOTHING_MODE).format(used=_(" or ").join(map(repr, modes)), asked=repr(asked))
    if len(named) != 1 or named[0] == INT_TRUNCATION and not truncated_somewhere(cases):
        return ""
    if named[0] == ROUNDING:
        return _(ROUNDING).format(digits=int(-math.log10(abs(got - want) / abs(want))))
    return _(INT_PRECISION) if named[0] == INT_TRUNCATION else named[0]


def truncated_somewhere(cases) -> bool:
    """Whether int-truncated precisions make a case 0 where every order has matches (so no
    smoothing rule and no zero precision explain a 0 there)."""
    def orders_all_match(h, r, order):
        return all(sum(sum((grams(x, n) & grams_max(rs, n)).values()) for x, rs in zip(h, r)) > 0
                   for n in range(1, order + 1))
    return any(orders_all_match(h, r, o.get("max_order", 4)) and want > 0
               and bleu_variant(h, r, o.get("max_order", 4), o.get("smooth", "none"), int_precision=True) == 0
               for _kind, h, r, o, want, _what, _hint in cases)


def grams_max(references, n) -> Counter:
    """The largest count of each n-gram in any single reference."""
    return right_clip([grams(ref, n) for ref in references])


def random_corpus(rng, size, vocab):
    """Hypotheses made by editing a reference, so that every order has some matches."""
    words = WORDS[:vocab]
    hyps, refs = [], []
    for _i in range(size):
        own = [[str(w) for w in rng.choice(words, size=int(rng.integers(1, 9)))]
               for _j in range(int(rng.integers(1, 4)))]
        hyp = list(own[0])
        for _k in range(int(rng.integers(0, 3))):       # substitutions, a deletion or an insertion
            op, pos = int(rng.integers(3)), int(rng.integers(len(hyp) + 1))
            if op == 0 and pos < len(hyp):
                hyp[pos] = str(rng.choice(words))
            elif op == 1 and pos < len(hyp):
                del hyp[pos]
            else:
                hyp.insert(pos, str(rng.choice(words)))
        hyps.append(hyp)
        refs.append(own)
    return hyps, refs


# ----------------------------------------------------------------------------- tests
LAST_NGRAM_DROPPED = N_("your counts match range(len(tokens) - n), which drops the last n-gram: the start positions "
                       "are i = 0 .. len - n, range(len(tokens) - n + 1)")


def test_ngram_counts_random(bleu, rng):
    for length, n in [(0, 1), (1, 1), (5, 2), (7, 3), (6, 4), (3, 4), (9, 1)]:
        tokens = [str(w) for w in rng.choice(WORDS[:3], size=length)]
        want = Counter(tuple(tokens[i:i + n]) for i in range(length - n + 1))
        got = bleu.ngram_counts(tokens, n)
        if not isinstance(got, dict):
            raise CheckFailed(_("ngram_counts should return a collections.Counter, got {type}").format(
                type=type(got).__name__))
        absent = ("<never seen>",) * n          # the docstring's Counter counts an n-gram it never saw 0 times
        if not isinstance(got, Counter) or got[absent] != 0:
            raise CheckFailed(_("ngram_counts returned a {type}, not a collections.Counter: the count of an n-gram "
                                "that never occurs must be 0 (counts[g] on a Counter), where a plain dict raises "
                                "KeyError").format(type=type(got).__name__))
        got = {k: v for k, v in got.items() if v}
        if any(not isinstance(k, tuple) for k in got):
            raise CheckFailed(_("ngram_counts keys must be tuples of tokens, e.g. ('the', 'cat'), not joined strings"))
        last_dropped = Counter(tuple(tokens[i:i + n]) for i in range(length - n))
        if got != dict(want) and got == dict(last_dropped):
            raise CheckFailed(_("ngram_counts of a {length}-token list with n={n} has {count} n-grams, expected "
                                "{want_count}: {diagnosis}").format(
                length=length, n=n, count=sum(got.values()), want_count=sum(want.values()),
                diagnosis=_(LAST_NGRAM_DROPPED)), "diagnosed")
        if got != dict(want):
            raise CheckFailed(_("ngram_counts of a {length}-token list with n={n} has {count} n-grams in {kinds} "
                                "kinds, expected {want_count} in {want_kinds}: every start position i = 0 .. len - n "
                                "gives one n-gram (none when len < n)").format(
                length=length, n=n, count=sum(got.values()), kinds=len(got), want_count=sum(want.values()),
                want_kinds=len(want)))


def test_modified_precision_clipping(bleu, reference, rng):
    cases = [  # (hypothesis, references, n, expected (clipped, total))
        ("the the the", ["the cat"], 1, (1, 3)),
        ("the the the the", ["the the cat", "cat the the the"], 1, (3, 4)),     # max(2, 3), not 2 + 3
        ("a b c d", ["a b x y", "x y c d"], 1, (4, 4)),                           # per n-gram max, any reference
        ("a b c d", ["a b x y", "x y c d"], 2, (2, 3)),
        ("a b a b a b", ["a b a b"], 2, (3, 5)),                                  # ab: min(3, 2), ba: min(2, 1)
        ("a b", ["a b c"], 3, (0, 0)),
        ("", ["a b"], 1, (0, 0)),
    ]
    passed = []
    for hyp, refs, n, want in cases:
        case = (toks(hyp), [toks(r) for r in refs], n)
        got = bleu.modified_precision(*case)
        if not isinstance(got, (tuple, list)) or len(got) != 2 or tuple(got) != want:
            raise precision_mistake(got, want, f"modified_precision({hyp!r}, {refs}, n={n})", case, passed)
        passed.append(case)
    hyps, refs = random_corpus(rng, 6, 3)
    for hyp, rs in zip(hyps, refs):
        for n in (1, 2, 3):
            want = tuple(reference.bleu.modified_precision(hyp, rs, n))
            got = bleu.modified_precision(hyp, rs, n)
            if not isinstance(got, (tuple, list)) or len(got) != 2 or tuple(got) != want:
                raise precision_mistake(got, want, _("modified_precision on a random sentence (n={n})").format(n=n),
                                        (hyp, rs, n), passed)


REDUCED_FRACTION = N_("your pair is the expected fraction reduced to lowest terms: return the two counts themselves "
                      "(corpus_bleu adds them up over sentences, and reduced fractions do not add up)")
PHANTOM_TOTAL = N_("a hypothesis shorter than n has no n-gram of order n, so the total is 0, not at least 1 "
                   "(corpus_bleu, not modified_precision, deals with an order whose pooled total is 0)")


NO_CLIPPING = N_("your clipped count matches counting every hypothesis n-gram that occurs in some reference, "
                 "unclipped: each n-gram counts at most as often as in the reference that has it most often "
                 "('the the the' against 'the cat' has 1 match, not 3)")
CLIP_BY_SUM = N_("your clipped count matches clipping at the n-gram's count summed over all references: clip at "
                 "its largest count in any single reference (the maximum, not the sum)")


def _clipped(case, clip) -> int:
    """The clipped count of `case` = (hypothesis, references, n) with the reference count of each
    n-gram given by `clip` (a list of the references' Counters -> one Counter)."""
    hyp, refs, n = case
    bound = clip([grams(ref, n) for ref in refs])
    return sum(min(count, bound[gram]) for gram, count in grams(hyp, n).items())


# Wrong clips, each as the reference count it clips at (the right one: the maximum over references).
WRONG_CLIPS = (
    (NO_CLIPPING, lambda counts: Counter({g: math.inf for c in counts for g in c})),
    (CLIP_BY_SUM, lambda counts: sum(counts, Counter())),
)


def right_clip(counts) -> Counter:
    """The count each n-gram is clipped at, from the references' Counters: its largest in any one."""
    best = Counter()
    for c in counts:
        best |= c
    return best


def precision_mistake(got, want, call, case=None, passed=()) -> CheckFailed:
    """The failure of `call` returning `got` instead of the (clipped, total) pair `want`:
    named when the pair is a known mistake's (checked on the numbers, with `case` = (hypothesis,
    references, n) of the call, and refuted by a case of `passed` the mistake would have
    failed), neutral otherwise."""
    message = _("{call} returned {got}, expected {want}").format(call=call, got=repr(got), want=want)
    pair = tuple(got) if isinstance(got, (tuple, list)) and len(got) == 2 else None
    known = ""
    if pair and want[1] and all(isinstance(v, int) for v in pair) and pair != want and pair[1] \
            and pair[0] * want[1] == want[0] * pair[1] and math.gcd(*pair) == 1:
        known = _(REDUCED_FRACTION)
    elif pair == (want[0], 1) and want[1] == 0:
        known = _(PHANTOM_TOTAL)
    elif pair and case and pair[1] == want[1]:
        fits = [text for text, clip in WRONG_CLIPS if _clipped(case, clip) == pair[0] != want[0]
                and all(_clipped(p, clip) == _clipped(p, right_clip) for p in passed)]
        if pair[0] == max(sum((grams(case[0], case[2]) & grams(ref, case[2])).values()) for ref in case[1]):
            fits.append(BEST_SINGLE_REFERENCE)
        known = _(fits[0]) if len(fits) == 1 else ""
    if known:
        return CheckFailed(_("{message}: {diagnosis}").format(message=message, diagnosis=known), "diagnosed")
    return CheckFailed(_("{message} (clipped matches: each hypothesis n-gram counts at most as often as in the "
                         "single reference that has it most often; total: every hypothesis n-gram)").format(
        message=message))


EMPTY_HYPOTHESIS = N_("an empty hypothesis (c = 0) gets BP = 0 when r > 0; test for c == 0 before dividing r by c")


def test_brevity_penalty_edges(bleu):
    cases = [(0, 0, 1.0), (0, 5, 0.0), (5, 5, 1.0), (7, 5, 1.0), (3, 5, math.exp(1 - 5 / 3)),
             (1, 10, math.exp(-9.0)), (9, 10, math.exp(1 - 10 / 9))]
    for c, r, want in cases:
        what = f"brevity_penalty({c}, {r})"
        try:
            got = bleu.brevity_penalty(c, r)
        except StudentCodeError as problem:
            if c == 0 and problem.exc_type == "ZeroDivisionError":
                raise CheckFailed(_("{what} raised ZeroDivisionError: {diagnosis}").format(
                    what=what, diagnosis=_(EMPTY_HYPOTHESIS)), "diagnosed") from None
            raise
        wrong_penalties = ((math.exp(1 - c / r), INVERTED_RATIO), (math.exp(1 - (r + 1) / (c + 1)), SMOOTHED_PENALTY)) \
            if 0 < c < r else ()
        for wrong, diagnosis in wrong_penalties:
            if isinstance(got, (int, float)) and close(got, wrong) and not close(got, want):
                raise CheckFailed(_("{what} is {got}, expected {expected}: {diagnosis}").format(
                    what=what, **shown_pair(got, want, least=10), diagnosis=_(diagnosis)), "diagnosed")
        expect_bleu(got, want, what, _("expected: BP = 1 when c >= r, exp(1 - r/c) when 0 < c < r, and 0 for an "
                                       "empty hypothesis"))


def test_closest_reference_length_tie_shorter(bleu):
    cases = BleuCases(bleu)
    hyp = toks("a b c d e")
    # Reference lengths 4 and 6 are equally close to 5: the shorter (4) is used, so BP = 1.
    # Both ways round: an implementation that breaks ties by list order passes one of them only.
    for refs in ([toks("a b c d"), toks("a b c d e f")], [toks("a b c d e f"), toks("a b c d")]):
        cases.corpus([hyp], [refs], {}, 1.0,
                     _("BLEU with references of lengths {lengths} for a 5-token hypothesis").format(
                         lengths=" and ".join(str(len(r)) for r in refs)),
                     _("expected: 4 and 6 are equally close to 5, the shorter length 4 is r, so BP = 1"))
    # The closest length, not the shortest: lengths 3 and 7 for a 6-token hypothesis -> r = 7.
    hyp = toks("a b c d e f")
    refs = [toks("x y z"), toks("a b c d e f g")]
    # Across a corpus the shortest lengths (3 + 6) and the closest (7 + 6) give different penalties,
    # and both differ from no penalty at all: c = 8, every n-gram matches.
    hyps, refs2 = [hyp, toks("a b")], [refs, [toks("a b c d e f")]]
    cases.corpus(hyps, refs2, {}, math.exp(1 - 13 / 8),
                 _("corpus BLEU of a 6-token hypothesis (references of lengths 3 and 7) and a 2-token one "
                   "(a reference of length 6)"), _("expected: every n-gram matches, c = 8 and r = 7 + 6"))
    cases.corpus([hyp], [refs], {}, math.exp(1 - 7 / 6),
                 _("BLEU with references of lengths 3 and 7 for a 6-token hypothesis"),
                 _("expected: the closest reference length is 7, so BP = exp(1 - 7/6)"))
    # Nor the longest: lengths 5 and 9 for a 6-token hypothesis -> r = 5, BP = 1.
    refs = [toks("a b c d e"), toks("a b c d e f g h i")]
    cases.sentence(hyp, refs, {}, 1.0, _("sentence_bleu with references of lengths 5 and 9 for a 6-token hypothesis"),
                   _("the closest reference length is 5, so there is no brevity penalty"))
    # sentence_bleu passes its smoothing on: add-k changes a score where every order matches
    # something, floor and exp one where the 4-grams have no match.
    hyp, refs = toks("the cat sat on the mat"), [toks("the cat sat on a mat")]
    cases.sentence(hyp, refs, {"smooth": "add-k"}, bleu_variant([hyp], [refs], 4, "add-k"),
                   _("sentence_bleu(smooth='add-k') of 'the cat sat on the mat'"),
                   _("expected: corpus_bleu([h], [refs], smooth='add-k')"))
    refs = [toks("a cat sat"), toks("the cat is on the mat")]
    for smooth in ("floor", "exp"):
        cases.sentence(hyp, refs, {"smooth": smooth}, bleu_variant([hyp], [refs], 4, smooth),
                       _("sentence_bleu(smooth={smooth}) of a sentence without a matching 4-gram").format(
                           smooth=repr(smooth)), _("expected: corpus_bleu([h], [refs], smooth={smooth})").format(
                           smooth=repr(smooth)))
    cases.check()


def test_corpus_bleu_pools_statistics(bleu):
    cases = BleuCases(bleu)
    hyps = [toks("a b c d e f g h"), toks("a b")]
    refs = [[toks("a b c d e f g h")], [toks("a b c d")]]
    # Pooled: p1 = 10/10, p2 = 8/8, p3 = 6/6, p4 = 5/5; c = 10, r = 12 -> BLEU = exp(1 - 12/10).
    cases.corpus(hyps, refs, {}, math.exp(1 - 12 / 10), _("corpus BLEU of a 2-sentence corpus"),
                 _("expected: pooled precisions 10/10, 8/8, 6/6, 5/5 and c = 10, r = 12"))
    # Every order matches, none completely: 9/10, 6/8, 4/6, 2/4 pooled; c = r = 10, BP = 1.
    hyps = [toks("the cat sat on the mat"), toks("a b c d")]
    refs = [[toks("the cat sat on a mat")], [toks("a b c d")]]
    cases.corpus(hyps, refs, {}, (9 / 10 * 6 / 8 * 4 / 6 * 2 / 4) ** 0.25,
                 _("corpus BLEU of a 2-sentence corpus where every order matches in part"),
                 _("expected: pooled precisions 9/10, 6/8, 4/6, 2/4 and c = r = 10"))
    hyps = [toks("the cat sat on the mat"), toks("the dog ran"), toks("a cat")]
    refs = [[toks("the cat is on the mat")], [toks("the dog ran away")], [toks("a cat"), toks("the cat sat")]]
    # Matches / totals: unigrams 5+3+2 / 6+3+2, bigrams 3+2+1 / 5+2+1, trigrams 1+1+0 / 4+1+0,
    # 4-grams 0 / 3 -> exp smoothing p4 = 1/(2*3); c = 11, r = 6 + 4 + 2.
    want = math.exp(1 - 12 / 11) * (10 / 11 * 6 / 8 * 2 / 5 * 1 / 6) ** 0.25
    cases.corpus(hyps, refs, {"smooth": "exp"}, want, _("corpus BLEU (exp smoothing) of a 3-sentence corpus"),
                 _("expected: pooled precisions 10/11, 6/8, 2/5, 1/(2*3) and c = 11, r = 12"))
    cases.check()


def _closest_length(hyp, refs) -> int:
    return min((len(r) for r in refs), key=lambda n: (abs(n - len(hyp)), n))


def probing_corpus(rng, size, vocab, max_order):
    """A random corpus that exercises, under every seed, what a length mistake changes: two
    sentences whose two references are equally close (the shorter wins, listed first or
    second), one whose closest reference is not its shortest, a pooled hypothesis length
    below the pooled reference length (BP < 1), and no order left without hypothesis n-grams
    (that edge has its own test). Drawn again until all hold, so which mistakes it catches
    does not depend on the seed."""
    words = WORDS[:vocab]
    for _attempt in range(1000):
        hyps, refs = random_corpus(rng, size, vocab)
        n = int(rng.integers(max(4, max_order), 8))
        tie = [str(w) for w in rng.choice(words, size=n)]
        hyps.append(tie)
        refs.append([tie[:-1], tie + [str(rng.choice(words))]])              # lengths n - 1 and n + 1
        far = [str(w) for w in rng.choice(words, size=n)]
        hyps.append(far[:-2])                                               # length n - 2: closest is n, not 2
        refs.append([far[:2], far])
        c = sum(len(h) for h in hyps)
        r = sum(_closest_length(h, rs) for h, rs in zip(hyps, refs))
        if c < r and max(len(h) for h in hyps) >= max_order:
            # Two fixed probes, no draw and c - r unchanged (+1 and -1): the same tie with the
            # longer reference listed first, and a sentence whose clip differs under the max over
            # references (3 unigrams), their sum (4) and the best single reference (2).
            other_tie = tie[::-1]
            w0, w1, w2 = words[:3]
            return (hyps + [other_tie, [w0, w0, w0, w1]],
                    refs + [[other_tie + [tie[0]], other_tie[:-1]], [[w0, w0, w2, w2, w2], [w0, w1, w2, w2, w2]]])
    raise AssertionError("no probing corpus found")     # never: the two probes alone make r > c likely


def test_corpus_bleu_matches_reference_random(bleu, reference, rng):
    cases = BleuCases(bleu)
    for vocab, size, order in [(3, 4, 4), (4, 6, 4), (5, 3, 2), (3, 8, 3)]:
        hyps, refs = probing_corpus(rng, size, vocab, order)
        for smooth in MODES:
            want = reference.bleu.corpus_bleu(hyps, refs, max_order=order, smooth=smooth)
            cases.corpus(hyps, refs, {"max_order": order, "smooth": smooth}, want,
                         _("corpus_bleu on a random {size}-sentence corpus (max_order={order}, smooth={smooth})")
                         .format(size=size, order=order, smooth=repr(smooth)))
    hyp, refs = hyps[-4], refs[-4]      # the tie probe: long enough for every order (that edge has its own test)
    for smooth in ("exp", "add-k"):
        cases.sentence(hyp, refs, {"smooth": smooth}, reference.bleu.sentence_bleu(hyp, refs, smooth=smooth),
                       f"sentence_bleu(smooth={smooth!r})", "sentence_bleu(h, refs) = corpus_bleu([h], [refs])")
    cases.check()


def test_smoothing_modes_edge_cases(bleu):
    cases = BleuCases(bleu)
    ref = [toks("the cat is on the mat")]
    hyp = toks("the cat sat on the mat")   # 5/6, 3/5, 1/4, 0/3; same length
    want = {"none": 0.0,
            "floor": (5 / 6 * 3 / 5 * 1 / 4 * (0.1 / 3)) ** 0.25,
            "add-k": (5 / 6 * 4 / 6 * 2 / 5 * 1 / 4) ** 0.25,   # k = 1 added to orders 2..4 only
            "exp": (5 / 6 * 3 / 5 * 1 / 4 * (1 / (2 * 3))) ** 0.25}
    hints = {"none": _("without smoothing a zero precision makes BLEU 0"),
             "floor": _("floor: a zero count becomes 0.1 / total for that order"),
             "add-k": _("add-k: add 1 to the matches and the total of every order n >= 2 (not the unigrams)"),
             "exp": _("exp: the first zero order gets 1 / (2 * total), the next 1 / (4 * total), ...")}
    for smooth in MODES:
        cases.corpus([hyp], [ref], {"smooth": smooth}, want[smooth],
                     _("BLEU (smooth={smooth}) when only the 4-grams have no match").format(smooth=repr(smooth)),
                     hints[smooth])
    # Two zero orders under exp: the halvings compound (1/(2*3) then 1/(4*2)).
    hyp, ref = toks("a b x c d"), [toks("a b y c d")]      # 4/5, 2/4, 0/3, 0/2
    cases.corpus([hyp], [ref], {"smooth": "exp"}, (4 / 5 * 2 / 4 * 1 / 6 * 1 / 8) ** 0.25,
                 _("BLEU (smooth='exp') with zero matches at orders 3 and 4"), hints["exp"])
    # No n-gram of any order matches: 0 under every smoothing.
    for smooth in MODES:
        cases.corpus([toks("x y z w")], [[toks("a b c d")]], {"smooth": smooth}, 0.0,
                     _("BLEU (smooth={smooth}) when nothing matches").format(smooth=repr(smooth)),
                     _("when no n-gram of any order matches, BLEU is 0 whatever the smoothing (corpus_bleu's "
                       "docstring)"))
    # Hypotheses shorter than n: no n-grams of orders 3, 4 at all -> 0, except add-k.
    short_hyp, short_ref = [toks("a b")], [[toks("a b c")]]
    for smooth in ("none", "floor", "exp"):
        cases.corpus(short_hyp, short_ref, {"smooth": smooth}, 0.0,
                     _("BLEU (smooth={smooth}) of a 2-token hypothesis with max_order=4").format(smooth=repr(smooth)),
                     _("an order with no hypothesis n-grams at all (total 0) makes BLEU 0; smoothing cannot "
                       "divide by 0"))
    cases.corpus(short_hyp, short_ref, {"smooth": "add-k"}, math.exp(1 - 3 / 2),
                 _("BLEU (smooth='add-k') of a 2-token hypothesis with max_order=4"),
                 _("add-k turns the empty orders 3 and 4 into (0+1)/(0+1) = 1, and BP = exp(1 - 3/2)"))
    # An empty hypothesis inside a corpus counts 0 tokens, and the closest reference length to 0.
    hyps = [toks("a b c d"), []]
    refs = [[toks("a b c d")], [toks("x y z"), toks("x")]]
    cases.corpus(hyps, refs, {}, math.exp(1 - 5 / 4), _("BLEU of a corpus with an empty hypothesis"),
                 _("an empty hypothesis adds 0 to c and its closest reference length (here 1) to r"))
    cases.check()


def test_per_hypothesis_reference_layout(bleu):
    cases = BleuCases(bleu)
    # Two references each, the good one in a different position: per hypothesis both sentences
    # match perfectly (BLEU 1); read as streams, each is scored against the other's references.
    hyps = [toks("a b c d e"), toks("a b c d f")]
    refs = [[toks("x"), toks("a b c d e")], [toks("a b c d f"), toks("y")]]
    cases.corpus(hyps, refs, {}, 1.0, _("corpus BLEU with two references per hypothesis"),
                 _("expected: each hypothesis is one of its own references"))
    hyps = [toks("the cat sat on the mat"), toks("a dog ran in the park")]
    # references[i] holds the references of hypothesis i; the counts differ (3 and 1).
    refs = [[toks("the cat sat on a mat"), toks("a cat sat on the mat"), toks("the cat is on the mat")],
            [toks("a dog ran in a park")]]
    # Sentence 1 matches every n-gram in one of its 3 references: 6/6, 5/5, 4/4, 3/3;
    # sentence 2: 5/6, 3/5, 2/4, 1/3. Same lengths (6 and 6): BP = 1.
    want = (11 / 12 * 8 / 10 * 6 / 8 * 4 / 6) ** 0.25
    cases.corpus(hyps, refs, {}, want, _("corpus BLEU with 3 references for sentence 1 and 1 for sentence 2"),
                 _("expected: references[i] is the list of references of hypothesis i, 3 for the first "
                   "sentence and 1 for the second"))
    cases.check()
