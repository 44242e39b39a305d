"""Submissions as instructors receive them: what `batch ROOT` finds in ROOT.

Each entry of ROOT is one student's:
- a folder holding the module files, or holding them one folder level down (the usual
  LMS download: `george/<assignment>/*.py`), or a clone of the student's repository
  (only the module files are graded, wherever the stubs' folder puts them); any chain of
  single wrapper folders around it (GitHub's "Download ZIP": `lee-main/`) is looked through;
- a `.zip`, `.tar.gz`, `.tgz` or `.tar` archive of any of those; only the module files
  are taken out (regular files, a size limit, no path outside the scratch folder), by a
  child process with limits on time, unpacked bytes, members and compression ratio: an
  archive bomb costs its own entry a few seconds, never the class.

No link is followed on the way to the module files: a folder, wrapper or module file that
is a link (into a classmate's clone, into the grader) is refused with a message naming it.

Anything else is reported, never silently skipped: a folder or archive with no module file
is `missing`; a file that is no archive, an archive that cannot be read or is over a limit,
a link, or a folder whose module files sit in two places is `not_a_submission`, with the
reason in the student's own paths.
"""

from __future__ import annotations

import json
import math
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from autograder.i18n import _
from autograder.intake import notebooks

ARCHIVES = (".zip", ".tar.gz", ".tgz", ".tar")
MAX_MODULE_BYTES = 2 << 20      # a module file larger than this is not a student's exercise
MAX_DEPTH = 3                   # module files deeper than student/a/b/c.py (below wrappers) are not looked for
MAX_WRAPPERS = 8                # single wrapper folders looked through (lee/lee-main/...)
JUNK = frozenset({"__MACOSX", ".DS_Store", "Thumbs.db"})   # what archivers add beside a wrapper
# An archive is unpacked by a child that stops at the first limit it meets. A student's
# repository is a few MB; a bomb declares terabytes in a few MB of zeros.
UNPACK_LIMITS = {"bytes": 256 << 20, "members": 20_000, "ratio": 200, "seconds": 20.0}   # seconds: of CPU
UNPACK_WALL_FACTOR = 6
PACKAGE_ROOT = Path(__file__).resolve().parents[2]      # the folder holding autograder/
RATIO_FLOOR = 16 << 20          # below this many unpacked bytes the ratio is not judged (tar headers compress well)


class EntryStatus(StrEnum):
    """What intake made of one entry of a class folder. A row of class.csv that was not graded
    says MISSING or NOT_A_SUBMISSION in the same words (reports.submission_status)."""

    OK = "ok"                                # module files to grade, in `folder`
    MISSING = "missing"                      # nothing handed in (no module file)
    NOT_A_SUBMISSION = "not_a_submission"    # handed in, but nothing the grader may read (a link, a bad archive)


@dataclass
class Entry:
    name: str                   # the student, as the class file shows them
    source: Path                # what ROOT holds (folder or archive)
    folder: Path | None         # the folder holding the module files (None: nothing to grade)
    status: EntryStatus
    detail: str = ""
    shown_as: str = ""          # where the module files are, in the student's own terms


GITHUB_BRANCHES = ("-main", "-master")


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
        return None, _("module files in more than one folder ({where}): keep one copy").format(where=where)
    return folders[0], ""


def _links_refused(name: str, links: list[PurePosixPath]) -> str:
    shown = ", ".join(f"{name}/{p}" if str(p) != "." else name for p in sorted(links)[:3])
    if len(links) == 1:
        return _("{link} is a link: the grader follows no link to the module files; put the files themselves "
                 "there").format(link=shown)
    return _("{links} are links: the grader follows no link to the module files; put the files themselves "
             "there").format(links=shown)


def _wrapped(path: Path) -> PurePosixPath:
    """The chain of single wrapper folders below `path` (a folder whose only entry, junk
    aside, is a folder that is not a link), relative to `path`: "." where there is none."""
    inside = PurePosixPath(".")
    for _level in range(MAX_WRAPPERS):
        try:
            entries = [e for e in os.scandir(path / inside) if e.name not in JUNK]
        except OSError:
            break
        if len(entries) != 1 or not entries[0].is_dir(follow_symlinks=False):
            break
        inside /= entries[0].name
    return inside


