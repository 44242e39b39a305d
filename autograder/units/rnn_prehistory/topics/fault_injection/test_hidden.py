"""Hidden suite of the fault-injection lab.

Two kinds of tests:

- the primitives on inputs with a known answer (outside oracles: math.fsum of logs,
  eigenvalues of matrices built with known spectra, finite differences of the rollout,
  matrix powers, the global norm computed here);
- each of the seven signals (tables and experiments in `lab/fault_lab.py`), graded on
  measuring faithfully, one charge per mistake, in one rubric entry ("measured") that
  combines three ways of looking at it:
  (b) the grader's own run of the experiment through the student's primitives, each first
      probed on fixed inputs, then every call compared with the correct primitive on the
      same inputs (`deviations`). It carries no points of its own: a wrong primitive is
      charged by that primitive's tests, and bptt's functions in bptt;
  (a) the student's `run_fault_injection(seed)`: the signal agrees with its own figures;
      when every primitive of its experiment agreed with the correct one in (b), it must
      be true with plausible figures. When one did not, the lab is right to report what
      it measured, true or false. When the lab raises because bptt's functions raise, it
      is graded with correct stand-ins for them;
  (c) the same run with one primitive replaced by a known-broken one, in a fresh worker
      whose copy of the module defines the broken primitive itself (nothing tells the run
      from the student's own): the signal must turn false (and its figures must say so).
      A lab that returns constants, recomputes a primitive inline, or looks for a swapped
      attribute earns nothing.
  In (a) and (c), where every primitive of the experiment is right, the figures must be
  those of the docstrings' procedure run by the grader on the same seed (the reference's
  run_fault_injection, with the same broken primitive in (c)), not only plausible.

Everything the run saw goes into one `LabRecord` (lab/record.py), which the evidence
file and the figure read.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograder.authoring.checks import (
    CheckFailed,
    every_case,
    expect_array,
    expect_not_mutated,
    expect_tuple,
    shown_pair,
    variant_hypotheses,
)
from autograder.i18n import N_, _
from autograder.units.rnn_prehistory.lab.broken_primitives import BrokenPrimitive, ScaledPrimitive
from autograder.units.rnn_prehistory.lab.fault_lab import (
    BPTT_STAND_INS,
    BROKEN,
    EXPECTED,
    EXPERIMENT_PRIMITIVES,
    PRIMITIVE_TOPIC,
    RERUN_FUNCTIONS,
    RERUNS,
    SIGNAL_FIGURES,
    T_STEPS,
    TOPIC,
    CheckedPrimitives,
    InPlace,
    Primitives,
    Procedure,
    _fmt,
    broken_run_of,
    broken_runs,
    check_returned,
    check_same_procedure,
    pool_seed,
)
from autograder.units.rnn_prehistory.lab.procedure_table import TabledProcedure
from autograder.units.rnn_prehistory.lab.record import (
    EXTRAS_KEY,
    LabRecord,
    LossCurves,
    NormCurves,
    SignalRecord,
    plain,
    whole_sentences,
)


# ================================================================== fixtures and records
def _lab_record(report_extras) -> LabRecord:
    return report_extras.setdefault(EXTRAS_KEY, LabRecord())


def _record(signals, report_extras, key, way, ok, **fields):
    # True only when this way passed and, where the lab excused a broken primitive, the lab
    # still measured the signal: the report shows what was measured, not what was forgiven.
    signals[key] = bool(signals.get(key, True) and ok and fields.get("value", True) is not False)
    entry = _lab_record(report_extras).signals.setdefault(key, SignalRecord(EXPECTED[key]))
    entry.checks[way] = bool(ok)
    entry.details.update({k: plain(v) for k, v in fields.items()})


class _Graded:
    """Records one way of grading a signal, whether the test passes or raises."""

    def __init__(self, signals, report_extras, key, way):
        self.args, self.fields = (signals, report_extras, key, way), {}

    def __enter__(self):
        return self.fields

    def __exit__(self, exc_type, exc, tb):
        if exc is not None:
            self.fields[f"{self.args[3]}_message"] = whole_sentences(getattr(exc, "message", exc))
        _record(*self.args, exc is None, **self.fields)
        return False


@pytest.fixture(scope="module", autouse=True)
def _lab_starts_first(request):
    """Makes `lab` before this module's first test, so that its runs with a broken primitive
    overlap the primitives' tests; only when a test that will run needs it (a grading of
    selected tests, e.g. a primitive's, does not pay for the lab's eight runs)."""
    if any("lab" in item.fixturenames for item in request.session.items if item.module is request.module):
        request.getfixturevalue("lab")


@pytest.fixture(scope="module")
def lab(fault_injection, run_seed, report_extras):
    """The student's run_fault_injection(seed), once per grading run, and its runs with a
    broken primitive. Those start once the student's run has returned, in the background on a
    second worker: a lab whose own run raises is never judged on them (the measured tests
    stop at its error, or rerun it with stand-ins for bptt), and each costs a fresh worker and
    a whole lab (a stub grading spent 15 % of its CPU on three of them)."""
    seed = pool_seed(run_seed, "run_fault_injection")
    record = _lab_record(report_extras)
    record.seed = seed
    run = fault_injection.run_fault_injection
    state = {"seed": seed, "patched": {}, "function": run, "procedure": {}, "module": fault_injection,
             "background": {}}
    try:
        state["run"] = fault_injection.run_fault_injection(seed)
        record.returned = plain(state["run"]) if isinstance(state["run"], dict) else repr(state["run"])[:200]
    except Exception as exc:  # noqa: BLE001 - re-raised in every test that needs it
        state["error"] = exc
        record.returned_error = whole_sentences(getattr(exc, "message", exc))
    else:
        state["background"] = {
            name: _rewritten(run, replacements, seed).submit(seed)
            for name, (replacements, _keys) in broken_runs().items()}
    return state


def _rewritten(run, replacements: dict, seed: int):
    """The student's lab in a fresh worker whose copy of the module runs `replacements`'
    broken (or scaled) primitives on the lab's seed."""
    return run.replaced({target: broken.body_for(seed) for target, broken in replacements.items()})


