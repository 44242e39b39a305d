"""`python -m autograder merge SHARD_DIR... --out DIR`: one class from the shards of a
sharded regrade (`batch ROOT --shard K/N --out SHARD_DIR`, one per CI runner or array job).

Every shard's `class.shardKofN.csv` must be there, once each, written by one grader
version; a missing or doubled shard stops the merge with a message naming it (a class
file silently short of a third of the class would be worse than none). The submissions'
report folders (`SHARD_DIR/students/*`) are copied into DIR/students, and DIR gets the class file and the class report that
one unsharded run would have written: `class.csv` holds the same rows in the same order.
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

from autograder.errors import GraderError
from autograder.reports import class_report, similarity
from autograder.reports.class_csv import write_class_csv
from autograder.unit.load import load_unit

SHARD_FILE = re.compile(r"class\.shard(\d+)of(\d+)\.csv")
ESCAPED = ("'=", "'+", "'-", "'@", "'\t", "'\r")


def shard_files(folders: list[Path]) -> dict[int, tuple[Path, int]]:
    """k -> (class file, n), checked: one n, every k of 1..n exactly once."""
    found: dict[int, tuple[Path, int]] = {}
    for folder in folders:
        named = [(p, SHARD_FILE.fullmatch(p.name)) for p in Path(folder).glob("class.shard*of*.csv")]
        files = [(p, match) for p, match in named if match is not None]
        if not files:
            raise GraderError(f"{folder} holds no class.shardKofN.csv: is it the --out of a `batch --shard K/N` run?")
        for path, match in files:
            k, n = (int(x) for x in match.groups())
            if k in found:
                raise GraderError(f"shard {k} of {n} is given twice ({found[k][0]} and {path})")
            found[k] = (path, n)
    sizes = {n for _path, n in found.values()}
    if len(sizes) != 1:
        raise GraderError(f"the shards come from different splits: of {sorted(sizes)}")
    n = sizes.pop()
    missing = sorted(set(range(1, n + 1)) - set(found))
    if missing:
        raise GraderError(f"shard(s) {', '.join(map(str, missing))} of {n} missing: merge them all, or regrade "
                          "the missing ones")
    return found


def unescaped(name: str) -> str:
    """A submission's folder name from its class.csv cell (csv_cell guards formula starts with ')."""
    return name[1:] if name.startswith(ESCAPED) else name


def run(args) -> int:
    unit = load_unit(args.unit)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, versions = [], set()
    shards = sorted(shard_files(list(args.shards)).items())    # every k of 1..n, once
    for _k, (path, _n) in shards:
        with path.open(newline="", encoding="utf-8") as fh:
            shard_rows = list(csv.DictReader(fh))
        for row in shard_rows:
            versions.add(row.pop("grader_version", ""))
            row["submission"] = unescaped(row["submission"])
            rows.append(row)
        students = path.parent / class_report.STUDENTS
        if path.parent.resolve() != out.resolve() and students.is_dir() and not students.is_symlink():
            shutil.copytree(students, out / class_report.STUDENTS, dirs_exist_ok=True, symlinks=True)
    versions.discard("")
    if len(versions) > 1:
        raise GraderError(f"the shards were graded by different grader versions ({', '.join(sorted(versions))}): "
                          "regrade them with one")
    version = versions.pop() if versions else ""
    name = write_class_csv(out, unit, rows, 1, 1, version)
    similar = similarity.write(out, out / class_report.STUDENTS, [r["submission"] for r in rows])
    class_report.write(out, unit, rows, version, similar, getattr(args, "lang", None))
    print(f"{len(rows)} submission(s) from {len(shards)} shard(s) -> {out / name}")
    return 0
