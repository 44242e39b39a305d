"""batch over a class as instructors receive it: folders, one nested level, repository
clones, archives; what is not a submission is reported; the class file in rubric order;
a rerun resumes."""

from __future__ import annotations

import csv
import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

from autograder import intake
from helpers import SOLUTIONS, STUBS, UNIT, run_grader

MODULES = {t.module for t in UNIT.topics}


def _class(root: Path) -> Path:
    """One student of every shape."""
    root.mkdir(parents=True)
    shutil.copytree(SOLUTIONS, root / "alice")                                   # plain folder
    shutil.copytree(SOLUTIONS, root / "george" / "rnn_prehistory")               # LMS: one level down
    (root / "george" / "README.txt").write_text("my submission")
    clone = root / "helen"                                                       # a repository clone
    (clone / ".git").mkdir(parents=True)
    shutil.copytree(STUBS, clone / "assignments" / "rnn_prehistory")
    shutil.copyfile(SOLUTIONS / "attention.py", clone / "assignments" / "rnn_prehistory" / "attention.py")
    with zipfile.ZipFile(root / "ivan.zip", "w") as z:                           # zip, nested, with junk
        for p in SOLUTIONS.glob("*.py"):
            z.write(p, f"ivan/{p.name}")
        z.writestr("__MACOSX/ivan/._attention.py", "junk")
        z.writestr("../../evil.py", "print('escaped')")
    with tarfile.open(root / "jane.tar.gz", "w:gz") as t:                        # tar.gz, flat
        for p in SOLUTIONS.glob("*.py"):
            t.add(p, p.name)
    (root / "kate").mkdir()                                                      # nothing in it
    (root / "kate" / "notes.md").write_text("todo")
    (root / "notes.txt").write_text("not a submission")                          # a stray file
    (root / "broken.zip").write_bytes(b"PK\x03\x04 not really")                  # a corrupt archive
    for copy in ("a", "b"):                                                      # two copies: which one?
        shutil.copytree(SOLUTIONS, root / "lena" / copy)
    return root


def test_every_entry_is_a_submission_or_says_why_not(tmp_path):
    entries = {e.name: e for e in intake.find(_class(tmp_path / "class"), MODULES, tmp_path / "scratch")}
    assert set(entries) == {"alice", "george", "helen", "ivan", "jane", "kate", "notes.txt", "broken", "lena"}
    ok = {n: e for n, e in entries.items() if e.status == "ok"}
    assert set(ok) == {"alice", "george", "helen", "ivan", "jane"}
    for e in ok.values():
        assert {p.stem for p in e.folder.glob("*.py")} >= {"attention"}, e
    assert ok["george"].shown_as == "george/rnn_prehistory"
    assert ok["helen"].shown_as == "helen/assignments/rnn_prehistory"
    assert ok["ivan"].shown_as == "ivan.zip/ivan" and sorted(p.name for p in ok["ivan"].folder.iterdir()) == \
        sorted(p.name for p in SOLUTIONS.glob("*.py"))
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "scratch" / "evil.py").exists()
    assert entries["kate"].status == "missing" and "kate/" in entries["kate"].detail
    assert entries["notes.txt"].status == "not_a_submission"
    assert entries["broken"].status == "not_a_submission" and "broken.zip" in entries["broken"].detail
    assert entries["lena"].status == "not_a_submission" and "lena/a" in entries["lena"].detail


def _rows(out: Path) -> dict[str, dict]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "class.csv").read_text()))}


def test_batch_grades_them_reports_the_rest_and_resumes(tmp_path):
    root = _class(tmp_path / "class")
    stub_student = root / "mike" / "rnn_prehistory"
    shutil.copytree(STUBS, stub_student)
    out = tmp_path / "out"
    proc = run_grader("batch", root, "--out", out, "--jobs", "2", "--topic", "attention", "--topic", "bptt",
                      timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[10/10]" in proc.stdout, proc.stdout
    rows = _rows(out)
    full = UNIT.rubric.topic("attention").points + UNIT.rubric.topic("bptt").points
    for name in ("alice", "george", "ivan", "jane"):
        assert rows[name]["status"] == "graded" and float(rows[name]["earned"]) == full, rows[name]
    assert rows["helen"]["status"] == "graded" and rows["helen"]["bptt_status"] == "not_implemented"
    assert float(rows["helen"]["attention"]) == UNIT.rubric.topic("attention").points
    assert rows["mike"]["status"] == "not_implemented", rows["mike"]
    assert rows["kate"]["status"] == "missing" and rows["lena"]["status"] == "not_a_submission"
    assert rows["notes.txt"]["status"] == "not_a_submission"
    header = (out / "class.csv").read_text().splitlines()[0].split(",")
    assert header[:6] == ["submission", "earned", "possible", "status", "seed", "grader_version"]
    assert header.index("bptt") < header.index("bptt_status") < header.index("attention"), header
    assert len({rows[n]["grader_version"] for n in rows}) == 1 and rows["alice"]["grader_version"]
    messages = [t["message"] for t in json.loads((out / "students" / "mike" / "score.json").read_text())["topics"]]
    assert any("mike/rnn_prehistory/attention.py" in m for m in messages), messages
    assert not any("assignments/rnn_prehistory" in m for m in messages), messages
    # A rerun regrades nothing that did not change; --force regrades everything.
    again = run_grader("batch", root, "--out", out, "--jobs", "2", "--topic", "attention", "--topic", "bptt",
                       timeout=600)
    assert again.returncode == 0, again.stderr
    rows2 = _rows(out)
    assert all(rows2[n]["detail"].startswith("unchanged") for n in ("alice", "george", "helen", "ivan", "jane", "mike"))
    assert all(rows2[n]["earned"] == rows[n]["earned"] for n in rows)
    (root / "alice" / "attention.py").write_text((STUBS / "attention.py").read_text())   # alice changes a file
    third = run_grader("batch", root, "--out", out, "--jobs", "2", "--topic", "attention", "--topic", "bptt",
                       "--force", timeout=600)
    assert third.returncode == 0, third.stderr
    rows3 = _rows(out)
    assert not any(r["detail"].startswith("unchanged") for r in rows3.values())
    assert float(rows3["alice"]["attention"]) == 0


def test_one_job_per_core_keeps_to_its_core_and_fewer_jobs_get_a_spare_worker():
    import os

    from autograder.batch import job_configs

    cpus = sorted(os.sched_getaffinity(0))
    full = job_configs({"seed": 1}, len(cpus))
    assert [c["cpu"] for c in full] == cpus and not any(c["spare"] for c in full)
    assert all(c["seed"] == 1 for c in full)
    if len(cpus) > 1:
        fewer = job_configs({}, len(cpus) - 1)
        assert all(c["spare"] and c["cpu"] is None for c in fewer)
    more = job_configs({}, len(cpus) + 1)
    assert all(not c["spare"] and c["cpu"] is None for c in more)
