"""The seed of a grading run, derived from the assignment and the submission's own files.

The same files give the same hidden inputs on every run and every machine, so the same
submission always gets the same score and rerunning cannot shop for a luckier draw; an
edit to any topic module gives new inputs, so an answer fitted to one draw does not
survive it. `--seed N` replays a given run instead.

Only the topic modules count, read the way the worker gets them (regular files, no
links), with line endings normalised: a checkout on Windows gives the seed a Linux
checkout gives.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from autograder.intake.files import read_regular

VERSION = b"autograder-seed-v1"


def submission_seed(unit, submission: Path) -> int:
    """A seed in [0, 2**31) from the unit's name and the bytes of its modules in `submission`."""
    return modules_seed(unit, {m: read_regular(Path(submission) / f"{m}.py") for m in unit.modules})


def modules_seed(unit, sources: dict[str, bytes | None]) -> int:
    """The seed of a submission holding `sources` (module -> its bytes, None or absent: missing):
    also nbgrader's, whose kernels each see only some of the submission's notebooks."""
    digest = hashlib.sha256(VERSION + b"\0" + unit.name.encode() + b"\0")
    for module in sorted(set(unit.modules)):
        data = sources.get(module)
        digest.update(module.encode() + b"\0")
        digest.update(b"missing\0" if data is None else hashlib.sha256(data.replace(b"\r\n", b"\n")).digest())
    return int.from_bytes(digest.digest()[:4], "big") & 0x7FFFFFFF
