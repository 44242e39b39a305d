"""`python -m autograder new-unit NAME [--dest DIR]`: scaffold a unit that grades.

The scaffold is the smallest complete unit — one topic, one function, a public and a hidden
test, a reference solution with nbgrader's markers and the stub made from it — so an author
starts from something that already grades a correct and a wrong submission, and replaces
its pieces one at a time (docs/AUTHORING.md says what each is):

    DIR/NAME/unit.yaml                  the manifest (read through unit.model.MANIFEST_KEYS)
    DIR/NAME/topics/doubling/topic.yaml       the topic: its module and functions (unit.model.TOPIC_KEYS)
    DIR/NAME/topics/doubling/rubric.yaml      points, visibility and hint of each test
    DIR/NAME/topics/doubling/test_hidden.py   the hidden test (compares with the reference)
    DIR/NAME/public/test_doubling.py    the public test (students run it)
    DIR/NAME/public/conftest.py         plain `pytest public` gives the public test its fixtures (the stubs by default)
    DIR/NAME/helpers/__init__.py        the unit's own code, importable as autograder.units.NAME
    DIR/NAME/reference/doubler.py       the reference solution, the student's part between markers
    DIR/NAME/stubs/doubler.py           the stub students fill (`make stubs --assignment DIR/NAME` regenerates it)
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

TOPIC, MODULE = "doubling", "doubler"
# nbgrader's solution markers, not written out: the engine ships in the student release, whose
# leak check refuses any file holding the literal markers (a solution line would follow them).
BEGIN, END = "### " + "BEGIN SOLUTION", "### " + "END SOLUTION"


def files(name: str) -> dict[str, str]:
    """The scaffold's files, relative to the unit folder."""
    return {
        "unit.yaml": f"""
            name: {name}
            title: {name.replace("_", " ").capitalize()}
            # Where students find the stubs in their checkout (named in messages).
            stubs: assignments/{name}
            limits: {{call_cpu_s: 5, import_cpu_s: 10, memory_mb: 512, cpu_s: 60}}
            preload: [math, numpy]
            # Never shipped to students (glob patterns, relative to this folder).
            secret: [reference, topics/*/test_hidden.py]
        """,
        f"topics/{TOPIC}/topic.yaml": f"""
            order: 1
            module: {MODULE}
            functions:
              double: {{}}
        """,
        f"topics/{TOPIC}/rubric.yaml": f"""
            topic: {TOPIC}
            title: Doubling a number
            points: 3
            tests:
              - {{test: test_double_of_two, visibility: public, points: 1, hint: "double(2) is 4."}}
              - {{test: test_double_matches_reference, visibility: hidden, points: 2, hint: "Multiply by two."}}
        """,
        f"public/test_{TOPIC}.py": f"""
            def test_double_of_two({MODULE}):
                assert {MODULE}.double(2.0) == 4.0, "double(2) should be 4"
        """,
        "public/conftest.py": """
            from pathlib import Path

            from autograder.authoring import public_plugin

            UNIT = Path(__file__).resolve().parents[1]


            def pytest_addoption(parser, pluginmanager):
                # Fixtures named after the unit's modules, from --submission=DIR (default: the stubs).
                public_plugin.install(parser, pluginmanager, unit=UNIT, stubs=UNIT / "stubs")
        """,
        "helpers/__init__.py": """
            SAMPLES = 5   # how many random inputs the hidden test draws
        """,
        f"topics/{TOPIC}/test_hidden.py": f"""
            from autograder.units.{name}.helpers import SAMPLES   # the unit's own code, by its package name


            def test_double_matches_reference({MODULE}, reference, rng):
                for x in rng.normal(size=SAMPLES):
                    expected = reference.{MODULE}.double(float(x))
                    assert {MODULE}.double(float(x)) == expected, f"double({{x:.3f}}) is wrong"
        """,
        f"reference/{MODULE}.py": f'''
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
        f"stubs/{MODULE}.py": '''
            def double(x):
                """Twice x.

                Inputs:
                - x: a float

                Returns: 2 x, a float
                """
                # TODO: return twice x.
                raise NotImplementedError("double: fill in the TODO above")
        ''',
    }


def scaffold(name: str, dest: Path) -> Path:
    """Write the unit `name` into dest/name; refuse to write over an existing folder."""
    if not name.isidentifier():
        raise ValueError(f"the unit's name {name!r} must be a Python identifier (it is imported by that name)")
    unit = dest / name
    if unit.exists():
        raise FileExistsError(f"{unit} already exists: choose another name or folder")
    for relative, text in files(name).items():
        path = unit / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return unit


def run(args) -> int:
    try:
        unit = scaffold(args.name, args.dest)
    except (ValueError, FileExistsError) as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {unit}: grade its stub with\n"
          f"  python -m autograder grade {unit / 'stubs'} --assignment {unit}\n"
          f"then replace the topic with your own (docs/AUTHORING.md).")
    return 0
