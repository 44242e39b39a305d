"""Who a submission belongs to: the student behind a class folder's entry, from where the
submission came from. Read by `export` (autograder/commands/export.py).

A roster is one of:
- Gradescope's "Export Submissions" metadata (`submission_metadata.yml` or `.json`, or the
  folder the export unpacks to, which holds it beside one folder per submission):
  `{folder: {":submitters": [{":name", ":email", ":sid"}], ":created_at"}}`, keyed by the
  submission folders of the export;
- a class folder (the ROOT given to `batch`) of Gradescope runs: each entry holds the
  student's upload in `submission/` and, beside it, Gradescope's `submission_metadata.json`
  (`{"users": [{"email", "id", "name"}], "created_at"}`,
  https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/, where `id` is
  Gradescope's own user id, not the student's: the student is known by `sid` where a run
  has one, else by e-mail); a file of that name inside the upload is the student's and is
  never read;
- a GitHub Classroom roster CSV (`identifier,github_username,github_id,name`): a clone is
  `<assignment>-<github_username>`, a "Download ZIP" of it `<...>-main`; the identifier,
  a student id or an e-mail address as the instructor or the LMS gave it, is read as the one
  it looks like;
- an instructor's CSV with a `folder` column (the entry's name in the class folder) and the
  student's ids: `student_id`, `name`, `email`, `sis_user_id`, `sis_login_id`, `canvas_id`,
  `section` (Canvas's own export headers, Student, ID, SIS User ID, SIS Login ID, Section,
  are read as those), any of them optional but one id;
- without a `folder` column, a CSV whose `student_id` or `SIS Login ID` is the entry's name
  (nbgrader's student ids, a class folder of logins).

An entry's name is matched without its archive suffix and without a GitHub branch suffix
(`-main`, `-master`), case-insensitively: exactly, else as the end of a GitHub Classroom
clone's name (`<prefix>-<key>`). A name that matches no student, or more than one, is
listed for the instructor, never guessed. A Gradescope group submission (several
submitters) is each submitter's, as Gradescope grades it.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import yaml

from autograder.intake.files import read_regular
from autograder.intake.submissions import ARCHIVES

BRANCH_SUFFIX = re.compile(r"-(main|master)$", re.IGNORECASE)
METADATA = "submission_metadata.json"        # what Gradescope puts beside an upload
EXPORT_METADATA = "submission_metadata.yml"  # what Gradescope's "Export Submissions" puts beside the submissions
# A roster's column -> the field it fills (lower-cased header; Canvas's headers included).
COLUMNS = {
    "folder": "folder", "submission": "folder",
    "student_id": "student_id", "student id": "student_id", "identifier": "identifier", "id number": "student_id",
    "idnumber": "student_id", "sid": "student_id",
    "name": "name", "student": "name", "full name": "name",
    "email": "email", "email address": "email",
    "sis_user_id": "sis_user_id", "sis user id": "sis_user_id",
    "sis_login_id": "sis_login_id", "sis login id": "sis_login_id", "login": "sis_login_id", "username": "sis_login_id",
    "canvas_id": "canvas_id", "id": "canvas_id",
    "section": "section",
    "github_username": "github_username",
}


class RosterError(ValueError):
    pass


@dataclass
class Student:
    student_id: str = ""        # the id the exports key on (roster's id, Gradescope's sid, nbgrader's student id)
    name: str = ""
    email: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    canvas_id: str = ""
    section: str = ""
    keys: set[str] = field(default_factory=set)        # folder names (normalised) this student's entries go by

    @property
    def key(self) -> str:
        """One stable identity for the class: the first id the roster gives."""
        return self.student_id or self.sis_user_id or self.sis_login_id or self.canvas_id or self.email or self.name


@dataclass
class Roster:
    students: list[Student]
    submitted_at: dict[str, datetime] = field(default_factory=dict)     # entry name -> when it was submitted
    exact: dict[str, Student] = field(default_factory=dict)            # entry name -> student (metadata-keyed)
    groups: dict[str, list[Student]] = field(default_factory=dict)     # entry name -> its submitters (several)

    def match(self, entry: str) -> tuple[Student | None, str]:
        """(student, "") for the entry's student, or (None, why) when none or several match."""
        if entry in self.exact:
            return self.exact[entry], ""
        if entry in self.groups:
            return None, f"a group submission of {len(self.groups[entry])} students"
        name = normalise(entry)
        exact = _unique([s for s in self.students if name in s.keys])
        if len(exact) == 1:
            return exact[0], ""
        if len(exact) > 1:
            return None, f"matches {len(exact)} students of the roster ({', '.join(s.key for s in exact[:4])})"
        ends = _unique([s for s in self.students if any(name.endswith("-" + k) for k in s.keys)])
        if len(ends) == 1:
            return ends[0], ""
        if len(ends) > 1:
            return None, f"matches {len(ends)} students of the roster ({', '.join(s.key for s in ends[:4])})"
        return None, "matches no student of the roster"