def _walk(path: Path, wanted: set[str] | str) -> tuple[list[PurePosixPath], list[PurePosixPath]]:
    """(module files, links) below `path`, relative to it, at most MAX_DEPTH deep below its
    wrapper folders; no link is followed and no `.git` walked (a clone's other trees are
    never read). `wanted`: the file names, or one suffix (".ipynb")."""
    files, links = [], []
    start = _wrapped(path)
    level = [start]
    for depth in range(MAX_DEPTH):
        below = []
        for folder in level:
            try:
                entries = list(os.scandir(path / folder))
            except OSError:
                continue
            for e in entries:
                rel = folder / e.name
                if e.is_symlink():
                    links.append(rel)
                elif e.is_dir(follow_symlinks=False):
                    if e.name != ".git" and e.name not in JUNK and depth + 1 < MAX_DEPTH:
                        below.append(rel)
                elif (e.name.endswith(wanted) if isinstance(wanted, str) else e.name in wanted) \
                        and e.is_file(follow_symlinks=False):
                    files.append(rel)
        level = below
    return files, links


def _from_notebooks(path: Path, name: str, modules: set[str], scratch: Path | None) -> Entry | None:
    """A folder of notebooks and no module file: the modules their cells write (nbgrader's
    answer cells, or `%%writefile <module>.py` cells), written below `scratch` and graded; an
    entry saying why not when no cell writes one; None when there is no notebook."""
    found, _links = _walk(path, ".ipynb")
    folders = _module_folders(found)
    if not folders:
        return None
    folder = folders[0]
    written = notebooks.modules_in(path / folder, modules)
    shown = f"{name}/{folder}" if str(folder) != "." else name
    if not written:
        return Entry(name, path, None, EntryStatus.MISSING, _(
            "notebooks in {folder}/ but no cell of them writes a module file: the answer cells of the course's "
            "notebooks, or cells that start with %%writefile <module>.py ({files})").format(
            folder=shown, files=", ".join(f"{m}.py" for m in sorted(modules))[:160]))
    if scratch is not None:
        scratch.mkdir(parents=True, exist_ok=True)
    target = Path(tempfile.mkdtemp(prefix="autograder-notebooks-", dir=scratch))
    for module, source in written.items():
        (target / f"{module}.py").write_text(source, encoding="utf-8")
    return Entry(name, path, target, EntryStatus.OK, shown_as=_("{folder} (notebooks)").format(folder=shown))


def _from_folder(path: Path, modules: set[str], name: str | None = None, scratch: Path | None = None) -> Entry:
    name = name or path.name
    wanted = {f"{m}.py" for m in modules}
    if path.is_symlink():
        return Entry(name, path, None, EntryStatus.NOT_A_SUBMISSION, _links_refused(name, [PurePosixPath(".")]))
    files, links = _walk(path, wanted)
    folder, why = _choose(name, _module_folders(files))
    if why:
        return Entry(name, path, None, EntryStatus.NOT_A_SUBMISSION, why)
    if folder is None:
        if links:          # the files may be behind a link: say so rather than "missing"
            return Entry(name, path, None, EntryStatus.NOT_A_SUBMISSION, _links_refused(name, links))
        if (from_notebooks := _from_notebooks(path, name, modules, scratch)) is not None:
            return from_notebooks
        return Entry(name, path, None, EntryStatus.MISSING, _("no module file ({files}) in {folder}/").format(
            files=", ".join(sorted(wanted))[:160], folder=name))
    linked_modules = [p for p in links if p.parent == folder and p.name in wanted]
    if linked_modules:
        return Entry(name, path, None, EntryStatus.NOT_A_SUBMISSION, _links_refused(name, linked_modules))
    shown = f"{name}/{folder}" if str(folder) != "." else name
    return Entry(name, path, path / folder, EntryStatus.OK, shown_as=shown)


# ------------------------------------------------------------------ archives, in a child
class OverLimit(Exception):
    pass


