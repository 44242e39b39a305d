"""Generate the student stubs in assignments/ from the reference solutions.

Every `### BEGIN SOLUTION` ... `### END SOLUTION` block (nbgrader's markers) inside a
function becomes `raise NotImplementedError("<function>: fill in the TODO above")` at the
block's indentation, where <function> is the enclosing `def`; a block at module level
(a solution-only helper) is dropped. Everything else (docstrings, the `# TODO:` comments,
imports, given helpers) is kept as written.

Stubs are bilingual: below each public function's docstring summary and each `# TODO:`
comment comes its Chinese translation from the unit's catalogue (`make i18n` extracts those
texts; a text without a translation gets no second line, and tests/engine/test_i18n.py fails).

    python scripts/make_stubs.py [--assignment NAME|PATH]   # write the unit's stub folder
    python scripts/make_stubs.py --check                     # exit 1 when the committed stubs differ

It never destroys work: a stub whose text is neither what it generated last time (the
record in .generated.json beside the stubs) nor what it would generate now was edited,
e.g. by a student; it refuses to overwrite it unless --force, which keeps a .bak copy.

The unit (default: the only one installed) names its reference folder and, in `stubs`,
the folder of the stubs relative to the repository root.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
HEADER = ("# Generated from {solution} by scripts/make_stubs.py.\n"
          "# Students: fill in every TODO below. Instructors: edit the solution, then run `make stubs`.\n"
          "# 同学们：请完成下面的每个 TODO（每条英文说明下面都有中文）。\n")
TODO = re.compile(r"^(\s*)# TODO: (.+)$")
_DEF = re.compile(r"^(\s*)def\s+(\w+)\s*\(")


class MarkerError(ValueError):
    pass


def summary(docstring: str) -> str:
    """A docstring's first paragraph on one line (the msgid scripts/i18n.py extracts)."""
    return " ".join(docstring.strip().split("\n\n")[0].split())


def todo_comments(lines: list[str]) -> list[tuple[int, int, str, str]]:
    """(first line, last line, indent, text on one line) of every `# TODO:` comment; a
    comment goes on over the following `#` lines of the same indent (not a marker)."""
    found = []
    for i, line in enumerate(lines):
        m = TODO.match(line.rstrip("\n"))
        if not m:
            continue
        indent, parts, end = m.group(1), [m.group(2).strip()], i
        while end + 1 < len(lines):
            nxt = lines[end + 1].rstrip("\n")
            if not nxt.startswith(indent + "# ") or nxt.strip().startswith(("###", "# TODO")):
                break
            parts.append(nxt.strip()[2:].strip())
            end += 1
        found.append((i, end, indent, " ".join(parts)))
    return found


def _wrap_chinese(text: str, width: int = 60) -> list[str]:
    """Chinese text in lines of at most `width` characters, broken after punctuation where possible."""
    out = []
    while len(text) > width:
        cut = max((text.rfind(p, 0, width) for p in "，；：。、 "), default=-1)
        cut = cut + 1 if cut > width // 2 else width
        out.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    return out + ([text] if text else [])


def bilingual(source: str, translate) -> str:
    """`source` with the Chinese line(s) `translate(text)` gives (or "") below each public
    function's docstring summary and each `# TODO:` comment."""
    lines = source.splitlines(keepends=True)
    after: dict[int, list[str]] = {}         # 0-based line index -> lines to insert after it
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and ast.get_docstring(node):
            doc = node.body[0]
            if doc.lineno == doc.end_lineno:
                continue                      # a one-line docstring: nowhere to add a line
            zh = translate(summary(ast.get_docstring(node)))
            first = doc.lineno - 1
            last = next((i - 1 for i in range(first + 1, doc.end_lineno) if not lines[i].strip()), doc.end_lineno - 2)
            indent = re.match(r"\s*", lines[first]).group(0)
            after.setdefault(last, []).extend(f"{indent}{part}\n" for part in _wrap_chinese(zh, 70))
    for _first, last, indent, text in todo_comments(lines):
        zh = _wrap_chinese(f"TODO（中文）：{translate(text)}") if translate(text) else []
        after.setdefault(last, []).extend(f"{indent}# {part}\n" for part in zh)
    return "".join(line + "".join(after.get(i, [])) for i, line in enumerate(lines))