def _lab_run(lab, reruns):
    """The student's lab result; when it raised and bptt's functions fail in the grader's own
    runs, the result of the same lab with correct stand-ins for those (the bptt topic holds the cause)."""
    if "error" in lab and "stand_in" not in lab:
        failing = {p: d for name in ("vanishing", "bptt") for p, d in reruns(name)["deviations"].items()
                   if PRIMITIVE_TOPIC[p] != TOPIC}
        lab["stand_in"] = failing
        if failing:
            try:
                lab["run"] = lab["function"].patched(BPTT_STAND_INS)(lab["seed"])
                del lab["error"]
            except Exception as exc:  # noqa: BLE001 - the lab's own failure, raised below
                lab["error"] = exc
    if "error" in lab:
        raise lab["error"]
    return lab["run"]


def _patched_run(lab, name):
    """The student's lab in the broken run `name` (fault_lab.BROKEN_RUNS)."""
    replacements = broken_runs()[name][0]
    if name not in lab["patched"] and lab.get("stand_in"):
        # A stand-in gives way to a broken body; one whose result the run scales is lent scaled
        # (the student's function the copy would scale is the one that raises).
        stand_ins = {k: replacements[k].function_for(lab["seed"], v) if isinstance(replacements.get(k), ScaledPrimitive)
                     else v for k, v in BPTT_STAND_INS.items() if not isinstance(replacements.get(k), BrokenPrimitive)}
        try:
            lab["patched"][name] = lab["function"].patched(stand_ins).replaced(
                {target: broken.body_for(lab["seed"]) for target, broken in replacements.items()
                 if target not in stand_ins})(lab["seed"])
        except Exception as exc:  # noqa: BLE001
            lab["patched"][name] = exc
    if name not in lab["patched"]:
        try:
            pending = lab["background"].get(name)                       # started by `lab` when its run returned
            lab["patched"][name] = (pending.result() if pending is not None
                                    else _rewritten(lab["function"], replacements, lab["seed"])(lab["seed"]))
        except Exception as exc:  # noqa: BLE001
            lab["patched"][name] = exc
    result = lab["patched"][name]
    if isinstance(result, Exception):
        message = getattr(result, "message", str(result))
        raise CheckFailed(_("run_fault_injection({seed}) failed when {target} was replaced by a broken version "
                            "({helper}): {message}. The lab should measure and report, not stop, when a primitive "
                            "misbehaves").format(seed=lab['seed'], target=", ".join(replacements),
                                                 helper=", ".join(b.name for b in replacements.values()),
                                                 message=message[:400])) from None
    return result


