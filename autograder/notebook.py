"""The course in Jupyter: what the nbgrader notebooks of a unit call.

Each topic is one notebook (scripts/make_nbgrader.py writes them). Its answer cell is the
topic's module under `%%writefile <module>.py`: running it writes the file, so the student's
functions never run in the notebook's kernel. Its test cells, one per rubric entry, call

    grade_cell("bptt", "public::test_rnn_step_forward_fixed_vector")

which takes the answer cells of every notebook in the folder (the lab of one topic calls
another topic's module), grades the topic with the grader in its own process (the
student's code runs there only in the grader's worker, never beside nbgrader's gradebook),
once for as long as the code and the grader stay the same (the grading is kept in a folder
only the user may write, for the kernels that come after), and passes or raises with the
grader's message and hint. Nothing is written to
stderr: nbgrader counts any stderr output as a failure.

Nothing of the notebook's folder is imported: the grader runs from a temporary folder with
Python's safe path (`-P`), and during `nbgrader autograde` the kernel starts without its
working directory on `sys.path` (the course's nbgrader_config.py), so a student's
`autograder/` or `yaml.py` handed in beside the notebooks never shadows the grader. What
nbgrader itself runs differently for the course is in autograder/nbgrader_preprocessors.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path

from autograder import i18n
from autograder.grading.score import TestOutcome
from autograder.i18n import _
from autograder.intake.files import read_regular
from autograder.intake.notebooks import ANSWER_PREFIX, answer_body, answer_module, modules_in  # noqa: F401 - the course's names
from autograder.reports.detail import HIDDEN_DETAIL, shown_tests
from autograder.reports.markdown import OUTCOME_WORDS
from autograder.unit.load import load_unit
from autograder.unit.test_ids import HIDDEN_TOTAL, TestId
from autograder.version import grader_version

STUB_KEY = "autograder_release"    # an answer cell's metadata in the source notebook: its released text
GRADING_KEY = "autograder_grading"  # a notebook's metadata during autograde: seed, hidden_detail (GradingSettings)
REMOVED = "# removed for grading: only the answer and test cells of this notebook run\n"


class GradeCellFailed(AssertionError):
    """A test cell's failure, shown as the grader's message and hint only (IPython calls
    `_render_traceback_` instead of printing a traceback of this module)."""

    def _render_traceback_(self):
        return str(self).splitlines()


_results: dict[str, dict] = {}     # digest of what was graded -> score.json


def _shared_results() -> Path | None:
    """A folder only this user may write, where a kernel finds a grading an earlier kernel
    did of the same code (nbgrader runs each notebook in its own). None when it cannot be
    had safely: then each kernel grades for itself."""
    folder = Path(tempfile.gettempdir()) / f"autograder-notebooks-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


def _grade(topic: str, modules: dict[str, str], suite: str, seed: int | None = None) -> dict:
    """score.json of `topic` graded with `modules`, kept for the kernels that come after
    (another run of the notebook, `nbgrader autograde --force`), keyed by the grader's
    version, the topic, the suite, the language and the code.

    One topic per grading, not the whole submission: `nbgrader autograde` writes each
    notebook into the autograded folder just before it runs it, so the kernels of one
    submission see different sets of answer cells and could not share a grading of all."""
    key = json.dumps([_grader_version(), topic, suite, seed, i18n.current_language(), sorted(modules.items())])
    digest = hashlib.sha256(key.encode()).hexdigest()
    if digest in _results:
        return _results[digest]
    shared = _shared_results()
    cached = shared / f"{digest}.json" if shared else None
    if cached is not None and cached.is_file():
        try:
            _results[digest] = json.loads(cached.read_text(encoding="utf-8"))
            return _results[digest]
        except (OSError, ValueError):
            pass                        # a partial or unreadable file: grade again
    with tempfile.TemporaryDirectory(prefix="notebook-grading-") as tmp:
        submission, out = Path(tmp) / "submission", Path(tmp) / "reports"
        submission.mkdir()
        for module, source in modules.items():
            (submission / f"{module}.py").write_text(source, encoding="utf-8")
        # -P and a working directory of our own: the notebook's folder (a student's own
        # `autograder/` or `yaml.py` beside the notebook) is never on the grader's import path.
        proc = subprocess.run([sys.executable, "-P", "-m", "autograder", "grade", str(submission), "--topic", topic,
                               "--suite", suite, "--out", str(out), "--quiet",
                               *(["--seed", str(seed)] if seed is not None else [])],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, env=dict(os.environ), cwd=tmp)
        score_file = out / "score.json"
        if not score_file.is_file():
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            raise GradeCellFailed(_("the grader could not run: {reason}").format(
                reason=lines[-1] if lines else proc.returncode))
        text = score_file.read_text(encoding="utf-8")
        if shared is not None and cached is not None:
            for stale in shared.glob("*.json"):          # a day is longer than any autograde run
                if time.time() - stale.stat().st_mtime > 86400:
                    stale.unlink(missing_ok=True)
            partial = cached.with_suffix(f".{os.getpid()}.part")
            partial.write_text(text, encoding="utf-8")
            os.replace(partial, cached)
        _results[digest] = json.loads(text)
    return _results[digest]


@lru_cache(maxsize=1)
def _grader_version() -> str:
    """The installed grader's version, read once per kernel (test cells call grade_cell often)."""
    return grader_version(load_unit().path)


