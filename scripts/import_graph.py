"""The engine's import graph, read from the source (ast: nothing is imported or run).

    python scripts/import_graph.py            the cycles (none, or each one), and every import
                                              made inside a function, with the comment that says why

An edge is any `import` of a module of this package, at module level or inside a function
(a lazy import still closes a cycle when it runs); importing a.b.c also imports the packages
a and a.b, unless the importer is inside them (then they are loaded already). Imports under `if TYPE_CHECKING:` run never and are
left out. tests/engine/test_layering.py asserts that there is no cycle and that every import
inside a function of the engine says why it is there.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "autograder"
ROOT = PACKAGE.name


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _repository_test(path: Path) -> bool:
    """A topic's oracle test or valid alternative (units/<unit>/topics/<topic>/): the
    repository's own tests, kept beside the topic, never loaded by the grader."""
    parts = path.relative_to(PACKAGE).parts
    return "topics" in parts and (path.name == "test_oracle.py" or "alternatives" in parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if not _repository_test(p)}


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(path: Path, name: str, known) -> list[tuple[str, int, bool]]:
    """(imported module of this package, line, made inside a function) for each import in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def target(module: str) -> str | None:
        while module and module not in known:          # `from a.b import c` where c is a name: a.b
            module = module.rpartition(".")[0]
        return module or None

    def visit(node, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking_only(child):
                for other in child.orelse:
                    visit(other, in_function)
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((t, child.lineno, in_function) for a in child.names
                             if a.name.split(".")[0] == ROOT and (t := target(a.name)))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - child.level + 1]
                                    + ([child.module] if child.module else []))
                if base.split(".")[0] != ROOT:
                    continue
                for a in child.names:
                    t = target(f"{base}.{a.name}") if f"{base}.{a.name}" in known else target(base)
                    if t:
                        found.append((t, child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    edges: dict[str, set[str]] = {m: set() for m in known}
    for name, path in known.items():
        for target, _line, _inner in imports(path, name, known):
            parts = target.split(".")
            for depth in range(1, len(parts) + 1):
                module = ".".join(parts[:depth])
                if module in known and module != name and not name.startswith(module + "."):
                    edges[name].add(module)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return found


def imports_in_functions(prefix: str = ROOT) -> list[tuple[str, int, str]]:
    """(module, line, the comment on that line or above its group of imports: "" when there
    is none) of every import of this package made inside a function, in modules under `prefix`."""
    known = modules()
    rows = []
    for name, path in known.items():
        if not (name == prefix or name.startswith(prefix + ".")):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for _target, line, inner in imports(path, name, known):
            if inner:
                why = lines[line - 1].partition("#")[2].strip()
                if not why or why.startswith("noqa"):
                    above = line - 2            # up over the imports (and blank lines) of the same group
                    while above >= 0 and (not lines[above].strip() or lines[above].lstrip().startswith(
                            ("import ", "from "))):
                        above -= 1
                    why = lines[above].strip()[1:].strip() if above >= 0 and lines[above].strip().startswith("#") else ""
                rows.append((name, line, why))
    return sorted(set(rows))


def main() -> int:
    edges = graph()
    found = cycles(edges)
    print(f"{len(edges)} modules, {sum(map(len, edges.values()))} imports between them: "
          + ("no cycle" if not found else f"{len(found)} cycle(s)"))
    for component in found:
        print("  cycle: " + " <-> ".join(component))
    print("imports inside functions:")
    for name, line, why in imports_in_functions():
        print(f"  {name}:{line}  {why or '(no comment)'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
