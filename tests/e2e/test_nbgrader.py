"""The course in Jupyter, round trip with real nbgrader and a real Jupyter kernel:
generate_assignment -> release_assignment -> fetch_assignment (as students) -> the answer
cells filled -> submit -> collect -> autograde -> generate_feedback -> release_feedback ->
fetch_feedback (as students), in a temporary course with a local exchange folder. The
gradebook's score of every notebook equals `python -m autograder grade` of the same code,
topic by topic, and so does the feedback each student fetches.

The round trip takes minutes (every nbgrader command starts a heavy application, every
notebook a kernel), so its tests run in `make sweep`, which CI runs after `make test`; the
checks of the generated course that need no nbgrader run stay in `make test`."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import (
    CHROMIUM,
    ENGLISH,
    MATRIX,
    MISSING_GLYPHS,
    NO_CHROMIUM,
    REPO,
    SOLUTIONS,
    STUBS,
    UNIT,
    grade,
    measured_in_chromium,
    screenshot_in_chromium,
)

sys.path.insert(0, str(REPO / "scripts"))
import leak_check  # noqa: E402
import make_nbgrader  # noqa: E402

from autograder.notebook import ANSWER_PREFIX, REMOVED, STUB_KEY, answer_module  # noqa: E402

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
    hidden = UNIT.test_file("beam_attribution", "hidden")
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
    """`.venv/bin/nbgrader ...` as the README writes it: the venv not activated, so its bin
    is not on PATH (nbgrader runs `alembic` and the kernel by PATH; the course's config
    puts them there)."""
    venv_bin = Path(sys.executable).parent
    path = os.pathsep.join(p for p in os.environ.get("PATH", os.defpath).split(os.pathsep)
                           if p and Path(p) != venv_bin)
    environ = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    proc = subprocess.run([NBGRADER, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**environ, **ENGLISH, **(env or {}), "PATH": path})
    assert proc.returncode == 0, f"nbgrader {' '.join(map(str, args))}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def fill(folder: Path, modules: dict[str, str], extra_cell: str | None = None, drop_magic: bool = False,
         edit=None, extra_files: dict[str, str] | None = None) -> None:
    """Put `modules` (module -> text) into the answer cells of the fetched notebooks, as a
    student would; `edit(notebook name, cells)` changes the cells further; `extra_files`
    (relative path -> text) are handed in beside the notebooks."""
    for rel, text in (extra_files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    for path in folder.glob("*.ipynb"):
        nb = json.loads(path.read_text())
        if edit is not None:
            edit(path.stem, nb["cells"])
        for cell in nb["cells"]:
            module = answer_module(cell)
            if module in modules:
                magic = "" if drop_magic else f"%%writefile {module}.py\n"
                cell["source"] = magic + modules[module]
        if extra_cell and any(answer_module(c) in modules for c in nb["cells"]):
            nb["cells"].append({"cell_type": "code", "metadata": {}, "source": extra_cell, "outputs": [],
                                "execution_count": None, "id": "student-added"})
        path.write_text(json.dumps(nb))


def shadow_files(marker: Path) -> dict[str, str]:
    """An `autograder` package and a `yaml.py` that, imported or run instead of the grader's,
    leave a file in `marker` and pass every test cell."""
    leave = "import pathlib\npathlib.Path({path!r}).write_text({what!r})\n"
    return {"autograder/__init__.py": "",
            "autograder/notebook.py": leave.format(path=str(marker / "kernel"), what="imported in the kernel")
            + "def grade_cell(*args, **kwargs):\n    print('passed (1 point)')\n",
            "autograder/__main__.py": leave.format(path=str(marker / "grader"), what="run as the grader"),
            "yaml.py": leave.format(path=str(marker / "yaml"), what="yaml imported")}


def tamper(notebook: str, cells: list) -> None:
    """Change the first hidden and the first public test cell of bptt, leave the rest."""
    if notebook != "bptt":
        return
    for prefix in ("hidden_", "public_"):
        cell = next(c for c in cells if c["metadata"]["nbgrader"]["grade_id"].startswith(prefix))
        cell["source"] = "".join(cell["source"]) + "\n# changed by the student\n"


def duplicate_a_test_cell(notebook: str, cells: list) -> None:
    """A Jupyter copy and paste of bptt's first public test cell, metadata and all."""
    if notebook == "bptt":
        index, cell = next((i, c) for i, c in enumerate(cells)
                           if c["metadata"]["nbgrader"]["grade_id"].startswith("public_"))
        cells.insert(index + 1, {**json.loads(json.dumps(cell)), "id": "pasted-copy"})