def _procedure(lab, reference, name=None, through=frozenset()) -> dict:
    """The figures of the docstrings' procedure on the lab's seed (the reference, in this
    process); with a broken run's `name`, with its broken primitives, for the signals it checks.
    `through`: primitives of fault_injection.py that disagreed with the correct ones, the
    student's own called in the reference's place (in the worker), so that the figures are
    what the lab measures with them."""
    if through not in lab["procedure"]:
        if through:
            functions = {f"{TOPIC}.{p}": getattr(lab["module"], p) for p in through}
            try:
                lab["procedure"][through] = Procedure(reference, lab["seed"], functions)
            except Exception as exc:  # noqa: BLE001 - the student's primitive, which the lab ran on the same inputs
                lab["procedure"][through] = exc
        else:
            lab["procedure"][through] = TabledProcedure(reference, lab["seed"])
    procedure = lab["procedure"][through]
    if isinstance(procedure, Exception):
        raise CheckFailed(_("the grader's run of the docstrings' procedure through your {names} (seed {seed}) "
                            "failed: {message}; your lab, on the same inputs, returned figures").format(
            names=", ".join(sorted(through)), seed=lab["seed"],
            message=whole_sentences(getattr(procedure, "message", procedure), 300))) from None
    if name is None:
        return procedure.figures
    if (through, name) not in lab["procedure"]:
        lab["procedure"][through, name] = procedure.broken(*broken_runs()[name])
    return lab["procedure"][through, name]


def _measured(key, lab, reruns, reference, signals, report_extras):
    with _Graded(signals, report_extras, key, "measured") as fields:
        experiment = reruns(RERUNS[key])            # first: the figure draws it even when the lab fails
        run = _lab_run(lab, reruns)
        if lab.get("stand_in"):
            fields["bptt_stand_in"] = sorted(lab["stand_in"])
        fields["actual"] = run.get("bptt_rel_error") if key == "bptt_matches_finite_difference" and isinstance(
            run, dict) else (run.get(key) if isinstance(run, dict) else None)
        fields["figures"] = {f: run.get(f) for f in SIGNAL_FIGURES[key]} if isinstance(run, dict) else {}
        # A primitive that disagreed with the correct one in the grader's run of this
        # experiment (unless a stand-in replaced it in the lab) is charged in its own test:
        # whatever the lab measured with it is faithful, and is judged on agreeing with its figures.
        faulty = {p: d for p, d in experiment["deviations"].items()
                  if not (lab.get("stand_in") and PRIMITIVE_TOPIC[p] != TOPIC)}
        check_returned(key, run, expect=None if faulty else True)
        if faulty:
            fields["value"] = run[key]
            fields["cause"] = {p: PRIMITIVE_TOPIC[p] for p in faulty}
        # Where a primitive of this topic disagreed, the procedure calls the student's: the lab is
        # still compared with what it measures with it (issue 37: constants flipped by telling the
        # broken run apart, behind primitives off by 1e-11, earned every signal). A lab measuring
        # with a wrong bptt function (charged in bptt only), or with a primitive that changes its
        # arguments in place (no call from here does that to the lab's arrays), is judged on its
        # own figures.
        compared = not any(PRIMITIVE_TOPIC[p] != TOPIC or isinstance(d, InPlace) for p, d in faulty.items())
        through = frozenset(faulty)
        if compared:
            check_same_procedure(key, run, _procedure(lab, reference, through=through))
        fields["patched"] = {}
        for target, broken in BROKEN[key]:
            name = broken_run_of(target, broken)
            patched = _patched_run(lab, name)
            fields["patched"][name] = patched.get(key) if isinstance(patched, dict) else None
            check_returned(key, patched, expect=False)
            if compared:
                check_same_procedure(key, patched, _procedure(lab, reference, name, through), broken_runs()[name][0])


