"""Regrading a class as an instructor does: a generated class of 40 submissions in every
shape they arrive in, graded by `batch --jobs 2`; shards merged into the same class file;
the class report; Gradescope's run_autograder on a simulated /autograder layout. The
class of 40 is graded in `make sweep` (CLASS_SCALE), the rest in `make test`.

Every student's row must be what grading the same files alone gives (the alone gradings
run once per distinct content: the same files get the same seed, so the same score)."""

from __future__ import annotations

import bz2
import csv
import html.parser
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers import MATRIX, REPO, SOLUTIONS, STUBS, UNIT, Background, grade, make_submission, run_grader, run_in_process

# The scenarios of one delivery path run in `make sweep` (CI runs it after `make test`);
# `make test` sends half-finished work through every path once (test_journey.py).
pytestmark = pytest.mark.sweep

from autograder.reports.text import markdown

MUTANTS = [(topic, MATRIX[topic]["mutants"][0]) for topic in
           ("bptt", "gate_derivative", "gru_lstm_step", "beam_attribution", "bleu", "attention")]
TIMEOUT_S = 20       # batch's limit per submission, CPU seconds: about ten times a full grading
HOSTILE = (SOLUTIONS / "attention.py").read_text() + f'''

import os as _os, signal as _signal
_done = []
for _try in (lambda: _os.kill(_os.getppid(), _signal.SIGKILL),
             lambda: open({str(UNIT.test_file("bleu", "hidden"))!r}).read(),
             lambda: open("/tmp/escaped-from-the-worker", "w").write("x")):
    try:
        _done.append(str(_try())[:80])
    except Exception as _exc:
        _done.append(type(_exc).__name__)
'''
# An import that never ends. It sleeps rather than spins: a spinning hang would burn a core
# beside the rest of the class (tests/containment/test_sandbox.py times out a spinning call).
# The imports of a grading share one budget (the import limit): the first hang spends it, the
# other modules' imports are refused at once, and every topic is `timeout`.
HANG = "import time\nwhile True:\n    time.sleep(0.05)\n"


def _module(topic: str) -> str:
    return f"{UNIT.topic(topic).module}.py"


def _mutated(topic: str, mutant: dict) -> str:
    """The reference module of `topic` with the mutant's edits."""
    text = (SOLUTIONS / _module(topic)).read_text()
    for old, new in mutant["replace"]:
        assert old in text, (mutant["name"], old)
        text = text.replace(old, new)
    return text


def _contents(scratch: Path) -> dict[str, Path]:
    """content key -> a folder of module files. Only the reference (alice's) is finished everywhere:
    the other contents leave the topics they are not about as stubs, which grade in
    moments, so that the class costs what its shapes need (a full grading runs the lab)."""
    contents = {"reference": SOLUTIONS, "stubs": STUBS}
    for topic, mutant in MUTANTS:          # the topic's module finished, with the mutant's mistake
        contents[f"mutant-{mutant['name']}"] = make_submission(
            scratch / mutant["name"], base=STUBS, files={_module(topic): _mutated(topic, mutant)})
    partial = make_submission(scratch / "partial", base=STUBS)
    for module in ("bptt.py", "attention.py"):
        shutil.copyfile(SOLUTIONS / module, partial / module)
    contents["partial"] = partial
    # A SyntaxError in bptt and an import that hangs in bleu: the class report must name both.
    contents["syntax"] = make_submission(scratch / "syntax", base=partial,
                                         files={"bptt.py": "def rnn_step_forward(:\n", "bleu.py": HANG})
    contents["hostile"] = make_submission(scratch / "hostile", base=partial, files={"attention.py": HOSTILE})
    contents["hang"] = make_submission(scratch / "hang", files={f"{t.module}.py": HANG for t in UNIT.topics})
    return contents


def _modules(folder: Path):
    return sorted(p for p in folder.glob("*.py") if p.stem in {t.module for t in UNIT.topics})


def _zip(path: Path, folder: Path, inside: str = "") -> None:
    with zipfile.ZipFile(path, "w") as z:
        for p in _modules(folder):
            z.write(p, f"{inside}{p.name}")


def _tar(path: Path, folder: Path, inside: str = "", mode: str = "w:gz") -> None:
    with tarfile.open(path, mode) as t:
        for p in _modules(folder):
            t.add(p, f"{inside}{p.name}")


