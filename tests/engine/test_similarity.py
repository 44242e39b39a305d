"""The similarity report, small and fast (the class of 40 and the 200 submissions are measured
in tests/e2e/test_similarity_sweep.py): winnowing as its paper defines it, what a copier
changes cheaply changes nothing, the stub is nobody's, and a small kill-matrix class with
planted copies gives exactly the planted pairs, in similarity.csv and the class report."""

from __future__ import annotations

import csv
import html
import io
import json
import random
import shutil

from helpers import SOLUTIONS, STUBS, UNIT, kill_matrix_files, make_submission, renamed, reordered, run_in_process

from autograder.intake.submissions import PACKAGE_ROOT
from autograder.reports import class_report, similarity, winnow

GIVEN = similarity.boilerplate(UNIT, PACKAGE_ROOT)


def test_winnowing_keeps_the_rightmost_minimum_of_every_window():
    rng = random.Random(7)
    grams = [winnow.Print(rng.randrange(50), i, i) for i in range(300)]        # small hashes: many ties
    kept = {g.first for g in winnow.winnow(grams)}
    for start in range(len(grams) - winnow.W + 1):
        window = grams[start:start + winnow.W]
        low = min(g.hash for g in window)
        assert max(g.first for g in window if g.hash == low) in kept, start       # the paper's rule


def test_a_long_enough_shared_run_always_shares_a_fingerprint():
    rng = random.Random(3)
    words = ["x = y + 1", "for i in range(n):", "    s += a[i] * b[i]", "return s", "z = f(x, y)", "if x > y:",
             "    x, y = y, x"]
    run = "\n".join(rng.choice(words[:4]) for _ in range(12))          # >= K + W - 1 tokens, in both files
    a = "\n".join(rng.choice(words) for _ in range(20)) + "\n" + run + "\n" + "\n".join(words[4:])
    b = "def g():\n    pass\n" + run + "\n"
    assert {p.hash for p in winnow.fingerprints(a)} & {p.hash for p in winnow.fingerprints(b)}


def test_names_numbers_comments_and_layout_change_no_fingerprint():
    code = (SOLUTIONS / "attention.py").read_text()
    disguised = renamed(code, "zz").replace("\n\n", "\n\n# a comment of the copier's\n\n")
    assert disguised != code
    assert [p.hash for p in winnow.fingerprints(code)] == [p.hash for p in winnow.fingerprints(disguised)]


def test_the_stub_is_nobodys_code():
    stubs = {p.stem: p.read_text() for p in STUBS.glob("*.py")}
    prints = similarity.fingerprint(stubs, GIVEN)
    assert prints == {"sha256": "", "modules": {}}
    assert similarity.compare({"ann": prints, "bob": similarity.fingerprint(stubs, GIVEN)}) == []


def small_class() -> tuple[dict[str, dict], set[tuple[str, str]]]:
    """12 mutants and the alternatives, two planted copies of alternatives (renamed and
    reordered) and a byte-identical copy of a mutant: (fingerprints, the planted pairs)."""
    students = kill_matrix_files(limit_mutants=12)
    reference = {p.stem: p.read_text(encoding="utf-8") for p in SOLUTIONS.glob("*.py")}
    planted = set()
    alternatives = sorted(n for n in students if n.startswith("alternative-"))
    for name in (alternatives[0], alternatives[-1]):
        source = students[name]
        module = next(m for m in source if source[m] != reference[m])        # the alternative's own module
        students[f"copy-{name}"] = {**source, module: reordered(renamed(source[module], "q"))}
        planted.add((name, f"copy-{name}"))
    mutant = next(n for n in students if n.startswith("mutant-"))
    students[f"twin-{mutant}"] = dict(students[mutant])
    planted.add((mutant, f"twin-{mutant}"))
    return {n: similarity.fingerprint(f, GIVEN) for n, f in students.items()}, planted