@pytest.fixture(scope="module")
def reruns(fault_injection, bptt, reference, run_seed, report_extras):
    """The grader's own experiments through the student's primitives, each once per run: every
    primitive is first probed on fixed inputs, then every call is compared with the correct
    primitive (`deviations`), so that a signal the student's lab reports can be judged
    faithfully. The curves for reports/fault_injection.png are taken from here (or from the
    reference primitives when the student's failed, labelled so)."""
    student = Primitives(fault_injection, bptt)
    ref = Primitives(reference.fault_injection, reference.bptt)
    cache = {}
    probed = None

    def probe_deviations() -> dict:
        """Every primitive probed once per run, whichever experiment comes first."""
        nonlocal probed
        if probed is None:
            prober = CheckedPrimitives(student, ref)
            prober.probe(set().union(*EXPERIMENT_PRIMITIVES.values()))
            probed = prober.deviations
        return probed

    def get(name):
        if name not in cache:
            seed = pool_seed(run_seed, "run_fault_injection")   # one lab seed per run, everywhere
            checked = CheckedPrimitives(student, ref)
            checked.deviations.update({p: d for p, d in probe_deviations().items() if p in EXPERIMENT_PRIMITIVES[name]})
            entry = cache[name] = {"seed": seed, "deviations": checked.deviations}
            try:
                entry.update(result=RERUN_FUNCTIONS[name](checked, seed), source="student")
            except Exception as exc:  # noqa: BLE001
                entry["error"] = exc
                if name in ("spectral", "clipping"):
                    entry["fallback"] = RERUN_FUNCTIONS[name](ref, seed)
            _store_figure_data(report_extras, name, entry)
        return cache[name]

    return get


def _store_figure_data(report_extras, name, entry):
    record = _lab_record(report_extras)
    result = entry.get("result") or entry.get("fallback")
    source = "student" if "result" in entry else "reference"
    record.keep_experiment(name, source, entry["seed"], result, entry.get("error"))
    if name == "spectral" and result:
        record.curves = NormCurves(source, entry["seed"], list(range(1, T_STEPS + 1)), plain(result["curves"]))
    if name == "clipping" and result:
        losses = plain(result["losses"])
        record.loss_curves = LossCurves(source, entry["seed"], losses["clip"], losses["noclip"],
                                        losses["noclip_first_nonfinite_step"])


# ============================================================ primitives, known answers
def _running_log_sum(factors):
    out, acc = [], []
    for f in factors:
        if f == 0 or (out and out[-1] == -math.inf):
            out.append(-math.inf)
            continue
        acc.append(math.log(abs(f)))
        out.append(math.fsum(acc))
    return np.array(out)


def _expect_log_values(got, expected, what):
    got = expect_array(got, expected.shape, what)
    inf_expected = np.isneginf(expected)
    if not np.array_equal(np.isneginf(got), inf_expected):
        where = int(np.flatnonzero(np.isneginf(got) != inf_expected)[0])
        raise CheckFailed(_("{what}[{where}] = {got}, expected {expected} (-inf from the first zero factor on, "
                            "finite before it)").format(what=what, where=where,
                                                        **shown_pair(float(got[where]), float(expected[where]), least=3)))
    finite = ~inf_expected
    err = np.abs(got[finite] - expected[finite]) / (1 + np.abs(expected[finite]))
    if not np.all(np.isfinite(got[finite])) or (err.size and err.max() > 1e-9):
        where = int(np.flatnonzero(finite)[np.argmax(np.where(np.isfinite(err), err, np.inf))])
        raise CheckFailed(_("{what}[{where}] = {got}, expected {expected}").format(
            what=what, where=where, **shown_pair(float(got[where]), float(expected[where]), least=3)))


def test_log_abs_cumprod_matches_running_log_sum(fault_injection, rng):
    signs = rng.choice([-1.0, 1.0], size=40)
    factors = signs * rng.uniform(0.2, 3.0, size=40)
    factors[29] = 0.0
    got = fault_injection.log_abs_cumprod(factors)
    expect_not_mutated(fault_injection, "log_abs_cumprod")
    _expect_log_values(got, _running_log_sum(factors), _("log_abs_cumprod(factors) (signs mixed, a zero at index 29)"))
    raised = getattr(fault_injection, "last_notes", {}).get("warnings")
    if raised:      # observed in the worker, during this very call
        raise CheckFailed(_("log_abs_cumprod(factors) with a zero factor raised {warning}; the docstring rules "
                            "warnings out: log|0| = -inf is expected here, so compute the logs inside "
                            "np.errstate(divide=\"ignore\")").format(warning=raised[0]), "diagnosed")
    # The edges of "shape (T,), float64": no factor at all, and factors in float32.
    expect_array(fault_injection.log_abs_cumprod(np.zeros(0)), (0,), _("log_abs_cumprod of an empty factor array"))
    narrow = factors[:12].astype(np.float32)
    got = expect_array(fault_injection.log_abs_cumprod(narrow), (12,), _("log_abs_cumprod of float32 factors"))
    if got.dtype != np.float64:
        raise CheckFailed(_("log_abs_cumprod of float32 factors returned {dtype}; out is float64 whatever the "
                            "factors' dtype: convert them (np.asarray(factors, dtype=float)) before taking the "
                            "logs").format(dtype=got.dtype))
    _expect_log_values(got, _running_log_sum(narrow.astype(float)), _("log_abs_cumprod of float32 factors"))


def test_log_abs_cumprod_does_not_underflow_or_overflow(fault_injection, rng):
    for lo, hi, what in [(0.01, 0.3, _("500 factors in [0.01, 0.3] (the product underflows to 0.0)")),
                         (4.0, 8.0, _("500 factors in [4, 8] (the product overflows to inf)"))]:
        factors = rng.uniform(lo, hi, size=500) * rng.choice([-1.0, 1.0], size=500)
        _expect_log_values(fault_injection.log_abs_cumprod(factors), _running_log_sum(factors),
                           _("log_abs_cumprod of {what}").format(what=what))


def _with_spectrum(rng, eigenvalues):
    """A non-normal real matrix with the given eigenvalues (complex ones as 2x2 rotation blocks)."""
    blocks = []
    for ev in eigenvalues:
        if isinstance(ev, complex):
            blocks.append(np.array([[ev.real, -ev.imag], [ev.imag, ev.real]]))
        else:
            blocks.append(np.array([[ev]]))
    n = sum(b.shape[0] for b in blocks)
    A, i = np.zeros((n, n)), 0
    for b in blocks:
        A[i:i + b.shape[0], i:i + b.shape[0]] = b
        i += b.shape[0]
    Q = np.eye(n) + np.triu(rng.normal(size=(n, n)), 1)    # det 1, well conditioned, not orthogonal
    return Q @ A @ np.linalg.inv(Q)


def test_scale_spectral_radius_uses_largest_eigenvalue_modulus(fault_injection, rng):
    cases = [
        (_("a matrix whose dominant eigenvalue is -3 (largest real part 2)"), [-3.0, 2.0, 1.0, 0.5], 3.0),
        (_("a matrix with eigenvalues 0.4 +- 2i (modulus 2.04) and 1.5"), [complex(0.4, 2.0), 1.5, -0.2],
         math.hypot(0.4, 2.0)),
        (_("a strongly non-normal matrix (largest singular value >> spectral radius)"), None, 1.0),
    ]
    for what, spectrum, radius in cases:
        if spectrum is None:
            W = np.triu(rng.normal(size=(5, 5)) * 6.0, 1) + np.diag([1.0, -0.5, 0.25, 0.8, -0.9])
        else:
            W = _with_spectrum(rng, spectrum)
        for rho in (0.5, 1.5):
            got = expect_array(fault_injection.scale_spectral_radius(W, rho), W.shape,
                               _("scale_spectral_radius on {what}").format(what=what))
            expect_not_mutated(fault_injection, "scale_spectral_radius")
            expected = W * (rho / radius)
            # Any backward-stable eigensolver finds the radius within its condition number times
            # ~n u ||W|| (the triangular case's eigenvalues are its diagonal, found exactly): at most
            # ~1e-10 here, relative to the largest entry; 1e-8 is above it, a wrong radius is O(1) off.
            err = np.max(np.abs(got - expected)) / np.max(np.abs(expected))
            if not err < 1e-8:
                measured = float(np.max(np.abs(np.linalg.eigvals(got)))) if np.all(np.isfinite(got)) else math.nan
                known = _diagnose_radius(got, W, rho, radius)
                if known:
                    raise CheckFailed(_("scale_spectral_radius(W, {rho}) on {what}: the result has spectral radius "
                                        "{measured}, expected {rho}: {diagnosis}").format(
                        rho=rho, what=what, measured=_fmt(measured), diagnosis=known), "diagnosed")
                raise CheckFailed(_("scale_spectral_radius(W, {rho}) on {what}: the result has spectral radius "
                                    "{measured}, expected {rho} (and it must be a positive multiple of W)").format(
                    rho=rho, what=what, measured=_fmt(measured)))


RADIUS_BY_SINGULAR_VALUE = N_("your result is W * rho / ||W||_2, scaled by the largest singular value: the spectral "
                              "radius is the largest eigenvalue modulus, max |eig(W)|, which the largest singular value "
                              "only bounds from above")
RADIUS_BY_REAL_PART = N_("your result is W * rho / max Re(eig(W)), scaled by the largest real part of an eigenvalue: "
                         "the spectral radius is the largest modulus, max |eig(W)| (a negative or complex eigenvalue "
                         "can be the dominant one)")


def _diagnose_radius(got, W, rho, radius) -> str:
    """The one wrong radius that W * rho / it reproduces `got` with (and the right radius does
    not), or ''."""
    if not np.all(np.isfinite(got)):
        return ""
    wrong = ((np.linalg.norm(W, 2), RADIUS_BY_SINGULAR_VALUE), (np.max(np.linalg.eigvals(W).real), RADIUS_BY_REAL_PART))
    fits = [text for r, text in wrong if not math.isclose(r, radius, rel_tol=1e-6)
            and np.max(np.abs(got - W * (rho / r))) <= 1e-8 * np.max(np.abs(W * (rho / r)))]
    return _(fits[0]) if len(fits) == 1 else ""


def _fd_chain_norms(Wh, U, h0, step=1e-6):
    """||dh_T/dh_{T-k}||_2 by central differences of the rollout h_t = tanh(h_{t-1} Wh + U[t-1])."""
    T, H = U.shape
    hs = [h0]
    for t in range(T):
        hs.append(np.tanh(hs[-1] @ Wh + U[t]))

    def roll(h, start):
        for t in range(start, T):
            h = np.tanh(h @ Wh + U[t])
        return h

    norms = np.empty(T)
    for k in range(1, T + 1):
        start = T - k
        J = np.empty((H, H))
        for j in range(H):
            e = np.zeros(H)
            e[j] = step
            J[:, j] = (roll(hs[start] + e, start) - roll(hs[start] - e, start)) / (2 * step)
        norms[k - 1] = np.linalg.norm(J, 2)
    return np.array(hs), norms


# A diagnosis tests its hypothesis first: the suspected chain is multiplied here on the same
# Wh and states, and named only when it gives the student's norms (and the right chain does not).
def chain_variant(Wh, hs, dact_from="output", first_k=False, no_derivative=False, reversed_product=False):
    """jacobian_chain_norms(Wh, hs, "tanh") of its docstring, or with one known mistake."""
    T, H = hs.shape[0] - 1, hs.shape[1]
    dact = np.ones((T, H)) if no_derivative else 1.0 - (hs[1:] if dact_from == "output" else hs[:-1]) ** 2
    chain, norms = np.eye(H), []
    for k in range(1, T + 1):
        t = k if first_k else T - k + 1
        step = dact[t - 1][:, None] * Wh.T
        chain = step @ chain if reversed_product else chain @ step
        norms.append(np.linalg.norm(chain, 2))
    return np.array(norms)


CHAIN_MISTAKES = (
    (dict(first_k=True), N_("your norms match the product of the FIRST k step Jacobians (from t = 1): "
                            "dh_T/dh_(T-k) multiplies the last k, J_T J_(T-1) ... J_(T-k+1)")),
    (dict(dact_from="input"), N_("your norms match tanh' evaluated at h_(t-1), the step's input: J_t uses "
                                 "1 - h_t^2, the state the step produced")),
    (dict(no_derivative=True), N_("your norms match the weight factors alone: for a tanh RNN each J_t also "
                                  "carries diag(1 - h_t^2)")),
    (dict(reversed_product=True), N_("your norms match the product in the reverse order, J_(T-k+1) ... J_T: "
                                     "matrices do not commute, and dh_T/dh_(T-k) = J_T J_(T-1) ... J_(T-k+1) "
                                     "(each new factor multiplies on the right)")),
)


def test_jacobian_chain_norms_tanh_matches_finite_differences(fault_injection, rng):
    cases = []
    for scale, what in [(0.7, _("small states")), (2.5, _("saturating states"))]:
        H, T = 5, 7
        Wh = rng.normal(size=(H, H)) * scale / math.sqrt(H)
        hs, expected = _fd_chain_norms(Wh, rng.normal(size=(T, H)) * 0.8, np.tanh(rng.normal(size=H)))
        cases.append((Wh, hs, expected, what))

    def run_case(case, record):
        Wh, hs, expected, what = case
        got = expect_array(fault_injection.jacobian_chain_norms(Wh, hs, "tanh"), (len(expected),),
                           _("jacobian_chain_norms(Wh, hs, 'tanh') with {what}").format(what=what))
        expect_not_mutated(fault_injection, "jacobian_chain_norms")
        record(got, chain_variant(Wh, hs), variant_hypotheses(chain_variant, CHAIN_MISTAKES, Wh, hs))
        # finite differences carry an absolute error ~1e-10 (the smallest norms here are ~1e-9)
        excess = np.abs(got - expected) / (1e-6 * expected + 1e-8)
        if not np.max(excess) <= 1.0:
            k = int(np.argmax(excess)) + 1
            raise CheckFailed(_("jacobian_chain_norms(Wh, hs, 'tanh') with {what}: ||dh_T/dh_(T-{k})|| = {got}, "
                                "finite differences give {expected}").format(
                what=what, k=k, **shown_pair(float(got[k - 1]), float(expected[k - 1]), least=3)))

    # every case runs: a chain is named only when it gives the student's norms on both
    every_case(cases, run_case,
               same=lambda got, wrong: bool(np.all(np.isfinite(got)) and np.max(np.abs(got - wrong) / wrong) <= 1e-8),
               differs=lambda wrong, right: np.max(np.abs(wrong - right) / right) > 1e-6)


