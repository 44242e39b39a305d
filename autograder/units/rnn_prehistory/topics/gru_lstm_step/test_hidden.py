"""Hidden suite for gru_lstm.py [gru_lstm_step]: GRU and LSTM steps, forward and backward, and the LSTM over a sequence.

Inputs are random per run. Forward values are compared with the reference; every
gradient is compared with central finite differences of the reference's forward pass
(its equations over a stack of probes, `stacked.py`), computed here in the grader, so a
student's forward and backward cannot agree on a shared mistake.

When a forward value is wrong, the grader tries the conventions of other sources on the
same inputs (computed here, below) and, if the student's numbers match one of them, says
which: a GRU written as in PyTorch or d2l (update gate on the old state, reset gate after
the recurrent matmul, blocks r, z, n), or an LSTM with PyTorch's gate order i, f, g, o.
test_oracle.py beside this suite checks those convention functions against
torch.nn.GRUCell and torch.nn.LSTMCell.
"""

import itertools

import numpy as np

from autograder.authoring.checks import (
    CheckFailed,
    MutationCheck,
    every_case,
    expect_array,
    expect_close,
    expect_gradients,
    expect_tuple,
    finite_differences_stacked,
    rel_error,
    variant_hypotheses,
)
from autograder.i18n import N_, _
from autograder.units.rnn_prehistory import stacked

# ||g - g_num|| / (||g|| + ||g_num||) per output array. Against these finite differences the
# reference stays below 2.5e-8 on the shapes below (1000 seeds; the worst is dh0 with a loss
# on h_T only); the element-wise CS231n rel_error reaches 1e-3 on near-zero entries, so it is
# not the criterion. Every mutant of mutants.yaml beside this suite is above 1e-2.
GRAD_TOL = 1e-6
FD_STEP = 1e-6
FORWARD_TOL = 1e-7      # max element-wise CS231n rel_error of forward values, floored at scale 1
# Central differences at FD_STEP: truncation FD_STEP^2 times a third derivative plus roundoff
# ~eps F / FD_STEP (F ~ 10 the magnitude of the loss's terms): ~1e-9, far below GRAD_TOL.
# Forward values against the reference: a step is off by at most ~50 roundings of terms of
# magnitude ~10 in any summation order (~1e-13; test_oracle.py's docstring), a sequence by ~1e-11,
# absolutely where a state or cell is near 0 (the bound is on the terms, not on the entry): they
# are compared relative to max(|a| + |b|, 1) (scale 1). FORWARD_TOL is the documented looser
# tolerance, far above those bounds; the mutants are off by 1e-2 and more.


# --------------------------------------------------------------------------- helpers
def sigmoid(x):
    # 1/(1+exp(-x)) written with tanh: stable for any x, and independent of the solution's helper.
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def blocks(M, H, k):
    return M[..., k * H:(k + 1) * H]


# ------------------------------------------------------------ GRU conventions, grader side
SEED_GRU = N_("next_h = u * c~ + (1 - u) * prev_h, c~ = tanh(x Wx_c + (r * prev_h) Wh_c + b_c), blocks u, r, c "
              "(this course's convention; see the docstring)")


def gru_variant(x, prev_h, Wx, Wh, b, update="new", reset="before", order="urc"):
    """One GRU step under a named convention (update="new", reset="before", order="urc" is the exercise's).

    update: "new" - u weights the candidate (seeds); "old" - the gate weights prev_h (Cho et al., d2l, PyTorch).
    reset: "before" - (r * prev_h) Wh_c (seeds, Cho et al., d2l);
           "after" - r * (prev_h Wh_c), bias outside (PyTorch's nn.GRU with b_hn = 0);
           "after_bias" - r * (prev_h Wh_c + b_c) (PyTorch's nn.GRU with b_in = 0).
    order: "urc" (exercise) or "ruc" (PyTorch's r, z, n).
    """
    H = prev_h.shape[1]
    iu, ir, ic = (0, 1, 2) if order == "urc" else (1, 0, 2)
    u = sigmoid(x @ blocks(Wx, H, iu) + prev_h @ blocks(Wh, H, iu) + blocks(b, H, iu))
    r = sigmoid(x @ blocks(Wx, H, ir) + prev_h @ blocks(Wh, H, ir) + blocks(b, H, ir))
    Wx_c, Wh_c, b_c = blocks(Wx, H, ic), blocks(Wh, H, ic), blocks(b, H, ic)
    if reset == "before":
        c = np.tanh(x @ Wx_c + (r * prev_h) @ Wh_c + b_c)
    elif reset == "after":
        c = np.tanh(x @ Wx_c + b_c + r * (prev_h @ Wh_c))
    else:
        c = np.tanh(x @ Wx_c + r * (prev_h @ Wh_c + b_c))
    return u * c + (1 - u) * prev_h if update == "new" else (1 - u) * c + u * prev_h


