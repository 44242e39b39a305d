"""Hidden suite for inference_cost.py [inference_cost]: the inference bill, measured (oral-exam question 10).

Expected values: the RNN step's equation; causal self-attention recomputed from scratch
for every prefix (written here, checked against torch in test_oracle.py beside this suite
with the reference); the bytes of float64 arrays of known shapes; the multiply-add formulas.
"""

from __future__ import annotations

import numpy as np

from autograder.authoring.checks import (
    CheckFailed,
    MutationCheck,
    every_case,
    expect_array,
    expect_close,
    expect_tuple,
    product_scale,
    rel_error,
    variant_hypotheses,
)
from autograder.i18n import N_, _
from autograder.isolation.errors import StudentCodeError, StudentProblem
from autograder.units.rnn_prehistory.oracles import DoubledCacheStep, NegatedRNNStep

LENGTHS = (16, 64, 256, 1024)        # the T of the memory measurement
FLOAT_BYTES = 8
# Student against the equations here, both correct, in any summation order (bounds in
# test_oracle.py): a state h_t is within ~5e-12 absolute of another computation's on these sizes
# (checks.tanh_recurrence_bound: |h| <= 1, so the error is absolute, not relative to a state near 0: scale 1);
# a key or value within 2 gamma_D |x||W| (product_scale), an output y_t within ~1e-13 of the
# largest |v| it averages. The tolerances (1e-9 for what goes through exp or tanh, 1e-12 for a
# plain product) are above those bounds; the mutants miss by 1e-3 and more.


def value_scale(x, Wv):
    """max_{s <= t} |x_s Wv|: bounds the terms of y_t, a weighted average of the values 0..t."""
    return np.maximum.accumulate(np.abs(x @ Wv), axis=1)


def causal_attention_from_scratch(x, Wq, Wk, Wv, width="Dk"):
    """y[:, t] = attention of token t over tokens 0..t, each prefix computed anew (no cache); with
    `width` "D", "Dv" or 1, the scores divided by the square root of another width (a mistake)."""
    N, T, _ = x.shape
    divisor = {"Dk": Wk.shape[1], "D": x.shape[2], "Dv": Wv.shape[1], 1: 1}[width]
    y = np.zeros((N, T, Wv.shape[1]))
    for t in range(T):
        prefix = x[:, : t + 1]
        q, K, V = x[:, t] @ Wq, prefix @ Wk, prefix @ Wv
        e = np.einsum("nk,ntk->nt", q, K) / np.sqrt(divisor)
        w = np.exp(e - e.max(axis=1, keepdims=True))
        y[:, t] = np.einsum("nt,ntv->nv", w / w.sum(axis=1, keepdims=True), V)
    return y


SCALE_MISTAKES = (
    (dict(width=1), N_("your outputs match scores not scaled at all: divide q_t . k_s by sqrt(Dk), the width of q "
                       "and k")),
    (dict(width="D"), N_("your outputs match scores divided by sqrt(D), the width of x: divide by sqrt(Dk), the "
                         "width of q and k (Wk.shape[1])")),
    (dict(width="Dv"), N_("your outputs match scores divided by sqrt(Dv), the width of v: divide by sqrt(Dk), the "
                          "width of q and k (Wk.shape[1])")),
)


def on_a_batch(function, args, batched: int, what: str, fix: str):
    """function(*args), the student's decoder on a batch of N sequences (the first `batched`
    arguments carry the batch axis). When it raises and the same call on the first sequence alone
    runs, the code handles one sequence only: the message says so and what keeps the batch axis
    (`fix`), not only the exception."""
    N = len(args[0])
    try:
        return function(*args)
    except StudentCodeError as problem:
        if N == 1:
            raise
        try:
            function(*(a[:1] for a in args[:batched]), *args[batched:])
        except StudentProblem:
            raise problem from None
        raise CheckFailed(_("{what}: {error}, on a batch of N={N} sequences, but the same call on the first sequence "
                            "alone (N=1) runs: your code handles one sequence only. {fix}").format(
            what=what, error=problem.message, N=N, fix=fix), "diagnosed") from None


