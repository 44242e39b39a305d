"""The release's protected files (public tests, engine, Makefile, workflows), as
`sha256sum` lines: `make release` writes the manifest, and a checkout graded by `pr` or
`batch --manifest` is compared with it. A changed file marks the submission `tampered`."""

from __future__ import annotations

import fnmatch
import hashlib
import os
from pathlib import Path, PurePosixPath

from autograder.intake.files import read_regular

MAX_PROTECTED_BYTES = 16 << 20


LINK = "# link: "          # a link of the release: "# link: <path> -> <target>" (sha256sum skips it)


def read_manifest(path: Path) -> dict[str, str]:
    """`sha256sum` format: '<hex>  <relative path>' per line; a link of the release is a
    comment line `# link: <path> -> <target>` (read as the entry "link:<target>")."""
    entries = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith(LINK):
            name, _arrow, target = line[len(LINK):].partition(" -> ")
            entries[name] = f"link:{target}"
        elif line.strip() and not line.startswith("#"):
            digest, name = line.split(maxsplit=1)
            entries[name.strip().lstrip("*")] = digest.lower()
    return entries


def write_manifest(root: Path, files) -> str:
    lines = [f"{LINK}{f} -> {os.readlink(root / f)}" if (root / f).is_symlink() else
             f"{hashlib.sha256((root / f).read_bytes()).hexdigest()}  {f}" for f in sorted(files)]
    return "\n".join(lines) + "\n"


# What a student's checkout may hold beyond the release's files without being a change: what the
# student repository's .gitignore (scripts/release/gitignore.student) keeps out of git, and git's
# own folder. tests/engine/test_manifest.py checks the two lists agree.
IGNORED = (".git/", ".venv/", "__pycache__/", "*.pyc", "/reports/", "*.egg-info/", "build/", "*.mo")
MANIFEST_FILE = "protected-files.sha256"


def _ignored(rel: PurePosixPath, is_dir: bool) -> bool:
    for pattern in IGNORED:
        folder, anchored = pattern.endswith("/"), pattern.startswith("/")
        glob = pattern.strip("/")
        if folder and not is_dir:
            continue
        if anchored:
            if len(rel.parts) == 1 and fnmatch.fnmatchcase(rel.name, glob):
                return True
        elif fnmatch.fnmatchcase(rel.name, glob):
            return True
    return False


_SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/+@ ")
MAX_ADDED = 20


def _shown(name: str) -> str:
    """A file name the student chose, as reports may show it: characters outside a plain set
    escaped (\\u....), 120 at most, so no format (Markdown, XML, CSV, a terminal) reads it as markup."""
    text = "".join(c if c in _SAFE else f"\\u{ord(c):04x}" for c in name)
    return text if len(text) <= 120 else text[:117] + "..."


def added_files(checkout: Path, manifest: dict[str, str], editable: set[str]) -> list[str]:
    """Files (and links) of `checkout` that the release does not have: neither protected (in
    the manifest) nor a module file students edit (`editable`, relative paths) nor ignored.
    A workflow, a conftest.py or a pytest.ini added by a pull request is one of them. The walk
    follows no link."""
    known = set(manifest) | set(editable) | {MANIFEST_FILE}
    added = []
    for folder, dirs, files in os.walk(checkout, followlinks=False):
        base = PurePosixPath(Path(folder).relative_to(checkout).as_posix())
        dirs[:] = sorted(d for d in dirs if not _ignored(base / d, not os.path.islink(os.path.join(folder, d))))
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            rel = (base / name) if str(base) != "." else PurePosixPath(name)
            if str(rel) not in known and not _ignored(rel, False):
                added.append(_shown(str(rel)))
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
    added.sort()
    return added if len(added) <= MAX_ADDED else added[:MAX_ADDED] + [f"... {len(added) - MAX_ADDED} more"]


def tampered_files(checkout: Path, manifest: dict[str, str], editable: set[str] | None = None) -> list[str]:
    """Protected files that are missing, not regular, or differ from the instructor's hash;
    with `editable` (the module files students edit), also every file the release does not
    have, marked "(added)"."""
    changed = []
    for name, digest in sorted(manifest.items()):
        path = Path(checkout) / name
        if digest.startswith("link:"):
            if not path.is_symlink() or os.readlink(path) != digest[len("link:"):]:
                changed.append(name)
            continue
        data = read_regular(path, MAX_PROTECTED_BYTES)
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            changed.append(name)
    if editable is not None:
        changed += [f"{name} (added)" for name in added_files(Path(checkout), manifest, editable)]
    return changed
