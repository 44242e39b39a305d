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

import pytest
from helpers import SOLUTIONS, STUBS, UNIT, run_grader

# The scenarios of one delivery path run in `make sweep` (CI runs it after `make test`);
# `make test` sends half-finished work through every path once (test_journey.py).
pytestmark = pytest.mark.sweep

from autograder.intake import submissions

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
    entries = {e.name: e for e in submissions.find(_class(tmp_path / "class"), MODULES, tmp_path / "scratch")}
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

    from autograder.commands.batch_pool import job_configs

    cpus = sorted(os.sched_getaffinity(0))
    full = job_configs({"seed": 1}, len(cpus))
    assert [c["cpu"] for c in full] == cpus and not any(c["spare"] for c in full)
    assert all(c["seed"] == 1 for c in full)
    if len(cpus) > 1:
        fewer = job_configs({}, len(cpus) - 1)
        assert all(c["spare"] and c["cpu"] is None for c in fewer)
    more = job_configs({}, len(cpus) + 1)
    assert all(not c["spare"] and c["cpu"] is None for c in more)


# ------------------------------------------------------------------ wrappers, links, bombs
def _github_zip(path: Path, top: str, files: Path) -> None:
    """GitHub's "Download ZIP": every path under one `<repo>-<branch>/` folder."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{top}/README.md", "# my repository")
        for p in files.glob("*.py"):
            z.write(p, f"{top}/assignments/rnn_prehistory/{p.name}")


def test_single_wrapper_folders_are_looked_through_and_the_graded_folder_named(tmp_path):
    root = tmp_path / "class"
    root.mkdir()
    _github_zip(root / "lee.zip", "lee-main", SOLUTIONS)
    shutil.copytree(SOLUTIONS, root / "lee-main" / "assignments" / "rnn_prehistory")   # the folder unzipped
    (root / "lee-main" / "README.md").write_text("# my repository")
    shutil.copytree(SOLUTIONS, root / "mo" / "mo-main" / "assignments" / "rnn_prehistory")   # unzipped into a folder
    (root / "mo" / "__MACOSX").mkdir()
    entries = {e.name: e for e in submissions.find(root, MODULES, tmp_path / "scratch")}
    assert entries["lee"].status == "ok" and entries["lee"].shown_as == "lee.zip/lee-main/assignments/rnn_prehistory"
    assert entries["lee-main"].status == "ok", entries["lee-main"]
    assert entries["lee-main"].shown_as == "lee-main/assignments/rnn_prehistory"
    assert entries["mo"].status == "ok" and entries["mo"].shown_as == "mo/mo-main/assignments/rnn_prehistory"
    assert {p.name for p in entries["lee"].folder.glob("*.py")} == {p.name for p in SOLUTIONS.glob("*.py")}
    upload = tmp_path / "upload"               # Gradescope: the same zip unpacked in its submission folder
    with zipfile.ZipFile(root / "lee.zip") as z:
        z.extractall(upload)
    assert submissions.from_upload(upload, MODULES).shown_as == "lee-main/assignments/rnn_prehistory"


def test_windows_backslash_zips_and_github_zip_names(tmp_path):
    """A zip whose member names use backslashes (some Windows tools) grades as the same files
    unzipped; GitHub's <repo>-main.zip is the student <repo>."""
    root = tmp_path / "class"
    root.mkdir()
    with zipfile.ZipFile(root / "win.zip", "w") as z:
        for p in SOLUTIONS.glob("*.py"):
            z.writestr(f"win\\rnn_prehistory\\{p.name}", p.read_bytes())
        z.writestr("..\\..\\evil.py", "print('escaped')")
    _github_zip(root / "nora-main.zip", "nora-main", SOLUTIONS)
    entries = {e.name: e for e in submissions.find(root, MODULES, tmp_path / "scratch")}
    assert set(entries) == {"win", "nora"}, entries
    assert entries["win"].status == "ok" and entries["win"].shown_as == "win.zip/win/rnn_prehistory", entries["win"]
    assert {p.name for p in entries["win"].folder.glob("*.py")} == {p.name for p in SOLUTIONS.glob("*.py")}
    assert not (tmp_path / "evil.py").exists() and not list((tmp_path / "scratch").rglob("evil.py"))
    assert entries["nora"].status == "ok" and entries["nora"].shown_as == \
        "nora-main.zip/nora-main/assignments/rnn_prehistory"


