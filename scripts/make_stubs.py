"""Generate the student stubs in assignments/ from the reference solutions.

Every `### BEGIN SOLUTION` ... `### END SOLUTION` block (nbgrader's markers) inside a
function becomes `raise NotImplementedError("<function>: fill in the TODO above")` at the
block's indentation, where <function> is the enclosing `def`; a block at module level
(a solution-only helper) is dropped. Everything else (docstrings, the `# TODO:` comments,
imports, given helpers) is kept as written.

    python scripts/make_stubs.py           # write assignments/<assignment>/*.py
    python scripts/make_stubs.py --check   # exit 1 when the committed stubs differ
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ASSIGNMENT = "rnn_prehistory"
SOLUTIONS = REPO / "solutions" / ASSIGNMENT
STUBS = REPO / "assignments" / ASSIGNMENT
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
HEADER = ("# Generated from solutions/{assignment}/{name} by scripts/make_stubs.py.\n"
          "# Students: fill in every TODO below. Instructors: edit the solution, then run `make stubs`.\n")
_DEF = re.compile(r"^(\s*)def\s+(\w+)\s*\(")


class MarkerError(ValueError):
    pass


def stub_source(source: str, name: str = "<solution>") -> str:
    """The student version of one solution module."""
    out: list[str] = []
    functions: list[tuple[int, str]] = []      # (indent, name) of enclosing defs
    inside = False
    for lineno, line in enumerate(source.splitlines(keepends=True), 1):
        stripped = line.strip()
        if inside:
            if stripped == END:
                inside = False
            elif BEGIN in stripped:
                raise MarkerError(f"{name}:{lineno}: nested {BEGIN}")
            continue
        m = _DEF.match(line)
        if m:
            indent = len(m.group(1))
            functions = [f for f in functions if f[0] < indent] + [(indent, m.group(2))]
        if stripped == BEGIN:
            indent = line[: len(line) - len(line.lstrip())]
            enclosing = [f for f in functions if f[0] < len(indent)]
            if enclosing:
                out.append(f'{indent}raise NotImplementedError("{enclosing[-1][1]}: fill in the TODO above")\n')
            elif indent:
                raise MarkerError(f"{name}:{lineno}: indented {BEGIN} outside a function")
            inside = True
            continue
        if END in stripped or BEGIN in stripped:
            raise MarkerError(f"{name}:{lineno}: unmatched or misplaced solution marker")
        out.append(line)
    if inside:
        raise MarkerError(f"{name}: {BEGIN} without {END}")
    # A dropped module-level block leaves two blank runs behind: keep PEP 8's two lines.
    return HEADER.format(assignment=ASSIGNMENT, name=name) + re.sub(r"\n{4,}", "\n\n\n", "".join(out))


def expected_stubs() -> dict[str, str]:
    return {p.name: stub_source(p.read_text(), p.name) for p in sorted(SOLUTIONS.glob("*.py"))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report drift instead of writing")
    args = parser.parse_args(argv)
    stubs = expected_stubs()
    if args.check:
        drift = [n for n, text in stubs.items() if not (STUBS / n).exists() or (STUBS / n).read_text() != text]
        extra = sorted(p.name for p in STUBS.glob("*.py") if p.name not in stubs)
        for n in drift:
            print(f"stale stub: assignments/{ASSIGNMENT}/{n} (run `make stubs`)")
        for n in extra:
            print(f"stub without a solution: assignments/{ASSIGNMENT}/{n}")
        return 1 if drift or extra else 0
    STUBS.mkdir(parents=True, exist_ok=True)
    for n, text in stubs.items():
        (STUBS / n).write_text(text)
    print(f"wrote {len(stubs)} stubs to assignments/{ASSIGNMENT}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
