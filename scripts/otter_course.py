"""The course as an Otter-Grader assignment, for `make bench`'s `otter run` series (issue 36).

    python scripts/otter_course.py DIR [--public]      # writes DIR/autograder.zip, DIR/submission.zip

One Otter question (an OK-format test file, tests/<topic>.py) per topic, one case per test
function of our suites (the public and the hidden ones, or with --public the public ones),
each case calling that function on the submission's modules as pytest calls the public tests
on a student's machine (authoring/public_plugin.py): every module fixture is the module
itself, imported by the submission; `rng`, `reference`, `signals`, `report_extras` and
`run_seed` come from otter_fixtures.py (the grader's, with plain modules). `otter generate`
packs the questions with the test files, the fixtures and the reference as support files.
The submission is a zip of the topic modules and one notebook whose cell imports them
(`otter run` grades one notebook or script; the modules stay files, as in our grading).

Not mapped: the tests that need the grader's worker, which no plain module stands in for:
a fixture of the suite's own over it (the fault lab's `lab` and `reruns`), or a call only
the worker's proxy of a module offers (PROXY_ONLY), in the test or in a function of its file
that it calls. Checks that read what the worker saw through getattr with a default (an
argument modified in place, a warning) see nothing, as when a student runs pytest.
"""

from __future__ import annotations

import argparse
import ast
import json
import pprint
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.unit.load import load_unit

HERE = Path(__file__).resolve().parent
OTTER = Path(sys.executable).with_name("otter")
FIXTURES = {"rng", "reference", "run_seed", "signals", "report_extras"}      # otter_fixtures.py
PROXY_ONLY = {"patched", "replaced", "followed", "submit", "map", "last_notes", "last_mutated"}
NOTEBOOK = "rnn_prehistory.ipynb"


@dataclass
class Mapping:
    cases: dict = field(default_factory=dict)       # topic -> [(visibility, test name, parameters)]
    unmapped: list = field(default_factory=list)    # (visibility, topic, test name, why)

    @property
    def mapped(self) -> int:
        return sum(len(c) for c in self.cases.values())

    @property
    def total(self) -> int:
        return self.mapped + len(self.unmapped)


def proxy_calls(tree: ast.Module, test: ast.FunctionDef) -> set[str]:
    """The PROXY_ONLY attributes `test` reads, itself or through the functions of its file it names."""
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    seen, todo, found = set(), [test], set()
    while todo:
        node = todo.pop()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and sub.attr in PROXY_ONLY:
                found.add(sub.attr)
            elif isinstance(sub, ast.Name) and sub.id in functions and sub.id not in seen:
                seen.add(sub.id)
                todo.append(functions[sub.id])
    return found


def mapping(unit, suites: tuple[str, ...]) -> Mapping:
    """Which test functions become cases, with the fixtures they ask for, and why the others do not."""
    out = Mapping()
    modules = {topic.module for topic in unit.topics}
    for topic in unit.topics:
        out.cases[topic.id] = []
        for visibility in suites:
            tree = ast.parse(unit.test_file(topic.id, visibility).read_text())
            for test in tree.body:
                if not (isinstance(test, ast.FunctionDef) and test.name.startswith("test_")):
                    continue
                params = [a.arg for a in test.args.args]
                other = [p for p in params if p not in modules | FIXTURES]
                proxy = proxy_calls(tree, test)
                if other or proxy:
                    why = (f"the fixtures {', '.join(other)}" if other else
                           f"the calls {', '.join(sorted(proxy))}")
                    out.unmapped.append((visibility, topic.id, test.name, why))
                else:
                    out.cases[topic.id].append((visibility, test.name, params))
    return out


def suite_module(visibility: str, topic: str) -> str:
    return f"{visibility}_{topic}"         # the test file's name among the support files


def case_code(visibility: str, topic: str, test: str, params: list[str]) -> str:
    """The doctest of one case: the test function called with its fixtures, by name."""
    suite = suite_module(visibility, topic)
    fixtures = sorted(set(params) & FIXTURES)
    args = ", ".join(f'{p}=rng("{visibility}/test_{topic}.py::{test}")' if p == "rng" else f"{p}={p}"
                     for p in params)
    lines = [f">>> import {suite}"] + ([f">>> from otter_fixtures import {', '.join(fixtures)}"] if fixtures else [])
    return "\n".join([*lines, f">>> {suite}.{test}({args})"]) + "\n"


def write_question(path: Path, topic: str, cases: list) -> None:
    spec = {"name": topic, "points": None, "suites": [{
        "cases": [{"code": case_code(visibility, topic, test, params), "hidden": visibility == "hidden",
                   "locked": False, "points": 1, "name": f"{visibility}::{test}"}
                  for visibility, test, params in cases],
        "scored": True, "setup": "", "teardown": "", "type": "doctest"}]}
    path.write_text(f"OK_FORMAT = True\n\ntest = {pprint.pformat(spec, width=120)}\n")


def submission_zip(modules_dir: Path, modules: list[str], zip_path: Path) -> Path:
    """The topic modules of `modules_dir` and a notebook of one cell that imports them."""
    cell = {"cell_type": "code", "execution_count": None, "id": "imports", "metadata": {}, "outputs": [],
            "source": "import " + ", ".join(sorted(modules))}
    notebook = {"cells": [cell], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                             "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    with zipfile.ZipFile(zip_path, "w") as zf:
        for module in modules:
            zf.write(modules_dir / f"{module}.py", f"{module}.py")
        zf.writestr(NOTEBOOK, json.dumps(notebook))
    return zip_path


def build(folder: Path, suites: tuple[str, ...], submission: Path) -> Mapping:
    """folder/autograder.zip (`otter generate`) and folder/submission.zip (`submission`'s modules)."""
    unit = load_unit("rnn_prehistory")
    found = mapping(unit, suites)
    (folder / "tests").mkdir(parents=True)
    for topic, cases in found.cases.items():
        if cases:
            write_question(folder / "tests" / f"{topic}.py", topic, cases)
    support = ["otter_fixtures.py"]
    shutil.copyfile(HERE / "otter_fixtures.py", folder / "otter_fixtures.py")
    for topic in unit.topics:
        for visibility in suites:
            name = f"{suite_module(visibility, topic.id)}.py"
            shutil.copyfile(unit.test_file(topic.id, visibility), folder / name)
            support.append(name)
    if "hidden" in suites:
        (folder / "reference").mkdir()
        for topic in unit.topics:
            shutil.copyfile(unit.dirs["reference"] / f"{topic.module}.py", folder / "reference" / f"{topic.module}.py")
        support.append("reference")
    subprocess.run([str(OTTER), "generate", "--no-config", "--no-requirements", "--no-environment",
                    "-t", "tests", "-o", "autograder.zip", *support], cwd=folder, check=True, capture_output=True)
    submission_zip(submission, [t.module for t in unit.topics], folder / "submission.zip")
    return found


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", type=Path, help="an empty or new folder")
    p.add_argument("--public", action="store_true", help="the public tests only")
    p.add_argument("--submission", type=Path, default=HERE.parent / "solutions" / "rnn_prehistory")
    args = p.parse_args(argv)
    found = build(args.folder, ("public",) if args.public else ("public", "hidden"), args.submission)
    print(f"{found.mapped} of {found.total} tests are Otter cases")
    for visibility, topic, test, why in found.unmapped:
        print(f"  not mapped: {visibility}/{topic}::{test} ({why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
