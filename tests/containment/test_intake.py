"""Containment at intake (issue 24, points 3, 5, 6), in the two ways the grader is started
(root, in `make sweep`, and unprivileged, as `nobody` over a copy of the checkout; see
harness.py): links on the way to the module files in every intake (`grade`,
`batch`, Gradescope, `pr`), an archive bomb, and entries named like the class files.

Every case runs under the `case` fixture (conftest.py): nothing of the checkout changes
and no process is left; every report folder passes its `check_reports`.
"""

from __future__ import annotations

import bz2
import json
import tarfile
import zipfile

from harness import SOLUTIONS_REL, check_reports, points
from helpers import STUBS, UNIT

LINKED = "is a link: the grader follows no link to the module files"


def test_batch_refuses_a_clone_linked_into_a_classmates(case):
    """helen's `assignments/rnn_prehistory` is a relative link into bob's clone: her row says
    so, nothing is graded on bob's files in her name, and bob is graded."""
    root = case.dir / "class"
    case.submission(f"class/bob/{UNIT.stubs}")
    helen = root / "helen"
    (helen / ".git").mkdir(parents=True)
    (helen / UNIT.stubs).parent.mkdir(parents=True)
    (helen / UNIT.stubs).symlink_to(f"../../bob/{UNIT.stubs}")
    case.grader.own(helen)
    _, out, rows = case.batch(root, "--topic", "attention")
    assert rows["bob"]["status"] == "graded" and float(rows["bob"]["earned"]) == points("attention"), rows
    assert rows["helen"]["status"] == "not_a_submission" and rows["helen"]["earned"] == "", rows
    assert f"helen/{UNIT.stubs} {LINKED}" in rows["helen"]["detail"], rows["helen"]
    assert not (out / "students" / "helen").exists()


def test_gradescope_refuses_an_upload_that_links_to_the_grader_reference(case):
    """An upload holding a directory link to the grader's own reference scores 0 and says why."""
    root = case.dir / "gradescope"
    (root / "submission").mkdir(parents=True)
    (root / "submission" / "rnn_prehistory").symlink_to(case.grader.checkout / SOLUTIONS_REL)
    case.grader.own(root)
    run = case.run("gradescope", "--root", root, "--lang", "en", timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and all(t["score"] == 0 for t in results["tests"]), results
    assert "rnn\\_prehistory is a link" in results["output"], results["output"]
    for name in ("score.md", "score.json", "junit.xml", "results.json"):    # every format of the path
        assert "rnn_prehistory is a link" in (root / "results" / "reports" / name).read_text().replace("\\", ""), name
    check_reports(root / "results", run, case.secret)


def _refused_pull_request(case, checkout, linked: str):
    """`pr` over `checkout` (nothing protected): a score of 0 in every report, each test naming
    `linked`. Returns the run and its report folder."""
    manifest = case.dir / "protected-files.sha256"
    manifest.write_text("# nothing protected in this case\n")
    case.grader.own(checkout)
    case.grader.own(manifest)
    out = case.out_dir()
    run = case.run("pr", checkout, "--manifest", manifest, "--out", out, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    score = json.loads((out / "score.json").read_text())
    assert score["earned"] == 0 and score["possible"] == UNIT.rubric.points, score["earned"]
    assert all(linked in t["message"] for x in score["topics"] for t in x["tests"]), score["topics"][0]
    for name in ("score.md", "junit.xml", "results.json", "comment.md"):
        assert linked in (out / name).read_text().replace("\\", ""), name
    return run, out


def test_pr_refuses_a_checkout_whose_folder_links_to_the_bundle_reference(case):
    """A pull request whose `assignments/rnn_prehistory` is a link to the grader bundle's
    reference is not graded: a score of 0 in every report, each test saying why (the link
    named), rather than graded and marked tampered."""
    checkout = case.dir / "pr"
    (checkout / UNIT.stubs).parent.mkdir(parents=True)
    (checkout / UNIT.stubs).symlink_to(case.grader.checkout / SOLUTIONS_REL)
    run, _out = _refused_pull_request(case, checkout, "is a link in the pull request")
    assert f"{UNIT.stubs} is a link in the pull request" in run.stderr, run.stderr[-2000:]


def test_pr_refuses_a_module_file_that_is_a_link(case):
    """A pull request whose module folder is its own but whose `bptt.py` is a link to the
    bundle's reference: a score of 0 in every report, each test naming the link (it said
    "bptt.py is missing from the submission" and graded the other modules)."""
    checkout = case.dir / "pr"
    case.submission(f"pr/{UNIT.stubs}")
    (checkout / UNIT.stubs / "bptt.py").unlink()
    (checkout / UNIT.stubs / "bptt.py").symlink_to(case.grader.checkout / SOLUTIONS_REL / "bptt.py")
    run, out = _refused_pull_request(case, checkout, f"{UNIT.stubs}/bptt.py is a link in the pull request")
    check_reports(out, run, case.secret)


def test_grade_refuses_a_module_file_that_is_a_link(case):
    sub = case.submission("mine")
    (sub / "bptt.py").unlink()
    (sub / "bptt.py").symlink_to(case.grader.checkout / SOLUTIONS_REL / "bptt.py")
    case.grader.own(sub)
    out = case.out_dir()
    run = case.run("grade", sub, "--out", out, "--topic", "attention", timeout=120)
    assert run.returncode == 2 and f"mine/bptt.py {LINKED}" in run.stderr, run.stdout[-2000:] + run.stderr[-2000:]
    assert not (out / "score.json").exists()


def test_grade_refuses_a_folder_that_is_a_link(case):
    linked = case.dir / "mine"
    linked.symlink_to(case.grader.checkout / SOLUTIONS_REL)
    case.grader.own(linked)
    out = case.out_dir()
    run = case.run("grade", linked, "--out", out, "--topic", "attention", timeout=120)
    assert run.returncode == 2 and f"mine {LINKED}" in run.stderr, run.stdout[-2000:] + run.stderr[-2000:]
    assert not (out / "score.json").exists()


def test_an_archive_bomb_and_class_file_names_cost_only_their_own_rows(case):
    """A `.tar` that is bzip2 inside declaring 1 TiB (and holding 64 MB of zeros), beside
    `class.csv.zip` (the stubs) and `class.html/`: batch finishes in a sane time, writes class.csv and
    the report, and grades the others."""
    root = case.dir / "class"
    case.submission("class/alice")
    case.submission("class/class.html")
    with zipfile.ZipFile(root / "class.csv.zip", "w") as z:      # the stubs: no solution line in the kept copy
        for p in STUBS.glob("*.py"):
            z.write(p, p.name)
    header = tarfile.TarInfo("zeros")
    header.size = 1 << 40
    zeros = bz2.compress(b"\0" * (1 << 20))
    with open(root / "bomb.tar", "wb") as fh:
        fh.write(bz2.compress(header.tobuf(format=tarfile.GNU_FORMAT)))
        for _ in range(64):
            fh.write(zeros)
    case.grader.own(root)
    _, out, rows = case.batch(root, "--jobs", "2", "--topic", "attention")
    for name in ("alice", "class.html"):
        assert rows[name]["status"] == "graded" and float(rows[name]["earned"]) == points("attention"), rows
    assert rows["class.csv"]["status"] == "not_implemented" and (out / "students" / "class.csv" / "score.json").is_file()
    assert rows["bomb"]["status"] == "not_a_submission" and "unpacks to more than" in rows["bomb"]["detail"], rows
    assert (out / "class.md").is_file() and (out / "class.html").is_file()
    assert "bomb" in (out / "class.md").read_text()
