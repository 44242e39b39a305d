"""The grader's version, as reports and class files record it: the package version, a
digest of everything that decides a score (the engine's code and the unit's files: rubric,
hidden suites, reference, catalogues), and the versions of the libraries that compute with
the student's numbers or run the suites (numpy, pytest): a new numpy can round differently
and a new pytest can collect differently, so either can change a score. A rerun of `batch`
regrades a submission only when this or its seed changed."""

from __future__ import annotations

import hashlib
import os
import sys
from functools import lru_cache
from pathlib import Path

ENGINE = Path(__file__).resolve().parent
SCORED = (".py", ".yaml", ".po")
# Libraries whose version can change a score; each is named in the version string.
SCORING_LIBRARIES = ("numpy", "pytest")


def _files(folder: Path, skip_units: bool):
    """(relative posix path, path) of the scored files under `folder`, sorted; links to
    folders are not followed (the unit's reference and public links are read on their own).
    With os.walk, not pathlib: every grading computes this, and pathlib's objects cost most of
    its time (~35 ms of a grading, against ~8 ms)."""
    found = []
    for root, dirs, files in os.walk(folder):
        rel_root = os.path.relpath(root, folder)
        dirs[:] = [d for d in dirs if d != "__pycache__" and not (skip_units and rel_root == "." and d == "units")]
        for name in files:
            path = os.path.join(root, name)
            if os.path.splitext(name)[1] in SCORED and os.path.isfile(path):
                found.append((name if rel_root == "." else f"{rel_root}/{name}".replace(os.sep, "/"), path))
    return sorted(found)


@lru_cache(maxsize=8)
def grader_version(unit_path: Path) -> str:
    package = _version_of("autograder", "0+unknown")
    digest = hashlib.sha256()
    for folder, skip_units in ((ENGINE, True), (Path(unit_path).resolve(), False)):
        for rel, path in _files(folder, skip_units):
            digest.update(rel.encode() + b"\0" + _bytes(path) + b"\0")
    # The unit's reference and public tests are links: follow them explicitly.
    for link in ("reference", "public"):
        target = Path(unit_path) / link
        if target.is_dir():
            for rel, path in _files(target.resolve(), False):
                digest.update(f"{link}/{rel}".encode() + b"\0" + _bytes(path) + b"\0")
    libraries = ".".join(f"{name}{_version_of(name)}" for name in SCORING_LIBRARIES)
    return f"{package}+{digest.hexdigest()[:12]}.{libraries}"


def _bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _version_of(distribution: str, unknown: str = "unknown") -> str:
    """The installed version; a loaded module's own `__version__` when it has one (numpy's and
    pytest's are their distributions' versions), which spares importlib.metadata (~20 ms)."""
    loaded = getattr(sys.modules.get(distribution), "__version__", None)
    if isinstance(loaded, str):
        return loaded
    from importlib import metadata
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return unknown
