"""`make release`: the student repository and the grader bundle (issue: student release).

- the release builds from this checkout and its leak check is clean, and the leak check
  catches each kind of leak planted in a copy; no function of its public tests, grafted in
  place of the stubs, earns a hidden point (the graft check; make sweep);
- a copy of dist/student in a new folder passes its own `make grade` and `make test`
  (with the stubs, and with finished modules: evidence and figure included; `make sweep`);
- the student repository holds no hidden suite, reference or hidden rubric entry, and no
  instructor-only workflow.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, SOLUTIONS, UNIT, borrowed_venv

sys.path.insert(0, str(REPO / "scripts"))
import graft_check  # noqa: E402
import leak_check  # noqa: E402
import release  # noqa: E402


def test_the_student_repository_has_no_secret_part(dist):
    student = dist / "student"
    names = {p.relative_to(student).as_posix() for p in student.rglob("*")}
    unit = f"autograder/units/{UNIT.name}"
    assert not any(n.startswith((f"{unit}/reference", "solutions")) for n in names)
    # topics/<topic>/: the topic's manifest, public rubric and catalogue ship; its hidden
    # suite, oracle test, mutants and alternatives (the unit's `secret` patterns) do not.
    for topic in UNIT.topics:
        shipped = {n.removeprefix(f"{unit}/topics/{topic.id}/") for n in names if n.startswith(f"{unit}/topics/{topic.id}/")}
        assert {n for n in shipped if n.split("/")[0] != "locale"} == {"__init__.py", "topic.yaml", "rubric.yaml"}, \
            (topic.id, shipped)
    assert f"{unit}/lab/fault_lab.py" not in names and f"{unit}/lab/broken_primitives.py" not in names
    assert ".github/workflows/grade.yml" in names and ".github/workflows/test.yml" not in names
    rubric = (student / unit / "topics" / "bptt" / "rubric.yaml").read_text()
    assert "visibility: hidden" not in rubric and "graded_later:" in rubric
    readme = (student / "README.md").read_text()
    assert readme.index("make grade") < readme.index("## English") and "## 中文" in readme
    manifest = (student / "protected-files.sha256").read_text()
    assert f"{UNIT.stubs}/bptt.py" not in manifest and f"{UNIT.stubs}/tests/test_bptt.py" in manifest
    assert "autograder/grading/score.py" in manifest and ".github/workflows/grade.yml" in manifest
    assert (dist / "grader-bundle" / "protected-files.sha256").read_text() == manifest
    bundle_unit = dist / "grader-bundle" / unit
    assert (bundle_unit / "topics" / "bptt" / "test_hidden.py").is_file() and not (bundle_unit / "reference").is_symlink()
    for secret in ("test_hidden.py", "test_oracle.py", "mutants.yaml", "alternatives"):
        assert all((bundle_unit / "topics" / t.id / secret).exists() for t in UNIT.topics), secret
    # The instructor's verbs stay with the instructor (the scaffold's templates name hidden tests).
    assert "autograder/authoring/scaffold.py" not in names and "autograder/commands/new_unit.py" not in names
    assert (dist / "grader-bundle" / "autograder" / "authoring" / "scaffold.py").is_file()


def test_the_student_repository_says_an_instructors_verb_is_not_in_it(dist):
    proc = subprocess.run([sys.executable, "-m", "autograder", "new-unit", "x", "--dest", "nowhere"],
                          cwd=dist / "student", capture_output=True, text=True, env={**os.environ, "PYTHONPATH": "."})
    assert proc.returncode == 2 and "`new-unit` is an instructor's command" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_student_repository_has_a_chinese_readme_and_a_glossary(dist):
    """README.zh-CN.md and GLOSSARY.md ship, filled in, with Chinese text, and the READMEs link
    to each other and to the glossary."""
    student = dist / "student"
    for name in ("README.zh-CN.md", "GLOSSARY.md"):
        text = (student / name).read_text(encoding="utf-8")
        assert re.search(r"[\u4e00-\u9fff]", text), f"{name} has no Chinese text"
        assert not re.search(r"\{[a-z_]+\}", text), f"{name} has an unfilled placeholder"
        assert UNIT.stubs in text
    readme = (student / "README.md").read_text(encoding="utf-8")
    assert "(README.zh-CN.md)" in readme[: readme.index("make grade")] and "(GLOSSARY.md)" in readme
    zh = (student / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "(README.md)" in zh[: zh.index("make grade")] and "(GLOSSARY.md)" in zh
    assert zh.count("| `") == len(UNIT.topics)          # the points table, one row per topic


@pytest.mark.parametrize("plant", ["hidden suite", "reference module", "marker", "hidden test name", "lab table"])
def test_the_leak_check_catches_each_kind_of_leak(dist, tmp_path, plant):
    copy = tmp_path / "student"
    shutil.copytree(dist / "student", copy, symlinks=True)
    assert leak_check.check(copy, UNIT) == []
    target = copy / "notes.py"
    if plant == "hidden suite":
        shutil.copyfile(UNIT.test_file("bleu", "hidden"), target)
    elif plant == "reference module":
        shutil.copyfile(SOLUTIONS / "attention.py", target)
    elif plant == "marker":
        target.write_text("def f():\n    ### BEGIN SOLUTION\n    pass\n")
    elif plant == "hidden test name":
        target.write_text("# see test_rnn_backward_accumulates_over_time\n")
    else:
        lines = [line for line in (UNIT.path / "lab" / "fault_lab.py").read_text().splitlines()
                 if '"rho1.5_linear_norm": (' in line]
        target.write_text(lines[0] + "\n")
    assert leak_check.check(copy, UNIT), f"a planted {plant} was not found"


# Eight gradings (~8 s): make sweep. make test checks the check on a planted leak
# (tests/content/test_graft_check.py).
@pytest.mark.sweep
def test_no_function_of_the_released_public_tests_earns_a_hidden_point(dist, tmp_path):
    problems, grafts = graft_check.run_check(dist / "student", UNIT, tmp_path)
    assert grafts and not problems, problems


def _with_pytest_command(venv: Path) -> Path:
    """The `pytest` command pip would install in `venv` (its folder first on sys.path, not the
    working directory, as with the real entry point)."""
    command = venv / "bin" / "pytest"
    command.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nimport pytest\nsys.exit(pytest.main())\n")
    command.chmod(0o755)
    return command


def _student_copy(dist, tmp_path, modules: Path | None = None) -> Path:
    copy = tmp_path / "my-course"
    shutil.copytree(dist / "student", copy, symlinks=True)
    if modules is not None:
        for module in modules.glob("*.py"):
            shutil.copyfile(module, copy / UNIT.stubs / module.name)
    borrowed_venv(copy / ".venv", copy)
    _with_pytest_command(copy / ".venv")
    (copy / ".venv" / ".installed").touch()      # dependencies borrowed: nothing to install
    return copy


def _activated(venv: Path) -> dict:
    """The environment of a shell after `source .venv/bin/activate` (English messages)."""
    return {**os.environ, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
            "LANGUAGE": "en"}


# A scenario of the student repository's `make grade`: run by make sweep; make test sends
# half-finished work through `make grade` once (test_journey.py).
MAKE_GRADE_SCENARIO = pytest.mark.sweep

PUBLIC_TESTS = sum(1 for topic in UNIT.rubric.topics for t in topic.tests if t.visibility == "public")


@pytest.mark.parametrize("command", [["pytest"], pytest.param(["python", "-m", "pytest"], marks=pytest.mark.sweep)],
                         ids=["pytest", "python -m pytest"])
def test_plain_pytest_at_the_root_runs_the_public_tests_once(dist, tmp_path, command):
    """With the venv active, `pytest` and `python -m pytest` at the root of the student
    repository run every public test once (not again through the grader's link to them)."""
    copy = _student_copy(dist, tmp_path)
    proc = subprocess.run(command, cwd=copy, env=_activated(copy / ".venv"), capture_output=True, text=True,
                          timeout=300)
    last = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 1 and last.startswith(f"{'=' * 3}") and f" {PUBLIC_TESTS} failed " in last \
        and "error" not in last, proc.stdout[-3000:] + proc.stderr
    for module in SOLUTIONS.glob("*.py"):
        shutil.copyfile(module, copy / UNIT.stubs / module.name)
    proc = subprocess.run(command, cwd=copy, env=_activated(copy / ".venv"), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and f" {PUBLIC_TESTS} passed " in proc.stdout.strip().splitlines()[-1], \
        proc.stdout[-3000:] + proc.stderr


def test_pytest_of_another_python_says_what_to_do(dist, tmp_path):
    """pytest of a Python without the grader (the venv not active) stops with what to run."""
    copy = tmp_path / "my-course"
    shutil.copytree(dist / "student", copy, symlinks=True)
    elsewhere = tmp_path / "system"
    borrowed_venv(elsewhere)                     # numpy and pytest, but not this repository's grader
    proc = subprocess.run([str(_with_pytest_command(elsewhere))], cwd=copy, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "LANGUAGE": "en"})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "No module named 'autograder'" in out and "make grade" in out and ".venv/bin/python -m pytest" in out, out
    assert "请先运行一次 `make grade`" in out, out


@MAKE_GRADE_SCENARIO
def test_make_grade_leaves_the_git_checkout_clean(dist, tmp_path):
    """Grading compiles the translation catalogues and writes reports/: git ignores both, so a
    student has nothing to commit (and no reason to edit the protected .gitignore)."""
    copy = _student_copy(dist, tmp_path)
    git = ["git", "-c", "user.name=student", "-c", "user.email=student@example.org"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "as released"]):
        subprocess.run([*git, *args], cwd=copy, check=True, capture_output=True)
    proc = _make(copy, "grade")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list((copy / "autograder").rglob("*.mo")), "make grade compiles the catalogues"
    status = subprocess.run([*git, "status", "--porcelain"], cwd=copy, capture_output=True, text=True, check=True)
    assert status.stdout == "", status.stdout


