"""The engine's layering cannot regress: the import contracts of pyproject.toml hold
(`lint-imports`: layers, commands independent of each other, the engine names no unit, the
worker loads nothing secret), the import graph has no cycle, and every import made inside a
function says why it is there (start-up speed), so none exists only to break a cycle."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from helpers import REPO

BIN = Path(sys.executable).parent


def _import_graph():
    spec = importlib.util.spec_from_file_location("import_graph", REPO / "scripts" / "import_graph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_import_contracts_hold():
    proc = subprocess.run([str(BIN / "lint-imports"), "--no-cache"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_the_import_graph_has_no_cycle():
    graph = _import_graph()
    edges = graph.graph()
    assert "autograder.cli" in edges and "autograder.pipeline" in edges["autograder.commands.grade"]
    assert graph.cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle():
    # The check above can fail: a circle of three modules beside one outside it.
    graph = _import_graph()
    assert graph.cycles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [["a", "b", "c"]]


def test_every_import_inside_a_function_says_why():
    unexplained = [f"{module}:{line}" for module, line, why in _import_graph().imports_in_functions() if not why]
    assert unexplained == [], "a lazy import needs a comment saying why (start-up speed), else belongs at the top"


def test_only_the_chosen_commands_module_is_imported(tmp_path):
    # `python -m autograder merge` with nothing to merge: the grader cannot run (exit 2), and
    # it imported the merge command alone.
    code = ("import json, sys; from autograder.cli import main; status = main(sys.argv[1:]); "
            "print(json.dumps([status, sorted(m for m in sys.modules if m.startswith('autograder.commands.'))]))")
    proc = subprocess.run([sys.executable, "-c", code, "merge", str(tmp_path), "--out", str(tmp_path / "out")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    status, commands = json.loads(proc.stdout.strip().splitlines()[-1])
    assert status == 2 and "holds no class.shardKofN.csv" in proc.stderr
    assert commands == ["autograder.commands.merge"]


def test_the_grader_could_not_run_is_one_family():
    """A broken unit folder or rubric is a GraderError (exit 2), so a command catches the
    family by its base alone: no handler names a kind beside it, which would let a kind
    that is not a GraderError pass unnoticed."""
    import ast

    from autograder.errors import GraderError
    from autograder.unit.model import UnitError
    from autograder.unit.rubric import RubricError

    assert issubclass(UnitError, GraderError) and issubclass(RubricError, GraderError)
    assert issubclass(UnitError, ValueError) and issubclass(RubricError, ValueError)   # as they were
    named = []
    for path in sorted((REPO / "autograder").rglob("*.py")):
        if "units" in path.relative_to(REPO / "autograder").parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                names = {n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)}
                if names & {"UnitError", "RubricError"}:
                    named.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert named == [], "catch GraderError, the base of UnitError and RubricError"