def describe_gru(update, reset, order):
    parts = []
    if update == "old":
        parts.append(_("your update gate weights the OLD state (next_h = (1 - u) * c~ + u * prev_h)"))
    if reset != "before":
        formula = f"r * (prev_h Wh_c{' + b_c' if reset == 'after_bias' else ''})"
        parts.append(_("you apply r AFTER the recurrent matmul ({formula})").format(formula=formula))
    if order == "ruc":
        parts.append(_("you read the column blocks in the order r, u, c (PyTorch's r, z, n)"))
    if update == "old" and reset != "before":
        name = _("PyTorch's nn.GRU convention")
    elif update == "old":
        name = _("the convention of d2l (Dive into Deep Learning) and Cho et al. 2014")
    elif reset != "before":
        name = _("PyTorch's placement of the reset gate")
    else:
        name = _("PyTorch's block order")
    text = _("Your GRU matches {name}: {differences}. This exercise uses {convention}.").format(
        name=name, differences="; ".join(parts), convention=_(SEED_GRU))
    if update == "old":
        text += _(" Both are the same family of cells (z = 1 - u), but for the same weights the numbers differ, "
                  "and the API fixes this course's convention.")
    return text


def recognise_gru(next_h, args):
    """A sentence naming the other convention the student's next_h follows, or ''."""
    for update, reset, order in itertools.product(("new", "old"), ("before", "after", "after_bias"),
                                                  ("urc", "ruc")):
        if (update, reset, order) == ("new", "before", "urc"):
            continue
        if rel_error(next_h, gru_variant(*args, update=update, reset=reset, order=order), 1.0) <= FORWARD_TOL:
            return describe_gru(update, reset, order)
    return ""


# ----------------------------------------------------------- LSTM conventions, grader side
EXERCISE_ORDER = ("i", "f", "o", "g")
PYTORCH_ORDER = ("i", "f", "g", "o")


def lstm_variant(x, prev_h, prev_c, Wx, Wh, b, order=EXERCISE_ORDER):
    """One standard LSTM step whose column blocks are read in `order` (a permutation of i, f, o, g)."""
    H = prev_h.shape[1]
    a = x @ Wx + prev_h @ Wh + b
    gate = {name: blocks(a, H, k) for k, name in enumerate(order)}
    i, f, o, g = sigmoid(gate["i"]), sigmoid(gate["f"]), sigmoid(gate["o"]), np.tanh(gate["g"])
    next_c = f * prev_c + i * g
    return o * np.tanh(next_c), next_c


def describe_lstm(order):
    which = _("PyTorch's gate order i, f, g, o (nn.LSTM)") if order == PYTORCH_ORDER \
        else _("the gate order {order}").format(order=", ".join(order))
    return _("Your LSTM reads the column blocks in {which}; this exercise uses i, f, o, g (as in "
             "CS231n): i = a[:, :H], f = a[:, H:2H], o = a[:, 2H:3H], g = a[:, 3H:].").format(which=which)


def recognise_lstm(next_h, next_c, args):
    for order in itertools.permutations(EXERCISE_ORDER):
        if order == EXERCISE_ORDER:
            continue
        h, c = lstm_variant(*args, order=order)
        if rel_error(next_h, h, 1.0) <= FORWARD_TOL and rel_error(next_c, c, 1.0) <= FORWARD_TOL:
            return describe_lstm(order)
    return ""


