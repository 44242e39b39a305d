"""What nbgrader's feedback shows of the hidden tests, and which hidden inputs it draws
(issue 34, defect 1).

- `c.GradingSettings.hidden_detail` (the course's nbgrader config) cuts a failing hidden
  test cell's output as `pr --hidden-detail` cuts the reports: "hints" message and hint,
  "tests" the message, "total" how many of the topic's hidden tests failed. The score is the
  same at every level.
- Each notebook's kernel sees only the notebooks autograded before it, and derived its seed
  from those: the hidden inputs, and so the numbers its messages quote, were not `grade`'s
  for the same submission. GradingSettings gives every notebook the whole submission's seed.

The unit checks run in `make test`; the round trip with real nbgrader (one small
submission, autograded at two levels) in `make sweep`."""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from helpers import ENGLISH, REPO, SOLUTIONS, UNIT, grade, results_by_id

sys.path.insert(0, str(REPO / "scripts"))
import make_nbgrader  # noqa: E402
from test_nbgrader import ASSIGNMENT, _mutant, _scores, fill, run  # noqa: E402

from autograder import notebook  # noqa: E402
from autograder.grading.seed import submission_seed  # noqa: E402
from autograder.notebook import GRADING_KEY, grade_cell  # noqa: E402

SOURCE = f"source/{ASSIGNMENT}"
# bptt (a mutant) and gate_derivative (right), in nbgrader's order: bptt's kernel runs while
# gate_derivative.ipynb is not yet in the autograded folder.
HANDED_IN = {"bptt": _mutant("bptt", "no_tanh_derivative"),
             "gate_derivative": (SOLUTIONS / "gate_derivative.py").read_text()}


def _handed_in(folder: Path) -> None:
    """The submitted notebooks of HANDED_IN, as nbgrader's source notebooks filled in."""
    folder.mkdir(parents=True)
    course = make_nbgrader.expected_course()
    for module in HANDED_IN:
        topic = next(t.id for t in UNIT.topics if t.module == module)
        (folder / f"{topic}.ipynb").write_text(course[f"{SOURCE}/{topic}.ipynb"])
    fill(folder, HANDED_IN)


def test_every_notebook_gets_the_seed_grade_derives_from_the_whole_submission(tmp_path):
    from nbformat import read

    from autograder.nbgrader_preprocessors import GradingSettings
    _handed_in(tmp_path / "submitted")
    (tmp_path / "modules").mkdir()
    for module, text in HANDED_IN.items():
        (tmp_path / "modules" / f"{module}.py").write_text(text)
    whole = submission_seed(UNIT, tmp_path / "modules")
    (tmp_path / "modules" / "gate_derivative.py").unlink()
    bptt_alone = submission_seed(UNIT, tmp_path / "modules")       # what bptt's kernel derived
    assert whole != bptt_alone
    for path in sorted((tmp_path / "submitted").glob("*.ipynb")):
        nb = read(path, as_version=4)
        nb, _resources = GradingSettings(hidden_detail="total").preprocess(nb, {"metadata": {"path": str(path.parent)}})
        assert nb.metadata[GRADING_KEY] == {"seed": whole, "hidden_detail": "total"}, path.name


def _score(seed: int | None) -> dict:
    """A score.json of bptt: two of three hidden tests failed, one public test passed."""
    def test(name, outcome, message="", hint="", kind=""):
        return {"id": name, "earned": 1.0 if outcome == "passed" else 0.0, "possible": 1.0, "outcome": outcome,
                "message": message, "hint": hint, "kind": kind}
    return {"topics": [{"id": "bptt", "message": "", "tests": [
        test("public::test_one", "passed"),
        test("hidden::test_a", "failed", "relative error 5.4e-01", "the tanh derivative", "value"),
        test("hidden::test_b", "failed", "dx disagrees", "sum over time", "value"),
        test("hidden::test_c", "passed")]}], "seed": seed}


@pytest.mark.parametrize("detail, shown", [
    ("hints", "failed: relative error 5.4e-01\nhint: the tanh derivative"),
    ("tests", "failed: relative error 5.4e-01"),
    ("total", "failed: 2 of 3 hidden tests failed")])