RNN_BATCH = N_("Keep the batch axis: x is (N, T, D) and h0 (N, H); token t of every sequence is x[:, t], of shape "
               "(N, D), and the state stays (N, H) from token to token (never flattened, never indexed [0])")
ATTENTION_BATCH = N_("Keep the batch axis: x is (N, T, D); token t of every sequence is x[:, t], of shape (N, D), the "
                     "cache holds (N, t, Dk) keys and (N, t, Dv) values, and sequence n's scores are q[n] . K[n, s] "
                     "(e.g. np.einsum('nk,ntk->nt', q, K))")


def attention_weights(rng, D, Dk, Dv):
    return rng.normal(size=(D, Dk)) * 0.5, rng.normal(size=(D, Dk)) * 0.5, rng.normal(size=(D, Dv))


def rnn_weights(rng, D, H):
    return rng.normal(size=(D, H)), rng.normal(size=(H, H)) * 0.5, rng.normal(size=H) * 0.1


def test_rnn_decode_matches_the_recurrence(inference_cost, rng):
    for N, T, D, H in [(1, 1, 2, 3), (3, 6, 4, 5), (2, 9, 3, 2)]:
        x, h0 = rng.normal(size=(N, T, D)), rng.normal(size=(N, H))
        Wx, Wh, b = rnn_weights(rng, D, H)
        what = f"rnn_decode_step (N={N}, D={D}, H={H})"
        h1 = expect_array(inference_cost.rnn_decode_step(x[:, 0], h0, Wx, Wh, b), (N, H), what)
        expect_close(h1, np.tanh(x[:, 0] @ Wx + h0 @ Wh + b), what, tol=1e-9, scale=1.0,
                     hint=_("h_t = tanh(x_t Wx + h_{t-1} Wh + b)"))
        what = f"rnn_decode (N={N}, T={T}, D={D}, H={H})"
        h, _held = expect_tuple(on_a_batch(inference_cost.rnn_decode, (x, h0, Wx, Wh, b), 2, what, _(RNN_BATCH)),
                                2, what)
        want, state = np.zeros((N, T, H)), h0
        for t in range(T):
            state = np.tanh(x[:, t] @ Wx + state @ Wh + b)
            want[:, t] = state
        expect_close(h, want, f"{what}: h", tol=1e-9, scale=1.0,
                     hint=_("carry the state from token to token: h[:, t] is the state after token t"))

    # Through its module-level name: with a stand-in step in place of the student's (its states
    # negated, which no correct step gives), the decoder's states must be the stand-in's chain.
    N, T, D, H = 2, 5, 3, 4
    x, h0 = rng.normal(size=(N, T, D)), rng.normal(size=(N, H))
    Wx, Wh, b = rnn_weights(rng, D, H)
    replies = inference_cost.rnn_decode.patched({"inference_cost.rnn_decode_step": NegatedRNNStep()})(x, h0, Wx, Wh, b)
    h = expect_array(expect_tuple(replies, 2, "rnn_decode")[0], (N, T, H), "rnn_decode: h")
    want, state = np.zeros((N, T, H)), h0
    for t in range(T):
        state = -np.tanh(x[:, t] @ Wx + state @ Wh + b)
        want[:, t] = state
    # |h| <= 1 and the stand-in's products are the grader's own: atol 1e-9 is far above their rounding
    if not np.allclose(h, want, rtol=0, atol=1e-9):
        raise CheckFailed(_("rnn_decode: with another rnn_decode_step in place of yours, the states it returns are "
                            "not the ones that step computes: your loop reaches the step some other way (written "
                            "inline, or under another name). Call rnn_decode_step through its module-level name, "
                            "once per token"))