def recognise_lstm_sequence(h, args):
    x, h0, Wx, Wh, b = args
    for order in itertools.permutations(EXERCISE_ORDER):
        if order == EXERCISE_ORDER:
            continue
        prev_h, prev_c, hs = h0, np.zeros_like(h0), []
        for t in range(x.shape[1]):
            prev_h, prev_c = lstm_variant(x[:, t], prev_h, prev_c, Wx, Wh, b, order=order)
            hs.append(prev_h)
        if rel_error(h, np.stack(hs, axis=1), 1.0) <= FORWARD_TOL:
            return describe_lstm(order)
    return ""


def safely(recognise) -> str:
    """A recogniser's sentence, or '' when the student's values cannot even be compared (shapes, types)."""
    try:
        return recognise()
    except Exception:  # noqa: BLE001 - a wrong shape elsewhere is reported by its own check
        return ""


def expect_forward(actual, expected, what, recognise):
    """expect_close, but a wrong value is checked against the other conventions first."""
    actual = expect_array(actual, expected.shape, what)
    if np.all(np.isfinite(actual)) and rel_error(actual, expected, 1.0) <= FORWARD_TOL:
        return
    known = safely(recognise) if np.all(np.isfinite(actual)) else ""
    if known:
        raise CheckFailed(_("{what} is wrong. {known}").format(what=what, known=known), "diagnosed")
    expect_close(actual, expected, what, tol=FORWARD_TOL, scale=1.0)


# ------------------------------------------------------- wrong backward passes, grader side
# A diagnosis tests its hypothesis first: the suspected mistake is computed here on the same
# inputs and named only when it gives every one of the student's gradients (and the right
# backward pass does not).
def gru_backward_variant(dnext_h, x, prev_h, Wx, Wh, b, candidate_misses_u=False, candidate_weight_on_prev_h=False,
                         misses_reset_path=False, du_misses_old_state=False, sigmoid_as_tanh=False):
    """The gradients (dx, dprev_h, dWx, dWh, db) of gru_step's docstring, or with one known mistake."""
    H = prev_h.shape[1]
    u = sigmoid(x @ blocks(Wx, H, 0) + prev_h @ blocks(Wh, H, 0) + blocks(b, H, 0))
    r = sigmoid(x @ blocks(Wx, H, 1) + prev_h @ blocks(Wh, H, 1) + blocks(b, H, 1))
    c = np.tanh(x @ blocks(Wx, H, 2) + (r * prev_h) @ blocks(Wh, H, 2) + blocks(b, H, 2))
    du = dnext_h * (c if du_misses_old_state else c - prev_h)
    da_c = dnext_h * (1 if candidate_misses_u else u) * (1 - c ** 2)
    drh = da_c @ blocks(Wh, H, 2).T
    da_u = du * (1 - u ** 2 if sigmoid_as_tanh else u * (1 - u))
    da_r = drh * prev_h * r * (1 - r)
    da = np.concatenate([da_u, da_r, da_c], axis=1)
    dWh = np.concatenate([prev_h.T @ da[:, :2 * H], (prev_h if candidate_weight_on_prev_h else r * prev_h).T @ da_c],
                         axis=1)
    dprev_h = dnext_h * (1 - u) + (0 if misses_reset_path else drh * r) + da[:, :2 * H] @ Wh[:, :2 * H].T
    return da @ Wx.T, dprev_h, x.T @ da, dWh, da.sum(axis=0)