def test_a_hidden_test_cell_shows_what_the_hidden_detail_allows(tmp_path, monkeypatch, capsys, detail, shown):
    nb = {"cells": [], "metadata": {GRADING_KEY: {"seed": 1234, "hidden_detail": detail}}, "nbformat": 4}
    (tmp_path / "bptt.ipynb").write_text(json.dumps(nb))
    asked = []
    monkeypatch.setattr(notebook, "_grade", lambda topic, modules, suite, seed=None: asked.append(seed) or _score(seed))
    with pytest.raises(notebook.GradeCellFailed) as failed:
        grade_cell("bptt", "hidden::test_a", tmp_path)
    assert str(failed.value) == shown
    grade_cell("bptt", "hidden::test_c", tmp_path)          # a passing cell passes at every level
    grade_cell("bptt", "public::test_one", tmp_path)
    assert capsys.readouterr().out == "passed (1 point)\npassed (1 point)\n"
    assert asked == [1234] * 3, "the notebook's seed was not graded with"


# --- the round trip (make sweep) ---

@pytest.fixture(scope="module")
def autograded(tmp_path_factory):
    """One submission (HANDED_IN) autograded and its feedback generated at "tests" and at
    "total", in two copies of one course; and `grade` of the same modules."""
    root = tmp_path_factory.mktemp("nbgrader-detail")
    home = root / "home"
    home.mkdir()
    env = {"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter")}
    base = root / "base"
    for rel, text in make_nbgrader.expected_course().items():
        if not rel.endswith(".ipynb") or Path(rel).stem in {"bptt", "gate_derivative"}:
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(text)
    run("generate_assignment", ASSIGNMENT, "--create", "--force", cwd=base, env=env)
    _handed_in(base / "submitted" / "s1" / ASSIGNMENT)
    courses = {}
    for detail in ("tests", "total"):
        course = root / detail
        shutil.copytree(base, course)
        (course / "local_nbgrader_config.py").write_text(
            f"c = get_config()\nc.GradingSettings.hidden_detail = {detail!r}\n")
        run("autograde", ASSIGNMENT, "--create", cwd=course, env=env, timeout=1200)
        run("generate_feedback", ASSIGNMENT, cwd=course, env=env)
        courses[detail] = course
    modules = root / "modules"
    modules.mkdir()
    for module, text in HANDED_IN.items():
        (modules / f"{module}.py").write_text(text)
    proc, score = grade(modules, root / "out", env=ENGLISH)
    assert proc.returncode == 0, proc.stderr
    return courses, score


def _feedback(course: Path, topic: str) -> str:
    page = (course / "feedback" / "s1" / ASSIGNMENT / f"{topic}.html").read_text()
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.mark.sweep
@pytest.mark.parametrize("detail", ["tests", "total"])
def test_the_feedback_shows_what_grade_shows_at_the_hidden_detail(autograded, detail):
    courses, score = autograded
    text = _feedback(courses[detail], "bptt")
    failing = [t for t in results_by_id(score, "bptt").values() if t["id"].startswith("hidden::") and t["message"]]
    assert len(failing) >= 2
    for test in failing:
        # the message grade wrote, numbers and all: the same hidden inputs were drawn
        assert (test["message"] in text) == (detail == "tests"), (detail, test["id"], test["message"][:80])
        assert not test["hint"] or test["hint"] not in text, (detail, test["id"])
    hidden = [t for t in results_by_id(score, "bptt").values() if t["id"].startswith("hidden::")]
    total = f"{sum(not t['outcome'] == 'passed' for t in hidden)} of {len(hidden)} hidden tests failed"
    assert (total in text) == (detail == "total")


@pytest.mark.sweep
@pytest.mark.parametrize("detail", ["tests", "total"])
def test_the_score_is_grades_at_every_hidden_detail(autograded, detail):
    courses, score = autograded
    earned = {t["id"]: t["earned"] for t in score["topics"]}
    gradebook = _scores(courses[detail])
    for module in HANDED_IN:
        topic = next(t.id for t in UNIT.topics if t.module == module)
        assert gradebook["s1", topic] == pytest.approx(earned[topic]), (detail, topic)
    assert 0 < gradebook["s1", "bptt"] < UNIT.rubric.topic("bptt").points

