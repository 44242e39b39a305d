"""The course's changes to nbgrader's exchange: what it reads of a student's submission,
never through a link, and the release of feedback (the course's nbgrader_config.py adds
these; only the instructor's installation imports this module).

The exchange's inbound folder is written by students. nbgrader's own `collect` copies it
with `shutil.copytree`, which follows links: a submitted notebook that is a link to the
instructor's source notebook, or to a classmate's submission, was collected as that file
and graded as the student's own. Here:

- `NoLinksCollect` (`c.ExchangeFactory.collect`) copies only regular files and real
  folders, each opened without following a link (a FIFO, a device or a file swapped for a
  link while it is copied is not read either). A
  notebook that was such a file is replaced by the released notebook with a note saying
  why, so the student is graded on what they wrote (nothing) and their feedback says what
  to hand in; the log names the student and the file.
- `no_links_in_submission` (`c.Autograde.pre_convert_hook`) does the same in `submitted/`
  before `autograde` reads it, for submissions that reached it another way (copied by hand
  or from an LMS with their links).
- `ReleaseFeedbackWithSecrets` (`c.ExchangeFactory.release_feedback`) releases the feedback
  of every submission that has its secret, instead of stopping at the first that has none.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import shutil
import stat
from fnmatch import fnmatch
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from traitlets.config import Application

from autograder import i18n
from autograder.i18n import _
from autograder.intake.files import read_regular

MAX_NOTEBOOK_BYTES = 20 << 20       # what grade_cell reads of a notebook (autograder/notebook.py)
NO_FOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK


def _in(language: str, text):
    """`text()` with `language` active (the course's notebooks are written in both)."""
    previous = i18n.current_language()
    try:
        i18n.activate(language)
        return text()
    finally:
        i18n.activate(previous)


def link_note(name: str) -> str:
    """The note a notebook handed in as a link gets, above the released cells."""
    def note():
        return _("{name} was handed in as a link to another file (or as something that is not a plain file), not as "
                 "your notebook itself, so nothing of it was read: it is graded as the notebook you were given. "
                 "Hand in the notebook file you wrote.").format(name=name)
    return f"{_in('en', note)}\n\n{_in('zh', note)}"


def released_in_place_of_link(release: Path, name: str) -> bytes:
    """The released notebook `name` with the link note as its first cell (a notebook with
    the note alone when the release has no such notebook)."""
    try:
        nb = json.loads((release / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        nb = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": link_note(name),
                           "id": "handed-in-as-a-link"})
    return json.dumps(nb, indent=1, ensure_ascii=False).encode("utf-8")


def _kept(name: str, is_dir: bool, coursedir: CourseDirectory) -> bool:
    """nbgrader's own choice of what to copy (CourseDirectory.ignore, .include)."""
    if any(fnmatch(name, glob) for glob in coursedir.ignore):
        return False
    return is_dir or any(fnmatch(name, glob) for glob in coursedir.include)


def _read_regular_at(dir_fd: int, name: str, limit: int) -> bytes | None:
    """A regular file of `dir_fd` (intake's no-follow read). A hard link is a regular file: the
    kernel lets a student make one only to a file they own or may write
    (fs.protected_hardlinks), so it reads nothing of another's."""
    return read_regular(name, limit, dir_fd=dir_fd)


def copy_without_links(dir_fd: int, dest: Path, coursedir: CourseDirectory, limit: int, rel: str = "") -> list[str]:
    """Copy the folder open as `dir_fd` into `dest`: plain files and real folders only.
    Returns the relative names of what was kept out for not being one."""
    dest.mkdir(parents=True, exist_ok=True)
    refused = []
    for entry in sorted(os.listdir(dir_fd)):
        try:
            info = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue                # gone since the listing
        is_dir = stat.S_ISDIR(info.st_mode)
        if not _kept(entry, is_dir, coursedir):
            continue
        if is_dir:
            try:
                sub = os.open(entry, NO_FOLLOW | os.O_DIRECTORY, dir_fd=dir_fd)
            except OSError:
                refused.append(rel + entry)
                continue
            try:
                refused += copy_without_links(sub, dest / entry, coursedir, limit, f"{rel}{entry}/")
            finally:
                os.close(sub)
            continue
        data = _read_regular_at(dir_fd, entry, limit)
        if data is None:
            refused.append(rel + entry)
        else:
            (dest / entry).write_bytes(data)
    return refused


def _open_real_folder(path: Path) -> int | None:
    try:
        return os.open(path, NO_FOLLOW | os.O_DIRECTORY)
    except OSError:
        return None


def take_without_links(src: Path | None, dest: Path, release: Path, coursedir: CourseDirectory, log) -> None:
    """A submission folder `src` into `dest`, never through a link; a notebook that was a
    link becomes the released one with a note. `src` a link (or None, a folder on the way
    to it is one): every released notebook does."""
    limit = min(int(1000 * coursedir.max_file_size), MAX_NOTEBOOK_BYTES)
    fd = None if src is None else _open_real_folder(src)
    if fd is None:
        dest.mkdir(parents=True, exist_ok=True)
        refused = sorted(p.name for p in release.glob("*.ipynb"))
        log.warning("%s is a link or not a folder: nothing of it is read, each notebook is graded as released "
                    "with a note", src or dest)
    else:
        try:
            refused = copy_without_links(fd, dest, coursedir, limit)
        finally:
            os.close(fd)
    for name in refused:
        notebook = name.endswith(".ipynb") and "/" not in name
        log.warning("%s: %s is a link or not a plain file%s: not read%s", src, name, _target(src, name),
                    ", graded as released with a note" if notebook else "")
        if notebook:
            (dest / name).write_bytes(released_in_place_of_link(release, name))


def _target(src: Path | None, name: str) -> str:
    """Where a refused link points, for the instructor's log."""
    try:
        return f" (a link to {os.readlink(src / name)})" if src is not None else ""
    except (OSError, ValueError):
        return ""


class NoLinksCollect(ExchangeCollect):
    """nbgrader's collect, copying a submission without following any link in it."""

    def do_copy(self, src, dest, log=None):
        release = Path(self.coursedir.format_path(self.coursedir.release_directory, ".", self.coursedir.assignment_id))
        take_without_links(Path(src), Path(dest), release, self.coursedir, self.log)


def _is_plain(path: Path, folder: bool) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) if folder else stat.S_ISREG(info.st_mode)


