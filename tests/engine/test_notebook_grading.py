"""grade_cell, the call in every test cell of the nbgrader notebooks, without nbgrader (the
round trip with real nbgrader is in tests/e2e/test_nbgrader.py, run by `make sweep`): a topic
is graded once for the same code, and kernels that come after read that grading from a
folder only the user may write."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import REPO, UNIT

sys.path.insert(0, str(REPO / "scripts"))
import make_nbgrader  # noqa: E402

from autograder import notebook  # noqa: E402


@pytest.fixture
def course_folder(tmp_path, monkeypatch):
    """The source notebooks (the reference in every answer cell), a temporary folder as the
    system's, so that the shared gradings start empty, and the grader's command lines and
    working folders as grade_cell starts it."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for rel, text in make_nbgrader.expected_course().items():
        if rel.endswith(".ipynb") and "/source/" in f"/{rel}":
            (folder / Path(rel).name).write_text(text)
    assert len(list(folder.glob("*.ipynb"))) == len(UNIT.topics)
    system_tmp = tmp_path / "tmp"
    system_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_tmp))
    monkeypatch.setenv("LANGUAGE", "en")
    monkeypatch.setattr(notebook, "_results", {})
    gradings, working_dirs = [], []
    real_run = subprocess.run

    def counted(cmd, *args, **kwargs):
        if "-m" in cmd and cmd[cmd.index("-m") + 1:cmd.index("-m") + 3] == ["autograder", "grade"]:
            gradings.append(cmd)
            working_dirs.append(kwargs.get("cwd"))
        return real_run(cmd, *args, **kwargs)

    monkeypatch.setattr(notebook.subprocess, "run", counted)
    return folder, system_tmp, gradings, working_dirs


def test_a_topic_is_graded_once_for_its_code_whatever_the_kernel(course_folder, capsys):
    folder, system_tmp, gradings, working_dirs = course_folder
    notebook.grade_cell("bptt", "public::test_rnn_step_forward_fixed_vector", folder)
    notebook.grade_cell("bptt", "public::test_rnn_forward_shapes_and_first_step", folder)
    assert len(gradings) == 1, "two cells of one topic graded twice"
    notebook._results.clear()                           # another kernel: nbgrader autograde --force
    hidden = next(t.test for t in UNIT.rubric.topic("bptt").tests if t.visibility == "hidden")
    notebook.grade_cell("bptt", f"hidden::{hidden}", folder)
    assert len(gradings) == 1, "the next kernel graded again instead of reading the kept grading"
    assert gradings[0][gradings[0].index("--topic") + 1] == "bptt"
    # Nothing of the notebook's folder on the grader's import path (a student's own
    # `autograder/` beside the notebook would otherwise run as the grader).
    assert gradings[0][1] == "-P" and working_dirs[0] is not None and Path(working_dirs[0]) != folder
    out = capsys.readouterr().out
    assert out.count("passed (") == 3
    assert out.splitlines()[:2] == ["passed (1 point)"] * 2, "a public bptt test is worth one point"
    shared = system_tmp / f"autograder-notebooks-{os.getuid()}"
    assert len(list(shared.glob("*.json"))) == 1

    # Other code is graded again, not served the reference's result.
    text = (folder / "bleu.ipynb").read_text()
    (folder / "bleu.ipynb").write_text(text.replace("def brevity_penalty(", "def brevity_penalty_gone("))
    with pytest.raises(notebook.GradeCellFailed):
        notebook.grade_cell("bleu", next(f"{t.visibility}::{t.test}" for t in
                                         UNIT.rubric.topic("bleu").tests if "brevity" in t.test), folder)
    assert len(gradings) == 2


def test_a_shared_folder_that_others_may_write_is_not_trusted(course_folder):
    _folder, system_tmp, _gradings, _working_dirs = course_folder
    shared = system_tmp / f"autograder-notebooks-{os.getuid()}"
    shared.mkdir(mode=0o700)
    assert notebook._shared_results() == shared
    shared.chmod(0o777)
    assert notebook._shared_results() is None          # anyone could plant a score there
    shared.rmdir()
    shared.symlink_to(system_tmp)
    assert notebook._shared_results() is None
