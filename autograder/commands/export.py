"""`python -m autograder export DIR --roster FILE`: a class's grades for the LMS.

From a `batch` or `merge` output folder (its class.csv) or from an nbgrader gradebook
(`--gradebook gradebook.db --nbgrader-assignment NAME`, read through nbgrader's own
Gradebook API), writes into `--out` (default DIR):
- canvas.csv: Canvas's gradebook import file (autograder/reports/lms.py says how it is laid out);
- moodle.csv: Moodle's CSV grade import file, identified by e-mail, ID number or username;
- plain.csv: student id, name, submission, total, per topic, status, late flag (--deadline);
- export-notes.md: who is not in those files and why (no submission, not graded, a
  submission no roster entry claims, two submissions of one student: the later one kept).

The student behind each submission comes from the rosters (autograder/intake/roster.py);
nbgrader's gradebook is a roster of its own (its student ids, names and e-mails).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from autograder.errors import GraderError
from autograder.intake.roster import Roster, RosterError, Student, merged, normalise, read_roster
from autograder.reports import lms
from autograder.reports.class_csv import read_class_csv
from autograder.reports.submission_status import SubmissionStatus
from autograder.unit.load import load_unit


def _aware(when: datetime | None) -> datetime | None:
    """A time with its zone: a naive one is UTC (nbgrader's timestamps are; a --deadline
    without a zone is read as the machine's local time before this)."""
    if when is None:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _deadline(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise GraderError(f"--deadline {text!r} is not a date and time such as 2026-03-01T23:59+08:00") from None
    return when if when.tzinfo is not None else when.astimezone()


def _number(cell: str) -> float | None:
    try:
        return float(cell)
    except (TypeError, ValueError):
        return None


def from_class_csv(folder: Path, unit, submissions: Path | None) -> tuple[list[lms.Grade], list[tuple[str, float]]]:
    path = Path(folder) / "class.csv"
    if not path.is_file():
        raise GraderError(f"{folder} holds no class.csv: give the --out folder of `batch` or `merge`")
    topics = [(t.id, unit.rubric.topic(t.id).points) for t in unit.topics]
    grades = []
    received = {e.name: e for e in submissions.iterdir()} if submissions is not None else {}
    for row in read_class_csv(path):
        name = row["submission"]
        g = lms.Grade(name, row.get("status", ""), _number(row.get("earned", "")), _number(row.get("possible", "")),
                      {t: v for t, _p in topics if (v := _number(row.get(t, ""))) is not None},
                      tampered=row.get("tampered", ""))
        # The entry's time in the class folder (the folder, or its archive): when it was received.
        entry = received.get(name) or next((p for n, p in received.items() if n.startswith(name + ".")), None)
        if entry is not None and not entry.is_symlink():
            g.submitted_at = datetime.fromtimestamp(entry.stat().st_mtime, UTC)
        grades.append(g)
    return grades, topics


def from_gradebook(db: Path, assignment: str) -> tuple[list[lms.Grade], list[tuple[str, float]], Roster, float]:
    """(grades, topics, the gradebook's students as a roster, points possible)."""
    try:
        from nbgrader.api import Gradebook, MissingEntry
    except ImportError:
        raise GraderError("reading an nbgrader gradebook needs nbgrader (pip install nbgrader)") from None
    if not Path(db).is_file():
        raise GraderError(f"no gradebook at {db}")
    # Read-only: an export never writes to the instructor's gradebook.
    with Gradebook(f"sqlite:///file:{Path(db).resolve()}?mode=ro&uri=true") as gb:
        try:
            a = gb.find_assignment(assignment)
        except MissingEntry:
            names = ", ".join(x.name for x in gb.assignments) or "none"
            raise GraderError(f"the gradebook has no assignment {assignment!r} (it has: {names})") from None
        topics = [(nb.name, float(nb.max_score)) for nb in a.notebooks]
        students, grades = [], []
        for s in gb.students:
            name = ", ".join(x for x in (s.last_name, s.first_name) if x)
            students.append(Student(student_id=s.id, name=name, email=s.email or "", keys={normalise(s.id)}))
            try:
                sub = gb.find_submission(assignment, s.id)
            except MissingEntry:
                grades.append(lms.Grade(s.id, SubmissionStatus.MISSING))
                continue
            g = lms.Grade(s.id, SubmissionStatus.GRADED, float(sub.score), float(sub.max_score),
                          {nb.name: float(nb.score) for nb in sub.notebooks}, _aware(sub.timestamp))
            if a.duedate is not None and sub.timestamp is not None:
                g.late = sub.total_seconds_late > 0        # nbgrader's own rule (its extensions included)
            grades.append(g)
        possible = float(a.max_score)
    return grades, topics, Roster(students), possible


def assemble(grades: list[lms.Grade], roster: Roster, deadline: datetime | None) -> lms.Export:
    """One grade per roster student: the student's later submission, or "missing"."""
    ex = lms.Export("", [], 0.0, [])
    by_student: dict[int, list[lms.Grade]] = {}
    for g in grades:
        if g.status == SubmissionStatus.MISSING:           # nbgrader's student without a submission: the roster's loop says so
            continue
        g.submitted_at = roster.submitted_at.get(g.submission, g.submitted_at)
        if g.submission in roster.groups:      # Gradescope's group submission: each submitter's grade
            group = roster.groups[g.submission]
            ex.groups.append((g.submission, [s.key + (f" ({s.name})" if s.name else "") for s in group]))
            for s in group:
                by_student.setdefault(id(s), []).append(replace(g, student=s))
            continue
        student, why = roster.match(g.submission)
        if student is None:
            ex.unmatched.append((g.submission, why))
            continue
        g.student = student
        by_student.setdefault(id(student), []).append(g)
    untimed = False
    for s in roster.students:
        mine = by_student.get(id(s), [])
        if not mine:
            ex.grades.append(lms.Grade("", SubmissionStatus.MISSING, student=s))
            continue
        # The later submission wins: by its time where every one has one, else the last in class order.
        if all(g.submitted_at for g in mine):
            mine = sorted(mine, key=lambda g: _aware(g.submitted_at))     # type: ignore[arg-type, return-value]
        elif len(mine) > 1:
            untimed = True
        kept = mine[-1]
        ex.superseded += [(s.key, kept.submission, g.submission) for g in mine[:-1]]
        if deadline is not None and kept.submitted_at is not None:
            kept.late = _aware(kept.submitted_at) > deadline      # type: ignore[operator]
        ex.grades.append(kept)
    if untimed:
        ex.notes.append("Some students have several submissions and no submission time is known for each (give "
                        "--submissions ROOT or Gradescope's metadata): the last in name order was kept.")
    return ex


def run(args) -> int:
    out = Path(args.out or args.folder or ".")
    rosters: list[Roster] = []
    try:
        rosters += [read_roster(p) for p in args.roster or []]
    except RosterError as exc:
        raise GraderError(str(exc)) from None
    deadline = _deadline(args.deadline)
    if args.gradebook:
        if not args.nbgrader_assignment:
            raise GraderError("--gradebook needs --nbgrader-assignment NAME (the nbgrader assignment to export)")
        grades, topics, students, possible = from_gradebook(args.gradebook, args.nbgrader_assignment)
        roster = merged([students] + rosters)
        title = args.title or args.nbgrader_assignment
        if deadline is not None:
            for g in grades:
                g.late = None if g.submitted_at is None else _aware(g.submitted_at) > deadline   # type: ignore[operator]
    else:
        if args.folder is None:
            raise GraderError("give the batch/merge output folder, or --gradebook gradebook.db")
        if not rosters:
            raise GraderError("give --roster: Gradescope's submission metadata, a class folder of Gradescope "
                              "runs, a GitHub Classroom roster CSV, or a CSV mapping folder names to student ids")
        unit = load_unit(args.unit)
        grades, topics = from_class_csv(args.folder, unit, Path(args.submissions) if args.submissions else None)
        roster = merged(rosters)
        possible = max((g.possible for g in grades if g.possible), default=sum(p for _t, p in topics))
        title = args.title or unit.name
    ex = assemble(grades, roster, deadline)
    ex.title, ex.topics, ex.possible = title, topics, possible
    ex.canvas_assignment, ex.per_topic = args.canvas_assignment or "", args.per_topic
    if why := lms.canvas_misread(ex):
        raise GraderError(why)
    late_known = any(g.late is not None for g in ex.grades)
    if deadline is not None:
        ex.notes.append(f"Late: submitted after {deadline.isoformat()}.")
    elif late_known:
        ex.notes.append("Late: submitted after the gradebook's due date (nbgrader's rule, extensions counted).")
    files = lms.write(out, ex, args.moodle_id, deadline is not None or late_known)
    graded = sum(g.graded for g in ex.grades)
    print(f"{graded} of {len(ex.grades)} student(s) graded, {len(ex.unmatched)} submission(s) unclaimed -> "
          + ", ".join(str(f) for f in files))
    return 0
