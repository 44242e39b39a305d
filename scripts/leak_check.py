"""The leak check of a student release: nothing secret reaches `dist/student/`.

    python scripts/leak_check.py dist/student [--unit NAME|PATH] [--graft]   # exit 1 on a leak

It looks, in every file of the release, for (lines compared whole, stripped):
- a line of the reference solution inside a solution block (25 characters or more),
  unless the stubs give it (an equation in a docstring);
- a solution or hidden-test marker (nbgrader's `### BEGIN SOLUTION`, `### BEGIN HIDDEN TESTS`);
- the name of a hidden test;
- a line of a secret file of the unit (hidden suites, the lab's experiments: their inputs
  and tables; the topics' oracle tests, mutants and alternatives), 25 characters or more, unless the same line is in a file that is meant to
  ship (a shared import line is not a leak).

Those are lines of text. With --graft it also runs the graft check (`scripts/graft_check.py`,
eight gradings): every function of the release's public tests, grafted in place of the
stubs, must earn no hidden point (a public test that computes what a graded function
returns hands out a working implementation, whatever its lines look like).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

MIN_LINE = 25
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
SOLUTION_BLOCK = re.compile(r"### BEGIN SOLUTION\n(.*?)\n\s*### END SOLUTION", re.S)


def _lines(text: str) -> set[str]:
    return {s for s in (line.strip() for line in text.splitlines()) if len(s) >= MIN_LINE}


def _text_files(root: Path):
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts:
            try:
                yield path, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                yield path, path.read_bytes().decode("latin-1")


def _py_lines(files) -> set[str]:
    return {line for f in files for line in _lines(f.read_text())}


def secret_material(unit) -> dict[str, set[str]]:
    """What must not ship: reference lines, hidden test names, secret-file lines.

    A reference line that the stubs themselves hold (an equation in a docstring) is given
    by design; a secret-file line that a shipped source holds too (a shared import, the
    list of signal names) is not a leak."""
    stubs = sorted((REPO / unit.stubs).rglob("*.py"))
    reference = set()
    for module in sorted(unit.dirs["reference"].glob("*.py")):
        for block in SOLUTION_BLOCK.findall(module.read_text()):
            reference |= {s for s in _lines(block) if not s.startswith("#")}
    hidden_names, secret = set(), set()
    hidden_suites = {unit.test_file(t.id, "hidden") for t in unit.topics}
    for f in unit.secret_files():
        if f.suffix not in (".py", ".yaml"):
            continue
        text = f.read_text()
        if f in hidden_suites:
            hidden_names |= {n.name for n in ast.parse(text).body
                             if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
        if unit.dirs["reference"].resolve() not in f.resolve().parents:
            secret |= _lines(text)
    engine = [f for f in (REPO / "autograder").rglob("*.py") if "units" not in f.relative_to(REPO / "autograder").parts]
    engine.append(REPO / "autograder" / "units" / "__init__.py")     # shipped: it registers units by name
    unit_public = [f for f in unit.path.rglob("*.py")
                   if f.relative_to(unit.path).parts[0] != "public" and not unit.is_secret(f.relative_to(unit.path))]
    shipped = _py_lines(engine + unit_public + stubs)
    return {"reference": reference - _py_lines(stubs), "hidden_names": hidden_names, "secret_lines": secret - shipped}


def check(release: Path, unit) -> list[str]:
    material = secret_material(unit)
    names = re.compile(r"\b(" + "|".join(map(re.escape, sorted(material["hidden_names"]))) + r")\b") \
        if material["hidden_names"] else None
    problems = []
    for path, text in _text_files(release):
        where = path.relative_to(release)
        lines = _lines(text)
        problems += [f"{where}: solution or hidden marker {m!r}" for m in MARKERS if m in text]
        problems += [f"{where}: reference line {line!r}" for line in sorted(material["reference"] & lines)]
        problems += [f"{where}: line of a secret file {line!r}" for line in sorted(material["secret_lines"] & lines)]
        if names:
            problems += [f"{where}: hidden test name {m!r}" for m in sorted(set(names.findall(text)))]
    return problems


def main(argv=None) -> int:
    sys.path.insert(0, str(REPO))
    from autograder.unit.load import load_unit

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("release", type=Path)
    p.add_argument("--unit", "--assignment", dest="unit", default=None)
    p.add_argument("--graft", action="store_true", help="also graft the public tests' functions and grade them")
    args = p.parse_args(argv)
    problems = check(args.release, load_unit(args.unit))
    for problem in problems[:50]:
        print(f"leak: {problem}")
    print(f"leak check of {args.release}: {'FAILED, ' + str(len(problems)) + ' leak(s)' if problems else 'clean'}")
    if args.graft:
        import graft_check

        grafted = graft_check.main([str(args.release), *(["--unit", args.unit] if args.unit else [])])
        return 1 if problems or grafted else 0
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
