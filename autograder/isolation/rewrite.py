"""A copy of a student module in which one function has other code, for a worker of its own.

A run that must not know it is being tested (the fault-injection lab with a broken
primitive) imports a module whose function *is* the broken one from the start: the
student's own `def` makes it, so its identity, `__module__`, `__name__`, `__qualname__`,
`__doc__`, signature and line numbers are those of the student's function, and the module
source on the worker's disk is the code that runs. Only the statements of the body after
the docstring change; every other line keeps its number.

A `Scaled` function is instead the student's own, its result multiplied by a factor: lines
appended at the end of the module rebind the name to a wrapper (the student's code runs;
every line keeps its number). Student code can tell either kind of copy from its own (its
source, its code objects, a call on an input whose answer it knows): a check built on these
runs must hold whatever the student can tell, by the numbers each run measures (issue 37).

The grader parses the student's source here (never runs it): a file that does not parse
does not import in the worker either, and is left as it is.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Body:
    """A function body on one line: `params` binds the canonical parameter names (name,
    default used when the student's function has no such parameter), then `line` runs
    (simple statements separated by "; ", ending with a return)."""

    params: tuple[tuple[str, str], ...]
    line: str


@dataclass(frozen=True)
class Scaled:
    """The student's own function, every number of its result (arrays, floats, the items of
    tuples, lists and dicts) multiplied by `factor`."""

    factor: float


# Appended to the module: the wrapper's scaling, by the result's structure (what is not a number stays).
_SCALER = """

def _scaled_result(value, factor):
    if isinstance(value, dict):
        return {key: _scaled_result(item, factor) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_scaled_result(item, factor) for item in value)
    try:
        return __import__("numpy").multiply(value, factor)
    except TypeError:
        return value
"""


def _compiled_scaler():
    namespace: dict = {}
    exec(_SCALER, namespace)  # noqa: S102 - our own text, the one appended to the worker's copy
    return namespace["_scaled_result"]


# The wrapper's scaling in the grader's process (the procedure's scaled primitive): the same code.
scaled_result = _compiled_scaler()


def _scale_result(text: str, function: str, scaled: Scaled) -> bytes:
    """`text` with lines appended that rebind `function` (when the module defines it) to the
    same function with its result scaled."""
    if "\ndef _scaled_result(" not in text:
        text = text.rstrip("\n") + "\n" + _SCALER
    text += (f"\nif callable(globals().get({function!r})):\n"
             f"    {function} = __import__('functools').wraps({function})("
             f"lambda *args, _own={function}, **kwargs: _scaled_result(_own(*args, **kwargs), {float(scaled.factor)!r}))\n")
    return text.encode()


def _bindings(node: ast.FunctionDef, params) -> str:
    """`a, b = x, y` from the student's parameter names (x, y) to the body's (a, b)."""
    positional = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    extra = node.args.vararg.arg if node.args.vararg else None
    values = []
    for i, (_name, default) in enumerate(params):
        if i < len(positional):
            values.append(positional[i])
        elif extra:
            values.append(f"({extra}[{i - len(positional)}] if len({extra}) > {i - len(positional)} else {default})")
        else:
            values.append(default)
    names = [name for name, _default in params]
    if names == values:
        return ""
    return f"{', '.join(names)}, = {', '.join(values)},; "


def replace_body(source: bytes, function: str, body: Body | Scaled) -> bytes:
    """`source` with the last top-level `def function` running `body` instead of its own
    statements (its docstring and decorators kept); without such a def, the function is
    defined at the end of the module. A `Scaled` body keeps the student's function and
    scales its result."""
    text = source.decode("utf-8", "replace")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return source
    if isinstance(body, Scaled):
        return _scale_result(text, function, body)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    if not defs:
        names = ", ".join(f"{name}={default}" for name, default in body.params)
        return (text.rstrip("\n") + f"\n\n\ndef {function}({names}):\n    {body.line}\n").encode()
    node = defs[-1]
    lines = text.splitlines(keepends=True)
    statements = node.body
    has_doc = (isinstance(statements[0], ast.Expr) and isinstance(statements[0].value, ast.Constant)
               and isinstance(statements[0].value.value, str))
    code = _bindings(node, body.params) + body.line
    rest = statements[1:] if has_doc else statements
    last = node.end_lineno                           # 1-based, inclusive
    assert last is not None                          # set on every node ast.parse makes
    if rest:
        first = rest[0]
        head = _cut(lines[first.lineno - 1], first.col_offset)
        if head.strip():                             # `def f(x): stmt` or `"""doc"""; stmt` on one line
            code = head.rstrip().rstrip(";") + ("; " if has_doc else " ") + code
        else:
            code = head + code
        lines[first.lineno - 1:last] = [code + "\n", *["\n"] * (last - first.lineno)]
    else:                                            # a docstring only (a stub): run after it, same line
        doc = statements[0]
        assert doc.end_lineno is not None and doc.end_col_offset is not None    # as `last` above
        end_line = lines[doc.end_lineno - 1]
        head = _cut(end_line, doc.end_col_offset)
        lines[doc.end_lineno - 1] = head + "; " + code + end_line[len(head):]
    return "".join(lines).encode()


def _cut(line: str, byte_offset: int) -> str:
    """The start of `line` up to a column that ast counts in UTF-8 bytes."""
    return line.encode("utf-8")[:byte_offset].decode("utf-8", "replace")