def test_no_link_is_followed_to_the_module_files(tmp_path):
    root = tmp_path / "class"
    bob = root / "bob" / "assignments" / "rnn_prehistory"
    shutil.copytree(SOLUTIONS, bob)
    (root / "helen" / ".git").mkdir(parents=True)                       # a clone whose folder is bob's
    (root / "helen" / "assignments").mkdir()
    (root / "helen" / "assignments" / "rnn_prehistory").symlink_to("../../bob/assignments/rnn_prehistory")
    shutil.copytree(STUBS, root / "ivy")                                # one module file is bob's
    (root / "ivy" / "bptt.py").unlink()
    (root / "ivy" / "bptt.py").symlink_to(bob / "bptt.py")
    (root / "jo").mkdir()                                               # a wrapper that is a link
    (root / "jo" / "jo-main").symlink_to(root / "bob")
    with tarfile.open(root / "kim.tar", "w") as t:                      # an archive holding the link
        info = tarfile.TarInfo("kim/rnn_prehistory")
        info.type, info.linkname = tarfile.SYMTYPE, "../../bob/assignments/rnn_prehistory"
        t.addfile(info)
    entries = {e.name: e for e in submissions.find(root, MODULES, tmp_path / "scratch")}
    assert entries["bob"].status == "ok"
    for name, link in (("helen", "helen/assignments/rnn_prehistory"), ("ivy", "ivy/bptt.py"),
                       ("jo", "jo/jo-main"), ("kim", "kim/kim/rnn_prehistory")):
        assert entries[name].status == "not_a_submission" and entries[name].folder is None, entries[name]
        assert f"{link} is a link" in entries[name].detail and "follows no link" in entries[name].detail, \
            entries[name].detail
    upload = tmp_path / "submission"                                    # Gradescope: an upload that is a link
    upload.symlink_to(bob)
    assert submissions.from_upload(upload, MODULES).status == "not_a_submission"
    assert submissions.links_on_the_way(root / "helen", Path("assignments/rnn_prehistory")) == "assignments/rnn_prehistory"
    assert submissions.links_on_the_way(root / "bob", Path("assignments/rnn_prehistory")) == ""


def _bz2_bomb(path: Path, declared: int, zeros_mb: int) -> None:
    """A `.tar` that is bzip2 inside: one member declaring `declared` bytes, followed by
    `zeros_mb` MB of zeros (one compressed 1 MB stream repeated: built in moments)."""
    import bz2

    header = tarfile.TarInfo("zeros")
    header.size = declared
    one_mb = bz2.compress(b"\0" * (1 << 20))
    with open(path, "wb") as fh:
        fh.write(bz2.compress(header.tobuf(format=tarfile.GNU_FORMAT)))
        for _ in range(zeros_mb):
            fh.write(one_mb)


def test_archive_bombs_and_huge_archives_are_refused_with_the_limit_they_broke(tmp_path, monkeypatch):
    import time

    root = tmp_path / "class"
    root.mkdir()
    _bz2_bomb(root / "bomb.tar", declared=1 << 40, zeros_mb=64)           # 1 TiB declared
    with tarfile.open(root / "many.tar.gz", "w:gz") as t:                 # more files than a repository holds
        for i in range(20_001):
            t.addfile(tarfile.TarInfo(f"many/f{i}"))
    with zipfile.ZipFile(root / "zeros.zip", "w", zipfile.ZIP_DEFLATED) as z:   # a ratio no source file has
        z.writestr("zeros/data.bin", b"\0" * (40 << 20))
        for p in SOLUTIONS.glob("*.py"):
            z.write(p, f"zeros/{p.name}")
    shutil.copytree(SOLUTIONS, root / "alice")
    started = time.monotonic()
    entries = {e.name: e for e in submissions.find(root, MODULES, tmp_path / "scratch")}
    elapsed = time.monotonic() - started
    assert entries["alice"].status == "ok"
    assert entries["bomb"].status == "not_a_submission" and "unpacks to more than" in entries["bomb"].detail
    assert entries["many"].status == "not_a_submission" and "more than 20000 files" in entries["many"].detail
    assert entries["zeros"].status == "not_a_submission" and "times its size" in entries["zeros"].detail
    assert elapsed < 60, f"refusing three archives took {elapsed:.0f} s"      # the 1 TiB is never decompressed
    # The child's time limit, on its CPU: an archive whose stream takes longer to read than
    # allowed is refused. 4 GB of bzip2'd zeros cost ~30 s of CPU here and never less than a
    # second on any machine (a wall-clock limit below the child's start-up was machine-dependent:
    # a fast runner unpacked a one-file zip inside 0.01 s and the test failed there).
    for key, value in {"bytes": 1 << 42, "ratio": 10**12, "seconds": 1}.items():
        monkeypatch.setitem(submissions.UNPACK_LIMITS, key, value)
    _bz2_bomb(root / "slow.tar", declared=1 << 41, zeros_mb=4096)
    slow = submissions.find(root, MODULES, tmp_path / "scratch2")
    assert [e.detail for e in slow if e.name == "slow"] == ["slow.tar: unpacking it took longer than 1 s"]