@lru_cache(maxsize=1)
def hidden_suites_here() -> bool:
    """Whether this installation holds the hidden suites (the instructor's does, a
    student's does not: there the hidden test cells are empty anyway)."""
    try:
        unit = load_unit()
        return any(unit.test_file(t.id, "hidden").is_file() for t in unit.topics)
    except Exception:  # noqa: BLE001 - no unit installed: the grading below says so
        return False


def grading_settings(notebook: Path) -> tuple[int | None, str]:
    """The seed and hidden detail `nbgrader autograde` put in `notebook` (GradingSettings);
    elsewhere (a student's own Jupyter) none: the seed of the folder's files, every hint."""
    try:
        meta = json.loads(read_regular(notebook) or b"{}").get("metadata", {}).get(GRADING_KEY, {})
        seed, detail = meta.get("seed"), meta.get("hidden_detail", "hints")
    except (ValueError, AttributeError):
        return None, "hints"
    seed = seed if isinstance(seed, int) and 0 <= seed < 2**31 else None
    return seed, detail if detail in HIDDEN_DETAIL else "hints"


def _outcome(test: dict) -> TestOutcome:
    """A test of score.json as the reports hold it."""
    kind = test.get("kind", "")
    return TestOutcome(TestId.parse(test["id"]), test["earned"], test["possible"], test["outcome"], test["message"],
                       test.get("hint", ""), not_implemented=kind if kind == "not_implemented" else None, kind=kind)


def grade_cell(topic: str, test_id: str, folder: str | Path = ".") -> None:
    """Pass, or raise with the grader's message and hint, for one rubric entry of `topic`:
    of a hidden test, what the instructor's hidden detail shows (the reports' own cut)."""
    if i18n.current_language() == "en":
        i18n.activate(None)           # the kernel's locale (the grader's messages follow it too)
    modules = modules_in(Path(folder))
    seed, detail = grading_settings(Path(folder) / f"{topic}.ipynb")     # a notebook per topic, named by it
    wanted = TestId.parse(test_id)
    suite = "all" if wanted.hidden or hidden_suites_here() else "public"
    score = _grade(topic, modules, suite, seed)
    tests = [_outcome(t) for x in score.get("topics", []) if x["id"] == topic for t in x["tests"]]
    test = next((t for t in tests if t.id == wanted), None)
    if test is None:
        topic_message = next((x.get("message", "") for x in score.get("topics", []) if x["id"] == topic), "")
        raise GradeCellFailed(topic_message or _("{test} was not graded").format(test=test_id))
    if not test.passed:         # passed or not from the whole grading; what it says, from the cut
        shown = {t.id: t for t in shown_tests(tests, detail)}
        test = shown[HIDDEN_TOTAL] if wanted.hidden and HIDDEN_TOTAL in shown else shown[wanted]
        text = f"{_(OUTCOME_WORDS.get(test.outcome, test.outcome))}: {test.message}"
        if test.hint:
            text += "\n" + _("hint: {hint}").format(hint=test.hint)
        raise GradeCellFailed(text)
    points = test.possible
    print(_("passed (1 point)") if points == 1 else _("passed ({points} points)").format(points=f"{points:g}"))