def stub_source(source: str, name: str = "<solution>", origin: str | None = None, translate=None) -> str:
    """The student version of one solution module (bilingual when `translate` is given)."""
    if translate is not None:
        source = bilingual(source, translate)
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
    return HEADER.format(solution=origin or name) + re.sub(r"\n{4,}", "\n\n\n", "".join(out))


def folders(unit_name=None) -> tuple[Path, Path]:
    """(reference folder, stub folder) of a unit."""
    from autograder.unit.load import load_unit

    unit = load_unit(unit_name)
    return unit.dirs["reference"], REPO / unit.stubs


def chinese(unit_name=None):
    """text -> its Chinese translation in the unit's catalogue ("" when there is none)."""
    from autograder import i18n
    from autograder.unit.load import load_unit

    table = i18n.unit_translations(load_unit(unit_name).locale_dirs(), "zh")
    return lambda text: table.get(text, "")


def expected_stubs(unit_name=None) -> dict[str, str]:
    solutions, _ = folders(unit_name)
    origin = solutions.resolve().relative_to(REPO) if solutions.resolve().is_relative_to(REPO) else solutions.name
    translate = chinese(unit_name)
    return {p.name: stub_source(p.read_text(), p.name, f"{origin}/{p.name}", translate)
            for p in sorted(solutions.glob("*.py"))}


RECORD = ".generated.json"     # sha256 of every stub as last generated, beside the stubs


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def edited_stubs(folder: Path, stubs: dict[str, str]) -> list[str]:
    """Stubs whose text is neither what was generated last time nor what would be generated
    now: someone's work (a student's code), which regeneration must not destroy."""
    try:
        record = json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        record = {}
    edited = []
    for name, text in stubs.items():
        path = folder / name
        if path.exists():
            current = _digest(path.read_text())
            if current not in (record.get(name), _digest(text)):
                edited.append(name)
    return edited


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report drift instead of writing")
    parser.add_argument("--force", action="store_true",
                        help="overwrite stubs that were edited since they were generated (keeps a .bak copy)")
    parser.add_argument("--assignment", default=None, metavar="NAME|PATH", help="the unit (default: the only one)")
    args = parser.parse_args(argv)
    stubs = expected_stubs(args.assignment)
    _, folder = folders(args.assignment)
    where = folder.relative_to(REPO) if folder.is_relative_to(REPO) else folder
    record = json.dumps({n: _digest(text) for n, text in stubs.items()}, indent=1, sort_keys=True) + "\n"
    if args.check:
        drift = [n for n, text in stubs.items() if not (folder / n).exists() or (folder / n).read_text() != text]
        extra = sorted(p.name for p in folder.glob("*.py") if p.name not in stubs)
        for n in drift:
            print(f"stale stub: {where}/{n} (run `make stubs`)")
        for n in extra:
            print(f"stub without a solution: {where}/{n}")
        stale_record = not (folder / RECORD).exists() or (folder / RECORD).read_text() != record
        if stale_record:
            print(f"stale record: {where}/{RECORD} (run `make stubs`)")
        return 1 if drift or extra or stale_record else 0
    edited = edited_stubs(folder, stubs)
    if edited and not args.force:
        print(f"make stubs: not overwriting {len(edited)} stub(s) that were edited since they were generated "
              f"(someone's work?): {', '.join(f'{where}/{n}' for n in edited)}. Nothing was written. "
              "Run `python scripts/make_stubs.py --force` to overwrite them; a .bak copy of each is kept.",
              file=sys.stderr)
        return 1
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in edited:
        backup = folder / f"{n}.bak-{stamp}"
        shutil.copyfile(folder / n, backup)
        print(f"kept your version of {where}/{n} as {backup.name}")
    for n, text in stubs.items():
        (folder / n).write_text(text)
    (folder / RECORD).write_text(record)
    print(f"wrote {len(stubs)} stubs to {where}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
