"""`python -m autograder new-topic UNIT NAME`: a topic with every file it needs, the id written
once (its folder's name), the title and summary in its topic.yaml. The instructor's journey:
new-unit, new-topic, write the topic's own function, public test and suite, build, check, and
grade a right and a wrong submission, the nbgrader notebook, release. It counts the files written
by hand."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from helpers import REPO, grade, run_grader
from test_second_unit import scaffold

from autograder.authoring import build
from autograder.unit.load import load_unit
from autograder.unit.model import UnitError

TRIPLER = '''
def triple(x):
    """Three times x.

    Inputs:
    - x: a float

    Returns: 3 x, a float
    """
    # TODO: return three times x.
    ### BEGIN SOLUTION
    return 3 * x
    ### END SOLUTION
'''
# What the instructor writes in the topic folder new-topic made (every other file stays as written).
TOPIC = {
    "topic.yaml": """
        order: 2
        module: tripler
        title: Tripling a number
        summary: three times a number
        functions:
          triple: {}
    """,
    "rubric.yaml": """
        points: 3
        tests:
          - {test: test_triple_of_two, visibility: public, points: 1, hint: "triple(2) is 6."}
          - {test: test_triple_matches_reference, visibility: hidden, points: 2, hint: "Multiply by three."}
    """,
    "test_hidden.py": """
        from autograder.i18n import _


        def test_triple_matches_reference(tripler, reference, rng):
            for x in rng.normal(size=4):
                assert tripler.triple(float(x)) == reference.tripler.triple(float(x)), _("triple is wrong")
    """,
    "mutants.yaml": """
        mutants:
          - {name: double, misconception: doubles, replace: [["return 3 * x", "return 2 * x"]],
             killed_by: [hidden::test_triple_matches_reference]}
          - {name: plus_four, misconception: adds 4, replace: [["return 3 * x", "return x + 4"]],
             killed_by: [hidden::test_triple_matches_reference]}
          - {name: cube, misconception: cubes, replace: [["return 3 * x", "return x ** 3 - 2"]],
             killed_by: [hidden::test_triple_matches_reference]}
        alternatives:
          - {name: by_addition, file: alternatives/tripler_by_addition.py}
        clauses:
          - {function: triple, kind: output, clause: "returns 3 x", test: hidden::test_triple_matches_reference,
             mutants: [double, plus_four, cube]}
    """,
    "alternatives/tripler_by_addition.py": '''
        def triple(x):
            """Three times x."""
            return x + x + x
    ''',
}
ZH = {"Tripling a number": "把一个数变成三倍", "triple(2) is 6.": "triple(2) 等于 6。", "Multiply by three.": "乘以三。",
      "triple is wrong": "triple 的结果不对", "triple(2) should be 6": "triple(2) 应该等于 6",
      "Three times x.": "x 的三倍。", "return three times x.": "返回 x 的三倍。"}


def _files(root):
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_the_instructors_journey_writes_eight_files_by_hand(tmp_path):
    unit = scaffold(tmp_path)
    proc = run_grader("new-topic", unit, "tripling", "--module", "tripler")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = unit / "topics" / "tripling"
    assert {p.name for p in folder.iterdir()} >= {"topic.yaml", "rubric.yaml", "test_hidden.py", "mutants.yaml",
                                                  "alternatives", "locale", "__init__.py"}
    assert run_grader("check", unit, "--no-grading").returncode == 0, "the new topic checks as written"
    before = _files(tmp_path)

    # By hand: the solution function, the public test, the topic folder's suite and data.
    solution = tmp_path / "solutions" / "tiny_unit" / "tripler.py"
    solution.write_text(TRIPLER.lstrip())
    (solution.parent / "tripler_by_addition.py").unlink(missing_ok=True)
    (tmp_path / "assignments" / "tiny_unit" / "tests" / "test_tripling.py").write_text(
        'from autograder.i18n import _\n\n\ndef test_triple_of_two(tripler):\n'
        '    assert tripler.triple(2.0) == 6.0, _("triple(2) should be 6")\n')
    (folder / "alternatives" / "tripler_by_addition.py").unlink()
    for rel, text in TOPIC.items():
        (folder / rel).write_text(textwrap.dedent(text).lstrip())
    proc = run_grader("build", unit)      # the new texts get empty msgstr lines: translate them
    assert proc.returncode == 0 and "to translate" in proc.stdout, proc.stdout
    po = folder / "locale" / "zh_CN" / "LC_MESSAGES" / "unit.po"
    text = po.read_text()
    for en, zh in ZH.items():
        assert f'msgid "{en}"\nmsgstr ""' in text, en
        text = text.replace(f'msgid "{en}"\nmsgstr ""', f'msgid "{en}"\nmsgstr "{zh}"')
    po.write_text(text)
    assert run_grader("build", unit).returncode == 0
    changed = {p for p, data in _files(tmp_path).items() if before.get(p) != data}
    derived = set(build.plan([load_unit(unit)]).files)
    hand = {p for p in changed if p not in derived} | {po}     # the catalogue: build's entries, translated by hand
    generated = changed - hand

    hand_written = sorted(str(p.relative_to(tmp_path)) for p in hand)
    assert hand_written == sorted([
        "solutions/tiny_unit/tripler.py", "assignments/tiny_unit/tests/test_tripling.py",
        "tiny_unit/topics/tripling/topic.yaml", "tiny_unit/topics/tripling/rubric.yaml",
        "tiny_unit/topics/tripling/test_hidden.py", "tiny_unit/topics/tripling/mutants.yaml",
        "tiny_unit/topics/tripling/alternatives/tripler_by_addition.py",
        "tiny_unit/topics/tripling/locale/zh_CN/LC_MESSAGES/unit.po"]), hand_written
    assert {str(p.relative_to(tmp_path)) for p in generated} >= {
        "assignments/tiny_unit/tripler.py", "assignments/tiny_unit/.generated.json",
        "course/source/tiny_unit/tripling.ipynb"}
    stub = (tmp_path / "assignments" / "tiny_unit" / "tripler.py").read_text()
    assert "x 的三倍。" in stub and "# TODO（中文）：返回 x 的三倍。" in stub

    proc = run_grader("check", unit, "--no-grading")
    assert proc.returncode == 0, proc.stdout
    assert load_unit(unit).rubric.topic("tripling").title == "Tripling a number"
    right, wrong = tmp_path / "right", tmp_path / "wrong"
    for folder_, body in ((right, "return x * 3"), (wrong, "return x + 4")):
        folder_.mkdir()
        (folder_ / "tripler.py").write_text(f"def triple(x):\n    {body}\n")
    proc, score = grade(right, tmp_path / "out-right", "--assignment", unit, "--topic", "tripling")
    assert proc.returncode == 0 and score["earned"] == score["possible"] == 3.0, proc.stderr
    proc, score = grade(wrong, tmp_path / "out-wrong", "--assignment", unit, "--topic", "tripling")
    assert proc.returncode == 0 and score["earned"] == 1.0, proc.stderr

    # The nbgrader notebook build wrote: the solution in the answer cell, a grade cell per test.
    cells = json.loads((tmp_path / "course" / "source" / "tiny_unit" / "tripling.ipynb").read_text())["cells"]
    graded = {c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"].get("points") for c in cells
              if c["metadata"].get("nbgrader", {}).get("grade")}
    assert graded == {"public_test_triple_of_two": 1.0, "hidden_1": 2.0}, graded
    answer = [c for c in cells if c["metadata"].get("nbgrader", {}).get("solution")]
    assert len(answer) == 1 and "".join(answer[0]["source"]).startswith("%%writefile tripler.py"), answer
    assert "### BEGIN SOLUTION" in "".join(answer[0]["source"]) and "return 3 * x" in "".join(answer[0]["source"])

    # The release: the stub and the public test reach the student, nothing of the hidden suite does
    # (the leak check inside it exits 1 on a hidden test's name or hint anywhere in the release).
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "release.py"), "--assignment", str(unit),
                           "--out", str(tmp_path / "dist")], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0 and "leak check clean" in proc.stdout, proc.stdout + proc.stderr
    student = tmp_path / "dist" / "student"
    released = student / "assignments" / "tiny_unit"
    assert "# TODO" in (released / "tripler.py").read_text() and "return 3 * x" not in (released / "tripler.py").read_text()
    assert (released / "tests" / "test_tripling.py").is_file()
    text = "\n".join(p.read_text(errors="replace") for p in student.rglob("*") if p.is_file())
    assert "test_triple_matches_reference" not in text and "Multiply by three." not in text


def test_new_topic_refuses_a_topic_the_unit_has(tmp_path):
    unit = scaffold(tmp_path)
    proc = run_grader("new-topic", unit, "doubling")
    assert proc.returncode == 2 and "already has a topic" in proc.stderr


def test_a_title_is_written_in_one_place(tmp_path):
    unit = scaffold(tmp_path)
    rubric = unit / "topics" / "doubling" / "rubric.yaml"
    rubric.write_text("title: Another title\n" + rubric.read_text())
    with pytest.raises(UnitError, match="a title in both topic.yaml and rubric.yaml"):
        load_unit(unit)