def lstm_backward_variant(dnext_h, dnext_c, x, prev_h, prev_c, Wx, Wh, b, df="prev_c", output_path="full",
                          ungated_cell=False, order=EXERCISE_ORDER, do="tanh_c"):
    """The gradients (dx, dprev_h, dprev_c, dWx, dWh, db) of lstm_step's docstring, or with one
    known mistake: df = dc * next_c or dc alone ("next_c", "none"); the cell's gradient from
    next_h left out or without o ("none", "no_o"); dprev_c = dc; gate gradients stacked in `order`;
    do = dnext_h * next_c (do="next_c", the tanh left out)."""
    H = prev_h.shape[1]
    a = x @ Wx + prev_h @ Wh + b
    i, f, o, g = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H]), sigmoid(a[:, 2 * H:3 * H]), np.tanh(a[:, 3 * H:])
    next_c = f * prev_c + i * g
    tanh_c = np.tanh(next_c)
    through_h = {"full": dnext_h * o * (1 - tanh_c ** 2), "no_o": dnext_h * (1 - tanh_c ** 2), "none": 0}
    dc = dnext_c + through_h[output_path]
    parts = {"i": dc * g * i * (1 - i), "f": dc * {"prev_c": prev_c, "next_c": next_c, "none": 1}[df] * f * (1 - f),
             "o": dnext_h * (next_c if do == "next_c" else tanh_c) * o * (1 - o), "g": dc * i * (1 - g ** 2)}
    da = np.concatenate([parts[k] for k in order], axis=1)
    return da @ Wx.T, da @ Wh.T, dc if ungated_cell else dc * f, x.T @ da, prev_h.T @ da, da.sum(axis=0)


GRU_BACKWARD_MISTAKES = (
    (dict(candidate_misses_u=True), N_("your gradients match a candidate gradient without the factor u: next_h = "
                                       "u * c~ + (1 - u) * prev_h, so dc~ = dnext_h * u")),
    (dict(candidate_weight_on_prev_h=True), N_("your gradients match dWh_c = prev_h^T da_c: the candidate's matmul "
                                               "saw r * prev_h, so dWh_c = (r * prev_h)^T da_c")),
    (dict(misses_reset_path=True), N_("your gradients match a dprev_h without the path through r * prev_h: add "
                                      "d(r * prev_h) * r, one of the four uses of prev_h")),
    (dict(du_misses_old_state=True), N_("your gradients match du = dnext_h * c~: (1 - u) * prev_h depends on u too, "
                                        "so du = dnext_h * (c~ - prev_h)")),
    (dict(sigmoid_as_tanh=True), N_("your gradients match tanh's derivative 1 - u^2 for the sigmoid gate u: "
                                    "sigmoid' = u * (1 - u)")),
)
LSTM_BACKWARD_MISTAKES = (
    (dict(df="next_c"), N_("your gradients match df = dc * next_c: next_c = f * prev_c + i * g, so df = dc * prev_c")),
    (dict(df="none"), N_("your gradients match df = dc without the factor prev_c: next_c = f * prev_c + i * g, so "
                         "df = dc * prev_c")),
    (dict(output_path="none"), N_("your gradients match a cell gradient from dnext_c only: next_h = o * "
                                  "tanh(next_c) adds dnext_h * o * (1 - tanh(next_c)^2) to it")),
    (dict(output_path="no_o"), N_("your gradients match a cell gradient from next_h without the factor o: it is "
                                  "dnext_h * o * (1 - tanh(next_c)^2)")),
    (dict(ungated_cell=True), N_("your gradients match dprev_c = dc: the cell path multiplies the gradient by the "
                                 "forget gate, dprev_c = dc * f")),
    (dict(order=("i", "f", "g", "o")), N_("your gradients match the gate gradients stacked as i, f, g, o: stack them "
                                          "in the forward pass's order i, f, o, g")),
    (dict(do="next_c"), N_("your gradients match do = dnext_h * next_c: next_h = o * tanh(next_c), so "
                           "do = dnext_h * tanh(next_c)")),
)


def same_gradients(grads, wrong) -> bool:
    """Whether the student's gradients are `wrong`'s: each of its shape, within 1e-6 of its largest entry
    (a gradient's rounding is bounded relative to the terms it sums, not to each entry)."""
    return all(np.shape(g) == w.shape and rel_error(np.asarray(g, dtype=float), w, _largest(w)) <= 1e-6
               for g, w in zip(grads, wrong))


def _largest(values) -> float:
    return float(np.max(np.abs(values))) if np.size(values) else 0.0


def forward_off_as_well(failure: CheckFailed, known: str) -> CheckFailed:
    """`failure`, saying what the forward pass got wrong too (`known`); plain: `failure` alone."""
    if not known:
        return failure
    return CheckFailed(_("{failure}. Your forward pass is off as well. {known}").format(failure=failure, known=known),
                       plain=str(failure))


