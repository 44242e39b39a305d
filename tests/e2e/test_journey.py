"""A student's journey on every path (issue: every way a student hands in work gets the grade
it deserves). One partially correct submission, as a real student leaves it: two topics right,
one with a typical mistake (a kill-matrix mutant), the others untouched stubs. It goes through

- `make grade` in a copy of the student release (public tests only),
- `pr` at each hidden-detail level (total, tests, hints), as the pull-request workflow runs it,
- `batch` as a folder, a zip, a GitHub "Download ZIP" (`name-main/assignments/...`) and a clone,
- Gradescope's `run_autograder` on a simulated /autograder with a GitHub upload,
- nbgrader: release -> fetch -> the answer cells filled with the same code -> submit -> collect
  -> autograde -> generate_feedback -> release_feedback -> fetch_feedback (what the student reads),

and every path must give the score per topic that `python -m autograder grade` gives the same
files (the public part of it for `make grade`), the untouched topics `not_implemented`
everywhere, and at the `total` level no file the student can see names a hidden test.

The same journey is walked by students drawn at function granularity (tests/drawn_students.py:
each function the reference, the stub or a kill-matrix mutant): three in `make sweep` (seeds
in DRAWN; `make test` sends drawn students through grade and batch, test_drawn_journeys.py),
whose untouched topics are those `grade` reports `not_implemented` (test_drawn_journeys.py
checks that rule itself).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from drawn_students import draw
from helpers import ENGLISH, MATRIX, REPO, SOLUTIONS, STUBS, UNIT, borrowed_venv, grade, make_submission, per_topic

RIGHT = ("gate_derivative", "attention")                 # finished, correct
MISTAKE = ("bleu", "brevity_ratio_inverted")             # finished, with a typical mistake
UNTOUCHED = tuple(t.id for t in UNIT.topics if t.id not in (*RIGHT, MISTAKE[0]))
DRAWN = [pytest.param(s, id=f"drawn-{s}", marks=pytest.mark.sweep) for s in (0, 1, 2)]
MODULE = {t.id: t.module for t in UNIT.topics}
HIDDEN_NAMES = sorted({x.test for t in UNIT.rubric.topics for x in t.tests if x.visibility == "hidden"})
NOT_IMPLEMENTED = "is not implemented yet"               # the message of a test that reached a stub


def _mistaken(topic: str, name: str) -> str:
    text = (SOLUTIONS / f"{MODULE[topic]}.py").read_text()
    for old, new in next(m for m in MATRIX[topic]["mutants"] if m["name"] == name)["replace"]:
        assert old in text, (name, old)
        text = text.replace(old, new)
    return text


def partial_submission(folder: Path) -> Path:
    files = {f"{MODULE[t]}.py": (SOLUTIONS / f"{MODULE[t]}.py").read_text() for t in RIGHT}
    files[f"{MODULE[MISTAKE[0]]}.py"] = _mistaken(*MISTAKE)
    return make_submission(folder, base=STUBS, files=files)


def seen_on(journey, path: str, earned: dict[str, float]) -> None:
    """What one path gave each topic, kept for the side-by-side table of every path
    (scripts/journey_table.py) where AUTOGRADER_JOURNEY_SCORES names a file: one JSON line."""
    where = os.environ.get("AUTOGRADER_JOURNEY_SCORES")
    if where:
        with open(where, "a", encoding="utf-8") as out:
            out.write(json.dumps({"student": journey["name"], "path": path, "earned": earned}) + "\n")


def earned_of(per: dict[str, tuple[float, str]]) -> dict[str, float]:
    return {topic: earned for topic, (earned, _status) in per.items()}


def names_of_hidden_tests(text: str) -> list[str]:
    return [name for name in HIDDEN_NAMES if re.search(rf"\b{name}\b", text)]


@pytest.fixture(scope="module", params=[pytest.param(None, id="fixed"), *DRAWN])
def journey(request, tmp_path_factory):
    """The submission and what `python -m autograder grade` gives it (the yardstick): the fixed
    student, whose topics are known in advance, or a drawn one."""
    seed = request.param
    tmp = tmp_path_factory.mktemp("journey" if seed is None else f"drawn-{seed}")
    submission = partial_submission(tmp / "modules") if seed is None else draw(seed).write(tmp / "modules")
    proc, score = grade(submission, tmp / "alone")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected = per_topic(score)
    if seed is None:
        for topic in RIGHT:
            assert expected[topic] == (UNIT.rubric.topic(topic).points, "graded"), topic
        assert expected[MISTAKE[0]][1] == "graded" and 0 < expected[MISTAKE[0]][0] < UNIT.rubric.topic(MISTAKE[0]).points
        untouched = UNTOUCHED
    else:
        untouched = tuple(t for t, (_e, status) in expected.items() if status == "not_implemented")
    for topic in untouched:
        assert expected[topic] == (0, "not_implemented"), topic
    name = "fixed" if seed is None else f"drawn-{seed}"
    journey = {"tmp": tmp, "submission": submission, "score": score, "expected": expected, "untouched": untouched,
               "name": name}
    seen_on(journey, "grade", earned_of(expected))
    return journey


def student_checkout(dist: Path, modules: Path, dest: Path) -> Path:
    """The student repository as the student has it: the release with their module files."""
    shutil.copytree(dist / "student", dest, symlinks=True)
    for module in modules.glob("*.py"):
        shutil.copyfile(module, dest / UNIT.stubs / module.name)
    return dest


# ----------------------------------------------------------------------------- make grade
def test_make_grade_in_the_student_repository(journey, dist):
    copy = student_checkout(dist, journey["submission"], journey["tmp"] / "make-grade")
    borrowed_venv(copy / ".venv", copy)
    (copy / ".venv" / ".installed").touch()       # dependencies borrowed: nothing to install
    proc = subprocess.run(["make", "grade"], cwd=copy, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **ENGLISH})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    score = json.loads((copy / "reports" / "score.json").read_text())
    assert per_topic(score) == per_topic(journey["score"], public_only=True)
    seen_on(journey, "make grade (public tests)", earned_of(per_topic(score)))
    for topic in journey["untouched"]:
        assert re.search(rf"^{topic} .* not implemented$", proc.stdout, re.M), proc.stdout
    reports = {p.name: p.read_bytes().decode("utf-8", "replace") for p in (copy / "reports").iterdir()}
    assert not any(names_of_hidden_tests(text) for text in reports.values())


# ----------------------------------------------------------------------------- pull request
def _pr(dist: Path, python: Path, checkout: Path, tmp: Path, detail: str):
    summary, outputs, event = tmp / "summary.md", tmp / "outputs.txt", tmp / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "pull_request": {"number": 7}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(ENGLISH, GITHUB_STEP_SUMMARY=str(summary), GITHUB_OUTPUT=str(outputs), GITHUB_EVENT_PATH=str(event),
               GITHUB_ACTIONS="true")
    out = tmp / "reports"
    proc = subprocess.run([str(python), "-m", "autograder", "pr", str(checkout), "--manifest",
                           str(dist / "grader-bundle" / "protected-files.sha256"), "--out", str(out),
                           "--hidden-detail", detail], capture_output=True, text=True, env=env, cwd=tmp, timeout=600)
    return proc, out, summary


@pytest.fixture(scope="module")
def bundle_python(dist, tmp_path_factory) -> Path:
    """A python whose `autograder` is the grader bundle's, as the workflow installs it."""
    return borrowed_venv(tmp_path_factory.mktemp("bundle") / "venv", dist / "grader-bundle")


