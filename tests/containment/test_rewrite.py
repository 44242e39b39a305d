"""autograder/isolation/rewrite.py: a student's module whose function runs other code,
made by the student's own def, every other line where it was."""

from __future__ import annotations

import inspect
import types

import numpy as np
import pytest

from autograder.isolation.rewrite import Body, Scaled, replace_body

BROKEN = Body((("grads", "None"), ("max_norm", "None")), "return 'broken', grads, max_norm")

MODULES = {
    "docstring and body": '''import numpy as np

def decorate(f):
    return f

@decorate
def clip(g, tau):
    """Clip by the global norm (the student's docstring, ü)."""
    total = 0.0
    for v in g.values():
        total += float(np.sum(v ** 2))
    return g, total

AFTER = clip
LAST = 1
''',
    "a stub (docstring only)": '''def clip(grads, max_norm):
    """Clip.
    """  # TODO

AFTER = clip
LAST = 1
''',
    "body on the def line": "def clip(grads, max_norm): return grads, 0.0\nAFTER = clip\nLAST = 1\n",
    "positional and *args": "def clip(grads, *rest):\n    return grads, rest\n\nAFTER = clip\nLAST = 1\n",
}


def _load(source: bytes, name: str = "student") -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)   # noqa: S102 - the test's own text
    return module


@pytest.mark.parametrize("case", MODULES)
def test_the_students_def_makes_the_replaced_function(case):
    source = MODULES[case].encode()
    original, replaced = _load(source), _load(replace_body(source, "clip", BROKEN))
    f, g = original.clip, replaced.clip
    assert g("G", 2.0) == ("broken", "G", 2.0)
    assert replaced.AFTER is g                       # the def itself made it: nothing was swapped later
    for attribute in ("__name__", "__qualname__", "__module__", "__doc__", "__defaults__"):
        assert getattr(g, attribute) == getattr(f, attribute), attribute
    assert inspect.signature(g) == inspect.signature(f)
    assert g.__code__.co_firstlineno == f.__code__.co_firstlineno
    assert _line_of("LAST", replace_body(source, "clip", BROKEN)) == _line_of("LAST", source)


def _line_of(name: str, source: bytes) -> int:
    return next(i for i, line in enumerate(source.decode().splitlines(), 1) if line.startswith(name))


def test_a_module_without_the_def_gets_it_at_the_end_and_one_that_does_not_parse_is_left_alone():
    source = b"clip = lambda g, t: (g, 0.0)\n"
    assert _load(replace_body(source, "clip", BROKEN)).clip("G", 1.0) == ("broken", "G", 1.0)
    broken_syntax = b"def clip(grads, max_norm:\n    return 1\n"
    assert replace_body(broken_syntax, "clip", BROKEN) == broken_syntax


def test_a_scaled_function_is_the_students_own_times_the_factor_every_line_where_it_was():
    source = MODULES["docstring and body"].encode()
    original = _load(source)
    scaled = _load(replace_body(replace_body(source, "clip", Scaled(2.5)), "missing", Scaled(3.0)))
    grads = {"a": np.array([3.0, -4.0]), "b": np.array([1.0])}
    clipped, total = scaled.clip(grads, 1.0)
    assert total == 2.5 * 26.0 and np.array_equal(clipped["a"], 2.5 * grads["a"])   # the def's sum of squares, times 2.5
    assert scaled.clip.__wrapped__.__code__.co_code == original.clip.__code__.co_code      # the student's own code runs
    assert scaled.clip.__name__ == "clip" and "missing" not in vars(scaled)
    assert _line_of("LAST", replace_body(source, "clip", Scaled(2.5))) == _line_of("LAST", source)
    assert replace_body(b"def clip(grads, max_norm:\n", "clip", Scaled(2.0)) == b"def clip(grads, max_norm:\n"