def _make(copy: Path, target: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", target], cwd=copy, capture_output=True, text=True, timeout=600)


@MAKE_GRADE_SCENARIO
def test_a_copy_of_the_student_repository_grades_and_tests_itself(dist, tmp_path):
    copy = _student_copy(dist, tmp_path)
    proc = _make(copy, "grade")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "graded later" in proc.stdout
    score = json.loads((copy / "reports" / "score.json").read_text())
    assert score["earned"] == 0 and score["possible"] > 0
    assert all(x["id"].startswith("public::") for t in score["topics"] for x in t["tests"])
    proc = _make(copy, "test")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@MAKE_GRADE_SCENARIO
def test_finished_work_gets_the_public_points_evidence_and_figure(dist, tmp_path):
    copy = _student_copy(dist, tmp_path, modules=SOLUTIONS)
    proc = _make(copy, "grade")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    score = json.loads((copy / "reports" / "score.json").read_text())
    public = sum(t.points for topic in UNIT.rubric.topics for t in topic.tests if t.visibility == "public")
    assert score["earned"] == score["possible"] == public
    assert sum(score["graded_later"].values()) == UNIT.rubric.points - public
    assert (copy / "reports" / "evidence.yaml").is_file() and (copy / "reports" / "fault_injection.png").is_file()
    assert "![" in (copy / "reports" / "score.md").read_text()


def _files_of(folder: Path) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}