# `tests` (between the two) in make sweep: make test keeps the level that must hide every hidden
# test's name and the one that shows their hints.
@pytest.mark.parametrize("detail", ["total", pytest.param("tests", marks=pytest.mark.sweep), "hints"])
def test_a_pull_request_at_each_hidden_detail_level(journey, dist, bundle_python, detail):
    tmp = journey["tmp"] / f"pr-{detail}"
    tmp.mkdir()
    checkout = student_checkout(dist, journey["submission"], tmp / "submission")
    proc, out, summary = _pr(dist, bundle_python, checkout, tmp, detail)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = per_topic(json.loads((out / "score.json").read_text()))
    assert got == journey["expected"]
    seen_on(journey, f"pr --hidden-detail {detail}", earned_of(got))
    if detail == "total":
        # What the student sees: the job log, the summary, the comment, and the artifact (all of reports/).
        seen = {"the job log": proc.stdout + proc.stderr, "the job summary": summary.read_text()}
        seen.update({f"reports/{p.relative_to(out)}": p.read_bytes().decode("utf-8", "replace")
                     for p in sorted(out.rglob("*")) if p.is_file()})
        leaks = {where: names_of_hidden_tests(text) for where, text in seen.items()}
        assert not any(leaks.values()), {where: names[:5] for where, names in leaks.items() if names}


