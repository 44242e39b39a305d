"""The course's changes to nbgrader's exchange and cells, one by one, without a kernel (the
round trip with real nbgrader is tests/e2e/test_nbgrader_intake.py, in `make sweep`):
collect and autograde read no link, a cell copied from another notebook stops no one, a
student's own HTML is text, release_feedback skips a submission without its secret."""

from __future__ import annotations

import importlib
import json
import logging
import os
import shutil
from typing import TYPE_CHECKING

import pytest
from helpers import REPO, UNIT

if TYPE_CHECKING:          # for the linters: the tests get these names from `_nbgrader`
    from nbconvert.filters.markdown import markdown2html
    from nbformat import from_dict
    from nbgrader.api import MissingEntry
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import CheckCellMetadata
    from nbgrader.utils import ignore_patterns

    from autograder.nbgrader_exchange import ReleaseFeedbackWithSecrets, no_links_in_submission, take_without_links
    from autograder.nbgrader_preprocessors import OverwriteCellsQuietly, StudentTextAsText, as_text


# name -> module: imported by `_nbgrader`, as the block above names them
ON_FIRST_USE = {"markdown2html": "nbconvert.filters.markdown", "from_dict": "nbformat",
                "MissingEntry": "nbgrader.api", "CourseDirectory": "nbgrader.coursedir",
                "CheckCellMetadata": "nbgrader.preprocessors", "ignore_patterns": "nbgrader.utils",
                **dict.fromkeys(("ReleaseFeedbackWithSecrets", "no_links_in_submission", "take_without_links"),
                                "autograder.nbgrader_exchange"),
                **dict.fromkeys(("OverwriteCellsQuietly", "StudentTextAsText", "as_text"),
                                "autograder.nbgrader_preprocessors")}


@pytest.fixture(autouse=True, scope="module")
def _nbgrader():
    """nbgrader, nbconvert and nbformat cost ~3 s of CPU to import (jsonschema builds a URI
    grammar): imported when this file's tests run, not when every test process of `make test`
    collects the file."""
    for name, module in ON_FIRST_USE.items():
        globals()[name] = getattr(importlib.import_module(module), name)


LOG = logging.getLogger("test")
COLLECTED = ["*.ipynb", "timestamp.txt", "submission_secret.txt"]


def _notebook(text: str) -> str:
    return json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": text, "id": "x"}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture
def submission(tmp_path):
    """A submission folder as a student can write it: one notebook of their own, one a link
    to the instructor's source, one a FIFO, a folder that is a link, a timestamp."""
    source, release, inbound = tmp_path / "source", tmp_path / "release", tmp_path / "inbound" / "mallory"
    for folder in (source, release, inbound):
        folder.mkdir(parents=True)
    for name in ("bptt", "bleu", "gru"):
        (source / f"{name}.ipynb").write_text(_notebook(f"solution of {name}"))
        (release / f"{name}.ipynb").write_text(_notebook(f"released {name}"))
    (inbound / "gru.ipynb").write_text(_notebook("mallory's own gru"))
    (inbound / "bptt.ipynb").symlink_to(source / "bptt.ipynb")
    os.mkfifo(inbound / "bleu.ipynb")
    (inbound / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
    (inbound / "linked").symlink_to(source, target_is_directory=True)
    return {"source": source, "release": release, "inbound": inbound, "root": tmp_path}


def _coursedir(**kw) -> CourseDirectory:
    return CourseDirectory(include=COLLECTED, **kw)


def test_nbgraders_own_copy_follows_the_link(submission, tmp_path):
    """What nbgrader's collect does (shutil.copytree, its ignore_patterns): the link's
    target arrives as the student's notebook. (The FIFO stops it, so it is left out here.)"""
    (submission["inbound"] / "bleu.ipynb").unlink()
    shutil.copytree(submission["inbound"], tmp_path / "nbgrader", ignore=ignore_patterns(include=COLLECTED))
    assert "solution of bptt" in (tmp_path / "nbgrader" / "bptt.ipynb").read_text()


def test_a_submission_is_taken_without_reading_through_a_link(submission, tmp_path):
    dest = tmp_path / "submitted"
    take_without_links(submission["inbound"], dest, submission["release"], _coursedir(), LOG)
    # the folder that is a link is neither copied nor entered
    assert sorted(p.name for p in dest.rglob("*")) == ["bleu.ipynb", "bptt.ipynb", "gru.ipynb", "timestamp.txt"]
    assert not any(p.is_symlink() for p in dest.rglob("*"))
    assert "mallory's own gru" in (dest / "gru.ipynb").read_text()
    for name in ("bptt", "bleu"):                                   # the link and the FIFO
        cells = json.loads((dest / f"{name}.ipynb").read_text())["cells"]
        assert "handed in as a link" in cells[0]["source"] and "以链接" in cells[0]["source"]
        assert [c["source"] for c in cells[1:]] == [f"released {name}"]
    assert "solution of" not in "".join(p.read_text() for p in dest.glob("*.ipynb"))


def test_a_submission_folder_that_is_a_link_is_not_entered(submission, tmp_path):
    linked = tmp_path / "inbound" / "eve"
    linked.symlink_to(submission["source"], target_is_directory=True)
    dest = tmp_path / "submitted"
    take_without_links(linked, dest, submission["release"], _coursedir(), LOG)
    text = "".join(p.read_text() for p in dest.glob("*.ipynb"))
    assert sorted(p.name for p in dest.iterdir()) == ["bleu.ipynb", "bptt.ipynb", "gru.ipynb"]
    assert "solution of" not in text and text.count("handed in as a link") == 3


def test_autograde_takes_submitted_links_out_before_reading(submission):
    """Submissions copied into submitted/ with their links: a notebook that is one, and a
    student folder that is one (to the source folder); only the links are removed."""
    course = submission["root"] / "course"
    (course / "release").mkdir(parents=True)
    shutil.copytree(submission["release"], course / "release" / "a")
    (course / "source" / "a").mkdir(parents=True)
    shutil.copy(submission["source"] / "bptt.ipynb", course / "source" / "a")
    mallory = course / "submitted" / "mallory" / "a"
    mallory.mkdir(parents=True)
    (mallory / "gru.ipynb").write_text(_notebook("mallory's own gru"))
    (mallory / "bptt.ipynb").symlink_to(course / "source" / "a" / "bptt.ipynb")
    (course / "submitted" / "eve").symlink_to(course / "source", target_is_directory=True)
    notebooks = [str(mallory / "bptt.ipynb"), str(mallory / "gru.ipynb")]
    no_links_in_submission(assignment="a", student="*", notebooks=notebooks)
    no_links_in_submission(assignment="a", student="*", notebooks=[str(course / "submitted" / "eve" / "a" / "bptt.ipynb")])
    for student in ("mallory", "eve"):
        folder = course / "submitted" / student / "a"
        assert not any(p.is_symlink() for p in [folder.parent, folder, *folder.iterdir()]), student
        assert "handed in as a link" in (folder / "bptt.ipynb").read_text(), student
    assert "mallory's own gru" in (mallory / "gru.ipynb").read_text()
    assert "solution of bptt" in (course / "source" / "a" / "bptt.ipynb").read_text()


class _Gradebook:
    """The gradebook of one notebook's cells (what OverwriteCells asks of nbgrader's)."""

    def __init__(self, cells):
        from nbgrader.utils import compute_checksum
        self.cells = {c.metadata.nbgrader.grade_id: c for c in cells}
        self.checksums = {k: compute_checksum(c) for k, c in self.cells.items()}

    def find_source_cell(self, grade_id, notebook, assignment):
        if grade_id not in self.cells:
            raise MissingEntry()
        cell = self.cells[grade_id]
        return type("SourceCell", (), {"cell_type": cell.cell_type, "locked": cell.metadata.nbgrader.locked,
                                       "source": cell.source, "checksum": self.checksums[grade_id]})

    def find_graded_cell(self, grade_id, notebook, assignment):
        return type("GradeCell", (), {"max_score": self.cells[grade_id].metadata.nbgrader.points})


def _course_notebook(topic: str):
    import sys
    sys.path.insert(0, str(REPO / "scripts"))
    import make_nbgrader
    return from_dict(json.loads(make_nbgrader.expected_course()[f"source/{UNIT.name}/{topic}.ipynb"]))


def test_a_cell_copied_from_another_notebook_becomes_the_students_own():
    """nbgrader's OverwriteCells drops only the id of a cell this notebook does not have,
    and CheckCellMetadata then fails the submission (it scored 0)."""
    nb, bptt = _course_notebook("attention"), _course_notebook("bptt")
    overwrite = OverwriteCellsQuietly()
    overwrite.gradebook, overwrite.notebook_id, overwrite.assignment_id = _Gradebook(nb.cells), "attention", "a"
    foreign = [c for c in bptt.cells if c.metadata.nbgrader.grade_id == "module_bptt"        # ids attention has not
               or c.metadata.nbgrader.grade_id.startswith("public_")]
    nb.cells += [from_dict(json.loads(json.dumps(c))) for c in foreign]
    for i, cell in enumerate(nb.cells):
        nb.cells[i], _resources = overwrite.preprocess_cell(cell, {}, i)
    CheckCellMetadata().preprocess(nb, {})
    assert all("nbgrader" not in c.metadata for c in nb.cells[-len(foreign):])
    assert all("nbgrader" in c.metadata for c in nb.cells[:-len(foreign)])


def test_a_students_html_is_text_and_the_courses_text_is_kept():
    nb = _course_notebook("attention")
    intro = nb.cells[0].source
    nb.cells += [from_dict({"cell_type": "markdown", "metadata": {}, "source": "<script>alert(1)</script> ```` x"}),
                 from_dict({"cell_type": "raw", "metadata": {"format": "text/html"},
                            "source": "<img src=x onerror=alert(2)>"})]
    for _ in range(2):                          # autograde, then generate_feedback: wrapped once
        nb, _resources = StudentTextAsText()(nb, {})      # as nbconvert calls it (only when enabled)
    assert nb.cells[0].source == intro
    for cell in nb.cells[-2:]:
        html = markdown2html(cell.source)
        assert cell.cell_type == "markdown" and as_text(cell.source)
        assert "<script>" not in html and "<img" not in html and ("&lt;script&gt;" in html or "&lt;img" in html)
    assert not as_text("```text\nx\n```\n<script>alert(1)</script>\n```")


def test_release_feedback_skips_a_submission_without_its_secret(tmp_path):
    """nbgrader's own stops at the first feedback folder without submission_secret.txt."""
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    for student, secret in (("anna", None), ("bob", "s3cret")):
        folder = course / "feedback" / student / "a"
        folder.mkdir(parents=True)
        (folder / "nb.html").write_text(f"feedback of {student}")
        (folder / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
        if secret:
            (folder / "submission_secret.txt").write_text(secret)
    (exchange / "c").mkdir(parents=True)
    coursedir = CourseDirectory(root=str(course), course_id="c", assignment_id="a")
    release = ReleaseFeedbackWithSecrets(coursedir=coursedir, root=str(exchange))
    release.init_src()
    release.init_dest()
    release.copy_files()
    released = [p.read_text() for p in (exchange / "c" / "feedback").glob("*.html")]
    assert released == ["feedback of bob"]