def test_attention_decode_equals_causal_attention_recomputed_every_step(inference_cost, rng):
    cases = []
    for N, T, D, Dk, Dv in [(1, 1, 2, 2, 3), (2, 7, 4, 3, 2), (3, 12, 3, 4, 4)]:
        cases.append((rng.normal(size=(N, T, D)), attention_weights(rng, D, Dk, Dv)))

    def run_case(case, record):
        x, weights = case
        (N, T, D), Dk, Dv = x.shape, weights[1].shape[1], weights[2].shape[1]
        what = f"attention_decode (N={N}, T={T}, D={D}, Dk={Dk}, Dv={Dv})"
        y, cache, _held = expect_tuple(on_a_batch(inference_cost.attention_decode, (x, *weights), 1, what,
                                                  _(ATTENTION_BATCH)), 3, what)
        expect_array(y, (N, T, Dv), f"{what}: y")
        scale = value_scale(x, weights[2])
        record((y, scale), causal_attention_from_scratch(x, *weights),
               variant_hypotheses(causal_attention_from_scratch, SCALE_MISTAKES, x, *weights))
        expect_close(y, causal_attention_from_scratch(x, *weights), f"{what}: y", tol=1e-9, scale=scale,
                     hint=_("token t attends over the cached keys and values of tokens 0..t (its own pair "
                            "appended first), with scores q_t . k_s / sqrt(Dk)"))
        K, V = expect_tuple(cache, 2, f"{what}: cache")
        expect_close(K, x @ weights[1], f"{what}: the cached keys", tol=1e-12, scale=product_scale(x, weights[1]),
                     hint=_("cache the keys k_t = x_t Wk: a query is used once, by its own token, and is never "
                            "cached"))
        expect_close(V, x @ weights[2], f"{what}: the cached values", tol=1e-12, scale=product_scale(x, weights[2]))

    def same(got, other):
        """The student's y (with its scale, the largest value each row averages) is `other`."""
        y, scale = got
        return bool(np.all(np.isfinite(y)) and rel_error(y, other, scale) <= 1e-9)

    # every case runs: a scaling is named only when it gives the student's outputs on all of them
    every_case(cases, run_case, same, differs=lambda wrong, right: not np.allclose(wrong, right, rtol=1e-6, atol=0))


def test_the_cache_is_extended_not_rebuilt(inference_cost, rng):
    """The step must attend over the cache it is given, and the loop must pass on the cache it got."""
    N, D, Dk, Dv, t = 2, 3, 4, 2, 5
    Wq, Wk, Wv = attention_weights(rng, D, Dk, Dv)
    old_K, old_V = rng.normal(size=(N, t, Dk)), rng.normal(size=(N, t, Dv))   # any earlier keys and values
    x_t = rng.normal(size=(N, D))
    what = _("attention_decode_step with a cache of {t} tokens").format(t=t)
    y_t, cache = expect_tuple(inference_cost.attention_decode_step(x_t, (old_K, old_V), Wq, Wk, Wv), 2, what)
    K, V = expect_tuple(cache, 2, f"{what}: cache")
    expect_array(K, (N, t + 1, Dk), f"{what}: K")
    expect_array(V, (N, t + 1, Dv), f"{what}: V")
    if not (np.array_equal(K[:, :t], old_K) and np.array_equal(V[:, :t], old_V)):
        raise CheckFailed(_("{what}: the first {t} keys and values of the returned cache must be the ones you were "
                            "given, unchanged: append this token's pair, do not recompute the others").format(
            what=what, t=t))
    expect_close(K[:, t], x_t @ Wk, f"{what}: the appended key", tol=1e-12, scale=product_scale(x_t, Wk),
                 hint=_("append k_t = x_t Wk (the key, not the query)"))
    expect_close(V[:, t], x_t @ Wv, f"{what}: the appended value", tol=1e-12, scale=product_scale(x_t, Wv))
    want_K = np.concatenate([old_K, (x_t @ Wk)[:, None]], axis=1)
    want_V = np.concatenate([old_V, (x_t @ Wv)[:, None]], axis=1)
    e = np.einsum("nk,ntk->nt", x_t @ Wq, want_K) / np.sqrt(Dk)
    w = np.exp(e - e.max(axis=1, keepdims=True))
    expect_close(y_t, np.einsum("nt,ntv->nv", w / w.sum(axis=1, keepdims=True), want_V), f"{what}: y_t", tol=1e-9,
                 scale=np.abs(want_V).max(axis=1),
                 hint=_("attend over every cached key and value, this token's included"))

    x = rng.normal(size=(N, 6, D))
    step = {"inference_cost.attention_decode_step": DoubledCacheStep()}    # a correct step, its cache doubled
    replies = inference_cost.attention_decode.patched(step)(x, Wq, Wk, Wv)
    y = expect_array(expect_tuple(replies, 3, "attention_decode")[0], (N, 6, Dv), "attention_decode: y")
    # y's rounding is ~1e-14 absolute here (O(1) values): atol 1e-12 is above it, a rebuilt cache is off by O(1).
    # The stand-in returns -y_t: +y is what a loop gets that never calls the step it is given.
    attended = causal_attention_from_scratch(x, Wq, Wk, Wv)
    if np.allclose(y, attended, rtol=1e-9, atol=1e-12):
        raise CheckFailed(_("attention_decode: with another attention_decode_step in place of yours, the outputs are "
                            "not the ones that step returns: your loop computes them some other way (the step "
                            "written inline or under another name, or the whole attention at once). Decode token by "
                            "token, calling attention_decode_step through its module-level name"))
    if not np.allclose(y, -attended, rtol=1e-9, atol=1e-12):
        raise CheckFailed(_("attention_decode: with a correct attention_decode_step in place of yours, the outputs "
                            "are not causal attention: some step was not handed the cache the previous step "
                            "returned (rebuilt from the inputs?). Recomputing the keys and values of the whole "
                            "prefix at every token is the work a cache exists to save: pass each step's cache on "
                            "to the next step as it is"))
    # And with your own step: a loop that passes the cache on only when its step is not its own
    # gains nothing. The worker watches what your attention_decode_step is handed (the arrays
    # the previous step returned, not equal numbers: a rebuilt cache has those too).
    T = x.shape[1]
    expect_tuple(inference_cost.attention_decode.followed("attention_decode_step", 1, 1)(x, Wq, Wk, Wv), 3,
                 "attention_decode")
    handed = inference_cost.last_notes.get("followed", [])
    if len(handed) != T:
        raise CheckFailed(_("attention_decode called your attention_decode_step {n} times for {T} tokens; call it "
                            "once per token, through its module-level name").format(n=len(handed), T=T))
    if not all(handed[1:]):
        t = 1 + [bool(h) for h in handed[1:]].index(False)
        raise CheckFailed(_("attention_decode: the step of token {t} was not handed the cache the step of token "
                            "{previous} returned (rebuilt from the inputs, or copied?). Pass each step's cache on "
                            "to the next step as it is").format(t=t, previous=t - 1))

