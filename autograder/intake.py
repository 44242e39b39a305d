"""Submissions as instructors receive them: what `batch ROOT` finds in ROOT.

Each entry of ROOT is one student's:
- a folder holding the module files, or holding them one folder level down (the usual
  LMS download: `george/<assignment>/*.py`), or a clone of the student's repository
  (only the module files are graded, wherever the stubs' folder puts them);
- a `.zip`, `.tar.gz`, `.tgz` or `.tar` archive of any of those; only the module files
  are taken out (regular files, a size limit, no path outside the scratch folder).

Anything else is reported, never silently skipped: a folder or archive with no module file
is `missing`; a file that is no archive, an archive that cannot be read, or a folder whose
module files sit in two places is `not_a_submission`, with the reason in the student's
own paths.
"""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

ARCHIVES = (".zip", ".tar.gz", ".tgz", ".tar")
MAX_MODULE_BYTES = 2 << 20      # a module file larger than this is not a student's exercise
MAX_DEPTH = 3                   # module files deeper than student/a/b/c.py are not looked for


@dataclass
class Entry:
    name: str                   # the student, as the class file shows them
    source: Path                # what ROOT holds (folder or archive)
    folder: Path | None         # the folder holding the module files (None: nothing to grade)
    status: str                 # "ok" | "missing" | "not_a_submission"
    detail: str = ""
    shown_as: str = ""          # where the module files are, in the student's own terms


def _student_name(path: Path) -> str:
    name = path.name
    for suffix in ARCHIVES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _module_folders(files) -> list[PurePosixPath]:
    """The folders (relative) that hold the module files `files`, shallowest first."""
    return sorted({f.parent for f in files}, key=lambda p: (len(p.parts), str(p)))


def _choose(name: str, folders: list[PurePosixPath]) -> tuple[PurePosixPath | None, str]:
    """The one folder to grade, or None and why not."""
    if not folders:
        return None, ""
    shallowest = [f for f in folders if len(f.parts) == len(folders[0].parts)]
    if len(shallowest) > 1:
        where = ", ".join(f"{name}/{f}" if str(f) != "." else f"{name}/" for f in shallowest)
        return None, f"module files in more than one folder ({where}): keep one copy"
    return folders[0], ""


def _from_folder(path: Path, modules: set[str]) -> Entry:
    name = path.name
    # Module files only, at most MAX_DEPTH deep: a repository clone's other trees are never walked.
    candidates = (p for depth in range(MAX_DEPTH) for m in modules for p in path.glob("*/" * depth + f"{m}.py"))
    files = [PurePosixPath(p.relative_to(path).as_posix()) for p in candidates
             if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(path).parts]
    folder, why = _choose(name, _module_folders(files))
    if why:
        return Entry(name, path, None, "not_a_submission", why)
    if folder is None:
        return Entry(name, path, None, "missing", f"no module file ({', '.join(f'{m}.py' for m in sorted(modules))[:160]}) in {name}/")
    shown = f"{name}/{folder}" if str(folder) != "." else name
    return Entry(name, path, path / folder, "ok", shown_as=shown)


def _module_members(archive: Path, modules: set[str]) -> dict[PurePosixPath, bytes]:
    """The module files of an archive (regular files, at most MAX_MODULE_BYTES + 1 bytes read
    each), by their path inside it, read in one pass (a .tar.gz is decompressed once)."""
    wanted = {f"{m}.py" for m in modules}

    def keep(p: PurePosixPath) -> bool:
        return (p.name in wanted and ".." not in p.parts and not p.is_absolute() and "__MACOSX" not in p.parts
                and len(p.parts) <= MAX_DEPTH)

    out = {}
    if archive.name.lower().endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                if not info.is_dir() and keep(p := PurePosixPath(info.filename)):
                    with z.open(info) as f:
                        out[p] = f.read(MAX_MODULE_BYTES + 1)
        return out
    with tarfile.open(archive) as t:
        for m in t:
            if m.isfile() and keep(p := PurePosixPath(m.name)):
                out[p] = t.extractfile(m).read(MAX_MODULE_BYTES + 1)
    return out


def _from_archive(path: Path, modules: set[str], scratch: Path) -> Entry:
    name = _student_name(path)
    try:
        members = _module_members(path, modules)
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as exc:
        return Entry(name, path, None, "not_a_submission", f"{path.name} cannot be read as an archive ({exc})")
    folder, why = _choose(name, _module_folders(members))
    if why:
        return Entry(name, path, None, "not_a_submission", f"{path.name}: {why}")
    if folder is None:
        return Entry(name, path, None, "missing", f"no module file in {path.name}")
    target = scratch / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for member, data in members.items():
        if member.parent == folder:
            if len(data) > MAX_MODULE_BYTES:
                return Entry(name, path, None, "not_a_submission", f"{path.name}: {member} is larger than 2 MB")
            (target / member.name).write_bytes(data)
    shown = f"{path.name}/{folder}" if str(folder) != "." else path.name
    return Entry(name, path, target, "ok", shown_as=shown)


def find(root: Path, modules: set[str], scratch: Path) -> list[Entry]:
    """Every entry of `root`, in name order, as a submission or as the reason it is not one.
    Archives are unpacked (module files only) below `scratch`."""
    entries = []
    for path in sorted(Path(root).iterdir(), key=lambda p: p.name):
        if path.is_symlink():
            entries.append(Entry(path.name, path, None, "not_a_submission", f"{path.name} is a link, not a folder"))
        elif path.is_dir():
            entries.append(_from_folder(path, modules))
        elif path.name.lower().endswith(ARCHIVES) and path.is_file():      # never a FIFO or a device
            entries.append(_from_archive(path, modules, scratch))
        else:
            entries.append(Entry(path.name, path, None, "not_a_submission",
                                 f"{path.name} is neither a folder nor an archive (.zip, .tar.gz)"))
    seen: dict[str, int] = {}
    for e in entries:                     # two entries of one student (george/ and george.zip)
        seen[e.name] = seen.get(e.name, 0) + 1
    for e in entries:
        if seen[e.name] > 1:
            e.name = e.source.name
    return entries


def from_upload(folder: Path, modules: set[str]) -> Entry:
    """One student's upload unpacked in `folder` (Gradescope's submission folder): the module
    files at its top, one level down, or in a clone of the student repository."""
    entry = _from_folder(Path(folder), modules)
    if entry.status == "ok":
        inside = entry.folder.relative_to(folder).as_posix()
        entry.shown_as = "" if inside == "." else inside
    return entry
