"""The student stubs, generated from the reference solutions (`python -m autograder build`).

Every block between nbgrader's solution markers (`BEGIN SOLUTION` ... `END SOLUTION`) inside a
function becomes `raise NotImplementedError("<function>: fill in the TODO above")` at the
block's indentation, where <function> is the enclosing `def`; a block at module level
(a solution-only helper) is dropped. Everything else (docstrings, the `# TODO:` comments,
imports, given helpers) is kept as written.

Stubs are bilingual: below each public function's docstring summary and each `# TODO:`
comment comes its Chinese translation from the unit's catalogue (the catalogues are merged
first, autograder.authoring.catalogues; a text without a translation gets no second line,
and `check` fails).

It never destroys work: a stub whose text is neither what it generated last time (the
record in .generated.json beside the stubs) nor what it would generate now was edited,
e.g. by a student (`edited_stubs`); `build` refuses to overwrite it unless --force.
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path

from autograder import i18n
from autograder.unit.load import load_unit

REPO = Path(__file__).resolve().parents[2]   # the checkout (a source install)

# Not written out: the engine ships in the student release, whose leak check refuses the literal markers.
BEGIN, END = "### " + "BEGIN SOLUTION", "### " + "END SOLUTION"
HEADER = ("# Generated from {solution} by scripts/make_stubs.py.\n"
          "# Students: fill in every TODO below. Instructors: edit the solution, then run `make stubs`.\n"
          "# 同学们：请完成下面的每个 TODO（每条英文说明下面都有中文）。\n")
TODO = re.compile(r"^(\s*)# TODO: (.+)$")
_DEF = re.compile(r"^(\s*)def\s+(\w+)\s*\(")


class MarkerError(ValueError):
    pass


def summary(docstring: str) -> str:
    """A docstring's first paragraph on one line (the msgid the catalogues extract)."""
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
            end = doc.end_lineno or doc.lineno
            if doc.lineno == end:
                continue                      # a one-line docstring: nowhere to add a line
            zh = translate(summary(ast.get_docstring(node) or ""))
            first = doc.lineno - 1
            last = next((i - 1 for i in range(first + 1, end) if not lines[i].strip()), end - 2)
            indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
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
            depth = len(m.group(1))
            functions = [f for f in functions if f[0] < depth] + [(depth, m.group(2))]
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


def repo_root(unit) -> Path:
    """The checkout a unit's `stubs` (and its course) are relative to: this repository for a
    unit inside it, else the folder that holds the unit (a repository laid out like this one:
    NAME/, solutions/NAME/, assignments/NAME/)."""
    return REPO if unit.path.resolve().is_relative_to(REPO) else unit.path.resolve().parent


def _unit(unit):
    return unit if hasattr(unit, "topics") else load_unit(unit)


def folders(unit=None) -> tuple[Path, Path]:
    """(reference folder, stub folder) of a unit (a Unit, its name or its path)."""
    unit = _unit(unit)
    return unit.dirs["reference"], repo_root(unit) / unit.stubs


def chinese(unit=None):
    """text -> its Chinese translation in the unit's catalogue ("" when there is none)."""
    table = i18n.unit_translations(_unit(unit).locale_dirs(), "zh")
    return lambda text: table.get(text, "")


def expected_stubs(unit=None, translate=None) -> dict[str, str]:
    """module file name -> the text of its stub (bilingual, from the unit's catalogues or `translate`)."""
    unit = _unit(unit)
    solutions, _ = folders(unit)
    root = repo_root(unit)
    origin = solutions.resolve().relative_to(root) if solutions.resolve().is_relative_to(root) else solutions.name
    translate = translate or chinese(unit)
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
