"""The course in Jupyter, round trip with real nbgrader and a real Jupyter kernel:
generate_assignment -> release_assignment -> fetch_assignment (as students) -> the answer
cells filled -> submit -> collect -> autograde -> generate_feedback, in a temporary course
with a local exchange folder. The gradebook's score of every notebook equals
`python -m autograder grade` of the same code, topic by topic.

The round trip takes minutes (every nbgrader command starts a heavy application, every
notebook a kernel), so its tests run in `make sweep`, which CI runs after `make test`; the
checks of the generated course that need no nbgrader run stay in `make test`."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ENGLISH, MATRIX, REPO, SOLUTIONS, UNIT, grade

sys.path.insert(0, str(REPO / "scripts"))
import leak_check  # noqa: E402
import make_nbgrader  # noqa: E402

from autograder.notebook import ANSWER_PREFIX, answer_module  # noqa: E402

NBGRADER = str(Path(sys.executable).with_name("nbgrader"))
ASSIGNMENT = UNIT.name
TOPIC_OF = {t.module: t.id for t in UNIT.topics}
MODULE_OF = {t.id: t.module for t in UNIT.topics}


def _mutant(topic: str, name: str) -> str:
    """The module text of a kill-matrix mutant."""
    text = (SOLUTIONS / f"{MODULE_OF[topic]}.py").read_text()
    for old, new in next(m for m in MATRIX[topic]["mutants"] if m["name"] == name)["replace"]:
        assert old in text
        text = text.replace(old, new)
    return text


MUTANTS = {"bptt": "no_tanh_derivative", "gate_derivative": "shortcut_ignores_gate",
           "bleu": "brevity_ratio_inverted"}
LOOP = (SOLUTIONS / "attention.py").read_text().replace(
    "def additive_attention(s_prev, H, Wa, Ua, va, mask=None):\n",
    "def additive_attention(s_prev, H, Wa, Ua, va, mask=None):\n    while True:\n        pass\n", 1)
assert "while True" in LOOP


def hostile(course: Path) -> str:
    """beam_search.py that, imported in the grader's worker, tries to change the gradebook and
    to read a hidden suite, and says in its error what it managed."""
    db = course / "gradebook.db"
    hidden = UNIT.dirs["hidden_tests"] / "test_beam_attribution.py"
    return (SOLUTIONS / "beam_search.py").read_text() + f'''

def _attack():
    done = []
    try:
        with open({str(db)!r}, "r+b") as f:
            f.seek(0)
            f.write(b"HACKED")
        done.append("wrote the gradebook")
    except Exception as exc:
        done.append(f"gradebook: {{type(exc).__name__}}")
    try:
        done.append("read: " + open({str(hidden)!r}).read(200))
    except Exception as exc:
        done.append(f"hidden: {{type(exc).__name__}}")
    return done


ATTACK = _attack()
'''


KERNEL_CELL = ("import pathlib\n"
               "p = pathlib.Path('{db}')\n"
               "p.write_bytes(b'HACKED' + p.read_bytes()[6:])\n"
               "print(open('{hidden}').read())\n")


def run(*args, cwd: Path, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run([NBGRADER, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **ENGLISH, **(env or {}),
                               # nbgrader runs `alembic` and the kernel from the environment's bin
                               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"})
    assert proc.returncode == 0, f"nbgrader {' '.join(map(str, args))}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def fill(folder: Path, modules: dict[str, str], extra_cell: str | None = None, drop_magic: bool = False) -> None:
    """Put `modules` (module -> text) into the answer cells of the fetched notebooks, as a
    student would; keep only the notebooks named by `modules` when `only`."""
    for path in folder.glob("*.ipynb"):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            module = answer_module(cell)
            if module in modules:
                magic = "" if drop_magic else f"%%writefile {module}.py\n"
                cell["source"] = magic + modules[module]
        if extra_cell and any(answer_module(c) in modules for c in nb["cells"]):
            nb["cells"].append({"cell_type": "code", "metadata": {}, "source": extra_cell, "outputs": [],
                                "execution_count": None, "id": "student-added"})
        path.write_text(json.dumps(nb))


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory):
    root = tmp_path_factory.mktemp("nbgrader")
    course, exchange, home = root / "course", root / "exchange", root / "home"
    exchange.mkdir(mode=0o777)
    home.mkdir()
    env = {"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter")}
    for rel, text in make_nbgrader.expected_course().items():
        (course / rel).parent.mkdir(parents=True, exist_ok=True)
        (course / rel).write_text(text)
    x = f"--Exchange.root={exchange}"
    run("generate_assignment", ASSIGNMENT, "--create", "--force", cwd=course, env=env)
    run("release_assignment", ASSIGNMENT, x, cwd=course, env=env)
    students = {
        "reference": ({t.module: (SOLUTIONS / f"{t.module}.py").read_text() for t in UNIT.topics}, {}),
        "stubs": ({}, {}),
        **{f"mutant-{topic}": ({MODULE_OF[topic]: _mutant(topic, name)}, {}) for topic, name in MUTANTS.items()},
        "loop": ({"attention": LOOP, "bptt": (SOLUTIONS / "bptt.py").read_text()}, {}),
        "hostile": ({"beam_search": hostile(course)},
                    {"extra_cell": KERNEL_CELL.format(db=course / "gradebook.db",
                                                      hidden=UNIT.dirs["hidden_tests"] / "test_bleu.py"),
                     "drop_magic": True}),
    }
    modules = {}
    for student, (mods, how) in students.items():
        home_dir = root / "students" / student
        home_dir.mkdir(parents=True)
        run("fetch_assignment", ASSIGNMENT, "--course", ASSIGNMENT, x, cwd=home_dir, env=env)
        folder = home_dir / ASSIGNMENT
        fill(folder, mods, **how)
        if mods and student != "reference":     # a student who did one topic hands in that notebook only
            for path in folder.glob("*.ipynb"):
                if not any(answer_module(c) in mods for c in json.loads(path.read_text())["cells"]):
                    path.unlink()
        modules[student] = {t.module: mods.get(t.module) for t in UNIT.topics
                            if (folder / f"{t.id}.ipynb").exists()}
        run("submit", ASSIGNMENT, "--course", ASSIGNMENT, x, f"--student={student}", cwd=home_dir, env=env)
    run("collect", ASSIGNMENT, x, cwd=course, env=env)
    db_before = (course / "gradebook.db").read_bytes()
    run("autograde", ASSIGNMENT, "--create", cwd=course, env=env, timeout=1800)
    run("generate_feedback", ASSIGNMENT, cwd=course, env=env)
    return {"root": root, "course": course, "modules": modules, "db_before": db_before}


def _scores(course: Path) -> dict[tuple[str, str], float]:
    """(student, notebook) -> the gradebook's autograded score."""
    with sqlite3.connect(course / "gradebook.db") as db:
        rows = db.execute(
            "SELECT s.student_id, n.name, SUM(COALESCE(g.manual_score, g.auto_score, 0)) "
            "FROM grade g JOIN submitted_notebook sn ON g.notebook_id = sn.id "
            "JOIN notebook n ON sn.notebook_id = n.id JOIN submitted_assignment s ON sn.assignment_id = s.id "
            "GROUP BY s.student_id, n.name").fetchall()
    return {(student, nb): float(score) for student, nb, score in rows}