def test_a_small_kill_matrix_class_flags_exactly_its_planted_copies():
    prints, planted = small_class()
    pairs = similarity.compare(prints)
    assert {tuple(sorted((p.a, p.b))) for p in pairs} == {tuple(sorted(p)) for p in planted}
    twin = next(p for p in pairs if p.b.startswith("twin-") or p.a.startswith("twin-"))
    assert twin.identical
    copy = next(p for p in pairs if p.b.startswith("copy-"))
    assert copy.regions and all(r.module_a == r.module_b for r in copy.regions)


def test_the_class_report_shows_the_pairs_and_their_lines_escaped(tmp_path):
    students = tmp_path / "out" / class_report.STUDENTS
    code = "def attention(q, k):\n" + "".join(f"    s{i} = '</pre><script>alert({i})</script>' + q[{i}]\n"
                                             for i in range(30)) + "    return s0\n"
    for name in ("ann", "=bob"):
        (students / name).mkdir(parents=True)
        (students / name / similarity.FILE).write_text(json.dumps(similarity.fingerprint({"attention": code}, GIVEN)))
    rows = [{"submission": n, "status": "graded", "earned": "1", "possible": "2"} for n in ("ann", "=bob")]
    similar = similarity.write(tmp_path / "out", students, ["ann", "=bob"])
    class_report.write(tmp_path / "out", UNIT, rows, "v", similar)
    page = (tmp_path / "out" / "class.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;/pre&gt;&lt;script&gt;alert(3)" in page
    assert "Similar submissions" in page and "identical" in page
    md = (tmp_path / "out" / "class.md").read_text(encoding="utf-8")
    assert "| =bob | ann | identical |" in md or "| ann | =bob | identical |" in md
    table = list(csv.reader(io.StringIO((tmp_path / "out" / "similarity.csv").read_text(encoding="utf-8"))))
    assert table[0][:3] == ["submission_a", "submission_b", "identical"]
    assert {table[1][0], table[1][1]} == {"ann", "'=bob"} and table[1][2] == "yes"     # no formula in a cell


def test_batch_writes_the_similarity_of_its_class(tmp_path):
    """Five byte-identical submissions in a class of ten (the issue's own test) and an archive."""
    root = tmp_path / "class"
    for k in range(5):
        make_submission(root / f"copier{k}")
    for k in range(4):
        shutil.copytree(STUBS, root / f"stub{k}", ignore=shutil.ignore_patterns("tests"))
    make_submission(root / "zipped")
    shutil.make_archive(str(root / "zipped"), "zip", root / "zipped")
    shutil.rmtree(root / "zipped")
    proc = run_in_process("batch", root, "--out", tmp_path / "out", "--suite", "public", "--topic", "attention",
                          "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    table = list(csv.DictReader(io.StringIO((tmp_path / "out" / "similarity.csv").read_text())))
    flagged = {(r["submission_a"], r["submission_b"]) for r in table if r["identical"] == "yes"}
    copiers = [f"copier{k}" for k in range(5)] + ["zipped"]
    assert flagged == {(a, b) for i, a in enumerate(copiers) for b in copiers[i + 1:]}       # 15 pairs, no stub
    assert "copier0" in (tmp_path / "out" / "class.md").read_text()
    # A rerun regrades nothing (same files, same grader): the coordinator fingerprints them instead.
    first = (tmp_path / "out" / "similarity.csv").read_text()
    for folder in (tmp_path / "out" / "students").iterdir():
        (folder / similarity.FILE).unlink(missing_ok=True)
    again = run_in_process("batch", root, "--out", tmp_path / "out", "--suite", "public", "--topic", "attention")
    assert again.returncode == 0 and "not regraded" in (tmp_path / "out" / "class.csv").read_text()
    assert (tmp_path / "out" / "similarity.csv").read_text() == first


def test_merged_shards_compare_the_whole_class(tmp_path):
    """A copy split across two shards is found by `merge`, as by one run."""
    from autograder.reports.class_csv import write_class_csv

    prints, planted = small_class()
    names = sorted(prints)
    for k in (1, 2):
        shard = tmp_path / f"shard{k}"
        mine = names[k - 1::2]
        for name in mine:
            (shard / class_report.STUDENTS / name).mkdir(parents=True)
            (shard / class_report.STUDENTS / name / similarity.FILE).write_text(json.dumps(prints[name]))
        write_class_csv(shard, UNIT, [{"submission": n, "status": "graded", "earned": 1, "possible": 2} for n in mine],
                        k, 2, "v")
    proc = run_in_process("merge", tmp_path / "shard1", tmp_path / "shard2", "--out", tmp_path / "merged")
    assert proc.returncode == 0, proc.stderr
    table = list(csv.DictReader(io.StringIO((tmp_path / "merged" / "similarity.csv").read_text())))
    assert {(r["submission_a"], r["submission_b"]) for r in table} == planted
    assert any(a in names[0::2] and b in names[1::2] or a in names[1::2] and b in names[0::2] for a, b in planted)


def test_the_class_report_speaks_the_runs_language(tmp_path):
    prints, planted = small_class()
    students = tmp_path / "out" / class_report.STUDENTS
    names = sorted({n for pair in planted for n in pair})
    for name in names:
        (students / name).mkdir(parents=True)
        (students / name / similarity.FILE).write_text(json.dumps(prints[name]))
    rows = [{"submission": n, "status": "graded", "earned": "1", "possible": "2"} for n in names]
    from autograder import i18n
    before = i18n.current_language()
    class_report.write(tmp_path / "out", UNIT, rows, "v", similarity.write(tmp_path / "out", students, names), "zh")
    assert i18n.current_language() == before                 # the run's language is left as it was
    page = (tmp_path / "out" / "class.html").read_text(encoding="utf-8")
    assert 'lang="zh-CN"' in page and "相似的提交" in page and "完全相同" in page and "Similar submissions" not in page
    class_report.write(tmp_path / "out", UNIT, rows, "v", None, "en")
    assert "Similar submissions" in (tmp_path / "out" / "class.md").read_text(encoding="utf-8")


def test_no_report_shows_a_line_of_the_reference_solution(tmp_path):
    """Two students who both hand in the reference (one with a line added): the pair is found,
    and neither fingerprints.json nor class.html holds a line of the reference's solution
    blocks; the excerpt says where the reference's lines are instead."""
    import re

    reference = {p.stem: p.read_text(encoding="utf-8") for p in SOLUTIONS.glob("*.py")}
    stubs = "".join(p.read_text(encoding="utf-8") for p in STUBS.glob("*.py"))
    blocks = [line.split("#")[0].strip() for text in reference.values()
              for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", text, re.S)
              for line in block.splitlines()]
    secret = {line for line in blocks if len(line) > 30 and line not in stubs}      # what the stubs do not give away
    students = tmp_path / "out" / class_report.STUDENTS
    files = {"ann": reference, "bob": {**reference, "bptt": reference["bptt"] + "\nEXTRA = 1\n"}}
    for name, texts in files.items():
        (students / name).mkdir(parents=True)
        (students / name / similarity.FILE).write_text(json.dumps(similarity.fingerprint(texts, GIVEN)))
    rows = [{"submission": n, "status": "graded", "earned": "1", "possible": "2"} for n in files]
    similar = similarity.write(tmp_path / "out", students, list(files))
    assert [(p.a, p.b, p.identical) for p in similar[0]] == [("ann", "bob", False)]
    class_report.write(tmp_path / "out", UNIT, rows, "v", similar, "en")
    for path in [tmp_path / "out" / "class.html", *students.rglob(similarity.FILE)]:
        text = " ".join(html.unescape(path.read_text(encoding="utf-8")).replace("\\", "").split())
        shown = [line for line in secret if line in text]
        assert not shown, f"{path.name} shows the reference: {shown[:3]}"
    assert "[a line of the reference solution]" in (tmp_path / "out" / "class.html").read_text()