def _unique(students: list[Student]) -> list[Student]:
    seen: dict[int, Student] = {}
    for s in students:
        seen.setdefault(id(s), s)
    return list(seen.values())


def normalise(entry: str) -> str:
    """An entry's name as rosters spell it: no archive suffix, no GitHub branch suffix, lower case."""
    name = entry.strip()
    for suffix in ARCHIVES:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return BRANCH_SUFFIX.sub("", name).lower()


def _time(value) -> datetime | None:
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value).strip())
    except ValueError:
        return None


def _submitter(user: dict) -> Student:
    get = {str(k).lstrip(":"): v for k, v in (user if isinstance(user, dict) else {}).items()}
    return Student(student_id=str(get.get("sid") or ""), name=str(get.get("name") or ""),
                   email=str(get.get("email") or ""))


def _add_submission(roster: Roster, by_key: dict[str, Student], entry: str, users: list, created_at) -> None:
    """One Gradescope submission: its submitters (one, or a group) and its time."""
    found = [_submitter(u) for u in users] if isinstance(users, list) else []
    if not found or not all(s.key for s in found):
        return              # no submitter, or one without a name, e-mail or sid: listed as unmatched, never guessed
    submitters = [by_key.setdefault(s.key, s) for s in found]
    if len(submitters) == 1:
        roster.exact[entry] = submitters[0]
    else:
        roster.groups[entry] = submitters
    if (when := _time(created_at)) is not None:
        roster.submitted_at[entry] = when


def _from_gradescope_export(data: dict, source: Path) -> Roster:
    roster = Roster([])
    by_key: dict[str, Student] = {}
    for folder, meta in data.items():
        meta = {str(k).lstrip(":"): v for k, v in (meta or {}).items()} if isinstance(meta, dict) else {}
        _add_submission(roster, by_key, str(folder), meta.get("submitters") or [], meta.get("created_at"))
    roster.students = list(by_key.values())
    if not roster.exact and not roster.groups:
        raise RosterError(f"{source} names no submission and its submitters: is it Gradescope's submission metadata?")
    return roster


def _from_class_folder(root: Path) -> Roster:
    """Each entry's own submission_metadata.json (Gradescope's, of one upload)."""
    roster = Roster([])
    by_key: dict[str, Student] = {}
    for entry in sorted(root.iterdir()):
        # Gradescope's layout: the metadata beside `submission/`, the student's upload. A file
        # of that name anywhere else (inside the upload) is the student's, and never read: it
        # would let one student claim another's identity.
        if entry.is_symlink() or not entry.is_dir() or not (entry / "submission").is_dir():
            continue
        data = read_regular(entry / METADATA)
        try:
            meta = json.loads(data) if data is not None else {}
        except ValueError:
            continue
        if isinstance(meta, dict):
            _add_submission(roster, by_key, entry.name, meta.get("users") or [], meta.get("created_at"))
    roster.students = list(by_key.values())
    if not roster.exact and not roster.groups:
        raise RosterError(f"no entry of {root} holds a {METADATA} naming its users (Gradescope's submission metadata), "
                          f"and {root} holds no {EXPORT_METADATA} (Gradescope's Export Submissions)")
    return roster


