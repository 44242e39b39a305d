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

import os
import sys
import textwrap
from pathlib import Path

from autograder.authoring.build import build
from autograder.unit.load import load_unit

TOPIC, MODULE = "doubling", "doubler"
# nbgrader's solution markers, not written out: the engine ships in the student release, whose
# leak check refuses any file holding the literal markers (a solution line would follow them).
BEGIN, END = "### " + "BEGIN SOLUTION", "### " + "END SOLUTION"
PO_HEAD = 'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\nLanguage: zh_CN\\n"\n\n'
LINKS = {"reference": "../solutions/{name}", "public": "../assignments/{name}/tests"}


def _po(pairs: dict[str, str]) -> str:
    return PO_HEAD + "".join(f'msgid "{en}"\nmsgstr "{zh}"\n\n' for en, zh in pairs.items())


def files(name: str) -> dict[str, str]:
    """The scaffold's files, relative to the folder that holds the unit."""
    return {
        f"{name}/unit.yaml": f"""
            name: {name}
            title: {name.replace("_", " ").capitalize()}
            # Where students find the stubs in their checkout (build writes them there).
            stubs: assignments/{name}
            limits: {{call_cpu_s: 5, import_cpu_s: 10, memory_mb: 512, cpu_s: 60}}
            preload: [math, numpy]
            # Never shipped to students (glob patterns, relative to this folder).
            secret: [reference, topics/*/test_hidden.py, topics/*/mutants.yaml, topics/*/alternatives]
        """,
        f"{name}/__init__.py": "",
        f"{name}/topics/__init__.py": "",
        f"{name}/topics/{TOPIC}/__init__.py": "",
        f"{name}/topics/{TOPIC}/topic.yaml": f"""
            order: 1
            module: {MODULE}
            summary: twice a number
            functions:
              double: {{}}
        """,
        f"{name}/topics/{TOPIC}/rubric.yaml": f"""
            topic: {TOPIC}
            title: Doubling a number
            points: 3
            tests:
              - {{test: test_double_of_two, visibility: public, points: 1, hint: "double(2) is 4."}}
              - {{test: test_double_matches_reference, visibility: hidden, points: 2, hint: "Multiply by two."}}
        """,
        f"{name}/topics/{TOPIC}/test_hidden.py": f"""
            from autograder.i18n import _
            from autograder.units.{name}.helpers import SAMPLES   # the unit's own code, by its package name


            def test_double_matches_reference({MODULE}, reference, rng):
                for x in rng.normal(size=SAMPLES):
                    expected = reference.{MODULE}.double(float(x))
                    assert {MODULE}.double(float(x)) == expected, _("double({{x}}) is wrong").format(x=f"{{x:.3f}}")
        """,
        f"{name}/topics/{TOPIC}/mutants.yaml": f"""
            topic: {TOPIC}
            mutants:        # wrong versions: edits of solutions/{name}/{MODULE}.py (all right at x = 2)
              - {{name: square, misconception: squares x, replace: [["return 2 * x", "return x * x"]],
                 killed_by: [hidden::test_double_matches_reference]}}
              - {{name: plus_two, misconception: adds 2, replace: [["return 2 * x", "return x + 2"]],
                 killed_by: [hidden::test_double_matches_reference]}}
              - {{name: power_of_two, misconception: raises 2 to x, replace: [["return 2 * x", "return 2 ** x"]],
                 killed_by: [hidden::test_double_matches_reference]}}
            alternatives:   # valid versions: whole modules the suites must pass
              - {{name: by_addition, file: alternatives/{MODULE}_by_addition.py}}
            clauses:        # what the docstring promises, and the mutants that break it
              - {{function: double, kind: output, clause: "returns 2 x", test: hidden::test_double_matches_reference,
                 mutants: [square, plus_two, power_of_two]}}
        """,
        f"{name}/topics/{TOPIC}/alternatives/{MODULE}_by_addition.py": '''
            def double(x):
                """Twice x."""
                return x + x
        ''',
        f"{name}/topics/{TOPIC}/locale/zh_CN/LC_MESSAGES/unit.po": _po({
            "Doubling a number": "把一个数加倍", "double(2) is 4.": "double(2) 等于 4。",
            "Multiply by two.": "乘以二。", "double({x}) is wrong": "double({x}) 的结果不对",
            "double(2) should be 4": "double(2) 应该等于 4", "Twice x.": "x 的两倍。",
            "return twice x.": "返回 x 的两倍。"}),
        f"{name}/locale/zh_CN/LC_MESSAGES/unit.po": _po({"Signals": "信号"}),
        f"{name}/helpers/__init__.py": """
            SAMPLES = 5   # how many random inputs the hidden test draws
        """,
        f"assignments/{name}/tests/test_{TOPIC}.py": f"""
            from autograder.i18n import _


            def test_double_of_two({MODULE}):
                assert {MODULE}.double(2.0) == 4.0, _("double(2) should be 4")
        """,
        f"assignments/{name}/tests/conftest.py": f"""
            from pathlib import Path

            from autograder.authoring import public_plugin

            HERE = Path(__file__).resolve().parent


            def pytest_addoption(parser, pluginmanager):
                # Fixtures named after the unit's modules, from --submission=DIR (default: the stubs).
                public_plugin.install(parser, pluginmanager, unit=HERE.parents[2] / "{name}", stubs=HERE.parent)
        """,
        f"solutions/{name}/{MODULE}.py": f'''
            def double(x):
                """Twice x.

                Inputs:
                - x: a float

                Returns: 2 x, a float
                """
                # TODO: return twice x.
                {BEGIN}
                return 2 * x
                {END}
        ''',
    }


def scaffold(name: str, dest: Path) -> Path:
    """Write the unit `name` into dest/name (its solutions and assignments beside it), then
    build it; refuse to write over an existing folder."""
    if not name.isidentifier():
        raise ValueError(f"the unit's name {name!r} must be a Python identifier (it is imported by that name)")
    unit = dest / name
    taken = [p for p in (unit, dest / "solutions" / name, dest / "assignments" / name) if p.exists()]
    if taken:
        raise FileExistsError(f"{taken[0]} already exists: choose another name or folder")
    for relative, text in files(name).items():
        path = dest / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    for link, target in LINKS.items():
        os.symlink(target.format(name=name), unit / link, target_is_directory=True)
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
          f"  python -m autograder grade {stubs} --assignment {unit}\n"
          f"check it with\n  python -m autograder check {unit}\n"
          f"then replace the topic with your own (docs/AUTHORING.md).")
    return 0
