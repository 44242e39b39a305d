"""A block of a document written by a script: the text between a BEGIN and an END marker.
`update` rewrites it, or with `check` only says whether it has drifted (the tests run the
scripts with --check)."""

from __future__ import annotations

from pathlib import Path


def update(path: Path, begin: str, end: str, block: str, script: str, check: bool) -> int:
    """Put `block` between the markers of `path` (each on a line of its own, `end` after
    `block`'s last line); an exit status: 1 when `check` finds the file out of date."""
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    new = f"{head}{begin}\n{block}{end}{tail}"
    if check:
        if new != text:
            print(f"{path.name}: a generated block is out of date; run {script}")
            return 1
        return 0
    path.write_text(new, encoding="utf-8")
    return 0