def _clone(dest: Path, student_release: Path, folder: Path) -> Path:
    """A clone of the student repository with `folder`'s modules in it (its links kept as
    links, as git checks them out)."""
    shutil.copytree(student_release, dest, symlinks=True)
    (dest / ".git").mkdir()
    for p in _modules(folder):
        shutil.copyfile(p, dest / UNIT.stubs / p.name)
    return dest


def generated_class(root: Path, scratch: Path, student_release: Path) -> dict[str, str | None]:
    """40 entries: name -> content key (None: not a submission, or nothing in it)."""
    c = _contents(scratch)
    root.mkdir(parents=True)
    key: dict[str, str | None] = {}

    def folder(name, content, nested=""):
        shutil.copytree(c[content], root / name / nested if nested else root / name,
                        ignore=shutil.ignore_patterns("tests", "__pycache__"))
        key[name] = content

    folder("alice", "reference")
    folder("george", "partial", nested="rnn_prehistory")
    _zip(root / "ivan.zip", c["partial"], inside="ivan/")
    _tar(root / "jane.tar.gz", c["partial"])
    _tar(root / "jim.tgz", c["stubs"], inside="hw/")
    _tar(root / "joan.tar", c["partial"], mode="w")
    key.update({"ivan": "partial", "jane": "partial", "jim": "stubs", "joan": "partial"})
    _clone(root / "helen", student_release, c["partial"])
    key["helen"] = "partial"
    tom = _clone(root / "tom", student_release, c["partial"])         # edits a public test: tampered
    public_test = tom / UNIT.stubs / "tests" / "test_bleu.py"
    public_test.write_text(public_test.read_text() + "\n# made easier\n")
    key["tom"] = "partial"
    folder("copy-a", "partial")                                        # two identical copies
    folder("copy-b", "partial")
    folder("sam", "stubs")
    _clone(root / "stella", student_release, c["stubs"])
    _zip(root / "stan.zip", c["stubs"])
    key.update({"stella": "stubs", "stan": "stubs"})
    for i, (_topic, mutant) in enumerate(MUTANTS):
        content = f"mutant-{mutant['name']}"
        folder(f"m{i}-folder", content)
        _zip(root / f"m{i}-zip.zip", c[content], inside=f"m{i}/")
        key[f"m{i}-zip"] = content
    folder("m0-nested", f"mutant-{MUTANTS[0][1]['name']}", nested="upload")
    folder("class.html", "partial")                                    # names of the class files
    _zip(root / "class.csv.zip", c["partial"])
    _tar(root / "peter.tar.gz", c["partial"], inside="peter/")
    key.update({"class.csv": "partial", "peter": "partial"})
    with zipfile.ZipFile(root / "lee.zip", "w") as z:                  # GitHub's "Download ZIP"
        z.writestr("lee-main/README.md", "# my repository")
        for p in _modules(c["partial"]):
            z.write(p, f"lee-main/{UNIT.stubs}/{p.name}")
    key["lee"] = "partial"
    bomb = bz2.compress(b"\0" * (1 << 20))                             # 1 TiB declared in a few kB
    header = tarfile.TarInfo("zeros")
    header.size = 1 << 40
    (root / "bomb.tar").write_bytes(bz2.compress(header.tobuf(format=tarfile.GNU_FORMAT)) + bomb * 16)
    leo = root / "leo"                                                 # a clone graded on alice's files?
    (leo / ".git").mkdir(parents=True)
    (leo / UNIT.stubs).parent.mkdir(parents=True)
    (leo / UNIT.stubs).symlink_to(os.path.relpath(root / "alice", (leo / UNIT.stubs).parent))
    key.update({"bomb": None, "leo": None})
    folder("syd", "syntax")
    folder("hal", "hostile")
    folder("hank", "hang")
    (root / "empty").mkdir()                                           # missing: nothing in them
    (root / "kate").mkdir()
    (root / "kate" / "notes.md").write_text("todo")
    (root / "notes.txt").write_text("not a submission")                # not submissions
    (root / "broken.zip").write_bytes(b"PK\x03\x04 not really")
    for copy in ("a", "b"):
        shutil.copytree(SOLUTIONS, root / "lena" / copy)
    key.update({"empty": None, "kate": None, "notes.txt": None, "broken": None, "lena": None})
    assert len(key) == 40 == len(list(root.iterdir())), sorted(key)
    return key


def _rows(path: Path) -> dict[str, dict]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO(path.read_text()))}


# The 40 submissions are graded in `make sweep` (CI runs it after `make test`): the class
# costs about 30 s of CPU and a minute on two cores (its hangs wait out their time limits),
# a quarter of `make test`'s budget. Batch, shards, merge and Gradescope are graded in
# `make test` by the tests below without it, and by tests/e2e/test_batch_intake.py.
CLASS_SCALE = pytest.mark.sweep