def test_jacobian_chain_norms_linear_is_the_weight_factor(fault_injection, rng):
    H, T = 6, 9
    Wh = rng.normal(size=(H, H)) / math.sqrt(H) * 1.3
    hs = np.tanh(rng.normal(size=(T + 1, H)))          # not a linear rollout: the states must not matter
    expected = np.array([np.linalg.norm(np.linalg.matrix_power(Wh, k), 2) for k in range(1, T + 1)])
    got = expect_array(fault_injection.jacobian_chain_norms(Wh, hs, "linear"), (T,),
                       "jacobian_chain_norms(Wh, hs, 'linear')")
    # A product of k <= 9 matrices rounds by gamma_{kH} ||(|Wh|)^k||, ~360 times ||Wh^k|| here: ~2e-12
    # relative in any order, FMA or not; 1e-8 is above it (a chain off by one step is off by 1.3x).
    err = np.abs(got - expected) / expected
    if not np.max(err) < 1e-8:
        k = int(np.argmax(err)) + 1
        raise CheckFailed(_("jacobian_chain_norms(Wh, hs, 'linear')[{index}] = {got}, expected ||Wh^{k}||_2 = "
                            "{expected} (no activation factor in the linear chain)").format(
            index=k - 1, k=k, **shown_pair(float(got[k - 1]), float(expected[k - 1]), least=3)))


CLIP_PER_TENSOR = N_("your clipped arrays are each scaled by min(1, max_norm / ||g||) of their own norm, per tensor: "
                     "compute one global norm over all arrays and scale every array by the same factor "
                     "max_norm / total_norm")
CLIP_ELEMENTWISE = N_("your clipped arrays are np.clip(g, -max_norm, max_norm), each entry clipped on its own: that "
                      "changes the gradient's direction; scale every array by max_norm / total_norm instead")


def _diagnose_clip(clipped, grads, max_norm) -> str:
    """The one wrong clip that reproduces every array of `clipped` from `grads`, or ''."""
    wrong = ((lambda g: g * min(1.0, max_norm / np.linalg.norm(g)), CLIP_PER_TENSOR),
             (lambda g: np.clip(g, -max_norm, max_norm), CLIP_ELEMENTWISE))

    def same(a, b):
        a = np.asarray(a, dtype=float)
        return a.shape == b.shape and np.all(np.isfinite(a)) and np.linalg.norm(a - b) <= 1e-9 * max(np.linalg.norm(b), 1e-300)
    fits = [text for clip, text in wrong if all(same(clipped[k], clip(g)) for k, g in grads.items())]
    return _(fits[0]) if len(fits) == 1 else ""


