"""The release's protected files (public tests, engine, Makefile, workflows), as
`sha256sum` lines: `make release` writes the manifest, and a checkout graded by `pr` or
`batch --manifest` is compared with it. A changed file marks the submission `tampered`."""

from __future__ import annotations

import hashlib
from pathlib import Path

from autograder.intake.files import read_regular

MAX_PROTECTED_BYTES = 16 << 20


def read_manifest(path: Path) -> dict[str, str]:
    """`sha256sum` format: '<hex>  <relative path>' per line."""
    entries = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            digest, name = line.split(maxsplit=1)
            entries[name.strip().lstrip("*")] = digest.lower()
    return entries


def write_manifest(root: Path, files) -> str:
    lines = [f"{hashlib.sha256((root / f).read_bytes()).hexdigest()}  {f}" for f in sorted(files)]
    return "\n".join(lines) + "\n"


def tampered_files(checkout: Path, manifest: dict[str, str]) -> list[str]:
    """Protected files that are missing, not regular, or differ from the instructor's hash."""
    changed = []
    for name, digest in sorted(manifest.items()):
        data = read_regular(Path(checkout) / name, MAX_PROTECTED_BYTES)
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            changed.append(name)
    return changed