@pytest.fixture(scope="module")
def regraded(tmp_path_factory, dist):
    tmp = tmp_path_factory.mktemp("regrade")
    key = generated_class(tmp / "class", tmp / "contents", dist / "student")
    out = tmp / "out"
    batch = Background("batch", tmp / "class", "--out", out, "--jobs", "2", "--timeout", TIMEOUT_S,
                       "--manifest", dist / "student" / "protected-files.sha256", timeout=1200)
    # The alone gradings run meanwhile, one at a time in this process: the batch's jobs wait
    # out the hangs' time limits, and leave a core free for them.
    contents = _contents(tmp / "alone-contents")
    alone_keys = sorted({k for k in key.values() if k and k != "hang"})
    scores = {k: grade(contents[k], tmp / "alone" / k)[1] for k in alone_keys}
    proc = batch.result()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"key": key, "out": out, "rows": _rows(out / "class.csv"), "alone": scores, "stdout": proc.stdout}


@CLASS_SCALE
def test_every_student_gets_what_grading_alone_gives(regraded):
    rows, key, alone = regraded["rows"], regraded["key"], regraded["alone"]
    assert set(rows) == set(key)
    for name, content in key.items():
        row = rows[name]
        if content is None or content == "hang":
            continue
        score = alone[content]
        assert row["status"] in ("graded", "not_implemented"), (name, row)
        assert float(row["earned"]) == score["earned"] and row["seed"] == str(score["seed"]), (name, row, content)
        for topic in score["topics"]:
            assert float(row[topic["id"]]) == topic["earned"] and row[f"{topic['id']}_status"] == topic["status"], \
                (name, topic["id"], row, content)
    assert {rows[n]["status"] for n in ("sam", "stella", "stan")} == {"not_implemented"}
    total = sum(t.points for t in UNIT.rubric.topics)
    assert float(rows["alice"]["earned"]) == float(rows["alice"]["possible"]) == total
    assert 0 < float(rows["syd"]["earned"]) < total and rows["syd"]["bptt"] == "0.0"


@CLASS_SCALE
def test_identical_copies_get_identical_scores(regraded):
    rows = regraded["rows"]
    same = ("seed", "earned") + tuple(t.id for t in UNIT.topics)
    assert [rows["copy-a"][k] for k in same] == [rows["copy-b"][k] for k in same]
    a, b = (json.loads((regraded["out"] / "students" / n / "score.json").read_text()) for n in ("copy-a", "copy-b"))
    for doc in (a, b):
        doc.pop("duration_s"), doc.pop("submission")
    # Messages name the student's own file ("fill in the TODOs in copy-a/bleu.py"): nothing else differs.
    assert "copy-a/" in json.dumps(a)
    assert json.loads(json.dumps(a).replace("copy-a/", "copy-b/")) == b


@CLASS_SCALE
def test_what_is_not_graded_says_why_and_a_hang_costs_only_its_row(regraded):
    rows = regraded["rows"]
    assert rows["hank"]["status"] == "graded" and float(rows["hank"]["earned"]) == 0, rows["hank"]
    assert {rows["hank"][f"{t.id}_status"] for t in UNIT.topics} == {"timeout"}, rows["hank"]
    assert rows["empty"]["status"] == rows["kate"]["status"] == "missing"
    assert {rows[n]["status"] for n in ("notes.txt", "broken", "lena", "bomb", "leo")} == {"not_a_submission"}
    assert "unpacks to more than" in rows["bomb"]["detail"]
    assert f"leo/{UNIT.stubs} is a link" in rows["leo"]["detail"]
    assert "[40/40]" in regraded["stdout"]


@CLASS_SCALE
def test_names_of_class_files_and_wrapper_folders_are_graded_like_any_other(regraded):
    rows, out = regraded["rows"], regraded["out"]
    assert rows["class.csv"]["status"] == rows["class.html"]["status"] == rows["lee"]["status"] == "graded"
    assert rows["lee"]["folder"] == f"lee.zip/lee-main/{UNIT.stubs}" and rows["george"]["folder"] == "george/rnn_prehistory"
    for name in ("class.csv", "class.html", "lee"):
        assert (out / "students" / name / "score.json").is_file()
    assert (out / "class.csv").is_file() and (out / "class.html").is_file()