def _direct(round_trip, student: str, tmp_path: Path) -> dict[str, float]:
    """topic -> earned by `python -m autograder grade` of the same modules (stubs where none)."""
    sub = tmp_path / student
    sub.mkdir()
    for module, text in round_trip["modules"][student].items():
        if text is None:       # the released answer cell, as fetched: nbgrader's stub
            text = released_module(round_trip["course"], module)
        (sub / f"{module}.py").write_text(text)
    proc, score = grade(sub, tmp_path / f"{student}-out")
    assert proc.returncode == 0, proc.stderr
    return {t["id"]: t["earned"] for t in score["topics"] if (sub / f"{MODULE_OF[t['id']]}.py").exists()}


def released_module(course: Path, module: str) -> str:
    nb = json.loads((course / "release" / ASSIGNMENT / f"{TOPIC_OF[module]}.ipynb").read_text())
    cell = next(c for c in nb["cells"] if answer_module(c) == module)
    source = "".join(cell["source"])
    return source.split("\n", 1)[1]


@pytest.mark.sweep
def test_the_gradebook_agrees_with_the_grader_topic_by_topic(round_trip, tmp_path):
    scores = _scores(round_trip["course"])
    for student in ("reference", "stubs", "mutant-bptt", "mutant-gate_derivative", "mutant-bleu"):
        direct = _direct(round_trip, student, tmp_path)
        assert direct, student
        for topic, earned in direct.items():
            assert scores[student, topic] == pytest.approx(earned), (student, topic, scores[student, topic], earned)
    assert all(scores["reference", t.id] == UNIT.rubric.topic(t.id).points for t in UNIT.topics)
    assert all(scores["stubs", t.id] == 0 for t in UNIT.topics)
    for topic in MUTANTS:
        assert 0 < scores[f"mutant-{topic}", topic] < UNIT.rubric.topic(topic).points


