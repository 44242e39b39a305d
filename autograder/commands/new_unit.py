"""`python -m autograder new-unit NAME [--dest DIR]`: scaffold a unit that grades and checks.

The scaffold is the smallest complete unit, laid out as the shipped one — one topic, one
function, a public and a hidden test, a kill matrix, the translations, a reference solution with
nbgrader's markers — and `build` then writes the stub, the catalogues and the nbgrader course
from it, so an author starts from something that already grades a correct and a wrong
submission and passes `python -m autograder check DIR/NAME`, and replaces its pieces one at a
time (docs/AUTHORING.md says what each is). Files written by hand, and `build`'s:

    DIR/NAME/unit.yaml                         the manifest (read through unit.model.MANIFEST_KEYS)
    DIR/NAME/topics/doubling/topic.yaml        the topic: module, functions, summary (unit.model.TOPIC_KEYS)
    DIR/NAME/topics/doubling/rubric.yaml       title, points, visibility and hint of each test
    DIR/NAME/topics/doubling/test_hidden.py    the hidden suite (compares with the reference)
    DIR/NAME/topics/doubling/mutants.yaml      the kill matrix: wrong versions it catches, clauses
    DIR/NAME/topics/doubling/alternatives/     a valid other version it passes
    DIR/NAME/topics/doubling/locale/, locale/  the Chinese of every text (build merges new ones in)
    DIR/NAME/helpers/__init__.py               the unit's own code, importable as autograder.units.NAME
    DIR/NAME/reference -> ../solutions/NAME    (links, as in the shipped unit)
    DIR/NAME/public -> ../assignments/NAME/tests
    DIR/solutions/NAME/doubler.py              the reference solution, the student's part between markers
    DIR/assignments/NAME/tests/test_doubling.py  the public test (students run it), and its conftest.py
    DIR/assignments/NAME/doubler.py            the stub (build), DIR/course/ the nbgrader course (build)
"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.authoring import scaffold as files
from autograder.authoring.build import build
from autograder.unit.load import load_unit

TOPIC, MODULE = "doubling", "doubler"


def scaffold(name: str, dest: Path) -> Path:
    """Write the unit `name` into dest/name (its solutions and assignments beside it), then
    build it; refuse to write over an existing folder."""
    if not name.isidentifier():
        raise ValueError(f"the unit's name {name!r} must be a Python identifier (it is imported by that name)")
    unit = dest / name
    taken = [p for p in (unit, dest / "solutions" / name, dest / "assignments" / name) if p.exists()]
    if taken:
        raise FileExistsError(f"{taken[0]} already exists: choose another name or folder")
    files.write(dest, files.unit_files(name) | files.topic_files(name, TOPIC, MODULE, order=1))
    files.link(unit)
    build([load_unit(unit)], say=lambda _line: None)
    return unit


def run(args) -> int:
    try:
        unit = scaffold(args.name, args.dest)
    except (ValueError, FileExistsError) as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    stubs = unit.parent / "assignments" / unit.name
    print(f"wrote {unit}: grade its stub with\n"
          f"  python -m autograder grade {stubs} --unit {unit}\n"
          f"check it with\n  python -m autograder check {unit}\n"
          f"then replace the topic with your own (docs/AUTHORING.md).")
    return 0