@CLASS_SCALE
def test_a_hostile_submission_changes_nothing_else(regraded):
    rows, out = regraded["rows"], regraded["out"]
    assert rows["hal"]["status"] == "graded" and float(rows["hal"]["bptt"]) == UNIT.rubric.topic("bptt").points
    hidden = UNIT.test_file("bleu", "hidden").read_text()[:80]
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".md", ".xml", ".yaml", ".csv", ".html"):
            assert hidden not in path.read_text(errors="replace"), path
    assert not Path("/tmp/escaped-from-the-worker").exists()


@CLASS_SCALE
def test_tamper_flags_name_the_changed_file_of_a_clone(regraded):
    rows = regraded["rows"]
    assert rows["tom"]["tampered"] == f"{UNIT.stubs}/tests/test_bleu.py"
    assert rows["helen"]["tampered"] == rows["stella"]["tampered"] == ""
    assert all(rows[n]["tampered"] == "" for n in ("alice", "ivan", "george"))   # nothing to compare there
    assert rows["tom"]["earned"] == rows["helen"]["earned"]          # the score is the original files'


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)


@CLASS_SCALE
def test_the_class_report_shows_what_to_reteach(regraded):
    out, rows = regraded["out"], regraded["rows"]
    md = (out / "class.md").read_text()
    for heading in ("Score distribution per topic", "Most frequent failing tests",
                    "Misconceptions named across the class", "Submissions that were not graded",
                    "Topics lost to an error, a timeout or a crash", "Tampered submissions"):
        assert f"## {heading}" in md
    assert "| hank | bptt | timeout |" in md and "| tom |" in md
    assert "| syd | bptt | error | bptt.py does not import: SyntaxError" in md, md
    assert "| syd | bleu | timeout |" in md, md
    # Each mutant's misconception (a rubric hint of a test that catches it) is named.
    for topic, mutant in MUTANTS:
        hints = {t.hint for t in UNIT.rubric.topic(topic).tests if f"{t.visibility}::{t.test}" in mutant["killed_by"]}
        assert any(markdown(h)[:60] in md for h in hints if h), (topic, mutant["name"])
    page = (out / "class.html").read_text()
    tags = _Tags()
    tags.feed(page)
    assert "script" not in tags.tags and {"table", "img", "h2"} <= tags.tags
    assert (out / "class.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    graded = sum(r["status"] in ("graded", "not_implemented") for r in rows.values())
    assert f"{graded} graded" in md


def test_shards_merged_give_the_class_file_of_one_run(tmp_path, dist):
    root = tmp_path / "class"
    root.mkdir()
    make_submission(root / "ann")
    shutil.copytree(STUBS, root / "bob", ignore=shutil.ignore_patterns("tests"))
    for topic, mutant in MUTANTS[:3]:
        make_submission(root / f"mut-{topic}", replace={_module(topic): [tuple(e) for e in mutant["replace"]]})
    (root / "empty").mkdir()
    (root / "=cmd").mkdir()                               # a name a spreadsheet would run
    make_submission(root / "=cmd")
    (root / "stray.txt").write_text("x")
    args = ("--topic", "bptt", "--topic", "attention")
    whole = run_in_process("batch", root, "--out", tmp_path / "whole", *args, "--jobs", "2")
    assert whole.returncode == 0, whole.stderr
    for k in (1, 2, 3):          # one job each: the class file does not depend on how many graded it
        shard = run_in_process("batch", root, "--out", tmp_path / f"shard{k}", "--shard", f"{k}/3", *args,
                               "--jobs", "1")
        assert shard.returncode == 0, shard.stderr
        assert (tmp_path / f"shard{k}" / f"class.shard{k}of3.csv").is_file()
    incomplete = run_grader("merge", tmp_path / "shard1", tmp_path / "shard3", "--out", tmp_path / "bad")
    assert incomplete.returncode == 2 and "shard(s) 2 of 3 missing" in incomplete.stderr
    merged = run_in_process("merge", *(tmp_path / f"shard{k}" for k in (3, 1, 2)), "--out", tmp_path / "merged")
    assert merged.returncode == 0, merged.stderr
    assert (tmp_path / "merged" / "class.csv").read_text() == (tmp_path / "whole" / "class.csv").read_text()
    assert (tmp_path / "merged" / "class.md").read_text() == (tmp_path / "whole" / "class.md").read_text()
    # ann and =cmd hold the same files: one run and the merged shards find the pair alike
    assert (tmp_path / "merged" / "similarity.csv").read_text() == (tmp_path / "whole" / "similarity.csv").read_text()
    assert "'=cmd,ann,yes" in (tmp_path / "whole" / "similarity.csv").read_text()
    assert (tmp_path / "merged" / "students" / "ann" / "score.json").is_file()


SCHEMA = json.loads((REPO / "tests" / "gradescope_results.schema.json").read_text())


def _run_autograder(tmp: Path, dist: Path, upload) -> tuple[subprocess.CompletedProcess, dict]:
    root = tmp / "autograder"
    with zipfile.ZipFile(dist / "gradescope.zip") as z:
        z.extractall(root / "source")
        assert {"setup.sh", "run_autograder"} <= set(z.namelist())
    script = root / "run_autograder"
    shutil.copyfile(root / "source" / "run_autograder", script)      # what Gradescope's image build does
    script.chmod(0o755)
    (root / "submission").mkdir()
    upload(root / "submission")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable, "LANGUAGE": "en"}
    proc = subprocess.run([str(script)], capture_output=True, text=True, env=env, timeout=300)
    results = json.loads((root / "results" / "results.json").read_text())
    return proc, results