# An instructor's second `make release` (make sweep): make test checks the first one (`dist`).
@pytest.mark.sweep
def test_the_release_is_rebuilt_from_scratch(dist, tmp_path):
    """Building over an earlier build gives the files of a first build (`dist`): nothing is
    left over."""
    first = {rel: data for rel, data in _files_of(dist / "student").items() if "__pycache__" not in rel.parts}
    shutil.copytree(dist / "student", tmp_path / "student", symlinks=True)
    (tmp_path / "student" / "stray.txt").write_text("left over")
    student, _, leaks = release.build(tmp_path, None)
    assert not leaks
    assert _files_of(student) == first


def _columns(text: str) -> int:
    """Terminal columns, counted here from the Unicode tables: a wide or full-width character takes two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


@MAKE_GRADE_SCENARIO
def test_chinese_output_is_in_the_readmes_and_its_table_is_aligned(dist, tmp_path):
    """Both READMEs say how to get Chinese output (`--lang zh` through GRADE_ARGS, or the
    locale), and `make grade GRADE_ARGS="--lang zh"` prints a table whose score column ends
    in the same terminal column on every row, Chinese words included."""
    for name in ("README.md", "README.zh-CN.md"):
        text = (dist / "student" / name).read_text(encoding="utf-8")
        for needle in ('GRADE_ARGS="--lang zh"', "LANG=zh_CN.UTF-8 make grade", "LANG=zh_CN.UTF-8 pytest"):
            assert needle in text, f"{name} does not say {needle}"
    copy = _student_copy(dist, tmp_path)
    proc = subprocess.run(["make", "grade", 'GRADE_ARGS=--lang zh'], cwd=copy, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("主题"))
    ends = {header: _columns(header[: header.index("得分") + 2])}
    for line in lines:
        match = re.match(r"(\S+) +\d+(\.\d+)? / \d+(\.\d+)?", line)
        if match:
            ends[line] = _columns(match.group(0))
    assert any(line.startswith("总计") for line in ends) and len(ends) == len(UNIT.topics) + 2, ends
    assert len(set(ends.values())) == 1, "\n".join(f"{end:3d} {line}" for line, end in ends.items())


@pytest.mark.parametrize("topic", ["causality", "inference_cost"])
def test_the_sequence_topics_ship_as_stubs_and_grade_in_the_bundle_and_on_gradescope(dist, topic):
    """Questions 7 and 10: the student gets the stub, its public test and the public rubric; the
    grader bundle and the Gradescope zip hold the hidden suite and the reference as well."""
    import zipfile

    module, unit = UNIT.topic(topic).module, f"autograder/units/{UNIT.name}"
    student = dist / "student"
    stub = (student / UNIT.stubs / f"{module}.py").read_text()
    assert "NotImplementedError" in stub and "### BEGIN SOLUTION" not in stub
    assert (student / UNIT.stubs / "tests" / f"test_{topic}.py").is_file()
    assert "graded_later:" in (student / unit / "topics" / topic / "rubric.yaml").read_text()
    assert not (student / unit / "topics" / topic / "test_hidden.py").exists()
    bundle = dist / "grader-bundle" / unit
    assert (bundle / "topics" / topic / "test_hidden.py").is_file() and (bundle / "reference" / f"{module}.py").is_file()
    with zipfile.ZipFile(dist / "gradescope.zip") as archive:
        names = set(archive.namelist())
    assert {f"grader/{unit}/topics/{topic}/test_hidden.py", f"grader/{unit}/reference/{module}.py",
            f"grader/{unit}/topics/{topic}/rubric.yaml"} <= names