# --------------------------------------------------------------------------- inputs
def gru_inputs(rng, N=3, D=4, H=5):
    return (rng.normal(size=(N, D)), rng.normal(size=(N, H)), rng.normal(size=(D, 3 * H)) * 0.5,
            rng.normal(size=(H, 3 * H)) * 0.5, rng.normal(size=3 * H) * 0.5)


def lstm_inputs(rng, N=3, D=4, H=5):
    return (rng.normal(size=(N, D)), rng.normal(size=(N, H)), rng.normal(size=(N, H)),
            rng.normal(size=(D, 4 * H)) * 0.5, rng.normal(size=(H, 4 * H)) * 0.5, rng.normal(size=4 * H) * 0.5)


def lstm_seq_inputs(rng, N=2, T=4, D=3, H=4):
    return (rng.normal(size=(N, T, D)), rng.normal(size=(N, H)), rng.normal(size=(D, 4 * H)) * 0.5,
            rng.normal(size=(H, 4 * H)) * 0.5, rng.normal(size=4 * H) * 0.5)


# --------------------------------------------------------------------------- GRU
def test_gru_step_forward_matches_reference(gru_lstm, reference, rng):
    for N, D, H in [(3, 4, 5), (2, 6, 3), (1, 2, 1)]:
        args = gru_inputs(rng, N, D, H)
        out = expect_tuple(gru_lstm.gru_step_forward(*args), 2, "gru_step_forward")
        expected, _cache = reference.gru_lstm.gru_step_forward(*args)
        what = _("gru_step_forward: next_h for {sizes}").format(sizes=f"N={N}, D={D}, H={H}")
        expect_forward(out[0], expected, what,
                       lambda out=out, args=args: recognise_gru(out[0], args))


def test_gru_step_backward_matches_finite_differences(gru_lstm, rng):
    cases = []
    for N, D, H in [(2, 3, 4), (3, 2, 2), (1, 3, 4)]:      # a batch of one keeps its axis: (1, H), never (H,)
        args = gru_inputs(rng, N, D, H)
        cases.append((rng.normal(size=(N, H)), args, f"gru_step_backward (N={N}, D={D}, H={H})"))

    def run_case(case, record):
        dnext, args, what = case
        next_h, cache = expect_tuple(gru_lstm.gru_step_forward(*args), 2, "gru_step_forward")
        grads = expect_tuple(gru_lstm.gru_step_backward(dnext, cache), 5, "gru_step_backward")
        record(grads, gru_backward_variant(dnext, *args),
               variant_hypotheses(gru_backward_variant, GRU_BACKWARD_MISTAKES, dnext, *args))

        def losses(*probes):
            return np.sum(dnext * stacked.gru_step(*probes), axis=(1, 2))

        try:
            numeric = finite_differences_stacked(losses, list(args), FD_STEP)
            expect_gradients(grads, numeric, ["dx", "dprev_h", "dWx", "dWh", "db"], what)
        except CheckFailed as failure:
            raise forward_off_as_well(failure, safely(lambda: recognise_gru(next_h, args))) from None

    # every case runs: a mistake is named only when it gives the student's gradients on all of them
    every_case(cases, run_case, same_gradients)


