"""Ctrl-C: one line, exit status 130, nothing left in the temporary folder, no report that
looks like the interrupted grading's own; batch writes no class file of part of a class and
a rerun resumes."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from helpers import ENGLISH, REPO, SOLUTIONS, UNIT, make_submission


def _as_at_a_terminal() -> None:
    """SIGINT as a terminal's shell leaves it to the commands it starts. A test run started in
    the background of a script (`make test &`, nohup, some CI runners) ignores SIGINT, and an
    ignored SIGINT is inherited: the grader would never see the Ctrl-C this test sends (all five
    tests failed so, with exit status 0)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupted(args, tmp, after_s: float, ready=None) -> subprocess.CompletedProcess:
    """`python -m autograder ARGS`, with SIGINT sent to its whole process group (what a
    terminal's Ctrl-C does) `after_s` seconds after `ready()` first holds (at once without)."""
    proc = subprocess.Popen([sys.executable, "-m", "autograder", *map(str, args)], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, **ENGLISH, "TMPDIR": str(tmp)}, preexec_fn=_as_at_a_terminal)
    deadline = time.monotonic() + 120
    while ready is not None and not ready() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    time.sleep(after_s)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def left_in(tmp) -> list[str]:
    """What the grading left in its temporary folder, after its workers had a moment to end."""
    for _ in range(100):
        left = sorted(p.name for p in tmp.iterdir())
        if not left:
            break
        time.sleep(0.05)
    return left


@pytest.mark.parametrize("after_s", [0.0, 0.3, 0.6, 1.0])   # after the grading's first temporary folder
def test_ctrl_c_during_a_grading_says_one_line_and_leaves_nothing(tmp_path, after_s):
    tmp, out = tmp_path / "tmp", tmp_path / "out"
    tmp.mkdir()
    out.mkdir()
    (out / "score.json").write_text('{"earned": 114}')         # an earlier grading's
    # A grading that lasts: every rnn_forward call waits 0.2 s, so that on a fast idle machine
    # too the signal arrives while the grading runs (the reference alone finished inside 0.3 s
    # of its first temporary folder on one, and the test saw exit status 0).
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [
        ("    N, T, _ = x.shape\n", "    import time\n    time.sleep(0.2)\n    N, T, _ = x.shape\n")]})
    # The grading's first folder is its worker's: Python's start-up makes and at once removes a
    # file of its own in the temporary folder (seen with strace), and a Ctrl-C then, under load,
    # stopped the grader while it loaded, before any grading (and its reports) had begun.
    proc = interrupted(["grade", sub, "--out", out], tmp, after_s,
                       ready=lambda: any(p.name.startswith("autograder-worker-") for p in tmp.iterdir()))
    assert proc.returncode == 130, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert proc.stderr.splitlines() == ["autograder: interrupted; nothing was graded (run the same command again)"], \
        proc.stderr[-3000:]
    assert not (out / "score.json").exists(), "an earlier report would look like this grading's"
    assert left_in(tmp) == []


def test_ctrl_c_during_a_batch_writes_no_partial_class_file_and_a_rerun_resumes(tmp_path):
    tmp, root, out = tmp_path / "tmp", tmp_path / "class", tmp_path / "out"
    tmp.mkdir()
    for name in ("ada", "bo", "cy"):
        shutil.copytree(SOLUTIONS, root / name)
    out.mkdir()
    (out / "class.csv").write_text("submission,earned\nold,1\n")        # an earlier run's

    def first_graded():
        return any((out / "students").glob("*/score.json")) if (out / "students").is_dir() else False

    # One topic each (a grading of ~0.5 s, not ~2 s): what is checked is the batch around the gradings.
    topic = ["--topic", "attention"]
    proc = interrupted(["batch", root, "--out", out, "--jobs", "1", *topic], tmp, 0.0, ready=first_graded)
    assert proc.returncode == 130, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("autograder: interrupted after ") \
        and "Run the same command again to resume" in lines[0], proc.stderr[-3000:]
    assert not list(out.glob("class*")), "no class file of part of the class, and no stale one"
    assert left_in(tmp) == []
    graded_before = {p.parent.name for p in (out / "students").glob("*/score.json")}
    assert graded_before and len(graded_before) < 3
    proc = subprocess.run([sys.executable, "-m", "autograder", "batch", str(root), "--out", str(out), "--jobs", "2",
                           *topic],
                          cwd=REPO, capture_output=True, text=True, timeout=600, env={**os.environ, **ENGLISH})
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = list(csv.DictReader((out / "class.csv").open()))
    assert sorted(r["submission"] for r in rows) == ["ada", "bo", "cy"]
    points = UNIT.rubric.topic("attention").points
    assert {(float(r["earned"]), r["status"]) for r in rows} == {(points, "graded")}, rows
    assert {json.loads((out / "students" / n / "score.json").read_text())["earned"] for n in graded_before} == {points}


def test_ctrl_c_the_moment_a_workers_folder_is_made_leaves_nothing(tmp_path, monkeypatch):
    """The Ctrl-C of the test above at its worst moment, made certain: it arrives as the
    worker's folder is made, before the call that made it returns (the test above left one so,
    once in a few hundred runs). Nothing of the worker may stay."""
    import tempfile

    from autograder.isolation import pipe

    mkdir = os.mkdir

    def mkdir_then_ctrl_c(path, *args, **kwargs):
        mkdir(path, *args, **kwargs)
        if "autograder-worker-" in str(path):
            os.kill(os.getpid(), signal.SIGINT)      # handled at the next bytecode: before the return
            time.sleep(0.01)

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(os, "mkdir", mkdir_then_ctrl_c)
    # Python's own Ctrl-C handler, as at a terminal: a test run started in the background
    # (`make test &`, nohup) inherits an ignored SIGINT (_as_at_a_terminal), and the Ctrl-C
    # sent below would then never arrive (failed so under nohup).
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            pipe.Worker(None, tmp_path / "no-submission", None, 0, {})
    finally:
        signal.signal(signal.SIGINT, handler)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []
