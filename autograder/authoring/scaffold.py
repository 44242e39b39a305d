"""The files of a new unit and of a new topic (`new-unit`, `new-topic`): the smallest complete
topic — one function, a public and a hidden test, a kill matrix, the Chinese of every text, a
reference solution with nbgrader's markers — that grades and passes `check` before an author
replaces its pieces. The topic's id is written once, as its folder's name (its public test's
file name and its module's fixture follow from it); its title and summary are both in its
topic.yaml."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

# nbgrader's solution markers, not written out: the engine ships in the student release, whose
# leak check refuses any file holding the literal markers (a solution line would follow them).
BEGIN, END = "### " + "BEGIN SOLUTION", "### " + "END SOLUTION"
PO_HEAD = 'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\nLanguage: zh_CN\\n"\n\n'
LINKS = {"reference": "../solutions/{name}", "public": "../assignments/{name}/tests"}
TOPIC_ZH = {"Doubling a number": "把一个数加倍", "double(2) is 4.": "double(2) 等于 4。",
            "Multiply by two.": "乘以二。", "double({x}) is wrong": "double({x}) 的结果不对",
            "double(2) should be 4": "double(2) 应该等于 4", "Twice x.": "x 的两倍。",
            "return twice x.": "返回 x 的两倍。"}


def _po(pairs: dict[str, str]) -> str:
    return PO_HEAD + "".join(f'msgid "{en}"\nmsgstr "{zh}"\n\n' for en, zh in pairs.items())


def unit_files(name: str) -> dict[str, str]:
    """A new unit's own files (its topics aside), relative to the folder that holds the unit."""
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
        f"{name}/locale/zh_CN/LC_MESSAGES/unit.po": _po({"Signals": "信号"}),
        f"{name}/helpers/__init__.py": """
            SAMPLES = 5   # how many random inputs the hidden test draws
        """,
        f"assignments/{name}/tests/conftest.py": f"""
            from pathlib import Path

            from autograder.authoring import public_plugin

            HERE = Path(__file__).resolve().parent


            def pytest_addoption(parser, pluginmanager):
                # Fixtures named after the unit's modules, from --submission=DIR (default: the stubs).
                public_plugin.install(parser, pluginmanager, unit=HERE.parents[2] / "{name}", stubs=HERE.parent)
        """,
    }


def topic_files(name: str, topic: str, module: str, order: int) -> dict[str, str]:
    """A topic's files: its folder in the unit `name`, its solution module and its public test,
    relative to the folder that holds the unit (module: the student's file, without .py)."""
    folder = f"{name}/topics/{topic}"
    return {
        f"{folder}/__init__.py": "",
        f"{folder}/topic.yaml": f"""
            order: {order}
            {f"module: {module}" if module != topic else "# module: the student's file, by default the id (the folder's name)"}
            title: Doubling a number
            summary: twice a number
            functions:
              double: {{}}
        """,
        f"{folder}/rubric.yaml": """
            points: 3
            tests:
              - {test: test_double_of_two, visibility: public, points: 1, hint: "double(2) is 4."}
              - {test: test_double_matches_reference, visibility: hidden, points: 2, hint: "Multiply by two."}
        """,
        f"{folder}/test_hidden.py": f"""
            from autograder.i18n import _
            from autograder.units.{name}.helpers import SAMPLES   # the unit's own code, by its package name


            def test_double_matches_reference({module}, reference, rng):
                for x in rng.normal(size=SAMPLES):
                    expected = reference.{module}.double(float(x))
                    assert {module}.double(float(x)) == expected, _("double({{x}}) is wrong").format(x=f"{{x:.3f}}")
        """,
        f"{folder}/mutants.yaml": f"""
            mutants:        # wrong versions: edits of solutions/{name}/{module}.py (all right at x = 2)
              - {{name: square, misconception: squares x, replace: [["return 2 * x", "return x * x"]],
                 killed_by: [hidden::test_double_matches_reference]}}
              - {{name: plus_two, misconception: adds 2, replace: [["return 2 * x", "return x + 2"]],
                 killed_by: [hidden::test_double_matches_reference]}}
              - {{name: power_of_two, misconception: raises 2 to x, replace: [["return 2 * x", "return 2 ** x"]],
                 killed_by: [hidden::test_double_matches_reference]}}
            alternatives:   # valid versions: whole modules the suites must pass
              - {{name: by_addition, file: alternatives/{module}_by_addition.py}}
            clauses:        # what the docstring promises, and the mutants that break it
              - {{function: double, kind: output, clause: "returns 2 x", test: hidden::test_double_matches_reference,
                 mutants: [square, plus_two, power_of_two]}}
        """,
        f"{folder}/alternatives/{module}_by_addition.py": '''
            def double(x):
                """Twice x."""
                return x + x
        ''',
        f"{folder}/locale/zh_CN/LC_MESSAGES/unit.po": _po(TOPIC_ZH),
        f"assignments/{name}/tests/test_{topic}.py": f"""
            from autograder.i18n import _


            def test_double_of_two({module}):
                assert {module}.double(2.0) == 4.0, _("double(2) should be 4")
        """,
        f"solutions/{name}/{module}.py": f'''
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


def write(root: Path, files: dict[str, str]) -> None:
    """Write `files` (relative to `root`), refusing to write over any file that exists."""
    taken = [root / rel for rel in files if (root / rel).exists()]
    if taken:
        raise FileExistsError(f"{taken[0]} already exists: choose another name or folder")
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def link(unit: Path) -> None:
    """The unit's `reference` and `public` links, as the shipped unit has them."""
    for name, target in LINKS.items():
        os.symlink(target.format(name=unit.name), unit / name, target_is_directory=True)
