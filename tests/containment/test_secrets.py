"""Containment, round three (issue 24, points 1 and 4): nothing secret in the worker.

The correct stand-ins (oracles.py) and the test functions passed to student code stay in the
grader and are lent to the worker for one call (autograder.isolation.callbacks). Student code
that looks for them by every route it has (sys.modules, gc.get_objects(), frame walking, the
module globals of the helpers passed in, the file system) finds nothing, a lent one cannot be
kept, and what a student's exception message says about the grader's folders is redacted.
Every case runs in both of the harness's modes (root, and `runuser -u nobody` over a
copy), through the `case` fixture (conftest.py): reports inert, nothing changed, no process left.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from harness import (
    CALLS_NUMERICAL_GRADIENT,
    UNIT_REL,
    Case,
    expect_full_marks,
    payload,
    points,
    results_of,
    topic,
)
from helpers import STUBS, UNIT

ORACLES = f"{UNIT.package}.oracles"
STAND_INS = ["RNNForward", "RNNBackward", "NumericalGradient", "RelError", "ExactSequenceScore"]


def _roots(grader) -> list[str]:
    return [str(Path(p).parent) for p in grader.everywhere(UNIT_REL / "oracles.py")]


@pytest.mark.parametrize("route", ["sys_modules", "gc", "frames", "helper_globals", "files"])
def test_stubs_that_alias_the_stand_ins_score_nothing(case, route):
    """The issue's attack: stub functions that are the grader's correct stand-ins, found by
    one route, earned bptt 17/20 and beam 2/15 (sys.modules); the honest stubs earn 0."""
    config = {"route": route, "module": ORACLES, "roots": _roots(case.grader)}
    sub = case.submission("sub")
    for module, attack in (("bptt.py", "alias_bptt"), ("beam_search.py", "alias_beam")):   # the stubs, attacking
        (sub / module).write_text((STUBS / module).read_text() + payload(attack, **config))
    case.grader.own(sub)
    graded = case.grade(sub, "bptt", "beam_attribution", "attention")
    expect_full_marks(graded.score, "attention")
    for tid in ("bptt", "beam_attribution"):
        passed = [t["id"] for t in topic(graded.score, tid)["tests"] if t["outcome"] == "passed"]
        assert topic(graded.score, tid)["earned"] == 0, f"{tid} scored with the stand-ins ({route}): {passed}"


def test_numerical_gradient_cannot_read_the_test_functions_gradient(case):
    """The test function passed to numerical_gradient is a callable f(x) -> float and
    nothing more: returning f.gradient(x) earned 2.5 points."""
    sub = case.submission("sub", append={"bptt.py": payload("gradient_of_f")})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    results = results_of(graded.score, "bptt")
    earned = {tid: results[tid]["outcome"] for tid in CALLS_NUMERICAL_GRADIENT}
    assert all(outcome != "passed" for outcome in earned.values()), earned
    assert topic(graded.score, "bptt")["earned"] <= points("bptt") - points("bptt", CALLS_NUMERICAL_GRADIENT)


def _run_python(case: Case, script: str, *args) -> str:
    """`python -c script args` as the grader of this mode runs (same user, python, checkout)."""
    run = case.grader.run_python(["-c", script, *args], {"TMPDIR": str(case.tmp)}, 120, case.logs)
    assert run.returncode == 0 and "RESULT" in run.stdout, run.stdout[-2000:] + run.stderr[-3000:]
    return run.stdout.split("RESULT", 1)[1]


def test_a_lent_stand_in_is_a_proxy_revoked_after_its_call(case):
    """During a patched call the student's function gets a proxy (no oracle by any route,
    no docstring of one); kept in a module global, it raises when called later."""
    config = {"route": "", "module": ORACLES, "roots": _roots(case.grader), "names": STAND_INS}
    sub = case.submission("sub", append={"bptt.py": payload("keep_and_hunt", **config)})
    out = json.loads(_run_python(case, (Path(__file__).parent / "lend_and_revoke.py").read_text(), sub))
    patched = out["patched"]
    assert patched["value"] == 1.0, patched                       # lent: it works during the call
    assert patched["type"] != "RelError" and "max |a - b|" not in patched["doc"], patched
    assert patched["found"] == {route: [] for route in patched["found"]}, patched["found"]
    assert "later" not in out, f"a kept stand-in still worked after its call: {out['later']}"
    assert "for one call only" in out["later_error"], out["later_error"]


def test_messages_name_no_instructor_path(case):
    """Every path the worker can read (module files and package paths, sys.path, argv, the
    request loop's locals), in an exception's message and in a returned value that a check
    quotes, reaches every report with the grader's folders replaced by labels: the unit
    folder, the install, the Python environment and the temporary folders never appear."""
    sub = case.submission("sub", append={"bptt.py": payload("leak_paths")})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    results = results_of(graded.score, "bptt")
    for tid in ("hidden::test_rel_error_matches_formula", "hidden::test_numerical_gradient_matches_analytic"):
        assert "PATHS" in results[tid]["message"] and "<unit>" in results[tid]["message"], results[tid]["message"]
    g = case.grader
    # (Not the submission's own folder: score.json names it, as the grader was given it.)
    needles = {str(g.checkout), str(g.checkout.resolve()), str(Path(g.python).parent.parent), sys.prefix,
               str(case.tmp), str(UNIT.path)}
    for report in graded.out.rglob("*"):
        if report.is_file():
            text = report.read_text(errors="replace")
            for needle in needles:
                assert needle not in text, f"{report.name} names {needle}"


def _decoded_forms(text: str) -> list[str]:
    """The text as written, reversed, rot13'd, with zero-width and full-width forms undone, and
    the base64 and hex its characters spell (what a reader of a report could recover)."""
    import base64
    import binascii
    import codecs
    import unicodedata

    plain = unicodedata.normalize("NFKC", text).replace("\u200b", "")
    forms = [plain, plain[::-1], codecs.encode(plain, "rot13")]
    letters = "".join(re.findall(r"[A-Za-z0-9+/]", plain))
    digits = "".join(re.findall(r"[0-9a-fA-F]", plain))
    for start in range(4):
        chunk = letters[start:][: (len(letters) - start) // 4 * 4]
        try:
            forms.append(base64.b64decode(chunk).decode("latin-1"))
        except (binascii.Error, ValueError):
            pass
    for start in range(2):
        chunk = digits[start:][: (len(digits) - start) // 2 * 2]
        forms.append(bytes.fromhex(chunk).decode("latin-1"))
    return forms


def test_no_instructor_path_is_recoverable_from_a_report_in_any_encoding(case):
    """The unit's folder in base64 (whole and in chunks), hex (with and without separators),
    rot13, reversed, split by zero-width spaces and in full-width letters, in a returned value
    and in an exception: no report lets it be read back."""
    sub = case.submission("sub", append={"bptt.py": payload("leak_paths_encoded")})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    results = results_of(graded.score, "bptt")
    for tid in ("hidden::test_rel_error_matches_formula", "hidden::test_numerical_gradient_matches_analytic"):
        assert results[tid]["outcome"] != "passed", results[tid]
    unit_folder = str(case.grader.checkout / "autograder" / "units" / UNIT.name)
    for report in graded.out.rglob("*"):
        if report.is_file() and report.suffix in (".json", ".md", ".xml", ".yaml"):
            text = report.read_text(errors="replace")
            for form in _decoded_forms(text):
                assert unit_folder not in form, f"{report.name} lets the unit's folder be read back"
