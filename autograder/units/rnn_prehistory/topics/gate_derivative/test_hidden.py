"""Hidden suite for gate_derivative.py [gate_derivative]: the forget-gate circuit c_l = f_l * c_{l-1} + g_l.

Inputs are random per run. The forward value is compared with the reference; the
backward pass and the Jacobian are compared with central finite differences of the
*reference* forward pass, computed here in the grader; cell_gradient_norms is compared
with an explicit product of H x H Jacobian matrices and their spectral norms
(np.linalg.norm(., 2)), computed here too. The two rows of seed 000's table
(all-remember, all-forget) are checked as properties, over T = 100 steps.
"""

import numpy as np

from autograder.authoring.checks import (
    CheckFailed,
    MutationCheck,
    every_case,
    expect_array,
    expect_close,
    expect_tuple,
    finite_differences_stacked,
    norm_rel_error,
    rel_error,
    variant_hypotheses,
)
from autograder.i18n import N_, _

# ||g - g_num|| / (||g|| + ||g_num||) per output array. The circuit is bilinear, so central
# differences are exact up to rounding: the reference stays below 2e-9 for the backward pass
# and 3e-10 for the Jacobian (500 seeds); every mutant of mutants.yaml beside this suite
# is above 1e-2.
GRAD_TOL = 1e-6
FD_STEP = 1e-6
# Values against the reference: c = f c_prev + g is within gamma_2 (|f c_prev| + |g|) of exact in
# any order, FMA or not, and can cancel: compared at that scale. A norm is a product of gates or
# a spectral norm of a diagonal matrix, positive, within ~gamma_T relative (~1e-14 at T = 100):
# the default 1e-7 (and 1e-9 for a diagnosis) is the documented looser tolerance.


def gates(rng, shape):
    # Gate values as a sigmoid produces them: strictly inside (0, 1).
    return 1.0 / (1.0 + np.exp(-rng.normal(size=shape) * 2))


def explicit_norms(fs):
    """norms[k-1] = max_n ||J_T ... J_{T-k+1}||_2 with J_t = diag(f_t[n]) as full matrices."""
    T, N, H = fs.shape
    norms = np.zeros(T)
    for n in range(N):
        product = np.eye(H)
        for k in range(1, T + 1):
            product = product @ np.diag(fs[T - k, n])      # dc_T/dc_{T-k} = (dc_T/dc_{T-k+1}) J_{T-k+1}
            norms[k - 1] = max(norms[k - 1], np.linalg.norm(product, 2))
    return norms


def test_forget_gate_forward_matches_reference(gate_derivative, reference, rng):
    for N, H in [(1, 1), (3, 5), (4, 2)]:
        c_prev, f, g = rng.normal(size=(N, H)), gates(rng, (N, H)), rng.normal(size=(N, H))
        out = expect_tuple(gate_derivative.forget_gate_forward(c_prev, f, g), 2, "forget_gate_forward")
        expected, _cache = reference.gate_derivative.forget_gate_forward(c_prev, f, g)
        expect_close(out[0], expected, _("forget_gate_forward: c for {sizes}").format(sizes=f"N={N}, H={H}"),
                     scale=np.abs(f * c_prev) + np.abs(g),
                     hint=_("c = f * c_prev + g, element-wise (no matrix product)"))


GATE_IGNORED = N_("your dc_prev is dc itself: the cell path is no identity highway, c = f * c_prev + g scales it by "
                  "the gate, dc_prev = dc * f")
DF_NEW_CELL = N_("your df is dc * c, the new cell state: c = f * c_prev + g, so df = dc * c_prev (cache c_prev)")
DG_GATED = N_("your dg is dc * f: g is added ungated, so dg = dc")


def test_forget_gate_backward_matches_finite_differences(gate_derivative, reference, rng):
    for N, H in [(3, 5), (2, 1), (1, 4)]:      # a batch of one keeps its axis: (1, H), never (H,)
        c_prev, f, g = rng.normal(size=(N, H)), gates(rng, (N, H)), rng.normal(size=(N, H))
        dc = rng.normal(size=(N, H))
        _c, cache = expect_tuple(gate_derivative.forget_gate_forward(c_prev, f, g), 2, "forget_gate_forward")
        grads = expect_tuple(gate_derivative.forget_gate_backward(dc, cache), 3, "forget_gate_backward")

        def losses(*probes, dc=dc):       # the circuit is element-wise: the reference takes a stack of probes as it is
            return np.sum(dc * reference.gate_derivative.forget_gate_forward(*probes)[0], axis=(1, 2))

        numeric = finite_differences_stacked(losses, [c_prev, f, g])
        hints = {"dc_prev": _("dc_prev = dc * f: the gate is the whole local Jacobian"),
                 "df": _("df = dc * c_prev"),
                 "dg": _("dg = dc: the addition passes the gradient on unchanged")}
        # What each known mistake gives, computed here: named only when the student's array is it.
        mistakes = {"dc_prev": (dc, _(GATE_IGNORED)), "df": (dc * (f * c_prev + g), _(DF_NEW_CELL)),
                    "dg": (dc * f, _(DG_GATED))}
        for got, num, name in zip(grads, numeric, ["dc_prev", "df", "dg"]):
            expect_array(got, num.shape, f"forget_gate_backward (N={N}, H={H}): {name}")
            err = norm_rel_error(got, num) if np.all(np.isfinite(got)) else np.inf
            if not err < GRAD_TOL:
                wrong, diagnosis = mistakes[name]
                if np.all(np.isfinite(got)) and norm_rel_error(got, wrong) < GRAD_TOL:
                    raise CheckFailed(_("forget_gate_backward ({sizes}): {name} disagrees with finite differences "
                                        "(relative error {error}): {diagnosis}").format(
                        sizes=f"N={N}, H={H}", name=name, error=f"{err:.1e}", diagnosis=diagnosis), "diagnosed")
                raise CheckFailed(_("forget_gate_backward ({sizes}): {name} disagrees with finite differences "
                                    "(relative error {error}); {hint}").format(
                                        sizes=f"N={N}, H={H}", name=name, error=f"{err:.1e}", hint=hints[name]))


