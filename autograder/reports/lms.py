"""Grades for a learning-management system: the files `export` writes (Canvas, Moodle, plain)
and the notes that say who is not in them and why.

Canvas: the gradebook import CSV, laid out as Canvas's own gradebook export is (its
Instructor Guide, "How do I import grades in the Gradebook?",
https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807,
and its importer, canvas-lms app/models/gradebook_importer.rb): the header starts
`Student,ID,SIS User ID,SIS Login ID,Section` (the importer requires `Student` and `ID` first
and `Section` as the last student column), then one column per assignment, named
`<title> (<Canvas assignment id>)` to fill an existing assignment or by a new title to
create one; a second row whose first cell holds "Points Possible" gives each column's
points. The importer drops every column whose name contains a computed column's name
(Current/Final Score, Points, Grade; Override Score, Grade, Status: NON_ASSIGNMENT_COLUMN_HEADERS)
and reads a name ending in "(digits)" as an assignment id: `export` refuses such a title.

Moodle: the CSV grade import (MoodleDocs "Grade import",
https://docs.moodle.org/en/Grade_import, and grade/import/csv/classes/load_data.php): a
header, one identifier column the instructor maps to the user field ("Email address" to
useremail, or "ID number" to useridnumber), one column per grade item. Every row must name a
user of the course (one that does not aborts the whole import), and an empty cell or "-"
clears the grade: so a student without a grade gets no row, and is in the notes. Every row
has the header's number of fields (else nothing is imported: csvweirdcolumns), and a grade
above the site's gradepointmax (100 unless unlimitedgrades is on) aborts the import: the
notes say so when the assignment is worth more than 100 points. The file has no points
row: the grade item's maximum grade is set in Moodle.

Numbers are written with a decimal point and no exponent or thousands separator (both
importers read that whatever their locale). Names come from rosters (a Gradescope name is
typed by the student): they go through csv_cell, ids as they are.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from autograder.reports.files import atomic_write
from autograder.reports.submission_status import GRADED, SubmissionStatus
from autograder.reports.text import csv_cell, one_line

# Canvas's importer pops trailing columns matching this (gradebook_importer.rb, strip_non_assignment_columns).
CANVAS_COMPUTED = ("Current Score", "Current Points", "Current Grade", "Final Score", "Final Points", "Final Grade",
                   "Override Score", "Override Grade", "Override Status")
CANVAS_ASSIGNMENT_ID = re.compile(r".*\s\(\d+\)", re.S)      # Assignment.title_and_id
MOODLE_GRADEPOINTMAX = 100      # Moodle's default largest importable grade (insert_grade_record)
CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "Points Possible"
MOODLE_IDS = {"email": ("Email address", "email"), "idnumber": ("ID number", "student_id"),
              "username": ("Username", "sis_login_id")}


def points(value: float) -> str:
    """7.5 -> "7.5", 10.0 -> "10", 1/3 -> "0.3333": a decimal point, at most four places, no exponent."""
    text = f"{round(float(value), 4):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@dataclass
class Grade:
    """One student's line of the export (or one submission no roster entry claims)."""
    submission: str                         # the class folder's entry ("" for a student who sent nothing)
    status: str                             # class.csv's status (SubmissionStatus), or MISSING
    earned: float | None = None
    possible: float | None = None
    topics: dict[str, float] = field(default_factory=dict)         # topic id -> earned
    submitted_at: datetime | None = None
    late: bool | None = None                # None: no deadline given, or no submission time known
    student: object | None = None           # the roster's Student (None: no roster entry matched)
    tampered: str = ""                      # the protected files a clone changed (batch --manifest)

    @property
    def graded(self) -> bool:
        return self.status in GRADED and self.earned is not None


@dataclass
class Export:
    title: str                              # the assignment's title in the LMS
    topics: list[tuple[str, float]]         # (topic id, points): a column each when per_topic
    possible: float
    grades: list[Grade]                     # one per student of the class, in roster order
    unmatched: list[tuple[str, str]] = field(default_factory=list)     # (entry, why no student)
    superseded: list[tuple[str, str, str]] = field(default_factory=list)   # (student, kept, dropped)
    groups: list[tuple[str, list[str]]] = field(default_factory=list)      # (entry, its submitters): graded for each
    notes: list[str] = field(default_factory=list)
    canvas_assignment: str = ""             # an existing Canvas assignment's id: its column fills it
    per_topic: bool = False


def _columns(ex: Export) -> list[tuple[str, float]]:
    total = f"{ex.title} ({ex.canvas_assignment})" if ex.canvas_assignment else ex.title
    cols = [(total, ex.possible)]
    if ex.per_topic:
        cols += [(f"{ex.title}: {t}", p) for t, p in ex.topics]
    return cols


def canvas_misread(ex: Export) -> str:
    """Why Canvas's importer would not read the columns as written ("" when it would)."""
    for name, _p in _columns(ex):
        if hit := next((c for c in CANVAS_COMPUTED if c in name), None):
            return f"Canvas's importer drops a column whose name contains {hit!r} ({name!r}): give another --title"
    if not ex.canvas_assignment and CANVAS_ASSIGNMENT_ID.fullmatch(ex.title):
        return (f"Canvas's importer reads a title ending in \"(digits)\" as an assignment's id ({ex.title!r}): "
                "give another --title, or --canvas-assignment ID for an existing assignment")
    return ""


def _values(ex: Export, g: Grade) -> list[str]:
    assert g.earned is not None
    return [points(g.earned)] + ([points(g.topics.get(t, 0.0)) for t, _p in ex.topics] if ex.per_topic else [])


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    return buf.getvalue()


def _cell(s, name: str) -> str:
    return str(getattr(s, name, "") or "") if s is not None else ""


def canvas_csv(ex: Export) -> str:
    cols = _columns(ex)
    rows = [CANVAS_STUDENT_COLUMNS + [c for c, _p in cols],
            [POINTS_POSSIBLE, "", "", "", ""] + [points(p) for _c, p in cols]]
    for g in canvas_ready(ex):
        s = g.student
        # Canvas finds the student by ID, then SIS User ID, then SIS Login ID, the name last
        # (gradebook_importer.rb, process_student): the name is written as the roster has it.
        rows.append([csv_cell(_cell(s, "name")), _cell(s, "canvas_id"), _cell(s, "sis_user_id") or _cell(s, "student_id"),
                     _cell(s, "sis_login_id"), _cell(s, "section")] + _values(ex, g))
    return _csv(rows)


def canvas_ready(ex: Export) -> list[Grade]:
    """The graded students Canvas can find: by an id, never by a name alone (two students may share one).
    The roster's student id goes in SIS User ID when it gives no SIS User ID of its own."""
    return [g for g in ex.grades if g.graded and any(_cell(g.student, k) for k in ("canvas_id", "sis_user_id",
                                                                                     "student_id", "sis_login_id"))]


def moodle_csv(ex: Export, identify_by: str = "email") -> str:
    header, attr = MOODLE_IDS[identify_by]
    rows = [[header] + [c for c, _p in _columns(ex)]]
    rows += [[_cell(g.student, attr)] + _values(ex, g) for g in ex.grades if g.graded and _cell(g.student, attr)]
    return _csv(rows)


def plain_csv(ex: Export, deadline: bool) -> str:
    head = ["student_id", "name", "submission", "earned", "possible"] + [t for t, _p in ex.topics] + ["status"]
    rows = [head + (["late"] if deadline else [])]
    for g in ex.grades:
        scores = [points(g.earned) if g.earned is not None else "", points(g.possible) if g.possible else ""]
        scores += [points(g.topics[t]) if t in g.topics else "" for t, _p in ex.topics]
        late = [] if not deadline else ["" if g.late is None else ("yes" if g.late else "no")]
        rows.append([_cell(g.student, "key") if g.student is not None else "", csv_cell(_cell(g.student, "name")),
                     csv_cell(g.submission), *scores, g.status, *late])
    return _csv(rows)


def notes_md(ex: Export, moodle_by: str) -> str:
    """What the instructor must know before importing: who is not in the files and why."""
    lines = [f"# Export of {one_line(ex.title)}", ""] + [f"- {n}" for n in ex.notes]
    lines.append(f"- moodle.csv: set the grade item's maximum grade to {points(ex.possible)} in Moodle (its import "
                 "file has no points row).")
    if ex.possible > MOODLE_GRADEPOINTMAX:
        lines.append(f"- moodle.csv's total goes up to {points(ex.possible)} points: Moodle refuses a grade above "
                     f"{MOODLE_GRADEPOINTMAX}, and imports nothing of the file, unless its grade settings allow it "
                     "(Site administration > Grades > General settings: unlimitedgrades on, gradepointmax at least "
                     f"{points(ex.possible)}).")
    lines.append("")

    def section(title: str, items: list[str], empty: str) -> None:
        lines.extend([f"## {title}", ""] + ([f"- {i}" for i in items] if items else [empty]) + [""])

    def who(g: Grade) -> str:
        return one_line(f"{_cell(g.student, 'key')} ({_cell(g.student, 'name')})" if _cell(g.student, "name")
                        else _cell(g.student, "key"), 200)

    section("Students without a submission", [who(g) for g in ex.grades if g.status == SubmissionStatus.MISSING],
            "None: every student of the roster has a submission.")
    section("Submissions that were not graded (no grade exported)",
            [f"{who(g)}: `{csv_cell(g.submission)}` is {g.status}" for g in ex.grades
             if g.status not in GRADED and g.status != SubmissionStatus.MISSING], "None.")
    section("Submissions no roster entry claims (not exported)",
            [f"`{csv_cell(e)}`: {why}" for e, why in ex.unmatched], "None: every submission has its student.")
    section("Group submissions (graded for each submitter)",
            [f"`{csv_cell(e)}`: a group submission, graded for {one_line(', '.join(who), 400)}" for e, who in ex.groups],
            "None.")
    section("Students with more than one submission (the later one is exported)",
            [f"{one_line(s, 200)}: `{csv_cell(kept)}` kept, `{csv_cell(dropped)}` left out" for s, kept, dropped
             in ex.superseded], "None.")
    section("Tampered submissions (exported as graded: look before importing)",
            [f"{who(g)}: `{csv_cell(g.submission)}` changed {one_line(g.tampered, 300)}" for g in ex.grades
             if g.tampered], "None.")
    no_canvas = [who(g) for g in ex.grades if g.graded and g not in canvas_ready(ex)]
    section("Graded but not in canvas.csv (no Canvas ID, SIS User ID or SIS Login ID in the roster)", no_canvas, "None.")
    attr = MOODLE_IDS[moodle_by][1]
    section(f"Graded but not in moodle.csv (no {MOODLE_IDS[moodle_by][0].lower()} in the roster)",
            [who(g) for g in ex.grades if g.graded and not _cell(g.student, attr)], "None.")
    return "\n".join(lines)


def write(out: Path, ex: Export, moodle_by: str, deadline: bool) -> list[Path]:
    files = {"canvas.csv": canvas_csv(ex), "moodle.csv": moodle_csv(ex, moodle_by), "plain.csv": plain_csv(ex, deadline),
             "export-notes.md": notes_md(ex, moodle_by)}
    for name, text in files.items():
        atomic_write(Path(out) / name, text)
    return [Path(out) / name for name in files]