# ----------------------------------------------------------------------------- batch
def _zip_folder(path: Path, folder: Path, inside: str) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file() and ".git" not in p.relative_to(folder).parts:
                z.write(p, f"{inside}{p.relative_to(folder).as_posix()}")


def test_batch_as_a_folder_a_zip_a_github_zip_and_a_clone(journey, dist):
    tmp, modules = journey["tmp"] / "batch", journey["submission"]
    root = tmp / "class"
    root.mkdir(parents=True)
    shutil.copytree(modules, root / "folder")
    _zip_folder(root / "zipped.zip", modules, "")
    repository = student_checkout(dist, modules, tmp / "lee-main")
    _zip_folder(root / "github.zip", repository, "lee-main/")        # GitHub's "Download ZIP"
    clone = student_checkout(dist, modules, root / "clone")
    (clone / ".git").mkdir()
    proc = subprocess.run([sys.executable, "-m", "autograder", "batch", str(root), "--out", str(tmp / "out"),
                           "--jobs", "2", "--manifest", str(dist / "student" / "protected-files.sha256")],
                          capture_output=True, text=True, cwd=REPO, timeout=1200, env={**os.environ, **ENGLISH})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO((tmp / "out" / "class.csv").read_text()))}
    assert set(rows) == {"folder", "zipped", "github", "clone"}, sorted(rows)
    wrong = {}
    for name, row in rows.items():
        report = tmp / "out" / "students" / name / "score.json"
        got = per_topic(json.loads(report.read_text())) if report.is_file() else {}
        seen_on(journey, f"batch: {name}", earned_of(got))
        if got != journey["expected"]:
            wrong[name] = {"status": row["status"], "per topic": got}
    assert not wrong, wrong