def _holds_only_plain(folder: Path) -> bool:
    for root, folders, files in os.walk(folder):        # os.walk enters no linked folder
        for name in folders:
            if not _is_plain(Path(root) / name, True):
                return False
        if not all(_is_plain(Path(root) / name, False) for name in files):
            return False
    return True


def no_links_in_submission(assignment, student, notebooks, **_kwargs) -> None:
    """Autograde's pre-convert hook, before autograde reads a submission of `submitted/`
    (`submitted/<student>/<assignment>/<notebook>.ipynb`): when its student folder, its
    assignment folder or a notebook is a link or not a plain file, the submission is taken
    again without links (as `NoLinksCollect` takes it from the exchange) and put in its place.
    Only a link itself is removed, never what it points to."""
    log = Application.instance().log if Application.initialized() else logging.getLogger(__name__)
    for folder in sorted({Path(nb).parent for nb in notebooks}):
        student_folder = folder.parent
        if _is_plain(student_folder, True) and _is_plain(folder, True) and _holds_only_plain(folder):
            continue
        release = student_folder.parent.parent / "release" / folder.name
        taken = student_folder.parent / f".{student_folder.name}+{folder.name}+without-links"
        if taken.exists():
            shutil.rmtree(taken)
        take_without_links(folder if _is_plain(student_folder, True) else None, taken, release, CourseDirectory(), log)
        if not _is_plain(student_folder, True):
            student_folder.unlink()
            student_folder.mkdir()
        elif not _is_plain(folder, True):
            folder.unlink()
        else:
            shutil.rmtree(folder)
        taken.rename(folder)


class ReleaseFeedbackWithSecrets(ExchangeReleaseFeedback):
    """nbgrader's release_feedback, skipping (with a warning) a submission whose feedback
    folder has no `submission_secret.txt`: one that did not come through the exchange (copied
    into submitted/ by hand) or held none. nbgrader's own stops with FileNotFoundError there,
    releasing nothing to the students after it."""

    def copy_files(self):
        pattern = self.src_path
        try:
            for folder in sorted(glob.glob(pattern)):
                secret, timestamp = Path(folder, "submission_secret.txt"), Path(folder, "timestamp.txt")
                if not (_is_plain(secret, False) and _is_plain(timestamp, False)):
                    self.log.warning("%s has no submission_secret.txt or timestamp.txt (it did not come through the "
                                     "exchange): its feedback is not released", folder)
                    continue
                self.src_path = glob.escape(folder)
                super().copy_files()
        finally:
            self.src_path = pattern