def test_forget_gate_jacobian_is_diag_f(gate_derivative, reference, rng):
    N, H = 3, 4
    c_prev, f, g = rng.normal(size=(N, H)), gates(rng, (N, H)), rng.normal(size=(N, H))
    J = expect_array(gate_derivative.forget_gate_jacobian(f), (N, H, H), "forget_gate_jacobian(f)")
    for n in range(N):
        # Column j of dc[n]/dc_prev[n] by central differences of the reference forward pass.
        numeric = np.zeros((H, H))
        for j in range(H):
            e = np.zeros((N, H))
            e[n, j] = FD_STEP
            plus, _cache = reference.gate_derivative.forget_gate_forward(c_prev + e, f, g)
            minus, _cache = reference.gate_derivative.forget_gate_forward(c_prev - e, f, g)
            numeric[:, j] = (plus[n] - minus[n]) / (2 * FD_STEP)
        off = J[n][~np.eye(H, dtype=bool)]
        if np.any(off != 0):
            raise CheckFailed(_("forget_gate_jacobian: J[{n}] has non-zero off-diagonal entries (largest "
                                "{largest}); c = f * c_prev is element-wise, so unit i of c depends on unit i of "
                                "c_prev only: J[n] = diag(f[n])").format(n=n, largest=f"{np.max(np.abs(off)):.2e}"))
        err = norm_rel_error(J[n], numeric)
        if not err < GRAD_TOL:
            raise CheckFailed(_("forget_gate_jacobian: J[{n}] is not dc/dc_prev (relative error {error} against "
                                "finite differences); its diagonal is f[n] itself, not f * (1 - f) or c_prev").format(
                                    n=n, error=f"{err:.1e}"))


# A diagnosis tests its hypothesis first: the suspected mistake is computed here on the same
# gates and named only when it gives the student's norms (and the right norms differ).
def norms_variant(fs, first_k=False, frobenius=False, batch_mean=False, from_k0=False, mean_gate_power=False,
                  signed=False, signed_max=False):
    """cell_gradient_norms of its docstring, or with one known mistake."""
    T = fs.shape[0]
    if mean_gate_power:
        products = np.abs(fs).mean(axis=0)[None] ** np.arange(1, T + 1)[:, None, None]
    else:
        products = np.cumprod(fs if first_k else fs[::-1], axis=0)
    if frobenius:
        norms = np.sqrt((products ** 2).sum(axis=2)).max(axis=1)
    elif batch_mean:
        norms = np.abs(products).max(axis=2).mean(axis=1)
    elif signed:
        norms = products.max(axis=(1, 2))
    elif signed_max:
        norms = np.abs(products.max(axis=(1, 2)))
    else:
        norms = np.abs(products).max(axis=(1, 2))
    return np.concatenate([[1.0], norms[:-1]]) if from_k0 else norms


NORMS_MISTAKES = (
    (dict(first_k=True), N_("your norms match the product of the FIRST k gates (f_1 to f_k): dc_T/dc_{T-k} "
                            "multiplies the LAST k, f_T back to f_{T-k+1}")),
    (dict(frobenius=True), N_("your norms match the Frobenius norm of each chain: the spectral norm of a diagonal "
                              "matrix is its largest |entry|")),
    (dict(batch_mean=True), N_("your norms match the mean over the batch: norms[k-1] is the largest over the batch "
                               "(max_n)")),
    (dict(from_k0=True), N_("your norms match norms[0] = 1 (k = 0, no gate): norms[k-1] is k gates back, k = 1..T")),
    (dict(mean_gate_power=True), N_("your norms match the mean gate to the power k: multiply the actual gates, "
                                    "which differ from step to step")),
    (dict(signed=True), N_("your norms match the largest signed product: a norm takes |.|, and gate values of any "
                           "sign are allowed, so take the largest |product|")),
    (dict(signed_max=True), N_("your norms match |largest signed product|: the norm is the largest |product|, "
                               "e.g. |-0.9| beats 0.5")),
)