def test_gru_update_gate_weights_the_candidate(gru_lstm, rng):
    # A GRU property that needs no reference: u ~ 0 copies the state and its gradient,
    # u ~ 1 replaces the state by the candidate (seeds' convention: u weights c~).
    N, D, H = 3, 4, 5
    x, prev_h, Wx, Wh, b = gru_inputs(rng, N, D, H)
    # Saturated gates make several conventions coincide, so any convention is named from a generic call.
    generic = gru_lstm.gru_step_forward(x, prev_h, Wx, Wh, b)
    known = safely(lambda: recognise_gru(generic[0], (x, prev_h, Wx, Wh, b)))
    known = f". {known}" if known else ""
    b_closed, b_open = b.copy(), b.copy()
    b_closed[:H], b_open[:H] = -40.0, 40.0      # |x Wx_u + h Wh_u| < 10, so u is within 1e-13 of 0 or 1

    next_h, cache = expect_tuple(gru_lstm.gru_step_forward(x, prev_h, Wx, Wh, b_closed), 2, "gru_step_forward")
    next_h = expect_array(next_h, (N, H), _("gru_step_forward with u ~ 0: next_h"))
    if rel_error(next_h, prev_h, 1.0) > FORWARD_TOL:
        raise CheckFailed(_("with the update gate closed (u ~ 0) the GRU must keep its state: next_h = prev_h")
                          + known)
    dnext = rng.normal(size=(N, H))
    grads = expect_tuple(gru_lstm.gru_step_backward(dnext, cache), 5, "gru_step_backward")
    dprev_h = expect_array(grads[1], (N, H), _("gru_step_backward with u ~ 0: dprev_h"))
    if rel_error(dprev_h, dnext, _largest(dnext)) > FORWARD_TOL:      # u ~ 1e-13 leaks ~1e-13 |dnext| |Wh|
        raise CheckFailed(_("with u ~ 0 the step is the identity, so dprev_h must equal dnext_h "
                            "(the (1 - u) shortcut carries the whole gradient)") + known)

    next_h, _cache = expect_tuple(gru_lstm.gru_step_forward(x, prev_h, Wx, Wh, b_open), 2, "gru_step_forward")
    next_h = expect_array(next_h, (N, H), _("gru_step_forward with u ~ 1: next_h"))
    C = slice(2 * H, 3 * H)
    r = sigmoid(x @ Wx[:, H:2 * H] + prev_h @ Wh[:, H:2 * H] + b_open[H:2 * H])
    candidate = np.tanh(x @ Wx[:, C] + (r * prev_h) @ Wh[:, C] + b_open[C])
    if rel_error(next_h, candidate, 1.0) > FORWARD_TOL:
        raise CheckFailed(_("with the update gate open (u ~ 1) next_h must be the candidate "
                            "c~ = tanh(x Wx_c + (r * prev_h) Wh_c + b_c)") + known)


# --------------------------------------------------------------------------- LSTM step
def test_lstm_step_forward_matches_reference(gru_lstm, reference, rng):
    for N, D, H in [(3, 4, 5), (2, 6, 3), (1, 2, 1)]:
        args = lstm_inputs(rng, N, D, H)
        out = expect_tuple(gru_lstm.lstm_step_forward(*args), 3, "lstm_step_forward")
        exp_h, exp_c, _cache = reference.gru_lstm.lstm_step_forward(*args)
        shape = f"N={N}, D={D}, H={H}"
        expect_forward(out[1], exp_c, _("lstm_step_forward: next_c for {sizes}").format(sizes=shape),
                       lambda out=out, args=args: recognise_lstm(out[0], out[1], args))
        expect_forward(out[0], exp_h, _("lstm_step_forward: next_h for {sizes}").format(sizes=shape),
                       lambda out=out, args=args: recognise_lstm(out[0], out[1], args))


def test_lstm_step_backward_matches_finite_differences(gru_lstm, rng):
    cases = []
    for N, D, H in [(2, 3, 2), (3, 2, 3), (1, 3, 2)]:      # a batch of one keeps its axis: (1, H), never (H,)
        args = lstm_inputs(rng, N, D, H)
        cases.append((rng.normal(size=(N, H)), rng.normal(size=(N, H)), args, f"lstm_step_backward (N={N}, D={D}, H={H})"))

    def run_case(case, record):
        dnext_h, dnext_c, args, what = case
        out = expect_tuple(gru_lstm.lstm_step_forward(*args), 3, "lstm_step_forward")
        grads = expect_tuple(gru_lstm.lstm_step_backward(dnext_h, dnext_c, out[2]), 6, "lstm_step_backward")
        record(grads, lstm_backward_variant(dnext_h, dnext_c, *args),
               variant_hypotheses(lstm_backward_variant, LSTM_BACKWARD_MISTAKES, dnext_h, dnext_c, *args))

        def losses(*probes):
            h, c = stacked.lstm_step(*probes)
            return np.sum(dnext_h * h, axis=(1, 2)) + np.sum(dnext_c * c, axis=(1, 2))

        try:
            numeric = finite_differences_stacked(losses, list(args), FD_STEP)
            expect_gradients(grads, numeric, ["dx", "dprev_h", "dprev_c", "dWx", "dWh", "db"], what)
        except CheckFailed as failure:
            raise forward_off_as_well(failure, safely(lambda: recognise_lstm(out[0], out[1], args))) from None

    # every case runs: a mistake is named only when it gives the student's gradients on all of them
    every_case(cases, run_case, same_gradients)


