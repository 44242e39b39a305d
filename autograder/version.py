"""The grader's version, as reports and class files record it: the package version, a
digest of everything that decides a score (the engine's code and the unit's files: rubric,
hidden suites, reference, catalogues), and the versions of the libraries that compute with
the student's numbers or run the suites (numpy, pytest): a new numpy can round differently
and a new pytest can collect differently, so either can change a score. A rerun of `batch`
regrades a submission only when this or its seed changed."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path

ENGINE = Path(__file__).resolve().parent
SCORED = (".py", ".yaml", ".po")
# Libraries whose version can change a score; each is named in the version string.
SCORING_LIBRARIES = ("numpy", "pytest")


def _files(folder: Path, skip_units: bool):
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if (path.is_file() and path.suffix in SCORED and "__pycache__" not in rel.parts
                and not (skip_units and rel.parts[0] == "units")):
            yield rel, path


@lru_cache(maxsize=8)
def grader_version(unit_path: Path) -> str:
    try:
        package = metadata.version("autograder")
    except metadata.PackageNotFoundError:
        package = "0+unknown"
    digest = hashlib.sha256()
    for folder, skip_units in ((ENGINE, True), (Path(unit_path).resolve(), False)):
        for rel, path in _files(folder, skip_units):
            digest.update(rel.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    # The unit's reference and public tests are links: follow them explicitly.
    for link in ("reference", "public"):
        target = Path(unit_path) / link
        if target.is_dir():
            for rel, path in _files(target.resolve(), False):
                digest.update(f"{link}/{rel.as_posix()}".encode() + b"\0" + path.read_bytes() + b"\0")
    libraries = ".".join(f"{name}{_version_of(name)}" for name in SCORING_LIBRARIES)
    return f"{package}+{digest.hexdigest()[:12]}.{libraries}"


def _version_of(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"
