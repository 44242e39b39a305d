"""The suite authors' API (autograder/authoring/checks.py), tested directly: what each check
accepts, what it raises (CheckFailed and its `kind`, which chooses the report's hint) and
that its message names what the student must fix. Expected numbers are worked out by hand
here or by an outside oracle (analytic derivatives), never by checks.py itself."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from autograder import i18n
from autograder.authoring.checks import (
    CheckFailed,
    MutationCheck,
    diagnose,
    dot_attention_bound,
    every_case,
    expect_array,
    expect_close,
    expect_gradients,
    expect_not_mutated,
    expect_tuple,
    finite_differences_batched,
    finite_differences_stacked,
    norm_rel_error,
    rel_error,
    tanh_recurrence_bound,
)
from autograder.isolation.sandbox import StudentCodeError


@pytest.fixture(autouse=True)
def english():
    """Messages are checked in English, whatever another test of this process activated."""
    i18n.activate("en")


def failure(check, *args, **kwargs) -> CheckFailed:
    with pytest.raises(CheckFailed) as raised:
        check(*args, **kwargs)
    return raised.value


# ---------------------------------------------------------------- error measures
def test_rel_error_is_the_largest_elementwise_ratio():
    # |1 - 1| / 2 = 0 and |2 - 2.2| / 4.2: the largest, not the mean
    assert rel_error([1.0, 2.0], [1.0, 2.2]) == pytest.approx(0.2 / 4.2, rel=1e-12)
    assert rel_error([1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 2.0]) == pytest.approx(1 / 3, rel=1e-12)
    assert rel_error(-3.0, 3.0) == pytest.approx(1.0)


def test_rel_error_floors_its_denominator_at_1e_8_and_is_0_on_nothing():
    assert rel_error([0.0, 0.0], [0.0, 0.0]) == 0.0
    assert rel_error([0.0], [1e-9]) == pytest.approx(1e-9 / 1e-8)       # not 1.0: both are ~0
    assert rel_error(np.zeros((0, 3)), np.zeros((0, 3))) == 0.0


def _exact_tanh_rnn(x, h0, Wx, Wh, b):
    """The recurrence in 60-digit arithmetic (mpmath): the exact states, to compare roundings with."""
    mpmath.mp.dps = 60
    N, T, _ = x.shape
    h, out = [[mpmath.mpf(v) for v in row] for row in h0], np.zeros((N, T, Wh.shape[0]))
    for t in range(T):
        h = [[mpmath.tanh(sum(mpmath.mpf(x[n, t, d]) * mpmath.mpf(Wx[d, j]) for d in range(Wx.shape[0]))
                          + sum(h[n][i] * mpmath.mpf(Wh[i, j]) for i in range(Wh.shape[0])) + mpmath.mpf(b[j]))
              for j in range(Wh.shape[0])] for n in range(N)]
        out[:, t] = [[float(v) for v in row] for row in h]
    return out


def test_tanh_recurrence_bound_holds_for_float64_and_not_for_float32():
    """Against exact arithmetic: float64 states in two summation orders are within the bound;
    float32 states (rounding 2^29 times larger) are not, so the bound is not vacuous."""
    rng = np.random.default_rng(0)
    x, h0 = rng.normal(size=(2, 6, 4)), rng.normal(size=(2, 5))
    Wx, Wh, b = rng.normal(size=(4, 5)), rng.normal(size=(5, 5)) * 0.5, rng.normal(size=5)
    exact = _exact_tanh_rnn(x, h0, Wx, Wh, b)

    def run(dtype, reverse):
        h, out = h0.astype(dtype), np.zeros(exact.shape, dtype)
        for t in range(x.shape[1]):
            terms = [x[:, t].astype(dtype) @ Wx.astype(dtype), h @ Wh.astype(dtype), b.astype(dtype)]
            h = np.tanh(sum(terms[::-1] if reverse else terms))
            out[:, t] = h
        return out.astype(float)

    bound = tanh_recurrence_bound(x, h0, Wx, Wh, b, exact)
    assert 0 < bound.max() < 1e-11                  # ~1e3 roundings of O(1) terms, at most
    for reverse in (False, True):
        assert np.all(np.abs(run(np.float64, reverse) - exact) <= bound)
    assert np.any(np.abs(run(np.float32, False) - exact) > bound)


def _exact_attention(x, Wq, Wk, Wv, causal):
    """Scaled dot-product self-attention of one sequence x (T, D) in 60-digit arithmetic."""
    mpmath.mp.dps = 60
    T = x.shape[0]
    M = [[mpmath.mpf(v) for v in row] for row in x]

    def project(W):
        return [[sum(M[t][d] * mpmath.mpf(W[d, j]) for d in range(W.shape[0])) for j in range(W.shape[1])]
                for t in range(T)]

    q, k, v = project(Wq), project(Wk), project(Wv)
    y = np.zeros((T, Wv.shape[1]))
    for t in range(T):
        seen = range(t + 1) if causal else range(T)
        e = [sum(a * b for a, b in zip(q[t], k[s])) / mpmath.sqrt(Wk.shape[1]) for s in seen]
        w = [mpmath.exp(a - max(e)) for a in e]
        y[t] = [float(sum(w[i] * v[s][j] for i, s in enumerate(seen)) / sum(w)) for j in range(Wv.shape[1])]
    return y


@pytest.mark.parametrize("causal", [True, False])
def test_dot_attention_bound_holds_for_float64_and_not_for_float32(causal):
    """Against exact arithmetic: float64 attention (scores by matmul or einsum, the softmax's sum
    in two orders) is within the bound; float32 is not, so the bound is not vacuous."""
    rng = np.random.default_rng(1)
    x, Wq, Wk, Wv = rng.normal(size=(1, 5, 3)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 2))
    exact = _exact_attention(x[0], Wq, Wk, Wv, causal)[None]
    visible = np.tril(np.ones((5, 5), dtype=bool)) if causal else np.ones((5, 5), dtype=bool)

    def run(dtype, einsum):
        q, k, v = (x.astype(dtype) @ W.astype(dtype) for W in (Wq, Wk, Wv))
        e = np.einsum("ntk,nsk->nts", q, k) if einsum else q @ k.transpose(0, 2, 1)
        e = np.where(visible, e / np.sqrt(dtype(4)), -np.inf)
        w = np.exp(e - e.max(axis=2, keepdims=True))
        total = w[..., ::-1].sum(axis=2, keepdims=True) if einsum else w.sum(axis=2, keepdims=True)
        return ((w / total) @ v).astype(float)

    bound = dot_attention_bound(x, Wq, Wk, Wv, causal)
    assert 0 < bound.max() < 1e-12
    for einsum in (False, True):
        assert np.all(np.abs(run(np.float64, einsum) - exact) <= bound)
    assert np.any(np.abs(run(np.float32, False) - exact) > bound)


def test_norm_rel_error_compares_whole_arrays():
    assert norm_rel_error([3.0, 4.0], [0.0, 0.0]) == pytest.approx(1.0)                  # 5 / (5 + 0)
    assert norm_rel_error([1.0, 0.0], [0.0, 1.0]) == pytest.approx(math.sqrt(2) / 2)     # sqrt 2 / (1 + 1)
    # one entry ~0 and off by 1e-12: element-wise that is 1e-4 (floor 1e-8); over the array ~2e-13
    a, b = np.array([1.0, 1e-12, 2.0]), np.array([1.0, 0.0, 2.0])
    assert norm_rel_error(a, b) == pytest.approx(1e-12 / (2 * math.sqrt(5)), rel=1e-6)
    assert norm_rel_error([0.0, 0.0], [0.0, 0.0]) == 0.0


# ---------------------------------------------------------------- types and shapes
def test_expect_array_returns_a_real_array_of_the_shape():
    x = np.ones((2, 3))
    assert expect_array(x, (2, 3), "h") is x
    assert expect_array(np.ones((2, 3), dtype=int), [2, 3], "h").shape == (2, 3)     # a list shape reads as a tuple
    assert expect_array(np.zeros(4, dtype=bool), (4,), "mask").dtype == bool


@pytest.mark.parametrize("value, words", [
    ([[1.0, 2.0, 3.0]] * 2, ["h should be a numpy array of shape (2, 3)", "got list"]),
    (np.ones((3, 2)), ["h has shape (3, 2), expected (2, 3)"]),
    (np.ones(6), ["h has shape (6,), expected (2, 3)"]),
    (np.ones((2, 3), dtype=complex), ["h has dtype complex128, expected a real float array"]),
    (np.array([["a"] * 3] * 2), ["h has dtype <U1"]),
])
def test_expect_array_names_what_is_wrong_as_a_shape_failure(value, words):
    failed = failure(expect_array, value, (2, 3), "h")
    assert failed.kind == "shape"
    for word in words:
        assert word in str(failed)


def test_expect_tuple_accepts_a_tuple_or_list_of_the_length():
    assert expect_tuple([1, 2], 2, "f") == (1, 2)
    assert isinstance(expect_tuple([1, 2], 2, "f"), tuple)


@pytest.mark.parametrize("value, got", [((1, 2, 3), "got a tuple of length 3"), ([1], "got a list of length 1"),
                                        (np.ones(2), "got ndarray"), (None, "got NoneType")])
def test_expect_tuple_names_the_length_or_type_it_got(value, got):
    failed = failure(expect_tuple, value, 2, "rnn_forward")
    assert failed.kind == "shape"
    assert str(failed) == f"rnn_forward should return a tuple of 2 values, {got}"


# ---------------------------------------------------------------- values
def test_expect_close_accepts_values_within_the_tolerance():
    expected = np.array([[1.0, -2.0], [0.5, 3.0]])
    expect_close(expected * (1 + 1e-9), expected, "h")
    expect_close(expected + 1e-4, expected, "h", tol=1e-3)
    expect_close(np.float64(2.0), 2.0, "loss")
    expect_close(2, np.array(2.0), "loss")                 # a 0-d expected takes any number


def test_expect_close_reports_the_relative_error_and_the_hint():
    failed = failure(expect_close, np.array([1.0, 2.2]), np.array([1.0, 2.0]), "next_h", hint="apply tanh")
    assert failed.kind == "value"
    # 0.2 / 4.2 = 4.76e-02, against the default 1e-7
    assert str(failed) == "next_h is wrong: relative error 4.76e-02 (allowed 1e-07). apply tanh"
    failed = failure(expect_close, 1.5, 1.0, "loss", tol=1e-3)
    assert str(failed) == "loss is wrong: relative error 2.00e-01 (allowed 1e-03)"      # 0.5 / 2.5


def test_expect_close_tolerance_is_the_largest_elementwise_ratio():
    # |1.0000005 - 1| / 2.0000005 = 2.5e-07: over the default 1e-7, within 1e-6
    expect_close(np.array([1.0000005, 3.0]), np.array([1.0, 3.0]), "h", tol=1e-6)
    assert "relative error 2.50e-07" in str(failure(expect_close, np.array([1.0000005, 3.0]), np.array([1.0, 3.0]), "h"))


def test_expect_close_fails_on_a_shape_before_comparing_values():
    failed = failure(expect_close, np.ones((2, 1)), np.ones(2), "db")
    assert failed.kind == "shape" and "db has shape (2, 1), expected (2,)" in str(failed)


def test_expect_close_names_nan_and_non_numbers():
    failed = failure(expect_close, np.array([np.nan, 1.0]), np.array([1.0, 1.0]), "h")
    assert str(failed) == "h contains nan or inf" and failed.kind == "value"
    failed = failure(expect_close, np.array([np.inf, 1.0]), np.array([1.0, 1.0]), "h")
    assert str(failed) == "h contains nan or inf"
    assert str(failure(expect_close, "half", 0.5, "loss")) == "loss should be a number, got str"
    assert str(failure(expect_close, [0.5, 0.5], 0.5, "loss")) == "loss should be a number, got list"
    assert str(failure(expect_close, None, 0.5, "loss")) == "loss should be a number, got NoneType"


def test_expect_close_does_not_pass_nan_where_nan_is_expected_too():
    # nan compares false: a nan where the reference has nan is not "close" either
    failed = failure(expect_close, np.array([np.nan]), np.array([np.nan]), "h")
    assert "relative error nan" in str(failed)


# ---------------------------------------------------------------- inputs left alone
class Proxy:
    """What a StudentModule is to the checks: functions, and after each call `last_mutated`,
    the names of the arguments that call changed in place."""

    def __init__(self, **functions):
        self.functions = functions
        self.last_mutated: list[str] = []

    def __getattr__(self, name):
        function, mutated = self.functions[name]

        def call(*args):
            self.last_mutated = list(mutated)
            return function(*args)

        return call


def test_expect_not_mutated_passes_a_call_that_changed_nothing():
    expect_not_mutated(Proxy(), "f")
    expect_not_mutated(object(), "f")               # not a proxy: nothing recorded, nothing to charge


def test_expect_not_mutated_names_the_argument_and_the_remedy():
    module = Proxy(step=(lambda x: x, ["prev_h"]))
    module.step(1)
    failed = failure(expect_not_mutated, module, "rnn_step_forward")
    assert failed.kind == "value"
    assert str(failed) == ("rnn_step_forward modified its argument prev_h in place; functions must not change their "
                           "inputs (work on a copy, e.g. prev_h = prev_h.copy(), or use out-of-place operations: "
                           "a = a * s instead of a *= s)")
    module = Proxy(step=(lambda x: x, ["x", "h0"]))
    module.step(1)
    assert str(failure(expect_not_mutated, module, "rnn_forward")).startswith(
        "rnn_forward modified its arguments x, h0 in place;")


def computes(*args):
    return args[0] * 2.0 + 1.0


def test_mutation_check_passes_functions_that_compute_and_leave_inputs_alone():
    x = np.arange(3.0)
    check = MutationCheck(Proxy(forward=(lambda x: (computes(x), "cache handle"), []),
                                backward=(computes, [])))
    out = check.call("forward", x)
    assert out[1] == "cache handle"                              # the result itself
    assert check.part(out, 2, 1) == "cache handle"
    check.call("backward", np.ones(3))
    check.finish()


def test_mutation_check_part_reads_a_tuple_of_the_length_or_nothing():
    assert MutationCheck.part((1, 2), 2, 1) == 2
    assert MutationCheck.part([1, 2], 2, 0) == 1
    assert MutationCheck.part((1, 2, 3), 2, 1) is None
    assert MutationCheck.part(np.ones(2), 2, 1) is None


def test_mutation_check_names_every_function_that_changed_an_argument():
    check = MutationCheck(Proxy(forward=(computes, ["x"]), backward=(computes, []),
                                update=(computes, ["w", "grad"])))
    for function in ("forward", "backward", "update"):
        check.call(function, np.ones(2))
    failed = failure(check.finish)
    assert failed.kind == "value"
    assert str(failed) == ("forward modified its argument x in place; update modified its arguments w, grad in "
                           "place; functions must not change their inputs (work on a copy, e.g. x = x.copy(), or "
                           "use out-of-place operations: a = a * s instead of a *= s)")


@pytest.mark.parametrize("result", [lambda x: np.zeros(3), lambda x: x, lambda x: (x, 0.0), lambda x: [np.zeros(2)]],
                         ids=["zeros", "the argument", "argument and zero", "a list of zeros"])
def test_mutation_check_does_not_pay_a_function_that_computes_nothing(result):
    check = MutationCheck(Proxy(idle=(result, []), fine=(computes, [])))
    check.call("idle", np.arange(1.0, 4.0))
    check.call("fine", np.ones(3))
    check.call("idle", np.arange(1.0, 4.0))         # named once
    assert str(failure(check.finish)) == (
        "idle returned only zeros or an argument unchanged: the points for leaving the inputs unchanged go to "
        "functions that also compute their outputs")


def test_mutation_check_counts_a_number_or_an_opaque_result_as_computed():
    check = MutationCheck(Proxy(score=(lambda x: 0.5, []), handle=(lambda x: object(), [])))
    check.call("score", np.ones(2))
    check.call("handle", np.ones(2))
    check.finish()


def test_mutation_check_leaves_a_raising_call_to_its_own_tests():
    problem = StudentCodeError("forward raised ValueError")

    def raises(*args):
        raise problem

    check = MutationCheck(Proxy(forward=(raises, []), backward=(computes, [])))
    assert check.call("forward", np.ones(2)) is None
    check.call("backward", np.ones(2))
    check.finish()                                   # one call ran, and changed nothing
    alone = MutationCheck(Proxy(forward=(raises, [])))
    alone.call("forward", np.ones(2))
    with pytest.raises(StudentCodeError) as raised:  # nothing ran: the stub earns nothing
        alone.finish()
    assert raised.value is problem


def test_mutation_check_lets_a_suite_error_through():
    # only the student's problems (StudentProblem, from the worker) are left to other tests;
    # a mistake of the suite itself (a function the module lacks) must not pass unseen
    check = MutationCheck(Proxy())
    with pytest.raises(KeyError):
        check.call("no_such_function", np.ones(2))


# ---------------------------------------------------------------- finite differences
def cubic(A, B):
    """sum(A^3) + sum(A * B): d/dA = 3 A^2 + B, d/dB = A (the oracle of the tests below)."""
    return np.sum(A ** 3) + np.sum(A * B)


def test_finite_differences_batched_agrees_with_the_analytic_gradient():
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    before = A.copy(), B.copy()
    calls = []

    def losses(probes):
        calls.append(len(probes))
        return [cubic(*probe) for probe in probes]

    dA, dB = finite_differences_batched(losses, [A, B])
    assert calls == [2 * (A.size + B.size)]                 # every probe in one call
    np.testing.assert_allclose(dA, 3 * A ** 2 + B, rtol=0, atol=1e-8)
    np.testing.assert_allclose(dB, A, rtol=0, atol=1e-8)
    assert np.array_equal(A, before[0]) and np.array_equal(B, before[1])      # probes are copies


def test_finite_differences_stacked_agrees_with_the_analytic_gradient():
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    before = A.copy(), B.copy()
    shapes = []

    def losses(As, Bs):
        shapes.append((As.shape, Bs.shape))
        return np.sum(As ** 3 + As * Bs, axis=(1, 2))

    dA, dB = finite_differences_stacked(losses, [A, B])
    probes = 2 * (A.size + B.size)
    assert shapes == [((probes, 3, 2), (probes, 3, 2))]     # one call, a leading axis of probes
    np.testing.assert_allclose(dA, 3 * A ** 2 + B, rtol=0, atol=1e-8)
    np.testing.assert_allclose(dB, A, rtol=0, atol=1e-8)
    assert np.array_equal(A, before[0]) and np.array_equal(B, before[1])


def test_finite_differences_stacked_moves_one_entry_per_probe():
    # the probes of x = [a, b]: (a+h, b), (a-h, b), (a, b+h), (a, b-h), in that order
    seen = []
    finite_differences_stacked(lambda xs: seen.append(xs.copy()) or xs.sum(axis=1), [np.array([1.0, 2.0])], h=0.5)
    np.testing.assert_array_equal(seen[0], [[1.5, 2.0], [0.5, 2.0], [1.0, 2.5], [1.0, 1.5]])


# ---------------------------------------------------------------- gradients
def test_expect_gradients_accepts_gradients_within_the_tolerance():
    numeric = [np.array([1.0, -2.0]), np.array([[0.5]])]
    expect_gradients([g * (1 + 1e-8) for g in numeric], numeric, ["dx", "db"], "step_backward")
    # an entry ~0 off by 1e-9 passes on the whole-array criterion (element-wise it would be 0.1)
    expect_gradients([np.array([1.0, 1e-9])], [np.array([1.0, 0.0])], ["dx"], "step_backward")


def test_expect_gradients_names_the_first_wrong_gradient_with_its_error_and_hint():
    numeric = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    student = [np.array([1.0, 0.0]), np.array([1.0, 0.0])]        # db: sqrt 2 / (1 + 1) = 7.1e-01
    failed = failure(expect_gradients, student, numeric, ["dx", "db"], "rnn_step_backward", hint="sum over the batch")
    assert failed.kind == "value"
    assert str(failed) == ("rnn_step_backward: db disagrees with finite differences of the exercise's forward pass "
                           "(relative error 7.1e-01); sum over the batch")


def test_expect_gradients_checks_shape_and_nan_first():
    numeric = [np.ones((2, 3))]
    failed = failure(expect_gradients, [np.ones((3, 2))], numeric, ["dWx"], "rnn_backward")
    assert failed.kind == "shape" and "rnn_backward: dWx has shape (3, 2), expected (2, 3)" in str(failed)
    failed = failure(expect_gradients, [np.full((2, 3), np.nan)], numeric, ["dWx"], "rnn_backward")
    assert str(failed) == "rnn_backward: dWx contains nan or inf"


def test_expect_gradients_tolerance_is_strict():
    # ||g - n|| / (||g|| + ||n||) = 0.1 / 2.1 = 0.0476...: passes 0.05, fails 0.04
    expect_gradients([np.array([1.1])], [np.array([1.0])], ["db"], "f", tol=0.05)
    assert "relative error 4.8e-02" in str(failure(expect_gradients, [np.array([1.1])], [np.array([1.0])],
                                                   ["db"], "f", tol=0.04))


# ---------------------------------------------------------------- diagnosis
def same_within(tol):
    return lambda a, b: abs(a - b) <= tol


RIGHT = 10.0
HYPOTHESES = [("you forgot the bias", 7.0), ("you squared twice", 100.0), ("you averaged", 5.0)]


def test_diagnose_names_the_one_hypothesis_that_gives_the_students_result():
    assert diagnose(100.0, RIGHT, HYPOTHESES, same_within(1e-9)) == "you squared twice"
    assert diagnose(7.0 + 1e-12, RIGHT, iter(HYPOTHESES), same_within(1e-9)) == "you forgot the bias"   # a generator


def test_diagnose_says_nothing_when_no_hypothesis_fits():
    assert diagnose(8.0, RIGHT, HYPOTHESES, same_within(1e-9)) == ""
    assert diagnose(8.0, RIGHT, [], same_within(1e-9)) == ""


def test_diagnose_says_nothing_when_several_misconceptions_fit():
    # 5 and 7 are within 2.5 of 6: two explanations, so no guess
    assert diagnose(6.0, RIGHT, HYPOTHESES, same_within(2.5)) == ""
    # two implementations of one misconception (one message) are one diagnosis
    twice = [("you averaged", 5.0), ("you averaged", 5.0 + 1e-12), ("you squared twice", 100.0)]
    assert diagnose(5.0, RIGHT, twice, same_within(1e-9)) == "you averaged"


def test_diagnose_ignores_a_mistake_that_does_not_show_on_these_inputs():
    # the bias is 0 here: "forgot the bias" gives the right result, so it cannot explain a wrong one
    hypotheses = [("you forgot the bias", RIGHT), ("you averaged", 5.0)]
    assert diagnose(RIGHT, RIGHT, hypotheses, same_within(1e-9)) == ""
    assert diagnose(5.0, RIGHT, hypotheses, same_within(20.0)) == ""     # within 20, 10 and 5 are the same
    # differs sets its own threshold: here 5 differs from 10, and 5.0001 is 5 to `same`
    assert diagnose(5.0001, RIGHT, hypotheses, same_within(1e-3), differs=lambda w, r: abs(w - r) > 1.0) \
        == "you averaged"


def test_diagnose_fits_nothing_to_a_result_it_cannot_compare():
    def same_arrays(got, wrong):
        return np.shape(got) == np.shape(wrong) and bool(np.allclose(np.asarray(got, dtype=float), wrong))

    right, hypotheses = np.ones(3), [("you added one", np.full(3, 2.0))]
    assert diagnose(np.full(3, 2.0), right, hypotheses, same_arrays) == "you added one"
    assert diagnose(["a", "b", "c"], right, hypotheses, same_arrays) == ""          # ValueError inside `same`
    assert diagnose(np.full(3, 2.0), right, hypotheses, lambda got, wrong: got + "x") == ""   # TypeError


def test_a_diagnosis_is_named_only_when_it_reproduces_every_case():
    """Two mistakes give the student's number on the first case; the second case refutes one of
    them, and a passing case where the other would show refutes it too."""
    from autograder.authoring.checks import Diagnosis

    same = lambda a, b: abs(a - b) <= 1e-9          # noqa: E731
    d = Diagnosis(same)
    d.case(2.0, 1.0, [("A", 2.0), ("B", 2.0)])
    assert d.message() == ""                           # two fit: no guess
    d.case(5.0, 3.0, [("A", 5.0), ("B", 4.0)])
    assert d.message() == "A"
    d.case(7.0, 7.0, [("A", 8.0), ("B", 7.0)])         # passed where A would have shown
    assert d.message() == ""
    unreadable = Diagnosis(lambda a, b: float(a) == b)
    unreadable.case("not a number", 1.0, [("A", 2.0)])
    assert unreadable.message() == ""


def test_first_difference_shows_digits_enough_to_see_it():
    from autograder.authoring.checks import first_difference

    got, right = np.array([[1.0, 1.611042], [3.0, 4.0]]), np.array([[1.0, 1.611031], [3.0, 4.0]])
    assert first_difference(got, right, "D") == "D[0, 1] = 1.61104 where 1.61103 is right"
    assert first_difference(1.00000012, 1.00000011, "x") == "x = 1.00000012 where 1.00000011 is right"


# ------------------------------------------------------------------ every_case
# A student's "triple" (3x is right) against two known mistakes, 2x and x + 2, which agree at x = 2.
MISTAKES = (("your value matches 2x", lambda x: 2 * x), ("your value matches x + 2", lambda x: x + 2))


def _every_case(student, cases=(2.0, 5.0)):
    def run_case(x, record):
        got = student(x)
        record(got, 3 * x, ((text, wrong(x)) for text, wrong in MISTAKES))
        if got != 3 * x:
            raise CheckFailed(f"triple({x}) = {got}, not {3 * x}")
    with pytest.raises(CheckFailed) as failed:
        every_case(cases, run_case, same=lambda a, b: a == b)
    return str(failed.value), failed.value.kind


def test_every_case_names_the_mistake_all_cases_agree_with():
    assert _every_case(lambda x: 2 * x) == ("triple(2.0) = 4.0, not 6.0: your value matches 2x", "diagnosed")
    assert _every_case(lambda x: x + 2) == ("triple(2.0) = 4.0, not 6.0: your value matches x + 2", "diagnosed")


def test_every_case_names_nothing_a_later_case_refutes():
    """At x = 2 both mistakes give 4: the first failing case alone cannot tell them apart, and a
    student who computes 4 there and 11 at x = 5 made neither (x + 6 would be another mistake)."""
    assert _every_case(lambda x: 4.0 if x == 2 else x + 6) == ("triple(2.0) = 4.0, not 6.0", "value")
    assert _every_case(lambda x: 2 * x, cases=(2.0,)) == ("triple(2.0) = 4.0, not 6.0", "value"), \
        "one case where both fit: neither is named"


def test_every_case_keeps_the_first_failure_when_a_later_case_raises():
    def raises_later(x):
        if x == 5.0:
            raise ValueError("student code failed")
        return 2 * x
    assert _every_case(raises_later) == ("triple(2.0) = 4.0, not 6.0", "value")
    with pytest.raises(ValueError):
        every_case([5.0], lambda x, record: raises_later(x), same=lambda a, b: a == b)


def test_every_case_passes_when_every_case_does():
    assert every_case([1.0, 2.0], lambda x, record: record(3 * x, 3 * x, ()), same=lambda a, b: a == b) is None