def test_held_bytes_constant_for_the_rnn_and_linear_for_the_cache(inference_cost, rng, report_extras):
    N, D, H, Dk, Dv = 1, 8, 16, 8, 8
    Wx, Wh, b = rnn_weights(rng, D, H)
    Wq, Wk, Wv = attention_weights(rng, D, Dk, Dv)
    longest = rng.normal(size=(N, max(LENGTHS), D))
    rnn_held, cache_held, cache_sizes, dtypes = [], [], [], {}
    for T in LENGTHS:          # measured first, judged after: the figure shows what was measured
        x = longest[:, :T]
        _h, held = expect_tuple(inference_cost.rnn_decode(x, np.zeros((N, H)), Wx, Wh, b), 2, "rnn_decode")
        rnn_held.append(int(expect_array(np.asarray(held), (T,), "rnn_decode: held_bytes")[-1]))
        dtypes.setdefault("rnn_decode", np.asarray(held).dtype)
        _y, cache, held = expect_tuple(inference_cost.attention_decode(x, Wq, Wk, Wv), 3, "attention_decode")
        cache_held.append(int(expect_array(np.asarray(held), (T,), "attention_decode: held_bytes")[-1]))
        dtypes.setdefault("attention_decode", np.asarray(held).dtype)
        K, V = expect_tuple(cache, 2, "attention_decode: cache")
        cache_sizes.append(np.asarray(K).nbytes + np.asarray(V).nbytes)
    report_extras["inference_cost"] = {"T": list(LENGTHS), "rnn_bytes": rnn_held, "cache_bytes": cache_held,
                                       "bytes_per_cached_token": N * (Dk + Dv) * FLOAT_BYTES}
    # Byte counts are integers: the growth per token is judged exactly, as a ratio of integer
    # differences (a least-squares slope rounds differently on each BLAS kernel).
    def growth(held):
        """Bytes per token between each two consecutive lengths."""
        return [(b - a) / (t1 - t0) for (t0, a), (t1, b) in zip(zip(LENGTHS, held), zip(LENGTHS[1:], held[1:]))]

    rnn_slope = next((step for step in growth(rnn_held) if step != 0), 0)
    if rnn_slope:
        raise CheckFailed(_("rnn_decode: the state grows with T ({slope} bytes per token); an RNN carries one "
                            "fixed-size state whatever T is").format(slope=f"{rnn_slope:.3g}"))
    want = N * (Dk + Dv) * FLOAT_BYTES
    cache_slope = next((step for step in growth(cache_held) if step != want), want)
    if cache_slope != want:
        raise CheckFailed(_("attention_decode: the cache grows by {slope} bytes per token; one token adds one key "
                            "(Dk floats) and one value (Dv floats) per sequence: {want} bytes").format(
            slope=f"{cache_slope:.4g}", want=want))

    for T, held in zip(LENGTHS, rnn_held):
        if held != N * H * FLOAT_BYTES:
            raise CheckFailed(_("rnn_decode: after {T} tokens the decoder holds {got} bytes; its state is one (N, H) "
                                "float64 array, {want} bytes. Report state.nbytes of the state carried to the next "
                                "token, not of the history of states").format(T=T, got=held, want=N * H * FLOAT_BYTES))
    for held, size in zip(cache_held, cache_sizes):
        if held != size:
            raise CheckFailed(_("attention_decode: held_bytes[-1] = {got}, but the cache you returned holds {want} "
                                "bytes (K.nbytes + V.nbytes)").format(got=held, want=size))
    for function, dtype in dtypes.items():
        if not np.issubdtype(dtype, np.integer):
            raise CheckFailed(_("{function}: held_bytes has dtype {dtype}; byte counts are integers (nbytes is an "
                                "int): make it an integer array").format(function=function, dtype=dtype))