def test_the_class_report_lists_every_topic_lost_to_an_error_a_timeout_or_a_crash(tmp_path):
    from autograder.reports import class_report, histograms

    def row(name, **statuses):
        r = {"submission": name, "earned": "50", "possible": "100", "status": "graded", "seed": "1", "detail": ""}
        for t in UNIT.topics:
            r[t.id], r[f"{t.id}_status"] = "0", statuses.get(t.id, "graded")
        return r

    rows = [row("alice"), row("syd", bptt="error", bleu="timeout"), row("cat", attention="crashed"),
            row("sam", bptt="not_implemented")]
    messages = {"bptt": "bptt.py does not import: SyntaxError: invalid syntax (bptt.py, line 1)",
                "bleu": "the import of bleu.py did not return within 10 s"}
    syd = class_report.student_folder(tmp_path, "syd")
    syd.mkdir(parents=True)
    (syd / "score.json").write_text(json.dumps({"topics": [{"id": t, "status": "x", "message": m, "tests": []}
                                                           for t, m in messages.items()]}))
    class_report.write(tmp_path, UNIT, rows)
    md, page = (tmp_path / "class.md").read_text(), (tmp_path / "class.html").read_text()
    assert "| syd | bptt | error | bptt.py does not import: SyntaxError" in md, md
    assert "| syd | bleu | timeout | the import of bleu.py did not return" in md, md
    assert "| cat | attention | crashed |" in md
    assert "| alice |" not in md and "| sam |" not in md         # a stub is not lost: it is not written yet
    assert "SyntaxError: invalid syntax" in page and "2 with a topic lost" in md
    # One graded student: the count axes show whole students, up to one.
    one = class_report.summarise(tmp_path, UNIT, rows[:1])
    assert {max(t.histogram()) for t in one.topics} == {1}
    assert histograms.integer_ticks(1) == [0, 1]