def test_gradescope_run_autograder_writes_results_that_follow_the_specification(tmp_path, dist):
    import jsonschema

    topic, mutant = MUTANTS[0]
    sub = make_submission(tmp_path / "mutant", base=STUBS, files={_module(topic): _mutated(topic, mutant)})

    def repository(upload: Path) -> None:          # Gradescope's GitHub upload: the repository at the top
        _clone(upload / "repo", dist / "student", sub)
        for p in (upload / "repo").iterdir():
            shutil.move(str(p), upload)

    proc, results = _run_autograder(tmp_path / "a", dist, repository)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    jsonschema.validate(results, SCHEMA)
    _proc, alone = grade(sub, tmp_path / "alone")
    assert results["score"] == alone["earned"] < 100
    assert len(results["tests"]) == sum(len(t["tests"]) for t in alone["topics"])
    assert results["output_format"] == results["test_output_format"] == "md"
    failed = [t for t in results["tests"] if t["status"] == "failed"]
    assert failed and all(t["output"] for t in failed)
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}
    # The engine that ran is the zip's, not whatever else the Python has installed.
    where = subprocess.run([sys.executable, "-c", "import autograder; print(autograder.__file__)"],
                           env={**os.environ, "PYTHONPATH": str(tmp_path / "a" / "autograder" / "source" / "grader")},
                           capture_output=True, text=True, cwd=tmp_path)
    assert where.stdout.startswith(str(tmp_path / "a" / "autograder" / "source" / "grader")), where.stdout

    # An upload with no module file still gets a results.json that says why.
    _proc, empty = _run_autograder(tmp_path / "b", dist, lambda up: (up / "notes.txt").write_text("hi"))
    jsonschema.validate(empty, SCHEMA)
    assert empty["score"] == 0 and "Nothing was graded" in empty["output"], empty["output"]
    assert empty["tests"] and all(t["score"] == 0 and "Nothing was graded" in t["output"] for t in empty["tests"])


def test_the_roster_of_the_regrade_workflow_is_read_strictly(tmp_path):
    sys.path.insert(0, str(REPO / "scripts"))
    import fetch_class

    roster = tmp_path / "roster.txt"
    roster.write_text("# spring class\nmy-course/rnn-alice\n\nmy-course/rnn-bob  # late\n")
    assert fetch_class.read_roster(roster) == ["my-course/rnn-alice", "my-course/rnn-bob"]
    for bad in ("my-course/../etc", "just-a-name", "a/b; rm -rf /"):
        roster.write_text(bad + "\n")
        with pytest.raises(SystemExit, match="not a repository"):
            fetch_class.read_roster(roster)
    roster.write_text("one/rnn-alice\ntwo/rnn-alice\n")              # their folders would clash
    with pytest.raises(SystemExit, match="share a name"):
        fetch_class.read_roster(roster)


@CLASS_SCALE
def test_an_archive_is_graded_from_files_kept_beside_its_reports(regraded):
    out = regraded["out"]
    kept = out / "students" / "ivan" / "unpacked"
    assert sorted(p.name for p in kept.iterdir()) == sorted(p.name for p in SOLUTIONS.glob("*.py"))
    evidence = (out / "students" / "ivan" / "evidence.yaml").read_text()
    command = evidence.split("commands:", 1)[1].split("\n- ", 2)[1]
    assert " unpacked " in f" {command} " and "--seed" in command, command   # replays from the kept files