TAMPERED = 2                        # test cells `tamper` changes
SHADOW_COPIED = "shadow-copied"     # a student whose files reach submitted/ without the exchange


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
    # The instructor's exchange, where the generated config says to set it.
    (course / "local_nbgrader_config.py").write_text(f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n")
    x = f"--Exchange.root={exchange}"       # the students' side: their own Jupyter's configuration
    marker = root / "shadow-ran"
    marker.mkdir()
    run("generate_assignment", ASSIGNMENT, "--create", "--force", cwd=course, env=env)
    run("release_assignment", ASSIGNMENT, cwd=course, env=env)
    everything = {t.module: (SOLUTIONS / f"{t.module}.py").read_text() for t in UNIT.topics}
    students = {
        "a-duplicate": (everything, {"edit": duplicate_a_test_cell}),
        "reference": (everything, {}),
        "tamper": ({}, {"edit": tamper}),
        "shadow": ({}, {"extra_files": shadow_files(marker)}),
        "stubs": ({}, {}),
        **{f"mutant-{topic}": ({MODULE_OF[topic]: _mutant(topic, name)}, {}) for topic, name in MUTANTS.items()},
        "loop": ({"attention": LOOP, "bptt": (SOLUTIONS / "bptt.py").read_text()}, {}),
        "hostile": ({"beam_search": hostile(course)},
                    {"extra_cell": KERNEL_CELL.format(db=course / "gradebook.db",
                                                      hidden=UNIT.test_file("bleu", "hidden")),
                     "drop_magic": True}),
    }
    modules = {}
    for student, (mods, how) in students.items():
        home_dir = root / "students" / student
        home_dir.mkdir(parents=True)
        mine = {**env, "HOME": str(home_dir)}           # each student's own nbgrader cache (for fetch_feedback)
        run("fetch_assignment", ASSIGNMENT, "--course", ASSIGNMENT, x, cwd=home_dir, env=mine)
        folder = home_dir / ASSIGNMENT
        fill(folder, mods, **how)
        if mods and mods is not everything:     # a student who did one topic hands in that notebook only
            for path in folder.glob("*.ipynb"):
                if not any(answer_module(c) in mods for c in json.loads(path.read_text())["cells"]):
                    path.unlink()
        modules[student] = {t.module: mods.get(t.module) for t in UNIT.topics
                            if (folder / f"{t.id}.ipynb").exists()}
        run("submit", ASSIGNMENT, "--course", ASSIGNMENT, x, f"--student={student}", cwd=home_dir, env=mine)
    run("collect", ASSIGNMENT, cwd=course, env=env)
    # Files that reach submitted/ another way (copied by hand, an LMS download) are not
    # filtered by collect: the kernel and the grader must still not import them.
    shutil.copytree(course / "submitted" / "stubs", course / "submitted" / SHADOW_COPIED)
    for rel, text in shadow_files(marker).items():
        (course / "submitted" / SHADOW_COPIED / ASSIGNMENT / rel).parent.mkdir(parents=True, exist_ok=True)
        (course / "submitted" / SHADOW_COPIED / ASSIGNMENT / rel).write_text(text)
    modules[SHADOW_COPIED] = modules["stubs"]
    db_before = (course / "gradebook.db").read_bytes()
    autograde = run("autograde", ASSIGNMENT, "--create", cwd=course, env=env, timeout=1800)
    feedback = run("generate_feedback", ASSIGNMENT, cwd=course, env=env)
    feedback_log = feedback.stderr + run("release_feedback", ASSIGNMENT, cwd=course, env=env).stderr
    fetched = {}
    for student in students:
        home_dir = root / "students" / student
        run("fetch_feedback", ASSIGNMENT, "--course", ASSIGNMENT, x, cwd=home_dir, env={**env, "HOME": str(home_dir)})
        fetched[student] = {p.stem: p for p in (home_dir / ASSIGNMENT / "feedback").glob("*/*.html")}
    return {"root": root, "course": course, "modules": modules, "db_before": db_before, "marker": marker,
            "autograde_log": autograde.stdout + autograde.stderr, "feedback_log": feedback_log, "fetched": fetched}


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
    for student in ("reference", "stubs", "mutant-bptt", "mutant-gate_derivative", "mutant-bleu", "a-duplicate",
                    "tamper", "shadow", SHADOW_COPIED):
        direct = _direct(round_trip, student, tmp_path)
        assert direct, student
        for topic, earned in direct.items():
            assert scores[student, topic] == pytest.approx(earned), (student, topic, scores[student, topic], earned)
    for student in ("reference", "a-duplicate"):
        assert all(scores[student, t.id] == UNIT.rubric.topic(t.id).points for t in UNIT.topics), student
    for student in ("stubs", "tamper", "shadow", SHADOW_COPIED):
        assert all(scores[student, t.id] == 0 for t in UNIT.topics), student
    for topic in MUTANTS:
        assert 0 < scores[f"mutant-{topic}", topic] < UNIT.rubric.topic(topic).points


@pytest.mark.sweep
def test_the_feedback_shows_the_graders_hint_and_no_hidden_test(round_trip):
    feedback = round_trip["course"] / "feedback"
    for topic in MUTANTS:
        html = next((feedback / f"mutant-{topic}" / ASSIGNMENT).glob(f"{topic}.html")).read_text()
        failing = [t for t in UNIT.rubric.topic(topic).tests if t.visibility == "hidden"]
        # A failure the suite diagnosed shows its diagnosis instead of the rubric's hint.
        mutant = next(m for m in MATRIX[topic]["mutants"] if m["name"] == MUTANTS[topic])
        guidance = [t.hint[:60] for t in failing] + [mutant["diagnosis"]] * bool(mutant.get("diagnosis"))
        assert any(_escaped(g) in html for g in guidance), f"no hint or diagnosis of {topic} in its feedback"
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
    hidden_start = UNIT.test_file("beam_attribution", "hidden").read_text()[:60]
    bleu_start = UNIT.test_file("bleu", "hidden").read_text()[:60]
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


@pytest.mark.sweep
def test_the_released_answer_cells_are_the_student_releases_stubs(round_trip, tmp_path):
    """What the student fetches is what `make release` gives: no module-level leftovers of a
    solution-only helper, so an untouched notebook is `not_implemented`, never `error`."""
    for topic in UNIT.topics:
        assert released_module(round_trip["course"], topic.module) == (STUBS / f"{topic.module}.py").read_text(), topic
    for module in round_trip["modules"]["stubs"]:
        (tmp_path / "untouched").mkdir(exist_ok=True)
        (tmp_path / "untouched" / f"{module}.py").write_text(released_module(round_trip["course"], module))
    _proc, score = grade(tmp_path / "untouched", tmp_path / "out")
    assert {t["id"]: t["status"] for t in score["topics"]} == {t.id: "not_implemented" for t in UNIT.topics}


def _log_by_student(log: str) -> dict[str, list[str]]:
    """nbgrader autograde's log lines, by the student whose notebook was being sanitised."""
    by_student: dict[str, list[str]] = {}
    student = None
    for line in log.splitlines():
        m = re.search(r"Sanitizing .*[/\\]submitted[/\\]([^/\\]+)[/\\]", line)
        if m:
            student = m.group(1)
        by_student.setdefault(student, []).append(line)
    return by_student


@pytest.mark.sweep
def test_only_a_changed_locked_cell_warns(round_trip):
    """nbgrader warns about every hidden test cell as released (jupyter/nbgrader#1961): only
    the tampering student's two changed cells may warn."""
    warnings = {student: [line for line in lines if "has changed!" in line]
                for student, lines in _log_by_student(round_trip["autograde_log"]).items()}
    assert len(warnings.pop("tamper")) == TAMPERED
    assert not any(warnings.values()), {s: w[:2] for s, w in warnings.items() if w}


@pytest.mark.sweep
def test_files_beside_the_notebooks_are_never_imported(round_trip):
    """A student's `autograder/` and `yaml.py` handed in beside the notebooks: collect leaves
    them behind, and where they reach the autograded folder anyway, neither the kernel nor
    the grader imports them (the shadow students score 0 in the agreement test)."""
    assert not (round_trip["course"] / "submitted" / "shadow" / ASSIGNMENT / "yaml.py").exists()
    assert (round_trip["course"] / "autograded" / SHADOW_COPIED / ASSIGNMENT / "yaml.py").exists()
    assert sorted(p.name for p in round_trip["marker"].iterdir()) == []


NOBODY_PYTHON = f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.fixture(scope="module")
def shadow_round_trip_as_nobody(request):
    """The shadow students' part of the round trip, one notebook, run as `nobody` (an
    instructor without root) over a copy of the grader and a venv nobody owns: the dev venv's
    interpreter lives under /root, so the copy's venv is the system's Python of the same
    version with the dev venv's packages on its path, and nbgrader, jupyter and alembic as
    scripts of it. Returns the course folder and the marker folder the shadow code writes to."""
    if os.geteuid() != 0 or not shutil.which("runuser") or not os.access(NOBODY_PYTHON, os.X_OK):
        pytest.skip(f"running nbgrader as nobody needs root, runuser and {NOBODY_PYTHON}")
    import sysconfig
    import tempfile
    base = Path(tempfile.mkdtemp(prefix="nbgrader-nobody-"))      # pytest's own tmp folder is root's alone
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    base.chmod(0o755)
    checkout, venv = base / "checkout", base / "venv"
    shutil.copytree(REPO / "autograder", checkout / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([NOBODY_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "borrowed.pth").write_text(f"{checkout}\n{sysconfig.get_path('purelib')}\n")
    for script, main in {"nbgrader": "nbgrader.apps.nbgraderapp", "alembic": "alembic.config",
                         "jupyter": "jupyter_core.command"}.items():
        (venv / "bin" / script).write_text(f"#!{python}\nimport sys\nfrom {main} import main\nsys.exit(main())\n")
        (venv / "bin" / script).chmod(0o755)
    course, exchange, home, marker = base / "course", base / "exchange", base / "home", base / "shadow-ran"
    for folder in (exchange, home, marker):
        folder.mkdir()
    for rel, text in make_nbgrader.expected_course().items():
        if not rel.endswith(".ipynb") or rel.endswith("/attention.ipynb"):
            (course / rel).parent.mkdir(parents=True, exist_ok=True)
            (course / rel).write_text(text)
    (course / "local_nbgrader_config.py").write_text(f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n")
    student = base / "students" / "shadow"
    student.mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter"), **ENGLISH}

    def as_nobody(*args, cwd: Path) -> None:
        subprocess.run(["chown", "-R", "nobody:", str(base)], check=True)
        proc = subprocess.run([shutil.which("runuser"), "-u", "nobody", "--", "/usr/bin/env",
                               *(f"{k}={v}" for k, v in env.items()), str(venv / "bin" / "nbgrader"), *map(str, args)],
                              cwd=cwd, capture_output=True, text=True, timeout=900, env=env)
        assert proc.returncode == 0, f"nbgrader {args} as nobody:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"

    x = f"--Exchange.root={exchange}"
    as_nobody("generate_assignment", ASSIGNMENT, "--create", "--force", cwd=course)
    as_nobody("release_assignment", ASSIGNMENT, cwd=course)
    as_nobody("fetch_assignment", ASSIGNMENT, "--course", ASSIGNMENT, x, cwd=student)
    fill(student / ASSIGNMENT, {}, extra_files=shadow_files(marker))
    as_nobody("submit", ASSIGNMENT, "--course", ASSIGNMENT, x, "--student=shadow", cwd=student)
    as_nobody("collect", ASSIGNMENT, cwd=course)
    shutil.copytree(course / "submitted" / "shadow", course / "submitted" / SHADOW_COPIED)
    for rel, text in shadow_files(marker).items():
        (course / "submitted" / SHADOW_COPIED / ASSIGNMENT / rel).parent.mkdir(parents=True, exist_ok=True)
        (course / "submitted" / SHADOW_COPIED / ASSIGNMENT / rel).write_text(text)
    as_nobody("autograde", ASSIGNMENT, "--create", cwd=course)
    return course, marker


@pytest.mark.sweep
def test_files_beside_the_notebooks_are_never_imported_by_an_ordinary_user(shadow_round_trip_as_nobody):
    """Issue 24 point 7 as an instructor without root: the same shadow files, handed in and
    copied by hand, earn nothing and never run."""
    course, marker = shadow_round_trip_as_nobody
    assert not (course / "submitted" / "shadow" / ASSIGNMENT / "yaml.py").exists()
    assert (course / "autograded" / SHADOW_COPIED / ASSIGNMENT / "yaml.py").exists()
    assert sorted(p.name for p in marker.iterdir()) == []
    assert _scores(course) == {("shadow", "attention"): 0.0, (SHADOW_COPIED, "attention"): 0.0}

@pytest.mark.sweep
def test_a_copied_test_cell_stops_no_one(round_trip):
    """A copy and paste of a test cell used to end `nbgrader autograde` for the whole class
    (SchemaTooOldError); the copy is not graded, the student and everyone after are."""
    scores = _scores(round_trip["course"])
    graded = {student for student, _nb in scores}
    assert {"a-duplicate", "reference", "stubs", "tamper"} <= graded
    assert "exists multiple times" in "\n".join(_log_by_student(round_trip["autograde_log"])["a-duplicate"])
    nb = json.loads((round_trip["course"] / "autograded" / "a-duplicate" / ASSIGNMENT / "bptt.ipynb").read_text())
    original = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
                    .startswith("public_"))
    twins = [c for c in nb["cells"] if "".join(c["source"]) == REMOVED or c is original]
    assert len(twins) == 2, "the copy is neither graded once nor emptied"
    assert [("nbgrader" in c["metadata"]) for c in twins].count(True) == 1


@pytest.mark.sweep
def test_every_student_fetches_feedback_showing_the_gradebooks_score(round_trip):
    """release_feedback -> fetch_feedback (README step 8; release_feedback used to stop at the
    first submission, its secret not collected): each student fetches one page per notebook
    they handed in, showing the gradebook's score, without a warning of the configuration."""
    scores = _scores(round_trip["course"])
    assert "not recognized" not in round_trip["feedback_log"]
    for student, pages in round_trip["fetched"].items():
        assert sorted(pages) == sorted(TOPIC_OF[m] for m in round_trip["modules"][student]), student
        for topic, page in pages.items():
            shown = re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", page.read_text())
            assert shown and float(shown[1]) == pytest.approx(scores[student, topic]), (student, topic, shown)
            assert float(shown[2]) == UNIT.rubric.topic(topic).points, (student, topic)


@pytest.mark.sweep
def test_feedback_says_one_point_in_the_singular(round_trip):
    html = "\n".join(p.read_text() for p in (round_trip["course"] / "feedback" / "reference").rglob("*.html"))
    assert "passed (1 point)" in html and "(1 points)" not in html


OUTPUT_BOXES_CUT_OFF = """(() => {
  const boxes = [...document.querySelectorAll("div.output_area pre, div.output_subarea pre")];
  return {boxes: boxes.length, cut: boxes.filter(b => b.scrollWidth > b.clientWidth + 1).map(b => b.textContent.slice(0, 80))};
})()"""


@pytest.mark.sweep
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_feedback_shows_every_message_whole_in_a_browser(round_trip):
    """The feedback of a student with failing tests, laid out by headless Chromium at a
    laptop's width: no output box is wider than it shows (a cut-off message scrolls)."""
    for topic in MUTANTS:
        page = next((round_trip["course"] / "feedback" / f"mutant-{topic}" / ASSIGNMENT).glob(f"{topic}.html"))
        measured = measured_in_chromium(page, OUTPUT_BOXES_CUT_OFF)
        assert measured["boxes"] > 0, f"{topic}: no output box in the feedback"
        assert measured["cut"] == [], f"{topic}: messages cut off"


def _outputs(page: Path) -> list[str]:
    """The text of each output area of a feedback page (what the cells printed or raised)."""
    areas = re.findall(r'<div class="output_subarea[^"]*">(.*?)</div>', page.read_text(), re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", a)).strip() for a in areas]


@pytest.mark.sweep
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_chinese_feedback_shows_every_message_whole_and_every_glyph(round_trip, tmp_path):
    """A course whose kernels run in Chinese (LANGUAGE=zh, as on a student's or a grader's
    machine set to it): the feedback of a student with failing tests, laid out by headless
    Chromium, has its messages in Chinese, none cut off, no character drawn as a missing-glyph
    box, and the gradebook's score is the English run's. (In a copy of the course, so the
    round trip's other tests read the English one.)"""
    course = tmp_path / "course"
    shutil.copytree(round_trip["course"], course, symlinks=True)
    home = round_trip["root"] / "home"
    env = {"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter"), "LANGUAGE": "zh"}
    student, topic = "mutant-bleu", "bleu"
    run("autograde", ASSIGNMENT, f"--student={student}", "--force", cwd=course, env=env, timeout=600)
    run("generate_feedback", ASSIGNMENT, f"--student={student}", "--force", cwd=course, env=env)
    assert _scores(course)[student, topic] == _scores(round_trip["course"])[student, topic]
    page = course / "feedback" / student / ASSIGNMENT / f"{topic}.html"
    english = round_trip["course"] / "feedback" / student / ASSIGNMENT / f"{topic}.html"
    # The notebook's own text is in both languages: the grader's messages are what must follow.
    chinese = [o for o in _outputs(page) if re.search("[\u4e00-\u9fff]", o)]
    assert chinese and not any(re.search("[\u4e00-\u9fff]", o) for o in _outputs(english)), _outputs(page)[:5]
    measured = measured_in_chromium(page, OUTPUT_BOXES_CUT_OFF)
    assert measured["boxes"] > 0 and measured["cut"] == [], measured
    glyphs = measured_in_chromium(page, MISSING_GLYPHS)
    assert glyphs["missing"] == [] and glyphs["checked"] > 20, glyphs
    screenshot_in_chromium(page, tmp_path / "feedback-zh.png")
    assert (tmp_path / "feedback-zh.png").read_bytes().startswith(b"\x89PNG")


def test_the_release_of_an_answer_cell_is_its_stub():
    """generate_assignment's clearing, then ReleaseTheStubs, on every answer cell of the course."""
    from nbformat import from_dict
    from nbgrader.preprocessors import ClearSolutions

    from autograder.nbgrader_preprocessors import ReleaseTheStubs
    for rel, text in make_nbgrader.expected_course().items():
        if rel.endswith(".ipynb"):
            nb = from_dict(json.loads(text))
            cell = next(c for c in nb.cells if answer_module(c))
            for step in (ClearSolutions(), ReleaseTheStubs()):
                cell, _resources = step.preprocess_cell(cell, {"language": "python"}, 0)
            module = answer_module(cell)
            assert cell.source == f"%%writefile {module}.py\n" + (STUBS / f"{module}.py").read_text(), rel
            assert STUB_KEY not in cell.metadata


def test_a_copied_course_cell_is_dropped_without_an_error():
    """nbgrader's DeduplicateIds leaves `{}` as the copy's metadata, and CheckCellMetadata then
    raises SchemaTooOldError, which ends `nbgrader autograde` for the whole class; so would a
    schema version a student changed or made up."""
    from nbformat import from_dict
    from nbgrader.preprocessors import CheckCellMetadata

    from autograder.nbgrader_preprocessors import KeepOneCellPerId
    nb = from_dict(json.loads(make_nbgrader.expected_course()[f"source/{ASSIGNMENT}/bptt.ipynb"]))
    test = next(i for i, c in enumerate(nb.cells) if c.metadata["nbgrader"]["grade"])
    nb.cells.insert(test + 1, from_dict(json.loads(json.dumps(nb.cells[test]))))
    ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells]
    made_up = from_dict({"cell_type": "code", "metadata": {"nbgrader": {"schema_version": 4}}, "source": "",
                         "outputs": [], "execution_count": None})
    nb.cells.append(made_up)
    nb.cells[0].metadata["nbgrader"]["schema_version"] = 1
    nb, _resources = KeepOneCellPerId().preprocess(nb, {})
    CheckCellMetadata().preprocess(nb, {})
    assert "nbgrader" not in nb.cells[test].metadata
    assert [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata] == \
        ids[:test] + ids[test + 1:]


def test_what_nbgrader_writes_in_the_course_is_ignored_by_git():
    written = ["release/x.ipynb", "submitted/s/a/x.ipynb", "autograded/s/a/x.ipynb", "feedback/s/a/x.html",
               "gradebook.db", "local_nbgrader_config.py"]
    proc = subprocess.run(["git", "check-ignore", "--no-index", *(f"course/{rel}" for rel in written)],
                          capture_output=True, text=True, cwd=REPO)
    assert sorted(proc.stdout.split()) == sorted(f"course/{rel}" for rel in written)


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