@pytest.mark.sweep
def test_the_feedback_shows_the_graders_hint_and_no_hidden_test(round_trip):
    feedback = round_trip["course"] / "feedback"
    for topic, name in MUTANTS.items():
        html = next((feedback / f"mutant-{topic}" / ASSIGNMENT).glob(f"{topic}.html")).read_text()
        failing = [t for t in UNIT.rubric.topic(topic).tests if t.visibility == "hidden"]
        assert any(_escaped(t.hint[:60]) in html for t in failing), f"no hint of {topic} in its feedback"
    for path in feedback.rglob("*.html"):
        html = path.read_text()
        assert "hidden::" not in html and "BEGIN HIDDEN TESTS" not in html, path
        assert not _names_hidden_tests(html), path


def _names_hidden_tests(text: str) -> list[str]:
    """Hidden test names in `text`, as whole words (a public test's name may extend one)."""
    names = [t.test for x in UNIT.rubric.topics for t in x.tests if t.visibility == "hidden"]
    return [n for n in names if re.search(rf"\b{n}\b", text)]


def _escaped(text: str) -> str:
    import html
    return html.escape(text, quote=False)


@pytest.mark.sweep
def test_an_endless_loop_costs_only_its_topic(round_trip):
    scores = _scores(round_trip["course"])
    assert scores["loop", "attention"] == 0
    assert scores["loop", "bptt"] == UNIT.rubric.topic("bptt").points


@pytest.mark.sweep
def test_a_hostile_notebook_changes_nothing_and_reads_nothing(round_trip):
    course = round_trip["course"]
    with sqlite3.connect(course / "gradebook.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert not (course / "gradebook.db").read_bytes().startswith(b"HACKED")
    hidden_start = (UNIT.dirs["hidden_tests"] / "test_beam_attribution.py").read_text()[:60]
    bleu_start = (UNIT.dirs["hidden_tests"] / "test_bleu.py").read_text()[:60]
    for path in list((course / "autograded").rglob("*")) + list((course / "feedback").rglob("*")):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", "replace")
            assert hidden_start not in text and bleu_start not in text, path
    nb = json.loads((course / "autograded" / "hostile" / ASSIGNMENT / "beam_attribution.ipynb").read_text())
    added = [c for c in nb["cells"] if c.get("id") == "student-added"]
    assert added and all("HACKED" not in "".join(c["source"]) for c in added), "the student's own cell ran"
    answer = next(c for c in nb["cells"] if answer_module(c) == "beam_search")
    assert "".join(answer["source"]).startswith("%%writefile beam_search.py")


@pytest.mark.sweep
def test_the_released_notebooks_hold_no_solution_and_no_hidden_test(round_trip, tmp_path):
    """The leak check of the student repository, on the cell sources of the released notebooks."""
    for path in (round_trip["course"] / "release" / ASSIGNMENT).glob("*.ipynb"):
        text = path.read_text()
        assert not _names_hidden_tests(text), f"{path.name} names a hidden test"
        cells = json.loads(text)["cells"]
        (tmp_path / f"{path.stem}.txt").write_text("\n".join("".join(c["source"]) for c in cells))
    assert leak_check.check(tmp_path, UNIT) == []


def test_the_course_on_disk_is_what_make_nbgrader_writes():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "make_nbgrader.py"), "--check"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout


def test_every_notebook_has_one_test_cell_per_rubric_entry_with_its_points():
    for rel, text in make_nbgrader.expected_course().items():
        if not rel.endswith(".ipynb"):
            continue
        topic = Path(rel).stem
        cells = json.loads(text)["cells"]
        graded = [c["metadata"]["nbgrader"] for c in cells if c["metadata"]["nbgrader"]["grade"]]
        rubric = UNIT.rubric.topic(topic).tests
        assert [(m["grade_id"], m["points"]) for m in graded] == [
            (make_nbgrader.grade_id(UNIT.rubric.topic(topic), t), t.points) for t in rubric]
        answers = [c for c in cells if c["metadata"]["nbgrader"]["grade_id"] == f"{ANSWER_PREFIX}{MODULE_OF[topic]}"]
        assert len(answers) == 1 and "".join(answers[0]["source"]).startswith(f"%%writefile {MODULE_OF[topic]}.py")
    assert shutil.which(NBGRADER) or Path(NBGRADER).exists()