def test_cell_gradient_norms_matches_explicit_jacobian_product(gate_derivative, rng):
    # The last two cases: gates of any sign and size (the docstring allows any real values), so
    # a norm without |.| shows; in the fixed one every product two steps back is negative, so a
    # |maximum of signed products| shows too: -1.6 and -0.77, norm 1.6, not 0.77.
    signed_fixed = np.array([[[0.5, -0.9]], [[-2.0, 1.1]], [[0.8, -0.7]]])
    cases = []
    for T, N, H, signed in [(6, 3, 4, False), (1, 2, 3, False), (9, 1, 2, False), (3, 1, 2, True), (5, 3, 3, True)]:
        if signed:
            fs = signed_fixed.copy() if T == 3 else rng.normal(size=(T, N, H)) * 1.5
        else:
            fs = gates(rng, (T, N, H))
        if T == 9:
            fs[:4] = 0.999          # early gates ~ 1, late gates random: order matters
        cases.append((fs, signed))

    def run_case(case, record):
        fs, signed = case
        T, N, H = fs.shape
        what = _("cell_gradient_norms for {sizes}").format(sizes=f"T={T}, N={N}, H={H}") + \
            (_(" (gates of any sign)") if signed else "")
        norms = expect_array(gate_derivative.cell_gradient_norms(fs), (T,), what)
        record(norms, norms_variant(fs), variant_hypotheses(norms_variant, NORMS_MISTAKES, fs))
        expect_close(norms, explicit_norms(fs), what)

    # every case runs: a mistake is named only when it gives the student's norms on all of them
    every_case(cases, run_case, same=lambda a, b: rel_error(a, b) <= 1e-9)


def test_all_remember_keeps_gradient_over_100_steps(gate_derivative, rng):
    T, N, H = 100, 4, 8
    fs = 1.0 - rng.uniform(0, 1e-5, size=(T, N, H))    # forget gates ~ 1: products >= (1 - 1e-5)^100 > 0.999
    norms = expect_array(gate_derivative.cell_gradient_norms(fs), (T,), "cell_gradient_norms")
    # "never grow": each step multiplies by a gate < 1; a spectral norm (an SVD) may round a few
    # ulps either way, so a rise within 4 ulps of the norm is rounding, not growth.
    if not (np.all(norms <= 1.0) and np.all(norms >= 0.999) and np.all(np.diff(norms) <= 4 * 2.0**-53 * norms[:-1])):
        raise CheckFailed(_("with every forget gate ~ 1 (f >= 1 - 1e-5) the gradient must survive 100 steps: "
                            "norms should stay in [0.999, 1] and never grow, got min {low}, max {high}").format(
                                low=f"{np.min(norms):.3g}", high=f"{np.max(norms):.3g}"))
    expect_close(norms, explicit_norms(fs), _("cell_gradient_norms with f ~ 1 over T = 100"))
    ones = gate_derivative.cell_gradient_norms(np.ones((T, 2, 3)))
    expect_close(ones, np.ones(T), _("cell_gradient_norms with every gate exactly 1"),
                 hint=_("a product of identity matrices is the identity, whose spectral norm is 1"))


def test_all_forget_vanishes_at_once(gate_derivative, rng):
    T, N, H = 100, 4, 8
    fs = rng.uniform(0, 1e-3, size=(T, N, H))           # forget gates ~ 0: products of two < 1e-6
    norms = expect_array(gate_derivative.cell_gradient_norms(fs), (T,), "cell_gradient_norms")
    if not (np.all(np.isfinite(norms)) and norms[0] <= 1e-3 and np.all(norms[1:] <= 1e-6)):
        raise CheckFailed(_("with every forget gate ~ 0 (f <= 1e-3) the gradient must vanish at once: norms[0] "
                            "(one step back) is the largest gate, <= 1e-3, got {one}; two steps back "
                            "<= 1e-6, got {two}").format(one=f"{norms[0]:.3g}", two=f"{norms[1] if T > 1 else 0:.3g}"))
    expect_close(norms[:20], explicit_norms(fs[-20:])[:20], _("cell_gradient_norms with f ~ 0 (first 20 entries)"))
    if np.any(norms < 0):
        raise CheckFailed(_("cell_gradient_norms returned a negative norm"))


def test_gate_functions_do_not_mutate_inputs(gate_derivative, rng):
    # Each function on its own: one that raises is charged by its own tests, not here.
    c_prev, f, g = rng.normal(size=(2, 3)), gates(rng, (2, 3)), rng.normal(size=(2, 3))
    check = MutationCheck(gate_derivative)
    cache = check.part(check.call("forget_gate_forward", c_prev, f, g), 2, 1)
    if cache is not None:
        check.call("forget_gate_backward", rng.normal(size=(2, 3)), cache)
    check.call("forget_gate_jacobian", f)
    check.call("cell_gradient_norms", gates(rng, (5, 2, 3)))
    check.finish()
