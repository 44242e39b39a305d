"""Containment, round three (issue 24, points 1 and 4): nothing secret in the worker.

The correct stand-ins (oracles.py) and the test functions passed to student code stay in the
grader and are lent to the worker for one call (autograder.isolation.callbacks). Student code
that looks for them by every route it has (sys.modules, gc.get_objects(), frame walking, the
module globals of the helpers passed in, the file system) finds nothing, a lent one cannot be
kept, and what a student's exception message says about the grader's folders is redacted.
Every case runs in both of test_containment.py's modes (root, and `runuser -u nobody` over a
copy), through its `case` fixture: reports inert, nothing changed, no process left.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import test_containment
from helpers import STUBS, UNIT
from test_containment import (
    CALLS_NUMERICAL_GRADIENT,
    UNIT_REL,
    Case,
    expect_full_marks,
    hostile,
    points,
    results_of,
    run_measured,
    topic,
)

# test_containment's fixtures: both privilege modes, and the checks after every case.
copied_env, grader, case = test_containment.copied_env, test_containment.grader, test_containment.case

ORACLES = f"{UNIT.package}.oracles"
STAND_INS = ["RNNForward", "RNNBackward", "NumericalGradient", "RelError", "ExactSequenceScore"]

# Finds a correct stand-in by one route (_CFG["route"]) and returns it, or None. Run at call
# time, so that the frames route sees the grader's request loop and whatever it holds.
FIND = r'''
import gc as _gc
import os as _os
import sys as _sys
import types as _types


def _deep(value, name, seen, depth):
    """A class called `name` (or an object of one) reachable from `value`."""
    if depth < 0 or id(value) in seen:
        return None
    seen.add(id(value))
    if isinstance(value, type):
        if value.__name__ == name:
            return value
        return _deep(vars(value), name, seen, depth - 1)
    if type(value).__name__ == name:
        return value
    if isinstance(value, _types.ModuleType):
        if not value.__name__.startswith("autograder"):     # the grader's secrets live in its own modules
            return None
        value = vars(value)
    if isinstance(value, _types.FunctionType):
        return (_deep(value.__globals__, name, seen, depth - 1)
                or _deep([c.cell_contents for c in value.__closure__ or () if c.cell_contents is not None],
                         name, seen, depth - 1))
    if isinstance(value, dict):
        items = list(value.values()) + list(value.keys())
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        items = list(vars(value).values()) + [type(value)]
    else:
        return None
    for item in items:
        found = _deep(item, name, seen, depth - 1)
        if found is not None:
            return found
    return None


_FOUND = {}


def _stand_in(name):
    route = _CFG["route"]
    if (route, name) not in _FOUND:
        _FOUND[route, name] = _search(route, name)
    found = _FOUND[route, name]
    return found() if isinstance(found, type) else found


def _search(route, name):
    found = None
    if route == "sys_modules":
        found = getattr(_sys.modules.get(_CFG["module"]), name, None)
    elif route == "gc":
        _gc.unfreeze()              # what the worker image froze is not listed by get_objects()
        found = next((o for o in _gc.get_objects() if getattr(type(o), "__name__", "") == name
                      or (isinstance(o, type) and o.__name__ == name)), None)
    elif route == "frames":
        frame, seen = _sys._getframe(), set()
        while frame is not None and found is None:
            found = _deep(frame.f_locals, name, seen, 5) or _deep(frame.f_globals, name, seen, 5)
            frame = frame.f_back
    elif route == "helper_globals":
        seen = set()
        for module in list(_sys.modules):
            if ".helpers." in module:
                found = found or _deep(_sys.modules[module], name, seen, 5)
    elif route == "files":
        roots = list(_CFG["roots"]) + [p for m in list(_sys.modules.values()) for p in getattr(m, "__path__", [])]
        for root in roots:
            try:
                with open(_os.path.join(root, "oracles.py")) as fh:
                    namespace = {"__name__": "stolen"}
                    exec(fh.read(), namespace)
                found = namespace.get(name)
                break
            except Exception:
                pass
    return found


def _alias(name):
    def function(*args, **kwargs):
        stand_in = _stand_in(name)
        if stand_in is None:
            raise NotImplementedError("no stand-in found")
        return stand_in(*args, **kwargs)
    return function
'''

ALIAS_BPTT = FIND + r'''
rnn_forward = _alias("RNNForward")
rnn_backward = _alias("RNNBackward")
numerical_gradient = _alias("NumericalGradient")
rel_error = _alias("RelError")
'''

ALIAS_BEAM = FIND + r'''
sequence_score = _alias("ExactSequenceScore")
'''


def _roots(grader) -> list[str]:
    return [str(Path(p).parent) for p in grader.everywhere(UNIT_REL / "oracles.py")]


@pytest.mark.parametrize("route", ["sys_modules", "gc", "frames", "helper_globals", "files"])
def test_stubs_that_alias_the_stand_ins_score_nothing(case, route):
    """The issue's attack: stub functions that are the grader's correct stand-ins, found by
    one route, earned bptt 17/20 and beam 2/15 (sys.modules); the honest stubs earn 0."""
    config = {"route": route, "module": ORACLES, "roots": _roots(case.grader)}
    sub = case.submission("sub")
    for module, attack in (("bptt.py", ALIAS_BPTT), ("beam_search.py", ALIAS_BEAM)):   # the stubs, attacking
        (sub / module).write_text((STUBS / module).read_text() + hostile(attack, **config))
    case.grader.own(sub)
    graded = case.grade(sub, "bptt", "beam_attribution", "attention")
    expect_full_marks(graded.score, "attention")
    for tid in ("bptt", "beam_attribution"):
        passed = [t["id"] for t in topic(graded.score, tid)["tests"] if t["outcome"] == "passed"]
        assert topic(graded.score, tid)["earned"] == 0, f"{tid} scored with the stand-ins ({route}): {passed}"


GRADIENT_OF_F = r'''
def numerical_gradient(f, x, h=1e-6):
    return f.gradient(x)
'''


def test_numerical_gradient_cannot_read_the_test_functions_gradient(case):
    """The test function passed to numerical_gradient is a callable f(x) -> float and
    nothing more: returning f.gradient(x) earned 2.5 points."""
    sub = case.submission("sub", append={"bptt.py": hostile(GRADIENT_OF_F)})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    results = results_of(graded.score, "bptt")
    earned = {tid: results[tid]["outcome"] for tid in CALLS_NUMERICAL_GRADIENT}
    assert all(outcome != "passed" for outcome in earned.values()), earned
    assert topic(graded.score, "bptt")["earned"] <= points("bptt") - points("bptt", {
        t.split("::", 1)[1] for t in CALLS_NUMERICAL_GRADIENT})


KEEP_AND_HUNT = FIND + r'''
_KEPT = []


def keep_and_hunt():
    """Called with rel_error lent by the grader: keep it, use it, and look for any stand-in."""
    _KEPT.append(rel_error)
    found = {}
    for route in ("sys_modules", "gc", "frames", "helper_globals", "files"):
        _CFG["route"] = route
        found[route] = sorted(name for name in _CFG["names"] if _stand_in(name) is not None)
    return {"value": rel_error(np.ones(2), np.zeros(2)), "type": type(rel_error).__name__,
            "doc": str(getattr(rel_error, "__doc__", "")), "found": found}


def call_kept():
    return _KEPT[0](np.ones(2), np.zeros(2))
'''

SANDBOX_SCRIPT = r'''
import json, sys
from pathlib import Path
from autograder.isolation.sandbox import Sandbox, StudentCodeError, StudentModule
from autograder.units.rnn_prehistory.oracles import RelError
from autograder.unit.load import load_unit

unit = load_unit("rnn_prehistory")
out = {}
with Sandbox(unit, Path(sys.argv[1])) as sandbox:
    sandbox.start()
    bptt = StudentModule(sandbox, "bptt")
    out["patched"] = bptt.keep_and_hunt.patched({"bptt.rel_error": RelError()})()
    try:
        out["later"] = bptt.call_kept()
    except StudentCodeError as exc:
        out["later_error"] = exc.message
print("RESULT" + json.dumps(out))
'''


def _run_python(case: Case, script: str, *args) -> str:
    """`python -c script args` as the grader of this mode runs (same user, python, checkout)."""
    g = case.grader
    if g.mode == "root":
        cmd, env = [g.python, "-c", script, *map(str, args)], {**os.environ, "TMPDIR": str(case.tmp)}
    else:
        env_vars = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": str(case.tmp)}
        cmd, env = [*g.prefix, "env", "-i", *(f"{k}={v}" for k, v in env_vars.items()), g.python, "-c", script,
                    *map(str, args)], None
    run = run_measured(cmd, g.checkout, env, 120, case.logs)
    assert run.returncode == 0 and "RESULT" in run.stdout, run.stdout[-2000:] + run.stderr[-3000:]
    return run.stdout.split("RESULT", 1)[1]


def test_a_lent_stand_in_is_a_proxy_revoked_after_its_call(case):
    """During a patched call the student's function gets a proxy (no oracle by any route,
    no docstring of one); kept in a module global, it raises when called later."""
    config = {"route": "", "module": ORACLES, "roots": _roots(case.grader), "names": STAND_INS}
    sub = case.submission("sub", append={"bptt.py": hostile(KEEP_AND_HUNT, **config)})
    out = json.loads(_run_python(case, SANDBOX_SCRIPT, sub))
    patched = out["patched"]
    assert patched["value"] == 1.0, patched                       # lent: it works during the call
    assert patched["type"] != "RelError" and "max |a - b|" not in patched["doc"], patched
    assert patched["found"] == {route: [] for route in patched["found"]}, patched["found"]
    assert "later" not in out, f"a kept stand-in still worked after its call: {out['later']}"
    assert "for one call only" in out["later_error"], out["later_error"]


LEAK_PATHS = r'''
def _paths():
    import os, sys
    modules = list(sys.modules.values())
    pieces = [p for m in modules if m.__name__.startswith("autograder.units") for p in getattr(m, "__path__", [])]
    pieces += [sys.modules["numpy"].__file__, sys.prefix, os.getcwd(), __file__] + list(sys.argv) + list(sys.path)
    pieces += [getattr(m, "__file__", None) or "" for m in modules if m.__name__.startswith("autograder")]
    frame = sys._getframe()
    while frame is not None:
        pieces += [repr(v)[:200] for v in frame.f_locals.values() if isinstance(v, (str, dict))]
        frame = frame.f_back
    return "PATHS " + " ".join(dict.fromkeys(p for p in pieces if "/" in p))[:1800]


def rel_error(a, b):
    return _paths()                  # a result: the check's message quotes it


def numerical_gradient(f, x, h=1e-6):
    raise RuntimeError(_paths())     # an exception: its message and traceback
'''


def test_messages_name_no_instructor_path(case):
    """Every path the worker can read (module files and package paths, sys.path, argv, the
    request loop's locals), in an exception's message and in a returned value that a check
    quotes, reaches every report with the grader's folders replaced by labels: the unit
    folder, the install, the Python environment and the temporary folders never appear."""
    sub = case.submission("sub", append={"bptt.py": hostile(LEAK_PATHS)})
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