# ----------------------------------------------------------------------------- Gradescope
@pytest.mark.parametrize("upload", ["repository", pytest.param("download-zip", marks=pytest.mark.sweep)])
def test_gradescope_run_autograder(journey, dist, upload):
    """Gradescope's GitHub upload puts the repository at the top of the submission folder; a
    zip from GitHub's "Download ZIP" unpacks into one folder `name-main/`."""
    root = journey["tmp"] / f"gradescope-{upload}" / "autograder"
    with zipfile.ZipFile(dist / "gradescope.zip") as z:
        z.extractall(root / "source")
    script = root / "run_autograder"
    shutil.copyfile(root / "source" / "run_autograder", script)      # what Gradescope's image build does
    script.chmod(0o755)
    inside = "" if upload == "repository" else "lee-main"
    student_checkout(dist, journey["submission"], root / "submission" / inside)
    env = {**os.environ, **ENGLISH, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
    proc = subprocess.run([str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    earned = {t: round(sum(x["score"] for x in results["tests"] if x["name"].split(" ", 1)[0] == t), 6)
              for t in MODULE}
    seen_on(journey, f"Gradescope ({upload})", earned)
    assert earned == {t: e for t, (e, _status) in journey["expected"].items()}, results["output"]
    for test in results["tests"]:
        if test["name"].split(" ", 1)[0] in journey["untouched"]:
            assert test["status"] == "failed" and NOT_IMPLEMENTED in test["output"], test


# ----------------------------------------------------------------------------- nbgrader
@pytest.mark.sweep
def test_nbgrader_release_fetch_submit_autograde_and_feedback(journey):
    sys.path.insert(0, str(REPO / "scripts"))
    import make_nbgrader

    from autograder.notebook import answer_module

    nbgrader = str(Path(sys.executable).with_name("nbgrader"))
    root = journey["tmp"] / "nbgrader"
    course, exchange, home, student_home = root / "course", root / "exchange", root / "home", root / "lee"
    for folder in (exchange, home, student_home):
        folder.mkdir(parents=True)
    exchange.chmod(0o777)
    env = {**os.environ, **ENGLISH, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}

    def run(*args, cwd):
        proc = subprocess.run([nbgrader, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=1800)
        assert proc.returncode == 0, f"nbgrader {' '.join(args)}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return proc

    for rel, text in make_nbgrader.expected_course().items():
        (course / rel).parent.mkdir(parents=True, exist_ok=True)
        (course / rel).write_text(text)
    x, name = f"--Exchange.root={exchange}", UNIT.name
    run("generate_assignment", name, "--create", "--force", cwd=course)
    run("release_assignment", name, x, cwd=course)
    run("fetch_assignment", name, "--course", name, x, cwd=student_home)
    # The student writes the same code into the answer cells of the topics they did; the
    # untouched notebooks are handed in as fetched.
    done = {MODULE[t]: (journey["submission"] / f"{MODULE[t]}.py").read_text() for t in MODULE if t not in journey["untouched"]}
    for path in (student_home / name).glob("*.ipynb"):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if answer_module(cell) in done:
                cell["source"] = f"%%writefile {answer_module(cell)}.py\n" + done[answer_module(cell)]
        path.write_text(json.dumps(nb))
    run("submit", name, "--course", name, x, "--student=lee", cwd=student_home)
    run("collect", name, x, cwd=course)
    run("autograde", name, "--create", cwd=course)
    run("generate_feedback", name, cwd=course)

    import sqlite3

    with sqlite3.connect(course / "gradebook.db") as db:
        scores = dict(db.execute(
            "SELECT n.name, SUM(COALESCE(g.manual_score, g.auto_score, 0)) FROM grade g "
            "JOIN submitted_notebook sn ON g.notebook_id = sn.id JOIN notebook n ON sn.notebook_id = n.id "
            "GROUP BY n.name").fetchall())
    seen_on(journey, "nbgrader gradebook", {t: round(float(scores[t]), 6) for t in MODULE})
    assert {t: round(float(scores[t]), 6) for t in MODULE} == {t: e for t, (e, _s) in journey["expected"].items()}
    # README step 8: the instructor releases the feedback, the student fetches it (their own nbgrader cache).
    run("release_feedback", name, x, cwd=course)
    run("fetch_feedback", name, "--course", name, x, cwd=student_home)
    fetched = {p.stem: p.read_text() for p in (student_home / name / "feedback").glob("*/*.html")}
    assert set(fetched) == set(MODULE), sorted(fetched)
    shown_scores = {topic: re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", page) for topic, page in fetched.items()}
    seen_on(journey, "nbgrader fetched feedback", {t: float(m[1]) for t, m in shown_scores.items() if m})
    for topic, page in fetched.items():
        shown = re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", page)
        assert shown and float(shown[1]) == pytest.approx(journey["expected"][topic][0]), (topic, shown)
    feedback = {topic: _text_of_html(page) for topic, page in fetched.items()}
    unsaid = [topic for topic in journey["untouched"] if NOT_IMPLEMENTED not in feedback[topic]]
    assert not unsaid, {topic: re.findall(r"^error: .*$", feedback[topic], re.M)[:1] for topic in unsaid}
    leaks = {topic: names_of_hidden_tests(text) for topic, text in feedback.items()}
    assert not any(leaks.values()), leaks


def _text_of_html(page: str) -> str:
    """The text a reader sees of an HTML page (no style, script or tags; entities decoded)."""
    import html

    page = re.sub(r"(?s)<(style|script)\b.*?</\1>", "", page)
    return html.unescape(re.sub(r"<[^>]+>", "", page))