def test_macs_per_token_match_the_formula(inference_cost, rng):
    for _case in range(4):
        D, H = (int(n) for n in rng.integers(1, 300, size=2))
        got = inference_cost.rnn_macs_per_token(D, H)
        if int(got) != D * H + H * H:
            raise CheckFailed(_("rnn_macs_per_token(D={D}, H={H}) = {got}; x_t Wx is D*H multiply-adds and h Wh "
                                "is H*H, the same at every token").format(D=D, H=H, got=got))
        if not isinstance(got, (int, np.integer)) or isinstance(got, bool):     # an np.int64 arrives as an int
            raise CheckFailed(_("rnn_macs_per_token(D={D}, H={H}) returned {got!r}, a {kind}; a count of "
                                "multiply-adds is an int").format(D=D, H=H, got=got, kind=type(got).__name__))
    for t in (1, 2, 17, 1024):
        D, Dk, Dv = (int(n) for n in rng.integers(1, 200, size=3))
        got = inference_cost.attention_macs_per_token(t, D, Dk, Dv)
        want = D * (2 * Dk + Dv) + t * (Dk + Dv)
        if int(got) != want:
            raise CheckFailed(_("attention_macs_per_token(t={t}, D={D}, Dk={Dk}, Dv={Dv}) = {got}, expected "
                                "{want}: the three projections of x_t alone (earlier keys and values come from "
                                "the cache), t scores of width Dk, and a weighted sum of t rows of width "
                                "Dv").format(t=t, D=D, Dk=Dk, Dv=Dv, got=got, want=want))


def test_no_input_mutation(inference_cost, rng):
    N, T, D, H, Dk, Dv = 2, 4, 3, 3, 2, 2
    check = MutationCheck(inference_cost)
    x = rng.normal(size=(N, T, D))
    check.call("rnn_decode_step", x[:, 0], rng.normal(size=(N, H)), *rnn_weights(rng, D, H))
    check.call("attention_decode_step", x[:, 0], (rng.normal(size=(N, 2, Dk)), rng.normal(size=(N, 2, Dv))),
               *attention_weights(rng, D, Dk, Dv))
    check.call("rnn_decode", x, rng.normal(size=(N, H)), *rnn_weights(rng, D, H))
    check.call("attention_decode", x, *attention_weights(rng, D, Dk, Dv))
    check.finish()
