"""What nbgrader takes in from students, with real nbgrader and a real kernel, as root and as
an ordinary user (`nobody`, over a copy of the course nobody owns): issue 37 point 4 and
the two nbgrader defects seen beside it, and the release of feedback (issue 34 point 1).

- Links (no follow). Students write the exchange's inbound folder directly. Each attacker
  submits the untouched notebook, then swaps in the exchange what `collect` copies: a link
  to the instructor's source notebook (the solution), to a classmate's submission, the whole
  submission folder as a link to the source folder, a FIFO. Two more reach `submitted/` by
  hand with their links (an LMS download, `cp -a`). With nbgrader's own collect and
  autograde the links earned the solution's or the classmate's full marks (and the FIFO
  stopped `collect` for the class); here each scores 0 with a note saying why, the honest
  student keeps full marks, and what the links point to is untouched.
- A correct notebook holding cells copied from another notebook of the course (its answer
  cell and test cells, ids this notebook has not or has too) scores full marks; it scored 0.
- A student's own Markdown and raw HTML cells are text in the feedback, never HTML.
- release_feedback -> fetch_feedback: every student fetches a feedback page showing the
  gradebook's score (nbgrader's release stopped at the missing submission secret).

One small course (the attention notebook) per privilege mode; `make sweep` runs it. As
nobody the feedback steps are left out: the system's Python that nobody runs (3.11.2 here)
cannot run the dev venv's soupsieve, which nbconvert's HTML export needs."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from html import unescape
from pathlib import Path

import pytest
from helpers import ENGLISH, REPO, SOLUTIONS, UNIT

sys.path.insert(0, str(REPO / "scripts"))
import make_nbgrader  # noqa: E402

from autograder.notebook import answer_module  # noqa: E402

ASSIGNMENT = UNIT.name
NOTEBOOK = "attention"
FULL = UNIT.rubric.topic(NOTEBOOK).points
NOBODY_PYTHON = f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"
LINKED_IN_EXCHANGE = ("to-source", "to-classmate", "folder-link", "fifo")
LINKED_BY_HAND = ("copied-link", "copied-folder-link")
CORRECT = ("honest", "copied-cells", "own-html")
OWN_HTML = ["<script>alert('markdown')</script>\n\n<img src=x onerror=alert(2)>", "<script>alert('raw')</script>"]
def _nbconvert_templates() -> str:
    """The share/jupyter folder holding nbconvert's templates (generate_feedback's), beside
    the site-packages the dev venv borrows: the scripts below run from another prefix."""
    import nbconvert
    prefix = Path(nbconvert.__file__).resolve().parents[4]
    return str(prefix / "share" / "jupyter")


def _nbgrader(base: Path, user: str):
    """A function running `nbgrader ...` as `user`: root with the dev venv's Python, nobody
    with a venv of the system's Python (the dev venv lives under /root) borrowing the dev
    venv's packages and a copy of the grader. nbgrader, jupyter and alembic are scripts of
    that Python in a folder on PATH (nbgrader runs alembic and the kernel by PATH)."""
    env = {"HOME": str(base / "home"), "JUPYTER_CONFIG_DIR": str(base / "home" / ".jupyter"),
           "PATH": f"{base / 'bin'}:/usr/bin:/bin", "JUPYTER_PATH": _nbconvert_templates(), **ENGLISH}
    python = Path(sys.executable)
    if user != "root":
        import sysconfig
        checkout, venv = base / "checkout", base / "venv"
        shutil.copytree(REPO / "autograder", checkout / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([NOBODY_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                   capture_output=True, text=True, check=True).stdout.strip())
        deps = [sysconfig.get_path("purelib")] + [p for p in sys.path if p.endswith("site-packages")]
        (site / "borrowed.pth").write_text("\n".join([str(checkout), *dict.fromkeys(deps)]) + "\n")
    (base / "bin").mkdir()
    for script, main in {"nbgrader": "nbgrader.apps.nbgraderapp", "alembic": "alembic.config",
                         "jupyter": "jupyter_core.command"}.items():
        (base / "bin" / script).write_text(f"#!{python}\nimport sys\nfrom {main} import main\nsys.exit(main())\n")
        (base / "bin" / script).chmod(0o755)

    def run(*args, cwd: Path, home: Path | None = None) -> subprocess.CompletedProcess:
        """`nbgrader *args` in `cwd`; `home`: a student's own HOME (their nbgrader cache)."""
        environ = {**env, **({"HOME": str(home)} if home else {})}
        command = [str(base / "bin" / "nbgrader")]
        if user != "root":
            subprocess.run(["chown", "-R", "--no-dereference", f"{user}:", str(base)], check=True)
            command = [shutil.which("runuser"), "-u", user, "--", "/usr/bin/env",
                       *(f"{k}={v}" for k, v in environ.items()), *command]
        proc = subprocess.run([*command, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=900,
                              env=environ)
        assert proc.returncode == 0, f"nbgrader {args} as {user}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        return proc
    return run


def _inbound_entry(exchange: Path, student: str) -> Path:
    return next((exchange / ASSIGNMENT / "inbound").glob(f"{student}+{ASSIGNMENT}+*"))


def _course_cells(notebook: str) -> list[dict]:
    return json.loads(make_nbgrader.expected_course()[f"source/{ASSIGNMENT}/{notebook}.ipynb"])["cells"]


def _fill(path: Path, student: str) -> None:
    """The correct students' notebook: the solution, and what else each adds."""
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if answer_module(cell):
            cell["source"] = f"%%writefile {NOTEBOOK}.py\n" + (SOLUTIONS / f"{NOTEBOOK}.py").read_text()
    if student == "copied-cells":
        # pasted at the end from the bptt notebook: its answer cell and a public test (ids
        # this notebook has not), its introduction and first hidden test (ids it has too)
        bptt = {c["metadata"]["nbgrader"]["grade_id"]: c for c in _course_cells("bptt")}
        public = next(i for i in bptt if i.startswith("public_"))
        for grade_id in ("module_bptt", public, "introduction", "hidden_1"):
            copy = json.loads(json.dumps(bptt[grade_id]))
            copy["metadata"].pop("autograder_release", None)
            nb["cells"].append({**copy, "id": f"pasted-{len(nb['cells'])}"})
    if student == "own-html":
        nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": OWN_HTML[0], "id": "own-markdown"})
        nb["cells"].append({"cell_type": "raw", "metadata": {"format": "text/html"}, "source": OWN_HTML[1],
                            "id": "own-raw"})
    path.write_text(json.dumps(nb))


@pytest.fixture(scope="module", params=["root", "nobody"])
def intake(request):
    user = request.param
    if user != "root" and (os.geteuid() != 0 or not shutil.which("runuser") or not os.access(NOBODY_PYTHON, os.X_OK)):
        pytest.skip(f"running nbgrader as nobody needs root, runuser and {NOBODY_PYTHON}")
    base = Path(tempfile.mkdtemp(prefix="nbgrader-intake-"))     # pytest's own tmp folder is root's alone
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    base.chmod(0o755)
    course, exchange = base / "course", base / "exchange"
    for folder in (exchange, base / "home"):
        folder.mkdir()
    for rel, text in make_nbgrader.expected_course().items():
        if not rel.endswith(".ipynb") or rel.endswith(f"/{NOTEBOOK}.ipynb"):
            (course / rel).parent.mkdir(parents=True, exist_ok=True)
            (course / rel).write_text(text)
    (course / "local_nbgrader_config.py").write_text(f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n")
    run = _nbgrader(base, user)
    run("generate_assignment", ASSIGNMENT, "--create", "--force", cwd=course)
    run("release_assignment", ASSIGNMENT, cwd=course)
    x = f"--Exchange.root={exchange}"
    homes = {}
    for student in (*CORRECT, *LINKED_IN_EXCHANGE):
        homes[student] = home = base / "students" / student        # each student's own nbgrader cache
        home.mkdir(parents=True)
        run("fetch_assignment", ASSIGNMENT, "--course", ASSIGNMENT, x, cwd=home, home=home)
        if student in CORRECT:
            _fill(home / ASSIGNMENT / f"{NOTEBOOK}.ipynb", student)
        run("submit", ASSIGNMENT, "--course", ASSIGNMENT, x, f"--student={student}", cwd=home, home=home)
    source = course / "source" / ASSIGNMENT
    honest = _inbound_entry(exchange, "honest") / f"{NOTEBOOK}.ipynb"
    for student in LINKED_IN_EXCHANGE:
        entry = _inbound_entry(exchange, student)
        notebook = entry / f"{NOTEBOOK}.ipynb"
        if student == "folder-link":
            shutil.rmtree(entry)
            entry.symlink_to(source, target_is_directory=True)
            continue
        notebook.unlink()
        if student == "fifo":
            os.mkfifo(notebook)
        else:
            notebook.symlink_to(source / f"{NOTEBOOK}.ipynb" if student == "to-source" else honest)
    pointed_to = {p: p.read_bytes() for p in (source / f"{NOTEBOOK}.ipynb", honest)}
    log = run("collect", ASSIGNMENT, cwd=course).stderr
    submitted = course / "submitted"
    (submitted / "copied-link" / ASSIGNMENT).mkdir(parents=True)
    (submitted / "copied-link" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").symlink_to(source / f"{NOTEBOOK}.ipynb")
    (submitted / "copied-folder-link").symlink_to(course / "source", target_is_directory=True)
    log += run("autograde", ASSIGNMENT, "--create", cwd=course).stderr
    fetched = {}
    if user == "root":
        log += run("generate_feedback", ASSIGNMENT, cwd=course).stderr
        log += run("release_feedback", ASSIGNMENT, cwd=course).stderr
        for student, home in homes.items():
            run("fetch_feedback", ASSIGNMENT, "--course", ASSIGNMENT, x, cwd=home, home=home)
            fetched[student] = sorted((home / ASSIGNMENT / "feedback").glob(f"*/{NOTEBOOK}.html"))
    return {"user": user, "course": course, "pointed_to": pointed_to, "log": log, "fetched": fetched}


def _scores(course: Path) -> dict[str, float]:
    with sqlite3.connect(course / "gradebook.db") as db:
        rows = db.execute(
            "SELECT s.student_id, SUM(COALESCE(g.manual_score, g.auto_score, 0)) FROM grade g "
            "JOIN submitted_notebook sn ON g.notebook_id = sn.id "
            "JOIN submitted_assignment s ON sn.assignment_id = s.id GROUP BY s.student_id").fetchall()
    return {student: float(score) for student, score in rows}


def _feedback(intake, student: str) -> str:
    if intake["user"] != "root":
        pytest.skip("no feedback as nobody (see the module's docstring)")
    return (intake["course"] / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()


@pytest.mark.sweep
def test_a_notebook_handed_in_as_a_link_earns_nothing(intake):
    scores = _scores(intake["course"])
    assert {s: scores[s] for s in LINKED_IN_EXCHANGE + LINKED_BY_HAND} == dict.fromkeys(
        LINKED_IN_EXCHANGE + LINKED_BY_HAND, 0)
    assert scores["honest"] == FULL


@pytest.mark.sweep
def test_the_linking_student_and_the_instructor_are_told_why(intake):
    course = intake["course"]
    for student in LINKED_IN_EXCHANGE + LINKED_BY_HAND:
        nb = json.loads((course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text())
        assert "handed in as a link" in "".join(nb["cells"][0]["source"]), student
        assert any(student in line and "is a link or not" in line for line in intake["log"].splitlines()), student
    for student in LINKED_IN_EXCHANGE + LINKED_BY_HAND:
        assert "handed in as a link" in _feedback(intake, student), student


@pytest.mark.sweep
def test_what_the_links_point_to_is_untouched(intake):
    course = intake["course"]
    for path, data in intake["pointed_to"].items():
        assert path.read_bytes() == data, path
    assert (course / "submitted" / "copied-folder-link").is_dir()
    assert not (course / "submitted" / "copied-folder-link").is_symlink()
    assert sorted(p.name for p in (course / "source").iterdir()) == [ASSIGNMENT]


@pytest.mark.sweep
def test_cells_copied_from_another_notebook_cost_nothing(intake):
    assert _scores(intake["course"])["copied-cells"] == FULL
    assert "copied from another notebook" in intake["log"]


@pytest.mark.sweep
def test_the_students_own_html_is_text_in_the_feedback(intake):
    assert _scores(intake["course"])["own-html"] == FULL
    html = _feedback(intake, "own-html")
    assert "<script>alert" not in html and not re.search(r"<img[^>]*onerror", html), "the student's HTML is live"
    shown = unescape(re.sub(r"<[^>]+>", "", html))          # the page's text, as a reader sees it
    assert all(text in shown for text in OWN_HTML), "the student's text is not shown"


@pytest.mark.sweep
def test_every_student_fetches_feedback_with_the_gradebooks_score(intake):
    if intake["user"] != "root":
        pytest.skip("no feedback as nobody (see the module's docstring)")
    scores = _scores(intake["course"])
    assert "not recognized" not in intake["log"], "a preprocessor rejects the feedback's configuration"
    for student, pages in intake["fetched"].items():
        if student == "folder-link":        # nothing of it was read, its secret neither: no feedback to fetch
            assert pages == [], student
            continue
        assert len(pages) == 1, f"{student} fetched {pages}"
        shown = re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", pages[0].read_text())
        assert shown and (float(shown[1]), float(shown[2])) == (scores[student], FULL), (student, shown)