def _unpack(archive: Path, target: Path, wanted: set[str], limits: dict) -> dict:
    """Write the module files of `archive` below `target` (their paths inside it kept, at most
    MAX_MODULE_BYTES + 1 bytes each); stop at the first limit. Runs in the child. Returns
    {"files": [...], "links": [...]} (paths inside the archive) or {"refused": why}."""
    packed = max(archive.stat().st_size, 1)
    total, members, files, links = 0, 0, [], []

    def count(size: int) -> None:
        nonlocal total, members
        total, members = total + max(size, 0), members + 1
        if members > limits["members"]:
            raise OverLimit(f"it holds more than {limits['members']} files")
        if total > limits["bytes"]:
            raise OverLimit(f"it unpacks to more than {limits['bytes'] >> 20} MB")
        if total > RATIO_FLOOR and total > limits["ratio"] * packed:
            raise OverLimit(f"it unpacks to more than {limits['ratio']} times its size (an archive bomb?)")

    def keep(p: PurePosixPath) -> bool:
        return (p.name in wanted and ".." not in p.parts and not p.is_absolute()
                and not JUNK.intersection(p.parts) and ".git" not in p.parts)

    def write(p: PurePosixPath, source) -> None:
        out = target.joinpath(*p.parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(source.read(MAX_MODULE_BYTES + 1))
        files.append(str(p))

    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                for info in z.infolist():
                    count(info.file_size)
                for info in z.infolist():
                    # Some Windows tools write "folder\\file.py" although the format says "/".
                    p = PurePosixPath(info.filename.replace("\\", "/"))
                    if stat.S_ISLNK(info.external_attr >> 16):
                        links.append(str(p))
                    elif not info.is_dir() and keep(p):
                        with z.open(info) as f:
                            write(p, f)
        else:
            # The declared sizes are counted before the stream is read past them: a bomb is
            # refused at its first header, not after decompressing what it declares.
            with tarfile.open(archive) as t:
                while (m := t.next()) is not None:
                    count(m.size + tarfile.BLOCKSIZE)
                    p = PurePosixPath(m.name)
                    if m.issym() or m.islnk():
                        links.append(str(p))
                    elif m.isfile() and keep(p):
                        write(p, t.extractfile(m))
    except OverLimit as exc:
        return {"refused": str(exc)}
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError, ValueError, RuntimeError) as exc:
        return {"refused": f"it cannot be read as an archive ({type(exc).__name__}: {str(exc)[:200]})"}
    return {"files": files, "links": links}


def _unpack_in_child(archive: Path, target: Path, wanted: set[str]) -> dict:
    """`_unpack` in a child process with a time and memory limit: the coordinator never
    decompresses anything itself."""
    limits = UNPACK_LIMITS
    task = json.dumps({"archive": str(archive), "target": str(target), "wanted": sorted(wanted), "limits": limits})
    # -I -S: neither the environment, the working folder nor site-packages is read (a start-up
    # of ~50 ms rather than ~200 ms on a loaded machine); this package is found where it is.
    child = (f"import sys; sys.path.insert(0, {str(PACKAGE_ROOT)!r}); "
             "import autograder.intake.submissions as i; i._child_main()")
    too_long = {"refused": f"unpacking it took longer than {limits['seconds']:g} s"}
    try:
        # The child's limit is CPU time (RLIMIT_CPU, set by itself): a busy machine does not make
        # a valid archive too slow. The wall clock is a backstop several times that.
        done = subprocess.run([sys.executable, "-I", "-S", "-c", child, task], capture_output=True,
                              timeout=UNPACK_WALL_FACTOR * limits["seconds"], start_new_session=True)
    except subprocess.TimeoutExpired:
        return too_long
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return too_long
    try:
        return json.loads(done.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"refused": f"it could not be unpacked ({done.stderr.decode(errors='replace').strip()[-200:]})"}


def _child_main() -> None:
    memory = 512 << 20              # module files are read 2 MB at most: this is plenty
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    task = json.loads(sys.argv[1])
    cpu = max(1, math.ceil(task["limits"]["seconds"]))          # whole seconds: the kernel's unit
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    print(json.dumps(_unpack(Path(task["archive"]), Path(task["target"]), set(task["wanted"]), task["limits"])))


def _from_archive(path: Path, modules: set[str], scratch: Path) -> Entry:
    name = _student_name(path)
    target = scratch / path.name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    unpacked = _unpack_in_child(path, target, {f"{m}.py" for m in modules})
    if "refused" in unpacked:
        shutil.rmtree(target, ignore_errors=True)
        return Entry(name, path, None, EntryStatus.NOT_A_SUBMISSION, f"{path.name}: {unpacked['refused']}")
    files = [PurePosixPath(f) for f in unpacked["files"]]
    folder, why = _choose(name, _module_folders(files))
    if why:
        return Entry(name, path, None, EntryStatus.NOT_A_SUBMISSION, f"{path.name}: {why}")
    if folder is None:
        links = [PurePosixPath(p) for p in unpacked["links"]]
        if links:
            return Entry(name, path, None, EntryStatus.NOT_A_SUBMISSION, f"{path.name}: {_links_refused(name, links)}")
        return Entry(name, path, None, EntryStatus.MISSING, f"no module file in {path.name}")
    for member in files:
        if member.parent == folder and (target / member).stat().st_size > MAX_MODULE_BYTES:
            return Entry(name, path, None, EntryStatus.NOT_A_SUBMISSION, f"{path.name}: {member} is larger than 2 MB")
    shown = f"{path.name}/{folder}" if str(folder) != "." else path.name
    # GitHub's "Download ZIP" of <repo> is <repo>-main.zip holding <repo>-main/: the student is <repo>.
    if name.endswith(GITHUB_BRANCHES) and folder.parts[:1] == (name,):
        name = name.rsplit("-", 1)[0]
    return Entry(name, path, target / folder, EntryStatus.OK, shown_as=shown)


def find(root: Path, modules: set[str], scratch: Path) -> list[Entry]:
    """Every entry of `root`, in name order, as a submission or as the reason it is not one.
    Archives are unpacked (module files only) below `scratch`."""
    entries = []
    for path in sorted(Path(root).iterdir(), key=lambda p: p.name):
        if path.is_symlink():
            entries.append(Entry(path.name, path, None, EntryStatus.NOT_A_SUBMISSION, f"{path.name} is a link, not a folder"))
        elif path.is_dir():
            entries.append(_from_folder(path, modules, scratch=scratch))
        elif path.name.lower().endswith(ARCHIVES) and path.is_file():      # never a FIFO or a device
            entries.append(_from_archive(path, modules, scratch))
        else:
            entries.append(Entry(path.name, path, None, EntryStatus.NOT_A_SUBMISSION,
                                 f"{path.name} is neither a folder nor an archive (.zip, .tar.gz)"))
    seen: dict[str, int] = {}
    for e in entries:                     # two entries of one student (george/ and george.zip)
        seen[e.name] = seen.get(e.name, 0) + 1
    for e in entries:                     # ".zip" and "..zip" would name no folder, or the one above
        if seen[e.name] > 1 or e.name in ("", ".", ".."):
            e.name = e.source.name
    return entries


def from_upload(folder: Path, modules: set[str], scratch: Path | None = None) -> Entry:
    """One student's upload unpacked in `folder` (Gradescope's submission folder): the module
    files at its top, in wrapper folders, or in a clone of the student repository."""
    entry = _from_folder(Path(folder), modules, name="submission", scratch=scratch)
    if entry.status == EntryStatus.OK and entry.folder is not None and entry.folder.is_relative_to(folder):   # not notebooks
        inside = entry.folder.relative_to(folder).as_posix()
        entry.shown_as = "" if inside == "." else inside
    return entry


def links_on_the_way(base: Path, inside: Path) -> str:
    """The first component of `inside` (a relative path below `base`) that is a link, as
    `inside` spells it; "" when there is none. What `grade` and `pr` check before reading
    the module files of a folder (each file itself is opened without following a link)."""
    here = Path(base)
    for i, part in enumerate(Path(inside).parts):
        here /= part
        if part not in (".", "..") and here.is_symlink():
            return Path(*Path(inside).parts[: i + 1]).as_posix()
    return ""


def linked_module_file(folder: Path, modules) -> str:
    """The first module file (`<module>.py`) of `folder` that is a link, by name; "" when
    there is none. `grade` and `pr` refuse it, as batch and Gradescope do: read without
    following the link, it would be graded as missing, and the report would say so."""
    return next((f"{m}.py" for m in sorted(modules) if (Path(folder) / f"{m}.py").is_symlink()), "")


def link_in_given_path(path: Path) -> str:
    """`links_on_the_way` for a folder named on the command line: each component of a relative
    path, the last one of an absolute path (the folders above it are the machine's)."""
    path = Path(path)
    return links_on_the_way(path.parent, Path(path.name)) if path.is_absolute() else links_on_the_way(Path.cwd(), path)
