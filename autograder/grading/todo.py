"""Which functions of a submitted module still raise the stub's NotImplementedError.

Read from the file's syntax tree (ast.parse runs nothing), so that a report lists every
function left to do, not only those a failing test happened to reach first."""

from __future__ import annotations

import ast
from pathlib import Path

from autograder.intake.files import read_regular


def _raises_not_implemented(node: ast.AST) -> bool:
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def unfinished(module_file: Path) -> list[str]:
    """Public top-level functions of `module_file` with a `raise NotImplementedError`, in file order."""
    data = read_regular(Path(module_file))     # a FIFO or a link in the submission is never read
    if data is None or b"NotImplementedError" not in data:     # finished: no tree to build
        return []
    try:
        tree = ast.parse(data.decode("utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return []
    last = {node.name: node for node in tree.body              # a later def of a name replaces an earlier one
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_")}
    return [name for name, node in last.items() if any(_raises_not_implemented(n) for n in ast.walk(node))]