def test_names_of_class_files_a_bomb_and_a_github_zip_cost_nothing_to_the_class(tmp_path):
    root = tmp_path / "class"
    shutil.copytree(SOLUTIONS, root / "alice")
    shutil.copytree(SOLUTIONS, root / "class.html")                       # a folder named like a class file
    with zipfile.ZipFile(root / "class.csv.zip", "w") as z:               # and an archive
        for p in SOLUTIONS.glob("*.py"):
            z.write(p, p.name)
    _github_zip(root / "lee.zip", "lee-main", SOLUTIONS)
    _bz2_bomb(root / "bomb.tar", declared=1 << 40, zeros_mb=16)
    out = tmp_path / "out"
    proc = run_grader("batch", root, "--out", out, "--jobs", "2", "--topic", "attention", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _rows(out)
    full = UNIT.rubric.topic("attention").points
    for name in ("alice", "class.html", "class.csv", "lee"):
        assert rows[name]["status"] == "graded" and float(rows[name]["earned"]) == full, rows[name]
        assert (out / "students" / name / "score.json").is_file()
    assert rows["lee"]["folder"] == "lee.zip/lee-main/assignments/rnn_prehistory"
    assert rows["class.html"]["folder"] == "class.html" and rows["alice"]["folder"] == "alice"
    assert rows["bomb"]["status"] == "not_a_submission" and "unpacks to more than" in rows["bomb"]["detail"]
    assert (out / "class.html").is_file() and (out / "class.md").is_file() and (out / "class.png").is_file()
    assert "| bomb | not\\_a\\_submission | bomb.tar: it unpacks to more than" in (out / "class.md").read_text()


def test_gradescope_grades_a_github_zip_and_refuses_an_upload_that_links_to_the_reference(tmp_path):
    def run_autograder(root: Path) -> dict:
        proc = run_grader("gradescope", "--root", root, "--lang", "en", timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads((root / "results" / "results.json").read_text())

    github = tmp_path / "github"                       # the "Download ZIP" of an untouched repository, unzipped
    shutil.copytree(STUBS, github / "submission" / "lee-main" / "assignments" / "rnn_prehistory")
    graded = run_autograder(github)
    assert "Nothing was graded" not in graded.get("output", "") and graded["tests"], graded.get("output")
    linked = tmp_path / "linked"                       # a directory link to the grader's reference
    (linked / "submission").mkdir(parents=True)
    (linked / "submission" / "rnn_prehistory").symlink_to(SOLUTIONS)
    refused = run_autograder(linked)
    # A refusal is a score of 0 with every test listed at 0, each saying why.
    assert refused["score"] == 0 and len(refused["tests"]) == len(graded["tests"]), refused
    assert all(t["score"] == 0 and "is a link" in t["output"] for t in refused["tests"]), refused["tests"][:2]
    assert "Nothing was graded: submission/rnn\\_prehistory is a link" in refused["output"], refused["output"]


def test_an_archive_named_only_by_its_extension_gets_a_folder_of_its_own(tmp_path):
    root = tmp_path / "class"
    root.mkdir()
    for name in (".zip", "..zip"):
        with zipfile.ZipFile(root / name, "w") as z:
            z.write(SOLUTIONS / "bptt.py", "bptt.py")
    assert sorted(e.name for e in submissions.find(root, MODULES, tmp_path / "scratch")) == ["..zip", ".zip"]


def _notebooks(folder: Path, modules: Path) -> None:
    """A student's folder of notebooks: each module in a cell that starts with
    `%%writefile <module>.py`, but bptt's in the answer cell of the course's notebook."""
    folder.mkdir(parents=True)
    for p in sorted(modules.glob("*.py")):
        if p.stem == "bptt":
            meta = {"nbgrader": {"grade_id": "module_bptt", "solution": True, "grade": False}}
            code = {"cell_type": "code", "metadata": meta, "source": p.read_text(), "outputs": [], "execution_count": None}
        else:
            code = {"cell_type": "code", "metadata": {}, "source": f"%%writefile {p.name}\n{p.read_text()}",
                    "outputs": [], "execution_count": None}
        cells = [{"cell_type": "markdown", "metadata": {}, "source": f"# {p.stem}"}, code]
        (folder / f"{p.stem}.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                            "nbformat_minor": 5}))


def test_a_folder_of_notebooks_is_graded_in_batch_and_on_gradescope(tmp_path):
    root = tmp_path / "class"
    _notebooks(root / "nina" / "work", SOLUTIONS)
    (root / "otto").mkdir(parents=True)
    (root / "otto" / "scratch.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {},
                                                                         "source": "print(1)"}]}))
    entries = {e.name: e for e in submissions.find(root, MODULES, tmp_path / "scratch")}
    assert entries["nina"].status == "ok" and entries["nina"].shown_as == "nina/work (notebooks)", entries["nina"]
    assert entries["otto"].status == "missing" and "%%writefile <module>.py" in entries["otto"].detail
    out = tmp_path / "out"
    proc = run_grader("batch", root, "--out", out, "--jobs", "2", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _rows(out)
    assert rows["nina"]["status"] == "graded" and rows["nina"]["earned"] == rows["nina"]["possible"], rows["nina"]
    assert rows["otto"]["status"] == "missing"
    upload = tmp_path / "gradescope"
    _notebooks(upload / "submission", SOLUTIONS)
    proc = run_grader("gradescope", "--root", upload, "--lang", "en", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((upload / "results" / "results.json").read_text())
    assert results["score"] == results["extra_data"]["max_score"], results.get("output")