def _from_csv(path: Path) -> Roster:
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise RosterError(f"cannot read the roster {path}: {exc}") from None
    if not rows:
        raise RosterError(f"the roster {path} is empty")
    fields = [COLUMNS.get(h.strip().lower(), "") for h in rows[0]]
    if not {"folder", "student_id", "identifier", "github_username", "sis_login_id", "sis_user_id", "canvas_id"} & set(fields):
        raise RosterError(f"the roster {path} has none of the columns folder, student_id, identifier, "
                          f"github_username, SIS Login ID, SIS User ID, ID: its header is {rows[0]}")
    students = []
    for row in rows[1:]:
        values: dict[str, str] = {}
        for name, cell in zip(fields, row):
            if name and cell.strip() and name not in values:
                values[name] = cell.strip()
        if not values or values.get("name", "").strip().lower() == "points possible":
            continue            # a blank line, or the points row of a Canvas gradebook export
        if identifier := values.pop("identifier", ""):
            # GitHub Classroom's identifier is what the instructor or the LMS gave: an id, or
            # an e-mail address (never an SIS id to hand Canvas).
            values.setdefault("email" if "@" in identifier else "student_id", identifier)
        s = Student()
        for k, v in values.items():
            if k not in ("folder", "github_username"):
                setattr(s, k, v)
        # What the entry may be called: the folder the roster gives, else the GitHub username,
        # else the student's login or id (a class folder of logins or nbgrader student ids).
        for key in ("folder", "github_username"):
            if values.get(key):
                s.keys.add(normalise(values[key]))
        if not s.keys:
            s.keys |= {normalise(v) for v in (s.sis_login_id, s.student_id) if v}
        if s.keys and s.key:
            students.append(s)
    return Roster(students)


def read_roster(path: Path) -> Roster:
    """The roster at `path`: a class folder, Gradescope's metadata (.yml, .yaml, .json) or a CSV."""
    path = Path(path)
    if path.is_dir() and (path / EXPORT_METADATA).is_file():
        path = path / EXPORT_METADATA           # the folder Gradescope's Export Submissions unpacks to
    if path.is_dir():
        return _from_class_folder(path)
    if path.suffix.lower() in (".yml", ".yaml", ".json"):
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise RosterError(f"cannot read the roster {path}: {exc}") from None
        if not isinstance(data, dict):
            raise RosterError(f"{path} is not Gradescope's submission metadata (a mapping of submission folders)")
        return _from_gradescope_export(data, path)
    return _from_csv(path)


IDS = ("student_id", "email", "sis_user_id", "sis_login_id", "canvas_id")


def merged(rosters: list[Roster]) -> Roster:
    """Several rosters as one (e.g. Gradescope's metadata and the instructor's SIS ids): the
    same student in two of them (an equal student id, e-mail or login) is one student with
    the fields of both."""
    out = Roster([])
    index: dict[tuple[str, str], Student] = {}
    same: dict[int, Student] = {}
    for r in rosters:
        for s in r.students:
            known = next((index[(k, getattr(s, k))] for k in IDS if getattr(s, k) and (k, getattr(s, k)) in index), None)
            if known is None:
                out.students.append(s)
                known = s
            else:
                for k in ("name", "section", *IDS):
                    if not getattr(known, k):
                        setattr(known, k, getattr(s, k))
                known.keys |= s.keys
            same[id(s)] = known
            for k in IDS:
                if getattr(known, k):
                    index.setdefault((k, getattr(known, k)), known)
        out.submitted_at.update(r.submitted_at)
        out.exact.update({entry: same[id(s)] for entry, s in r.exact.items()})
        out.groups.update({entry: [same[id(s)] for s in group] for entry, group in r.groups.items()})
    return out