def test_clip_grad_norm_global_scaling_keeps_direction(fault_injection, rng):
    def call(grads, max_norm, what):
        clipped, total = expect_tuple(fault_injection.clip_grad_norm(grads, max_norm), 2, "clip_grad_norm")
        expect_not_mutated(fault_injection, "clip_grad_norm")
        if getattr(fault_injection, "last_notes", {}).get("aliased"):     # seen in the worker: identity, memory
            raise CheckFailed(_("clip_grad_norm({what}) handed back the caller's grads (the dict itself or its "
                                "arrays): the docstring promises a new dict, so that changing the clipped "
                                "gradients never changes grads; build it with new arrays, e.g. "
                                "{{name: g * scale for name, g in grads.items()}}, also below the threshold").format(
                what=what), "diagnosed")
        if not isinstance(clipped, dict) or set(clipped) != set(grads):
            raise CheckFailed(_("clip_grad_norm({what})[0] should be a dict with the keys {keys}").format(
                what=what, keys=sorted(grads)))
        oracle = math.sqrt(math.fsum(float(v) ** 2 for g in grads.values() for v in np.ravel(g)))
        try:
            total = float(total)
        except (TypeError, ValueError):
            raise CheckFailed(_("clip_grad_norm({what})[1] should be a number, got {type}").format(
                what=what, type=type(total).__name__)) from None
        if not abs(total - oracle) <= 1e-9 * oracle:      # a sum of squares (one sign), a root: ~1e-15
            raise CheckFailed(_("clip_grad_norm({what}) returned total_norm {total}, expected the global L2 norm "
                                "over all arrays {expected}").format(what=what, **shown_pair(total, oracle, ("total", "expected"), 3)))
        return clipped, oracle

    grads = {"Wx": rng.normal(size=(4, 3)) * 3.0, "b": rng.normal(size=3) * 0.05, "Wh": rng.normal(size=(2, 2, 2)) * 5}
    for factor, what in [(0.3, _("a total norm above max_norm")), (1e-7, _("a total norm 1e7 times max_norm"))]:
        total = math.sqrt(sum(float(np.sum(g**2)) for g in grads.values()))
        max_norm = factor * total
        clipped, oracle = call(grads, max_norm, what)
        for k, g in grads.items():
            c = expect_array(clipped[k], g.shape, f"clip_grad_norm({what})[0][{k!r}]")
            ratio = np.linalg.norm(c - g * (max_norm / oracle)) / np.linalg.norm(g * (max_norm / oracle))
            if not ratio < 1e-6:
                known = _diagnose_clip(clipped, grads, max_norm)
                if known:
                    raise CheckFailed(_("clip_grad_norm with {what}: {key} is not grads[{key}] * max_norm / "
                                      "total_norm: {diagnosis}").format(what=what, key=repr(k), diagnosis=known),
                                      "diagnosed")
                raise CheckFailed(_("clip_grad_norm with {what}: {key} is not grads[{key}] * max_norm / total_norm "
                                    "(every array must be scaled by the same factor, computed from the global "
                                    "norm)").format(what=what, key=repr(k)))
    small = {"a": rng.normal(size=(3, 2)), "b": rng.normal(size=4)}
    for max_norm, grads2, what in [(100.0, small, _("a total norm below max_norm")),
                                   (1.0, {"a": np.zeros((2, 2)), "b": np.zeros(3)}, _("all-zero gradients"))]:
        clipped, _oracle = call(grads2, max_norm, what)
        for k, g in grads2.items():
            c = expect_array(clipped[k], g.shape, f"clip_grad_norm({what})[0][{k!r}]")
            if not (np.all(np.isfinite(c)) and np.allclose(c, g, rtol=1e-12, atol=0)):
                raise CheckFailed(_("clip_grad_norm with {what} changed {key}: below the threshold the gradients "
                                    "must stay as they are (clipping only ever scales down)").format(
                    what=what, key=repr(k)))


# ================================================================= the seven signals
def test_near_one_product_stays_bounded_measured(lab, reruns, reference, signals, report_extras):
    _measured("near_one_product_stays_bounded", lab, reruns, reference, signals, report_extras)


def test_rho_below_one_gradient_decays_measured(lab, reruns, reference, signals, report_extras):
    _measured("rho_below_one_gradient_decays", lab, reruns, reference, signals, report_extras)


def test_rho_above_one_gradient_explodes_measured(lab, reruns, reference, signals, report_extras):
    _measured("rho_above_one_gradient_explodes", lab, reruns, reference, signals, report_extras)


def test_rho_one_tanh_saturation_still_decays_measured(lab, reruns, reference, signals, report_extras):
    _measured("rho_one_tanh_saturation_still_decays", lab, reruns, reference, signals, report_extras)


def test_clipping_caps_norm_keeps_training_alive_measured(lab, reruns, reference, signals, report_extras):
    _measured("clipping_caps_norm_keeps_training_alive", lab, reruns, reference, signals, report_extras)


def test_clipping_does_not_rescue_vanishing_measured(lab, reruns, reference, signals, report_extras):
    _measured("clipping_does_not_rescue_vanishing", lab, reruns, reference, signals, report_extras)


def test_bptt_matches_finite_difference_measured(lab, reruns, reference, signals, report_extras):
    _measured("bptt_matches_finite_difference", lab, reruns, reference, signals, report_extras)