def test_lstm_forget_gate_controls_the_cell_path(gru_lstm, rng):
    # Seed 000's two extremes on the cell path, with no reference needed: forget gate open and
    # input gate closed copies the cell and its gradient; forget gate closed cuts the gradient.
    N, D, H = 3, 4, 5
    x, prev_h, prev_c, Wx, Wh, b = lstm_inputs(rng, N, D, H)
    b_keep = b.copy()
    b_keep[:H], b_keep[H:2 * H] = -40.0, 40.0          # i ~ 0, f ~ 1
    out = expect_tuple(gru_lstm.lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b_keep), 3, "lstm_step_forward")
    next_c = expect_array(out[1], (N, H), _("lstm_step_forward with f ~ 1, i ~ 0: next_c"))
    if rel_error(next_c, prev_c, 1.0) > FORWARD_TOL:
        known = safely(lambda: recognise_lstm(out[0], next_c, (x, prev_h, prev_c, Wx, Wh, b_keep)))
        raise CheckFailed(_("with the forget gate open (f ~ 1) and the input gate closed (i ~ 0) the cell must be "
                            "copied: next_c = prev_c") + (f". {known}" if known else ""))
    dnext_c = rng.normal(size=(N, H))
    grads = expect_tuple(gru_lstm.lstm_step_backward(np.zeros((N, H)), dnext_c, out[2]), 6, "lstm_step_backward")
    dprev_c = expect_array(grads[2], (N, H), "lstm_step_backward: dprev_c")
    if rel_error(dprev_c, dnext_c, _largest(dnext_c)) > FORWARD_TOL:
        raise CheckFailed(_("with f ~ 1 and a gradient on next_c only, dprev_c must equal dnext_c: the cell path "
                            "multiplies the gradient by f and by no weight matrix"))
    b_cut = b.copy()
    b_cut[H:2 * H] = -40.0                              # f ~ 0
    out = expect_tuple(gru_lstm.lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b_cut), 3, "lstm_step_forward")
    grads = expect_tuple(gru_lstm.lstm_step_backward(rng.normal(size=(N, H)), dnext_c, out[2]), 6,
                         "lstm_step_backward")
    dprev_c = expect_array(grads[2], (N, H), "lstm_step_backward: dprev_c")
    if not np.max(np.abs(dprev_c)) <= 1e-12:     # f < sigmoid(-30) ~ 1e-13 times |dc| ~ 3: not rounding, the gate
        raise CheckFailed(_("with the forget gate closed (f ~ 0) no gradient may reach prev_c "
                            "(largest |dprev_c| is {largest}): dprev_c = dc * f").format(
                                largest=f"{np.max(np.abs(dprev_c)):.1e}"))


# --------------------------------------------------------------------------- LSTM sequence
def test_lstm_forward_matches_reference(gru_lstm, reference, rng):
    for N, T, D, H in [(3, 6, 4, 5), (1, 1, 2, 3)]:
        args = lstm_seq_inputs(rng, N, T, D, H)
        out = expect_tuple(gru_lstm.lstm_forward(*args), 2, "lstm_forward")
        expected, _cache = reference.gru_lstm.lstm_forward(*args)
        what = _("lstm_forward: h for {sizes}").format(sizes=f"N={N}, T={T}, D={D}, H={H}")
        h = expect_array(out[0], expected.shape, what)
        if np.all(np.isfinite(h)) and rel_error(h, expected, 1.0) > FORWARD_TOL:
            known = safely(lambda h=h, args=args: recognise_lstm_sequence(h, args))
            if known:
                raise CheckFailed(_("{what} is wrong. {known}").format(what=what, known=known), "diagnosed")
        expect_close(h, expected, what, tol=FORWARD_TOL, scale=1.0,
                     hint=_("start from h0 and c0 = 0 (not c0 = h0), pass both h and c from step to step, "
                            "and store h[:, t] after step t (h0 excluded)"))


