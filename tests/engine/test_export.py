"""`export`: a class's grades as Canvas's and Moodle's import files, read back by the rules
of the importers themselves (ported below from canvas-lms app/models/gradebook_importer.rb
and Moodle's grade/import/csv/classes/load_data.php), not by the code that wrote them.

The class: graded students, one whose grading failed, one who wrote nothing yet, one who
sent two submissions, one with no submission, a folder no roster entry claims and one that
two entries could claim; from batch's class.csv and from an nbgrader gradebook.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from datetime import UTC, datetime

import pytest
import yaml
from helpers import UNIT, run_in_process

from autograder.intake.roster import read_roster
from autograder.reports.lms import points

TOPICS = [t.id for t in UNIT.topics]
POSSIBLE = sum(UNIT.rubric.topic(t).points for t in TOPICS)


# --------------------------------------------------------------- the importers' rules, ported
# canvas-lms app/models/gradebook_importer.rb (NON_ASSIGNMENT_COLUMN_HEADERS, strip_non_assignment_columns):
# a column whose name contains one of these, anywhere in the header, is not an assignment.
CANVAS_NOT_ASSIGNMENTS = re.compile("Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
                                    "Override Score|Override Grade|Override Status")


def canvas_fields(line: str, sep: str) -> int | None:
    try:
        return len(next(csv.reader([line], delimiter=sep, strict=True)))
    except (csv.Error, StopIteration):
        return None


def canvas_import(text: str) -> dict:
    """What Canvas's GradebookImporter reads from `text`: the delimiter guessed from the first
    three lines (identify_delimiter: the separator that splits them into equal field counts,
    `;` when it gives more fields than `,`); a number cell with `,` or `.` normalised
    (decimal_comma_to_period); its header check (`header?`: Student, ID first, SIS User ID and
    SIS Login ID between, an optional Integration ID, Section as the last student column);
    columns whose names contain a computed column's name dropped wherever they are; the points
    row (first cell includes "Points Possible"); muted rows skipped; `Title (id)` naming an
    existing assignment (Assignment.title_and_id)."""
    first = text.splitlines(keepends=True)[:3]
    counts = {}
    for sep in (";", ","):
        per_line = [canvas_fields(line, sep) for line in first]
        counts[sep] = per_line[0] if None not in per_line and len(set(per_line)) == 1 else 0
    sep = ";" if counts[";"] > counts[","] else ","
    assert sep == ",", "Canvas would read this file as semicolon-separated"

    def number(cell: str) -> str:           # decimal_comma_to_period
        if not re.fullmatch(r"-?[0-9.,]+%?", cell):
            return cell
        *whole, last = re.split(r"[,.]", cell)
        return "".join(whole) + "." + last if whole else last

    rows = [[number(c) for c in row] for row in csv.reader(io.StringIO(text), delimiter=sep)
            if not re.fullmatch(r"[;, ]*", sep.join(row))]
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], header
    width = 3
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        width = 4
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        width = 5 + bool(re.search(r"Integration\s+ID", header[4]))
    assert "Section" in header[width - 1], "Canvas: Invalid header row"
    assignments = [h for h in header[width:] if not CANVAS_NOT_ASSIGNMENTS.search(h)]
    assert len(set(assignments)) == len(assignments), "Canvas finds a column by its name: two share one"
    out: dict = {"assignments": [], "points": {}, "students": []}
    for name in assignments:
        m = re.fullmatch(r"(.*)\s\((\d+)\)", name, flags=re.S)          # Assignment.title_and_id
        out["assignments"].append((m.group(1), m.group(2)) if m else (name, None))
    column = {a: header.index(a) for a in assignments}                  # calc_assignment_indices
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            out["points"] = {a: float(row[column[a]]) for a in assignments}
            continue
        if all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, flags=re.I) for c in row):
            continue
        ids = dict(zip(header[:width], row[:width]))
        assert ids["ID"] or ids.get("SIS User ID") or ids.get("SIS Login ID"), f"found only by name: {row}"
        out["students"].append({**ids, **{a: float(row[column[a]]) for a in assignments}})
    return out


def moodle_import(text: str, users: set[str], gradepointmax: float = 100) -> list[dict]:
    """Moodle's CSV grade import with the first column mapped to the user field, as
    lib/csvlib.class.php and grade/import/csv/classes/load_data.php read it: a BOM and
    surrounding blank lines dropped, every line as many fields as the header (else
    csvweirdcolumns, nothing imported); a line of one field skipped; a user not in the
    course aborts the import; an empty grade or "-" clears the grade (refused here: the
    export must never clear one); anything else must be a number (unformat_float, strict),
    and none above gradepointmax (100 unless the site allows unlimited grades)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").strip()
    rows = list(csv.reader(io.StringIO(text)))
    header, read = [h.strip() for h in rows[0]], []
    assert all(len(r) == len(header) for r in rows), "Moodle: csvweirdcolumns"
    for row in rows[1:]:
        if len(row) <= 1:
            continue
        row = [c.strip() for c in row]
        assert row[0] in users, f"Moodle: user not found, whole import aborted ({row[0]!r})"
        assert all(c not in ("", "-") for c in row[1:]), f"Moodle would clear a grade: {row}"
        grades = {h: float(c) for h, c in zip(header[1:], row[1:])}
        assert max(grades.values()) <= gradepointmax, f"Moodle: gradevaluetoobig ({row})"
        read.append({"user": row[0], **grades})
    return read


# ------------------------------------------------------------------------------ the class
def class_csv(folder, rows: list[dict]) -> None:
    fields = ["submission", "earned", "possible", "status", "seed", "grader_version", "tampered", "folder"]
    fields += [x for t in TOPICS for x in (t, f"{t}_status")] + ["detail"]
    with (folder / "class.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, restval="")
        w.writeheader()
        w.writerows(rows)


def graded(name: str, scores: dict[str, float], status: str = "graded") -> dict:
    row = {"submission": name, "earned": sum(scores.values()), "possible": POSSIBLE, "status": status}
    for t in TOPICS:
        row[t], row[f"{t}_status"] = scores.get(t, 0.0), status
    return row


@pytest.fixture
def batch_out(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    class_csv(out, [
        {**graded("rnn-ann", {"bptt": 7.5, "attention": 1 / 3}),    # a GitHub Classroom clone
         "tampered": ".github/workflows/grade.yml"},
        {"submission": "bob-main", "status": "grader_error", "detail": "the grading process stopped"},
        graded("cy", {}, status="not_implemented"),                   # wrote nothing yet: 0, a grade
        graded("rnn-dee", {"bptt": 3.0}),
        graded("rnn-dee-main", {"bptt": 9.0}),                        # dee's second submission
        graded("zed", {"bptt": 20.0}),                                # in no roster
        graded("rnn-ann-lee", {"bptt": 1.0}),                         # lee's or ann-lee's: not guessed
    ])
    roster = tmp_path / "classroom_roster.csv"
    roster.write_text("identifier,github_username,github_id,name\n"
                      's001,ann,101,"Lee, Ann"\ns002,bob,102,Bob\ns003,cy,103,Cy\ns004,dee,104,Dee\n'
                      "s005,eve,105,Eve\ns006,lee,106,Lee\ns007,ann-lee,107,Ann-Lee\n", encoding="utf-8")
    sis = tmp_path / "sis.csv"          # the instructor's: the same ids, with e-mails and sections
    sis.write_text("student_id,email,section\n" + "".join(f"s00{i},{n}@uni.example,Lab {i % 2}\n" for i, n in
                                                           enumerate(["ann", "bob", "cy", "dee", "eve"], 1)))
    return out, roster, sis


def export(*args) -> None:
    proc = run_in_process("export", *args)
    assert proc.returncode == 0, proc.stderr + proc.stdout


def test_canvas_and_moodle_files_import_by_their_importers_rules(batch_out, tmp_path):
    out, roster, sis = batch_out
    received = tmp_path / "class"                       # dee's -main zip came in later
    for i, name in enumerate(["rnn-dee", "rnn-dee-main.zip"]):
        (received / name).parent.mkdir(exist_ok=True)
        (received / name).write_text("x")
        os.utime(received / name, (1_700_000_000 + i * 3600,) * 2)
    export(out, "--roster", roster, "--roster", sis, "--submissions", received, "--per-topic",
           "--title", "RNN homework")
    canvas = canvas_import((out / "canvas.csv").read_text(encoding="utf-8"))
    assert canvas["assignments"][0] == ("RNN homework", None)            # a new assignment
    assert canvas["points"]["RNN homework"] == POSSIBLE
    assert canvas["points"]["RNN homework: bptt"] == 20
    by_id = {s["SIS User ID"]: s for s in canvas["students"]}
    # ann, cy (0: not implemented is a grade) and dee's later submission; bob errored, eve sent nothing
    assert set(by_id) == {"s001", "s003", "s004"}
    assert by_id["s001"]["RNN homework"] == pytest.approx(7.8333) and by_id["s001"]["Student"] == "Lee, Ann"
    assert by_id["s001"]["RNN homework: attention"] == pytest.approx(0.3333)
    assert by_id["s003"]["RNN homework"] == 0
    assert by_id["s004"]["RNN homework"] == 9.0
    assert by_id["s004"]["Section"] == "Lab 0"
    text = (out / "canvas.csv").read_text(encoding="utf-8")
    assert '"Lee, Ann"' in text and "e-" not in text.lower() and "7.8333" in text     # quoted; decimals, no exponent

    moodle = moodle_import((out / "moodle.csv").read_text(encoding="utf-8"),
                           {f"{n}@uni.example" for n in ["ann", "bob", "cy", "dee", "eve"]})
    assert (out / "moodle.csv").read_text().splitlines()[0].startswith("Email address,RNN homework,")
    assert {r["user"]: r["RNN homework"] for r in moodle} == {"ann@uni.example": pytest.approx(7.8333),
                                                             "cy@uni.example": 0, "dee@uni.example": 9.0}

    plain = {r["student_id"]: r for r in csv.DictReader(io.StringIO((out / "plain.csv").read_text(encoding="utf-8")))}
    assert (plain["s002"]["status"], plain["s002"]["earned"]) == ("grader_error", "")     # errored: in, no grade
    assert (plain["s005"]["status"], plain["s005"]["submission"]) == ("missing", "")       # sent nothing: in
    assert plain["s004"]["submission"] == "rnn-dee-main" and set(plain) == {f"s00{i}" for i in range(1, 8)}

    notes = (out / "export-notes.md").read_text(encoding="utf-8")
    for said in ("s005 (Eve)", "s002 (Bob): `bob-main` is grader_error", "`zed`: matches no student",
                 "`rnn-ann-lee`: matches 2 students", "s004: `rnn-dee-main` kept, `rnn-dee` left out",
                 "s001 (Lee, Ann): `rnn-ann` changed .github/workflows/grade.yml"):
        assert said in notes, (said, notes)


def test_the_later_submission_wins_by_gradescope_time_not_by_name(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    class_csv(out, [graded("submission_1", {"bptt": 9.0}), graded("submission_2", {"bptt": 2.0}),
                    graded("submission_3", {"bptt": 4.0})])
    meta = {"submission_1": {":submitters": [{":name": "=HYPERLINK(\"x\")", ":sid": "7", ":email": "a@x.org"}],
                             ":created_at": "2026-03-02T10:00:00-08:00"},
            "submission_2": {":submitters": [{":name": "=HYPERLINK(\"x\")", ":sid": "7", ":email": "a@x.org"}],
                             ":created_at": "2026-03-01T10:00:00-08:00"},
            "submission_3": {":submitters": [{":name": "B", ":sid": "8", ":email": "b@x.org"}],
                             ":created_at": "2026-03-03T10:00:00-08:00"}}
    (tmp_path / "submission_metadata.yml").write_text(yaml.safe_dump(meta))
    export(out, "--roster", tmp_path / "submission_metadata.yml", "--deadline", "2026-03-02T12:00:00-08:00",
           "--moodle-id", "idnumber")
    canvas = canvas_import((out / "canvas.csv").read_text(encoding="utf-8"))
    first = next(s for s in canvas["students"] if s["SIS User ID"] == "7")
    assert first["rnn_prehistory"] == 9.0                        # submission_1, the later one, though named first
    assert first["Student"].startswith("'=")                     # a name the student typed never runs as a formula
    plain = list(csv.DictReader(io.StringIO((out / "plain.csv").read_text(encoding="utf-8"))))
    assert [(r["student_id"], r["submission"], r["late"]) for r in plain] == [("7", "submission_1", "no"),
                                                                           ("8", "submission_3", "yes")]
    assert [r["user"] for r in moodle_import((out / "moodle.csv").read_text(), {"7", "8"})] == ["7", "8"]


def test_a_class_folder_of_gradescope_uploads_is_a_roster(tmp_path):
    def meta(name: str, sid: str) -> str:
        return json.dumps({"created_at": "2026-03-01T10:00:00+00:00",
                           "users": [{"name": name, "email": f"{name}@x", "sid": sid}]})

    for k, (name, sid) in enumerate([("Ann", "1"), ("Bo", "2")]):
        folder = tmp_path / "class" / f"up{k}"
        (folder / "submission").mkdir(parents=True)
        (folder / "submission_metadata.json").write_text(meta(name, sid))
    # A student's upload holding a file of that name claims someone else: never read.
    (tmp_path / "class" / "up2" / "submission").mkdir(parents=True)
    (tmp_path / "class" / "up2" / "submission" / "submission_metadata.json").write_text(meta("Ann", "1"))
    (tmp_path / "class" / "up3").mkdir()
    (tmp_path / "class" / "up3" / "submission_metadata.json").write_text(meta("Ann", "1"))   # no Gradescope layout
    roster = read_roster(tmp_path / "class")
    assert roster.match("up1")[0].student_id == "2"
    assert roster.submitted_at["up0"] == datetime(2026, 3, 1, 10, tzinfo=UTC)
    assert roster.match("up9") == (None, "matches no student of the roster")
    assert roster.match("up2")[0] is None and roster.match("up3")[0] is None


@pytest.mark.parametrize("entry, expected", [("lee-main", "s1"), ("hw1-lee-master", "s1"), ("LEE.zip", "s1"),
                                             ("hw1-leeds", None), ("kim-main", "2 students")])
def test_folder_names_match_without_wrapper_suffixes(tmp_path, entry, expected):
    (tmp_path / "r.csv").write_text("folder,student_id\nlee,s1\nleeds-x,s2\nkim,s3\nkim,s4\n")   # kim: twice
    student, why = read_roster(tmp_path / "r.csv").match(entry)
    assert (student.student_id if student else None) == expected or (student is None and expected in why)


def test_an_existing_canvas_assignment_is_named_by_its_id(batch_out):
    out, roster, _sis = batch_out
    export(out, "--roster", roster, "--canvas-assignment", "4242")
    canvas = canvas_import((out / "canvas.csv").read_text(encoding="utf-8"))
    assert canvas["assignments"] == [("rnn_prehistory", "4242")]


def test_points_are_written_plainly():
    assert [points(x) for x in (7.5, 10.0, 1 / 3, 1e-9, -0.0, 123456.0)] == ["7.5", "10", "0.3333", "0", "0",
                                                                           "123456"]


def test_an_nbgrader_gradebook_exports_its_own_scores(tmp_path, monkeypatch):
    import nbgrader.api
    from nbgrader.api import Gradebook

    # A new gradebook asks the `alembic` script for its schema version; this venv borrows
    # nbgrader's packages without its scripts, and the version is not what is tested.
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", lambda: "4b6a64a2b0a6")
    db = tmp_path / "gradebook.db"
    due = datetime(2026, 3, 1, 12)
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.add_assignment("ps1", duedate=due)
        for nb, cells in (("bptt", {"q1": 4.0, "q2": 6.0}), ("bleu", {"q3": 5.0})):
            gb.add_notebook(nb, "ps1")
            for cell, top in cells.items():
                gb.add_grade_cell(cell, nb, "ps1", max_score=top, cell_type="code")
        gb.add_student("s1", first_name="Ann", last_name="Lee", email="ann@x")
        gb.add_student("s2", first_name="Bo", last_name="Ng", email="bo@x")
        gb.add_student("s3", first_name="Cy", last_name="Wu", email="cy@x")          # never submitted
        gb.add_submission("ps1", "s1", timestamp=datetime(2026, 3, 1, 11))
        gb.add_submission("ps1", "s2", timestamp=datetime(2026, 3, 2, 9))
        for student, given in (("s1", {"q1": 4.0, "q2": 1.5, "q3": 5.0}), ("s2", {"q1": 2.0, "q2": 0.0, "q3": 0.25})):
            for cell, score in given.items():
                nb = "bleu" if cell == "q3" else "bptt"
                gb.find_grade(cell, nb, "ps1", student).manual_score = score
        gb.db.commit()
        expected = {s: gb.find_submission("ps1", s).score for s in ("s1", "s2")}     # nbgrader's own totals
    before = db.read_bytes()
    assert expected == {"s1": 10.5, "s2": 2.25}
    export("--gradebook", db, "--nbgrader-assignment", "ps1", "--out", tmp_path, "--per-topic",
           "--moodle-id", "idnumber", "--deadline", "2026-03-01T12:00:00+00:00")
    moodle = moodle_import((tmp_path / "moodle.csv").read_text(), {"s1", "s2", "s3"})
    assert {r["user"]: r["ps1"] for r in moodle} == expected
    assert {r["user"]: r["ps1: bleu"] for r in moodle} == {"s1": 5.0, "s2": 0.25}
    canvas = canvas_import((tmp_path / "canvas.csv").read_text(encoding="utf-8"))
    assert canvas["points"] == {"ps1": 15.0, "ps1: bleu": 5.0, "ps1: bptt": 10.0}
    assert {s["SIS User ID"]: s["Student"] for s in canvas["students"]} == {"s1": "Lee, Ann", "s2": "Ng, Bo"}
    plain = {r["student_id"]: r for r in csv.DictReader(io.StringIO((tmp_path / "plain.csv").read_text()))}
    assert (plain["s1"]["late"], plain["s2"]["late"], plain["s3"]["status"]) == ("no", "yes", "missing")
    assert "s3 (Wu, Cy)" in (tmp_path / "export-notes.md").read_text()
    assert db.read_bytes() == before, "the export wrote to the gradebook"
    # Without --deadline, the gradebook's due date (nbgrader's total_seconds_late) says who is late.
    export("--gradebook", db, "--nbgrader-assignment", "ps1", "--out", tmp_path / "own")
    plain = {r["student_id"]: r["late"] for r in csv.DictReader(io.StringIO((tmp_path / "own" / "plain.csv").read_text()))}
    assert plain == {"s1": "no", "s2": "yes", "s3": ""}


def test_a_class_folder_export_without_roster_says_which_rosters_it_reads(batch_out):
    out, _roster, _sis = batch_out
    proc = run_in_process("export", out)
    assert proc.returncode == 2 and "give --roster" in proc.stderr


def test_export_after_a_real_batch_of_classroom_clones_and_zips(tmp_path):
    """batch's own class.csv (a clone `hw1-ann`, a "Download ZIP" `hw1-bob-main.zip`, the
    stubs as `hw1-cy`), exported with the GitHub Classroom roster: each score is the one the
    student's score.json says."""
    import shutil

    from helpers import STUBS, make_submission

    root = tmp_path / "class"
    make_submission(root / "hw1-ann")
    make_submission(root / "hw1-bob-main" / "hw1-bob-main", replace={"attention.py": [("np.exp", "np.exp2")]})
    shutil.make_archive(str(root / "hw1-bob-main"), "zip", root / "hw1-bob-main")
    shutil.rmtree(root / "hw1-bob-main")
    shutil.copytree(STUBS, root / "hw1-cy", ignore=shutil.ignore_patterns("tests"))
    proc = run_in_process("batch", root, "--out", tmp_path / "out", "--suite", "public", "--topic", "attention",
                          "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "roster.csv").write_text("identifier,github_username,github_id,name\n"
                                         "s1,ann,1,Ann\ns2,bob,2,Bob\ns3,cy,3,Cy\ns4,dee,4,Dee\n")
    export(tmp_path / "out", "--roster", tmp_path / "roster.csv", "--moodle-id", "idnumber")
    canvas = canvas_import((tmp_path / "out" / "canvas.csv").read_text(encoding="utf-8"))
    earned = {sid: json.loads((tmp_path / "out" / "students" / name / "score.json").read_text())["earned"]
              for sid, name in (("s1", "hw1-ann"), ("s2", "hw1-bob"), ("s3", "hw1-cy"))}   # intake drops -main
    assert {s["SIS User ID"]: s["rnn_prehistory"] for s in canvas["students"]} == pytest.approx(earned)
    moodle = moodle_import((tmp_path / "out" / "moodle.csv").read_text(encoding="utf-8"), {"s1", "s2", "s3", "s4"})
    assert {r["user"]: r["rnn_prehistory"] for r in moodle} == pytest.approx(earned)
    assert earned["s1"] > earned["s2"] and earned["s3"] == 0
    assert "s4 (Dee)" in (tmp_path / "out" / "export-notes.md").read_text()


@pytest.mark.parametrize("title", ["Final Grade", "RNN (Current Score)", "Override Status check", "Homework (2026)"])
def test_a_title_canvas_would_misread_is_refused(batch_out, title):
    """Canvas's importer drops every column whose name contains a computed column's name, and
    reads a name ending in "(digits)" as an existing assignment's id: such a total column
    would be lost, or fill another assignment."""
    out, roster, _sis = batch_out
    proc = run_in_process("export", out, "--roster", roster, "--title", title)
    assert proc.returncode == 2 and "Canvas" in proc.stderr and not (out / "canvas.csv").exists(), proc.stderr


def test_grades_above_moodles_default_limit_are_noted(tmp_path):
    """Moodle refuses, and aborts the whole import for, a grade above gradepointmax (100 unless
    the site allows unlimited grades): this unit's total is more than 100 points."""
    out = tmp_path / "out"
    out.mkdir()
    class_csv(out, [graded("ann", {t: UNIT.rubric.topic(t).points for t in TOPICS}), graded("bob", {"bptt": 3.0})])
    (tmp_path / "r.csv").write_text("folder,student_id,email\nann,s1,ann@x\nbob,s2,bob@x\n")
    export(out, "--roster", tmp_path / "r.csv")
    text = (out / "moodle.csv").read_text(encoding="utf-8")
    with pytest.raises(AssertionError, match="gradevaluetoobig"):
        moodle_import(text, {"ann@x", "bob@x"})
    assert [r["rnn_prehistory"] for r in moodle_import(text, {"ann@x", "bob@x"}, gradepointmax=POSSIBLE)] == [POSSIBLE, 3]
    notes = (out / "export-notes.md").read_text(encoding="utf-8")
    assert f"up to {points(POSSIBLE)} points" in notes and "unlimitedgrades" in notes and "gradepointmax" in notes
    assert f"maximum grade to {points(POSSIBLE)}" in notes


GRADESCOPE_EXPORT = """submission_101:
  :submitters:
  - :name: Ann Lee
    :sid: '1001'
    :email: ann@uni.example
  :created_at: 2026-03-01 10:00:00.123456000 -08:00
  :score: 12.0
submission_102:
  :submitters:
  - :name: Bo Ng
    :sid: '1002'
    :email: bo@uni.example
  - :name: Cy Wu
    :sid: '1003'
    :email: cy@uni.example
  :created_at: 2026-03-01 11:00:00.000000000 -08:00
  :score: 9.0
"""


def test_a_gradescope_export_folder_is_a_roster_and_a_group_submission_grades_each_member(tmp_path):
    """The folder Gradescope's "Export Submissions" zip unpacks to: submission_metadata.yml
    (each submission's `:submitters`, `:name`, `:sid`, `:email`) beside one folder per
    submission. A group submission's grade is each submitter's, as Gradescope gives it."""
    export_root = tmp_path / "assignment_9_export"
    for name in ("submission_101", "submission_102"):
        (export_root / name).mkdir(parents=True)
    (export_root / "submission_metadata.yml").write_text(GRADESCOPE_EXPORT)
    out = tmp_path / "out"
    out.mkdir()
    class_csv(out, [graded("submission_101", {"bptt": 12.0}), graded("submission_102", {"bptt": 9.0})])
    export(out, "--roster", export_root, "--moodle-id", "idnumber")
    canvas = canvas_import((out / "canvas.csv").read_text(encoding="utf-8"))
    assert {s["SIS User ID"]: (s["Student"], s["rnn_prehistory"]) for s in canvas["students"]} == {
        "1001": ("Ann Lee", 12.0), "1002": ("Bo Ng", 9.0), "1003": ("Cy Wu", 9.0)}
    assert {r["user"] for r in moodle_import((out / "moodle.csv").read_text(), {"1001", "1002", "1003"})} == {
        "1001", "1002", "1003"}
    notes = (out / "export-notes.md").read_text(encoding="utf-8")
    assert "`submission_102`: a group submission, graded for 1002 (Bo Ng), 1003 (Cy Wu)" in notes, notes


def test_gradescope_runs_with_the_documented_metadata_and_a_group(tmp_path):
    """Gradescope's autograder metadata as its documentation shows it: `users` with `email`,
    `id` (Gradescope's own user id, not the student's) and `name`, no `sid`; two users for a
    group. The student is known by e-mail, so an SIS roster gives the ids."""
    for folder, users in (("up0", [("Ann", "ann@x", 11)]), ("up1", [("Bo", "bo@x", 12), ("Cy", "cy@x", 13)])):
        (tmp_path / "class" / folder / "submission").mkdir(parents=True)
        (tmp_path / "class" / folder / "submission_metadata.json").write_text(json.dumps({
            "id": 5, "created_at": "2026-03-01T14:22:32.365935-07:00", "submission_method": "upload",
            "users": [{"email": e, "id": i, "name": n} for n, e, i in users]}))
    roster = read_roster(tmp_path / "class")
    assert roster.match("up0")[0].email == "ann@x" and roster.match("up0")[0].student_id == ""
    assert [s.email for s in roster.groups["up1"]] == ["bo@x", "cy@x"]
    out = tmp_path / "out"
    out.mkdir()
    class_csv(out, [graded("up0", {"bptt": 5.0}), graded("up1", {"bptt": 7.0})])
    (tmp_path / "sis.csv").write_text("student_id,email\ns1,ann@x\ns2,bo@x\ns3,cy@x\n")
    export(out, "--roster", tmp_path / "class", "--roster", tmp_path / "sis.csv")
    canvas = canvas_import((out / "canvas.csv").read_text(encoding="utf-8"))
    assert {s["SIS User ID"]: s["rnn_prehistory"] for s in canvas["students"]} == {"s1": 5.0, "s2": 7.0, "s3": 7.0}


def test_a_classroom_identifier_that_is_an_email_is_the_students_email(tmp_path):
    """GitHub Classroom's roster `identifier` is whatever the instructor typed or the LMS gave:
    a student id, or an e-mail address. An e-mail is not put in Canvas's SIS User ID column
    (Canvas would look it up as an SIS id); it identifies the student in Moodle."""
    out = tmp_path / "out"
    out.mkdir()
    class_csv(out, [graded("hw1-ann", {"bptt": 4.0}), graded("hw1-bob", {"bptt": 6.0})])
    (tmp_path / "classroom_roster.csv").write_text("identifier,github_username,github_id,name\n"
                                                   "ann@uni.example,ann,1,Ann\ns2,bob,2,Bob\n")
    export(out, "--roster", tmp_path / "classroom_roster.csv")
    moodle = moodle_import((out / "moodle.csv").read_text(), {"ann@uni.example"})
    assert [(r["user"], r["rnn_prehistory"]) for r in moodle] == [("ann@uni.example", 4.0)]
    canvas = canvas_import((out / "canvas.csv").read_text(encoding="utf-8"))
    assert [s["SIS User ID"] for s in canvas["students"]] == ["s2"]
    notes = (out / "export-notes.md").read_text(encoding="utf-8")
    assert "in canvas.csv (no Canvas ID, SIS User ID or SIS Login ID in the roster)\n\n- ann@uni.example (Ann)" in notes


def test_a_submitter_who_names_no_one_leaves_the_whole_submission_unclaimed(tmp_path):
    meta = {"submission_1": {":submitters": [{":name": "Ann", ":sid": "1"}]},
            "submission_2": {":submitters": [{":name": "Bo", ":sid": "2"}, {":email": ""}]}}
    (tmp_path / "submission_metadata.yml").write_text(yaml.safe_dump(meta))
    roster = read_roster(tmp_path / "submission_metadata.yml")
    assert [s.student_id for s in roster.students] == ["1"]          # Bo is not a student without a submission
    assert roster.match("submission_2") == (None, "matches no student of the roster")
