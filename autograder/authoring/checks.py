"""Assertions for the suites, with messages written for the student.

A failed check says what was wrong in terms of the exercise (which output, which shape,
how far off) and never prints hidden inputs in bulk.
"""

from __future__ import annotations

import numpy as np

from autograder.i18n import _


class CheckFailed(AssertionError):
    """A wrong answer (outcome "failed"); its message is shown to the student.

    `kind` says what was wrong, so the report can choose the hint: "value" (a wrong number:
    the rubric's misconception hint applies), "diagnosed" (a wrong number the message already
    names the misconception of: the rubric's general hint would only repeat or blur it) or
    "shape" (a wrong type, shape or structure: the values were not even compared, and a hint
    about the math would mislead)."""

    def __init__(self, message: str = "", kind: str = "value", plain: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.plain = message if plain is None else plain   # the message without what a case added (`every_case`)


# ------------------------------------------------------------------ rounding bounds
# Two correct computations of one number differ by their rounding errors, which depend on
# the order of the sums and on fused multiply-adds, i.e. on the BLAS kernel the CPU gets
# (OpenBLAS picks Haswell's FMA kernels on one machine, Sandybridge's on another) and on the
# thread count. A tolerance must hold for every such pair, so it is stated against a bound
# that holds for all of them: a D-term sum of products computed in any order, with or
# without FMA, is off by at most gamma(D) * sum |a_k b_k| (Higham, Accuracy and Stability of
# Numerical Algorithms, 2nd ed., section 3.1), so two of them differ by twice that. The
# bound is relative to the magnitude of the terms, not to the result: where the terms
# cancel, the result's own relative error is unbounded, and a tolerance relative to the
# result fails a correct code on the entries that happen to be near zero.
UNIT_ROUNDOFF = 2.0 ** -53


def gamma(n: int) -> float:
    """Higham's gamma_n = n u / (1 - n u): the relative bound of n roundings in a row."""
    return n * UNIT_ROUNDOFF / (1 - n * UNIT_ROUNDOFF)


def product_scale(a, b) -> np.ndarray:
    """|a| @ |b|: the magnitude of the terms of a @ b, which its rounding error is bounded by
    (times gamma of the inner dimension). Pass it as `expect_close(..., scale=...)`."""
    return np.abs(np.asarray(a, dtype=float)) @ np.abs(np.asarray(b, dtype=float))


def tanh_recurrence_bound(x, h0, Wx, Wh, b, h) -> np.ndarray:
    """(N, T, H): how far one correct computation of h_t = tanh(x_t Wx + h_{t-1} Wh + b) can be
    from the exact states `h` (given as computed: the difference is second order), in any
    summation order, FMA or not; two computations differ by twice this. The pre-activation is a
    (D+H+1)-term sum, off by gamma_{D+H+1} P with P = |x_t||Wx| + |h_{t-1}||Wh| + |b|; tanh is
    1-Lipschitz and rounds to a few ulps (|tanh| <= 1); the previous state's error d comes in
    through Wh as d |Wh|. So d_t <= gamma_{D+H+6} (P_t + 1) + d_{t-1} |Wh| (the 5 extra
    roundings cover tanh's ulps and the terms of order u^2)."""
    D, H = np.shape(Wx)
    d, prev, bound = np.zeros(np.shape(h0)), h0, np.zeros(np.shape(h))
    for t in range(np.shape(x)[1]):
        d = gamma(D + H + 6) * (product_scale(x[:, t], Wx) + product_scale(prev, Wh) + np.abs(b) + 1) \
            + d @ np.abs(Wh)
        bound[:, t], prev = d, h[:, t]
    return bound


def dot_attention_bound(x, Wq, Wk, Wv, causal: bool) -> np.ndarray:
    """(N, T, Dv): how far one correct computation of scaled dot-product self-attention,
    y_t = softmax_s(q_t . k_s / sqrt(Dk)) v_s with q, k, v = x Wq, x Wk, x Wv (s <= t when
    `causal`), can be from the exact one, in any summation order, FMA or not; two computations
    differ by twice this. q, k, v are D-term products, each off by gamma_D of P = |x||W| (which
    bounds them too); a score is then off by gamma_{2D+Dk+4} Pq . Pk / sqrt(Dk) (its own Dk-term
    sum, the scaling and the square root included). A softmax weight moves, relative to itself,
    by twice the largest score error of its row, plus u |e - max| <= 2u max|e| and the rounding
    of exp, the T-term sum and the division (gamma_{T+8}); y, a weighted average of the values,
    by that plus gamma_T + gamma_D, relative to the largest |v_s| it can see."""
    N, T, D = np.shape(x)
    Dk = np.shape(Wk)[1]
    Pq, Pk, Pv = product_scale(x, Wq), product_scale(x, Wk), product_scale(x, Wv)
    scores = Pq @ Pk.transpose(0, 2, 1) / np.sqrt(Dk)                          # (N, T, T), >= |e|
    visible = np.tril(np.ones((T, T), dtype=bool)) if causal else np.ones((T, T), dtype=bool)
    scores = np.where(visible, scores, 0.0)
    largest = scores.max(axis=2, keepdims=True)
    weight = 2 * gamma(2 * D + Dk + 4) * largest + 2 * UNIT_ROUNDOFF * largest + gamma(T + 8)
    seen = np.maximum.accumulate(Pv, axis=1) if causal else np.broadcast_to(Pv.max(axis=1, keepdims=True), Pv.shape)
    return (weight + gamma(T) + gamma(D)) * seen


def rel_error(a, b, scale=None) -> float:
    """CS231n's element-wise relative error, maximised (the exercise's own definition):
    max |a - b| / max(|a| + |b|, 1e-8). With `scale` (an array broadcast to a's shape, or a
    number), the denominator is at least `scale` too: the error of each entry relative to the
    magnitude of the terms it was computed from (`product_scale`), which rounding bounds."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not a.size:
        return 0.0
    floor = 1e-8 if scale is None else np.maximum(np.abs(np.asarray(scale, dtype=float)), 1e-8)
    with np.errstate(invalid="ignore"):
        ratio = np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), floor)
    return float(ratio.max())


def norm_rel_error(a, b) -> float:
    """||a - b|| / (||a|| + ||b||): the whole-array criterion, robust where entries are ~0."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    denom = np.linalg.norm(a) + np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / denom) if denom > 0 else 0.0


def expect_array(value, shape: tuple, what: str) -> np.ndarray:
    """`value` must be a finite-or-not numeric ndarray of exactly `shape`."""
    if not isinstance(value, np.ndarray):
        raise CheckFailed(_("{what} should be a numpy array of shape {shape}, got {type}").format(
            what=what, shape=shape, type=type(value).__name__), "shape")
    if value.shape != tuple(shape):
        raise CheckFailed(_("{what} has shape {got}, expected {expected}").format(
            what=what, got=value.shape, expected=tuple(shape)), "shape")
    if value.dtype.kind not in "fiub":
        raise CheckFailed(_("{what} has dtype {dtype}, expected a real float array").format(
            what=what, dtype=value.dtype), "shape")
    return value


def expect_tuple(value, length: int, what: str) -> tuple:
    if not isinstance(value, (tuple, list)) or len(value) != length:
        got = f"a {type(value).__name__} of length {len(value)}" if isinstance(value, (tuple, list)) \
            else type(value).__name__
        raise CheckFailed(_("{what} should return a tuple of {n} values, got {got}").format(
            what=what, n=length, got=got), "shape")
    return tuple(value)


def expect_close(actual, expected, what: str, tol: float = 1e-7, hint: str = "", scale=None) -> None:
    """Shape and values of `actual` must match `expected` (max CS231n rel_error <= tol).

    `scale`: the magnitude of the terms `expected` was computed from (see `rel_error` and
    `product_scale`); give it wherever entries can cancel to near zero, so that `tol` is a
    bound any correct summation order meets, on every entry."""
    expected = np.asarray(expected)
    actual = expect_array(actual, expected.shape, what) if expected.ndim else actual
    if expected.ndim == 0:
        try:
            actual = float(actual)
        except (TypeError, ValueError):
            raise CheckFailed(_("{what} should be a number, got {type}").format(
                what=what, type=type(actual).__name__)) from None
    if not np.all(np.isfinite(actual)) and np.all(np.isfinite(expected)):
        raise CheckFailed(_("{what} contains nan or inf").format(what=what))
    err = rel_error(actual, expected, scale)
    if not err <= tol:
        message = _("{what} is wrong: relative error {error} (allowed {allowed})").format(
            what=what, error=f"{err:.2e}", allowed=f"{tol:.0e}")
        raise CheckFailed(_("{message}. {hint}").format(message=message, hint=hint) if hint else message,
                          plain=message)


def expect_not_mutated(module, what: str) -> None:
    """After a call through a StudentModule proxy: no argument array was modified in place."""
    mutated = getattr(module, "last_mutated", [])
    if mutated:
        which = (_("argument {name}").format(name=mutated[0]) if len(mutated) == 1
                 else _("arguments {names}").format(names=", ".join(mutated)))
        raise CheckFailed(_("{what} modified its {which} in place; functions must not change their inputs (work "
                            "on a copy, e.g. {name} = {name}.copy(), or use out-of-place operations: a = a * s "
                            "instead of a *= s)").format(what=what, which=which, name=mutated[0]))


class MutationCheck:
    """Input-mutation checks of several functions of one module, each judged on its own.

        check = MutationCheck(bptt)
        out = check.call("rnn_forward", x, h0, Wx, Wh, b)     # the result, or None
        cache = check.part(out, 2, 1)                          # element 1 of a 2-tuple, or None
        if cache is not None:
            check.call("rnn_backward", dh, cache)
        check.finish()

    A call that raises (or returns what the grader cannot read) is not charged here: its
    own tests charge it, and what depends on its result is skipped. A call that modifies an
    argument in place is named with that argument's name. `finish` fails on every function
    that modified an argument; when no call ran at all, it raises the first problem, so an
    untouched stub does not earn the point. Nor does a function that computes nothing: one
    whose numbers are all zeros or an argument handed back (a stub that returns zeros changes
    nothing either)."""

    def __init__(self, module):
        self.module = module
        self.mutated: list[tuple[str, list[str]]] = []
        self.idle: list[str] = []
        self.ran = 0
        self.first_problem: Exception | None = None

    def call(self, function: str, *args):
        from autograder.isolation.errors import StudentProblem  # lazy, for start-up speed: checks loads no isolation

        try:
            result = getattr(self.module, function)(*args)
        except StudentProblem as problem:
            self.first_problem = self.first_problem or problem
            return None
        self.ran += 1
        names = list(getattr(self.module, "last_mutated", []))
        if names:
            self.mutated.append((function, names))
        if not _computes(result, args):
            self.idle.append(function)
        return result

    @staticmethod
    def part(result, length: int, index: int):
        """Element `index` of a returned tuple of `length` values, or None (not a tuple)."""
        if isinstance(result, (tuple, list)) and len(result) == length:
            return result[index]
        return None

    def finish(self) -> None:
        if self.mutated:
            parts = [(_("{function} modified its argument {names} in place") if len(names) == 1 else
                      _("{function} modified its arguments {names} in place")).format(function=function,
                                                                                      names=", ".join(names))
                     for function, names in self.mutated]
            first = self.mutated[0][1][0]
            raise CheckFailed(_("{changes}; functions must not change their inputs (work on a copy, e.g. {name} = "
                                "{name}.copy(), or use out-of-place operations: a = a * s instead of a *= s)").format(
                changes="; ".join(parts), name=first))
        if not self.ran and self.first_problem is not None:
            raise self.first_problem
        if self.idle:
            raise CheckFailed(_("{functions} returned only zeros or an argument unchanged: the points for leaving "
                                "the inputs unchanged go to functions that also compute their outputs").format(
                functions=", ".join(dict.fromkeys(self.idle))))


def _computes(result, args) -> bool:
    """Whether a result holds a number the function computed: a nonzero array or number that
    is not one of the arguments. Opaque values (cache handles) say nothing either way, so a
    result made of them only counts as computed."""
    numbers = []

    def walk(value):
        if isinstance(value, (tuple, list)):
            for v in value:
                walk(v)
        elif isinstance(value, np.ndarray) and value.dtype.kind in "fiub" or isinstance(value, (int, float)):
            numbers.append(np.asarray(value))

    walk(result)
    if not numbers:
        return True
    given = [np.asarray(a) for a in args if isinstance(a, np.ndarray)]
    return any(np.any(n != 0) and not any(n.shape == g.shape and np.array_equal(n, g) for g in given)
               for n in numbers)


def finite_differences_batched(losses, arrays, h: float = 1e-6) -> list[np.ndarray]:
    """Central differences of a scalar loss w.r.t. every entry of every array, every probe
    answered by one call: `losses(probes)` gets a list of argument lists (for each entry of
    each array, a copy of `arrays` with that entry at +h, then one at -h) and returns their
    losses in order. A loss computed by student code behind the process boundary then costs
    one exchange instead of two per entry."""
    probes, entries = [], []
    for k, a in enumerate(arrays):
        for i in np.ndindex(a.shape):
            for step in (h, -h):
                moved = [b.copy() if j == k else b for j, b in enumerate(arrays)]
                moved[k][i] = a[i] + step
                probes.append(moved)
            entries.append((k, i))
    values = losses(probes)
    grads = [np.zeros_like(a) for a in arrays]
    for n, (k, i) in enumerate(entries):
        grads[k][i] = (values[2 * n] - values[2 * n + 1]) / (2 * h)
    return grads


def finite_differences_stacked(losses, arrays, h: float = 1e-6) -> list[np.ndarray]:
    """Central differences of a scalar loss w.r.t. every entry of every array, every probe in
    one call: `losses(*stacks)` gets each array with a leading axis of probes (for each entry
    of each array, in order, the arrays with that entry at +h, then at -h) and returns their
    losses, shape (probes,). A forward pass written over leading axes then runs once per
    check instead of twice per entry. Suites call this with the reference's forward pass (or
    its equations written over leading axes), in the grader: a student's forward and backward
    cannot then agree on a shared mistake."""
    count = 2 * sum(a.size for a in arrays)
    stacks = [np.repeat(np.asarray(a, dtype=float)[None], count, axis=0) for a in arrays]
    first = 0                                   # the probe of the array's first entry at +h
    for a, stack in zip(arrays, stacks):
        flat, entries = stack.reshape(count, -1), np.arange(a.size)
        flat[first + 2 * entries, entries] = a.ravel() + h
        flat[first + 2 * entries + 1, entries] = a.ravel() - h
        first += 2 * a.size
    values = np.asarray(losses(*stacks), dtype=float).reshape(count)
    grads, first = [], 0
    for a in arrays:
        pair = values[first:first + 2 * a.size]
        grads.append(((pair[0::2] - pair[1::2]) / (2 * h)).reshape(a.shape))
        first += 2 * a.size
    return grads


def expect_gradients(student, numeric, names, what: str, hint: str = "", tol: float = 1e-6) -> None:
    """Each student gradient within `tol` of its finite-difference estimate.

    The criterion is the whole-array ||g - g_num|| / (||g|| + ||g_num||): the element-wise
    CS231n ratio blows up on entries that are ~0 (the lab's `bptt_matches_finite_difference`).
    """
    for g, n, name in zip(student, numeric, names):
        expect_array(g, n.shape, f"{what}: {name}")
        if not np.all(np.isfinite(g)):
            raise CheckFailed(_("{what}: {name} contains nan or inf").format(what=what, name=name))
        err = norm_rel_error(g, n)
        if not err < tol:
            message = _("{what}: {name} disagrees with finite differences of the exercise's forward pass "
                        "(relative error {error})").format(what=what, name=name, error=f"{err:.1e}")
            raise CheckFailed(_("{message}; {hint}").format(message=message, hint=hint) if hint else message,
                              plain=message)


class Diagnosis:
    """Which known mistake a student's results show, judged on EVERY case a test ran.

    One case can be reproduced by two mistakes (or by a mistake the code does not make):
    a mistake is named only when recomputing under it reproduces the student's result on
    every case recorded, failing or passing, and it explains at least one failing case,
    and no other known mistake (with another message) does the same.

        diagnosis = Diagnosis(same=lambda a, b: rel_error(a, b) <= 1e-9)
        for case in cases:
            got = student(case)
            diagnosis.case(got, right(case), ((_(text), right(case, **mistake)) for mistake, text in MISTAKES))
        ...                                  # after every case: fail with diagnosis.message() if it names one

    `hypotheses` yields (message, wrong): what one known wrong implementation returns on the
    case's inputs, computed by the suite (the reference's equations with one mistake).
    `same(a, b)` is the suite's tolerance; `differs(wrong, right)` (default: not `same`) says
    whether the mistake shows on the case at all. A result the comparison cannot read (`same`
    raises TypeError or ValueError: a wrong shape or type) fits no mistake."""

    def __init__(self, same, differs=None):
        self.same = same
        self.differs = differs or (lambda wrong, right_: not same(wrong, right_))
        self._fits: dict[str, bool] | None = None      # message -> consistent with every case so far
        self._explains: set[str] = set()               # messages that explain a failing case
        self.unreadable = False

    def case(self, got, right, hypotheses) -> None:
        fits: dict[str, bool] = {}
        try:
            failing = not self.same(got, right)
            for message, wrong in hypotheses:     # hypotheses with one message are one misconception
                reproduced = bool(self.same(got, wrong))
                fits[message] = fits.get(message, False) or reproduced
                if failing and reproduced and self.differs(wrong, right):
                    self._explains.add(message)
        except (TypeError, ValueError):
            self.unreadable = True
            return
        if self._fits is None:
            self._fits = fits
        else:
            self._fits = {m: self._fits.get(m, False) and ok for m, ok in fits.items()}

    def named(self) -> list[str]:
        """Every message that fits every recorded case and explains a failing one (none when a
        result was unreadable): a suite that merges some of them into one misconception reads these."""
        if self.unreadable or not self._fits:
            return []
        return [m for m, ok in self._fits.items() if ok and m in self._explains]

    def message(self) -> str:
        """The one mistake every recorded case agrees with, or "" (none, several, unreadable)."""
        named = self.named()
        return named[0] if len(named) == 1 else ""


def every_case(cases, run_case, same, differs=None) -> None:
    """Run a test's every case, then fail with its first failure, the mistake named only when
    recomputing under it reproduces the student's result on all of them (`Diagnosis`).

    `run_case(case, record)` calls the student, then `record(got, right, hypotheses)` (as
    `Diagnosis.case`), then its checks, raising CheckFailed on a wrong answer; a named mistake
    follows the failure's `plain` message (without what the case added for an undiagnosed one).
    After a first failure, a case that raises anything else (the student's code failing on
    another input) ends the run undiagnosed: the first failure is the one reported.

        def run_case(args, record):
            grads = student.backward(*args)
            record(grads, variant(*args), variant_hypotheses(variant, MISTAKES, *args))
            expect_gradients(grads, numeric(args), NAMES, what)
        every_case(inputs, run_case, same_gradients)
    """
    diagnosis = Diagnosis(same, differs)
    first: CheckFailed | None = None
    for case in cases:
        try:
            run_case(case, diagnosis.case)
        except CheckFailed as failure:
            first = first or failure
        except Exception:
            if first is None:
                raise
            diagnosis.unreadable = True
            break
    if first is None:
        return
    known = diagnosis.message()
    if not known:
        raise first
    raise CheckFailed(_("{failure}: {diagnosis}").format(failure=first.plain, diagnosis=known), "diagnosed") from None


def variant_hypotheses(variant, mistakes, *args):
    """(message, what `variant` gives with that mistake on `args`) of each (mistake keywords,
    message) of `mistakes`: the hypotheses of `Diagnosis.case`, messages translated."""
    return ((_(text), variant(*args, **mistake)) for mistake, text in mistakes)


def diagnose(got, right, hypotheses, same, differs=None) -> str:
    """`Diagnosis` of a single case: the misconception `got` shows there, as a message for the
    student, or "". Prefer `Diagnosis` where a test runs several cases: a mistake that fits
    one case may be refuted by another.

        MISTAKES = ((dict(squared=False), N_("your loss matches ... : square the residual")), ...)
        known = diagnose(got, loss(x), ((_(text), loss(x, **mistake)) for mistake, text in MISTAKES),
                         same=lambda a, b: rel_error(a, b) <= 1e-9)
    """
    diagnosis = Diagnosis(same, differs)
    diagnosis.case(got, right, hypotheses)
    return diagnosis.message()


def first_difference(got, right, name: str, scale=None) -> str:
    """Where `got` differs most from `right`, with digits enough to see the difference:
    "D[2, 5] = 1.611042 where 1.611031 is right". `scale` as in `rel_error`."""
    got, right = np.asarray(got, dtype=float), np.asarray(right, dtype=float)
    floor = 1e-8 if scale is None else np.maximum(np.abs(np.broadcast_to(scale, right.shape)), 1e-8)
    with np.errstate(invalid="ignore"):
        ratio = np.nan_to_num(np.abs(got - right) / np.maximum(np.abs(got) + np.abs(right), floor), nan=np.inf)
    index = np.unravel_index(int(np.argmax(ratio)), right.shape) if right.ndim else ()
    shown_got, shown_right = distinct_digits(float(got[index]), float(right[index]))
    where = f"{name}[{', '.join(map(str, index))}]" if index else name
    return _("{where} = {got} where {right} is right").format(where=where, got=shown_got, right=shown_right)


def distinct_digits(a: float, b: float, least: int = 4) -> tuple[str, str]:
    """a and b printed with the same number of significant digits, at least `least` and as many
    as it takes for them to differ (two different floats differ at 17): never "1.611, the
    exact value is 1.611"."""
    digits = next((d for d in range(least, 18) if f"{a:.{d}g}" != f"{b:.{d}g}"), 17)
    return f"{a:.{digits}g}", f"{b:.{digits}g}"


def shown_pair(got: float, right: float, names=("got", "expected"), least: int = 4) -> dict:
    """{names[0]: got, names[1]: right} as texts for a message's format(), with `distinct_digits`."""
    return dict(zip(names, distinct_digits(float(got), float(right), least)))
