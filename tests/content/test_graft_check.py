"""The graft check (scripts/graft_check.py): no function of the public tests earns a hidden point.

make test: every function of the public tests is grafted, each grafted module compiles, and
the check, on a public test that computes the answer as the public tests once did (the
plain loop of test_attention.py), names the leak. make sweep (tests/e2e/test_release.py):
the whole check on the release's public tests.
"""

from __future__ import annotations

import ast
import shutil
import sys

from helpers import REPO, STUBS, UNIT

sys.path.insert(0, str(REPO / "scripts"))
import graft_check  # noqa: E402

# The helper test_attention.py held before its expected values were written as numbers: the
# equations one number at a time, i.e. additive_attention itself.
LOOP_ATTENTION = '''
import math

import numpy as np


def _loop_attention(s_prev, H, Wa, Ua, va, mask):
    N, Tx, Dh = H.shape
    alpha, context = np.zeros((N, Tx)), np.zeros((N, Dh))
    for n in range(N):
        e = [sum(va[a] * math.tanh(s_prev[n] @ Wa[:, a] + H[n, t] @ Ua[:, a]) for a in range(len(va)))
             for t in range(Tx)]
        real = [t for t in range(Tx) if mask[n, t]]
        top = max(e[t] for t in real)
        z = sum(math.exp(e[t] - top) for t in real)
        for t in real:
            alpha[n, t] = math.exp(e[t] - top) / z
            context[n] += alpha[n, t] * H[n, t]
    return context, alpha
'''


def _release_with_public_tests(folder, tests: dict):
    """A release's stub folder: the stubs and, as its public tests, `tests` ({file: text})."""
    stubs = folder / UNIT.stubs
    shutil.copytree(STUBS, stubs, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (stubs / "tests").mkdir()
    for name, text in tests.items():
        (stubs / "tests" / name).write_text(text)
    return folder


def test_every_function_of_the_public_tests_is_grafted(tmp_path):
    plan, grafted = graft_check.build(REPO, UNIT, tmp_path / "class")
    helpers = {f"{f}::{d.name}" for f, defs in graft_check.public_functions(STUBS / "tests").items() for d in defs}
    seen = {w.split(" -> ")[0] for what in grafted.values() for w in what}
    # a helper the same as one grafted from another file (`fresh`) is grafted once
    duplicates = {"test_gru_lstm_step.py::fresh"} if "test_gate_derivative.py::fresh" in seen else set()
    assert helpers - duplicates == seen, helpers ^ seen
    assert len(plan) == len(grafted) + 1 and plan[graft_check.BASELINE]
    for submission in grafted:
        for module in (tmp_path / "class" / submission).glob("*.py"):
            compile(module.read_text(), str(module), "exec")


def test_a_graft_gets_the_stubs_arguments_it_takes():
    stub = ast.parse("def f(x, W, b, mask=None): pass").body[0]
    assert graft_check.arity(ast.parse("def g(x, W, b, mask): pass").body[0], stub) == 4
    assert graft_check.arity(ast.parse("def g(x, W, b): pass").body[0], stub) == 3       # mask left out
    assert graft_check.arity(ast.parse("def g(*arrays): pass").body[0], stub) == 4
    assert graft_check.arity(ast.parse("def g(x, W): pass").body[0], stub) is None      # b has no default
    assert graft_check.arity(ast.parse("def g(x, W, b, mask, k): pass").body[0], stub) is None
    assert graft_check.arity(ast.parse("def g(x, W, b, *, k): pass").body[0], stub) is None


def test_the_graft_check_names_a_public_test_that_computes_the_answer(tmp_path):
    release = _release_with_public_tests(tmp_path / "release", {"test_attention.py": LOOP_ATTENTION})
    problems, grafts = graft_check.run_check(release, UNIT, tmp_path / "work")
    assert grafts == 1
    assert len(problems) == 1 and "attention::hidden::" in problems[0], problems
    assert "test_attention.py::_loop_attention -> attention.additive_attention" in problems[0], problems