def last_cell(x, h0, Wx, Wh, b):
    """c_T of the LSTM over the sequence (c0 = 0), probes stacked on a leading axis as stacked.lstm_forward."""
    h, c = h0, np.zeros_like(h0)
    for t in range(x.shape[-2]):
        h, c = stacked.lstm_step(x[..., t, :], h, c, Wx, Wh, b)
    return c


LAST_CELL = N_("your gradients match a cell gradient that starts at dh[:, T-1] at the last step: nothing uses "
               "c_T, so the cell gradient arriving at t = T is zero (dprev_c = np.zeros((N, H)) before the loop)")


def test_lstm_backward_matches_finite_differences(gru_lstm, rng):
    # and the edges: a batch of one, a sequence of one step
    cases = []
    for N, T, D, H, last_only in [(2, 3, 2, 3, False), (2, 3, 2, 2, True), (1, 3, 2, 3, False), (2, 1, 3, 2, False)]:
        args = lstm_seq_inputs(rng, N, T, D, H)
        dh = rng.normal(size=(N, T, H))
        if last_only:
            dh[:, :-1] = 0.0        # loss on h_T only: the gradient must travel back through both states
        cases.append((args, dh, f"lstm_backward (N={N}, T={T}, D={D}, H={H})"))

    def run_case(case, record):
        args, dh, what = case
        h, cache = expect_tuple(gru_lstm.lstm_forward(*args), 2, "lstm_forward")
        grads = expect_tuple(gru_lstm.lstm_backward(dh, cache), 5, "lstm_backward")

        def losses(*probes):
            return np.sum(dh * stacked.lstm_forward(*probes), axis=(1, 2, 3))

        # A cell gradient that starts at dh[:, T-1] instead of 0 is the exact gradient of a loss
        # that also reads the last cell, sum(dh[:, T-1] * c_T): recomputed on every case.
        def reads_the_last_cell(*probes):
            return losses(*probes) + np.sum(dh[:, -1] * last_cell(*probes), axis=(1, 2))

        numeric = finite_differences_stacked(losses, list(args), FD_STEP)
        record(grads, numeric, [(_(LAST_CELL), finite_differences_stacked(reads_the_last_cell, list(args), FD_STEP))])
        try:
            expect_gradients(grads, numeric, ["dx", "dh0", "dWx", "dWh", "db"], what,
                             _("walk back from t = T-1 carrying dprev_h AND dprev_c; step t gets dh[:, t] + dprev_h; "
                               "the weight gradients add up over all steps"))
        except CheckFailed as failure:
            known = safely(lambda: recognise_lstm_sequence(h, args))
            if known:
                raise CheckFailed(_("{failure}. Your forward pass is off as well. {known}").format(
                    failure=failure, known=known), plain=str(failure)) from None
            raise

    # every case runs: the last cell's gradient is named only when it gives the student's gradients on all of them
    every_case(cases, run_case, same_gradients)


def test_gru_lstm_do_not_mutate_inputs(gru_lstm, rng):
    # Each function on its own: one that raises is charged by its own tests, not here.
    check = MutationCheck(gru_lstm)
    cache = check.part(check.call("gru_step_forward", *gru_inputs(rng, 2, 3, 4)), 2, 1)
    if cache is not None:
        check.call("gru_step_backward", rng.normal(size=(2, 4)), cache)
    cache = check.part(check.call("lstm_step_forward", *lstm_inputs(rng, 2, 3, 4)), 3, 2)
    if cache is not None:
        check.call("lstm_step_backward", rng.normal(size=(2, 4)), rng.normal(size=(2, 4)), cache)
    cache = check.part(check.call("lstm_forward", *lstm_seq_inputs(rng, 2, 3, 3, 4)), 2, 1)
    if cache is not None:
        check.call("lstm_backward", rng.normal(size=(2, 3, 4)), cache)
    check.finish()
